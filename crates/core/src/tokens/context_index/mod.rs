//! What the compactor keeps about each message it has seen, so that each
//! turn costs only the new messages: a few numbers per message (never the
//! content) and running totals for the current LLM context.
//!
//! Some estimates are gathered lazily (`tokens_pending`: an assistant
//! message that reports usage has its tool-call arguments measured only if
//! its own estimate is ever needed; until then its `tokens` is an upper
//! bound found from sizes). Right after a summary is inserted, every kept
//! message's usage is stale (SPEC §3) and their estimates count; measuring
//! the pending ones (a `JSON.stringify` of each tool call's arguments) is
//! most of what such a turn would cost, and usually wasted: the next
//! assistant message reports fresh usage and the kept messages' estimates
//! stop counting. So the `*_bounded` edits leave them unmeasured, the
//! totals knowing how much they can add at most; [`ContextIndex::exceeds`]
//! measures them only when that leaves its answer open, and
//! [`ContextIndex::context_tokens_exact`] always.
//!
//! With the calibrated estimate (`push_deferred`) every message is pending,
//! its bound the most any text of its length could cost (2.1 tokens per
//! code unit, far above what text costs): `exceeds` then measures the
//! pending messages with the largest bounds first, one at a time, and stops
//! as soon as the answer is decided, so that the turn after a summary is
//! inserted reads one or two texts rather than every kept message. With
//! [`ContextIndex::exceeds_tightening_batched`] a message's bound is first tightened
//! (the calibrated estimate's bound from its texts' UTF-8 lengths, 1.115
//! tokens per byte: about half the length bound on ASCII, and some 30 times
//! cheaper to find than the estimate), and it is measured only if that does
//! not settle the answer.
//!
//! Self-correction ([`ContextIndex::self_correcting`]): the provider counts
//! with its own tokenizer, so the estimates after the last reported usage
//! are scaled by how the provider's counts compared with the estimates
//! before ([`ContextIndex::learn_ratio`]). The ratio is taken between the
//! first and the last fresh usage of the latest context that has two (the
//! later minus the earlier, over the estimate of the messages between
//! them; what the model read for each, so that reasoning it wrote and is
//! never sent again does not count): the provider's count includes the system prompt and the tool
//! definitions, which the messages' estimates know nothing of, and the
//! difference cancels them, where a plain ratio would read a large system
//! prompt as a tokenizer that counts 3× (and compact far too early). The
//! span must hold at least [`MIN_RATIO_SPAN`] estimated tokens (shorter is
//! mostly per-message framing and rounding), and the ratio is clamped to
//! [[`MIN_RATIO`], [`MAX_RATIO`]] so that a provider whose numbers are odd
//! (cache accounting, dropped thinking) cannot make the compactor act
//! wildly. It is learned when the estimates of the context are measured
//! anyway (a compaction fills them in to find the cut point), never per
//! turn: finding it needs every message of the span measured, which per
//! turn would read every text. It is kept until it is learned again (the
//! ratio of a provider's tokenizer to the estimate does not change with a
//! summary). The reported usage itself is never scaled (it is the
//! provider's own count); only the estimates after it are.
//!
//! Clearing markers: what a marker made after the last summary freed comes
//! off the context tokens until a usage reported after it (which saw the
//! placeholders). A marker the last summary kept (made before it) counts
//! otherwise: the outputs it cleared that the summary kept are estimated,
//! as every kept message is until a fresh usage, but sent as placeholders;
//! what that saves ([`ContextIndex::set_kept_cleared`], found by the tracker
//! from the messages' tool call ids) comes off while no fresh usage follows
//! the summary.
//!
//! A fresh usage counts only if it describes what is sent after the
//! messages it follows: not after an edit took out the summary or marker
//! it was reported with, nor when it is far below the usage that counted
//! before it (`counted`).
//!
//! Pinned messages ([`crate::message::pinned`]) before the last summary are
//! sent to the model right after it, so they count as if they stood there:
//! in the estimates while no fresh usage follows the summary (a fresh usage
//! already includes them, the provider having been sent them). Their
//! indices are kept in a [`PinnedSet`] as messages are added, so finding
//! them costs no scan.

use crate::message::pinned::PinnedSet;
use crate::message::role::Role;
use crate::tokens::context_tokens::{
    estimate_from_end, less_freed, marker_counts, ContextTokens, Stale,
};
use crate::tokens::estimate::MessageFacts;
use std::convert::Infallible;

#[derive(Clone, Debug)]
pub struct ContextIndex {
    facts: Vec<MessageFacts>,
    /// The last `compactionSummary`: where the LLM context starts.
    last_summary: Option<usize>,
    /// The newest assistant usage that counts (fresh: newer than the last
    /// summary), and the estimates of the context messages after it (those
    /// still pending not included).
    last_usage: Option<(usize, f64)>,
    trailing: u64,
    /// Pending messages among those after `last_usage`, left unmeasured by
    /// a `*_bounded` edit, and the sum of their bounds (saturating).
    unmeasured: u32,
    slack: u64,
    /// Scale the trailing estimates by the provider's reported usage.
    self_correcting: bool,
    /// The ratio the trailing estimates are scaled by (1 until learned;
    /// always 1 when not `self_correcting`).
    ratio: f64,
    /// The pinned messages' indices.
    pinned: PinnedSet,
    /// Where the `toolOutputCleared` markers are (few: one per clearing);
    /// what they freed is taken off the context tokens while it counts.
    markers: Vec<usize>,
    /// How much less than their estimates the tool results after the last
    /// summary that a marker it kept clears are sent as (their
    /// placeholders), unscaled; `None` until the tracker has found it for
    /// this summary (see [`ContextIndex::kept_markers`]).
    kept_cleared: Option<u64>,
    /// What the last summary is sent with besides its text (a note),
    /// counted with the summary's estimate.
    summary_note: u64,
}

