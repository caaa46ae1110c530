//! A save as a state machine. The binding feeds an [`Event`] (the call,
//! the stored records, the session record a transaction read, the commit's
//! outcome) and carries out the [`Step`] it gets back (read the records,
//! read the session record, queue the planned writes, commit, remember,
//! put back, fail). What it does synchronously on the caller's values (the
//! identity scan, reading a message's facts, the storable check) goes
//! through the [`SaveHost`] it implements. Every branch is decided here, in
//! the order of the module's list of decisions.

use super::{
    after_read, check_outdated, compare_by_value, context_tokens, pack_keys, plan_writes,
    put_failure, refreshed, refuse_drops, removals_allowed, stale_seen, unchanged, unstorable,
    use_cached, PackKey, Saving, Writes, ACTION,
};
use crate::conversation::edit::{edit, IdentityFacts};
use crate::error::InputError;
use crate::message::role::Role;
use crate::storage::connection::Landed;
use crate::storage::error::StoreError;
use crate::storage::history::{on_save, OnSave};
use crate::storage::known::{Seen, View};
use crate::storage::marks::{pinned_slots, Marks};
use crate::storage::meta::{Contents, SaveFields, PREVIEW_MAX};
use crate::storage::repair::worth_repairing;
use crate::storage::save_plan::{
    inserted_positions, is_failed_attempt, last_summary_after, positions_between, preview, Edit,
    LastSummary, Position,
};
use crate::tokens::estimate::{MessageFacts, RawFacts};
use std::rc::Rc;

/// What the binding reads of an array of messages being written: a save's
/// new array, a forked or imported session.
pub trait Messages {
    fn count(&self) -> usize;
    /// The facts of messages `[from, to)`.
    fn facts(&mut self, from: usize, to: usize) -> Result<Vec<RawFacts>, InputError>;
    fn role(&mut self, j: usize) -> Result<Role, InputError>;
    /// The last `compactionSummary`.
    fn last_summary(&mut self) -> Option<usize>;
    /// The words for the pinned messages and clearing markers among
    /// messages `[from, to)` (`Marks::from_words`).
    fn mark_words(&mut self, from: usize, to: usize) -> Vec<u32>;
    /// The text of the first user message among the first `PREVIEW_SCAN`,
    /// as UTF-16 units.
    fn first_user_text(&mut self) -> Option<Vec<u16>>;
}

/// The list preview of `messages`: their first user text, whitespace
/// collapsed, cut to `max` UTF-16 units.
pub fn preview_of(messages: &mut impl Messages, max: usize) -> String {
    let text = messages.first_user_text().unwrap_or_default();
    String::from_utf16_lossy(&preview(&text, max))
}

/// What a session written whole holds about `messages` (`fork`,
/// `importJsonl`).
pub fn contents(messages: &mut impl Messages) -> Result<Contents, InputError> {
    let len = messages.count();
    let last = messages.last_summary();
    let marks = Marks::from_words(&messages.mark_words(0, len));
    Ok(Contents {
        message_count: len,
        last_summary: last,
        context_tokens: tokens(messages, last, &marks)?,
        preview: preview_of(messages, PREVIEW_MAX),
        pinned: marks.resent(last).to_vec(),
    })
}

/// The context's estimated tokens (`save_flow::context_tokens`), from the
/// facts the `Compactor` keeps with pi's estimate: a usage that cannot be
/// true (the zeros pi-ai leaves when a provider reports none) is estimated,
/// not taken for an empty context.
fn tokens(
    messages: &mut impl Messages,
    last: Option<usize>,
    marks: &Marks,
) -> Result<f64, InputError> {
    context_tokens(messages.count(), last, marks, |from, to| {
        let raw = messages.facts(from, to)?;
        Ok(raw.iter().map(MessageFacts::compactor_pi).collect())
    })
}

