//! Tests of the extractive summary: each section's content, the budget,
//! folding in a previous summary, and properties over generated sessions.

use super::phrases::is_inspection;
use super::text::{cut, head, one_line, units};
use super::*;
use crate::js::json::{self, Json};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn user(text: &str) -> ExtractMessage {
    ExtractMessage {
        role: ExtractRole::User,
        text: text.to_string(),
        tool_name: None,
        tool_calls: Vec::new(),
        is_error: false,
    }
}

fn assistant(text: &str, calls: &[(&str, &str)]) -> ExtractMessage {
    ExtractMessage {
        role: ExtractRole::Assistant,
        text: text.to_string(),
        tool_name: None,
        tool_calls: calls
            .iter()
            .map(|(n, a)| (n.to_string(), a.to_string()))
            .collect(),
        is_error: false,
    }
}

fn result(tool: &str, text: &str, is_error: bool) -> ExtractMessage {
    ExtractMessage {
        role: ExtractRole::ToolResult,
        text: text.to_string(),
        tool_name: Some(tool.to_string()),
        tool_calls: Vec::new(),
        is_error,
    }
}

fn summarize(messages: &[ExtractMessage], max_chars: usize) -> String {
    extractive_summary(&ExtractInput {
        messages,
        previous_summary: None,
        read_files: &[],
        modified_files: &[],
        custom_instructions: None,
        max_chars,
    })
}

/// The body of the section under `heading` (up to the next heading).
fn section<'s>(summary: &'s str, heading: &str) -> &'s str {
    let start = summary
        .find(&format!("{heading}\n"))
        .map(|i| i + heading.len() + 1)
        .unwrap_or_else(|| panic!("no {heading} in:\n{summary}"));
    let rest = &summary[start..];
    let end = rest
        .match_indices("\n#")
        .map(|(i, _)| i)
        .next()
        .unwrap_or(rest.len());
    &rest[..end]
}

const ORDER: [&str; 9] = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
];

fn assert_headings_in_order(summary: &str) {
    let mut from = 0;
    for heading in ORDER {
        let line = format!("{heading}\n");
        let at = summary[from..]
            .find(&line)
            .unwrap_or_else(|| panic!("{heading} missing or out of order:\n{summary}"));
        from += at + line.len();
    }
}

fn session() -> Vec<ExtractMessage> {
    vec![
        user("Add a dark theme to the settings page of the app."),
        assistant("I'll look at the settings first.", &[("read", "src/settings.ts")]),
        result("read", "export const settings = {}", false),
        assistant("", &[("edit", "src/settings.ts")]),
        result(
            "edit",
            "Could not find the exact text in src/settings.ts.\nThe old text must match.",
            true,
        ),
        assistant("", &[("edit", "src/settings.ts"), ("bash", "npm test")]),
        result("edit", "Successfully replaced text.", false),
        result("bash", "Error: 2 tests failed\nat foo", true),
        assistant(
            "Added the theme toggle. We'll use CSS variables instead of a second stylesheet. Should I also add a light theme?",
            &[],
        ),
        user("Don't touch the tests. Always keep the old colours as the default. What about the footer?"),
        assistant("Understood.", &[("write", "src/theme.css")]),
        result("write", "Wrote 20 lines", false),
        user("now make the footer use the theme too"),
    ]
}

#[test]
fn goal_is_the_first_substantive_request() {
    let mut messages = vec![user("/mode")];
    messages.extend(session());
    let s = summarize(&messages, 50_000);
    let goal = section(&s, "## Goal");
    assert!(
        goal.starts_with("- Add a dark theme to the settings page"),
        "{goal}"
    );
    assert!(!goal.contains("/mode"), "{goal}");
}

#[test]
fn later_tasks_are_listed_under_goal() {
    let mut messages = session();
    messages.push(assistant("Done.", &[]));
    messages.push(user(
        "alright, now we need a section on themes in README.md with screenshots of both",
    ));
    let s = summarize(&messages, 50_000);
    let goal = section(&s, "## Goal");
    assert!(goal.contains("- Later tasks (newest last):\n  - alright, now we need a section"));
}

