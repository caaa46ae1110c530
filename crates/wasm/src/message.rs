//! The flat-array functions: `transformContext` (what the model sees),
//! `convertToLlm` (how it sees it) and `agentMessagesToChatMessages` (what
//! the user sees). Unchanged messages come back as the same objects; the
//! caller's array and messages are never mutated.

use crate::clearing::{cleared_outputs, placeholder_for};
use crate::js::errors::input_error;
use crate::js::errors::wrong_type;
use crate::js::message_access::{
    compaction_divider, get, message_at, messages_array, optional_string_field, role_at, roles,
    string_field, text_user_message, truthy_field, user_message, JsArray, SummaryAt,
};
use crate::js::text::JsText;
use crate::js::values::read_options;
use agent_compaction_core::compaction::clearing::ClearedOutputs;
use agent_compaction_core::compaction::options::divider_option;
use agent_compaction_core::conversation::view::Fact;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::message::context::last_compaction_index;
use agent_compaction_core::message::display::{display_action, DisplayAction};
use agent_compaction_core::message::file_lists;
use agent_compaction_core::message::llm::{
    bash_execution_text, failed_exit_code, llm_action, non_empty, summary_text, BashExecution,
    ExitCode, LlmAction, SummaryKind,
};
use agent_compaction_core::message::role::Role;
use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A summary's `summary` must be a string wherever a summary is met.
fn check_summary(message: &JsValue, index: usize) -> Result<JsString, InputError> {
    string_field(message, index, "summary")
}

#[wasm_bindgen(js_name = transformContext, skip_typescript)]
pub fn transform_context(messages: JsValue) -> Result<JsValue, JsValue> {
    let array = messages_array(&messages).map_err(input_error)?;
    let len = array.len();
    match last_compaction_index(len as usize, |i| role_at(&array, i)).map_err(input_error)? {
        Some(start) => {
            check_summary(&message_at(&array, start).map_err(input_error)?, start)
                .map_err(input_error)?;
            let resent = crate::pinned::pinned_before(&array, start).map_err(input_error)?;
            Ok(crate::pinned::view(&array, start, &resent)
                .map_err(input_error)?
                .into())
        }
        None => Ok(messages),
    }
}

#[wasm_bindgen(js_name = convertToLlm, skip_typescript)]
pub fn convert_to_llm(messages: JsValue) -> Result<Array, JsValue> {
    convert_counting(messages, false, |_, _| {})
}

/// [`convert_to_llm`], telling `seen(i, outputs)` before message `i` is
/// converted how many outputs the messages before it gave; with `sent`,
/// what a request is sent of the messages (the core's model view): failed
/// attempts left out, where pi's `convertToLlm` keeps them for pi-ai's
/// providers to skip.
pub fn convert_counting(
    messages: JsValue,
    sent: bool,
    mut seen: impl FnMut(usize, u32),
) -> Result<Array, JsValue> {
    let array = messages_array(&messages).map_err(input_error)?;
    let out = Array::new();
    let roles = roles(&array).map_err(input_error)?;
    let cleared = cleared_outputs(&array, &roles).map_err(input_error)?;
    for (i, role) in roles.into_iter().enumerate() {
        seen(i, out.length());
        if sent
            && role == Role::Assistant
            && matches!(
                crate::conversation::fact_of(&array, i).map_err(input_error)?,
                Fact::Failed
            )
        {
            continue;
        }
        if let Some(converted) = convert_message(
            &message_at(&array, i).map_err(input_error)?,
            i,
            role,
            &cleared,
        )
        .map_err(input_error)?
        {
            out.push(&converted);
        }
    }
    Ok(out)
}

/// What `convertToLlm` makes of one message: the same object, a new user
/// message, a placeholder for a cleared tool output, or nothing.
pub fn convert_message(
    message: &JsValue,
    i: usize,
    role: Role,
    cleared: &ClearedOutputs<Vec<u16>>,
) -> Result<Option<JsValue>, InputError> {
    if role == Role::ToolResult {
        if let Some(placeholder) = placeholder_for(message, i, cleared)? {
            return Ok(Some(placeholder));
        }
    }
    let action = llm_action(role, || truthy_field(message, i, "excludeFromContext"))?;
    Ok(Some(match action {
        LlmAction::Keep => message.clone(),
        LlmAction::Drop => return Ok(None),
        LlmAction::Summary(kind) => summary_for_model(message, i, kind)?,
        LlmAction::BashExecution => bash_for_model(message, i)?,
        LlmAction::Custom => custom_for_model(message, i)?,
    }))
}

