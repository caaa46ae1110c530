//! Every branch of the compaction flow, driven with a fake host whose texts
//! are Rust strings (measured in UTF-16 code units, as JavaScript does).

use super::*;

/// A usage is its numbers; details and abort errors are labels.
type Usage = UsageTotals;

struct Fake {
    /// The history's messages, serialized one by one.
    history: Vec<String>,
    turn_prefix: String,
    /// Requests started, in order.
    calls: Vec<Request<String>>,
    /// Starting a call of this kind throws.
    start_throws: Option<SummaryKind>,
    serialize_throws: bool,
    extractive: Result<String, String>,
    extractive_asked: Vec<usize>,
    aborted: Option<&'static str>,
    now: f64,
    /// The compactor's estimator is the calibrated one (else pi's).
    calibrated: bool,
}

impl Default for Fake {
    fn default() -> Self {
        Fake {
            history: vec!["[User]: hello".into(), "[Assistant]: hi".into()],
            turn_prefix: "[User]: start of the turn".into(),
            calls: Vec::new(),
            start_throws: None,
            serialize_throws: false,
            extractive: Ok("EXTRACTIVE".into()),
            extractive_asked: Vec::new(),
            aborted: None,
            now: 1_000.0,
            calibrated: false,
        }
    }
}

impl TextOps for Fake {
    type Text = String;
    type Sink = String;
    fn borrow(text: &String) -> &str {
        text
    }
    fn finish(sink: String) -> String {
        sink
    }
    fn len(text: &String) -> usize {
        text.encode_utf16().count()
    }
    fn is_blank(text: &String) -> bool {
        text.trim().is_empty()
    }
    fn prefix(text: &String, units: usize) -> String {
        let units: Vec<u16> = text.encode_utf16().take(units).collect();
        String::from_utf16_lossy(&units)
    }
    fn find(text: &String, needle: &str) -> Option<usize> {
        text.find(needle).map(|b| text[..b].encode_utf16().count())
    }
}

impl FlowHost for Fake {
    type Usage = Usage;
    type Details = &'static str;
    type AbortError = &'static str;
    fn usage_totals(&self, usage: &Usage) -> UsageTotals {
        *usage
    }
    fn history_texts(&mut self, per_message: bool) -> Result<Vec<String>, String> {
        if self.serialize_throws {
            return Err("a getter threw".into());
        }
        Ok(if per_message {
            self.history.clone()
        } else {
            vec![self.history.join("\n\n")]
        })
    }
    fn turn_prefix_text(&mut self) -> Result<String, String> {
        Ok(self.turn_prefix.clone())
    }
    fn start_call(&mut self, request: Request<String>) -> Result<(), String> {
        if self.start_throws == Some(request.kind) {
            return Err(format!("{} threw at once", request.kind.name()));
        }
        self.calls.push(request);
        Ok(())
    }
    fn aborted(&mut self) -> Option<&'static str> {
        self.aborted
    }
    fn now(&mut self) -> f64 {
        self.now
    }
    fn summary_tokens(&mut self, text: &String) -> u64 {
        if self.calibrated {
            crate::tokens::calibrated::estimate_texts([text.as_bytes()])
        } else {
            Self::len(text).div_ceil(4) as u64
        }
    }
}

fn config() -> FlowConfig {
    FlowConfig {
        reason: Reason::Manual,
        has_hook: false,
        has_summarizer: true,
        fallback_extractive: false,
        summarizer_window: None,
        reserve_tokens: 1_000,
        one_request: false,
    }
}

fn input() -> FlowInput<String> {
    FlowInput {
        previous_summary: None,
        custom_instructions: None,
        has_history: true,
        has_turn_prefix: false,
        tokens_before: 10_000.0,
        kept: vec![
            MessageFacts::new(Role::User, 100, None, 900.0),
            MessageFacts::new(Role::Assistant, 100, None, 950.0),
        ],
        kept_cleared: 0,
        summary_note: 0,
        ratio: 1.0,
        survivors: Survivors::default(),
        prefix: None,
    }
}

fn text(t: &str) -> Event<Fake> {
    Event::Answer(Answer::Text {
        text: t.into(),
        usage: None,
    })
}

fn text_with_usage(t: &str, input: f64) -> Event<Fake> {
    Event::Answer(Answer::Text {
        text: t.into(),
        usage: Some(UsageTotals {
            input,
            output: 1.0,
            cost: CostTotals {
                total: 0.5,
                ..CostTotals::default()
            },
            ..UsageTotals::default()
        }),
    })
}

fn answer(a: Answer<String, Usage, &'static str>) -> Event<Fake> {
    Event::Answer(a)
}