#[test]
fn constraints_come_from_user_sentences() {
    let s = summarize(&session(), 50_000);
    let c = section(&s, "## Constraints & Preferences");
    assert!(c.contains("- Don't touch the tests."), "{c}");
    assert!(
        c.contains("- Always keep the old colours as the default."),
        "{c}"
    );
    // A question is not a constraint; neither is assistant text.
    assert!(!c.contains("footer?"), "{c}");
    assert!(!c.contains("instead of"), "{c}");
    let none = summarize(&[user("hello there")], 50_000);
    assert_eq!(section(&none, "## Constraints & Preferences"), "(none)\n");
}

#[test]
fn constraints_and_word_boundaries_in_other_scripts() {
    // Prose in any script counts as typed text; a marker matches whole
    // words only, and an accented or Cyrillic letter continues a word.
    let s = summarize(
        &[
            user("Мы всегда пишем тесты, you must keep them green."),
            user("Les alwaysé tests."),
            user("Never commit to main, c'est déjà décidé."),
        ],
        50_000,
    );
    let c = section(&s, "## Constraints & Preferences");
    assert!(
        c.contains("- Мы всегда пишем тесты, you must keep them green."),
        "{c}"
    );
    assert!(
        c.contains("- Never commit to main, c'est déjà décidé."),
        "{c}"
    );
    assert!(!c.contains("alwaysé"), "{c}");
}

#[test]
fn done_lists_modified_files_with_counts_and_commands() {
    let messages = session();
    let modified = vec!["src/settings.ts".to_string(), "src/theme.css".to_string()];
    let s = extractive_summary(&ExtractInput {
        messages: &messages,
        previous_summary: None,
        read_files: &[],
        modified_files: &modified,
        custom_instructions: None,
        max_chars: 50_000,
    });
    let done = section(&s, "### Done");
    // The failed edit is not counted.
    assert!(done.contains("- Files modified (2):\n  - `src/settings.ts` (edit ×1)\n  - `src/theme.css` (write ×1)\n"), "{done}");
    assert!(
        done.contains("- Tool calls: edit ×2 (1 failed), bash ×1 (1 failed), read ×1, write ×1"),
        "{done}"
    );
    assert!(
        done.contains("- Commands run (newest last):\n  - `npm test` (failed)\n"),
        "{done}"
    );
}

#[test]
fn in_progress_has_the_latest_request_and_the_state_of_work() {
    let s = summarize(&session(), 50_000);
    let p = section(&s, "### In Progress");
    assert!(
        p.contains("- Current request: now make the footer use the theme too\n"),
        "{p}"
    );
    assert!(
        p.contains("- State of work (the assistant's last message):\n  Understood.\n"),
        "{p}"
    );
    // Trivial follow-ups are reported after the last real request.
    let mut messages = session();
    messages.push(user("ok"));
    let s = summarize(&messages, 50_000);
    let p = section(&s, "### In Progress");
    assert!(p.contains("- Current request: now make the footer"), "{p}");
    assert!(p.contains("- Then the user said: \"ok\""), "{p}");
}

#[test]
fn blocked_lists_errors_newest_first_shortened_and_deduplicated() {
    let mut messages = session();
    let long = format!("{}\nsecond line", "x".repeat(500));
    messages.push(assistant("", &[("bash", "make")]));
    messages.push(result("bash", &long, true));
    messages.push(assistant("", &[("bash", "make")]));
    messages.push(result("bash", &long, true));
    let s = summarize(&messages, 50_000);
    let blocked = section(&s, "### Blocked");
    let lines: Vec<&str> = blocked.lines().collect();
    assert_eq!(lines.len(), 3, "{blocked}");
    // The first line cut, then the last line.
    assert!(lines[0].starts_with("- `bash` `make`: xxx") && lines[0].ends_with("x… … second line"));
    assert!(units(lines[0]) < 160);
    assert_eq!(
        lines[1],
        "- `bash` `npm test`: Error: 2 tests failed … at foo"
    );
    assert_eq!(
        lines[2],
        "- `edit` `src/settings.ts`: Could not find the exact text in src/settings.ts. … The old text must match. (later retried OK)"
    );
}

#[test]
fn head_ends_at_a_character_boundary() {
    assert_eq!(head("abc", 10), "abc");
    assert_eq!(head("abc", 2), "ab");
    assert_eq!(head("abc", 0), "");
    // "é" is two bytes, "😀" four: a cut inside one backs up before it.
    assert_eq!(head("aé", 2), "a");
    assert_eq!(head("aé", 3), "aé");
    assert_eq!(head("😀x", 3), "");
    assert_eq!(head("😀x", 4), "😀");
}