/// What the binding reads of the array being saved and of the base (the
/// messages it is diffed against) for the flow.
pub trait SaveHost {
    type Messages: Messages;
    /// The array being saved.
    fn messages(&mut self) -> &mut Self::Messages;
    /// The identity scan of the base's messages against the new array
    /// (`IdentityFacts::from_words`).
    fn identity_words(&mut self) -> Vec<i32>;
    /// Replaces the base's messages that equal the new array's, in order,
    /// by the new array's objects.
    fn adopt_equal(&mut self);
    /// The facts of base message `k`; `None` when it cannot be read.
    fn old_facts(&mut self, k: usize) -> Option<RawFacts>;
    /// The first of new messages `indices` that cannot be stored: its
    /// index, the path of the bad part inside it and what that is.
    fn unstorable(&mut self, indices: &[usize]) -> Option<(usize, String, String)>;
    /// The position part of base message `k`'s record key.
    fn old_position(&mut self, k: usize) -> Position;
}

/// What a save is diffed against: this store's copy of the session, or the
/// stored records.
#[derive(Clone, Debug, PartialEq)]
pub struct Base {
    pub view: View,
    /// Its messages, and the record keys known of them.
    pub len: usize,
    pub keys: usize,
    /// The session record's `lastModified` as read or written then.
    pub last_modified: Option<f64>,
}

/// What the binding tells the flow.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The call: this store's copy of the session, if any, and whether the
    /// new array starts with the copy's first object.
    Start {
        cached: Option<Base>,
        first_same: bool,
    },
    /// The stored records were read as the base; `seen` is what this
    /// store's callers last saw when its copy was dropped as stale
    /// (`known::Sessions::seen`).
    Stored {
        base: Base,
        seen: Option<Seen>,
    },
    /// A transaction read the session record: its revision and
    /// `lastModified`, or no record (`revision: None`); the fields a save
    /// writes, where it holds them all (`SaveFields::read`).
    Record {
        revision: Option<f64>,
        last_modified: Option<f64>,
        fields: Option<SaveFields>,
    },
    Committed,
    /// The commit failed with the DOM error `dom_name`.
    CommitFailed {
        dom_name: String,
    },
}

/// Where a record's key comes from, for the binding to make it.
#[derive(Clone, Debug, PartialEq)]
pub enum NewKey {
    /// Base message `k`'s key.
    Old(usize),
    /// The `i`-th key of [`WritePlan::added`].
    Added(usize),
    /// A new key at this position.
    Fresh(Position),
}

/// What a save writes, with where each key comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct WritePlan {
    pub writes: Writes,
    /// The positions of the inserted messages' keys, in order.
    pub added: Vec<Position>,
    /// The new array's keys as runs (`diff::KeyRun::words`, flattened).
    pub key_runs: Vec<u32>,
    /// The key of each pack put (`writes.layout.pack_puts`): each message
    /// of the pack takes it.
    pub pack_keys: Vec<NewKey>,
    /// The new index where the context starts (its key is the record's
    /// `contextKey`), and the pinned messages before it with their slots.
    pub context: Option<usize>,
    pub pinned: Vec<(usize, u32)>,
    /// What the save does to the history index (`core::storage::history`),
    /// in places of the stored session; the array saved starts at
    /// `offset`.
    pub history: OnSave,
    pub offset: u32,
}

/// Why a save fails.
#[derive(Clone, Debug, PartialEq)]
pub enum SaveFailure {
    /// A store error; `stale`: what is stored is not this store's copy,
    /// which it drops, keeping what its callers saw
    /// (`known::Sessions::stale`).
    Store {
        error: StoreError,
        stale: Option<Seen>,
    },
    /// A message that cannot be stored or read (a `TypeError`).
    Type(String),
    /// The identity scan's facts do not add up (an `Error`).
    Internal(String),
}

impl From<InputError> for SaveFailure {
    fn from(e: InputError) -> Self {
        SaveFailure::Type(e.to_string())
    }
}

