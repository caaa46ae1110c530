//! Summary requests in the prefix form: the conversation as the model last
//! saw it, then one instruction naming where the summary stops.

use super::*;

fn user(text: &str, nth: usize) -> Boundary<String> {
    Boundary::User {
        text: text.into(),
        nth,
        cut: false,
    }
}

fn with_prefix(
    history_end: Boundary<String>,
    turn_end: Option<Boundary<String>>,
) -> FlowInput<String> {
    FlowInput {
        prefix: Some(PrefixInput {
            history_end,
            turn_end,
            room: 100_000,
        }),
        ..input()
    }
}

#[test]
fn the_history_request_carries_the_instruction_beside_the_serialized_prompt() {
    let mut host = Fake::default();
    let (waited, step) = drive(
        config(),
        with_prefix(user("now add tests", 3), None),
        &mut host,
        vec![text("CHECKPOINT")],
    );
    assert_eq!(waited, ["Await(History)"]);
    let call = &host.calls[0];
    // The serialized form stays, for summarizers that do not use the prefix.
    assert!(call.prompt.starts_with("<conversation>\n[User]: hello"));
    let instruction = call.instruction.as_deref().expect("an instruction");
    assert!(instruction.starts_with("Stop here: this conversation is being compacted"));
    assert!(instruction.contains("do not call any tool"));
    assert!(instruction.contains(
        "Write a context checkpoint of the conversation up to, but not including, the user's \
         message number 3 (tool results not counted) that begins \"now add tests\"."
    ));
    assert!(instruction.contains("## Goal") && instruction.contains("## Critical Context"));
    assert!(!instruction.contains("<conversation>"));
    assert_eq!(inserted(step).text, "CHECKPOINT");
}

#[test]
fn with_a_previous_summary_the_instruction_asks_for_the_update() {
    let mut host = Fake::default();
    let input = FlowInput {
        previous_summary: Some("## Goal\nOLD-GOAL".into()),
        custom_instructions: Some("the schema".into()),
        ..with_prefix(
            Boundary::ToolCall {
                name: "read".into(),
                id: "call_7".into(),
            },
            None,
        )
    };
    drive(config(), input, &mut host, vec![text("S")]);
    let instruction = host.calls[0].instruction.clone().unwrap();
    assert!(instruction.contains(
        "The first message above holds the checkpoint of the earlier work. Write the updated \
         checkpoint, covering the conversation up to, but not including, your call of the tool \
         read (call id call_7)."
    ));
    assert!(instruction.contains("- keep everything from the previous summary that still holds;"));
    assert!(instruction.ends_with("\n\nAdditional focus: the schema"));
    // The previous summary is in the conversation already: not quoted again.
    assert!(!instruction.contains("OLD-GOAL"));
}

#[test]
fn a_split_turn_names_both_ends_of_the_turn_prefix() {
    let mut host = Fake::default();
    let input = FlowInput {
        has_turn_prefix: true,
        ..with_prefix(
            user("refactor the parser", 2),
            Some(Boundary::Reply {
                text: "Now the lexer".into(),
                cut: true,
            }),
        )
    };
    let (_, step) = drive(config(), input, &mut host, vec![text("H"), text("P")]);
    let kinds: Vec<SummaryKind> = host.calls.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [SummaryKind::TurnPrefix, SummaryKind::History]);
    let turn = host.calls[0].instruction.clone().unwrap();
    assert!(turn.contains(
        "Summarize the beginning of that turn, from the user's message number 2 (tool results \
         not counted) that begins \"refactor the parser\" up to, but not including, your reply \
         that begins \"Now the lexer…\"."
    ));
    assert!(turn.contains("## Original Request") && !turn.contains("## Goal"));
    // The history stops where the turn starts.
    let history = host.calls[1].instruction.clone().unwrap();
    assert!(history.contains("up to, but not including, the user's message number 2"));
    assert_eq!(inserted(step).text, format!("H{SPLIT_TURN_SEPARATOR}P"));
}

