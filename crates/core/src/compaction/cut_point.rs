//! Where to cut: pi's `findCutPoint` on the flat array.
//!
//! Each message stands for the pi session entry it would be (SPEC §2): a
//! `custom` message for a `custom_message` entry, a `branchSummary` for a
//! `branch_summary` entry, a `compactionSummary` for a `compaction` entry,
//! anything else for a `message` entry. pi's rules and quirks follow from
//! that mapping: only `message` entries count tokens in the backward walk; a
//! `compaction` entry is never a cut point and stops the walk back; the cut
//! moves back over `custom_message` / `branch_summary` entries before it.

use crate::error::{FieldPath, InputError};
use crate::js::options::out_of_range;
use crate::message::role::Role;
use crate::tokens::estimate::MessageFacts;
use std::convert::Infallible;

/// The session entry a message of the flat array stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Message(Role),
    CustomMessage,
    BranchSummary,
    Compaction,
}

fn entry(role: Role) -> Entry {
    match role {
        Role::Custom => Entry::CustomMessage,
        Role::BranchSummary => Entry::BranchSummary,
        Role::CompactionSummary => Entry::Compaction,
        other => Entry::Message(other),
    }
}

fn is_valid_cut_point(e: Entry) -> bool {
    matches!(
        e,
        Entry::Message(Role::User | Role::Assistant | Role::BashExecution)
            | Entry::CustomMessage
            | Entry::BranchSummary
    )
}

fn starts_a_turn(e: Entry) -> bool {
    matches!(
        e,
        Entry::Message(Role::User | Role::BashExecution)
            | Entry::CustomMessage
            | Entry::BranchSummary
    )
}

/// pi's `CutPointResult` with indices into the flat array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutPoint {
    pub first_kept_index: usize,
    /// The message that starts the turn the cut falls in, when the cut is
    /// not at a user message (pi's `-1` is `None`).
    pub turn_start_index: Option<usize>,
    pub is_split_turn: bool,
}

/// pi's `findCutPoint(entries, start, end, keepRecentTokens)`: walk back
/// from `end`, adding the estimates of message entries, until
/// `keep_recent_tokens` are reached; cut at the first valid cut point at or
/// after that message. Requires `start <= end <= facts.len()`.
pub fn find_cut_point(
    facts: &[MessageFacts],
    start: usize,
    end: usize,
    keep_recent_tokens: f64,
) -> CutPoint {
    let Ok(cut) = find_cut_point_with(facts, start, end, keep_recent_tokens, &mut |i| {
        Ok::<u64, Infallible>(u64::from(facts[i].tokens))
    });
    cut
}

/// `findCutPoint`'s `start` or `end` argument (`name`): a whole number from
/// 0 to `max` (`end`: the array's length; `start`: `end`). `value` is the
/// argument when it is a number; `described` says what it is otherwise.
pub fn index_argument(
    value: Option<f64>,
    name: &'static str,
    max: u32,
    described: impl FnOnce() -> String,
) -> Result<u32, InputError> {
    let expected = if max == 0 {
        "0"
    } else {
        "an integer index within the array"
    };
    let path = FieldPath::argument(name);
    match value {
        Some(x) if x.fract() == 0.0 && x >= 0.0 && x <= max as f64 => Ok(x as u32),
        // A number out of range is a RangeError that shows it.
        Some(x) => Err(out_of_range(path, expected, x)),
        None => Err(InputError::WrongType {
            path,
            expected,
            got: described(),
        }),
    }
}

/// [`find_cut_point`] with the estimates supplied by `tokens(index)`, asked
/// only for the messages the backward walk reaches (newest first), so that
/// a caller can measure them lazily.
pub fn find_cut_point_with<E>(
    facts: &[MessageFacts],
    start: usize,
    end: usize,
    keep_recent_tokens: f64,
    tokens: &mut impl FnMut(usize) -> Result<u64, E>,
) -> Result<CutPoint, E> {
    cut_point(facts, start, end, keep_recent_tokens, false, tokens)
}

/// [`find_cut_point_with`] on the messages an overflow's retry compacts:
/// the failed attempt, an assistant message with no content, was taken out
/// at `end`. pi compacts its session with that message still in it, so
/// `end` is a cut point too (estimated at 0 tokens): when only tool results
/// follow the message where the kept tokens are reached (a tool's huge
/// output overflowed the window), pi cuts there, at the end, and keeps
/// nothing but the summary, where the walk without it would find no cut
/// point and nothing to summarize. A cut at `end` is inside the turn that
/// made the attempt: its start is the turn's.
pub fn find_cut_point_after_failed_attempt<E>(
    facts: &[MessageFacts],
    start: usize,
    end: usize,
    keep_recent_tokens: f64,
    tokens: &mut impl FnMut(usize) -> Result<u64, E>,
) -> Result<CutPoint, E> {
    cut_point(facts, start, end, keep_recent_tokens, true, tokens)
}

