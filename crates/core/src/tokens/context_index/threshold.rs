//! The totals and the threshold question: the context's tokens (with what
//! clearing freed), exact or bounded, and whether they exceed a limit,
//! measuring pending messages only while the answer is open.
use super::*;
use crate::sorted::sort_by;

impl ContextIndex {
    /// The estimated tokens of the LLM context now, with SPEC §3's stale
    /// usage rule (usage from at or before the last summary is ignored),
    /// the trailing estimates scaled by the [`ratio`](Self::ratio). Exact
    /// when [`unmeasured`](Self::unmeasured) is 0 (always, unless a
    /// `*_bounded` edit or a deferred push left some); otherwise a lower
    /// bound, the unmeasured messages left out — see
    /// [`context_tokens_exact`](Self::context_tokens_exact).
    pub fn context_tokens(&self) -> ContextTokens {
        self.tokens_with_trailing(scale(self.trailing, self.ratio))
    }

    /// What the markers in the context freed and that still counts
    /// (`tokens::context_tokens::marker_counts`), and what the outputs the
    /// markers the last summary kept clear save while no fresh usage
    /// follows it. Costs the markers after the last summary.
    pub(super) fn freed(&self) -> u64 {
        let summary = self.last_summary;
        let (stale, usage) = (self.stale(), self.last_usage.map(|(i, _)| i));
        let made_after: u64 = self
            .markers
            .iter()
            .rev()
            .take_while(|&&m| summary.is_none_or(|s| m > s))
            .filter(|&&m| marker_counts(m, &self.facts[m], stale, usage))
            .map(|&m| self.facts[m].tokens_freed())
            .sum();
        made_after.saturating_add(self.kept_cleared_counted())
    }

    /// [`set_kept_cleared`](Self::set_kept_cleared)'s number, scaled,
    /// while it counts (no fresh usage after the summary: one would have
    /// seen the placeholders).
    fn kept_cleared_counted(&self) -> u64 {
        match (self.last_usage, self.kept_cleared) {
            (None, Some(t)) if self.last_summary.is_some() => scale(t, self.ratio),
            _ => 0,
        }
    }

    pub(super) fn tokens_with_trailing(&self, trailing: u64) -> ContextTokens {
        let freed = self.freed();
        let mut c = self.tokens_with_trailing_before_clearing(trailing);
        c.tokens = less_freed(c.tokens, freed);
        c
    }

    pub(super) fn tokens_with_trailing_before_clearing(&self, trailing: u64) -> ContextTokens {
        match self.last_usage {
            Some((index, usage_tokens)) => ContextTokens {
                tokens: usage_tokens + trailing as f64,
                usage_tokens,
                trailing_tokens: trailing as f64,
                last_usage_index: Some(index),
            },
            None => {
                // The summary's estimate counts: so does what it is sent with.
                let trailing = trailing.saturating_add(self.note_counted());
                ContextTokens {
                    tokens: trailing as f64,
                    usage_tokens: 0.0,
                    trailing_tokens: trailing as f64,
                    last_usage_index: None,
                }
            }
        }
    }

    /// [`set_summary_note`](Self::set_summary_note)'s tokens, scaled, when
    /// there is a summary.
    fn note_counted(&self) -> u64 {
        match self.last_summary {
            Some(_) => scale(self.summary_note, self.ratio),
            None => 0,
        }
    }

