//! The numbers a JavaScript host gathers messages into, read here: a
//! record of [`STRIDE`] numbers per message (the host's `gatherFacts`,
//! whose slots this must match), the problem a record reports turned into
//! the error that names the field, and the layout of the texts the
//! calibrated estimate reads (`gatherTexts`, `gatherTextBytes`).
//!
//! Record slots: 0 role code, 1 `content.length` when a string (else −1),
//! 2–5 the lengths of text, thinking and tool-call blocks and the image
//! count, 6 `summary.length` (a marker's `tokensFreed`), 7 `command.length`
//! (a compaction summary's `keptMessages` + 1), 8 `output.length`, 9 the
//! stop reason's code (−1 none), 10 whether there is usage and 11–15 its
//! numbers, 16 the timestamp, 17 the problem (0 none) and 18 the content
//! block (or a marker's list item) it is in, 19 tool-call arguments not measured (1 bounded, 2 not),
//! 20 `pinned === true`, 21 the arguments' bound.

use crate::error::{FieldPath, InputError};
use crate::js::options::out_of_range;
use crate::message::role::Role;
use crate::tokens::estimate::{calibrated_byte_bound, MessageTexts, RawFacts, UsageNumbers};
use crate::tokens::overflow::StopReason;

/// Numbers per message in a facts record.
pub const STRIDE: usize = 22;

/// A length or count from a record: anything but a positive finite number
/// is 0.
fn count(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x as u64
    } else {
        0
    }
}

/// The problem code a record reports (slot 17): 0 when it reports none.
pub fn problem(record: &[f64]) -> u8 {
    record[17] as u8
}

/// The facts of a record that reports no problem, its role (slot 0)
/// already checked.
pub fn decode(role: Role, r: &[f64]) -> RawFacts {
    let stop_reason = match r[9] as i8 {
        0 => Some(StopReason::Stop),
        1 => Some(StopReason::Length),
        2 => Some(StopReason::ToolUse),
        3 => Some(StopReason::Error),
        4 => Some(StopReason::Aborted),
        5 => Some(StopReason::Other),
        _ => None,
    };
    let marker = role == Role::ToolOutputCleared;
    let summary = role == Role::CompactionSummary;
    RawFacts {
        role: Some(role),
        content_string: (r[1] >= 0.0).then(|| count(r[1])),
        text: count(r[2]),
        thinking: count(r[3]),
        tool_calls: count(r[4]),
        images: count(r[5]),
        // A marker's `tokensFreed` is in the summary's slot.
        summary: if marker { 0 } else { count(r[6]) },
        tokens_freed: if marker { count(r[6]) } else { 0 },
        // A compaction summary's `keptMessages` (plus one) is in the
        // command's slot.
        command: if summary { 0 } else { count(r[7]) },
        kept_messages: (summary && r[7] >= 1.0).then(|| count(r[7]) - 1),
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
    }
}

