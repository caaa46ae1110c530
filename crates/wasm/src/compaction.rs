//! `compactor.compact()`: drives the core's [`CompactionFlow`] — asks the
//! `beforeCompact` hook, calls the app's summarizer and awaits it under the
//! deadline and the abort signal, builds the extractive summary, inserts
//! one `compactionSummary`. Every branch and error text is the core's
//! (`core::compaction::flow`); this module converts values and awaits
//! JavaScript, and never holds a borrow of the compactor across an await.

use crate::js::errors::{describe, thrown_message};
use crate::js::message_access::{get, JsArray};
use crate::js::message_facts::EstimateChunks;
use crate::js::text::JsText;
use crate::js::values::{prop, shape, JsJson};
use crate::message::{convert_counting, convert_to_llm};
use crate::prepare::{string_array, Prepared};
use crate::serialize::serialize_conversation;
use agent_compaction_core::compaction::flow::{
    boundary_of, keeps_provider_part, Answer, CompactionFlow, Event, Failure, FlowConfig, FlowHost,
    FlowInput, HookAnswer, Insert, PrefixInput, Reason, Request, Step, SummaryField, TextOps,
    UsageTotals, NO_CALL,
};
use agent_compaction_core::compaction::last_request::Survivors;
use agent_compaction_core::compaction::options::{Conversation, EstimatorChoice};
use agent_compaction_core::compaction::prompts::Boundary;
use agent_compaction_core::compaction::prompts::SummaryKind;
use agent_compaction_core::compaction::providers::usage_totals;
use agent_compaction_core::compaction::settings::CompactionSettings;
use agent_compaction_core::compaction::shapes;
use agent_compaction_core::error::FieldPath;
use agent_compaction_core::js::shape::{Field, Shape};
use agent_compaction_core::js::string::JsStr;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::estimate::MessageFacts;
use js_sys::{Array, Function, JsString, Promise};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = settleWithin)]
    fn settle_within(value: &JsValue, ms: f64, controller: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = linkAbort)]
    pub fn link_abort(signal: &JsValue, controller: &JsValue) -> Function;
    #[wasm_bindgen(js_name = isTimeout)]
    fn is_timeout(error: &JsValue) -> bool;
    #[wasm_bindgen(js_name = isAbortError)]
    fn is_abort_error(error: &JsValue) -> bool;
    #[wasm_bindgen(js_name = newAbortController)]
    pub fn new_abort_controller() -> JsValue;
    /// `messages` with `item` inserted at `at` (a new array, the same objects).
    #[wasm_bindgen(js_name = insertAt)]
    pub fn insert_at(messages: &Array, at: u32, item: &JsValue) -> Array;
    #[wasm_bindgen(js_name = extractFacts, catch)]
    fn extract_facts(messages: &Array) -> Result<JsString, JsValue>;
}

/// Everything one compaction needs, copied out of the compactor before the
/// first await.
pub struct Job {
    pub reason: Reason,
    pub custom_instructions: Option<JsString>,
    pub will_retry: bool,
    pub summarize: Option<Function>,
    pub fallback_extractive: bool,
    pub before_compact: Option<Function>,
    pub summarizer_window: Option<u64>,
    pub timeout_ms: f64,
    pub settings: CompactionSettings,
    pub controller: JsValue,
    pub messages: JsArray,
    pub facts: Vec<MessageFacts>,
    /// What the kept outputs a kept clearing marker clears are sent below
    /// their estimates.
    pub kept_cleared: u64,
    /// What the summary is sent with besides its text, in tokens.
    pub summary_note: u64,
    /// The compactor's estimator, and the ratio its estimates are scaled by.
    pub estimator: EstimatorChoice,
    pub ratio: f64,
    /// What the summarizer last rejected with: the cause of the error a
    /// failed compaction rejects with.
    pub rejected: RefCell<Option<JsValue>>,
    pub prepared: Prepared,
    /// The latest request to quote, the pinned messages re-sent.
    pub survivors: Survivors<JsString>,
    /// The requests' prefix form, when it applies.
    pub prefix: Option<PrefixJob>,
    /// For a summarizer asked once (`oneRequest`), the request's `covered`:
    /// the previous summary and the messages the summary hides.
    pub covered: Option<JsValue>,
}

