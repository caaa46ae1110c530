//! The cheap first tier: clearing old tool output without an LLM call.
//!
//! Before a summarizer is asked, an automatic (`threshold`) compaction may
//! clear the output of old tool results instead. Nothing is deleted: one
//! `toolOutputCleared` marker is appended to the flat array (where the
//! array ended when the clearing was made, so that what comes after it by
//! position came after the clearing),
//!
//! ```text
//! { role: "toolOutputCleared", toolCallIds: string[], outputTokens: number[],
//!   tokensFreed: number, timestamp: number }
//! ```
//!
//! and from then on `convertToLlm` sends each listed tool result that stands
//! before the marker as a short placeholder tool result (same `toolCallId`
//! and `toolName`, so the provider's tool-call pairing stays valid) whose
//! text names the tool and the size cleared ([`placeholder_text`]). The
//! marker itself is never sent; the user sees it as a small divider.
//!
//! What is decided here, natively tested:
//! - the settings ([`resolve_clearing`]: `settings.toolOutputClearing`);
//! - which tool results to clear ([`plan_clearing`]): walking back from the
//!   end of the context (the last summary on), the last `protectTurns` user
//!   turns are never cleared; before them the newest `protectTokens` of
//!   tool output are kept; every older tool result is cleared, except those
//!   pinned (`pinned: true`), those of a tool named in `neverClear`, those
//!   already cleared and those without a `toolCallId` string. Pinned,
//!   never-cleared and already cleared outputs do not count toward the
//!   protected tokens (as OpenCode's `prune` skips its protected tools).
//!   A marker names outputs by `toolCallId` and clears every one before it
//!   with a listed id, so an output whose id another output the model is
//!   sent whole shares (a provider that reuses ids) is not cleared either.
//!   Every candidate is cleared at once (not just enough to get under the
//!   threshold): one marker, and the provider's prompt cache is broken once
//!   rather than at every later turn;
//! - how much that frees (each output's estimate, in the compactor's
//!   estimator scaled by its usage ratio, minus its placeholder's tokens),
//!   and whether it is worth it (at least `minFreedTokens`) and enough
//!   (the context then at or under the threshold) — [`ClearingPlan`];
//! - which tier runs ([`tries_clearing`]);
//! - how a marker counts in the context tokens
//!   ([`marker_counts`](crate::tokens::context_tokens::marker_counts)): usage
//!   reported before the clearing still includes the cleared outputs, so
//!   what a marker freed is subtracted until an assistant message after it
//!   in the array reports usage (that usage already reflects the
//!   placeholders). Decided by position, never by comparing timestamps;
//! - which tool results `convertToLlm` replaces ([`ClearedOutputs`]).

use crate::compaction::reason::Reason;
use crate::compaction::serialize::describe;
use crate::compaction::settings::{resolve_settings, CompactionSettings, SettingsError};
use crate::js::json::Json;
use crate::js::number::{integer_to_string, number_to_string};
use crate::js::options::token_count_of;
use crate::js::string::JsStr;
use crate::message::llm::TextSink;
use crate::message::role::Role;

/// The marker's role.
pub const MARKER_ROLE: &str = "toolOutputCleared";

/// What the marker becomes in `agentMessagesToChatMessages(…, { divider: true })`.
pub const DIVIDER_ROLE: &str = "toolOutputClearedDivider";

/// The `customType` of the `custom` entry a marker is written as in a pi
/// session file (pi leaves `custom` entries out of the model's context).
pub const CUSTOM_TYPE: &str = "agent-compaction.toolOutputCleared";

/// `settings.toolOutputClearing`, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClearingSettings {
    /// Automatic (`threshold`) compactions try clearing first.
    pub enabled: bool,
    /// The newest tool output kept, in tokens (before the protected turns).
    pub protect_tokens: u64,
    /// Clearing happens only when it frees at least this many tokens.
    pub min_freed_tokens: u64,
    /// The last this-many user turns are never cleared.
    pub protect_turns: u64,
    /// Tools whose output is never cleared, by name (exact match).
    pub never_clear: Vec<JsStr>,
}

/// The anchors' defaults (OpenCode's `prune`: 40,000 protected, 20,000
/// minimum, the last two turns).
pub const DEFAULT_PROTECT_TOKENS: u64 = 40_000;
pub const DEFAULT_MIN_FREED_TOKENS: u64 = 20_000;
pub const DEFAULT_PROTECT_TURNS: u64 = 2;

