//! `load` (the whole array) and `loadContext` (the last summary on, read
//! with a key range that starts at the summary's record).

use super::records::{
    get, pending, range_from, read_records, same_key, session_range, storage_error, Tx,
};
use super::schema::{MESSAGES, SESSIONS};
use super::{string_arg, Inner, Known};
use crate::core::role::Role;
use crate::wasm::message_access::{roles, JsArray};
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

/// Reads a session: all of it, or from its last summary on, in one
/// read-only transaction. The records' requests go out with the session
/// record's when their range is known beforehand: always for all of them,
/// and for the context when this store knows where it started (checked
/// against the session record, and read again if it moved since).
pub async fn read(
    inner: &Inner,
    id: &str,
    context_only: bool,
    action: &str,
) -> Result<Stored, JsValue> {
    let hint = match context_only {
        true => inner.known(id).map(|k| match k.last_summary {
            Some(j) => k.keys.get(j as u32),
            None => JsValue::NULL,
        }),
        false => Some(JsValue::NULL),
    };
    let db = inner.db(action)?;
    let tx = Tx::open(&db, false, action)?;
    let sessions = tx.store(SESSIONS, action)?;
    let messages = tx.store(MESSAGES, action)?;
    let record = pending(sessions.get(&id.into())).map_err(|e| storage_error(action, &e))?;
    let early = match hint {
        Some(start) => Some((read_records(&messages, &range(id, &start)?), start)),
        None => None,
    };
    let record = record.await.map_err(|e| storage_error(action, &e))?;
    if record.is_undefined() {
        return Err(super::no_session(action, id));
    }
    let context_key = get(&record, "contextKey");
    let records = match early {
        Some((records, start)) if !context_only || same_key(&start, &context_key) => records,
        early => {
            let records = read_records(&messages, &range(id, &context_key)?);
            if let Some((wasted, _)) = early {
                let _ = wasted.await;
            }
            records
        }
    };
    let parts: Array = records
        .await
        .map_err(|e| storage_error(action, &e))?
        .unchecked_into();
    tx.done();
    let values: Array = parts.get(0).unchecked_into();
    let count = get(&record, "messageCount").as_f64().unwrap_or(0.0) as u32;
    Ok(Stored {
        offset: count.saturating_sub(values.length()),
        record,
        messages: values,
        keys: parts.get(1).unchecked_into(),
    })
}

/// The records from `start` (a full key) on, or all of them (null).
fn range(id: &str, start: &JsValue) -> Result<JsValue, JsValue> {
    Ok(if start.is_null() || start.is_undefined() {
        session_range(id)?.into()
    } else {
        range_from(id, start)?.into()
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
        record: stored.record,
    };
    inner.remember(&id, known);
    Ok(stored.messages.into())
}
