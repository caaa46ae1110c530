//! Session metadata: create, list, rename, delete.

use super::changes::{announce, Change};
use super::connection::{database, retrying};
use super::jsonl::landed;
use super::locks::exclusive;
use super::meta;
use super::records::{
    get, public_meta, request, session_range, session_record, set, storage_error, store_error, Tx,
};
use super::schema::{BY_LAST_MODIFIED, MESSAGES, SESSIONS};
use super::{optional_string, options_arg, string_arg, Inner, Known};
use crate::session_file::fresh_id;
use agent_compaction_core::storage::connection::{delete_landed, Landed};
use agent_compaction_core::storage::error::StoreError;
use agent_compaction_core::storage::meta::new_session;
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = valuesDescending)]
    fn values_descending(store: &web_sys::IdbObjectStore, index: &str) -> js_sys::Promise;
}

pub async fn create(inner: Rc<Inner>, options: JsValue) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.createSession";
    let options = options_arg(&options, "options")?;
    let optional = |key| optional_string(&options, key);
    let now = js_sys::Date::now();
    let id = optional("id")?.unwrap_or_else(|| fresh_id(now));
    let seed = new_session(id.clone(), optional("title")?, optional("model")?, now);
    let record = meta::record(&seed);

    let run = inner.clone();
    let (new_id, new_record) = (id.clone(), record.clone());
    retrying(inner.clone(), ACTION, true, move |retry| {
        let (inner, id, record) = (run.clone(), new_id.clone(), new_record.clone());
        Box::pin(async move { create_once(&inner, &id, &record, retry).await })
    })
    .await?;
    let known = Known {
        record: record.clone(),
        ..Known::default()
    };
    inner.remember(&id, known);
    announce(&inner, Change::Created, &id, Some(0.0), None);
    Ok(public_meta(&record))
}

/// Adds the session record, unless (a second attempt) the first attempt did.
async fn create_once(
    inner: &Rc<Inner>,
    id: &str,
    record: &JsValue,
    retry: bool,
) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.createSession";
    let db = database(inner, ACTION).await?;
    let tx = Tx::sessions(&db, true, ACTION)?;
    let store = tx.store(SESSIONS, ACTION)?;
    if retry {
        let stored = request(store.get(&id.into()))
            .await
            .map_err(|e| storage_error(ACTION, &e))?;
        if landed(&stored, record, retry) == Landed::Yes {
            tx.done();
            return Ok(JsValue::UNDEFINED);
        }
    }
    let added = request(store.add(record)).await;
    if let Err(e) = added {
        let name = get(&e, "name").as_string().unwrap_or_default();
        let message = get(&e, "message").as_string().unwrap_or_default();
        return Err(store_error(StoreError::from_add(
            ACTION, id, &name, &message,
        )));
    }
    tx.commit(ACTION).await?;
    Ok(JsValue::UNDEFINED)
}

pub async fn list(inner: Rc<Inner>) -> Result<JsValue, JsValue> {
    let run = inner.clone();
    retrying(inner, "SessionStore.list", false, move |_| {
        Box::pin(list_once(run.clone()))
    })
    .await
}

async fn list_once(inner: Rc<Inner>) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.list";
    let db = database(&inner, ACTION).await?;
    let tx = Tx::sessions(&db, false, ACTION)?;
    let store = tx.store(SESSIONS, ACTION)?;
    // Newest first: the `lastModified` index, read backwards.
    let all: Array = JsFuture::from(values_descending(&store, BY_LAST_MODIFIED))
        .await
        .map_err(|e| storage_error(ACTION, &e))?
        .unchecked_into();
    tx.done();
    Ok(all
        .iter()
        .map(|r| public_meta(&r))
        .collect::<Array>()
        .into())
}

pub async fn rename(inner: Rc<Inner>, id: JsValue, title: JsValue) -> Result<JsValue, JsValue> {
    let id = string_arg(&id, "sessionId")?;
    let title = string_arg(&title, "title")?;
    let run = inner.clone();
    let (renamed, new_title) = (id.clone(), title);
    let body = retrying(inner.clone(), "SessionStore.rename", true, move |_| {
        Box::pin(rename_locked(
            run.clone(),
            renamed.clone(),
            new_title.clone(),
        ))
    });
    let meta = exclusive(&inner, &id, "SessionStore.rename", body).await?;
    announce(
        &inner,
        Change::Renamed,
        &id,
        get(&meta, "revision").as_f64(),
        None,
    );
    Ok(meta)
}

/// Sets the title (the same again on a second attempt: no harm).
async fn rename_locked(inner: Rc<Inner>, id: String, title: String) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.rename";
    let db = database(&inner, ACTION).await?;
    let tx = Tx::sessions(&db, true, ACTION)?;
    let store = tx.store(SESSIONS, ACTION)?;
    let record = session_record(&store, ACTION, &id).await?;
    set(&record, "title", &title.as_str().into());
    set(&record, "lastModified", &js_sys::Date::now().into());
    store.put(&record).map_err(|e| storage_error(ACTION, &e))?;
    tx.commit(ACTION).await?;
    Ok(public_meta(&record))
}

pub async fn delete(inner: Rc<Inner>, id: JsValue) -> Result<JsValue, JsValue> {
    let id = string_arg(&id, "sessionId")?;
    let run = inner.clone();
    let deleted = id.clone();
    let body = retrying(inner.clone(), "SessionStore.delete", true, move |retry| {
        Box::pin(delete_locked(run.clone(), deleted.clone(), retry))
    });
    exclusive(&inner, &id, "SessionStore.delete", body).await?;
    announce(&inner, Change::Deleted, &id, None, None);
    Ok(JsValue::UNDEFINED)
}

async fn delete_locked(inner: Rc<Inner>, id: String, retry: bool) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.delete";
    let db = database(&inner, ACTION).await?;
    let tx = Tx::open(&db, true, ACTION)?;
    let sessions = tx.store(SESSIONS, ACTION)?;
    let messages = tx.store(MESSAGES, ACTION)?;
    // A missing session is an error, not a silent no-op; unless a first
    // attempt deleted it.
    let found = !request(sessions.get(&id.as_str().into()))
        .await
        .map_err(|e| storage_error(ACTION, &e))?
        .is_undefined();
    match delete_landed(found, retry) {
        Landed::No => {}
        Landed::Yes => {
            tx.done();
            inner.forget(&id);
            return Ok(JsValue::UNDEFINED);
        }
        Landed::Other => return Err(super::records::no_session(ACTION, &id)),
    }
    sessions
        .delete(&id.as_str().into())
        .map_err(|e| storage_error(ACTION, &e))?;
    let range = session_range(&id)?;
    messages
        .delete(&range)
        .map_err(|e| storage_error(ACTION, &e))?;
    tx.commit(ACTION).await?;
    inner.forget(&id);
    Ok(JsValue::UNDEFINED)
}
