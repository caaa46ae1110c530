//! The database's schema and its upgrades.
//!
//! Version 1:
//! - `sessions`: one record per session, key path `id`: the public
//!   `SessionMeta` fields plus `revision` and `contextKey` (the position of
//!   the last `compactionSummary`, where `loadContext` starts reading);
//! - `messages`: the message objects themselves (structured clones), with
//!   out-of-line keys `[sessionId, ...position]` (see `core::save_plan`), so
//!   one session's records are one key range, in order.
//!
//! Upgrades run one step per version from the stored version up, inside the
//! browser's version-change transaction: a later version adds a step and
//! never drops a store that holds data.

use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use std::task::{Poll, Waker};
use wasm_bindgen::prelude::*;

pub const VERSION: u32 = 1;
pub const SESSIONS: &str = "sessions";
pub const MESSAGES: &str = "messages";

/// Opens (creating or upgrading) the database `name`. An upgrade blocked by
/// another open connection (an older version in another tab) is an error
/// at once rather than a promise that never settles.
pub async fn open(name: &str) -> Result<Database, JsValue> {
    let blocked = Rc::new(Blocked::default());
    let flag = blocked.clone();
    let request = Database::open(name)
        .with_version(VERSION)
        .with_on_blocked(move |_| {
            flag.happened.set(true);
            if let Some(waker) = flag.waker.take() {
                waker.wake();
            }
            Ok(())
        })
        .with_on_upgrade_needed(|event, db| upgrade(event.old_version() as u32, &db))
        .build()
        .map_err(|e| open_error(name, &e.to_string()))?;
    let mut request = Box::pin(request);
    let outcome = std::future::poll_fn(|cx| match request.as_mut().poll(cx) {
        Poll::Ready(r) => Poll::Ready(Some(r)),
        Poll::Pending if blocked.happened.get() => Poll::Ready(None),
        Poll::Pending => {
            blocked.waker.set(Some(cx.waker().clone()));
            Poll::Pending
        }
    })
    .await;
    match outcome {
        Some(Ok(db)) => Ok(db),
        Some(Err(e)) => Err(open_error(name, &e.to_string())),
        None => {
            // Close the connection if the upgrade completes later.
            wasm_bindgen_futures::spawn_local(async move {
                if let Ok(db) = request.await {
                    db.close();
                }
            });
            Err(js_sys::Error::new(&format!(
                "SessionStore.open: the upgrade of database \"{name}\" to version {VERSION} is \
                 blocked by another open connection (another tab still uses an older version); \
                 close it and open the store again"
            ))
            .into())
        }
    }
}

#[derive(Default)]
struct Blocked {
    happened: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

fn open_error(name: &str, reason: &str) -> JsValue {
    js_sys::Error::new(&format!(
        "SessionStore.open: could not open database \"{name}\": {reason}"
    ))
    .into()
}

/// Runs the schema steps from `old` up to [`VERSION`].
fn upgrade(old: u32, db: &Database) -> indexed_db_futures::Result<()> {
    if old < 1 {
        db.create_object_store(SESSIONS)
            .with_key_path(indexed_db_futures::KeyPath::One("id"))
            .build()?;
        db.create_object_store(MESSAGES).build()?;
    }
    // Version 2 goes here: `if old < 2 { ... }`, migrating records in place.
    Ok(())
}