/// What the binding does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Read the stored records as the base, and feed [`Event::Stored`].
    ReadStored,
    /// Nothing to write: read the session record in a read transaction and
    /// feed [`Event::Record`].
    ReadRecord,
    /// Open a write transaction as durable as `writes.durability`; read the
    /// session record, queue the new one (the base's with the fields over
    /// it) and the planned writes behind it; feed [`Event::Record`].
    Write(Box<WritePlan>),
    /// Nothing was written (a save of the same messages): remember the new
    /// array with the base's view and the record read.
    Unchanged,
    /// The first attempt committed this very save (the stored record holds
    /// what it wrote): drop the transaction, count its writes, remember the
    /// new array with `view`.
    Landed(View),
    /// Put the stored record with the fields over it (`Some`: fields
    /// refreshed for a later `lastModified`) where it differs from the
    /// queued one, commit, and feed [`Event::Committed`] or
    /// [`Event::CommitFailed`]. Keep [`SaveFlow::writing`] for a second
    /// attempt before committing.
    Commit(Option<SaveFields>),
    /// Count the writes, remember the new array with `view` and the record
    /// written.
    Saved(View),
    /// The commit failed: put back the base's records at these old indices
    /// (`repair`), then fail with the commit's error.
    Repair(Vec<usize>),
    /// The commit failed: fail with its error.
    CommitError,
    Fail(SaveFailure),
}

/// One attempt at a save.
#[derive(Debug)]
pub struct SaveFlow {
    id: String,
    replace: bool,
    /// On the second attempt, after a lost connection: the fields the
    /// first one wrote over the session record, if it got to its commit.
    first: Option<SaveFields>,
    /// The fields this attempt writes over the session record, once it
    /// commits ([`Step::Commit`]).
    writing: Option<SaveFields>,
    new_len: usize,
    now: f64,
    base: Option<Base>,
    edit: Edit,
    /// The view the save leaves, once planned.
    saved: Option<View>,
    fields: Option<SaveFields>,
    touched: Vec<usize>,
}

impl SaveFlow {
    /// A save of `new_len` messages to session `id` at time `now`. `first`:
    /// on a second attempt after a lost connection, what the first one
    /// wrote over the session record if it got to its commit
    /// ([`SaveFlow::writing`]), else `None`.
    pub fn new(
        id: &str,
        new_len: usize,
        replace: bool,
        first: Option<SaveFields>,
        now: f64,
    ) -> SaveFlow {
        SaveFlow {
            id: id.to_owned(),
            replace,
            first,
            writing: None,
            new_len,
            now,
            base: None,
            edit: Edit::default(),
            saved: None,
            fields: None,
            touched: Vec::new(),
        }
    }

    /// The edit the save writes (the inserted new indices, the removed old
    /// ones).
    pub fn edit(&self) -> &Edit {
        &self.edit
    }

    /// The fields this attempt writes over the session record, from its
    /// [`Step::Commit`] on: what a second attempt, should the connection be
    /// lost, looks for in the stored record (`SaveFlow::new`'s `first`).
    pub fn writing(&self) -> Option<&SaveFields> {
        self.writing.as_ref()
    }

    /// A put of the record holding new messages from `from` on failed with
    /// the browser's `dom_name` and `message`: the `TypeError` text naming
    /// a message the browser cannot clone, or `None` (a storage error).
    pub fn put_failure(&self, dom_name: &str, message: &str, from: usize) -> Option<String> {
        put_failure(dom_name, message, &self.edit.inserted, from)
    }

    pub fn step(&mut self, host: &mut impl SaveHost, event: Event) -> Step {
        match self.advance(host, event) {
            Ok(step) => step,
            Err(failure) => Step::Fail(failure),
        }
    }

