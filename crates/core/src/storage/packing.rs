//! Which messages share a record: the layout of a session's message
//! records and what a save writes to keep it.
//!
//! A save writes each new message as a record of its own: its cost is what
//! changed. But reading many small records costs more than their bytes (in
//! Chromium, 362 one-message records take longer to read than one record of
//! 630 messages), and bigger records read faster still. So records are
//! merged as a session grows, in two steps, as a log-structured store does:
//!
//! - once [`SMALL`] + [`LOOSE`] messages after the last pack are loose, the
//!   save that gets there also writes the oldest [`SMALL`] of them as one
//!   *pack* record (an array of messages under the key of its first) and
//!   deletes their own records;
//! - once [`MERGE`] small packs follow the last big one, an appending save
//!   also writes them as one big pack (about [`SMALL`] × [`MERGE`] messages)
//!   and deletes them.
//!
//! All in the save's own transaction. A message is thus written at most
//! three times in its life; a turn's save writes at most one small and one
//! big pack besides what changed; a load reads about one record per big pack
//! plus fewer than [`MERGE`] small packs and [`SMALL`] + [`LOOSE`] loose
//! messages. The newest [`LOOSE`] messages or more stay loose, so that
//! dropping a trailing failed attempt deletes a record of its own. An array
//! written whole (a large first save, a fork, an import) is laid out in big
//! packs at once.
//!
//! An edit inside a pack (a `compactionSummary` inserted between two of its
//! messages, one of its messages removed) rewrites that pack under its own
//! key with its messages after the edit, split in two where the LLM context
//! now starts (or else where the first inserted message goes), so that the
//! context's start always begins a record. Packs an edit does not touch are
//! never rewritten.
//!
//! Indices here are message indices: `old` ones in the array the store last
//! saved or loaded, `new` ones in the array being saved.

use crate::storage::save_plan::Edit;

/// Messages per small pack.
pub const SMALL: usize = 32;
/// Small packs per big pack.
pub const MERGE: usize = 4;
/// Messages per big pack written at once.
pub const BIG: usize = SMALL * MERGE;
/// The newest messages always left in records of their own.
pub const LOOSE: usize = 4;

/// Whether a pack counts as big (merged, or written whole).
fn is_big(len: usize) -> bool {
    len > 2 * SMALL
}

/// A pack record's messages: (first index, count).
pub type Pack = (usize, usize);

/// Whose key a written pack record is stored under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOf {
    /// The record key of old message `k` (its pack's, or its own).
    Old(usize),
    /// The new key of inserted message `j` (new index).
    Inserted(usize),
    /// A new key between the record before this pack (the first part of a
    /// split pack, already keyed) and the record after it.
    Split,
}

/// A pack record to put: new messages `[start, start + len)` under `key`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackPut {
    pub start: usize,
    pub len: usize,
    pub key: KeyOf,
}

/// What a save writes, besides the session record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The packs of the new array, in order.
    pub packs: Vec<Pack>,
    /// Pack records to put (rewritten or new), in order.
    pub pack_puts: Vec<PackPut>,
    /// Inserted messages (new indices) that get records of their own.
    pub singles: Vec<usize>,
    /// Old messages whose record is deleted (the first message of a pack
    /// that is gone entirely, a removed loose message), in no set order.
    pub deletes: Vec<usize>,
    /// Old loose messages folded into a new pack: their records are every
    /// record with a key from old message `a`'s to old message `b`'s,
    /// inclusive, and are deleted before the pack is put.
    pub delete_ranges: Vec<(usize, usize)>,
}

/// The pack holding message `i` in `packs` (sorted): its index.
pub fn pack_of(packs: &[Pack], i: usize) -> Option<usize> {
    let p = packs.partition_point(|&(s, _)| s <= i);
    (p > 0 && i < packs[p - 1].0 + packs[p - 1].1).then(|| p - 1)
}

/// Where message `i` sits in its record: 0 for a loose message, its place
/// in the pack otherwise.
pub fn slot_of(packs: &[Pack], i: usize) -> usize {
    pack_of(packs, i).map_or(0, |p| i - packs[p].0)
}

