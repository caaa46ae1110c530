//! `SessionStore.save` as a flow of decisions, driven by [`SaveFlow`]
//! (`machine`): the binding reads the caller's array and the records,
//! awaits IndexedDB and feeds the flow what it read; every branch is
//! decided (and tested) here, in this order:
//!
//! 1. the base — [`use_cached`]: diff against what this store last loaded
//!    or saved, or else against the stored records, where
//!    [`check_outdated`] makes a save from a copy that is stale (another
//!    store changed the session since, a save from it was a conflict, the
//!    session was deleted since) a conflict whatever the records say, until
//!    the session is loaded again;
//! 2. [`compare_by_value`]: a cached base from which the diff removes what
//!    may not be dropped is first matched by value (the caller kept an
//!    older array than the one `load` gave it);
//! 3. [`refuse_drops`]: drops need `{ replace: true }`, except trailing
//!    failed attempts, and never before a `loadContext` array's start;
//! 4. [`unchanged`]: the same messages write nothing, once [`after_read`]
//!    finds the stored revision is the one the save is from;
//! 5. [`unstorable`]: bad messages are refused before anything is written;
//! 6. [`plan_writes`]: which records to put and delete, the new session
//!    record's fields, how durable the transaction is, and which old
//!    records a repair must put back if the commit fails (`repair`);
//! 7. [`after_read`] inside the write transaction: write, report a first
//!    attempt's commit (a retry after a lost connection that finds the
//!    record that attempt wrote), or fail;
//!    [`refreshed`]: the fields again when the stored record moved;
//! 8. [`put_failure`]: a message the browser cannot clone names itself.
//!
//! [`pack_keys`] says where each pack record's key comes from.
//!
//! [`context_tokens`] is the record's context size, read from the end.

mod machine;
pub use machine::{
    contents, preview_of, Base, Event, Messages, NewKey, SaveFailure, SaveFlow, SaveHost, Step,
    WritePlan,
};

use super::connection::{save_landed, Landed};
use super::error::{DropRefusal, StoreError};
use super::known::{Seen, View};
use super::marks::Marks;
use super::meta::{saved_last_modified, SaveFields};
use super::packing::{self, KeyOf, Layout};
use super::save_plan::{check_removals, durability, Durability, Edit, WriteKind};
use crate::tokens::context_tokens::marker_counts;
use crate::tokens::context_tokens::{estimate_from_end, less_freed, read_back, Stale};
use crate::tokens::estimate::MessageFacts;

/// The method's name, as every error of a save starts.
pub const ACTION: &str = "SessionStore.save";

/// Whether a save diffs against this store's copy of the session: a copy
/// of the whole session (`offset` 0), or of its context (`loadContext`)
/// when the array being saved starts with the copy's first object
/// (`first_same`); else it reads the stored records.
fn use_cached(offset: u32, cached_len: usize, first_same: bool) -> bool {
    offset == 0 || (cached_len > 0 && first_same)
}

/// The save reads the records (no usable copy), stored at revision
/// `stored`. `seen`: what this store's callers last saw when its copy was
/// dropped as stale (`known::Sessions::seen`): another revision is a
/// conflict, and so is any session stored under the id of one deleted
/// since (its revisions start again at 0).
fn check_outdated(id: &str, stored: f64, seen: Option<Seen>) -> Result<(), StoreError> {
    check_seen(ACTION, id, stored, seen)
}

