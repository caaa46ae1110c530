//! The history search of a stored session (`core::storage::history`):
//! `searchHistory`, `readHistory` and `historyTool` read the session's
//! index records (`schema::HISTORY`), never the whole session, once the
//! index is there. What it covers is what the core says is hidden
//! (`lookup::hidden_before`: the pinned messages stay out). A save keeps
//! it up to date in its own transaction ([`after_save`]); a session
//! without one (an import, a fork, a session from before the index, or one
//! whose covered messages a save changed) is read whole once and indexed
//! at its first search.

use super::connection::database;
use super::load::read as read_session;
use super::records::{get, marks_among, pending, session_range, Tx};
use super::schema::{HISTORY, SESSIONS};
use super::{string_arg, Inner};
use crate::history::{history_error, string_argument, tool_call};
use crate::js::errors::input_error;
use crate::js::message_access::JsArray;
use crate::js::message_facts::texts_at;
use crate::js::values::{read_options, shape};
use agent_compaction_core::error::FieldPath;
use agent_compaction_core::history::index::Hit;
use agent_compaction_core::history::lookup::{
    self, hidden_before, message_text, read_result, search_result,
};
use agent_compaction_core::history::reference::{self, Page, Reference, DEFAULT_PAGE_CHARS};
use agent_compaction_core::history::tool::{self, Call};
use agent_compaction_core::history::HistoryError;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::storage::history::{
    bucket, fill, ranked, read_meta, read_text, save_step, search_terms, Fill, Meta, OnSave,
    SaveStep, Text, Value, BUCKET, BUILD_ATTEMPTS, META, STATS, TEXT,
};
use js_sys::{Array, Uint8Array};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{IdbKeyRange, IdbObjectStore};

/// A history record's key: `[id, ...rest]` (`core::storage::history`).
fn key(id: &str, rest: &[u32]) -> Array {
    let key = Array::of1(&id.into());
    for &n in rest {
        key.push(&n.into());
    }
    key
}

/// The records whose keys start with `prefix`.
fn under(prefix: &Array) -> Result<IdbKeyRange, JsValue> {
    let upper = prefix.slice(0, prefix.length());
    upper.push(&Array::new());
    IdbKeyRange::bound(prefix, &upper)
}

fn bytes(value: &JsValue) -> Option<Vec<u8>> {
    value.dyn_ref::<Uint8Array>().map(Uint8Array::to_vec)
}

/// The meta record as read (`core::storage::history::read_meta`).
fn meta_of(record: &JsValue) -> Option<Result<Meta, HistoryError>> {
    read_meta(!record.is_undefined(), bytes(record).as_deref())
}

/// Queues the records of `fill`.
fn write_fill(store: &IdbObjectStore, id: &str, fill: &Fill) -> Result<(), JsValue> {
    for (rest, value) in fill.records() {
        let value: JsValue = match value {
            Value::Bytes(b) => Uint8Array::from(&b[..]).into(),
            Value::Text(role, text) => Array::of2(&role.into(), &text.into()).into(),
        };
        store.put_with_key(&value, &key(id, &rest))?;
    }
    Ok(())
}

/// The searched texts of `messages[at]` for each of `at` (ascending), at
/// their places `offset` further on in the session.
fn texts(messages: &JsArray, at: &[usize], offset: u32) -> Result<Vec<Text>, JsValue> {
    let at: Vec<u32> = at.iter().map(|&i| i as u32).collect();
    let read = texts_at(messages, &at, |m| {
        (m.role.unwrap_or(Role::Other), message_text(m))
    });
    let mut out = Vec::new();
    for (i, (role, text)) in read.map_err(input_error)? {
        if let Some(text) = text {
            let key = i.saturating_add(offset);
            out.push(Text { key, role, text });
        }
    }
    Ok(out)
}

/// The meta request a save queues in its transaction when it may change
/// the index (none: it cannot).
pub fn before_save(
    tx: &Tx,
    id: &str,
    on_save: OnSave,
) -> Result<Option<wasm_bindgen_futures::JsFuture>, JsValue> {
    if on_save == OnSave::Keep {
        return Ok(None);
    }
    let store = tx.store(HISTORY)?;
    pending(store.get(&key(id, &[META]))).map(Some)
}

