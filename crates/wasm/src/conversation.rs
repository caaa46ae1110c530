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
use crate::js::errors::input_error;
use crate::js::errors::unreadable;
use crate::js::message_access::{get, message_and_role, message_at, messages_array, JsArray};
use crate::js::values::Opt;
use agent_compaction_core::compaction::clearing::ClearedOutputs;
use agent_compaction_core::conversation::view::{
    self, is_failed_attempt, Change, Fact, ModelView, Part, Step,
};
use agent_compaction_core::conversation::{after_run, Flow, RunEnd};
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::overflow::StopReason;
use js_sys::{Array, JsString};
use std::thread::LocalKey;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = viewHeld, catch)]
    fn view_held(since: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = viewChange)]
    fn view_change(view: u32, kept: u32, added: &Array) -> JsValue;
    #[wasm_bindgen(js_name = runFacts, catch)]
    fn run_facts(facts: &JsValue) -> Result<u32, JsValue>;
}

/// What the core's view needs of the message at `index`.
pub(crate) fn fact_of(array: &JsArray, index: usize) -> Result<Fact<Vec<u16>>, InputError> {
    let (message, role) = message_and_role(array, index)?;
    let field = |key: &'static LocalKey<JsValue>, name: &'static str| {
        key.with(|key| js_sys::Reflect::get(&message, key))
            .map_err(|thrown| unreadable(array.path(index).field(name), &thrown))
    };
    Ok(match role {
        Role::Assistant => match field(&STOP_REASON, "stopReason")?.as_string() {
            Some(s) if is_failed_attempt(&s) => Fact::Failed,
            _ => Fact::Message,
        },
        Role::ToolResult => {
            let id = field(&TOOL_CALL_ID, "toolCallId")?;
            Fact::ToolResult(id.dyn_ref::<JsString>().map(id_units))
        }
        Role::ToolOutputCleared => Fact::Marker(read_marker(&message, index)?.0),
        _ => Fact::Message,
    })
}

/// The tool result at `result` as the marker at `marker` clears it: the
/// placeholder the Compactor's `convertToLlm` sends.
pub(crate) fn placeholder(
    array: &JsArray,
    result: usize,
    marker: usize,
) -> Result<JsValue, InputError> {
    let (ids, tokens) = read_marker(&message_at(array, marker)?, marker)?;
    let mut cleared = ClearedOutputs::default();
    cleared.add_marker(result + 1, ids, tokens);
    let message = message_at(array, result)?;
    Ok(placeholder_for(&message, result, &cleared)?.unwrap_or(message))
}

/// The model's view of the tracked array, kept while the array only grows
/// (the tracked generation is unchanged): the core's [`ModelView`] (facts
/// read, steps) and the messages of the last view, which callers get
/// copies of, so that a step costs what is new and no caller can change
/// what the next call answers.
#[derive(Default)]
pub struct ViewFacts {
    generation: u32,
    view: ModelView<Vec<u16>>,
    /// The placeholders made so far, by result index (with their marker's
    /// index): the same object on every call, so that a caller's cache
    /// keyed on objects keeps working.
    placeholders: Vec<Option<(usize, JsValue)>>,
    /// The messages of the last view, never handed out.
    messages: Option<Array>,
    /// The last summary as the model is sent it, when that is not the
    /// caller's object (the history note): first in the view.
    pub(crate) head: Option<JsValue>,
}

impl ViewFacts {
    /// In step with an array of `len` messages at `generation`.
    pub(crate) fn keep(&mut self, generation: u32, len: usize) {
        if generation != self.generation || len < self.placeholders.len() {
            self.view.reset();
            self.placeholders.clear();
            self.generation = generation;
        }
        self.placeholders.resize(len, None);
    }

    /// The view of `array` brought up to date (the core decides whether
    /// it grew or is made anew): its messages (not to be handed out).
    fn update(
        &mut self,
        array: &JsArray,
        summary: Option<usize>,
        resent: &[usize],
    ) -> Result<Array, InputError> {
        let len = array.len() as usize;
        let change = self
            .view
            .update(len, summary, resent, |i| fact_of(array, i))?;
        let steps = self.view.steps();
        let made = &mut self.placeholders;
        let messages = match (change, self.messages.take()) {
            (Change::Grew { from }, Some(messages)) => {
                for step in &steps[from..] {
                    messages.push(&message_of(array, *step, made)?);
                }
                messages
            }
            _ => all_of(array, steps, made)?,
        };
        if let (Some(_), Some(head)) = (summary, &self.head) {
            messages.set(0, head.clone());
        }
        Ok(self.messages.insert(messages).clone())
    }
}

impl ViewFacts {
    /// The steps of the view of `array`, brought up to date.
    pub(crate) fn steps(
        &mut self,
        array: &JsArray,
        summary: Option<usize>,
        resent: &[usize],
    ) -> Result<Vec<Step>, InputError> {
        self.update(array, summary, resent)?;
        Ok(self.view.steps().to_vec())
    }
}

#[wasm_bindgen]
impl Compactor {
    /// The agent messages the model is sent for `messages` (the core's
    /// view), as a new array.
    #[wasm_bindgen(js_name = modelContext)]
    pub fn model_context(&self, messages: JsValue) -> Result<Array, JsValue> {
        self.with_view(&messages, |array, summary, resent, view| {
            let out = view.update(array, summary, resent).map_err(input_error)?;
            Ok(out.slice(0, out.length()))
        })?
    }

