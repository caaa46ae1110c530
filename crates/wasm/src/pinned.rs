//! What must survive a compaction, at the boundary: the model's view with
//! the pinned messages re-sent after the last summary (the same objects),
//! the pinned messages of an array the stateless `transformContext` finds
//! (the Compactor knows them from its index), and the text of the latest
//! request a summary quotes. The rules are the core's
//! (`core::message::pinned`, `core::compaction::last_request`).

use crate::js::errors::{messages_unreadable, unreadable, wrong_type};
use crate::js::message_access::{get, message_at, role_at, JsArray};
use agent_compaction_core::error::InputError;
use agent_compaction_core::message::pinned::is_pinned;
use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = pinnedIndices, catch)]
    fn pinned_indices_js(messages: &Array, end: u32) -> Result<Vec<u32>, JsValue>;
    #[wasm_bindgen(js_name = requestText, catch)]
    fn request_text_js(message: &JsValue) -> Result<JsString, JsValue>;
}

/// The model's view from the last summary at `summary` on: the summary,
/// the messages at `resent` (ascending, before it), then every message
/// after it; a plain slice when nothing is re-sent.
pub fn view(array: &JsArray, summary: usize, resent: &[usize]) -> Result<Array, InputError> {
    if resent.is_empty() {
        return array.slice(summary as u32, array.len());
    }
    let head = Array::new();
    head.push(&message_at(array, summary)?);
    for &i in resent {
        head.push(&message_at(array, i)?);
    }
    Ok(head.concat(&array.slice(summary as u32 + 1, array.len())?))
}

/// The pinned messages of `array[..end]`, ascending (one pass; for the
/// stateless `transformContext`).
pub fn pinned_before(array: &JsArray, end: usize) -> Result<Vec<usize>, InputError> {
    let flagged = pinned_indices_js(array.as_array(), end as u32).map_err(messages_unreadable)?;
    if let [u32::MAX, i] = flagged[..] {
        let i = i as usize;
        let path = || array.path(i).field("pinned");
        let value = get(&message_at(array, i)?, "pinned", path)?;
        return Err(wrong_type(path(), "a boolean", &value));
    }
    let mut out = Vec::with_capacity(flagged.len());
    for i in flagged {
        let i = i as usize;
        if is_pinned(role_at(array, i)?, true) {
            out.push(i);
        }
    }
    Ok(out)
}

/// The text of the user message at `index` as a summary quotes it (its
/// text parts; images left out).
pub fn request_text(array: &JsArray, index: usize) -> Result<JsString, InputError> {
    request_text_js(&message_at(array, index)?)
        .map_err(|thrown| unreadable(array.path(index).field("content"), &thrown))
}
