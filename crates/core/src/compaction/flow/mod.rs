//! The decisions of `compactor.compact()` as a state machine, free of any
//! JavaScript, so that every branch is tested natively.
//!
//! A host (the package's binding) drives a [`CompactionFlow`]: it feeds an
//! [`Event`] (the start, the `beforeCompact` hook's answer, a summarizer's
//! answer, the extractive summary) and gets the next [`Step`] to carry out
//! (ask the hook, await a summarizer call, build the extractive summary,
//! insert the summary, or fail). The extractive summary is a step of its
//! own because the package loads its code on first use (an await). Work
//! that is synchronous and touches the caller's values (serializing the
//! messages, starting a summarizer call, the abort signal, the clock) goes
//! through the [`FlowHost`] the binding implements. Texts stay the
//! host's own ([`TextOps`]): the caller's strings are composed, measured
//! and cut without being copied into wasm memory.
//!
//! What is decided here: the hook's cancel or supplied summary; no
//! callback and the `fallback` rule; the chunk loop with its running
//! summary; the split-turn join; the summary cut to its budget; the
//! refusal of a summary that would not make the context smaller; abort
//! (never a fallback) versus failure (timeout included: a fallback when
//! allowed); and every error text, with pi's reason prefixes.

mod hook;
pub use hook::SummaryField;

use super::chunking::{chunk_ranges, conversation_budget};
use super::last_request::{with_latest_request, without_section, Survivors};
use super::prompts::{
    cut_length, history_prompt, max_tokens, prefix_instruction, turn_prefix_prompt, Boundary,
    SummaryKind, CUT_MARKER, NO_PRIOR_HISTORY, QUOTE_UNITS, SPLIT_TURN_SEPARATOR, SYSTEM_PROMPT,
};
pub use super::reason::Reason;
pub use super::text_ops::TextOps;
use crate::error::{FieldPath, InputError};
use crate::js::number::number_to_string;
use crate::message::llm::TextSink;
use crate::message::role::Role;
use crate::tokens::context_index::tokens_after_summary;
use crate::tokens::estimate::MessageFacts;

/// What `beforeCompact` returning `{ cancel: true }` rejects with.
pub const CANCELLED: &str = "Compaction cancelled";

/// Why nothing is summarized without a callback and with `fallback: "none"`.
pub const NO_CALLBACK: &str = "no summarize callback was given and fallback is \"none\"";

/// The marker put where one message's text was cut to fit a chunk.
pub const CHUNK_CUT_MARKER: &str = "\n\n[... message cut to fit the summarizer's window]";

/// `text` cut to `max_chars` with `marker` (ASCII) at the cut, or unchanged.
fn cut<X: TextOps>(text: X::Text, max_chars: usize, marker: &str) -> X::Text {
    match cut_length(X::len(&text), max_chars) {
        None => text,
        Some(_) => {
            let keep = max_chars.saturating_sub(marker.len());
            let kept = X::prefix(&text, keep);
            X::compose(|s| {
                s.text(X::borrow(&kept));
                s.literal(marker);
            })
        }
    }
}

/// The usage numbers of summarizer calls, added up when there are several.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UsageTotals {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total_tokens: f64,
    pub cost: CostTotals,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CostTotals {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total: f64,
}

impl UsageTotals {
    fn add(mut self, o: &UsageTotals) -> UsageTotals {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.total_tokens += o.total_tokens;
        self.cost.input += o.cost.input;
        self.cost.output += o.cost.output;
        self.cost.cache_read += o.cost.cache_read;
        self.cost.cache_write += o.cost.cache_write;
        self.cost.total += o.cost.total;
        self
    }
}

/// The usage a summary carries: the one call's own object, or the sum.
#[derive(Clone, Debug, PartialEq)]
pub enum UsageOut<U> {
    One(U),
    Sum(UsageTotals),
}

/// One request to the app's summarizer.
#[derive(Clone, Debug)]
pub struct Request<T> {
    pub kind: SummaryKind,
    pub system_prompt: &'static str,
    pub prompt: T,
    pub max_tokens: u64,
    /// In the prefix form: the last user message, sent after the
    /// conversation as the model last saw it (the host adds that context).
    pub instruction: Option<T>,
}

/// Where a summary request in the prefix form stops, in the conversation
/// as the model last saw it.
#[derive(Clone, Debug)]
pub struct PrefixInput<T> {
    /// The first message the history summary leaves out: the split turn's
    /// first message, or the first message kept.
    pub history_end: Boundary<T>,
    /// The first message kept, when the cut splits a turn.
    pub turn_end: Option<Boundary<T>>,
    /// The most each request's summary may take ([`prefix_room`]).
    pub room: u64,
}

