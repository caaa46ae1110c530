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
//! Version 2:
//! - `sessions` gets the index `byLastModified`, which `list()` reads
//!   backwards (newest first);
//! - every session record written before gets the fields version 2 relies
//!   on, with defaults where one is missing (`core::storage::meta::defaults`) (a record without a numeric
//!   `lastModified` would be left out of the index, and so of `list()`;
//!   a missing `messageCount` is counted from the records).
//!
//! Version 3:
//! - a `messages` record may be a *pack*: an array of consecutive messages
//!   under the key of the first (see `core::packing`), and a session record
//!   has `contextSlot`, the last summary's place in its record (0, or
//!   missing, for a record of its own). Records of version 2 are read as
//!   they are; the step changes no data. The version is raised so that a
//!   library of version 2 refuses the database rather than misread a pack.
//!
//! Within version 3, a session record written by a save, a fork or an
//! import also has `pinnedKeys`: where each pinned message before the last
//! summary is stored (`[key, slot]` pairs, `core::storage::marks`), which
//! `loadContext` reads besides the context. No upgrade step adds it: a
//! record without it has its session read whole by `loadContext` until its
//! next save writes it.
//!
//! Version 4:
//! - `history`: each session's history index (`core::storage::history`),
//!   out-of-line keys `[sessionId, kind, ...]`, so that a session's
//!   index is one key range, deleted with the session: `[id, 0]` how far
//!   it goes, `[id, 1, fill]` a fill's passage statistics, `[id, 2,
//!   bucket, fill]` its postings by term bucket, `[id, 3, place]` a
//!   message's searched text. No data changes: a session without an index
//!   gets one at its first search.
//!
//! Upgrades run one step per version from the stored version up, inside the
//! browser's version-change transaction: a later version adds a step and
//! never drops a store that holds data.

use super::meta;
use super::records::{get, store_error, text};
use crate::js::errors::thrown_message;
use crate::js::values::Opt;
use agent_compaction_core::storage::connection::{open_failure_reason, OpenFailure};
use agent_compaction_core::storage::error::StoreError;
use agent_compaction_core::storage::meta::{defaults, OldRecord, Patch};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbObjectStore, IdbObjectStoreParameters, IdbTransaction};

pub const VERSION: u32 = 4;
pub const SESSIONS: &str = "sessions";
pub const MESSAGES: &str = "messages";
pub const HISTORY: &str = "history";
/// `sessions` by `lastModified` (version 2).
pub const BY_LAST_MODIFIED: &str = "byLastModified";

/// The upgrade: `(db, transaction, old version)`.
type Step = Closure<dyn FnMut(IdbDatabase, IdbTransaction, f64) -> Result<(), JsValue>>;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = openDatabase)]
    fn open_database(name: &str, version: u32, step: &Step) -> js_sys::Promise;
    #[wasm_bindgen(js_name = createIndex, catch)]
    fn create_index(store: &IdbObjectStore, name: &str, key_path: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = fillSessionDefaults, catch)]
    fn fill_session_defaults(
        sessions: &IdbObjectStore,
        messages: &IdbObjectStore,
        decide: &Decide,
    ) -> Result<(), JsValue>;
}

/// The upgrade's decision for one old session record (its patch, or null).
type Decide = Closure<dyn FnMut(JsValue) -> JsValue>;

/// Opens (creating or upgrading) the database `name`. An upgrade blocked by
/// another open connection (an older version in another tab) is an error
/// at once rather than a promise that never settles.
pub async fn open(name: &str) -> Result<IdbDatabase, JsValue> {
    // Called for each old record while the upgrade transaction runs, which
    // ends before the open settles: it lives as long as `step`.
    let decide: Rc<Decide> = Rc::new(Closure::new(|record: JsValue| {
        let old = OldRecord::read(|key| Opt(get(&record, key)));
        meta::patch(Patch::of(defaults(&old)))
    }));
    let step = Step::new(move |db: IdbDatabase, tx: IdbTransaction, old: f64| {
        upgrade(old as u32, &db, &tx, &decide)
    });
    let failed = match JsFuture::from(open_database(name, VERSION, &step)).await {
        Ok(db) => return Ok(db.unchecked_into()),
        Err(failed) => failed,
    };
    let error = get(&failed, "error");
    let message = || get(&error, "message").as_string();
    let reason = match text(&failed, "kind").as_str() {
        "blocked" => {
            // The upgrade may still run once the other connection closes.
            let later = JsFuture::from(js_sys::Promise::from(get(&failed, "later")));
            crate::js::values::spawn_detached(async move {
                let _step = step;
                let _ = later.await;
            });
            return Err(store_error(StoreError::UpgradeBlocked {
                database: name.to_owned(),
                version: VERSION,
            }));
        }
        "none" => OpenFailure::NoIndexedDb,
        "threw" => OpenFailure::Threw {
            name: text(&error, "name"),
            message: message().unwrap_or_else(|| thrown_message(&error)),
        },
        "upgrade" => OpenFailure::Upgrade {
            why: thrown_message(&error),
            version: VERSION,
        },
        _ => OpenFailure::Request {
            name: text(&error, "name"),
            message: message().unwrap_or_else(|| "the open request failed".into()),
        },
    };
    Err(store_error(StoreError::OpenFailed {
        database: name.to_owned(),
        reason: open_failure_reason(&reason),
    }))
}

/// Runs the schema steps from `old` up to [`VERSION`].
fn upgrade(
    old: u32,
    db: &IdbDatabase,
    tx: &IdbTransaction,
    decide: &Decide,
) -> Result<(), JsValue> {
    if old < 1 {
        let params = IdbObjectStoreParameters::new();
        params.set_key_path(&"id".into());
        db.create_object_store_with_optional_parameters(SESSIONS, &params)?;
        db.create_object_store(MESSAGES)?;
    }
    if old < 2 {
        let sessions = tx.object_store(SESSIONS)?;
        create_index(&sessions, BY_LAST_MODIFIED, "lastModified")?;
        if old >= 1 {
            fill_session_defaults(&sessions, &tx.object_store(MESSAGES)?, decide)?;
        }
    }
    if old < 4 {
        db.create_object_store(HISTORY)?;
    }
    Ok(())
}
