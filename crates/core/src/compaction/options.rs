//! The `Compactor`'s options that are choices rather than conversions: the
//! fallback when the summarizer fails, which estimator measures the
//! context, what a token count or a timeout may be, and their defaults.
//! The option sets of `new Compactor`, `compact`, `summarizeBranch` and
//! `agentMessagesToChatMessages` are read here too, in their order, through
//! `js::options` (the binding supplies the values and the property reads);
//! a refusal names the field and what it should have been.

use crate::compaction::reason::Reason;
use crate::error::InputError;
pub use crate::js::options::token_count;
use crate::js::options::{expect_object, token_count_of, Reader, Value};

/// A hung summarizer is a failure after this long (SPEC §3).
pub const DEFAULT_TIMEOUT_MS: f64 = 120_000.0;

/// `fallback`: `"extractive"` or `"none"`; absent (undefined), extractive
/// exactly when there is no `summarize` callback (the offline summary is
/// then the only one). `text`: the value when it is a string.
pub fn fallback_extractive(
    undefined: bool,
    text: Option<&str>,
    has_summarize: bool,
) -> Result<bool, &'static str> {
    match text {
        Some("extractive") => Ok(true),
        Some("none") => Ok(false),
        None if undefined => Ok(!has_summarize),
        _ => Err("\"extractive\" or \"none\""),
    }
}

/// Which estimate the `Compactor` measures the context with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EstimatorChoice {
    Pi,
    Calibrated,
}

/// `estimator`: `"calibrated"` (the default: reading a text costs a few
/// nanoseconds per code unit, and a turn reads none unless a decision needs
/// it) or `"pi"`.
pub fn estimator(undefined: bool, text: Option<&str>) -> Result<EstimatorChoice, &'static str> {
    match text {
        Some("calibrated") => Ok(EstimatorChoice::Calibrated),
        Some("pi") => Ok(EstimatorChoice::Pi),
        None if undefined => Ok(EstimatorChoice::Calibrated),
        _ => Err("\"calibrated\" or \"pi\""),
    }
}

/// The longest delay a timer waits (2³¹ − 1 ms, about 24.8 days): browsers
/// and Node fire a longer one at once, which would fail every summary.
pub const MAX_TIMEOUT_MS: u64 = 2_147_483_647;

/// What `summarizeTimeoutMs` may be.
const TIMEOUT_EXPECTED: &str =
    "a whole number of milliseconds from 0 to 2147483647 (0: no timeout)";

/// The summarizer's timeout (`summarizeTimeoutMs`), given as `number` when
/// it is a number: a whole number of milliseconds up to [`MAX_TIMEOUT_MS`],
/// 0 for none; absent, [`DEFAULT_TIMEOUT_MS`].
pub fn timeout_ms(given: Option<Option<f64>>) -> Result<f64, &'static str> {
    match given {
        None => Ok(DEFAULT_TIMEOUT_MS),
        Some(number) => number
            .and_then(token_count_of)
            .filter(|&ms| ms <= MAX_TIMEOUT_MS)
            .map(|ms| ms as f64)
            .ok_or(TIMEOUT_EXPECTED),
    }
}

/// Reads `summarizeTimeoutMs` (`undefined` or `null`: the default).
fn summarize_timeout<V: Value>(r: &Reader<V>) -> Result<f64, InputError> {
    let key = "summarizeTimeoutMs";
    let value = r.field(key)?;
    let given = (!value.is_nullish()).then(|| value.number());
    timeout_ms(given).map_err(|expected| r.wrong_number(key, expected, &value))
}

/// `new Compactor(options)`'s options, read in this order (a getter runs
/// once, and the first bad option is the error). `settings` and `model`
/// are parsed by the caller's readers as soon as they are read.
pub struct CompactorOptions<V: Value, S, M> {
    pub on_event: Option<V::Function>,
    pub settings: S,
    pub model: M,
    pub context_window: Option<f64>,
    pub summarize: Option<V::Function>,
    pub before_compact: Option<V::Function>,
    pub fallback_extractive: bool,
    pub estimator: EstimatorChoice,
    pub summarizer_window: Option<u64>,
    pub timeout_ms: f64,
    /// Summary requests may repeat the conversation as the model last saw
    /// it (`cacheFriendly`, default `true`).
    pub cache_friendly: bool,
}