impl Default for ClearingSettings {
    fn default() -> Self {
        ClearingSettings {
            enabled: true,
            protect_tokens: DEFAULT_PROTECT_TOKENS,
            min_freed_tokens: DEFAULT_MIN_FREED_TOKENS,
            protect_turns: DEFAULT_PROTECT_TURNS,
            never_clear: Vec::new(),
        }
    }
}

const FIELD: &str = "settings.toolOutputClearing";

/// Reads `settings.toolOutputClearing` from the compaction settings object:
/// missing or `null` is the defaults, `false`/`true` switch it off/on with
/// the default numbers, an object sets fields (missing or `null` fields take
/// their defaults; unknown keys are ignored, as in the other settings).
pub fn resolve_clearing(settings: Option<&Json>) -> Result<ClearingSettings, SettingsError> {
    let mut out = ClearingSettings::default();
    let value = match settings {
        Some(Json::Object(o)) => o.get("toolOutputClearing"),
        // Anything else is reported by `resolve_settings`.
        _ => None,
    };
    let o = match value {
        None | Some(Json::Null) => return Ok(out),
        Some(Json::Bool(b)) => {
            out.enabled = *b;
            return Ok(out);
        }
        Some(Json::Object(o)) => o,
        Some(other) => {
            return Err(SettingsError::WrongType {
                field: FIELD.into(),
                expected: "an object or a boolean",
                got: describe(Some(other)),
            })
        }
    };
    match o.get("enabled") {
        None | Some(Json::Null) => {}
        Some(Json::Bool(b)) => out.enabled = *b,
        Some(other) => {
            return Err(SettingsError::WrongType {
                field: format!("{FIELD}.enabled"),
                expected: "a boolean",
                got: describe(Some(other)),
            })
        }
    }
    let count = |name: &str, default: u64| -> Result<u64, SettingsError> {
        match o.get(name) {
            None | Some(Json::Null) => Ok(default),
            Some(Json::Number(x)) => {
                token_count_of(*x).ok_or_else(|| SettingsError::NotATokenCount {
                    field: format!("{FIELD}.{name}"),
                    got: number_to_string(*x),
                })
            }
            Some(other) => Err(SettingsError::WrongType {
                field: format!("{FIELD}.{name}"),
                expected: "a non-negative safe integer",
                got: describe(Some(other)),
            }),
        }
    };
    out.protect_tokens = count("protectTokens", DEFAULT_PROTECT_TOKENS)?;
    out.min_freed_tokens = count("minFreedTokens", DEFAULT_MIN_FREED_TOKENS)?;
    out.protect_turns = count("protectTurns", DEFAULT_PROTECT_TURNS)?;
    match o.get("neverClear") {
        None | Some(Json::Null) => {}
        Some(Json::Array(names)) => {
            for (i, name) in names.iter().enumerate() {
                match name {
                    Json::String(s) => out.never_clear.push(s.clone()),
                    other => {
                        return Err(SettingsError::WrongType {
                            field: format!("{FIELD}.neverClear[{i}]"),
                            expected: "a string",
                            got: describe(Some(other)),
                        })
                    }
                }
            }
        }
        Some(other) => {
            return Err(SettingsError::WrongType {
                field: format!("{FIELD}.neverClear"),
                expected: "an array of tool names",
                got: describe(Some(other)),
            })
        }
    }
    Ok(out)
}

/// The one reader of a settings object: the compaction settings
/// ([`resolve_settings`]) and the clearing tier's ([`resolve_clearing`]),
/// both validated, so that `resolveSettings` and the Compactor accept and
/// refuse the same objects.
pub fn resolve_all(
    settings: Option<&Json>,
    model_key: Option<&JsStr>,
    context_window: Option<f64>,
) -> Result<(CompactionSettings, ClearingSettings), SettingsError> {
    let resolved = resolve_settings(settings, model_key, context_window)?;
    Ok((resolved, resolve_clearing(settings)?))
}

/// Whether a compaction for `reason` tries clearing before summarizing.
///
/// Only automatic threshold compactions do: the context is merely getting
/// full, and a cheap, lossless-for-the-conversation step may be enough.
/// A manual `compact()` is the user asking for a summary, and an overflow
/// recovery must surely fit on its one retry: both summarize straight away
/// (and clearing would rarely be enough there anyway).
pub fn tries_clearing(reason: Reason, settings: &ClearingSettings) -> bool {
    settings.enabled && reason == Reason::Threshold
}