/// Which [`Boundary`] names a message of the conversation (as
/// `convertToLlm` gave it: a user's, an assistant's or a tool result): a
/// user's message by its text (the string, or its first text block), an
/// assistant's by the text of its first text block, else by its first
/// tool call (name and id); `None` when nothing names it (the prefix form
/// is not used then). Quotes are cut to [`QUOTE_UNITS`]. `users_before`:
/// the user messages before it.
pub fn boundary_of<X: TextOps>(
    role: Role,
    text: Option<X::Text>,
    tool_call: Option<(X::Text, X::Text)>,
    users_before: usize,
) -> Option<Boundary<X::Text>> {
    let quoted = text.filter(|t| !X::is_blank(t)).map(|t| {
        let cut = X::len(&t) > QUOTE_UNITS;
        (if cut { X::prefix(&t, QUOTE_UNITS) } else { t }, cut)
    });
    match (role, quoted, tool_call) {
        (Role::User, Some((text, cut)), _) => Some(Boundary::User {
            text,
            nth: users_before + 1,
            cut,
        }),
        (Role::Assistant, Some((text, cut)), _) => Some(Boundary::Reply { text, cut }),
        (Role::Assistant, None, Some((name, id))) => Some(Boundary::ToolCall { name, id }),
        _ => None,
    }
}

/// A summary request's own tokens beyond the conversation: the
/// instruction, and room for the provider's framing.
pub const PREFIX_OVERHEAD_TOKENS: u64 = 1_000;

/// The least room a summary in the prefix form must have (a checkpoint in
/// pi's format runs to one to three thousand tokens), unless the summary's
/// own budget is smaller.
pub const PREFIX_MIN_SUMMARY_TOKENS: u64 = 4_096;

/// How many tokens a summary request that repeats the conversation as the
/// model last saw it (`view_tokens`, the context's own measure) leaves for
/// the summary in `window` (the summarizer's window when the app gave one,
/// else the model's); `None` when the request keeps the serialized form:
/// the app opted out, or did not pass the conversation's system prompt
/// and tools (`conversation_given`), or the compaction is for an overflow
/// (the provider refused that context already), or the room left is under
/// [`PREFIX_MIN_SUMMARY_TOKENS`] (or the summary's budget, when smaller).
/// The requests' `maxTokens` is capped at that room: a compaction at the
/// threshold has less than `reserveTokens` left in the window.
pub fn prefix_room(
    cache_friendly: bool,
    conversation_given: bool,
    reason: Reason,
    view_tokens: u64,
    reserve_tokens: u64,
    window: u64,
) -> Option<u64> {
    let budget = max_tokens(SummaryKind::History, reserve_tokens);
    let room = window.checked_sub(view_tokens.checked_add(PREFIX_OVERHEAD_TOKENS)?)?;
    let usable = cache_friendly && conversation_given && reason != Reason::Overflow;
    (usable && room >= budget.min(PREFIX_MIN_SUMMARY_TOKENS)).then_some(room)
}

/// What the binding does for the flow synchronously.
pub trait FlowHost: TextOps {
    /// The app's usage object, passed through untouched.
    type Usage: Clone;
    /// Details a hook supplied, passed through untouched.
    type Details;
    /// What an abort rejects with.
    type AbortError;
    /// The numbers of a usage object (asked only to add several up).
    fn usage_totals(&self, usage: &Self::Usage) -> UsageTotals;
    /// The serialized history: one text per message (`per_message`, for
    /// chunking), or one text for all.
    fn history_texts(&mut self, per_message: bool) -> Result<Vec<Self::Text>, String>;
    /// The serialized start of the split turn.
    fn turn_prefix_text(&mut self) -> Result<Self::Text, String>;
    /// Starts a summarizer call (it runs until awaited by [`Step::Await`]).
    fn start_call(&mut self, request: Request<Self::Text>) -> Result<(), String>;
    /// Whether the compaction was cancelled (a deadline that passed is a
    /// failure, not a cancellation: `None` then).
    fn aborted(&mut self) -> Option<Self::AbortError>;
    fn now(&mut self) -> f64;
    /// The estimate of a `compactionSummary` whose text is `text`, by the
    /// compactor's estimator (unscaled): what its index will hold for it.
    fn summary_tokens(&mut self, text: &Self::Text) -> u64;
}

/// The compactor's options that shape the flow.
#[derive(Clone, Copy, Debug)]
pub struct FlowConfig {
    pub reason: Reason,
    pub has_hook: bool,
    pub has_summarizer: bool,
    pub fallback_extractive: bool,
    pub summarizer_window: Option<u64>,
    pub reserve_tokens: u64,
    /// The summarizer has its provider compact what it covers (its
    /// `oneRequest`): one request, never chunks to fit `summarizer_window`.
    pub one_request: bool,
}

