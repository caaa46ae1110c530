//! The objects the compaction API hands to JavaScript, laid out by the core
//! ([`Shape`]: fields in order, which are left out): what `compact`
//! resolves to and the summary it inserts, the events `onEvent` receives,
//! `prepareCompaction`'s and `findCutPoint`'s results, the summarizer's
//! request, `beforeCompact`'s event, the branch summary, the clearing
//! tier's marker, divider, placeholder and result. The binding passes the
//! caller's own values through as `V` and converts the shape once.

use crate::compaction::clearing::{ClearingPlan, DIVIDER_ROLE, MARKER_ROLE};
use crate::compaction::flow::{Insert, Request, SummarizedBy, UsageOut, UsageTotals};
use crate::compaction::prepare::Preparation;
use crate::compaction::settings::CompactionSettings;
use crate::js::shape::{Field, Shape};
use crate::tokens::context_tokens::ContextTokens;

use Field::{Bool, Number, Object, Str, Value};

/// A usage object from the totals of several calls.
pub fn usage<V>(t: &UsageTotals) -> Shape<V> {
    let c = &t.cost;
    Shape(vec![
        ("input", Number(t.input)),
        ("output", Number(t.output)),
        ("cacheRead", Number(t.cache_read)),
        ("cacheWrite", Number(t.cache_write)),
        ("totalTokens", Number(t.total_tokens)),
        (
            "cost",
            Object(Shape(vec![
                ("input", Number(c.input)),
                ("output", Number(c.output)),
                ("cacheRead", Number(c.cache_read)),
                ("cacheWrite", Number(c.cache_write)),
                ("total", Number(c.total)),
            ])),
        ),
    ])
}

/// Resolved settings (`resolveSettings`, `compactor.settings`, a preparation's).
pub fn settings<V>(s: &CompactionSettings) -> Shape<V> {
    Shape(vec![
        ("enabled", Bool(s.enabled)),
        ("reserveTokens", Number(s.reserve_tokens as f64)),
        ("keepRecentTokens", Number(s.keep_recent_tokens as f64)),
    ])
}

/// A context's tokens (`estimateContextTokens`,
/// `compactor.contextTokenEstimate`): `lastUsageIndex` is `null` when no
/// usage counts.
pub fn context_tokens<V>(c: &ContextTokens) -> Shape<V> {
    Shape(vec![
        ("tokens", Number(c.tokens)),
        ("usageTokens", Number(c.usage_tokens)),
        ("trailingTokens", Number(c.trailing_tokens)),
        (
            "lastUsageIndex",
            c.last_usage_index.map_or(Field::Null, Field::count),
        ),
    ])
}

/// A summary's `details`: the files read and modified.
pub fn file_details<V>(read: V, modified: V) -> Shape<V> {
    Shape(vec![
        ("readFiles", Value(read)),
        ("modifiedFiles", Value(modified)),
    ])
}

/// What the result of a summary adds around the message (see [`compaction_result`]).
pub struct SummaryOutcome {
    pub tokens_before: f64,
    pub tokens_after: f64,
    pub summarized_by: SummarizedBy,
    pub fallback_reason: Option<String>,
}

/// The `compactionSummary` message `insert` adds: the hook's `details`, else
/// the preparation's file lists (`files`); `usage` when there is one (one
/// call's as given, several calls' added up); `fromHook` only when true.
pub fn compaction_summary<V, T: Into<V>>(
    insert: Insert<T, V, V>,
    files: impl FnOnce() -> (V, V),
) -> (Shape<V>, SummaryOutcome) {
    let details = match insert.details {
        Some(d) => Value(d),
        None => {
            let (read, modified) = files();
            Object(file_details(read, modified))
        }
    };
    let mut s = Shape(vec![
        ("role", Str("compactionSummary")),
        ("summary", Value(insert.text.into())),
        ("timestamp", Number(insert.timestamp)),
        ("tokensBefore", Number(insert.tokens_before)),
        ("keptMessages", Field::count(insert.kept_messages)),
        ("details", details),
    ]);
    s.push_some(
        "usage",
        insert.usage.map(|u| match u {
            UsageOut::One(u) => Value(u),
            UsageOut::Sum(t) => Object(usage(&t)),
        }),
    );
    s.push_some("fromHook", insert.from_hook.then_some(Bool(true)));
    let outcome = SummaryOutcome {
        tokens_before: insert.tokens_before,
        tokens_after: insert.tokens_after,
        summarized_by: insert.summarized_by,
        fallback_reason: insert.fallback_reason,
    };
    (s, outcome)
}

/// What `compact` resolves to after a summary was inserted at `first_kept_index`.
pub fn compaction_result<V>(
    messages: V,
    summary: V,
    outcome: SummaryOutcome,
    first_kept_index: usize,
) -> Shape<V> {
    let mut s = Shape(vec![
        ("messages", Value(messages)),
        ("summary", Value(summary)),
        ("tokensBefore", Number(outcome.tokens_before)),
        ("tokensAfter", Number(outcome.tokens_after)),
        ("firstKeptIndex", Field::count(first_kept_index)),
        ("summarizedBy", Str(outcome.summarized_by.name())),
        ("tier", Str("summarize")),
    ]);
    s.push_some("fallbackReason", outcome.fallback_reason.map(Field::String));
    s
}

