//! `save`: writes what changed since this store last loaded or saved the
//! session, in one transaction, or nothing. Every decision is the core's
//! (`core::storage::save_flow::SaveFlow`): this reads the caller's array and
//! the records for it, awaits IndexedDB and carries out each step.

use super::changes::{announce, Change};
use super::connection::{database, retrying};
use super::load::{last_summary, read};
use super::locks::exclusive;
use super::meta::save_fields;
use super::records::{
    adopt_equal, assemble_keys, first_unclonable, first_user_text, get, mark_words, merge_meta,
    message_key, pending, position_of, public_meta, range_before, store_error, text, thrown,
    unstorable, Tx,
};
use super::schema::{MESSAGES, SESSIONS};
use super::{field, string_arg, Inner, Known};
use crate::js::errors::input_error;
use crate::js::message_access::{messages_array, role_at, JsArray};
use crate::js::message_facts::gather;
use crate::js::values::Opt;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::message::role::Role;
use agent_compaction_core::storage::arguments::save_options;
use agent_compaction_core::storage::history::retry_without_index;
use agent_compaction_core::storage::meta::{SaveFields, PREVIEW_SCAN};
use agent_compaction_core::storage::save_flow::{
    Base, Event, Messages, NewKey, SaveFailure, SaveFlow, SaveHost, Step, WritePlan, ACTION,
};
use agent_compaction_core::storage::save_plan::Position;
use agent_compaction_core::tokens::estimate::RawFacts;
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::IdbKeyRange;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    /// The identity scan the compactor's syncs use too (known.js).
    #[wasm_bindgen(js_name = identityFacts)]
    fn identity_facts(known: &Array, messages: &Array) -> js_sys::Int32Array;
}

pub async fn save(
    inner: Rc<Inner>,
    id: JsValue,
    messages: JsValue,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    let id = string_arg(&id, "sessionId")?;
    let array = messages_array(&messages).map_err(input_error)?;
    let options = Opt(options);
    let replace = save_options(&options, |key| field(&options, key)).map_err(thrown)?;
    // The session's lock is held from the first read to the commit: a
    // save in another tab cannot slip in between (where Web Locks exist;
    // without them the revision read in the transaction refuses it).
    let locked = inner.clone();
    let lock_id = id.clone();
    let changed = Rc::new(std::cell::Cell::new(true));
    let written = changed.clone();
    // Reopened and run again when the browser closes the connection under
    // it, still holding the lock: a second attempt finds the record the
    // first one committed, if it did (core::storage::connection). `wrote`:
    // what the last attempt to commit wrote over the session record.
    let wrote: Wrote = Default::default();
    let mut array = Some(array);
    let body = retrying(inner.clone(), ACTION, true, move |retry| {
        let (inner, id, written) = (locked.clone(), id.clone(), written.clone());
        // What the first attempt wrote, for the second to look for.
        let first = wrote.take().filter(|_| retry);
        let wrote = wrote.clone();
        // The array as read at the call (read again for a second attempt).
        let array = array.take().map_or_else(|| messages_array(&messages), Ok);
        let again = messages.clone();
        Box::pin(async move {
            let array = array.map_err(input_error)?;
            let filled = std::cell::Cell::new(false);
            let saving = Saving {
                replace,
                index: true,
            };
            let attempt = Attempt {
                first: first.clone(),
                wrote: &wrote,
                filled: &filled,
            };
            match save_locked(&inner, id.clone(), array, saving, &written, attempt).await {
                // The quota refused the save with its history fill: once
                // more without it (core::storage::history).
                Err(e) if retry_without_index(text(&e, "name") == QUOTA, filled.get()) => {
                    let array = messages_array(&again).map_err(input_error)?;
                    let saving = Saving {
                        index: false,
                        ..saving
                    };
                    let attempt = Attempt {
                        first,
                        wrote: &wrote,
                        filled: &filled,
                    };
                    // Still no room: the first refusal is the answer.
                    (save_locked(&inner, id, array, saving, &written, attempt).await).or(Err(e))
                }
                other => other,
            }
        })
    });
    let meta = exclusive(&inner, &lock_id, ACTION, body).await?;
    if changed.get() {
        let revision = get(&meta, "revision").as_f64();
        announce(&inner, Change::Saved, &lock_id, revision, None);
    }
    Ok(meta)
}

/// An array of messages being written, as the core reads it.
pub struct ToStore(pub JsArray);

