//! pi session files: `piSessionToMessages` and `messagesToPiSession`.
//!
//! One-off bulk work, so it crosses the boundary in bulk: the file comes in
//! as one string and the result goes out as JSON text that the engine's
//! `JSON.parse` turns into objects; messages go in through the engine's
//! `JSON.stringify`, a chunk of them at a time when there are many. The work
//! itself is `core::session_file`.

use crate::js::errors::input_error;
use crate::js::errors::{describe, thrown_message};
use crate::js::message_access::JsArray;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::json::{parse, stringified, Json};
use agent_compaction_core::js::string::JsStr;
use agent_compaction_core::message::chunks::{chunks, CHUNK};
use agent_compaction_core::session_file::{
    ends_messages, export_session, import_session, uuid_v7, ExportDefaults,
};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(js_name = piSessionToMessages, skip_typescript)]
pub fn pi_session_to_messages(jsonl: JsValue) -> Result<JsValue, JsValue> {
    let Some(text) = jsonl.as_string() else {
        return Err(input_error(InputError::WrongType {
            path: FieldPath::argument("jsonl"),
            expected: "a string",
            got: describe(&jsonl),
        }));
    };
    let session = import_session(&text).map_err(|e| js_sys::Error::new(&e.to_string()))?;
    // Well-formed text: JSON.stringify's escapes keep lone surrogates intact.
    let json = stringified(&session.into_json()).to_string_lossy();
    js_sys::JSON::parse(&json)
}

#[wasm_bindgen(js_name = messagesToPiSession, skip_typescript)]
pub fn messages_to_pi_session(messages: JsValue, options: JsValue) -> Result<String, JsValue> {
    let array = JsArray::expect(
        &messages,
        || FieldPath::argument("messages"),
        "an array of messages",
    )
    .map_err(input_error)?;
    let messages = engine_messages(&array).map_err(input_error)?;
    let described = |e| as_passed(e, &array, &messages);
    let options = if options.is_undefined() || options.is_null() {
        None
    } else if options.is_object() {
        Some(engine_json(&options, "options", 0).map_err(input_error)?)
    } else {
        return Err(input_error(InputError::WrongType {
            path: FieldPath::argument("options"),
            expected: "an object or undefined",
            got: describe(&options),
        }));
    };
    let now = js_sys::Date::now();
    let defaults = ExportDefaults {
        session_id: JsStr::from(fresh_id(now)),
        now_ms: now,
    };
    export_session(&messages, options.as_ref(), &defaults)
        .map_err(described)
        .map_err(input_error)
}

/// `error`, with the element that is no object described as the caller
/// passed it: `JSON.stringify` makes `undefined` (a hole), a function and a
/// symbol `null`.
fn as_passed(error: InputError, array: &JsArray, messages: &Json) -> InputError {
    let Json::Array(items) = messages else {
        return error;
    };
    let Some(at) = items.iter().position(ends_messages) else {
        return error;
    };
    match error {
        InputError::WrongType { path, expected, .. }
            if path == FieldPath::element("messages", at) && items[at].is_null() =>
        {
            let got = array
                .get(at as u32, || path.clone())
                .map_or_else(|_| "null".into(), |v| describe(&v));
            InputError::WrongType {
                path,
                expected,
                got,
            }
        }
        other => other,
    }
}

/// The messages as [`engine_json`] reads them, a chunk at a time
/// (`core::message::chunks`; an array of one chunk in one piece), up to the
/// chunk that holds the first one that is no object: the export reports it
/// (`core::session_file::ends_messages`), however long the array.
fn engine_messages(array: &JsArray) -> Result<Json, InputError> {
    let len = array.len() as usize;
    if len <= CHUNK {
        return engine_json(array.as_array(), "messages", 0);
    }
    let mut items = Vec::new();
    for range in chunks(0, len) {
        let chunk = array.slice(range.start as u32, range.end as u32)?;
        let Json::Array(read) = engine_json(&chunk, "messages", range.start)? else {
            return Err(InputError::Unreadable {
                path: FieldPath::argument("messages"),
                reason: "JSON.stringify gave no array".into(),
            });
        };
        let end = read.iter().any(ends_messages);
        items.extend(read);
        if end {
            break;
        }
    }
    Ok(Json::Array(items))
}

/// `value` as `JSON.stringify` sees it (toJSON, dropped functions and
/// undefined, the engine's number formatting), parsed by the core. An
/// array's elements are named from index `offset` on.
fn engine_json(value: &JsValue, name: &'static str, offset: usize) -> Result<Json, InputError> {
    let unreadable = |path: FieldPath, reason: String| InputError::Unreadable { path, reason };
    let text = js_sys::JSON::stringify(value).map_err(|thrown| {
        // An array's error names the element that failed (the first one
        // JSON.stringify refuses alone), as every other error names a message.
        let at = value
            .dyn_ref::<js_sys::Array>()
            .and_then(|a| (0..a.length()).find(|&i| js_sys::JSON::stringify(&a.get(i)).is_err()));
        let path = match at {
            Some(i) => FieldPath::element(name, offset + i as usize),
            None => FieldPath::argument(name),
        };
        let reason = format!("JSON.stringify failed: {}", thrown_message(&thrown));
        unreadable(path, reason)
    })?;
    let unreadable = |reason: String| unreadable(FieldPath::argument(name), reason);
    let text = text
        .as_string()
        .ok_or_else(|| unreadable("JSON.stringify gave undefined".into()))?;
    parse(&text).map_err(|e| unreadable(e.to_string()))
}

/// A fresh session id made at `now`: a UUIDv7 (also the store's default).
pub fn fresh_id(now: f64) -> String {
    uuid_v7(now, random_bytes())
}

/// Ten bytes for a session id (not a secret: `Math.random` is enough).
fn random_bytes() -> [u8; 10] {
    let mut bytes = [0u8; 10];
    for b in &mut bytes {
        *b = (js_sys::Math::random() * 256.0) as u8;
    }
    bytes
}