/// Runs the flow, feeding `events` to each step that waits on the app, and
/// the fake's extractive summary to each [`Step::Extract`]; returns the
/// steps that waited on the app (as names) and the last step.
fn drive(
    config: FlowConfig,
    input: FlowInput<String>,
    host: &mut Fake,
    events: Vec<Event<Fake>>,
) -> (Vec<String>, Step<Fake>) {
    let mut flow = CompactionFlow::new(config, input);
    let mut events = events.into_iter();
    let mut waited = Vec::new();
    let mut step = flow.step(host, Event::Start);
    while matches!(step, Step::AskHook | Step::Await(_) | Step::Extract { .. }) {
        if let Step::Extract { max_chars } = step {
            host.extractive_asked.push(max_chars);
            let built = host.extractive.clone();
            step = flow.step(host, Event::Extracted(built));
            continue;
        }
        waited.push(format!("{step:?}"));
        let event = events
            .next()
            .unwrap_or_else(|| panic!("no event left for {step:?}"));
        step = flow.step(host, event);
    }
    assert!(events.next().is_none(), "events left over");
    (waited, step)
}

fn inserted(step: Step<Fake>) -> Insert<String, Usage, &'static str> {
    match step {
        Step::Insert(i) => i,
        other => panic!("expected an insert, got {other:?}"),
    }
}

