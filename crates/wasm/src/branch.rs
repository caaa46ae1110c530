//! `compactor.summarizeBranch()`: a `branchSummary` message for messages the
//! conversation leaves behind, the way pi summarizes a branch (newest first
//! within the budget, tool results skipped, file lists carried). The walk
//! and the flow (summarizer or extractive, fallback, abort, error texts)
//! are the core's (`core::compaction::branch`); this reads the options and
//! messages, awaits the calls and builds the message.

use crate::clearing::cleared_outputs;
use crate::compaction::{
    abort_reason, extractive_of, finish_call, link_abort, new_abort_controller, start_call, JsHost,
    Pending,
};
use crate::js::errors::input_error;
use crate::js::message_access::{message_at, messages_array, JsArray};
use crate::js::message_facts::message_facts;
use crate::js::message_source::{assemble, JsMessages};
use crate::js::values::{read_options, shape};
use crate::message::convert_message;
use crate::prepare::{add_summary_files, add_tool_calls, string_array};
use agent_compaction_core::compaction::branch::{
    select_branch, BranchEvent, BranchFailure, BranchFlow, BranchHost, BranchStep,
};
use agent_compaction_core::compaction::file_ops::FileOps;
use agent_compaction_core::compaction::flow::Request;
use agent_compaction_core::compaction::options::branch_options;
use agent_compaction_core::compaction::serialize::serialize;
use agent_compaction_core::compaction::serialize::words::PieceOps;
use agent_compaction_core::compaction::shapes;
use agent_compaction_core::error::InputError;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::estimate::MessageFacts;
use js_sys::{Array, Function, JsString};
use wasm_bindgen::prelude::*;

/// What a branch summary needs from the compactor.
pub struct BranchJob {
    pub summarize: Option<Function>,
    pub fallback_extractive: bool,
    pub timeout_ms: f64,
    pub budget_tokens: u64,
}

/// File lists: earlier branch summaries' details (unless a hook wrote them)
/// and the tool calls of the visited messages.
fn branch_file_ops(
    array: &JsArray,
    facts: &[MessageFacts],
    visited: std::ops::Range<usize>,
) -> Result<FileOps, InputError> {
    let mut ops = FileOps::default();
    for (i, f) in facts.iter().enumerate() {
        if f.role == Role::BranchSummary {
            add_summary_files(&mut ops, array, i)?;
        }
    }
    add_tool_calls(&mut ops, array, visited)?;
    Ok(ops)
}

/// The selected messages (`included`, the caller's indices) as the
/// summarizer is shown them, converted and serialized as `convertToLlm` and
/// `serializeConversation` do; a bad field is an error naming the caller's
/// index, met before any summarizer or extractive summary is started
/// (also what a compaction checks of the messages it summarizes).
pub(crate) fn conversation_of(
    array: &JsArray,
    facts: &[MessageFacts],
    included: &[usize],
) -> Result<JsString, InputError> {
    let roles: Vec<Role> = facts.iter().map(|f| f.role).collect();
    let cleared = cleared_outputs(array, &roles)?;
    let llm = Array::new();
    let mut origin = Vec::with_capacity(included.len());
    for &i in included {
        if let Some(m) = convert_message(&message_at(array, i)?, i, roles[i], &cleared)? {
            llm.push(&m);
            origin.push(i);
        }
    }
    let llm = messages_array(&llm.into())?;
    let mut source = JsMessages::new(&llm);
    let mut text = PieceOps::default();
    let serialized = serialize(&mut source, &mut text);
    source
        .finish()
        .and(serialized)
        .map_err(|e| e.reindexed(|k| origin.get(k).copied().unwrap_or(k)))?;
    assemble(&text, source.pieces())
}

/// What the core's branch flow asks of JavaScript: the selection's
/// serialized text, the one summarizer call started (awaited by the
/// driver) and the abort signal read.
struct Host<'a> {
    conversation: Option<JsString>,
    summarize: Option<&'a Function>,
    timeout_ms: f64,
    controller: &'a JsValue,
    pending: Option<Pending>,
}

impl BranchHost for Host<'_> {
    type Ops = JsHost<'static>;
    type Usage = JsValue;
    type AbortError = JsValue;

    fn conversation(&mut self) -> Result<JsString, String> {
        self.conversation
            .take()
            .ok_or_else(|| "internal error: the conversation was serialized twice".into())
    }

    fn start_call(&mut self, request: Request<JsString>) -> Result<(), String> {
        let pending = start_call(
            self.summarize,
            self.timeout_ms,
            self.controller,
            "manual",
            request,
            None,
            None,
        )?;
        self.pending = Some(pending);
        Ok(())
    }

    fn aborted(&mut self) -> Option<JsValue> {
        abort_reason(self.controller)
    }
}

/// Drives the core's [`BranchFlow`] (`core::compaction::branch`): every
/// branch and error text is the core's.
pub async fn summarize_branch(
    job: BranchJob,
    messages: JsValue,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    let opts = read_options(&options, branch_options).map_err(input_error)?;
    let signal = opts.signal.map(|s| s.0).unwrap_or_default();
    let array = messages_array(&messages).map_err(input_error)?;
    let facts = message_facts(&array, 0, array.len(), false).map_err(input_error)?;
    let selection = select_branch(&facts, job.budget_tokens);
    let mut flow = BranchFlow::new(
        &selection,
        job.summarize.is_some(),
        job.fallback_extractive,
        opts.custom_instructions.clone(),
        opts.replace_instructions,
    )
    .map_err(|nothing| JsValue::from(js_sys::Error::new(&nothing)))?;
    let conversation = conversation_of(&array, &facts, &selection.included).map_err(input_error)?;
    let file_ops =
        branch_file_ops(&array, &facts, selection.visited.clone()).map_err(input_error)?;
    let selected = Array::new();
    for &i in &selection.included {
        selected.push(&message_at(&array, i).map_err(input_error)?);
    }
    let controller = new_abort_controller();
    let unlink = link_abort(&signal, &controller);
    let mut host = Host {
        conversation: Some(conversation),
        summarize: job.summarize.as_ref(),
        timeout_ms: job.timeout_ms,
        controller: &controller,
        pending: None,
    };
    let mut step = flow.step(&mut host, BranchEvent::Start);
    let outcome = loop {
        let event = match step {
            BranchStep::Await => {
                BranchEvent::Answer(finish_call(&controller, host.pending.take()).await)
            }
            BranchStep::Extract { max_chars } => BranchEvent::Extracted(
                extractive_of(
                    &selected,
                    &file_ops,
                    None,
                    opts.custom_instructions.as_ref(),
                    max_chars,
                )
                .await,
            ),
            BranchStep::Done { text, usage } => break Ok((text, usage)),
            BranchStep::Fail(failure) => break Err(failure),
        };
        step = flow.step(&mut host, event);
    };
    let _ = unlink.call0(&JsValue::UNDEFINED);
    let (text, usage) = match outcome {
        Ok(answer) => answer,
        Err(BranchFailure::Aborted(e)) => return Err(e),
        Err(BranchFailure::Error(message)) => return Err(js_sys::Error::new(&message).into()),
    };
    let (read, modified) = file_ops.file_lists();
    Ok(shape(shapes::branch_summary(
        text.into(),
        opts.from_id.map(|id| id.0).filter(|id| !id.is_undefined()),
        js_sys::Date::now(),
        shapes::file_details(string_array(read), string_array(modified)),
        usage,
    )))
}
