//! `save`: writes what changed since this store last loaded or saved the
//! session, in one transaction, or nothing. A save that inserts a
//! `compactionSummary` commits with strict durability
//! (`core::storage::save_plan::durability`).

use super::changes::{announce, Change};
use super::connection::{database, retrying};
use super::load::{last_summary, read};
use super::locks::exclusive;
use super::meta::save_fields;
use super::records::{
    adopt_equal, assemble_keys, check_storable, first_user_text, get, identity_facts, merge_meta,
    message_key, pending, position_of, public_meta, range_before, storage_error, store_error, Tx,
};
use super::schema::{MESSAGES, SESSIONS};
use super::{options_arg, string_arg, Inner, Known};
use crate::js::errors::type_error;
use crate::js::message_access::{messages_array, role_at, JsArray};
use crate::js::message_facts::gather;
use agent_compaction_core::error::InputError;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::storage::connection::{save_landed, Landed};
use agent_compaction_core::storage::diff::{self, key_runs, IdentityFacts};
use agent_compaction_core::storage::error::{DropRefusal, StoreError};
use agent_compaction_core::storage::packing::{self, KeyOf};
use agent_compaction_core::storage::save_plan::{
    check_removals, durability, inserted_positions, is_failed_attempt, last_summary_after,
    positions_between, preview, Edit, LastSummary, WriteKind,
};
use agent_compaction_core::storage::session_meta::{
    saved_last_modified, SaveFields, PREVIEW_MAX, PREVIEW_SCAN,
};
use agent_compaction_core::tokens::context_tokens::estimate_from_end;
use agent_compaction_core::tokens::estimate::MessageFacts;
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::IdbKeyRange;

