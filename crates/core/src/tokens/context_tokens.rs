//! How full the model's context is: the last usage an assistant message
//! reported, plus estimates of the messages after it (pi's
//! `estimateContextTokens`), and the threshold check (`shouldCompact`).

use crate::error::InputError;
use crate::js::options::{expect_object, Reader, Value};
use crate::message::role::Role;
use crate::tokens::estimate::MessageFacts;
use std::convert::Infallible;

/// pi's `estimateContextTokens` result. Numbers are JavaScript numbers: a
/// provider's odd usage (a missing field) makes them NaN, as in pi.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContextTokens {
    pub tokens: f64,
    pub usage_tokens: f64,
    pub trailing_tokens: f64,
    pub last_usage_index: Option<usize>,
}

/// pi's `estimateContextTokens(messages)` over the facts of those messages.
pub fn estimate_context_tokens(facts: &[MessageFacts]) -> ContextTokens {
    let newest_first = facts
        .iter()
        .copied()
        .enumerate()
        .rev()
        .map(Ok::<_, Infallible>);
    let Ok(c) = estimate_from_end(newest_first, Stale::Nothing);
    c
}

/// Which reported usage is stale after the last summary (SPEC §3, "Stale
/// usage"): the messages a compaction kept still carry the usage of the
/// old, larger context. Decided by position in the array, never by
/// comparing clocks, when the summary says how many messages it kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stale {
    /// No summary: every usage counts.
    Nothing,
    /// Usage of the messages up to this index (the summary and the
    /// messages it kept, its `keptMessages`) is stale.
    Through(usize),
    /// A summary that does not say what it kept (written by hand, or by an
    /// older version of this package): usage from at or before its
    /// timestamp is stale.
    NotAfter(f64),
}

impl Stale {
    /// What is stale after the summary at `summary` (with its facts).
    pub fn after(summary: Option<(usize, &MessageFacts)>) -> Stale {
        match summary {
            None => Stale::Nothing,
            Some((s, f)) => match f.kept_messages() {
                Some(kept) => Stale::Through(s.saturating_add(kept)),
                None => Stale::NotAfter(f.timestamp),
            },
        }
    }

    /// Whether usage reported by the message at `index` counts.
    pub fn is_fresh(self, index: usize, f: &MessageFacts) -> bool {
        match self {
            Stale::Nothing => true,
            Stale::Through(last) => index > last,
            Stale::NotAfter(t) => f.timestamp > t,
        }
    }
}

/// Like [`estimate_context_tokens`] over the context (`facts[i]` is message
/// `i`), with usage that is [`Stale`] ignored, and what `toolOutputCleared`
/// markers after the last summary freed taken off while it still counts
/// ([`marker_counts`]).
pub fn estimate_with_usage_after(
    facts: &[MessageFacts],
    summary: Option<usize>,
    stale: Stale,
) -> ContextTokens {
    let newest_first = facts
        .iter()
        .copied()
        .enumerate()
        .rev()
        .map(Ok::<_, Infallible>);
    let Ok(mut c) = estimate_from_end(newest_first, stale);
    let freed: u64 = facts
        .iter()
        .enumerate()
        .skip(summary.map_or(0, |s| s + 1))
        .filter(|(_, f)| f.role == Role::ToolOutputCleared)
        .filter(|&(m, f)| marker_counts(m, f, stale, c.last_usage_index))
        .map(|(_, f)| f.tokens_freed())
        .sum();
    c.tokens = less_freed(c.tokens, freed);
    c
}

/// `tokens` less what markers freed, never below 0 (NaN stays NaN).
pub fn less_freed(tokens: f64, freed: u64) -> f64 {
    if freed == 0 {
        return tokens;
    }
    let t = tokens - freed as f64;
    if t < 0.0 {
        0.0
    } else {
        t
    }
}

