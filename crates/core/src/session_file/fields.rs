//! Which fields of a flat-array message an entry carries, and where the
//! rest go.
//!
//! A `custom`, `branchSummary` or `compactionSummary` message becomes an
//! entry of its own type, whose fields pi defines. A summary's fields that
//! such an entry has no place for (an app's own additions) are kept in the
//! entry's [`MESSAGE_FIELDS`] object, which pi ignores, so that import gives
//! the message back whole. (A custom message with such fields is written as
//! a `message` entry instead, so that pi's context holds it whole too.)

use super::entries::Entry;
use crate::js::json::{Json, JsonObject};
use crate::js::string::JsStr;

/// The entry field holding a message's fields that pi's entry has no place for.
pub const MESSAGE_FIELDS: &str = "messageFields";

/// The fields a `custom_message` entry stands for (pi's `createCustomMessage`).
pub const CUSTOM: &[&str] = &[
    "role",
    "customType",
    "content",
    "display",
    "details",
    "timestamp",
];
/// The fields a `branch_summary` entry stands for.
pub const BRANCH_SUMMARY: &[&str] = &[
    "role",
    "summary",
    "fromId",
    "timestamp",
    "details",
    "usage",
    "fromHook",
];
/// The fields a `compaction` entry stands for.
pub const COMPACTION_SUMMARY: &[&str] = &[
    "role",
    "summary",
    "tokensBefore",
    "timestamp",
    "details",
    "usage",
    "fromHook",
];

/// A message object with its role set.
pub fn start(role: &str) -> JsonObject {
    let mut m = JsonObject::new();
    m.insert(JsStr::from("role"), Json::from(role));
    m
}

/// Copies the entry's fields named in `keys` that it has.
pub fn copy(message: &mut JsonObject, entry: &Entry, keys: &[&str]) {
    for &key in keys {
        if let Some(value) = entry.get(key) {
            message.insert(JsStr::from(key), value.clone());
        }
    }
}

fn is_known(key: &JsStr, known: &[&str]) -> bool {
    known.iter().any(|k| key.eq_str(k))
}

/// Adds the entry's extra message fields; the entry's own fields win.
pub fn extras(message: &mut JsonObject, entry: &Entry, known: &[&str]) {
    let Some(Json::Object(extra)) = entry.get(MESSAGE_FIELDS) else {
        return;
    };
    for (key, value) in extra.iter() {
        if !is_known(key, known) && message.get_js(key).is_none() {
            message.insert(key.clone(), value.clone());
        }
    }
}

/// The message's fields outside `known`, when it has any.
pub fn extra_fields(message: &JsonObject, known: &[&str]) -> Option<JsonObject> {
    let extra: Vec<(JsStr, Json)> = message
        .iter()
        .filter(|(key, _)| !is_known(key, known))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!extra.is_empty()).then(|| JsonObject::from_entries(extra))
}