/// Summary requests in the prefix form: where they stop, and the
/// conversation they repeat (the request's `context`).
pub struct PrefixJob {
    input: PrefixInput<JsString>,
    context: JsValue,
}

/// The prefix form of a compaction whose history stops at `ends.0` and,
/// for a split turn, whose turn prefix stops at `ends.1` (positions in
/// `view`, the model's view of the messages), with `room` tokens for each
/// summary; `None` when a boundary names no message (the requests are
/// serialized only then).
pub fn prefix_job(
    view: &Array,
    (history_end, turn_end): (usize, Option<usize>),
    room: u64,
    conversation: Conversation<crate::js::values::Opt>,
) -> Option<PrefixJob> {
    // The view converted once, with where each of its messages lands.
    let mut landed = Vec::with_capacity(view.length() as usize);
    let llm =
        convert_counting(view.clone().into(), true, |_, outputs| landed.push(outputs)).ok()?;
    let at = |k: usize| boundary_at(&llm, *landed.get(k)?);
    let input = PrefixInput {
        history_end: at(history_end)?,
        turn_end: match turn_end {
            Some(k) => Some(at(k)?),
            None => None,
        },
        room,
    };
    let context = shape(shapes::summary_context(
        conversation.system_prompt.map(|v| v.0),
        llm.into(),
        conversation.tools.map(|v| v.0),
    ));
    Some(PrefixJob { input, context })
}

/// The boundary that names `llm[i]`.
fn boundary_at(llm: &Array, i: u32) -> Option<Boundary<JsString>> {
    let role_of = |m: &JsValue| Role::from_name(&prop(m, "role").as_string().unwrap_or_default());
    let message = llm.get(i);
    let users_before = (0..i)
        .filter(|&k| role_of(&llm.get(k)) == Role::User)
        .count();
    let content = prop(&message, "content");
    let mut text = content.dyn_ref::<JsString>().cloned();
    let mut call = None;
    for block in content
        .dyn_ref::<Array>()
        .map(Array::iter)
        .into_iter()
        .flatten()
    {
        match prop(&block, "type").as_string().as_deref() {
            Some("text") if text.is_none() => text = prop(&block, "text").dyn_into().ok(),
            Some("toolCall") if call.is_none() => {
                let string = |key| prop(&block, key).dyn_into::<JsString>().ok();
                call = string("name").zip(string("id"));
            }
            _ => {}
        }
    }
    boundary_of::<JsHost<'static>>(role_of(&message), text, call, users_before)
}

/// How a compaction ended without a result: the core's failure, with what
/// an abort rejects with.
pub type JsFailure = Failure<JsValue>;

pub fn signal_of(controller: &JsValue) -> JsValue {
    prop(controller, "signal")
}

pub fn aborted(controller: &JsValue) -> bool {
    prop(&signal_of(controller), "aborted").is_truthy()
}

/// A summarizer call under way: the promise already runs.
pub struct Pending {
    promise: Promise,
    timeout_ms: f64,
}

/// One request to `summarize`, under `controller` and `timeout_ms`.
pub fn start_call(
    summarize: Option<&Function>,
    timeout_ms: f64,
    controller: &JsValue,
    reason: &'static str,
    request: Request<JsString>,
    context: Option<JsValue>,
    covered: Option<JsValue>,
) -> Result<Pending, String> {
    let request = shape(shapes::summarizer_request(
        request,
        signal_of(controller),
        reason,
        context,
        covered,
    ));
    let returned = summarize
        .ok_or("no summarizer")?
        .call1(&JsValue::UNDEFINED, &request)
        .map_err(|e| thrown_message(&e))?;
    Ok(Pending {
        promise: settle_within(&returned, timeout_ms, controller),
        timeout_ms,
    })
}

/// Waits for the call under way and says what it ended with.
pub async fn finish_call(
    controller: &JsValue,
    pending: Option<Pending>,
) -> Answer<JsString, JsValue, JsValue> {
    finish_call_with_part(controller, pending).await.0
}

/// What a call the summarizer rejected rejected with (`None`: it answered).
pub type Rejection = Option<JsValue>;

