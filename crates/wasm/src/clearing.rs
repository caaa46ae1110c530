//! The clearing tier at the boundary (`core::compaction::clearing` decides):
//! reading `toolOutputCleared` markers, the placeholder tool results
//! `convertToLlm` sends for the outputs they list, the divider the user
//! sees, and the marker a threshold compaction inserts.
//!
//! The tier itself (`clear_tier`: the plan and the marker) runs only inside
//! a threshold compaction: the compactor hands it what it measured as a
//! plain object (`tier_input`).

use crate::js::errors::wrong_type;
use crate::js::message_access::{get, message_at, JsArray};
use crate::js::text::JsText;
use crate::js::values::object;
use crate::js::values::shape;
use agent_compaction_core::compaction::clearing::placeholder_text;
use agent_compaction_core::compaction::clearing::{plan_clearing, ToolOutput};
use agent_compaction_core::compaction::clearing::{ClearedOutputs, ClearingSettings};
use agent_compaction_core::compaction::shapes;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::context_index::ContextIndex;
use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

pub(crate) fn id_units(id: &JsString) -> Vec<u16> {
    id.iter().collect()
}

/// A marker's ids (as UTF-16 units) and, when it has them, each output's size.
pub(crate) type MarkerLists = (Vec<Vec<u16>>, Option<Vec<Option<u64>>>);

/// The ids and sizes the marker at `index` lists.
pub(crate) fn read_marker(message: &JsValue, index: usize) -> Result<MarkerLists, InputError> {
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
                return Err(wrong_type(
                    path().field("toolCallIds").at(k as usize),
                    "a string",
                    &id,
                ))
            }
        }
    }
    let tokens = get(message, "outputTokens", || path().field("outputTokens"))?;
    let tokens = if tokens.is_undefined() {
        None
    } else {
        let Some(a) = tokens.dyn_ref::<Array>() else {
            return Err(wrong_type(
                path().field("outputTokens"),
                "an array of non-negative safe integers",
                &tokens,
            ));
        };
        let mut sizes = Vec::with_capacity(a.length() as usize);
        for (k, t) in a.iter().enumerate() {
            match t.as_f64().filter(|x| is_token_count(*x)) {
                Some(x) => sizes.push(Some(x as u64)),
                None => {
                    return Err(wrong_type(
                        path().field("outputTokens").at(k),
                        "a non-negative safe integer",
                        &t,
                    ))
                }
            }
        }
        Some(sizes)
    };
    Ok((out, tokens))
}

/// A marker's token count: a non-negative safe integer.
fn is_token_count(x: f64) -> bool {
    x.fract() == 0.0
        && (0.0..=agent_compaction_core::compaction::settings::MAX_SAFE_INTEGER as f64).contains(&x)
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
    let is_error = get(message, "isError", || path().field("isError"))?.is_truthy();
    let timestamp = get(message, "timestamp", || path().field("timestamp"))?;
    Ok(Some(shape(shapes::cleared_placeholder(
        id.clone().into(),
        name,
        text.into_inner().into(),
        is_error,
        timestamp,
    ))))
}

/// What the user sees of the marker at `index` (`divider: true`).
pub fn divider(message: &JsValue, index: usize) -> Result<JsValue, InputError> {
    let path = || FieldPath::element("messages", index);
    let ids = get(message, "toolCallIds", || path().field("toolCallIds"))?;
    let count = ids.dyn_ref::<Array>().map_or(0, |a| a.length());
    let freed = get(message, "tokensFreed", || path().field("tokensFreed"))?;
    let timestamp = get(message, "timestamp", || path().field("timestamp"))?;
    Ok(shape(shapes::clearing_divider(
        freed,
        count as usize,
        timestamp,
    )))
}

/// What the clearing tier reads of the compactor (its context's facts,
/// the estimates it measured, the settings), as a plain object, since the
/// tier runs in another wasm module: `start` (where the context starts),
/// `roles` (a Uint8Array of role codes from `start`), `tokens` (each
/// message's estimate from `start`), `ratio`, `contextTokens`, `threshold`,
/// and the settings (`protectTokens`, `minFreedTokens`, `protectTurns`,
/// `neverClear`).
pub fn tier_input(
    index: &ContextIndex,
    context_tokens: f64,
    threshold: f64,
    settings: &ClearingSettings,
) -> JsValue {
    let start = index.context_start();
    let facts = &index.facts()[start..];
    let roles: Vec<u8> = facts.iter().map(|f| f.role as u8).collect();
    let tokens: Vec<f64> = facts.iter().map(|f| f64::from(f.tokens)).collect();
    let never: Array = settings
        .never_clear
        .iter()
        .map(|n| JsValue::from(crate::js::strings::to_js_string(n)))
        .collect();
    object(&[
        ("start", (start as f64).into()),
        ("roles", js_sys::Uint8Array::from(roles.as_slice()).into()),
        (
            "tokens",
            js_sys::Float64Array::from(tokens.as_slice()).into(),
        ),
        ("ratio", index.ratio().into()),
        ("contextTokens", context_tokens.into()),
        ("threshold", threshold.into()),
        ("protectTokens", (settings.protect_tokens as f64).into()),
        ("minFreedTokens", (settings.min_freed_tokens as f64).into()),
        ("protectTurns", (settings.protect_turns as f64).into()),
        ("neverClear", never.into()),
    ])
}

