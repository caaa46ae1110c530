//! `serializeConversation`: bulk, one-off work, so the messages cross once
//! as JSON text (the engine's `JSON.stringify`, exact) and the result comes
//! back as the exact UTF-16 text.

use super::errors::thrown_message;
use super::js_strings::to_js_string;
use super::message_access::messages_array;
use crate::core::error::{FieldPath, InputError};
use crate::core::json::{self, Json};
use crate::core::serialize::serialize_conversation as core_serialize;
use js_sys::JsString;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const SERIALIZATION_TS: &'static str = r#"
/**
 * pi-compatible: the conversation as text for a summarizer (`[User]:`,
 * `[Assistant thinking]:`, `[Assistant]:`, `[Assistant tool calls]:`,
 * `[Tool result]:` cut to 2000 characters). Give it `convertToLlm` output.
 */
export function serializeConversation(messages: readonly Message[]): string;
"#;

/// `messages` (already known to be an array) as core JSON values.
pub fn messages_json(messages: &JsValue) -> Result<Vec<Json>, InputError> {
    let path = || FieldPath::argument("messages");
    let text = js_sys::JSON::stringify(messages).map_err(|thrown| InputError::Unreadable {
        path: path(),
        reason: thrown_message(&thrown),
    })?;
    let text = String::from(text);
    match json::parse(&text) {
        Ok(Json::Array(items)) => Ok(items),
        Ok(_) => Err(InputError::Unreadable {
            path: path(),
            reason: "JSON.stringify did not give an array".into(),
        }),
        Err(e) => Err(InputError::Unreadable {
            path: path(),
            reason: e.to_string(),
        }),
    }
}

#[wasm_bindgen(js_name = serializeConversation, skip_typescript)]
pub fn serialize_conversation(messages: JsValue) -> Result<JsString, JsValue> {
    messages_array(&messages)?;
    let items = messages_json(&messages)?;
    Ok(to_js_string(&core_serialize(&items)?))
}
