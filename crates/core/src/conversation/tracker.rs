//! The per-turn books of one conversation: the index of the messages seen
//! so far (a few numbers each, [`ContextIndex`]), kept in line with the
//! array an adapter is handed each turn, and what is decided from it: how
//! each kind of edit updates the index, which estimate it holds, whether
//! the context is over the threshold, what must survive a compaction.
//!
//! No I/O: the adapter scans the arrays by object identity (the result is a
//! [`Synced`]), and reads the facts and texts of messages through
//! [`Source`] when a decision needs them; it keeps the arrays themselves.

use crate::compaction::clearing::{ClearedOutputs, ClearingSettings, ClearingTier};
use crate::compaction::last_request::{budget_chars, summarized_request, Survivors};
use crate::compaction::options::EstimatorChoice;
use crate::compaction::reason::Reason;
use crate::compaction::settings::CompactionSettings;
use crate::compaction::stall::{Ended, Stall};
use crate::conversation::edit::{self, Change, Edit, IdentityFacts};
use crate::conversation::view::Fact;
use crate::error::{FieldPath, InputError};
use crate::message::role::Role;
use crate::tokens::calibrated::estimate_texts;
use crate::tokens::context_index::ContextIndex;
use crate::tokens::context_tokens::ContextTokens;
use crate::tokens::estimate::{MessageFacts, RawFacts};

/// What the tracker reads of the array it is brought in line with.
pub trait Source {
    /// The array's length.
    fn message_count(&self) -> usize;
    /// The facts of `messages[from..to)`; `lazy`: an assistant message
    /// that reports usage has its tool-call arguments only bounded
    /// (`RawFacts::tool_calls_pending`).
    fn facts(&mut self, from: usize, to: usize, lazy: bool) -> Result<Vec<RawFacts>, InputError>;
    /// The full estimate of `messages[index]`, by the tracker's estimator.
    fn estimate(&mut self, index: usize) -> Result<u64, InputError>;
    /// Tighter upper bounds of the estimates of the messages at `at` (a
    /// bound per index, in order, or fewer when the rest have none).
    fn tight_bounds(&mut self, at: &[usize]) -> Result<Vec<u64>, InputError>;
    /// What the model's view needs of `messages[index]` (a tool result's
    /// id, a marker's ids; [`Fact`]).
    fn view_fact(&mut self, index: usize) -> Result<Fact<Vec<u16>>, InputError>;
    /// The estimate, by the tracker's estimator, of the placeholder the
    /// marker at `marker` sends for the tool result at `result`.
    fn placeholder_estimate(&mut self, result: usize, marker: usize) -> Result<u64, InputError>;
}

/// How the array an adapter is handed differs from the one it last saw,
/// as its identity scan found.
#[derive(Clone, Debug, PartialEq)]
pub enum Synced {
    /// The same messages, and new ones from this index (the old length)
    /// on: a turn, found without identity facts.
    Appended(usize),
    /// Anything else, as [`edit::edit`] classifies the identity facts, with
    /// the old length.
    Edited { edit: Edit, known_len: usize },
}

impl Synced {
    /// The change a scan found: from its identity facts' words
    /// ([`IdentityFacts::from_words`]) for a known array of `known_len` and
    /// a new one of `new_len`; no words: an append from `known_len`.
    ///
    /// The scan stops at the first new element that is no object: it is no
    /// known message, and reading it reports it, so a sparse array's length
    /// is never walked. Its words then classify fewer new elements than
    /// `new_len`: the edit is that of the array up to that element, and
    /// the rest is read as new messages after it (the first read fails).
    pub fn from_scan(
        known_len: usize,
        words: Option<&[i32]>,
        new_len: usize,
    ) -> Result<Synced, InputError> {
        let Some(words) = words else {
            return Ok(Synced::Appended(known_len));
        };
        let mut facts = IdentityFacts::from_words(words, known_len, new_len);
        if words.len() > 1 {
            facts.new_len = new_len.min(facts.prefix + facts.new_class.len());
        }
        let edit = edit::edit(&facts).map_err(|e| InputError::Unreadable {
            path: FieldPath::argument("messages"),
            reason: e.to_string(),
        })?;
        Ok(Synced::Edited { edit, known_len })
    }

    /// Whether anything but an append was found.
    pub fn is_edit(&self) -> bool {
        matches!(self, Synced::Edited { .. })
    }

    /// How many leading messages are kept in place.
    pub fn kept_prefix(&self) -> usize {
        match self {
            Synced::Appended(from) => *from,
            Synced::Edited { edit, known_len } => edit.kept_prefix(*known_len),
        }
    }
}

