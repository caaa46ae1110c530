//! The clearing tier at the boundary (`core::compaction::clearing` decides):
//! reading `toolOutputCleared` markers, the placeholder tool results
//! `convertToLlm` sends for the outputs they list, the divider the user
//! sees, and the marker a threshold compaction inserts.
//!
//! The tier itself (`clear_tier`: the plan and the marker) runs only inside
//! a threshold compaction, on what the compactor's index measured
//! (`core::conversation::tracker::Tracker::clearing_tier`).

use crate::compaction::insert_at;
use crate::js::errors::wrong_type;
use crate::js::message_access::{get, message_at, strings, JsArray};
use crate::js::text::JsText;
use crate::js::values::shape;
use agent_compaction_core::compaction::clearing::placeholder_text;
use agent_compaction_core::compaction::clearing::{ClearedOutputs, ClearingTier, ToolOutput};
use agent_compaction_core::compaction::shapes;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::options::{out_of_range, token_count_of};
use agent_compaction_core::message::role::Role;
use js_sys::{Array, JsString};
use std::cell::RefCell;
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
    let ids = strings(
        &ids,
        || path().field("toolCallIds"),
        "an array of tool call ids",
    )?;
    let tokens = get(message, "outputTokens", || path().field("outputTokens"))?;
    let tokens = if tokens.is_undefined() {
        None
    } else {
        let a = JsArray::expect(
            &tokens,
            || path().field("outputTokens"),
            "an array of non-negative safe integers",
        )?;
        let mut sizes = Vec::with_capacity(a.len() as usize);
        for k in 0..a.len() {
            let at = || path().field("outputTokens").at(k as usize);
            sizes.push(Some(count_of(&a.get(k, at)?, at())?));
        }
        Some(sizes)
    };
    Ok((ids.iter().map(id_units).collect(), tokens))
}

/// `value` as a token count (a non-negative safe integer) at `path`.
fn count_of(value: &JsValue, path: FieldPath) -> Result<u64, InputError> {
    const EXPECTED: &str = "a non-negative safe integer";
    match value.as_f64() {
        Some(x) => token_count_of(x).ok_or_else(|| out_of_range(path, EXPECTED, x)),
        None => Err(wrong_type(path, EXPECTED, value)),
    }
}

/// The outputs the markers of `array` clear; `roles` are its roles.
pub fn cleared_outputs(
    array: &JsArray,
    roles: &[Role],
) -> Result<ClearedOutputs<Vec<u16>>, InputError> {
    markers(array, 0, roles.iter().copied().enumerate())
}

/// The outputs the markers among `roles` (of the messages from `start` on,
/// each with its offset from `start`) clear.
fn markers(
    array: &JsArray,
    start: usize,
    roles: impl Iterator<Item = (usize, Role)>,
) -> Result<ClearedOutputs<Vec<u16>>, InputError> {
    let mut cleared = ClearedOutputs::default();
    for (k, role) in roles {
        if role == Role::ToolOutputCleared {
            let (ids, tokens) = read_marker(&message_at(array, start + k)?, start + k)?;
            cleared.add_marker(start + k, ids, tokens);
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

/// What the user sees of the marker at `index` (`divider: true`): its
/// fields checked as every reader of the marker checks them.
pub fn divider(message: &JsValue, index: usize) -> Result<JsValue, InputError> {
    let path = || FieldPath::element("messages", index);
    let freed = get(message, "tokensFreed", || path().field("tokensFreed"))?;
    count_of(&freed, path().field("tokensFreed"))?;
    let (ids, _) = read_marker(message, index)?;
    let timestamp = get(message, "timestamp", || path().field("timestamp"))?;
    Ok(shape(shapes::clearing_divider(freed, ids.len(), timestamp)))
}

/// The clearing tier of a threshold compaction (`array` just synced,
/// `tier` copied out of the compactor's index): the result object
/// `compact` resolves to when clearing alone brings the context to the
/// threshold, else `None` (summarizing follows, and no marker is
/// inserted). The messages are never touched (the marker goes into a new
/// array).
pub fn clear_tier(array: &JsArray, tier: &ClearingTier) -> Result<Option<JsValue>, InputError> {
    // What the markers of the context cleared already (read only when the
    // decision reaches a tool result).
    let already: RefCell<Option<ClearedOutputs<Vec<u16>>>> = RefCell::new(None);
    let context = tier.roles.iter().copied().enumerate();
    let already_cleared = |i: usize, id: &JsString| -> Result<bool, InputError> {
        let mut already = already.borrow_mut();
        let already = match &mut *already {
            Some(c) => c,
            None => already.insert(markers(array, tier.start, context.clone())?),
        };
        Ok(already.cleared(&id_units(id), i).is_some())
    };
    let id_at = |i: usize| -> Result<(JsValue, Option<JsString>), InputError> {
        let message = message_at(array, i)?;
        let id = get(&message, "toolCallId", || {
            FieldPath::element("messages", i).field("toolCallId")
        })?;
        let id = id.dyn_into::<JsString>().ok();
        Ok((message, id))
    };
    let plan = tier.plan(
        |i| {
            let (message, id) = id_at(i)?;
            let path = || FieldPath::element("messages", i);
            let name = get(&message, "toolName", || path().field("toolName"))?;
            let pinned = get(&message, "pinned", || path().field("pinned"))?;
            Ok(ToolOutput {
                already_cleared: match &id {
                    Some(id) => already_cleared(i, id)?,
                    None => false,
                },
                has_id: id.is_some(),
                tool_name: name.dyn_into::<JsString>().ok(),
                pinned: pinned.as_bool() == Some(true),
            })
        },
        |i| {
            let (_, id) = id_at(i)?;
            Ok(match id {
                Some(id) if !already_cleared(i, &id)? => Some(id_units(&id)),
                _ => None,
            })
        },
        id_units,
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