    fn advance(&mut self, host: &mut impl SaveHost, event: Event) -> Result<Step, SaveFailure> {
        match event {
            Event::Start { cached, first_same } => match cached {
                Some(base) if use_cached(base.view.offset, base.len, first_same) => {
                    self.base = Some(base);
                    self.diff(host, true)
                }
                _ => Ok(Step::ReadStored),
            },
            Event::Stored { mut base, seen } => {
                // Refused: what the callers saw stays as it was.
                let stale = |error| SaveFailure::Store { error, stale: seen };
                check_outdated(&self.id, base.view.revision, seen).map_err(stale)?;
                // The whole session, whatever its record's count says.
                base.view.offset = 0;
                self.base = Some(base);
                host.adopt_equal();
                self.diff(host, false)
            }
            Event::Record {
                revision,
                last_modified,
                fields,
            } => {
                let base = self.base()?;
                // A save that writes nothing cannot have landed before.
                let first = self.first.as_ref().filter(|_| self.saved.is_some());
                let seen = base.view.revision;
                let stored = revision.map(|r| (r, fields.as_ref()));
                let landed = after_read(&self.id, seen, stored, first);
                let landed = landed.map_err(|e| stale(e, seen))?;
                let Some(saved) = self.saved.clone() else {
                    return Ok(Step::Unchanged);
                };
                if landed == Landed::Yes {
                    // At the revision the first attempt wrote.
                    let revision = revision.unwrap_or(saved.revision);
                    return Ok(Step::Landed(View { revision, ..saved }));
                }
                let planned = self.fields.as_ref().ok_or_else(out_of_order)?;
                let refreshed = refreshed(planned, last_modified, self.now);
                self.writing = Some(refreshed.as_ref().unwrap_or(planned).clone());
                Ok(Step::Commit(refreshed))
            }
            Event::Committed => Ok(Step::Saved(self.saved.clone().ok_or_else(out_of_order)?)),
            Event::CommitFailed { dom_name } => {
                let whole = self.base()?.view.whole();
                Ok(match worth_repairing(&dom_name) && whole {
                    true => Step::Repair(std::mem::take(&mut self.touched)),
                    false => Step::CommitError,
                })
            }
        }
    }

    fn base(&self) -> Result<&Base, SaveFailure> {
        self.base.as_ref().ok_or_else(out_of_order)
    }

    /// The diff against the base, the checks, then the plan.
    fn diff(&mut self, host: &mut impl SaveHost, from_cache: bool) -> Result<Step, SaveFailure> {
        let base = self.base.clone().ok_or_else(out_of_order)?;
        let old_len = base.len;
        let mut edit = self.classify(host, old_len)?;
        let allowed = removals_allowed(&edit, old_len, |k| failed_attempt(host, k));
        if compare_by_value(from_cache, &base.view, allowed) {
            host.adopt_equal();
            edit = self.classify(host, old_len)?;
        }
        refuse_drops(self.replace, &base.view, &edit, old_len, |k| {
            failed_attempt(host, k)
        })
        .map_err(|error| SaveFailure::Store { error, stale: None })?;
        if unchanged(&edit, &base.view) {
            self.edit = edit;
            return Ok(Step::ReadRecord);
        }
        // Bad input is refused before anything is written.
        if let Some((index, path, what)) = host.unstorable(&edit.inserted) {
            let subject = format!("messages[{index}]");
            return Err(SaveFailure::Type(unstorable(&subject, &path, &what)));
        }
        let plan = self.plan(host, &base, edit)?;
        Ok(Step::Write(Box::new(plan)))
    }

    fn classify(&self, host: &mut impl SaveHost, old_len: usize) -> Result<Edit, SaveFailure> {
        let words = host.identity_words();
        edit(&IdentityFacts::from_words(&words, old_len, self.new_len))
            .map_err(|e| SaveFailure::Internal(format!("{ACTION}: {e}")))
    }