const ACTION: &str = "SessionStore.save";

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
    let cached = inner
        .known(&id)
        .filter(|k| k.offset == 0 || (k.messages.length() > 0 && new.get(0) == k.messages.get(0)));
    let from_cache = cached.is_some();
    let mut base = match cached {
        Some(k) => k,
        None => {
            let stored = read(inner, &id, false, ACTION).await?;
            let revision = get(&stored.record, "revision").as_f64().unwrap_or(0.0);
            // Another store changed the session since the caller's array
            // was read from this one: a conflict, whatever the records say.
            if let Some(seen) = inner.outdated_revision(&id) {
                if seen != revision {
                    inner.forget(&id);
                    return Err(conflict(&id, revision, seen));
                }
            }
            Known {
                revision,
                messages: adopt_equal(&stored.messages, &new),
                keys: stored.keys,
                packs: Rc::new(stored.packs),
                lead: 0,
                last_summary: last_summary(&stored.messages),
                offset: 0,
                record: stored.record,
            }
        }
    };
    let (mut inserted, mut edit) = diff(&base.messages, &new)?;
    let old_len = base.messages.length() as usize;
    if from_cache && base.offset == 0 && !removals_allowed(&base, &edit).map_err(type_error)? {
        // Not the objects this store last saw (the caller kept an older
        // array than the one `load` gave it?): compare by value before
        // calling anything a drop. Only on this path, never per turn.
        base.messages = adopt_equal(&base.messages, &new);
        (inserted, edit) = diff(&base.messages, &new)?;
    }

    // Drops need `replace`, except trailing failed attempts.
    if !replace {
        if base.offset > 0 {
            return Err(drop_error(DropRefusal::BeforeContext {
                offset: base.offset,
            }));
        }
        if let Err(k) = removal_check(&base, &edit).map_err(type_error)? {
            return Err(drop_error(DropRefusal::NotFailedAttempts {
                count: edit.removed.len(),
                first: k,
            }));
        }
    }

    // The same messages: nothing is written and the revision stays (a save
    // after every event must not make another tab's next save a conflict),
    // once the stored revision is checked to be the one this save is from.
    if edit.is_empty() && base.offset == 0 {
        changed.set(false);
        let db = database(inner, ACTION).await?;
        let tx = Tx::sessions(&db, false, ACTION)?;
        let sessions = tx.store(SESSIONS, ACTION)?;
        let stored = pending(sessions.get(&id.as_str().into()))
            .map_err(|e| storage_error(ACTION, &e))?
            .await
            .map_err(|e| storage_error(ACTION, &e))?;
        tx.done();
        if stored.is_undefined() {
            inner.forget(&id);
            return Err(super::records::no_session(ACTION, &id));
        }
        let revision = get(&stored, "revision").as_f64().unwrap_or(0.0);
        if revision != base.revision {
            inner.forget(&id);
            return Err(conflict(&id, revision, base.revision));
        }
        base.messages = new.slice(0, new.length());
        base.record = stored.clone();
        inner.remember(&id, base);
        return Ok(public_meta(&stored));
    }

    // Bad input is refused before anything is written.
    let problem = check_storable(&new, &inserted);
    if !problem.is_null() {
        let p: Array = problem.unchecked_into();
        let index = p.get(0).as_f64().unwrap_or(0.0) as u64;
        let path = p.get(1).as_string().unwrap_or_default();
        let what = p.get(2).as_string().unwrap_or_default();
        return Err(js_sys::TypeError::new(&format!(
            "messages[{index}]{path} {what}: a message must be plain data to be stored"
        ))
        .into());
    }

    // Where the context starts now, and its size.
    let mut summaries = Vec::new();
    for &j in &edit.inserted {
        if role_at(&array, j).map_err(type_error)? == Role::CompactionSummary {
            summaries.push(j);
        }
    }
    let last = match last_summary_after(&edit, base.last_summary, &summaries) {
        LastSummary::Known(last) => last,
        LastSummary::Removed => last_summary(&new),
    };
    let context_tokens = context_tokens(&array, last).map_err(type_error)?;

    // Which records hold which messages afterwards (core::packing), the
    // keys of new records, and each message's record key.
    let layout = packing::plan(
        old_len,
        &base.packs,
        base.lead > 0,
        &edit,
        new.length() as usize,
        last,
    );
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
    for p in &layout.pack_puts {
        let key = match p.key {
            KeyOf::Old(k) => base.keys.get(k as u32),
            KeyOf::Inserted(j) => keys.get(j as u32),
            KeyOf::Split => {
                let before = position_of(&keys.get(p.start as u32 - 1));
                let after = (p.start + p.len < new.length() as usize)
                    .then(|| position_of(&keys.get((p.start + p.len) as u32)));
                let position = positions_between(Some(&before), after.as_deref(), 1);
                message_key(&id, &position[0]).into()
            }
        };
        keys.fill(&key, p.start as u32, (p.start + p.len) as u32);
        pack_keys.push(key);
    }

    // The session record's new fields (what it keeps comes from the stored
    // one); `lastModified` never goes back (core::session_meta).
    let now = js_sys::Date::now();
    let mut fields = SaveFields {
        last_modified: saved_last_modified(get(&base.record, "lastModified").as_f64(), now),
        message_count: new.length(),
        context_tokens,
        preview: preview_of(&new, PREVIEW_MAX),
        revision: base.revision + 1.0,
        context_slot: last.map_or(0, |j| packing::slot_of(&layout.packs, j)) as u32,
    };
    let context_key = match last {
        Some(j) => keys.get(j as u32),
        None => JsValue::NULL,
    };
    let fields_js = save_fields(&fields, context_key.clone())?;

    // One transaction. The session record is read first and the writes are
    // queued behind it at once (a transaction runs its requests in order),
    // so they run while the record comes back; then its revision is checked:
    // a stale one aborts the transaction, which undoes every queued write
    // (dropping `tx` aborts it), so nothing is written. The new session
    // record is queued too, made from the one this store saw last, and put
    // again when the stored one turns out to differ (a rename elsewhere).
    let db = database(inner, ACTION).await?;
    let kind = WriteKind::Save {
        summary: !summaries.is_empty(),
    };
    let tx = Tx::writing(&db, durability(kind), ACTION)?;
    let sessions = tx.store(SESSIONS, ACTION)?;
    let records = tx.store(MESSAGES, ACTION)?;
    let stored =
        pending(sessions.get(&id.as_str().into())).map_err(|e| storage_error(ACTION, &e))?;
    // The new session record first, before any message record: where an
    // engine commits part of an aborted transaction (Firefox at its storage
    // limit, see core::storage::repair), it is the later writes that stay.
    let queued = if base.record.is_object() {
        let meta = merge_meta(&base.record, &fields_js, &JsValue::UNDEFINED);
        sessions.put(&meta).map_err(|e| storage_error(ACTION, &e))?;
        meta
    } else {
        JsValue::UNDEFINED
    };
    if base.offset > 0 && base.keys.length() > 0 {
        let prefix = range_before(&id, &base.keys.get(0))?;
        records
            .delete(&prefix)
            .map_err(|e| storage_error(ACTION, &e))?;
    }
    let fail = |e: JsValue| storage_error(ACTION, &e);
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
            .map_err(|e| put_error(e, &inserted, p.start))?;
    }
    for &j in &layout.singles {
        records
            .put_with_key(&new.get(j as u32), &keys.get(j as u32))
            .map_err(|e| put_error(e, &inserted, j))?;
    }
    let stored = match stored.await {
        Ok(record) if !record.is_undefined() => record,
        outcome => {
            inner.forget(&id);
            return Err(match outcome {
                Err(e) => storage_error(ACTION, &e),
                Ok(_) => super::records::no_session(ACTION, &id),
            });
        }
    };
    let revision = get(&stored, "revision").as_f64().unwrap_or(0.0);
    let puts = layout.pack_puts.len() + layout.singles.len();
    let deletes = layout.deletes.len() + layout.delete_ranges.len();
    match save_landed(base.revision, revision, retry) {
        Landed::No => {}
        Landed::Yes => {
            // The first attempt committed this very save (no one else can
            // have: the lock is held across both): nothing is written
            // again (dropping `tx` aborts what was queued).
            drop(tx);
            count_writes(inner, puts, deletes);
            inner.remember(
                &id,
                Known {
                    revision,
                    messages: new.slice(0, new.length()),
                    keys,
                    packs: Rc::new(layout.packs),
                    lead: 0,
                    last_summary: last,
                    offset: 0,
                    record: stored.clone(),
                },
            );
            return Ok(public_meta(&stored));
        }
        Landed::Other => {
            inner.forget(&id);
            return Err(conflict(&id, revision, base.revision));
        }
    }
    let last_modified = saved_last_modified(get(&stored, "lastModified").as_f64(), now);
    let fields_js = match last_modified == fields.last_modified {
        true => fields_js,
        false => {
            fields.last_modified = last_modified;
            save_fields(&fields, context_key)?
        }
    };
    let meta = match merge_meta(&stored, &fields_js, &queued) {
        same if same.is_null() => queued,
        meta => {
            sessions.put(&meta).map_err(|e| storage_error(ACTION, &e))?;
            meta
        }
    };
    if let Err(e) = tx.commit(ACTION).await {
        if !super::repair::after(&e) {
            return Err(e);
        }
        // Whatever the abort failed to undo is put back (core::storage::repair).
        let mut touched: Vec<usize> = layout.deletes.clone();
        for &(a, b) in &layout.delete_ranges {
            touched.extend(a..=b);
        }
        for p in &layout.pack_puts {
            if let KeyOf::Old(k) = p.key {
                touched.push(k);
            }
        }
        super::repair::put_back(inner, &db, &id, &base, &stored, &touched).await;
        return Err(e);
    }

    count_writes(inner, puts, deletes);
    inner.remember(
        &id,
        Known {
            revision: revision + 1.0,
            messages: new.slice(0, new.length()),
            keys,
            packs: Rc::new(layout.packs),
            lead: 0,
            last_summary: last,
            offset: 0,
            record: meta.clone(),
        },
    );
    Ok(public_meta(&meta))
}

