//! The Goal and Constraints & Preferences sections.

use super::budget::{bullet, tier, Builder, CONSTRAINTS, GOAL};
use super::facts::{Facts, Request};
use super::phrases::{as_item, is_substantive, starts_task};
use super::previous::{PrevKind, Previous};
use super::text::{cut, fold, one_line};
use crate::sorted::SortedSet;

pub(super) fn build_goal(b: &mut Builder, facts: &Facts, previous: Option<&Previous>) {
    let earlier: Vec<&String> = previous
        .map(|p| p.lines_of(PrevKind::Goal).collect())
        .unwrap_or_default();
    let main = b.group(GOAL, "", "", "lines");
    let mut goal_msg = None;
    if earlier.is_empty() {
        let first = facts
            .requests
            .iter()
            .find(|r| is_substantive(&r.text))
            .or(facts.requests.first());
        goal_msg = first.map(|r| r.msg);
        if let Some(r) = first {
            b.item(
                (GOAL, main),
                vec![
                    bullet("", &r.text, 600),
                    bullet("", &r.text, 300),
                    bullet("", &r.text, 120),
                ],
                &[tier::GOAL_SHORTEN, tier::GOAL_SHORTER, tier::GOAL],
                0,
            );
        }
    } else {
        let n = earlier.len();
        for (k, line) in earlier.into_iter().enumerate() {
            b.item(
                (GOAL, main),
                vec![as_item(line), as_item(&cut(line, 150))],
                &[tier::GOAL_SHORTEN, tier::GOAL],
                n - k,
            );
        }
    }
    // Later requests that open a new piece of work, the three most recent.
    let mut later: Vec<&Request> = facts
        .requests
        .iter()
        .filter(|r| Some(r.msg) != goal_msg)
        .filter(|r| starts_task(&r.text))
        .collect();
    let skip = later.len().saturating_sub(3);
    later.drain(..skip);
    if !later.is_empty() {
        let g = b.group(
            GOAL,
            "- Later tasks (newest last):\n",
            "  ",
            "earlier tasks",
        );
        for (k, r) in later.into_iter().enumerate() {
            b.item(
                (GOAL, g),
                vec![bullet("  ", &r.text, 300)],
                &[tier::RECENT_REPLIES],
                k,
            );
        }
    }
}

pub(super) fn build_constraints(b: &mut Builder, facts: &Facts, previous: Option<&Previous>) {
    let g = b.group(CONSTRAINTS, "", "", "earlier constraints");
    let mut seen = SortedSet::new();
    let mut all: Vec<(bool, String)> = Vec::new();
    if let Some(p) = previous {
        for line in p.lines_of(PrevKind::Constraints) {
            if seen.insert(fold(&one_line(line))) {
                all.push((true, line.clone()));
            }
        }
    }
    // Newest wins when the same sentence was said twice.
    let mut fresh: Vec<&String> = Vec::new();
    for (_, c) in facts.constraints.iter().rev() {
        if seen.insert(fold(c)) {
            fresh.push(c);
        }
    }
    fresh.reverse();
    all.extend(fresh.into_iter().map(|c| (false, c.clone())));
    let n = all.len();
    for (k, (earlier, text)) in all.into_iter().enumerate() {
        let recent = n - k <= 10;
        let first = if recent {
            tier::CONSTRAINTS
        } else {
            tier::OLD_CONSTRAINTS
        };
        let line = if earlier {
            as_item(&text)
        } else {
            bullet("", &text, 250)
        };
        b.item((CONSTRAINTS, g), vec![line], &[first], k);
    }
}