/// What the decision reads of a tool result, lazily (only for tool results
/// outside the protected turns).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput<N> {
    /// `toolCallId`, when it is a string (without one it cannot be listed).
    pub has_id: bool,
    /// `toolName` (matched against `neverClear`), when it is a string.
    pub tool_name: Option<N>,
    /// `pinned === true`: never cleared.
    pub pinned: bool,
    /// Listed by a marker in the context already.
    pub already_cleared: bool,
}

/// One tool result to clear.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClearedOutput {
    /// Its index in the array.
    pub index: usize,
    /// Its estimated tokens (what the placeholder says).
    pub tokens: u64,
    /// What clearing it frees: `tokens` less the placeholder's.
    pub freed: u64,
}

/// What clearing would do.
#[derive(Clone, Debug, PartialEq)]
pub struct ClearingPlan {
    /// Oldest first.
    pub cleared: Vec<ClearedOutput>,
    pub tokens_freed: u64,
    /// Where the marker goes: at the end of the array.
    pub insert_at: usize,
    pub tokens_before: f64,
    pub tokens_after: f64,
    /// At least `minFreedTokens` freed.
    pub worth_it: bool,
    /// The context is then at or under the threshold: no summary needed.
    pub enough: bool,
}

/// The tokens of the placeholder that replaces an output of `tokens`
/// (pi's 4 characters a token over its text; `name_len` in UTF-16 units).
pub fn placeholder_tokens(name_len: usize, tokens: Option<u64>) -> u64 {
    let mut len = PLACEHOLDER_OPEN.len() + name_len;
    len += match tokens {
        Some(t) => PLACEHOLDER_SIZE.len() + thousands(t).len() + PLACEHOLDER_UNIT.len(),
        None => PLACEHOLDER_CLOSE.len(),
    };
    (len as u64).div_ceil(4)
}

/// What the tier of a threshold compaction decides from, copied out of the
/// compactor's index ([`Tracker::clearing_tier`]) so that the messages are
/// read with no borrow of the compactor held: the context's roles and
/// estimates from `start` (the last summary, or 0), the ratio they are
/// scaled by, the context tokens, the threshold and the settings.
///
/// [`Tracker::clearing_tier`]: crate::conversation::tracker::Tracker::clearing_tier
#[derive(Clone, Debug, PartialEq)]
pub struct ClearingTier {
    pub start: usize,
    /// The tool results before `start` the model is sent (pinned ones,
    /// re-sent after the summary), ascending.
    pub resent_results: Vec<usize>,
    pub roles: Vec<Role>,
    pub tokens: Vec<u64>,
    pub ratio: f64,
    pub context_tokens: f64,
    pub threshold: f64,
    pub settings: ClearingSettings,
}

impl ClearingTier {
    /// [`plan_clearing`] on what was copied; a tool is never cleared when
    /// its name's UTF-16 units (`units(name)`) are in `neverClear`.
    pub fn plan<N, K: Ord, E>(
        &self,
        read: impl FnMut(usize) -> Result<ToolOutput<N>, E>,
        whole_id: impl FnMut(usize) -> Result<Option<K>, E>,
        units: impl Fn(&N) -> Vec<u16>,
        name_len: impl Fn(Option<&N>) -> usize,
    ) -> Result<ClearingPlan, E> {
        let never = &self.settings.never_clear;
        plan_clearing(
            self.start,
            &self.resent_results,
            &self.roles,
            &self.tokens,
            self.ratio,
            self.context_tokens,
            self.threshold,
            &self.settings,
            read,
            whole_id,
            |name| {
                let units = units(name);
                never.iter().any(|n| n.as_units() == units.as_slice())
            },
            name_len,
        )
    }
}

