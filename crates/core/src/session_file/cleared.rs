//! `toolOutputCleared` markers in pi session files: written as a `custom`
//! entry (pi's entry for extension data, which pi's `buildSessionContext`
//! leaves out of the model's context and its loader accepts) whose
//! `customType` is [`CUSTOM_TYPE`] and whose `data` is the marker as it is;
//! read back into the marker. pi itself does not clear the outputs (it does
//! not know the marker): it sends them whole.

use super::entries::Entry;
use crate::compaction::clearing::{CUSTOM_TYPE, MARKER_ROLE};
use crate::js::json::{Json, JsonObject};
use crate::js::string::JsStr;

/// The entry's fields before `id`, `parentId` and `timestamp`: pi's order
/// for a custom entry is type, customType, data, id, parentId, timestamp.
pub fn entry_start(message: &JsonObject) -> JsonObject {
    let mut e = JsonObject::new();
    e.insert(JsStr::from("type"), Json::from("custom"));
    e.insert(JsStr::from("customType"), Json::from(CUSTOM_TYPE));
    e.insert(JsStr::from("data"), Json::Object(message.clone()));
    e
}

/// The marker a `custom` entry holds, when it is one of ours.
pub fn marker_of(entry: &Entry) -> Option<Json> {
    if entry.get("type").and_then(Json::as_str)? != &JsStr::from("custom")
        || entry.get("customType").and_then(Json::as_str)? != &JsStr::from(CUSTOM_TYPE)
    {
        return None;
    }
    let data = entry.get("data")?.as_object()?;
    let role = data.get("role").and_then(Json::as_str)?;
    (role == &JsStr::from(MARKER_ROLE)).then(|| Json::Object(data.clone()))
}