#[test]
fn windows_line_ends_read_as_line_ends() {
    let messages = vec![
        user("Fix the build please, it fails on CI now.\r\nNever skip the tests."),
        assistant("", &[("bash", "make")]),
        result("bash", "\r\nerror: one\r\n\r\nexit code 2\r\n", true),
        assistant("It builds again.\r\n\r\nAll green now.\r\n", &[]),
    ];
    let s = extractive_summary(&ExtractInput {
        messages: &messages,
        previous_summary: Some(
            "## Goal\r\n- Ship the release\r\n\r\n## Key Decisions\r\n- Use make\r\n",
        ),
        read_files: &[],
        modified_files: &[],
        custom_instructions: None,
        max_chars: 50_000,
    });
    assert!(!s.contains('\r'), "{s}");
    assert!(
        section(&s, "## Goal").starts_with("- Ship the release\n"),
        "{s}"
    );
    assert!(
        section(&s, "## Constraints & Preferences").contains("- Never skip the tests.\n"),
        "{s}"
    );
    assert!(
        section(&s, "### Blocked").contains("error: one … exit code 2"),
        "{s}"
    );
    assert!(s.contains("  It builds again.\n  All green now.\n"), "{s}");
}

#[test]
fn inspection_commands_are_neither_work_nor_blockers() {
    assert!(is_inspection("grep -n foo src/a.ts | head -5"));
    assert!(is_inspection("cd packages/x && git status && ls -la"));
    assert!(is_inspection("sed -n 1,20p a.rs"));
    assert!(!is_inspection(
        "cd packages/x && npm run check 2>&1 | grep error"
    ));
    assert!(!is_inspection("git commit -m 'x'"));
    assert!(!is_inspection("cd /tmp"));
    let mut messages = session();
    messages.push(assistant("", &[("bash", "grep -n nothing src")]));
    messages.push(result("bash", "Command exited with code 1", true));
    let s = summarize(&messages, 50_000);
    assert!(!section(&s, "### Blocked").contains("grep"), "{s}");
    assert!(!section(&s, "### Done").contains("grep"), "{s}");
    assert!(
        section(&s, "### Done").contains("`npm test` (failed)"),
        "{s}"
    );
}

#[test]
fn key_decisions_from_assistant_statements() {
    let s = summarize(&session(), 50_000);
    let d = section(&s, "## Key Decisions");
    assert_eq!(
        d,
        "- We'll use CSS variables instead of a second stylesheet.\n"
    );
    let none = summarize(&[user("hi")], 50_000);
    assert_eq!(section(&none, "## Key Decisions"), "(none)\n");
}

#[test]
fn next_steps_name_unanswered_requests_and_open_questions() {
    let s = summarize(&session(), 50_000);
    let n = section(&s, "## Next Steps");
    assert!(
        n.contains("- Answer the current request (In Progress): it has no reply yet."),
        "{n}"
    );
    let mut two = session();
    two.push(user("ok"));
    let n = summarize(&two, 50_000);
    let n = section(&n, "## Next Steps");
    assert_eq!(
        n,
        "- Answer the current request (In Progress): it has no reply yet.\n- Answer the user's request (no reply yet): ok\n"
    );
    let mut answered = session();
    answered.truncate(9);
    let s = summarize(&answered, 50_000);
    let n = section(&s, "## Next Steps");
    assert!(n.contains("looks answered"), "{n}");
    assert!(
        n.contains("- The assistant last asked: Should I also add a light theme?"),
        "{n}"
    );
    // Ending on a tool call means the work was under way.
    answered.truncate(7);
    let s = summarize(&answered, 50_000);
    assert!(section(&s, "## Next Steps").contains("Continue the current request"));
    assert!(
        section(&s, "### In Progress").contains("- Last action: `bash` `npm test` (no result yet)")
    );
}

#[test]
fn critical_context_has_files_requests_replies_and_focus() {
    let messages = session();
    let read = vec!["README.md".to_string(), "src/a.ts".to_string()];
    let s = extractive_summary(&ExtractInput {
        messages: &messages,
        previous_summary: None,
        read_files: &read,
        modified_files: &[],
        custom_instructions: Some("the footer colours"),
        max_chars: 50_000,
    });
    let c = section(&s, "## Critical Context");
    assert!(
        c.starts_with("- Additional focus: the footer colours\n"),
        "{c}"
    );
    assert!(
        c.contains("- Files read (2):\n  - `README.md`\n  - `src/a.ts`\n"),
        "{c}"
    );
    assert!(
        c.contains(
            "  - Add a dark theme to the settings page of the app.\n    ↳ Added the theme toggle."
        ),
        "{c}"
    );
    assert!(
        c.ends_with("  - now make the footer use the theme too\n")
            || c.ends_with("  - now make the footer use the theme too"),
        "{c}"
    );
}

