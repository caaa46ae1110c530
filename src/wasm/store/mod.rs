//! `SessionStore`: sessions in IndexedDB (SPEC §4), on `indexed_db_futures`.
//!
//! Each session is a metadata record and one record per message, keyed in
//! order (`core::save_plan`). The store keeps, per session it has loaded or
//! saved, the caller's array of message objects as of then: a save compares
//! the new array with it by identity (messages are immutable, SPEC §1) and
//! writes only new records and deletes only removed ones, in one transaction
//! that awaits nothing but IndexedDB requests.

mod load;
mod records;
mod save;
mod schema;
mod sessions;

use indexed_db_futures::database::Database;
use indexed_db_futures::internals::SystemRepr;
use js_sys::{Array, Promise};
use records::{get, storage_error_text};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

#[wasm_bindgen(typescript_custom_section)]
const STORE_TS: &'static str = r#"
/** A session as `list()` shows it. */
export interface SessionMeta {
  id: string;
  title: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  lastModified: number;
  messageCount: number;
  /** Estimated tokens of the LLM context (the last summary on; stale usage ignored). */
  contextTokens: number;
  /** The first user text, shortened to about 100 characters. */
  preview: string;
  model?: string;
  /** Increases with every save; a save from an older revision is a `ConflictError`. */
  revision: number;
}
export interface SessionStoreOptions {
  /** The IndexedDB database name (default "agent-compaction"). */
  name?: string;
}
export interface CreateSessionOptions {
  /** Default: a fresh UUIDv7. */
  id?: string;
  /** Default: "New session". */
  title?: string;
  /** A "provider/modelId" key. */
  model?: string;
}
export interface SaveOptions {
  /** Allow a save that drops stored messages (other than trailing failed attempts). */
  replace?: boolean;
}
/** Cumulative record writes of this store (diagnostics). */
export interface SessionStoreStats {
  recordsPut: number;
  recordsDeleted: number;
}
/** A save made from a stale revision (another tab saved in between): nothing was written. */
export class ConflictError extends Error {
  name: "ConflictError";
}
/** Sessions persisted in IndexedDB. */
export class SessionStore {
  private constructor();
  free(): void;
  /** Opens (creating or upgrading) the database. Only this touches `indexedDB`. */
  static open(options?: SessionStoreOptions): Promise<SessionStore>;
  /** The `ConflictError` class (also exported by the package). */
  static readonly ConflictError: typeof ConflictError;
  close(): void;
  createSession(options?: CreateSessionOptions): Promise<SessionMeta>;
  /** Newest first (by `lastModified`). */
  list(): Promise<SessionMeta[]>;
  rename(sessionId: string, title: string): Promise<SessionMeta>;
  /** Deletes the session and all of its records. */
  delete(sessionId: string): Promise<void>;
  /**
   * Stores `messages` as the session's array. Writes only what changed since
   * this store last loaded or saved the session, in one transaction.
   * @throws ConflictError when another store saved the session since.
   * @throws Error when the save would drop stored messages (other than
   * trailing failed attempts) without `{ replace: true }`.
   * @throws TypeError when a message cannot be stored (names its index).
   */
  save<M extends AnyMessage>(sessionId: string, messages: readonly M[], options?: SaveOptions): Promise<SessionMeta>;
  /** The whole array, in order. */
  load<M extends AnyMessage = AgentMessage>(sessionId: string): Promise<M[]>;
  /** The last `compactionSummary` and everything after it, reading only those records. */
  loadContext<M extends AnyMessage = AgentMessage>(sessionId: string): Promise<M[]>;
  stats(): SessionStoreStats;
}
"#;

/// What this store last loaded or saved of a session.
#[derive(Clone)]
struct Known {
    revision: f64,
    /// The caller's message objects (our own array: the caller may mutate theirs).
    messages: Array,
    /// Their record keys, in the same order.
    keys: Array,
    /// The last `compactionSummary` in `messages`.
    last_summary: Option<usize>,
    /// Stored messages before `messages[0]` (after `loadContext`).
    offset: u32,
}

struct Inner {
    name: String,
    db: RefCell<Option<Database>>,
    /// Why the connection is gone, when it went away on its own.
    lost: RefCell<Option<String>>,
    known: RefCell<HashMap<String, Known>>,
    records_put: Cell<f64>,
    records_deleted: Cell<f64>,
    _on_version_change: RefCell<Option<Closure<dyn FnMut()>>>,
}

impl Inner {
    fn db(&self, action: &str) -> Result<Database, JsValue> {
        if let Some(db) = self.db.borrow().as_ref() {
            return Ok(db.clone());
        }
        let why = self
            .lost
            .borrow()
            .clone()
            .unwrap_or_else(|| "the SessionStore is closed".into());
        Err(js_sys::Error::new(&format!("{action}: {why}")).into())
    }

