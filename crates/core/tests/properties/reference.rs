//! A reference `findCutPoint`, written from pi's rule as stated rather
//! than as the core's backward walk. Shared with the fuzz targets
//! (`fuzz/src/lib.rs` includes this file).

use agent_compaction_core::compaction::cut_point::CutPoint;
use agent_compaction_core::message::role::Role;

/// pi's cut, written from its description rather than as a walk:
///
/// 1. Only messages that stand for pi `message` entries count tokens (not
///    custom messages, branch summaries or compaction summaries).
/// 2. The newest `keep` tokens begin at the last counted message whose
///    tokens together with those of every counted message after it reach
///    `keep`.
/// 3. The cut is the first valid cut point (user, assistant, bash
///    execution, custom message, branch summary) at or after that message;
///    if there is none there, or `keep` is never reached, the first valid
///    cut point of the range. No valid cut point at all: `start`.
/// 4. Custom messages and branch summaries right before the cut go with it.
/// 5. Unless the cut is a user message, the turn it falls in starts at the
///    last user message, bash execution, custom message or branch summary
///    at or before it.
pub fn reference_cut(
    roles: &[Role],
    tokens: &[u64],
    start: usize,
    end: usize,
    keep: f64,
) -> CutPoint {
    use Role::*;
    let counts = |i: usize| !matches!(roles[i], Custom | BranchSummary | CompactionSummary);
    let valid = |i: usize| {
        matches!(
            roles[i],
            User | Assistant | BashExecution | Custom | BranchSummary
        )
    };
    let starts_turn = |i: usize| matches!(roles[i], User | BashExecution | Custom | BranchSummary);
    let counted_from =
        |i: usize| -> u64 { (i..end).filter(|&j| counts(j)).map(|j| tokens[j]).sum() };

    let Some(first) = (start..end).find(|&i| valid(i)) else {
        return CutPoint {
            first_kept_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };
    let keep_begins = (start..end)
        .filter(|&i| counts(i) && counted_from(i) as f64 >= keep)
        .max();
    let mut cut = keep_begins
        .and_then(|b| (b..end).find(|&i| valid(i)))
        .unwrap_or(first);
    while cut > start && matches!(roles[cut - 1], Custom | BranchSummary) {
        cut -= 1;
    }
    let turn_start_index = if roles[cut] == User {
        None
    } else {
        (start..=cut).filter(|&i| starts_turn(i)).max()
    };
    CutPoint {
        first_kept_index: cut,
        turn_start_index,
        is_split_turn: turn_start_index.is_some(),
    }
}
