//! The branch walk and every branch of the `summarizeBranch` flow, driven
//! with a fake host whose texts are Rust strings.

use super::*;
use Role::*;

fn facts(items: &[(Role, u64)]) -> Vec<MessageFacts> {
    items
        .iter()
        .map(|&(r, t)| MessageFacts::new(r, t, None, 0.0))
        .collect()
}

#[test]
fn newest_first_within_the_budget_without_tool_results() {
    let f = facts(&[
        (User, 50),
        (Assistant, 50),
        (ToolResult, 1000),
        (User, 30),
        (Assistant, 30),
    ]);
    let s = select_branch(&f, 100);
    assert_eq!(s.included, vec![3, 4]);
    assert_eq!(s.total_tokens, 60);
    // The message that stopped the walk was visited (its file operations count).
    assert_eq!(s.visited, 1..5);
    assert_eq!(select_branch(&f, 0).included, vec![0, 1, 3, 4]);
}

#[test]
fn a_summary_that_does_not_fit_is_kept_below_ninety_percent() {
    let f = facts(&[(CompactionSummary, 500), (User, 10)]);
    assert_eq!(select_branch(&f, 100).included, vec![0, 1]);
    let f = facts(&[(BranchSummary, 500), (User, 95)]);
    assert_eq!(select_branch(&f, 100).included, vec![1]);
    let f = facts(&[(User, 500), (User, 10)]);
    assert_eq!(select_branch(&f, 100).included, vec![1]);
}

#[test]
fn empty() {
    let s = select_branch(&[], 10);
    assert!(s.included.is_empty());
    assert!(s.visited.is_empty());
}

/// The fake host: texts are Rust strings (UTF-16 lengths), usages and
/// abort errors are labels.
#[derive(Default)]
struct Fake {
    serialize_throws: bool,
    start_throws: bool,
    calls: Vec<Request<String>>,
    aborted: Option<&'static str>,
}

struct Texts;

impl TextOps for Texts {
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

impl BranchHost for Fake {
    type Ops = Texts;
    type Usage = &'static str;
    type AbortError = &'static str;
    fn conversation(&mut self) -> Result<String, String> {
        if self.serialize_throws {
            return Err("a getter threw".into());
        }
        Ok("[User]: try the other way".into())
    }
    fn start_call(&mut self, request: Request<String>) -> Result<(), String> {
        if self.start_throws {
            return Err("summarize threw at once".into());
        }
        self.calls.push(request);
        Ok(())
    }
    fn aborted(&mut self) -> Option<&'static str> {
        self.aborted
    }
}

fn selection() -> BranchSelection {
    select_branch(&facts(&[(User, 10), (Assistant, 10)]), 0)
}

fn flow(has_summarizer: bool, fallback: bool) -> BranchFlow<String> {
    BranchFlow::new(&selection(), has_summarizer, fallback, None, false).unwrap()
}

fn text(t: &str, usage: Option<&'static str>) -> BranchEvent<Fake> {
    BranchEvent::Answer(Answer::Text {
        text: t.into(),
        usage,
    })
}

fn done(step: BranchStep<Fake>) -> (String, Option<&'static str>) {
    match step {
        BranchStep::Done { text, usage } => (text, usage),
        BranchStep::Fail(f) => panic!("expected a summary, failed with {f:?}"),
        _ => panic!("expected a summary"),
    }
}

fn error(step: BranchStep<Fake>) -> String {
    match step {
        BranchStep::Fail(BranchFailure::Error(m)) => m,
        BranchStep::Fail(f) => panic!("expected an error, got {f:?}"),
        _ => panic!("expected an error"),
    }
}

fn extract(step: &BranchStep<Fake>) -> usize {
    match step {
        BranchStep::Extract { max_chars } => *max_chars,
        _ => panic!("expected the extractive step"),
    }
}

#[test]
fn a_branch_of_tool_results_only_has_nothing_to_summarize() {
    let only_tools = select_branch(&facts(&[(ToolResult, 10), (ToolResult, 5)]), 0);
    let made = BranchFlow::<String>::new(&only_tools, true, true, None, false);
    assert_eq!(made.err().as_deref(), Some(NOTHING_IN_BRANCH));
}