/// [`finish_call`], and the `provider` object the answer carried (a
/// provider's compaction block, `anthropicCompaction`).
pub async fn finish_call_with_part(
    controller: &JsValue,
    pending: Option<Pending>,
) -> (
    Answer<JsString, JsValue, JsValue>,
    Option<JsValue>,
    Rejection,
) {
    let Some(pending) = pending else {
        return (Answer::Failed(NO_CALL.into()), None, None);
    };
    let value = match JsFuture::from(pending.promise).await {
        Ok(v) => v,
        Err(e) => {
            let timed_out = is_timeout(&e).then_some(pending.timeout_ms);
            let aborted = aborted(controller) || is_abort_error(&e);
            return (
                Answer::of_rejection(timed_out, aborted, e.clone(), thrown_message),
                None,
                Some(e),
            );
        }
    };
    // A late answer after an abort is not used.
    if aborted(controller) {
        return (
            Answer::Aborted(js_sys::Error::new("aborted").into()),
            None,
            None,
        );
    }
    let part = (value.is_object())
        .then(|| prop(&value, "provider"))
        .filter(JsValue::is_object);
    let path = || FieldPath::argument("summary");
    let read = |key| get(&value, key, || path().field(key)).map_err(|e| e.to_string());
    let answer = Answer::of_value(
        value.dyn_ref::<JsString>().cloned(),
        value.is_object(),
        || describe(&value),
        || {
            let text = read("text")?.dyn_into::<JsString>();
            let usage = Some(read("usage")?).filter(JsValue::is_object);
            Ok((text.map_err(|other| describe(&other)), usage))
        },
    );
    (answer, part, None)
}

/// The reason the controller was aborted with, unless it is a deadline
/// that passed (that also aborts the controller, to cancel the app's fetch,
/// but it is a failure, not a cancellation).
///
/// Checked before the work starts and before anything is inserted, so an
/// abort at any moment (even from a `compaction_start` handler, or a signal
/// aborted before the call) changes nothing.
pub fn abort_reason(controller: &JsValue) -> Option<JsValue> {
    if !aborted(controller) {
        return None;
    }
    let reason = prop(&signal_of(controller), "reason");
    if is_timeout(&reason) {
        return None;
    }
    Some(if reason.is_undefined() {
        js_sys::Error::new("aborted").into()
    } else {
        reason
    })
}

/// [`abort_reason`] as a failure.
pub fn check_not_aborted(controller: &JsValue) -> Result<(), JsFailure> {
    match abort_reason(controller) {
        None => Ok(()),
        Some(reason) => Err(Failure::Aborted(reason)),
    }
}

/// The engine's strings, as the core's flow composes and measures them.
impl TextOps for JsHost<'_> {
    type Text = JsString;
    type Sink = JsText;
    fn borrow(text: &JsString) -> &JsString {
        text
    }
    fn finish(sink: JsText) -> JsString {
        sink.into_inner()
    }
    fn len(text: &JsString) -> usize {
        text.length() as usize
    }
    fn is_blank(text: &JsString) -> bool {
        text.trim().length() == 0
    }
    fn prefix(text: &JsString, units: usize) -> JsString {
        text.slice(0, units as u32)
    }
    fn find(text: &JsString, needle: &str) -> Option<usize> {
        usize::try_from(text.index_of(needle, 0)).ok()
    }
}

/// What the flow asks of JavaScript for one job: the calls under way (at
/// most one of each kind) live here until awaited.
pub struct JsHost<'a> {
    job: &'a Job,
    history: Option<Pending>,
    turn_prefix: Option<Pending>,
}

fn serialized(messages: &Array) -> Result<Array, String> {
    convert_to_llm(messages.clone().into()).map_err(|e| thrown_message(&e))
}