impl Messages for ToStore {
    fn count(&self) -> usize {
        self.0.len() as usize
    }

    fn facts(&mut self, from: usize, to: usize) -> Result<Vec<RawFacts>, InputError> {
        gather(&self.0, from as u32, to as u32)
    }

    fn role(&mut self, j: usize) -> Result<Role, InputError> {
        role_at(&self.0, j)
    }

    fn last_summary(&mut self) -> Option<usize> {
        last_summary(self.0.as_array())
    }

    fn mark_words(&mut self, from: usize, to: usize) -> Vec<u32> {
        mark_words(self.0.as_array(), from, to)
    }

    fn first_user_text(&mut self) -> Option<Vec<u16>> {
        let text = first_user_text(self.0.as_array(), PREVIEW_SCAN).as_string()?;
        Some(text.encode_utf16().collect())
    }
}

/// The array being saved and the base it is diffed against.
struct Host {
    new: ToStore,
    base: Known,
}

impl SaveHost for Host {
    type Messages = ToStore;

    fn messages(&mut self) -> &mut ToStore {
        &mut self.new
    }

    fn identity_words(&mut self) -> Vec<i32> {
        identity_facts(&self.base.messages, self.new.0.as_array()).to_vec()
    }

    fn adopt_equal(&mut self) {
        self.base.messages = adopt_equal(&self.base.messages, self.new.0.as_array());
    }

    fn old_facts(&mut self, k: usize) -> Option<RawFacts> {
        let old = JsArray::new(&self.base.messages, || FieldPath::argument("messages"));
        let facts = gather(&old.ok()??, k as u32, k as u32 + 1).ok()?;
        facts.first().copied()
    }

    fn unstorable(&mut self, indices: &[usize]) -> Option<(usize, String, String)> {
        let indices: Vec<u32> = indices.iter().map(|&i| i as u32).collect();
        unstorable(self.new.0.as_array(), &indices)
    }

    fn old_position(&mut self, k: usize) -> Position {
        position_of(&self.base.keys.get(k as u32))
    }
}

/// What the flow decides with of a copy.
fn base_of(known: &Known) -> Base {
    Base {
        view: known.view.clone(),
        len: known.messages.length() as usize,
        keys: known.keys.length() as usize,
        last_modified: get(&known.record, "lastModified").as_f64(),
    }
}

/// How a save is made: `replace` as asked; `index`: with the history
/// index's fill.
#[derive(Clone, Copy)]
struct Saving {
    replace: bool,
    index: bool,
}

/// What a save's attempts share: the fields the last one to commit wrote
/// over the session record (`SaveFlow::writing`).
type Wrote = Rc<std::cell::Cell<Option<SaveFields>>>;

/// One attempt: `first`, on the second after a lost connection, what the
/// first one wrote (`SaveFlow::new`); `wrote` is set as it commits;
/// `filled` when its transaction writes a history fill.
struct Attempt<'a> {
    first: Option<SaveFields>,
    wrote: &'a std::cell::Cell<Option<SaveFields>>,
    filled: &'a std::cell::Cell<bool>,
}

/// The name of a write the storage quota refused.
const QUOTA: &str = "QuotaExceededError";

/// One attempt at the save.
async fn save_locked(
    inner: &Rc<Inner>,
    id: String,
    array: JsArray,
    saving: Saving,
    changed: &std::cell::Cell<bool>,
    attempt: Attempt<'_>,
) -> Result<JsValue, JsValue> {
    let Saving { replace, index } = saving;
    let new = array.as_array().clone();
    let now = js_sys::Date::now();
    let mut flow = SaveFlow::new(&id, new.length() as usize, replace, attempt.first, now);
    let cached = inner.known(&id);
    let first_same = (cached.as_ref())
        .is_some_and(|k| k.messages.length() > 0 && new.get(0) == k.messages.get(0));
    let start = Event::Start {
        cached: cached.as_ref().map(base_of),
        first_same,
    };
    let mut host = Host {
        new: ToStore(array),
        base: cached.unwrap_or_default(),
    };
    let mut step = flow.step(&mut host, start);
    if matches!(step, Step::ReadStored) {
        host.base = read(inner, &id, false, ACTION).await?.known;
        let seen = inner.sessions.borrow().seen(&id);
        let base = base_of(&host.base);
        step = flow.step(&mut host, Event::Stored { base, seen });
    }
    match step {
        Step::ReadRecord => unchanged(inner, &id, &mut flow, host, changed).await,
        Step::Write(plan) => {
            let shared = (index, attempt.filled, attempt.wrote);
            write(inner, &id, &mut flow, host, *plan, shared).await
        }
        step => Err(failed(inner, &id, step)),
    }
}

