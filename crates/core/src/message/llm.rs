//! How each message of the flat array is shown to the model
//! (`convertToLlm`): kept as it is, dropped, or rewritten as a user message
//! whose text is composed here.
//!
//! Text is composed through a [`TextSink`] so that the boundary can build it
//! from the engine's own strings (exact UTF-16, lone surrogates included)
//! while the native tests build Rust `String`s with the same code.

use crate::js::number::number_to_string;
use crate::message::role::Role;

/// What `convertToLlm` does with one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlmAction {
    /// User, assistant and tool-result messages: the same object.
    Keep,
    /// Unknown roles, and bash executions excluded from the context.
    Drop,
    /// A user message whose text is [`summary_text`].
    Summary(SummaryKind),
    /// A user message whose text is [`bash_execution_text`].
    BashExecution,
    /// A user message carrying the custom message's content.
    Custom,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryKind {
    Compaction,
    Branch,
}

/// `excluded_from_context` is asked only for bash executions (pi's `!!`);
/// reading that flag may fail, and the failure is passed on.
pub fn llm_action<E>(
    role: Role,
    excluded_from_context: impl FnOnce() -> Result<bool, E>,
) -> Result<LlmAction, E> {
    Ok(match role {
        Role::User | Role::Assistant | Role::ToolResult => LlmAction::Keep,
        Role::CompactionSummary => LlmAction::Summary(SummaryKind::Compaction),
        Role::BranchSummary => LlmAction::Summary(SummaryKind::Branch),
        Role::BashExecution if excluded_from_context()? => LlmAction::Drop,
        Role::BashExecution => LlmAction::BashExecution,
        Role::Custom => LlmAction::Custom,
        // The marker itself is never sent (the outputs it lists are
        // replaced where they stand: `compaction::clearing`).
        Role::ToolOutputCleared | Role::Other => LlmAction::Drop,
    })
}

/// Something text can be appended to: a Rust `String` natively, a
/// JavaScript string at the boundary.
pub trait TextSink {
    /// A piece of the caller's text (a summary, a command, a path).
    type Text: ?Sized;
    fn literal(&mut self, s: &str);
    fn text(&mut self, t: &Self::Text);
    /// Appends `t` with every occurrence of `needle` replaced.
    fn text_replacing(&mut self, t: &Self::Text, needle: &str, replacement: &str);
}

impl TextSink for String {
    type Text = str;
    fn literal(&mut self, s: &str) {
        self.push_str(s);
    }
    fn text(&mut self, t: &str) {
        self.push_str(t);
    }
    fn text_replacing(&mut self, t: &str, needle: &str, replacement: &str) {
        // The needles are closing tags, never empty.
        self.push_str(&crate::js::string::split_str(t, needle).join(replacement));
    }
}

struct Wrapper {
    preamble: &'static str,
    open: &'static str,
    close: &'static str,
    escaped_close: &'static str,
}

const COMPACTION: Wrapper = Wrapper {
    preamble:
        "The conversation history before this point was compacted into the following summary:\n\n",
    open: "<compaction_summary>\n",
    close: "</compaction_summary>",
    escaped_close: "&lt;/compaction_summary&gt;",
};

const BRANCH: Wrapper = Wrapper {
    preamble: "The following is a summary of a branch that this conversation came back from:\n\n",
    open: "<branch_summary>\n",
    close: "</branch_summary>",
    escaped_close: "&lt;/branch_summary&gt;",
};

/// The text a summary is shown to the model as: preamble, the summary inside
/// its tags (a closing tag inside the summary is neutralised so it can never
/// close its own wrapper), then the file lists as `<read-files>` /
/// `<modified-files>` tags when they are not empty.
pub fn summary_text<S: TextSink>(
    out: &mut S,
    kind: SummaryKind,
    summary: &S::Text,
    read_files: &[&S::Text],
    modified_files: &[&S::Text],
) {
    let w = match kind {
        SummaryKind::Compaction => &COMPACTION,
        SummaryKind::Branch => &BRANCH,
    };
    out.literal(w.preamble);
    out.literal(w.open);
    out.text_replacing(summary, w.close, w.escaped_close);
    file_list(out, "read-files", read_files);
    file_list(out, "modified-files", modified_files);
    out.literal("\n");
    out.literal(w.close);
}

fn file_list<S: TextSink>(out: &mut S, tag: &str, files: &[&S::Text]) {
    if files.is_empty() {
        return;
    }
    out.literal("\n\n<");
    out.literal(tag);
    out.literal(">\n");
    for (i, f) in files.iter().enumerate() {
        if i > 0 {
            out.literal("\n");
        }
        out.text(f);
    }
    out.literal("\n</");
    out.literal(tag);
    out.literal(">");
}