    /// The model context as a change to what the caller holds of an
    /// earlier answer (`since`: its `view` and how many of its messages):
    /// `{ view, kept, added }`.
    #[wasm_bindgen(js_name = modelContextChange)]
    pub fn model_context_change(
        &self,
        messages: JsValue,
        since: JsValue,
    ) -> Result<JsValue, JsValue> {
        let since = held(&since).map_err(input_error)?;
        self.with_view(&messages, |array, summary, resent, view| {
            let out = view.update(array, summary, resent).map_err(input_error)?;
            let kept = since.map_or(0, |(id, n)| view.view.kept(id, n));
            let added = out.slice(kept as u32, out.length());
            Ok(view_change(view.view.id(), kept as u32, &added))
        })?
    }
}

/// `since` of `modelContextChange`: undefined, or `{ view, length }` with a
/// view id and a count of messages (whole numbers).
fn held(since: &JsValue) -> Result<Option<(u32, usize)>, InputError> {
    view::held(&Opt(since.clone()), || {
        let path = FieldPath::argument("since");
        let fields = view_held(since).map_err(|thrown| unreadable(path, &thrown))?;
        Ok([Opt(fields.get(0)), Opt(fields.get(1))])
    })
}

/// The message a step sends: the caller's message, or the placeholder the
/// marker gives the result (made once).
fn message_of(
    array: &JsArray,
    step: Step,
    made: &mut [Option<(usize, JsValue)>],
) -> Result<JsValue, InputError> {
    match step {
        Step::Send(i) => message_at(array, i),
        Step::Placeholder { result, marker } => match &made[result] {
            Some((m, p)) if *m == marker => Ok(p.clone()),
            _ => {
                let p = placeholder(array, result, marker)?;
                made[result] = Some((marker, p.clone()));
                Ok(p)
            }
        },
    }
}

/// The steps carried out: runs of messages sent as they are go as slices
/// of the caller's array (the whole view one slice when nothing else is
/// in it), joined with the placeholders by one `concat`: a few crossings
/// per call instead of one per message.
fn all_of(
    array: &JsArray,
    steps: &[Step],
    made: &mut [Option<(usize, JsValue)>],
) -> Result<Array, InputError> {
    let parts = view::parts(steps);
    if let [Part::Slice(run)] = &parts[..] {
        return array.slice(run.start as u32, run.end as u32);
    }
    let source = array.as_array();
    let pieces = Array::new();
    for part in parts {
        let piece = match part {
            Part::Slice(run) => source.slice(run.start as u32, run.end as u32),
            // Wrapped, so that `concat` adds it as one element whatever it is.
            Part::Placeholder(step) => Array::of1(&message_of(array, step, made)?),
        };
        pieces.push(&piece);
    }
    let concat = js_sys::Reflect::get(&Array::new(), &"concat".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    if let Some(joined) = concat.and_then(|f| f.apply(&Array::new(), &pieces).ok()) {
        return Ok(joined.unchecked_into());
    }
    // `Array.prototype.concat` replaced by the page with something that
    // throws: the pieces joined one element at a time.
    let out = Array::new();
    for piece in pieces.iter() {
        for m in piece.unchecked_into::<Array>().iter() {
            out.push(&m);
        }
    }
    Ok(out)
}

impl Compactor {
    /// The newest message when it is an assistant message: its stop reason
    /// and whether it is itself a context overflow against the window.
    fn reply(&self, messages: &JsValue) -> Result<Option<(StopReason, bool)>, JsValue> {
        let array = messages_array(messages).map_err(input_error)?;
        let Some(last) = (array.len() as usize).checked_sub(1) else {
            return Ok(None);
        };
        let (message, role) = message_and_role(&array, last).map_err(input_error)?;
        if role != Role::Assistant {
            return Ok(None);
        }
        let stop = get(&message, "stopReason", || {
            array.path(last).field("stopReason")
        })
        .map_err(input_error)?;
        let stop_reason = stop
            .as_string()
            .map_or(StopReason::Other, |s| StopReason::from_name(&s));
        let window = self.context_window()?;
        let overflow = crate::estimate::is_context_overflow(message, window.into())?;
        Ok(Some((stop_reason, overflow)))
    }
}

thread_local! {
    /// The flows' names and the property names read of each new message,
    /// made once: a string made from Rust costs a decode per call.
    static FLOW_NAMES: Vec<JsValue> = Flow::ALL.iter().map(|f| JsValue::from_str(f.name())).collect();
    static STOP_REASON: JsValue = JsValue::from_str("stopReason");
    static TOOL_CALL_ID: JsValue = JsValue::from_str("toolCallId");
}

#[wasm_bindgen]
impl Compactor {
    /// What to do after a call made without pi's agent (the core's
    /// after-run rule): `{ overflow }` whether the call failed with a
    /// context overflow, `{ retried }` whether this run already retried one.
    #[wasm_bindgen(js_name = afterRun)]
    pub fn after_run_js(&self, messages: JsValue, facts: JsValue) -> Result<JsValue, JsValue> {
        let flags = run_facts(&facts)?;
        let overflow = flags & 1 != 0;
        let reply = if overflow {
            self.reply(&messages)?
        } else {
            None
        };
        let end = RunEnd::of_reply(overflow, reply);
        let retried = flags & 2 != 0;
        let mut failure = None;
        let flow = after_run(&end, self.enabled(), retried, || {
            self.needs_compaction(messages.clone()).unwrap_or_else(|e| {
                failure = Some(e);
                false
            })
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(FLOW_NAMES.with(|names| names[flow as usize].clone())),
        }
    }
}