/// What a save writes to the index once its meta is read: nothing, the
/// index dropped, or a fill of the messages its new summary hides
/// (`messages` is the array saved, starting at place `offset`); without
/// `index` (a save the quota refused with its fill), a fill is a drop.
/// Says whether it wrote a fill.
pub fn after_save(
    tx: &Tx,
    id: &str,
    on_save: OnSave,
    meta: &JsValue,
    (messages, offset): (&JsArray, u32),
    index: bool,
) -> Result<bool, JsValue> {
    let stored = meta_of(meta);
    let store = tx.store(HISTORY)?;
    match save_step(on_save, stored.as_ref(), index) {
        SaveStep::Drop => {
            store.delete(&session_range(id, &JsValue::NULL)?)?;
        }
        SaveStep::Fill { from, to } => {
            let meta = stored.and_then(Result::ok);
            // In the array saved: the pinned ones among them stay out.
            let from_here = from.saturating_sub(offset) as usize;
            let to_here = to.saturating_sub(offset) as usize;
            let pinned = marks_among(messages.as_array(), from_here, to_here).pinned;
            let hidden = hidden_before(from_here, to_here, &pinned);
            let texts = texts(messages, &hidden, offset);
            match texts.ok().and_then(|t| fill(meta.as_ref(), to, t).ok()) {
                Some(fill) => {
                    write_fill(&store, id, &fill)?;
                    return Ok(true);
                }
                // The index never fails a save: without it, the next
                // search rebuilds it (and says why if it cannot).
                None => {
                    store.delete(&session_range(id, &JsValue::NULL)?)?;
                }
            }
        }
        SaveStep::Nothing => {}
    }
    Ok(false)
}

/// The session's index, built first if it has none (or one this version
/// does not read): read whole, indexed up to its last summary, written if
/// no save came in between (else read again).
async fn ensure(inner: &Rc<Inner>, id: &str, action: &'static str) -> Result<Meta, JsValue> {
    for _ in 0..BUILD_ATTEMPTS {
        let tx = Tx::open(&database(inner, action).await?, false, action)?;
        let meta = pending(tx.store(HISTORY)?.get(&key(id, &[META])));
        tx.session(&tx.store(SESSIONS)?, id).await?;
        let meta = meta
            .map_err(|e| tx.fail(e))?
            .await
            .map_err(|e| tx.fail(e))?;
        tx.done();
        if let Some(Ok(meta)) = meta_of(&meta) {
            return Ok(meta);
        }
        let stored = read_session(inner, id, false, action).await?;
        let view = &stored.known.view;
        let to = view.last_summary.unwrap_or(0) as u32;
        let messages = JsArray::new(&stored.known.messages, || FieldPath::argument("messages"))
            .map_err(input_error)?;
        let hidden = hidden_before(0, to as usize, &view.marks.pinned);
        let texts = match messages {
            Some(messages) => texts(&messages, &hidden, 0)?,
            None => Vec::new(),
        };
        let fill = fill(None, to, texts).map_err(history_error)?;
        let tx = Tx::open(&database(inner, action).await?, true, action)?;
        let record = tx.session(&tx.store(SESSIONS)?, id).await?;
        if get(&record, "revision").as_f64() != Some(view.revision) {
            continue;
        }
        let store = tx.store(HISTORY)?;
        let fail = |e: JsValue| tx.fail(e);
        store
            .delete(&session_range(id, &JsValue::NULL)?)
            .map_err(fail)?;
        write_fill(&store, id, &fill).map_err(fail)?;
        tx.commit().await?;
        return Ok(fill.meta);
    }
    Err(js_sys::Error::new(&format!(
        "{action}: session {id:?} kept changing while its history was indexed; try again"
    ))
    .into())
}

/// The hits of a search, with their messages' roles and texts, and how
/// many messages it searched.
type Found = (Vec<(Hit, Role, String)>, usize);

