//! What a sentence or a message is, for the extractive summary: the
//! markers of constraints and decisions, requests that start a task,
//! inspection-only commands, and tool errors in one line.

use super::text::{cut, fold, has_words, head, is_prose, one_line, sentences, units};
use crate::js::string::{contains_str, split_str};

pub(super) const CONSTRAINT_MARKERS: &[&str] = &[
    "don't",
    "dont",
    "do not",
    "doesn't need",
    "never",
    "always",
    "must",
    "mustn't",
    "should",
    "shouldn't",
    "prefer",
    "only",
    "make sure",
    "without",
    "keep",
    "avoid",
    "instead",
    "rather than",
    "no need",
    "not allowed",
    "required",
];

pub(super) const DECISION_MARKERS: &[&str] = &[
    "decided",
    "decision",
    "instead of",
    "rather than",
    "the approach",
    "root cause",
    "the issue is",
    "the problem is",
    "the fix is",
    "i'll use",
    "we'll use",
    "going with",
    "makes more sense",
    "the plan is",
    "trade-off",
    "tradeoff",
];

/// Openings of a user message that starts a new piece of work.
pub(super) const TASK_OPENINGS: &[&str] = &[
    "alright",
    "ok, now",
    "ok now",
    "ok, let's",
    "ok, we need",
    "now ",
    "next",
    "new task",
    "let's",
    "lets ",
    "then we need",
    "we need",
    "i want",
    "i'd like",
];

/// Phrases that contain a constraint marker without stating a constraint.
pub(super) const CONSTRAINT_NOISE: &[&str] = &[
    "i don't think",
    "i don't tink",
    "i don't know",
    "i don't understand",
    "i don't see",
    "i dont think",
    "i dont know",
    "should be good",
    "should be fine",
    "should work",
    "only one",
    "the only",
    "not only",
];

/// Assistant sentences that announce an action or guess rather than decide.
pub(super) fn is_tentative(folded: &str) -> bool {
    const OPENINGS: &[&str] = &[
        "let me",
        "now let me",
        "now i'll",
        "first, let me",
        "i'll now",
    ];
    const HEDGES: &[&str] = &["maybe", "might", "i bet", "probably", "likely", "perhaps"];
    folded.starts_with('#')
        || folded.ends_with(':')
        || OPENINGS.iter().any(|o| folded.starts_with(o))
        || HEDGES.iter().any(|h| has_words(folded, h))
}

/// A leading list marker (`- `, `* `, `1. `, `2) `) removed.
pub(super) fn strip_list_marker(s: &str) -> &str {
    let t = s.trim_start();
    for marker in ["- ", "* ", "+ ", "• "] {
        if let Some(rest) = t.strip_prefix(marker) {
            return rest.trim_start();
        }
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && digits <= 3 {
        let rest = t.get(digits..).unwrap_or("");
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return rest.trim_start();
        }
    }
    t
}

/// How much of one message is searched for constraints or decisions.
pub(super) const SCAN_BYTES: usize = 4000;

/// User sentences that state a constraint or preference. Reading stops at
/// the first line that looks pasted (a log, JSON, code): what follows is
/// someone else's text.
pub(super) fn constraint_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // What a person types is short; a long message is mostly pasted.
    for line in head(text, SCAN_BYTES).split('\n') {
        let line = line.trim();
        if units(line) > 40 && !is_prose(line) {
            break;
        }
        for sentence in sentences(line) {
            let sentence = strip_list_marker(sentence);
            if sentence.ends_with('?') || !is_prose(sentence) {
                continue;
            }
            let mut folded = fold(sentence);
            if !CONSTRAINT_MARKERS.iter().any(|m| contains_str(&folded, m)) {
                continue;
            }
            for noise in CONSTRAINT_NOISE {
                if contains_str(&folded, noise) {
                    folded = split_str(&folded, noise).join(" ");
                }
            }
            if CONSTRAINT_MARKERS.iter().any(|m| has_words(&folded, m)) {
                out.push(one_line(sentence));
            }
        }
    }
    out
}

/// Assistant sentences that record a decision or a finding.
pub(super) fn decision_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for sentence in sentences(head(text, SCAN_BYTES)) {
        let sentence = strip_list_marker(sentence);
        if sentence.ends_with('?') || !is_prose(sentence) || sentence.split_whitespace().count() < 5
        {
            continue;
        }
        let folded = fold(sentence);
        if !is_tentative(&folded) && DECISION_MARKERS.iter().any(|m| has_words(&folded, m)) {
            out.push(one_line(sentence));
        }
    }
    out
}

/// A shell command that only looks at things (grep, cat, ls, git status…);
/// the Done list keeps the ones that build, test, move or commit.
pub(super) fn is_inspection(command: &str) -> bool {
    const LOOK: &[&str] = &[
        "grep", "rg", "cat", "ls", "find", "head", "tail", "wc", "echo", "pwd", "which", "tree",
        "sleep", "file", "stat", "less", "true",
    ];
    let mut any = false;
    for segment in command.split(['\n', ';']).flat_map(|s| split_str(s, "&&")) {
        let segment = segment.split('|').next().unwrap_or("");
        let mut words = segment.split_whitespace();
        let Some(first) = words.next() else { continue };
        if first == "cd" || first.starts_with('#') {
            continue;
        }
        let second = words.next().unwrap_or("");
        let looks = LOOK.contains(&first)
            || (first == "git" && ["status", "log", "diff", "show", "branch"].contains(&second))
            || (first == "sed" && second == "-n");
        if !looks {
            return false;
        }
        any = true;
    }
    any
}

/// A carried line of the previous summary as a list item.
pub(super) fn as_item(line: &str) -> String {
    let t = line.trim_start();
    let listed = line.starts_with([' ', '\t'])
        || t.starts_with(['-', '*', '+', '|', '>'])
        || strip_list_marker(t) != t;
    if listed {
        format!("{line}\n")
    } else {
        format!("- {line}\n")
    }
}

/// A request worth calling a task: not a slash command or a one-word reply.
pub(super) fn is_substantive(text: &str) -> bool {
    let words = text.split_whitespace().count();
    let is_command = text.starts_with('/') && words <= 1;
    !is_command && (words >= 4 || units(text) >= 25)
}

pub(super) fn starts_task(text: &str) -> bool {
    let folded = fold(text);
    units(text) >= 50 && TASK_OPENINGS.iter().any(|o| folded.starts_with(o))
}

/// The first non-empty line of a tool result, for an error message.
pub(super) fn first_line(text: &str) -> &str {
    text.split('\n')
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// A tool error in one line: its first line, and its last when that differs
/// (a shell's output starts with noise and ends with the exit code).
pub(super) fn error_text(text: &str) -> String {
    let first = first_line(text);
    let last = text
        .split('\n')
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("");
    if last == first || last.is_empty() {
        cut(&one_line(first), 200)
    } else {
        format!(
            "{} … {}",
            cut(&one_line(first), 120),
            cut(&one_line(last), 100)
        )
    }
}
