//! `save`: writes what changed since this store last loaded or saved the
//! session, in one transaction, or nothing. A save that inserts a
//! `compactionSummary` commits with strict durability. Every decision is
//! the core's (`core::storage::save_flow`); this reads the caller's array
//! and the records, awaits IndexedDB and writes what the core planned.

use super::changes::{announce, Change};
use super::connection::{database, retrying};
use super::load::{last_summary, read};
use super::locks::exclusive;
use super::meta::save_fields;
use super::records::{
    adopt_equal, assemble_keys, check_storable, first_user_text, get, mark_words, merge_meta,
    message_key, pending, position_of, public_meta, range_before, request, storage_error,
    store_error, Tx,
};
use super::schema::{MESSAGES, SESSIONS};
use super::{options_arg, string_arg, Inner, Known};
use crate::js::errors::type_error;
use crate::js::message_access::{messages_array, role_at, JsArray};
use crate::js::message_facts::gather;
use agent_compaction_core::conversation::edit::{self, IdentityFacts};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::message::role::Role;
use agent_compaction_core::storage::connection::Landed;
use agent_compaction_core::storage::diff::key_runs;
use agent_compaction_core::storage::known::View;
use agent_compaction_core::storage::marks::{pinned_slots, Marks};
use agent_compaction_core::storage::meta::{PREVIEW_MAX, PREVIEW_SCAN};
use agent_compaction_core::storage::save_flow::{self as flow, PackKey};
use agent_compaction_core::storage::save_plan::{
    inserted_positions, is_failed_attempt, last_summary_after, positions_between, preview, Edit,
    LastSummary,
};
use agent_compaction_core::tokens::estimate::MessageFacts;
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::IdbKeyRange;

use agent_compaction_core::storage::save_flow::ACTION;

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
    let array = messages_array(&messages).map_err(type_error)?;
    let options = options_arg(&options, "options")?;
    let replace = get(&options, "replace").is_truthy();
    // The session's lock is held from the first read to the commit: a
    // save in another tab cannot slip in between.
    let locked = inner.clone();
    let lock_id = id.clone();
    let changed = Rc::new(std::cell::Cell::new(true));
    let written = changed.clone();
    // Reopened and run again when the browser closes the connection under
    // it, still holding the lock: a second attempt finds the revision the
    // first one committed, if it did (core::storage::connection).
    let mut array = Some(array);
    let body = retrying(inner.clone(), ACTION, true, move |retry| {
        let (inner, id, written) = (locked.clone(), id.clone(), written.clone());
        // The array as read at the call (read again for a second attempt).
        let array = array.take().map_or_else(|| messages_array(&messages), Ok);
        Box::pin(async move {
            let array = array.map_err(type_error)?;
            save_locked(&inner, id, array, replace, &written, retry).await
        })
    });
    let meta = exclusive(&inner, &lock_id, ACTION, body).await?;
    if changed.get() {
        let revision = get(&meta, "revision").as_f64();
        announce(&inner, Change::Saved, &lock_id, revision, None);
    }
    Ok(meta)
}

