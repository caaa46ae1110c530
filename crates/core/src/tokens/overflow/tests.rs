//! Tests of the context-overflow detection: provider error messages and
//! silent overflow (a stop whose usage exceeds the window).

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

fn usage(stop: StopReason, input: f64, cache_read: f64, output: f64, window: Option<f64>) -> bool {
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

#[test]
fn usage_is_read_only_for_an_answer_with_a_window() {
    for stop in [StopReason::Stop, StopReason::Length] {
        assert!(reads_usage(stop, Some(1000.0)));
        for window in [None, Some(0.0), Some(f64::NAN)] {
            assert!(!reads_usage(stop, window), "{window:?}");
        }
    }
    for stop in [
        StopReason::Error,
        StopReason::ToolUse,
        StopReason::Aborted,
        StopReason::Other,
    ] {
        assert!(!reads_usage(stop, Some(1000.0)), "{stop:?}");
    }
}
