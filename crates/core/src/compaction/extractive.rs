//! The embedded summarizer: a deterministic, extractive summary built from
//! the messages themselves, for when the app has no summarizer callback or
//! the callback failed (`fallback: "extractive"`).
//!
//! It writes the same structured format the LLM summarizer is asked for
//! (Goal, Constraints & Preferences, Progress with Done / In Progress /
//! Blocked, Key Decisions, Next Steps, Critical Context) and stays within the
//! same budget, measured in UTF-16 code units as JavaScript counts.
//!
//! # How the budget is met
//!
//! Every piece of content is an `Item` with one or more renderings, from
//! full to short. Each item carries a plan: at which importance tier it is
//! shortened and at which tier it is dropped. Starting from everything at
//! full length, the steps of all plans are applied in tier order (least
//! important first, oldest first within a tier) until the document fits.
//! The length is kept up to date arithmetically, so fitting costs one pass.
//! Every modified file path and the last five user requests are dropped only
//! after everything else; a list that lost entries says so in a marker line.
//!
//! Nothing here can panic on any input: no slicing by byte index except at
//! positions that come from `char_indices`/`find`, and through `get`.

use crate::js::engine::to_lowercase;
use crate::sorted::{sort_by, SortedMap, SortedSet};

/// What the summarizer reads. The boundary fills it from JavaScript.
#[derive(Clone, Debug)]
pub struct ExtractInput<'a> {
    pub messages: &'a [ExtractMessage],
    pub previous_summary: Option<&'a str>,
    /// Files only read, sorted.
    pub read_files: &'a [String],
    /// Files written or edited, sorted.
    pub modified_files: &'a [String],
    /// The caller's "Additional focus".
    pub custom_instructions: Option<&'a str>,
    /// The budget in UTF-16 code units (maxTokens × 4).
    pub max_chars: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtractRole {
    User,
    Assistant,
    ToolResult,
    Other,
}

#[derive(Clone, Debug)]
pub struct ExtractMessage {
    pub role: ExtractRole,
    /// User: the text content; assistant: its text blocks joined with "\n";
    /// tool result: its text blocks joined.
    pub text: String,
    /// Tool results: the tool's name.
    pub tool_name: Option<String>,
    /// Assistant: (tool name, short argument summary such as a path or a
    /// command).
    pub tool_calls: Vec<(String, String)>,
    /// Tool results reported with `isError`.
    pub is_error: bool,
}

/// The summary of `input.messages` (folding in `input.previous_summary`),
/// never longer than `input.max_chars` UTF-16 code units.
pub fn extractive_summary(input: &ExtractInput) -> String {
    let facts = Facts::gather(input);
    let previous = input
        .previous_summary
        .map(|text| Previous::parse(text, input));
    let focus = Focus::new(input.custom_instructions);
    let mut builder = Builder::new(focus);
    build_goal(&mut builder, &facts, previous.as_ref());
    build_constraints(&mut builder, &facts, previous.as_ref());
    build_done(&mut builder, &facts, previous.as_ref(), input);
    build_in_progress(&mut builder, &facts);
    build_blocked(&mut builder, &facts);
    build_decisions(&mut builder, &facts, previous.as_ref());
    build_next_steps(&mut builder, &facts);
    build_critical(&mut builder, &facts, previous.as_ref(), input);
    builder.fit(input.max_chars)
}

// ---------------------------------------------------------------------------
// Text helpers. Lengths are UTF-16 code units.

fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

/// All whitespace runs (newlines included) collapsed to one space.
fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `s` cut to at most `max` units, ending in "…" when cut; the cut moves back
/// to a word boundary when one is close.
fn cut(s: &str, max: usize) -> String {
    if units(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let room = max - 1;
    let mut used = 0;
    let mut end = 0;
    let mut last_space: Option<(usize, usize)> = None;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if used + w > room {
            break;
        }
        if c.is_whitespace() {
            last_space = Some((i, used));
        }
        used += w;
        end = i + c.len_utf8();
    }
    let mut at = end;
    if let Some((i, before)) = last_space {
        if before * 10 >= room * 7 {
            at = i;
        }
    }
    let mut out = s.get(..at).unwrap_or("").trim_end().to_string();
    out.push('…');
    out
}