#[test]
fn empty_input_gives_every_heading_with_none() {
    let s = summarize(&[], 50_000);
    assert_headings_in_order(&s);
    assert_eq!(s.matches("(none)").count(), 8, "{s}");
    assert_eq!(summarize(&[], 0), "");
    assert_eq!(summarize(&[], 10), "## Goal\n(n");
}

#[test]
fn previous_summary_is_folded_in() {
    let previous = "## Goal\n- Ship the theme feature\n\n## Constraints & Preferences\n- Never use chalk directly\n\n## Progress\n### Done\n- Files modified (1):\n  - `src/old.ts` (edit ×2)\n- Ported the selectors\n\n### In Progress\n- Current request: fix the footer\n\n### Blocked\n(none)\n\n## Key Decisions\n- Tokens instead of raw colours\n\n## Next Steps\n- Test the light theme\n\n## Critical Context\n- Files read (1):\n  - `src/r.ts`\n- User requests (newest last; ↳ the assistant's final reply):\n  - port the selectors\n    ↳ Ported.\n  - fix the footer\n<read-files>\nsrc/r.ts\n</read-files>";
    let messages = session();
    let modified = vec!["src/old.ts".to_string(), "src/settings.ts".to_string()];
    let s = extractive_summary(&ExtractInput {
        messages: &messages,
        previous_summary: Some(previous),
        read_files: &["src/r.ts".to_string()],
        modified_files: &modified,
        custom_instructions: None,
        max_chars: 50_000,
    });
    assert_headings_in_order(&s);
    assert_eq!(
        section(&s, "## Goal").lines().next(),
        Some("- Ship the theme feature")
    );
    assert!(section(&s, "## Constraints & Preferences")
        .starts_with("- Never use chalk directly\n- Don't touch"));
    let done = section(&s, "### Done");
    assert!(
        done.starts_with("- Ported the selectors\n- Files modified (2):"),
        "{done}"
    );
    assert_eq!(done.matches("src/old.ts").count(), 1, "{done}");
    assert!(section(&s, "## Key Decisions").starts_with("- Tokens instead of raw colours\n"));
    let c = section(&s, "## Critical Context");
    assert!(
        c.contains(
            "- From the earlier summary, In Progress:\n  - Current request: fix the footer\n"
        ),
        "{c}"
    );
    assert!(
        c.contains("- From the earlier summary, Next Steps:\n  - Test the light theme\n"),
        "{c}"
    );
    assert!(
        c.contains(
            "  - port the selectors\n    ↳ Ported.\n  - fix the footer\n  - Add a dark theme"
        ),
        "{c}"
    );
    assert_eq!(s.matches("src/r.ts").count(), 1, "{s}");
    assert!(!s.contains("<read-files>"));
    // Folding is stable: summarizing again keeps the same goal and
    // requests without nesting them.
    let again = extractive_summary(&ExtractInput {
        messages: &[],
        previous_summary: Some(&s),
        read_files: &["src/r.ts".to_string()],
        modified_files: &modified,
        custom_instructions: None,
        max_chars: 50_000,
    });
    assert_eq!(section(&again, "## Goal"), section(&s, "## Goal"));
    assert_eq!(again.matches("port the selectors").count(), 1, "{again}");
    assert_eq!(again.matches("Files modified").count(), 1, "{again}");
}

