//! The previous summary, parsed into sections so that re-compaction folds
//! it in instead of nesting it.

use super::text::{cut, fold};
use super::ExtractInput;
use crate::js::string::{contains_str, find_str};
use crate::sorted::SortedSet;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum PrevKind {
    Goal,
    Constraints,
    Done,
    Decisions,
    Critical,
    /// Kept under Critical Context with its heading (In Progress, Blocked,
    /// Next Steps and any heading of another format).
    Other,
}

pub(super) struct PrevSection {
    pub(super) kind: PrevKind,
    pub(super) title: String,
    pub(super) lines: Vec<String>,
}

pub(super) struct Previous {
    pub(super) sections: Vec<PrevSection>,
    /// (request, reply) from a previous extractive summary's request list.
    pub(super) requests: Vec<(String, Option<String>)>,
}

impl Previous {
    pub(super) fn parse(text: &str, input: &ExtractInput) -> Previous {
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
        for raw in text.split('\n') {
            let line = raw.trim_end();
            let trimmed = line.trim();
            if let Some(close) = in_tag {
                if contains_str(trimmed, close) {
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
                if !contains_str(trimmed, close) {
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
                let mut item = trimmed;
                while let Some(rest) = item.strip_prefix("- ") {
                    item = rest;
                }
                let item = item.trim();
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
            if trimmed == "(none)" || contains_str(trimmed, "omitted to fit the budget") {
                continue;
            }
            let label = fold(trimmed.trim_start_matches(['-', '*', ' ']));
            if [
                "files read",
                "files modified",
                "read files",
                "modified files",
                "tool calls",
                "commands run",
            ]
            .iter()
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
            let item = trimmed.trim_start_matches(['-', '*', ' ']);
            let bare = find_str(item, " (", 0)
                .and_then(|at| item.get(..at))
                .unwrap_or(item)
                .trim_matches('`');
            if files.contains(&bare) {
                continue;
            }
            if let Some(section) = sections.last_mut() {
                section.lines.push(cut(line, 300));
            }
        }
        Previous { sections, requests }
    }

    pub(super) fn lines_of(&self, kind: PrevKind) -> impl Iterator<Item = &String> {
        self.sections
            .iter()
            .filter(move |s| s.kind == kind)
            .flat_map(|s| s.lines.iter())
    }
}

pub(super) fn classify_heading(title: &str) -> PrevKind {
    let t = fold(title);
    if contains_str(&t, "in progress") || contains_str(&t, "current") || contains_str(&t, "blocked")
    {
        PrevKind::Other
    } else if t.starts_with("goal") || contains_str(&t, "original request") {
        PrevKind::Goal
    } else if contains_str(&t, "constraint") || contains_str(&t, "preference") {
        PrevKind::Constraints
    } else if t.starts_with("done")
        || t.starts_with("progress")
        || contains_str(&t, "early progress")
        || contains_str(&t, "completed")
    {
        PrevKind::Done
    } else if contains_str(&t, "decision") {
        PrevKind::Decisions
    } else if contains_str(&t, "critical context") {
        PrevKind::Critical
    } else {
        PrevKind::Other
    }
}
