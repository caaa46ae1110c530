//! What a store puts back after one of its write transactions failed to
//! commit, so that a failed save leaves the session exactly as it was.
//!
//! An aborted transaction should undo every write it made, and in Chromium
//! and WebKit it does. Firefox 153 does not always: when its SQLite file
//! hits the storage limit in the middle of a transaction (`SQLITE_FULL`),
//! SQLite rolls the whole transaction back by itself, and the writes the
//! transaction still had queued then run one by one outside any
//! transaction, each committing alone, until the limit is hit again. The
//! transaction is reported aborted (`QuotaExceededError`), but some of its
//! later writes are on disk: new message records past the stored end,
//! pack records rewritten under an old key, old records deleted, even the
//! session record with the new revision. (Reproduced with raw IndexedDB: a
//! readwrite transaction of 3,000 puts of 1 KB over a 2 MB limit aborts
//! with `QuotaExceededError` and leaves 97 of its records, from the middle
//! of the run, stored.)
//!
//! So after a failed write the store, still holding the session's lock,
//! reads what is stored and makes it what it was before: [`after_failed_write`]
//! says which stored records go (keys the store did not have: strays of the
//! failed write) and which of its own records are written again (those the
//! failed write touched, and any that are gone). The session record is put
//! back as the failed transaction read it when its revision differs
//! ([`after_failed_save`]). A whole session written under a new id
//! (`fork`, `importJsonl`) that failed so is removed, record and messages:
//! there was nothing under that id before. Only after the failures
//! [`worth_repairing`] names.

use super::save_plan::Position;
use crate::sorted::sort_by;

/// The writes that put a session's message records back as they were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repair {
    /// Indices into `stored`: records to delete (no record of the store's
    /// has their key).
    pub delete: Vec<usize>,
    /// Indices into `known`: the store's records to put again, in order.
    pub restore: Vec<usize>,
    /// Whether the session record goes back as the failed transaction
    /// read it.
    pub record: bool,
}

impl Repair {
    /// Nothing to do: the abort undid everything.
    pub fn is_empty(&self) -> bool {
        self.delete.is_empty() && !self.writes_back()
    }

    /// Whether anything is written back after the strays are deleted (in a
    /// transaction of their own: at the storage limit, deleting is what
    /// makes room for the writes after it).
    pub fn writes_back(&self) -> bool {
        !self.restore.is_empty() || self.record
    }
}

/// After a failed save: [`after_failed_write`] for the message records,
/// and the session record put back when the one stored now (`stored_now`:
/// its revision, or none) is not the one the failed transaction read
/// (`read_before`; none: there was none, nothing to put back).
pub fn after_failed_save(
    known: &[Position],
    touched: &[usize],
    stored: &[Position],
    read_before: Option<f64>,
    stored_now: Option<f64>,
) -> Repair {
    Repair {
        record: read_before.is_some_and(|r| session_record_changed(r, stored_now)),
        ..after_failed_write(known, touched, stored)
    }
}

/// `known`: the keys (positions) of the records the store had before the
/// failed write, in key order; `touched`: indices into `known` of the
/// records the failed write put under their key or deleted; `stored`: the
/// keys stored now, in key order. Every stored key that is not a known one
/// is deleted; every touched record, and every known one no longer stored,
/// is put again.
pub fn after_failed_write(known: &[Position], touched: &[usize], stored: &[Position]) -> Repair {
    let mut repair = Repair::default();
    let mut present = vec![false; known.len()];
    // Both lists are sorted by key: one merge.
    let (mut i, mut s) = (0, 0);
    while s < stored.len() {
        match known.get(i).map(|k| compare(k, &stored[s])) {
            Some(std::cmp::Ordering::Less) => i += 1,
            Some(std::cmp::Ordering::Equal) => {
                present[i] = true;
                i += 1;
                s += 1;
            }
            _ => {
                repair.delete.push(s);
                s += 1;
            }
        }
    }
    let mut restore: Vec<usize> = touched
        .iter()
        .copied()
        .filter(|&k| k < known.len())
        .collect();
    restore.extend((0..known.len()).filter(|&k| !present[k]));
    sort_by(&mut restore, Ord::cmp);
    restore.dedup();
    repair.restore = restore;
    repair
}