pub fn compactor_options<V: Value, S, M>(
    options: &V,
    r: &Reader<V>,
    settings: impl FnOnce(V) -> Result<S, InputError>,
    model: impl FnOnce(V) -> Result<M, InputError>,
) -> Result<CompactorOptions<V, S, M>, InputError> {
    expect_object(r.root, options, "an object")?;
    let on_event = r.function("onEvent")?;
    let settings = settings(r.field("settings")?)?;
    let model = model(r.field("model")?)?;
    let context_window = r.number("contextWindow")?;
    let summarize = r.function("summarize")?;
    let before_compact = r.function("beforeCompact")?;
    let given = r.field("fallback")?;
    let fallback_extractive = fallback_extractive(
        given.is_undefined(),
        given.name().as_deref(),
        summarize.is_some(),
    )
    .map_err(|e| r.wrong("fallback", e, &given))?;
    let given = r.field("estimator")?;
    let estimator = estimator(given.is_undefined(), given.name().as_deref())
        .map_err(|e| r.wrong("estimator", e, &given))?;
    Ok(CompactorOptions {
        on_event,
        settings,
        model,
        context_window,
        summarize,
        before_compact,
        fallback_extractive,
        estimator,
        summarizer_window: r.token_count("summarizerContextWindow")?,
        timeout_ms: summarize_timeout(r)?,
        cache_friendly: optional_bool(r, "cacheFriendly", true)?,
    })
}

/// A boolean option: `default` when `undefined`.
fn optional_bool<V: Value>(
    r: &Reader<V>,
    key: &'static str,
    default: bool,
) -> Result<bool, InputError> {
    let given = r.field(key)?;
    if given.is_undefined() {
        return Ok(default);
    }
    given
        .boolean()
        .ok_or_else(|| r.wrong(key, "a boolean", &given))
}

/// `compact(messages, options)`'s options: all optional, `undefined` or
/// `null` for none.
pub struct CompactOptions<V: Value> {
    pub reason: Reason,
    pub custom_instructions: Option<V::Text>,
    pub signal: Option<V>,
    pub will_retry: bool,
    /// `conversation`: the system prompt and tools the conversation's
    /// requests carry, as an object (read by [`conversation`]).
    pub conversation: Option<V>,
}

impl<V: Value> CompactOptions<V> {
    /// Whether these are the messages of an overflow's retry, whose failed
    /// attempt the caller took out of their end (`reason: "overflow"`,
    /// `willRetry: true`): the cut may fall where it was, as in pi's session
    /// ([`crate::compaction::prepare::prepare_compaction_with`]).
    pub fn after_failed_attempt(&self) -> bool {
        self.reason == Reason::Overflow && self.will_retry
    }
}

/// `compact`'s `conversation` option: the system prompt (a string, or the
/// AI SDK's system messages: an object) and the tools (an object: an array
/// of pi-ai tools or an AI SDK tool set), passed on as they are, that the
/// conversation's requests carry.
pub struct Conversation<V: Value> {
    pub system_prompt: Option<V>,
    pub tools: Option<V>,
}

/// What `options.conversation.systemPrompt` must be: pi-ai's text, or what
/// the AI SDK's `instructions` take besides a string (the system messages,
/// as the conversation's requests send them).
const SYSTEM_PROMPT_EXPECTED: &str = "a string, or AI SDK system messages (an object or an array)";

/// What `options.conversation.tools` must be.
const TOOLS_EXPECTED: &str = "an array of pi-ai tools or an AI SDK tool set (an object)";

/// Reads `options.conversation` (`r` reads its fields).
pub fn conversation<V: Value>(r: &Reader<V>) -> Result<Conversation<V>, InputError> {
    let system_prompt = r.field("systemPrompt")?;
    let system_prompt = match system_prompt {
        s if s.is_nullish() => None,
        s if s.text().is_some() || s.is_object() => Some(s),
        s => return Err(r.wrong("systemPrompt", SYSTEM_PROMPT_EXPECTED, &s)),
    };
    let tools = r.field("tools")?;
    let tools = match tools {
        t if t.is_nullish() => None,
        t if t.is_object() => Some(t),
        t => return Err(r.wrong("tools", TOOLS_EXPECTED, &t)),
    };
    Ok(Conversation {
        system_prompt,
        tools,
    })
}