/// One attempt at the save; `retry`: the second, after a lost connection.
/// Each decision is the core's (`core::storage::save_flow`, in its order).
async fn save_locked(
    inner: &Rc<Inner>,
    id: String,
    array: JsArray,
    replace: bool,
    changed: &std::cell::Cell<bool>,
    retry: bool,
) -> Result<JsValue, JsValue> {
    let new = array.as_array().clone();

    // What the diff is against: what this store last loaded or saved, or
    // (an array it has never seen) the stored records, matched by value.
    let cached = inner.known(&id).filter(|k| {
        let first_same = k.messages.length() > 0 && new.get(0) == k.messages.get(0);
        flow::use_cached(k.view.offset, k.messages.length() as usize, first_same)
    });
    let from_cache = cached.is_some();
    let mut base = match cached {
        Some(k) => k,
        None => {
            let stored = read(inner, &id, false, ACTION).await?;
            let outdated = inner.sessions.borrow().outdated_revision(&id);
            flow::check_outdated(&id, stored.view.revision, outdated)
                .map_err(|e| forget(inner, &id, store_error(e)))?;
            Known {
                // The whole session, whatever its record's count says.
                view: View {
                    offset: 0,
                    ..stored.view
                },
                messages: adopt_equal(&stored.messages, &new),
                keys: stored.keys,
                record: stored.record,
            }
        }
    };
    let (mut inserted, mut edit) = diff(&base.messages, &new)?;
    let old_len = base.messages.length() as usize;
    let failed = failed_attempts(&base.messages).map_err(type_error)?;
    let allowed = flow::removals_allowed(&edit, old_len, failed);
    if flow::compare_by_value(from_cache, &base.view, allowed) {
        base.messages = adopt_equal(&base.messages, &new);
        (inserted, edit) = diff(&base.messages, &new)?;
    }
    let failed = failed_attempts(&base.messages).map_err(type_error)?;
    flow::refuse_drops(replace, &base.view, &edit, old_len, failed).map_err(store_error)?;

    // The same messages: nothing is written once the stored revision is
    // checked to be the one this save is from.
    if flow::unchanged(&edit, &base.view) {
        changed.set(false);
        let db = database(inner, ACTION).await?;
        let tx = Tx::sessions(&db, false, ACTION)?;
        let sessions = tx.store(SESSIONS, ACTION)?;
        let stored = request(sessions.get(&id.as_str().into()))
            .await
            .map_err(|e| storage_error(ACTION, &e))?;
        tx.done();
        flow::after_read(&id, base.view.revision, revision_of(&stored), false)
            .map_err(|e| forget(inner, &id, store_error(e)))?;
        base.messages = new.slice(0, new.length());
        base.record = stored.clone();
        inner.remember(&id, base);
        return Ok(public_meta(&stored));
    }

    // Bad input is refused before anything is written.
    let problem = check_storable(&new, &inserted);
    if !problem.is_null() {
        let p: Array = problem.unchecked_into();
        // An array index: printed as an integer, without Rust's float formatting.
        let subject = format!("messages[{}]", p.get(0).as_f64().unwrap_or(0.0) as u32);
        let text = |i| p.get(i).as_string().unwrap_or_default();
        return Err(js_sys::TypeError::new(&flow::unstorable(&subject, &text(1), &text(2))).into());
    }

    // Where the context starts now, its pinned messages and markers, and
    // its size. Only the inserted messages are looked at for marks.
    let mut found = Vec::new();
    for run in edit.inserted.chunk_by(|a, b| a + 1 == *b) {
        found.extend(mark_words(&new, run[0], run[run.len() - 1] + 1));
    }
    let marks = base.view.marks.after_edit(&edit, Marks::from_words(&found));
    let mut summaries = Vec::new();
    for &j in &edit.inserted {
        if role_at(&array, j).map_err(type_error)? == Role::CompactionSummary {
            summaries.push(j);
        }
    }
    let last = match last_summary_after(&edit, base.view.last_summary, &summaries) {
        LastSummary::Known(last) => last,
        LastSummary::Removed => last_summary(&new),
    };
    let now = js_sys::Date::now();
    let saving = flow::Saving {
        len: new.length() as usize,
        last_summary: last,
        inserts_summary: !summaries.is_empty(),
        context_tokens: context_tokens(&array, last, &marks).map_err(type_error)?,
        preview: preview_of(&new, PREVIEW_MAX),
        last_modified: get(&base.record, "lastModified").as_f64(),
        now,
    };
    let writes = flow::plan_writes(
        &base.view,
        old_len,
        base.keys.length() as usize,
        &edit,
        saving,
    );
    let layout = &writes.layout;

    // The keys of new records, and each message's record key.
    let positions = inserted_positions(&edit, old_len, |k| position_of(&base.keys.get(k as u32)));
    let added: Array = positions.iter().map(|p| message_key(&id, p)).collect();
    let runs: Vec<u32> = key_runs(&edit, old_len)
        .into_iter()
        .flat_map(|r| r.words())
        .collect();
    let keys = assemble_keys(&base.keys, &added, &runs);
    // Pack keys in order: a split's second part is keyed between its first
    // part (keyed just before) and the next record.
    let mut pack_keys: Vec<JsValue> = Vec::with_capacity(layout.pack_puts.len());
    let sources = flow::pack_keys(layout, new.length() as usize);
    for (p, source) in layout.pack_puts.iter().zip(sources) {
        let position = |j: usize| position_of(&keys.get(j as u32));
        let key = match source {
            PackKey::Old(k) => base.keys.get(k as u32),
            PackKey::Inserted(j) => keys.get(j as u32),
            PackKey::Between { before, after } => {
                let (before, after) = (position(before), after.map(position));
                let position = positions_between(Some(&before), after.as_deref(), 1);
                message_key(&id, &position[0]).into()
            }
        };
        keys.fill(&key, p.start as u32, (p.start + p.len) as u32);
        pack_keys.push(key);
    }
    let context_key = last.map_or(JsValue::NULL, |j| keys.get(j as u32));
    let pinned_keys: Array = pinned_slots(&marks, last, &layout.packs)
        .into_iter()
        .map(|(j, slot)| Array::of2(&keys.get(j as u32), &slot.into()))
        .collect();
    let fields_js = save_fields(&writes.fields, &context_key, &pinned_keys)?;

    // One transaction. The session record is read first and the writes are
    // queued behind it at once (a transaction runs its requests in order),
    // so they run while the record comes back; then its revision is checked:
    // a stale one aborts the transaction, which undoes every queued write
    // (dropping `tx` aborts it), so nothing is written. The new session
    // record is queued too, made from the one this store saw last, and put
    // again when the stored one turns out to differ (a rename elsewhere).
    let db = database(inner, ACTION).await?;
    let tx = Tx::writing(&db, writes.durability, ACTION)?;
    let sessions = tx.store(SESSIONS, ACTION)?;
    let records = tx.store(MESSAGES, ACTION)?;
    let fail = |e: JsValue| storage_error(ACTION, &e);
    let stored = pending(sessions.get(&id.as_str().into())).map_err(fail)?;
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
            .delete(&range_before(&id, &base.keys.get(0))?.into())
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
    for (p, key) in layout.pack_puts.iter().zip(&pack_keys) {
        let pack = new.slice(p.start as u32, (p.start + p.len) as u32);
        records
            .put_with_key(&pack, key)
            .map_err(|e| put_error(e, &edit, p.start))?;
    }
    for &j in &layout.singles {
        records
            .put_with_key(&new.get(j as u32), &keys.get(j as u32))
            .map_err(|e| put_error(e, &edit, j))?;
    }
    let stored = (stored.await).map_err(|e| forget(inner, &id, fail(e)))?;
    let landed = flow::after_read(&id, base.view.revision, revision_of(&stored), retry)
        .map_err(|e| forget(inner, &id, store_error(e)))?;
    let revision = revision_of(&stored).unwrap_or(0.0);
    let view = View {
        revision: revision + 1.0,
        packs: Rc::new(writes.layout.packs.clone()),
        lead: 0,
        last_summary: last,
        offset: 0,
        marks: Rc::new(marks),
    };
    let mut saved = Known {
        view,
        messages: new.slice(0, new.length()),
        keys,
        record: stored.clone(),
    };
    if landed == Landed::Yes {
        // The first attempt committed this very save: nothing is written
        // again (dropping `tx` aborts what was queued).
        drop(tx);
        inner.count_writes(writes.puts, writes.deletes);
        saved.view.revision = revision;
        inner.remember(&id, saved);
        return Ok(public_meta(&stored));
    }
    let fields_js =
        match flow::refreshed(&writes.fields, get(&stored, "lastModified").as_f64(), now) {
            Some(fields) => save_fields(&fields, &context_key, &pinned_keys)?,
            None => fields_js,
        };
    let meta = match merge_meta(&stored, &fields_js, &queued) {
        same if same.is_null() => queued,
        meta => {
            sessions.put(&meta).map_err(fail)?;
            meta
        }
    };
    if let Err(e) = tx.commit(ACTION).await {
        // Whatever the abort failed to undo is put back (core::storage::repair).
        if super::repair::after(&e) {
            super::repair::put_back(inner, &db, &id, &base, &stored, &writes.touched).await;
        }
        return Err(e);
    }
    inner.count_writes(writes.puts, writes.deletes);
    saved.record = meta.clone();
    inner.remember(&id, saved);
    Ok(public_meta(&meta))
}