/// A store's copy of a session as records: each record's first message
/// and message count (a pack's, or one loose message), in key order; and
/// which record each message is in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Records {
    pub spans: Vec<(usize, usize)>,
    record_of: Vec<usize>,
}

impl Records {
    /// `len` messages laid out in `packs` (sorted); a pack running past
    /// the copy's end is cut there.
    pub fn of(len: usize, packs: &[super::packing::Pack]) -> Records {
        let mut records = Records::default();
        let mut j = 0;
        while j < len {
            let count = match super::packing::pack_of(packs, j) {
                Some(p) => (packs[p].0 + packs[p].1).min(len).saturating_sub(j).max(1),
                None => 1,
            };
            records
                .record_of
                .extend(std::iter::repeat_n(records.spans.len(), count));
            records.spans.push((j, count));
            j += count;
        }
        records
    }

    /// The records of old messages `touched` (those past the copy's end
    /// left out), as [`after_failed_write`] takes them.
    pub fn touched(&self, touched: &[usize]) -> Vec<usize> {
        touched
            .iter()
            .filter_map(|&k| self.record_of.get(k).copied())
            .collect()
    }
}

/// Whether a write that failed with the store error named `name`
/// (`StoreError::name`) may have left part of itself stored, so that a
/// repair is worth a transaction: a quota failure, or another storage
/// failure at commit. A lost or closed connection is not (the connection
/// is gone, and the call's retry reads what landed), nor a refusal made
/// before anything was written.
pub fn worth_repairing(name: &str) -> bool {
    matches!(name, "QuotaExceededError" | "StorageError")
}

/// Whether the session record stored now is not the one the failed
/// transaction read first (its revision differs, or it is gone): then that
/// one is put back.
fn session_record_changed(read_before: f64, stored_now: Option<f64>) -> bool {
    stored_now != Some(read_before)
}

