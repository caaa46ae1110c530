//! The conversation engine at the boundary (`core::conversation`): the
//! Compactor answers what the model sees of an array — the last summary,
//! the pinned messages re-sent after it, everything after it, cleared tool
//! outputs as their placeholders, failed attempts left out — so that an
//! adapter without pi's agent (the AI SDK's) converts and sends, and keeps
//! no books of its own. The order comes from the Compactor's per-turn index
//! (last summary, pinned messages); this module reads the few facts the
//! core asks of the messages in the view and carries its steps out.

use crate::clearing::{id_units, placeholder_for, read_marker};
use crate::compactor::Compactor;
use crate::js::errors::type_error;
use crate::js::message_access::{get, message_and_role, message_at, JsArray};
use agent_compaction_core::compaction::clearing::ClearedOutputs;
use agent_compaction_core::conversation::view::{is_failed_attempt, model_steps, Fact, Step};
use agent_compaction_core::conversation::{after_run, Flow, RunEnd};
use agent_compaction_core::error::InputError;
use agent_compaction_core::message::pinned::model_view;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::overflow::StopReason;
use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// What the core's view needs of the message at `index`.
fn fact_of(array: &JsArray, index: usize) -> Result<Fact<Vec<u16>>, InputError> {
    let (message, role) = message_and_role(array, index)?;
    let path = || array.path(index);
    Ok(match role {
        Role::Assistant => {
            let stop = get(&message, "stopReason", || path().field("stopReason"))?;
            match stop.as_string() {
                Some(s) if is_failed_attempt(&s) => Fact::Failed,
                _ => Fact::Message,
            }
        }
        Role::ToolResult => {
            let id = get(&message, "toolCallId", || path().field("toolCallId"))?;
            Fact::ToolResult(id.dyn_ref::<JsString>().map(id_units))
        }
        Role::ToolOutputCleared => Fact::Marker(read_marker(&message, index)?.0),
        _ => Fact::Message,
    })
}

/// The tool result at `result` as the marker at `marker` clears it: the
/// placeholder the Compactor's `convertToLlm` sends.
fn placeholder(array: &JsArray, result: usize, marker: usize) -> Result<JsValue, InputError> {
    let (ids, tokens) = read_marker(&message_at(array, marker)?, marker)?;
    let mut cleared = ClearedOutputs::default();
    cleared.add_marker(result + 1, ids, tokens);
    let message = message_at(array, result)?;
    Ok(placeholder_for(&message, result, &cleared)?.unwrap_or(message))
}

/// The facts of the messages the view has asked about, by array index,
/// kept while the array only grows (the tracked generation is unchanged):
/// a step reads the facts of its new messages only.
#[derive(Default)]
pub struct ViewFacts {
    generation: u32,
    facts: Vec<Option<Fact<Vec<u16>>>>,
    /// The placeholders made so far, by result index (with their marker's
    /// index): the same object on every call, so that a caller's cache
    /// keyed on objects keeps working.
    placeholders: Vec<Option<(usize, JsValue)>>,
    /// The last view's steps, for the array length, last summary and
    /// number of re-sent pinned messages it was made for: while the array
    /// only grows by messages that are no clearing marker, the next view is
    /// these steps plus the new messages (a marker clears only what comes
    /// before it), so a step costs what is new.
    steps: Vec<Step>,
    steps_for: Option<(usize, Option<usize>, usize)>,
}

impl ViewFacts {
    /// In step with an array of `len` messages at `generation`.
    pub(crate) fn keep(&mut self, generation: u32, len: usize) {
        if generation != self.generation || len < self.facts.len() {
            self.facts.clear();
            self.placeholders.clear();
            self.steps_for = None;
            self.generation = generation;
        }
        self.facts.resize(len, None);
        self.placeholders.resize(len, None);
    }

    /// Reads the facts of the messages at `indices` not read yet.
    fn fill(
        &mut self,
        array: &JsArray,
        indices: impl Iterator<Item = usize>,
    ) -> Result<(), InputError> {
        for i in indices {
            if self.facts[i].is_none() {
                self.facts[i] = Some(fact_of(array, i)?);
            }
        }
        Ok(())
    }
}

