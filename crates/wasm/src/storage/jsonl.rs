//! `exportJsonl` / `importJsonl`: a stored session as a pi session file and
//! back, through the package's own `messagesToPiSession` /
//! `piSessionToMessages` (`core::session_file`): version 3 out, versions
//! 1–3 in.

use super::changes::{announce, Change};
use super::connection::{database, retrying};
use super::load::read;
use super::locks::exclusive;
use super::new_session::{landed, write, Written};
use super::records::{get, public_meta, thrown, Tx};
use super::save::ToStore;
use super::schema::SESSIONS;
use super::{field, string_arg, Inner};
use crate::js::errors::input_error;
use crate::js::message_access::messages_array;
use crate::js::values::{shape, Opt};
use crate::session_file::fresh_id;
use crate::session_file::{messages_to_pi_session, pi_session_to_messages};
use agent_compaction_core::storage::arguments::{import_options, import_text};
use agent_compaction_core::storage::connection::Landed;
use agent_compaction_core::storage::meta::{
    export_options, import_seed, FileHeader, Seed, IMPORT_TITLE_MAX,
};
use agent_compaction_core::storage::save_flow::preview_of;
use agent_compaction_core::storage::save_plan::{durability, WriteKind};
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

pub async fn export(inner: Rc<Inner>, id: JsValue) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.exportJsonl";
    let id = string_arg(&id, "sessionId")?;
    let run = inner.clone();
    retrying(inner.clone(), ACTION, false, move |_| {
        let (inner, id) = (run.clone(), id.clone());
        Box::pin(async move {
            // One read transaction: the meta and the records agree.
            let stored = read(&inner, &id, false, ACTION).await?.known;
            let record = |key| get(&stored.record, key);
            let options = export_options(
                &id,
                record("title").as_string(),
                record("model").as_string(),
                record("createdAt").as_f64(),
            );
            let options = shape(options.shape());
            messages_to_pi_session(stored.messages.into(), options)
                .map(JsValue::from)
                .map_err(|e| prefixed(ACTION, e))
        })
    })
    .await
}

pub async fn import(inner: Rc<Inner>, text: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.importJsonl";
    if !text.is_string() {
        return Err(thrown(import_text(&crate::js::errors::describe(&text))));
    }
    let options = Opt(options);
    let title_option = import_options(&options, |key| field(&options, key)).map_err(thrown)?;
    let parsed = pi_session_to_messages(text).map_err(|e| prefixed(ACTION, e))?;
    let messages: Array = get(&parsed, "messages").unchecked_into();
    let array = messages_array(&messages).map_err(input_error)?;
    let session = get(&parsed, "session");
    let model = get(&session, "model");
    let string = |o: &JsValue, key| get(o, key).as_string();
    let file = FileHeader {
        id: string(&session, "id"),
        title: string(&session, "title"),
        provider: string(&model, "provider"),
        model_id: string(&model, "modelId"),
        timestamp: string(&session, "timestamp").map(|iso| js_sys::Date::parse(&iso)),
    };
    let preview = preview_of(&mut ToStore(array), IMPORT_TITLE_MAX);
    let now = js_sys::Date::now();
    let seed = import_seed(file, title_option, &preview, now, || fresh_id(now));
    let wanted = seed.id.clone();
    let locked = inner.clone();
    // What the first attempt wrote, for a second one to recognize.
    let written: Written = Default::default();
    let body = retrying(inner.clone(), ACTION, true, move |retry| {
        let (inner, seed) = (locked.clone(), seed.clone());
        let (messages, written) = (messages.clone(), written.clone());
        Box::pin(async move { import_locked(&inner, seed, &messages, retry, &written).await })
    });
    let meta = exclusive(&inner, &wanted, ACTION, body).await?;
    let id = get(&meta, "id").as_string().unwrap_or_default();
    inner.forget(&id);
    let revision = get(&meta, "revision").as_f64();
    announce(&inner, Change::Imported, &id, revision, None);
    Ok(meta)
}

async fn import_locked(
    inner: &Rc<Inner>,
    mut seed: Seed,
    messages: &Array,
    retry: bool,
    written: &Written,
) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.importJsonl";
    let db = database(inner, ACTION).await?;
    let tx = Tx::writing(&db, durability(WriteKind::WholeSession), ACTION)?;
    let sessions = tx.store(SESSIONS)?;
    // A second attempt: the session the first one wrote, if it committed.
    let first = written.borrow().clone();
    if let (Some((id, record)), true) = (first, retry) {
        let stored = tx.read(sessions.get(&id.as_str().into())).await?;
        if landed(&stored, &record, retry) == Landed::Yes {
            return Ok(public_meta(&stored));
        }
    }
    if !tx
        .read(sessions.get(&seed.id.as_str().into()))
        .await?
        .is_undefined()
    {
        // The file was imported before (or is an export of a session
        // here): a new session beside it, never an overwrite.
        seed.id = fresh_id(js_sys::Date::now());
    }
    write(&db, tx, &seed, messages, written, ACTION).await
}

/// The error with `action: ` in front of its message, same class.
fn prefixed(action: &str, e: JsValue) -> JsValue {
    if let Some(error) = e.dyn_ref::<js_sys::Error>() {
        let message: String = error.message().into();
        error.set_message(&format!("{action}: {message}"));
    }
    e
}