/// Decides which tool results of the context to clear.
///
/// `roles` and `tokens` are the context's messages from `start` (the last
/// summary, or 0) to the end; `tokens[i]` is message `start + i`'s estimate
/// (measured). `read(index)` reads a tool result's [`ToolOutput`] (asked
/// only for tool results outside the protected turns, newest first);
/// `name_len` measures a tool name. `ratio` scales estimates to the
/// provider's tokens (the compactor's usage ratio, 1 with pi's estimate).
///
/// A marker clears every tool result before it whose `toolCallId` it
/// lists, so once there are candidates, `whole_id(index)` is asked for
/// each tool result the model is sent (`resent_results` before `start`,
/// then the context's): its id when it is sent whole (it has one and no
/// marker cleared it yet). A candidate whose id a tool result that stays
/// whole shares is not cleared.
#[allow(clippy::too_many_arguments)]
pub fn plan_clearing<N, K: Ord, E>(
    start: usize,
    resent_results: &[usize],
    roles: &[Role],
    tokens: &[u64],
    ratio: f64,
    context_tokens: f64,
    threshold: f64,
    settings: &ClearingSettings,
    mut read: impl FnMut(usize) -> Result<ToolOutput<N>, E>,
    mut whole_id: impl FnMut(usize) -> Result<Option<K>, E>,
    is_never_cleared: impl Fn(&N) -> bool,
    name_len: impl Fn(Option<&N>) -> usize,
) -> Result<ClearingPlan, E> {
    let scaled = |t: u64| -> u64 {
        if ratio == 1.0 {
            t
        } else {
            (t as f64 * ratio).ceil() as u64
        }
    };
    // Where the protected turns start: the `protect_turns`-th user message
    // from the end (everything from it on is protected).
    let mut users = 0u64;
    let mut protected_from = roles.len();
    if settings.protect_turns > 0 {
        for i in (0..roles.len()).rev() {
            if roles[i] == Role::User {
                users += 1;
                protected_from = i;
                if users == settings.protect_turns {
                    break;
                }
            }
        }
        // Fewer user turns than protected: everything is protected.
        if users < settings.protect_turns {
            protected_from = 0;
        }
    }
    let mut kept_output = 0u64;
    let mut cleared = Vec::new();
    for i in (0..protected_from).rev() {
        if roles[i] != Role::ToolResult {
            continue;
        }
        let out = read(start + i)?;
        if out.pinned
            || out.already_cleared
            || !out.has_id
            || out.tool_name.as_ref().is_some_and(&is_never_cleared)
        {
            continue;
        }
        let t = scaled(tokens[i]);
        kept_output = kept_output.saturating_add(t);
        if kept_output <= settings.protect_tokens {
            continue;
        }
        let placeholder = placeholder_tokens(name_len(out.tool_name.as_ref()), Some(t));
        cleared.push(ClearedOutput {
            index: start + i,
            tokens: t,
            freed: t.saturating_sub(placeholder),
        });
    }
    cleared.reverse();
    if !cleared.is_empty() {
        cleared = without_shared_ids(
            cleared,
            resent_results.iter().copied().chain(
                (0..roles.len())
                    .filter(|&i| roles[i] == Role::ToolResult)
                    .map(|i| start + i),
            ),
            &mut whole_id,
        )?;
    }
    let tokens_freed = cleared.iter().map(|c| c.freed).sum::<u64>();
    let tokens_after = (context_tokens - tokens_freed as f64).max(0.0);
    let worth_it = !cleared.is_empty() && tokens_freed >= settings.min_freed_tokens;
    Ok(ClearingPlan {
        insert_at: start + roles.len(),
        cleared,
        tokens_freed,
        tokens_before: context_tokens,
        tokens_after,
        worth_it,
        // `shouldCompact` is `tokens > threshold`: at it is fine.
        enough: worth_it && tokens_after <= threshold,
    })
}

/// `cleared` (ascending indices) without the outputs whose id a tool result
/// among `sent` (ascending) that is not in `cleared` and is sent whole
/// shares (`whole_id`: its id when it is sent whole).
fn without_shared_ids<K: Ord, E>(
    cleared: Vec<ClearedOutput>,
    sent: impl Iterator<Item = usize>,
    whole_id: &mut impl FnMut(usize) -> Result<Option<K>, E>,
) -> Result<Vec<ClearedOutput>, E> {
    let mut ids = Vec::with_capacity(cleared.len());
    let mut staying = Vec::new();
    for i in sent {
        let Some(id) = whole_id(i)? else { continue };
        if cleared.binary_search_by(|c| c.index.cmp(&i)).is_ok() {
            ids.push((i, id));
        } else {
            staying.push(id);
        }
    }
    if staying.is_empty() {
        return Ok(cleared);
    }
    staying.sort_unstable();
    let shared: Vec<usize> = ids
        .into_iter()
        .filter(|(_, id)| staying.binary_search(id).is_ok())
        .map(|(i, _)| i)
        .collect();
    Ok(cleared
        .into_iter()
        .filter(|c| shared.binary_search(&c.index).is_err())
        .collect())
}