#[wasm_bindgen]
impl Compactor {
    /// The agent messages the model is sent for `messages` (the core's view).
    #[wasm_bindgen(js_name = modelContext)]
    pub fn model_context(&self, messages: JsValue) -> Result<Array, JsValue> {
        self.with_view(&messages, |array, summary, resent, view| {
            let len = array.len() as usize;
            let extended = match view.steps_for {
                Some((from, s, r)) if s == summary && r == resent.len() && from <= len => {
                    view.fill(array, from..len).map_err(type_error)?;
                    let new = &view.facts[from..len];
                    if new.iter().any(|f| matches!(f, Some(Fact::Marker(_)))) {
                        false
                    } else {
                        let sent =
                            (from..len).filter(|&i| !matches!(view.facts[i], Some(Fact::Failed)));
                        view.steps.extend(sent.map(Step::Send));
                        true
                    }
                }
                _ => false,
            };
            if !extended {
                view.fill(array, model_view(len, summary, resent))
                    .map_err(type_error)?;
                let facts = &view.facts;
                view.steps = model_steps(len, summary, resent, |i| {
                    facts[i].as_ref().unwrap_or(&Fact::Message)
                });
            }
            view.steps_for = Some((len, summary, resent.len()));
            out_of(array, summary, resent, &view.steps, &mut view.placeholders).map_err(type_error)
        })?
    }
}

/// The steps carried out: the caller's array sliced where every message
/// is sent as it is, the messages one by one elsewhere.
fn out_of(
    array: &JsArray,
    summary: Option<usize>,
    resent: &[usize],
    steps: &[Step],
    made: &mut [Option<(usize, JsValue)>],
) -> Result<Array, InputError> {
    let len = array.len() as usize;
    let start = summary.unwrap_or(0);
    let plain = steps.len() == len - start + resent.len() * usize::from(summary.is_some());
    if plain && steps.iter().all(|s| matches!(s, Step::Send(_))) {
        return crate::pinned::view(array, start, if summary.is_some() { resent } else { &[] });
    }
    // Runs of consecutive messages go as slices of the caller's array, and
    // are joined with the placeholders by one `concat`: a few crossings per
    // call instead of one per message.
    let parts = Array::new();
    let mut run: Option<(usize, usize)> = None;
    let source = array.as_array();
    for step in steps {
        match *step {
            Step::Send(i) => match run {
                Some((from, to)) if to == i => run = Some((from, i + 1)),
                _ => {
                    if let Some((from, to)) = run {
                        parts.push(&source.slice(from as u32, to as u32));
                    }
                    run = Some((i, i + 1));
                }
            },
            Step::Placeholder { result, marker } => {
                if let Some((from, to)) = run.take() {
                    parts.push(&source.slice(from as u32, to as u32));
                }
                let p = match &made[result] {
                    Some((m, p)) if *m == marker => p.clone(),
                    _ => {
                        let p = placeholder(array, result, marker)?;
                        made[result] = Some((marker, p.clone()));
                        p
                    }
                };
                // Wrapped, so that `concat` adds it as one element whatever it is.
                parts.push(&Array::of1(&p));
            }
        }
    }
    if let Some((from, to)) = run {
        parts.push(&source.slice(from as u32, to as u32));
    }
    let concat = js_sys::Reflect::get(&Array::new(), &"concat".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    if let Some(joined) = concat.and_then(|f| f.apply(&Array::new(), &parts).ok()) {
        return Ok(joined.unchecked_into());
    }
    // `Array.prototype.concat` replaced by the page with something that
    // throws: the parts joined one element at a time.
    let out = Array::new();
    for part in parts.iter() {
        for m in part.unchecked_into::<Array>().iter() {
            out.push(&m);
        }
    }
    Ok(out)
}

/// The after-run rule's answer as the adapter reads it.
fn flow_name(flow: Flow) -> &'static str {
    match flow {
        Flow::Nothing => "nothing",
        Flow::OverflowRetry => "overflowRetry",
        Flow::RecoveryFailed => "recoveryFailed",
        Flow::SilentOverflow => "silentOverflow",
        Flow::Threshold => "threshold",
    }
}

#[wasm_bindgen]
impl Compactor {
    /// What to do after a call made without pi's agent (the core's
    /// after-run rule): `{ overflow }` whether the call failed with a
    /// context overflow, `{ retried }` whether this run already retried one.
    #[wasm_bindgen(js_name = afterRun)]
    pub fn after_run_js(&self, messages: JsValue, facts: JsValue) -> Result<String, JsValue> {
        let flag = |key: &str| js_sys::Reflect::get(&facts, &key.into()).map(|v| v.is_truthy());
        let overflow = flag("overflow")?;
        let retried = flag("retried")?;
        let end = RunEnd {
            stop_reason: if overflow {
                StopReason::Error
            } else {
                StopReason::Stop
            },
            overflow,
            same_model: true,
            before_last_summary: false,
        };
        let mut failure = None;
        let flow = after_run(&end, self.enabled(), retried, || {
            self.needs_compaction(messages.clone()).unwrap_or_else(|e| {
                failure = Some(e);
                false
            })
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(flow_name(flow).to_string()),
        }
    }
}