/// The walk itself, over `(index, facts)` pairs from the newest message
/// back: it stops at the last valid usage, so a caller that produces facts
/// lazily pays only for the messages after it.
pub fn estimate_from_end<E>(
    newest_first: impl Iterator<Item = Result<(usize, MessageFacts), E>>,
    stale: Stale,
) -> Result<ContextTokens, E> {
    let mut trailing: u64 = 0;
    for item in newest_first {
        let (index, f) = item?;
        if let Some(usage_tokens) = f.usage().filter(|_| stale.is_fresh(index, &f)) {
            return Ok(ContextTokens {
                tokens: usage_tokens + trailing as f64,
                usage_tokens,
                trailing_tokens: trailing as f64,
                last_usage_index: Some(index),
            });
        }
        trailing += u64::from(f.tokens);
    }
    Ok(ContextTokens {
        tokens: trailing as f64,
        usage_tokens: 0.0,
        trailing_tokens: trailing as f64,
        last_usage_index: None,
    })
}

/// pi's `shouldCompact(contextTokens, contextWindow, settings)`.
pub fn should_compact(
    context_tokens: f64,
    context_window: f64,
    enabled: bool,
    reserve_tokens: f64,
) -> bool {
    enabled && context_tokens > context_window - reserve_tokens
}

/// `shouldCompact`'s `settings`: an object; `enabled` (truthy) and
/// `reserveTokens` (a number), read in that order.
pub fn should_compact_settings<V: Value>(
    settings: &V,
    r: &Reader<V>,
) -> Result<(bool, f64), InputError> {
    expect_object(r.root, settings, "an object")?;
    let enabled = r.truthy("enabled")?;
    Ok((enabled, r.required_number("reserveTokens")?))
}

/// The facts of messages `[start, len)`, newest first, read in chunks from
/// the end: `first` messages, then twice as many each time up to `cap`, so
/// that a walk that stops early ([`estimate_from_end`] stops at the last
/// usage) reads little of a long session. `read(from, to)` gives the facts
/// of `[from, to)`; a failed read ends the walk with its error.
pub fn read_back<E>(
    len: usize,
    start: usize,
    first: usize,
    cap: usize,
    mut read: impl FnMut(usize, usize) -> Result<Vec<MessageFacts>, E>,
) -> impl Iterator<Item = Result<(usize, MessageFacts), E>> {
    let (mut end, mut size, mut failed) = (len, first.max(1), false);
    let mut pending: Vec<(usize, MessageFacts)> = Vec::new();
    std::iter::from_fn(move || {
        if pending.is_empty() && !failed && end > start {
            let from = end.saturating_sub(size).max(start);
            match read(from, end) {
                Ok(facts) => pending = (from..end).zip(facts).collect(),
                Err(e) => {
                    failed = true;
                    return Some(Err(e));
                }
            }
            (end, size) = (from, size.saturating_mul(2).min(cap));
        }
        pending.pop().map(Ok)
    })
}