fn timestamp(message: &JsValue, index: usize) -> Result<JsValue, InputError> {
    get(message, "timestamp", || {
        FieldPath::element("messages", index).field("timestamp")
    })
}

fn summary_for_model(
    message: &JsValue,
    index: usize,
    kind: SummaryKind,
) -> Result<JsValue, InputError> {
    let summary = check_summary(message, index)?;
    let files = file_lists::shown(&SummaryAt { message, index })?;
    let read: Vec<&JsString> = files.read.iter().collect();
    let modified: Vec<&JsString> = files.modified.iter().collect();
    let mut text = JsText::default();
    summary_text(&mut text, kind, &summary, &read, &modified);
    Ok(text_user_message(
        &text.into_inner(),
        &timestamp(message, index)?,
    ))
}

fn bash_for_model(message: &JsValue, index: usize) -> Result<JsValue, InputError> {
    let command = string_field(message, index, "command")?;
    let read = |key| move || optional_string_field(message, index, key);
    let output = non_empty(true, read("output"), |o| o.length() == 0)?;
    let cancelled = truthy_field(message, index, "cancelled")?;
    let exit_path = || FieldPath::element("messages", index).field("exitCode");
    let exit_code = get(message, "exitCode", exit_path)?;
    let code = match exit_code.as_f64() {
        _ if exit_code.is_undefined() || exit_code.is_null() => ExitCode::Nullish,
        Some(x) => ExitCode::Number(x),
        None => ExitCode::Other,
    };
    let failed_exit_code =
        failed_exit_code(code).map_err(|expected| wrong_type(exit_path(), expected, &exit_code))?;
    let truncated = truthy_field(message, index, "truncated")?;
    let truncated_to = non_empty(truncated, read("fullOutputPath"), |p| p.length() == 0)?;
    let mut text = JsText::default();
    bash_execution_text(
        &mut text,
        &BashExecution {
            command: &command,
            output: output.as_ref(),
            cancelled,
            failed_exit_code: failed_exit_code.as_deref(),
            truncated_to: truncated_to.as_ref(),
        },
    );
    Ok(text_user_message(
        &text.into_inner(),
        &timestamp(message, index)?,
    ))
}

fn custom_for_model(message: &JsValue, index: usize) -> Result<JsValue, InputError> {
    let path = || FieldPath::element("messages", index).field("content");
    let content = get(message, "content", path)?;
    let timestamp = timestamp(message, index)?;
    if let Some(text) = content.dyn_ref::<JsString>() {
        return Ok(text_user_message(text, &timestamp));
    }
    JsArray::expect(&content, path, "a string or an array of content blocks")?;
    Ok(user_message(&content, &timestamp))
}

#[wasm_bindgen(js_name = agentMessagesToChatMessages, skip_typescript)]
pub fn agent_messages_to_chat_messages(
    messages: JsValue,
    options: JsValue,
) -> Result<Array, JsValue> {
    let array = messages_array(&messages).map_err(input_error)?;
    let divider = read_options(&options, divider_option).map_err(input_error)?;
    let out = Array::new();
    for (i, role) in roles(&array).map_err(input_error)?.into_iter().enumerate() {
        let message = message_at(&array, i).map_err(input_error)?;
        if role == Role::CompactionSummary {
            check_summary(&message, i).map_err(input_error)?;
        }
        match display_action(role, divider, || truthy_field(&message, i, "display"))
            .map_err(input_error)?
        {
            DisplayAction::Show => {
                out.push(&message);
            }
            DisplayAction::Hide => {}
            DisplayAction::ClearedDivider => {
                out.push(&crate::clearing::divider(&message, i).map_err(input_error)?);
            }
            DisplayAction::Divider => {
                let tokens_before = get(&message, "tokensBefore", || {
                    FieldPath::element("messages", i).field("tokensBefore")
                })
                .map_err(input_error)?;
                out.push(&compaction_divider(
                    &tokens_before,
                    &timestamp(&message, i).map_err(input_error)?,
                ));
            }
        }
    }
    Ok(out)
}
