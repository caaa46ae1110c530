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
use super::records::{storage_error, store_error, Tx};
use super::schema::{MESSAGES, SESSIONS};
use super::sessions::fresh_id;
use super::{options_arg, string_arg, Inner};
use crate::js::errors::describe;
use agent_compaction_core::storage::connection::Landed;
use agent_compaction_core::storage::error::StoreError;
use agent_compaction_core::storage::save_plan::{durability, WriteKind};
use agent_compaction_core::storage::session_meta::{fork_title, Seed};
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
    let at = index_arg(&at)?;
    let options = options_arg(&options, "options")?;
    let summary = summary_option(&get(&options, "summary"))?;
    let optional = |key: &str| -> Result<Option<String>, JsValue> {
        match get(&options, key) {
            v if v.is_undefined() || v.is_null() => Ok(None),
            v => string_arg(&v, &format!("options.{key}")).map(Some),
        }
    };
    let new_id = optional("id")?.unwrap_or_else(fresh_id);
    let title = optional("title")?;
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
    at: f64,
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
    if at > count {
        return Err(js_sys::RangeError::new(&format!(
            "{ACTION}: atIndex {} is past the end of session \"{id}\", which has {} messages \
             (atIndex must be in 0..={})",
            number(at),
            number(count),
            number(count)
        ))
        .into());
    }
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
    let messages: Array = if at >= 1.0 {
        let values =
            request(records.get_all_with_key_and_limit(&session_range(id)?.into(), at as u32))
                .await
                .map_err(|e| storage_error(ACTION, &e))?;
        let (messages, _, _) = flatten(&Array::of2(&values, &Array::new()), 0);
        messages.slice(0, at as u32)
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

/// `atIndex`: a non-negative integer (its upper bound is checked against
/// the stored session).
fn index_arg(at: &JsValue) -> Result<f64, JsValue> {
    let Some(x) = at.as_f64() else {
        return Err(js_sys::TypeError::new(&format!(
            "{ACTION}: atIndex must be a number, got {}",
            describe(at)
        ))
        .into());
    };
    if x.fract() != 0.0 || x < 0.0 || !x.is_finite() || x > u32::MAX as f64 {
        return Err(js_sys::RangeError::new(&format!(
            "{ACTION}: atIndex must be a whole number from 0 to the session's message count, got {}",
            number(x)
        ))
        .into());
    }
    Ok(x)
}

/// `options.summary`: absent, or a storable `branchSummary` message.
fn summary_option(value: &JsValue) -> Result<Option<JsValue>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let wrong = |what: String| -> JsValue {
        js_sys::TypeError::new(&format!(
            "{ACTION}: options.summary must be a branchSummary message \
             ({{ role: \"branchSummary\", summary: string, timestamp: number }}), {what}"
        ))
        .into()
    };
    if !value.is_object() {
        return Err(wrong(format!("got {}", describe(value))));
    }
    let role = get(value, "role");
    if role.as_string().as_deref() != Some("branchSummary") {
        return Err(wrong(match role.as_string() {
            Some(r) => format!("got role \"{r}\""),
            None => format!("got role {}", describe(&role)),
        }));
    }
    let text = get(value, "summary");
    if !text.is_string() {
        return Err(wrong(format!("got summary {}", describe(&text))));
    }
    let problem = check_storable(&Array::of1(value), &[0]);
    if !problem.is_null() {
        let p: Array = problem.unchecked_into();
        return Err(js_sys::TypeError::new(&format!(
            "{ACTION}: options.summary{} {}: a message must be plain data to be stored",
            p.get(1).as_string().unwrap_or_default(),
            p.get(2).as_string().unwrap_or_default()
        ))
        .into());
    }
    Ok(Some(value.clone()))
}

fn number(x: f64) -> String {
    agent_compaction_core::js::number::number_to_string(x)
}
