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

use crate::message::role::Role;
use crate::tokens::context_tokens::{estimate_with_usage_after, ContextTokens};
use crate::tokens::estimate::MessageFacts;
use std::convert::Infallible;

#[derive(Clone, Debug, Default)]
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
                let tokens = self.tokens_of(index, &mut fill)?;
                self.trailing += tokens;
            }
        }
        Ok(())
    }

    /// Adds the next message, leaving a pending estimate unmeasured when it
    /// counts (its bound in the slack): the calibrated estimate reads the
    /// message's text, so a turn reads none unless a decision needs it
    /// ([`exceeds`](Self::exceeds) measures only when the bounds leave the
    /// answer open). Constant time.
    pub fn push_deferred(&mut self, f: MessageFacts) {
        let index = self.facts.len();
        self.facts.push(f);
        if f.role == Role::CompactionSummary {
            self.last_summary = Some(index);
            self.last_usage = None;
            self.reset_trailing(0);
            self.count_deferred(&f);
            return;
        }
        match f.usage().filter(|_| self.is_fresh(&f)) {
            Some(usage) => {
                self.last_usage = Some((index, usage));
                self.reset_trailing(0);
            }
            None => self.count_deferred(&f),
        }
    }

    fn count_deferred(&mut self, f: &MessageFacts) {
        if f.tokens_pending {
            self.unmeasured += 1;
            self.slack = self.slack.saturating_add(u64::from(f.tokens));
        } else {
            self.trailing += u64::from(f.tokens);
        }
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

    /// The estimate of message `index`, filled in first if it is pending.
    fn tokens_of<E>(
        &mut self,
        index: usize,
        fill: &mut impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<u64, E> {
        let f = &mut self.facts[index];
        if f.tokens_pending {
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
        self.facts.insert(at.min(self.facts.len()), f);
        self.recompute(Some(&mut fill))
    }

    /// The message at `at` taken out (a failed attempt, an undone summary).
    pub fn remove<E>(
        &mut self,
        at: usize,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        if at < self.facts.len() {
            self.facts.remove(at);
            return self.recompute(Some(&mut fill));
        }
        Ok(())
    }

    /// [`truncate`](Self::truncate), leaving pending estimates unmeasured.
    pub fn truncate_bounded(&mut self, len: usize) {
        if len < self.facts.len() {
            self.facts.truncate(len);
            self.recompute_bounded();
        }
    }

    /// [`insert`](Self::insert), leaving pending estimates unmeasured.
    pub fn insert_bounded(&mut self, at: usize, f: MessageFacts) {
        self.facts.insert(at.min(self.facts.len()), f);
        self.recompute_bounded();
    }

    /// [`remove`](Self::remove), leaving pending estimates unmeasured.
    pub fn remove_bounded(&mut self, at: usize) {
        if at < self.facts.len() {
            self.facts.remove(at);
            self.recompute_bounded();
        }
    }

    fn recompute_bounded(&mut self) {
        let Ok(()) = self.recompute(None::<&mut fn(usize) -> Result<u64, Infallible>>);
    }

    /// The running totals from the stored facts, after a change in the
    /// middle: walks back from the end only as far as it must (to the last
    /// summary, and within the context to the last fresh usage). A pending
    /// estimate is measured with `fill`, or without it left out of the
    /// totals and its bound added to the slack.
    fn recompute<E>(
        &mut self,
        mut fill: Option<&mut impl FnMut(usize) -> Result<u64, E>>,
    ) -> Result<(), E> {
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
            match fill.as_mut() {
                Some(fill) => {
                    let tokens = self.tokens_of(i, fill)?;
                    self.trailing += tokens;
                }
                None if f.tokens_pending => {
                    self.unmeasured += 1;
                    self.slack = self.slack.saturating_add(u64::from(f.tokens));
                }
                None => self.trailing += u64::from(f.tokens),
            }
        }
        Ok(())
    }

    /// Measures the pending estimates that count (those after the last
    /// fresh usage), so that the totals are exact.
    fn measure_trailing<E>(
        &mut self,
        mut fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        if self.unmeasured == 0 {
            return Ok(());
        }
        let from = self
            .last_usage
            .map_or(self.context_start(), |(index, _)| index + 1);
        for i in from..self.facts.len() {
            if self.facts[i].tokens_pending {
                let tokens = self.tokens_of(i, &mut fill)?;
                self.trailing += tokens;
            }
        }
        self.unmeasured = 0;
        self.slack = 0;
        Ok(())
    }

    /// The estimated tokens of the LLM context now, with SPEC §3's stale
    /// usage rule (usage from at or before the last summary is ignored).
    /// Exact when [`unmeasured`](Self::unmeasured) is 0 (always, unless a
    /// `*_bounded` edit left some); otherwise a lower bound, the unmeasured
    /// messages left out — see [`context_tokens_exact`](Self::context_tokens_exact).
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
    /// measuring the unmeasured messages only when their bounds leave the
    /// answer open.
    ///
    /// [`context_tokens_exact`]: Self::context_tokens_exact
    pub fn exceeds<E>(
        &mut self,
        threshold: f64,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<bool, E> {
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
            self.measure_trailing(fill)?;
        }
        Ok(self.context_tokens().tokens > threshold)
    }

    /// The same number computed from scratch (for tests and checks; with
    /// unmeasured messages, their bounds counted).
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

    #[test]
    fn deferred_pushes_measure_only_when_a_decision_needs_it() {
        let pending = |role, bound, usage, t| {
            let mut m = f(role, bound, usage, t);
            m.tokens_pending = true;
            m
        };
        let mut ix = ContextIndex::default();
        ix.push_deferred(pending(Role::User, 100, None, 1.0));
        ix.push_deferred(pending(Role::Assistant, 300, Some(5000.0), 2.0));
        ix.push_deferred(pending(Role::ToolResult, 400, None, 3.0));
        ix.push_deferred(f(Role::User, 7, None, 4.0));
        assert_eq!(ix.unmeasured(), 1);
        // Far from the threshold either way: nothing is measured.
        assert!(!ix.exceeds(10_000.0, no_fill).unwrap());
        assert!(ix.exceeds(1000.0, no_fill).unwrap());
        // Between the lower and upper ends: measured, once.
        let mut asked = Vec::new();
        let mut fill = |i| {
            asked.push(i);
            Ok::<u64, ()>(50)
        };
        assert!(ix.exceeds(5050.0, &mut fill).unwrap());
        assert_eq!(asked, vec![2]);
        assert_eq!(ix.context_tokens().tokens, 5057.0);
        assert_eq!(ix.unmeasured(), 0);
        // A summary deferred: the context starts there, its bound in the slack.
        ix.push_deferred(pending(Role::CompactionSummary, 80, None, 5.0));
        assert_eq!((ix.context_start(), ix.unmeasured()), (4, 1));
        let c = ix.context_tokens_exact(|_| Ok::<u64, ()>(20)).unwrap();
        assert_eq!(c.tokens, 20.0);
        assert_eq!(ix.context_tokens_recomputed().tokens, 20.0);
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

    /// A lazily gathered assistant: `bound` is what gathering could tell
    /// of its estimate (`u32::MAX`: nothing).
    fn pending(bound: u64, usage: f64, timestamp: f64) -> MessageFacts {
        let mut p = f(Role::Assistant, bound, Some(usage), timestamp);
        p.tokens_pending = true;
        p
    }

    /// Measures from `exact`, recording what it was asked for.
    fn measure<'a>(
        exact: &'a [u64],
        asked: &'a mut Vec<usize>,
    ) -> impl FnMut(usize) -> Result<u64, ()> + 'a {
        move |i| {
            asked.push(i);
            exact.get(i).copied().ok_or(())
        }
    }

    #[test]
    fn bounds_spare_measuring_until_the_threshold_needs_it() {
        let mut ix = ContextIndex::default();
        ix.push(f(Role::User, 10, None, 1.0));
        ix.push(pending(90, 150_000.0, 2.0));
        ix.push(f(Role::ToolResult, 20, None, 3.0));
        ix.push(pending(300, 160_000.0, 4.0));
        assert_eq!(ix.context_tokens().tokens, 160_000.0);
        // Indexes 0..=4 after the summary goes in at 0.
        let exact = [100, 10, 40, 20, 60];
        let mut asked = Vec::new();
        ix.insert_bounded(0, f(Role::CompactionSummary, 100, None, 5.0));
        // Both kept assistants are stale now: left out, their bounds known.
        assert_eq!(ix.unmeasured(), 2);
        assert_eq!(ix.context_tokens().tokens, 130.0);
        // Lower end 130, upper end 130 + 90 + 300 = 520.
        assert!(!ix.exceeds(520.0, measure(&exact, &mut asked)).unwrap());
        assert!(ix.exceeds(129.0, measure(&exact, &mut asked)).unwrap());
        assert!(asked.is_empty());
        // Within the range: measured, and then exact.
        assert!(ix.exceeds(200.0, measure(&exact, &mut asked)).unwrap());
        assert_eq!(asked, vec![2, 4]);
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
        ix.push(pending(u64::from(u32::MAX), 150_000.0, 1.0));
        let exact = [100, 50, 3];
        let mut asked = Vec::new();
        ix.insert_bounded(0, f(Role::CompactionSummary, 100, None, 2.0));
        assert_eq!(ix.unmeasured(), 1);
        // No bound (as many tokens as can be counted): any threshold from
        // what is known up to that needs measuring.
        assert!(!ix
            .clone()
            .exceeds(1e6, measure(&exact, &mut asked))
            .unwrap());
        assert_eq!(asked, vec![1]);
        asked.clear();
        ix.push_with(f(Role::Assistant, 3, Some(900.0), 3.0), no_fill)
            .unwrap();
        assert_eq!(ix.unmeasured(), 0);
        let tokens = ix.context_tokens_exact(measure(&exact, &mut asked));
        assert_eq!(tokens.unwrap().tokens, 900.0);
        assert!(asked.is_empty());
        // Filling a range before a cut point search counts them again.
        ix.remove_bounded(2);
        assert_eq!(ix.unmeasured(), 1);
        ix.fill_pending(0..ix.len(), measure(&exact, &mut asked))
            .unwrap();
        assert_eq!(asked, vec![1]);
        assert_eq!(ix.unmeasured(), 0);
        assert_eq!(ix.context_tokens().tokens, 150.0);
        assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
    }

    /// Facts with lazily gathered assistants (their bound tight, loose or
    /// unknown), and every message's measured estimate.
    fn arb_session() -> impl Strategy<Value = (Vec<MessageFacts>, Vec<u64>)> {
        let message = prop_oneof![
            arb_facts(),
            (0u64..3000, 0.0f64..200_000.0, 0.0f64..100.0).prop_map(|(t, usage, ts)| f(
                Role::Assistant,
                t,
                Some(usage),
                ts
            )),
        ];
        proptest::collection::vec((message, 0u64..3000, 0u8..4), 1..50).prop_map(|items| {
            let mut facts = Vec::new();
            let mut exact = Vec::new();
            for (mut m, extra, kind) in items {
                let measured = u64::from(m.tokens);
                if m.role == Role::Assistant && m.usage().is_some() && kind > 0 {
                    m.tokens_pending = true;
                    m.tokens = match kind {
                        1 => m.tokens,
                        2 => m.tokens.saturating_add(extra as u32),
                        _ => u32::MAX,
                    };
                }
                facts.push(m);
                exact.push(measured);
            }
            (facts, exact)
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
            (facts, exact) in arb_session(),
            summary in arb_facts(),
            at in 0usize..60,
            edit in 0u8..3,
            late in any::<bool>(),
            after in proptest::collection::vec(arb_facts(), 0..4),
            offsets in proptest::collection::vec(-3000.0f64..3000.0, 1..6),
        ) {
            // The same edits, once measuring everything, once bounded.
            let mut exact = exact;
            let mut measured = ContextIndex::default();
            let mut bounded = ContextIndex::default();
            let mut asked = Vec::new();
            for m in &facts {
                measured.push_with(*m, measure(&exact, &mut asked)).unwrap();
                bounded.push_with(*m, measure(&exact, &mut asked)).unwrap();
            }
            // Late: stamped after every message, so every kept usage is stale.
            let stamp = summary.timestamp + if late { 100.0 } else { 0.0 };
            let summary = f(Role::CompactionSummary, u64::from(summary.tokens), None, stamp);
            let at = at % (facts.len() + 1);
            match edit {
                0 => {
                    exact.insert(at, u64::from(summary.tokens));
                    measured.insert(at, summary, measure(&exact, &mut asked)).unwrap();
                    bounded.insert_bounded(at, summary);
                }
                1 => {
                    let at = at % facts.len();
                    exact.remove(at);
                    measured.remove(at, measure(&exact, &mut asked)).unwrap();
                    bounded.remove_bounded(at);
                }
                _ => {
                    exact.truncate(at);
                    measured.truncate(at, measure(&exact, &mut asked)).unwrap();
                    bounded.truncate_bounded(at);
                }
            }
            prop_assert_eq!(measured.unmeasured(), 0);
            for m in &after {
                exact.push(u64::from(m.tokens));
                measured.push_with(*m, measure(&exact, &mut asked)).unwrap();
                bounded.push_with(*m, measure(&exact, &mut asked)).unwrap();
            }
            let truth = measured.context_tokens();
            prop_assert!(bounded.context_tokens().tokens <= truth.tokens || truth.tokens.is_nan());
            // Thresholds near the number, where the bounds leave it open.
            for th in offsets.iter().map(|o| truth.tokens + o.round()) {
                let mut b = bounded.clone();
                prop_assert_eq!(b.exceeds(th, measure(&exact, &mut asked)).unwrap(), truth.tokens > th, "threshold {}", th);
                prop_assert_eq!(b.context_tokens_exact(measure(&exact, &mut asked)).unwrap(), truth);
            }
            prop_assert_eq!(bounded.context_tokens_exact(measure(&exact, &mut asked)).unwrap(), truth);
            prop_assert_eq!(bounded.context_tokens(), bounded.context_tokens_recomputed());
        }
    }
}
