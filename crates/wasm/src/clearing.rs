//! The clearing tier at the boundary (`core::compaction::clearing` decides):
//! reading `toolOutputCleared` markers, the placeholder tool results
//! `convertToLlm` sends for the outputs they list, the divider the user
//! sees, and the marker a threshold compaction inserts.

use crate::js::message_access::{get, message_at, JsArray};
use crate::js::text::JsText;
use crate::js::values::object;
use agent_compaction_core::compaction::clearing::{
    placeholder_text, plan_clearing, ClearedOutputs, ClearingSettings, ToolOutput, DIVIDER_ROLE,
    MARKER_ROLE,
};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::context_index::ContextIndex;
use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(typescript_custom_section)]
const CLEARING_TS: &'static str = r#"
/**
 * Inserted by an automatic (`threshold`) compaction that cleared old tool
 * output instead of summarizing: nothing is deleted. `convertToLlm` sends each
 * tool result before it whose `toolCallId` is listed as a short placeholder
 * tool result (same `toolCallId` and `toolName`):
 * `[Output of read cleared to save context: ~12,400 tokens]`. The marker
 * itself is never sent to the model; `removeLastCompaction` undoes it.
 */
export interface ToolOutputClearedMessage {
  role: "toolOutputCleared";
  /** The cleared tool results, oldest first. */
  toolCallIds: string[];
  /** Each one's estimated tokens, in the order of `toolCallIds` (the placeholder's size). */
  outputTokens?: number[];
  /** What clearing freed: the outputs' estimates less their placeholders'. */
  tokensFreed: number;
  timestamp: number;
}
/** A `toolOutputCleared` marker as `agentMessagesToChatMessages(…, { divider: true })` shows it. */
export interface ToolOutputClearedDivider {
  role: "toolOutputClearedDivider";
  tokensFreed: number;
  /** How many tool outputs were cleared. */
  toolCount: number;
  timestamp: number;
}
"#;

fn id_units(id: &JsString) -> Vec<u16> {
    id.iter().collect()
}

/// A marker's ids (as UTF-16 units) and, when it has them, each output's size.
type MarkerLists = (Vec<Vec<u16>>, Option<Vec<Option<u64>>>);

/// The ids and sizes the marker at `index` lists.
fn read_marker(message: &JsValue, index: usize) -> Result<MarkerLists, InputError> {
    let path = || FieldPath::element("messages", index);
    let ids = get(message, "toolCallIds", || path().field("toolCallIds"))?;
    let ids = JsArray::expect(
        &ids,
        || path().field("toolCallIds"),
        "an array of tool call ids",
    )?;
    let mut out = Vec::with_capacity(ids.len() as usize);
    for k in 0..ids.len() {
        let id = ids.get(k, || path().field("toolCallIds").at(k as usize))?;
        match id.dyn_ref::<JsString>() {
            Some(s) => out.push(id_units(s)),
            None => {
                return Err(InputError::WrongType {
                    path: path().field("toolCallIds").at(k as usize),
                    expected: "a string",
                    got: crate::js::errors::describe(&id),
                })
            }
        }
    }
    let tokens = get(message, "outputTokens", || path().field("outputTokens"))?;
    let tokens = tokens.dyn_ref::<Array>().map(|a| {
        a.iter()
            .map(|t| {
                t.as_f64()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .map(|x| x.round() as u64)
            })
            .collect()
    });
    Ok((out, tokens))
}

/// The outputs the markers of `array` clear; `roles` are its roles.
pub fn cleared_outputs(
    array: &JsArray,
    roles: &[Role],
) -> Result<ClearedOutputs<Vec<u16>>, InputError> {
    let mut cleared = ClearedOutputs::default();
    for (i, role) in roles.iter().enumerate() {
        if *role == Role::ToolOutputCleared {
            let (ids, tokens) = read_marker(&message_at(array, i)?, i)?;
            cleared.add_marker(i, ids, tokens);
        }
    }
    Ok(cleared)
}

/// The placeholder for the tool result at `index` when a later marker
/// clears it, else `None` (sent as it is).
pub fn placeholder_for(
    message: &JsValue,
    index: usize,
    cleared: &ClearedOutputs<Vec<u16>>,
) -> Result<Option<JsValue>, InputError> {
    if cleared.is_empty() {
        return Ok(None);
    }
    let path = || FieldPath::element("messages", index);
    let id = get(message, "toolCallId", || path().field("toolCallId"))?;
    let Some(id) = id.dyn_ref::<JsString>() else {
        return Ok(None);
    };
    let Some(size) = cleared.cleared(&id_units(id), index) else {
        return Ok(None);
    };
    let name = get(message, "toolName", || path().field("toolName"))?;
    let mut text = JsText::default();
    placeholder_text(&mut text, name.dyn_ref::<JsString>(), size);
    let block = object(&[("type", "text".into()), ("text", text.into_inner().into())]);
    Ok(Some(object(&[
        ("role", "toolResult".into()),
        ("toolCallId", id.clone().into()),
        ("toolName", name),
        ("content", Array::of1(&block).into()),
        (
            "isError",
            get(message, "isError", || path().field("isError"))?
                .is_truthy()
                .into(),
        ),
        (
            "timestamp",
            get(message, "timestamp", || path().field("timestamp"))?,
        ),
    ])))
}

