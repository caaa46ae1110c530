//! Native tests of reading the shim's records and text layouts.

use super::*;
use crate::tokens::estimate::calibrated_tokens;

/// A record with every slot as `gatherFacts` starts it, then `set`.
fn record(role: Role, set: &[(usize, f64)]) -> [f64; STRIDE] {
    let mut r = [0.0; STRIDE];
    r[0] = role as u8 as f64;
    r[1] = -1.0;
    r[9] = -1.0;
    r[18] = -1.0;
    for &(slot, value) in set {
        r[slot] = value;
    }
    r
}

#[test]
fn a_record_decodes_into_the_lengths_by_kind() {
    let r = record(
        Role::Assistant,
        &[
            (2, 10.0),
            (3, 20.0),
            (4, 30.0),
            (5, 2.0),
            (8, 7.0),
            (16, 1234.0),
        ],
    );
    let f = decode(Role::Assistant, &r);
    assert_eq!(f.role, Some(Role::Assistant));
    assert_eq!(f.content_string, None);
    assert_eq!(
        (f.text, f.thinking, f.tool_calls, f.images),
        (10, 20, 30, 2)
    );
    assert_eq!((f.summary, f.command, f.output), (0, 0, 7));
    assert_eq!(f.timestamp, 1234.0);
    assert_eq!(f.stop_reason, None);
    assert_eq!(f.usage, None);
    assert!(!f.pinned && !f.tool_calls_pending && !f.tool_calls_bounded);
    // A string content's length; lengths that are no positive finite
    // number count 0.
    let r = record(
        Role::User,
        &[(1, 12.0), (2, f64::NAN), (3, -4.0), (4, f64::INFINITY)],
    );
    let f = decode(Role::User, &r);
    assert_eq!(f.content_string, Some(12));
    assert_eq!((f.text, f.thinking, f.tool_calls), (0, 0, 0));
}

#[test]
fn stop_reasons_usage_and_flags_are_read_from_their_slots() {
    let reasons = [
        (-1.0, None),
        (0.0, Some(StopReason::Stop)),
        (1.0, Some(StopReason::Length)),
        (2.0, Some(StopReason::ToolUse)),
        (3.0, Some(StopReason::Error)),
        (4.0, Some(StopReason::Aborted)),
        (5.0, Some(StopReason::Other)),
    ];
    for (code, want) in reasons {
        let r = record(Role::Assistant, &[(9, code)]);
        assert_eq!(decode(Role::Assistant, &r).stop_reason, want, "{code}");
    }
    let usage = [
        (10, 1.0),
        (11, 1.0),
        (12, 2.0),
        (13, 3.0),
        (14, 4.0),
        (15, f64::NAN),
    ];
    let f = decode(Role::Assistant, &record(Role::Assistant, &usage));
    let u = f.usage.expect("usage");
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write),
        (1.0, 2.0, 3.0, 4.0)
    );
    assert!(u.total_tokens.is_nan());
    // Arguments not measured: bounded (1, with the bound) or not (2).
    let f = decode(
        Role::Assistant,
        &record(Role::Assistant, &[(19, 1.0), (21, 99.0)]),
    );
    assert!(f.tool_calls_pending && f.tool_calls_bounded);
    assert_eq!(f.tool_call_arguments_bound, 99);
    let f = decode(Role::Assistant, &record(Role::Assistant, &[(19, 2.0)]));
    assert!(f.tool_calls_pending && !f.tool_calls_bounded);
    assert!(decode(Role::User, &record(Role::User, &[(20, 1.0)])).pinned);
}

