//! Sorting, and sets and maps kept as sorted vectors.
//!
//! Every `sort_by` on a new element type and every `BTreeMap`/`BTreeSet`
//! key type adds its own copy of the algorithm to the `.wasm` (the B-tree
//! code alone cost ~35 KB across nine instantiations). Here one sort of
//! positions, compiled once, serves every element type, and the sets and
//! maps are vectors searched by bisection. The orders are those of the
//! types' `Ord` (for `JsStr`: UTF-16 code units, as JavaScript sorts).

use std::cmp::Ordering;

/// Sorts `items` by `cmp`, keeping equal items in their order (stable).
pub fn sort_by<T>(items: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let swaps = {
        let slice: &[T] = items;
        swaps_to_order(sorted_positions(
            slice.len(),
            &|a, b| match (slice.get(a), slice.get(b)) {
                (Some(x), Some(y)) => cmp(x, y),
                _ => Ordering::Equal,
            },
        ))
    };
    for (a, b) in swaps {
        items.swap(a, b);
    }
}

/// The swaps that put the item at position `order[k]` at `k`, for every
/// `k`, done in their order. Not generic, like [`sorted_positions`]: the
/// generic part of [`sort_by`] is only its comparison and the swaps.
fn swaps_to_order(order: Vec<usize>) -> Vec<(usize, usize)> {
    // `slot[i]`: where the item first at `i` is now; `item[j]`: which item
    // is now at `j`.
    let mut slot: Vec<usize> = (0..order.len()).collect();
    let mut item = slot.clone();
    let mut swaps = Vec::with_capacity(order.len());
    for (k, wanted) in order.into_iter().enumerate() {
        let (Some(&from), Some(&displaced)) = (slot.get(wanted), item.get(k)) else {
            continue;
        };
        if from != k {
            swaps.push((k, from));
            // The item that was at `k` goes to `from` (`k` is not looked at again).
            if let (Some(s), Some(i)) = (slot.get_mut(displaced), item.get_mut(from)) {
                *s = from;
                *i = displaced;
            }
        }
    }
    swaps
}

/// The positions `0..len` ordered by `cmp`, equal ones by position: a
/// bottom-up merge sort. Not generic, so that the `.wasm` holds a single
/// sort routine (and a small one: the standard library's sorts are several
/// KB each).
fn sorted_positions(len: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let mut merged: Vec<usize> = vec![0; len];
    let mut width = 1;
    while width < len {
        let mut start = 0;
        while start < len {
            let mid = start.saturating_add(width).min(len);
            let end = mid.saturating_add(width).min(len);
            let runs = (order.get(start..mid), order.get(mid..end));
            if let ((Some(left), Some(right)), Some(out)) = (runs, merged.get_mut(start..end)) {
                merge(left, right, out, cmp);
            }
            start = end;
        }
        std::mem::swap(&mut order, &mut merged);
        width = width.saturating_mul(2);
    }
    order
}

/// Merges two sorted runs into `out`, the left one first among equals.
fn merge(
    left: &[usize],
    right: &[usize],
    out: &mut [usize],
    cmp: &dyn Fn(usize, usize) -> Ordering,
) {
    let (mut left, mut right) = (left.iter().peekable(), right.iter().peekable());
    for slot in out {
        let from_right = match (left.peek(), right.peek()) {
            (Some(&&a), Some(&&b)) => cmp(b, a) == Ordering::Less,
            (None, _) => true,
            (Some(_), None) => false,
        };
        let next = if from_right {
            right.next()
        } else {
            left.next()
        };
        *slot = next.copied().unwrap_or(0);
    }
}

/// A set: its items sorted, without repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortedSet<T>(Vec<T>);

impl<T> Default for SortedSet<T> {
    fn default() -> Self {
        SortedSet(Vec::new())
    }
}

impl<T: Ord> SortedSet<T> {
    pub fn new() -> Self {
        SortedSet(Vec::new())
    }

    /// Adds `value`; false if it was there already.
    pub fn insert(&mut self, value: T) -> bool {
        match self.0.binary_search(&value) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, value);
                true
            }
        }
    }

    pub fn contains(&self, value: &T) -> bool {
        self.0.binary_search(value).is_ok()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }

    pub fn into_vec(self) -> Vec<T> {
        self.0
    }
}

impl<T: Ord> Extend<T> for SortedSet<T> {
    /// Adds all of `values` at once: one sort rather than one insertion each.
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        self.0.extend(values);
        sort_by(&mut self.0, T::cmp);
        self.0.dedup();
    }
}

impl<T: Ord> FromIterator<T> for SortedSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        let mut set = SortedSet::new();
        set.extend(values);
        set
    }
}