impl Default for ContextIndex {
    fn default() -> Self {
        ContextIndex {
            facts: Vec::new(),
            last_summary: None,
            last_usage: None,
            trailing: 0,
            unmeasured: 0,
            slack: 0,
            self_correcting: false,
            ratio: 1.0,
            pinned: PinnedSet::default(),
            markers: Vec::new(),
            kept_cleared: None,
            summary_note: 0,
        }
    }
}

pub use counted::{implausible, MIN_USAGE_SHARE};

/// The ratio's bounds: the provider counts at most 2.5× and at least half
/// what the calibrated estimate says (o200k-like tokenizers ≈ 1; cl100k on
/// CJK and emoji ≈ 1.55; others in between), whatever its numbers claim.
pub const MIN_RATIO: f64 = 0.5;
pub const MAX_RATIO: f64 = 2.5;

/// The least estimate a ratio is taken over (tokens): shorter spans are
/// mostly per-message framing and rounding.
pub const MIN_RATIO_SPAN: u64 = 1000;

/// The share of a loose bound that tightening is expected to shed, for
/// sizing a batch ([`ContextIndex::exceeds_tightening_batched`]): the
/// calibrated estimate's byte bound is about half its length bound on
/// ASCII text (1.115 per byte against 2.1 per code unit) and far less on
/// tool-call arguments. Only the number of crossings depends on it.
pub const TIGHTENING_EXPECTED: f64 = 0.85;

/// Pending messages as `(bound, index)`, sorted (largest last).
type Queue = Vec<(u32, usize)>;

/// `tokens × ratio`, rounded up (exactly `tokens` when the ratio is 1).
fn scale(tokens: u64, ratio: f64) -> u64 {
    if ratio == 1.0 {
        tokens
    } else {
        (tokens as f64 * ratio).ceil() as u64
    }
}

/// The context tokens right after a summary is inserted, as the index
/// counts them then (no fresh usage follows the summary): `estimates` (the
/// summary's, the re-sent pinned messages' and the kept messages'), what
/// the summary is sent with besides its text (`note`), less what the kept
/// outputs a kept marker clears save (`kept_cleared`), each scaled by
/// `ratio` as the index scales it. A compaction's `tokensAfter`: the same
/// number `contextTokens` gives right after, on the same scale as the
/// `tokensBefore` it is compared with.
pub fn tokens_after_summary(estimates: u64, note: u64, kept_cleared: u64, ratio: f64) -> f64 {
    let sent = scale(estimates, ratio).saturating_add(scale(note, ratio));
    less_freed(sent as f64, scale(kept_cleared, ratio))
}

impl ContextIndex {
    pub fn len(&self) -> usize {
        self.facts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    /// An empty index whose trailing estimates are scaled by the provider's
    /// reported usage (see the module's doc).
    pub fn self_correcting() -> ContextIndex {
        ContextIndex {
            self_correcting: true,
            ..ContextIndex::default()
        }
    }

    /// The ratio the trailing estimates are scaled by.
    pub fn ratio(&self) -> f64 {
        self.ratio
    }

    pub fn facts(&self) -> &[MessageFacts] {
        &self.facts
    }

    /// Where the LLM context starts: the last summary, or the first message.
    pub fn context_start(&self) -> usize {
        self.last_summary.unwrap_or(0)
    }

    pub fn last_summary(&self) -> Option<usize> {
        self.last_summary
    }

    /// The pinned messages before the last summary, which the model is sent
    /// right after it (ascending indices; empty without a summary).
    pub fn resent(&self) -> &[usize] {
        self.last_summary.map_or(&[][..], |s| self.pinned.before(s))
    }

    /// The pinned messages before `at`, ascending (with `at` a cut point:
    /// the ones the model is sent after a summary inserted there).
    pub fn pinned_before(&self, at: usize) -> &[usize] {
        self.pinned.before(at)
    }

    /// The clearing markers from `at` on, ascending.
    pub fn markers_from(&self, at: usize) -> &[usize] {
        &self.markers[self.markers.partition_point(|&m| m < at)..]
    }

    /// The markers the last summary kept (made before it, so what they
    /// freed does not count as a whole: see the module's doc), ascending;
    /// none without a summary.
    pub fn kept_markers(&self) -> Vec<usize> {
        let Some(summary) = self.last_summary else {
            return Vec::new();
        };
        let stale = self.stale();
        self.markers_from(summary + 1)
            .iter()
            .copied()
            .filter(|&m| !stale.is_fresh(m, &self.facts[m]))
            .collect()
    }

    /// Whether what the kept markers clear is still to be found for the
    /// last summary ([`set_kept_cleared`](Self::set_kept_cleared)).
    pub fn kept_cleared_unknown(&self) -> bool {
        self.kept_cleared.is_none()
    }

    /// How much less than their estimates (unscaled) the outputs after the
    /// last summary that the markers it kept clear are sent as. Taken off
    /// the context tokens (scaled by the ratio) while no fresh usage follows
    /// the summary; forgotten when the summary or the messages before the
    /// end change.
    pub fn set_kept_cleared(&mut self, tokens: u64) {
        self.kept_cleared = Some(tokens);
    }

    /// The last summary is sent with `tokens` more than its own text (the
    /// history tools' note): they count while its estimate does (no fresh
    /// usage after it; one includes them).
    pub fn set_summary_note(&mut self, tokens: u64) {
        self.summary_note = tokens;
    }
}

mod counted;
mod edits;
mod ratio;
mod resent;
mod threshold;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