/// A `hook_error` event.
pub fn hook_error_event<V>(hook: &'static str, error: V) -> Shape<V> {
    Shape(vec![
        ("type", Str("hook_error")),
        ("hook", Str(hook)),
        ("error", Value(error)),
    ])
}

/// A `compaction_start` event.
pub fn compaction_start_event<V>(reason: &'static str, background: bool) -> Shape<V> {
    let mut shape = Shape(vec![
        ("type", Str("compaction_start")),
        ("reason", Str(reason)),
    ]);
    // Only a compaction in the background says so (pi's event has no such field).
    if background {
        shape.push("background", Bool(true));
    }
    shape
}

/// A `compaction_end` event (also `attach`'s recovery failure):
/// `errorMessage`, `tier` (the result's: `"clear"` or `"summarize"`) and
/// `quietUntil` (the stall rule's, [`super::stall`]) are left out when
/// there is none.
pub fn compaction_end_event<V>(
    reason: &'static str,
    result: V,
    aborted: bool,
    will_retry: bool,
    error_message: Option<&str>,
    tier: Option<String>,
    quiet_until: Option<f64>,
) -> Shape<V> {
    let mut s = Shape(vec![
        ("type", Str("compaction_end")),
        ("reason", Str(reason)),
        ("result", Value(result)),
        ("aborted", Bool(aborted)),
        ("willRetry", Bool(will_retry)),
    ]);
    s.push_some(
        "errorMessage",
        error_message.map(|m| Field::String(m.into())),
    );
    s.push_some("tier", tier.map(Field::String));
    s.push_some("quietUntil", quiet_until.map(Field::Number));
    s
}

/// A `save_error` event (`attach` with a store).
pub fn save_error_event<V>(error: V) -> Shape<V> {
    Shape(vec![("type", Str("save_error")), ("error", Value(error))])
}

/// The caller's own arrays and strings of a preparation.
pub struct PreparedValues<V> {
    pub messages_to_summarize: V,
    pub turn_prefix_messages: V,
    pub previous_summary: Option<V>,
    /// `read`, `written`, `edited`.
    pub file_ops: [V; 3],
}

/// What `prepareCompaction` returns (and `beforeCompact`'s `preparation`):
/// `previousSummary` present and `undefined` when there is none.
pub fn preparation<V>(
    plan: &Preparation,
    values: PreparedValues<V>,
    settings: Field<V>,
) -> Shape<V> {
    let [read, written, edited] = values.file_ops;
    Shape(vec![
        ("firstKeptIndex", Field::count(plan.first_kept_index)),
        ("messagesToSummarize", Value(values.messages_to_summarize)),
        ("turnPrefixMessages", Value(values.turn_prefix_messages)),
        ("isSplitTurn", Bool(plan.is_split_turn)),
        ("tokensBefore", Number(plan.tokens_before)),
        (
            "previousSummary",
            Field::or_undefined(values.previous_summary),
        ),
        (
            "fileOps",
            Object(Shape(vec![
                ("read", Value(read)),
                ("written", Value(written)),
                ("edited", Value(edited)),
            ])),
        ),
        ("settings", settings),
    ])
}

/// What `findCutPoint` returns, its indexes counted from `offset` (the
/// range's start); no turn start is `-1`.
pub fn cut_point<V>(
    first_kept_index: usize,
    turn_start_index: Option<usize>,
    is_split_turn: bool,
    offset: usize,
) -> Shape<V> {
    let at = |i: usize| (i + offset) as f64;
    Shape(vec![
        ("firstKeptIndex", Number(at(first_kept_index))),
        ("turnStartIndex", Number(turn_start_index.map_or(-1.0, at))),
        ("isSplitTurn", Bool(is_split_turn)),
    ])
}

/// One request to the app's summarizer (`signal`: the compaction's).
pub fn summarizer_request<V, T: Into<V>>(
    request: Request<T>,
    signal: V,
    reason: &'static str,
    context: Option<V>,
    covered: Option<V>,
) -> Shape<V> {
    let mut shape = Shape(vec![
        ("kind", Str(request.kind.name())),
        ("systemPrompt", Str(request.system_prompt)),
        ("prompt", Value(request.prompt.into())),
        ("maxTokens", Number(request.max_tokens as f64)),
        ("signal", Value(signal)),
        ("reason", Str(reason)),
    ]);
    // The prefix form: the conversation and the instruction to send after it.
    if let (Some(context), Some(instruction)) = (context, request.instruction) {
        shape.push("context", Value(context));
        shape.push("instruction", Value(instruction.into()));
    }
    // For a summarizer asked once (`oneRequest`): the messages it covers.
    shape.push_some("covered", covered.map(Value));
    shape
}