/// The revision of a session record as read (`None`: there is none).
fn revision_of(record: &JsValue) -> Option<f64> {
    (!record.is_undefined()).then(|| get(record, "revision").as_f64().unwrap_or(0.0))
}

/// A failed save's error, after which this store forgets its copy.
fn forget(inner: &Inner, id: &str, e: JsValue) -> JsValue {
    inner.forget(id);
    e
}

/// The list preview of `messages`: their first user text (among the first
/// 64 messages), whitespace collapsed, cut to `max` UTF-16 units.
pub fn preview_of(messages: &Array, max: usize) -> String {
    match first_user_text(messages, PREVIEW_SCAN).as_string() {
        Some(text) => {
            let units: Vec<u16> = text.encode_utf16().collect();
            String::from_utf16_lossy(&preview(&units, max))
        }
        None => String::new(),
    }
}

/// A failed put: a message the browser cannot clone is a `TypeError`
/// naming it (`core::storage::save_flow::put_failure`).
fn put_error(e: JsValue, edit: &Edit, from: usize) -> JsValue {
    let text = |key| get(&e, key).as_string().unwrap_or_default();
    match flow::put_failure(&text("name"), &text("message"), &edit.inserted, from) {
        Some(message) => js_sys::TypeError::new(&message).into(),
        None => storage_error(ACTION, &e),
    }
}