/// What the preparation found, as far as the flow needs it.
#[derive(Clone, Debug)]
pub struct FlowInput<T> {
    pub previous_summary: Option<T>,
    pub custom_instructions: Option<T>,
    /// There are history messages to summarize.
    pub has_history: bool,
    /// The cut splits a turn and its start has messages.
    pub has_turn_prefix: bool,
    /// The context tokens before (the compactor's `contextTokens`).
    pub tokens_before: f64,
    /// The facts of the messages kept (from the first kept one on).
    pub kept: Vec<MessageFacts>,
    /// How much less than their estimates the kept tool results that a
    /// kept clearing marker clears are sent as (their placeholders).
    pub kept_cleared: u64,
    /// What the summary is sent with besides its text (the history tools'
    /// note), in tokens.
    pub summary_note: u64,
    /// The ratio the compactor scales its estimates by (learned from the
    /// provider's reported usage; 1 with pi's estimate): the context after
    /// is counted as `contextTokens` will count it, on the scale of
    /// `tokens_before`.
    pub ratio: f64,
    /// The latest request to quote and the pinned messages re-sent after
    /// the summary (`compaction::last_request`).
    pub survivors: Survivors<T>,
    /// Set when the requests take the prefix form ([`prefix_room`]).
    pub prefix: Option<PrefixInput<T>>,
}

/// What the `beforeCompact` hook answered.
pub enum HookAnswer<T, U, D> {
    /// `undefined`, or an object with neither `cancel` nor `summary`.
    Nothing,
    Cancel,
    Summary {
        text: T,
        details: Option<D>,
        usage: Option<U>,
    },
    /// `summary` was neither a string nor `undefined`; `got` describes it.
    SummaryNotText {
        got: String,
    },
    /// The hook threw, rejected, or its answer could not be read.
    Threw(String),
}

/// What a summarizer call ended with.
pub enum Answer<T, U, A> {
    Text {
        text: T,
        usage: Option<U>,
    },
    /// An object whose `text` is not a string; `got` describes it.
    TextNotString {
        got: String,
    },
    /// Neither a string nor an object; `got` describes it.
    NotTextOrObject {
        got: String,
    },
    /// The deadline passed.
    TimedOut {
        ms: f64,
    },
    /// Threw or rejected.
    Failed(String),
    Aborted(A),
}

impl<T, U, A> Answer<T, U, A> {
    /// What a call that settled with a value answered: a string is the
    /// summary; of an object, `text` must be a string and `usage` is kept
    /// when it is an object (`fields` reads both, in that order: the text
    /// or a description of what it is, and the usage; `Err` when a read
    /// threw); anything else is refused (`got` describes it).
    pub fn of_value(
        text: Option<T>,
        is_object: bool,
        got: impl FnOnce() -> String,
        fields: impl FnOnce() -> Result<(Result<T, String>, Option<U>), String>,
    ) -> Self {
        if let Some(text) = text {
            return Answer::Text { text, usage: None };
        }
        if !is_object {
            return Answer::NotTextOrObject { got: got() };
        }
        match fields() {
            Err(message) => Answer::Failed(message),
            Ok((Ok(text), usage)) => Answer::Text { text, usage },
            Ok((Err(got), _)) => Answer::TextNotString { got },
        }
    }

    /// What a call that rejected with `error` answered: the deadline
    /// passed (`timed_out`: the deadline in ms) before anything else; an
    /// abort (the caller's signal, or an `AbortError`) rejects with the
    /// error itself; anything else fails with its `message`.
    pub fn of_rejection(
        timed_out: Option<f64>,
        aborted: bool,
        error: A,
        message: impl FnOnce(&A) -> String,
    ) -> Self {
        match timed_out {
            Some(ms) => Answer::TimedOut { ms },
            None if aborted => Answer::Aborted(error),
            None => Answer::Failed(message(&error)),
        }
    }
}

/// What a call the flow awaits fails with when none was started (a host's
/// bug, never the app's).
pub const NO_CALL: &str = "internal error: no call under way";

/// The message of a summarizer that missed its deadline.
pub fn timeout_message(ms: f64) -> String {
    format!(
        "the summarizer did not answer within {} ms",
        number_to_string(ms)
    )
}

/// What the binding feeds the flow.
pub enum Event<H: FlowHost> {
    Start,
    Hook(HookAnswer<H::Text, H::Usage, H::Details>),
    /// The answer of the call [`Step::Await`] named.
    Answer(Answer<H::Text, H::Usage, H::AbortError>),
    /// The extractive summary [`Step::Extract`] asked for, or why it could
    /// not be built.
    Extracted(Result<H::Text, String>),
}