/// The index of one conversation and the estimate it holds.
#[derive(Debug)]
pub struct Tracker {
    index: ContextIndex,
    /// Counts the changes other than appends (and the syncs that failed).
    generation: u32,
    estimator: EstimatorChoice,
    /// Whether the threshold is quiet after a compaction that freed too little.
    stall: Stall,
    /// The tokens the last summary is sent with besides its text.
    summary_note: u64,
}

/// The context limit `shouldCompact` compares with.
pub fn threshold(settings: &CompactionSettings, context_window: f64) -> f64 {
    context_window - settings.reserve_tokens as f64
}

impl Tracker {
    /// An empty index for `estimator`: the calibrated one corrects itself
    /// by the provider's reported usage; pi's keeps pi's numbers.
    pub fn new(estimator: EstimatorChoice) -> Tracker {
        let index = match estimator {
            EstimatorChoice::Calibrated => ContextIndex::self_correcting(),
            EstimatorChoice::Pi => ContextIndex::default(),
        };
        Tracker {
            index,
            generation: 0,
            estimator,
            stall: Stall::default(),
            summary_note: 0,
        }
    }

    /// The summary is sent with `appended` after its text from now on (the
    /// history tools' note): it counts, by this tracker's estimator, with
    /// the summary. Returns its tokens.
    pub fn append_to_summary(&mut self, appended: &str) -> u64 {
        let tokens = match self.estimator {
            EstimatorChoice::Pi => (appended.encode_utf16().count() as u64).div_ceil(4),
            EstimatorChoice::Calibrated => estimate_texts([appended.as_bytes()]),
        };
        self.summary_note = tokens;
        self.index.set_summary_note(tokens);
        tokens
    }

    /// The tokens the last summary is sent with besides its text.
    pub fn summary_note(&self) -> u64 {
        self.summary_note
    }

    pub fn index(&self) -> &ContextIndex {
        &self.index
    }

    pub fn estimator(&self) -> EstimatorChoice {
        self.estimator
    }

    /// Changes with every edit that is not an append: what was derived
    /// from an older generation's array must be checked again.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Brings the index in line with the array a scan compared with the
    /// known one (`scanned`). On any error the index starts over (empty,
    /// a new generation): the adapter must then forget its known array.
    pub fn sync(
        &mut self,
        scanned: Result<Synced, InputError>,
        source: &mut impl Source,
    ) -> Result<(), InputError> {
        let result = scanned.and_then(|synced| self.apply(synced, source));
        if result.is_err() {
            let note = self.summary_note;
            *self = Tracker {
                generation: self.generation.wrapping_add(1),
                ..Tracker::new(self.estimator)
            };
            self.summary_note = note;
            self.index.set_summary_note(note);
        }
        result
    }

    /// The facts the index keeps of a gathered message, by estimator.
    fn facts_of(&self, raw: &RawFacts) -> MessageFacts {
        match self.estimator {
            EstimatorChoice::Pi => MessageFacts::compactor_pi(raw),
            EstimatorChoice::Calibrated => MessageFacts::calibrated_pending(raw),
        }
    }

    fn apply(&mut self, synced: Synced, source: &mut impl Source) -> Result<(), InputError> {
        if synced.is_edit() {
            self.generation = self.generation.wrapping_add(1);
        }
        let from = match synced {
            Synced::Appended(from) => {
                self.index.truncate_bounded(from);
                from
            }
            Synced::Edited { edit, known_len } => match edit.change(known_len) {
                Change::Appended { from } => {
                    self.index.truncate_bounded(from);
                    from
                }
                Change::Inserted { at, from } => {
                    for raw in source.facts(at, at + 1, false)? {
                        self.index.insert_bounded(at, self.facts_of(&raw));
                    }
                    from
                }
                Change::Removed { removed, from } => {
                    for &at in removed.iter().rev() {
                        self.index.remove_bounded(at);
                    }
                    from
                }
                // Read in full, as an inserted message is: a few at most.
                Change::Swapped { at, from } => {
                    let mut replaced = Vec::with_capacity(at.len());
                    for &k in at {
                        for raw in source.facts(k, k + 1, false)? {
                            replaced.push((k, self.facts_of(&raw)));
                        }
                    }
                    self.index.replace_bounded(replaced);
                    from
                }
                Change::Replaced { at } => {
                    self.index.truncate_bounded(at);
                    at
                }
            },
        };
        for raw in source.facts(from, source.message_count(), true)? {
            match self.estimator {
                EstimatorChoice::Pi => self
                    .index
                    .push_with(MessageFacts::compactor_pi(&raw), |i| source.estimate(i))?,
                // Its text is read only if a decision needs it.
                EstimatorChoice::Calibrated => self
                    .index
                    .push_deferred(MessageFacts::calibrated_pending(&raw)),
            }
        }
        Ok(())
    }

