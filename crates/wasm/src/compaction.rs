//! `compactor.compact()`: prepare → (hook) → ask the app's summarizer →
//! insert one `compactionSummary`. The decisions are the core's
//! (`core::prepare`, `core::prompts`, `core::chunking`); this module awaits
//! JavaScript and never holds a borrow of the compactor across an await.

use crate::js::errors::describe;
use crate::js::errors::type_error;
use crate::js::message_access::{get, JsArray};
use crate::js::text::JsText;
use crate::js::values::object;
use crate::message::convert_to_llm;
use crate::prepare::{string_array, Prepared};
use crate::serialize::serialize_conversation;
use agent_compaction_core::compaction::chunking::{chunk_ranges, conversation_budget};
use agent_compaction_core::compaction::extractive::{
    extractive_summary, ExtractInput, ExtractMessage, ExtractRole,
};
use agent_compaction_core::compaction::prompts::{
    cut_length, history_prompt, max_tokens, turn_prefix_prompt, SummaryKind, CUT_MARKER,
    NO_PRIOR_HISTORY, SPLIT_TURN_SEPARATOR, SYSTEM_PROMPT,
};
use agent_compaction_core::compaction::settings::CompactionSettings;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::js::number::number_to_string;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::context_tokens::estimate_with_usage_after;
use agent_compaction_core::tokens::estimate::MessageFacts;
use js_sys::{Array, Function, JsString, Promise};
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
    #[wasm_bindgen(js_name = insertAt)]
    fn insert_at(messages: &Array, at: u32, item: &JsValue) -> Array;
    #[wasm_bindgen(js_name = joinTexts)]
    fn join_texts(texts: &Array, separator: &str) -> JsString;
    #[wasm_bindgen(js_name = extractFacts, catch)]
    fn extract_facts(messages: &Array) -> Result<JsString, JsValue>;
}

/// Why a compaction runs; it prefixes error messages as pi 0.73 does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Manual,
    Threshold,
    Overflow,
}