/// Who wrote the summary (`summarizedBy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummarizedBy {
    Summarizer,
    Extractive,
    Hook,
}

impl SummarizedBy {
    pub fn name(self) -> &'static str {
        match self {
            SummarizedBy::Summarizer => "summarizer",
            SummarizedBy::Extractive => "extractive",
            SummarizedBy::Hook => "hook",
        }
    }
}

/// The summary to insert at the first kept index.
pub struct Insert<T, U, D> {
    pub text: T,
    /// `None`: the preparation's file lists.
    pub details: Option<D>,
    pub usage: Option<UsageOut<U>>,
    pub from_hook: bool,
    pub timestamp: f64,
    pub tokens_before: f64,
    /// How many messages follow the summary where it is inserted (its
    /// `keptMessages`): their usage is stale
    /// ([`crate::tokens::context_tokens::Stale`]).
    pub kept_messages: usize,
    /// The estimated context right after (stale usage ignored), as the
    /// compactor's `contextTokens` counts it then
    /// ([`tokens_after_summary`]).
    pub tokens_after: f64,
    pub summarized_by: SummarizedBy,
    /// Why the extractive fallback was used, when it was.
    pub fallback_reason: Option<String>,
}

/// Whether the summary keeps the `provider` part a summarizer answered
/// with (a provider's compaction, `anthropicCompaction`,
/// `openAiResponsesCompaction`): only when the summary starts with that one
/// call's text as given (`starts_with_text`; what the compaction adds after
/// it, the latest request quoted or the files touched, is for other
/// models: the provider gets its part, which it signed or encrypted as it
/// is), not a hook's, nor joined with a split turn's second call or
/// replaced by the fallback.
pub fn keeps_provider_part(calls: usize, from_hook: bool, starts_with_text: bool) -> bool {
    calls == 1 && !from_hook && starts_with_text
}

/// Why a `beforeCompact` summary that is empty or blank is refused.
pub const HOOK_EMPTY: &str = "beforeCompact returned an empty summary";

/// How a compaction ended without a result.
#[derive(Debug, PartialEq)]
pub enum Failure<A> {
    /// Cancelled by the caller or `abort()`: rejects with `A`.
    Aborted(A),
    /// Cancelled by `beforeCompact`: rejects with [`CANCELLED`].
    Cancelled,
    /// Failed; the message, without the reason's prefix.
    Failed(String),
    /// The caller's messages could not be read (checked before the flow
    /// starts): rejects with a `TypeError` (a `RangeError` for a number
    /// out of range), as bad input does everywhere.
    Input(InputError),
}

impl<A> Failure<A> {
    fn failed(message: impl Into<String>) -> Failure<A> {
        Failure::Failed(message.into())
    }
}

/// What the binding does next.
pub enum Step<H: FlowHost> {
    /// Call `beforeCompact` and feed [`Event::Hook`].
    AskHook,
    /// Await the running call of this kind and feed [`Event::Answer`].
    Await(SummaryKind),
    /// Build the extractive summary of everything summarized, within
    /// `max_chars` (UTF-16 code units), and feed [`Event::Extracted`].
    Extract {
        max_chars: usize,
    },
    Insert(Insert<H::Text, H::Usage, H::Details>),
    Fail(Failure<H::AbortError>),
}

impl<H: FlowHost> std::fmt::Debug for Step<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::AskHook => f.write_str("AskHook"),
            Step::Await(kind) => write!(f, "Await({kind:?})"),
            Step::Extract { max_chars } => write!(f, "Extract({max_chars})"),
            Step::Insert(i) => write!(f, "Insert({:?})", i.summarized_by),
            Step::Fail(Failure::Aborted(_)) => f.write_str("Fail(Aborted)"),
            Step::Fail(Failure::Cancelled) => f.write_str("Fail(Cancelled)"),
            Step::Fail(Failure::Failed(m)) => write!(f, "Fail(Failed({m:?}))"),
            Step::Fail(Failure::Input(e)) => write!(f, "Fail(Input({e}))"),
        }
    }
}

/// The history chain's result: its summary (`None` with no history).
type HistoryResult<H> = Result<Option<<H as TextOps>::Text>, Failure<<H as FlowHost>::AbortError>>;

/// An answer checked by [`accept`]: its text and usage.
pub type Accepted<T, U, A> = Result<(T, Option<U>), Failure<A>>;

/// The summarizer phase: the history chain and the turn prefix beside it.
struct Summarizing<H: FlowHost> {
    chunks: Vec<H::Text>,
    next: usize,
    running: Option<H::Text>,
    usages: Vec<H::Usage>,
    /// The history's result once the chain ended.
    history: Option<HistoryResult<H>>,
    prefix_running: bool,
    awaiting: SummaryKind,
}