fn count_writes(inner: &Inner, puts: usize, deletes: usize) {
    inner.records_put.set(inner.records_put.get() + puts as f64);
    inner
        .records_deleted
        .set(inner.records_deleted.get() + deletes as f64);
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

/// A failed put: a message the browser cannot clone is a `TypeError` naming
/// it (the first new one from `from` on: an old one was stored before).
fn put_error(e: JsValue, inserted: &[u32], from: usize) -> JsValue {
    if get(&e, "name").as_string().as_deref() != Some("DataCloneError") {
        return storage_error(ACTION, &e);
    }
    let at = inserted.iter().find(|&&j| j as usize >= from).copied();
    js_sys::TypeError::new(&format!(
        "messages[{}] cannot be stored: {}",
        at.map_or(from, |j| j as usize),
        get(&e, "message").as_string().unwrap_or_default()
    ))
    .into()
}

/// The identity diff: the new array's inserted indices, and the edit. The
/// shim scans for which objects are the same (`identityFacts`); the core
/// plans the edit (`core::storage::diff`).
fn diff(known: &Array, new: &Array) -> Result<(Vec<u32>, Edit), JsValue> {
    let words = identity_facts(known, new).to_vec();
    let (m, n) = (known.length() as usize, new.length() as usize);
    let prefix = words.first().map_or(0, |&p| p.max(0) as usize);
    let rest = words.get(1..).unwrap_or(&[]);
    let split = (m.saturating_sub(prefix)).min(rest.len());
    let facts = IdentityFacts {
        prefix,
        known_len: m,
        new_len: n,
        known_class: rest[..split].to_vec(),
        new_class: rest[split..].to_vec(),
    };
    let edit = diff::edit(&facts)
        .map_err(|e| JsValue::from(js_sys::Error::new(&format!("{ACTION}: {e}"))))?;
    let inserted = edit.inserted.iter().map(|&i| i as u32).collect();
    Ok((inserted, edit))
}

/// Whether the removals are trailing failed attempts; `Err(k)` names the
/// first stored index that is not.
fn removal_check(base: &Known, edit: &Edit) -> Result<Result<(), usize>, InputError> {
    let known = JsArray::new(&base.messages, || {
        agent_compaction_core::error::FieldPath::argument("messages")
    })?
    .ok_or_else(|| InputError::Unreadable {
        path: agent_compaction_core::error::FieldPath::argument("messages"),
        reason: "the stored array could not be read".into(),
    })?;
    let failed = |k: usize| {
        gather(&known, k as u32, k as u32 + 1)
            .ok()
            .and_then(|f| f.first().map(is_failed_attempt))
            .unwrap_or(false)
    };
    Ok(check_removals(
        edit,
        base.messages.length() as usize,
        failed,
    ))
}

fn removals_allowed(base: &Known, edit: &Edit) -> Result<bool, InputError> {
    Ok(edit.removed.is_empty() || removal_check(base, edit)?.is_ok())
}

fn conflict(id: &str, stored: f64, seen: f64) -> JsValue {
    store_error(StoreError::Conflict {
        action: ACTION,
        id: id.to_owned(),
        stored,
        seen,
    })
}

fn drop_error(why: DropRefusal) -> JsValue {
    store_error(StoreError::RefusedDrop {
        action: ACTION,
        why,
    })
}

/// The LLM context's estimated tokens: the last fresh usage plus estimates
/// after it, walking back from the end (stale usage ignored, as the
/// compactor does). Reads the messages after the last usage, in chunks of
/// 4, 8, 16, then 32 from the end (a turn's save finds it among the last few).
pub fn context_tokens(array: &JsArray, last: Option<usize>) -> Result<f64, InputError> {
    let n = array.len() as usize;
    let start = last.unwrap_or(0);
    let stale_until = match last {
        Some(s) => gather(array, s as u32, s as u32 + 1)?
            .first()
            .map(|f| f.timestamp),
        None => None,
    };
    let mut chunk: Vec<MessageFacts> = Vec::new();
    let mut chunk_start = n;
    let mut size = 4;
    let facts = (start..n).rev().map(|i| {
        if i < chunk_start {
            let from = (i + 1).saturating_sub(size).max(start);
            size = (size * 2).min(32);
            chunk = gather(array, from as u32, i as u32 + 1)?
                .iter()
                .map(MessageFacts::from_raw)
                .collect();
            chunk_start = from;
        }
        Ok((i, chunk[i - chunk_start]))
    });
    Ok(estimate_from_end(facts, stale_until)?.tokens)
}
