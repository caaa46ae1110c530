//! The save diff: what changed between the array a store last loaded or
//! saved (`known`) and the array being saved, by object identity (messages
//! are immutable, SPEC §1).
//!
//! Object identity is only visible to JavaScript, so the shim scans the two
//! arrays once and hands over [`IdentityFacts`]: how many leading messages
//! are the same objects, and for the rest, which objects are the same,
//! as *classes* (the index of an object's first occurrence in
//! `known[prefix..]`). The plan is made here: appends, an inserted summary,
//! removed failed attempts, replaced messages — an [`Edit`]. A turn's save
//! (the known array plus new messages at its end) has a prefix as long as
//! the known array and no classes at all, so its facts cost nothing to
//! cross the boundary.
//!
//! [`key_runs`] then says how the record keys of the new array are made from
//! the old keys and the keys of the inserted messages.

use super::save_plan::Edit;

/// What the identity scan found. `known_class[i]` is the class of
/// `known[prefix + i]`, `new_class[j]` the class of `new[prefix + j]`, or a
/// negative number when that object is not in `known[prefix..]`. Two
/// messages are the same object exactly when their classes are equal and
/// not negative.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IdentityFacts {
    pub prefix: usize,
    pub known_len: usize,
    pub new_len: usize,
    pub known_class: Vec<i32>,
    pub new_class: Vec<i32>,
}

impl IdentityFacts {
    /// The facts from the engine-side identity scan's words:
    /// `[prefix]` when the known array is a prefix of the new one, else
    /// `[prefix, class of each known[prefix..], class of each new[prefix..]]`,
    /// for a known array of `known_len` and a new one of `new_len`.
    pub fn from_words(words: &[i32], known_len: usize, new_len: usize) -> IdentityFacts {
        let prefix = words.first().map_or(0, |&p| p.max(0) as usize);
        let rest = words.get(1..).unwrap_or(&[]);
        let split = known_len.saturating_sub(prefix).min(rest.len());
        IdentityFacts {
            prefix,
            known_len,
            new_len,
            known_class: rest[..split].to_vec(),
            new_class: rest[split..].to_vec(),
        }
    }
}

/// Why the facts cannot be turned into a plan (a shim bug, never bad input).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("inconsistent identity facts: {0}")]
pub struct BadFacts(&'static str);

/// The edit from `known` to the new array. Messages are matched in order:
/// a message of the new array that is the next known one is kept; one that
/// is a later known one removes the known ones before it (that a caller
/// dropped, e.g. a failed attempt); any other is inserted. So a removal in
/// the middle costs only the messages removed, and an object that appears
/// twice is matched at its first place.
pub fn edit(facts: &IdentityFacts) -> Result<Edit, BadFacts> {
    let IdentityFacts {
        prefix: p,
        known_len: m,
        new_len: n,
        ..
    } = *facts;
    if p > m || p > n {
        return Err(BadFacts("the prefix is longer than an array"));
    }
    // A turn: the known messages, then new ones.
    if p == m {
        return Ok(Edit {
            inserted: (m..n).collect(),
            removed: Vec::new(),
        });
    }
    if facts.known_class.len() != m - p || facts.new_class.len() != n - p {
        return Err(BadFacts("a class list has the wrong length"));
    }
    let class = |c: i32| usize::try_from(c).ok().filter(|&c| c < m - p);
    if facts.known_class.iter().any(|&c| class(c).is_none())
        || facts
            .new_class
            .iter()
            .any(|&c| c >= 0 && class(c).is_none())
    {
        return Err(BadFacts("a class is out of range"));
    }
    let mut inserted = Vec::new();
    let mut removed = Vec::new();
    // `i`: the next known message not yet matched (relative to the prefix).
    let mut i = 0;
    for (j, &c) in facts.new_class.iter().enumerate() {
        if i < m - p && c >= 0 && facts.known_class[i] == c {
            i += 1;
            continue;
        }
        // The class is the object's first place in known[prefix..].
        match class(c) {
            Some(k) if k > i => {
                removed.extend(p + i..p + k);
                i = k + 1;
            }
            _ => inserted.push(p + j),
        }
    }
    removed.extend(p + i..m);
    Ok(Edit { inserted, removed })
}

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

    #[test]
    fn the_shims_words_decode_into_facts() {
        // A turn: the known array is a prefix.
        let turn = IdentityFacts::from_words(&[3], 3, 5);
        assert_eq!((turn.prefix, turn.known_len, turn.new_len), (3, 3, 5));
        assert!(turn.known_class.is_empty() && turn.new_class.is_empty());
        assert_eq!(edit(&turn).unwrap().inserted, vec![3, 4]);
        // known [a b c], new [a c x]: classes after the common prefix.
        let f = IdentityFacts::from_words(&[1, 0, 1, 1, -1], 3, 3);
        assert_eq!(f.known_class, vec![0, 1]);
        assert_eq!(f.new_class, vec![1, -1]);
        let e = edit(&f).unwrap();
        assert_eq!((e.inserted, e.removed), (vec![2], vec![1]));
        // Words cut short or empty never panic.
        let short = IdentityFacts::from_words(&[0, 5], 3, 1);
        assert_eq!((short.known_class, short.new_class), (vec![5], vec![]));
        assert_eq!(
            IdentityFacts::from_words(&[], 0, 0),
            IdentityFacts::default()
        );
        assert_eq!(IdentityFacts::from_words(&[-4], 2, 2).prefix, 0);
    }

    /// The identity scan as the shim makes it, over arrays of object ids.
    fn facts(known: &[u32], new: &[u32]) -> IdentityFacts {
        let m = known.len();
        let n = new.len();
        let mut p = 0;
        while p < m.min(n) && known[p] == new[p] {
            p += 1;
        }
        let first = |x: u32| {
            (p..m)
                .find(|&k| known[k] == x)
                .map_or(-1, |k| (k - p) as i32)
        };
        let sure = p == m;
        IdentityFacts {
            prefix: p,
            known_len: m,
            new_len: n,
            known_class: if sure {
                vec![]
            } else {
                known[p..].iter().map(|&x| first(x)).collect()
            },
            new_class: if sure {
                vec![]
            } else {
                new[p..].iter().map(|&x| first(x)).collect()
            },
        }
    }

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

    #[test]
    fn inconsistent_facts_are_an_error_not_a_panic() {
        let mut f = facts(&[1, 2, 3], &[1, 3]);
        f.new_class[0] = 9;
        assert!(edit(&f).is_err());
        f.new_class.pop();
        assert!(edit(&f).is_err());
        let f = IdentityFacts {
            prefix: 4,
            known_len: 3,
            new_len: 5,
            ..Default::default()
        };
        assert!(edit(&f).is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The same edit as the walk it replaces, duplicate objects included;
        /// the key runs put every kept key where the edit says.
        #[test]
        fn same_as_the_reference_walk(
            known in proptest::collection::vec(0u32..12, 0..14),
            edits in proptest::collection::vec((0u8..4, 0usize..16, 0u32..16), 0..5),
        ) {
            let mut new = known.clone();
            for (op, at, x) in edits {
                let at = at.min(new.len());
                match op {
                    0 => new.insert(at, x),
                    1 if at < new.len() => { new.remove(at); }
                    2 if at < new.len() => new[at] = x,
                    _ => new.push(x),
                }
            }
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