enum Phase<H: FlowHost> {
    Start,
    Hook,
    Summarizing(Summarizing<H>),
    /// Waiting for the extractive summary; the fallback's reason, if it is one.
    Extracting(Option<String>),
    Done,
}

/// One `compact()` from the preparation to the summary or the failure.
pub struct CompactionFlow<H: FlowHost> {
    config: FlowConfig,
    input: FlowInput<H::Text>,
    phase: Phase<H>,
}

impl<H: FlowHost> CompactionFlow<H> {
    pub fn new(config: FlowConfig, mut input: FlowInput<H::Text>) -> Self {
        // The previous summary's verbatim request is stale: the new summary
        // quotes the request that is latest now.
        input.previous_summary = input.previous_summary.map(without_section::<H>);
        CompactionFlow {
            config,
            input,
            phase: Phase::Start,
        }
    }

    /// The previous summary as the summarizers are given it (its verbatim
    /// section taken out), for the extractive summary.
    pub fn previous_summary(&self) -> Option<&H::Text> {
        self.input.previous_summary.as_ref()
    }

    /// The next step after `event`.
    pub fn step(&mut self, host: &mut H, event: Event<H>) -> Step<H> {
        match (std::mem::replace(&mut self.phase, Phase::Done), event) {
            (Phase::Start, Event::Start) => {
                if self.config.has_hook {
                    self.phase = Phase::Hook;
                    Step::AskHook
                } else {
                    self.summarize(host)
                }
            }
            (Phase::Hook, Event::Hook(answer)) => self.hook_answered(host, answer),
            (Phase::Summarizing(s), Event::Answer(answer)) => self.answered(host, s, answer),
            (Phase::Extracting(fallback_reason), Event::Extracted(built)) => match built {
                Ok(text) => self.insert(
                    host,
                    text,
                    None,
                    None,
                    SummarizedBy::Extractive,
                    fallback_reason,
                ),
                Err(message) => Step::Fail(Failure::Failed(message)),
            },
            _ => Step::Fail(Failure::failed(
                "internal error: the compaction flow was driven out of order",
            )),
        }
    }

    fn hook_answered(
        &mut self,
        host: &mut H,
        answer: HookAnswer<H::Text, H::Usage, H::Details>,
    ) -> Step<H> {
        match answer {
            HookAnswer::Nothing => self.summarize(host),
            HookAnswer::Cancel => Step::Fail(Failure::Cancelled),
            HookAnswer::Threw(message) => Step::Fail(Failure::Failed(message)),
            HookAnswer::SummaryNotText { got } => Step::Fail(Failure::Failed(
                InputError::WrongType {
                    path: FieldPath::argument("beforeCompact result").field("summary"),
                    expected: "a string",
                    got,
                }
                .to_string(),
            )),
            // An empty text would leave the model nothing of what it hides,
            // as the summarizer's is refused.
            HookAnswer::Summary { text, .. } if H::is_blank(&text) => {
                Step::Fail(Failure::failed(HOOK_EMPTY))
            }
            HookAnswer::Summary {
                text,
                details,
                usage,
            } => self.insert(
                host,
                text,
                details,
                usage.map(UsageOut::One),
                SummarizedBy::Hook,
                None,
            ),
        }
    }

    /// After the hook: the app's summarizer, or the extractive summary.
    fn summarize(&mut self, host: &mut H) -> Step<H> {
        if !self.config.has_summarizer {
            if !self.config.fallback_extractive {
                return Step::Fail(Failure::failed(NO_CALLBACK));
            }
            return self.extractive(None);
        }
        let mut s = Summarizing {
            chunks: Vec::new(),
            next: 0,
            running: self.input.previous_summary.clone(),
            usages: Vec::new(),
            history: None,
            prefix_running: false,
            awaiting: SummaryKind::History,
        };
        // The turn-prefix request starts first, so that it runs alongside
        // the history chain.
        if self.input.has_turn_prefix {
            let started = host.turn_prefix_text().and_then(|conversation| {
                let prompt = H::compose(|t| turn_prefix_prompt(t, H::borrow(&conversation)));
                let instruction = self.input.prefix.as_ref().and_then(|p| {
                    let until = p.turn_end.as_ref()?;
                    let from = borrowed::<H>(&p.history_end);
                    let until = borrowed::<H>(until);
                    Some(H::compose(|t| {
                        prefix_instruction(t, Some(&from), &until, false, None)
                    }))
                });
                host.start_call(self.request(SummaryKind::TurnPrefix, prompt, instruction))
            });
            if let Err(message) = started {
                return self.summarizer_failed(Failure::Failed(message));
            }
            s.prefix_running = true;
        }
        if self.input.has_history {
            match self.history_chunks(host) {
                Ok(chunks) => s.chunks = chunks,
                Err(message) => s.history = Some(Err(Failure::Failed(message))),
            }
        } else {
            s.history = Some(Ok(None));
        }
        self.next_call(host, s)
    }

