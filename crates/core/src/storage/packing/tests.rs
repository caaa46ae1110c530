//! Tests of packing entries into stored records: appends, merging small
//! packs, a summary splitting a pack, removals and partial rewrites.

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
        self.0
            .retain(|(k, _)| compare(k, a) == Ordering::Less || compare(k, b) == Ordering::Greater);
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