pub fn compact_options<V: Value>(
    options: &V,
    r: &Reader<V>,
) -> Result<CompactOptions<V>, InputError> {
    if options.is_nullish() {
        return Ok(CompactOptions {
            reason: Reason::Manual,
            custom_instructions: None,
            signal: None,
            will_retry: false,
            conversation: None,
        });
    }
    expect_object(r.root, options, "an object")?;
    let given = r.field("reason")?;
    let name = given.name();
    let reason = Reason::from_option((!given.is_undefined()).then_some(name.as_deref()))
        .map_err(|e| r.wrong("reason", e, &given))?;
    Ok(CompactOptions {
        reason,
        custom_instructions: r.text("customInstructions")?,
        signal: r.abort_signal("signal")?,
        will_retry: r.truthy("willRetry")?,
        conversation: conversation_field(r)?,
    })
}

/// `compactInBackground(messages, options)`'s options: `compact`'s, and
/// always a threshold compaction that no request waits for, so a `reason`
/// other than `"threshold"` and a `willRetry` are refused rather than
/// dropped.
pub fn background_options<V: Value>(
    options: &V,
    r: &Reader<V>,
) -> Result<CompactOptions<V>, InputError> {
    let mut o = compact_options(options, r)?;
    if !options.is_nullish() {
        let reason = r.field("reason")?;
        if !reason.is_undefined() && o.reason != Reason::Threshold {
            return Err(r.wrong(
                "reason",
                "\"threshold\" or left out (a compaction in the background is a threshold one)",
                &reason,
            ));
        }
        if o.will_retry {
            let given = r.field("willRetry")?;
            return Err(r.wrong(
                "willRetry",
                "false or left out (no request waits for a compaction in the background)",
                &given,
            ));
        }
    }
    o.reason = Reason::Threshold;
    Ok(o)
}

/// `options.conversation`: an object, or none.
fn conversation_field<V: Value>(r: &Reader<V>) -> Result<Option<V>, InputError> {
    match r.field("conversation")? {
        c if c.is_nullish() => Ok(None),
        c if c.is_object() => Ok(Some(c)),
        c => Err(r.wrong("conversation", "an object", &c)),
    }
}

/// `compactIfNeeded(messages, options)`'s options: all optional.
pub struct IfNeededOptions<V: Value> {
    /// `Some(will_retry)` after an overflow (`reason: "overflow"`): the
    /// compaction is needed, and a background one is the one it takes.
    pub overflow: Option<bool>,
    /// The fraction of the threshold at which a compaction starts in the
    /// background (none: never).
    pub background_at: Option<f64>,
    /// As `compact`'s (read by [`conversation`]).
    pub conversation: Option<V>,
    /// Called when a compaction this call started in the background ends.
    pub on_background_end: Option<V::Function>,
}

pub fn if_needed_options<V: Value>(
    options: &V,
    r: &Reader<V>,
) -> Result<IfNeededOptions<V>, InputError> {
    if options.is_nullish() {
        return Ok(IfNeededOptions {
            overflow: None,
            background_at: None,
            conversation: None,
            on_background_end: None,
        });
    }
    expect_object(r.root, options, "an object")?;
    let given = r.field("reason")?;
    let overflow = match given.name().as_deref() {
        _ if given.is_undefined() => false,
        Some("threshold") => false,
        Some("overflow") => true,
        _ => return Err(r.wrong("reason", "\"threshold\" or \"overflow\"", &given)),
    };
    let will_retry = r.truthy("willRetry")?;
    let given = r.number("backgroundAt")?;
    Ok(IfNeededOptions {
        overflow: overflow.then_some(will_retry),
        background_at: super::background::fraction(given, || r.path("backgroundAt"))?,
        conversation: conversation_field(r)?,
        on_background_end: r.function("onBackgroundEnd")?,
    })
}