fn failed(step: Step<Fake>) -> String {
    match step {
        Step::Fail(Failure::Failed(m)) => m,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn hooked() -> FlowConfig {
    FlowConfig {
        has_hook: true,
        ..config()
    }
}

#[test]
fn the_hook_cancels_and_nothing_is_asked() {
    let mut host = Fake::default();
    let (waited, step) = drive(
        hooked(),
        input(),
        &mut host,
        vec![Event::Hook(HookAnswer::Cancel)],
    );
    assert_eq!(waited, ["AskHook"]);
    assert!(matches!(step, Step::Fail(Failure::Cancelled)));
    assert!(host.calls.is_empty() && host.extractive_asked.is_empty());
    let end = end_event::<()>(Reason::Manual, true, Ending::Failed(&Failure::Cancelled));
    assert_eq!(
        end,
        EndEvent {
            aborted: true,
            will_retry: false,
            error_message: None
        }
    );
}

#[test]
fn the_hook_supplies_the_summary_with_or_without_details_and_usage() {
    let mut host = Fake::default();
    let usage = UsageTotals {
        input: 7.0,
        ..UsageTotals::default()
    };
    let (_, step) = drive(
        hooked(),
        input(),
        &mut host,
        vec![Event::Hook(HookAnswer::Summary {
            text: "from the app".into(),
            details: Some("app details"),
            usage: Some(usage),
        })],
    );
    let i = inserted(step);
    assert_eq!(i.text, "from the app");
    assert_eq!(i.details, Some("app details"));
    assert_eq!(i.usage, Some(UsageOut::One(usage)));
    assert!(i.from_hook);
    assert_eq!(i.summarized_by, SummarizedBy::Hook);
    assert_eq!(i.summarized_by.name(), "hook");
    assert_eq!(i.fallback_reason, None);
    assert!(host.calls.is_empty(), "the summarizer is not called");

    let (_, step) = drive(
        hooked(),
        input(),
        &mut Fake::default(),
        vec![Event::Hook(HookAnswer::Summary {
            text: "bare".into(),
            details: None,
            usage: None,
        })],
    );
    let i = inserted(step);
    assert_eq!((i.details, i.usage, i.from_hook), (None, None, true));
}

#[test]
fn a_hook_that_answers_nothing_lets_the_summarizer_run() {
    let mut host = Fake::default();
    let (waited, step) = drive(
        hooked(),
        input(),
        &mut host,
        vec![Event::Hook(HookAnswer::Nothing), text("S")],
    );
    assert_eq!(waited, ["AskHook", "Await(History)"]);
    assert_eq!(inserted(step).summarized_by, SummarizedBy::Summarizer);
}

#[test]
fn a_hook_that_throws_or_answers_a_bad_summary_fails_without_fallback() {
    let fallback = FlowConfig {
        fallback_extractive: true,
        ..hooked()
    };
    let (_, step) = drive(
        fallback,
        input(),
        &mut Fake::default(),
        vec![Event::Hook(HookAnswer::SummaryNotText {
            got: "a number".into(),
        })],
    );
    assert_eq!(
        failed(step),
        "beforeCompact result.summary must be a string, got a number"
    );
    let (_, step) = drive(
        fallback,
        input(),
        &mut Fake::default(),
        vec![Event::Hook(HookAnswer::Threw("hook broke".into()))],
    );
    assert_eq!(failed(step), "hook broke");
    // An empty or blank text is refused, as the summarizer's is: the model
    // would be left nothing of what the summary hides.
    for blank in ["", "  \n\t "] {
        let mut host = Fake::default();
        let (_, step) = drive(
            fallback,
            input(),
            &mut host,
            vec![Event::Hook(HookAnswer::Summary {
                text: blank.into(),
                details: None,
                usage: None,
            })],
        );
        assert_eq!(failed(step), HOOK_EMPTY, "{blank:?}");
        assert!(host.calls.is_empty() && host.extractive_asked.is_empty());
    }
}

#[test]
fn a_hook_summary_after_an_abort_is_not_inserted() {
    let mut host = Fake {
        aborted: Some("stop"),
        ..Fake::default()
    };
    let (_, step) = drive(
        hooked(),
        input(),
        &mut host,
        vec![Event::Hook(HookAnswer::Summary {
            text: "late".into(),
            details: None,
            usage: None,
        })],
    );
    assert!(matches!(step, Step::Fail(Failure::Aborted("stop"))));
}

#[test]
fn without_a_callback_the_extractive_summary_is_used_or_the_call_fails() {
    let no_callback = FlowConfig {
        has_summarizer: false,
        fallback_extractive: true,
        ..config()
    };
    let mut host = Fake::default();
    let (waited, step) = drive(no_callback, input(), &mut host, vec![]);
    assert!(waited.is_empty());
    let i = inserted(step);
    assert_eq!(i.text, "EXTRACTIVE");
    assert_eq!(i.summarized_by, SummarizedBy::Extractive);
    assert_eq!(i.fallback_reason, None, "no callback is not a fallback");
    assert_eq!(
        host.extractive_asked,
        [800 * 4],
        "0.8 × reserve, 4 chars a token"
    );

    let none = FlowConfig {
        fallback_extractive: false,
        ..no_callback
    };
    let (_, step) = drive(none, input(), &mut Fake::default(), vec![]);
    assert_eq!(failed(step), NO_CALLBACK);
}

#[test]
fn a_failed_callback_falls_back_to_the_extractive_summary_when_allowed() {
    let fallback = FlowConfig {
        fallback_extractive: true,
        ..config()
    };
    let mut host = Fake::default();
    let (_, step) = drive(
        fallback,
        input(),
        &mut host,
        vec![answer(Answer::Failed("HTTP 500".into()))],
    );
    let i = inserted(step);
    assert_eq!(i.text, "EXTRACTIVE");
    assert_eq!(i.summarized_by, SummarizedBy::Extractive);
    assert_eq!(i.fallback_reason.as_deref(), Some("HTTP 500"));
    assert_eq!(i.usage, None);

    let (_, step) = drive(
        config(),
        input(),
        &mut Fake::default(),
        vec![answer(Answer::Failed("HTTP 500".into()))],
    );
    assert_eq!(failed(step), "HTTP 500");

    // A callback that throws at once, or messages that cannot be read, fall back too.
    let mut host = Fake {
        start_throws: Some(SummaryKind::History),
        ..Fake::default()
    };
    let i = inserted(drive(fallback, input(), &mut host, vec![]).1);
    assert_eq!(i.fallback_reason.as_deref(), Some("history threw at once"));
    let mut host = Fake {
        serialize_throws: true,
        ..Fake::default()
    };
    let i = inserted(drive(fallback, input(), &mut host, vec![]).1);
    assert_eq!(i.fallback_reason.as_deref(), Some("a getter threw"));
    assert!(host.calls.is_empty());

    // The fallback itself failing is the failure.
    let mut host = Fake {
        extractive: Err("could not read the messages to summarize".into()),
        ..Fake::default()
    };
    let (_, step) = drive(
        fallback,
        input(),
        &mut host,
        vec![answer(Answer::Failed("x".into()))],
    );
    assert_eq!(failed(step), "could not read the messages to summarize");
}

#[test]
fn unusable_answers_are_failures_with_their_own_texts() {
    let cases: Vec<(Answer<String, Usage, &'static str>, &str)> = vec![
        (
            Answer::Text {
                text: " \n\t".into(),
                usage: None,
            },
            "the summarizer returned an empty summary",
        ),
        (
            Answer::TextNotString {
                got: "a number".into(),
            },
            "the summarizer returned an object whose text is a number, not a string",
        ),
        (
            Answer::NotTextOrObject { got: "null".into() },
            "the summarizer returned null, not a string or { text }",
        ),
    ];
    for (a, message) in cases {
        let (_, step) = drive(config(), input(), &mut Fake::default(), vec![answer(a)]);
        assert_eq!(failed(step), message);
    }
}

#[test]
fn one_request_without_a_window_with_the_first_summary_prompt() {
    let mut host = Fake::default();
    let custom = FlowInput {
        custom_instructions: Some("the parser bug".into()),
        ..input()
    };
    let (waited, step) = drive(config(), custom, &mut host, vec![text_with_usage("S", 3.0)]);
    assert_eq!(waited, ["Await(History)"]);
    assert_eq!(host.calls.len(), 1);
    let call = &host.calls[0];
    assert_eq!(call.kind, SummaryKind::History);
    assert_eq!(call.max_tokens, 800);
    assert_eq!(call.system_prompt, SYSTEM_PROMPT);
    assert!(call
        .prompt
        .starts_with("<conversation>\n[User]: hello\n\n[Assistant]: hi\n</conversation>"));
    assert!(!call.prompt.contains("<previous-summary>"));
    assert!(call.prompt.ends_with("Additional focus: the parser bug"));
    let i = inserted(step);
    assert_eq!(i.text, "S");
    assert!(matches!(i.usage, Some(UsageOut::One(u)) if u.input == 3.0));
    assert_eq!(i.summarized_by.name(), "summarizer");
}

#[test]
fn a_long_history_is_summarized_in_chunks_each_folded_into_the_running_summary() {
    // 4,000 characters of conversation a request (the floor): three
    // messages of 1,500 make two chunks, then one of 5,000 stands alone, cut.
    let mut host = Fake {
        history: vec![
            "a".repeat(1_500),
            "b".repeat(1_500),
            String::new(),
            "c".repeat(1_500),
            "d".repeat(5_000),
        ],
        ..Fake::default()
    };
    let windowed = FlowConfig {
        summarizer_window: Some(2_000),
        ..config()
    };
    let with_previous = FlowInput {
        previous_summary: Some("OLD".into()),
        ..input()
    };
    let (waited, step) = drive(
        windowed,
        with_previous,
        &mut host,
        vec![
            text_with_usage("S1", 1.0),
            text_with_usage("S2", 2.0),
            text_with_usage("S3", 4.0),
        ],
    );
    assert_eq!(waited, ["Await(History)"; 3]);
    let prompts: Vec<&str> = host.calls.iter().map(|c| c.prompt.as_str()).collect();
    let conversation = |p: &str| {
        let start = "<conversation>\n".len();
        let end = p.find("\n</conversation>").unwrap();
        p[start..end].to_string()
    };
    assert_eq!(
        conversation(prompts[0]),
        format!("{}\n\n{}", "a".repeat(1_500), "b".repeat(1_500))
    );
    assert_eq!(conversation(prompts[1]), "c".repeat(1_500));
    let cut = conversation(prompts[2]);
    assert_eq!(cut.encode_utf16().count(), 4_000, "cut to the budget");
    assert!(cut.ends_with(CHUNK_CUT_MARKER));
    // The running summary: the previous one first, then each answer.
    for (p, previous) in prompts.iter().zip(["OLD", "S1", "S2"]) {
        assert!(
            p.contains(&format!(
                "<previous-summary>\n{previous}\n</previous-summary>"
            )),
            "{previous}"
        );
    }
    let i = inserted(step);
    assert_eq!(i.text, "S3");
    let Some(UsageOut::Sum(total)) = i.usage else {
        panic!("usage of several calls is summed")
    };
    assert_eq!(
        (total.input, total.output, total.cost.total),
        (7.0, 3.0, 1.5)
    );
}

#[test]
fn a_summarizer_asked_once_gets_the_whole_history_in_one_request() {
    let mut host = Fake {
        history: vec!["a".repeat(1_500), "b".repeat(1_500), "c".repeat(1_500)],
        ..Fake::default()
    };
    let once = FlowConfig {
        summarizer_window: Some(2_000),
        one_request: true,
        ..config()
    };
    let (waited, step) = drive(once, input(), &mut host, vec![text_with_usage("S", 1.0)]);
    assert_eq!(waited, ["Await(History)"]);
    let prompt = &host.calls[0].prompt;
    assert!(
        prompt.contains(&"c".repeat(1_500)),
        "nothing cut to a window"
    );
    assert_eq!(inserted(step).text, "S");
}

#[test]
fn a_failing_chunk_stops_the_chain() {
    let mut host = Fake {
        history: vec!["a".repeat(3_000), "b".repeat(3_000)],
        ..Fake::default()
    };
    let windowed = FlowConfig {
        summarizer_window: Some(2_000),
        ..config()
    };
    let (waited, step) = drive(
        windowed,
        input(),
        &mut host,
        vec![text("S1"), answer(Answer::Failed("down".into()))],
    );
    assert_eq!(waited.len(), 2);
    assert_eq!(failed(step), "down");
}

fn split() -> FlowInput<String> {
    FlowInput {
        has_turn_prefix: true,
        ..input()
    }
}

#[test]
fn a_split_turn_summarizes_both_parts_in_parallel_and_joins_them() {
    let mut host = Fake::default();
    let (waited, step) = drive(
        config(),
        split(),
        &mut host,
        vec![
            text_with_usage("HISTORY", 1.0),
            text_with_usage("PREFIX", 2.0),
        ],
    );
    assert_eq!(waited, ["Await(History)", "Await(TurnPrefix)"]);
    let kinds: Vec<SummaryKind> = host.calls.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [SummaryKind::TurnPrefix, SummaryKind::History],
        "the prefix starts first"
    );
    assert_eq!(
        host.calls[0].max_tokens, 500,
        "0.5 × reserve for a turn prefix"
    );
    assert!(host.calls[0]
        .prompt
        .starts_with("<conversation>\n[User]: start of the turn\n</conversation>"));
    let i = inserted(step);
    assert_eq!(i.text, format!("HISTORY{SPLIT_TURN_SEPARATOR}PREFIX"));
    assert!(matches!(i.usage, Some(UsageOut::Sum(t)) if t.input == 3.0));
}

#[test]
fn a_split_turn_without_history_joins_the_previous_summary_or_a_placeholder() {
    let only_prefix = FlowInput {
        has_history: false,
        ..split()
    };
    let mut host = Fake::default();
    let (waited, step) = drive(config(), only_prefix.clone(), &mut host, vec![text("P")]);
    assert_eq!(waited, ["Await(TurnPrefix)"]);
    assert_eq!(host.calls.len(), 1);
    assert_eq!(
        inserted(step).text,
        format!("{NO_PRIOR_HISTORY}{SPLIT_TURN_SEPARATOR}P")
    );
    let with_previous = FlowInput {
        previous_summary: Some("OLD".into()),
        ..only_prefix
    };
    let (_, step) = drive(
        config(),
        with_previous,
        &mut Fake::default(),
        vec![text("P")],
    );
    assert_eq!(inserted(step).text, format!("OLD{SPLIT_TURN_SEPARATOR}P"));
}

#[test]
fn an_empty_turn_prefix_sends_no_turn_prefix_request() {
    let mut host = Fake::default();
    let (waited, step) = drive(config(), input(), &mut host, vec![text("H")]);
    assert_eq!(waited, ["Await(History)"]);
    assert!(host.calls.iter().all(|c| c.kind == SummaryKind::History));
    assert_eq!(inserted(step).text, "H");
}

#[test]
fn in_a_split_turn_the_history_failure_wins_after_the_prefix_ended() {
    let fallback = FlowConfig {
        fallback_extractive: true,
        ..config()
    };
    let (waited, step) = drive(
        fallback,
        split(),
        &mut Fake::default(),
        vec![answer(Answer::Failed("history down".into())), text("P")],
    );
    assert_eq!(waited, ["Await(History)", "Await(TurnPrefix)"]);
    assert_eq!(
        inserted(step).fallback_reason.as_deref(),
        Some("history down")
    );
    let (_, step) = drive(
        config(),
        split(),
        &mut Fake::default(),
        vec![text("H"), answer(Answer::Failed("prefix down".into()))],
    );
    assert_eq!(failed(step), "prefix down");
    // A prefix call that throws at once fails before the history starts.
    let mut host = Fake {
        start_throws: Some(SummaryKind::TurnPrefix),
        ..Fake::default()
    };
    let (waited, step) = drive(config(), split(), &mut host, vec![]);
    assert!(waited.is_empty() && host.calls.is_empty());
    assert_eq!(failed(step), "turnPrefix threw at once");
}

#[test]
fn a_timeout_is_a_failure_so_the_fallback_applies() {
    let fallback = FlowConfig {
        fallback_extractive: true,
        ..config()
    };
    let (_, step) = drive(
        fallback,
        input(),
        &mut Fake::default(),
        vec![answer(Answer::TimedOut { ms: 30.0 })],
    );
    let i = inserted(step);
    assert_eq!(i.summarized_by, SummarizedBy::Extractive);
    assert_eq!(
        i.fallback_reason.as_deref(),
        Some("the summarizer did not answer within 30 ms")
    );
    let (_, step) = drive(
        config(),
        input(),
        &mut Fake::default(),
        vec![answer(Answer::TimedOut { ms: 120_000.0 })],
    );
    assert_eq!(
        failed(step),
        "the summarizer did not answer within 120000 ms"
    );
}

#[test]
fn an_abort_never_falls_back() {
    let fallback = FlowConfig {
        fallback_extractive: true,
        ..config()
    };
    let mut host = Fake::default();
    let (_, step) = drive(
        fallback,
        split(),
        &mut host,
        vec![answer(Answer::Aborted("user stop")), text("P")],
    );
    assert!(matches!(step, Step::Fail(Failure::Aborted("user stop"))));
    assert!(host.extractive_asked.is_empty());
    // Aborted while the summary was written: nothing is inserted.
    let mut host = Fake {
        aborted: Some("abort()"),
        ..Fake::default()
    };
    let (_, step) = drive(fallback, input(), &mut host, vec![text("S")]);
    assert!(matches!(step, Step::Fail(Failure::Aborted("abort()"))));
    let end = end_event(
        Reason::Threshold,
        true,
        Ending::Failed(&Failure::Aborted("abort()")),
    );
    assert!(end.aborted && !end.will_retry && end.error_message.is_none());
}

#[test]
fn a_summary_that_would_not_make_the_context_smaller_is_refused() {
    let small = FlowInput {
        tokens_before: 250.0,
        ..input()
    };
    // 100 + 100 kept, and a summary of 400 characters (100 tokens): 300 ≥ 250.
    let fallback = FlowConfig {
        fallback_extractive: true,
        ..config()
    };
    let (_, step) = drive(
        fallback,
        small.clone(),
        &mut Fake::default(),
        vec![text(&"x".repeat(400))],
    );
    assert_eq!(
        failed(step),
        "the summary would not make the context smaller (250 tokens before, 300 after)"
    );
    // 4 characters (1 token): 201 < 250.
    let (_, step) = drive(config(), small, &mut Fake::default(), vec![text("tiny")]);
    let i = inserted(step);
    assert_eq!((i.tokens_before, i.tokens_after), (250.0, 201.0));
    assert_eq!(i.timestamp, 1_000.0);
}

#[test]
fn tokens_after_count_what_is_sent_cleared_outputs_as_placeholders_and_the_note() {
    // 100 + 100 kept, 90 of them a cleared output's saving; a summary of 1.
    let cleared = FlowInput {
        tokens_before: 250.0,
        kept_cleared: 90,
        ..input()
    };
    let (_, step) = drive(
        config(),
        cleared.clone(),
        &mut Fake::default(),
        vec![text("tiny")],
    );
    assert_eq!(inserted(step).tokens_after, 111.0);
    // The guard compares what is sent: 201 without the saving would be
    // refused against 200 before.
    let tight = FlowInput {
        tokens_before: 200.0,
        ..cleared
    };
    let (_, step) = drive(
        config(),
        tight.clone(),
        &mut Fake::default(),
        vec![text("tiny")],
    );
    assert_eq!(inserted(step).tokens_after, 111.0);
    // What the summary is sent with (the history tools' note) counts too.
    let noted = FlowInput {
        summary_note: 20,
        ..tight
    };
    let (_, step) = drive(config(), noted, &mut Fake::default(), vec![text("tiny")]);
    assert_eq!(inserted(step).tokens_after, 131.0);
}

#[test]
fn tokens_after_are_on_the_scale_of_tokens_before_the_ratio_and_the_estimator() {
    use crate::tokens::calibrated::estimate_texts;
    use crate::tokens::context_index::tokens_after_summary;
    let summary = "{\"files\": [\"src/a.ts\", \"src/b.ts\"], \"done\": true}";
    // The provider counts 0.5× the estimate: 100 + 100 kept are sent as
    // 100 provider tokens, which `tokens_before` (a usage) is counted in.
    let scaled = FlowInput {
        tokens_before: 150.0,
        ratio: 0.5,
        kept_cleared: 20,
        summary_note: 9,
        ..input()
    };
    for calibrated in [false, true] {
        let mut host = Fake {
            calibrated,
            ..Fake::default()
        };
        let summary_tokens = host.summary_tokens(&summary.to_string());
        let (_, step) = drive(config(), scaled.clone(), &mut host, vec![text(summary)]);
        let after = inserted(step).tokens_after;
        assert_eq!(
            after,
            tokens_after_summary(summary_tokens + 200, 9, 20, 0.5)
        );
        assert!(after < 150.0, "{after}");
    }
    // The summary by the compactor's estimator: JSON costs more than pi's
    // characters ÷ 4.
    let calibrated = estimate_texts([summary.as_bytes()]);
    assert!(calibrated > (summary.len() as u64).div_ceil(4));
    let (_, step) = drive(
        config(),
        FlowInput {
            tokens_before: 10_000.0,
            ..input()
        },
        &mut Fake {
            calibrated: true,
            ..Fake::default()
        },
        vec![text(summary)],
    );
    assert_eq!(inserted(step).tokens_after, (calibrated + 200) as f64);
    // A provider that counts 2.5×: the same summary is refused against
    // what it is really sent as.
    let (_, step) = drive(
        config(),
        FlowInput {
            tokens_before: 500.0,
            ratio: 2.5,
            ..input()
        },
        &mut Fake::default(),
        vec![text("tiny")],
    );
    assert_eq!(
        failed(step),
        "the summary would not make the context smaller (500 tokens before, 503 after)"
    );
}

#[test]
fn a_summary_over_its_budget_is_cut_with_the_marker() {
    // History: 800 tokens, 3,200 characters.
    let long = "é".repeat(5_000);
    let (_, step) = drive(config(), input(), &mut Fake::default(), vec![text(&long)]);
    let i = inserted(step);
    assert_eq!(i.text.encode_utf16().count(), 3_200);
    assert!(i.text.ends_with(CUT_MARKER));
    assert!(i.text.starts_with("éé"));
    // Exactly at the budget: unchanged.
    let exact = "y".repeat(3_200);
    let (_, step) = drive(config(), input(), &mut Fake::default(), vec![text(&exact)]);
    assert_eq!(inserted(step).text, exact);
    // A turn prefix has its own, smaller budget (500 tokens).
    let (_, step) = drive(
        config(),
        split(),
        &mut Fake::default(),
        vec![text("H"), text(&"z".repeat(2_500))],
    );
    let i = inserted(step);
    let prefix = i.text.split(SPLIT_TURN_SEPARATOR).nth(1).unwrap();
    assert_eq!(prefix.encode_utf16().count(), 2_000);
}

#[test]
fn error_messages_carry_the_reason_prefix() {
    let failure: Failure<()> = Failure::Failed("HTTP 500".into());
    for (reason, message) in [
        (Reason::Manual, "Compaction failed: HTTP 500"),
        (Reason::Threshold, "Auto-compaction failed: HTTP 500"),
        (
            Reason::Overflow,
            "Context overflow recovery failed: HTTP 500",
        ),
    ] {
        let end = end_event(reason, true, Ending::Failed(&failure));
        assert_eq!(end.error_message.as_deref(), Some(message));
        assert!(!end.aborted && !end.will_retry);
        assert_eq!(Reason::from_name(reason.name()), Some(reason));
    }
    assert_eq!(Reason::from_name("later"), None);
    let done = end_event::<()>(Reason::Threshold, true, Ending::Compacted);
    assert!(done.will_retry && !done.aborted && done.error_message.is_none());
}

#[test]
fn nothing_to_summarize_rejects_a_manual_call_and_explains_an_overflow() {
    assert_eq!(
        nothing_to_do(Reason::Manual, false, 19_000.0, 20_000.0),
        NothingToDo::Reject("Nothing to compact: the conversation fits in keepRecentTokens")
    );
    // A context larger than keepRecentTokens with nothing to summarize: its
    // newest messages (one huge paste) reach back to its start.
    let NothingToDo::Reject(huge) = nothing_to_do(Reason::Manual, false, 62_000.0, 20_000.0) else {
        panic!("a manual call is rejected");
    };
    assert!(
        huge.contains("reach back to the start") && !huge.contains("fits"),
        "{huge}"
    );
    assert_eq!(
        nothing_to_do(Reason::Manual, true, 62_000.0, 20_000.0),
        NothingToDo::Reject("Already compacted: the last message is a summary")
    );
    assert_eq!(
        nothing_to_do(Reason::Threshold, false, 62_000.0, 20_000.0),
        NothingToDo::Resolve
    );
    assert_eq!(
        nothing_to_do(Reason::Overflow, true, 62_000.0, 20_000.0),
        NothingToDo::Resolve
    );
    let quiet = end_event::<()>(Reason::Threshold, true, Ending::NothingToDo);
    assert_eq!(quiet.error_message, None);
    assert!(!quiet.will_retry);
    let overflow = end_event::<()>(Reason::Overflow, true, Ending::NothingToDo);
    assert!(overflow
        .error_message
        .unwrap()
        .starts_with("Context overflow recovery failed: nothing to summarize"));
}

#[test]
fn events_out_of_order_fail_instead_of_panicking() {
    let mut host = Fake::default();
    let mut flow = CompactionFlow::<Fake>::new(config(), input());
    let step = flow.step(&mut host, Event::Hook(HookAnswer::Nothing));
    assert!(failed(step).contains("out of order"));
    let step = flow.step(&mut host, Event::Start);
    assert!(
        failed(step).contains("out of order"),
        "a finished flow stays finished"
    );
}

#[test]
fn the_extractive_summary_is_a_step_the_binding_awaits() {
    // The package loads the extractive summarizer on first use: the flow
    // hands the work out and waits, and an abort that comes meanwhile wins.
    let no_callback = FlowConfig {
        has_summarizer: false,
        fallback_extractive: true,
        ..config()
    };
    let mut host = Fake::default();
    let mut flow = CompactionFlow::<Fake>::new(no_callback, input());
    let step = flow.step(&mut host, Event::Start);
    assert!(
        matches!(step, Step::Extract { max_chars: 3_200 }),
        "{step:?}"
    );
    host.aborted = Some("user stop");
    let step = flow.step(&mut host, Event::Extracted(Ok("EXTRACTIVE".into())));
    assert!(matches!(step, Step::Fail(Failure::Aborted("user stop"))));

    // A module that could not be loaded fails the compaction with its reason.
    let mut flow = CompactionFlow::<Fake>::new(no_callback, input());
    let mut host = Fake::default();
    flow.step(&mut host, Event::Start);
    let step = flow.step(
        &mut host,
        Event::Extracted(Err("the extractive summarizer could not be loaded".into())),
    );
    assert_eq!(
        failed(step),
        "the extractive summarizer could not be loaded"
    );

    // Its answer is accepted only while the flow waits for it.
    let mut flow = CompactionFlow::<Fake>::new(config(), input());
    flow.step(&mut host, Event::Start);
    let step = flow.step(&mut host, Event::Extracted(Ok("x".into())));
    assert!(failed(step).contains("out of order"));
}

#[test]
fn accept_is_shared_with_branch_summaries() {
    let ok = accept::<Fake, (), ()>(
        Answer::Text {
            text: "x".repeat(9_000),
            usage: Some(()),
        },
        2048,
    );
    let (text, usage) = ok.unwrap();
    assert_eq!(text.len(), 8_192);
    assert_eq!(usage, Some(()));
}

#[test]
fn the_fallback_rule_and_the_branch_failure_text_are_shared_with_branch_summaries() {
    assert_eq!(
        fall_back::<()>(Failure::failed("down"), true),
        Ok("down".into())
    );
    assert_eq!(
        fall_back::<()>(Failure::failed("down"), false),
        Err(Failure::failed("down"))
    );
    assert_eq!(
        fall_back(Failure::Aborted("stop"), true),
        Err(Failure::Aborted("stop"))
    );
    assert_eq!(
        fall_back::<()>(Failure::Cancelled, true),
        Err(Failure::Cancelled)
    );
    assert_eq!(
        branch_failed_message("HTTP 500"),
        "Branch summary failed: HTTP 500"
    );
}

mod prefix;
mod survivors;

#[test]
fn the_reason_option_defaults_to_manual_and_names_what_it_accepts() {
    assert_eq!(Reason::from_option(None), Ok(Reason::Manual));
    assert_eq!(
        Reason::from_option(Some(Some("overflow"))),
        Ok(Reason::Overflow)
    );
    assert_eq!(
        Reason::from_option(Some(Some("threshold"))),
        Ok(Reason::Threshold)
    );
    let expected = Err("\"manual\", \"threshold\" or \"overflow\"");
    assert_eq!(Reason::from_option(Some(Some("Manual"))), expected);
    assert_eq!(Reason::from_option(Some(None)), expected);
}

type Answered = Answer<&'static str, &'static str, &'static str>;

fn answer_name(a: &Answered) -> String {
    match a {
        Answer::Text { text, usage } => format!("text {text} {usage:?}"),
        Answer::TextNotString { got } => format!("text not string: {got}"),
        Answer::NotTextOrObject { got } => format!("neither: {got}"),
        Answer::TimedOut { ms } => format!("timed out {ms}"),
        Answer::Failed(m) => format!("failed: {m}"),
        Answer::Aborted(e) => format!("aborted: {e}"),
    }
}

type Fields = Result<(Result<&'static str, String>, Option<&'static str>), String>;

/// The answer, and whether the fields were read.
fn of_value(text: Option<&'static str>, is_object: bool, fields: Fields) -> (String, bool) {
    let mut read = false;
    let a = Answered::of_value(
        text,
        is_object,
        || "a number".into(),
        || {
            read = true;
            fields
        },
    );
    (answer_name(&a), read)
}

#[test]
fn a_settled_value_is_a_string_or_an_object_with_a_string_text() {
    let s = |t: &str| t.to_string();
    assert_eq!(
        of_value(Some("S"), true, Ok((Ok("T"), None))),
        (s("text S None"), false)
    );
    assert_eq!(
        of_value(None, false, Ok((Ok("T"), None))),
        (s("neither: a number"), false)
    );
    assert_eq!(
        of_value(None, true, Ok((Ok("T"), Some("U")))),
        (s("text T Some(\"U\")"), true)
    );
    assert_eq!(
        of_value(None, true, Ok((Ok("T"), None))),
        (s("text T None"), true)
    );
    let not_string = Ok((Err(s("undefined")), Some("U")));
    assert_eq!(
        of_value(None, true, not_string),
        (s("text not string: undefined"), true)
    );
    let threw = Err(s("getter threw"));
    assert_eq!(
        of_value(None, true, threw),
        (s("failed: getter threw"), true)
    );
}

#[test]
fn a_rejection_is_a_timeout_first_then_an_abort_else_a_failure() {
    let message = |e: &&str| format!("{e}!");
    let of =
        |timed_out, aborted| answer_name(&Answered::of_rejection(timed_out, aborted, "E", message));
    assert_eq!(of(Some(500.0), true), "timed out 500");
    assert_eq!(of(None, true), "aborted: E");
    assert_eq!(of(None, false), "failed: E!");
}

#[test]
fn a_provider_part_is_kept_only_with_its_one_calls_text() {
    assert!(keeps_provider_part(1, false, true));
    // A split turn's two calls join their texts.
    assert!(!keeps_provider_part(2, false, false));
    assert!(!keeps_provider_part(2, false, true));
    // A hook's summary, or the fallback's text.
    assert!(!keeps_provider_part(1, true, true));
    assert!(!keeps_provider_part(1, false, false));
}

#[test]
fn messages_that_cannot_be_read_end_as_a_failure_with_the_reason_prefix_and_the_field() {
    let bad = InputError::WrongType {
        path: FieldPath::element("messages", 12).field("content"),
        expected: "a string or an array",
        got: "undefined".into(),
    };
    let failure = Failure::<()>::Input(bad);
    let end = end_event::<()>(Reason::Threshold, false, Ending::Failed(&failure));
    assert_eq!(
        end,
        EndEvent {
            aborted: false,
            will_retry: false,
            error_message: Some(
                "Auto-compaction failed: messages[12].content must be a string or an array, \
                 got undefined"
                    .into()
            ),
        }
    );
    // The stall rule counts it as a compaction that changed nothing.
    let ended = crate::compaction::stall::Ended::of(&Ending::Failed(&failure), (0.0, 0.0), 900.0);
    assert_eq!(ended, crate::compaction::stall::Ended::Unchanged(900.0));
}