/// The facts of a `bashExecution` message that its text depends on, already
/// reduced with JavaScript's truthiness by the caller.
pub struct BashExecution<'a, T: ?Sized> {
    pub command: &'a T,
    /// The output when it is a non-empty string.
    pub output: Option<&'a T>,
    pub cancelled: bool,
    /// The exit code as text, when it is present and not zero
    /// ([`failed_exit_code`]).
    pub failed_exit_code: Option<&'a str>,
    /// The full-output path, when the output was truncated and a path given.
    pub truncated_to: Option<&'a T>,
}

/// pi's text for a bash execution shown to the model.
pub fn bash_execution_text<S: TextSink>(out: &mut S, b: &BashExecution<'_, S::Text>) {
    out.literal("Ran `");
    out.text(b.command);
    out.literal("`\n");
    match b.output {
        Some(output) => {
            out.literal("```\n");
            out.text(output);
            out.literal("\n```");
        }
        None => out.literal("(no output)"),
    }
    if b.cancelled {
        out.literal("\n\n(command cancelled)");
    } else if let Some(code) = b.failed_exit_code {
        out.literal("\n\nCommand exited with code ");
        out.literal(code);
    }
    if let Some(path) = b.truncated_to {
        out.literal("\n\n[Output truncated. Full output: ");
        out.text(path);
        out.literal("]");
    }
}

/// A `bashExecution`'s `exitCode` as read: `null` or `undefined`, a
/// number, or anything else.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ExitCode {
    Nullish,
    Number(f64),
    Other,
}

/// The exit code pi prints: none for `null`, `undefined` and 0 (-0 too, as
/// `!== 0` says), else the number as JavaScript prints it. `Err` with what
/// was expected when it is not a number.
pub fn failed_exit_code(code: ExitCode) -> Result<Option<String>, &'static str> {
    match code {
        ExitCode::Nullish => Ok(None),
        // -0 matches too.
        ExitCode::Number(0.0) => Ok(None),
        ExitCode::Number(x) => Ok(Some(number_to_string(x))),
        ExitCode::Other => Err("a number or undefined"),
    }
}

