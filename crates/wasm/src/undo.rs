//! `removeLastCompaction`: undo, possible because compaction never deletes
//! (a summary, or a clearing's `toolOutputCleared` marker).

use crate::js::errors::input_error;
use crate::js::message_access::{message_at, messages_array, role_at, string_field};
use agent_compaction_core::compaction::clearing::last_undoable_index;
use agent_compaction_core::message::role::Role;
use js_sys::Array;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = withoutIndex, catch)]
    fn without_index(messages: &Array, i: u32) -> Result<Array, JsValue>;
}

#[wasm_bindgen(js_name = removeLastCompaction, skip_typescript)]
pub fn remove_last_compaction(messages: JsValue) -> Result<JsValue, JsValue> {
    let array = messages_array(&messages).map_err(input_error)?;
    match last_undoable_index(array.len() as usize, |i| role_at(&array, i)).map_err(input_error)? {
        Some(i) => {
            if role_at(&array, i).map_err(input_error)? == Role::CompactionSummary {
                string_field(&message_at(&array, i).map_err(input_error)?, i, "summary")
                    .map_err(input_error)?;
            }
            Ok(without_index(array.as_array(), i as u32)?.into())
        }
        None => Ok(messages),
    }
}
