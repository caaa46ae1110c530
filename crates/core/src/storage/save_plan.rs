//! What a save of a session writes: the ordering keys of new message
//! records, where the LLM context starts afterwards, which removals a
//! save may make on its own, and how durable its transaction is (as for
//! the store's other writes).
//!
//! Message records are keyed `[sessionId, ...position]`, where `position`
//! is a short list of numbers compared as IndexedDB compares arrays:
//! element by element, a proper prefix first. Appended messages get
//! `[last + 1]`; messages inserted between two records get a key that
//! extends the earlier one (`[5]`, `[5, 1]`, `[6]`), so an insertion in the
//! middle of a session (a `compactionSummary`) writes one record and never
//! renumbers the records after it. Keys never run out: each insertion at
//! the same spot adds at most one number.
//!
//! The alternative, an order list in the session's metadata record, would
//! rewrite a list as long as the session on every save.

use crate::message::role::Role;
use crate::tokens::estimate::RawFacts;
use crate::tokens::overflow::StopReason;
use std::cmp::Ordering;

/// The position part of a message record's key.
pub type Position = Vec<f64>;

/// IndexedDB's order of two position lists (numbers only, never NaN).
pub fn compare(a: &[f64], b: &[f64]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.partial_cmp(y) {
            Some(Ordering::Equal) | None => continue,
            Some(o) => return o,
        }
    }
    a.len().cmp(&b.len())
}

/// `count` positions, increasing, strictly between `before` and `after`
/// (either may be absent: the start or the end of the session).
/// `before < after` is required when both are given.
pub fn positions_between(
    before: Option<&[f64]>,
    after: Option<&[f64]>,
    count: usize,
) -> Vec<Position> {
    let n = count as f64;
    let top = |p: &[f64]| p.first().copied().unwrap_or(0.0);
    match (before, after) {
        (None, None) => (0..count).map(|i| vec![i as f64]).collect(),
        // Appended: the next whole numbers.
        (Some(a), None) => {
            let base = top(a).floor() + 1.0;
            (0..count).map(|i| vec![base + i as f64]).collect()
        }
        // Before the first record: whole numbers below it.
        (None, Some(b)) => {
            let base = top(b).ceil() - n;
            (0..count).map(|i| vec![base + i as f64]).collect()
        }
        (Some(a), Some(b)) => {
            // Whole numbers fit between two top-level records (a gap left
            // by a removal).
            if a.len() == 1 && b.len() == 1 && b[0].ceil() - a[0].floor() - 1.0 >= n {
                let base = a[0].floor() + 1.0;
                return (0..count).map(|i| vec![base + i as f64]).collect();
            }
            let extended = |x: f64| {
                let mut p = a.to_vec();
                p.push(x);
                p
            };
            if b.len() > a.len() && b[..a.len()] == a[..] {
                // `after` extends `before`: go below its next number.
                let c = b[a.len()];
                (0..count).map(|i| extended(c - n + i as f64)).collect()
            } else {
                // `before` and `after` differ within `before`: anything
                // that extends `before` sorts before `after`.
                (0..count).map(|i| extended(1.0 + i as f64)).collect()
            }
        }
    }
}

pub use crate::conversation::edit::Edit;

/// Keys of the inserted messages (in order), given the positions of the old
/// array's records. `old_len` is the old array's length.
pub fn inserted_positions(
    edit: &Edit,
    old_len: usize,
    mut old_position: impl FnMut(usize) -> Position,
) -> Vec<Position> {
    let kept = old_len - edit.removed.len();
    let mut removed = edit.removed.iter().copied().peekable();
    // The old index of the t-th kept message, for nondecreasing t: t plus
    // the removed messages before it. Each call steps over the removed
    // indices it passes, never over the kept ones: a turn's append costs
    // the same at every session size.
    let mut passed = 0usize;
    let mut survivor = |t: usize| -> usize {
        let mut k = t + passed;
        while removed.next_if(|&r| r <= k).is_some() {
            passed += 1;
            k += 1;
        }
        k
    };
    let mut out = Vec::with_capacity(edit.inserted.len());
    let mut i = 0;
    while i < edit.inserted.len() {
        // A run of consecutive new indices.
        let start = edit.inserted[i];
        let mut end = i + 1;
        while end < edit.inserted.len() && edit.inserted[end] == edit.inserted[end - 1] + 1 {
            end += 1;
        }
        let run = end - i;
        // Kept messages before the run.
        let t = start - i;
        // Runs are maximal, so a kept message separates two runs: `before`
        // is always a kept message's position.
        let before = (t > 0).then(|| old_position(survivor(t - 1)));
        let after = (t < kept).then(|| old_position(survivor(t)));
        out.extend(positions_between(before.as_deref(), after.as_deref(), run));
        i = end;
    }
    out
}

