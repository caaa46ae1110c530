//! Session records out to JavaScript: the core's `SessionRecord`,
//! `SaveFields` and upgrade `Patch` (`core::storage::meta`, whose `shape`
//! lays them out) as the objects IndexedDB stores. A save's `contextKey`
//! and `pinnedKeys` are made of
//! keys this store already holds as JavaScript arrays, set on the fields
//! as they are. Reading a
//! record stays field by field: a record of an older version may hold any
//! type, and the app's result keeps every field the record has.

use super::records::set;
use crate::js::values::shape;
use agent_compaction_core::storage::meta::{Patch, SaveFields, SessionRecord};
use wasm_bindgen::prelude::*;

/// The record object of a session the core made whole.
pub fn record(r: &SessionRecord) -> JsValue {
    shape(r.shape())
}

/// The fields a save writes over the stored record; `context_key` is the
/// key of the record where the context starts, or null; `pinned_keys` the
/// `[key, slot]` pairs of the pinned messages before it.
pub fn save_fields(f: &SaveFields, context_key: &JsValue, pinned_keys: &JsValue) -> JsValue {
    let fields = shape(f.shape());
    set(&fields, "contextKey", context_key);
    set(&fields, "pinnedKeys", pinned_keys);
    fields
}

/// The upgrade's patch for a record (`fillSessionDefaults`): null when
/// nothing changes, else `{ fields, count }`.
pub fn patch(p: Option<Patch>) -> JsValue {
    p.map_or(JsValue::NULL, |p| shape(p.shape()))
}
