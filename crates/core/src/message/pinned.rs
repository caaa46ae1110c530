//! Pinned messages: a message the app marks `pinned: true` (a standing
//! rule, a constraint) is sent to the model after every summary, in its
//! original order, and is never summarized away.
//!
//! The model's view of the flat array becomes: the last
//! `compactionSummary`, then the pinned messages that lie before it (the
//! same objects, in array order), then everything after the summary. A
//! pinned message after the last summary is simply where it is. The flag is
//! read once, when a message is first gathered (the compactor keeps it with
//! the message's other facts), so a turn never scans the array for it:
//! [`PinnedSet`] keeps the indices of the pinned messages in order, and the
//! ones re-sent are a prefix of it found by binary search.

use crate::message::role::Role;

/// Whether a message whose `pinned` field is `true` (`flag`) counts as
/// pinned: any role but `compactionSummary`, which starts the model's view
/// anyway (only the last one is sent; pinning an older one would send a
/// stale summary).
pub fn is_pinned(role: Role, flag: bool) -> bool {
    flag && role != Role::CompactionSummary
}

/// The indices of the pinned messages of an array, ascending, kept in step
/// with the array's edits (appends in constant time; an insertion or a
/// removal in the middle in time linear in the number of pinned messages, a
/// replacement in place in logarithmic time plus the move of the ones
/// after it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PinnedSet {
    indices: Vec<usize>,
}

impl PinnedSet {
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// The message at `index` (after every known one) was appended.
    pub fn push(&mut self, index: usize, pinned: bool) {
        if pinned {
            debug_assert!(self.indices.last().is_none_or(|&l| l < index));
            self.indices.push(index);
        }
    }

    /// A message was inserted at `at` (later ones move up by one).
    pub fn insert(&mut self, at: usize, pinned: bool) {
        let k = self.indices.partition_point(|&i| i < at);
        for i in &mut self.indices[k..] {
            *i += 1;
        }
        if pinned {
            self.indices.insert(k, at);
        }
    }

    /// The message at `at` was taken out (later ones move down by one).
    pub fn remove(&mut self, at: usize) {
        let k = self.indices.partition_point(|&i| i < at);
        if self.indices.get(k) == Some(&at) {
            self.indices.remove(k);
        }
        for i in &mut self.indices[k..] {
            *i -= 1;
        }
    }

    /// The message at `at` was replaced in place by one that is pinned
    /// or not (the others keep their indices).
    pub fn set(&mut self, at: usize, pinned: bool) {
        match (self.indices.binary_search(&at), pinned) {
            (Err(k), true) => self.indices.insert(k, at),
            (Ok(k), false) => {
                self.indices.remove(k);
            }
            _ => {}
        }
    }

    /// Messages from `len` on were forgotten.
    pub fn truncate(&mut self, len: usize) {
        let k = self.indices.partition_point(|&i| i < len);
        self.indices.truncate(k);
    }

    /// The pinned messages before `at`, in order: with `at` the last
    /// summary's index, the ones the model is sent right after it.
    pub fn before(&self, at: usize) -> &[usize] {
        &self.indices[..self.indices.partition_point(|&i| i < at)]
    }
}