#[test]
fn shared_slots_mean_what_the_role_puts_in_them() {
    // Slot 6: a summary's length, a marker's tokensFreed.
    let r = record(Role::ToolOutputCleared, &[(6, 500.0)]);
    let f = decode(Role::ToolOutputCleared, &r);
    assert_eq!((f.summary, f.tokens_freed), (0, 500));
    let f = decode(
        Role::BranchSummary,
        &record(Role::BranchSummary, &[(6, 500.0)]),
    );
    assert_eq!((f.summary, f.tokens_freed), (500, 0));
    // Slot 7: a command's length, a compaction summary's keptMessages + 1.
    let f = decode(
        Role::BashExecution,
        &record(Role::BashExecution, &[(7, 8.0)]),
    );
    assert_eq!((f.command, f.kept_messages), (8, None));
    let kept = |slot: f64| {
        let r = record(Role::CompactionSummary, &[(6, 40.0), (7, slot)]);
        let f = decode(Role::CompactionSummary, &r);
        assert_eq!((f.summary, f.command), (40, 0));
        f.kept_messages
    };
    assert_eq!(kept(0.0), None);
    assert_eq!(kept(1.0), Some(0));
    assert_eq!(kept(6.0), Some(5));
}

#[test]
fn each_problem_names_its_field() {
    let error = |code: f64, block: f64, thrown: &str| {
        let r = record(Role::Assistant, &[(17, code), (18, block)]);
        assert_eq!(problem(&r), code as u8);
        let thrown = thrown.to_string();
        problem_error(
            &r,
            FieldPath::element("messages", 4),
            None,
            || "an object".into(),
            || thrown,
        )
        .to_string()
    };
    let cases = [
        (
            1.0,
            "messages[4].content must be a string or an array of content blocks, got an object",
        ),
        (
            2.0,
            "messages[4].content[2] must be a content block object, got an object",
        ),
        (
            3.0,
            "messages[4].content[2].text must be a string, got an object",
        ),
        (
            4.0,
            "messages[4].content[2].thinking must be a string, got an object",
        ),
        (
            5.0,
            "messages[4].content[2].name must be a string, got an object",
        ),
        (7.0, "messages[4].summary must be a string, got an object"),
        (8.0, "messages[4].command must be a string, got an object"),
        (9.0, "messages[4].output must be a string, got an object"),
        (11.0, "messages[4].pinned must be a boolean, got an object"),
        (
            12.0,
            "messages[4].tokensFreed must be a non-negative safe integer, got an object",
        ),
        (
            13.0,
            "messages[4].keptMessages must be a non-negative safe integer, got an object",
        ),
        (
            14.0,
            "messages[4].toolCallIds must be an array of tool call ids, got an object",
        ),
        (15.0, "messages[4].toolCallIds[2] must be a string, got an object"),
        (
            16.0,
            "messages[4].outputTokens must be an array of non-negative safe integers, got an object",
        ),
        (
            17.0,
            "messages[4].outputTokens[2] must be a non-negative safe integer, got an object",
        ),
    ];
    for (code, want) in cases {
        assert_eq!(error(code, 2.0, ""), want);
    }
    assert_eq!(
        error(6.0, 1.0, "cyclic"),
        "messages[4].content[1].arguments could not be read: JSON.stringify failed: cyclic"
    );
    assert_eq!(
        error(6.0, 0.0, ""),
        "messages[4].content[0].arguments could not be read: JSON.stringify gave no text for it"
    );
    // A getter threw (10), or anything else.
    assert_eq!(
        error(10.0, -1.0, "boom"),
        "messages[4] could not be read: boom"
    );
    assert_eq!(
        error(18.0, -1.0, "boom"),
        "messages[4] could not be read: boom"
    );
    // No block index: the first block.
    assert_eq!(
        error(3.0, -1.0, ""),
        "messages[4].content[0].text must be a string, got an object"
    );
}

