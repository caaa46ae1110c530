//! The store's connection to the database, when the browser closes it.
//!
//! The connection is opened by `SessionStore.open` and watched: its
//! `versionchange` (another connection deletes or upgrades the database)
//! closes the store for good, as the app's `close()` does; its `close`
//! event (the browser closed it: storage cleared, WebKit's storage process
//! gone) only drops it, and the next call reopens it ([`database`]).
//!
//! Every call runs through [`retrying`]: when an attempt fails because the
//! connection went away, the core decides
//! (`core::storage::connection::after_failure`) whether the call is run once
//! more on a reopened connection, fails as it is, or fails as closed. Writes
//! run it inside the session's lock, and their second attempt reads what
//! is stored before writing (`core::storage::connection::save_landed` and
//! its siblings), so that a first attempt that committed is not written
//! again.

use super::records::store_error;
use super::{schema, Inner, Task};
use agent_compaction_core::storage::connection::{after_failure, Failure, Next};
use agent_compaction_core::storage::error::StoreError;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use web_sys::IdbDatabase as Database;

/// A connection's event handler (`versionchange`, `close`).
type Handler = Closure<dyn FnMut()>;

/// What [`Inner`] keeps of its connection beyond the handle itself.
#[derive(Default)]
pub struct Link {
    /// A reopen in progress, shared by the calls that need it.
    reopening: RefCell<Option<js_sys::Promise>>,
    /// Increases with every connection adopted: a call drops the handle
    /// it failed on, not a newer one another call opened meanwhile.
    generation: Cell<u32>,
    /// How many times the browser closed the connection (`close` events).
    drops: Cell<u32>,
    /// Why the browser's last close or lost connection happened.
    detail: RefCell<Option<String>>,
    /// The connection's `versionchange` and `close` handlers.
    handlers: RefCell<Option<(Handler, Handler)>>,
}

/// Makes `db` the store's connection, watching its `versionchange` and
/// `close` events.
pub fn adopt(inner: &Rc<Inner>, db: Database) {
    let mut handlers = inner.link.handlers.borrow_mut();
    let (on_version_change, on_close) = handlers.get_or_insert_with(|| {
        // Another connection deletes or upgrades the database: let it, and
        // say so on the next call instead of failing obscurely.
        let weak = Rc::downgrade(inner);
        let version_change = Handler::new(move || {
            if let Some(inner) = weak.upgrade() {
                if let Some(db) = inner.db.borrow_mut().take() {
                    db.close();
                }
                *inner.lost.borrow_mut() = Some(format!(
                    "the database \"{}\" was deleted or upgraded by another connection; open the store again",
                    inner.name
                ));
            }
        });
        // The browser closed it: the data is there, the next call reopens.
        let weak = Rc::downgrade(inner);
        let close = Handler::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.db.borrow_mut().take();
                let link = &inner.link;
                link.drops.set(link.drops.get() + 1);
                *link.detail.borrow_mut() =
                    Some("the browser closed the connection (its close event)".into());
            }
        });
        (version_change, close)
    });
    db.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
    db.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    let link = &inner.link;
    link.generation.set(link.generation.get() + 1);
    *inner.db.borrow_mut() = Some(db);
}

/// The connection for a call of `action`: the open one, or (the browser
/// closed it) a reopened one; the store's error when it is closed for good.
pub async fn database(inner: &Rc<Inner>, action: &'static str) -> Result<Database, JsValue> {
    if let Some(db) = inner.db.borrow().as_ref() {
        return Ok(db.clone());
    }
    if inner.lost.borrow().is_some() {
        return Err(inner.closed_error(action));
    }
    let pending = inner.link.reopening.borrow().clone();
    let reopening = match pending {
        Some(p) => p,
        None => {
            let name = inner.name.clone();
            let p = future_to_promise(async move { schema::open(&name).await.map(JsValue::from) });
            *inner.link.reopening.borrow_mut() = Some(p.clone());
            p
        }
    };
    let opened = JsFuture::from(reopening).await;
    inner.link.reopening.borrow_mut().take();
    let db: Database = match opened {
        Ok(db) => db.unchecked_into(),
        Err(e) => {
            let why = super::records::get(&e, "message")
                .as_string()
                .unwrap_or_else(|| crate::js::errors::thrown_message(&e));
            *inner.link.detail.borrow_mut() = Some(format!("reopening it failed: {why}"));
            return Err(lost_error(inner, action, false, false));
        }
    };
    if inner.lost.borrow().is_some() {
        // Closed while it reopened.
        db.close();
        return Err(inner.closed_error(action));
    }
    let current = inner.db.borrow().clone();
    match current {
        // Another call adopted the same reopened connection first.
        Some(db) => Ok(db),
        None => {
            adopt(inner, db.clone());
            Ok(db)
        }
    }
}

/// A lost connection as the error the app gets.
fn lost_error(inner: &Inner, action: &'static str, retried: bool, writes: bool) -> JsValue {
    let detail = inner
        .link
        .detail
        .borrow()
        .clone()
        .unwrap_or_else(|| "the connection went away".into());
    store_error(StoreError::ConnectionLost {
        action,
        detail,
        retried,
        writes,
    })
}

/// Runs `attempt(retry)` — `retry` false, then true for its second run —
/// as `core::storage::connection::after_failure` says: once more on a
/// reopened connection when the first failed because the connection went
/// away. `writes`: the call writes (its final error says what that means).
pub fn retrying(
    inner: Rc<Inner>,
    action: &'static str,
    writes: bool,
    attempt: impl FnMut(bool) -> Task + 'static,
) -> impl Future<Output = Result<JsValue, JsValue>> {
    attempts(inner, action, writes, Box::new(attempt))
}

/// [`retrying`]'s loop, not generic: one copy in the `.wasm` for every call.
async fn attempts(
    inner: Rc<Inner>,
    action: &'static str,
    writes: bool,
    mut attempt: Box<dyn FnMut(bool) -> Task>,
) -> Result<JsValue, JsValue> {
    let mut number = 1;
    loop {
        let link = &inner.link;
        let (drops, generation) = (link.drops.get(), link.generation.get());
        let error = match attempt(number > 1).await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let said_lost = super::records::get(&error, "name").as_string().as_deref()
            == Some("ConnectionLostError");
        if said_lost {
            if let Some(detail) = super::records::take_lost_detail() {
                *link.detail.borrow_mut() = Some(detail);
            }
        }
        let failure = Failure {
            attempt: number,
            lost: said_lost || link.drops.get() != drops,
            closed: inner.lost.borrow().is_some(),
        };
        match after_failure(failure) {
            Next::Fail => return Err(error),
            Next::Closed => return Err(inner.closed_error(action)),
            Next::FailRetried => return Err(lost_error(&inner, action, true, writes)),
            Next::Retry => {
                // Drop the handle this attempt failed on (closed under it
                // without a close event: its requests throw), unless
                // another call already reopened.
                if link.generation.get() == generation {
                    if let Some(db) = inner.db.borrow_mut().take() {
                        db.close();
                    }
                }
                number += 1;
            }
        }
    }
}
