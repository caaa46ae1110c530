//! A session written whole, inside the caller's transaction (`fork`,
//! `importJsonl`): its messages keyed `[id, 0]`, `[id, 1]`, …, in packs
//! and loose records as `core::packing::initial` lays them out, and its
//! meta record, as a save of the array into a new session would leave them.

use super::load::last_summary;
use super::records::{message_key, set, storage_error};
use super::save::{context_tokens, preview_of};
use crate::js::errors::type_error;
use crate::js::message_access::messages_array;
use agent_compaction_core::storage::packing::{initial, pack_of, Pack};
use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;
use web_sys::IdbObjectStore;

/// What a new session's meta record says besides its messages.
pub struct Seed {
    pub id: String,
    pub title: String,
    pub created_at: f64,
    pub model: Option<String>,
}

/// The meta record a session holding `messages` gets (not yet stored), and
/// the layout of its records. Fails on messages the core cannot read.
pub fn meta_for(seed: &Seed, messages: &Array) -> Result<(JsValue, Vec<Pack>), JsValue> {
    let array = messages_array(messages).map_err(type_error)?;
    let last = last_summary(messages);
    let tokens = context_tokens(&array, last).map_err(type_error)?;
    let now = js_sys::Date::now();
    let meta: JsValue = Object::new().into();
    set(&meta, "id", &seed.id.as_str().into());
    set(&meta, "title", &seed.title.as_str().into());
    set(&meta, "createdAt", &seed.created_at.into());
    set(&meta, "lastModified", &now.max(seed.created_at).into());
    set(&meta, "messageCount", &(messages.length() as f64).into());
    set(&meta, "contextTokens", &tokens.into());
    set(&meta, "preview", &preview_of(messages, 100).as_str().into());
    if let Some(model) = &seed.model {
        set(&meta, "model", &model.as_str().into());
    }
    // As create-then-save leaves it.
    set(&meta, "revision", &1.into());
    // The key and place of the last summary's record.
    let packs = initial(messages.length() as usize, last);
    let (context_key, slot) = match last {
        Some(j) => match pack_of(&packs, j) {
            Some(p) => (
                message_key(&seed.id, &[packs[p].0 as f64]).into(),
                j - packs[p].0,
            ),
            None => (message_key(&seed.id, &[j as f64]).into(), 0),
        },
        None => (JsValue::NULL, 0),
    };
    set(&meta, "contextKey", &context_key);
    set(&meta, "contextSlot", &(slot as f64).into());
    Ok((meta, packs))
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
    action: &str,
) -> Result<(), JsValue> {
    let n = messages.length() as usize;
    let loose_from = packs.last().map_or(0, |&(s, l)| s + l);
    let records = packs
        .iter()
        .map(|&(s, l)| (s, messages.slice(s as u32, (s + l) as u32).into()))
        .chain((loose_from..n).map(|i| (i, messages.get(i as u32))));
    for (i, record) in records {
        if let Err(e) = store.put_with_key(&record, &message_key(id, &[i as f64])) {
            if super::records::get(&e, "name").as_string().as_deref() == Some("DataCloneError") {
                return Err(js_sys::TypeError::new(&format!(
                    "{action}: message {i} cannot be stored: {}",
                    super::records::get(&e, "message")
                        .as_string()
                        .unwrap_or_default()
                ))
                .into());
            }
            return Err(storage_error(action, &e));
        }
    }
    sessions.put(meta).map_err(|e| storage_error(action, &e))?;
    Ok(())
}
