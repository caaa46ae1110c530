use super::*;
use Step::{Placeholder, Send};

/// A message of a test array.
#[derive(Clone)]
enum M {
    User,
    Pinned,
    Assistant,
    Failed,
    Result(&'static str),
    PinnedResult(&'static str),
    Marker(&'static [&'static str]),
    Summary,
}

fn steps(array: &[M]) -> Vec<Step> {
    let summary = array.iter().rposition(|m| matches!(m, M::Summary));
    let pinned: Vec<usize> = array
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, M::Pinned | M::PinnedResult(_)))
        .map(|(i, _)| i)
        .filter(|&i| summary.is_some_and(|s| i < s))
        .collect();
    let facts: Vec<Fact<String>> = array
        .iter()
        .map(|m| match m {
            M::Failed => Fact::Failed,
            M::Result(id) | M::PinnedResult(id) => Fact::ToolResult(Some(id.to_string())),
            M::Marker(ids) => Fact::Marker(ids.iter().map(|s| s.to_string()).collect()),
            _ => Fact::Message,
        })
        .collect();
    let mut asked = Vec::new();
    let out = model_steps(array.len(), summary, &pinned, |i| {
        asked.push(i);
        &facts[i]
    });
    let mut sorted = asked.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), asked.len(), "each message asked once");
    out
}

#[test]
fn without_a_summary_every_message_is_sent() {
    let a = [M::User, M::Assistant, M::Result("t"), M::User];
    assert_eq!(steps(&a), vec![Send(0), Send(1), Send(2), Send(3)]);
    assert_eq!(steps(&[]), vec![]);
}

#[test]
fn a_pin_before_the_summary_is_sent_right_after_it() {
    // The case the AI SDK lost: [RULE, a1, u2, a3, summary, u5].
    let a = [
        M::Pinned,
        M::Assistant,
        M::User,
        M::Assistant,
        M::Summary,
        M::User,
    ];
    assert_eq!(steps(&a), vec![Send(4), Send(0), Send(5)]);
}

#[test]
fn a_pin_after_the_summary_stays_where_it_is() {
    let a = [M::User, M::Summary, M::User, M::Pinned, M::Assistant];
    assert_eq!(steps(&a), vec![Send(1), Send(2), Send(3), Send(4)]);
}

#[test]
fn pins_keep_their_order_and_only_the_last_summary_counts() {
    let a = [
        M::Pinned,
        M::User,
        M::Summary,
        M::Pinned,
        M::Assistant,
        M::Summary,
        M::User,
    ];
    assert_eq!(steps(&a), vec![Send(5), Send(0), Send(3), Send(6)]);
}

#[test]
fn a_pin_that_a_summary_covered_is_still_sent_once() {
    // Summarized by the first summary, re-sent after the second one: once.
    let a = [M::Pinned, M::Summary, M::User, M::Summary, M::User];
    assert_eq!(steps(&a), vec![Send(3), Send(0), Send(4)]);
}

#[test]
fn a_marker_after_a_result_in_the_view_makes_it_a_placeholder() {
    let a = [
        M::Summary,
        M::Assistant,
        M::Result("a"),
        M::Result("b"),
        M::Marker(&["a"]),
        M::User,
    ];
    assert_eq!(
        steps(&a),
        vec![
            Send(0),
            Send(1),
            Placeholder {
                result: 2,
                marker: 4
            },
            Send(3),
            Send(4),
            Send(5),
        ]
    );
}

#[test]
fn a_marker_before_the_result_does_not_clear_it() {
    let a = [M::User, M::Marker(&["a"]), M::Assistant, M::Result("a")];
    assert_eq!(steps(&a), vec![Send(0), Send(1), Send(2), Send(3)]);
}

#[test]
fn a_marker_before_the_summary_is_out_of_the_view_and_clears_nothing() {
    let a = [
        M::Assistant,
        M::Result("a"),
        M::Marker(&["a", "b"]),
        M::Summary,
        M::Assistant,
        M::Result("b"),
    ];
    assert_eq!(steps(&a), vec![Send(3), Send(4), Send(5)]);
}

#[test]
fn a_marker_whose_result_is_before_the_summary_has_nothing_to_clear() {
    let a = [
        M::Assistant,
        M::Result("a"),
        M::Summary,
        M::Marker(&["a"]),
        M::User,
    ];
    assert_eq!(steps(&a), vec![Send(2), Send(3), Send(4)]);
}

#[test]
fn a_pinned_result_re_sent_after_the_summary_is_cleared_by_a_later_marker() {
    let a = [
        M::Assistant,
        M::PinnedResult("a"),
        M::Summary,
        M::User,
        M::Marker(&["a"]),
    ];
    assert_eq!(
        steps(&a),
        vec![
            Send(2),
            Placeholder {
                result: 1,
                marker: 4
            },
            Send(3),
            Send(4),
        ]
    );
}

#[test]
fn the_last_marker_listing_an_id_is_the_one_used() {
    let a = [M::Result("a"), M::Marker(&["a"]), M::Marker(&["b", "a"])];
    assert_eq!(
        steps(&a),
        vec![
            Placeholder {
                result: 0,
                marker: 2
            },
            Send(1),
            Send(2)
        ]
    );
}

#[test]
fn a_result_without_a_string_id_is_sent_as_it_is() {
    let facts = [Fact::ToolResult(None), Fact::Marker(vec!["a".to_string()])];
    let out = model_steps(2, None, &[], |i| &facts[i]);
    assert_eq!(out, vec![Send(0), Send(1)]);
}

#[test]
fn failed_attempts_are_left_out_wherever_they_are() {
    let a = [
        M::Failed,
        M::Summary,
        M::User,
        M::Failed,
        M::Assistant,
        M::Failed,
    ];
    assert_eq!(steps(&a), vec![Send(1), Send(2), Send(4)]);
    assert!(is_failed_attempt("error"));
    assert!(is_failed_attempt("aborted"));
    assert!(!is_failed_attempt("stop"));
    assert!(!is_failed_attempt("length"));
    assert!(!is_failed_attempt("toolUse"));
}

#[test]
fn a_split_turn_keeps_its_kept_suffix_after_the_summary() {
    // A turn cut in the middle: the summary sits between the turn's tool
    // call and its result; the result is sent after the summary.
    let a = [
        M::User,
        M::Assistant,
        M::Summary,
        M::Result("a"),
        M::Assistant,
        M::Marker(&["a"]),
    ];
    assert_eq!(
        steps(&a),
        vec![
            Send(2),
            Placeholder {
                result: 3,
                marker: 5
            },
            Send(4),
            Send(5),
        ]
    );
}