/// What the user sees of the marker at `index` (`divider: true`).
pub fn divider(message: &JsValue, index: usize) -> Result<JsValue, InputError> {
    let path = || FieldPath::element("messages", index);
    let ids = get(message, "toolCallIds", || path().field("toolCallIds"))?;
    let count = ids.dyn_ref::<Array>().map_or(0, |a| a.length());
    Ok(object(&[
        ("role", DIVIDER_ROLE.into()),
        (
            "tokensFreed",
            get(message, "tokensFreed", || path().field("tokensFreed"))?,
        ),
        ("toolCount", count.into()),
        (
            "timestamp",
            get(message, "timestamp", || path().field("timestamp"))?,
        ),
    ]))
}

/// The marker a clearing inserts.
pub fn marker(ids: &Array, tokens: &[u64], tokens_freed: u64, timestamp: f64) -> JsValue {
    let sizes: Array = tokens.iter().map(|&t| JsValue::from(t as f64)).collect();
    object(&[
        ("role", MARKER_ROLE.into()),
        ("toolCallIds", ids.clone().into()),
        ("outputTokens", sizes.into()),
        ("tokensFreed", (tokens_freed as f64).into()),
        ("timestamp", timestamp.into()),
    ])
}

/// The clearing tier of a threshold compaction (`array` just synced into
/// `index`, every estimate of the context measured): the result object
/// `compact` resolves to when clearing alone brings the context to the
/// threshold, else `None` (summarizing follows, and no marker is inserted).
pub fn clear_tier(
    array: &JsArray,
    index: &ContextIndex,
    context_tokens: f64,
    threshold: f64,
    settings: &ClearingSettings,
) -> Result<Option<JsValue>, InputError> {
    let start = index.context_start();
    let facts = &index.facts()[start..];
    let roles: Vec<Role> = facts.iter().map(|f| f.role).collect();
    let tokens: Vec<u64> = facts.iter().map(|f| u64::from(f.tokens)).collect();
    // What the markers of the context cleared already (read only when the
    // decision reaches a tool result).
    let mut already: Option<ClearedOutputs<Vec<u16>>> = None;
    let plan = plan_clearing(
        start,
        &roles,
        &tokens,
        index.ratio(),
        context_tokens,
        threshold,
        settings,
        |i| {
            let message = message_at(array, i)?;
            let path = || FieldPath::element("messages", i);
            let id = get(&message, "toolCallId", || path().field("toolCallId"))?;
            let name = get(&message, "toolName", || path().field("toolName"))?;
            let pinned = get(&message, "pinned", || path().field("pinned"))?;
            let already = match &mut already {
                Some(c) => c,
                None => {
                    let mut c = ClearedOutputs::default();
                    for (k, role) in roles.iter().enumerate() {
                        if *role == Role::ToolOutputCleared {
                            let (ids, sizes) =
                                read_marker(&message_at(array, start + k)?, start + k)?;
                            c.add_marker(start + k, ids, sizes);
                        }
                    }
                    already.insert(c)
                }
            };
            let id = id.dyn_into::<JsString>().ok();
            Ok(ToolOutput {
                already_cleared: id
                    .as_ref()
                    .is_some_and(|id| already.cleared(&id_units(id), i).is_some()),
                has_id: id.is_some(),
                tool_name: name.dyn_into::<JsString>().ok(),
                pinned: pinned.as_bool() == Some(true),
            })
        },
        |name| {
            let units = id_units(name);
            settings
                .never_clear
                .iter()
                .any(|n| n.as_units() == units.as_slice())
        },
        |name| name.map_or("a tool".len(), |n| n.length() as usize),
    )?;
    if !plan.enough {
        return Ok(None);
    }
    let ids = Array::new();
    for c in &plan.cleared {
        let message = message_at(array, c.index)?;
        ids.push(&get(&message, "toolCallId", || {
            FieldPath::element("messages", c.index).field("toolCallId")
        })?);
    }
    let sizes: Vec<u64> = plan.cleared.iter().map(|c| c.tokens).collect();
    let marker = marker(&ids, &sizes, plan.tokens_freed, js_sys::Date::now());
    let messages = insert_at(array.as_array(), plan.insert_at as u32, &marker);
    Ok(Some(object(&[
        ("messages", messages.into()),
        ("tier", "clear".into()),
        ("marker", marker),
        ("tokensBefore", plan.tokens_before.into()),
        ("tokensAfter", plan.tokens_after.into()),
        ("tokensFreed", (plan.tokens_freed as f64).into()),
        ("toolCallIds", ids.into()),
        ("markerIndex", (plan.insert_at as f64).into()),
    ])))
}

/// `messages` with `item` inserted at `at` (a new array, the same objects).
pub(crate) fn insert_at(messages: &Array, at: u32, item: &JsValue) -> Array {
    let out = messages.slice(0, at);
    out.push(item);
    out.concat(&messages.slice(at, messages.length()))
}