impl FlowHost for JsHost<'_> {
    type Usage = JsValue;
    type Details = JsValue;
    type AbortError = JsValue;

    fn usage_totals(&self, usage: &JsValue) -> UsageTotals {
        usage_totals(&JsJson(usage.clone()))
    }

    fn history_texts(&mut self, per_message: bool) -> Result<Vec<JsString>, String> {
        let llm = serialized(&self.job.prepared.messages_to_summarize)?;
        let texts = if per_message {
            llm.iter()
                .map(|m| serialize_conversation(Array::of1(&m).into()))
                .collect::<Result<_, _>>()
        } else {
            serialize_conversation(llm.into()).map(|t| vec![t])
        };
        texts.map_err(|e| thrown_message(&e))
    }

    fn turn_prefix_text(&mut self) -> Result<JsString, String> {
        let llm = serialized(&self.job.prepared.turn_prefix_messages)?;
        serialize_conversation(llm.into()).map_err(|e| thrown_message(&e))
    }

    fn start_call(&mut self, request: Request<JsString>) -> Result<(), String> {
        let job = self.job;
        let kind = request.kind;
        let pending = start_call(
            job.summarize.as_ref(),
            job.timeout_ms,
            &job.controller,
            job.reason.name(),
            request,
            job.prefix.as_ref().map(|p| p.context.clone()),
            job.covered.clone(),
        )?;
        match kind {
            SummaryKind::TurnPrefix => self.turn_prefix = Some(pending),
            _ => self.history = Some(pending),
        }
        Ok(())
    }

    fn aborted(&mut self) -> Option<JsValue> {
        abort_reason(&self.job.controller)
    }

    fn now(&mut self) -> f64 {
        js_sys::Date::now()
    }

    /// Estimated as the compactor's index will estimate the summary
    /// message once it is inserted (its text is all that counts).
    fn summary_tokens(&mut self, text: &JsString) -> u64 {
        let message = shape(Shape::of([
            ("role", Field::Str("compactionSummary")),
            ("summary", Field::Value(text.clone().into())),
        ]));
        EstimateChunks::with(&JsArray::single(&message), self.job.estimator)
            .get(0)
            .unwrap_or_else(|_| (text.length() as u64).div_ceil(4))
    }
}

/// The flow of one job, from the hook to the result object `compact`
/// resolves to.
pub async fn run(job: &Job, messages: &JsValue) -> Result<JsValue, JsFailure> {
    let p = &job.prepared;
    let config = FlowConfig {
        reason: job.reason,
        has_hook: job.before_compact.is_some(),
        has_summarizer: job.summarize.is_some(),
        fallback_extractive: job.fallback_extractive,
        summarizer_window: job.summarizer_window,
        reserve_tokens: job.settings.reserve_tokens,
        one_request: job.covered.is_some(),
    };
    let input = FlowInput {
        previous_summary: p.previous_summary.clone(),
        custom_instructions: job.custom_instructions.clone(),
        has_history: p.messages_to_summarize.length() > 0,
        has_turn_prefix: p.plan.is_split_turn && p.turn_prefix_messages.length() > 0,
        tokens_before: p.plan.tokens_before,
        kept: job
            .facts
            .get(p.plan.first_kept_index..)
            .unwrap_or_default()
            .to_vec(),
        kept_cleared: job.kept_cleared,
        summary_note: job.summary_note,
        ratio: job.ratio,
        survivors: job.survivors.clone(),
        prefix: job.prefix.as_ref().map(|p| p.input.clone()),
    };
    let mut flow = CompactionFlow::new(config, input);
    let mut host = JsHost {
        job,
        history: None,
        turn_prefix: None,
    };
    let mut step = flow.step(&mut host, Event::Start);
    // The summarizer's calls, and the text and `provider` part of the last
    // one that gave a part.
    let mut calls = 0;
    let mut part: Option<(JsString, JsValue)> = None;
    loop {
        let event = match step {
            Step::AskHook => Event::Hook(ask_hook(job, messages).await),
            Step::Await(kind) => {
                let pending = match kind {
                    SummaryKind::TurnPrefix => host.turn_prefix.take(),
                    _ => host.history.take(),
                };
                let (answer, given, rejected) =
                    finish_call_with_part(&job.controller, pending).await;
                if rejected.is_some() {
                    job.rejected.replace(rejected);
                }
                calls += 1;
                if let (Answer::Text { text, .. }, Some(given)) = (&answer, given) {
                    part = Some((text.clone(), given));
                }
                Event::Answer(answer)
            }
            Step::Extract { max_chars } => {
                let all = p.messages_to_summarize.concat(&p.turn_prefix_messages);
                Event::Extracted(
                    extractive_of(
                        &all,
                        &p.file_ops,
                        flow.previous_summary(),
                        job.custom_instructions.as_ref(),
                        max_chars,
                    )
                    .await,
                )
            }
            Step::Insert(insert) => {
                let part = part.filter(|(text, _)| {
                    let head = insert.text.slice(0, text.length());
                    keeps_provider_part(calls, insert.from_hook, head == *text)
                });
                return Ok(result_object(job, insert, part.map(|(_, p)| p)));
            }
            Step::Fail(failure) => return Err(failure),
        };
        step = flow.step(&mut host, event);
    }
}

