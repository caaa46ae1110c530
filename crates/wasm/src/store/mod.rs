//! `SessionStore`: sessions in IndexedDB (SPEC §4). `schema::open` opens
//! the database (plain web-sys); transactions are raw (`records::Tx`, through the
//! shim), so that a transaction's requests can be queued before it awaits.
//!
//! Each session is a metadata record and one record per message, keyed in
//! order (`core::save_plan`). The store keeps, per session it has loaded or
//! saved, the caller's array of message objects as of then: a save compares
//! the new array with it by identity (messages are immutable, SPEC §1) and
//! writes only new records and deletes only removed ones, in one transaction
//! that awaits nothing but IndexedDB requests.
//!
//! Writes take the session's Web Lock (`locks`), waiting for it at most the
//! store's lock timeout, and are announced to the other stores on the
//! database (`changes`). A connection the browser closes is reopened and
//! the call run once more (`connection`).

mod changes;
mod connection;
mod fork;
mod jsonl;
mod load;
mod locks;
mod meta;
mod new_session;
mod records;
mod repair;
mod save;
mod schema;
mod sessions;

use agent_compaction_core::storage::error::StoreError;
use agent_compaction_core::storage::known::{self, View};
use js_sys::{Array, Promise};
use records::get;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::IdbDatabase as Database;

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
  /**
   * How long a call waits for its session's lock before it fails with an
   * `Error` named "LockTimeoutError", having done nothing (default 30000;
   * 1 to 2147483647). A lock can stay taken for good: Safari keeps the locks
   * of a page in its back/forward cache and of a worker across reloads.
   * Raise it when another tab's `withSessionLock` callbacks run longer (a
   * slow LLM summarizing).
   */
  lockTimeoutMs?: number;
}
/** The origin's storage, as `SessionStore.estimate()` reads it. */
export interface StorageEstimate {
  /** False where `navigator.storage.estimate` is missing or failed; the numbers are then null. */
  supported: boolean;
  /** Bytes the origin uses (all of its storage, not only this database). */
  usage: number | null;
  /** Bytes the browser may let the origin use. */
  quota: number | null;
  /** Whether the browser keeps the origin's storage under pressure (see `persist()`). */
  persisted: boolean;
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
export interface ForkOptions {
  /** Appended after the copied messages: a summary of the branch being left. */
  summary?: BranchSummaryMessage;
  /** Default: a fresh UUIDv7. */
  id?: string;
  /** Default: the source's title followed by " (fork)". */
  title?: string;
}
export interface ImportJsonlOptions {
  /** Default: the file's session name, else its first user text, else "Imported session". */
  title?: string;
}
/**
 * A change committed through another `SessionStore` on the same database:
 * another tab, a worker, or another store opened in this page. A store is
 * not told of its own changes (their promises are).
 */
export type SessionChangeEvent =
  | { type: "created" | "saved" | "renamed" | "imported"; sessionId: string; revision: number }
  | { type: "forked"; sessionId: string; revision: number; sourceId: string }
  | { type: "deleted"; sessionId: string };
/** Cumulative record writes of this store (diagnostics). */
export interface SessionStoreStats {
  recordsPut: number;
  recordsDeleted: number;
}
/** A save made from a stale revision (another tab saved in between): nothing was written. */
export class ConflictError extends Error {
  name: "ConflictError";
}
/**
 * Sessions persisted in IndexedDB. A call that fails rejects with an `Error`
 * whose `name` is one of `SessionStoreErrorName` (bad arguments: `TypeError`,
 * `RangeError`).
 */
export class SessionStore {
  private constructor();
  free(): void;
  /**
   * Opens (creating or upgrading) the database. Only this touches `indexedDB`.
   * @throws Error named "UpgradeBlockedError" when the upgrade is blocked by an open
   * connection of an older version (another tab); "OpenFailedError" when the database
   * cannot be opened, whose message says why: storage unavailable (no `indexedDB`, a
   * private mode or a site setting refusing it, an opaque origin), or a newer database
   * on disk (see `SessionStoreErrorName`). Without a store the rest of the package
   * (`Compactor`, the flat-array functions) works as before.
   *
   * When the browser closes the connection later (WebKit's "Connection to Indexed
   * Database server lost", the database's `close` event), the store reopens it and a
   * call that failed so runs once more; writing nothing twice (a write's second try
   * reads what its first one committed). A call that fails so twice rejects with an
   * `Error` named "ConnectionLostError"; the stored sessions stay whole.
   */
  static open(options?: SessionStoreOptions): Promise<SessionStore>;
  /** The `ConflictError` class (also exported by the package). */
  static readonly ConflictError: typeof ConflictError;
  /** Closes the database connection and the change channel; later calls reject. */
  close(): void;
  /**
   * Asks the browser to keep this origin's storage when space runs low
   * (`navigator.storage.persist()`); resolves true when it will. Browsers may
   * otherwise evict a site's IndexedDB without asking (Safari after 7 days
   * without a visit). Call it once the user has something worth keeping, from
   * a user action (Firefox asks the user; Chromium decides from engagement,
   * and may say false at first and true later). False where the API is
   * missing (workers, insecure contexts) or refused. Works on a closed store.
   */
  persist(): Promise<boolean>;
  /**
   * The origin's usage and quota (`navigator.storage.estimate()`), and whether
   * it is persisted. Check it before a large import, or show it in settings;
   * a save beyond the quota fails with "QuotaExceededError" and writes
   * nothing. Where the API is missing, `supported` is false and the numbers
   * null. Works on a closed store.
   */
  estimate(): Promise<StorageEstimate>;
  createSession(options?: CreateSessionOptions): Promise<SessionMeta>;
  /** Newest first (by `lastModified`, through an index). */
  list(): Promise<SessionMeta[]>;
  rename(sessionId: string, title: string): Promise<SessionMeta>;
  /** Deletes the session and all of its records. */
  delete(sessionId: string): Promise<void>;
  /**
   * Stores `messages` as the session's array. Writes only what changed since
   * this store last loaded or saved the session, in one transaction, holding
   * the session's Web Lock from its read to its commit. A save that inserts
   * a `compactionSummary` commits with `durability: "strict"` (reported once
   * on disk) where the engine supports it; a turn's save keeps the default.
   * @throws ConflictError when another store saved the session since.
   * @throws Error named "RefusedDropError" when the save would drop stored
   * messages (other than trailing failed attempts) without `{ replace: true }`;
   * "LockTimeoutError" when the session's lock did not come within `lockTimeoutMs`;
   * "QuotaExceededError", "SessionNotFoundError"... (see `SessionStoreErrorName`).
   * @throws TypeError when a message cannot be stored (names its index).
   */
  save<M extends AnyMessage>(sessionId: string, messages: readonly M[], options?: SaveOptions): Promise<SessionMeta>;
  /** The whole array, in order. */
  load<M extends AnyMessage = AgentMessage>(sessionId: string): Promise<M[]>;
  /**
   * What the model needs, reading only those records: the pinned messages
   * (`pinned: true`) before the last `compactionSummary`, in their order,
   * then that summary and everything after it. The Compactor's view of this
   * array is its view of the whole one. Without a summary, the whole array.
   */
  loadContext<M extends AnyMessage = AgentMessage>(sessionId: string): Promise<M[]>;
  /**
   * A new session holding copies of messages `[0, atIndex)` of `sessionId`,
   * then `options.summary` when given, written in one transaction. The source
   * is unchanged, and the two share no records: deleting either leaves the
   * other whole.
   * @throws TypeError when `atIndex` is not a number, or `summary` is not a
   * storable `branchSummary` message.
   * @throws RangeError when `atIndex` is not a whole number in `0..=messageCount`.
   */
  fork(sessionId: string, atIndex: number, options?: ForkOptions): Promise<SessionMeta>;
  /** The session as a pi session file (JSONL, format version 3). */
  exportJsonl(sessionId: string): Promise<string>;
  /**
   * Stores a pi session file (format version 1, 2 or 3) as a new session, in
   * one transaction. It keeps the file's session id unless a session with
   * that id is already here; then it gets a fresh UUIDv7 (read it from the
   * result). `load` then returns `piSessionToMessages(text).messages`.
   * @throws Error when the file has no session header or an entry cannot be read.
   */
  importJsonl(text: string, options?: ImportJsonlOptions): Promise<SessionMeta>;
  /**
   * Runs `callback` holding the session's exclusive lock, a Web Lock shared
   * by every tab and worker of the origin (a queue in this realm where
   * `navigator.locks` is missing), and resolves with what it resolves with.
   * Use it around a whole load → compact → save so that two tabs never
   * compact the same session at once; each store call needs the lock only
   * around its own transaction (the page keeps it up to 100 ms longer for
   * its next call on the session, and lets it go as soon as another tab or
   * worker asks for it).
   *
   * While the callback runs, this store's own calls on `sessionId` (save,
   * fork, rename, delete, importJsonl, withSessionLock) run without
   * requesting the lock again, so a save inside the callback does not
   * deadlock; that holds for any call of this store on that session in
   * the meantime, not only the callback's. Make those calls through this
   * store: another `SessionStore` instance would wait for the lock, which
   * the callback holds until that call returns (until its lock timeout).
   * @throws Error named "LockTimeoutError" when the lock did not come within
   * the store's `lockTimeoutMs`; the callback was not called.
   */
  withSessionLock<T>(sessionId: string, callback: () => T | PromiseLike<T>): Promise<Awaited<T>>;
  /**
   * Calls `listener` after each change committed through another store on
   * this database (see `SessionChangeEvent`): reload a session shown on
   * screen when it changed. A session changed elsewhere must be loaded
   * again before this store saves it, or the save is a `ConflictError`.
   * Returns the function that removes the listener.
   */
  onChange(listener: (event: SessionChangeEvent) => void): () => void;
  stats(): SessionStoreStats;
}
"#;

/// What this store last loaded or saved of a session: the core's facts
/// (`core::storage::known::View`) and the JavaScript values they are of.
#[derive(Clone)]
struct Known {
    view: View,
    /// The caller's message objects (our own array: the caller may mutate theirs).
    messages: Array,
    /// Their record keys, in the same order (a pack's messages share its key).
    keys: Array,
    /// The session record as this store last read or wrote it.
    record: JsValue,
}

impl known::Known for Known {
    fn view(&self) -> &View {
        &self.view
    }
}

struct Inner {
    name: String,
    db: RefCell<Option<Database>>,
    /// Why the store is closed for good: `close()`, or the database deleted
    /// or upgraded by another connection. Never reopened then.
    lost: RefCell<Option<String>>,
    /// The connection handling of `connection`: the reopen in progress, the
    /// connection's generation, the browser's closes seen, the handlers.
    link: connection::Link,
    /// How long a call waits for its session's lock (`lockTimeoutMs`).
    lock_timeout_ms: f64,
    /// The sessions this store read or wrote, those changed elsewhere
    /// since, the locks its callbacks hold (`core::storage::known`).
    sessions: RefCell<known::Sessions<Known>>,
    /// The app's `onChange` listeners (a `Set` of functions).
    listeners: js_sys::Set,
    channel: RefCell<Option<changes::Channel>>,
    records_put: Cell<f64>,
    records_deleted: Cell<f64>,
}

impl Inner {
    /// The error of a call on a store closed for good.
    fn closed_error(&self, action: &'static str) -> JsValue {
        let why = self
            .lost
            .borrow()
            .clone()
            .unwrap_or_else(|| "the SessionStore is closed".into());
        records::store_error(StoreError::Closed {
            action,
            reason: why,
        })
    }

