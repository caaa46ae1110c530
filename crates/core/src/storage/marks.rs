//! The messages of a session the store keeps track of by position, so that
//! neither a save nor `loadContext` has to read every message for them:
//!
//! - **pinned** messages (`pinned: true`, [`crate::message::pinned`]): the
//!   ones before the last summary are what the model is sent right after
//!   it, so `loadContext` returns them too — from the session record's
//!   `pinnedKeys` (each one's record key and place in it), which a save
//!   writes — and the record's `contextTokens` counts them;
//! - **clearing markers** (`toolOutputCleared`): what one after the last
//!   summary freed comes off the record's `contextTokens` until usage is
//!   reported after it, as the compactor counts it.
//!
//! [`Marks`] are found once, when the store reads the messages (one scan in
//! the shim, `markWords`) or when a save adds them (only the inserted ones
//! are looked at), and follow every later save's [`Edit`].

use super::packing::{slot_of, Pack};
use super::save_plan::Edit;
use crate::message::pinned::is_pinned;
use crate::message::role::Role;
use crate::sorted::sort_by;

/// The pinned messages and the clearing markers of an array, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    pub pinned: Vec<usize>,
    pub markers: Vec<usize>,
}

impl Marks {
    /// The marks of messages the shim looked at, from its words: triples
    /// `(index, role code, pinned flag)` for every message whose `pinned` is
    /// `true` or whose role is `toolOutputCleared` (`markWords`), indices
    /// ascending and counted from the shim's `from`.
    pub fn from_words(words: &[u32]) -> Marks {
        let mut marks = Marks::default();
        for w in words.chunks_exact(3) {
            let (index, role) = (
                w[0] as usize,
                u8::try_from(w[1]).ok().and_then(Role::from_code),
            );
            let Some(role) = role else { continue };
            if is_pinned(role, w[2] == 1) {
                marks.pinned.push(index);
            }
            if role == Role::ToolOutputCleared {
                marks.markers.push(index);
            }
        }
        marks
    }

    /// The marks after a save of `edit`: the old ones that stay, at their new
    /// places, and `inserted` (the marks of the inserted messages, at their
    /// new indices).
    pub fn after_edit(&self, edit: &Edit, inserted: Marks) -> Marks {
        let follow = |old: &[usize], new: Vec<usize>| {
            let mut out: Vec<usize> = old.iter().filter_map(|&k| edit.new_index(k)).collect();
            out.extend(new);
            sort_by(&mut out, Ord::cmp);
            out
        };
        Marks {
            pinned: follow(&self.pinned, inserted.pinned),
            markers: follow(&self.markers, inserted.markers),
        }
    }

    /// The pinned messages before the last summary (none without one): the
    /// ones the model is sent after it.
    pub fn resent(&self, last_summary: Option<usize>) -> &[usize] {
        match last_summary {
            Some(s) => &self.pinned[..self.pinned.partition_point(|&i| i < s)],
            None => &[],
        }
    }

    /// The markers after the last summary (all of them without one).
    pub fn markers_after(&self, last_summary: Option<usize>) -> &[usize] {
        match last_summary {
            Some(s) => &self.markers[self.markers.partition_point(|&i| i <= s)..],
            None => &self.markers,
        }
    }
}

/// Where each re-sent pinned message is stored: its index (whose record key
/// the binding holds) and its place in that record (0 for a record of its
/// own), as the session record's `pinnedKeys` lists them.
pub fn pinned_slots(
    marks: &Marks,
    last_summary: Option<usize>,
    packs: &[Pack],
) -> Vec<(usize, u32)> {
    marks
        .resent(last_summary)
        .iter()
        .map(|&i| (i, slot_of(packs, i) as u32))
        .collect()
}

/// What `loadContext` reads besides the context, by the session record's
/// `pinnedKeys` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinnedRead {
    /// No summary, or none pinned before it: nothing.
    Nothing,
    /// The records the field names.
    Keys,
    /// A record written by a version without the field, with a summary:
    /// the whole session is read to find them.
    Everything,
}