    /// Where the LLM context starts (the last summary, else 0).
    pub fn context_start(&self) -> usize {
        self.index.context_start()
    }

    /// The start of the model's view: the last summary and the pinned
    /// messages before it that are re-sent after it.
    pub fn view_head(&self) -> Option<(usize, &[usize])> {
        let summary = self.index.last_summary()?;
        Some((summary, self.index.resent()))
    }

    /// How many messages the model's view of an array of `len` holds.
    pub fn view_len(&self, len: usize) -> usize {
        match self.view_head() {
            None => len,
            Some((summary, resent)) => len - summary + resent.len(),
        }
    }

    /// The context tokens, every estimate that counts measured.
    pub fn context_tokens(
        &mut self,
        source: &mut impl Source,
    ) -> Result<ContextTokens, InputError> {
        self.settle_kept_clearing(source)?;
        self.index.context_tokens_exact(|i| source.estimate(i))
    }

    /// Finds, once per summary, what the outputs it kept that a marker it
    /// kept clears are sent below their estimates (see
    /// [`ContextIndex::set_kept_cleared`]). Costs nothing per turn, and
    /// after a summary reads the tool results between it and those markers.
    fn settle_kept_clearing(&mut self, source: &mut impl Source) -> Result<(), InputError> {
        if !self.index.kept_cleared_unknown() {
            return Ok(());
        }
        let markers = self.index.kept_markers();
        let start = self.index.last_summary().map_or(0, |s| s + 1);
        let tokens = self.cleared_below_estimates(start, &markers, source)?;
        self.index.set_kept_cleared(tokens);
        Ok(())
    }

    /// How much less than their estimates (unscaled) the tool results from
    /// `start` on that the markers at `markers` (ascending, from `start` on)
    /// clear are sent as: each such result's estimate less its
    /// placeholder's. A marker clears the results before it that it lists
    /// (the first one after a result listing its id clears it), as the
    /// model's view has it (`conversation::view`).
    pub fn cleared_below_estimates(
        &mut self,
        start: usize,
        markers: &[usize],
        source: &mut impl Source,
    ) -> Result<u64, InputError> {
        let Some(&end) = markers.last() else {
            return Ok(0);
        };
        let mut cleared = ClearedOutputs::default();
        for &m in markers {
            if let Fact::Marker(ids) = source.view_fact(m)? {
                cleared.add_marker(m, ids, None);
            }
        }
        let mut saved = 0u64;
        for i in start..end {
            let f = self.index.facts()[i];
            if f.role != Role::ToolResult {
                continue;
            }
            let Fact::ToolResult(Some(id)) = source.view_fact(i)? else {
                continue;
            };
            let Some(marker) = cleared.clearing_marker(&id, i) else {
                continue;
            };
            // Read, not kept: a pending estimate may stand in the totals'
            // bounds.
            let estimate = if f.tokens_pending() {
                source.estimate(i)?
            } else {
                u64::from(f.tokens)
            };
            let sent = source.placeholder_estimate(i, marker)?;
            saved = saved.saturating_add(estimate.saturating_sub(sent));
        }
        Ok(saved)
    }

    /// What the outputs a compaction cutting at `first_kept` keeps, and
    /// that a marker it keeps clears, will be sent below their estimates
    /// (the summary then keeps those markers).
    pub fn kept_cleared_after_cut(
        &mut self,
        first_kept: usize,
        source: &mut impl Source,
    ) -> Result<u64, InputError> {
        let markers = self.index.markers_from(first_kept).to_vec();
        self.cleared_below_estimates(first_kept, &markers, source)
    }

    /// `shouldCompact` on the context: never when compaction is disabled,
    /// nor while the threshold is quiet ([`Stall`]). Messages whose estimate is pending are measured only if the answer
    /// needs them, their bounds tightened first (a batch per call of
    /// [`Source::tight_bounds`]).
    pub fn threshold_exceeded(
        &mut self,
        settings: &CompactionSettings,
        context_window: f64,
        source: &mut impl Source,
    ) -> Result<bool, InputError> {
        self.exceeds(settings, context_window, 1.0, source)
    }

