//! What the compactor keeps about each message it has seen, so that each
//! turn costs only the new messages: a few numbers per message (never the
//! content) and running totals for the current LLM context.

use super::context_tokens::{estimate_with_usage_after, ContextTokens};
use super::estimate::MessageFacts;
use super::role::Role;

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
        let index = self.facts.len();
        self.facts.push(f);
        if f.role == Role::CompactionSummary {
            self.last_summary = Some(index);
            self.last_usage = None;
            self.trailing = f.tokens;
            return;
        }
        let stale_until = self.last_summary.map(|i| self.facts[i].timestamp);
        let fresh = stale_until.is_none_or(|t| f.timestamp > t);
        match f.usage.filter(|_| fresh) {
            Some(usage) => {
                self.last_usage = Some((index, usage));
                self.trailing = 0;
            }
            None => self.trailing += f.tokens,
        }
    }

    /// Forgets messages from `len` on (the array changed there). Linear in
    /// what is kept, and only done when the array is replaced.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.facts.len() {
            return;
        }
        let kept: Vec<MessageFacts> = self.facts[..len].to_vec();
        *self = ContextIndex::default();
        self.facts.reserve(kept.len());
        for f in kept {
            self.push(f);
        }
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

    fn f(role: Role, tokens: u64, usage: Option<f64>, timestamp: f64) -> MessageFacts {
        MessageFacts {
            role,
            tokens,
            usage,
            timestamp,
        }
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
        ix.truncate(1);
        assert_eq!(ix.context_tokens().tokens, 50.0);
        ix.truncate(0);
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

    proptest! {
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
            ix.truncate(cut);
            prop_assert_eq!(ix.context_tokens(), ix.context_tokens_recomputed());
        }
    }
}
