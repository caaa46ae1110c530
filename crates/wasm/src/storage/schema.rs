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
//! Upgrades run one step per version from the stored version up, inside the
//! browser's version-change transaction: a later version adds a step and
//! never drops a store that holds data.

use super::meta;
use super::records::store_error;
use agent_compaction_core::storage::connection::{open_failure_reason, OpenFailure};
use agent_compaction_core::storage::error::StoreError;
use agent_compaction_core::storage::meta::{defaults, Patch};
use js_sys::Reflect;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbFactory, IdbObjectStore, IdbObjectStoreParameters, IdbTransaction};

pub const VERSION: u32 = 3;
pub const SESSIONS: &str = "sessions";
pub const MESSAGES: &str = "messages";
/// `sessions` by `lastModified` (version 2).
pub const BY_LAST_MODIFIED: &str = "byLastModified";

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = onUpgradeNeeded)]
    fn on_upgrade_needed(
        request: &web_sys::IdbOpenDbRequest,
        step: &Closure<dyn FnMut(IdbDatabase, IdbTransaction, f64) -> Result<(), JsValue>>,
    );
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
/// at once rather than a promise that never settles. Plain web-sys: the
/// request's `success`, `blocked` and `error` events settle one promise.
pub async fn open(name: &str) -> Result<IdbDatabase, JsValue> {
    // Reading `indexedDB` may throw too (a SecurityError where storage is
    // refused to the page).
    let factory = Reflect::get(&js_sys::global(), &JsValue::from_str("indexedDB"))
        .map_err(|e| open_error(name, threw(&e)))?
        .dyn_into::<IdbFactory>()
        .map_err(|_| open_error(name, OpenFailure::NoIndexedDb))?;
    let request = factory
        .open_with_u32(name, VERSION)
        .map_err(|e| open_error(name, threw(&e)))?;
    let failure = Rc::new(RefCell::new(None::<String>));
    let failed = failure.clone();
    // Called for each old record while the upgrade transaction runs, which
    // ends before the open settles: it lives as long as `step`.
    let decide: Rc<Decide> = Rc::new(Closure::new(|record: JsValue| {
        meta::patch(Patch::of(defaults(&meta::old_record(&record))))
    }));
    let step = Closure::<dyn FnMut(IdbDatabase, IdbTransaction, f64) -> Result<(), JsValue>>::new(
        move |db: IdbDatabase, tx: IdbTransaction, old: f64| {
            upgrade(old as u32, &db, &tx, &decide).inspect_err(|e| {
                *failed.borrow_mut() = Some(crate::js::errors::thrown_message(e));
            })
        },
    );
    on_upgrade_needed(&request, &step);
    // `success` and `blocked` resolve with their event, `error` rejects.
    let settled = js_sys::Promise::new(&mut |resolve, reject| {
        request.set_onsuccess(Some(&resolve));
        request.set_onblocked(Some(&resolve));
        request.set_onerror(Some(&reject));
    });
    let outcome = JsFuture::from(settled).await;
    request.set_onblocked(None);
    match outcome {
        Ok(event) if event_type(&event) != "blocked" => {
            request.set_onsuccess(None);
            request.set_onerror(None);
            drop(step);
            Ok(request.result()?.unchecked_into())
        }
        Ok(_) => {
            // Close the connection if the upgrade completes later.
            let later = js_sys::Promise::new(&mut |resolve, reject| {
                request.set_onsuccess(Some(&resolve));
                request.set_onerror(Some(&reject));
            });
            wasm_bindgen_futures::spawn_local(async move {
                let _step = step;
                if JsFuture::from(later).await.is_ok() {
                    if let Ok(db) = request.result() {
                        db.unchecked_into::<IdbDatabase>().close();
                    }
                }
            });
            Err(store_error(StoreError::UpgradeBlocked {
                database: name.to_owned(),
                version: VERSION,
            }))
        }
        Err(_) => {
            request.set_onsuccess(None);
            let reason = match failure.borrow_mut().take() {
                Some(why) => OpenFailure::Upgrade {
                    why,
                    version: VERSION,
                },
                None => match request.error() {
                    Ok(Some(e)) => OpenFailure::Request {
                        name: e.name(),
                        message: e.message(),
                    },
                    _ => OpenFailure::Request {
                        name: String::new(),
                        message: "the open request failed".into(),
                    },
                },
            };
            Err(open_error(name, reason))
        }
    }
}

fn event_type(event: &JsValue) -> String {
    Reflect::get(event, &JsValue::from_str("type"))
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_default()
}

/// `SessionStore.open`'s error, its reason worded by the core
/// (`core::storage::connection::open_failure_reason`).
fn open_error(name: &str, failure: OpenFailure) -> JsValue {
    store_error(StoreError::OpenFailed {
        database: name.to_owned(),
        reason: open_failure_reason(&failure),
    })
}

/// What `indexedDB` or its `open` threw.
fn threw(e: &JsValue) -> OpenFailure {
    let text = |key: &str| {
        Reflect::get(e, &JsValue::from_str(key))
            .ok()
            .and_then(|v| v.as_string())
    };
    OpenFailure::Threw {
        name: text("name").unwrap_or_default(),
        message: text("message").unwrap_or_else(|| crate::js::errors::thrown_message(e)),
    }
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
    Ok(())
}
