//! `load` (the whole array) and `loadContext` (the pinned messages before
//! the last summary, read by the keys the session record keeps of them,
//! then the last summary on, read with a key range that starts at the
//! summary's record).

use super::connection::{database, retrying};
use super::records::{get, marks_among, no_session, pending, read_pinned};
use super::records::{read_records, same_key, session_range, Tx};
use super::schema::{MESSAGES, SESSIONS};
use super::{string_arg, Inner, Known};
use crate::js::message_access::{role_at, roles, JsArray};
use agent_compaction_core::error::FieldPath;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::storage::load_plan::{self as plan, Early};
use agent_compaction_core::storage::marks::{pinned_read, PinnedRead};
use agent_compaction_core::storage::packing::Pack;
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The stored messages of a session as of one read transaction.
pub struct Stored {
    /// The messages, their keys, the session record, and what the store
    /// knows of them (`core::storage::load_plan::loaded`).
    pub known: Known,
    /// For `loadContext`: the pinned messages before the context, or
    /// `None` when the session record does not list them (written by an
    /// older version) though the context starts at a summary.
    pub pinned: Option<Array>,
}

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = flattenRecords)]
    fn flatten_records(values: &JsValue, keys: &JsValue, skip: u32) -> Array;
}

/// Records as read (`[values, keys]`) to messages, their keys and packs,
/// leaving out `skip` messages of the first record when it is a pack.
pub fn flatten(records: &Array, skip: u32) -> (Array, Array, Vec<Pack>) {
    let parts = flatten_records(&records.get(0), &records.get(1), skip);
    let pairs = parts.get(2).unchecked_into::<js_sys::Uint32Array>();
    let packs = plan::packs_from_pairs(&pairs.to_vec());
    (
        parts.get(0).unchecked_into(),
        parts.get(1).unchecked_into(),
        packs,
    )
}

/// Reads a session: all of it, or from its last summary on, in one
/// read-only transaction. The records' requests go out with the session
/// record's when their range is known beforehand: always for all of them,
/// and for the context when this store knows where it started (checked
/// against the session record, and read again if it moved since).
pub async fn read(
    inner: &Rc<Inner>,
    id: &str,
    context_only: bool,
    action: &'static str,
) -> Result<Stored, JsValue> {
    let copy = inner.known(id);
    let hint = match plan::early_start(context_only, copy.as_ref().map(|k| k.view.last_summary)) {
        Early::All => Some(JsValue::NULL),
        Early::From(j) => copy.map(|k| k.keys.get(j as u32)),
        Early::Wait => None,
    };
    let tx = Tx::open(&database(inner, action).await?, false, action)?;
    let messages = tx.store(MESSAGES)?;
    let record = pending(tx.store(SESSIONS)?.get(&id.into())).map_err(|e| tx.fail(e))?;
    let early = match hint {
        Some(start) => Some((read_records(&messages, &session_range(id, &start)?), start)),
        None => None,
    };
    let record = record.await.map_err(|e| tx.fail(e))?;
    if record.is_undefined() {
        return Err(no_session(action, id));
    }
    let context_key = get(&record, "contextKey");
    let pinned_keys = get(&record, "pinnedKeys");
    let listed = pinned_keys.dyn_ref::<Array>().map(|a| a.length() as usize);
    let pinned = match pinned_read(context_only && !context_key.is_null(), listed) {
        PinnedRead::Nothing => Some(None),
        PinnedRead::Keys => Some(Some(read_pinned(&messages, pinned_keys.unchecked_ref()))),
        PinnedRead::Everything => None,
    };
    let records = match early {
        Some((records, start))
            if plan::keep_early(context_only, same_key(&start, &context_key)) =>
        {
            records
        }
        early => {
            let records = read_records(&messages, &session_range(id, &context_key)?);
            if let Some((wasted, _)) = early {
                let _ = wasted.await;
            }
            records
        }
    };
    let parts: Array = records.await.map_err(|e| tx.fail(e))?.unchecked_into();
    let pinned = match pinned {
        Some(Some(read)) => Some(read.await.map_err(|e| tx.fail(e))?.unchecked_into()),
        Some(None) => Some(Array::new()),
        None => None,
    };
    tx.done();
    let skip = plan::skip(context_only, get(&record, "contextSlot").as_f64());
    let (values, keys, packs) = flatten(&parts, skip);
    let read = plan::Read {
        context_only,
        revision: get(&record, "revision").as_f64(),
        message_count: get(&record, "messageCount").as_f64(),
        len: values.length() as usize,
        packs,
        skip,
        starts_with_summary: first_role(&values) == Some(Role::CompactionSummary),
    };
    let marks = marks_among(&values, 0, values.length() as usize);
    let view = plan::loaded(read, marks, || last_summary(&values));
    Ok(Stored {
        known: Known {
            view,
            record,
            messages: values,
            keys,
        },
        pinned,
    })
}

/// The messages as the core's readers read them.
fn js_array(messages: &Array) -> Option<JsArray> {
    JsArray::new(messages, || FieldPath::argument("messages")).ok()?
}

/// Where the last summary is in `messages` (one crossing for all roles).
pub fn last_summary(messages: &Array) -> Option<usize> {
    let roles = roles(&js_array(messages)?).ok()?;
    roles.iter().rposition(|&r| r == Role::CompactionSummary)
}

/// The role of `messages[0]`.
fn first_role(messages: &Array) -> Option<Role> {
    role_at(&js_array(messages)?, 0).ok()
}

pub async fn load(inner: Rc<Inner>, id: JsValue, context_only: bool) -> Result<JsValue, JsValue> {
    let action = if context_only {
        "SessionStore.loadContext"
    } else {
        "SessionStore.load"
    };
    let id = string_arg(&id, "sessionId")?;
    let run = inner.clone();
    retrying(inner.clone(), action, false, move |_| {
        Box::pin(load_once(run.clone(), id.clone(), context_only, action))
    })
    .await
}

async fn load_once(
    inner: Rc<Inner>,
    id: String,
    context_only: bool,
    action: &'static str,
) -> Result<JsValue, JsValue> {
    let mut stored = read(&inner, &id, context_only, action).await?;
    let out = match stored.pinned.take() {
        // A record of an older version does not list the pinned messages:
        // the whole session is read to find them (its next save lists them).
        None => {
            stored = read(&inner, &id, false, action).await?;
            let (view, messages) = (&stored.known.view, &stored.known.messages);
            let from = view.last_summary.unwrap_or(0) as u32;
            let pinned: Array = (view.marks.resent(view.last_summary).iter())
                .map(|&i| messages.get(i as u32))
                .collect();
            pinned.concat(&messages.slice(from, messages.length()))
        }
        Some(pinned) if pinned.length() > 0 => pinned.concat(&stored.known.messages),
        Some(_) => stored
            .known
            .messages
            .slice(0, stored.known.messages.length()),
    };
    inner.remember(&id, stored.known);
    Ok(out.into())
}