#[test]
fn a_newest_message_over_the_budget_is_named_not_called_a_tool_result() {
    let too_big = select_branch(
        &facts(&[(User, 10), (ToolResult, 5), (Assistant, 500)]),
        100,
    );
    assert_eq!(too_big.included, Vec::<usize>::new());
    let made = BranchFlow::<String>::new(&too_big, true, true, None, false);
    assert_eq!(
        made.err().as_deref(),
        Some(
            "Nothing to summarize: the branch's newest message besides tool results \
             (messages[2], 500 tokens) is over the branch summary's budget of 100 tokens \
             (contextWindow - reserveTokens)"
        )
    );
}

#[test]
fn the_summarizer_gets_the_branch_prompt_and_its_answer_is_the_summary() {
    let mut host = Fake::default();
    let mut f = flow(true, false);
    assert!(matches!(
        f.step(&mut host, BranchEvent::Start),
        BranchStep::Await
    ));
    let call = &host.calls[0];
    assert_eq!(call.kind, SummaryKind::Branch);
    assert_eq!(call.max_tokens, BRANCH_MAX_TOKENS);
    assert_eq!(call.system_prompt, SYSTEM_PROMPT);
    let mut expected = String::new();
    branch_prompt(&mut expected, "[User]: try the other way", None, false);
    assert_eq!(call.prompt, expected);
    let (summary, usage) = done(f.step(&mut host, text("went the other way", Some("u"))));
    assert_eq!(summary, "went the other way");
    assert_eq!(usage, Some("u"));
}

#[test]
fn custom_instructions_are_added_or_replace_the_instructions() {
    for replace in [false, true] {
        let mut host = Fake::default();
        let mut f = BranchFlow::new(
            &selection(),
            true,
            false,
            Some("focus".to_string()),
            replace,
        )
        .unwrap();
        f.step(&mut host, BranchEvent::Start);
        let mut expected = String::new();
        branch_prompt(
            &mut expected,
            "[User]: try the other way",
            Some("focus"),
            replace,
        );
        assert_eq!(host.calls[0].prompt, expected);
        assert_eq!(host.calls[0].prompt.ends_with("\n\nfocus"), replace);
    }
}

#[test]
fn without_a_summarizer_the_extractive_summary_is_used() {
    let mut host = Fake::default();
    let mut f = flow(false, false);
    let step = f.step(&mut host, BranchEvent::Start);
    assert_eq!(extract(&step), BRANCH_MAX_TOKENS as usize * 4);
    assert!(host.calls.is_empty());
    let (summary, usage) = done(f.step(&mut host, BranchEvent::Extracted(Ok("EXT".into()))));
    assert_eq!((summary.as_str(), usage), ("EXT", None));
    // An extractive summary that cannot be built fails the call.
    let mut f = flow(false, true);
    f.step(&mut host, BranchEvent::Start);
    assert_eq!(
        error(f.step(&mut host, BranchEvent::Extracted(Err("no module".into())))),
        "Branch summary failed: no module"
    );
}

/// A failing answer, made afresh for each run.
type MakeAnswer = fn() -> Answer<String, &'static str, &'static str>;

#[test]
fn failures_fall_back_when_allowed_and_fail_otherwise() {
    let failures: Vec<(MakeAnswer, &str)> = vec![
        (
            || Answer::Failed("rate limited".into()),
            "Branch summary failed: rate limited",
        ),
        (
            || Answer::TimedOut { ms: 5.0 },
            "Branch summary failed: the summarizer did not answer within 5 ms",
        ),
        (
            || Answer::Text {
                text: "  \n".into(),
                usage: None,
            },
            "Branch summary failed: the summarizer returned an empty summary",
        ),
        (
            || Answer::NotTextOrObject { got: "42".into() },
            "Branch summary failed: the summarizer returned 42, not a string or { text }",
        ),
    ];
    for (answer, message) in failures {
        let mut host = Fake::default();
        let mut f = flow(true, false);
        f.step(&mut host, BranchEvent::Start);
        assert_eq!(
            error(f.step(&mut host, BranchEvent::Answer(answer()))),
            message
        );
        let mut f = flow(true, true);
        f.step(&mut host, BranchEvent::Start);
        let step = f.step(&mut host, BranchEvent::Answer(answer()));
        extract(&step);
        let (summary, usage) = done(f.step(&mut host, BranchEvent::Extracted(Ok("EXT".into()))));
        assert_eq!((summary.as_str(), usage), ("EXT", None));
    }
}