/// Whether what the marker at index `marker` (with facts `f`), which
/// comes after the last summary, freed still counts off the context
/// tokens, decided by position in the array: the marker was made after
/// that summary (not among the messages it kept: a marker from before the
/// summary may have cleared outputs the summary's context no longer holds),
/// and the last usage that counts (`usage`) comes before it (usage reported
/// after the clearing already saw the placeholders). A clearing appends its
/// marker at the end of the array, so what comes after it came after the
/// clearing.
pub fn marker_counts(marker: usize, f: &MessageFacts, stale: Stale, usage: Option<usize>) -> bool {
    stale.is_fresh(marker, f) && usage.is_none_or(|u| u < marker)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn read_back_reads_growing_chunks_newest_first_and_stops_when_asked() {
        let all: Vec<MessageFacts> = (0..40)
            .map(|i| MessageFacts::new(Role::User, 1, None, i as f64))
            .collect();
        let mut reads = Vec::new();
        let indices: Vec<usize> = read_back(40, 3, 4, 16, |from, to| {
            reads.push((from, to));
            Ok::<_, ()>(all[from..to].to_vec())
        })
        .map(|r| r.unwrap().0)
        .collect();
        assert_eq!(indices, (3..40).rev().collect::<Vec<_>>());
        assert_eq!(reads, vec![(36, 40), (28, 36), (12, 28), (3, 12)]);
        // A walk that stops early reads only its chunks.
        let mut reads = 0;
        let first_five = read_back(40, 0, 4, usize::MAX, |from, to| {
            reads += 1;
            Ok::<_, ()>(all[from..to].to_vec())
        })
        .take(5)
        .count();
        assert_eq!((first_five, reads), (5, 2));
        // A failed read is the last item.
        let mut walk = read_back(40, 0, 4, 8, |_, _| Err::<Vec<MessageFacts>, _>("no"));
        assert_eq!(walk.next(), Some(Err("no")));
        assert_eq!(walk.next(), None);
        assert_eq!(
            read_back(0, 0, 4, 8, |_, _| Ok::<_, ()>(Vec::new())).count(),
            0
        );
    }
    use crate::message::role::Role;

    fn m(role: Role, tokens: u64, usage: Option<f64>, timestamp: f64) -> MessageFacts {
        MessageFacts::new(role, tokens, usage, timestamp)
    }

    #[test]
    fn without_usage_everything_is_estimated() {
        let facts = [
            m(Role::User, 10, None, 1.0),
            m(Role::Assistant, 5, None, 2.0),
        ];
        assert_eq!(
            estimate_context_tokens(&facts),
            ContextTokens {
                tokens: 15.0,
                usage_tokens: 0.0,
                trailing_tokens: 15.0,
                last_usage_index: None
            }
        );
    }

    #[test]
    fn the_last_usage_plus_what_follows() {
        let facts = [
            m(Role::User, 10, None, 1.0),
            m(Role::Assistant, 5, Some(1000.0), 2.0),
            m(Role::Assistant, 5, Some(2000.0), 3.0),
            m(Role::ToolResult, 7, None, 4.0),
            m(Role::User, 3, None, 5.0),
        ];
        let c = estimate_context_tokens(&facts);
        assert_eq!(c.tokens, 2010.0);
        assert_eq!(c.usage_tokens, 2000.0);
        assert_eq!(c.trailing_tokens, 10.0);
        assert_eq!(c.last_usage_index, Some(2));
    }

    #[test]
    fn stale_usage_is_ignored_after_a_compaction() {
        let facts = [
            MessageFacts::summary(100, Some(2), 10.0),
            m(Role::User, 10, None, 5.0),
            m(Role::Assistant, 20, Some(180_000.0), 6.0),
            m(Role::User, 3, None, 11.0),
        ];
        let stale = Stale::after(Some((0, &facts[0])));
        assert_eq!(stale, Stale::Through(2));
        // pi's function trusts the old usage...
        assert_eq!(estimate_context_tokens(&facts).tokens, 180_003.0);
        // ...the compactor does not, until a newer assistant reports.
        let fresh = estimate_with_usage_after(&facts, Some(0), stale);
        assert_eq!(fresh.tokens, 133.0);
        assert_eq!(fresh.last_usage_index, None);
        let mut newer = facts.to_vec();
        newer.push(m(Role::Assistant, 4, Some(5000.0), 12.0));
        newer.push(m(Role::User, 1, None, 13.0));
        let c = estimate_with_usage_after(&newer, Some(0), stale);
        assert_eq!((c.tokens, c.last_usage_index), (5001.0, Some(4)));
        // By position: the same with every timestamp shifted or equal.
        for t in [-1e13, 0.0, 1e13] {
            let mut shifted = newer.clone();
            for f in &mut shifted {
                f.timestamp = if t == 0.0 { 7.0 } else { f.timestamp + t };
            }
            let s = Stale::after(Some((0, &shifted[0])));
            assert_eq!(estimate_with_usage_after(&shifted, Some(0), s), c);
        }
        // A summary that does not say what it kept: timestamps decide, and
        // a message stamped exactly at the summary's time is stale too.
        let legacy = MessageFacts::summary(100, None, 10.0);
        let stale = Stale::after(Some((0, &legacy)));
        assert_eq!(stale, Stale::NotAfter(10.0));
        assert!(!stale.is_fresh(5, &m(Role::Assistant, 4, Some(9.0), 10.0)));
        assert!(stale.is_fresh(1, &m(Role::Assistant, 4, Some(9.0), 11.0)));
    }

    #[test]
    fn what_markers_freed_counts_until_usage_is_reported_after_them() {
        let facts = [
            m(Role::User, 10, None, 1.0),
            m(Role::ToolResult, 50_000, None, 2.0),
            m(Role::Assistant, 5, Some(60_000.0), 3.0),
            MessageFacts::cleared(49_000, 4.0),
            m(Role::User, 3, None, 5.0),
        ];
        let none = Stale::Nothing;
        // The usage at 2 counted the output in full; the marker at 3 takes
        // it off.
        assert_eq!(
            estimate_with_usage_after(&facts, None, none).tokens,
            11_003.0
        );
        // pi's function knows nothing of markers.
        assert_eq!(estimate_context_tokens(&facts).tokens, 60_003.0);
        // Usage reported after the marker saw the placeholder already,
        // whatever its timestamp.
        let mut later = facts.to_vec();
        later.push(m(Role::Assistant, 5, Some(12_000.0), 0.5));
        assert_eq!(
            estimate_with_usage_after(&later, None, none).tokens,
            12_000.0
        );
        // A marker a summary kept (made before it) does not count.
        let mut kept = vec![MessageFacts::summary(100, Some(5), 9.0)];
        kept.extend_from_slice(&facts);
        let stale = Stale::after(Some((0, &kept[0])));
        assert_eq!(
            estimate_with_usage_after(&kept, Some(0), stale).tokens,
            50_118.0
        );
        // Never below zero; NaN stays NaN.
        let odd = [MessageFacts::cleared(100, 1.0), m(Role::User, 3, None, 2.0)];
        assert_eq!(estimate_with_usage_after(&odd, None, none).tokens, 0.0);
        assert!(less_freed(f64::NAN, 5).is_nan());
    }

    #[test]
    fn markers_count_by_position_until_usage_is_reported_after_them() {
        let marker = MessageFacts::cleared(10, 5.0);
        let none = Stale::Nothing;
        // No usage: counts.
        assert!(marker_counts(10, &marker, none, None));
        // Usage reported before the marker in the array: counts.
        assert!(marker_counts(10, &marker, none, Some(9)));
        // Usage reported after it already saw the placeholders.
        assert!(!marker_counts(10, &marker, none, Some(11)));
        // A marker among the messages a summary kept does not count; one
        // after them does.
        assert!(!marker_counts(10, &marker, Stale::Through(10), None));
        assert!(marker_counts(11, &marker, Stale::Through(10), None));
        // A summary that does not say what it kept: timestamps decide.
        assert!(!marker_counts(10, &marker, Stale::NotAfter(5.0), None));
        assert!(marker_counts(10, &marker, Stale::NotAfter(4.0), None));
    }

    #[test]
    fn threshold_is_strictly_over_window_minus_reserve() {
        assert!(!should_compact(183_616.0, 200_000.0, true, 16_384.0));
        assert!(should_compact(183_617.0, 200_000.0, true, 16_384.0));
        assert!(!should_compact(1e9, 200_000.0, false, 16_384.0));
        assert!(!should_compact(f64::NAN, 200_000.0, true, 16_384.0));
    }

    #[test]
    fn should_compact_reads_enabled_then_the_reserve() {
        use crate::js::options::tests::{Fields, Js};
        use crate::js::options::Reader;
        let o = Fields::new(vec![
            ("enabled", Js::Num(1.0)),
            ("reserveTokens", Js::Num(16.0)),
        ]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "settings",
            get: &get,
        };
        assert_eq!(should_compact_settings(&Js::Obj, &r), Ok((true, 16.0)));
        assert_eq!(*o.reads.borrow(), ["enabled", "reserveTokens"]);
        let o = Fields::new(vec![]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "settings",
            get: &get,
        };
        let error = |v: Js| should_compact_settings(&v, &r).unwrap_err().to_string();
        assert_eq!(
            error(Js::Obj),
            "settings.reserveTokens must be a number, got undefined"
        );
        assert_eq!(error(Js::Null), "settings must be an object, got null");
    }
}