/// A multi-line text as an indented block: blank lines dropped, each line
/// trimmed at its end, the whole cut to `max` units before indenting.
fn block(s: &str, max: usize, indent: &str) -> String {
    // Joined by hand: `[&str]::join` would be one more instantiation of
    // `join` in the `.wasm` (the one on `[String]` is used elsewhere).
    let mut joined = String::with_capacity(s.len());
    for line in s
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
    {
        if !joined.is_empty() {
            joined.push('\n');
        }
        joined.push_str(line);
    }
    let joined = cut(&joined, max);
    let mut out = String::new();
    for line in joined.lines() {
        out.push_str(indent);
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The start of `s`, at most `max` bytes, ending at a char boundary.
fn head(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let end = s
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .take_while(|&end| end <= max)
        .last()
        .unwrap_or(0);
    s.get(..end).unwrap_or("")
}

/// Lowercase, with typographic apostrophes made plain, for matching only.
fn fold(s: &str) -> String {
    to_lowercase(s).replace('\u{2019}', "'")
}

/// Whether `marker` occurs in `hay` as whole words.
fn has_words(hay: &str, marker: &str) -> bool {
    let mut from = 0;
    while let Some(pos) = hay.get(from..).and_then(|rest| rest.find(marker)) {
        let at = from + pos;
        let end = at + marker.len();
        let before = hay.get(..at).and_then(|h| h.chars().next_back());
        let after = hay.get(end..).and_then(|h| h.chars().next());
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        if boundary(before) && boundary(after) {
            return true;
        }
        from = at + marker.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Sentences: split at line ends and at `.`, `!`, `?` followed by space.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = c == '\n'
            || (matches!(c, '.' | '!' | '?')
                && chars.peek().is_none_or(|&(_, next)| next.is_whitespace()));
        if ends {
            let end = i + c.len_utf8();
            if let Some(s) = text.get(start..end) {
                let s = s.trim();
                if !s.is_empty() {
                    out.push(s);
                }
            }
            start = end;
        }
    }
    if let Some(s) = text.get(start..) {
        let s = s.trim();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

/// Prose rather than a pasted log or code: mostly letters and spaces.
fn is_prose(s: &str) -> bool {
    let total = s.chars().count();
    let words = s.split_whitespace().count();
    if total == 0 || words < 3 {
        return false;
    }
    let plain = s
        .chars()
        .filter(|c| c.is_alphabetic() || *c == ' ' || *c == '\'' || *c == ',')
        .count();
    plain * 10 >= total * 7
}

const CONSTRAINT_MARKERS: &[&str] = &[
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

const DECISION_MARKERS: &[&str] = &[
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
const TASK_OPENINGS: &[&str] = &[
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
const CONSTRAINT_NOISE: &[&str] = &[
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
fn is_tentative(folded: &str) -> bool {
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
fn strip_list_marker(s: &str) -> &str {
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
const SCAN_BYTES: usize = 4000;

/// User sentences that state a constraint or preference. Reading stops at
/// the first line that looks pasted (a log, JSON, code): what follows is
/// someone else's text.
fn constraint_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // What a person types is short; a long message is mostly pasted.
    for line in head(text, SCAN_BYTES).lines() {
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
            if !CONSTRAINT_MARKERS.iter().any(|m| folded.contains(m)) {
                continue;
            }
            for noise in CONSTRAINT_NOISE {
                if folded.contains(noise) {
                    folded = folded.replace(noise, " ");
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
fn decision_sentences(text: &str) -> Vec<String> {
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
fn is_inspection(command: &str) -> bool {
    const LOOK: &[&str] = &[
        "grep", "rg", "cat", "ls", "find", "head", "tail", "wc", "echo", "pwd", "which", "tree",
        "sleep", "file", "stat", "less", "true",
    ];
    let mut any = false;
    for segment in command.split(['\n', ';']).flat_map(|s| s.split("&&")) {
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
fn as_item(line: &str) -> String {
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
fn is_substantive(text: &str) -> bool {
    let words = text.split_whitespace().count();
    let is_command = text.starts_with('/') && words <= 1;
    !is_command && (words >= 4 || units(text) >= 25)
}

fn starts_task(text: &str) -> bool {
    let folded = fold(text);
    units(text) >= 50 && TASK_OPENINGS.iter().any(|o| folded.starts_with(o))
}

/// The first non-empty line of a tool result, for an error message.
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// A tool error in one line: its first line, and its last when that differs
/// (a shell's output starts with noise and ends with the exit code).
fn error_text(text: &str) -> String {
    let first = first_line(text);
    let last = text
        .lines()
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

// ---------------------------------------------------------------------------
// What the messages say.

struct Request {
    msg: usize,
    text: String,
    /// The assistant's last message with text before the next request.
    reply_msg: Option<usize>,
    reply: Option<String>,
}

struct ToolOp {
    msg: usize,
    tool: String,
    arg: Option<String>,
    /// `None` while no result was seen.
    failed: Option<bool>,
    error: String,
}

struct Facts {
    requests: Vec<Request>,
    ops: Vec<ToolOp>,
    constraints: Vec<(usize, String)>,
    decisions: Vec<(usize, String)>,
    /// The last assistant message with text: (index, text).
    last_text: Option<(usize, String)>,
    /// Index of the last assistant message (with text or tool calls).
    last_assistant: Option<usize>,
}

impl Facts {
    fn gather(input: &ExtractInput) -> Facts {
        let mut facts = Facts {
            requests: Vec::new(),
            ops: Vec::new(),
            constraints: Vec::new(),
            decisions: Vec::new(),
            last_text: None,
            last_assistant: None,
        };
        let mut last_text = None;
        // Tool calls of the latest assistant message still waiting for
        // their results, as indices into `ops`.
        let mut pending: Vec<usize> = Vec::new();
        for (i, message) in input.messages.iter().enumerate() {
            match message.role {
                ExtractRole::User => {
                    let text = message.text.trim();
                    if text.is_empty() {
                        continue;
                    }
                    for c in constraint_sentences(text) {
                        facts.constraints.push((i, c));
                    }
                    facts.requests.push(Request {
                        msg: i,
                        text: one_line(text),
                        reply_msg: None,
                        reply: None,
                    });
                }
                ExtractRole::Assistant => {
                    let text = message.text.trim();
                    if !text.is_empty() {
                        last_text = Some(i);
                        if let Some(request) = facts.requests.last_mut() {
                            request.reply_msg = Some(i);
                        }
                        for d in decision_sentences(text) {
                            facts.decisions.push((i, d));
                        }
                    }
                    if !text.is_empty() || !message.tool_calls.is_empty() {
                        facts.last_assistant = Some(i);
                    }
                    pending.clear();
                    for (tool, arg) in &message.tool_calls {
                        pending.push(facts.ops.len());
                        let arg = arg.trim();
                        facts.ops.push(ToolOp {
                            msg: i,
                            tool: tool.clone(),
                            arg: (!arg.is_empty()).then(|| arg.to_string()),
                            failed: None,
                            error: String::new(),
                        });
                    }
                }
                ExtractRole::ToolResult => {
                    let name = message.tool_name.as_deref();
                    let slot = pending.iter().position(|&k| {
                        name.is_none_or(|n| facts.ops.get(k).is_some_and(|op| op.tool == n))
                    });
                    let error = if message.is_error {
                        error_text(&message.text)
                    } else {
                        String::new()
                    };
                    let paired = slot.map(|p| pending.remove(p));
                    match paired.and_then(|k| facts.ops.get_mut(k)) {
                        Some(op) => {
                            op.failed = Some(message.is_error);
                            op.error = error;
                        }
                        None => facts.ops.push(ToolOp {
                            msg: i,
                            tool: name.unwrap_or("tool").to_string(),
                            arg: None,
                            failed: Some(message.is_error),
                            error,
                        }),
                    }
                }
                ExtractRole::Other => {}
            }
        }
        let text_of = |i: usize| input.messages.get(i).map(|m| m.text.trim());
        for request in &mut facts.requests {
            request.reply = request.reply_msg.and_then(text_of).map(one_line);
        }
        facts.last_text = last_text.and_then(|i| Some((i, text_of(i)?.to_string())));
        facts
    }

    fn last_substantive(&self) -> Option<&Request> {
        self.requests.iter().rev().find(|r| is_substantive(&r.text))
    }
}

// ---------------------------------------------------------------------------
// The previous summary, folded in on re-compaction.

#[derive(Clone, Copy, PartialEq, Eq)]
enum PrevKind {
    Goal,
    Constraints,
    Done,
    Decisions,
    Critical,
    /// Kept under Critical Context with its heading (In Progress, Blocked,
    /// Next Steps and any heading of another format).
    Other,
}

struct PrevSection {
    kind: PrevKind,
    title: String,
    lines: Vec<String>,
}

struct Previous {
    sections: Vec<PrevSection>,
    /// (request, reply) from a previous extractive summary's request list.
    requests: Vec<(String, Option<String>)>,
}

impl Previous {
    fn parse(text: &str, input: &ExtractInput) -> Previous {
        let files: SortedSet<&str> = input
            .read_files
            .iter()
            .chain(input.modified_files)
            .map(|s| s.as_str())
            .collect();
        let mut sections = vec![PrevSection {
            kind: PrevKind::Other,
            title: "Notes".to_string(),
            lines: Vec::new(),
        }];
        let mut requests: Vec<(String, Option<String>)> = Vec::new();
        let mut in_tag: Option<&str> = None;
        let mut skipping = false;
        let mut in_requests = false;
        for raw in text.lines() {
            let line = raw.trim_end();
            let trimmed = line.trim();
            if let Some(close) = in_tag {
                if trimmed.contains(close) {
                    in_tag = None;
                }
                continue;
            }
            if trimmed.starts_with("<read-files>") || trimmed.starts_with("<modified-files>") {
                let close = if trimmed.starts_with("<read") {
                    "</read-files>"
                } else {
                    "</modified-files>"
                };
                if !trimmed.contains(close) {
                    in_tag = Some(close);
                }
                continue;
            }
            if trimmed.is_empty() || trimmed.starts_with("```") {
                continue;
            }
            let indented = line.starts_with(' ') || line.starts_with('\t');
            if indented && skipping {
                continue;
            }
            if indented && in_requests {
                let item = trimmed.trim_start_matches("- ").trim();
                if trimmed.starts_with('↳') {
                    let reply = trimmed.trim_start_matches('↳').trim().to_string();
                    if let Some(last) = requests.last_mut() {
                        last.1 = Some(reply);
                    }
                } else if !item.starts_with('…') && !item.is_empty() {
                    requests.push((item.to_string(), None));
                }
                continue;
            }
            skipping = false;
            in_requests = false;
            if line.starts_with('#') {
                let level = line.chars().take_while(|&c| c == '#').count();
                let title = line.trim_start_matches('#').trim();
                if level >= 2 && !title.is_empty() {
                    sections.push(PrevSection {
                        kind: classify_heading(title),
                        title: title.to_string(),
                        lines: Vec::new(),
                    });
                }
                continue;
            }
            if trimmed == "(none)" || trimmed.contains("omitted to fit the budget") {
                continue;
            }
            let label = fold(trimmed.trim_start_matches(['-', '*', ' ']));
            if [
                "files read",
                "files modified",
                "read files",
                "modified files",
            ]
            .iter()
            .chain(&["tool calls", "commands run"])
            .any(|p| label.starts_with(p))
            {
                skipping = true;
                continue;
            }
            if label.starts_with("additional focus") {
                continue;
            }
            if label.starts_with("user requests") {
                in_requests = true;
                continue;
            }
            // A bare file-list line of another format: the file lists are
            // carried separately.
            let bare = trimmed
                .trim_start_matches(['-', '*', ' '])
                .split(" (")
                .next()
                .unwrap_or("")
                .trim_matches('`');
            if files.contains(&bare) {
                continue;
            }
            if let Some(section) = sections.last_mut() {
                section.lines.push(cut(line, 300));
            }
        }
        sections.retain(|s| !s.lines.is_empty());
        Previous { sections, requests }
    }

    fn lines_of(&self, kind: PrevKind) -> impl Iterator<Item = &String> {
        self.sections
            .iter()
            .filter(move |s| s.kind == kind)
            .flat_map(|s| s.lines.iter())
    }
}

fn classify_heading(title: &str) -> PrevKind {
    let t = fold(title);
    if t.contains("in progress") || t.contains("current") || t.contains("blocked") {
        PrevKind::Other
    } else if t.starts_with("goal") || t.contains("original request") {
        PrevKind::Goal
    } else if t.contains("constraint") || t.contains("preference") {
        PrevKind::Constraints
    } else if t.starts_with("done")
        || t.starts_with("progress")
        || t.contains("early progress")
        || t.contains("completed")
    {
        PrevKind::Done
    } else if t.contains("decision") {
        PrevKind::Decisions
    } else if t.contains("critical context") {
        PrevKind::Critical
    } else {
        PrevKind::Other
    }
}

// ---------------------------------------------------------------------------
// Custom instructions: items that mention their words are kept longer.

struct Focus {
    words: Vec<String>,
}

impl Focus {
    fn new(instructions: Option<&str>) -> Focus {
        const COMMON: &[&str] = &[
            "about",
            "also",
            "focus",
            "from",
            "include",
            "keep",
            "less",
            "make",
            "more",
            "only",
            "please",
            "should",
            "summary",
            "summarize",
            "that",
            "their",
            "there",
            "these",
            "this",
            "what",
            "when",
            "where",
            "which",
            "with",
            "would",
        ];
        let mut words: Vec<String> = instructions
            .unwrap_or("")
            .split(|c: char| !c.is_alphanumeric() && c != '.' && c != '_' && c != '-')
            .map(|w| fold(w.trim_matches(['.', '-', '_'])))
            .filter(|w| w.chars().count() >= 4 && !COMMON.contains(&w.as_str()))
            .collect();
        sort_by(&mut words, String::cmp);
        words.dedup();
        words.truncate(32);
        Focus { words }
    }

    fn matches(&self, text: &str) -> bool {
        if self.words.is_empty() {
            return false;
        }
        let folded = fold(text);
        self.words.iter().any(|w| folded.contains(w.as_str()))
    }
}

// ---------------------------------------------------------------------------
// The document and its fitting.

/// Importance tiers: lower tiers are shortened or dropped first.
mod tier {
    pub const OLD_DECISIONS: u32 = 10;
    pub const OLD_COMMANDS: u32 = 12;
    pub const OLD_ERRORS: u32 = 14;
    pub const EARLIER_MISC: u32 = 16;
    pub const OLD_REPLIES: u32 = 17;
    pub const OLD_REQUESTS_SHORTEN: u32 = 18;
    pub const STATE_SHORTEN: u32 = 20;
    pub const OLD_CONSTRAINTS: u32 = 22;
    pub const DECISIONS: u32 = 23;
    pub const OLD_REQUESTS: u32 = 24;
    pub const FOLLOW_UPS: u32 = 26;
    pub const FILES_READ: u32 = 28;
    pub const ERRORS: u32 = 30;
    pub const CONSTRAINTS: u32 = 32;
    pub const EARLIER_DONE: u32 = 34;
    pub const STATE_SHORTER: u32 = 36;
    pub const GOAL_SHORTEN: u32 = 38;
    pub const RECENT_REPLIES: u32 = 40;
    pub const NEXT_STEPS: u32 = 42;
    pub const STATE: u32 = 44;
    pub const GOAL_SHORTER: u32 = 46;
    pub const GOAL: u32 = 47;
    pub const FOCUS: u32 = 48;
    /// Below: the last five user requests and the modified files.
    pub const MUST_SHORTEN: u32 = 50;
    pub const MUST_REQUESTS: u32 = 52;
    pub const MUST_FILES: u32 = 54;
    /// Focus matches move up by this much, staying below `RECENT_REPLIES`.
    pub const FOCUS_BONUS: u32 = 15;
}

const GOAL: usize = 0;
const CONSTRAINTS: usize = 1;
const DONE: usize = 2;
const IN_PROGRESS: usize = 3;
const BLOCKED: usize = 4;
const DECISIONS: usize = 5;
const NEXT: usize = 6;
const CRITICAL: usize = 7;

const HEADINGS: [&str; 8] = [
    "## Goal\n",
    "## Constraints & Preferences\n",
    "## Progress\n### Done\n",
    "### In Progress\n",
    "### Blocked\n",
    "## Key Decisions\n",
    "## Next Steps\n",
    "## Critical Context\n",
];
const NONE: &str = "(none)\n";
const OMITTED: &str = "(omitted to fit the budget)\n";

struct Item {
    /// Renderings, longest first, each with its length.
    versions: Vec<(String, usize)>,
    /// The rendering in use; `versions.len()` when dropped.
    current: usize,
    /// Whether the marker line counts it when dropped.
    counted: bool,
}

struct Group {
    label: String,
    label_len: usize,
    /// The indentation of the marker line for dropped items.
    indent: &'static str,
    /// What the marker line calls the dropped items ("earlier requests").
    noun: &'static str,
    items: Vec<Item>,
    visible: usize,
    visible_len: usize,
    omitted: usize,
    /// Dropped items the marker line counts (a reply goes with its request).
    omitted_counted: usize,
}

impl Group {
    fn len(&self) -> usize {
        if self.visible == 0 {
            return 0;
        }
        let marker = if self.omitted_counted > 0 {
            units(&marker_line(self.indent, self.omitted_counted, self.noun))
        } else {
            0
        };
        self.label_len + self.visible_len + marker
    }
}

fn marker_line(indent: &str, n: usize, noun: &str) -> String {
    let noun = if n == 1 {
        noun.strip_suffix('s').unwrap_or(noun)
    } else {
        noun
    };
    format!("{indent}- … {n} {noun} omitted to fit the budget\n")
}

#[derive(Default)]
struct Section {
    groups: Vec<Group>,
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Step {
    tier: u32,
    seq: usize,
    section: usize,
    group: usize,
    item: usize,
    to: usize,
}

struct Builder {
    sections: Vec<Section>,
    steps: Vec<Step>,
    focus: Focus,
}

impl Builder {
    fn new(focus: Focus) -> Builder {
        Builder {
            sections: HEADINGS.iter().map(|_| Section::default()).collect(),
            steps: Vec::new(),
            focus,
        }
    }

    /// A new group in `section`; `label` is a whole line (or empty).
    fn group(
        &mut self,
        section: usize,
        label: &str,
        indent: &'static str,
        noun: &'static str,
    ) -> usize {
        let Some(s) = self.sections.get_mut(section) else {
            return 0;
        };
        s.groups.push(Group {
            label: label.to_string(),
            label_len: units(label),
            indent,
            noun,
            items: Vec::new(),
            visible: 0,
            visible_len: 0,
            omitted: 0,
            omitted_counted: 0,
        });
        s.groups.len() - 1
    }

    /// An item with renderings `versions` (longest first); `tiers[k]` is the
    /// tier at which it goes from rendering `k` to `k + 1` (the last step
    /// drops it); `seq` orders steps within a tier.
    fn item(&mut self, at: (usize, usize), versions: Vec<String>, tiers: &[u32], seq: usize) {
        let (section, group) = at;
        let boost = versions
            .first()
            .is_some_and(|text| self.focus.matches(text));
        let Some(g) = self
            .sections
            .get_mut(section)
            .and_then(|s| s.groups.get_mut(group))
        else {
            return;
        };
        let versions: Vec<(String, usize)> = versions
            .into_iter()
            .map(|v| {
                let n = units(&v);
                (v, n)
            })
            .collect();
        let Some(&(_, first_len)) = versions.first() else {
            return;
        };
        let index = g.items.len();
        let count = versions.len();
        g.items.push(Item {
            versions,
            current: 0,
            counted: true,
        });
        g.visible += 1;
        g.visible_len += first_len;
        for (k, &t) in tiers.iter().enumerate().take(count) {
            let tier = if boost && t + tier::FOCUS_BONUS < tier::RECENT_REPLIES {
                t + tier::FOCUS_BONUS
            } else {
                t
            };
            self.steps.push(Step {
                tier,
                seq,
                section,
                group,
                item: index,
                to: k + 1,
            });
        }
    }

    /// The group's last item is not counted by its marker line.
    fn not_counted(&mut self, at: (usize, usize)) {
        let last = self
            .sections
            .get_mut(at.0)
            .and_then(|s| s.groups.get_mut(at.1))
            .and_then(|g| g.items.last_mut());
        if let Some(item) = last {
            item.counted = false;
        }
    }

    fn section_len(&self, section: usize) -> usize {
        let heading = HEADINGS.get(section).map_or(0, |h| units(h));
        let Some(s) = self.sections.get(section) else {
            return heading;
        };
        let body: usize = s.groups.iter().map(Group::len).sum();
        if body > 0 {
            heading + body
        } else if s.groups.iter().any(|g| g.omitted > 0) {
            heading + units(OMITTED)
        } else {
            heading + units(NONE)
        }
    }

    fn total_len(&self) -> usize {
        let sections: usize = (0..self.sections.len()).map(|s| self.section_len(s)).sum();
        // A blank line between sections, no newline at the end.
        (sections + self.sections.len().saturating_sub(1)).saturating_sub(1)
    }

    fn fit(mut self, max: usize) -> String {
        let mut steps = std::mem::take(&mut self.steps);
        sort_by(&mut steps, Step::cmp);
        let mut total = self.total_len();
        for step in &steps {
            if total <= max {
                break;
            }
            let before = self.section_len(step.section);
            let Some(g) = self
                .sections
                .get_mut(step.section)
                .and_then(|s| s.groups.get_mut(step.group))
            else {
                continue;
            };
            let Some(item) = g.items.get_mut(step.item) else {
                continue;
            };
            if step.to <= item.current || item.current >= item.versions.len() {
                continue;
            }
            let old_len = item.versions.get(item.current).map_or(0, |v| v.1);
            item.current = step.to;
            match item.versions.get(step.to) {
                Some(&(_, new_len)) => {
                    g.visible_len = g.visible_len - old_len + new_len;
                }
                None => {
                    g.visible_len -= old_len;
                    g.visible -= 1;
                    g.omitted += 1;
                    if item.counted {
                        g.omitted_counted += 1;
                    }
                }
            }
            total = total - before + self.section_len(step.section);
        }
        let out = self.render();
        debug_assert_eq!(units(&out), total, "length bookkeeping");
        if units(&out) <= max {
            out
        } else {
            // Even the headings and the must-keep content do not fit.
            let mut cut_out = String::new();
            let mut used = 0;
            for c in out.chars() {
                used += c.len_utf16();
                if used > max {
                    break;
                }
                cut_out.push(c);
            }
            cut_out
        }
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for (i, section) in self.sections.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(HEADINGS.get(i).copied().unwrap_or(""));
            let mut any = false;
            for g in &section.groups {
                if g.visible == 0 {
                    continue;
                }
                any = true;
                out.push_str(&g.label);
                if g.omitted_counted > 0 {
                    out.push_str(&marker_line(g.indent, g.omitted_counted, g.noun));
                }
                for item in &g.items {
                    if let Some((text, _)) = item.versions.get(item.current) {
                        out.push_str(text);
                    }
                }
            }
            if !any {
                let omitted = section.groups.iter().any(|g| g.omitted > 0);
                out.push_str(if omitted { OMITTED } else { NONE });
            }
        }
        if out.ends_with('\n') {
            out.pop();
        }
        out
    }
}

fn bullet(indent: &str, text: &str, max: usize) -> String {
    format!("{indent}- {}\n", cut(text, max))
}

// ---------------------------------------------------------------------------
// The sections.

fn build_goal(b: &mut Builder, facts: &Facts, previous: Option<&Previous>) {
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

fn build_constraints(b: &mut Builder, facts: &Facts, previous: Option<&Previous>) {
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

fn build_done(b: &mut Builder, facts: &Facts, previous: Option<&Previous>, input: &ExtractInput) {
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

fn build_in_progress(b: &mut Builder, facts: &Facts) {
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

fn build_blocked(b: &mut Builder, facts: &Facts) {
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

fn build_decisions(b: &mut Builder, facts: &Facts, previous: Option<&Previous>) {
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

fn build_next_steps(b: &mut Builder, facts: &Facts) {
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

fn build_critical(
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
        for section in p.sections.iter().filter(|s| s.kind == PrevKind::Other) {
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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
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
            done.contains(
                "- Tool calls: edit ×2 (1 failed), bash ×1 (1 failed), read ×1, write ×1"
            ),
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
        assert!(
            lines[0].starts_with("- `bash` `make`: xxx") && lines[0].ends_with("x… … second line")
        );
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
        assert!(section(&s, "### In Progress")
            .contains("- Last action: `bash` `npm test` (no result yet)"));
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
        assert!(c.contains(
            "  - Add a dark theme to the settings page of the app.\n    ↳ Added the theme toggle."
        ), "{c}");
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
}
