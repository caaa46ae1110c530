//! What the compactor keeps about each message it has seen, so that each
//! turn costs only the new messages: a few numbers per message (never the
//! content) and running totals for the current LLM context.
//!
//! Some estimates are gathered lazily (`tokens_pending`: an assistant
//! message that reports usage has its tool-call arguments measured only if
//! its own estimate is ever needed). Right after a summary is inserted,
//! every kept message's usage is stale (SPEC §3) and their estimates count;
//! measuring the pending ones (a `JSON.stringify` of each tool call's
//! arguments) is most of what such a turn would cost, and usually wasted:
//! the next assistant message reports fresh usage and the kept messages'
//! estimates stop counting. So when an [`Estimates`] source can bound an
//! estimate cheaply, the totals carry the pending messages as a range
//! (their known part as a lower bound, the bound as the upper end), and
//! [`ContextIndex::exceeds`] measures them only when the range straddles the
//! threshold; [`ContextIndex::context_tokens_exact`] measures them always.

use crate::message::role::Role;
use crate::tokens::context_tokens::{estimate_with_usage_after, ContextTokens};
use crate::tokens::estimate::MessageFacts;
use std::convert::Infallible;

/// Where the index gets the estimates it did not gather at first.
pub trait Estimates {
    type Error;
    /// pi's estimate of message `index`, measured in full.
    fn exact(&mut self, index: usize) -> Result<u64, Self::Error>;
    /// An upper bound of that estimate, cheaper to get than the estimate
    /// itself, given `known` (the estimate of what was gathered, a lower
    /// bound); `None` when there is none.
    fn upper_bound(&mut self, index: usize, known: u64) -> Result<Option<u64>, Self::Error>;
}

/// An [`Estimates`] source that only measures (no bounds).
pub struct Exact<F>(pub F);

impl<E, F: FnMut(usize) -> Result<u64, E>> Estimates for Exact<F> {
    type Error = E;
    fn exact(&mut self, index: usize) -> Result<u64, E> {
        (self.0)(index)
    }
    fn upper_bound(&mut self, _: usize, _: u64) -> Result<Option<u64>, E> {
        Ok(None)
    }
}

#[derive(Clone, Debug, Default)]
pub struct ContextIndex {
    facts: Vec<MessageFacts>,
    /// The last `compactionSummary`: where the LLM context starts.
    last_summary: Option<usize>,
    /// The newest assistant usage that counts (fresh: newer than the last
    /// summary), and the estimates of the context messages after it
    /// (pending ones by their known part).
    last_usage: Option<(usize, f64)>,
    trailing: u64,
    /// Pending messages among those after `last_usage` (still
    /// `tokens_pending`), and how much more than their known part they can
    /// be at most (saturating).
    unmeasured: u32,
    slack: u64,
}

impl ContextIndex {
    pub fn len(&self) -> usize {
        self.facts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
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

    /// How many messages that count toward the context tokens are not
    /// measured yet (only after an edit with an [`Estimates`] source that
    /// gave bounds).
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
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        let index = self.facts.len();
        self.facts.push(f);
        if f.role == Role::CompactionSummary {
            self.last_summary = Some(index);
            self.last_usage = None;
            self.reset_trailing(u64::from(f.tokens));
            return Ok(());
        }
        match f.usage().filter(|_| self.is_fresh(&f)) {
            Some(usage) => {
                self.last_usage = Some((index, usage));
                self.reset_trailing(0);
            }
            None => {
                let tokens = self.tokens_of(index, &mut Exact(fill))?;
                self.trailing += tokens;
            }
        }
        Ok(())
    }

    fn reset_trailing(&mut self, tokens: u64) {
        self.trailing = tokens;
        self.unmeasured = 0;
        self.slack = 0;
    }

    fn is_fresh(&self, f: &MessageFacts) -> bool {
        match self.last_summary {
            Some(i) => f.timestamp > self.facts[i].timestamp,
            None => true,
        }
    }

    /// The estimate of message `index`, measured first if it is pending.
    fn tokens_of<S: Estimates>(&mut self, index: usize, source: &mut S) -> Result<u64, S::Error> {
        let f = &mut self.facts[index];
        if f.tokens_pending {
            let tokens = source.exact(index)?;
            f.set_tokens(tokens);
        }
        Ok(u64::from(f.tokens))
    }