/// Where the last compaction of either tier is (a `compactionSummary` or a
/// `toolOutputCleared` marker), walking back from the end: what
/// `removeLastCompaction` takes out to undo it.
pub fn last_undoable_index<E>(
    len: usize,
    mut role_at: impl FnMut(usize) -> Result<Role, E>,
) -> Result<Option<usize>, E> {
    for i in (0..len).rev() {
        if matches!(
            role_at(i)?,
            Role::CompactionSummary | Role::ToolOutputCleared
        ) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

const PLACEHOLDER_OPEN: &str = "[Output of ";
const PLACEHOLDER_SIZE: &str = " cleared to save context: ~";
const PLACEHOLDER_UNIT: &str = " tokens]";
const PLACEHOLDER_CLOSE: &str = " cleared to save context]";

/// The text of the placeholder a cleared output is sent as:
/// `[Output of read cleared to save context: ~12,400 tokens]` (without the
/// size when the marker does not say it).
pub fn placeholder_text<S: TextSink>(
    out: &mut S,
    tool_name: Option<&S::Text>,
    tokens: Option<u64>,
) {
    out.literal(PLACEHOLDER_OPEN);
    match tool_name {
        Some(name) => out.text(name),
        None => out.literal("a tool"),
    }
    match tokens {
        Some(t) => {
            out.literal(PLACEHOLDER_SIZE);
            out.literal(&thousands(t));
            out.literal(PLACEHOLDER_UNIT);
        }
        None => out.literal(PLACEHOLDER_CLOSE),
    }
}

/// `12400` → `"12,400"`.
pub fn thousands(n: u64) -> String {
    let digits = integer_to_string(n);
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The tool results the markers of an array clear, for `convertToLlm`: a
/// tool result is replaced when a marker after it lists its `toolCallId`,
/// and the first such marker (the one that cleared it) gives its size.
/// Keys are the ids (UTF-16 code units, so any JavaScript string works).
#[derive(Debug)]
pub struct ClearedOutputs<K> {
    /// id → the markers listing it (index, the size it gives), ascending by
    /// index; sorted by id (a sorted `Vec`, not a `HashMap`: hashbrown and
    /// SipHash would cost the `.wasm` loaded at import kilobytes for a few
    /// dozen ids).
    by_id: Vec<(K, Vec<Listing>)>,
}

/// A marker listing an id: its index and the size it gives the output.
type Listing = (usize, Option<u64>);

impl<K> Default for ClearedOutputs<K> {
    fn default() -> Self {
        ClearedOutputs { by_id: Vec::new() }
    }
}

impl<K: Ord> ClearedOutputs<K> {
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Adds the marker at `index`: its ids and, when it has them, each
    /// output's tokens (a list of another length, or a value that is not a
    /// token count, gives no size). An id it lists twice keeps its first
    /// size.
    pub fn add_marker(&mut self, index: usize, ids: Vec<K>, tokens: Option<Vec<Option<u64>>>) {
        let tokens = tokens.filter(|t| t.len() == ids.len());
        for (k, id) in ids.into_iter().enumerate() {
            let size = tokens.as_ref().and_then(|t| t[k]);
            match self.by_id.binary_search_by(|(key, _)| key.cmp(&id)) {
                Ok(at) => {
                    let markers = &mut self.by_id[at].1;
                    if let Err(m) = markers.binary_search_by(|(i, _)| i.cmp(&index)) {
                        markers.insert(m, (index, size));
                    }
                }
                Err(at) => self.by_id.insert(at, (id, vec![(index, size)])),
            }
        }
    }

    /// The first marker after `index` listing `id`: (its index, the size).
    fn first_after(&self, id: &K, index: usize) -> Option<Listing> {
        let at = self.by_id.binary_search_by(|(key, _)| key.cmp(id)).ok()?;
        let markers = &self.by_id[at].1;
        markers
            .get(markers.partition_point(|&(m, _)| m <= index))
            .copied()
    }

    /// The tool result at `index` with this id is cleared: `Some(size)`.
    pub fn cleared(&self, id: &K, index: usize) -> Option<Option<u64>> {
        self.first_after(id, index).map(|(_, size)| size)
    }

    /// The index of the marker that clears the tool result at `index` with
    /// this id (the first one after it listing it).
    pub fn clearing_marker(&self, id: &K, index: usize) -> Option<usize> {
        self.first_after(id, index).map(|(marker, _)| marker)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
