//! The classification of an edit, case by case, and its contract: the
//! edit applied to the known array gives the new one.

use super::scan::{edited, facts};
use super::*;

/// The edit of `known` into `new`, as the shim's facts make it.
fn classify(known: &[u32], new: &[u32]) -> Edit {
    edit(&facts(known, new)).unwrap()
}

/// `known` with `change` applied, as an index applies it, then the new
/// messages from `from` read from `new`. Checks that the index holds exactly
/// `from` messages before it reads the new ones.
fn apply_change(known: &[u32], new: &[u32], change: Change) -> Vec<u32> {
    let mut out = known.to_vec();
    let from = match change {
        Change::Appended { from } => from,
        Change::Inserted { at, from } => {
            out.insert(at, new[at]);
            from
        }
        Change::Removed { removed, from } => {
            for &k in removed.iter().rev() {
                out.remove(k);
            }
            from
        }
        Change::Swapped { at, from } => {
            for &k in at {
                out[k] = new[k];
            }
            from
        }
        Change::Replaced { at } => {
            out.truncate(at);
            at
        }
    };
    assert_eq!(out.len(), from, "{change:?}");
    out.extend_from_slice(&new[from..]);
    out
}

/// `known` with `edit` applied: the kept messages in order, and the new
/// array's message at each inserted index.
fn apply_edit(known: &[u32], new: &[u32], edit: &Edit) -> Vec<u32> {
    let mut kept = known
        .iter()
        .enumerate()
        .filter(|(k, _)| edit.removed.binary_search(k).is_err())
        .map(|(_, &x)| x);
    let len = known.len() - edit.removed.len() + edit.inserted.len();
    (0..len)
        .map(|j| match edit.inserted.binary_search(&j) {
            Ok(_) => new[j],
            Err(_) => kept.next().unwrap(),
        })
        .collect()
}

/// The change of `known` into `new`, checked against its contract.
fn change_of(known: &[u32], new: &[u32]) -> (Edit, String) {
    let e = classify(known, new);
    let c = e.change(known.len());
    assert_eq!(
        apply_change(known, new, c),
        new,
        "{known:?} -> {new:?}: {c:?}"
    );
    assert_eq!(
        apply_edit(known, new, &e),
        new,
        "{known:?} -> {new:?}: {e:?}"
    );
    let text = format!("{c:?}");
    (e, text)
}

fn shape(known: &[u32], new: &[u32]) -> String {
    change_of(known, new).1
}

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
    let mut f = facts(&[1, 2, 3], &[1, 3, 2]);
    f.known_class[0] = -1;
    assert!(edit(&f).is_err());
}

#[test]
fn new_and_old_indices_map_kept_messages_both_ways() {
    // Old [a b c d e]; b and d removed; x inserted first, y after c.
    let edit = Edit {
        inserted: vec![0, 3],
        removed: vec![1, 3],
    };
    let new: Vec<Option<usize>> = (0..5).map(|k| edit.new_index(k)).collect();
    assert_eq!(new, vec![Some(1), None, Some(2), None, Some(4)]);
    let old: Vec<Option<usize>> = (0..5).map(|j| edit.old_index(j)).collect();
    assert_eq!(old, vec![None, Some(0), Some(2), None, Some(4)]);
}

#[test]
fn appends() {
    assert_eq!(shape(&[1, 2, 3], &[1, 2, 3, 4, 5]), "Appended { from: 3 }");
    // The same array: an append of nothing.
    assert_eq!(shape(&[1, 2, 3], &[1, 2, 3]), "Appended { from: 3 }");
    let (e, _) = change_of(&[1, 2], &[1, 2, 7]);
    assert_eq!((e.inserted.clone(), e.removed.clone()), (vec![2], vec![]));
    assert_eq!(e.kept_prefix(2), 2);
}

#[test]
fn empty_arrays() {
    assert_eq!(shape(&[], &[]), "Appended { from: 0 }");
    assert_eq!(shape(&[], &[1, 2]), "Appended { from: 0 }");
    // Everything gone: a cut back to nothing.
    assert_eq!(shape(&[1, 2], &[]), "Replaced { at: 0 }");
    assert_eq!(shape(&[1], &[]), "Replaced { at: 0 }");
    assert_eq!(Edit::default().change(0), Change::Appended { from: 0 });
    assert_eq!(Edit::default().kept_prefix(4), 4);
}

