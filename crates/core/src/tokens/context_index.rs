//! What the compactor keeps about each message it has seen, so that each
//! turn costs only the new messages: a few numbers per message (never the
//! content) and running totals for the current LLM context.

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
    /// summary), and the estimates of the context messages after it.
    last_usage: Option<(usize, f64)>,
    trailing: u64,
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
            self.trailing = u64::from(f.tokens);
            return Ok(());
        }
        match f.usage().filter(|_| self.is_fresh(&f)) {
            Some(usage) => {
                self.last_usage = Some((index, usage));
                self.trailing = 0;
            }
            None => {
                let tokens = self.tokens_of(index, &mut fill)?;
                self.trailing += tokens;
            }
        }
        Ok(())
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
        Ok(())
    }

    /// Forgets messages from `len` on (the array changed there).
    pub fn truncate<E>(
        &mut self,
        len: usize,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        if len < self.facts.len() {
            self.facts.truncate(len);
            return self.recompute(fill);
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
        self.facts.insert(at.min(self.facts.len()), f);
        self.recompute(fill)
    }

    /// The message at `at` taken out (a failed attempt, an undone summary).
    pub fn remove<E>(
        &mut self,
        at: usize,
        fill: impl FnMut(usize) -> Result<u64, E>,
    ) -> Result<(), E> {
        if at < self.facts.len() {
            self.facts.remove(at);
            return self.recompute(fill);
        }
        Ok(())
    }

    /// The running totals from the stored facts, after a change in the
    /// middle: walks back from the end only as far as it must (to the last
    /// summary, and within the context to the last fresh usage), filling in
    /// the estimates it needs.
    fn recompute<E>(&mut self, mut fill: impl FnMut(usize) -> Result<u64, E>) -> Result<(), E> {
        self.last_summary = self
            .facts
            .iter()
            .rposition(|f| f.role == Role::CompactionSummary);
        self.last_usage = None;
        self.trailing = 0;
        for i in (self.context_start()..self.facts.len()).rev() {
            let f = self.facts[i];
            if let Some(usage) = f.usage().filter(|_| self.is_fresh(&f)) {
                self.last_usage = Some((i, usage));
                break;
            }
            let tokens = self.tokens_of(i, &mut fill)?;
            self.trailing += tokens;
        }
        Ok(())
    }

    /// The estimated tokens of the LLM context now, with SPEC §3's stale
    /// usage rule (usage from at or before the last summary is ignored).
    pub fn context_tokens(&self) -> ContextTokens {
        match self.last_usage {
            Some((index, usage_tokens)) => ContextTokens {
                tokens: usage_tokens + self.trailing as f64,
                usage_tokens,
                trailing_tokens: self.trailing as f64,
                last_usage_index: Some(index),
            },
            None => ContextTokens {
                tokens: self.trailing as f64,
                usage_tokens: 0.0,
                trailing_tokens: self.trailing as f64,
                last_usage_index: None,
            },
        }
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
    }
}