/// The indices of the model's view of an array of `len` messages whose last
/// `compactionSummary` is at `summary`: the summary, the pinned messages
/// before it (`pinned_before`, ascending), then every message after it.
/// Without a summary, every message.
pub fn model_view(
    len: usize,
    summary: Option<usize>,
    pinned_before: &[usize],
) -> impl Iterator<Item = usize> + '_ {
    let (head, pinned, rest) = match summary {
        Some(s) => (Some(s), pinned_before, s + 1..len),
        None => (None, &[][..], 0..len),
    };
    head.into_iter().chain(pinned.iter().copied()).chain(rest)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn only_a_true_flag_on_a_message_that_is_not_a_compaction_summary_pins() {
        assert!(is_pinned(Role::User, true));
        assert!(is_pinned(Role::Custom, true));
        assert!(is_pinned(Role::Assistant, true));
        assert!(is_pinned(Role::BranchSummary, true));
        assert!(!is_pinned(Role::User, false));
        assert!(!is_pinned(Role::CompactionSummary, true));
    }

    fn set(pinned: &[bool]) -> PinnedSet {
        let mut s = PinnedSet::default();
        for (i, &p) in pinned.iter().enumerate() {
            s.push(i, p);
        }
        s
    }

    #[test]
    fn edits_keep_the_indices_in_step_with_the_array() {
        let mut s = set(&[true, false, true, false, true]);
        assert_eq!(s.indices(), &[0, 2, 4]);
        // A summary inserted at 3: the pinned message at 4 moves to 5.
        s.insert(3, false);
        assert_eq!(s.indices(), &[0, 2, 5]);
        assert_eq!(s.before(3), &[0, 2]);
        assert_eq!(s.before(0), &[] as &[usize]);
        assert_eq!(s.before(100), &[0, 2, 5]);
        // A pinned message inserted at 1.
        s.insert(1, true);
        assert_eq!(s.indices(), &[0, 1, 3, 6]);
        // Removed: a pinned one, then one that is not.
        s.remove(3);
        assert_eq!(s.indices(), &[0, 1, 5]);
        s.remove(2);
        assert_eq!(s.indices(), &[0, 1, 4]);
        // Replaced in place: pinned by a pinned copy, unpinned by a copy
        // without the flag, a pinned one by another pinned one.
        s.set(2, true);
        assert_eq!(s.indices(), &[0, 1, 2, 4]);
        s.set(1, false);
        assert_eq!(s.indices(), &[0, 2, 4]);
        s.set(4, true);
        s.set(3, false);
        assert_eq!(s.indices(), &[0, 2, 4]);
        s.set(1, true);
        s.truncate(4);
        assert_eq!(s.indices(), &[0, 1, 2]);
        s.set(2, false);
        assert_eq!(s.indices(), &[0, 1]);
        s.truncate(0);
        assert!(s.is_empty());
    }

    #[test]
    fn the_model_sees_the_summary_then_the_pinned_messages_then_the_rest() {
        let s = set(&[false, true, false, true, false, false, true, false]);
        // The last summary at 5.
        let view: Vec<usize> = model_view(8, Some(5), s.before(5)).collect();
        assert_eq!(view, vec![5, 1, 3, 6, 7]);
        // No summary: everything, in order.
        let view: Vec<usize> = model_view(3, None, s.before(2)).collect();
        assert_eq!(view, vec![0, 1, 2]);
        // The summary last.
        let view: Vec<usize> = model_view(8, Some(7), s.before(7)).collect();
        assert_eq!(view, vec![7, 1, 3, 6]);
    }

    proptest::proptest! {
        #[test]
        fn edits_equal_rebuilding(
            flags in proptest::collection::vec(proptest::bool::ANY, 0..40),
            ops in proptest::collection::vec((0u8..4, 0usize..50, proptest::bool::ANY), 0..10),
        ) {
            let mut flags = flags;
            let mut s = set(&flags);
            for (op, at, p) in ops {
                match op {
                    0 => {
                        let at = at % (flags.len() + 1);
                        flags.insert(at, p);
                        s.insert(at, p);
                    }
                    1 if !flags.is_empty() => {
                        let at = at % flags.len();
                        flags.remove(at);
                        s.remove(at);
                    }
                    2 if !flags.is_empty() => {
                        let at = at % flags.len();
                        flags[at] = p;
                        s.set(at, p);
                    }
                    _ => {
                        let at = at % (flags.len() + 1);
                        flags.truncate(at);
                        s.truncate(at);
                    }
                }
                proptest::prop_assert_eq!(&s, &set(&flags));
            }
        }
    }
}
