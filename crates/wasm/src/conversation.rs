//! The conversation engine at the boundary (`core::conversation`): the
//! Compactor answers what the model sees of an array — the last summary,
//! the pinned messages re-sent after it, everything after it, cleared tool
//! outputs as their placeholders, failed attempts left out — so that an
//! adapter without pi's agent (the AI SDK's) converts and sends, and keeps
//! no books of its own. The order comes from the Compactor's per-turn index
//! (last summary, pinned messages); this module reads the few facts the
//! core asks of the messages in the view and carries its steps out.

use crate::clearing::{id_units, placeholder_for, read_marker};
use crate::compactor::Compactor;
use crate::js::errors::type_error;
use crate::js::message_access::{get, message_and_role, message_at, JsArray};
use agent_compaction_core::compaction::clearing::ClearedOutputs;
use agent_compaction_core::conversation::view::{is_failed_attempt, model_steps, Fact, Step};
use agent_compaction_core::error::InputError;
use agent_compaction_core::message::role::Role;
use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// What the core's view needs of the message at `index`.
fn fact_of(array: &JsArray, index: usize) -> Result<Fact<Vec<u16>>, InputError> {
    let (message, role) = message_and_role(array, index)?;
    let path = || array.path(index);
    Ok(match role {
        Role::Assistant => {
            let stop = get(&message, "stopReason", || path().field("stopReason"))?;
            match stop.as_string() {
                Some(s) if is_failed_attempt(&s) => Fact::Failed,
                _ => Fact::Message,
            }
        }
        Role::ToolResult => {
            let id = get(&message, "toolCallId", || path().field("toolCallId"))?;
            Fact::ToolResult(id.dyn_ref::<JsString>().map(id_units))
        }
        Role::ToolOutputCleared => Fact::Marker(read_marker(&message, index)?.0),
        _ => Fact::Message,
    })
}

/// The tool result at `result` as the marker at `marker` clears it: the
/// placeholder the Compactor's `convertToLlm` sends.
fn placeholder(array: &JsArray, result: usize, marker: usize) -> Result<JsValue, InputError> {
    let (ids, tokens) = read_marker(&message_at(array, marker)?, marker)?;
    let mut cleared = ClearedOutputs::default();
    cleared.add_marker(result + 1, ids, tokens);
    let message = message_at(array, result)?;
    Ok(placeholder_for(&message, result, &cleared)?.unwrap_or(message))
}

#[wasm_bindgen]
impl Compactor {
    /// The agent messages the model is sent for `messages` (the core's view).
    #[wasm_bindgen(js_name = modelContext)]
    pub fn model_context(&self, messages: JsValue) -> Result<Array, JsValue> {
        let (array, summary, resent) = self.view_facts(&messages)?;
        let mut failure = None;
        let steps = model_steps(array.len() as usize, summary, &resent, |i| {
            fact_of(&array, i).unwrap_or_else(|e| {
                failure.get_or_insert(e);
                Fact::Message
            })
        });
        if let Some(e) = failure {
            return Err(type_error(e));
        }
        let out = Array::new_with_length(steps.len() as u32);
        for (k, step) in steps.into_iter().enumerate() {
            let m = match step {
                Step::Send(i) => message_at(&array, i),
                Step::Placeholder { result, marker } => placeholder(&array, result, marker),
            }
            .map_err(type_error)?;
            out.set(k as u32, m);
        }
        Ok(out)
    }
}