/// Where the LLM context starts in the new array: the last
/// `compactionSummary`. `old_last` is the old array's last summary;
/// `inserted_summaries` are the new array's inserted indices that are
/// summaries.
pub fn last_summary_after(
    edit: &Edit,
    old_last: Option<usize>,
    inserted_summaries: &[usize],
) -> LastSummary {
    let mapped = match old_last {
        None => None,
        Some(k) => match edit.new_index(k) {
            None => return LastSummary::Removed,
            j => j,
        },
    };
    LastSummary::Known(match (mapped, inserted_summaries.iter().max().copied()) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    })
}

/// The new array's last summary, as far as the edit tells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LastSummary {
    Known(Option<usize>),
    /// The old last summary was removed: the caller must look for one.
    Removed,
}

/// An assistant message that carries no answer (SPEC §1): an error stop, or
/// a `length` stop with zero output. The only messages a save may drop
/// without `{ replace: true }`.
pub fn is_failed_attempt(f: &RawFacts) -> bool {
    f.role == Some(Role::Assistant)
        && match f.stop_reason {
            Some(StopReason::Error) => true,
            Some(StopReason::Length) => f.usage.is_some_and(|u| u.output == 0.0),
            _ => false,
        }
}

/// Whether the removals of `edit` may be made without `{ replace: true }`:
/// they must be the trailing messages of the old array, each a failed
/// attempt. `Err(k)` names the first old index that may not be dropped.
pub fn check_removals(
    edit: &Edit,
    old_len: usize,
    mut failed_attempt: impl FnMut(usize) -> bool,
) -> Result<(), usize> {
    let first_trailing = old_len - edit.removed.len();
    for (n, &k) in edit.removed.iter().enumerate() {
        if k != first_trailing + n || !failed_attempt(k) {
            return Err(k);
        }
    }
    Ok(())
}

/// A list's preview of a session: its first user text with whitespace
/// collapsed, cut to `max` UTF-16 units (never inside a surrogate pair)
/// with an ellipsis.
pub fn preview(text: &[u16], max: usize) -> Vec<u16> {
    let is_space = |u: u16| matches!(u, 0x20 | 0x09 | 0x0A | 0x0D | 0x0C | 0x0B | 0xA0);
    let mut out: Vec<u16> = Vec::with_capacity(text.len().min(max + 1));
    let mut pending_space = false;
    for &u in text {
        if is_space(u) {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(0x20);
            pending_space = false;
        }
        out.push(u);
        if out.len() > max {
            break;
        }
    }
    if out.len() > max {
        let mut cut = max.saturating_sub(1);
        if cut > 0 && (0xD800..0xDC00).contains(&out[cut - 1]) {
            cut -= 1;
        }
        out.truncate(cut);
        while out.last() == Some(&0x20) {
            out.pop();
        }
        out.push(0x2026);
    }
    out
}

/// How durable a write transaction is (IndexedDB's `durability` hint; an
/// engine without it ignores the option and does what it always did).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// The engine's default: Chromium's is relaxed, reporting the commit
    /// before the disk has it (a power cut may lose the last commits, never
    /// half of one).
    Default,
    /// Reported committed once on disk.
    Strict,
}

impl Durability {
    /// The value of `IDBTransactionOptions.durability`.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Default => "default",
            Durability::Strict => "strict",
        }
    }
}

/// The write transactions of the store, by what they carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    /// A `save`; `summary`: it inserts a `compactionSummary`.
    Save { summary: bool },
    /// `fork` or `importJsonl`: a whole session.
    WholeSession,
    /// `createSession`, `rename`, `delete`: a record, cheap to redo.
    Metadata,
}

