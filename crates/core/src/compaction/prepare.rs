//! What a compaction would summarize: pi's `prepareCompaction` on the flat
//! array, as index ranges (the boundary turns them into the caller's own
//! message objects and gathers file operations from them).

use crate::compaction::cut_point::{
    find_cut_point_after_failed_attempt, find_cut_point_with, CutPoint,
};
use crate::error::InputError;
use crate::js::options::{expect_object, Reader, Value};
use crate::message::pinned::model_view;
use crate::message::role::Role;
use crate::tokens::context_tokens::{estimate_from_end, Stale};
use crate::tokens::estimate::MessageFacts;
use std::convert::Infallible;
use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub struct Preparation {
    /// Where the kept messages start; the summary is inserted here.
    pub first_kept_index: usize,
    /// The messages summarized as history.
    pub history: Range<usize>,
    /// The start of a split turn up to the cut (empty when not split).
    pub turn_prefix: Range<usize>,
    pub is_split_turn: bool,
    /// pi's `estimateContextTokens` of the current LLM context.
    pub tokens_before: f64,
    /// The last `compactionSummary`, whose text is the previous summary.
    pub previous_summary_index: Option<usize>,
    pub cut: CutPoint,
}

/// pi's `prepareCompaction(pathEntries, settings)`. Returns `None` when the
/// last message is a summary (pi: `undefined`), when nothing lies after the
/// previous summary, and — a deliberate difference — when there is nothing
/// to summarize (pi returns a preparation with empty lists there).
pub fn prepare_compaction(facts: &[MessageFacts], keep_recent_tokens: f64) -> Option<Preparation> {
    let Ok(p) = prepare_compaction_with(facts, keep_recent_tokens, false, &mut |i| {
        Ok::<u64, Infallible>(u64::from(facts[i].tokens))
    });
    p
}

/// [`prepare_compaction`] with the estimates supplied by `tokens(index)`,
/// asked only for the messages whose estimate counts (after the last usage,
/// and along the cut point's backward walk), so that a caller that gathered
/// the messages lazily measures only those. `after_failed_attempt`: the
/// messages of an overflow's retry, whose failed attempt was taken out of
/// their end; pi's session still holds it, so the cut may fall there
/// ([`find_cut_point_after_failed_attempt`]), keeping nothing but the
/// summary.
pub fn prepare_compaction_with<E>(
    facts: &[MessageFacts],
    keep_recent_tokens: f64,
    after_failed_attempt: bool,
    tokens: &mut impl FnMut(usize) -> Result<u64, E>,
) -> Result<Option<Preparation>, E> {
    let Some(last) = facts.last() else {
        return Ok(None);
    };
    if last.role == Role::CompactionSummary {
        return Ok(None);
    }
    let previous_summary_index = facts
        .iter()
        .rposition(|f| f.role == Role::CompactionSummary);
    // The previous kept boundary: right after the previous summary, never before.
    let boundary_start = previous_summary_index.map_or(0, |i| i + 1);
    let context_start = previous_summary_index.unwrap_or(0);
    let newest_first = (context_start..facts.len()).rev().map(|i| {
        let mut f = facts[i];
        if f.usage().is_none() {
            f.set_tokens(tokens(i)?);
        }
        Ok((i, f))
    });
    let tokens_before = estimate_from_end(newest_first, Stale::Nothing)?.tokens;

    let find = match after_failed_attempt {
        true => find_cut_point_after_failed_attempt,
        false => find_cut_point_with,
    };
    let cut = find(
        facts,
        boundary_start,
        facts.len(),
        keep_recent_tokens,
        tokens,
    )?;
    if cut.first_kept_index >= facts.len() && !after_failed_attempt {
        return Ok(None);
    }
    let (history_end, turn_prefix) = match (cut.is_split_turn, cut.turn_start_index) {
        (true, Some(turn_start)) => (turn_start, turn_start..cut.first_kept_index),
        _ => (
            cut.first_kept_index,
            cut.first_kept_index..cut.first_kept_index,
        ),
    };
    let history = boundary_start..history_end.max(boundary_start);
    if history.is_empty() && turn_prefix.is_empty() {
        return Ok(None);
    }
    Ok(Some(Preparation {
        first_kept_index: cut.first_kept_index,
        history,
        turn_prefix,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary_index,
        cut,
    }))
}