#[test]
fn one_message_inserted_anywhere() {
    let known = [1, 2, 3, 4];
    for at in 0..4 {
        let mut new = known.to_vec();
        new.insert(at, 9);
        assert_eq!(
            shape(&known, &new),
            format!("Inserted {{ at: {at}, from: 5 }}")
        );
        // With new messages after it (the turn the summary was made in).
        new.extend([10, 11]);
        assert_eq!(
            shape(&known, &new),
            format!("Inserted {{ at: {at}, from: 5 }}")
        );
        let e = classify(&known, &new);
        assert_eq!(e.kept_prefix(4), at);
    }
    // At the end it is an append.
    assert_eq!(shape(&known, &[1, 2, 3, 4, 9]), "Appended { from: 4 }");
    // An object already earlier in the array, inserted again later.
    assert_eq!(
        shape(&[1, 2, 3], &[1, 2, 1, 3]),
        "Inserted { at: 2, from: 4 }"
    );
}

#[test]
fn one_message_removed_anywhere() {
    let known = [1, 2, 3, 4, 5];
    for at in 0..4 {
        let mut new = known.to_vec();
        new.remove(at);
        assert_eq!(
            shape(&known, &new),
            format!("Removed {{ removed: [{at}], from: 4 }}")
        );
        // With a retry appended.
        new.push(9);
        assert_eq!(
            shape(&known, &new),
            format!("Removed {{ removed: [{at}], from: 4 }}")
        );
    }
    // The last one (a trailing failed attempt) is a cut back: the store
    // sees it removed, the index truncates.
    let (e, s) = change_of(&known, &[1, 2, 3, 4]);
    assert_eq!(s, "Replaced { at: 4 }");
    assert_eq!((e.inserted, e.removed), (vec![], vec![4]));
    // A retry in its place: the one message read again.
    let (e, s) = change_of(&known, &[1, 2, 3, 4, 9]);
    assert_eq!(s, "Swapped { at: [4], from: 5 }");
    assert_eq!((e.inserted, e.removed), (vec![4], vec![4]));
}

#[test]
fn several_removed() {
    assert_eq!(
        shape(&[1, 2, 3, 4, 5, 6], &[1, 3, 5, 6]),
        "Removed { removed: [1, 3], from: 4 }"
    );
    assert_eq!(
        shape(&[1, 2, 3, 4, 5, 6], &[1, 4, 5, 6, 7]),
        "Removed { removed: [1, 2], from: 4 }"
    );
    // Everything before 3 removed.
    let (e, s) = change_of(&[1, 2, 3, 4], &[3, 4]);
    assert_eq!(s, "Removed { removed: [0, 1], from: 2 }");
    assert_eq!((e.inserted, e.removed), (vec![], vec![0, 1]));
    // More than an index takes out one by one: a cut back.
    let known: Vec<u32> = (0..30).collect();
    let new: Vec<u32> = (0..30).filter(|x| x % 3 != 1).collect();
    let (e, s) = change_of(&known, &new);
    assert_eq!(e.removed.len(), 10);
    assert_eq!(s, "Replaced { at: 1 }");
}

#[test]
fn replaced_messages() {
    // A message replaced in the middle by a new object (a pinned rule
    // edited before the last summary, a message pinned by a pinned copy):
    // swapped in place, the rest kept where it is.
    let (e, s) = change_of(&[1, 2, 3, 4], &[1, 7, 3, 4]);
    assert_eq!((e.inserted.clone(), e.removed.clone()), (vec![1], vec![1]));
    assert_eq!(s, "Swapped { at: [1], from: 4 }");
    assert_eq!(e.kept_prefix(4), 1);
    for k in [0, 2, 3] {
        assert_eq!(e.new_index(k), Some(k));
    }
    // The first one, the last one (a streamed message's final object).
    assert_eq!(
        shape(&[1, 2, 3], &[9, 2, 3]),
        "Swapped { at: [0], from: 3 }"
    );
    assert_eq!(
        shape(&[1, 2, 3], &[1, 2, 8]),
        "Swapped { at: [2], from: 3 }"
    );
    // Several, apart, with new messages after them (an edit, then a turn).
    assert_eq!(
        shape(&[1, 2, 3, 4, 5, 6], &[1, 8, 3, 9, 5, 6, 10, 11]),
        "Swapped { at: [1, 3], from: 6 }"
    );
    // Side by side.
    assert_eq!(
        shape(&[1, 2, 3, 4], &[1, 8, 9, 4]),
        "Swapped { at: [1, 2], from: 4 }"
    );
    // By an object from elsewhere in the array: not a new one, so a
    // reorder (here: two removed, two read again after them).
    assert_eq!(
        shape(&[1, 2, 3, 4], &[1, 4, 3, 4]),
        "Removed { removed: [1, 2], from: 2 }"
    );
    assert_eq!(
        shape(&[1, 2, 3, 4, 5], &[1, 4, 3, 4, 5]),
        "Replaced { at: 1 }"
    );
    // As many as an index reads one by one, and one more: a cut back.
    let known: Vec<u32> = (0..20).collect();
    let most: Vec<u32> = known
        .iter()
        .map(|&x| if x % 2 == 1 && x < 17 { x + 100 } else { x })
        .collect();
    assert_eq!(
        shape(&known, &most),
        "Swapped { at: [1, 3, 5, 7, 9, 11, 13, 15], from: 20 }"
    );
    let more: Vec<u32> = known
        .iter()
        .map(|&x| if x % 2 == 1 { x + 100 } else { x })
        .collect();
    assert_eq!(shape(&known, &more), "Replaced { at: 1 }");
    // Replaced and one removed, or one inserted: read from it on, or the
    // shape of the insertion.
    assert_eq!(shape(&[1, 2, 3, 4], &[1, 7, 4]), "Replaced { at: 1 }");
    assert_eq!(shape(&[1, 2, 3, 4], &[1, 7, 8, 3, 4]), "Replaced { at: 1 }");
    // Every one.
    assert_eq!(
        shape(&[1, 2, 3], &[4, 5, 6, 7]),
        "Swapped { at: [0, 1, 2], from: 3 }"
    );
    assert_eq!(shape(&[1, 2, 3], &[4, 5]), "Replaced { at: 0 }");
}

