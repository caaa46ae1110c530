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

/// The last summary, the pinned messages before it and the facts of `array`.
fn shape(array: &[M]) -> (Option<usize>, Vec<usize>, Vec<Fact<String>>) {
    let summary = array.iter().rposition(|m| matches!(m, M::Summary));
    let pinned: Vec<usize> = array
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, M::Pinned | M::PinnedResult(_)))
        .map(|(i, _)| i)
        .filter(|&i| summary.is_some_and(|s| i < s))
        .collect();
    let facts = array
        .iter()
        .map(|m| match m {
            M::Failed => Fact::Failed,
            M::Result(id) | M::PinnedResult(id) => Fact::ToolResult(Some(id.to_string())),
            M::Marker(ids) => Fact::Marker(ids.iter().map(|s| s.to_string()).collect()),
            _ => Fact::Message,
        })
        .collect();
    (summary, pinned, facts)
}

fn steps(array: &[M]) -> Vec<Step> {
    let (summary, pinned, facts) = shape(array);
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
fn the_first_marker_after_a_result_listing_its_id_is_the_one_used() {
    // The one that cleared it: a later marker listing the id again (of a
    // later result that reuses it) leaves its placeholder as it was.
    let a = [
        M::Result("a"),
        M::Marker(&["a"]),
        M::Result("a"),
        M::Marker(&["b", "a"]),
    ];
    assert_eq!(
        steps(&a),
        vec![
            Placeholder {
                result: 0,
                marker: 1
            },
            Send(1),
            Placeholder {
                result: 2,
                marker: 3
            },
            Send(3)
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

/// A kept view brought up to date with `array`; `asked` collects the
/// indices `read` was asked for.
fn update(view: &mut ModelView<String>, array: &[M], asked: &mut Vec<usize>) -> Change {
    let (summary, pinned, facts) = shape(array);
    let read = |i: usize| -> Result<Fact<String>, ()> {
        asked.push(i);
        Ok(facts[i].clone())
    };
    view.update(array.len(), summary, &pinned, read).unwrap()
}

/// An array with every kind of message, in an order that makes each rule
/// matter: pins before and after summaries, results cleared and not,
/// failed attempts, a marker before the first summary.
fn everything() -> Vec<M> {
    vec![
        M::User,
        M::Pinned,
        M::Assistant,
        M::Result("a"),
        M::Failed,
        M::Marker(&["a"]),
        M::PinnedResult("p"),
        M::Result("b"),
        M::Summary,
        M::User,
        M::Assistant,
        M::Result("c"),
        M::Failed,
        M::Result("d"),
        M::Marker(&["c", "p"]),
        M::Pinned,
        M::Assistant,
        M::Result("e"),
        M::Summary,
        M::Result("f"),
        M::Assistant,
        M::Marker(&["f", "e"]),
        M::User,
        M::Failed,
    ]
}

#[test]
fn a_kept_view_asked_at_every_length_answers_as_a_fresh_one() {
    // The second array has no pins: a summary there leaves the number of
    // re-sent messages as it was.
    let without_pins = vec![
        M::User,
        M::Assistant,
        M::Result("a"),
        M::Summary,
        M::User,
        M::Result("b"),
        M::Summary,
        M::Marker(&["b"]),
        M::User,
    ];
    for all in [everything(), without_pins] {
        let mut view = ModelView::default();
        let mut asked = Vec::new();
        let mut last: Vec<Step> = Vec::new();
        let mut last_id = None;
        for n in 0..=all.len() {
            let prefix = &all[..n];
            let change = update(&mut view, prefix, &mut asked);
            assert_eq!(view.steps(), steps(prefix), "after {n} messages");
            let new = n.checked_sub(1).map(|i| &all[i]);
            let moved = matches!(new, Some(M::Marker(_) | M::Summary));
            match change {
                Change::Grew { from } => {
                    assert!(!moved, "after {n} messages: a marker or summary rebuilds");
                    assert_eq!(from, last.len());
                    assert_eq!(view.steps()[..from], last[..]);
                    assert_eq!(Some(view.id()), last_id, "a view that grew keeps its id");
                }
                Change::Rebuilt => {
                    assert!(
                        moved || n == 0,
                        "after {n} messages: grown by a plain message"
                    );
                    assert_ne!(Some(view.id()), last_id, "a view made anew has a new id");
                }
            }
            last = view.steps().to_vec();
            last_id = Some(view.id());
        }
        // Each message was read once, though the view was made anew at
        // every summary and marker.
        asked.sort_unstable();
        assert_eq!(asked, (0..all.len()).collect::<Vec<_>>());
    }
}

#[test]
fn a_caller_keeps_what_it_holds_of_the_same_view_only() {
    let all = everything();
    let mut view = ModelView::default();
    let mut asked = Vec::new();
    assert_eq!(view.kept(0, 0), 0, "no view yet");
    update(&mut view, &all[..10], &mut asked);
    let (id, held) = (view.id(), view.steps().len());
    assert_eq!(view.kept(id, held), held);
    assert_eq!(view.kept(id, held + 1), 0, "more than the view has");
    assert_eq!(view.kept(id.wrapping_add(1), held), 0, "another view");
    // Grown twice: what the caller holds is still the start of the view.
    update(&mut view, &all[..11], &mut asked);
    update(&mut view, &all[..12], &mut asked);
    assert_eq!(view.kept(id, held), held);
    assert_eq!(view.kept(id, 1), 1);
    // A marker makes it anew: nothing the caller holds is kept.
    update(&mut view, &all[..15], &mut asked);
    assert_eq!(view.kept(id, held), 0);
    assert_eq!(view.kept(view.id(), view.steps().len()), view.steps().len());
    // Another view of the same shape elsewhere never matches this one's id.
    let mut other = ModelView::default();
    update(&mut other, &all[..15], &mut asked);
    assert_ne!(other.id(), view.id());
}

#[test]
fn a_shorter_array_a_reset_or_a_failed_read_makes_the_view_anew() {
    let all = everything();
    let mut view = ModelView::default();
    let mut asked = Vec::new();
    update(&mut view, &all[..12], &mut asked);
    // Shorter: its facts are read again (the array is another one).
    asked.clear();
    assert_eq!(update(&mut view, &all[..11], &mut asked), Change::Rebuilt);
    assert_eq!(view.steps(), steps(&all[..11]));
    assert_eq!(
        asked,
        vec![8, 1, 6, 9, 10],
        "the view's messages, read anew"
    );
    // Reset: the same, even at the same length.
    view.reset();
    assert_eq!(update(&mut view, &all[..11], &mut asked), Change::Rebuilt);
    let (id, held) = (view.id(), view.steps().len());
    // A read that fails leaves nothing the caller may keep; the next
    // update makes the view anew.
    let (summary, pinned, _) = shape(&all[..12]);
    let failed = view.update(12, summary, &pinned, |_| {
        Err::<Fact<String>, _>("unreadable")
    });
    assert_eq!(failed, Err("unreadable"));
    assert_eq!(view.kept(id, held), 0);
    assert_eq!(update(&mut view, &all[..12], &mut asked), Change::Rebuilt);
    assert_eq!(view.steps(), steps(&all[..12]));
}

#[test]
fn a_view_is_assembled_from_runs_of_messages_and_its_placeholders() {
    let placeholder = Step::Placeholder {
        result: 4,
        marker: 9,
    };
    let steps = [
        Step::Send(7),
        Step::Send(2),
        Step::Send(8),
        Step::Send(9),
        placeholder,
        Step::Send(10),
        Step::Send(11),
    ];
    assert_eq!(
        parts(&steps),
        [
            Part::Slice(7..8),
            Part::Slice(2..3),
            Part::Slice(8..10),
            Part::Placeholder(placeholder),
            Part::Slice(10..12),
        ]
    );
    assert_eq!(parts(&[Step::Send(3), Step::Send(4)]), [Part::Slice(3..5)]);
    assert!(parts(&[]).is_empty());
}

#[test]
fn what_a_caller_holds_is_undefined_or_two_whole_numbers() {
    use crate::js::options::tests::Js;
    let unread = || -> Result<[Js; 2], InputError> { panic!("read") };
    let held_of = |view, length| held(&Js::Obj, || Ok([view, length])).map_err(|e| e.to_string());
    assert_eq!(held(&Js::Undefined, unread), Ok(None));
    assert_eq!(
        held(&Js::Null, unread).unwrap_err().to_string(),
        "since must be undefined or { view, length } from an earlier answer, got null"
    );
    assert_eq!(held_of(Js::Num(3.0), Js::Num(12.0)), Ok(Some((3, 12))));
    assert_eq!(
        held_of(Js::Num(1.5), Js::Num(12.0)),
        Err("since.view must be a whole number, got a number".into())
    );
    assert_eq!(
        held_of(Js::Num(3.0), Js::Undefined),
        Err("since.length must be a whole number, got undefined".into())
    );
    assert!(held_of(Js::Num(-1.0), Js::Num(0.0)).is_err());
    assert!(held_of(Js::Num(f64::from(u32::MAX) + 1.0), Js::Num(0.0)).is_err());
    // A read that throws is its error.
    let threw = InputError::Unreadable {
        path: FieldPath::argument("since"),
        reason: "getter".into(),
    };
    assert_eq!(held(&Js::Obj, || Err(threw.clone())), Err(threw));
}