/// The error for the problem a record reports (`problem(r)`, not 0) of the
/// message at `message`: `number` is the value found wrong when it is a
/// number, `got` describes it otherwise, `thrown` is what a getter or
/// `JSON.stringify` threw (empty: nothing). A count that is a number but
/// not a count (`NaN`, `-5000`, `1.5`, `1e300`) is out of range: a
/// `RangeError` that shows it.
pub fn problem_error(
    r: &[f64],
    message: FieldPath,
    number: Option<f64>,
    got: impl FnOnce() -> String,
    thrown: impl FnOnce() -> String,
) -> InputError {
    let block = || message.clone().field("content").at(r[18].max(0.0) as usize);
    let item = |list| message.clone().field(list).at(r[18].max(0.0) as usize);
    let wrong = |path: FieldPath, expected: &'static str| InputError::WrongType {
        path,
        expected,
        got: got(),
    };
    match problem(r) {
        1 => wrong(
            message.clone().field("content"),
            "a string or an array of content blocks",
        ),
        2 => wrong(block(), "a content block object"),
        3 => wrong(block().field("text"), "a string"),
        4 => wrong(block().field("thinking"), "a string"),
        5 => wrong(block().field("name"), "a string"),
        6 => InputError::Unreadable {
            path: block().field("arguments"),
            reason: match thrown() {
                t if t.is_empty() => "JSON.stringify gave no text for it".into(),
                t => format!("JSON.stringify failed: {t}"),
            },
        },
        7 => wrong(message.clone().field("summary"), "a string"),
        8 => wrong(message.clone().field("command"), "a string"),
        9 => wrong(message.clone().field("output"), "a string"),
        11 => wrong(message.clone().field("pinned"), "a boolean"),
        12 => count_error(message.clone().field("tokensFreed"), number, wrong),
        13 => count_error(message.clone().field("keptMessages"), number, wrong),
        // A clearing marker's lists, as the model's view reads them.
        14 => wrong(
            message.clone().field("toolCallIds"),
            "an array of tool call ids",
        ),
        15 => wrong(item("toolCallIds"), "a string"),
        16 => wrong(
            message.clone().field("outputTokens"),
            "an array of non-negative safe integers",
        ),
        17 => count_error(item("outputTokens"), number, wrong),
        _ => InputError::Unreadable {
            path: message,
            reason: thrown(),
        },
    }
}

/// The error for a count field: out of range when it is a number, else
/// of the wrong type.
fn count_error(
    path: FieldPath,
    number: Option<f64>,
    wrong: impl FnOnce(FieldPath, &'static str) -> InputError,
) -> InputError {
    const EXPECTED: &str = "a non-negative safe integer";
    match number {
        Some(x) => out_of_range(path, EXPECTED, x),
        None => wrong(path, EXPECTED),
    }
}

/// Reads the texts layout, and the texts it describes, in order: per
/// message the role code, the image count, `content`'s length when a
/// string (−1 otherwise), then three lists (text, thinking and tool-call
/// blocks: each a count and that many lengths; a tool call's name and
/// arguments are one text), then the summary's, command's and output's
/// lengths. Lengths are UTF-8 bytes.
struct Layout<'a> {
    bytes: &'a [u8],
    at: usize,
    layout: &'a [f64],
    next: usize,
}

impl<'a> Layout<'a> {
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

/// The texts of `messages` messages (`gatherTexts`: their UTF-8 in `bytes`,
/// described by `layout`), each checked for its role with `role(k, code)`
/// (`k`: its place in the batch) and passed to `each`.
pub fn read_texts<T, E>(
    bytes: &[u8],
    layout: &[f64],
    messages: usize,
    mut role: impl FnMut(usize, u8) -> Result<Role, E>,
    mut each: impl FnMut(&MessageTexts) -> T,
) -> Result<Vec<T>, E> {
    let mut r = Layout {
        bytes,
        at: 0,
        layout,
        next: 0,
    };
    (0..messages)
        .map(|k| {
            let role = role(k, r.number() as u8)?;
            let images = r.number() as u64;
            let content_string = match r.number() {
                n if n < 0.0 => None,
                n => Some(r.text(n)),
            };
            let text = r.list();
            let thinking = r.list();
            let tool_calls = r.list();
            Ok(each(&MessageTexts {
                role: Some(role),
                content_string,
                text,
                thinking,
                tool_calls,
                images,
                summary: r.next_text(),
                command: r.next_text(),
                output: r.next_text(),
            }))
        })
        .collect()
}

/// The calibrated estimate's bounds of `messages` messages from the byte
/// lengths of their texts (`gatherTextBytes`: the same layout, no texts),
/// each checked for its role with `role(k, code)`.
pub fn byte_bounds<E>(
    layout: &[f64],
    messages: usize,
    mut role: impl FnMut(usize, u8) -> Result<Role, E>,
) -> Result<Vec<u64>, E> {
    let mut r = Layout {
        bytes: &[],
        at: 0,
        layout,
        next: 0,
    };
    (0..messages)
        .map(|k| {
            let role = role(k, r.number() as u8)?;
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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