    /// Fills in every pending estimate in `range` (before a cut point is
    /// searched there).
    pub fn fill_pending<E>(
        &mut self,
        range: std::ops::Range<usize>,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        let mut source = Exact(fill);
        for i in range.start..range.end.min(self.facts.len()) {
            self.tokens_of(i, &mut source)?;
        }
        if self.unmeasured > 0 {
            // Some of them were counted by their known part: count them again.
            self.recompute(&mut source)?;
        }
        Ok(())
    }

    /// Forgets messages from `len` on (the array changed there).
    pub fn truncate<E>(
        &mut self,
        len: usize,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        self.truncate_bounded(len, &mut Exact(fill))
    }

    /// [`truncate`](Self::truncate), taking bounds where `source` has them.
    pub fn truncate_bounded<S: Estimates>(
        &mut self,
        len: usize,
        source: &mut S,
    ) -> Result<(), S::Error> {
        if len < self.facts.len() {
            self.facts.truncate(len);
            return self.recompute(source);
        }
        Ok(())
    }

    /// A message inserted at `at` (a compaction's summary).
    pub fn insert<E>(
        &mut self,
        at: usize,
        f: MessageFacts,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        self.insert_bounded(at, f, &mut Exact(fill))
    }

    /// [`insert`](Self::insert), taking bounds where `source` has them.
    pub fn insert_bounded<S: Estimates>(
        &mut self,
        at: usize,
        f: MessageFacts,
        source: &mut S,
    ) -> Result<(), S::Error> {
        self.facts.insert(at.min(self.facts.len()), f);
        self.recompute(source)
    }

    /// The message at `at` taken out (a failed attempt, an undone summary).
    pub fn remove<E>(
        &mut self,
        at: usize,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        self.remove_bounded(at, &mut Exact(fill))
    }

    /// [`remove`](Self::remove), taking bounds where `source` has them.
    pub fn remove_bounded<S: Estimates>(
        &mut self,
        at: usize,
        source: &mut S,
    ) -> Result<(), S::Error> {
        if at < self.facts.len() {
            self.facts.remove(at);
            return self.recompute(source);
        }
        Ok(())
    }

    /// The running totals from the stored facts, after a change in the
    /// middle: walks back from the end only as far as it must (to the last
    /// summary, and within the context to the last fresh usage). A pending
    /// estimate is counted by its known part plus a bound when `source` has
    /// one, else measured.
    fn recompute<S: Estimates>(&mut self, source: &mut S) -> Result<(), S::Error> {
        self.last_summary = self
            .facts
            .iter()
            .rposition(|f| f.role == Role::CompactionSummary);
        self.last_usage = None;
        self.reset_trailing(0);
        for i in (self.context_start()..self.facts.len()).rev() {
            let f = self.facts[i];
            if let Some(usage) = f.usage().filter(|_| self.is_fresh(&f)) {
                self.last_usage = Some((i, usage));
                break;
            }
            if f.tokens_pending {
                let known = u64::from(f.tokens);
                if let Some(bound) = source.upper_bound(i, known)? {
                    self.trailing += known;
                    self.unmeasured += 1;
                    self.slack = self.slack.saturating_add(bound.saturating_sub(known));
                    continue;
                }
            }
            let tokens = self.tokens_of(i, source)?;
            self.trailing += tokens;
        }
        Ok(())
    }

    /// Measures the pending estimates that count (those after the last
    /// fresh usage), so that the totals are exact.
    fn measure_trailing<S: Estimates>(&mut self, source: &mut S) -> Result<(), S::Error> {
        if self.unmeasured == 0 {
            return Ok(());
        }
        let from = self
            .last_usage
            .map_or(self.context_start(), |(index, _)| index + 1);
        for i in from..self.facts.len() {
            let f = self.facts[i];
            if f.tokens_pending {
                let known = u64::from(f.tokens);
                let tokens = self.tokens_of(i, source)?;
                // Measured can only be more than its known part; saturating
                // all the same.
                self.trailing = self.trailing.saturating_sub(known).saturating_add(tokens);
            }
        }
        self.unmeasured = 0;
        self.slack = 0;
        Ok(())
    }

