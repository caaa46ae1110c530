//! A session written whole, inside the caller's transaction (`fork`,
//! `importJsonl`): its messages keyed `[id, 0]`, `[id, 1]`, …, in packs
//! and loose records as `core::packing::initial` lays them out, and its
//! meta record, as a save of the array into a new session would leave them.

use super::meta;
use super::records::{message_key, storage_error};
use super::save::ToStore;
use crate::js::errors::type_error;
use crate::js::message_access::messages_array;
use agent_compaction_core::storage::meta::{written_whole, Seed};
use agent_compaction_core::storage::packing::Pack;
use agent_compaction_core::storage::save_flow::{contents, whole_put_failure};
use js_sys::Array;
use wasm_bindgen::prelude::*;
use web_sys::IdbObjectStore;

/// The meta record a session holding `messages` gets (not yet stored), and
/// the layout of its records (`core::storage::meta::written_whole`).
/// Fails on messages the core cannot read.
pub fn meta_for(seed: &Seed, messages: &Array) -> Result<(JsValue, Vec<Pack>), JsValue> {
    let array = messages_array(messages).map_err(type_error)?;
    let contents = contents(&mut ToStore(array)).map_err(type_error)?;
    let (record, packs) = written_whole(seed.clone(), contents, js_sys::Date::now());
    Ok((meta::record(&record), packs))
}

/// Puts `messages` laid out in `packs` and `meta` (both from [`meta_for`])
/// into the transaction's stores. Nothing is awaited: the caller commits.
pub fn put(
    sessions: &IdbObjectStore,
    store: &IdbObjectStore,
    id: &str,
    meta: &JsValue,
    messages: &Array,
    packs: &[Pack],
    action: &'static str,
) -> Result<(), JsValue> {
    // The session record first: where an engine keeps part of an aborted
    // transaction (Firefox at its storage limit, core::storage::repair), it
    // is the later writes that stay, and the caller removes them.
    sessions.put(meta).map_err(|e| storage_error(action, &e))?;
    let n = messages.length() as usize;
    let loose_from = packs.last().map_or(0, |&(s, l)| s + l);
    let records = packs
        .iter()
        .map(|&(s, l)| (s, messages.slice(s as u32, (s + l) as u32).into()))
        .chain((loose_from..n).map(|i| (i, messages.get(i as u32))));
    for (i, record) in records {
        if let Err(e) = store.put_with_key(&record, &message_key(id, &[i as f64])) {
            let text = |key| super::records::get(&e, key).as_string().unwrap_or_default();
            return Err(
                match whole_put_failure(action, i, &text("name"), &text("message")) {
                    Some(message) => js_sys::TypeError::new(&message).into(),
                    None => storage_error(action, &e),
                },
            );
        }
    }
    Ok(())
}
