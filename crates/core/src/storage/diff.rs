//! The save diff's record keys. What changed between the array a store
//! last loaded or saved and the array being saved is the conversation
//! engine's [`Edit`] (`conversation::edit`, the same classification the
//! `Compactor` follows): appends, an inserted summary, removed failed
//! attempts, replaced messages.
//!
//! [`key_runs`] says how the record keys of the new array are made from
//! the old keys and the keys of the inserted messages.

use crate::conversation::edit::Edit;

/// A run of the new array's record keys: `Old(a, b)` is `old_keys[a..b]`,
/// `Added(a, b)` the keys made for inserted messages `a..b` (in the order
/// of `Edit::inserted`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRun {
    Old(usize, usize),
    Added(usize, usize),
}

impl KeyRun {
    /// As three numbers for the shim: `[0 | 1, a, b]` (0 for old keys).
    pub fn words(self) -> [u32; 3] {
        match self {
            KeyRun::Old(a, b) => [0, a as u32, b as u32],
            KeyRun::Added(a, b) => [1, a as u32, b as u32],
        }
    }
}

/// The new array's keys as runs of old keys (those not removed) and added
/// ones (one per inserted message), in the new array's order. `old_len` is
/// the known array's length. A turn's save is two runs: all old keys, then
/// the new ones.
pub fn key_runs(edit: &Edit, old_len: usize) -> Vec<KeyRun> {
    let mut runs: Vec<KeyRun> = Vec::new();
    let mut push = |run: KeyRun| match (runs.last_mut(), run) {
        (Some(KeyRun::Old(_, end)), KeyRun::Old(a, b)) if *end == a => *end = b,
        (Some(KeyRun::Added(_, end)), KeyRun::Added(a, b)) if *end == a => *end = b,
        (_, run) => {
            let (a, b) = match run {
                KeyRun::Old(a, b) | KeyRun::Added(a, b) => (a, b),
            };
            if a < b {
                runs.push(run);
            }
        }
    };
    let new_len = old_len - edit.removed.len() + edit.inserted.len();
    let mut removed = edit.removed.iter().copied().peekable();
    let mut added = 0;
    // `k`: the next old index; runs of kept old keys are cut at removals.
    let mut k = 0;
    let mut j = 0;
    while j < new_len {
        if edit.inserted.get(added) == Some(&j) {
            push(KeyRun::Added(added, added + 1));
            added += 1;
            j += 1;
            continue;
        }
        while removed.peek() == Some(&k) {
            removed.next();
            k += 1;
        }
        // Kept old keys up to the next insertion or removal.
        let next_insert = edit.inserted.get(added).copied().unwrap_or(new_len);
        let next_removal = removed.peek().copied().unwrap_or(old_len);
        let len = (next_insert - j).min(next_removal - k);
        push(KeyRun::Old(k, k + len));
        k += len;
        j += len;
    }
    runs
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::conversation::edit::edit;
    use crate::conversation::edit::scan::{edited, facts};

    /// The diff the store made before it was planned here (a walk with a
    /// look-ahead table built at the first mismatch), over object ids.
    fn reference(known: &[u32], new: &[u32]) -> Edit {
        let (m, n) = (known.len(), new.len());
        if n >= m && known == &new[..m] {
            return Edit {
                inserted: (m..n).collect(),
                removed: vec![],
            };
        }
        let mut inserted = vec![];
        let mut removed = vec![];
        let mut i = 0;
        let mut ahead: Option<std::collections::HashMap<u32, usize>> = None;
        for (j, &x) in new.iter().enumerate() {
            if i < m && x == known[i] {
                i += 1;
                continue;
            }
            let table = ahead.get_or_insert_with(|| {
                let mut t = std::collections::HashMap::new();
                for (k, &y) in known.iter().enumerate().skip(i) {
                    t.entry(y).or_insert(k);
                }
                t
            });
            match table.get(&x) {
                Some(&k) if k > i => {
                    removed.extend(i..k);
                    i = k + 1;
                }
                _ => inserted.push(j),
            }
        }
        removed.extend(i..m);
        Edit { inserted, removed }
    }

    /// Keys assembled from runs, with old keys `k` and added keys `100 + a`.
    fn assemble(runs: &[KeyRun]) -> Vec<usize> {
        runs.iter()
            .flat_map(|&r| match r {
                KeyRun::Old(a, b) => (a..b).collect::<Vec<_>>(),
                KeyRun::Added(a, b) => (a..b).map(|x| 100 + x).collect(),
            })
            .collect()
    }

    #[test]
    fn a_turn_is_an_append_with_no_classes() {
        let f = facts(&[1, 2, 3], &[1, 2, 3, 4, 5]);
        assert!(f.known_class.is_empty() && f.new_class.is_empty());
        let e = edit(&f).unwrap();
        assert_eq!(e.inserted, vec![3, 4]);
        assert!(e.removed.is_empty());
        assert_eq!(
            key_runs(&e, 3),
            vec![KeyRun::Old(0, 3), KeyRun::Added(0, 2)]
        );
    }

    #[test]
    fn a_summary_inserted_and_a_failed_attempt_removed() {
        // Summary 9 inserted at 2.
        let e = edit(&facts(&[1, 2, 3, 4], &[1, 2, 9, 3, 4])).unwrap();
        assert_eq!((e.inserted.clone(), e.removed.clone()), (vec![2], vec![]));
        assert_eq!(assemble(&key_runs(&e, 4)), vec![0, 1, 100, 2, 3]);
        // The trailing attempt 4 dropped, a retry 5 appended.
        let e = edit(&facts(&[1, 2, 3, 4], &[1, 2, 3, 5])).unwrap();
        assert_eq!((e.inserted.clone(), e.removed.clone()), (vec![3], vec![3]));
        assert_eq!(assemble(&key_runs(&e, 4)), vec![0, 1, 2, 100]);
        // A message replaced in the middle by a new object.
        let e = edit(&facts(&[1, 2, 3, 4], &[1, 7, 3, 4])).unwrap();
        assert_eq!((e.inserted, e.removed), (vec![1], vec![1]));
        // Everything before 3 removed.
        let e = edit(&facts(&[1, 2, 3, 4], &[3, 4])).unwrap();
        assert_eq!((e.inserted, e.removed), (vec![], vec![0, 1]));
        // Truncated.
        let e = edit(&facts(&[1, 2, 3, 4], &[1, 2])).unwrap();
        assert_eq!((e.inserted, e.removed), (vec![], vec![2, 3]));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The same edit as the walk it replaces, duplicate objects included;
        /// the key runs put every kept key where the edit says.
        #[test]
        fn same_as_the_reference_walk(
            known in proptest::collection::vec(0u32..12, 0..14),
            edits in proptest::collection::vec((0u8..5, 0usize..16, 0u32..16), 0..5),
        ) {
            let new = edited(&known, &edits);
            let want = reference(&known, &new);
            let got = edit(&facts(&known, &new)).unwrap();
            proptest::prop_assert_eq!(&got, &want);
            let keys = assemble(&key_runs(&got, known.len()));
            proptest::prop_assert_eq!(keys.len(), new.len());
            for (j, &key) in keys.iter().enumerate() {
                match got.old_index(j) {
                    Some(k) => proptest::prop_assert_eq!(key, k),
                    None => proptest::prop_assert!(key >= 100),
                }
            }
        }
    }
}