fn cut_point<E>(
    facts: &[MessageFacts],
    start: usize,
    end: usize,
    keep_recent_tokens: f64,
    failed_attempt_at_end: bool,
    tokens: &mut impl FnMut(usize) -> Result<u64, E>,
) -> Result<CutPoint, E> {
    let end = end.min(facts.len());
    let start = start.min(end);
    // The taken-out attempt stands at `end`: an assistant message entry.
    let kind = |i: usize| match facts.get(i) {
        Some(f) => entry(f.role),
        None => Entry::Message(Role::Assistant),
    };
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| is_valid_cut_point(kind(i)))
        .chain(failed_attempt_at_end.then_some(end))
        .collect();
    let Some(&first_cut_point) = cut_points.first() else {
        return Ok(CutPoint {
            first_kept_index: start,
            turn_start_index: None,
            is_split_turn: false,
        });
    };

    let mut cut = first_cut_point;
    let mut accumulated: u64 = 0;
    // The walk starts at the failed attempt when there is one: a message
    // of 0 tokens (it meets a budget of 0 by itself).
    let walk_end = end + usize::from(failed_attempt_at_end);
    for i in (start..walk_end).rev() {
        if !matches!(kind(i), Entry::Message(_)) {
            continue;
        }
        accumulated += if i == end { 0 } else { tokens(i)? };
        if accumulated as f64 >= keep_recent_tokens {
            // The closest cut point at or after this message; when there is
            // none (only tool results follow), pi keeps its default.
            if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                cut = c;
            }
            break;
        }
    }

    // Take along the non-message entries just before the cut.
    while cut > start {
        match kind(cut - 1) {
            Entry::Compaction | Entry::Message(_) => break,
            Entry::CustomMessage | Entry::BranchSummary => cut -= 1,
        }
    }

    let is_user = kind(cut) == Entry::Message(Role::User);
    let turn_start_index = if is_user {
        None
    } else {
        (start..=cut).rev().find(|&i| starts_a_turn(kind(i)))
    };
    Ok(CutPoint {
        first_kept_index: cut,
        turn_start_index,
        is_split_turn: !is_user && turn_start_index.is_some(),
    })
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn index_arguments_are_whole_numbers_within_the_array() {
        let what = || "a string".to_string();
        assert_eq!(index_argument(Some(3.0), "end", 5, what), Ok(3));
        assert_eq!(index_argument(Some(0.0), "start", 0, what), Ok(0));
        assert_eq!(index_argument(Some(5.0), "end", 5, what), Ok(5));
        let e = |v, max| index_argument(v, "end", max, what).unwrap_err().to_string();
        assert_eq!(
            e(Some(6.0), 5),
            "end must be an integer index within the array, got 6"
        );
        assert_eq!(
            e(Some(1.5), 5),
            "end must be an integer index within the array, got 1.5"
        );
        assert_eq!(
            e(Some(-1.0), 5),
            "end must be an integer index within the array, got -1"
        );
        assert_eq!(
            e(Some(f64::NAN), 5),
            "end must be an integer index within the array, got NaN"
        );
        assert_eq!(
            e(None, 5),
            "end must be an integer index within the array, got a string"
        );
        // An empty array has one index: 0.
        assert_eq!(e(Some(1.0), 0), "end must be 0, got 1");
        // A number out of range is a RangeError; another type a TypeError.
        let range = |v: Option<f64>| index_argument(v, "end", 5, what).unwrap_err().is_range();
        assert!([6.0, 1.5, -1.0, f64::NAN]
            .into_iter()
            .all(|x| range(Some(x))));
        assert!(!range(None));
    }
    use Role::*;

    fn session(items: &[(Role, u64)]) -> Vec<MessageFacts> {
        items
            .iter()
            .map(|&(role, tokens)| MessageFacts::new(role, tokens, None, 0.0))
            .collect()
    }

    fn cut(
        first_kept_index: usize,
        turn_start_index: Option<usize>,
        is_split_turn: bool,
    ) -> CutPoint {
        CutPoint {
            first_kept_index,
            turn_start_index,
            is_split_turn,
        }
    }

    #[test]
    fn keeps_the_newest_tokens_and_cuts_at_a_user_message() {
        let s = session(&[(User, 100), (Assistant, 100), (User, 100), (Assistant, 100)]);
        assert_eq!(find_cut_point(&s, 0, 4, 150.0), cut(2, None, false));
        assert_eq!(find_cut_point(&s, 0, 4, 1000.0), cut(0, None, false));
    }

    #[test]
    fn never_cuts_at_a_tool_result_and_reports_a_split_turn() {
        let s = session(&[
            (User, 10),
            (Assistant, 10),
            (ToolResult, 500),
            (Assistant, 10),
            (ToolResult, 500),
        ]);
        // The walk reaches the budget at index 2 (a tool result): the next
        // valid cut point is the assistant at 3, in the turn started at 0.
        assert_eq!(find_cut_point(&s, 0, 5, 900.0), cut(3, Some(0), true));
    }

    #[test]
    fn trailing_tool_results_keep_pis_default_cut() {
        let s = session(&[(User, 10), (Assistant, 10), (ToolResult, 5000)]);
        // The budget is met at the last tool result, after every cut point:
        // pi keeps its default, the first cut point.
        assert_eq!(find_cut_point(&s, 0, 3, 100.0), cut(0, None, false));
    }

    #[test]
    fn after_a_failed_attempt_its_place_is_a_cut_point() {
        let after = |s: &[MessageFacts], start, end, keep| {
            let Ok(c) = find_cut_point_after_failed_attempt(s, start, end, keep, &mut |i| {
                Ok::<u64, Infallible>(u64::from(s[i].tokens))
            });
            c
        };
        // A tool loop whose last output overflowed: pi's session still holds
        // the failed attempt (an assistant message) after it, and cuts
        // there, in the turn started at 2.
        let s = session(&[
            (User, 10),
            (Assistant, 10),
            (User, 10),
            (Assistant, 10),
            (ToolResult, 5000),
        ]);
        assert_eq!(after(&s, 0, 5, 100.0), cut(5, Some(2), true));
        // Where a real cut point follows the budget's message, the same cut
        // as without it; a budget never met keeps pi's default.
        assert_eq!(after(&s, 0, 5, 10_000.0), cut(0, None, false));
        let t = session(&[(User, 10), (Assistant, 100), (User, 100), (Assistant, 10)]);
        assert_eq!(after(&t, 0, 4, 50.0), find_cut_point(&t, 0, 4, 50.0));
        // Only tool results after the previous summary: the attempt's place
        // is the only cut point (no turn start after the summary).
        let u = session(&[(User, 10), (CompactionSummary, 10), (ToolResult, 500)]);
        assert_eq!(after(&u, 2, 3, 100.0), cut(3, None, false));
        // A budget of 0 is met by the attempt itself.
        assert_eq!(after(&t, 0, 4, 0.0), cut(4, Some(2), true));
    }

    #[test]
    fn no_valid_cut_point_keeps_from_start() {
        let s = session(&[(ToolResult, 10), (Other, 10)]);
        assert_eq!(find_cut_point(&s, 0, 2, 5.0), cut(0, None, false));
        assert_eq!(find_cut_point(&s, 1, 1, 5.0), cut(1, None, false));
    }

    #[test]
    fn custom_and_branch_summaries_do_not_count_but_are_taken_along() {
        let s = session(&[
            (User, 100),
            (Assistant, 100),
            (Custom, 100_000),
            (BranchSummary, 100_000),
            (User, 100),
            (Assistant, 100),
        ]);
        // Only messages count: 200 tokens reached at index 4; the cut moves
        // back over the branch summary and the custom message.
        assert_eq!(find_cut_point(&s, 0, 6, 200.0), cut(2, Some(2), true));
    }

    #[test]
    fn a_compaction_summary_is_no_cut_point_and_stops_the_walk_back() {
        let s = session(&[
            (User, 10),
            (CompactionSummary, 10_000),
            (Custom, 5),
            (Assistant, 10),
        ]);
        // The custom message is taken along; the summary before it is not.
        assert_eq!(find_cut_point(&s, 0, 4, 5.0), cut(2, Some(2), true));
        let s = session(&[(User, 10), (CompactionSummary, 10_000), (Assistant, 10)]);
        assert_eq!(find_cut_point(&s, 0, 3, 5.0), cut(2, Some(0), true));
    }

    #[test]
    fn bash_execution_starts_a_turn_with_an_empty_prefix() {
        let s = session(&[
            (User, 10),
            (Assistant, 10),
            (BashExecution, 100),
            (Assistant, 10),
        ]);
        // Cutting at the bash execution: split turn whose start is the cut.
        assert_eq!(find_cut_point(&s, 0, 4, 50.0), cut(2, Some(2), true));
    }

    #[test]
    fn the_walk_is_limited_to_the_range() {
        let s = session(&[(User, 1000), (Assistant, 1000), (User, 10), (Assistant, 10)]);
        assert_eq!(find_cut_point(&s, 2, 4, 1_000_000.0), cut(2, None, false));
        // A cut at an assistant whose turn started before `start` is not split.
        let s = session(&[(User, 10), (Assistant, 10), (Assistant, 10)]);
        assert_eq!(find_cut_point(&s, 1, 3, 5.0), cut(2, None, false));
    }

    #[test]
    fn zero_keep_recent_cuts_at_the_newest_cut_point() {
        let s = session(&[(User, 10), (Assistant, 10), (User, 0)]);
        assert_eq!(find_cut_point(&s, 0, 3, 0.0), cut(2, None, false));
    }
}
