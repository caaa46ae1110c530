//! Why a session file could not be read, and on which line.

/// A session file this library cannot turn into messages. Line numbers are
/// 1-based and count every line of the text, blank ones included.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionFileError {
    #[error("the session file is empty: a pi session file starts with a session header line")]
    Empty,
    #[error(
        "none of the {lines} non-blank lines of the session file is valid JSON, so it has no session header"
    )]
    NoValidLine { lines: usize },
    #[error(
        "line {line}: the first entry must be the session header, an object with \"type\": \"session\" and a string \"id\", but {problem}"
    )]
    NoHeader { line: usize, problem: String },
    #[error("line {line}: the entry is null, which pi cannot load")]
    NullEntry { line: usize },
    #[error(
        "line {line}: every entry of a version-1 session file must be a JSON object (pi's migration gives each one an id), got {got}"
    )]
    NotAnObjectInV1 { line: usize, got: String },
    #[error(
        "line {line}: the parentId chain of the active branch comes back to this entry, so the branch has no root (pi would never finish loading the file)"
    )]
    ParentCycle { line: usize },
    #[error("line {line}: the message entry's message must be an object, got {got}")]
    NotAMessage { line: usize, got: String },
    #[error("line {line}: the message entry's message.role must be a string, got {got}")]
    BadRole { line: usize, got: String },
    #[error("line {line}: the message entry's message is a {role} whose {problem}")]
    BadSummaryMessage {
        line: usize,
        role: &'static str,
        problem: String,
    },
    #[error("line {line}: the {entry_type} entry's summary must be a string, got {got}")]
    BadSummary {
        line: usize,
        entry_type: &'static str,
        got: String,
    },
    #[error(
        "line {line}: the {entry_type} entry {problem}; pi writes dates in ISO 8601 with a zone, like \"2025-01-02T03:04:05.678Z\""
    )]
    BadTimestamp {
        line: usize,
        entry_type: &'static str,
        problem: String,
    },
}