#[test]
fn a_call_that_does_not_start_falls_back_when_allowed() {
    let mut host = Fake {
        start_throws: true,
        ..Fake::default()
    };
    let mut f = flow(true, false);
    assert_eq!(
        error(f.step(&mut host, BranchEvent::Start)),
        "Branch summary failed: summarize threw at once"
    );
    let mut f = flow(true, true);
    extract(&f.step(&mut host, BranchEvent::Start));
    assert!(host.calls.is_empty());
}

#[test]
fn a_selection_that_cannot_be_serialized_fails_even_with_the_fallback() {
    let mut host = Fake {
        serialize_throws: true,
        ..Fake::default()
    };
    for fallback in [false, true] {
        let mut f = flow(true, fallback);
        assert_eq!(
            error(f.step(&mut host, BranchEvent::Start)),
            "Branch summary failed: a getter threw"
        );
        assert!(host.calls.is_empty());
    }
}

#[test]
fn an_abort_never_falls_back_and_a_late_abort_drops_the_summary() {
    let mut host = Fake::default();
    let mut f = flow(true, true);
    f.step(&mut host, BranchEvent::Start);
    let step = f.step(&mut host, BranchEvent::Answer(Answer::Aborted("stop")));
    assert!(matches!(
        step,
        BranchStep::Fail(BranchFailure::Aborted("stop"))
    ));
    // The answer came, but the caller aborted meanwhile.
    let mut f = flow(true, false);
    f.step(&mut host, BranchEvent::Start);
    host.aborted = Some("late");
    let step = f.step(&mut host, text("summary", None));
    assert!(matches!(
        step,
        BranchStep::Fail(BranchFailure::Aborted("late"))
    ));
    // The same for the extractive summary.
    let mut f = flow(false, false);
    f.step(&mut host, BranchEvent::Start);
    let step = f.step(&mut host, BranchEvent::Extracted(Ok("EXT".into())));
    assert!(matches!(
        step,
        BranchStep::Fail(BranchFailure::Aborted("late"))
    ));
}

#[test]
fn a_long_answer_is_cut_to_the_branch_budget() {
    let mut host = Fake::default();
    let mut f = flow(true, false);
    f.step(&mut host, BranchEvent::Start);
    let long = "x".repeat(BRANCH_MAX_TOKENS as usize * 4 + 10);
    let (summary, _) = done(f.step(&mut host, text(&long, None)));
    assert_eq!(summary.len(), BRANCH_MAX_TOKENS as usize * 4);
    assert!(summary.ends_with(crate::compaction::prompts::CUT_MARKER));
}

#[test]
fn failures_become_rejections() {
    assert_eq!(
        branch_failure(Failure::<()>::Failed("x".into())),
        BranchFailure::Error("Branch summary failed: x".into())
    );
    assert_eq!(
        branch_failure(Failure::<()>::Cancelled),
        BranchFailure::Error("Compaction cancelled".into())
    );
    assert_eq!(
        branch_failure(Failure::Aborted(7)),
        BranchFailure::Aborted(7)
    );
}

#[test]
fn events_out_of_order_fail_instead_of_panicking() {
    let mut host = Fake::default();
    let mut f = flow(true, false);
    let step = f.step(&mut host, BranchEvent::Extracted(Ok("EXT".into())));
    assert_eq!(
        error(step),
        "Branch summary failed: internal error: an event out of order"
    );
}

#[test]
fn the_budget_is_the_window_less_the_reserve_and_never_unlimited() {
    let settings = CompactionSettings {
        reserve_tokens: 16_384,
        ..CompactionSettings::default()
    };
    assert_eq!(budget_tokens(200_000.0, &settings), 200_000 - 16_384);
    assert_eq!(budget_tokens(16_384.0, &settings), 1);
    assert_eq!(budget_tokens(1_000.0, &settings), 1);
}
