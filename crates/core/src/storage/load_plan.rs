//! What `load` and `loadContext` read, and what the store then knows of
//! the session ([`View`]). The binding (`store/load.rs`) queues the
//! requests, awaits them and flattens the records; these decide:
//!
//! - [`early_start`]: which records to ask for together with the session
//!   record, before it comes back (all of them for `load`; for
//!   `loadContext`, from the record of the last summary this store knows
//!   of, when it knows one);
//! - [`keep_early`]: whether those are the right ones once the session
//!   record says where the context starts (else the binding reads again);
//! - [`skip`]: how many messages of the first record come before the
//!   context (a summary inside a pack);
//! - [`loaded`]: the [`View`] of what was read.

use super::known::View;
use super::marks::Marks;
use super::packing::Pack;
use std::rc::Rc;

/// Which message records a read asks for with the session record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Early {
    /// Every record of the session.
    All,
    /// From the record of this store's copy's message `i` (its last
    /// summary) on.
    From(usize),
    /// Nothing yet: the session record says where the context starts.
    Wait,
}

/// `copy`: this store's copy of the session, by its last summary (`None`:
/// no copy; `Some(None)`: a copy without a summary).
pub fn early_start(context_only: bool, copy: Option<Option<usize>>) -> Early {
    match (context_only, copy) {
        (false, _) | (true, Some(None)) => Early::All,
        (true, Some(Some(i))) => Early::From(i),
        (true, None) => Early::Wait,
    }
}

/// Whether the records asked for early serve: always for `load`; for
/// `loadContext` when they start at the key the session record names
/// (`same_key`: the early start is its `contextKey`, both null for none).
pub fn keep_early(context_only: bool, same_key: bool) -> bool {
    !context_only || same_key
}

/// Messages of the first record read that come before the context: the
/// session record's `contextSlot` for `loadContext`, else none.
pub fn skip(context_only: bool, context_slot: Option<f64>) -> u32 {
    match (context_only, context_slot) {
        (true, Some(slot)) if slot.is_finite() && slot > 0.0 => slot.min(u32::MAX as f64) as u32,
        _ => 0,
    }
}

/// What was read, as the session record and the records say it.
#[derive(Clone, Debug, PartialEq)]
pub struct Read {
    pub context_only: bool,
    /// The session record's `revision` and `messageCount` (absent in a
    /// record of an older version: 0).
    pub revision: Option<f64>,
    pub message_count: Option<f64>,
    /// The messages read, their packs, and the first record's messages
    /// left out ([`skip`]).
    pub len: usize,
    pub packs: Vec<Pack>,
    pub skip: u32,
    /// Whether the first message read is a `compactionSummary`.
    pub starts_with_summary: bool,
}

/// The [`View`] of a read; `last_summary` finds the last summary among the
/// messages read (asked only when the read does not start at it); `marks`
/// are the pinned messages and markers among them.
pub fn loaded(read: Read, marks: Marks, last_summary: impl FnOnce() -> Option<usize>) -> View {
    let count = read
        .message_count
        .unwrap_or(0.0)
        .clamp(0.0, u32::MAX as f64) as u32;
    View {
        revision: read.revision.unwrap_or(0.0),
        lead: match read.packs.first() {
            Some(&(0, _)) if read.skip > 0 => read.skip,
            _ => 0,
        },
        offset: count.saturating_sub(read.len.min(u32::MAX as usize) as u32),
        // The context starts at the last summary: no need to look for it.
        last_summary: match read.context_only && read.starts_with_summary {
            true => Some(0),
            false => last_summary(),
        },
        packs: Rc::new(read.packs),
        marks: Rc::new(marks),
    }
}

/// The packs the engine-side record reader found, from its flat
/// `(first index, count)` pairs (an odd last word is ignored).
pub fn packs_from_pairs(pairs: &[u32]) -> Vec<Pack> {
    pairs
        .chunks_exact(2)
        .map(|p| (p[0] as usize, p[1] as usize))
        .collect()
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn packs_come_in_pairs() {
        assert_eq!(packs_from_pairs(&[0, 3, 5, 2]), vec![(0, 3), (5, 2)]);
        assert_eq!(packs_from_pairs(&[4, 2, 9]), vec![(4, 2)]);
        assert!(packs_from_pairs(&[]).is_empty());
    }

    fn read(context_only: bool, len: usize, packs: Vec<Pack>, skip: u32) -> Read {
        Read {
            context_only,
            revision: Some(7.0),
            message_count: Some(10.0),
            len,
            packs,
            skip,
            starts_with_summary: context_only,
        }
    }

    #[test]
    fn load_asks_for_everything_and_load_context_for_what_it_knows() {
        assert_eq!(early_start(false, None), Early::All);
        assert_eq!(early_start(false, Some(Some(3))), Early::All);
        assert_eq!(early_start(true, Some(Some(3))), Early::From(3));
        // A copy without a summary: the context is everything.
        assert_eq!(early_start(true, Some(None)), Early::All);
        assert_eq!(early_start(true, None), Early::Wait);
        assert!(keep_early(false, false));
        assert!(keep_early(true, true));
        assert!(!keep_early(true, false));
    }

    #[test]
    fn the_context_slot_is_skipped_only_by_load_context() {
        assert_eq!(skip(true, Some(5.0)), 5);
        assert_eq!(skip(false, Some(5.0)), 0);
        assert_eq!(skip(true, None), 0);
        // An odd record (an older version, a hand edit) skips nothing.
        assert_eq!(skip(true, Some(f64::NAN)), 0);
        assert_eq!(skip(true, Some(-2.0)), 0);
    }

    #[test]
    fn a_whole_load_is_a_whole_view() {
        let mut asked = false;
        let marks = Marks {
            pinned: vec![2],
            markers: vec![8],
        };
        let v = loaded(read(false, 10, vec![(0, 4)], 0), marks.clone(), || {
            asked = true;
            Some(6)
        });
        assert!(asked);
        assert_eq!(
            v,
            View {
                revision: 7.0,
                packs: Rc::new(vec![(0, 4)]),
                lead: 0,
                last_summary: Some(6),
                offset: 0,
                marks: Rc::new(marks),
            }
        );
        assert!(v.whole());
    }

    #[test]
    fn a_context_inside_a_pack_has_a_lead_and_an_offset() {
        let v = loaded(read(true, 4, vec![(0, 2)], 3), Marks::default(), || {
            panic!("not asked")
        });
        assert_eq!((v.lead, v.offset, v.last_summary), (3, 6, Some(0)));
        // A context that begins its record: no lead.
        let v = loaded(read(true, 4, vec![(2, 2)], 3), Marks::default(), || None);
        assert_eq!((v.lead, v.offset), (0, 6));
        // A record of an older version: no revision, no count.
        let mut r = read(false, 2, vec![], 0);
        r.revision = None;
        r.message_count = None;
        let v = loaded(r, Marks::default(), || None);
        assert_eq!((v.revision, v.offset, v.last_summary), (0.0, 0, None));
    }
}