/// The layout of a session of `len` messages written whole (a fork, an
/// import) whose context starts at `context`: as a first save of them lays
/// them out.
pub fn initial(len: usize, context: Option<usize>) -> Vec<Pack> {
    let all = Edit {
        inserted: (0..len).collect(),
        removed: Vec::new(),
    };
    plan(0, &[], false, &all, len, context).packs
}

/// Plans a save. `old_packs` is the old array's layout; `partial_first`
/// says its first pack's record also holds messages before the old array
/// (the array came from `loadContext`), so it must be rewritten if kept.
/// `edit` relates the old array (`old_len`) to the new one (`new_len`).
/// `context` is where the LLM context starts in the new array (its last
/// `compactionSummary`): a record written by this save never holds it
/// after another message, so `loadContext` reads nothing before it.
pub fn plan(
    old_len: usize,
    old_packs: &[Pack],
    partial_first: bool,
    edit: &Edit,
    new_len: usize,
    context: Option<usize>,
) -> Layout {
    let appended = edit.removed.is_empty() && edit.inserted.first().is_none_or(|&j| j >= old_len);
    let mut layout = if appended && !(partial_first && old_packs.first().is_some_and(|p| p.0 == 0))
    {
        let mut layout = Layout {
            packs: old_packs.to_vec(),
            singles: edit.inserted.clone(),
            ..Layout::default()
        };
        merge(&mut layout, context);
        layout
    } else {
        edited(old_len, old_packs, partial_first, edit, context)
    };
    fold(&mut layout, edit, new_len, context);
    layout
}

/// The small packs that may still merge: those after the last big pack
/// and not before the context's start (where they start in `packs`).
fn first_small(packs: &[Pack], context: Option<usize>) -> usize {
    let after_big = packs
        .iter()
        .rposition(|&(_, l)| is_big(l))
        .map_or(0, |p| p + 1);
    let after_context = context.map_or(0, |c| packs.partition_point(|&(s, _)| s < c));
    after_big.max(after_context)
}

/// Merges [`MERGE`] small packs after the last big one (and from the
/// context's start on) into one big pack (an appending save: old and new
/// indices of packs are the same). Loose messages between them go in too.
fn merge(layout: &mut Layout, context: Option<usize>) {
    let from = first_small(&layout.packs, context);
    if layout.packs.len() - from < MERGE {
        return;
    }
    let group = &layout.packs[from..from + MERGE];
    let (start, first_len) = group[0];
    let (last_start, last_len) = group[MERGE - 1];
    let len = last_start + last_len - start;
    // Every record from the message after the first pack to the last
    // pack's (keyed by its first message).
    layout.delete_ranges.push((start + first_len, last_start));
    layout.pack_puts.push(PackPut {
        start,
        len,
        key: KeyOf::Old(start),
    });
    layout.packs[from] = (start, len);
    for _ in 1..MERGE {
        layout.packs.remove(from + 1);
    }
}