async fn find(
    inner: &Rc<Inner>,
    id: &str,
    query: &str,
    limit: usize,
    action: &'static str,
) -> Result<Found, JsValue> {
    let terms = search_terms(query, limit).map_err(history_error)?;
    let meta = ensure(inner, id, action).await?;
    let tx = Tx::open(&database(inner, action).await?, false, action)?;
    let store = tx.store(HISTORY)?;
    let all = |prefix: Array| -> Result<wasm_bindgen_futures::JsFuture, JsValue> {
        pending(store.get_all_with_key(&under(&prefix)?.into()))
    };
    let stats = all(key(id, &[STATS])).map_err(|e| tx.fail(e))?;
    let mut lists = Vec::with_capacity(terms.len());
    for t in &terms {
        lists.push(all(key(id, &[BUCKET, bucket(&t.text)])).map_err(|e| tx.fail(e))?);
    }
    let records = |value: JsValue| -> Vec<Vec<u8>> {
        let list: Array = value.unchecked_into();
        list.iter().filter_map(|v| bytes(&v)).collect()
    };
    let stats = records(stats.await.map_err(|e| tx.fail(e))?);
    let mut postings = Vec::with_capacity(lists.len());
    for list in lists {
        postings.push(records(list.await.map_err(|e| tx.fail(e))?));
    }
    let best = ranked(&stats, &terms, &postings, limit).map_err(history_error)?;
    let mut reads = Vec::with_capacity(best.len());
    for r in &best {
        reads.push(pending(store.get(&key(id, &[TEXT, r.key]))).map_err(|e| tx.fail(e))?);
    }
    let mut found = Vec::with_capacity(best.len());
    for (r, read) in best.iter().zip(reads) {
        let value = read.await.map_err(|e| tx.fail(e))?;
        let Some((role, text)) = text_record(&value) else {
            continue;
        };
        if let Some(hit) = lookup::hit(r, &text, &terms) {
            found.push((hit, role, text));
        }
    }
    tx.done();
    Ok((found, meta.messages as usize))
}

/// A text record's role and text.
fn text_record(value: &JsValue) -> Option<(Role, String)> {
    let pair = value.dyn_ref::<Array>()?;
    read_text(pair.get(0).as_string(), pair.get(1).as_string())
}

/// A page of the text `reference` points at.
async fn page(
    inner: &Rc<Inner>,
    id: &str,
    reference: &str,
    offset: Option<usize>,
    max_chars: usize,
    action: &'static str,
) -> Result<(Reference, Role, String, Page), JsValue> {
    let reference = Reference::parse(reference).map_err(history_error)?;
    ensure(inner, id, action).await?;
    let tx = Tx::open(&database(inner, action).await?, false, action)?;
    let value = tx
        .read(tx.store(HISTORY)?.get(&key(id, &[TEXT, reference.key])))
        .await?;
    tx.done();
    let unknown = HistoryError::UnknownMessage { key: reference.key };
    let (role, text) = text_record(&value).ok_or_else(|| history_error(unknown))?;
    let page = reference::read(&text, &reference, offset, max_chars).map_err(history_error)?;
    Ok((reference, role, text, page))
}

pub async fn search(
    inner: Rc<Inner>,
    id: JsValue,
    query: JsValue,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.searchHistory";
    let id = string_arg(&id, "sessionId")?;
    let query = string_argument(&query, "query")?;
    let limit = read_options(&options, lookup::search_limit).map_err(input_error)?;
    let (found, searched) = find(&inner, &id, &query, limit, ACTION).await?;
    Ok(shape(search_result(&found, searched)))
}

pub async fn read(
    inner: Rc<Inner>,
    id: JsValue,
    reference: JsValue,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.readHistory";
    let id = string_arg(&id, "sessionId")?;
    let reference = string_argument(&reference, "ref")?;
    let (offset, max_chars) = read_options(&options, lookup::read_options).map_err(input_error)?;
    let (reference, role, text, page) =
        page(&inner, &id, &reference, offset, max_chars, ACTION).await?;
    Ok(shape(read_result(&reference, role, &text, &page)))
}

pub async fn tool(
    inner: Rc<Inner>,
    id: JsValue,
    name: JsValue,
    args: JsValue,
) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.historyTool";
    let id = string_arg(&id, "sessionId")?;
    let call = tool_call(&name, &args)?;
    let answer = match call {
        Call::Search { query, limit } => {
            let (found, searched) = find(&inner, &id, &query, limit, ACTION).await?;
            tool::search_answer(&query, &found, searched)
        }
        Call::Read { reference, offset } => {
            let (reference, role, text, page) =
                page(&inner, &id, &reference, offset, DEFAULT_PAGE_CHARS, ACTION).await?;
            tool::read_answer(&reference, role, &text, &page)
        }
    };
    Ok(answer.into())
}