    /// Whether the context exceeds `fraction` of the threshold (the stall
    /// rule applied): a compaction in the background is due
    /// (`compaction::background`).
    pub fn exceeds(
        &mut self,
        settings: &CompactionSettings,
        context_window: f64,
        fraction: f64,
        source: &mut impl Source,
    ) -> Result<bool, InputError> {
        if !settings.enabled {
            return Ok(false);
        }
        // A quiet threshold (the stall rule) holds a start in the
        // background back as long as the threshold itself.
        let threshold = self.stall.limit(
            fraction * threshold(settings, context_window),
            self.generation,
        );
        self.settle_kept_clearing(source)?;
        // Both closures read through the one source.
        let source = std::cell::RefCell::new(source);
        self.index.exceeds_tightening_batched(
            threshold,
            |at| source.borrow_mut().tight_bounds(at),
            |i| source.borrow_mut().estimate(i),
        )
    }

    /// Learns from a compaction of the messages now indexed that ended so
    /// (see [`Stall::ended`]); `Some(tokens)`: the threshold is quiet until
    /// the context exceeds them.
    pub fn compaction_ended(&mut self, reason: Reason, ended: Ended) -> Option<f64> {
        self.stall.ended(reason, ended, self.generation)
    }

    /// The model or its window changed: the threshold counts again.
    pub fn release_stall(&mut self) {
        self.stall.release();
    }

    /// Makes every estimate after the last summary real (before a cut point
    /// is searched there), and learns from them how the provider's reported
    /// usage compares with the calibrated estimate (pi's: always 1); returns
    /// the ratio the estimates are scaled by.
    pub fn fill_context(&mut self, source: &mut impl Source) -> Result<f64, InputError> {
        let range = self.index.context_start()..self.index.len();
        self.index.fill_pending(range, |i| source.estimate(i))?;
        self.settle_kept_clearing(source)?;
        self.index.learn_ratio(|i| source.estimate(i))
    }

    /// What the clearing tier works from: every estimate of the context
    /// measured (as [`Tracker::fill_context`]), the context tokens and the
    /// threshold, the context's roles and estimates copied out.
    pub fn clearing_tier(
        &mut self,
        settings: &CompactionSettings,
        context_window: f64,
        clearing: &ClearingSettings,
        source: &mut impl Source,
    ) -> Result<ClearingTier, InputError> {
        self.fill_context(source)?;
        let context_tokens = self.context_tokens(source)?.tokens;
        let start = self.index.context_start();
        let all = self.index.facts();
        let resent_results = self
            .index
            .resent()
            .iter()
            .copied()
            .filter(|&i| all[i].role == Role::ToolResult)
            .collect();
        let facts = &all[start..];
        Ok(ClearingTier {
            start,
            resent_results,
            roles: facts.iter().map(|f| f.role).collect(),
            tokens: facts.iter().map(|f| u64::from(f.tokens)).collect(),
            ratio: self.index.ratio(),
            context_tokens,
            threshold: threshold(settings, context_window),
            settings: clearing.clone(),
        })
    }

    /// The estimates of the pinned messages the current context re-sends,
    /// while they count.
    pub fn resent_tokens(&mut self, source: &mut impl Source) -> Result<u64, InputError> {
        self.index.resent_tokens(|i| source.estimate(i))
    }

    /// Whether the last message is a `compactionSummary` (a compaction then
    /// has nothing to do).
    pub fn ends_with_summary(&self) -> bool {
        self.index
            .facts()
            .last()
            .is_some_and(|f| f.role == Role::CompactionSummary)
    }

    /// What must survive a compaction that keeps messages from
    /// `first_kept` on: the pinned messages before it (measured), the
    /// latest request's text (`request_text(index)`) when it lies before
    /// it, the quote's budget.
    pub fn survivors<T>(
        &mut self,
        first_kept: usize,
        keep_recent_tokens: u64,
        source: &mut impl Source,
        request_text: impl FnOnce(usize) -> Result<T, InputError>,
    ) -> Result<Survivors<T>, InputError> {
        let pinned = self.index.pinned_before(first_kept).to_vec();
        let mut resent = Vec::with_capacity(pinned.len());
        for i in pinned {
            self.index.measure(i, |j| source.estimate(j))?;
            resent.push(self.index.facts()[i]);
        }
        let latest_request = match summarized_request(self.index.facts(), first_kept) {
            Some(i) => Some(request_text(i)?),
            None => None,
        };
        Ok(Survivors {
            latest_request,
            budget_chars: budget_chars(keep_recent_tokens),
            resent,
        })
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