/// The identity diff: the new array's inserted indices, and the edit. The
/// shim scans for which objects are the same (`identityFacts`); the core
/// classifies the edit (`core::conversation::edit`, as for the compactor).
fn diff(known: &Array, new: &Array) -> Result<(Vec<u32>, Edit), JsValue> {
    let words = identity_facts(known, new).to_vec();
    let (m, n) = (known.length() as usize, new.length() as usize);
    let edit = edit::edit(&IdentityFacts::from_words(&words, m, n))
        .map_err(|e| JsValue::from(js_sys::Error::new(&format!("{ACTION}: {e}"))))?;
    let inserted = edit.inserted.iter().map(|&i| i as u32).collect();
    Ok((inserted, edit))
}

/// Whether stored message `k` of `messages` is a failed attempt (the core
/// asks only about removed ones).
fn failed_attempts(messages: &Array) -> Result<impl Fn(usize) -> bool + '_, InputError> {
    let known = JsArray::new(messages, || FieldPath::argument("messages"))?.ok_or_else(|| {
        InputError::Unreadable {
            path: FieldPath::argument("messages"),
            reason: "the stored array could not be read".into(),
        }
    })?;
    Ok(move |k: usize| {
        gather(&known, k as u32, k as u32 + 1)
            .ok()
            .and_then(|f| f.first().map(is_failed_attempt))
            .unwrap_or(false)
    })
}

/// The LLM context's estimated tokens (`core::storage::save_flow::context_tokens`).
pub fn context_tokens(
    array: &JsArray,
    last: Option<usize>,
    marks: &Marks,
) -> Result<f64, InputError> {
    flow::context_tokens(array.len() as usize, last, marks, |from, to| {
        let raw = gather(array, from as u32, to as u32)?;
        Ok(raw.iter().map(MessageFacts::from_raw).collect())
    })
}