    /// The estimated tokens of the LLM context now, with SPEC §3's stale
    /// usage rule (usage from at or before the last summary is ignored).
    /// Exact when [`unmeasured`](Self::unmeasured) is 0 (always, unless an
    /// edit was given bounds); otherwise a lower bound, the unmeasured
    /// messages counted by their known part — see
    /// [`context_tokens_exact`](Self::context_tokens_exact).
    pub fn context_tokens(&self) -> ContextTokens {
        self.tokens_with_trailing(self.trailing)
    }

    fn tokens_with_trailing(&self, trailing: u64) -> ContextTokens {
        match self.last_usage {
            Some((index, usage_tokens)) => ContextTokens {
                tokens: usage_tokens + trailing as f64,
                usage_tokens,
                trailing_tokens: trailing as f64,
                last_usage_index: Some(index),
            },
            None => ContextTokens {
                tokens: trailing as f64,
                usage_tokens: 0.0,
                trailing_tokens: trailing as f64,
                last_usage_index: None,
            },
        }
    }

    /// The estimated tokens of the LLM context now, every estimate that
    /// counts measured first.
    pub fn context_tokens_exact<S: Estimates>(
        &mut self,
        source: &mut S,
    ) -> Result<ContextTokens, S::Error> {
        self.measure_trailing(source)?;
        Ok(self.context_tokens())
    }

    /// Whether the context tokens exceed `threshold` (`shouldCompact`'s
    /// comparison), exactly as [`context_tokens_exact`] would tell, but
    /// measuring the unmeasured messages only when their bounds leave the
    /// answer open.
    ///
    /// [`context_tokens_exact`]: Self::context_tokens_exact
    pub fn exceeds<S: Estimates>(
        &mut self,
        threshold: f64,
        source: &mut S,
    ) -> Result<bool, S::Error> {
        if self.unmeasured > 0 {
            // Lower and upper ends: measuring puts the number between them
            // (the same sum in the same order; f64 addition is monotonic).
            if self.context_tokens().tokens > threshold {
                return Ok(true);
            }
            let upper = self.tokens_with_trailing(self.trailing.saturating_add(self.slack));
            if upper.tokens <= threshold {
                return Ok(false);
            }
            self.measure_trailing(source)?;
        }
        Ok(self.context_tokens().tokens > threshold)
    }