/// IndexedDB's order of the number parts of two keys of one session (an
/// array key compares element by element; a shorter prefix sorts first).
fn compare(a: &[f64], b: &[f64]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal) {
            std::cmp::Ordering::Equal => continue,
            other => return other,
        }
    }
    a.len().cmp(&b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_follow_the_packs_and_loose_messages() {
        let r = Records::of(7, &[(0, 3), (3, 2)]);
        assert_eq!(r.spans, vec![(0, 3), (3, 2), (5, 1), (6, 1)]);
        assert_eq!(r.touched(&[1, 4, 6, 9]), vec![0, 1, 3]);
        // A pack cut by the copy's end (a pack longer than said).
        assert_eq!(
            Records::of(4, &[(2, 5)]).spans,
            vec![(0, 1), (1, 1), (2, 2)]
        );
        assert_eq!(Records::of(0, &[]), Records::default());
    }

    fn p(xs: &[f64]) -> Position {
        xs.to_vec()
    }

    #[test]
    fn nothing_to_do_when_the_abort_undid_everything() {
        let known = vec![p(&[0.0]), p(&[1.0]), p(&[2.0])];
        let r = after_failed_write(&known, &[], &known.clone());
        assert!(r.is_empty());
    }

    #[test]
    fn strays_past_the_end_are_deleted() {
        let known = vec![p(&[0.0]), p(&[1.0])];
        let stored = vec![p(&[0.0]), p(&[1.0]), p(&[7.0]), p(&[8.0])];
        let r = after_failed_write(&known, &[], &stored);
        assert_eq!(
            r,
            Repair {
                delete: vec![2, 3],
                restore: vec![],
                record: false,
            }
        );
    }

    #[test]
    fn strays_between_known_records_are_deleted() {
        // A split pack's second part, keyed between two old records.
        let known = vec![p(&[0.0]), p(&[1.0]), p(&[2.0])];
        let stored = vec![p(&[0.0]), p(&[1.0]), p(&[1.0, 5.0]), p(&[2.0])];
        let r = after_failed_write(&known, &[], &stored);
        assert_eq!(
            r,
            Repair {
                delete: vec![2],
                restore: vec![],
                record: false,
            }
        );
    }

    #[test]
    fn touched_and_missing_records_are_put_again() {
        // Record 1 was rewritten as a pack under its own key (touched),
        // record 2 deleted by the failed write (missing), 3 untouched.
        let known = vec![p(&[0.0]), p(&[1.0]), p(&[2.0]), p(&[3.0])];
        let stored = vec![p(&[0.0]), p(&[1.0]), p(&[3.0]), p(&[4.0])];
        let r = after_failed_write(&known, &[1], &stored);
        assert_eq!(
            r,
            Repair {
                delete: vec![3],
                restore: vec![1, 2],
                record: false,
            }
        );
    }

    #[test]
    fn a_touched_index_out_of_range_is_ignored() {
        let known = vec![p(&[0.0])];
        let r = after_failed_write(&known, &[0, 5], &known.clone());
        assert_eq!(r.restore, vec![0]);
    }

    #[test]
    fn everything_gone_puts_everything_back() {
        let known = vec![p(&[0.0]), p(&[1.0])];
        let r = after_failed_write(&known, &[], &[]);
        assert_eq!(
            r,
            Repair {
                delete: vec![],
                restore: vec![0, 1],
                record: false,
            }
        );
    }

    #[test]
    fn keys_compare_as_indexeddb_arrays() {
        use std::cmp::Ordering::*;
        assert_eq!(compare(&[1.0], &[1.0, 0.5]), Less);
        assert_eq!(compare(&[1.0, 0.5], &[2.0]), Less);
        assert_eq!(compare(&[2.0], &[1.0, 9.0]), Greater);
        assert_eq!(compare(&[3.0], &[3.0]), Equal);
    }

    #[test]
    fn only_storage_failures_are_repaired() {
        assert!(worth_repairing("QuotaExceededError"));
        assert!(worth_repairing("StorageError"));
        for name in [
            "ConnectionLostError",
            "StoreClosedError",
            "ConflictError",
            "LockTimeoutError",
            "TypeError",
            "",
        ] {
            assert!(!worth_repairing(name), "{name}");
        }
    }

    #[test]
    fn the_session_record_goes_back_when_its_revision_moved() {
        assert!(!session_record_changed(4.0, Some(4.0)));
        assert!(session_record_changed(4.0, Some(5.0)));
        assert!(session_record_changed(4.0, None));
    }

    #[test]
    fn a_failed_save_puts_back_records_and_a_moved_session_record() {
        let known = [p(&[0.0]), p(&[1.0])];
        let clean = after_failed_save(&known, &[], &known, Some(3.0), Some(3.0));
        assert!(clean.is_empty());
        let moved = after_failed_save(&known, &[], &known, Some(3.0), Some(4.0));
        assert!(moved.record && moved.writes_back() && !moved.is_empty());
        assert!(moved.delete.is_empty() && moved.restore.is_empty());
        // No record read before: none to put back.
        assert!(after_failed_save(&known, &[], &known, None, Some(4.0)).is_empty());
        let stray = [p(&[0.0]), p(&[1.0]), p(&[2.0])];
        let strays = after_failed_save(&known, &[1], &stray, Some(3.0), Some(3.0));
        assert_eq!((strays.delete, strays.restore), (vec![2], vec![1]));
        let only_strays = after_failed_save(&known, &[], &stray, Some(3.0), Some(3.0));
        assert!(!only_strays.is_empty() && !only_strays.writes_back());
    }
}