/// The general case: packs mapped through the edit, the touched ones
/// rewritten.
fn edited(
    old_len: usize,
    old_packs: &[Pack],
    partial_first: bool,
    edit: &Edit,
    context: Option<usize>,
) -> Layout {
    const GONE: usize = usize::MAX;
    // The new index of every old message (GONE when removed).
    let mut new_of_old = vec![GONE; old_len];
    let (mut r, mut ins, mut j) = (0, 0, 0);
    for (k, slot) in new_of_old.iter_mut().enumerate() {
        if edit.removed.get(r) == Some(&k) {
            r += 1;
            continue;
        }
        while edit.inserted.get(ins) == Some(&j) {
            ins += 1;
            j += 1;
        }
        *slot = j;
        j += 1;
    }
    let mut layout = Layout::default();
    for (p, &(s, len)) in old_packs.iter().enumerate() {
        let survivors = new_of_old[s..s + len].iter().filter(|&&n| n != GONE);
        let first = survivors.clone().next().copied();
        let last = survivors.clone().next_back().copied();
        let count = survivors.count();
        let (Some(first), Some(last)) = (first, last) else {
            layout.deletes.push(s);
            continue;
        };
        let span = last - first + 1;
        if count != len || span != count || (p == 0 && s == 0 && partial_first) {
            // The context's start inside it, or else the first message
            // inserted inside (a summary at a cut), starts a record of its
            // own with the pack's messages after it, so that a load from
            // there reads nothing before it.
            let at = edit.inserted.partition_point(|&j| j <= first);
            let split = context
                .filter(|&c| c > first && c <= last)
                .or_else(|| edit.inserted.get(at).copied().filter(|&j| j <= last));
            let (a, b) = match split {
                Some(j) => ((first, j - first), Some((j, last + 1 - j))),
                None => ((first, span), None),
            };
            layout.packs.push(a);
            layout.pack_puts.push(PackPut {
                start: a.0,
                len: a.1,
                key: KeyOf::Old(s),
            });
            if let Some((start, len)) = b {
                layout.packs.push((start, len));
                layout.pack_puts.push(PackPut {
                    start,
                    len,
                    key: KeyOf::Split,
                });
            }
        } else {
            layout.packs.push((first, span));
        }
    }
    let packs = &layout.packs;
    layout.singles = edit
        .inserted
        .iter()
        .copied()
        .filter(|&j| pack_of(packs, j).is_none())
        .collect();
    layout.deletes.extend(
        edit.removed
            .iter()
            .copied()
            .filter(|&k| pack_of(old_packs, k).is_none()),
    );
    layout
}

