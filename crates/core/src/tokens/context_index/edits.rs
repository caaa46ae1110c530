//! Keeping the index in line with the array: messages pushed (measured,
//! bounded or deferred), inserted, removed, replaced in place, truncated,
//! and the running totals recomputed.
use super::*;

/// What a pushed message leaves its push to count.
enum Appended {
    /// A summary: the count starts again from it.
    Summary,
    /// A fresh usage: the count starts after it.
    Usage,
    /// Its estimate counts (message `.0`).
    Counted(usize),
}

impl ContextIndex {
    /// The estimate of message `index`, measured with `fill` first if it is
    /// pending (and kept).
    pub fn measure<E>(
        &mut self,
        index: usize,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<u64, E> {
        self.tokens_of(index, &mut fill)
    }

    /// How many messages that count toward the context tokens are not
    /// measured yet (only after a `*_bounded` edit).
    pub fn unmeasured(&self) -> usize {
        self.unmeasured as usize
    }

    /// Adds the next message. Constant time.
    pub fn push(&mut self, f: MessageFacts) {
        let Ok(()) = self.push_with(f, |_| Ok::<u64, Infallible>(0));
    }

    /// Adds the next message; `fill(index)` supplies the estimate of a
    /// lazily gathered message (`tokens_pending`) when it turns out to count
    /// (its usage is stale, or does not count). Constant time.
    pub fn push_with<E>(
        &mut self,
        f: MessageFacts,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        match self.append(f) {
            Appended::Summary => {
                self.reset_trailing(u64::from(f.tokens));
                self.count_resent(Some(&mut fill))
            }
            Appended::Usage => Ok(()),
            Appended::Counted(index) => {
                let tokens = self.tokens_of(index, &mut fill)?;
                self.trailing += tokens;
                Ok(())
            }
        }
    }

    /// Adds the next message, leaving a pending estimate unmeasured when it
    /// counts (its bound in the slack): the calibrated estimate reads the
    /// message's text, so a turn reads none unless a decision needs it
    /// ([`exceeds`](Self::exceeds) measures only when the bounds leave the
    /// answer open). Constant time.
    pub fn push_deferred(&mut self, f: MessageFacts) {
        match self.append(f) {
            Appended::Summary => {
                self.reset_trailing(0);
                self.count_deferred(&f);
                let Ok(()) = self.count_resent(None::<&mut fn(usize) -> Result<u64, Infallible>>);
            }
            Appended::Usage => {}
            Appended::Counted(_) => self.count_deferred(&f),
        }
    }

    /// What both pushes share: the facts kept, the pin and marker lists, a
    /// summary or a fresh usage taken as the new start of the count. Says
    /// what the caller still has to count.
    fn append(&mut self, f: MessageFacts) -> Appended {
        let index = self.facts.len();
        self.facts.push(f);
        self.pinned.push(index, f.pinned());
        if f.role == Role::ToolOutputCleared {
            self.markers.push(index);
            // It may be one the last summary kept (an array that grows
            // back to the summary's kept messages).
            self.kept_cleared = None;
        }
        if f.role == Role::CompactionSummary {
            self.last_summary = Some(index);
            self.last_usage = None;
            self.kept_cleared = None;
            return Appended::Summary;
        }
        let before = self.usage_before_next();
        match f
            .usage()
            .filter(|_| self.is_fresh(index, &f))
            .filter(|&usage| !implausible(f.prompt().unwrap_or(usage), before))
        {
            Some(usage) => {
                self.last_usage = Some((index, usage));
                self.reset_trailing(0);
                Appended::Usage
            }
            None => Appended::Counted(index),
        }
    }

    pub(super) fn count_deferred(&mut self, f: &MessageFacts) {
        if f.tokens_pending() {
            self.unmeasured += 1;
            self.slack = self.slack.saturating_add(u64::from(f.tokens));
        } else {
            self.trailing += u64::from(f.tokens);
        }
    }

    pub(super) fn reset_trailing(&mut self, tokens: u64) {
        self.trailing = tokens;
        self.unmeasured = 0;
        self.slack = 0;
    }

    /// What usage is stale after the last summary (SPEC §3).
    pub(super) fn stale(&self) -> Stale {
        Stale::after(self.last_summary.map(|s| (s, &self.facts[s])))
    }

    /// Whether usage reported by message `index` (with facts `f`) counts.
    pub(super) fn is_fresh(&self, index: usize, f: &MessageFacts) -> bool {
        self.stale().is_fresh(index, f)
    }

    /// The estimate of message `index`, filled in first if it is pending.
    pub(super) fn tokens_of<E>(
        &mut self,
        index: usize,
        fill: &mut impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<u64, E> {
        let f = &mut self.facts[index];
        if f.tokens_pending() {
            let tokens = fill(index)?;
            f.set_tokens(tokens);
        }
        Ok(u64::from(f.tokens))
    }

    /// Fills in every pending estimate in `range` (before a cut point is
    /// searched there).
    pub fn fill_pending<E>(
        &mut self,
        range: std::ops::Range<usize>,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        for i in range.start..range.end.min(self.facts.len()) {
            self.tokens_of(i, &mut fill)?;
        }
        if self.unmeasured > 0 {
            // Some of them were left out of the totals: count them now.
            self.recompute(Some(&mut fill))?;
        }
        Ok(())
    }

    /// Forgets messages from `len` on (the array changed there).
    pub fn truncate<E>(
        &mut self,
        len: usize,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        if len < self.facts.len() {
            self.facts.truncate(len);
            self.pinned.truncate(len);
            self.markers.retain(|&m| m < len);
            return self.recompute(Some(&mut fill));
        }
        Ok(())
    }

    /// A message inserted at `at` (a compaction's summary).
    pub fn insert<E>(
        &mut self,
        at: usize,
        f: MessageFacts,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        let at = at.min(self.facts.len());
        self.facts.insert(at, f);
        self.pinned.insert(at, f.pinned());
        self.marker_inserted(at);
        self.recompute(Some(&mut fill))
    }

    /// The message at `at` taken out (a failed attempt, an undone summary).
    pub fn remove<E>(
        &mut self,
        at: usize,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        if at < self.facts.len() {
            self.forget_usage_after(at);
            self.facts.remove(at);
            self.pinned.remove(at);
            self.marker_removed(at);
            return self.recompute(Some(&mut fill));
        }
        Ok(())
    }

    /// [`truncate`](Self::truncate), leaving pending estimates unmeasured.
    pub fn truncate_bounded(&mut self, len: usize) {
        if len < self.facts.len() {
            self.facts.truncate(len);
            self.pinned.truncate(len);
            self.markers.retain(|&m| m < len);
            self.recompute_bounded();
        }
    }

    /// [`insert`](Self::insert), leaving pending estimates unmeasured.
    pub fn insert_bounded(&mut self, at: usize, f: MessageFacts) {
        let at = at.min(self.facts.len());
        self.facts.insert(at, f);
        self.pinned.insert(at, f.pinned());
        self.marker_inserted(at);
        self.recompute_bounded();
    }

    /// [`remove`](Self::remove), leaving pending estimates unmeasured.
    pub fn remove_bounded(&mut self, at: usize) {
        if at < self.facts.len() {
            self.forget_usage_after(at);
            self.facts.remove(at);
            self.pinned.remove(at);
            self.marker_removed(at);
            self.recompute_bounded();
        }
    }

    /// Messages replaced in place by others (`(index, facts)`, each index
    /// below the length; the rest keep their places), pending estimates left
    /// unmeasured: the totals are recomputed once for all of them.
    pub fn replace_bounded(&mut self, replaced: impl IntoIterator<Item = (usize, MessageFacts)>) {
        let mut any = false;
        for (at, f) in replaced {
            if at >= self.facts.len() {
                continue;
            }
            // A summary or marker replaced is taken out, as by a removal.
            self.forget_usage_after(at);
            let old = &mut self.facts[at];
            let was_marker = old.role == Role::ToolOutputCleared;
            *old = f;
            self.pinned.set(at, f.pinned());
            match (was_marker, f.role == Role::ToolOutputCleared) {
                (true, false) => self.markers.retain(|&m| m != at),
                (false, true) => {
                    let k = self.markers.partition_point(|&m| m < at);
                    self.markers.insert(k, at);
                }
                _ => {}
            }
            any = true;
        }
        if any {
            self.recompute_bounded();
        }
    }

    /// The markers' positions after a message was inserted at `at` (its
    /// facts already in place): those from `at` on move up one, and `at`
    /// joins them if the new message is a marker. Costs the markers, not
    /// the session (a full scan here made every compaction's insert cost
    /// the whole array).
    pub(super) fn marker_inserted(&mut self, at: usize) {
        for m in self.markers.iter_mut().filter(|m| **m >= at) {
            *m += 1;
        }
        if self.facts[at].role == Role::ToolOutputCleared {
            let k = self.markers.partition_point(|&m| m < at);
            self.markers.insert(k, at);
        }
    }

    /// The markers' positions after the message at `at` was taken out.
    pub(super) fn marker_removed(&mut self, at: usize) {
        self.markers.retain(|&m| m != at);
        for m in self.markers.iter_mut().filter(|m| **m > at) {
            *m -= 1;
        }
    }

    pub(super) fn recompute_bounded(&mut self) {
        let Ok(()) = self.recompute(None::<&mut fn(usize) -> Result<u64, Infallible>>);
    }

    /// The running totals from the stored facts, after a change in the
    /// middle: finds the last summary, the last usage that counts in its
    /// context (a walk over the context's facts, which reads no message),
    /// and sums the estimates after it. A pending estimate is measured with
    /// `fill`, or without it left out of the totals and its bound added to
    /// the slack.
    pub(super) fn recompute<E>(
        &mut self,
        mut fill: Option<&mut impl FnMut(usize) -> Result<u64, E>>,
    ) -> Result<(), E> {
        self.last_summary = self
            .facts
            .iter()
            .rposition(|f| f.role == Role::CompactionSummary);
        self.kept_cleared = None;
        self.reset_trailing(0);
        self.last_usage = self
            .counted_usages(self.context_start(), self.facts.len(), self.stale())
            .last();
        for i in (self.trailing_from()..self.facts.len()).rev() {
            let f = self.facts[i];
            match fill.as_mut() {
                Some(fill) => {
                    let tokens = self.tokens_of(i, fill)?;
                    self.trailing += tokens;
                }
                None if f.tokens_pending() => {
                    self.unmeasured += 1;
                    self.slack = self.slack.saturating_add(u64::from(f.tokens));
                }
                None => self.trailing += u64::from(f.tokens),
            }
        }
        self.count_resent(fill)
    }

    /// Measures the pending estimates that count (those after the last
    /// fresh usage), so that the totals are exact.
    pub(super) fn measure_trailing<E>(
        &mut self,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        if self.unmeasured == 0 {
            return Ok(());
        }
        let resent = self.counted_resent();
        for i in resent
            .into_iter()
            .chain(self.trailing_from()..self.facts.len())
        {
            if self.facts[i].tokens_pending() {
                let tokens = self.tokens_of(i, &mut fill)?;
                self.trailing += tokens;
            }
        }
        self.unmeasured = 0;
        self.slack = 0;
        Ok(())
    }
}
