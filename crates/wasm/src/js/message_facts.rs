//! The facts of a range of messages, gathered by the JavaScript shim in one
//! crossing (`gatherFacts`) and decoded here into the core's `RawFacts`.

use crate::js::errors::messages_unreadable;
use crate::js::message_access::{role_from_code, JsArray};
use agent_compaction_core::compaction::options::EstimatorChoice;
use agent_compaction_core::conversation::tracker::Source;
use agent_compaction_core::error::{FieldPath, InputError};
use agent_compaction_core::message::role::Role;
use agent_compaction_core::tokens::estimate::{
    calibrated_byte_bound, calibrated_tokens, estimate_tokens, MessageTexts, RawFacts, UsageNumbers,
};
use agent_compaction_core::tokens::overflow::StopReason;
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
    #[wasm_bindgen(js_name = takeBadDescription)]
    fn take_bad_description() -> String;
}

/// Must match `FACTS_STRIDE` and the slot layout in shim/facts.js.
const STRIDE: usize = 22;

/// Facts of `messages[from..to)`; an error names the message and field.
pub fn gather(messages: &JsArray, from: u32, to: u32) -> Result<Vec<RawFacts>, InputError> {
    gather_with(messages, from, to, false)
}

/// Like [`gather`], but an assistant message that reports usage does not
/// have its tool-call arguments measured (`tool_calls_pending`; only
/// bounded, `tool_calls_bounded`): its own estimate is needed only if its
/// usage turns out not to count.
pub fn gather_lazy(messages: &JsArray, from: u32, to: u32) -> Result<Vec<RawFacts>, InputError> {
    gather_with(messages, from, to, true)
}

fn gather_with(
    messages: &JsArray,
    from: u32,
    to: u32,
    lazy: bool,
) -> Result<Vec<RawFacts>, InputError> {
    let to = to.min(messages.len());
    let from = from.min(to);
    let values = gather_facts_js(messages.as_array(), from, to, lazy)
        .map_err(messages_unreadable)?
        .to_vec();
    values
        .chunks_exact(STRIDE)
        .enumerate()
        .map(|(k, r)| decode(messages, from as usize + k, r))
        .collect()
}

fn count(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x as u64
    } else {
        0
    }
}

fn decode(messages: &JsArray, index: usize, r: &[f64]) -> Result<RawFacts, InputError> {
    let role = role_from_code(messages, index, r[0] as u8)?;
    let problem = r[17] as u8;
    if problem != 0 {
        return Err(problem_error(messages, index, problem, r[18]));
    }
    let stop_reason = match r[9] as i8 {
        0 => Some(StopReason::Stop),
        1 => Some(StopReason::Length),
        2 => Some(StopReason::ToolUse),
        3 => Some(StopReason::Error),
        4 => Some(StopReason::Aborted),
        5 => Some(StopReason::Other),
        _ => None,
    };
    Ok(RawFacts {
        role: Some(role),
        content_string: (r[1] >= 0.0).then(|| count(r[1])),
        text: count(r[2]),
        thinking: count(r[3]),
        tool_calls: count(r[4]),
        images: count(r[5]),
        // A `toolOutputCleared` marker's `tokensFreed` (facts.js) is in the
        // summary's slot.
        summary: if role == Role::ToolOutputCleared {
            0
        } else {
            count(r[6])
        },
        tokens_freed: if role == Role::ToolOutputCleared {
            count(r[6])
        } else {
            0
        },
        // A compaction summary's `keptMessages` (plus one) is in the
        // command's slot.
        command: if role == Role::CompactionSummary {
            0
        } else {
            count(r[7])
        },
        kept_messages: (role == Role::CompactionSummary && r[7] >= 1.0).then(|| count(r[7]) - 1),
        output: count(r[8]),
        stop_reason,
        usage: (r[10] == 1.0).then_some(UsageNumbers {
            input: r[11],
            output: r[12],
            cache_read: r[13],
            cache_write: r[14],
            total_tokens: r[15],
        }),
        timestamp: r[16],
        tool_calls_pending: r[19] >= 1.0,
        tool_calls_bounded: r[19] == 1.0,
        tool_call_arguments_bound: count(r[21]),
        pinned: r[20] == 1.0,
    })
}

