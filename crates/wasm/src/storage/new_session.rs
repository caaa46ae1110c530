//! A session written whole under a new id (`fork`, `importJsonl`): its
//! messages keyed `[id, 0]`, `[id, 1]`, …, in packs and loose records as
//! `core::packing::initial` lays them out, and its meta record, as a save of
//! the array into a new session would leave them; and, for a second attempt
//! after a lost connection, whether the first one committed.

use super::meta;
use super::records::{first_unclonable, merge_meta, message_key, public_meta, text, Tx};
use super::repair;
use super::save::ToStore;
use super::schema::{MESSAGES, SESSIONS};
use crate::js::errors::input_error;
use crate::js::message_access::messages_array;
use agent_compaction_core::storage::connection::{whole_landed, Landed};
use agent_compaction_core::storage::meta::{written_whole, Seed};
use agent_compaction_core::storage::save_flow::{contents, whole_put_failure};
use js_sys::{Array, Object};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// The id and session record a first attempt wrote (not yet known to be
/// committed).
pub type Written = Rc<std::cell::RefCell<Option<(String, JsValue)>>>;

/// Whether `stored` (a session record, or undefined) is the `written` one,
/// as `core::storage::connection::whole_landed` reads it.
pub fn landed(stored: &JsValue, written: &JsValue, retry: bool) -> Landed {
    let found = match stored.is_undefined() {
        true => None,
        false => Some(merge_meta(stored, &Object::new(), written).is_null()),
    };
    whole_landed(found, retry)
}

/// Writes `messages` as session `seed.id` in `tx` (writing both stores) and
/// commits: the meta record first (where an engine keeps part of an aborted
/// transaction, Firefox at its storage limit, `core::storage::repair`, it
/// is the later writes that stay), then the records. What a failed commit
/// left under the new id is removed. Fails on messages the core cannot
/// read or the browser cannot store. Resolves with the public meta.
pub async fn write(
    db: &web_sys::IdbDatabase,
    tx: Tx,
    seed: &Seed,
    messages: &Array,
    written: &Written,
    action: &'static str,
) -> Result<JsValue, JsValue> {
    let array = messages_array(messages).map_err(input_error)?;
    let contents = contents(&mut ToStore(array)).map_err(input_error)?;
    let (record, packs) = written_whole(seed.clone(), contents, js_sys::Date::now());
    let meta = meta::record(&record);
    *written.borrow_mut() = Some((seed.id.clone(), meta.clone()));
    tx.store(SESSIONS)?.put(&meta).map_err(|e| tx.fail(e))?;
    let store = tx.store(MESSAGES)?;
    let loose_from = packs.last().map_or(0, |&(s, l)| s + l);
    let records = (packs.iter())
        .map(|&(s, l)| (s, l, messages.slice(s as u32, (s + l) as u32).into()))
        .chain((loose_from..messages.length() as usize).map(|i| (i, 1, messages.get(i as u32))));
    for (i, len, record) in records {
        if let Err(e) = store.put_with_key(&record, &message_key(&seed.id, &[i as f64])) {
            let (name, message) = (text(&e, "name"), text(&e, "message"));
            // A pack's message that cannot be cloned names itself.
            let at = first_unclonable(messages, i, i + len);
            return Err(match whole_put_failure(action, at, &name, &message) {
                Some(message) => js_sys::TypeError::new(&message).into(),
                None => tx.fail(e),
            });
        }
    }
    if let Err(e) = tx.commit().await {
        if repair::after(&e) {
            repair::remove_unwritten(db, &seed.id, action).await;
        }
        return Err(e);
    }
    Ok(public_meta(&meta))
}