/// A summary request's `context`: the conversation as the model last saw
/// it (pi-ai's `Context`), with the system prompt and tools the app gave
/// (each left out when not given).
pub fn summary_context<V>(system_prompt: Option<V>, messages: V, tools: Option<V>) -> Shape<V> {
    let mut shape = Shape(Vec::new());
    shape.push_some("systemPrompt", system_prompt.map(Value));
    shape.push("messages", Value(messages));
    shape.push_some("tools", tools.map(Value));
    shape
}

/// `beforeCompact`'s event: `customInstructions` present and `undefined`
/// when there are none.
pub fn before_compact_event<V>(
    preparation: Shape<V>,
    messages: V,
    reason: &'static str,
    custom_instructions: Option<V>,
    will_retry: bool,
    signal: V,
) -> Shape<V> {
    Shape(vec![
        ("preparation", Object(preparation)),
        ("messages", Value(messages)),
        ("reason", Str(reason)),
        (
            "customInstructions",
            Field::or_undefined(custom_instructions),
        ),
        ("willRetry", Bool(will_retry)),
        ("signal", Value(signal)),
    ])
}

/// The `branchSummary` message `summarizeBranch` resolves to: `fromId` only
/// when given (and not `undefined`), `usage` only when the summarizer gave one.
pub fn branch_summary<V>(
    text: V,
    from_id: Option<V>,
    timestamp: f64,
    details: Shape<V>,
    usage: Option<V>,
) -> Shape<V> {
    let mut s = Shape(vec![
        ("role", Str("branchSummary")),
        ("summary", Value(text)),
    ]);
    s.push_some("fromId", from_id.map(Value));
    s.push("timestamp", Number(timestamp));
    s.push("details", Object(details));
    s.push_some("usage", usage.map(Value));
    s
}

/// The `toolOutputCleared` marker a clearing inserts (`ids`: the cleared
/// results' `toolCallId`s, `tokens` their estimates, in the same order).
pub fn clearing_marker<V>(ids: V, tokens: &[u64], tokens_freed: u64, timestamp: f64) -> Shape<V> {
    Shape(vec![
        ("role", Str(MARKER_ROLE)),
        ("toolCallIds", Value(ids)),
        (
            "outputTokens",
            Field::List(tokens.iter().map(|&t| Number(t as f64)).collect()),
        ),
        ("tokensFreed", Number(tokens_freed as f64)),
        ("timestamp", Number(timestamp)),
    ])
}

/// What a threshold compaction resolves to when clearing was enough.
pub fn clearing_result<V>(messages: V, marker: V, plan: &ClearingPlan, ids: V) -> Shape<V> {
    Shape(vec![
        ("messages", Value(messages)),
        ("tier", Str("clear")),
        ("marker", Value(marker)),
        ("tokensBefore", Number(plan.tokens_before)),
        ("tokensAfter", Number(plan.tokens_after)),
        ("tokensFreed", Number(plan.tokens_freed as f64)),
        ("toolCallIds", Value(ids)),
        ("markerIndex", Field::count(plan.insert_at)),
    ])
}

/// What the user sees of a marker (`divider: true`).
pub fn clearing_divider<V>(tokens_freed: V, tool_count: usize, timestamp: V) -> Shape<V> {
    Shape(vec![
        ("role", Str(DIVIDER_ROLE)),
        ("tokensFreed", Value(tokens_freed)),
        ("toolCount", Field::count(tool_count)),
        ("timestamp", Value(timestamp)),
    ])
}

/// The tool result `convertToLlm` sends for a cleared output: one text
/// block (`text`, the placeholder), the original's id, name, error flag
/// (as a boolean) and timestamp.
pub fn cleared_placeholder<V>(id: V, name: V, text: V, is_error: bool, timestamp: V) -> Shape<V> {
    let block = Shape(vec![("type", Str("text")), ("text", Value(text))]);
    Shape(vec![
        ("role", Str("toolResult")),
        ("toolCallId", Value(id)),
        ("toolName", Value(name)),
        ("content", Field::List(vec![Object(block)])),
        ("isError", Bool(is_error)),
        ("timestamp", Value(timestamp)),
    ])
}

/// `attach`'s `onStateChange` argument: `lastTier` only once a compaction
/// has resolved. `running`: a compaction runs; `in_background`: it is one
/// in the background, which nobody waits for, so the state says so apart
/// from `isCompacting` (the input stays enabled).
pub fn attach_state<V>(
    running: bool,
    in_background: bool,
    context_tokens: f64,
    last_tier: Option<V>,
) -> Shape<V> {
    let mut s = Shape(vec![
        ("isCompacting", Bool(running && !in_background)),
        ("isCompactingInBackground", Bool(in_background)),
        ("contextTokens", Number(context_tokens)),
    ]);
    s.push_some("lastTier", last_tier.map(Value));
    s
}

#[cfg(test)]
mod tests;