/// A save that carries a compaction, and a fork or an import, are strict:
/// each stands for work that is costly or impossible to redo (an LLM call
/// for the summary; a file the user may not have any more), and they are
/// rare, so waiting for the disk costs little. A turn's save keeps the
/// default: it is frequent, the app still has the turn in memory, and a
/// lost last turn is what a crash loses anyway.
pub fn durability(kind: WriteKind) -> Durability {
    match kind {
        WriteKind::Save { summary: true } | WriteKind::WholeSession => Durability::Strict,
        WriteKind::Save { summary: false } | WriteKind::Metadata => Durability::Default,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::tokens::estimate::UsageNumbers;
    use proptest::prelude::*;

    fn increasing(keys: &[Position]) -> bool {
        keys.windows(2)
            .all(|w| compare(&w[0], &w[1]) == Ordering::Less)
    }

    #[test]
    fn appends_take_the_next_whole_numbers() {
        assert_eq!(
            positions_between(None, None, 3),
            vec![vec![0.0], vec![1.0], vec![2.0]]
        );
        assert_eq!(
            positions_between(Some(&[4.0, 2.0]), None, 2),
            vec![vec![5.0], vec![6.0]]
        );
    }

    #[test]
    fn an_insertion_extends_the_key_before_it() {
        assert_eq!(
            positions_between(Some(&[3.0]), Some(&[4.0]), 1),
            vec![vec![3.0, 1.0]]
        );
        // After an earlier insertion at the same spot: below its number.
        assert_eq!(
            positions_between(Some(&[3.0]), Some(&[3.0, 1.0]), 2),
            vec![vec![3.0, -1.0], vec![3.0, 0.0]]
        );
        // A gap left by a removal is reused with whole numbers.
        assert_eq!(
            positions_between(Some(&[3.0]), Some(&[6.0]), 2),
            vec![vec![4.0], vec![5.0]]
        );
        assert_eq!(
            positions_between(None, Some(&[0.0]), 2),
            vec![vec![-2.0], vec![-1.0]]
        );
    }

    #[test]
    fn indexeddb_array_order() {
        assert_eq!(compare(&[3.0], &[3.0, -5.0]), Ordering::Less);
        assert_eq!(compare(&[3.0, 9.0], &[4.0]), Ordering::Less);
        assert_eq!(compare(&[3.0, 1.0], &[3.0, 1.0]), Ordering::Equal);
    }

    #[test]
    fn inserted_positions_for_a_summary_and_an_append() {
        // Old: [0] [1] [2] [3]; new: m0 m1 S m2 m3 u.
        let old = [vec![0.0], vec![1.0], vec![2.0], vec![3.0]];
        let edit = Edit {
            inserted: vec![2, 5],
            removed: vec![],
        };
        let keys = inserted_positions(&edit, 4, |k| old[k].clone());
        assert_eq!(keys, vec![vec![1.0, 1.0], vec![4.0]]);
    }

    #[test]
    fn inserted_positions_after_removing_a_failed_attempt() {
        // Old: m0 m1 E; new: m0 S m1 (E removed, summary inserted at 1).
        let old = [vec![0.0], vec![1.0], vec![2.0]];
        let edit = Edit {
            inserted: vec![1],
            removed: vec![2],
        };
        let keys = inserted_positions(&edit, 3, |k| old[k].clone());
        assert_eq!(keys, vec![vec![0.0, 1.0]]);
        assert_eq!(
            last_summary_after(&edit, None, &[1]),
            LastSummary::Known(Some(1))
        );
    }

    #[test]
    fn the_last_summary_moves_with_insertions_before_it() {
        let edit = Edit {
            inserted: vec![0, 7],
            removed: vec![],
        };
        assert_eq!(
            last_summary_after(&edit, Some(3), &[]),
            LastSummary::Known(Some(4))
        );
        assert_eq!(
            last_summary_after(&edit, Some(3), &[7]),
            LastSummary::Known(Some(7))
        );
        let gone = Edit {
            inserted: vec![],
            removed: vec![3],
        };
        assert_eq!(
            last_summary_after(&gone, Some(3), &[]),
            LastSummary::Removed
        );
        assert_eq!(
            last_summary_after(&Edit::default(), None, &[]),
            LastSummary::Known(None)
        );
    }

    #[test]
    fn only_trailing_failed_attempts_may_be_removed() {
        let edit = Edit {
            inserted: vec![],
            removed: vec![3, 4],
        };
        assert_eq!(check_removals(&edit, 5, |_| true), Ok(()));
        assert_eq!(check_removals(&edit, 5, |k| k != 4), Err(4));
        assert_eq!(check_removals(&edit, 6, |_| true), Err(3));
    }

    #[test]
    fn failed_attempts() {
        let f = |stop, output: f64| RawFacts {
            role: Some(Role::Assistant),
            stop_reason: Some(stop),
            usage: Some(UsageNumbers {
                input: 1.0,
                output,
                cache_read: 0.0,
                cache_write: 0.0,
                total_tokens: 1.0,
            }),
            ..RawFacts::default()
        };
        assert!(is_failed_attempt(&f(StopReason::Error, 5.0)));
        assert!(is_failed_attempt(&f(StopReason::Length, 0.0)));
        assert!(!is_failed_attempt(&f(StopReason::Length, 3.0)));
        assert!(!is_failed_attempt(&f(StopReason::Stop, 0.0)));
        let mut user = f(StopReason::Error, 0.0);
        user.role = Some(Role::User);
        assert!(!is_failed_attempt(&user));
    }

    #[test]
    fn previews_collapse_whitespace_and_cut_with_an_ellipsis() {
        let units = |s: &str| s.encode_utf16().collect::<Vec<_>>();
        assert_eq!(
            preview(&units("  fix\n\n the  bug "), 100),
            units("fix the bug")
        );
        assert_eq!(preview(&units("abcdefgh"), 5), units("abcd…"));
        // Never half an emoji: "ab🦀" cut at 4 keeps "ab" and the ellipsis.
        assert_eq!(preview(&units("ab🦀cdef"), 4), units("ab…"));
        assert_eq!(preview(&units("abcd"), 4), units("abcd"));
    }

    /// A random history of saves: each step appends, inserts or removes
    /// trailing records; keys stay strictly increasing and every insertion
    /// writes exactly the new records.
    fn apply(ops: &[(u8, usize, usize)]) -> Vec<Position> {
        let mut keys: Vec<Position> = Vec::new();
        for &(kind, at, count) in ops {
            let count = count.max(1);
            let n = keys.len();
            let edit = match kind % 3 {
                0 => Edit {
                    inserted: (n..n + count).collect(),
                    removed: vec![],
                },
                1 => {
                    let at = if n == 0 { 0 } else { at % (n + 1) };
                    Edit {
                        inserted: (at..at + count).collect(),
                        removed: vec![],
                    }
                }
                _ => {
                    let r = count.min(n);
                    Edit {
                        inserted: vec![],
                        removed: (n - r..n).collect(),
                    }
                }
            };
            let new_keys = inserted_positions(&edit, n, |k| keys[k].clone());
            assert_eq!(new_keys.len(), edit.inserted.len());
            let mut next: Vec<Position> = Vec::new();
            let mut old = keys
                .iter()
                .enumerate()
                .filter(|(k, _)| !edit.removed.contains(k))
                .map(|(_, p)| p.clone());
            let mut new = new_keys.into_iter();
            for j in 0..n - edit.removed.len() + edit.inserted.len() {
                if edit.inserted.contains(&j) {
                    next.push(new.next().unwrap());
                } else {
                    next.push(old.next().unwrap());
                }
            }
            keys = next;
        }
        keys
    }

    proptest! {
        #[test]
        fn keys_stay_in_order(ops in proptest::collection::vec((0u8..3, 0usize..50, 0usize..4), 0..60)) {
            let keys = apply(&ops);
            prop_assert!(increasing(&keys), "{keys:?}");
        }

        #[test]
        fn insertions_in_general_position(
            mask in proptest::collection::vec(any::<bool>(), 0..30),
        ) {
            // true: a new message at that index of the new array.
            let inserted: Vec<usize> = (0..mask.len()).filter(|&j| mask[j]).collect();
            let old_len = mask.len() - inserted.len();
            let old: Vec<Position> = (0..old_len).map(|i| vec![i as f64]).collect();
            let edit = Edit { inserted: inserted.clone(), removed: vec![] };
            let total = mask.len();
            let keys = inserted_positions(&edit, old_len, |k| old[k].clone());
            let mut merged = Vec::new();
            let (mut o, mut n) = (old.iter(), keys.iter());
            for j in 0..total {
                merged.push(if inserted.contains(&j) { n.next().unwrap() } else { o.next().unwrap() }.clone());
            }
            prop_assert!(increasing(&merged), "{merged:?}");
        }
    }

    #[test]
    fn compactions_and_imports_are_strict_turns_are_not() {
        assert_eq!(
            durability(WriteKind::Save { summary: true }),
            Durability::Strict
        );
        assert_eq!(durability(WriteKind::WholeSession), Durability::Strict);
        assert_eq!(
            durability(WriteKind::Save { summary: false }),
            Durability::Default
        );
        assert_eq!(durability(WriteKind::Metadata), Durability::Default);
        assert_eq!(Durability::Strict.as_str(), "strict");
        assert_eq!(Durability::Default.as_str(), "default");
    }
}
