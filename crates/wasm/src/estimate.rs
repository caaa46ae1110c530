//! pi-compatible token accounting and overflow detection: `estimateTokens`,
//! `estimateContextTokens`, `calculateContextTokens`, `shouldCompact`,
//! `isContextOverflow`.

use crate::js::errors::input_error;
use crate::js::errors::wrong_type;
use crate::js::message_access::{get, messages_array, JsArray};
use crate::js::message_facts::{gather, message_facts};
use crate::js::values::{
    expect_object, number, number_or_nan, optional_number, read_fields, shape, usage_number,
};
use agent_compaction_core::compaction::shapes;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::tokens::context_tokens::{
    estimate_from_end, read_back, should_compact_settings, ContextTokens, Stale,
};
use agent_compaction_core::tokens::estimate::{
    calculate_context_tokens as core_calculate, estimate_tokens as core_estimate, MessageFacts,
    UsageNumbers,
};
use agent_compaction_core::tokens::overflow::{
    is_context_overflow as core_overflow, reads_usage, AssistantOutcome, StopReason,
};
use wasm_bindgen::prelude::*;

type Path<'a> = dyn Fn() -> FieldPath + 'a;

#[wasm_bindgen(js_name = estimateTokens, skip_typescript)]
pub fn estimate_tokens(message: JsValue) -> Result<f64, JsValue> {
    let single = JsArray::single(&message);
    let facts = gather(&single, 0, 1).map_err(input_error)?;
    Ok(facts.first().map_or(0, core_estimate) as f64)
}

pub fn context_tokens_object(c: &ContextTokens) -> JsValue {
    shape(shapes::context_tokens(c))
}

/// Facts of `messages` from the newest back, gathered in growing chunks, so
/// that a walk that stops early reads only the messages it needs.
pub fn facts_from_end(
    messages: &JsArray,
) -> impl Iterator<Item = Result<(usize, MessageFacts), InputError>> + '_ {
    read_back(messages.len() as usize, 0, 16, usize::MAX, |from, to| {
        message_facts(messages, from as u32, to as u32, false)
    })
}

#[wasm_bindgen(js_name = estimateContextTokens, skip_typescript)]
pub fn estimate_context_tokens(messages: JsValue) -> Result<JsValue, JsValue> {
    let array = messages_array(&messages).map_err(input_error)?;
    let c = estimate_from_end(facts_from_end(&array), Stale::Nothing).map_err(input_error)?;
    Ok(context_tokens_object(&c))
}

/// Read through `dyn` (one copy for both callers: size at import). The
/// borrowed `&path` makes a smaller module than `path` (28 bytes gzipped).
#[allow(clippy::needless_borrows_for_generic_args)]
fn usage_numbers(usage: &JsValue, path: &Path) -> Result<UsageNumbers, InputError> {
    expect_object(usage, path)?;
    Ok(UsageNumbers {
        input: usage_number(usage, "input", &path)?,
        output: usage_number(usage, "output", &path)?,
        cache_read: usage_number(usage, "cacheRead", &path)?,
        cache_write: usage_number(usage, "cacheWrite", &path)?,
        total_tokens: usage_number(usage, "totalTokens", &path)?,
    })
}

#[wasm_bindgen(js_name = calculateContextTokens, skip_typescript)]
pub fn calculate_context_tokens(usage: JsValue) -> Result<f64, JsValue> {
    Ok(core_calculate(
        &usage_numbers(&usage, &|| FieldPath::argument("usage")).map_err(input_error)?,
    ))
}

#[wasm_bindgen(js_name = shouldCompact, skip_typescript)]
pub fn should_compact(
    context_tokens: JsValue,
    context_window: JsValue,
    settings: JsValue,
) -> Result<bool, JsValue> {
    let tokens =
        number(&context_tokens, || FieldPath::argument("contextTokens")).map_err(input_error)?;
    let window =
        number(&context_window, || FieldPath::argument("contextWindow")).map_err(input_error)?;
    let (enabled, reserve) =
        read_fields("settings", &settings, should_compact_settings).map_err(input_error)?;
    Ok(
        agent_compaction_core::tokens::context_tokens::should_compact(
            tokens, window, enabled, reserve,
        ),
    )
}

#[wasm_bindgen(js_name = isContextOverflow, skip_typescript)]
pub fn is_context_overflow(message: JsValue, context_window: JsValue) -> Result<bool, JsValue> {
    let path = || FieldPath::argument("message");
    expect_object(&message, path).map_err(input_error)?;
    let window = optional_number(&context_window, || FieldPath::argument("contextWindow"))
        .map_err(input_error)?;
    let stop = get(&message, "stopReason", || path().field("stopReason")).map_err(input_error)?;
    let stop_reason = stop
        .as_string()
        .map_or(StopReason::Other, |s| StopReason::from_name(&s));
    let error_message =
        get(&message, "errorMessage", || path().field("errorMessage")).map_err(input_error)?;
    let error_units: Option<Vec<u16>> = match error_message.is_string() {
        true => Some(crate::js::strings::to_js_str(error_message.unchecked_ref()).into_units()),
        false if error_message.is_truthy() => {
            return Err(input_error(wrong_type(
                path().field("errorMessage"),
                "a string or undefined",
                &error_message,
            )))
        }
        false => None,
    };
    // pi reads usage only for the usage-based checks; so do we.
    let (input, cache_read, output) = if reads_usage(stop_reason, window) {
        let usage = get(&message, "usage", || path().field("usage")).map_err(input_error)?;
        let u = usage_numbers(&usage, &|| path().field("usage")).map_err(input_error)?;
        // pi tests `usage.output === 0`: a `null` output is not zero there.
        let output =
            number_or_nan(&usage, "output", || path().field("usage")).map_err(input_error)?;
        (u.input, u.cache_read, output)
    } else {
        (f64::NAN, f64::NAN, f64::NAN)
    };
    Ok(core_overflow(
        &AssistantOutcome {
            stop_reason,
            error_message: error_units.as_deref(),
            input,
            cache_read,
            output,
        },
        window,
    ))
}
