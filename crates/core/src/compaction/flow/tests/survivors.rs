//! What must survive a compaction, through every branch of the flow: the
//! latest request quoted verbatim when it is summarized (whoever wrote the
//! summary), never a stale quote from the previous summary, and the pinned
//! messages re-sent after the summary counted in `tokensAfter`.

use super::*;
use crate::compaction::last_request::SECTION_HEADING;

const REQUEST: &str = "Please migrate the cache module, keep the API stable.";

/// A split turn whose request lies in the summarized part.
fn quoting(budget: usize) -> FlowInput<String> {
    FlowInput {
        survivors: Survivors {
            latest_request: Some(REQUEST.into()),
            budget_chars: budget,
            resent: Vec::new(),
        },
        ..split()
    }
}

fn section(request: &str) -> String {
    format!("{SECTION_HEADING}{request}")
}

fn units(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

#[test]
fn the_summarizers_summary_quotes_the_request_and_counts_it() {
    let (_, step) = drive(
        config(),
        quoting(1_000),
        &mut Fake::default(),
        vec![text("HISTORY"), text("PREFIX")],
    );
    let i = inserted(step);
    let expected = format!("HISTORY{SPLIT_TURN_SEPARATOR}PREFIX{}", section(REQUEST));
    assert_eq!(i.text, expected);
    // The summary's estimate includes the quote: 200 kept + its length / 4.
    assert_eq!(i.tokens_after, 200.0 + units(&expected).div_ceil(4) as f64);
}

#[test]
fn a_hook_summary_and_the_extractive_summary_quote_it_too() {
    let (_, step) = drive(
        hooked(),
        quoting(1_000),
        &mut Fake::default(),
        vec![Event::Hook(HookAnswer::Summary {
            text: "from the app".into(),
            details: None,
            usage: None,
        })],
    );
    assert_eq!(
        inserted(step).text,
        format!("from the app{}", section(REQUEST))
    );

    let no_callback = FlowConfig {
        has_summarizer: false,
        fallback_extractive: true,
        ..config()
    };
    let (_, step) = drive(no_callback, quoting(1_000), &mut Fake::default(), vec![]);
    assert_eq!(
        inserted(step).text,
        format!("EXTRACTIVE{}", section(REQUEST))
    );

    // The extractive fallback after a failed summarizer.
    let fallback = FlowConfig {
        fallback_extractive: true,
        ..config()
    };
    let (_, step) = drive(
        fallback,
        quoting(1_000),
        &mut Fake::default(),
        vec![answer(Answer::Failed("HTTP 500".into())), text("P")],
    );
    let i = inserted(step);
    assert_eq!(i.summarized_by, SummarizedBy::Extractive);
    assert_eq!(i.text, format!("EXTRACTIVE{}", section(REQUEST)));
}

#[test]
fn a_kept_request_adds_nothing() {
    // `latest_request: None`: the request lies in the kept part.
    let (_, step) = drive(
        config(),
        split(),
        &mut Fake::default(),
        vec![text("H"), text("P")],
    );
    assert!(!inserted(step).text.contains(SECTION_HEADING));
}

#[test]
fn a_request_over_the_budget_is_cut_with_what_was_left_out() {
    let (_, step) = drive(
        config(),
        quoting(10),
        &mut Fake::default(),
        vec![text("H"), text("P")],
    );
    let summary = inserted(step).text;
    let quoted = summary.split(SECTION_HEADING).nth(1).unwrap();
    assert_eq!(
        quoted,
        format!(
            "Please mig\n\n[... {} more characters of this request were left out: \
             the verbatim quote keeps the first 10]",
            REQUEST.len() - 10
        )
    );
}

#[test]
fn the_previous_summarys_quote_is_never_carried_into_the_next() {
    let previous = format!("OLD{}", section("an old request"));
    // The update prompt gets the previous summary without its quote.
    let mut host = Fake::default();
    let input = FlowInput {
        previous_summary: Some(previous.clone()),
        ..quoting(1_000)
    };
    let (_, step) = drive(
        config(),
        input.clone(),
        &mut host,
        vec![text("H"), text("P")],
    );
    let history = host
        .calls
        .iter()
        .find(|c| c.kind == SummaryKind::History)
        .unwrap();
    assert!(history
        .prompt
        .contains("<previous-summary>\nOLD\n</previous-summary>"));
    assert!(!history.prompt.contains("an old request"));
    let summary = inserted(step).text;
    assert_eq!(summary.matches("(verbatim)").count(), 1);
    assert!(summary.ends_with(&section(REQUEST)));
    // The extractive summary is given the same stripped previous summary.
    let flow = CompactionFlow::<Fake>::new(config(), input.clone());
    assert_eq!(flow.previous_summary().map(String::as_str), Some("OLD"));

    // A split turn with no history joins the previous summary itself.
    let only_prefix = FlowInput {
        has_history: false,
        ..input.clone()
    };
    let (_, step) = drive(config(), only_prefix, &mut Fake::default(), vec![text("P")]);
    assert_eq!(
        inserted(step).text,
        format!("OLD{SPLIT_TURN_SEPARATOR}P{}", section(REQUEST))
    );

    // A hook that copies the previous summary whole: its stale quote is
    // replaced, or dropped when the request is kept now.
    let hook_copy = |input: FlowInput<String>| {
        let (_, step) = drive(
            hooked(),
            input,
            &mut Fake::default(),
            vec![Event::Hook(HookAnswer::Summary {
                text: previous.clone(),
                details: None,
                usage: None,
            })],
        );
        inserted(step).text
    };
    assert_eq!(hook_copy(input), format!("OLD{}", section(REQUEST)));
    assert_eq!(hook_copy(split()), "OLD");
}

#[test]
fn pinned_messages_resent_after_the_summary_count_in_tokens_after_and_the_refusal() {
    let pinned = vec![
        MessageFacts::new(Role::User, 30, None, 10.0),
        // Its stale usage never counts; its estimate does.
        MessageFacts::new(Role::Assistant, 20, Some(90_000.0), 5_000.0),
    ];
    let with_pinned = |tokens_before: f64| FlowInput {
        tokens_before,
        survivors: Survivors {
            resent: pinned.clone(),
            ..Survivors::default()
        },
        ..input()
    };
    let (_, step) = drive(
        config(),
        with_pinned(10_000.0),
        &mut Fake::default(),
        vec![text("tiny")],
    );
    assert_eq!(inserted(step).tokens_after, 1.0 + 50.0 + 200.0);
    // 251 after is not smaller than 251 before: refused.
    let (_, step) = drive(
        config(),
        with_pinned(251.0),
        &mut Fake::default(),
        vec![text("tiny")],
    );
    assert_eq!(
        failed(step),
        "the summary would not make the context smaller (251 tokens before, 251 after)"
    );
}
