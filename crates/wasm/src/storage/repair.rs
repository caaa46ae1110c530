//! After a write's transaction failed to commit: make the stored session
//! what it was before, still under the session's lock (a save), or remove
//! what a whole session written under a new id left (fork, import). Firefox can leave
//! some of an aborted transaction's writes stored (its storage limit hit in
//! the middle: `core::storage::repair` says how); there this deletes the
//! strays, writes the store's own records the failed save touched again and
//! puts the session record back. Where the abort undid everything (every
//! other engine, and Firefox most of the time), it reads the keys and finds
//! nothing to do.

use super::records::{get, pending, position_of, session_range, text, Tx};
use super::schema::{MESSAGES, SESSIONS};
use super::{Inner, Known};
use agent_compaction_core::storage::packing;
use agent_compaction_core::storage::repair::{after_failed_save, worth_repairing, Records};
use agent_compaction_core::storage::save_plan::Position;
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use agent_compaction_core::storage::save_flow::ACTION;

/// `base`: what the store had before the failed save (the whole session:
/// `core::storage::save_flow::Step::Repair`); `read_before`: the session
/// record the failed transaction read before writing; `touched`: old
/// message indices whose records the failed save put under their key or
/// deleted. Never fails: a repair that cannot run leaves what the failed
/// save left, and the save's own error is what the caller gets.
pub async fn put_back(
    inner: &Rc<Inner>,
    db: &web_sys::IdbDatabase,
    id: &str,
    base: &Known,
    read_before: &JsValue,
    touched: &[usize],
) {
    let _ = try_put_back(inner, db, id, base, read_before, touched).await;
}

/// Whether the error a write failed with calls for a repair
/// (`core::storage::repair::worth_repairing`).
pub fn after(error: &JsValue) -> bool {
    worth_repairing(&text(error, "name"))
}

/// After a whole session written under the new id `id` (`fork`,
/// `importJsonl`) failed to commit: its session record and message
/// records, whatever of them stayed, are deleted (nothing was under that
/// id before). Never fails, as [`put_back`].
pub async fn remove_unwritten(db: &web_sys::IdbDatabase, id: &str, action: &'static str) {
    let run = async {
        let tx = Tx::open(db, true, action)?;
        tx.store(MESSAGES)?
            .delete(&session_range(id, &JsValue::NULL)?)?;
        tx.store(SESSIONS)?.delete(&id.into())?;
        tx.commit().await
    };
    let _: Result<(), JsValue> = run.await;
}

async fn try_put_back(
    inner: &Rc<Inner>,
    db: &web_sys::IdbDatabase,
    id: &str,
    base: &Known,
    read_before: &JsValue,
    touched: &[usize],
) -> Result<(), JsValue> {
    // The store's records in key order (`core::storage::repair::Records`).
    let layout = Records::of(base.messages.length() as usize, &base.view.packs);
    let records: Vec<(JsValue, JsValue)> = (layout.spans.iter())
        .map(|&(j, len)| {
            let value = match packing::pack_of(&base.view.packs, j) {
                Some(_) => base.messages.slice(j as u32, (j + len) as u32).into(),
                None => base.messages.get(j as u32),
            };
            (base.keys.get(j as u32), value)
        })
        .collect();
    let known: Vec<Position> = records.iter().map(|(k, _)| position_of(k)).collect();
    let touched = layout.touched(touched);

    let tx = Tx::open(db, true, ACTION)?;
    let sessions = tx.store(SESSIONS)?;
    let messages = tx.store(MESSAGES)?;
    let now = pending(sessions.get(&id.into()))?;
    let keys = pending(messages.get_all_keys_with_key(&session_range(id, &JsValue::NULL)?))?;
    let now = now.await?;
    let keys: Array = keys.await?.unchecked_into();
    let stored: Vec<JsValue> = keys.iter().collect();
    let positions: Vec<Position> = stored.iter().map(position_of).collect();
    let revision = |r: &JsValue| {
        r.is_object()
            .then(|| get(r, "revision").as_f64().unwrap_or(0.0))
    };
    let repair = after_failed_save(
        &known,
        &touched,
        &positions,
        revision(read_before),
        revision(&now),
    );
    if repair.is_empty() {
        tx.done();
        return Ok(());
    }
    // The strays go first (`Repair::writes_back`).
    for &s in &repair.delete {
        messages.delete(&stored[s])?;
    }
    tx.commit().await?;
    if repair.writes_back() {
        let tx = Tx::open(db, true, ACTION)?;
        let sessions = tx.store(SESSIONS)?;
        let messages = tx.store(MESSAGES)?;
        if repair.record {
            sessions.put(read_before)?;
        }
        for &r in &repair.restore {
            let (key, value) = &records[r];
            messages.put_with_key(value, key)?;
        }
        tx.commit().await?;
    }
    inner.count_writes(repair.restore.len(), repair.delete.len());
    Ok(())
}