/// Folds the loose messages after the last pack into packs: inserted ones
/// in big packs while they fill one and nothing small is pending, then the
/// oldest [`SMALL`] at a time while [`SMALL`] + [`LOOSE`] are loose.
fn fold(layout: &mut Layout, edit: &Edit, new_len: usize, context: Option<usize>) {
    let mut start = layout.packs.last().map_or(0, |&(s, l)| s + l);
    if new_len.saturating_sub(start) < SMALL + LOOSE {
        return;
    }
    // Whether new messages [j, j + n) are all inserted ones.
    let all_inserted = |j: usize, n: usize| {
        let p = edit.inserted.partition_point(|&i| i < j);
        edit.inserted.get(p) == Some(&j) && edit.inserted.get(p + n - 1) == Some(&(j + n - 1))
    };
    while new_len - start >= SMALL + LOOSE {
        let nothing_small = first_small(&layout.packs, context) == layout.packs.len();
        let len = if nothing_small
            && new_len - start >= BIG + SMALL + LOOSE
            && all_inserted(start, BIG)
        {
            BIG
        } else {
            SMALL
        };
        // The context's start begins a record.
        let len = match context {
            Some(c) if c > start && c < start + len => c - start,
            _ => len,
        };
        let end = start + len;
        let key = match edit.old_index(start) {
            Some(k) => KeyOf::Old(k),
            None => KeyOf::Inserted(start),
        };
        let mut olds = (start + 1..end).filter_map(|j| edit.old_index(j));
        if let Some(a) = olds.next() {
            layout
                .delete_ranges
                .push((a, olds.next_back().unwrap_or(a)));
        }
        layout.singles.retain(|&j| j < start || j >= end);
        layout.packs.push((start, len));
        layout.pack_puts.push(PackPut { start, len, key });
        start = end;
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::storage::save_plan::{compare, inserted_positions, positions_between, Position};
    use proptest::prelude::*;
    use std::cmp::Ordering;

    fn edit(inserted: &[usize], removed: &[usize]) -> Edit {
        Edit {
            inserted: inserted.to_vec(),
            removed: removed.to_vec(),
        }
    }

    #[test]
    fn an_append_writes_loose_records_until_a_pack_fills() {
        let l = plan(10, &[], false, &edit(&[10, 11, 12], &[]), 13, None);
        assert_eq!(l.singles, vec![10, 11, 12]);
        assert!(l.packs.is_empty() && l.pack_puts.is_empty() && l.deletes.is_empty());

        // 34 loose + 2 appended = SMALL + LOOSE: the oldest 32 become a pack.
        let l = plan(34, &[], false, &edit(&[34, 35], &[]), 36, None);
        assert_eq!(l.packs, vec![(0, SMALL)]);
        assert_eq!(
            l.pack_puts,
            vec![PackPut {
                start: 0,
                len: SMALL,
                key: KeyOf::Old(0)
            }]
        );
        assert_eq!(l.delete_ranges, vec![(1, SMALL - 1)]);
        assert_eq!(l.singles, vec![34, 35]);
        assert!(l.deletes.is_empty());
    }

    #[test]
    fn small_packs_merge_into_a_big_one() {
        // A big pack, MERGE small ones, a summary loose between two of them.
        let mut packs = vec![(0, BIG)];
        let mut at = BIG;
        for n in 0..MERGE {
            packs.push((at, SMALL));
            at += SMALL + usize::from(n == 1);
        }
        let len = at + 10;
        let l = plan(len, &packs, false, &edit(&[len], &[]), len + 1, None);
        assert_eq!(l.packs, vec![(0, BIG), (BIG, at - BIG)]);
        assert_eq!(
            l.pack_puts,
            vec![PackPut {
                start: BIG,
                len: at - BIG,
                key: KeyOf::Old(BIG)
            }]
        );
        // From the message after the first small pack to the last one's record.
        assert_eq!(l.delete_ranges, vec![(BIG + SMALL, at - SMALL)]);
        assert_eq!(l.singles, vec![len]);
    }

    #[test]
    fn a_large_first_save_is_written_in_big_packs() {
        let l = plan(
            0,
            &[],
            false,
            &edit(&(0..500).collect::<Vec<_>>(), &[]),
            500,
            None,
        );
        // Big packs while a big one and a small one's worth remain, then
        // small ones, then the rest loose.
        let expected = vec![
            (0, 128),
            (128, 128),
            (256, 128),
            (384, 32),
            (416, 32),
            (448, 32),
        ];
        assert_eq!(l.packs, expected);
        assert!(l
            .pack_puts
            .iter()
            .all(|p| p.key == KeyOf::Inserted(p.start)));
        assert!(l.delete_ranges.is_empty());
        assert_eq!(l.singles, (480..500).collect::<Vec<_>>());
        assert_eq!(initial(500, None), expected);
        // The context's start begins a record.
        let packs = initial(500, Some(300));
        assert_eq!(&packs[..3], &[(0, 128), (128, 128), (256, 44)]);
        assert_eq!(slot_of(&packs, 300), 0);
    }

    #[test]
    fn a_summary_inside_a_pack_splits_only_that_pack() {
        let packs = [(0, 16), (16, 16)];
        // Inserted at new index 20: between old 19 and 20, inside pack 2.
        // It starts a record of its own with the pack's messages after it.
        let l = plan(40, &packs, false, &edit(&[20], &[]), 41, None);
        assert_eq!(l.packs, vec![(0, 16), (16, 4), (20, 13)]);
        assert_eq!(
            l.pack_puts,
            vec![
                PackPut {
                    start: 16,
                    len: 4,
                    key: KeyOf::Old(16)
                },
                PackPut {
                    start: 20,
                    len: 13,
                    key: KeyOf::Split
                }
            ]
        );
        assert!(l.singles.is_empty() && l.deletes.is_empty());
        // At a pack's edge it gets a record of its own.
        let l = plan(40, &packs, false, &edit(&[16], &[]), 41, None);
        assert_eq!(l.packs, vec![(0, 16), (17, 16)]);
        assert!(l.pack_puts.is_empty());
        assert_eq!(l.singles, vec![16]);
    }

    #[test]
    fn removals_delete_loose_records_and_rewrite_or_drop_packs() {
        let packs = [(0, 16), (16, 16)];
        // A trailing failed attempt: its own record.
        let l = plan(40, &packs, false, &edit(&[], &[39]), 39, None);
        assert_eq!(l.deletes, vec![39]);
        assert!(l.pack_puts.is_empty());
        // A message of the second pack, and the whole first pack.
        let removed: Vec<usize> = (0..16).chain([20]).collect();
        let l = plan(40, &packs, false, &edit(&[], &removed), 23, None);
        assert_eq!(l.deletes, vec![0]);
        assert_eq!(l.packs, vec![(0, 15)]);
        assert_eq!(
            l.pack_puts,
            vec![PackPut {
                start: 0,
                len: 15,
                key: KeyOf::Old(16)
            }]
        );
    }

    #[test]
    fn a_pack_only_partly_in_the_array_is_rewritten() {
        // loadContext started inside the first pack; saved with replace.
        let l = plan(20, &[(0, 10)], true, &edit(&[20], &[]), 21, None);
        assert_eq!(
            l.pack_puts,
            vec![PackPut {
                start: 0,
                len: 10,
                key: KeyOf::Old(0)
            }]
        );
        assert_eq!(l.singles, vec![20]);
    }

    #[test]
    fn slots() {
        let packs = [(0, 16), (20, 16)];
        assert_eq!(pack_of(&packs, 15), Some(0));
        assert_eq!(pack_of(&packs, 16), None);
        assert_eq!(pack_of(&packs, 25), Some(1));
        assert_eq!(slot_of(&packs, 25), 5);
        assert_eq!(slot_of(&packs, 17), 0);
    }

    /// A stand-in for the object store: records under position keys.
    struct Records(Vec<(Position, Vec<u32>)>);

    impl Records {
        fn find(&self, key: &[f64]) -> Result<usize, usize> {
            self.0.binary_search_by(|(k, _)| compare(k, key))
        }
        fn delete(&mut self, key: &[f64]) {
            if let Ok(i) = self.find(key) {
                self.0.remove(i);
            }
        }
        fn delete_range(&mut self, a: &[f64], b: &[f64]) {
            self.0.retain(|(k, _)| {
                compare(k, a) == Ordering::Less || compare(k, b) == Ordering::Greater
            });
        }
        fn put(&mut self, key: Position, value: Vec<u32>) {
            match self.find(&key) {
                Ok(i) => self.0[i].1 = value,
                Err(i) => self.0.insert(i, (key, value)),
            }
        }
    }

    /// A small deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n.max(1) as u64) as usize
        }
    }

    /// A random edit of an array of `old_len`: a few removals (often the
    /// last message, as a failed attempt is), a few runs inserted
    /// (often at the end, as a turn is).
    fn random_edit(rng: &mut Rng, old_len: usize) -> Edit {
        if rng.below(2) == 0 {
            // A turn or a few appended: the common save.
            let most = if rng.below(8) == 0 { 200 } else { 6 };
            let n = 1 + rng.below(most);
            return edit(&(old_len..old_len + n).collect::<Vec<_>>(), &[]);
        }
        let mut removed = std::collections::BTreeSet::new();
        if old_len > 0 {
            for _ in 0..rng.below(3) {
                removed.insert(match rng.below(2) {
                    0 => old_len - 1,
                    _ => rng.below(old_len),
                });
            }
        }
        let removed: Vec<usize> = removed.into_iter().collect();
        let kept = old_len - removed.len();
        let mut runs: Vec<(usize, usize)> = (0..rng.below(3) + 1)
            .map(|_| {
                let at = if rng.below(2) == 0 {
                    kept
                } else {
                    rng.below(kept + 1)
                };
                let most = if rng.below(4) == 0 { 80 } else { 4 };
                (at, 1 + rng.below(most))
            })
            .collect();
        runs.sort_unstable();
        let mut inserted = Vec::new();
        let mut shift = 0;
        for (at, n) in runs {
            inserted.extend((0..n).map(|x| at + shift + x));
            shift += n;
        }
        Edit { inserted, removed }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Over a series of saves, each applied to a model object store
        /// with the keys save_plan gives: reading the records in key order
        /// gives the saved array; the records that are packs are the
        /// layout's packs; a pack is put only when an edit touched it or it
        /// is new or merged; fewer than SMALL + LOOSE messages follow the
        /// last pack; the context's start (the last inserted summary)
        /// always begins a record.
        #[test]
        fn saves_keep_the_records_equal_to_the_array(seed in 1u64.., first in 0usize..150, saves in 1usize..60) {
            let mut rng = Rng(seed);
            let mut fresh = 0u32;
            let mut messages: Vec<u32> = Vec::new();
            let mut keys: Vec<Position> = Vec::new();
            let mut packs: Vec<Pack> = Vec::new();
            let mut store = Records(Vec::new());
            let mut summary: Option<u32> = None;
            for n in 0..saves {
                let old_len = messages.len();
                let e = if n == 0 {
                    edit(&(0..first).collect::<Vec<_>>(), &[])
                } else {
                    random_edit(&mut rng, old_len)
                };
                let mut new: Vec<u32> = messages
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| e.removed.binary_search(k).is_err())
                    .map(|(_, &m)| m)
                    .collect();
                for &j in &e.inserted {
                    new.insert(j, fresh);
                    fresh += 1;
                }
                // Now and then one inserted message is a summary: the
                // context then starts there (until it is removed).
                if !e.inserted.is_empty() && rng.below(4) == 0 {
                    summary = Some(new[e.inserted[rng.below(e.inserted.len())]]);
                }
                let context = summary.and_then(|id| new.iter().position(|&m| m == id));
                let layout = plan(old_len, &packs, false, &e, new.len(), context);
                // The context starts a record.
                if let Some(c) = context {
                    prop_assert_eq!(slot_of(&layout.packs, c), 0, "save {}: {:?}", n, e);
                }

                // Keys, as the store's save computes them.
                let positions = inserted_positions(&e, old_len, |k| keys[k].clone());
                let mut new_keys: Vec<Position> = Vec::with_capacity(new.len());
                let (mut r, mut a, mut k) = (0, 0, 0);
                for j in 0..new.len() {
                    if e.inserted.get(a) == Some(&j) {
                        new_keys.push(positions[a].clone());
                        a += 1;
                        continue;
                    }
                    while e.removed.get(r) == Some(&k) {
                        r += 1;
                        k += 1;
                    }
                    new_keys.push(keys[k].clone());
                    k += 1;
                }
                let mut pack_keys: Vec<Position> = Vec::new();
                for p in &layout.pack_puts {
                    let key = match p.key {
                        KeyOf::Old(k) => keys[k].clone(),
                        KeyOf::Inserted(j) => new_keys[j].clone(),
                        KeyOf::Split => {
                            let after = new_keys.get(p.start + p.len).cloned();
                            positions_between(Some(&new_keys[p.start - 1]), after.as_deref(), 1).remove(0)
                        }
                    };
                    for slot in &mut new_keys[p.start..p.start + p.len] {
                        *slot = key.clone();
                    }
                    pack_keys.push(key);
                }

                // The writes, in the order the store queues them.
                for &k in &layout.deletes {
                    store.delete(&keys[k]);
                }
                for &(a, b) in &layout.delete_ranges {
                    store.delete_range(&keys[a], &keys[b]);
                }
                let touched_before: Vec<Vec<u32>> = store.0.iter().map(|(_, v)| v.clone()).collect();
                for (p, key) in layout.pack_puts.iter().zip(pack_keys) {
                    store.put(key, new[p.start..p.start + p.len].to_vec());
                }
                for &j in &layout.singles {
                    store.put(new_keys[j].clone(), vec![new[j]]);
                }

                let read: Vec<u32> = store.0.iter().flat_map(|(_, v)| v.clone()).collect();
                prop_assert_eq!(&read, &new, "save {}: {:?}", n, e);
                let mut i = 0;
                for (key, value) in &store.0 {
                    for _ in value {
                        prop_assert_eq!(&new_keys[i], key);
                        i += 1;
                    }
                }
                for &(s, l) in &layout.packs {
                    let put = layout.pack_puts.iter().any(|p| p.start == s && p.len == l);
                    prop_assert!(put || touched_before.contains(&new[s..s + l].to_vec()));
                }
                for w in layout.packs.windows(2) {
                    prop_assert!(w[0].0 + w[0].1 <= w[1].0);
                }
                prop_assert!(new.len() - layout.packs.last().map_or(0, |&(s, l)| s + l) < SMALL + LOOSE);
                // An append rewrites no big pack.
                if e.removed.is_empty() && e.inserted.first().is_none_or(|&j| j >= old_len) {
                    let big_end = packs.iter().rfind(|p| is_big(p.1)).map_or(0, |&(s, l)| s + l);
                    prop_assert!(layout.pack_puts.iter().all(|p| p.start >= big_end));
                }
                messages = new;
                keys = new_keys;
                packs = layout.packs;
            }
        }
    }
}