    /// The estimated tokens of the LLM context now, every estimate that
    /// counts measured first (with `fill`).
    pub fn context_tokens_exact<E>(
        &mut self,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<ContextTokens, E> {
        self.measure_trailing(fill)?;
        Ok(self.context_tokens())
    }

    /// Whether the context tokens exceed `threshold` (`shouldCompact`'s
    /// comparison), exactly as [`context_tokens_exact`] would tell, but
    /// measuring only what the answer needs: while the bounds (the
    /// unmeasured messages at their bounds) leave it open, the unmeasured
    /// message with the largest bound is measured, one at a time.
    ///
    /// [`context_tokens_exact`]: Self::context_tokens_exact
    pub fn exceeds<E>(
        &mut self,
        threshold: f64,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<bool, E> {
        self.exceeds_with(
            threshold,
            None::<fn(&[usize]) -> Result<Vec<u64>, E>>,
            false,
            fill,
        )
    }

    /// [`exceeds`](Self::exceeds), with a cheaper step before measuring:
    /// unmeasured messages have their bounds tightened first (`tighten(index)`:
    /// a tighter upper bound of the estimate, such as the calibrated
    /// estimate's from the texts' UTF-8 lengths, some 30 times cheaper to
    /// find than the estimate; `None` when there is none), the largest
    /// first, for as long as tightening alone could still settle the answer
    /// (what is known plus the bounds already tight leaves the threshold
    /// out of reach); then the largest bound is measured, one at a time. A
    /// tightened bound is kept ([`MessageFacts::bound_tight`]), so a message
    /// is tightened once. The answer is the same whatever `tighten` gives,
    /// as long as it gives upper bounds. One bound per call: the reference
    /// the tests hold the batched form (what the compactor uses) to.
    #[cfg(test)]
    pub fn exceeds_tightening<E>(
        &mut self,
        threshold: f64,
        mut tighten: impl FnMut(usize) -> Result<Option<u64>, E>,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<bool, E> {
        let one_by_one = |at: &[usize]| {
            at.iter()
                .map(|&i| Ok(tighten(i)?.unwrap_or(u64::MAX)))
                .collect()
        };
        self.exceeds_with(threshold, Some(one_by_one), false, fill)
    }

    /// [`exceeds`](Self::exceeds), with a cheaper step before measuring:
    /// unmeasured messages have their bounds tightened first (a tighter
    /// upper bound of the estimate, such as the calibrated estimate's from
    /// the texts' UTF-8 lengths, some 30 times cheaper to find than the
    /// estimate), the largest first, for as long as tightening alone could
    /// still settle the answer; then the largest bound is measured, one at
    /// a time. A tightened bound is kept ([`MessageFacts::bound_tight`]), so
    /// a message is tightened once. The bounds are tightened several at a
    /// time (`tighten(indices)`: a bound per index, in order, or fewer when
    /// the rest have no tightening to be had), so that a caller for whom
    /// each call costs a crossing pays one per batch: the largest loose
    /// bounds, as many as would settle the answer if each shed
    /// [`TIGHTENING_EXPECTED`] of its bound, at least one. The answer is the
    /// same whatever `tighten` gives, as long as it gives upper bounds, and
    /// every number is the same as one at a time; only which bounds end up
    /// tight may differ (a batch can tighten a few more than needed).
    pub fn exceeds_tightening_batched<E>(
        &mut self,
        threshold: f64,
        tighten: impl FnMut(&[usize]) -> Result<Vec<u64>, E>,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<bool, E> {
        self.exceeds_with(threshold, Some(tighten), true, fill)
    }

    pub(super) fn exceeds_with<E>(
        &mut self,
        threshold: f64,
        mut tighten: Option<impl FnMut(&[usize]) -> Result<Vec<u64>, E>>,
        batched: bool,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<bool, E> {
        // Pending messages that count, by bound (largest last, popped
        // first): those whose bound is still loose, and those tight (or
        // with no tightening to be had); and the sum of the tight bounds.
        let mut queues: Option<(Queue, Queue, u64)> = None;
        loop {
            // Lower and upper ends: measuring puts the number between them
            // (f64 addition and multiplication are monotonic, so is ceil).
            let lower = self.context_tokens().tokens;
            if lower > threshold {
                return Ok(true);
            }
            let most = self.trailing.saturating_add(self.slack);
            let upper = self.tokens_with_trailing(scale(most, self.ratio)).tokens;
            if upper <= threshold {
                return Ok(false);
            }
            let (loose, tight, tight_sum) = queues.get_or_insert_with(|| {
                let from = self.trailing_from();
                let (mut loose, mut tight) = (Vec::new(), Vec::new());
                let mut tight_sum = 0u64;
                for i in self
                    .counted_resent()
                    .into_iter()
                    .chain(from..self.facts.len())
                {
                    let f = &self.facts[i];
                    if !f.tokens_pending() {
                        continue;
                    }
                    if f.bound_tight() || tighten.is_none() {
                        tight.push((f.tokens, i));
                        tight_sum = tight_sum.saturating_add(u64::from(f.tokens));
                    } else {
                        loose.push((f.tokens, i));
                    }
                }
                sort_by(&mut loose, Ord::cmp);
                sort_by(&mut tight, Ord::cmp);
                (loose, tight, tight_sum)
            });
            // Tightening alone can settle it only while the tight bounds
            // leave the threshold out of reach.
            let known_and_tight = self.trailing.saturating_add(*tight_sum);
            let worth_tightening = !loose.is_empty()
                && self
                    .tokens_with_trailing(scale(known_and_tight, self.ratio))
                    .tokens
                    <= threshold;
            if let (true, Some(tighten)) = (worth_tightening, tighten.as_mut()) {
                // How much the bounds must shed (unscaled) for the answer
                // to be "no"; a batch takes the largest loose bounds until
                // their expected saving covers it.
                let need = (upper - threshold) / self.ratio;
                let mut at = Vec::new();
                let mut expected = 0.0;
                while let Some(&(bound, i)) = loose.last() {
                    if !at.is_empty() && (!batched || expected >= need) {
                        break;
                    }
                    loose.pop();
                    at.push(i);
                    expected += f64::from(bound) * TIGHTENING_EXPECTED;
                }
                let bounds = tighten(&at)?;
                for (k, &i) in at.iter().enumerate() {
                    // A loose bound is the message's `tokens` (queued as is).
                    let bound = self.facts[i].tokens;
                    let tighter = self.facts[i].tighten(bounds.get(k).copied().unwrap_or(u64::MAX));
                    self.slack = self.slack.saturating_sub(u64::from(bound - tighter));
                    let at = tight.partition_point(|&e| e < (tighter, i));
                    tight.insert(at, (tighter, i));
                    *tight_sum = tight_sum.saturating_add(u64::from(tighter));
                }
                continue;
            }
            // Measure the largest bound, tight or not.
            let from_tight = match (loose.last(), tight.last()) {
                (Some(l), Some(t)) => t >= l,
                (None, Some(_)) => true,
                (Some(_), None) => false,
                // Everything measured: the bounds met (a NaN usage).
                (None, None) => return Ok(lower > threshold),
            };
            let (bound, i) = if from_tight {
                let e = tight.pop().unwrap_or_default();
                *tight_sum = tight_sum.saturating_sub(u64::from(e.0));
                e
            } else {
                loose.pop().unwrap_or_default()
            };
            if self.facts[i].tokens_pending() {
                let tokens = self.tokens_of(i, &mut fill)?;
                self.trailing += tokens;
                self.unmeasured = self.unmeasured.saturating_sub(1);
                self.slack = self.slack.saturating_sub(u64::from(bound));
            }
        }
    }

    /// Where the messages whose estimates count start.
    pub(super) fn trailing_from(&self) -> usize {
        self.last_usage
            .map_or(self.context_start(), |(index, _)| index + 1)
    }

    /// The same number computed from scratch (for tests and checks; with
    /// unmeasured messages, their bounds counted).
    pub fn context_tokens_recomputed(&self) -> ContextTokens {
        let start = self.context_start();
        let len = self.facts.len();
        // The model's view: the summary, the re-sent pinned messages, the
        // rest. Walked from the newest back: the context, then the re-sent
        // messages (counted by their estimates: a usage of theirs is not the
        // context's), then the summary.
        // Only the last usage that counts is kept: the walk stops there.
        let last_counted = self
            .counted_usages(start, len, self.stale())
            .last()
            .map(|(i, _)| i);
        let view = |i: usize| {
            let mut f = self.facts[i];
            if last_counted != Some(i) {
                f.forget_usage();
            }
            (i, f)
        };
        let estimated = |&i: &usize| {
            let f = self.facts[i];
            let mut r = MessageFacts::new(f.role, u64::from(f.tokens), None, f.timestamp);
            r.set_tokens_pending(f.tokens_pending());
            (i, r)
        };
        let after_summary = start + usize::from(self.last_summary.is_some());
        let newest_first = (after_summary..len)
            .rev()
            .map(view)
            .chain(self.resent().iter().rev().map(estimated))
            .chain((start..after_summary).map(view))
            .map(Ok::<_, Infallible>);
        let Ok(mut c) = estimate_from_end(newest_first, self.stale());
        if c.last_usage_index.is_none() {
            c.tokens += self.note_counted() as f64;
            c.trailing_tokens += self.note_counted() as f64;
        }

        let stale = self.stale();
        let freed: u64 = (after_summary..len)
            .filter(|&m| self.facts[m].role == Role::ToolOutputCleared)
            .filter(|&m| marker_counts(m, &self.facts[m], stale, c.last_usage_index))
            .map(|m| self.facts[m].tokens_freed())
            .sum();
        c.tokens = less_freed(c.tokens, freed.saturating_add(self.kept_cleared_counted()));
        c
    }
}
