//! The Progress sections: Done, In Progress and Blocked.

use super::budget::{bullet, tier, Builder, BLOCKED, DONE, IN_PROGRESS};
use super::facts::Facts;
use super::phrases::{as_item, is_inspection};
use super::previous::{PrevKind, Previous};
use super::text::{block, cut, one_line};
use super::ExtractInput;
use crate::sorted::{sort_by, SortedMap, SortedSet};

pub(super) fn build_done(
    b: &mut Builder,
    facts: &Facts,
    previous: Option<&Previous>,
    input: &ExtractInput,
) {
    if let Some(p) = previous {
        let g = b.group(DONE, "", "", "lines");
        let lines: Vec<&String> = p.lines_of(PrevKind::Done).collect();
        let n = lines.len();
        for (k, line) in lines.into_iter().enumerate() {
            b.item((DONE, g), vec![as_item(line)], &[tier::EARLIER_DONE], n - k);
        }
    }

    // Successful writes and edits per path.
    let mut changes: SortedMap<(&str, &str), usize> = SortedMap::new();
    for op in &facts.ops {
        if (op.tool == "write" || op.tool == "edit") && op.failed != Some(true) {
            if let Some(arg) = &op.arg {
                if let Some(n) = changes.value_mut((arg.as_str(), op.tool.as_str())) {
                    *n += 1;
                }
            }
        }
    }
    if !input.modified_files.is_empty() {
        let label = format!("- Files modified ({}):\n", input.modified_files.len());
        let g = b.group(DONE, &label, "  ", "more files");
        let n = input.modified_files.len();
        for (k, path) in input.modified_files.iter().enumerate() {
            // The path's entries, by tool name.
            let entries = changes.entries();
            let from = entries.partition_point(|((p, _), _)| *p < path.as_str());
            let parts: Vec<String> = entries
                .get(from..)
                .unwrap_or_default()
                .iter()
                .take_while(|((p, _), _)| *p == path.as_str())
                .map(|((_, tool), n)| format!("{tool} ×{n}"))
                .collect();
            let counts = if parts.is_empty() {
                String::new()
            } else {
                format!(" ({})", parts.join(", "))
            };
            b.item(
                (DONE, g),
                vec![format!("  - `{path}`{counts}\n")],
                &[tier::MUST_FILES],
                n - k,
            );
        }
    }

    // Tool use at a glance.
    let mut per_tool: SortedMap<&str, (usize, usize)> = SortedMap::new();
    for op in &facts.ops {
        if let Some(e) = per_tool.value_mut(op.tool.as_str()) {
            e.0 += 1;
            if op.failed == Some(true) {
                e.1 += 1;
            }
        }
    }
    if !per_tool.is_empty() {
        let mut by_count: Vec<(&str, (usize, usize))> = per_tool.into_entries();
        sort_by(&mut by_count, |a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        let parts: Vec<String> = by_count
            .iter()
            .map(|(tool, (n, failed))| {
                if *failed > 0 {
                    format!("{tool} ×{n} ({failed} failed)")
                } else {
                    format!("{tool} ×{n}")
                }
            })
            .collect();
        let g = b.group(DONE, "", "", "lines");
        b.item(
            (DONE, g),
            vec![bullet(
                "",
                &format!("Tool calls: {}", parts.join(", ")),
                400,
            )],
            &[tier::STATE_SHORTER],
            0,
        );
    }

    // The latest distinct shell commands, newest last.
    let mut commands: Vec<(&str, Option<bool>)> = Vec::new();
    let mut seen = SortedSet::new();
    for op in facts.ops.iter().rev() {
        if op.tool != "bash" {
            continue;
        }
        if let Some(cmd) = &op.arg {
            let cmd = cmd.as_str();
            if is_inspection(cmd) {
                continue;
            }
            if seen.insert(cmd) {
                commands.push((cmd, op.failed));
            }
        }
        if commands.len() >= 15 {
            break;
        }
    }
    commands.reverse();
    if !commands.is_empty() {
        let g = b.group(
            DONE,
            "- Commands run (newest last):\n",
            "  ",
            "earlier commands",
        );
        let n = commands.len();
        for (k, (cmd, failed)) in commands.into_iter().enumerate() {
            let status = match failed {
                Some(true) => " (failed)",
                Some(false) => "",
                None => " (no result yet)",
            };
            let line = format!("  - `{}`{status}\n", cut(&one_line(cmd), 150));
            let first = if n - k > 5 {
                tier::OLD_COMMANDS
            } else {
                tier::DECISIONS
            };
            b.item((DONE, g), vec![line], &[first], k);
        }
    }
}

pub(super) fn build_in_progress(b: &mut Builder, facts: &Facts) {
    let g = b.group(IN_PROGRESS, "", "", "lines");
    let current = facts.last_substantive();
    if let Some(r) = current {
        let text = format!("Current request: {}", r.text);
        b.item(
            (IN_PROGRESS, g),
            vec![bullet("", &text, 400), bullet("", &text, 150)],
            &[tier::STATE_SHORTEN, tier::STATE],
            0,
        );
        // Short follow-ups ("ok", "continue"), the last five at most: every
        // request after the last substantive one is short by definition.
        let mut after: Vec<String> = facts
            .requests
            .iter()
            .filter(|x| x.msg > r.msg)
            .map(|x| format!("\"{}\"", cut(&x.text, 60)))
            .collect();
        let skip = after.len().saturating_sub(5);
        after.drain(..skip);
        if !after.is_empty() {
            let text = format!("Then the user said: {}", after.join(", "));
            b.item(
                (IN_PROGRESS, g),
                vec![bullet("", &text, 300)],
                &[tier::FOLLOW_UPS],
                1,
            );
        }
    } else if let Some(r) = facts.requests.last() {
        let text = format!("Current request: {}", r.text);
        b.item(
            (IN_PROGRESS, g),
            vec![bullet("", &text, 300)],
            &[tier::STATE],
            0,
        );
    }
    if let Some((_, text)) = &facts.last_text {
        let head = "- State of work (the assistant's last message):\n";
        b.item(
            (IN_PROGRESS, g),
            vec![
                format!("{head}{}", block(text, 2000, "  ")),
                format!("{head}{}", block(text, 800, "  ")),
                format!("{head}{}", block(text, 300, "  ")),
            ],
            &[tier::STATE_SHORTEN, tier::STATE_SHORTER, tier::STATE],
            2,
        );
    }
    // Work that was under way when the summarized part ends.
    if let Some(op) = facts.ops.last() {
        let after_text = facts.last_text.as_ref().is_none_or(|(i, _)| op.msg >= *i);
        if after_text {
            let status = match op.failed {
                Some(true) => "failed",
                Some(false) => "succeeded",
                None => "no result yet",
            };
            let arg = op
                .arg
                .as_deref()
                .map(|a| format!(" `{}`", cut(&one_line(a), 150)))
                .unwrap_or_default();
            let text = format!("Last action: `{}`{arg} ({status})", op.tool);
            b.item(
                (IN_PROGRESS, g),
                vec![bullet("", &text, 250)],
                &[tier::ERRORS],
                3,
            );
        }
    }
}

pub(super) fn build_blocked(b: &mut Builder, facts: &Facts) {
    let g = b.group(BLOCKED, "", "", "older errors");
    let mut seen = SortedSet::new();
    let mut errors: Vec<String> = Vec::new();
    for (k, op) in facts.ops.iter().enumerate().rev() {
        // A grep that found nothing is not a blocker.
        let looked = op.tool == "bash" && op.arg.as_deref().is_some_and(is_inspection);
        if op.failed != Some(true) || looked {
            continue;
        }
        let error = if op.error.is_empty() {
            "(no error text)"
        } else {
            op.error.as_str()
        };
        if !seen.insert((op.tool.as_str(), error)) {
            continue;
        }
        let later_ok = op.arg.is_some()
            && facts.ops.iter().skip(k + 1).any(|later| {
                later.tool == op.tool && later.arg == op.arg && later.failed == Some(false)
            });
        let arg = op
            .arg
            .as_deref()
            .map(|a| format!(" `{}`", cut(&one_line(a), 100)))
            .unwrap_or_default();
        let note = if later_ok { " (later retried OK)" } else { "" };
        errors.push(format!("- `{}`{arg}: {}{note}\n", op.tool, cut(error, 230)));
        if errors.len() >= 20 {
            break;
        }
    }
    for (k, line) in errors.into_iter().enumerate() {
        let first = if k >= 5 {
            tier::OLD_ERRORS
        } else {
            tier::ERRORS
        };
        // Most recent first: the oldest (largest k) is dropped first.
        b.item((BLOCKED, g), vec![line], &[first], usize::MAX - k);
    }
}
