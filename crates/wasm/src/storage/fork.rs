//! `fork(sessionId, atIndex, { summary?, id?, title? })`: a new session
//! holding copies of the source's first `atIndex` records, then the
//! `branchSummary` when given. Read and write are one transaction (strict
//! durability: `core::storage::save_plan::durability`); the two sessions
//! share no record, so deleting either leaves the other whole.

use super::changes::{announce, Change};
use super::connection::{database, retrying};
use super::jsonl::{landed, Written};
use super::load::flatten;
use super::locks::exclusive;
use super::new_session::{meta_for, put};
use super::records::{check_storable, get, public_meta, request, session_range, session_record};
use super::records::{storage_error, store_error, thrown, Tx};
use super::schema::{MESSAGES, SESSIONS};
use super::{optional_string, options_arg, string_arg, Inner};
use crate::js::errors::describe;
use crate::session_file::fresh_id;
use agent_compaction_core::storage::arguments::{
    fork_index, fork_summary, fork_summary_unstorable, fork_within, SummaryFacts,
};
use agent_compaction_core::storage::connection::Landed;
use agent_compaction_core::storage::error::StoreError;
use agent_compaction_core::storage::meta::{fork_title, Seed};
use agent_compaction_core::storage::save_plan::{durability, WriteKind};
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

const ACTION: &str = "SessionStore.fork";

pub async fn fork(
    inner: Rc<Inner>,
    id: JsValue,
    at: JsValue,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    let id = string_arg(&id, "sessionId")?;
    let at = fork_index(at.as_f64(), || describe(&at)).map_err(thrown)?;
    let options = options_arg(&options, "options")?;
    let summary = summary_option(&get(&options, "summary"))?;
    let new_id = optional_string(&options, "id")?.unwrap_or_else(|| fresh_id(js_sys::Date::now()));
    let title = optional_string(&options, "title")?;
    let (source, target) = (id.clone(), new_id.clone());
    // What the first attempt wrote, for a second one to recognize.
    let written: Written = Default::default();
    let run = inner.clone();
    let body = retrying(inner.clone(), ACTION, true, move |retry| {
        let (inner, source, target) = (run.clone(), source.clone(), target.clone());
        let (summary, title, written) = (summary.clone(), title.clone(), written.clone());
        Box::pin(async move {
            fork_locked(
                &inner, &source, at, summary, &target, title, retry, &written,
            )
            .await
        })
    });
    let meta = exclusive(&inner, &id, ACTION, body).await?;
    inner.forget(&new_id);
    announce(
        &inner,
        Change::Forked,
        &new_id,
        get(&meta, "revision").as_f64(),
        Some(&id),
    );
    Ok(meta)
}

#[allow(clippy::too_many_arguments)]
async fn fork_locked(
    inner: &Rc<Inner>,
    id: &str,
    at: u32,
    summary: Option<JsValue>,
    new_id: &str,
    title: Option<String>,
    retry: bool,
    written: &Written,
) -> Result<JsValue, JsValue> {
    let db = database(inner, ACTION).await?;
    let tx = Tx::writing(&db, durability(WriteKind::WholeSession), ACTION)?;
    let sessions = tx.store(SESSIONS, ACTION)?;
    let records = tx.store(MESSAGES, ACTION)?;
    let source = session_record(&sessions, ACTION, id).await?;
    let count = get(&source, "messageCount").as_f64().unwrap_or(0.0);
    fork_within(id, at, count).map_err(thrown)?;
    let existing = request(sessions.get(&new_id.into()))
        .await
        .map_err(|e| storage_error(ACTION, &e))?;
    if !existing.is_undefined() {
        // A second attempt finding the fork its first one committed.
        let first = written.borrow().clone();
        if let Some((_, record)) = first {
            if landed(&existing, &record, retry) == Landed::Yes {
                return Ok(public_meta(&existing));
            }
        }
        return Err(store_error(StoreError::SessionExists {
            action: ACTION,
            id: new_id.to_owned(),
        }));
    }
    // getAll's count 0 means "all": ask only for a non-empty prefix. A
    // record holds one message or more (a pack): the first `at` records
    // hold the first `at` messages.
    let messages: Array = if at >= 1 {
        let values = request(records.get_all_with_key_and_limit(&session_range(id)?.into(), at))
            .await
            .map_err(|e| storage_error(ACTION, &e))?;
        let (messages, _, _) = flatten(&Array::of2(&values, &Array::new()), 0);
        messages.slice(0, at)
    } else {
        Array::new()
    };
    if let Some(summary) = summary {
        messages.push(&summary);
    }
    let title =
        title.unwrap_or_else(|| fork_title(&get(&source, "title").as_string().unwrap_or_default()));
    let seed = Seed {
        id: new_id.to_owned(),
        title,
        created_at: js_sys::Date::now(),
        model: get(&source, "model").as_string(),
    };
    let (meta, packs) = meta_for(&seed, &messages)?;
    *written.borrow_mut() = Some((new_id.to_owned(), meta.clone()));
    put(
        &sessions, &records, new_id, &meta, &messages, &packs, ACTION,
    )?;
    if let Err(e) = tx.commit(ACTION).await {
        // What the abort failed to undo goes (core::storage::repair).
        if super::repair::after(&e) {
            super::repair::remove_unwritten(&db, new_id, ACTION).await;
        }
        return Err(e);
    }
    Ok(public_meta(&meta))
}

/// `options.summary`: absent, or a storable `branchSummary` message
/// (`core::storage::arguments::fork_summary`).
fn summary_option(value: &JsValue) -> Result<Option<JsValue>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let (role, text) = (get(value, "role"), get(value, "summary"));
    let (described, role_of, text_of) = (describe(value), describe(&role), describe(&text));
    let role = role.as_string();
    let facts = if !value.is_object() {
        SummaryFacts::NotObject(&described)
    } else if role.as_deref() != Some("branchSummary") {
        SummaryFacts::Role(role.as_deref().ok_or(role_of.as_str()))
    } else {
        SummaryFacts::Summary(if text.is_string() {
            Ok(())
        } else {
            Err(&text_of)
        })
    };
    fork_summary(facts).map_err(thrown)?;
    let problem = check_storable(&Array::of1(value), &[0]);
    if !problem.is_null() {
        let p: Array = problem.unchecked_into();
        let text = |i| p.get(i).as_string().unwrap_or_default();
        return Err(thrown(fork_summary_unstorable(&text(1), &text(2))));
    }
    Ok(Some(value.clone()))
}
