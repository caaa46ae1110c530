//! `fork(sessionId, atIndex, { summary?, id?, title? })`: a new session
//! holding copies of the source's first `atIndex` records, then the
//! `branchSummary` when given; a `ConflictError` when another store changed
//! the source since this one read it. Read and write are one transaction (strict
//! durability: `core::storage::save_plan::durability`); the two sessions
//! share no record, so deleting either leaves the other whole.

use super::changes::{announce, Change};
use super::connection::{database, retrying};
use super::load::flatten;
use super::locks::exclusive;
use super::new_session::{landed, write, Written};
use super::records::{get, public_meta, session_range, store_error};
use super::records::{thrown, unstorable, Tx};
use super::schema::{MESSAGES, SESSIONS};
use super::{field, string_arg, Inner};
use crate::js::errors::describe;
use crate::js::values::Opt;
use crate::session_file::fresh_id;
use agent_compaction_core::storage::arguments::{
    fork_index, fork_options, fork_summary, fork_summary_unstorable, fork_within,
};
use agent_compaction_core::storage::connection::Landed;
use agent_compaction_core::storage::error::StoreError;
use agent_compaction_core::storage::meta::fork_seed;
use agent_compaction_core::storage::save_flow::check_seen;
use agent_compaction_core::storage::save_plan::{durability, WriteKind};
use js_sys::Array;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

const ACTION: &str = "SessionStore.fork";

pub async fn fork(
    inner: Rc<Inner>,
    id: JsValue,
    at: JsValue,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    let id = string_arg(&id, "sessionId")?;
    let at = fork_index(at.as_f64(), || describe(&at)).map_err(thrown)?;
    let options = Opt(options);
    let options = fork_options(&options, |key| field(&options, key)).map_err(thrown)?;
    let summary = options.summary.map(summary_option).transpose()?;
    let new_id = (options.id).unwrap_or_else(|| fresh_id(js_sys::Date::now()));
    let (source, target, title) = (id.clone(), new_id.clone(), options.title);
    // What the first attempt wrote, for a second one to recognize.
    let written: Written = Default::default();
    let run = inner.clone();
    let body = retrying(inner.clone(), ACTION, true, move |retry| {
        let (inner, source, target) = (run.clone(), source.clone(), target.clone());
        let (summary, title, written) = (summary.clone(), title.clone(), written.clone());
        Box::pin(async move {
            fork_locked(&inner, &source, at, summary, target, title, retry, &written).await
        })
    });
    let meta = exclusive(&inner, &id, ACTION, body).await?;
    inner.forget(&new_id);
    let revision = get(&meta, "revision").as_f64();
    announce(&inner, Change::Forked, &new_id, revision, Some(&id));
    Ok(meta)
}

/// Copies `id`'s first `at` messages and `summary` into the new session
/// `new_id` (its title `title`, or made from the source's).
#[allow(clippy::too_many_arguments)]
async fn fork_locked(
    inner: &Rc<Inner>,
    id: &str,
    at: u32,
    summary: Option<JsValue>,
    new_id: String,
    title: Option<String>,
    retry: bool,
    written: &Written,
) -> Result<JsValue, JsValue> {
    let db = database(inner, ACTION).await?;
    let tx = Tx::writing(&db, durability(WriteKind::WholeSession), ACTION)?;
    let sessions = tx.store(SESSIONS)?;
    let source = Opt(tx.session(&sessions, id).await?);
    // `atIndex` counts the messages this store's caller saw: none of them
    // may have moved since (core::storage::save_flow::check_seen).
    let stored = get(&source.0, "revision").as_f64().unwrap_or(0.0);
    let seen = inner.sessions.borrow().viewed(id);
    check_seen(ACTION, id, stored, seen).map_err(store_error)?;
    let count = get(&source.0, "messageCount").as_f64().unwrap_or(0.0);
    fork_within(id, at, count).map_err(thrown)?;
    let existing = tx.read(sessions.get(&new_id.as_str().into())).await?;
    if !existing.is_undefined() {
        // A second attempt finding the fork its first one committed.
        let first = written.borrow().clone();
        if first.is_some_and(|(_, record)| landed(&existing, &record, retry) == Landed::Yes) {
            return Ok(public_meta(&existing));
        }
        let exists = StoreError::SessionExists {
            action: ACTION,
            id: new_id,
        };
        return Err(store_error(exists));
    }
    // getAll's count 0 means "all": ask only for a non-empty prefix. A
    // record holds one message or more (a pack): the first `at` records
    // hold the first `at` messages.
    let messages: Array = if at >= 1 {
        let range = session_range(id, &JsValue::NULL)?;
        let values = tx
            .read(tx.store(MESSAGES)?.get_all_with_key_and_limit(&range, at))
            .await?;
        let (messages, _, _) = flatten(&Array::of2(&values, &Array::new()), 0);
        messages.slice(0, at)
    } else {
        Array::new()
    };
    if let Some(summary) = summary {
        messages.push(&summary);
    }
    let now = js_sys::Date::now();
    let seed = fork_seed(new_id, title, |key| field(&source, key), now);
    write(&db, tx, &seed, &messages, written, ACTION).await
}

/// `options.summary` (given): a storable `branchSummary` message
/// (`core::storage::arguments::fork_summary`).
fn summary_option(value: Opt) -> Result<JsValue, JsValue> {
    fork_summary(&value, |key| field(&value, key)).map_err(thrown)?;
    let value = value.0;
    if let Some((_, path, what)) = unstorable(&Array::of1(&value), &[0]) {
        return Err(thrown(fork_summary_unstorable(&path, &what)));
    }
    Ok(value)
}
