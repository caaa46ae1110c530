//! Record keys, key ranges, raw IndexedDB requests, the shim's store scans,
//! store errors as JavaScript `Error`s (`core::storage::error`), and the
//! origin's storage (`persist`, `estimate`).

use agent_compaction_core::storage::error::{CallError, StoreError};
use agent_compaction_core::storage::marks::Marks;
use agent_compaction_core::storage::meta::INTERNAL_FIELDS;
use agent_compaction_core::storage::save_plan::{Durability, Position};
use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbObjectStore, IdbRequest, IdbTransaction};

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = storeError)]
    fn store_error_js(name: &str, message: &str) -> JsValue;
    #[wasm_bindgen(js_name = conflictErrorClass)]
    pub fn conflict_error_class() -> JsValue;
    #[wasm_bindgen(js_name = adoptEqual)]
    pub fn adopt_equal(stored: &Array, messages: &Array) -> Array;
    #[wasm_bindgen(js_name = checkStorable)]
    fn check_storable(messages: &Array, indices: &[u32]) -> JsValue;
    #[wasm_bindgen(js_name = firstUnclonable)]
    fn first_unclonable_js(messages: &Array, from: u32, to: u32) -> u32;
    #[wasm_bindgen(js_name = assembleKeys)]
    pub fn assemble_keys(keys: &Array, added: &Array, runs: &[u32]) -> Array;
    #[wasm_bindgen(js_name = markWords)]
    fn mark_words_js(messages: &Array, from: u32, to: u32) -> js_sys::Uint32Array;
    #[wasm_bindgen(js_name = firstUserText)]
    pub fn first_user_text(messages: &Array, limit: u32) -> JsValue;
    #[wasm_bindgen(js_name = mergeMeta)]
    pub fn merge_meta(stored: &JsValue, fields: &JsValue, queued: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = publicMeta)]
    fn public_meta_js(record: &JsValue, internal: &Array) -> JsValue;
    #[wasm_bindgen(js_name = persistStorage)]
    pub fn persist_storage() -> js_sys::Promise;
    #[wasm_bindgen(js_name = estimateStorage)]
    pub fn estimate_storage() -> js_sys::Promise;
}

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = requestPromise)]
    fn request_promise(request: &IdbRequest) -> js_sys::Promise;
    #[wasm_bindgen(js_name = storeTransaction, catch)]
    fn store_transaction(
        db: &IdbDatabase,
        write: bool,
        both: bool,
        durability: &str,
    ) -> Result<IdbTransaction, JsValue>;
    #[wasm_bindgen(js_name = commitTransaction)]
    fn commit_transaction(tx: &IdbTransaction) -> js_sys::Promise;
    #[wasm_bindgen(js_name = readRecords)]
    fn read_records_js(store: &IdbObjectStore, range: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = recordsRange, catch)]
    fn records_range(id: &str, from: &JsValue, to: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = sameKey)]
    pub fn same_key(a: &JsValue, b: &JsValue) -> bool;
    #[wasm_bindgen(js_name = readPinned)]
    fn read_pinned_js(store: &IdbObjectStore, pinned_keys: &Array) -> js_sys::Promise;
}

/// A store error as the JavaScript `Error` the app gets: its `name` is the
/// variant's stable name (a `ConflictError` is an instance of that class).
pub fn store_error(e: StoreError) -> JsValue {
    store_error_js(e.name(), &e.to_string())
}

thread_local! {
    static INTERNAL: Array = INTERNAL_FIELDS.iter().map(|&f| JsValue::from_str(f)).collect();
}

/// A store call's failure as JavaScript throws it: a store error, a
/// `TypeError` or a `RangeError` (`core::storage::error::CallError`).
pub fn thrown(e: CallError) -> JsValue {
    match e {
        CallError::Store(e) => store_error(e),
        CallError::Type(m) => js_sys::TypeError::new(&m).into(),
        CallError::Range(m) => js_sys::RangeError::new(&m).into(),
    }
}

