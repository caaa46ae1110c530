//! `serializeConversation`: the core serializer reading the caller's
//! messages directly (crates/wasm/src/js/message_source.rs), so every value is
//! read and converted as pi's own code converts it, and the text is made of
//! the engine's strings.

use crate::js::errors::input_error;
use crate::js::message_access::messages_array;
use crate::js::message_source::{assemble, JsMessages};
use agent_compaction_core::compaction::serialize::serialize;
use agent_compaction_core::compaction::serialize::words::PieceOps;
use js_sys::JsString;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(js_name = serializeConversation, skip_typescript)]
pub fn serialize_conversation(messages: JsValue) -> Result<JsString, JsValue> {
    let messages = messages_array(&messages).map_err(input_error)?;
    let mut source = JsMessages::new(&messages);
    let mut text = PieceOps::default();
    let serialized = serialize(&mut source, &mut text);
    source.finish().and(serialized).map_err(input_error)?;
    assemble(&text, source.pieces()).map_err(input_error)
}