#[test]
fn the_prefix_form_is_one_request_even_with_a_small_summarizer_window() {
    let mut host = Fake {
        history: vec!["a".repeat(3_000), "b".repeat(3_000)],
        ..Fake::default()
    };
    let windowed = FlowConfig {
        summarizer_window: Some(2_000),
        ..config()
    };
    let (waited, _) = drive(
        windowed,
        with_prefix(user("go", 1), None),
        &mut host,
        vec![text("S")],
    );
    assert_eq!(waited, ["Await(History)"]);
    // Without the prefix the same history is chunked.
    let mut host = Fake {
        history: vec!["a".repeat(3_000), "b".repeat(3_000)],
        ..Fake::default()
    };
    let (waited, _) = drive(windowed, input(), &mut host, vec![text("S1"), text("S2")]);
    assert_eq!(waited.len(), 2);
    assert!(host.calls.iter().all(|c| c.instruction.is_none()));
}

#[test]
fn the_prefix_form_needs_the_conversation_no_overflow_and_room() {
    let room = |cache_friendly, given, reason, view| {
        prefix_room(cache_friendly, given, reason, view, 10_000, 100_000)
    };
    // 1,000 for the instruction; at least 4,096 for the summary.
    assert_eq!(room(true, true, Reason::Threshold, 50_000), Some(49_000));
    assert_eq!(room(true, true, Reason::Threshold, 94_904), Some(4_096));
    assert_eq!(room(true, true, Reason::Threshold, 94_905), None);
    assert_eq!(room(true, true, Reason::Manual, 50_000), Some(49_000));
    assert_eq!(room(true, true, Reason::Overflow, 50_000), None);
    assert_eq!(room(false, true, Reason::Threshold, 50_000), None);
    assert_eq!(room(true, false, Reason::Threshold, 50_000), None);
    assert_eq!(room(true, true, Reason::Threshold, u64::MAX), None);
    assert_eq!(room(true, true, Reason::Threshold, 200_000), None);
    // A summary budget under the minimum needs only its own room.
    assert_eq!(
        prefix_room(true, true, Reason::Threshold, 6_000, 2_000, 8_600),
        Some(1_600)
    );
}

#[test]
fn a_request_in_the_prefix_form_caps_the_summary_at_the_room_left() {
    let mut host = Fake::default();
    let mut input = with_prefix(user("go", 1), None);
    input.prefix.as_mut().unwrap().room = 600;
    input.has_turn_prefix = true;
    input.prefix.as_mut().unwrap().turn_end = Some(user("more", 2));
    drive(config(), input, &mut host, vec![text("H"), text("P")]);
    // reserve 1,000: 800 for the history, 500 for the turn prefix.
    let caps: Vec<(SummaryKind, u64)> = host.calls.iter().map(|c| (c.kind, c.max_tokens)).collect();
    assert_eq!(
        caps,
        [(SummaryKind::TurnPrefix, 500), (SummaryKind::History, 600)]
    );
    // The serialized form keeps the whole budget.
    let mut host = Fake::default();
    drive(
        config(),
        input_with_turn(),
        &mut host,
        vec![text("H"), text("P")],
    );
    let caps: Vec<u64> = host.calls.iter().map(|c| c.max_tokens).collect();
    assert_eq!(caps, [500, 800]);
}

fn input_with_turn() -> FlowInput<String> {
    FlowInput {
        has_turn_prefix: true,
        ..input()
    }
}

#[test]
fn a_boundary_names_a_message_by_its_text_or_its_tool_call() {
    let b = |role, text: Option<&str>, call: Option<(&str, &str)>| {
        boundary_of::<Fake>(
            role,
            text.map(String::from),
            call.map(|(n, i)| (n.into(), i.into())),
            4,
        )
    };
    assert_eq!(b(Role::User, Some("fix it"), None), Some(user("fix it", 5)));
    assert_eq!(
        b(Role::Assistant, Some("Done."), Some(("read", "c1"))),
        Some(Boundary::Reply {
            text: "Done.".into(),
            cut: false
        })
    );
    assert_eq!(
        b(Role::Assistant, Some("  \n"), Some(("read", "c1"))),
        Some(Boundary::ToolCall {
            name: "read".into(),
            id: "c1".into()
        }),
        "a blank text does not name it"
    );
    assert_eq!(b(Role::User, None, None), None, "an image alone");
    assert_eq!(b(Role::User, Some(" "), None), None);
    assert_eq!(b(Role::Assistant, None, None), None, "thinking alone");
    assert_eq!(
        b(Role::ToolResult, Some("ok"), None),
        None,
        "never a tool result"
    );
    let long = "é".repeat(QUOTE_UNITS + 1);
    assert_eq!(
        b(Role::User, Some(&long), None),
        Some(Boundary::User {
            text: "é".repeat(QUOTE_UNITS),
            nth: 5,
            cut: true
        })
    );
}
