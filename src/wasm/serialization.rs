//! `serializeConversation`: the core serializer reading the caller's
//! messages directly (src/wasm/js_message_source.rs), so every value is
//! read and converted as pi's own code converts it, and the text is made of
//! the engine's strings.

use super::js_message_source::{JsMessages, TextOps};
use super::message_access::messages_array;
use crate::core::serialize::serialize;
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

#[wasm_bindgen(js_name = serializeConversation, skip_typescript)]
pub fn serialize_conversation(messages: JsValue) -> Result<JsString, JsValue> {
    let messages = messages_array(&messages)?;
    let mut source = JsMessages::gather(&messages)?;
    let mut text = TextOps::default();
    serialize(&mut source, &mut text)?;
    Ok(text.assemble(source.pieces())?)
}