#[test]
fn tight_budgets_drop_the_least_important_first() {
    let mut messages = Vec::new();
    for i in 0..60 {
        messages.push(user(&format!(
            "request number {i}: please do the thing {i} and never break it"
        )));
        messages.push(assistant(
            &format!("Done with {i}. ").repeat(30),
            &[("edit", &format!("src/f{i}.ts"))],
        ));
        messages.push(result("edit", "Could not find the exact text", i % 2 == 0));
    }
    let modified: Vec<String> = (0..60).map(|i| format!("src/f{i}.ts")).collect();
    let input = |max| ExtractInput {
        messages: &messages,
        previous_summary: None,
        read_files: &[],
        modified_files: &modified,
        custom_instructions: None,
        max_chars: max,
    };
    let full = extractive_summary(&input(1_000_000));
    let full_len = units(&full);
    let mut last = 0;
    for max in (0..full_len + 10).step_by(97) {
        let s = extractive_summary(&input(max));
        assert!(units(&s) <= max);
        // More room never means less kept.
        assert!(units(&s) >= last.min(max));
        last = units(&s);
        let must_fit = max >= 4_000;
        if must_fit {
            assert_headings_in_order(&s);
            for path in &modified {
                assert!(s.contains(&format!("`{path}`")), "{max}: {path}");
            }
            for i in 55..60 {
                assert!(s.contains(&format!("request number {i}:")), "{max}: {i}");
            }
        }
    }
    // Squeezed, the older requests go first and the cut is marked.
    let s = extractive_summary(&input(4_000));
    assert!(!s.contains("request number 3:"));
    assert!(
        s.contains("earlier requests omitted to fit the budget"),
        "{s}"
    );
    // Too small even for the must-keep content: the oldest requests are
    // cut, and the marker says so.
    let s = extractive_summary(&input(2_000));
    assert!(s.contains("request number 59:"), "{s}");
    assert!(!s.contains("request number 50:"), "{s}");
}

#[test]
fn multibyte_text_is_cut_at_char_boundaries() {
    let text = "é🎉中".repeat(400);
    let messages = vec![
        user(&text),
        assistant(&text, &[("bash", &text)]),
        result("bash", &text, true),
    ];
    for max in 0..600 {
        let s = summarize(&messages, max);
        assert!(units(&s) <= max);
    }
    assert!(cut("🎉🎉🎉", 3).starts_with('🎉'));
    assert_eq!(cut("🎉🎉🎉", 2), "…");
    assert_eq!(cut("a🎉b", 3), "a…");
}

#[test]
fn focus_keeps_matching_content_longer() {
    let mut messages = Vec::new();
    for i in 0..30 {
        messages.push(user(&format!("step {i}: never use tabs in file {i}")));
    }
    messages.push(user("never touch the database schema"));
    for i in 30..60 {
        messages.push(user(&format!("step {i}: never use tabs in file {i}")));
    }
    let with = |focus: Option<&str>| {
        extractive_summary(&ExtractInput {
            messages: &messages,
            previous_summary: None,
            read_files: &[],
            modified_files: &[],
            custom_instructions: focus,
            max_chars: 3_000,
        })
    };
    let plain = with(None);
    let focused = with(Some("the database schema"));
    assert!(!section(&plain, "## Constraints & Preferences").contains("database"));
    assert!(section(&focused, "## Constraints & Preferences")
        .contains("never touch the database schema"));
}

// --- fixtures ----------------------------------------------------------

fn text_of(content: Option<&Json>) -> String {
    match content {
        Some(Json::String(s)) => s.to_string_lossy(),
        Some(Json::Array(blocks)) => blocks
            .iter()
            .filter(|b| {
                b.get("type")
                    .and_then(Json::as_str)
                    .is_some_and(|t| t.eq_str("text"))
            })
            .filter_map(|b| b.get("text").and_then(Json::as_str))
            .map(|t| t.to_string_lossy())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn str_field(value: &Json, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Json::as_str)
        .map(|s| s.to_string_lossy())
}

/// The fixture's messages (and its compaction summaries, by the index of
/// the first message after each).
fn load(name: &str) -> (Vec<ExtractMessage>, Vec<(usize, String)>) {
    let path = format!("{}/../../fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture");
    let mut messages = Vec::new();
    let mut compactions = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let entry = json::parse(line).expect("json line");
        match str_field(&entry, "type").as_deref() {
            Some("compaction") => compactions.push((
                messages.len(),
                str_field(&entry, "summary").unwrap_or_default(),
            )),
            Some("message") => {}
            _ => continue,
        }
        let Some(m) = entry.get("message") else {
            continue;
        };
        let content = m.get("content");
        let message = match str_field(m, "role").as_deref() {
            Some("user") => user(&text_of(content)),
            Some("assistant") => {
                let mut calls = Vec::new();
                for block in content.and_then(Json::as_array).unwrap_or(&[]) {
                    if str_field(block, "type").as_deref() != Some("toolCall") {
                        continue;
                    }
                    let name = str_field(block, "name").unwrap_or_default();
                    let args = block.get("arguments");
                    let key = if name == "bash" { "command" } else { "path" };
                    let arg = args.and_then(|a| str_field(a, key)).unwrap_or_default();
                    calls.push((name, arg));
                }
                ExtractMessage {
                    role: ExtractRole::Assistant,
                    text: text_of(content),
                    tool_name: None,
                    tool_calls: calls,
                    is_error: false,
                }
            }
            Some("toolResult") => ExtractMessage {
                role: ExtractRole::ToolResult,
                text: text_of(content),
                tool_name: str_field(m, "toolName"),
                tool_calls: Vec::new(),
                is_error: m.get("isError").and_then(Json::as_bool).unwrap_or(false),
            },
            _ => ExtractMessage {
                role: ExtractRole::Other,
                text: String::new(),
                tool_name: None,
                tool_calls: Vec::new(),
                is_error: false,
            },
        };
        messages.push(message);
    }
    (messages, compactions)
}

