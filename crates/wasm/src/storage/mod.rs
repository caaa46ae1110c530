//! `SessionStore`: sessions in IndexedDB (SPEC §4). `schema::open` opens
//! the database (its request's events settled by the shim); transactions are
//! raw (`records::Tx`, through the shim), so that a transaction's requests
//! can be queued before it awaits.
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
mod history;
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

use crate::js::values::spawn;
use crate::js::values::Opt;
use agent_compaction_core::storage::arguments;
use agent_compaction_core::storage::known::{self, View};
use js_sys::{Array, Promise};
use records::{get, thrown};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::IdbDatabase as Database;

/// What this store last loaded or saved of a session: the core's facts
/// (`core::storage::known::View`) and the JavaScript values they are of.
#[derive(Clone, Default)]
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

#[derive(Default)]
struct Inner {
    name: String,
    db: RefCell<Option<Database>>,
    /// What `connection` keeps of the connection besides the handle: the
    /// core's facts (closed for good and why, its generation, the
    /// browser's closes), the reopen in progress, the event handlers.
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
        records::store_error(self.link.state.borrow().closed_error(action))
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

/// A string argument (`core::storage::arguments::string`).
fn string_arg(value: &JsValue, name: &'static str) -> Result<String, JsValue> {
    arguments::string(name, &Opt(value.clone())).map_err(thrown)
}

/// `value[key]` for the core's readers (`core::storage::arguments`): a
/// getter that throws reads as `undefined`.
fn field(value: &Opt, key: &'static str) -> Opt {
    Opt(get(&value.0, key))
}

#[wasm_bindgen]
impl SessionStore {
    /// Opens the database (default name "agent-compaction").
    pub async fn open(options: JsValue) -> Result<SessionStore, JsValue> {
        let options = Opt(options);
        let options = arguments::open_options(&options, |key| field(&options, key));
        let options = options.map_err(thrown)?;
        locks::install_policy();
        let db = schema::open(&options.name).await?;
        let inner = Rc::new(Inner {
            name: options.name,
            lock_timeout_ms: options.lock_timeout_ms,
            ..Inner::default()
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
        self.inner.link.state.borrow_mut().close();
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
        spawn(sessions::create(self.inner.clone(), options))
    }

    pub fn list(&self) -> Promise {
        spawn(sessions::list(self.inner.clone()))
    }

    pub fn rename(&self, session_id: JsValue, title: JsValue) -> Promise {
        spawn(sessions::rename(self.inner.clone(), session_id, title))
    }

    pub fn delete(&self, session_id: JsValue) -> Promise {
        spawn(sessions::delete(self.inner.clone(), session_id))
    }

    pub fn save(&self, session_id: JsValue, messages: JsValue, options: JsValue) -> Promise {
        spawn(save::save(
            self.inner.clone(),
            session_id,
            messages,
            options,
        ))
    }

    pub fn load(&self, session_id: JsValue) -> Promise {
        spawn(load::load(self.inner.clone(), session_id, false))
    }

    #[wasm_bindgen(js_name = loadContext)]
    pub fn load_context(&self, session_id: JsValue) -> Promise {
        spawn(load::load(self.inner.clone(), session_id, true))
    }

    pub fn fork(&self, session_id: JsValue, at_index: JsValue, options: JsValue) -> Promise {
        spawn(fork::fork(
            self.inner.clone(),
            session_id,
            at_index,
            options,
        ))
    }

    #[wasm_bindgen(js_name = exportJsonl)]
    pub fn export_jsonl(&self, session_id: JsValue) -> Promise {
        spawn(jsonl::export(self.inner.clone(), session_id))
    }

    #[wasm_bindgen(js_name = importJsonl)]
    pub fn import_jsonl(&self, text: JsValue, options: JsValue) -> Promise {
        spawn(jsonl::import(self.inner.clone(), text, options))
    }

    /// A word search of what the session's last summary hides, from its
    /// history index (`history`).
    #[wasm_bindgen(js_name = searchHistory)]
    pub fn search_history(&self, session_id: JsValue, query: JsValue, options: JsValue) -> Promise {
        spawn(history::search(
            self.inner.clone(),
            session_id,
            query,
            options,
        ))
    }

    #[wasm_bindgen(js_name = readHistory)]
    pub fn read_history(
        &self,
        session_id: JsValue,
        reference: JsValue,
        options: JsValue,
    ) -> Promise {
        spawn(history::read(
            self.inner.clone(),
            session_id,
            reference,
            options,
        ))
    }

    /// What the history tool `name` answers for `args`, over the session.
    #[wasm_bindgen(js_name = historyTool)]
    pub fn history_tool(&self, session_id: JsValue, name: JsValue, args: JsValue) -> Promise {
        spawn(history::tool(self.inner.clone(), session_id, name, args))
    }

    #[wasm_bindgen(js_name = withSessionLock)]
    pub fn with_session_lock(&self, session_id: JsValue, callback: JsValue) -> Promise {
        spawn(locks::with_session_lock(
            self.inner.clone(),
            session_id,
            callback,
        ))
    }

    #[wasm_bindgen(js_name = onChange)]
    pub fn on_change(&self, listener: JsValue) -> Result<JsValue, JsValue> {
        changes::on_change(&self.inner, listener)
    }

    /// `navigator.storage.persist()` (`persisted()` in a worker, which cannot
    /// ask), false where it is missing.
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