    fn request(
        &self,
        kind: SummaryKind,
        prompt: H::Text,
        instruction: Option<H::Text>,
    ) -> Request<H::Text> {
        let budget = max_tokens(kind, self.config.reserve_tokens);
        let room = match (&instruction, &self.input.prefix) {
            (Some(_), Some(prefix)) => prefix.room,
            _ => budget,
        };
        Request {
            kind,
            system_prompt: SYSTEM_PROMPT,
            prompt,
            max_tokens: budget.min(room),
            instruction,
        }
    }

    /// The conversation text of each history request: all of it, or, with
    /// `summarizerContextWindow`, chunks that fit the window (one request
    /// in the prefix form, which fits it by [`prefix_room`]).
    fn history_chunks(&self, host: &mut H) -> Result<Vec<H::Text>, String> {
        let Some(window) = self
            .config
            .summarizer_window
            .filter(|_| self.input.prefix.is_none() && !self.config.one_request)
        else {
            return host.history_texts(false);
        };
        let texts = host.history_texts(true)?;
        let lengths: Vec<usize> = texts.iter().map(H::len).collect();
        let max = max_tokens(SummaryKind::History, self.config.reserve_tokens);
        let budget = conversation_budget(window, max, (max as usize).saturating_mul(4));
        Ok(chunk_ranges(&lengths, budget)
            .into_iter()
            .map(|range| {
                let joined = H::compose(|sink| {
                    let mut first = true;
                    for t in texts[range].iter().filter(|t| H::len(t) > 0) {
                        if !first {
                            sink.literal("\n\n");
                        }
                        first = false;
                        sink.text(H::borrow(t));
                    }
                });
                cut::<H>(joined, budget, CHUNK_CUT_MARKER)
            })
            .collect())
    }

    /// Starts the next history request, or awaits the turn prefix, or joins.
    fn next_call(&mut self, host: &mut H, mut s: Summarizing<H>) -> Step<H> {
        if s.history.is_none() {
            if let Some(conversation) = s.chunks.get(s.next) {
                let custom = self.input.custom_instructions.as_ref().map(H::borrow);
                let previous = s.running.as_ref().map(H::borrow);
                let prompt =
                    H::compose(|t| history_prompt(t, H::borrow(conversation), previous, custom));
                let instruction = self.input.prefix.as_ref().map(|p| {
                    let until = borrowed::<H>(&p.history_end);
                    let has_previous = self.input.previous_summary.is_some();
                    H::compose(|t| prefix_instruction(t, None, &until, has_previous, custom))
                });
                s.next += 1;
                match host.start_call(self.request(SummaryKind::History, prompt, instruction)) {
                    Ok(()) => {
                        s.awaiting = SummaryKind::History;
                        self.phase = Phase::Summarizing(s);
                        return Step::Await(SummaryKind::History);
                    }
                    Err(message) => s.history = Some(Err(Failure::Failed(message))),
                }
            } else {
                s.history = Some(Ok(s.running.take()));
            }
        }
        if s.prefix_running {
            s.awaiting = SummaryKind::TurnPrefix;
            self.phase = Phase::Summarizing(s);
            return Step::Await(SummaryKind::TurnPrefix);
        }
        self.join(host, s, None)
    }

    fn answered(
        &mut self,
        host: &mut H,
        mut s: Summarizing<H>,
        answer: Answer<H::Text, H::Usage, H::AbortError>,
    ) -> Step<H> {
        let kind = s.awaiting;
        let checked = accept::<H, _, _>(answer, max_tokens(kind, self.config.reserve_tokens));
        match kind {
            SummaryKind::TurnPrefix => {
                s.prefix_running = false;
                self.join(host, s, Some(checked))
            }
            _ => {
                match checked {
                    Ok((text, usage)) => {
                        s.usages.extend(usage);
                        s.running = Some(text);
                    }
                    Err(failure) => s.history = Some(Err(failure)),
                }
                self.next_call(host, s)
            }
        }
    }