fn file_lists(messages: &[ExtractMessage]) -> (Vec<String>, Vec<String>) {
    let mut read = BTreeSet::new();
    let mut modified = BTreeSet::new();
    for m in messages {
        for (name, arg) in &m.tool_calls {
            match name.as_str() {
                "read" if !arg.is_empty() => {
                    read.insert(arg.clone());
                }
                "write" | "edit" if !arg.is_empty() => {
                    modified.insert(arg.clone());
                }
                _ => {}
            }
        }
    }
    let read = read.difference(&modified).cloned().collect();
    (read, modified.into_iter().collect())
}

const DEFAULT_BUDGET: usize = 52_428; // 0.8 × 16384 tokens × 4 chars

fn check_fixture(name: &str) -> String {
    let (all, _) = load(name);
    let messages = &all[..all.len() * 8 / 10];
    let (read, modified) = file_lists(messages);
    assert!(!modified.is_empty());
    let input = ExtractInput {
        messages,
        previous_summary: None,
        read_files: &read,
        modified_files: &modified,
        custom_instructions: None,
        max_chars: DEFAULT_BUDGET,
    };
    let summary = extractive_summary(&input);
    assert!(units(&summary) <= DEFAULT_BUDGET);
    assert_eq!(summary, extractive_summary(&input), "deterministic");
    assert_headings_in_order(&summary);
    for path in &modified {
        assert!(
            summary.contains(path.as_str()),
            "{name}: modified {path} missing"
        );
    }
    let requests: Vec<&ExtractMessage> = messages
        .iter()
        .filter(|m| m.role == ExtractRole::User && !m.text.trim().is_empty())
        .collect();
    assert!(requests.len() >= 5);
    for r in &requests[requests.len() - 5..] {
        let opening: String = one_line(&r.text).chars().take(40).collect();
        assert!(
            summary.contains(&opening),
            "{name}: request {opening:?} missing"
        );
    }
    // Squeezed to a fraction of the budget, the must-keep content stays.
    let small = extractive_summary(&ExtractInput {
        max_chars: 6_000,
        ..input.clone()
    });
    assert!(units(&small) <= 6_000);
    assert_headings_in_order(&small);
    for path in &modified {
        assert!(
            small.contains(path.as_str()),
            "{name}: modified {path} missing at 6000"
        );
    }
    for r in &requests[requests.len() - 5..] {
        let opening: String = one_line(&r.text).chars().take(40).collect();
        assert!(
            small.contains(&opening),
            "{name}: request {opening:?} missing at 6000"
        );
    }
    summary
}

#[test]
fn fixture_large_session() {
    let s = check_fixture("pi-large-session.jsonl");
    println!("{s}\n\n[{} units]", units(&s));
}

#[test]
fn fixture_before_compaction() {
    let s = check_fixture("pi-before-compaction.jsonl");
    println!("{s}\n\n[{} units]", units(&s));
}

