//! Session records out to JavaScript: the core's `SessionRecord`,
//! `SaveFields` and upgrade `Patch` (`core::storage::meta`, whose
//! `Serialize` gives their shape) as the objects IndexedDB stores, through
//! serde-wasm-bindgen. A save's `contextKey` and `pinnedKeys` are made of
//! keys this store already holds as JavaScript arrays, set on the fields
//! as they are. Reading a
//! record stays field by field (`records::get`): a record of an older
//! version may hold any type, and the app's result keeps every field the
//! record has.

use super::records::{get, set};
use agent_compaction_core::storage::meta::{OldRecord, Patch, SaveFields, SessionRecord};
use serde::Serialize;
use wasm_bindgen::prelude::*;

pub fn to_js(value: &impl Serialize) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::new().serialize_missing_as_null(true))
        .map_err(JsValue::from)
}

/// The record object of a session the core made whole.
pub fn record(r: &SessionRecord) -> Result<JsValue, JsValue> {
    to_js(r)
}

/// The fields a save writes over the stored record; `context_key` is the
/// key of the record where the context starts, or null; `pinned_keys` the
/// `[key, slot]` pairs of the pinned messages before it.
pub fn save_fields(
    f: &SaveFields,
    context_key: &JsValue,
    pinned_keys: &JsValue,
) -> Result<JsValue, JsValue> {
    let fields = to_js(f)?;
    set(&fields, "contextKey", context_key);
    set(&fields, "pinnedKeys", pinned_keys);
    Ok(fields)
}

/// What the schema upgrade reads of an old record.
pub fn old_record(record: &JsValue) -> OldRecord {
    let number = |key: &str| get(record, key).as_f64().filter(|x| x.is_finite());
    OldRecord {
        created_at: number("createdAt"),
        last_modified: number("lastModified"),
        message_count: number("messageCount"),
        context_tokens: number("contextTokens"),
        revision: number("revision"),
        title_is_text: get(record, "title").is_string(),
        preview_is_text: get(record, "preview").is_string(),
        has_context_key: !get(record, "contextKey").is_undefined(),
    }
}

/// The upgrade's patch for a record (`fillSessionDefaults`): null when
/// nothing changes, else `{ fields, count }`.
pub fn patch(p: Option<Patch>) -> Result<JsValue, JsValue> {
    p.map_or(Ok(JsValue::NULL), |p| to_js(&p))
}
