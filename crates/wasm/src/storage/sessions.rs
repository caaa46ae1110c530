//! Session metadata: create, list, rename, delete.

use super::changes::{announce, Change};
use super::connection::{database, retrying};
use super::locks::exclusive;
use super::meta;
use super::new_session::landed;
use super::records::{get, merge_meta, no_session, public_meta, session_range, store_error, text};
use super::records::{thrown, Tx};
use super::schema::{BY_LAST_MODIFIED, HISTORY, MESSAGES, SESSIONS};
use super::{field, string_arg, Inner, Known};
use crate::js::values::{shape, Opt};
use crate::session_file::fresh_id;
use agent_compaction_core::storage::arguments::create_options;
use agent_compaction_core::storage::connection::{delete_landed, Landed};
use agent_compaction_core::storage::error::StoreError;
use agent_compaction_core::storage::meta::{new_session, Renamed};
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = valuesDescending)]
    fn values_descending(store: &web_sys::IdbObjectStore, index: &str) -> js_sys::Promise;
}

pub async fn create(inner: Rc<Inner>, options: JsValue) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.createSession";
    let options = Opt(options);
    let options = create_options(&options, |key| field(&options, key)).map_err(thrown)?;
    let now = js_sys::Date::now();
    let id = options.id.unwrap_or_else(|| fresh_id(now));
    let record = meta::record(&new_session(id.clone(), options.title, options.model, now));
    let (run, new_id, new_record) = (inner.clone(), id.clone(), record.clone());
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
    let tx = Tx::sessions(&database(inner, ACTION).await?, true, ACTION)?;
    let store = tx.store(SESSIONS)?;
    if retry && landed(&tx.read(store.get(&id.into())).await?, record, retry) == Landed::Yes {
        tx.done();
        return Ok(JsValue::UNDEFINED);
    }
    if let Err(e) = super::records::request(store.add(record)).await {
        let added = StoreError::from_add(ACTION, id, &text(&e, "name"), &text(&e, "message"));
        return Err(store_error(added));
    }
    tx.commit().await?;
    Ok(JsValue::UNDEFINED)
}

pub async fn list(inner: Rc<Inner>) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.list";
    let run = inner.clone();
    retrying(inner, ACTION, false, move |_| {
        let inner = run.clone();
        Box::pin(async move {
            let tx = Tx::sessions(&database(&inner, ACTION).await?, false, ACTION)?;
            // Newest first: the `lastModified` index, read backwards.
            let all = values_descending(&tx.store(SESSIONS)?, BY_LAST_MODIFIED);
            let all: Array = JsFuture::from(all)
                .await
                .map_err(|e| tx.fail(e))?
                .unchecked_into();
            tx.done();
            Ok(all
                .iter()
                .map(|r| public_meta(&r))
                .collect::<Array>()
                .into())
        })
    })
    .await
}

pub async fn rename(inner: Rc<Inner>, id: JsValue, title: JsValue) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.rename";
    let id = string_arg(&id, "sessionId")?;
    let title = string_arg(&title, "title")?;
    let (run, renamed) = (inner.clone(), id.clone());
    // The same title again on a second attempt: no harm.
    let body = retrying(inner.clone(), ACTION, true, move |_| {
        let (inner, id, title) = (run.clone(), renamed.clone(), title.clone());
        Box::pin(async move {
            let tx = Tx::sessions(&database(&inner, ACTION).await?, true, ACTION)?;
            let store = tx.store(SESSIONS)?;
            let stored = tx.session(&store, &id).await?;
            let before = get(&stored, "lastModified").as_f64();
            let renamed = Renamed::new(title, before, js_sys::Date::now());
            let record = merge_meta(&stored, &shape(renamed.shape()), &JsValue::UNDEFINED);
            store.put(&record).map_err(|e| tx.fail(e))?;
            tx.commit().await?;
            Ok(public_meta(&record))
        })
    });
    let meta = exclusive(&inner, &id, ACTION, body).await?;
    let revision = get(&meta, "revision").as_f64();
    announce(&inner, Change::Renamed, &id, revision, None);
    Ok(meta)
}

pub async fn delete(inner: Rc<Inner>, id: JsValue) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.delete";
    let id = string_arg(&id, "sessionId")?;
    let (run, deleted) = (inner.clone(), id.clone());
    let body = retrying(inner.clone(), ACTION, true, move |retry| {
        Box::pin(delete_locked(run.clone(), deleted.clone(), retry))
    });
    exclusive(&inner, &id, ACTION, body).await?;
    announce(&inner, Change::Deleted, &id, None, None);
    Ok(JsValue::UNDEFINED)
}

async fn delete_locked(inner: Rc<Inner>, id: String, retry: bool) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.delete";
    let tx = Tx::open(&database(&inner, ACTION).await?, true, ACTION)?;
    let sessions = tx.store(SESSIONS)?;
    // A missing session is an error, not a silent no-op; unless a first
    // attempt deleted it.
    let found = !tx
        .read(sessions.get(&id.as_str().into()))
        .await?
        .is_undefined();
    match delete_landed(found, retry) {
        Landed::No => {}
        Landed::Yes => {
            tx.done();
            inner.sessions.borrow_mut().deleted(&id);
            return Ok(JsValue::UNDEFINED);
        }
        Landed::Other => return Err(no_session(ACTION, &id)),
    }
    sessions
        .delete(&id.as_str().into())
        .map_err(|e| tx.fail(e))?;
    let range = session_range(&id, &JsValue::NULL)?;
    tx.store(MESSAGES)?.delete(&range).map_err(|e| tx.fail(e))?;
    tx.store(HISTORY)?.delete(&range).map_err(|e| tx.fail(e))?;
    tx.commit().await?;
    inner.sessions.borrow_mut().deleted(&id);
    Ok(JsValue::UNDEFINED)
}