#[test]
fn cut_back() {
    let (e, s) = change_of(&[1, 2, 3, 4], &[1, 2]);
    assert_eq!((e.inserted, e.removed), (vec![], vec![2, 3]));
    assert_eq!(s, "Replaced { at: 2 }");
    // Cut back, then fewer other messages.
    assert_eq!(shape(&[1, 2, 3, 4], &[1, 2, 8]), "Replaced { at: 2 }");
    // As many or more: the ones in the old places swapped, the rest new.
    assert_eq!(
        shape(&[1, 2, 3, 4], &[1, 2, 8, 9, 10]),
        "Swapped { at: [2, 3], from: 4 }"
    );
}

#[test]
fn reordered() {
    // Two swapped: the first taken out, put back later.
    assert_eq!(
        shape(&[1, 2, 3], &[1, 3, 2]),
        "Removed { removed: [1], from: 2 }"
    );
    assert_eq!(shape(&[1, 2, 3, 4], &[1, 3, 2, 4]), "Replaced { at: 1 }");
    // Reversed: all but the last removed, the others read again after it.
    assert_eq!(
        shape(&[1, 2, 3, 4], &[4, 3, 2, 1]),
        "Removed { removed: [0, 1, 2], from: 1 }"
    );
}

#[test]
fn duplicates() {
    // An object twice in the known array: matched at its first place.
    let (e, _) = change_of(&[1, 2, 2, 3], &[1, 2, 3]);
    assert_eq!((e.inserted, e.removed), (vec![], vec![2]));
    assert_eq!(
        shape(&[1, 2, 2, 3], &[1, 2, 2, 2, 3]),
        "Inserted { at: 3, from: 5 }"
    );
    change_of(&[5, 5, 5], &[5, 5]);
    change_of(&[5, 5], &[5, 6, 5]);
    change_of(&[1, 2, 1, 2], &[2, 1, 2, 1]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
    /// Whatever the edit (insertions, removals, replacements, appends,
    /// duplicate objects), the Edit and its Change applied to the known
    /// array give the new one, and the kept prefix is the same in both.
    #[test]
    fn applying_the_edit_to_known_gives_new(
        known in proptest::collection::vec(0u32..12, 0..14),
        edits in proptest::collection::vec((0u8..5, 0usize..16, 0u32..16), 0..5),
    ) {
        let new = edited(&known, &edits);
        let (e, _) = change_of(&known, &new);
        let d = e.kept_prefix(known.len());
        proptest::prop_assert!(d <= known.len().min(new.len()));
        proptest::prop_assert_eq!(&known[..d], &new[..d]);
        // Ascending lists, inside their arrays.
        proptest::prop_assert!(e.inserted.windows(2).all(|w| w[0] < w[1]));
        proptest::prop_assert!(e.removed.windows(2).all(|w| w[0] < w[1]));
        proptest::prop_assert!(e.inserted.iter().all(|&j| j < new.len()));
        proptest::prop_assert!(e.removed.iter().all(|&k| k < known.len()));
    }
}