#[test]
fn fixture_recompaction_folds_the_previous_summary() {
    let (all, compactions) = load("pi-before-compaction.jsonl");
    let (at, previous) = compactions.last().cloned().expect("a compaction entry");
    let messages = &all[at..at + (all.len() - at) * 8 / 10];
    let (read, modified) = file_lists(&all[..at + (all.len() - at) * 8 / 10]);
    let summary = extractive_summary(&ExtractInput {
        messages,
        previous_summary: Some(&previous),
        read_files: &read,
        modified_files: &modified,
        custom_instructions: Some("the bash execution queueing"),
        max_chars: DEFAULT_BUDGET,
    });
    assert!(units(&summary) <= DEFAULT_BUDGET);
    assert_headings_in_order(&summary);
    for path in &modified {
        assert!(summary.contains(path.as_str()));
    }
    // The earlier goal and decisions survive.
    assert!(
        section(&summary, "## Goal").contains("AgentSession"),
        "{summary}"
    );
    println!("{summary}\n\n[{} units]", units(&summary));
}

// --- properties --------------------------------------------------------

fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,30}",
        ".{0,80}",
        "(never|don't|must|ok|## Goal|- |\n|🎉|é|  |\\.|\\?|`|↳|…){0,40}",
    ]
}

fn arb_message() -> impl Strategy<Value = ExtractMessage> {
    (
        0..4u8,
        arb_text(),
        proptest::option::of("(read|write|edit|bash|ls)"),
        proptest::collection::vec(("(read|write|edit|bash)", arb_text()), 0..3),
        any::<bool>(),
    )
        .prop_map(
            |(role, text, tool_name, tool_calls, is_error)| ExtractMessage {
                role: match role {
                    0 => ExtractRole::User,
                    1 => ExtractRole::Assistant,
                    2 => ExtractRole::ToolResult,
                    _ => ExtractRole::Other,
                },
                text,
                tool_name,
                tool_calls,
                is_error,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn within_budget_deterministic_and_never_panics(
        messages in proptest::collection::vec(arb_message(), 0..40),
        previous in proptest::option::of(
            "(## Goal|## Done|### In Progress|- User requests|  - |    ↳ |<read-files>|x|\n|🎉|- Files read|\\(none\\)){0,30}"
        ),
        read in proptest::collection::vec(".{0,20}", 0..5),
        modified in proptest::collection::vec(".{0,20}", 0..5),
        focus in proptest::option::of(".{0,30}"),
        max_chars in prop_oneof![0usize..400, 0usize..5_000, 0usize..100_000],
    ) {
        let input = ExtractInput {
            messages: &messages,
            previous_summary: previous.as_deref(),
            read_files: &read,
            modified_files: &modified,
            custom_instructions: focus.as_deref(),
            max_chars,
        };
        let a = extractive_summary(&input);
        prop_assert!(units(&a) <= max_chars, "{} > {}", units(&a), max_chars);
        prop_assert_eq!(&a, &extractive_summary(&input));
    }
}

#[test]
fn the_messages_are_read_from_the_facts_text_the_package_writes() {
    let text = r#"[
        {"r":"user","t":"fix \ud800 the parser","n":null,"e":false,"c":[]},
        {"r":"assistant","t":"on it","n":null,"e":false,"c":[["edit","src/a.ts"],["bash"],[7,"x"],"odd"]},
        {"r":"toolResult","t":"boom","n":"bash","e":true,"c":[]},
        {"r":"bashExecution","t":"ok","n":"bash","e":false,"c":[]},
        {"r":"custom","t":5,"e":"yes"},
        {}
    ]"#;
    let messages = messages_from_facts(text).unwrap();
    let roles: Vec<ExtractRole> = messages.iter().map(|m| m.role).collect();
    use ExtractRole::*;
    assert_eq!(
        roles,
        [User, Assistant, ToolResult, ToolResult, Other, Other]
    );
    assert_eq!(
        messages[0].text, "fix \u{fffd} the parser",
        "a lone surrogate reads as U+FFFD"
    );
    assert_eq!(
        messages[1].tool_calls,
        [
            ("edit".to_string(), "src/a.ts".to_string()),
            ("bash".to_string(), String::new())
        ],
        "a pair without a name string is skipped; a missing argument is empty"
    );
    assert_eq!(messages[2].tool_name.as_deref(), Some("bash"));
    assert!(messages[2].is_error && !messages[3].is_error);
    assert_eq!(messages[4].text, "", "a text that is not a string is empty");
    assert!(!messages[4].is_error, "only `true` is an error");
    assert_eq!(messages[5].tool_name, None);

    for bad in ["", "{}", "[1,", "null"] {
        assert_eq!(
            messages_from_facts(bad).unwrap_err(),
            UNREADABLE_FACTS,
            "{bad:?}"
        );
    }
    assert!(messages_from_facts("[]").unwrap().is_empty());
}