/// `summarizeBranch(messages, options)`'s options.
pub struct BranchOptions<V: Value> {
    pub custom_instructions: Option<V::Text>,
    pub from_id: Option<V>,
    pub replace_instructions: bool,
    pub signal: Option<V>,
}

pub fn branch_options<V: Value>(
    options: &V,
    r: &Reader<V>,
) -> Result<BranchOptions<V>, InputError> {
    if options.is_nullish() {
        return Ok(BranchOptions {
            custom_instructions: None,
            from_id: None,
            replace_instructions: false,
            signal: None,
        });
    }
    expect_object(r.root, options, "an object")?;
    let custom_instructions = r.text("customInstructions")?;
    let from_id = r.field("fromId")?;
    if !(from_id.is_undefined() || from_id.text().is_some()) {
        return Err(r.wrong("fromId", "a string", &from_id));
    }
    Ok(BranchOptions {
        custom_instructions,
        from_id: Some(from_id),
        replace_instructions: r.truthy("replaceInstructions")?,
        signal: r.abort_signal("signal")?,
    })
}

/// `agentMessagesToChatMessages`'s `options.divider`: off unless `true`.
pub fn divider_option<V: Value>(options: &V, r: &Reader<V>) -> Result<bool, InputError> {
    if options.is_nullish() {
        return Ok(false);
    }
    expect_object(r.root, options, "an object or undefined")?;
    let divider = r.field("divider")?;
    if divider.is_undefined() {
        return Ok(false);
    }
    divider
        .boolean()
        .ok_or_else(|| r.wrong("divider", "a boolean", &divider))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_is_extractive_without_a_summarizer() {
        assert_eq!(fallback_extractive(true, None, false), Ok(true));
        assert_eq!(fallback_extractive(true, None, true), Ok(false));
        assert_eq!(
            fallback_extractive(false, Some("extractive"), true),
            Ok(true)
        );
        assert_eq!(fallback_extractive(false, Some("none"), false), Ok(false));
        // null, another string, a number: refused.
        assert_eq!(
            fallback_extractive(false, None, true),
            Err("\"extractive\" or \"none\"")
        );
        assert!(fallback_extractive(false, Some("Extractive"), true).is_err());
    }

    #[test]
    fn pi_is_the_default_estimator() {
        assert_eq!(estimator(true, None), Ok(EstimatorChoice::Calibrated));
        assert_eq!(estimator(false, Some("pi")), Ok(EstimatorChoice::Pi));
        assert_eq!(
            estimator(false, Some("calibrated")),
            Ok(EstimatorChoice::Calibrated)
        );
        assert_eq!(estimator(false, None), Err("\"calibrated\" or \"pi\""));
        assert!(estimator(false, Some("")).is_err());
    }

    #[test]
    fn token_counts_are_non_negative_safe_integers() {
        assert_eq!(token_count(Some(0.0)), Ok(0));
        assert_eq!(token_count(Some(128_000.0)), Ok(128_000));
        assert_eq!(
            token_count(Some(9_007_199_254_740_991.0)),
            Ok(9_007_199_254_740_991)
        );
        for bad in [
            Some(-1.0),
            Some(1.5),
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(9.1e15),
            None,
        ] {
            assert_eq!(token_count(bad), Err("a non-negative safe integer"));
        }
    }

    #[test]
    fn a_timeout_is_a_whole_number_of_milliseconds_a_timer_can_wait() {
        assert_eq!(timeout_ms(None), Ok(120_000.0));
        assert_eq!(timeout_ms(Some(Some(5.0))), Ok(5.0));
        assert_eq!(timeout_ms(Some(Some(0.0))), Ok(0.0), "0: no timeout");
        assert_eq!(timeout_ms(Some(Some(2_147_483_647.0))), Ok(2_147_483_647.0));
        for bad in [
            Some(2_147_483_648.0),
            Some(9_007_199_254_740_991.0),
            Some(-1.0),
            Some(1.5),
            Some(f64::NAN),
            Some(f64::INFINITY),
            None,
        ] {
            assert_eq!(timeout_ms(Some(bad)), Err(TIMEOUT_EXPECTED), "{bad:?}");
        }
    }

    use crate::js::options::tests::{Fields, Js};
    use crate::js::options::Reader;

    fn message<T>(r: Result<T, InputError>) -> String {
        match r {
            Ok(_) => panic!("no error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn compactor_options_are_read_in_order_with_their_defaults() {
        let o = Fields::new(vec![("summarize", Js::Fun("s")), ("settings", Js::Obj)]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        let got = compactor_options(&Js::Obj, &r, Ok, Ok).unwrap();
        assert_eq!(got.settings, Js::Obj);
        assert_eq!(got.model, Js::Undefined);
        assert_eq!(got.summarize, Some("s"));
        assert_eq!((got.on_event, got.before_compact), (None, None));
        // With a summarizer the fallback is off unless asked for.
        assert!(!got.fallback_extractive);
        assert_eq!(got.estimator, EstimatorChoice::Calibrated);
        assert_eq!((got.summarizer_window, got.timeout_ms), (None, 120_000.0));
        assert_eq!(got.context_window, None);
        assert_eq!(
            *o.reads.borrow(),
            [
                "onEvent",
                "settings",
                "model",
                "contextWindow",
                "summarize",
                "beforeCompact",
                "fallback",
                "estimator",
                "summarizerContextWindow",
                "summarizeTimeoutMs",
                "cacheFriendly"
            ]
        );
        assert!(got.cache_friendly, "on by default");
        let o = Fields::new(vec![
            ("fallback", Js::Str("extractive")),
            ("estimator", Js::Str("pi")),
            ("contextWindow", Js::Num(8000.0)),
            ("summarizerContextWindow", Js::Num(4096.0)),
            ("summarizeTimeoutMs", Js::Num(50.0)),
            ("cacheFriendly", Js::Bool(false)),
        ]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        let got = compactor_options(&Js::Obj, &r, |_| Ok(()), |_| Ok(())).unwrap();
        assert!(!got.cache_friendly);
        assert!(got.fallback_extractive);
        assert_eq!(got.estimator, EstimatorChoice::Pi);
        assert_eq!(got.context_window, Some(8000.0));
        assert_eq!((got.summarizer_window, got.timeout_ms), (Some(4096), 50.0));
    }

    #[test]
    fn compactor_options_name_the_first_bad_one() {
        let bad = |fields: Vec<(&'static str, Js)>| {
            let o = Fields::new(fields);
            let get = |k| o.get(k);
            let r = Reader {
                root: "options",
                get: &get,
            };
            message(compactor_options(&Js::Obj, &r, |_| Ok(()), |_| Ok(())))
        };
        assert_eq!(
            bad(vec![
                ("fallback", Js::Str("never")),
                ("estimator", Js::Num(1.0))
            ]),
            "options.fallback must be \"extractive\" or \"none\", got a string"
        );
        assert_eq!(
            bad(vec![("estimator", Js::Null)]),
            "options.estimator must be \"calibrated\" or \"pi\", got null"
        );
        assert_eq!(
            bad(vec![("onEvent", Js::Obj)]),
            "options.onEvent must be a function, got an object"
        );
        assert_eq!(
            bad(vec![("summarizeTimeoutMs", Js::Num(-1.0))]),
            "options.summarizeTimeoutMs must be a whole number of milliseconds from 0 to \
             2147483647 (0: no timeout), got -1"
        );
        // A timer cannot wait longer: it would fire at once.
        assert_eq!(
            bad(vec![("summarizeTimeoutMs", Js::Num(2_147_483_648.0))]),
            "options.summarizeTimeoutMs must be a whole number of milliseconds from 0 to \
             2147483647 (0: no timeout), got 2147483648"
        );
        assert_eq!(
            bad(vec![("summarizeTimeoutMs", Js::Str("60000"))]),
            "options.summarizeTimeoutMs must be a whole number of milliseconds from 0 to \
             2147483647 (0: no timeout), got a string"
        );
        assert_eq!(
            bad(vec![("cacheFriendly", Js::Num(0.0))]),
            "options.cacheFriendly must be a boolean, got a number"
        );
        // The settings reader's error comes before later options'.
        let o = Fields::new(vec![("summarize", Js::Num(1.0))]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        let e = compactor_options(
            &Js::Obj,
            &r,
            |_| -> Result<(), InputError> { Err(r.wrong("settings", "an object", &Js::Num(2.0))) },
            |_| Ok(()),
        );
        assert_eq!(
            message(e),
            "options.settings must be an object, got a number"
        );
        assert_eq!(
            message(compactor_options(&Js::Null, &r, |_| Ok(()), |_| Ok(()))),
            "options must be an object, got null"
        );
    }

    #[test]
    fn compact_options_default_to_a_manual_compaction() {
        let o = Fields::new(vec![]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        for none in [Js::Undefined, Js::Null] {
            let got = compact_options(&none, &r).unwrap();
            assert_eq!(got.reason, Reason::Manual);
            assert_eq!(
                (got.custom_instructions, got.signal, got.will_retry),
                (None, None, false)
            );
        }
        assert!(o.reads.borrow().is_empty());
        assert_eq!(
            message(compact_options(&Js::Str("x"), &r)),
            "options must be an object, got a string"
        );
        let o = Fields::new(vec![
            ("reason", Js::Str("overflow")),
            ("customInstructions", Js::Str("")),
            ("signal", Js::Signal),
            ("willRetry", Js::Num(1.0)),
            ("conversation", Js::Obj),
        ]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        let got = compact_options(&Js::Obj, &r).unwrap();
        assert_eq!(got.reason, Reason::Overflow);
        assert_eq!(got.custom_instructions, None);
        assert_eq!((got.signal, got.will_retry), (Some(Js::Signal), true));
        assert_eq!(got.conversation, Some(Js::Obj));
        assert_eq!(
            *o.reads.borrow(),
            [
                "reason",
                "customInstructions",
                "signal",
                "willRetry",
                "conversation"
            ]
        );
        // A signal that is not an AbortSignal is refused before anything starts.
        for bad in [Js::Obj, Js::Str("x"), Js::Num(5.0), Js::Bool(true)] {
            let what = bad.describe();
            let o = Fields::new(vec![("signal", bad)]);
            let get = |k| o.get(k);
            let r = Reader {
                root: "options",
                get: &get,
            };
            assert_eq!(
                message(compact_options(&Js::Obj, &r)),
                format!("options.signal must be an AbortSignal, got {what}")
            );
            assert_eq!(
                message(branch_options(&Js::Obj, &r)),
                format!("options.signal must be an AbortSignal, got {what}")
            );
        }
        let o = Fields::new(vec![("conversation", Js::Str("be brief"))]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        assert_eq!(
            message(compact_options(&Js::Obj, &r)),
            "options.conversation must be an object, got a string"
        );
        let o = Fields::new(vec![("reason", Js::Null)]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        assert_eq!(
            message(compact_options(&Js::Obj, &r)),
            "options.reason must be \"manual\", \"threshold\" or \"overflow\", got null"
        );
    }

    #[test]
    fn a_compaction_in_the_background_is_a_threshold_one_that_nobody_retries() {
        let read = |fields: Vec<(&'static str, Js)>| {
            let o = Fields::new(fields);
            let get = |k| o.get(k);
            let r = Reader {
                root: "options",
                get: &get,
            };
            background_options(&Js::Obj, &r).map(|o| (o.reason, o.will_retry))
        };
        let none = Fields::new(vec![]);
        let get = |k| none.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        let o = background_options(&Js::Undefined, &r).unwrap();
        assert_eq!(o.reason, Reason::Threshold);
        assert_eq!(read(vec![]), Ok((Reason::Threshold, false)));
        assert_eq!(
            read(vec![
                ("reason", Js::Str("threshold")),
                ("willRetry", Js::Bool(false))
            ]),
            Ok((Reason::Threshold, false))
        );
        for other in ["manual", "overflow"] {
            assert_eq!(
                message(read(vec![("reason", Js::Str(other))])),
                format!(
                    "options.reason must be \"threshold\" or left out (a compaction in the \
                     background is a threshold one), got a string"
                )
            );
        }
        assert_eq!(
            message(read(vec![("willRetry", Js::Bool(true))])),
            "options.willRetry must be false or left out (no request waits for a compaction \
             in the background), got a boolean"
        );
        // `compact`'s own checks come first.
        assert_eq!(
            message(read(vec![("reason", Js::Str("later"))])),
            "options.reason must be \"manual\", \"threshold\" or \"overflow\", got a string"
        );
    }

    #[test]
    fn the_conversation_carries_a_system_prompt_and_tools_as_given() {
        let read = |fields: Vec<(&'static str, Js)>| {
            let o = Fields::new(fields);
            let get = |k| o.get(k);
            let r = Reader {
                root: "options.conversation",
                get: &get,
            };
            conversation(&r).map(|c| (c.system_prompt, c.tools))
        };
        assert_eq!(
            read(vec![("systemPrompt", Js::Str("")), ("tools", Js::Obj)]).unwrap(),
            (Some(Js::Str("")), Some(Js::Obj))
        );
        assert_eq!(
            read(vec![("systemPrompt", Js::Null)]).unwrap(),
            (None, None)
        );
        assert_eq!(
            message(read(vec![("systemPrompt", Js::Num(1.0))])),
            "options.conversation.systemPrompt must be a string, or AI SDK system messages (an \
             object or an array), got a number"
        );
        // The AI SDK's system messages, passed on as they are.
        assert_eq!(
            read(vec![("systemPrompt", Js::Obj)]).unwrap(),
            (Some(Js::Obj), None)
        );
        assert_eq!(
            message(read(vec![("tools", Js::Str("read_file"))])),
            "options.conversation.tools must be an array of pi-ai tools or an AI SDK tool set (an object), got a string"
        );
        assert_eq!(
            message(read(vec![("tools", Js::Num(2.0))])),
            "options.conversation.tools must be an array of pi-ai tools or an AI SDK tool set (an object), got a number"
        );
    }

    #[test]
    fn branch_options_check_from_id_and_read_the_rest() {
        let o = Fields::new(vec![
            ("customInstructions", Js::Str("focus")),
            ("fromId", Js::Str("")),
            ("replaceInstructions", Js::Bool(true)),
        ]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        let got = branch_options(&Js::Obj, &r).unwrap();
        assert_eq!(got.custom_instructions, Some("focus"));
        assert_eq!(got.from_id, Some(Js::Str("")));
        assert!(got.replace_instructions);
        assert_eq!(got.signal, None);
        assert_eq!(
            *o.reads.borrow(),
            [
                "customInstructions",
                "fromId",
                "replaceInstructions",
                "signal"
            ]
        );
        let got = branch_options(&Js::Null, &r).unwrap();
        assert_eq!(
            (got.from_id, got.signal, got.replace_instructions),
            (None, None, false)
        );
        let o = Fields::new(vec![("fromId", Js::Num(3.0))]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "options",
            get: &get,
        };
        assert_eq!(
            message(branch_options(&Js::Obj, &r)),
            "options.fromId must be a string, got a number"
        );
        assert_eq!(
            message(branch_options(&Js::Bool(true), &r)),
            "options must be an object, got a boolean"
        );
    }

    #[test]
    fn the_divider_is_off_unless_true() {
        let read = |options: Js, divider: Js| {
            let o = Fields::new(vec![("divider", divider)]);
            let get = |k| o.get(k);
            let r = Reader {
                root: "options",
                get: &get,
            };
            divider_option(&options, &r)
        };
        assert_eq!(read(Js::Undefined, Js::Bool(true)), Ok(false));
        assert_eq!(read(Js::Obj, Js::Undefined), Ok(false));
        assert_eq!(read(Js::Obj, Js::Bool(true)), Ok(true));
        assert_eq!(read(Js::Obj, Js::Bool(false)), Ok(false));
        assert_eq!(
            message(read(Js::Obj, Js::Null)),
            "options.divider must be a boolean, got null"
        );
        assert_eq!(
            message(read(Js::Num(1.0), Js::Undefined)),
            "options must be an object or undefined, got a number"
        );
    }
}
