//! Session records out to JavaScript: the core's `SessionRecord`,
//! `SaveFields` and upgrade `Defaults` (`core::storage::session_meta`) as
//! the objects IndexedDB stores, through serde-wasm-bindgen. Record keys
//! (`contextKey`) are already JavaScript arrays and pass through as they are
//! (`serde_wasm_bindgen::preserve`). Reading a record stays field by field
//! (`records::get`): a record of an older version may hold any type, and the
//! app's result keeps every field the record has.

use super::records::{get, message_key};
use agent_compaction_core::storage::session_meta::{
    Defaults, OldRecord, SaveFields, SessionRecord,
};
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordOut<'a> {
    id: &'a str,
    title: &'a str,
    created_at: f64,
    last_modified: f64,
    message_count: u32,
    context_tokens: f64,
    preview: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    revision: f64,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    context_key: JsValue,
    context_slot: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FieldsOut<'a> {
    last_modified: f64,
    message_count: u32,
    context_tokens: f64,
    preview: &'a str,
    revision: f64,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    context_key: JsValue,
    context_slot: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DefaultsOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_modified: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preview: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    revision: Option<f64>,
    /// `Some(())` is written as null.
    #[serde(skip_serializing_if = "Option::is_none")]
    context_key: Option<()>,
}

#[derive(Serialize)]
struct PatchOut {
    fields: DefaultsOut,
    count: bool,
}

fn to_js(value: &impl Serialize) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::new().serialize_missing_as_null(true))
        .map_err(JsValue::from)
}

/// The record object of a session the core made whole.
pub fn record(r: &SessionRecord) -> Result<JsValue, JsValue> {
    let (context_key, context_slot) = match &r.context {
        Some((position, slot)) => (message_key(&r.id, position).into(), *slot),
        None => (JsValue::NULL, 0),
    };
    to_js(&RecordOut {
        id: &r.id,
        title: &r.title,
        created_at: r.created_at,
        last_modified: r.last_modified,
        message_count: r.message_count,
        context_tokens: r.context_tokens,
        preview: &r.preview,
        model: r.model.as_deref(),
        revision: r.revision,
        context_key,
        context_slot,
    })
}

/// The fields a save writes over the stored record; `context_key` is the
/// key of the record where the context starts, or null.
pub fn save_fields(f: &SaveFields, context_key: JsValue) -> Result<JsValue, JsValue> {
    to_js(&FieldsOut {
        last_modified: f.last_modified,
        message_count: f.message_count,
        context_tokens: f.context_tokens,
        preview: &f.preview,
        revision: f.revision,
        context_key,
        context_slot: f.context_slot,
    })
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
pub fn patch(d: &Defaults) -> Result<JsValue, JsValue> {
    if d.is_empty() {
        return Ok(JsValue::NULL);
    }
    to_js(&PatchOut {
        fields: DefaultsOut {
            created_at: d.created_at,
            last_modified: d.last_modified,
            title: d.title,
            preview: d.preview,
            context_tokens: d.context_tokens,
            revision: d.revision,
            context_key: d.context_key_null.then_some(()),
        },
        count: d.count_messages,
    })
}