/// `context_start`: the record names where the context starts (a summary);
/// `pinned_keys`: the length of its `pinnedKeys` array, or `None` without
/// one.
pub fn pinned_read(context_start: bool, pinned_keys: Option<usize>) -> PinnedRead {
    match (context_start, pinned_keys) {
        (false, _) | (true, Some(0)) => PinnedRead::Nothing,
        (true, Some(_)) => PinnedRead::Keys,
        (true, None) => PinnedRead::Everything,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    const USER: u32 = Role::User as u32;
    const SUMMARY: u32 = Role::CompactionSummary as u32;
    const MARKER: u32 = Role::ToolOutputCleared as u32;

    #[test]
    fn the_shim_words_say_which_messages_are_pinned_and_which_are_markers() {
        let words = [
            2, USER, 1, 5, MARKER, 0, 7, SUMMARY, 1, 9, 99, 1, 11, USER, 1, 12, MARKER, 1,
        ];
        let marks = Marks::from_words(&words);
        // A pinned summary does not count as pinned (it starts the view
        // anyway); an unknown role code is not a mark; a pinned marker is both.
        assert_eq!(marks.pinned, vec![2, 11, 12]);
        assert_eq!(marks.markers, vec![5, 12]);
        // A trailing partial triple is ignored.
        assert_eq!(Marks::from_words(&[3, USER]), Marks::default());
    }

    fn marks(pinned: &[usize], markers: &[usize]) -> Marks {
        Marks {
            pinned: pinned.to_vec(),
            markers: markers.to_vec(),
        }
    }

    #[test]
    fn marks_follow_a_save_s_inserts_and_removals() {
        // A turn: appended messages, one of them pinned.
        let turn = Edit {
            inserted: vec![10, 11],
            removed: vec![],
        };
        assert_eq!(
            marks(&[1, 4], &[6]).after_edit(&turn, marks(&[11], &[])),
            marks(&[1, 4, 11], &[6])
        );
        // A summary inserted at 3 moves the later marks up by one.
        let summary = Edit {
            inserted: vec![3],
            removed: vec![],
        };
        assert_eq!(
            marks(&[1, 4], &[6]).after_edit(&summary, Marks::default()),
            marks(&[1, 5], &[7])
        );
        // A removed failed attempt takes its marks along and moves the rest
        // down; a marker inserted before them moves them up again.
        let edit = Edit {
            inserted: vec![2],
            removed: vec![4, 5],
        };
        assert_eq!(
            marks(&[1, 4, 8], &[5, 9]).after_edit(&edit, marks(&[], &[2])),
            marks(&[1, 7], &[2, 8])
        );
    }

    #[test]
    fn the_re_sent_pinned_messages_are_the_ones_before_the_last_summary() {
        let m = marks(&[1, 4, 9], &[2, 6, 12]);
        assert_eq!(m.resent(Some(5)), &[1, 4]);
        assert_eq!(m.resent(Some(4)), &[1]);
        assert!(m.resent(None).is_empty());
        assert_eq!(m.markers_after(Some(6)), &[12]);
        assert_eq!(m.markers_after(Some(5)), &[6, 12]);
        assert_eq!(m.markers_after(None), &[2, 6, 12]);
    }

    #[test]
    fn a_pinned_message_s_slot_is_its_place_in_its_pack() {
        let m = marks(&[1, 6, 8, 12], &[]);
        // Messages 0..5 in one pack, 5..9 in another, the rest loose.
        let packs = [(0, 5), (5, 4)];
        assert_eq!(
            pinned_slots(&m, Some(10), &packs),
            vec![(1, 1), (6, 1), (8, 3)]
        );
        assert_eq!(
            pinned_slots(&m, Some(13), &[]),
            vec![(1, 0), (6, 0), (8, 0), (12, 0)]
        );
        assert!(pinned_slots(&m, None, &packs).is_empty());
    }

    #[test]
    fn load_context_reads_pinned_records_only_when_the_record_names_them() {
        assert_eq!(pinned_read(false, None), PinnedRead::Nothing);
        assert_eq!(pinned_read(false, Some(3)), PinnedRead::Nothing);
        assert_eq!(pinned_read(true, Some(0)), PinnedRead::Nothing);
        assert_eq!(pinned_read(true, Some(2)), PinnedRead::Keys);
        assert_eq!(pinned_read(true, None), PinnedRead::Everything);
    }
}
