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

use super::records::{get, store_error, take_lost_detail};
use super::{schema, Inner};
use crate::js::values::spawn;
use crate::js::values::Task;
use agent_compaction_core::storage::connection::{self as core, Next};
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::IdbDatabase as Database;

/// A connection's event handler (`versionchange`, `close`).
type Handler = Closure<dyn FnMut()>;

/// What [`Inner`] keeps of its connection beyond the handle itself.
#[derive(Default)]
pub struct Link {
    /// The core's facts (`core::storage::connection::Link`).
    pub state: RefCell<core::Link>,
    /// A reopen in progress, shared by the calls that need it.
    reopening: RefCell<Option<js_sys::Promise>>,
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
                inner.link.state.borrow_mut().version_changed(&inner.name);
            }
        });
        // The browser closed it: the data is there, the next call reopens.
        let weak = Rc::downgrade(inner);
        let close = Handler::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.db.borrow_mut().take();
                inner.link.state.borrow_mut().browser_closed();
            }
        });
        (version_change, close)
    });
    db.set_onversionchange(Some(on_version_change.as_ref().unchecked_ref()));
    db.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    inner.link.state.borrow_mut().adopted();
    *inner.db.borrow_mut() = Some(db);
}

/// The store closed for good.
fn closed(inner: &Inner) -> bool {
    inner.link.state.borrow().is_closed()
}

/// The connection for a call of `action`: the open one, or (the browser
/// closed it) a reopened one; the store's error when it is closed for good.
pub async fn database(inner: &Rc<Inner>, action: &'static str) -> Result<Database, JsValue> {
    if let Some(db) = inner.db.borrow().as_ref() {
        return Ok(db.clone());
    }
    if closed(inner) {
        return Err(inner.closed_error(action));
    }
    let pending = inner.link.reopening.borrow().clone();
    let reopening = match pending {
        Some(p) => p,
        None => {
            let name = inner.name.clone();
            let p = spawn(async move { schema::open(&name).await.map(JsValue::from) });
            *inner.link.reopening.borrow_mut() = Some(p.clone());
            p
        }
    };
    let opened = JsFuture::from(reopening).await;
    inner.link.reopening.borrow_mut().take();
    let db: Database = match opened {
        Ok(db) => db.unchecked_into(),
        Err(e) => {
            let why = get(&e, "message")
                .as_string()
                .unwrap_or_else(|| crate::js::errors::thrown_message(&e));
            let error = inner.link.state.borrow_mut().reopen_failed(action, &why);
            return Err(store_error(error));
        }
    };
    if closed(inner) {
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

/// Runs `attempt(retry)` — `retry` false, then true for its second run —
/// as `core::storage::connection::Link::after_failure` says: once more on
/// a reopened connection when the first failed because the connection went
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
        let mark = inner.link.state.borrow().mark();
        let error = match attempt(number > 1).await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let lost = get(&error, "name").as_string().as_deref() == Some("ConnectionLostError");
        let lost = (lost, lost.then(take_lost_detail).flatten());
        let after =
            (inner.link.state.borrow_mut()).after_failure(mark, number, lost, (action, writes));
        match after.map_err(store_error)? {
            after if after.next == Next::Retry => {
                if after.drop_handle {
                    if let Some(db) = inner.db.borrow_mut().take() {
                        db.close();
                    }
                }
                number += 1;
            }
            _ => return Err(error),
        }
    }
}