impl Preparation {
    /// The plan for a summarizer asked once for everything the compaction
    /// hides (one that has its provider compact the conversation): a split
    /// turn's prefix joins the history, and no turn-prefix request is made.
    pub fn in_one_request(mut self) -> Preparation {
        self.history = self.history.start..self.first_kept_index;
        self.turn_prefix = self.first_kept_index..self.first_kept_index;
        self.is_split_turn = false;
        self
    }

    /// Where a summary request in the prefix form ends, as positions in the
    /// model's view of `len` messages (the last summary at `summary`, the
    /// pinned messages `resent` after it): the history at the cut (at the
    /// split turn's start when the turn is split), and the turn's prefix at
    /// the cut. `None` when one of them is not in the view (a pinned
    /// message the view puts elsewhere).
    pub fn view_bounds(
        &self,
        len: usize,
        summary: Option<usize>,
        resent: &[usize],
    ) -> Option<(usize, Option<usize>)> {
        let position = |index| model_view(len, summary, resent).position(|i| i == index);
        let cut = position(self.first_kept_index)?;
        Some(match self.is_split_turn {
            true => (position(self.turn_prefix.start)?, Some(cut)),
            false => (cut, None),
        })
    }
}

/// `prepareCompaction`'s `settings`: an object with a numeric
/// `keepRecentTokens` (the rest is handed back as given).
pub fn keep_recent_setting<V: Value>(settings: &V, r: &Reader<V>) -> Result<f64, InputError> {
    expect_object(r.root, settings, "an object")?;
    r.required_number("keepRecentTokens")
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use Role::*;

    fn session(items: &[(Role, u64, Option<f64>)]) -> Vec<MessageFacts> {
        items
            .iter()
            .enumerate()
            .map(|(i, &(role, tokens, usage))| MessageFacts::new(role, tokens, usage, i as f64))
            .collect()
    }

    #[test]
    fn one_request_covers_a_split_turn_with_the_history() {
        let s = session(&[
            (User, 100, None),
            (Assistant, 100, Some(300.0)),
            (User, 100, None),
            (Assistant, 100, None),
            (ToolResult, 100, None),
            (Assistant, 100, None),
            (ToolResult, 100, None),
            (Assistant, 100, None),
        ]);
        let split = prepare_compaction(&s, 250.0).unwrap();
        assert!(split.is_split_turn);
        assert!(!split.turn_prefix.is_empty());
        let one = split.clone().in_one_request();
        assert_eq!(one.history, 0..split.first_kept_index);
        assert!(one.turn_prefix.is_empty());
        assert!(!one.is_split_turn);
        assert_eq!(one.first_kept_index, split.first_kept_index);
        assert_eq!(one.tokens_before, split.tokens_before);
        // A cut between turns is the same plan.
        let whole = prepare_compaction(&s[..4], 150.0).unwrap();
        assert!(!whole.is_split_turn);
        assert_eq!(whole.clone().in_one_request(), whole);
    }

    #[test]
    fn summarizes_what_comes_before_the_kept_tokens() {
        let s = session(&[
            (User, 100, None),
            (Assistant, 100, Some(300.0)),
            (User, 100, None),
            (Assistant, 100, None),
        ]);
        let p = prepare_compaction(&s, 150.0).unwrap();
        assert_eq!(p.first_kept_index, 2);
        assert_eq!(p.history, 0..2);
        assert!(p.turn_prefix.is_empty());
        assert!(!p.is_split_turn);
        assert_eq!(p.tokens_before, 300.0 + 200.0);
        assert_eq!(p.previous_summary_index, None);
    }

    #[test]
    fn a_split_turn_has_a_prefix() {
        let s = session(&[
            (User, 10, None),
            (Assistant, 10, None),
            (ToolResult, 500, None),
            (Assistant, 10, None),
            (ToolResult, 500, None),
        ]);
        let p = prepare_compaction(&s, 900.0).unwrap();
        assert!(p.is_split_turn);
        assert_eq!(p.history, 0..0);
        assert_eq!(p.turn_prefix, 0..3);
        assert_eq!(p.first_kept_index, 3);
        // A prefix-form request: the history ends at the turn's start, the
        // turn's prefix at the cut.
        assert_eq!(p.view_bounds(5, None, &[]), Some((0, Some(3))));
    }

    #[test]
    fn recompaction_starts_right_after_the_previous_summary() {
        let s = session(&[
            (User, 100, None),
            (CompactionSummary, 50, None),
            (User, 100, None),
            (Assistant, 100, None),
            (User, 100, None),
            (Assistant, 100, None),
        ]);
        let p = prepare_compaction(&s, 150.0).unwrap();
        assert_eq!(p.previous_summary_index, Some(1));
        assert_eq!(p.history, 2..4);
        assert_eq!(p.first_kept_index, 4);
        // A prefix-form request ends at the cut's place in the model's view:
        // the summary, then what follows it (with u0 pinned: re-sent after
        // the summary, one place later); not in the view, no such request.
        assert_eq!(p.view_bounds(6, Some(1), &[]), Some((3, None)));
        assert_eq!(p.view_bounds(6, Some(1), &[0]), Some((4, None)));
        assert_eq!(p.view_bounds(6, Some(5), &[]), None);
        // The context is the summary and what follows it.
        assert_eq!(p.tokens_before, 450.0);
    }

    #[test]
    fn an_overflow_retry_may_keep_nothing_but_the_summary() {
        // The last tool output alone is over the kept budget: without the
        // failed attempt's place there is nothing to summarize; with it, as
        // pi cuts its session, the whole turn is the split turn's prefix.
        let s = session(&[
            (User, 100, None),
            (Assistant, 100, Some(300.0)),
            (User, 10, None),
            (Assistant, 10, None),
            (ToolResult, 5000, None),
        ]);
        assert_eq!(prepare_compaction(&s, 1000.0), None);
        let Ok(p) = prepare_compaction_with(&s, 1000.0, true, &mut |i| {
            Ok::<u64, Infallible>(u64::from(s[i].tokens))
        });
        let p = p.unwrap();
        assert_eq!(p.first_kept_index, 5);
        assert!(p.is_split_turn);
        assert_eq!(p.history, 0..2);
        assert_eq!(p.turn_prefix, 2..5);
    }

    #[test]
    fn nothing_to_do() {
        assert_eq!(prepare_compaction(&[], 10.0), None);
        let ends_with_summary = session(&[(User, 100, None), (CompactionSummary, 10, None)]);
        assert_eq!(prepare_compaction(&ends_with_summary, 10.0), None);
        // Everything fits in the kept budget: nothing to summarize (pi would
        // return empty lists).
        let small = session(&[(User, 10, None), (Assistant, 10, None)]);
        assert_eq!(prepare_compaction(&small, 1000.0), None);
        // Only tool results after the previous summary: no cut point.
        let odd = session(&[
            (User, 10, None),
            (CompactionSummary, 10, None),
            (ToolResult, 10, None),
        ]);
        assert_eq!(prepare_compaction(&odd, 1.0), None);
    }

    #[test]
    fn prepare_needs_keep_recent_tokens() {
        use crate::js::options::tests::{Fields, Js};
        use crate::js::options::Reader;
        let o = Fields::new(vec![("keepRecentTokens", Js::Num(20.0))]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "settings",
            get: &get,
        };
        assert_eq!(keep_recent_setting(&Js::Obj, &r), Ok(20.0));
        assert_eq!(
            keep_recent_setting(&Js::Num(1.0), &r)
                .unwrap_err()
                .to_string(),
            "settings must be an object, got a number"
        );
        let o = Fields::new(vec![("keepRecentTokens", Js::Str("5"))]);
        let get = |k| o.get(k);
        let r = Reader {
            root: "settings",
            get: &get,
        };
        assert_eq!(
            keep_recent_setting(&Js::Obj, &r).unwrap_err().to_string(),
            "settings.keepRecentTokens must be a number, got a string"
        );
    }
}
