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
        Some(w) if w != 0.0 && !w.is_nan() => w,
        _ => return false,
    };
    let input_tokens = message.input + message.cache_read;
    match message.stop_reason {
        StopReason::Stop => input_tokens > window,
        StopReason::Length => message.output == 0.0 && input_tokens >= window * 0.99,
        _ => false,
    }
}

/// Whether the error text matches one of pi's overflow patterns, leaving
/// out its non-overflow exclusions (exposed for tests and diagnostics).
pub fn matches_overflow_pattern(text: &[u16]) -> bool {
    OVERFLOW.iter().any(|p| p.matches(text))
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
mod tests {
    use super::*;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn error(text: &str) -> bool {
        let t = units(text);
        is_context_overflow(
            &AssistantOutcome {
                stop_reason: StopReason::Error,
                error_message: Some(&t),
                input: 0.0,
                cache_read: 0.0,
                output: 0.0,
            },
            None,
        )
    }

    #[test]
    fn real_provider_overflow_errors() {
        for text in [
            "prompt is too long: 213462 tokens > 200000 maximum",
            "413 {\"error\":{\"type\":\"request_too_large\",\"message\":\"Request exceeds the maximum size\"}}",
            "Input is too long for requested model.",
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
            "Please reduce the length of the messages or completion.",
            "This endpoint's maximum context length is 128000 tokens. However, you requested about 140000 tokens",
            "prompt token count of 140000 exceeds the limit of 128000",
            "the request exceeds the available context size, try increasing it",
            "tokens to keep from the initial prompt is greater than the context length",
            "invalid params, context window exceeds limit (2013)",
            "Your request exceeded model token limit: 262144 (requested: 300000)",
            "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
            "model_context_window_exceeded",
            "prompt too long; exceeded max context length by 1200 tokens",
            "prompt too long; exceeded context length by 1200 tokens",
            "Error code: context_length_exceeded",
            "CONTEXT LENGTH EXCEEDED",
            "context_length exceeded",
            "Too many tokens in request",
            "token limit exceeded",
            "400 status code (no body)",
            "413 (no body)",
            "413status code(no body)",
            "400 \u{3000}status code\t (no body) trailing",
        ] {
            assert!(error(text), "should be an overflow: {text}");
        }
    }

    #[test]
    fn non_overflow_errors() {
        for text in [
            "Throttling error: Too many tokens, please wait",
            "Service unavailable: prompt is too long",
            "Rate limit reached: too many tokens per minute",
            "429 Too Many Requests: too many tokens",
            "Internal server error",
            "Connection reset",
            "500 status code (no body)",
            " 400 status code (no body)",
            "400 status code",
            "maximum prompt length is unknown",
            "maximum context length is 128000",
            "exceeds the limit of x",
            "input token count\nexceeds the maximum",
            "exceeds the maximum input token count",
            "prompt too long; exceeded the context length",
            "context-length-exceeded",
            "",
        ] {
            assert!(!error(text), "should not be an overflow: {text:?}");
        }
    }

    #[test]
    fn exclusions_need_their_anchor() {
        // "Throttling error:" only excludes at the start, as /^.../ does.
        assert!(error("Upstream said: Throttling error: prompt is too long"));
        // Bedrock's raw exception name is not the formatted prefix: pi calls
        // this an overflow ("too many tokens"), and so do we.
        assert!(error(
            "ThrottlingException: Too many tokens, please wait before trying again."
        ));
    }

    #[test]
    fn case_folding_is_ascii_only() {
        assert!(error("PROMPT IS TOO LONG"));
        // U+017F (long s) upper-cases to "S" in Unicode, but JavaScript's
        // non-unicode /i never folds a non-ASCII character onto ASCII.
        assert!(!error("too many tokens".replace('s', "\u{17F}").as_str()));
        // U+212A (Kelvin sign) likewise is not "k".
        assert!(!error(
            "token limit exceeded".replace('k', "\u{212A}").as_str()
        ));
    }

    #[test]
    fn dot_star_stays_on_one_line_and_spans_anything_else() {
        assert!(error(
            "input token count \u{1F600} 漢字 exceeds the maximum"
        ));
        assert!(error(
            "first line\ninput token count 5 exceeds the maximum\nlast"
        ));
        assert!(!error("input token count 5\r exceeds the maximum"));
        assert!(!error("input token count 5\u{2028} exceeds the maximum"));
        assert!(error("input token countexceeds the maximum"));
    }

    #[test]
    fn lone_surrogates_do_not_confuse_matching() {
        let mut t = units("prompt is too long");
        t.insert(0, 0xD800);
        t.push(0xDC00);
        let outcome = AssistantOutcome {
            stop_reason: StopReason::Error,
            error_message: Some(&t),
            input: 0.0,
            cache_read: 0.0,
            output: 0.0,
        };
        assert!(is_context_overflow(&outcome, None));
    }

    fn usage(
        stop: StopReason,
        input: f64,
        cache_read: f64,
        output: f64,
        window: Option<f64>,
    ) -> bool {
        is_context_overflow(
            &AssistantOutcome {
                stop_reason: stop,
                error_message: None,
                input,
                cache_read,
                output,
            },
            window,
        )
    }

    #[test]
    fn silent_overflow_is_a_stop_with_input_over_the_window() {
        assert!(usage(
            StopReason::Stop,
            150_000.0,
            60_000.0,
            10.0,
            Some(200_000.0)
        ));
        assert!(!usage(
            StopReason::Stop,
            150_000.0,
            50_000.0,
            10.0,
            Some(200_000.0)
        ));
        assert!(!usage(StopReason::Stop, 250_000.0, 0.0, 10.0, None));
        assert!(!usage(StopReason::Stop, 250_000.0, 0.0, 10.0, Some(0.0)));
        assert!(!usage(
            StopReason::Stop,
            250_000.0,
            0.0,
            10.0,
            Some(f64::NAN)
        ));
        assert!(!usage(
            StopReason::ToolUse,
            250_000.0,
            0.0,
            10.0,
            Some(200_000.0)
        ));
        assert!(!usage(
            StopReason::Stop,
            f64::NAN,
            0.0,
            10.0,
            Some(200_000.0)
        ));
    }

    #[test]
    fn length_with_no_output_at_a_full_window() {
        assert!(usage(
            StopReason::Length,
            198_000.0,
            0.0,
            0.0,
            Some(200_000.0)
        ));
        assert!(!usage(
            StopReason::Length,
            197_999.0,
            0.0,
            0.0,
            Some(200_000.0)
        ));
        assert!(!usage(
            StopReason::Length,
            199_000.0,
            0.0,
            1.0,
            Some(200_000.0)
        ));
        assert!(usage(
            StopReason::Length,
            100_000.0,
            98_000.0,
            0.0,
            Some(200_000.0)
        ));
    }

    #[test]
    fn an_error_without_a_known_text_can_still_be_silent_overflow_only_for_stop() {
        let t = units("Internal error");
        let outcome = AssistantOutcome {
            stop_reason: StopReason::Error,
            error_message: Some(&t),
            input: 300_000.0,
            cache_read: 0.0,
            output: 0.0,
        };
        assert!(!is_context_overflow(&outcome, Some(200_000.0)));
    }
}