/// Whether `action` may go on from what its caller last saw of session
/// `id` (`seen`: this store's copy's revision or its outdated mark,
/// `known::Sessions::viewed`; none when this store never read it), the
/// session being stored at revision `stored`: another revision is a
/// conflict, and so is any session stored under the id of one deleted
/// since. A `fork` checks this too: its `atIndex` counts the messages its
/// caller saw, and another store's compaction or undo since moves them.
pub fn check_seen(
    action: &'static str,
    id: &str,
    stored: f64,
    seen: Option<Seen>,
) -> Result<(), StoreError> {
    match seen {
        Some(Seen::Revision(seen)) if seen != stored => Err(StoreError::Conflict {
            action,
            id: id.to_owned(),
            stored,
            seen,
        }),
        Some(Seen::Deleted) => Err(StoreError::Recreated {
            action,
            id: id.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Whether `edit`'s removals may be made without `{ replace: true }`: none,
/// or only trailing failed attempts (`failed(k)` for stored index `k`).
fn removals_allowed(edit: &Edit, old_len: usize, failed: impl FnMut(usize) -> bool) -> bool {
    edit.removed.is_empty() || check_removals(edit, old_len, failed).is_ok()
}

/// Whether to match the stored copy by value and diff again before
/// calling anything a drop: only for a cached copy of the whole session
/// whose diff removes what may not be dropped (never per turn).
fn compare_by_value(from_cache: bool, view: &View, removals_allowed: bool) -> bool {
    from_cache && view.offset == 0 && !removals_allowed
}

/// Refuses a save that drops stored messages without `replace`: those
/// before a `loadContext` array's start, or any that are not trailing
/// failed attempts.
fn refuse_drops(
    replace: bool,
    view: &View,
    edit: &Edit,
    old_len: usize,
    failed: impl FnMut(usize) -> bool,
) -> Result<(), StoreError> {
    if replace {
        return Ok(());
    }
    if view.offset > 0 {
        return Err(refused(DropRefusal::BeforeContext {
            offset: view.offset,
        }));
    }
    check_removals(edit, old_len, failed).map_err(|first| {
        refused(DropRefusal::NotFailedAttempts {
            count: edit.removed.len(),
            first,
        })
    })
}

/// The same messages: nothing is written and the revision stays (a save
/// after every event must not make another tab's next save a conflict).
fn unchanged(edit: &Edit, view: &View) -> bool {
    edit.is_empty() && view.offset == 0
}

/// A transaction read the session record: at revision `stored` with the
/// save's fields `found`, or none. `seen` is the revision the save is
/// from; `first`, on a second attempt after a lost connection, the fields
/// its first attempt wrote over the record, if it got as far as
/// committing. `Landed::No`: write (or, for an unchanged save, nothing to
/// write); `Landed::Yes`: the first attempt committed this very save (the
/// record holds what it wrote, [`save_landed`]). A gone session or another
/// revision fails (another page's save of the next revision too), and the
/// store then keeps only what the save was from (`stale_seen`).
fn after_read(
    id: &str,
    seen: f64,
    stored: Option<(f64, Option<&SaveFields>)>,
    first: Option<&SaveFields>,
) -> Result<Landed, StoreError> {
    let Some((stored, found)) = stored else {
        return Err(StoreError::SessionNotFound {
            action: ACTION,
            id: id.to_owned(),
        });
    };
    match save_landed(seen, stored, found, first) {
        Landed::Other => Err(conflict(id, stored, seen)),
        landed => Ok(landed),
    }
}

/// What the store keeps of a save's base (at `revision`) that
/// [`after_read`] refused with `error`, so that the same save tried again
/// is refused again until the session is loaded again: a session gone is
/// deleted for that copy, whatever is created under its id later.
fn stale_seen(error: &StoreError, revision: f64) -> Seen {
    match error {
        StoreError::SessionNotFound { .. } => Seen::Deleted,
        _ => Seen::Revision(revision),
    }
}

/// The `TypeError` text for a message that is not plain data: `subject`
/// names it (`messages[3]`, `SessionStore.fork: options.summary`), `path`
/// the bad part inside it (`.details.f`), `what` what it is.
pub fn unstorable(subject: &str, path: &str, what: &str) -> String {
    format!("{subject}{path} {what}: a message must be plain data to be stored")
}

/// What the save being planned holds, besides the edit.
#[derive(Clone, Debug, PartialEq)]
struct Saving {
    /// The new array's length.
    pub len: usize,
    /// Where its LLM context starts (its last `compactionSummary`).
    pub last_summary: Option<usize>,
    /// Whether the edit inserts a `compactionSummary`.
    pub inserts_summary: bool,
    /// The context's estimated tokens, and the list preview.
    pub context_tokens: f64,
    pub preview: String,
    /// The stored record's `lastModified` as this store last saw it, and now.
    pub last_modified: Option<f64>,
    pub now: f64,
}

/// What a save writes in its one transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct Writes {
    /// The message records to put and delete (`packing::plan`).
    pub layout: Layout,
    /// Whether every record before the copy's first is deleted (a
    /// `loadContext` array saved with `replace`).
    pub delete_before: bool,
    /// The fields written over the session record.
    pub fields: SaveFields,
    pub durability: Durability,
    /// Old message indices whose records the save puts under their key or
    /// deletes: what a repair puts back when the commit fails.
    pub touched: Vec<usize>,
    /// Records put and deleted, for the store's stats.
    pub puts: usize,
    pub deletes: usize,
}

/// Plans the writes of a save of `edit` from `view` (of `old_len`
/// messages, `old_keys` record keys known).
fn plan_writes(view: &View, old_len: usize, old_keys: usize, edit: &Edit, s: Saving) -> Writes {
    let layout = packing::plan(
        old_len,
        &view.packs,
        view.lead > 0,
        edit,
        s.len,
        s.last_summary,
    );
    let mut touched: Vec<usize> = layout.deletes.clone();
    for &(a, b) in &layout.delete_ranges {
        touched.extend(a..=b);
    }
    touched.extend(layout.pack_puts.iter().filter_map(|p| match p.key {
        KeyOf::Old(k) => Some(k),
        _ => None,
    }));
    let fields = SaveFields {
        last_modified: saved_last_modified(s.last_modified, s.now),
        message_count: s.len as u32,
        context_tokens: s.context_tokens,
        preview: s.preview,
        revision: view.revision + 1.0,
        context_slot: s
            .last_summary
            .map_or(0, |j| packing::slot_of(&layout.packs, j)) as u32,
    };
    Writes {
        puts: layout.pack_puts.len() + layout.singles.len(),
        deletes: layout.deletes.len() + layout.delete_ranges.len(),
        delete_before: view.offset > 0 && old_keys > 0,
        durability: durability(WriteKind::Save {
            summary: s.inserts_summary,
        }),
        touched,
        fields,
        layout,
    }
}

/// Where a pack record's key comes from; the binding makes the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PackKey {
    /// Old message `k`'s record key.
    Old(usize),
    /// The new key of inserted message `j`.
    Inserted(usize),
    /// A new position between the key of new message `before` (the first
    /// part of a split pack, keyed just before) and that of `after` (none:
    /// the pack ends the session).
    Between { before: usize, after: Option<usize> },
}

/// The key of each pack [`plan_writes`] puts, in order (`layout.pack_puts`)
/// for a new array of `new_len` messages.
fn pack_keys(layout: &Layout, new_len: usize) -> Vec<PackKey> {
    let key = |p: &packing::PackPut| match p.key {
        KeyOf::Old(k) => PackKey::Old(k),
        KeyOf::Inserted(j) => PackKey::Inserted(j),
        KeyOf::Split => PackKey::Between {
            before: p.start.saturating_sub(1),
            after: Some(p.start + p.len).filter(|&end| end < new_len),
        },
    };
    layout.pack_puts.iter().map(key).collect()
}

/// The fields again when the stored record's `lastModified` (read inside
/// the transaction) is later than the one planned with: it never goes
/// back. `None`: the planned fields stand.
fn refreshed(
    fields: &SaveFields,
    stored_last_modified: Option<f64>,
    now: f64,
) -> Option<SaveFields> {
    let last_modified = saved_last_modified(stored_last_modified, now);
    (last_modified != fields.last_modified).then(|| SaveFields {
        last_modified,
        ..fields.clone()
    })
}

/// A put of the record holding new messages from `from` on failed with
/// the browser's `dom_name` and `message`: a message the browser cannot
/// clone is a `TypeError` naming it (the first inserted one from `from`
/// on: an old one was stored before). `None`: a storage error.
fn put_failure(dom_name: &str, message: &str, inserted: &[usize], from: usize) -> Option<String> {
    (dom_name == "DataCloneError").then(|| {
        let at = inserted
            .iter()
            .copied()
            .find(|&j| j >= from)
            .unwrap_or(from);
        format!("messages[{at}] cannot be stored: {message}")
    })
}

/// The same for a session written whole (`fork`, `importJsonl`): record
/// `index` of `action`.
pub fn whole_put_failure(
    action: &str,
    index: usize,
    dom_name: &str,
    message: &str,
) -> Option<String> {
    (dom_name == "DataCloneError")
        .then(|| format!("{action}: message {index} cannot be stored: {message}"))
}

/// The session record's `contextTokens` for `len` messages whose LLM
/// context starts at `last_summary`, counted as the compactor counts it
/// with pi's estimate: the last fresh usage plus estimates after it,
/// walking back from the end (usage older than the summary is stale and
/// ignored); while no fresh usage follows the summary, the pinned messages
/// re-sent after it count too; what clearing markers after the summary
/// freed comes off until usage is reported after them
/// (`tokens::context_tokens::marker_counts`). `marks` are the array's pinned
/// messages and markers. `read(from, to)` gives the facts of messages
/// `[from, to)`; the walk asks for them in chunks of 4, 8, 16, then 32 from
/// the end (a turn's save finds the usage among the last few), then one by
/// one for the marks that count.
pub fn context_tokens<E>(
    len: usize,
    last_summary: Option<usize>,
    marks: &Marks,
    mut read: impl FnMut(usize, usize) -> Result<Vec<MessageFacts>, E>,
) -> Result<f64, E> {
    let stale = match last_summary {
        Some(s) => Stale::after(one(&mut read, s)?.as_ref().map(|f| (s, f))),
        None => Stale::Nothing,
    };
    let facts = read_back(len, last_summary.unwrap_or(0), 4, 32, &mut read);
    let c = estimate_from_end(facts, stale)?;
    let mut tokens = c.tokens;
    if c.last_usage_index.is_none() {
        for &i in marks.resent(last_summary) {
            tokens += one(&mut read, i)?.map_or(0.0, |f| f64::from(f.tokens));
        }
    }
    let markers = marks.markers_after(last_summary);
    if !markers.is_empty() {
        let mut freed = 0u64;
        for &m in markers {
            if let Some(f) = one(&mut read, m)? {
                if marker_counts(m, &f, stale, c.last_usage_index) {
                    freed = freed.saturating_add(f.tokens_freed());
                }
            }
        }
        tokens = less_freed(tokens, freed);
    }
    Ok(tokens)
}

/// The facts of message `i`, through `read`.
fn one<E>(
    read: &mut impl FnMut(usize, usize) -> Result<Vec<MessageFacts>, E>,
    i: usize,
) -> Result<Option<MessageFacts>, E> {
    Ok(read(i, i + 1)?.first().copied())
}

/// The conflict of a save from revision `seen` finding `stored`.
fn conflict(id: &str, stored: f64, seen: f64) -> StoreError {
    StoreError::Conflict {
        action: ACTION,
        id: id.to_owned(),
        stored,
        seen,
    }
}

fn refused(why: DropRefusal) -> StoreError {
    StoreError::RefusedDrop {
        action: ACTION,
        why,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
