//! Context-overflow detection, pi-compatible (`isContextOverflow` of pi-ai
//! 0.73.1): every provider error text pi recognises, its exclusions for rate
//! limits and throttling, silent overflow (`stop` with the input over the
//! window) and a `length` stop with no output at a full window.
//!
//! pi uses regular expressions with the `/i` flag. Without the `u` flag,
//! JavaScript's case folding never maps a non-ASCII character onto ASCII, so
//! ASCII case folding over UTF-16 code units is exact; the few patterns with
//! `\d+`, `.*` or `\s*` are matched by hand below instead of pulling a regex
//! engine into the `.wasm`.

/// An assistant message's stop reason, as far as overflow detection cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Other,
}

impl StopReason {
    pub fn from_name(name: &str) -> StopReason {
        match name {
            "stop" => StopReason::Stop,
            "length" => StopReason::Length,
            "toolUse" => StopReason::ToolUse,
            "error" => StopReason::Error,
            "aborted" => StopReason::Aborted,
            _ => StopReason::Other,
        }
    }
}

/// What overflow detection reads from an assistant message. Usage numbers
/// are JavaScript numbers: a missing one is `NaN`, which compares false, as
/// `undefined + n` does in pi.
#[derive(Clone, Copy, Debug)]
pub struct AssistantOutcome<'a> {
    pub stop_reason: StopReason,
    /// `errorMessage` in UTF-16 code units; `None` or empty counts as absent.
    pub error_message: Option<&'a [u16]>,
    pub input: f64,
    pub cache_read: f64,
    pub output: f64,
}

/// One of pi's patterns, in the shapes they come in.
enum Pattern {
    /// `/literal/i` anywhere.
    Contains(&'static str),
    /// `/^literal/i`.
    StartsWith(&'static str),
    /// `/prefix\d+suffix/i` anywhere (suffix may be empty).
    Number(&'static str, &'static str),
    /// `/first.*second/i`: both on one line, `second` after `first`.
    OnOneLine(&'static str, &'static str),
    /// `/^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i`.
    EmptyBody4xx,
}

use Pattern::*;

const OVERFLOW: &[Pattern] = &[
    Contains("prompt is too long"),
    Contains("request_too_large"),
    Contains("input is too long for requested model"),
    Contains("exceeds the context window"),
    OnOneLine("input token count", "exceeds the maximum"),
    Number("maximum prompt length is ", ""),
    Contains("reduce the length of the messages"),
    Number("maximum context length is ", " tokens"),
    Number("exceeds the limit of ", ""),
    Contains("exceeds the available context size"),
    Contains("greater than the context length"),
    Contains("context window exceeds limit"),
    Contains("exceeded model token limit"),
    Number("too large for model with ", " maximum context length"),
    Contains("model_context_window_exceeded"),
    // /prompt too long; exceeded (?:max )?context length/i
    Contains("prompt too long; exceeded context length"),
    Contains("prompt too long; exceeded max context length"),
    // /context[_ ]length[_ ]exceeded/i
    Contains("context_length_exceeded"),
    Contains("context_length exceeded"),
    Contains("context length_exceeded"),
    Contains("context length exceeded"),
    Contains("too many tokens"),
    Contains("token limit exceeded"),
    EmptyBody4xx,
];

const NOT_OVERFLOW: &[Pattern] = &[
    // /^(Throttling error|Service unavailable):/i
    StartsWith("throttling error:"),
    StartsWith("service unavailable:"),
    Contains("rate limit"),
    Contains("too many requests"),
];

/// pi's `isContextOverflow(message, contextWindow)`. A `context_window` of
/// `None`, zero or NaN disables the usage-based checks, as a falsy value does
/// in pi.
pub fn is_context_overflow(message: &AssistantOutcome<'_>, context_window: Option<f64>) -> bool {
    if message.stop_reason == StopReason::Error {
        if let Some(text) = message.error_message.filter(|t| !t.is_empty()) {
            if !NOT_OVERFLOW.iter().any(|p| p.matches(text))
                && OVERFLOW.iter().any(|p| p.matches(text))
            {
                return true;
            }
        }
    }
    let window = match context_window {
        Some(w) if reads_usage(message.stop_reason, context_window) => w,
        _ => return false,
    };
    let input_tokens = message.input + message.cache_read;
    match message.stop_reason {
        StopReason::Stop => input_tokens > window,
        StopReason::Length => message.output == 0.0 && input_tokens >= window * 0.99,
        _ => false,
    }
}

/// Whether [`is_context_overflow`] reads the usage numbers: only for its
/// usage-based checks (a `stop` or `length` answer with a window), as pi
/// reads them; otherwise they may be left unread (NaN).
pub fn reads_usage(stop_reason: StopReason, context_window: Option<f64>) -> bool {
    context_window.is_some_and(|w| w != 0.0 && !w.is_nan())
        && matches!(stop_reason, StopReason::Stop | StopReason::Length)
}

fn fold(unit: u16) -> u16 {
    if (b'A' as u16..=b'Z' as u16).contains(&unit) {
        unit + 32
    } else {
        unit
    }
}

/// `text` starts with the lowercase ASCII `literal`, case-insensitively.
fn starts_with_at(text: &[u16], at: usize, literal: &str) -> bool {
    let lit = literal.as_bytes();
    text.len() >= at + lit.len()
        && text[at..at + lit.len()]
            .iter()
            .zip(lit)
            .all(|(&t, &l)| fold(t) == l as u16)
}

/// Positions where `literal` occurs in `text[from..]`.
fn occurrences<'t>(
    text: &'t [u16],
    from: usize,
    literal: &'static str,
) -> impl Iterator<Item = usize> + 't {
    let n = literal.len();
    (from..(text.len() + 1).saturating_sub(n)).filter(move |&i| starts_with_at(text, i, literal))
}

fn is_digit(unit: u16) -> bool {
    (b'0' as u16..=b'9' as u16).contains(&unit)
}

/// JavaScript's `.` does not match these.
fn is_line_terminator(unit: u16) -> bool {
    matches!(unit, 0x0A | 0x0D | 0x2028 | 0x2029)
}

/// JavaScript's `\s`.
fn is_js_space(unit: u16) -> bool {
    matches!(
        unit,
        0x09..=0x0D | 0x20 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000 | 0xFEFF
    )
}

impl Pattern {
    fn matches(&self, text: &[u16]) -> bool {
        match *self {
            Contains(lit) => occurrences(text, 0, lit).next().is_some(),
            StartsWith(lit) => starts_with_at(text, 0, lit),
            Number(prefix, suffix) => occurrences(text, 0, prefix).any(|at| {
                let digits_start = at + prefix.len();
                let digits = text[digits_start..]
                    .iter()
                    .take_while(|&&u| is_digit(u))
                    .count();
                digits > 0 && starts_with_at(text, digits_start + digits, suffix)
            }),
            OnOneLine(first, second) => {
                // The first `first` on a line is the best start: any later
                // one leaves less room for `second`.
                text.split(|&u| is_line_terminator(u)).any(|line| {
                    occurrences(line, 0, first).next().is_some_and(|at| {
                        occurrences(line, at + first.len(), second).next().is_some()
                    })
                })
            }
            EmptyBody4xx => {
                if !(starts_with_at(text, 0, "400") || starts_with_at(text, 0, "413")) {
                    return false;
                }
                let skip =
                    |at: usize| at + text[at..].iter().take_while(|&&u| is_js_space(u)).count();
                let mut at = skip(3);
                if starts_with_at(text, at, "status code") {
                    at = skip(at + "status code".len());
                }
                starts_with_at(text, at, "(no body)")
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