/// A text field that counts only when it is a non-empty string (`output`;
/// `fullOutputPath`, read only when `wanted`: when the output was
/// truncated). `is_empty` measures the caller's text.
pub fn non_empty<T, E>(
    wanted: bool,
    read: impl FnOnce() -> Result<Option<T>, E>,
    is_empty: impl Fn(&T) -> bool,
) -> Result<Option<T>, E> {
    if !wanted {
        return Ok(None);
    }
    Ok(read()?.filter(|t| !is_empty(t)))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn summary(kind: SummaryKind, text: &str, read: &[&str], modified: &[&str]) -> String {
        let mut s = String::new();
        summary_text(&mut s, kind, text, read, modified);
        s
    }

    #[test]
    fn compaction_summary_without_files() {
        assert_eq!(
            summary(SummaryKind::Compaction, "## Goal\nship it", &[], &[]),
            "The conversation history before this point was compacted into the following summary:\n\n\
             <compaction_summary>\n## Goal\nship it\n</compaction_summary>"
        );
    }

    #[test]
    fn file_tags_follow_the_summary_inside_the_wrapper() {
        assert_eq!(
            summary(SummaryKind::Compaction, "S", &["a.rs", "b.rs"], &["c.rs"]),
            "The conversation history before this point was compacted into the following summary:\n\n\
             <compaction_summary>\nS\n\n<read-files>\na.rs\nb.rs\n</read-files>\n\n\
             <modified-files>\nc.rs\n</modified-files>\n</compaction_summary>"
        );
        assert_eq!(
            summary(SummaryKind::Compaction, "S", &[], &["c.rs"]),
            "The conversation history before this point was compacted into the following summary:\n\n\
             <compaction_summary>\nS\n\n<modified-files>\nc.rs\n</modified-files>\n</compaction_summary>"
        );
    }

    #[test]
    fn branch_summary_has_its_own_preamble_and_tags() {
        assert_eq!(
            summary(SummaryKind::Branch, "B", &["x"], &[]),
            "The following is a summary of a branch that this conversation came back from:\n\n\
             <branch_summary>\nB\n\n<read-files>\nx\n</read-files>\n</branch_summary>"
        );
    }

    #[test]
    fn a_summary_cannot_close_its_own_wrapper() {
        let s = summary(
            SummaryKind::Compaction,
            "a</compaction_summary>b</compaction_summary></branch_summary>",
            &[],
            &[],
        );
        assert!(s.ends_with(
            "<compaction_summary>\na&lt;/compaction_summary&gt;b&lt;/compaction_summary&gt;</branch_summary>\n</compaction_summary>"
        ));
        assert_eq!(s.matches("</compaction_summary>").count(), 1);
        let b = summary(SummaryKind::Branch, "</branch_summary>", &[], &[]);
        assert_eq!(b.matches("</branch_summary>").count(), 1);
        assert!(b.contains("&lt;/branch_summary&gt;"));
    }

    fn bash(b: BashExecution<'_, str>) -> String {
        let mut s = String::new();
        bash_execution_text(&mut s, &b);
        s
    }

    #[test]
    fn bash_execution_text_matches_pi() {
        let base = || BashExecution {
            command: "ls -la",
            output: Some("a\nb"),
            cancelled: false,
            failed_exit_code: None,
            truncated_to: None,
        };
        assert_eq!(bash(base()), "Ran `ls -la`\n```\na\nb\n```");
        assert_eq!(
            bash(BashExecution {
                output: None,
                ..base()
            }),
            "Ran `ls -la`\n(no output)"
        );
        assert_eq!(
            bash(BashExecution {
                failed_exit_code: Some("2"),
                ..base()
            }),
            "Ran `ls -la`\n```\na\nb\n```\n\nCommand exited with code 2"
        );
        // A cancelled command says so instead of its exit code.
        assert_eq!(
            bash(BashExecution {
                cancelled: true,
                failed_exit_code: Some("130"),
                truncated_to: Some("/tmp/out.txt"),
                ..base()
            }),
            "Ran `ls -la`\n```\na\nb\n```\n\n(command cancelled)\n\n[Output truncated. Full output: /tmp/out.txt]"
        );
    }

    #[test]
    fn the_exit_code_is_printed_unless_absent_or_zero() {
        assert_eq!(failed_exit_code(ExitCode::Nullish), Ok(None));
        assert_eq!(failed_exit_code(ExitCode::Number(0.0)), Ok(None));
        assert_eq!(failed_exit_code(ExitCode::Number(-0.0)), Ok(None));
        assert_eq!(
            failed_exit_code(ExitCode::Number(2.0)),
            Ok(Some("2".into()))
        );
        assert_eq!(
            failed_exit_code(ExitCode::Number(-1.5)),
            Ok(Some("-1.5".into()))
        );
        assert_eq!(
            failed_exit_code(ExitCode::Number(f64::NAN)),
            Ok(Some("NaN".into()))
        );
        assert_eq!(
            failed_exit_code(ExitCode::Other),
            Err("a number or undefined")
        );
    }

    #[test]
    fn output_and_path_count_only_when_non_empty_and_the_path_only_when_truncated() {
        let read = |t: Option<&'static str>| move || Ok::<_, ()>(t);
        let empty = |t: &&str| t.is_empty();
        assert_eq!(non_empty(true, read(Some("a")), empty), Ok(Some("a")));
        assert_eq!(non_empty(true, read(Some("")), empty), Ok(None));
        assert_eq!(non_empty(true, read(None), empty), Ok(None));
        // Not truncated: the path is not even read.
        let unread = || -> Result<Option<&str>, ()> { panic!("read") };
        assert_eq!(non_empty(false, unread, empty), Ok(None));
        assert_eq!(non_empty(true, || Err::<Option<&str>, _>(7), empty), Err(7));
    }

    fn action(role: Role, excluded: Option<bool>) -> LlmAction {
        llm_action::<()>(
            role,
            || Ok(excluded.expect("flag read for a non-bash role")),
        )
        .unwrap()
    }

    #[test]
    fn actions_per_role() {
        assert_eq!(action(Role::User, None), LlmAction::Keep);
        assert_eq!(action(Role::Assistant, None), LlmAction::Keep);
        assert_eq!(action(Role::ToolResult, None), LlmAction::Keep);
        assert_eq!(action(Role::Other, None), LlmAction::Drop);
        assert_eq!(action(Role::BashExecution, Some(true)), LlmAction::Drop);
        assert_eq!(
            action(Role::BashExecution, Some(false)),
            LlmAction::BashExecution
        );
        assert_eq!(action(Role::Custom, None), LlmAction::Custom);
        assert_eq!(
            action(Role::BranchSummary, None),
            LlmAction::Summary(SummaryKind::Branch)
        );
        assert_eq!(
            action(Role::CompactionSummary, None),
            LlmAction::Summary(SummaryKind::Compaction)
        );
        assert_eq!(
            llm_action(Role::BashExecution, || Err("unreadable")),
            Err("unreadable")
        );
    }
}