    /// The same number computed from scratch (for tests and checks).
    pub fn context_tokens_recomputed(&self) -> ContextTokens {
        let start = self.context_start();
        let stale_until = self.last_summary.map(|i| self.facts[i].timestamp);
        let mut c = estimate_with_usage_after(&self.facts[start..], stale_until);
        c.last_usage_index = c.last_usage_index.map(|i| i + start);
        c
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn no_fill(_: usize) -> Result<u64, ()> {
        panic!("nothing is pending in this test")
    }

    #[test]
    fn lazily_gathered_estimates_are_filled_only_when_they_count() {
        let mut pending = f(Role::Assistant, 0, Some(5000.0), 2.0);
        pending.tokens_pending = true;
        let mut ix = ContextIndex::default();
        ix.push(f(Role::User, 10, None, 1.0));
        // Fresh usage: its own estimate is never needed.
        ix.push_with(pending, no_fill).unwrap();
        assert_eq!(ix.context_tokens().tokens, 5000.0);
        // A summary inserted before it makes its usage stale: now it counts.
        let mut asked = Vec::new();
        ix.insert(1, f(Role::CompactionSummary, 100, None, 3.0), |i| {
            asked.push(i);
            Ok::<u64, ()>(42)
        })
        .unwrap();
        assert_eq!(asked, vec![2]);
        assert_eq!(ix.context_tokens().tokens, 142.0);
        assert!(!ix.facts()[2].tokens_pending);
    }

    fn f(role: Role, tokens: u64, usage: Option<f64>, timestamp: f64) -> MessageFacts {
        MessageFacts::new(role, tokens, usage, timestamp)
    }

    #[test]
    fn tracks_the_context_incrementally() {
        let mut ix = ContextIndex::default();
        ix.push(f(Role::User, 10, None, 1.0));
        assert_eq!(ix.context_tokens().tokens, 10.0);
        ix.push(f(Role::Assistant, 5, Some(1000.0), 2.0));
        ix.push(f(Role::User, 7, None, 3.0));
        assert_eq!(ix.context_tokens().tokens, 1007.0);
        assert_eq!(ix.context_start(), 0);
        // A summary inserted: the context starts there and old usage is stale.
        ix.push(f(Role::CompactionSummary, 50, None, 4.0));
        assert_eq!(ix.context_start(), 3);
        assert_eq!(ix.context_tokens().tokens, 50.0);
        ix.push(f(Role::User, 3, None, 5.0));
        ix.push(f(Role::Assistant, 4, Some(300.0), 6.0));
        assert_eq!(ix.context_tokens().tokens, 300.0);
    }

    #[test]
    fn kept_messages_stamped_before_the_summary_are_estimated() {
        let mut ix = ContextIndex::default();
        ix.push(f(Role::CompactionSummary, 50, None, 100.0));
        // A kept assistant from before the compaction, with its old usage.
        ix.push(f(Role::Assistant, 20, Some(180_000.0), 90.0));
        assert_eq!(ix.context_tokens().tokens, 70.0);
        ix.truncate(1, no_fill).unwrap();
        assert_eq!(ix.context_tokens().tokens, 50.0);
        ix.truncate(0, no_fill).unwrap();
        assert!(ix.is_empty());
        assert_eq!(ix.context_tokens().tokens, 0.0);
    }

    fn arb_facts() -> impl Strategy<Value = MessageFacts> {
        (
            0u8..8,
            0u64..5000,
            proptest::option::of(0.0f64..200_000.0),
            0.0f64..100.0,
        )
            .prop_map(|(role, tokens, usage, timestamp)| {
                let role = Role::from_code(role).unwrap_or(Role::Other);
                f(
                    role,
                    tokens,
                    usage.filter(|_| role == Role::Assistant),
                    timestamp,
                )
            })
    }

    #[test]
    fn inserting_a_summary_and_removing_a_failed_attempt() {
        let mut ix = ContextIndex::default();
        ix.push(f(Role::User, 10, None, 1.0));
        ix.push(f(Role::Assistant, 10, Some(5000.0), 2.0));
        ix.push(f(Role::User, 10, None, 3.0));
        ix.push(f(Role::Assistant, 10, Some(9000.0), 4.0));
        ix.push(f(Role::Assistant, 0, None, 5.0));
        assert_eq!(ix.context_tokens().tokens, 9000.0);
        // The failed attempt at the end goes, a summary goes in at 2.
        ix.remove(4, no_fill).unwrap();
        ix.insert(2, f(Role::CompactionSummary, 100, None, 6.0), no_fill)
            .unwrap();
        assert_eq!(ix.len(), 5);
        assert_eq!(ix.context_start(), 2);
        // The kept assistant's usage predates the summary: estimated.
        assert_eq!(ix.context_tokens().tokens, 120.0);
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    }

    /// Estimates for tests: each message's measured estimate and, maybe, a
    /// bound; records what was measured.
    #[derive(Clone, Debug, Default)]
    struct Table {
        exact: Vec<u64>,
        bound: Vec<Option<u64>>,
        measured: Vec<usize>,
    }

    impl Estimates for Table {
        type Error = ();
        fn exact(&mut self, index: usize) -> Result<u64, ()> {
            self.measured.push(index);
            self.exact.get(index).copied().ok_or(())
        }
        fn upper_bound(&mut self, index: usize, known: u64) -> Result<Option<u64>, ()> {
            let bound = self.bound.get(index).copied().flatten();
            assert!(
                bound.is_none_or(|b| b >= known),
                "a bound below the known part"
            );
            Ok(bound)
        }
    }

    fn pending(known: u64, usage: f64, timestamp: f64) -> MessageFacts {
        let mut p = f(Role::Assistant, known, Some(usage), timestamp);
        p.tokens_pending = true;
        p
    }

    #[test]
    fn bounds_spare_measuring_until_the_threshold_needs_it() {
        let mut ix = ContextIndex::default();
        ix.push(f(Role::User, 10, None, 1.0));
        ix.push(pending(5, 150_000.0, 2.0));
        ix.push(f(Role::ToolResult, 20, None, 3.0));
        ix.push(pending(7, 160_000.0, 4.0));
        assert_eq!(ix.context_tokens().tokens, 160_000.0);
        // Indexes 0..=4 after the summary goes in at 0.
        let mut table = Table {
            exact: vec![100, 10, 40, 20, 60],
            bound: vec![None, None, Some(90), None, Some(300)],
            measured: Vec::new(),
        };
        ix.insert_bounded(0, f(Role::CompactionSummary, 100, None, 5.0), &mut table)
            .unwrap();
        // Both kept assistants are stale now; counted by what is known.
        assert_eq!(ix.unmeasured(), 2);
        assert_eq!(ix.context_tokens().tokens, 100.0 + 10.0 + 5.0 + 20.0 + 7.0);
        assert!(table.measured.is_empty());
        // Lower end 142, upper end 142 + 85 + 293 = 520.
        assert!(!ix.exceeds(520.0, &mut table).unwrap());
        assert!(ix.exceeds(141.0, &mut table).unwrap());
        assert!(table.measured.is_empty());
        // Within the range: measured, and then exact.
        assert!(ix.exceeds(200.0, &mut table).unwrap());
        table.measured.sort();
        assert_eq!(table.measured, vec![2, 4]);
        assert_eq!(ix.unmeasured(), 0);
        assert_eq!(
            ix.context_tokens().tokens,
            100.0 + 10.0 + 40.0 + 20.0 + 60.0
        );
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    }

    #[test]
    fn fresh_usage_makes_the_unmeasured_irrelevant() {
        let mut ix = ContextIndex::default();
        ix.push(pending(5, 150_000.0, 1.0));
        let mut table = Table {
            exact: vec![100, 50],
            bound: vec![None, Some(1000)],
            measured: Vec::new(),
        };
        ix.insert_bounded(0, f(Role::CompactionSummary, 100, None, 2.0), &mut table)
            .unwrap();
        assert_eq!(ix.unmeasured(), 1);
        ix.push_with(f(Role::Assistant, 3, Some(900.0), 3.0), no_fill)
            .unwrap();
        assert_eq!(ix.unmeasured(), 0);
        assert_eq!(ix.context_tokens_exact(&mut table).unwrap().tokens, 900.0);
        assert!(table.measured.is_empty());
        // Filling a range before a cut point search counts them again.
        ix.remove_bounded(2, &mut table).unwrap();
        assert_eq!(ix.unmeasured(), 1);
        ix.fill_pending(0..ix.len(), |i| table.exact(i)).unwrap();
        assert_eq!(ix.unmeasured(), 0);
        assert_eq!(ix.context_tokens().tokens, 150.0);
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    }

    /// Facts with lazily gathered assistants, and for each its measured
    /// estimate and a bound (none, tight or loose).
    fn arb_session() -> impl Strategy<Value = (Vec<MessageFacts>, Table)> {
        let message = prop_oneof![
            arb_facts(),
            (0u64..3000, 0.0f64..200_000.0, 0.0f64..100.0).prop_map(|(t, usage, ts)| f(
                Role::Assistant,
                t,
                Some(usage),
                ts
            )),
        ];
        proptest::collection::vec((message, 0u64..3000, 0u8..3), 1..50).prop_map(|items| {
            let mut facts = Vec::new();
            let mut table = Table::default();
            for (mut m, extra, kind) in items {
                let lazy = m.role == Role::Assistant && m.usage().is_some() && kind > 0;
                let exact = u64::from(m.tokens) + if lazy { extra } else { 0 };
                m.tokens_pending = lazy;
                facts.push(m);
                table.exact.push(exact);
                table.bound.push(match kind {
                    1 => Some(exact),
                    2 => Some(exact + extra * 3),
                    _ => None,
                });
            }
            (facts, table)
        })
    }

    proptest! {
        #[test]
        fn edits_in_the_middle_equal_recomputed(
            items in proptest::collection::vec(arb_facts(), 1..60),
            extra in arb_facts(),
            at in 0usize..60,
            remove in any::<bool>(),
        ) {
            let mut ix = ContextIndex::default();
            for item in &items {
                ix.push(*item);
            }
            if remove {
                ix.remove(at % items.len(), no_fill).unwrap();
            } else {
                ix.insert(at % (items.len() + 1), extra, no_fill).unwrap();
            }
            prop_assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
        }

        #[test]
        fn incremental_equals_recomputed(
            items in proptest::collection::vec(arb_facts(), 0..60),
            cut in 0usize..60,
        ) {
            let mut ix = ContextIndex::default();
            for (k, item) in items.iter().enumerate() {
                ix.push(*item);
                prop_assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed(), "after {} pushes", k + 1);
            }
            ix.truncate(cut, no_fill).unwrap();
            prop_assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
        }

        #[test]
        fn bounded_edits_answer_as_measured_ones(
            (facts, table) in arb_session(),
            summary in arb_facts(),
            at in 0usize..60,
            edit in 0u8..3,
            late in any::<bool>(),
            after in proptest::collection::vec(arb_facts(), 0..4),
            offsets in proptest::collection::vec(-3000.0f64..3000.0, 1..6),
        ) {
            // The same edits, once measuring everything, once with bounds.
            let mut measured = ContextIndex::default();
            let mut bounded = ContextIndex::default();
            let mut exact_table = table.clone();
            exact_table.bound = vec![None; exact_table.exact.len()];
            let mut bounds_table = table;
            for (i, m) in facts.iter().enumerate() {
                measured.push_with(*m, |k| exact_table.exact(k)).unwrap();
                bounded.push_with(*m, |k| bounds_table.exact(k)).unwrap();
                prop_assert_eq!(i + 1, bounded.len());
            }
            // Late: stamped after every message, so every kept usage is stale.
            let stamp = summary.timestamp + if late { 100.0 } else { 0.0 };
            let summary = f(Role::CompactionSummary, u64::from(summary.tokens), None, stamp);
            let at = at % (facts.len() + 1);
            let shift = |t: &mut Table, extra: Option<u64>| {
                t.exact.insert(at, u64::from(summary.tokens));
                t.bound.insert(at, extra);
            };
            match edit {
                0 => {
                    shift(&mut exact_table, None);
                    shift(&mut bounds_table, None);
                    measured.insert_bounded(at, summary, &mut exact_table).unwrap();
                    bounded.insert_bounded(at, summary, &mut bounds_table).unwrap();
                }
                1 => {
                    let at = at % facts.len();
                    for t in [&mut exact_table, &mut bounds_table] {
                        t.exact.remove(at);
                        t.bound.remove(at);
                    }
                    measured.remove_bounded(at, &mut exact_table).unwrap();
                    bounded.remove_bounded(at, &mut bounds_table).unwrap();
                }
                _ => {
                    measured.truncate_bounded(at, &mut exact_table).unwrap();
                    bounded.truncate_bounded(at, &mut bounds_table).unwrap();
                    for t in [&mut exact_table, &mut bounds_table] {
                        t.exact.truncate(at);
                        t.bound.truncate(at);
                    }
                }
            }
            prop_assert_eq!(measured.unmeasured(), 0);
            for m in &after {
                for t in [&mut exact_table, &mut bounds_table] {
                    t.exact.push(u64::from(m.tokens));
                    t.bound.push(None);
                }
                measured.push_with(*m, |k| exact_table.exact(k)).unwrap();
                bounded.push_with(*m, |k| bounds_table.exact(k)).unwrap();
            }
            let truth = measured.context_tokens();
            prop_assert!(bounded.context_tokens().tokens <= truth.tokens || truth.tokens.is_nan());
            // Thresholds near the number, where the bounds leave it open.
            for th in offsets.iter().map(|o| truth.tokens + o.round()) {
                let mut b = bounded.clone();
                let mut t = bounds_table.clone();
                prop_assert_eq!(b.exceeds(th, &mut t).unwrap(), truth.tokens > th, "threshold {}", th);
                prop_assert_eq!(b.context_tokens_exact(&mut t).unwrap(), truth);
            }
            prop_assert_eq!(bounded.context_tokens_exact(&mut bounds_table).unwrap(), truth);
            prop_assert_eq!(bounded.context_tokens(), bounded.context_tokens_recomputed());
        }
    }
}