/// The same messages: nothing is written once the stored revision is
/// checked to be the one this save is from.
async fn unchanged(
    inner: &Rc<Inner>,
    id: &str,
    flow: &mut SaveFlow,
    mut host: Host,
    changed: &std::cell::Cell<bool>,
) -> Result<JsValue, JsValue> {
    let tx = Tx::sessions(&database(inner, ACTION).await?, false, ACTION)?;
    let stored = tx.read(tx.store(SESSIONS)?.get(&id.into())).await?;
    tx.done();
    match flow.step(&mut host, record_read(&stored)) {
        Step::Unchanged => {
            changed.set(false);
            let mut base = host.base;
            let new = host.new.0.as_array();
            base.messages = new.slice(0, new.length());
            base.record = stored.clone();
            inner.remember(id, base);
            Ok(public_meta(&stored))
        }
        step => Err(failed(inner, id, step)),
    }
}

/// The session record as the flow reads it.
fn record_read(record: &JsValue) -> Event {
    let found = !record.is_undefined();
    Event::Record {
        revision: found.then(|| get(record, "revision").as_f64().unwrap_or(0.0)),
        last_modified: get(record, "lastModified").as_f64(),
        fields: found
            .then(|| SaveFields::read(|key| Opt(get(record, key))))
            .flatten(),
    }
}

