//! Splitting a long history into pieces a summarizer can take: each piece
//! is summarized in turn and folded into the running summary with the
//! update prompt.

use std::ops::Range;

/// Characters a request needs besides the conversation: system prompt,
/// instructions and format (measured at about 2,300; rounded up).
pub const PROMPT_OVERHEAD_CHARS: usize = 4_000;

/// Characters available for the conversation text of one request to a
/// summarizer with `window_tokens`, answering in up to `max_tokens`, with a
/// previous summary of `previous_chars` in the prompt (chars/4 per token,
/// the estimate used everywhere else). Never below 4,000 characters, so
/// that a tiny window still makes progress.
pub fn conversation_budget(window_tokens: u64, max_tokens: u64, previous_chars: usize) -> usize {
    let window_chars = window_tokens.saturating_sub(max_tokens).saturating_mul(4);
    let budget = usize::try_from(window_chars)
        .unwrap_or(usize::MAX)
        .saturating_sub(PROMPT_OVERHEAD_CHARS)
        .saturating_sub(previous_chars);
    budget.max(4_000)
}

/// Groups consecutive messages, given the length of each one's serialized
/// text (0 for a message that serializes to nothing), into ranges whose
/// texts joined with `"\n\n"` fit `budget`. A message longer than the
/// budget forms a range of its own (the caller cuts its text).
pub fn chunk_ranges(lengths: &[usize], budget: usize) -> Vec<Range<usize>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut used = 0usize;
    let mut parts = 0usize;
    for (i, &len) in lengths.iter().enumerate() {
        if len == 0 {
            continue;
        }
        let added = if parts == 0 { len } else { len + 2 };
        if parts > 0 && used + added > budget {
            chunks.push(start..i);
            start = i;
            used = len;
            parts = 1;
        } else {
            used += added;
            parts += 1;
        }
    }
    if start < lengths.len() {
        chunks.push(start..lengths.len());
    }
    chunks
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn everything_fits_in_one_chunk() {
        assert_eq!(chunk_ranges(&[10, 20, 30], 100), vec![0..3]);
        assert_eq!(chunk_ranges(&[], 100), Vec::<Range<usize>>::new());
    }

    #[test]
    fn splits_at_message_boundaries_counting_separators() {
        // 10 + 2 + 10 = 22 fits; + 2 + 10 = 34 does not fit 30.
        assert_eq!(chunk_ranges(&[10, 10, 10, 10], 30), vec![0..2, 2..4]);
        assert_eq!(chunk_ranges(&[10, 10, 10, 10], 22), vec![0..2, 2..4]);
        assert_eq!(
            chunk_ranges(&[10, 10, 10, 10], 21),
            vec![0..1, 1..2, 2..3, 3..4]
        );
    }

    #[test]
    fn an_oversized_message_stands_alone_and_empty_ones_ride_along() {
        assert_eq!(chunk_ranges(&[5, 500, 5, 0, 5], 20), vec![0..1, 1..2, 2..5]);
        assert_eq!(chunk_ranges(&[0, 0], 20), vec![0..2]);
    }

    #[test]
    fn budget_leaves_room_for_output_prompt_and_previous_summary() {
        assert_eq!(
            conversation_budget(128_000, 13_107, 0),
            (128_000 - 13_107) * 4 - PROMPT_OVERHEAD_CHARS
        );
        assert_eq!(
            conversation_budget(128_000, 13_107, 10_000),
            (128_000 - 13_107) * 4 - PROMPT_OVERHEAD_CHARS - 10_000
        );
        assert_eq!(conversation_budget(1_000, 13_107, 0), 4_000);
    }

    proptest! {
        #[test]
        fn chunks_cover_everything_in_order_and_fit(
            lengths in proptest::collection::vec(0usize..300, 0..80),
            budget in 1usize..1000,
        ) {
            let chunks = chunk_ranges(&lengths, budget);
            let mut next = 0;
            for c in &chunks {
                prop_assert_eq!(c.start, next);
                prop_assert!(c.end > c.start);
                next = c.end;
                let texts: Vec<usize> = lengths[c.clone()].iter().copied().filter(|&l| l > 0).collect();
                let joined = texts.iter().sum::<usize>() + 2 * texts.len().saturating_sub(1);
                prop_assert!(joined <= budget || texts.len() == 1, "chunk {:?} joined {} > {}", c, joined, budget);
            }
            prop_assert_eq!(next, if lengths.is_empty() { 0 } else { lengths.len() });
        }
    }
}
