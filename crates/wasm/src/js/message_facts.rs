//! The facts of a range of messages, gathered by the JavaScript shim a
//! chunk per crossing (`gatherFacts`, `core::message::chunks`) and decoded
//! by the core (`core::tokens::record`) into its `RawFacts`.

use crate::js::errors::{describe, messages_unreadable};
use crate::js::message_access::{role_from_code, JsArray};
use agent_compaction_core::compaction::options::EstimatorChoice;
use agent_compaction_core::conversation::tracker::Source;
use agent_compaction_core::conversation::view::Fact;
use agent_compaction_core::error::InputError;
use agent_compaction_core::message::chunks::read_chunked;
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::estimate::{
    calibrated_tokens, estimate_tokens, MessageFacts, MessageTexts, RawFacts,
};
use agent_compaction_core::tokens::record as facts;
use js_sys::{Array, Float64Array, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = gatherFacts, catch)]
    fn gather_facts_js(
        messages: &Array,
        from: u32,
        to: u32,
        lazy: bool,
    ) -> Result<Float64Array, JsValue>;
    #[wasm_bindgen(js_name = gatherTexts, catch)]
    fn gather_texts_js(messages: &Array, from: u32, to: u32) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = gatherTextBytes, catch)]
    fn gather_text_bytes_js(messages: &Array, at: &[usize]) -> Result<Float64Array, JsValue>;
    #[wasm_bindgen(js_name = takeThrown)]
    fn take_thrown() -> String;
    #[wasm_bindgen(js_name = takeBad)]
    fn take_bad() -> JsValue;
}

/// Facts of `messages[from..to)`; an error names the message and field.
pub fn gather(messages: &JsArray, from: u32, to: u32) -> Result<Vec<RawFacts>, InputError> {
    gather_with(messages, from, to, false)
}

/// The core's facts of `messages[from..to)` ([`gather`]). With `lazy`, an
/// assistant message that reports usage does not have its tool-call
/// arguments measured (`tool_calls_pending`; only bounded,
/// `tool_calls_bounded`): its own estimate is needed only if its usage
/// turns out not to count.
pub fn message_facts(
    messages: &JsArray,
    from: u32,
    to: u32,
    lazy: bool,
) -> Result<Vec<MessageFacts>, InputError> {
    let raw = gather_with(messages, from, to, lazy)?;
    Ok(raw.iter().map(MessageFacts::from_raw).collect())
}

fn gather_with(
    messages: &JsArray,
    from: u32,
    to: u32,
    lazy: bool,
) -> Result<Vec<RawFacts>, InputError> {
    let to = to.min(messages.len());
    let from = from.min(to);
    // A chunk per crossing: the first bad message ends the reading.
    read_chunked(from as usize, to as usize, |range| {
        let values = gather_facts_js(
            messages.as_array(),
            range.start as u32,
            range.end as u32,
            lazy,
        )
        .map_err(messages_unreadable)?
        .to_vec();
        values
            .chunks_exact(facts::STRIDE)
            .zip(range)
            .map(|(r, i)| decode(messages, i, r))
            .collect()
    })
}

fn decode(messages: &JsArray, index: usize, r: &[f64]) -> Result<RawFacts, InputError> {
    let role = role_from_code(messages, index, r[0] as u8)?;
    if facts::problem(r) != 0 {
        let path = messages.path(index);
        let bad = take_bad();
        return Err(facts::problem_error(
            r,
            path,
            bad.as_f64(),
            || describe(&bad),
            take_thrown,
        ));
    }
    Ok(facts::decode(role, r))
}

/// The calibrated estimates of `messages[from..to)` (whose facts were
/// gathered, and so checked, before): their texts read in one crossing and
/// one copy (`gatherTexts`, UTF-8), classified in the core.
pub fn calibrated(messages: &JsArray, from: u32, to: u32) -> Result<Vec<u64>, InputError> {
    let to = to.min(messages.len());
    let from = from.min(to);
    let parts = gather_texts_js(messages.as_array(), from, to).map_err(messages_unreadable)?;
    let bytes = parts.get(0).unchecked_into::<Uint8Array>().to_vec();
    let layout = parts.get(1).unchecked_into::<Float64Array>().to_vec();
    let role = |k, code| role_from_code(messages, from as usize + k, code);
    let count = (to - from) as usize;
    facts::read_texts(&bytes, &layout, count, role, calibrated_tokens)
}