/// One transaction. The session record is read first and the writes are
/// queued behind it at once (a transaction runs its requests in order), so
/// they run while the record comes back; then the flow checks its revision:
/// a stale one aborts the transaction, which undoes every queued write
/// (dropping `tx` aborts it), so nothing is written. The new session record
/// is queued too, made from the one this store saw last, and put again
/// when the stored one turns out to differ (a rename elsewhere).
async fn write(
    inner: &Rc<Inner>,
    id: &str,
    flow: &mut SaveFlow,
    mut host: Host,
    plan: WritePlan,
    (index, filled, wrote): (
        bool,
        &std::cell::Cell<bool>,
        &std::cell::Cell<Option<SaveFields>>,
    ),
) -> Result<JsValue, JsValue> {
    let (base, new) = (&host.base, host.new.0.as_array());
    let (writes, layout) = (&plan.writes, &plan.writes.layout);
    // The keys of new records, and each message's record key (a pack's
    // messages share its key).
    let added: Array = plan.added.iter().map(|p| message_key(id, p)).collect();
    let keys = assemble_keys(&base.keys, &added, &plan.key_runs);
    let mut pack_keys: Vec<JsValue> = Vec::with_capacity(layout.pack_puts.len());
    for (p, source) in layout.pack_puts.iter().zip(&plan.pack_keys) {
        let key = match source {
            NewKey::Old(k) => base.keys.get(*k as u32),
            NewKey::Added(i) => added.get(*i as u32),
            NewKey::Fresh(position) => message_key(id, position).into(),
        };
        keys.fill(&key, p.start as u32, (p.start + p.len) as u32);
        pack_keys.push(key);
    }
    let context_key = plan.context.map_or(JsValue::NULL, |j| keys.get(j as u32));
    let pinned_keys: Array = (plan.pinned.iter())
        .map(|&(j, slot)| Array::of2(&keys.get(j as u32), &slot.into()))
        .collect();
    let fields_js = save_fields(&writes.fields, &context_key, &pinned_keys);

    let db = database(inner, ACTION).await?;
    let tx = Tx::writing(&db, writes.durability, ACTION)?;
    let sessions = tx.store(SESSIONS)?;
    let records = tx.store(MESSAGES)?;
    let fail = |e: JsValue| tx.fail(e);
    let stored = pending(sessions.get(&id.into())).map_err(fail)?;
    let history = super::history::before_save(&tx, id, plan.history).map_err(fail)?;
    // The new session record first, before any message record: where an
    // engine commits part of an aborted transaction (Firefox at its storage
    // limit, see core::storage::repair), it is the later writes that stay.
    let queued = match base.record.is_object() {
        true => merge_meta(&base.record, &fields_js, &JsValue::UNDEFINED),
        false => JsValue::UNDEFINED,
    };
    if !queued.is_undefined() {
        sessions.put(&queued).map_err(fail)?;
    }
    if writes.delete_before {
        records
            .delete(&range_before(id, &base.keys.get(0))?)
            .map_err(fail)?;
    }
    for &k in &layout.deletes {
        records.delete(&base.keys.get(k as u32)).map_err(fail)?;
    }
    for &(a, b) in &layout.delete_ranges {
        let range =
            IdbKeyRange::bound(&base.keys.get(a as u32), &base.keys.get(b as u32)).map_err(fail)?;
        records.delete(&range).map_err(fail)?;
    }
    let put_error = |e: JsValue, from: usize| match flow.put_failure(
        &text(&e, "name"),
        &text(&e, "message"),
        from,
    ) {
        Some(message) => js_sys::TypeError::new(&message).into(),
        None => fail(e),
    };
    for (p, key) in layout.pack_puts.iter().zip(&pack_keys) {
        let pack = new.slice(p.start as u32, (p.start + p.len) as u32);
        records
            .put_with_key(&pack, key)
            .map_err(|e| put_error(e, first_unclonable(new, p.start, p.start + p.len)))?;
    }
    for &j in &layout.singles {
        records
            .put_with_key(&new.get(j as u32), &keys.get(j as u32))
            .map_err(|e| put_error(e, j))?;
    }
    let stored = (stored.await).map_err(|e| unknown(inner, id, fail(e)))?;
    let (puts, deletes) = (writes.puts, writes.deletes);
    let new = new.clone();
    let saved = |view, record: &JsValue| Known {
        view,
        messages: new.slice(0, new.length()),
        keys: keys.clone(),
        record: record.clone(),
    };
    let fields = match flow.step(&mut host, record_read(&stored)) {
        Step::Landed(view) => {
            // The first attempt committed this very save: nothing is
            // written again (dropping `tx` aborts what was queued).
            drop(tx);
            inner.count_writes(puts, deletes);
            inner.remember(id, saved(view, &stored));
            return Ok(public_meta(&stored));
        }
        Step::Commit(fields) => {
            // Should the connection go while this commits, the second
            // attempt looks for these fields in the stored record.
            wrote.set(flow.writing().cloned());
            fields
        }
        step => return Err(failed(inner, id, step)),
    };
    let fields_js = match fields {
        Some(fields) => save_fields(&fields, &context_key, &pinned_keys),
        None => fields_js,
    };
    if let Some(history) = history {
        let meta = history.await.map_err(fail)?;
        let at = (&host.new.0, plan.offset);
        let wrote = super::history::after_save(&tx, id, plan.history, &meta, at, index);
        filled.set(wrote.map_err(fail)?);
    }
    let meta = match merge_meta(&stored, &fields_js, &queued) {
        same if same.is_null() => queued,
        meta => {
            sessions.put(&meta).map_err(fail)?;
            meta
        }
    };
    if let Err(e) = tx.commit().await {
        let dom_name = text(&e, "name");
        // Whatever the abort failed to undo is put back (core::storage::repair).
        if let Step::Repair(touched) = flow.step(&mut host, Event::CommitFailed { dom_name }) {
            super::repair::put_back(inner, &db, id, &host.base, &stored, &touched).await;
        }
        return Err(e);
    }
    match flow.step(&mut host, Event::Committed) {
        Step::Saved(view) => {
            inner.count_writes(puts, deletes);
            inner.remember(id, saved(view, &meta));
            Ok(public_meta(&meta))
        }
        step => Err(failed(inner, id, step)),
    }
}

/// The error of a step that ends the save (`Step::Fail`); after a failure
/// that finds the copy stale this store keeps only what its callers saw.
fn failed(inner: &Inner, id: &str, step: Step) -> JsValue {
    match step {
        Step::Fail(SaveFailure::Store { error, stale }) => {
            if let Some(seen) = stale {
                inner.sessions.borrow_mut().stale(id, seen);
            }
            store_error(error)
        }
        Step::Fail(SaveFailure::Type(message)) => js_sys::TypeError::new(&message).into(),
        Step::Fail(SaveFailure::Internal(message)) => js_sys::Error::new(&message).into(),
        // A step the flow never gives after that event.
        _ => js_sys::Error::new(&format!("{ACTION}: the save stopped midway")).into(),
    }
}

/// A failed save's error, after which what is stored is unknown: this
/// store drops its copy, keeping the revision its callers saw.
fn unknown(inner: &Inner, id: &str, e: JsValue) -> JsValue {
    inner.sessions.borrow_mut().outdated(id, None);
    e
}