    fn forget(&self, id: &str) {
        self.known.borrow_mut().remove(id);
    }

    fn remember(&self, id: &str, known: Known) {
        self.known.borrow_mut().insert(id.to_owned(), known);
    }

    fn known(&self, id: &str) -> Option<Known> {
        self.known.borrow().get(id).cloned()
    }
}

#[wasm_bindgen(skip_typescript)]
pub struct SessionStore {
    inner: Rc<Inner>,
}

fn string_arg(value: &JsValue, name: &str) -> Result<String, JsValue> {
    value.as_string().ok_or_else(|| {
        js_sys::TypeError::new(&format!(
            "{name} must be a string, got {}",
            super::errors::describe(value)
        ))
        .into()
    })
}

fn options_arg(value: &JsValue, name: &str) -> Result<JsValue, JsValue> {
    if value.is_undefined() || value.is_null() {
        Ok(js_sys::Object::new().into())
    } else if value.is_object() {
        Ok(value.clone())
    } else {
        Err(js_sys::TypeError::new(&format!(
            "{name} must be an object or undefined, got {}",
            super::errors::describe(value)
        ))
        .into())
    }
}

#[wasm_bindgen]
impl SessionStore {
    /// Opens the database (default name "agent-compaction").
    pub async fn open(options: JsValue) -> Result<SessionStore, JsValue> {
        let options = options_arg(&options, "options")?;
        let name = match get(&options, "name") {
            v if v.is_undefined() => "agent-compaction".to_owned(),
            v => string_arg(&v, "options.name")?,
        };
        let db = schema::open(&name).await?;
        let inner = Rc::new(Inner {
            name,
            db: RefCell::new(Some(db.clone())),
            lost: RefCell::new(None),
            known: RefCell::new(HashMap::new()),
            records_put: Cell::new(0.0),
            records_deleted: Cell::new(0.0),
            _on_version_change: RefCell::new(None),
        });
        // Another connection deletes or upgrades the database: let it, and
        // say so on the next call instead of failing obscurely.
        let weak = Rc::downgrade(&inner);
        let on_change = Closure::<dyn FnMut()>::new(move || {
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
        let sys: &web_sys::IdbDatabase = db.as_sys();
        sys.set_onversionchange(Some(on_change.as_ref().unchecked_ref()));
        sys.set_onclose(Some(on_change.as_ref().unchecked_ref()));
        *inner._on_version_change.borrow_mut() = Some(on_change);
        Ok(SessionStore { inner })
    }

    #[wasm_bindgen(getter = ConflictError)]
    pub fn conflict_error() -> JsValue {
        records::conflict_error_class()
    }

    /// Closes the connection; later calls reject.
    pub fn close(&self) {
        if let Some(db) = self.inner.db.borrow_mut().take() {
            db.close();
        }
        self.inner.known.borrow_mut().clear();
    }

    #[wasm_bindgen(js_name = createSession)]
    pub fn create_session(&self, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { sessions::create(inner, options).await })
    }

    pub fn list(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { sessions::list(inner).await })
    }

    pub fn rename(&self, session_id: JsValue, title: JsValue) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { sessions::rename(inner, session_id, title).await })
    }

    pub fn delete(&self, session_id: JsValue) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { sessions::delete(inner, session_id).await })
    }

    pub fn save(&self, session_id: JsValue, messages: JsValue, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { save::save(inner, session_id, messages, options).await })
    }

    pub fn load(&self, session_id: JsValue) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { load::load(inner, session_id, false).await })
    }

    #[wasm_bindgen(js_name = loadContext)]
    pub fn load_context(&self, session_id: JsValue) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { load::load(inner, session_id, true).await })
    }

    pub fn stats(&self) -> JsValue {
        super::js_values::object(&[
            ("recordsPut", self.inner.records_put.get().into()),
            ("recordsDeleted", self.inner.records_deleted.get().into()),
        ])
    }
}

/// An `indexed_db_futures` error as an `Error` that says what happened.
fn idb_error(action: &str, e: &indexed_db_futures::error::Error) -> JsValue {
    match e {
        indexed_db_futures::error::Error::DomException(d) => {
            let sys: &web_sys::DomException = d.as_ref().unchecked_ref();
            storage_error_text(action, &sys.name(), &sys.message())
        }
        other => storage_error_text(action, "", &other.to_string()),
    }
}

fn no_session(action: &str, id: &str) -> JsValue {
    js_sys::Error::new(&format!(
        "{action}: there is no session \"{id}\" in this store"
    ))
    .into()
}
