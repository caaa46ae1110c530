//! `load` (the whole array) and `loadContext` (the last summary on, read
//! with a key range that starts at the summary's record).

use super::records::{get, range_from, request, session_range, session_record, storage_error};
use super::schema::{MESSAGES, SESSIONS};
use super::{idb_error, string_arg, Inner, Known};
use crate::core::role::Role;
use crate::wasm::message_access::{roles, JsArray};
use indexed_db_futures::internals::SystemRepr;
use indexed_db_futures::prelude::*;
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The stored records of a session as of one read transaction.
pub struct Stored {
    pub record: JsValue,
    pub messages: Array,
    pub keys: Array,
    /// Stored messages before `messages[0]`.
    pub offset: u32,
}

/// Reads a session: all of it, or from its last summary on.
pub async fn read(
    inner: &Inner,
    id: &str,
    context_only: bool,
    action: &str,
) -> Result<Stored, JsValue> {
    let db = inner.db(action)?;
    let tx = db
        .transaction([SESSIONS, MESSAGES])
        .build()
        .map_err(|e| idb_error(action, &e))?;
    let sessions = tx
        .object_store(SESSIONS)
        .map_err(|e| idb_error(action, &e))?;
    let messages = tx
        .object_store(MESSAGES)
        .map_err(|e| idb_error(action, &e))?;
    let record = session_record(sessions.as_sys(), action, id).await?;
    let context_key = get(&record, "contextKey");
    let range = if context_only && !context_key.is_null() && !context_key.is_undefined() {
        range_from(id, &context_key)?
    } else {
        session_range(id)?
    };
    // Both requests go out at once; the transaction is read-only.
    let values = request(messages.as_sys().get_all_with_key(&range));
    let keys = request(messages.as_sys().get_all_keys_with_key(&range));
    let values: Array = values
        .await
        .map_err(|e| storage_error(action, &e))?
        .unchecked_into();
    let keys: Array = keys
        .await
        .map_err(|e| storage_error(action, &e))?
        .unchecked_into();
    let count = get(&record, "messageCount").as_f64().unwrap_or(0.0) as u32;
    Ok(Stored {
        offset: count.saturating_sub(values.length()),
        record,
        messages: values,
        keys,
    })
}

/// Where the last summary is in `messages` (one crossing for all roles).
pub fn last_summary(messages: &Array) -> Option<usize> {
    let array = JsArray::new(messages, || {
        crate::core::error::FieldPath::argument("messages")
    })
    .ok()
    .flatten()?;
    roles(&array)
        .ok()?
        .iter()
        .rposition(|&r| r == Role::CompactionSummary)
}

pub async fn load(inner: Rc<Inner>, id: JsValue, context_only: bool) -> Result<JsValue, JsValue> {
    let action = if context_only {
        "SessionStore.loadContext"
    } else {
        "SessionStore.load"
    };
    let id = string_arg(&id, "sessionId")?;
    let stored = read(&inner, &id, context_only, action).await?;
    let known = Known {
        revision: get(&stored.record, "revision").as_f64().unwrap_or(0.0),
        messages: stored.messages.slice(0, stored.messages.length()),
        keys: stored.keys,
        last_summary: last_summary(&stored.messages),
        offset: stored.offset,
    };
    inner.remember(&id, known);
    Ok(stored.messages.into())
}