    /// Both requests ended: the summary text, or the first failure (the
    /// history's first).
    fn join(
        &mut self,
        host: &mut H,
        mut s: Summarizing<H>,
        prefix: Option<Accepted<H::Text, H::Usage, H::AbortError>>,
    ) -> Step<H> {
        let history = match s.history.take() {
            Some(Ok(history)) => history,
            Some(Err(failure)) => return self.summarizer_failed(failure),
            None => None,
        };
        let text = match prefix {
            Some(Err(failure)) => return self.summarizer_failed(failure),
            Some(Ok((prefix, usage))) => {
                s.usages.extend(usage);
                let previous = self.input.previous_summary.clone();
                let history = history.or(previous);
                H::compose(|t| {
                    match &history {
                        Some(h) => t.text(H::borrow(h)),
                        None => t.literal(NO_PRIOR_HISTORY),
                    }
                    t.literal(SPLIT_TURN_SEPARATOR);
                    t.text(H::borrow(&prefix));
                })
            }
            None => match history {
                Some(text) => text,
                None => return self.summarizer_failed(Failure::failed("nothing to summarize")),
            },
        };
        let usage = sum_usage(host, s.usages);
        self.insert(host, text, None, usage, SummarizedBy::Summarizer, None)
    }

    /// A failure (a timeout included) falls back to the extractive summary
    /// when allowed; a cancellation never does.
    fn summarizer_failed(&mut self, failure: Failure<H::AbortError>) -> Step<H> {
        match fall_back(failure, self.config.fallback_extractive) {
            Ok(reason) => self.extractive(Some(reason)),
            Err(failure) => Step::Fail(failure),
        }
    }

    fn extractive(&mut self, fallback_reason: Option<String>) -> Step<H> {
        let max_chars = (max_tokens(SummaryKind::History, self.config.reserve_tokens) as usize)
            .saturating_mul(4);
        self.phase = Phase::Extracting(fallback_reason);
        Step::Extract { max_chars }
    }

    /// The summary to insert, unless the compaction was cancelled meanwhile
    /// or the summary would not make the context smaller.
    fn insert(
        &mut self,
        host: &mut H,
        text: H::Text,
        details: Option<H::Details>,
        usage: Option<UsageOut<H::Usage>>,
        summarized_by: SummarizedBy,
        fallback_reason: Option<String>,
    ) -> Step<H> {
        if let Some(abort) = host.aborted() {
            return Step::Fail(Failure::Aborted(abort));
        }
        let now = host.now();
        let tokens_before = self.input.tokens_before;
        // Whoever wrote it, the summary quotes the latest request when it
        // is summarized.
        let text = with_latest_request::<H>(text, &self.input.survivors);
        // The context after, as the compactor's index counts it right after
        // the summary is inserted: the summary (by the compactor's
        // estimator) and what it is sent with, the pinned messages re-sent
        // after it and the kept messages (by their estimates: their usage
        // is stale, SPEC §3), the kept outputs a kept marker clears as
        // their placeholders, all scaled by the ratio.
        let estimates = self
            .input
            .survivors
            .resent
            .iter()
            .chain(&self.input.kept)
            .fold(host.summary_tokens(&text), |sum, f| {
                sum.saturating_add(u64::from(f.tokens))
            });
        let tokens_after = tokens_after_summary(
            estimates,
            self.input.summary_note,
            self.input.kept_cleared,
            self.input.ratio,
        );
        if tokens_after >= tokens_before {
            return Step::Fail(Failure::Failed(format!(
                "the summary would not make the context smaller ({} tokens before, {} after)",
                number_to_string(tokens_before),
                number_to_string(tokens_after)
            )));
        }
        Step::Insert(Insert {
            text,
            details,
            usage,
            from_hook: summarized_by == SummarizedBy::Hook,
            timestamp: now,
            tokens_before,
            kept_messages: self.input.kept.len(),
            tokens_after,
            summarized_by,
            fallback_reason,
        })
    }
}

/// `boundary` with its texts borrowed as the host's sink takes them.
fn borrowed<H: TextOps>(boundary: &Boundary<H::Text>) -> Boundary<&<H::Sink as TextSink>::Text> {
    match boundary {
        Boundary::User { text, nth, cut } => Boundary::User {
            text: H::borrow(text),
            nth: *nth,
            cut: *cut,
        },
        Boundary::Reply { text, cut } => Boundary::Reply {
            text: H::borrow(text),
            cut: *cut,
        },
        Boundary::ToolCall { name, id } => Boundary::ToolCall {
            name: H::borrow(name),
            id: H::borrow(id),
        },
    }
}

fn sum_usage<H: FlowHost>(host: &H, usages: Vec<H::Usage>) -> Option<UsageOut<H::Usage>> {
    if usages.len() <= 1 {
        return usages.into_iter().next().map(UsageOut::One);
    }
    let total = usages
        .iter()
        .map(|u| host.usage_totals(u))
        .fold(UsageTotals::default(), |sum, u| sum.add(&u));
    Some(UsageOut::Sum(total))
}