    /// Where the context starts now, its pinned messages and markers (only
    /// the inserted messages are looked at), its size, and the writes.
    fn plan(
        &mut self,
        host: &mut impl SaveHost,
        base: &Base,
        edit: Edit,
    ) -> Result<WritePlan, SaveFailure> {
        let new = host.messages();
        let mut found = Vec::new();
        for run in edit.inserted.chunk_by(|a, b| a + 1 == *b) {
            found.extend(new.mark_words(run[0], run[run.len() - 1] + 1));
        }
        let marks = base.view.marks.after_edit(&edit, Marks::from_words(&found));
        let mut summaries = Vec::new();
        for &j in &edit.inserted {
            if new.role(j)? == Role::CompactionSummary {
                summaries.push(j);
            }
        }
        let last = match last_summary_after(&edit, base.view.last_summary, &summaries) {
            LastSummary::Known(last) => last,
            LastSummary::Removed => new.last_summary(),
        };
        let saving = Saving {
            len: self.new_len,
            last_summary: last,
            inserts_summary: !summaries.is_empty(),
            context_tokens: tokens(new, last, &marks)?,
            preview: preview_of(new, PREVIEW_MAX),
            last_modified: base.last_modified,
            now: self.now,
        };
        let writes = plan_writes(&base.view, base.len, base.keys, &edit, saving);
        // Places in the stored session: the array starts at `offset`.
        let at = |i: usize| i.saturating_add(base.view.offset as usize);
        let first_change = (edit.removed.first().into_iter())
            .chain(edit.inserted.first())
            .min()
            .copied();
        let history = on_save(
            base.view.last_summary.map(at),
            last.map(at),
            first_change.map(at),
            writes.delete_before,
        );
        let layout = &writes.layout;
        let added = inserted_positions(&edit, base.len, |k| host.old_position(k));
        let key_runs = super::super::diff::key_runs(&edit, base.len)
            .into_iter()
            .flat_map(|r| r.words())
            .collect();
        let pack_keys = keys_of_packs(host, &edit, &added, layout, self.new_len);
        let pinned = pinned_slots(&marks, last, &layout.packs);
        self.saved = Some(View {
            revision: base.view.revision + 1.0,
            packs: Rc::new(layout.packs.clone()),
            lead: 0,
            last_summary: last,
            offset: 0,
            marks: Rc::new(marks),
        });
        self.fields = Some(writes.fields.clone());
        self.touched = writes.touched.clone();
        self.edit = edit;
        Ok(WritePlan {
            writes,
            added,
            key_runs,
            pack_keys,
            context: last,
            pinned,
            history,
            offset: base.view.offset,
        })
    }
}

/// The key of each pack put, in order: a split's second part is keyed
/// between its first part (whose key may be one an earlier pack put gave
/// it) and the next record.
fn keys_of_packs(
    host: &mut impl SaveHost,
    edit: &Edit,
    added: &[Position],
    layout: &crate::storage::packing::Layout,
    new_len: usize,
) -> Vec<NewKey> {
    let mut keys: Vec<(usize, usize, NewKey)> = Vec::with_capacity(layout.pack_puts.len());
    let sources = pack_keys(layout, new_len);
    for (p, source) in layout.pack_puts.iter().zip(sources) {
        let key = match source {
            PackKey::Old(k) => NewKey::Old(k),
            PackKey::Inserted(j) => NewKey::Added(added_index(edit, j)),
            PackKey::Between { before, after } => {
                let mut position = |j: usize| {
                    let given = keys.iter().rev().find(|(s, l, _)| (*s..s + l).contains(&j));
                    match given.map(|(_, _, key)| key) {
                        Some(NewKey::Old(k)) => host.old_position(*k),
                        Some(NewKey::Added(i)) => added[*i].clone(),
                        Some(NewKey::Fresh(p)) => p.clone(),
                        None => match edit.old_index(j) {
                            Some(k) => host.old_position(k),
                            None => added[added_index(edit, j)].clone(),
                        },
                    }
                };
                let before = position(before);
                let after = after.map(position);
                let mut fresh = positions_between(Some(&before), after.as_deref(), 1);
                NewKey::Fresh(fresh.remove(0))
            }
        };
        keys.push((p.start, p.len, key));
    }
    keys.into_iter().map(|(_, _, key)| key).collect()
}

/// Whether base message `k` is a failed attempt (an unreadable one is not).
fn failed_attempt(host: &mut impl SaveHost, k: usize) -> bool {
    host.old_facts(k).is_some_and(|f| is_failed_attempt(&f))
}

/// The place of inserted new index `j` among the inserted ones.
fn added_index(edit: &Edit, j: usize) -> usize {
    edit.inserted.partition_point(|&i| i < j)
}

/// A failure that finds the base (at `revision`) stale.
fn stale(error: StoreError, revision: f64) -> SaveFailure {
    let seen = stale_seen(&error, revision);
    SaveFailure::Store {
        error,
        stale: Some(seen),
    }
}

/// An event fed out of order: the binding's bug, never the caller's.
fn out_of_order() -> SaveFailure {
    SaveFailure::Internal(format!("{ACTION}: save flow event out of order"))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