    fn forget(&self, id: &str) {
        self.sessions.borrow_mut().forget(id);
    }

    fn remember(&self, id: &str, known: Known) {
        self.sessions.borrow_mut().remember(id, known);
    }

    fn known(&self, id: &str) -> Option<Known> {
        self.sessions.borrow().get(id)
    }

    /// Counts a write's records in `stats()`.
    fn count_writes(&self, puts: usize, deletes: usize) {
        self.records_put.set(self.records_put.get() + puts as f64);
        (self.records_deleted).set(self.records_deleted.get() + deletes as f64);
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
            crate::js::errors::describe(value)
        ))
        .into()
    })
}

/// `options[key]`: absent (undefined or null), or a string.
fn optional_string(options: &JsValue, key: &str) -> Result<Option<String>, JsValue> {
    match get(options, key) {
        v if v.is_undefined() || v.is_null() => Ok(None),
        v => string_arg(&v, &format!("options.{key}")).map(Some),
    }
}

fn options_arg(value: &JsValue, name: &str) -> Result<JsValue, JsValue> {
    if value.is_undefined() || value.is_null() {
        Ok(js_sys::Object::new().into())
    } else if value.is_object() {
        Ok(value.clone())
    } else {
        Err(js_sys::TypeError::new(&format!(
            "{name} must be an object or undefined, got {}",
            crate::js::errors::describe(value)
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
        let lock_timeout_ms = locks::timeout_option(&get(&options, "lockTimeoutMs"))?;
        locks::install_policy();
        let db = schema::open(&name).await?;
        let inner = Rc::new(Inner {
            name,
            db: RefCell::new(None),
            lost: RefCell::new(None),
            link: connection::Link::default(),
            lock_timeout_ms,
            sessions: RefCell::default(),
            listeners: js_sys::Set::new(&JsValue::UNDEFINED),
            channel: RefCell::new(None),
            records_put: Cell::new(0.0),
            records_deleted: Cell::new(0.0),
        });
        connection::adopt(&inner, db);
        let channel = changes::Channel::open(&inner.name, Rc::downgrade(&inner));
        *inner.channel.borrow_mut() = Some(channel);
        Ok(SessionStore { inner })
    }

    #[wasm_bindgen(getter = ConflictError)]
    pub fn conflict_error() -> JsValue {
        records::conflict_error_class()
    }

    /// Closes the connection and the change channel; later calls reject.
    pub fn close(&self) {
        if self.inner.lost.borrow().is_none() {
            *self.inner.lost.borrow_mut() = Some("the SessionStore is closed".into());
        }
        if let Some(db) = self.inner.db.borrow_mut().take() {
            db.close();
        }
        let channel = self.inner.channel.borrow_mut().take();
        drop(channel);
        locks::release(&self.inner.name);
        self.inner.listeners.clear();
        self.inner.sessions.borrow_mut().clear();
    }

    #[wasm_bindgen(js_name = createSession)]
    pub fn create_session(&self, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(sessions::create(inner, options))
    }

    pub fn list(&self) -> Promise {
        let inner = self.inner.clone();
        spawn(sessions::list(inner))
    }

    pub fn rename(&self, session_id: JsValue, title: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(sessions::rename(inner, session_id, title))
    }

    pub fn delete(&self, session_id: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(sessions::delete(inner, session_id))
    }

    pub fn save(&self, session_id: JsValue, messages: JsValue, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(save::save(inner, session_id, messages, options))
    }

    pub fn load(&self, session_id: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(load::load(inner, session_id, false))
    }

    #[wasm_bindgen(js_name = loadContext)]
    pub fn load_context(&self, session_id: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(load::load(inner, session_id, true))
    }

    pub fn fork(&self, session_id: JsValue, at_index: JsValue, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(fork::fork(inner, session_id, at_index, options))
    }

    #[wasm_bindgen(js_name = exportJsonl)]
    pub fn export_jsonl(&self, session_id: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(jsonl::export(inner, session_id))
    }

    #[wasm_bindgen(js_name = importJsonl)]
    pub fn import_jsonl(&self, text: JsValue, options: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(jsonl::import(inner, text, options))
    }

    #[wasm_bindgen(js_name = withSessionLock)]
    pub fn with_session_lock(&self, session_id: JsValue, callback: JsValue) -> Promise {
        let inner = self.inner.clone();
        spawn(locks::with_session_lock(inner, session_id, callback))
    }

    #[wasm_bindgen(js_name = onChange)]
    pub fn on_change(&self, listener: JsValue) -> Result<JsValue, JsValue> {
        changes::on_change(&self.inner, listener)
    }

    /// `navigator.storage.persist()`, false where it is missing.
    pub fn persist(&self) -> Promise {
        records::persist_storage()
    }

    /// `navigator.storage.estimate()` and `persisted()`, or a clear "not
    /// supported".
    pub fn estimate(&self) -> Promise {
        records::estimate_storage()
    }

    pub fn stats(&self) -> JsValue {
        crate::js::values::object(&[
            ("recordsPut", self.inner.records_put.get().into()),
            ("recordsDeleted", self.inner.records_deleted.get().into()),
        ])
    }
}

/// A method's work, boxed: one `future_to_promise` in the `.wasm` for all
/// of them rather than one per method.
type Task = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

fn spawn(task: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    future_to_promise(Box::pin(task) as Task)
}