/// Calls `beforeCompact` and reads its answer.
async fn ask_hook(job: &Job, messages: &JsValue) -> HookAnswer<JsString, JsValue, JsValue> {
    let Some(hook) = &job.before_compact else {
        return HookAnswer::Nothing;
    };
    let event = shape(shapes::before_compact_event(
        job.prepared
            .shape(Field::Object(shapes::settings(&job.settings))),
        messages.clone(),
        job.reason.name(),
        job.custom_instructions.clone().map(JsValue::from),
        job.will_retry,
        signal_of(&job.controller),
    ));
    let returned = match hook.call1(&JsValue::UNDEFINED, &event) {
        Ok(v) => v,
        Err(e) => return HookAnswer::Threw(thrown_message(&e)),
    };
    let answer = match JsFuture::from(Promise::resolve(&returned)).await {
        Ok(v) => v,
        Err(e) => return HookAnswer::Threw(thrown_message(&e)),
    };
    read_hook_answer(&answer)
}

/// Reads the hook's answer for the core, which says what it means.
fn read_hook_answer(answer: &JsValue) -> HookAnswer<JsString, JsValue, JsValue> {
    let path = || FieldPath::argument("beforeCompact result");
    let read = |key| get(answer, key, || path().field(key)).map_err(|e| e.to_string());
    let object = |v: JsValue| v.is_object().then_some(v);
    HookAnswer::read(
        answer.is_object(),
        || Ok(read("cancel")?.is_truthy()),
        || {
            Ok(match read("summary")?.dyn_into::<JsString>() {
                Ok(text) => SummaryField::Text(text),
                Err(v) if v.is_undefined() => SummaryField::Undefined,
                Err(v) => SummaryField::Other(describe(&v)),
            })
        },
        || Ok((object(read("details")?), object(read("usage")?))),
    )
}

/// The `compactionSummary` message, the new array with it inserted (the
/// caller's other objects unchanged), and the object `compact` resolves to.
fn result_object(
    job: &Job,
    insert: Insert<JsString, JsValue, JsValue>,
    part: Option<JsValue>,
) -> JsValue {
    let p = &job.prepared;
    let (summary, outcome) = shapes::compaction_summary(insert, || {
        let (read, modified) = p.file_ops.file_lists();
        (string_array(read), string_array(modified))
    });
    let summary = shape(summary);
    if let Some(part) = part {
        let _ = js_sys::Reflect::set(&summary, &JsValue::from_str("provider"), &part);
    }
    let at = p.plan.first_kept_index;
    let messages = insert_at(job.messages.as_array(), at as u32, &summary);
    shape(shapes::compaction_result(
        messages.into(),
        summary,
        outcome,
        at,
    ))
}

/// The extractive summary of `messages` within `max_chars`: the facts are
/// read here (the shim's `extractFacts`), the summary is written by
/// `crate::extractive`.
pub async fn extractive_of(
    messages: &Array,
    file_ops: &agent_compaction_core::compaction::file_ops::FileOps,
    previous_summary: Option<&JsString>,
    custom_instructions: Option<&JsString>,
    max_chars: usize,
) -> Result<JsString, String> {
    let facts = extract_facts(messages).map_err(|e| thrown_message(&e))?;
    let (read, modified) = file_ops.file_lists();
    let lossy = |files: &[JsStr]| files.iter().map(JsStr::to_string_lossy).collect();
    crate::extractive::summary(
        &String::from(facts),
        lossy(&read),
        lossy(&modified),
        previous_summary.map(String::from),
        custom_instructions.map(String::from),
        max_chars,
    )
    .map(JsString::from)
}