/// For `messages[i]`, each `i` of `at` (ascending, checked before by the
/// tracker), its role and `each` of its texts: read a run of consecutive
/// messages per crossing (`gatherTexts`, UTF-8).
pub fn texts_at<T>(
    messages: &JsArray,
    at: &[u32],
    mut each: impl FnMut(&MessageTexts) -> T,
) -> Result<Vec<(u32, T)>, InputError> {
    let mut out = Vec::with_capacity(at.len());
    let mut rest = at;
    while let Some(&from) = rest.first() {
        let run = rest
            .iter()
            .enumerate()
            .take_while(|&(k, &i)| i as usize == from as usize + k)
            .count();
        let to = from.saturating_add(run as u32).min(messages.len());
        let from = from.min(to);
        let parts = gather_texts_js(messages.as_array(), from, to).map_err(messages_unreadable)?;
        let bytes = parts.get(0).unchecked_into::<Uint8Array>().to_vec();
        let layout = parts.get(1).unchecked_into::<Float64Array>().to_vec();
        let role = |k, code| role_from_code(messages, from as usize + k, code);
        let read = facts::read_texts(&bytes, &layout, (to - from) as usize, role, &mut each)?;
        out.extend((from..).zip(read));
        rest = rest.get(run.max(1)..).unwrap_or(&[]);
    }
    Ok(out)
}

/// The calibrated estimate's bounds from the UTF-8 lengths of the texts of
/// `messages[i]` for each `i` of `at` (gathered, and so checked, before),
/// in one crossing: the texts encoded but not classified
/// (`gatherTextBytes`), each bound made in the core. None with pi's
/// estimate, whose measuring costs only lengths.
pub fn tight_bounds(
    messages: &JsArray,
    estimator: EstimatorChoice,
    at: &[usize],
) -> Result<Vec<u64>, InputError> {
    if estimator != EstimatorChoice::Calibrated {
        return Ok(Vec::new());
    }
    let layout = gather_text_bytes_js(messages.as_array(), at)
        .map_err(messages_unreadable)?
        .to_vec();
    facts::byte_bounds(&layout, at.len(), |k, code| {
        role_from_code(messages, at[k], code)
    })
}

/// The role a decoded record carries (always set by [`gather`]).
pub fn role_of(f: &RawFacts) -> Role {
    f.role.unwrap_or(Role::Other)
}

/// Estimates measured in full on demand, a chunk of up to 32 messages at a
/// time in the direction of the walk (backward for the context totals and
/// the cut point, forward when filling a range) once a walk goes from one
/// message to the next, the first message alone: a walk crosses the
/// boundary once per chunk, not per message, and a single estimate reads
/// one message.
pub struct EstimateChunks<'a> {
    messages: &'a JsArray,
    estimator: EstimatorChoice,
    start: usize,
    tokens: Vec<u64>,
    last: Option<usize>,
}

impl<'a> EstimateChunks<'a> {
    /// pi's estimates.
    pub fn new(messages: &'a JsArray) -> Self {
        Self::with(messages, EstimatorChoice::Pi)
    }

    pub fn with(messages: &'a JsArray, estimator: EstimatorChoice) -> Self {
        EstimateChunks {
            messages,
            estimator,
            start: 0,
            tokens: Vec::new(),
            last: None,
        }
    }

    /// The estimate of `messages[index]`.
    pub fn get(&mut self, index: usize) -> Result<u64, InputError> {
        let last = self.last.replace(index);
        if index < self.start || index >= self.start + self.tokens.len() {
            let len = self.messages.len() as usize;
            let forward = last.is_some_and(|last| index > last);
            // A chunk only once a walk goes on from one message to the
            // next: a jump (the one message a turn's stale usage leaves to
            // measure, or the largest bound `exceeds` measures first)
            // reads that message alone.
            let walking = last.is_some_and(|last| last.abs_diff(index) == 1);
            let (start, end) = if !walking {
                (index, index + 1)
            } else if forward {
                (index, (index + 32).min(len).max(index + 1))
            } else {
                (index.saturating_sub(31), index + 1)
            };
            self.tokens = match self.estimator {
                EstimatorChoice::Pi => gather(self.messages, start as u32, end as u32)?
                    .iter()
                    .map(estimate_tokens)
                    .collect(),
                EstimatorChoice::Calibrated => calibrated(self.messages, start as u32, end as u32)?,
            };
            self.start = start;
        }
        Ok(self.tokens.get(index - self.start).copied().unwrap_or(0))
    }
}

/// What the conversation's tracker reads of the array.
impl Source for EstimateChunks<'_> {
    fn message_count(&self) -> usize {
        self.messages.len() as usize
    }

    fn facts(&mut self, from: usize, to: usize, lazy: bool) -> Result<Vec<RawFacts>, InputError> {
        gather_with(self.messages, from as u32, to as u32, lazy)
    }

    fn estimate(&mut self, index: usize) -> Result<u64, InputError> {
        self.get(index)
    }

    fn tight_bounds(&mut self, at: &[usize]) -> Result<Vec<u64>, InputError> {
        tight_bounds(self.messages, self.estimator, at)
    }

    fn view_fact(&mut self, index: usize) -> Result<Fact<Vec<u16>>, InputError> {
        crate::conversation::fact_of(self.messages, index)
    }

    fn placeholder_estimate(&mut self, result: usize, marker: usize) -> Result<u64, InputError> {
        let sent = crate::conversation::placeholder(self.messages, result, marker)?;
        EstimateChunks::with(&JsArray::single(&sent), self.estimator).get(0)
    }
}
