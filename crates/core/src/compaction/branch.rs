//! Summarizing a branch the conversation leaves (pi's `prepareBranchEntries`
//! on the flat array): which of the abandoned messages fit the budget,
//! newest first, tool results left out.

use crate::message::role::Role;
use crate::tokens::estimate::MessageFacts;
use std::ops::Range;

/// The messages of a branch to summarize: `included` are their indices in
/// order (oldest first); `visited` is the range whose tool calls count for
/// the file lists (pi reads the file operations of the message that stops
/// the walk too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchSelection {
    pub included: Vec<usize>,
    pub visited: Range<usize>,
    pub total_tokens: u64,
}

/// pi's walk: from the newest message back, skipping tool results (and
/// roles pi makes no message of), adding messages while they fit
/// `token_budget` (0 = no limit). A summary that does not fit is still
/// taken when less than 90% of the budget is used.
pub fn select_branch(facts: &[MessageFacts], token_budget: u64) -> BranchSelection {
    let mut included = Vec::new();
    let mut total: u64 = 0;
    let mut first_visited = facts.len();
    for i in (0..facts.len()).rev() {
        let f = &facts[i];
        if matches!(f.role, Role::ToolResult) {
            continue;
        }
        first_visited = i;
        let tokens = u64::from(f.tokens);
        if token_budget > 0 && total + tokens > token_budget {
            let is_summary = matches!(f.role, Role::CompactionSummary | Role::BranchSummary);
            if is_summary && (total as f64) < token_budget as f64 * 0.9 {
                included.push(i);
                total += tokens;
            }
            break;
        }
        included.push(i);
        total += tokens;
    }
    included.reverse();
    BranchSelection {
        included,
        visited: first_visited..facts.len(),
        total_tokens: total,
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
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
}