impl<'a, T> IntoIterator for &'a SortedSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A map: its entries sorted by key, one per key.
#[derive(Clone, Debug)]
pub struct SortedMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap(Vec::new())
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    pub fn new() -> Self {
        SortedMap(Vec::new())
    }

    /// The map of `pairs`, a later value for a key replacing an earlier one
    /// (as inserting them in order would).
    pub fn from_pairs(mut pairs: Vec<(K, V)>) -> Self {
        sort_by(&mut pairs, |a, b| a.0.cmp(&b.0));
        let mut entries: Vec<(K, V)> = Vec::with_capacity(pairs.len());
        for (key, value) in pairs {
            match entries.last_mut() {
                Some(last) if last.0 == key => last.1 = value,
                _ => entries.push((key, value)),
            }
        }
        SortedMap(entries)
    }

    /// The map of `entries` already sorted by key, one per key, taken as
    /// they are; sorted as by [`SortedMap::from_pairs`] otherwise.
    pub fn from_sorted(entries: Vec<(K, V)>) -> Self {
        if entries.windows(2).all(|w| matches!(w, [a, b] if a.0 < b.0)) {
            SortedMap(entries)
        } else {
            SortedMap::from_pairs(entries)
        }
    }

    fn find(&self, key: &K) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.cmp(key))
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        let at = self.find(key).ok()?;
        self.0.get(at).map(|(_, v)| v)
    }

    /// The value of `key`, to change; `key` may be a borrowed form of the
    /// keys (`&str` for `Box<str>` keys).
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let at = self.0.binary_search_by(|(k, _)| k.borrow().cmp(key)).ok()?;
        self.0.get_mut(at).map(|(_, v)| v)
    }

    /// Sets the value of `key`, replacing any earlier one.
    pub fn insert(&mut self, key: K, value: V) {
        match self.find(&key) {
            Ok(at) => {
                if let Some(entry) = self.0.get_mut(at) {
                    entry.1 = value;
                }
            }
            Err(at) => self.0.insert(at, (key, value)),
        }
    }

    /// The value of `key`, added as `V::default()` if missing.
    pub fn value_mut(&mut self, key: K) -> Option<&mut V>
    where
        V: Default,
    {
        let at = match self.find(&key) {
            Ok(at) => at,
            Err(at) => {
                self.0.insert(at, (key, V::default()));
                at
            }
        };
        self.0.get_mut(at).map(|(_, v)| v)
    }

    /// Takes `key` out; its value, if it was there.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let at = self.find(key).ok()?;
        Some(self.0.remove(at).1)
    }

    /// Keeps the entries `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &V) -> bool) {
        self.0.retain(|(k, v)| keep(k, v));
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries, sorted by key.
    pub fn entries(&self) -> &[(K, V)] {
        &self.0
    }

    pub fn into_entries(self) -> Vec<(K, V)> {
        self.0
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    #[test]
    fn sort_is_stable() {
        let mut v = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd'), (0, 'e')];
        sort_by(&mut v, |a, b| a.0.cmp(&b.0));
        assert_eq!(v, [(0, 'e'), (1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
    }

    proptest! {
        #[test]
        fn sort_matches_std(v in proptest::collection::vec((0u8..8, any::<u16>()), 0..200)) {
            let mut ours = v.clone();
            sort_by(&mut ours, |a, b| b.0.cmp(&a.0));
            let mut std_sorted = v;
            std_sorted.sort_by_key(|x| std::cmp::Reverse(x.0));
            prop_assert_eq!(ours, std_sorted);
        }

        #[test]
        fn set_matches_btree_set(ops in proptest::collection::vec((any::<bool>(), 0u8..40), 0..200)) {
            let mut ours = SortedSet::new();
            let mut theirs = BTreeSet::new();
            for (bulk, x) in ops {
                if bulk {
                    ours.extend([x, x / 2]);
                    theirs.extend([x, x / 2]);
                } else {
                    prop_assert_eq!(ours.insert(x), theirs.insert(x));
                }
                prop_assert_eq!(ours.contains(&x), theirs.contains(&x));
                prop_assert_eq!(ours.contains(&(x + 1)), theirs.contains(&(x + 1)));
            }
            prop_assert_eq!(ours.len(), theirs.len());
            prop_assert!(ours.iter().eq(theirs.iter()));
        }

        #[test]
        fn map_matches_btree_map(ops in proptest::collection::vec((0u8..5, 0u8..30, any::<u8>()), 0..200)) {
            let mut ours = SortedMap::new();
            let mut theirs = BTreeMap::new();
            let mut pairs = Vec::new();
            for (op, k, v) in ops {
                match op {
                    0 => {
                        ours.insert(k, u32::from(v));
                        theirs.insert(k, u32::from(v));
                    }
                    3 => prop_assert_eq!(ours.remove(&k), theirs.remove(&k)),
                    4 => {
                        ours.retain(|key, _| *key != k);
                        theirs.retain(|key, _| *key != k);
                    }
                    1 => {
                        *ours.value_mut(k).unwrap() += 1u32;
                        *theirs.entry(k).or_default() += 1u32;
                    }
                    2 if v % 2 == 0 => {
                        if let Some(x) = ours.get_mut(&k) {
                            *x += 2;
                        }
                        if let Some(x) = theirs.get_mut(&k) {
                            *x += 2;
                        }
                    }
                    _ => prop_assert_eq!(ours.get(&k), theirs.get(&k)),
                }
                pairs.push((k, u32::from(v)));
            }
            prop_assert_eq!(ours.len(), theirs.len());
            let entries: Vec<(u8, u32)> = theirs.into_iter().collect();
            prop_assert_eq!(ours.entries(), entries.as_slice());
            prop_assert_eq!(SortedMap::from_sorted(entries.clone()).into_entries(), entries.clone());
            let mut reversed = entries.clone();
            reversed.reverse();
            prop_assert_eq!(SortedMap::from_sorted(reversed).into_entries(), entries);
            let built: Vec<(u8, u32)> = pairs.iter().copied().collect::<BTreeMap<_, _>>().into_iter().collect();
            prop_assert_eq!(SortedMap::from_pairs(pairs).into_entries(), built);
        }
    }
}