/// A summarizer's answer checked: a non-empty text, cut to `max_tokens`
/// (4 characters a token) with [`CUT_MARKER`], or why it is unusable.
/// Shared with branch summaries.
pub fn accept<X: TextOps, U, A>(
    answer: Answer<X::Text, U, A>,
    max_tokens: u64,
) -> Accepted<X::Text, U, A> {
    match answer {
        Answer::Text { text, usage } => {
            if X::is_blank(&text) {
                return Err(Failure::failed("the summarizer returned an empty summary"));
            }
            let max_chars = (max_tokens as usize).saturating_mul(4);
            Ok((cut::<X>(text, max_chars, CUT_MARKER), usage))
        }
        Answer::TextNotString { got } => Err(Failure::Failed(format!(
            "the summarizer returned an object whose text is {got}, not a string"
        ))),
        Answer::NotTextOrObject { got } => Err(Failure::Failed(format!(
            "the summarizer returned {got}, not a string or {{ text }}"
        ))),
        Answer::TimedOut { ms } => Err(Failure::Failed(timeout_message(ms))),
        Answer::Failed(message) => Err(Failure::Failed(message)),
        Answer::Aborted(a) => Err(Failure::Aborted(a)),
    }
}

/// The fallback rule: a failure (a timeout included) falls back to the
/// extractive summary when `fallback_extractive` (`Ok` with the failure's
/// message, the `fallbackReason`); a cancellation never does. Shared with
/// branch summaries.
pub fn fall_back<A>(failure: Failure<A>, fallback_extractive: bool) -> Result<String, Failure<A>> {
    match failure {
        Failure::Failed(message) if fallback_extractive => Ok(message),
        other => Err(other),
    }
}

/// What `summarizeBranch` rejects with when it failed.
pub fn branch_failed_message(message: &str) -> String {
    format!("Branch summary failed: {message}")
}

/// What `compact()` does when the preparation finds nothing to summarize.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NothingToDo {
    /// Automatic compaction: resolve to `undefined` (a no-op).
    Resolve,
    /// `manual`: reject with this message.
    Reject(&'static str),
}

/// `context_tokens`: the estimates of the context's messages, as the
/// preparation measured them, `keep` keepRecentTokens on the same scale: a
/// context larger than that had
/// nothing to summarize because the newest messages to keep reach back to
/// its start (a message, a huge paste say, is never split).
pub fn nothing_to_do(
    reason: Reason,
    ends_with_summary: bool,
    context_tokens: f64,
    keep: f64,
) -> NothingToDo {
    match (reason, ends_with_summary) {
        (Reason::Manual, true) => {
            NothingToDo::Reject("Already compacted: the last message is a summary")
        }
        (Reason::Manual, false) if context_tokens <= keep => {
            NothingToDo::Reject("Nothing to compact: the conversation fits in keepRecentTokens")
        }
        (Reason::Manual, false) => NothingToDo::Reject(
            "Nothing to compact: the newest messages keepRecentTokens keeps reach back to the \
             start of the context (a message is never split); reduce keepRecentTokens",
        ),
        _ => NothingToDo::Resolve,
    }
}

/// How a `compact()` ended, for its `compaction_end` event.
pub enum Ending<'a, A> {
    Compacted,
    NothingToDo,
    Failed(&'a Failure<A>),
}

/// The `compaction_end` event's fields besides the result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndEvent {
    pub aborted: bool,
    pub will_retry: bool,
    pub error_message: Option<String>,
}

/// The end event of a compaction for `reason`. A failed compaction
/// rejects with the same message it reports.
pub fn end_event<A>(reason: Reason, will_retry: bool, ending: Ending<'_, A>) -> EndEvent {
    let plain = |error_message| EndEvent {
        aborted: false,
        will_retry: false,
        error_message,
    };
    match ending {
        Ending::Compacted => EndEvent {
            aborted: false,
            will_retry,
            error_message: None,
        },
        // After an overflow nothing to summarize leaves the request
        // failing, so say why.
        Ending::NothingToDo => plain((reason == Reason::Overflow).then(|| {
            format!(
                "{}nothing to summarize: the recent messages kept by keepRecentTokens \
                 alone do not fit; reduce keepRecentTokens or switch to a larger-context model",
                reason.error_prefix()
            )
        })),
        Ending::Failed(Failure::Aborted(_) | Failure::Cancelled) => EndEvent {
            aborted: true,
            will_retry: false,
            error_message: None,
        },
        Ending::Failed(Failure::Failed(message)) => {
            plain(Some(format!("{}{}", reason.error_prefix(), message)))
        }
        Ending::Failed(Failure::Input(e)) => plain(Some(format!("{}{e}", reason.error_prefix()))),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
