//! The Key Decisions, Next Steps and Critical Context sections: what the
//! next turns need to know.

use super::budget::{bullet, tier, Builder, CRITICAL, DECISIONS, NEXT};
use super::facts::{Facts, Request};
use super::phrases::as_item;
use super::previous::{PrevKind, Previous};
use super::text::{cut, fold, one_line, sentences};
use super::ExtractInput;
use crate::sorted::{SortedMap, SortedSet};

pub(super) fn build_decisions(b: &mut Builder, facts: &Facts, previous: Option<&Previous>) {
    let g = b.group(DECISIONS, "", "", "earlier decisions");
    let mut seen = SortedSet::new();
    let mut all: Vec<String> = Vec::new();
    if let Some(p) = previous {
        for line in p.lines_of(PrevKind::Decisions) {
            if seen.insert(fold(line)) {
                all.push(as_item(line));
            }
        }
    }
    let mut fresh: Vec<String> = Vec::new();
    for (_, d) in facts.decisions.iter().rev() {
        if fresh.len() >= 12 {
            break;
        }
        if seen.insert(fold(d)) {
            fresh.push(bullet("", d, 200));
        }
    }
    fresh.reverse();
    all.extend(fresh);
    let n = all.len();
    for (k, line) in all.into_iter().enumerate() {
        let first = if n - k > 5 {
            tier::OLD_DECISIONS
        } else {
            tier::DECISIONS
        };
        b.item((DECISIONS, g), vec![line], &[first], k);
    }
}

pub(super) fn build_next_steps(b: &mut Builder, facts: &Facts) {
    let g = b.group(NEXT, "", "", "steps");
    let last_assistant = facts.last_assistant;
    let mut unanswered: Vec<&Request> = facts
        .requests
        .iter()
        .filter(|r| last_assistant.is_none_or(|a| r.msg > a))
        .collect();
    let skip = unanswered.len().saturating_sub(3);
    unanswered.drain(..skip);
    let mut k = 0;
    let current = facts.last_substantive().map(|r| r.msg);
    for r in &unanswered {
        let text = if Some(r.msg) == current {
            "Answer the current request (In Progress): it has no reply yet.".to_string()
        } else {
            format!("Answer the user's request (no reply yet): {}", r.text)
        };
        b.item(
            (NEXT, g),
            vec![bullet("", &text, 350)],
            &[tier::NEXT_STEPS],
            k,
        );
        k += 1;
    }
    if unanswered.is_empty() && (!facts.requests.is_empty() || !facts.ops.is_empty()) {
        let mid_turn = facts
            .ops
            .last()
            .zip(facts.last_text.as_ref())
            .map_or(!facts.ops.is_empty(), |(op, (i, _))| op.msg >= *i);
        let text = if mid_turn {
            "Continue the current request (In Progress) from the last action; check the files it touched before editing further."
        } else {
            "The current request (In Progress) looks answered: verify it is complete, then follow the user's next instruction."
        };
        b.item(
            (NEXT, g),
            vec![bullet("", text, 200)],
            &[tier::NEXT_STEPS],
            k,
        );
        k += 1;
        // An open question from the assistant is what the user answers next.
        if let Some((_, text)) = &facts.last_text {
            if let Some(q) = sentences(text).into_iter().rev().find(|s| s.ends_with('?')) {
                let text = format!("The assistant last asked: {}", one_line(q));
                b.item(
                    (NEXT, g),
                    vec![bullet("", &text, 250)],
                    &[tier::FILES_READ],
                    k,
                );
            }
        }
    }
}

pub(super) fn build_critical(
    b: &mut Builder,
    facts: &Facts,
    previous: Option<&Previous>,
    input: &ExtractInput,
) {
    if let Some(focus) = input.custom_instructions.map(str::trim) {
        if !focus.is_empty() {
            let g = b.group(CRITICAL, "", "", "lines");
            let text = format!("Additional focus: {}", one_line(focus));
            b.item(
                (CRITICAL, g),
                vec![bullet("", &text, 500), bullet("", &text, 150)],
                &[tier::GOAL_SHORTEN, tier::FOCUS],
                0,
            );
        }
    }

    if let Some(p) = previous {
        let critical: Vec<&String> = p.lines_of(PrevKind::Critical).collect();
        if !critical.is_empty() {
            let g = b.group(CRITICAL, "", "", "lines");
            let n = critical.len();
            for (k, line) in critical.into_iter().enumerate() {
                b.item(
                    (CRITICAL, g),
                    vec![format!("{line}\n")],
                    &[tier::ERRORS],
                    n - k,
                );
            }
        }
        for section in p
            .sections
            .iter()
            .filter(|s| s.kind == PrevKind::Other && !s.lines.is_empty())
        {
            let label = format!(
                "- From the earlier summary, {}:\n",
                cut(&one_line(&section.title), 100)
            );
            let g = b.group(CRITICAL, &label, "  ", "lines");
            let n = section.lines.len();
            for (k, line) in section.lines.iter().enumerate() {
                b.item(
                    (CRITICAL, g),
                    vec![format!("  {line}\n")],
                    &[tier::EARLIER_MISC],
                    n - k,
                );
            }
        }
    }

    // Files read, the least recently read dropped first.
    if !input.read_files.is_empty() {
        let mut last_read: SortedMap<&str, usize> = SortedMap::new();
        for op in &facts.ops {
            if op.tool == "read" {
                if let Some(arg) = &op.arg {
                    last_read.insert(arg.as_str(), op.msg + 1);
                }
            }
        }
        let label = format!("- Files read ({}):\n", input.read_files.len());
        let g = b.group(CRITICAL, &label, "  ", "files");
        for (k, path) in input.read_files.iter().enumerate() {
            let recency = last_read.get(&path.as_str()).copied().unwrap_or(0);
            b.item(
                (CRITICAL, g),
                vec![format!("  - `{path}`\n")],
                &[tier::FILES_READ],
                recency.saturating_mul(1 << 16).saturating_add(k),
            );
        }
    }

    // The user's requests, newest last, each with the assistant's final
    // reply to it. The last five requests are kept above everything else.
    let mut log: Vec<(String, Option<String>)> =
        previous.map(|p| p.requests.clone()).unwrap_or_default();
    let last_text = facts.last_text.as_ref().map(|(_, t)| one_line(t));
    for r in &facts.requests {
        // The reply shown in full under In Progress is not repeated.
        let reply = r
            .reply
            .clone()
            .filter(|reply| Some(reply) != last_text.as_ref());
        log.push((r.text.clone(), reply));
    }
    if !log.is_empty() {
        let g = b.group(
            CRITICAL,
            "- User requests (newest last; ↳ the assistant's final reply):\n",
            "  ",
            "earlier requests",
        );
        let n = log.len();
        for (k, (request, reply)) in log.into_iter().enumerate() {
            let recent = n - k <= 5;
            let (shorten, drop) = if recent {
                (tier::MUST_SHORTEN, tier::MUST_REQUESTS)
            } else {
                (tier::OLD_REQUESTS_SHORTEN, tier::OLD_REQUESTS)
            };
            b.item(
                (CRITICAL, g),
                vec![bullet("  ", &request, 300), bullet("  ", &request, 100)],
                &[shorten, drop],
                k,
            );
            if let Some(reply) = reply {
                let reply_tier = if recent {
                    tier::RECENT_REPLIES
                } else {
                    tier::OLD_REPLIES
                };
                b.item(
                    (CRITICAL, g),
                    vec![format!("    ↳ {}\n", cut(&reply, 200))],
                    &[reply_tier],
                    k,
                );
                b.not_counted((CRITICAL, g));
            }
        }
    }
}