/// A session record as the app sees it (the internal fields left out).
pub fn public_meta(record: &JsValue) -> JsValue {
    INTERNAL.with(|internal| public_meta_js(record, internal))
}

/// The first of `messages[indices]` that cannot be stored (`checkStorable`):
/// its index, the path in it and what is there.
pub fn unstorable(messages: &Array, indices: &[u32]) -> Option<(usize, String, String)> {
    let problem = check_storable(messages, indices);
    let p: &Array = problem.dyn_ref()?;
    let text = |i| p.get(i).as_string().unwrap_or_default();
    Some((p.get(0).as_f64().unwrap_or(0.0) as usize, text(1), text(2)))
}

/// The first of `messages[from, to)` that the browser cannot clone, after
/// the put of the pack record holding them failed with a `DataCloneError`;
/// `from` when none does alone.
pub fn first_unclonable(messages: &Array, from: usize, to: usize) -> usize {
    first_unclonable_js(messages, from as u32, to as u32) as usize
}

/// The key of a message record: `[sessionId, ...position]`.
pub fn message_key(session: &str, position: &[f64]) -> Array {
    let key = Array::of1(&JsValue::from_str(session));
    for &x in position {
        key.push(&JsValue::from_f64(x));
    }
    key
}

/// The position part of a record key.
pub fn position_of(key: &JsValue) -> Position {
    let key: &Array = key.unchecked_ref();
    (1..key.length())
        .map(|i| key.get(i).as_f64().unwrap_or(0.0))
        .collect()
}

/// Session `id`'s message records: all of them, or from the key `from`
/// (null for all) on.
pub fn session_range(id: &str, from: &JsValue) -> Result<JsValue, JsValue> {
    records_range(id, from, &JsValue::NULL)
}

/// Session `id`'s message records before the key `to`.
pub fn range_before(id: &str, to: &JsValue) -> Result<JsValue, JsValue> {
    records_range(id, &JsValue::NULL, to)
}

/// Awaits an IndexedDB request (never anything else: a transaction stays
/// active across this await).
pub async fn request(r: Result<IdbRequest, JsValue>) -> Result<JsValue, JsValue> {
    let r = r?;
    JsFuture::from(request_promise(&r)).await
}

/// A request's outcome, listened for from now on: await it later.
pub fn pending(r: Result<IdbRequest, JsValue>) -> Result<JsFuture, JsValue> {
    Ok(JsFuture::from(request_promise(&r?)))
}

/// The pinned messages the session record's `pinnedKeys` name, in order.
pub fn read_pinned(store: &IdbObjectStore, pinned_keys: &Array) -> JsFuture {
    JsFuture::from(read_pinned_js(store, pinned_keys))
}

/// The shim's words for the pinned messages and clearing markers among
/// `messages[from, to)` (`core::storage::marks::Marks::from_words`).
pub fn mark_words(messages: &Array, from: usize, to: usize) -> Vec<u32> {
    mark_words_js(messages, from as u32, to as u32).to_vec()
}

/// The pinned messages and clearing markers among `messages[from, to)`,
/// at their indices in `messages`.
pub fn marks_among(messages: &Array, from: usize, to: usize) -> Marks {
    Marks::from_words(&mark_words(messages, from, to))
}

/// The records of `range` in `store`: `[values, keys]`.
pub fn read_records(store: &IdbObjectStore, range: &JsValue) -> JsFuture {
    JsFuture::from(read_records_js(store, range))
}