fn problem_error(messages: &JsArray, index: usize, problem: u8, block: f64) -> InputError {
    let message = || messages.path(index);
    let block = || message().field("content").at(block.max(0.0) as usize);
    let wrong = |path: FieldPath, expected: &'static str| InputError::WrongType {
        path,
        expected,
        got: take_bad_description(),
    };
    match problem {
        1 => wrong(
            message().field("content"),
            "a string or an array of content blocks",
        ),
        2 => wrong(block(), "a content block object"),
        3 => wrong(block().field("text"), "a string"),
        4 => wrong(block().field("thinking"), "a string"),
        5 => wrong(block().field("name"), "a string"),
        6 => InputError::Unreadable {
            path: block().field("arguments"),
            reason: match take_thrown() {
                t if t.is_empty() => "JSON.stringify gave no text for it".into(),
                t => format!("JSON.stringify failed: {t}"),
            },
        },
        7 => wrong(message().field("summary"), "a string"),
        8 => wrong(message().field("command"), "a string"),
        9 => wrong(message().field("output"), "a string"),
        11 => wrong(message().field("pinned"), "a boolean"),
        12 => wrong(
            message().field("tokensFreed"),
            "a non-negative safe integer",
        ),
        13 => wrong(
            message().field("keptMessages"),
            "a non-negative safe integer",
        ),
        _ => InputError::Unreadable {
            path: message(),
            reason: take_thrown(),
        },
    }
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
    let mut reader = TextsReader {
        bytes: &bytes,
        at: 0,
        layout: &layout,
        next: 0,
    };
    (from as usize..to as usize)
        .map(|index| {
            let role = role_from_code(messages, index, reader.number() as u8)?;
            let images = reader.number() as u64;
            let content_string = match reader.number() {
                n if n < 0.0 => None,
                n => Some(reader.text(n)),
            };
            let text = reader.list();
            let thinking = reader.list();
            let tool_calls = reader.list();
            let summary = reader.next_text();
            let command = reader.next_text();
            let output = reader.next_text();
            Ok(calibrated_tokens(&MessageTexts {
                role: Some(role),
                content_string,
                text,
                thinking,
                tool_calls,
                images,
                summary,
                command,
                output,
            }))
        })
        .collect()
}

/// The calibrated estimate's bounds from the UTF-8 lengths of the texts of
/// `messages[i]` for each `i` of `at` (gathered, and so checked, before),
/// in one crossing: the texts encoded but not classified
/// (`gatherTextBytes`), each bound made in the core
/// (`calibrated_byte_bound`). None with pi's estimate, whose measuring
/// costs only lengths.
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
    let mut r = TextsReader {
        bytes: &[],
        at: 0,
        layout: &layout,
        next: 0,
    };
    at.iter()
        .map(|&index| {
            let role = role_from_code(messages, index, r.number() as u8)?;
            let images = count(r.number());
            let content_string = match r.number() {
                n if n < 0.0 => None,
                n => Some(count(n)),
            };
            let mut sum = || -> u64 { (0..count(r.number())).map(|_| count(r.number())).sum() };
            let text = sum();
            let thinking = sum();
            let tool_calls = sum();
            Ok(calibrated_byte_bound(&RawFacts {
                role: Some(role),
                content_string,
                text,
                thinking,
                tool_calls,
                images,
                summary: count(r.number()),
                command: count(r.number()),
                output: count(r.number()),
                ..RawFacts::default()
            }))
        })
        .collect()
}

/// Reads `gatherTexts`' layout and the texts it describes, in order.
struct TextsReader<'a> {
    bytes: &'a [u8],
    at: usize,
    layout: &'a [f64],
    next: usize,
}

impl<'a> TextsReader<'a> {
    fn number(&mut self) -> f64 {
        let n = self.layout.get(self.next).copied().unwrap_or(0.0);
        self.next += 1;
        n
    }

    fn text(&mut self, len: f64) -> &'a [u8] {
        let end = (self.at + count(len) as usize).min(self.bytes.len());
        let text = &self.bytes[self.at..end];
        self.at = end;
        text
    }

    fn next_text(&mut self) -> &'a [u8] {
        let len = self.number();
        self.text(len)
    }

    fn list(&mut self) -> Vec<&'a [u8]> {
        let n = count(self.number());
        (0..n).map(|_| self.next_text()).collect()
    }
}

/// The role a decoded record carries (always set by [`gather`]).
pub fn role_of(f: &RawFacts) -> Role {
    f.role.unwrap_or(Role::Other)
}

/// Estimates measured in full on demand, a chunk of up to 32 messages at a
/// time in the direction of the walk (backward for the context totals and
/// the cut point, forward when filling a range): a walk crosses the boundary
/// once per chunk, not per message.
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
            // pi's estimates cost only lengths: a chunk at once. The
            // calibrated one reads texts: a chunk only once a walk goes on
            // from one message to the next (a jump, as `exceeds` makes
            // measuring the largest bounds first, reads one message).
            let walking = last.is_some_and(|last| last.abs_diff(index) == 1);
            let (start, end) = if self.estimator == EstimatorChoice::Calibrated && !walking {
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
}