#[test]
fn a_count_that_is_a_number_out_of_range_is_a_range_error() {
    for (code, field) in [(12.0, "tokensFreed"), (13.0, "keptMessages")] {
        let r = record(Role::ToolOutputCleared, &[(17, code)]);
        for (x, shown) in [
            (f64::NAN, "NaN"),
            (-5000.0, "-5000"),
            (1.5, "1.5"),
            (1e300, "1e+300"),
        ] {
            let e = problem_error(
                &r,
                FieldPath::element("messages", 2),
                Some(x),
                || unreachable!(),
                String::new,
            );
            assert!(e.is_range(), "{field} {x}");
            assert_eq!(
                e.to_string(),
                format!("messages[2].{field} must be a non-negative safe integer, got {shown}")
            );
        }
        // Another type stays a TypeError.
        let e = problem_error(
            &r,
            FieldPath::element("messages", 2),
            None,
            || "a string".into(),
            String::new,
        );
        assert!(!e.is_range());
    }
}

/// The layout and bytes `gatherTexts` writes for a user message with a
/// string content and an assistant message with blocks and two images.
fn two_messages() -> (Vec<u8>, Vec<f64>) {
    let bytes = b"hello\xc3\xa9thinkread{\"path\":1}sumcmdout".to_vec();
    #[rustfmt::skip]
    let layout = vec![
        0.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        1.0, 2.0, -1.0, 0.0, 1.0, 5.0, 1.0, 14.0, 3.0, 3.0, 3.0,
    ];
    (bytes, layout)
}

#[test]
fn texts_are_read_in_the_layout_order() {
    let (bytes, layout) = two_messages();
    let mut codes = Vec::new();
    let texts = read_texts(
        &bytes,
        &layout,
        2,
        |k, code| -> Result<Role, ()> {
            codes.push((k, code));
            Ok(Role::from_code(code).unwrap())
        },
        |m| {
            let owned = |v: &Vec<&[u8]>| v.iter().map(|t| t.to_vec()).collect::<Vec<_>>();
            (
                m.role,
                m.content_string.map(<[u8]>::to_vec),
                owned(&m.text),
                owned(&m.thinking),
                owned(&m.tool_calls),
                m.images,
                [m.summary.to_vec(), m.command.to_vec(), m.output.to_vec()],
                calibrated_tokens(m),
            )
        },
    )
    .unwrap();
    assert_eq!(codes, [(0, 0), (1, 1)]);
    assert_eq!(texts[0].0, Some(Role::User));
    assert_eq!(texts[0].1.as_deref(), Some("helloé".as_bytes()));
    assert_eq!(texts[1].1, None);
    assert!(texts[1].2.is_empty());
    assert_eq!(texts[1].3, [b"think".to_vec()]);
    assert_eq!(texts[1].4, [b"read{\"path\":1}".to_vec()]);
    assert_eq!(texts[1].5, 2);
    assert_eq!(
        texts[1].6,
        [b"sum".to_vec(), b"cmd".to_vec(), b"out".to_vec()]
    );
    assert!(texts[1].7 > texts[0].7);
    // A role refused stops the reading with its error.
    let refused = read_texts(
        &bytes,
        &layout,
        2,
        |k, _| if k == 1 { Err(k) } else { Ok(Role::User) },
        |_| (),
    );
    assert_eq!(refused, Err(1));
}

#[test]
fn byte_bounds_are_the_calibrated_bound_of_the_lengths() {
    let (_, layout) = two_messages();
    let bounds = byte_bounds(&layout, 2, |_, code| -> Result<Role, ()> {
        Ok(Role::from_code(code).unwrap())
    })
    .unwrap();
    let user = RawFacts {
        role: Some(Role::User),
        content_string: Some(7),
        ..RawFacts::default()
    };
    let assistant = RawFacts {
        role: Some(Role::Assistant),
        thinking: 5,
        tool_calls: 14,
        images: 2,
        summary: 3,
        command: 3,
        output: 3,
        ..RawFacts::default()
    };
    assert_eq!(
        bounds,
        [
            calibrated_byte_bound(&user),
            calibrated_byte_bound(&assistant)
        ]
    );
    assert_eq!(
        byte_bounds(&layout, 1, |_, _| Err::<Role, _>("refused")),
        Err("refused")
    );
}