/// A transaction of a call of `action`, aborted when dropped before
/// [`Tx::commit`] or [`Tx::done`]: an error return undoes whatever it
/// queued. Its failures are the call's store errors.
pub struct Tx(Option<IdbTransaction>, &'static str);

impl Tx {
    /// Over the session, message and history records.
    pub fn open(db: &IdbDatabase, write: bool, action: &'static str) -> Result<Tx, JsValue> {
        Tx::over(db, write, true, Durability::Default, action)
    }

    /// Writing them all, as durable as `durability`
    /// (`core::storage::save_plan::durability`).
    pub fn writing(
        db: &IdbDatabase,
        durability: Durability,
        action: &'static str,
    ) -> Result<Tx, JsValue> {
        Tx::over(db, true, true, durability, action)
    }

    /// Over the session records only.
    pub fn sessions(db: &IdbDatabase, write: bool, action: &'static str) -> Result<Tx, JsValue> {
        Tx::over(db, write, false, Durability::Default, action)
    }

    fn over(
        db: &IdbDatabase,
        write: bool,
        both: bool,
        durability: Durability,
        action: &'static str,
    ) -> Result<Tx, JsValue> {
        store_transaction(db, write, both, durability.as_str())
            .map(|tx| Tx(Some(tx), action))
            .map_err(|e| storage_error(action, &e))
    }

    /// An IndexedDB failure in this transaction as the call's store error.
    pub fn fail(&self, e: JsValue) -> JsValue {
        storage_error(self.1, &e)
    }

    pub fn store(&self, name: &str) -> Result<IdbObjectStore, JsValue> {
        match &self.0 {
            Some(tx) => tx.object_store(name).map_err(|e| self.fail(e)),
            None => Err(store_error(StoreError::Storage {
                action: self.1,
                dom_name: String::new(),
                message: "the transaction is over".into(),
            })),
        }
    }

    /// Awaits a request of this transaction (never anything else: it stays
    /// active across this await).
    pub async fn read(&self, r: Result<IdbRequest, JsValue>) -> Result<JsValue, JsValue> {
        request(r).await.map_err(|e| self.fail(e))
    }

    /// The session record `id` of `sessions`, or the "no such session" error.
    pub async fn session(&self, sessions: &IdbObjectStore, id: &str) -> Result<JsValue, JsValue> {
        let record = self.read(sessions.get(&id.into())).await?;
        match record.is_undefined() {
            true => Err(no_session(self.1, id)),
            false => Ok(record),
        }
    }

    /// Commits now. When the browser aborts it instead (the quota exceeded
    /// at commit, say), the error is the transaction's own, which says why.
    pub async fn commit(mut self) -> Result<(), JsValue> {
        let Some(tx) = self.0.take() else {
            return Ok(());
        };
        let committed = JsFuture::from(commit_transaction(&tx)).await;
        committed.map(|_| ()).map_err(|e| self.fail(e))
    }

    /// A read-only transaction whose results are in: left to finish.
    pub fn done(mut self) {
        self.0 = None;
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.abort();
        }
    }
}

pub fn get(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

pub fn set(o: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(o, &JsValue::from_str(key), value);
}

/// A string property (a `DOMException`'s `name` or `message`), or "".
pub fn text(o: &JsValue, key: &str) -> String {
    get(o, key).as_string().unwrap_or_default()
}

/// An IndexedDB failure (a `DOMException`, or whatever was thrown) during
/// `action`, as the store error it is (core `StoreError::from_dom`).
pub fn storage_error(action: &'static str, thrown: &JsValue) -> JsValue {
    store_error(dom_error(action, thrown))
}

/// The same, as the core's value. A lost connection's detail is kept for
/// the call's retry (`connection::retrying`), which names it if the call
/// fails so again.
pub fn dom_error(action: &'static str, thrown: &JsValue) -> StoreError {
    let name = text(thrown, "name");
    let message = get(thrown, "message")
        .as_string()
        .or_else(|| thrown.as_string())
        .unwrap_or_else(|| crate::js::errors::thrown_message(thrown));
    let e = StoreError::from_dom(action, &name, &message);
    if let StoreError::ConnectionLost { detail, .. } = &e {
        LOST_DETAIL.with(|d| *d.borrow_mut() = Some(detail.clone()));
    }
    e
}

thread_local! {
    static LOST_DETAIL: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// The browser's words for the last lost connection, once.
pub fn take_lost_detail() -> Option<String> {
    LOST_DETAIL.with(|d| d.borrow_mut().take())
}

/// No session `id` here.
pub fn no_session(action: &'static str, id: &str) -> JsValue {
    store_error(StoreError::SessionNotFound {
        action,
        id: id.to_owned(),
    })
}
