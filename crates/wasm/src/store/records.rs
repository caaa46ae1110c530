//! Record keys, key ranges, raw IndexedDB requests and error messages.

use agent_compaction_core::storage::save_plan::Position;
use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbKeyRange, IdbObjectStore, IdbRequest, IdbTransaction};

#[wasm_bindgen(module = "/src/js/message_shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = conflictError)]
    pub fn conflict_error(message: &str) -> JsValue;
    #[wasm_bindgen(js_name = conflictErrorClass)]
    pub fn conflict_error_class() -> JsValue;
    #[wasm_bindgen(js_name = diffKnown)]
    pub fn diff_known(known: &Array, messages: &Array) -> Array;
    #[wasm_bindgen(js_name = adoptEqual)]
    pub fn adopt_equal(stored: &Array, messages: &Array) -> Array;
    #[wasm_bindgen(js_name = checkStorable)]
    pub fn check_storable(messages: &Array, indices: &[u32]) -> JsValue;
    #[wasm_bindgen(js_name = applyKeys)]
    pub fn apply_keys(keys: &Array, inserted: &[u32], removed: &[u32], added: &Array) -> Array;
    #[wasm_bindgen(js_name = firstUserText)]
    pub fn first_user_text(messages: &Array, limit: u32) -> JsValue;
    #[wasm_bindgen(js_name = requestPromise)]
    fn request_promise(request: &IdbRequest) -> js_sys::Promise;
    #[wasm_bindgen(js_name = publicMeta)]
    pub fn public_meta(record: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = storeTransaction, catch)]
    fn store_transaction(
        db: &IdbDatabase,
        write: bool,
        both: bool,
    ) -> Result<IdbTransaction, JsValue>;
    #[wasm_bindgen(js_name = commitTransaction)]
    fn commit_transaction(tx: &IdbTransaction) -> js_sys::Promise;
    #[wasm_bindgen(js_name = readRecords)]
    fn read_records_js(store: &IdbObjectStore, range: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = sameKey)]
    pub fn same_key(a: &JsValue, b: &JsValue) -> bool;
    #[wasm_bindgen(js_name = nextMeta)]
    pub fn next_meta(stored: &JsValue, fields: &JsValue, queued: &JsValue) -> JsValue;
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

/// All of a session's message records: `[id] < key < [id, []]` (an array
/// sorts after every number).
pub fn session_range(session: &str) -> Result<IdbKeyRange, JsValue> {
    IdbKeyRange::bound_with_lower_open_and_upper_open(
        &Array::of1(&session.into()),
        &Array::of2(&session.into(), &Array::new()),
        true,
        true,
    )
}

/// The records from `from` (a full key) to the end of the session.
pub fn range_from(session: &str, from: &JsValue) -> Result<IdbKeyRange, JsValue> {
    IdbKeyRange::bound_with_lower_open_and_upper_open(
        from,
        &Array::of2(&session.into(), &Array::new()),
        false,
        true,
    )
}

/// The records before `to` (a full key).
pub fn range_before(session: &str, to: &JsValue) -> Result<IdbKeyRange, JsValue> {
    IdbKeyRange::bound_with_lower_open_and_upper_open(&Array::of1(&session.into()), to, true, true)
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

/// The records of `range` in `store`: `[values, keys]`.
pub fn read_records(store: &IdbObjectStore, range: &JsValue) -> JsFuture {
    JsFuture::from(read_records_js(store, range))
}

/// A transaction, aborted when dropped before [`Tx::commit`] or
/// [`Tx::done`]: an error return undoes whatever it queued.
pub struct Tx(Option<IdbTransaction>);

impl Tx {
    /// Over both object stores.
    pub fn open(db: &IdbDatabase, write: bool, action: &str) -> Result<Tx, JsValue> {
        Tx::over(db, write, true, action)
    }

    /// Over the session records only.
    pub fn sessions(db: &IdbDatabase, write: bool, action: &str) -> Result<Tx, JsValue> {
        Tx::over(db, write, false, action)
    }

    fn over(db: &IdbDatabase, write: bool, both: bool, action: &str) -> Result<Tx, JsValue> {
        store_transaction(db, write, both)
            .map(|tx| Tx(Some(tx)))
            .map_err(|e| storage_error(action, &e))
    }

    pub fn store(&self, name: &str, action: &str) -> Result<IdbObjectStore, JsValue> {
        match &self.0 {
            Some(tx) => tx.object_store(name).map_err(|e| storage_error(action, &e)),
            None => Err(storage_error_text(action, "", "the transaction is over")),
        }
    }

    /// Commits now. When the browser aborts it instead (the quota exceeded
    /// at commit, say), the error is the transaction's own, which says why.
    pub async fn commit(mut self, action: &str) -> Result<(), JsValue> {
        let Some(tx) = self.0.take() else {
            return Ok(());
        };
        JsFuture::from(commit_transaction(&tx))
            .await
            .map(|_| ())
            .map_err(|e| storage_error(action, &e))
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

/// An IndexedDB failure as an `Error` that says what happened.
pub fn storage_error(action: &str, thrown: &JsValue) -> JsValue {
    let name = get(thrown, "name").as_string().unwrap_or_default();
    let message = get(thrown, "message")
        .as_string()
        .or_else(|| thrown.as_string())
        .unwrap_or_else(|| crate::js::errors::thrown_message(thrown));
    storage_error_text(action, &name, &message)
}

/// The same from an error's name and message.
pub fn storage_error_text(action: &str, name: &str, message: &str) -> JsValue {
    let text = if name == "QuotaExceededError" || message.contains("QuotaExceeded") {
        format!(
            "{action}: the browser's storage quota is exceeded; nothing of this change was \
             written and nothing stored before was lost ({message})"
        )
    } else if name == "InvalidStateError" {
        format!(
            "{action}: the database connection is closed (the store was closed, or the \
             database was deleted or upgraded elsewhere) ({message})"
        )
    } else if name.is_empty() {
        format!("{action}: {message}")
    } else {
        format!("{action}: {name}: {message}")
    };
    js_sys::Error::new(&text).into()
}

/// The meta record of session `id`, or the "no such session" error.
pub async fn session_record(
    sessions: &web_sys::IdbObjectStore,
    action: &str,
    id: &str,
) -> Result<JsValue, JsValue> {
    let record = request(sessions.get(&id.into()))
        .await
        .map_err(|e| storage_error(action, &e))?;
    if record.is_undefined() {
        return Err(super::no_session(action, id));
    }
    Ok(record)
}