/// The clearing tier of a threshold compaction (`array` just synced, every
/// estimate of the context measured, `input` from `tier_input`): the result
/// object `compact` resolves to when clearing alone brings the context to
/// the threshold, else `None` (summarizing follows, and no marker is
/// inserted). An error is the message the compaction fails with; the
/// messages are never touched (the marker goes into a new array).
pub async fn clear_tier(array: &JsArray, input: &JsValue) -> Result<Option<JsValue>, String> {
    let result = clear_tier_js(array.as_array(), input).map_err(|e| thrown(&e))?;
    Ok((!result.is_undefined()).then_some(result))
}

fn thrown(error: &JsValue) -> String {
    crate::js::errors::thrown_message(error)
}

/// `clear_tier`'s work: the result object, or `undefined`.
pub fn clear_tier_js(messages: &JsValue, input: &JsValue) -> Result<JsValue, JsValue> {
    let field =
        |key: &str| js_sys::Reflect::get(input, &JsValue::from_str(key)).unwrap_or_default();
    let number = |key: &str| field(key).as_f64().unwrap_or(0.0);
    let roles: Vec<Role> = js_sys::Uint8Array::from(field("roles"))
        .to_vec()
        .into_iter()
        .map(|code| Role::from_code(code).unwrap_or(Role::Other))
        .collect();
    let tokens: Vec<u64> = js_sys::Float64Array::from(field("tokens"))
        .to_vec()
        .into_iter()
        .map(|t| t as u64)
        .collect();
    let never: Array = field("neverClear").unchecked_into();
    let settings = ClearingSettings {
        enabled: true,
        protect_tokens: number("protectTokens") as u64,
        min_freed_tokens: number("minFreedTokens") as u64,
        protect_turns: number("protectTurns") as u64,
        never_clear: never
            .iter()
            .map(|n| crate::js::strings::to_js_str(n.unchecked_ref()))
            .collect(),
    };
    let fail = |e: InputError| JsValue::from(js_sys::Error::new(&e.to_string()));
    let array =
        JsArray::expect(messages, || FieldPath::argument("messages"), "an array").map_err(fail)?;
    let out = plan_tier(
        &array,
        number("start") as usize,
        &roles,
        &tokens,
        number("ratio"),
        number("contextTokens"),
        number("threshold"),
        &settings,
    )
    .map_err(fail)?;
    Ok(out.unwrap_or(JsValue::UNDEFINED))
}

/// The tier's plan and, when it is enough, its marker and result.
#[allow(clippy::too_many_arguments)]
fn plan_tier(
    array: &JsArray,
    start: usize,
    roles: &[Role],
    tokens: &[u64],
    ratio: f64,
    context_tokens: f64,
    threshold: f64,
    settings: &ClearingSettings,
) -> Result<Option<JsValue>, InputError> {
    // What the markers of the context cleared already (read only when the
    // decision reaches a tool result).
    let mut already: Option<ClearedOutputs<Vec<u16>>> = None;
    let plan = plan_clearing(
        start,
        roles,
        tokens,
        ratio,
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
    let marker = shape(shapes::clearing_marker(
        ids.clone().into(),
        &sizes,
        plan.tokens_freed,
        js_sys::Date::now(),
    ));
    let messages = insert_at(array.as_array(), plan.insert_at as u32, &marker);
    Ok(Some(shape(shapes::clearing_result(
        messages.into(),
        marker,
        &plan,
        ids.into(),
    ))))
}

/// `messages` with `item` inserted at `at` (a new array, the same objects).
pub(crate) fn insert_at(messages: &Array, at: u32, item: &JsValue) -> Array {
    let out = messages.slice(0, at);
    out.push(item);
    out.concat(&messages.slice(at, messages.length()))
}