impl Reason {
    pub fn parse(value: &JsValue) -> Result<Reason, InputError> {
        match value.as_string().as_deref() {
            None if value.is_undefined() => Ok(Reason::Manual),
            Some("manual") => Ok(Reason::Manual),
            Some("threshold") => Ok(Reason::Threshold),
            Some("overflow") => Ok(Reason::Overflow),
            _ => Err(InputError::WrongType {
                path: FieldPath::argument("options").field("reason"),
                expected: "\"manual\", \"threshold\" or \"overflow\"",
                got: describe(value),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Reason::Manual => "manual",
            Reason::Threshold => "threshold",
            Reason::Overflow => "overflow",
        }
    }

    pub fn error_prefix(self) -> &'static str {
        match self {
            Reason::Manual => "Compaction failed: ",
            Reason::Threshold => "Auto-compaction failed: ",
            Reason::Overflow => "Context overflow recovery failed: ",
        }
    }
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
    pub prepared: Prepared,
}

/// How a compaction ended without a result.
pub enum Failure {
    /// Cancelled by the caller, `abort()` or a `beforeCompact` hook.
    Aborted(JsValue),
    Failed(JsValue),
}

impl Failure {
    fn failed(message: impl AsRef<str>) -> Failure {
        Failure::Failed(js_sys::Error::new(message.as_ref()).into())
    }
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Failure {
        Failure::Failed(type_error(e))
    }
}

pub fn signal_of(controller: &JsValue) -> JsValue {
    js_sys::Reflect::get(controller, &"signal".into()).unwrap_or(JsValue::UNDEFINED)
}

pub fn aborted(controller: &JsValue) -> bool {
    js_sys::Reflect::get(&signal_of(controller), &"aborted".into())
        .map(|v| v.is_truthy())
        .unwrap_or(false)
}

/// One summarizer text and its usage.
pub struct Answer {
    pub text: JsString,
    pub usage: Option<JsValue>,
}

/// A summarizer call under way: the promise already runs.
pub struct Pending {
    promise: Promise,
    max_tokens: u64,
}

/// Calls the app's summarizer now (so that calls started one after the
/// other run in parallel), with the deadline and cancellation.
fn start(job: &Job, kind: SummaryKind, prompt: JsString) -> Result<Pending, Failure> {
    let Some(summarize) = &job.summarize else {
        return Err(Failure::failed("no summarizer"));
    };
    let max = max_tokens(kind, job.settings.reserve_tokens);
    start_call(
        summarize,
        job.timeout_ms,
        &job.controller,
        job.reason.name(),
        kind,
        prompt,
        max,
    )
}

/// One request to `summarize`, under `controller` and `timeout_ms`.
pub fn start_call(
    summarize: &Function,
    timeout_ms: f64,
    controller: &JsValue,
    reason: &str,
    kind: SummaryKind,
    prompt: JsString,
    max: u64,
) -> Result<Pending, Failure> {
    let request = object(&[
        ("kind", kind.name().into()),
        ("systemPrompt", SYSTEM_PROMPT.into()),
        ("prompt", prompt.into()),
        ("maxTokens", (max as f64).into()),
        ("signal", signal_of(controller)),
        ("reason", reason.into()),
    ]);
    let returned = summarize
        .call1(&JsValue::UNDEFINED, &request)
        .map_err(Failure::Failed)?;
    Ok(Pending {
        promise: settle_within(&returned, timeout_ms, controller),
        max_tokens: max,
    })
}

async fn finish(job: &Job, pending: Pending) -> Result<Answer, Failure> {
    finish_call(&job.controller, pending).await
}

/// Waits for a call and checks what it returned.
pub async fn finish_call(controller: &JsValue, pending: Pending) -> Result<Answer, Failure> {
    let value = match JsFuture::from(pending.promise).await {
        Ok(v) => v,
        Err(e) if is_timeout(&e) => return Err(Failure::Failed(e)),
        Err(e) if aborted(controller) || is_abort_error(&e) => return Err(Failure::Aborted(e)),
        Err(e) => return Err(Failure::Failed(e)),
    };
    // A late answer after an abort is not used.
    if aborted(controller) {
        return Err(Failure::Aborted(js_sys::Error::new("aborted").into()));
    }
    let (text, usage) = match value.dyn_ref::<JsString>() {
        Some(text) => (text.clone(), None),
        None if value.is_object() => {
            let text = get(&value, "text", || {
                FieldPath::argument("summary").field("text")
            })?;
            let usage = get(&value, "usage", || {
                FieldPath::argument("summary").field("usage")
            })?;
            match text.dyn_into::<JsString>() {
                Ok(text) => (text, (usage.is_object()).then_some(usage)),
                Err(other) => {
                    return Err(Failure::failed(format!(
                        "the summarizer returned an object whose text is {}, not a string",
                        describe(&other)
                    )))
                }
            }
        }
        None => {
            return Err(Failure::failed(format!(
                "the summarizer returned {}, not a string or {{ text }}",
                describe(&value)
            )))
        }
    };
    if text.trim().length() == 0 {
        return Err(Failure::failed("the summarizer returned an empty summary"));
    }
    Ok(Answer {
        text: cut_to(&text, (pending.max_tokens as usize).saturating_mul(4)),
        usage,
    })
}

async fn ask(job: &Job, kind: SummaryKind, prompt: JsString) -> Result<Answer, Failure> {
    let pending = start(job, kind, prompt)?;
    finish(job, pending).await
}

/// A summary over its budget is cut there, with a marker.
fn cut_to(text: &JsString, max_chars: usize) -> JsString {
    match cut_length(text.length() as usize, max_chars) {
        None => text.clone(),
        Some(keep) => text.slice(0, keep as u32).concat(&CUT_MARKER.into()),
    }
}

fn prompt_text(build: impl FnOnce(&mut JsText)) -> JsString {
    let mut t = JsText::default();
    build(&mut t);
    t.into_inner()
}

/// The history summary: one request, or one per chunk when the serialized
/// history is larger than the summarizer's window, each folded into the
/// running summary with the update prompt.
async fn summarize_history(
    job: &Job,
    answers: &mut Vec<JsValue>,
) -> Result<Option<JsString>, Failure> {
    let p = &job.prepared;
    if p.messages_to_summarize.length() == 0 {
        return Ok(None);
    }
    let llm = convert_to_llm(p.messages_to_summarize.clone().into()).map_err(Failure::Failed)?;
    let custom = job.custom_instructions.as_ref();
    let mut running = p.previous_summary.clone();
    let max = max_tokens(SummaryKind::History, job.settings.reserve_tokens);
    let chunks: Vec<JsString> = match job.summarizer_window {
        None => vec![serialize_conversation(llm.into()).map_err(Failure::Failed)?],
        Some(window) => {
            let texts: Vec<JsString> = llm
                .iter()
                .map(|m| serialize_conversation(Array::of1(&m).into()))
                .collect::<Result<_, _>>()
                .map_err(Failure::Failed)?;
            let lengths: Vec<usize> = texts.iter().map(|t| t.length() as usize).collect();
            let previous_chars = (max as usize).saturating_mul(4);
            let budget = conversation_budget(window, max, previous_chars);
            chunk_ranges(&lengths, budget)
                .into_iter()
                .map(|range| {
                    let parts: Array = texts[range]
                        .iter()
                        .filter(|t| t.length() > 0)
                        .cloned()
                        .map(JsValue::from)
                        .collect();
                    let text = join_texts(&parts, "\n\n");
                    match cut_length(text.length() as usize, budget) {
                        None => text,
                        Some(keep) => text
                            .slice(0, keep as u32)
                            .concat(&"\n\n[... message cut to fit the summarizer's window]".into()),
                    }
                })
                .collect()
        }
    };
    for conversation in chunks {
        let prompt = prompt_text(|t| history_prompt(t, &conversation, running.as_ref(), custom));
        let answer = ask(job, SummaryKind::History, prompt).await?;
        if let Some(u) = answer.usage {
            answers.push(u);
        }
        running = Some(answer.text);
    }
    Ok(running)
}

/// The summary text for the job through the app's summarizer (history and,
/// for a split turn, the turn prefix in parallel), and its usage.
pub async fn summarize_with_callback(job: &Job) -> Result<(JsString, Option<JsValue>), Failure> {
    let p = &job.prepared;
    let mut usages = Vec::new();
    let prefix = if p.plan.is_split_turn && p.turn_prefix_messages.length() > 0 {
        let llm = convert_to_llm(p.turn_prefix_messages.clone().into()).map_err(Failure::Failed)?;
        let conversation = serialize_conversation(llm.into()).map_err(Failure::Failed)?;
        Some(prompt_text(|t| turn_prefix_prompt(t, &conversation)))
    } else {
        None
    };
    // Start the turn-prefix request first so that it runs alongside the
    // history chain.
    let prefix_pending = prefix
        .map(|prompt| start(job, SummaryKind::TurnPrefix, prompt))
        .transpose()?;
    let history = summarize_history(job, &mut usages).await;
    let prefix_answer = match prefix_pending {
        Some(pending) => Some(finish(job, pending).await),
        None => None,
    };
    let history = history?;
    let text = match prefix_answer {
        Some(answer) => {
            let answer = answer?;
            if let Some(u) = answer.usage {
                usages.push(u);
            }
            let history = history
                .or_else(|| p.previous_summary.clone())
                .unwrap_or_else(|| NO_PRIOR_HISTORY.into());
            history
                .concat(&SPLIT_TURN_SEPARATOR.into())
                .concat(&answer.text)
        }
        None => history.ok_or_else(|| Failure::failed("nothing to summarize"))?,
    };
    Ok((text, sum_usage(&usages)))
}

/// The usage of several summarizer calls, added up field by field.
fn sum_usage(usages: &[JsValue]) -> Option<JsValue> {
    match usages {
        [] => None,
        [one] => Some(one.clone()),
        many => {
            let field = |u: &JsValue, path: &[&str]| -> f64 {
                let mut v = u.clone();
                for key in path {
                    v = js_sys::Reflect::get(&v, &(*key).into()).unwrap_or(JsValue::UNDEFINED);
                }
                v.as_f64().unwrap_or(0.0)
            };
            let total = |path: &[&str]| -> JsValue {
                many.iter().map(|u| field(u, path)).sum::<f64>().into()
            };
            Some(object(&[
                ("input", total(&["input"])),
                ("output", total(&["output"])),
                ("cacheRead", total(&["cacheRead"])),
                ("cacheWrite", total(&["cacheWrite"])),
                ("totalTokens", total(&["totalTokens"])),
                (
                    "cost",
                    object(&[
                        ("input", total(&["cost", "input"])),
                        ("output", total(&["cost", "output"])),
                        ("cacheRead", total(&["cost", "cacheRead"])),
                        ("cacheWrite", total(&["cost", "cacheWrite"])),
                        ("total", total(&["cost", "total"])),
                    ]),
                ),
            ]))
        }
    }
}

/// The `compactionSummary` message and the new array with it inserted.
pub struct Inserted {
    pub summary: JsValue,
    pub messages: Array,
    pub tokens_after: f64,
}

pub fn insert_summary(
    job: &Job,
    text: &JsString,
    details: Option<JsValue>,
    usage: Option<JsValue>,
    from_hook: bool,
) -> Result<Inserted, Failure> {
    let p = &job.prepared;
    let now = js_sys::Date::now();
    let (read, modified) = p.file_ops.file_lists();
    let details = details.unwrap_or_else(|| {
        object(&[
            ("readFiles", string_array(read)),
            ("modifiedFiles", string_array(modified)),
        ])
    });
    let mut fields: Vec<(&str, JsValue)> = vec![
        ("role", "compactionSummary".into()),
        ("summary", text.clone().into()),
        ("timestamp", now.into()),
        ("tokensBefore", p.plan.tokens_before.into()),
        ("details", details),
    ];
    if let Some(u) = usage {
        fields.push(("usage", u));
    }
    if from_hook {
        fields.push(("fromHook", true.into()));
    }
    let summary = object(&fields);
    let at = p.plan.first_kept_index;
    // The context after compaction: the summary and the kept messages; usage
    // reported before now is stale (SPEC §3).
    let mut context = Vec::with_capacity(job.facts.len() - at + 1);
    context.push(MessageFacts::new(
        Role::CompactionSummary,
        (text.length() as u64).div_ceil(4),
        None,
        now,
    ));
    context.extend_from_slice(&job.facts[at..]);
    let tokens_after = estimate_with_usage_after(&context, Some(now)).tokens;
    if tokens_after >= p.plan.tokens_before {
        return Err(Failure::failed(format!(
            "the summary would not make the context smaller ({} tokens before, {} after)",
            number_to_string(p.plan.tokens_before),
            number_to_string(tokens_after)
        )));
    }
    let messages = insert_at(job.messages.as_array(), at as u32, &summary);
    Ok(Inserted {
        summary,
        messages,
        tokens_after,
    })
}

#[wasm_bindgen(typescript_custom_section)]
const COMPACTION_TS: &'static str = r#"
/** What `compact` resolves to. */
export interface CompactionResult<M extends AnyMessage = AgentMessage> {
  /** A new array: the caller's messages with the summary inserted. */
  messages: (M | CompactionSummaryMessage)[];
  /** The inserted summary. */
  summary: CompactionSummaryMessage;
  tokensBefore: number;
  /** The estimated context right after (stale usage ignored). */
  tokensAfter: number;
  /** Where the summary was inserted; the kept messages follow it. */
  firstKeptIndex: number;
  /** Who wrote the summary. */
  summarizedBy: "summarizer" | "extractive" | "hook";
  /** Why the extractive fallback was used, when it was. */
  fallbackReason?: string;
}
export interface CompactOptions {
  reason?: CompactionReason;
  customInstructions?: string;
  signal?: AbortSignal;
  willRetry?: boolean;
}
/** `beforeCompact`'s event. */
export interface BeforeCompactEvent<M extends AnyMessage = AgentMessage> {
  preparation: CompactionPreparation<M>;
  messages: readonly M[];
  reason: CompactionReason;
  customInstructions: string | undefined;
  willRetry: boolean;
  signal: AbortSignal;
}
export type BeforeCompactResult =
  | undefined
  | void
  | { cancel: true }
  | { summary: string; details?: SummaryFileDetails; usage?: Usage };
"#;

/// The embedded extractive summary, used when the summarizer is absent or
/// failed and `fallback: "extractive"` is set.
pub fn extractive_fallback(job: &Job) -> Result<JsString, Failure> {
    let p = &job.prepared;
    let all = p.messages_to_summarize.concat(&p.turn_prefix_messages);
    let max_chars =
        (max_tokens(SummaryKind::History, job.settings.reserve_tokens) as usize).saturating_mul(4);
    extractive_of(
        &all,
        &p.file_ops,
        p.previous_summary.as_ref(),
        job.custom_instructions.as_ref(),
        max_chars,
    )
}

/// The extractive summary of `messages` within `max_chars`.
pub fn extractive_of(
    messages: &Array,
    file_ops: &agent_compaction_core::compaction::file_ops::FileOps,
    previous_summary: Option<&JsString>,
    custom_instructions: Option<&JsString>,
    max_chars: usize,
) -> Result<JsString, Failure> {
    let text = extract_facts(messages).map_err(Failure::Failed)?;
    let text = String::from(text);
    let items = match agent_compaction_core::js::json::parse(&text) {
        Ok(agent_compaction_core::js::json::Json::Array(items)) => items,
        _ => return Err(Failure::failed("could not read the messages to summarize")),
    };
    let lossy = |v: Option<&agent_compaction_core::js::json::Json>| {
        v.and_then(|j| j.as_str()).map(|s| s.to_string_lossy())
    };
    let messages: Vec<ExtractMessage> = items
        .iter()
        .map(|m| ExtractMessage {
            role: match lossy(m.get("r")).as_deref() {
                Some("user") => ExtractRole::User,
                Some("assistant") => ExtractRole::Assistant,
                Some("toolResult") | Some("bashExecution") => ExtractRole::ToolResult,
                _ => ExtractRole::Other,
            },
            text: lossy(m.get("t")).unwrap_or_default(),
            tool_name: lossy(m.get("n")),
            tool_calls: m
                .get("c")
                .and_then(|c| c.as_array())
                .unwrap_or(&[])
                .iter()
                .filter_map(|pair| {
                    let pair = pair.as_array()?;
                    Some((lossy(pair.first())?, lossy(pair.get(1)).unwrap_or_default()))
                })
                .collect(),
            is_error: m.get("e").and_then(|e| e.as_bool()).unwrap_or(false),
        })
        .collect();
    let (read, modified) = file_ops.file_lists();
    let read: Vec<String> = read.iter().map(|f| f.to_string_lossy()).collect();
    let modified: Vec<String> = modified.iter().map(|f| f.to_string_lossy()).collect();
    let previous = previous_summary.map(String::from);
    let custom = custom_instructions.map(String::from);
    let summary = extractive_summary(&ExtractInput {
        messages: &messages,
        previous_summary: previous.as_deref(),
        read_files: &read,
        modified_files: &modified,
        custom_instructions: custom.as_deref(),
        max_chars,
    });
    Ok(JsString::from(summary))
}

/// `Err(Aborted)` with the signal's reason once `controller` has aborted:
/// checked before the work starts and before anything is inserted, so an
/// abort at any moment (even from a `compaction_start` handler, or a signal
/// aborted before the call) changes nothing.
///
/// A deadline that passed also aborts the controller (to cancel the app's
/// fetch), but it is a failure, not a cancellation: it does not count here.
pub fn check_not_aborted(controller: &JsValue) -> Result<(), Failure> {
    if !aborted(controller) {
        return Ok(());
    }
    let reason = js_sys::Reflect::get(&signal_of(controller), &"reason".into())
        .unwrap_or(JsValue::UNDEFINED);
    if is_timeout(&reason) {
        return Ok(());
    }
    Err(Failure::Aborted(if reason.is_undefined() {
        js_sys::Error::new("aborted").into()
    } else {
        reason
    }))
}
