//! The wire format between the JavaScript engine and the serializer: what
//! the engine-side gatherer (the package's `gatherConversation`) read
//! from every message, as a list of words, decoded here into the
//! [`Message`]s the serializer walks; and the serializer's output as
//! operations on the engine's own strings (`pieces`), which the shim's
//! `assembleText` concatenates. Only indices and lengths cross the
//! boundary, so the caller's text is never copied into wasm memory; the
//! decoding and the encoding are plain Rust, tested natively.
//!
//! A string is a piece: its index in `pieces` and its length in UTF-16
//! code units. A fault (a read or conversion that threw) is the index of
//! its explanation in `pieces`.

use super::{Arguments, Block, Content, Message, Piece, Sink, ToolCall, Value};

// The words' codes: must match text.js's `M_`, `C_`, `B_`, `V_`, `A_` and
// `J_` constants. The rest (`M_SKIPPED`, `C_OTHER`, `B_OTHER`, `V_NONE`,
// `A_ENTRIES`, `J_TEXT`) are the default branches below.
pub const M_NULLISH: u32 = 0;
pub const M_THREW: u32 = 1;
pub const M_ROLE_THREW: u32 = 2;
pub const M_SKIPPED: u32 = 3;
pub const M_USER: u32 = 4;
pub const M_ASSISTANT: u32 = 5;
pub const M_TOOL_RESULT: u32 = 6;
pub const C_THREW: u32 = 0;
pub const C_STRING: u32 = 1;
pub const C_BLOCKS: u32 = 2;
pub const C_OTHER: u32 = 3;
pub const B_HOLE: u32 = 0;
pub const B_NULLISH: u32 = 1;
pub const B_THREW: u32 = 2;
pub const B_TYPE_THREW: u32 = 3;
pub const B_OTHER: u32 = 4;
pub const B_TEXT: u32 = 5;
pub const B_THINKING: u32 = 6;
pub const B_TOOL_CALL: u32 = 7;
pub const V_READ_THREW: u32 = 0;
pub const V_NONE: u32 = 1;
pub const V_TEXT: u32 = 2;
pub const V_NOT_TEXT: u32 = 3;
pub const A_READ_THREW: u32 = 0;
pub const A_NULLISH: u32 = 1;
pub const A_ENTRIES_THREW: u32 = 2;
pub const A_ENTRIES: u32 = 3;
pub const J_TEXT: u32 = 0;
pub const J_THREW: u32 = 1;

/// A string in `pieces`, with its length in UTF-16 code units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WordPiece {
    pub index: u32,
    pub units: u32,
}

impl Piece for WordPiece {
    fn units(&self) -> usize {
        self.units as usize
    }
}

/// A fault is the index of its explanation in `pieces`.
pub type WordFault = u32;

/// The gathered words, read one message at a time.
pub struct Words {
    words: Vec<u32>,
    at: usize,
}

impl Words {
    pub fn new(words: Vec<u32>) -> Words {
        Words { words, at: 0 }
    }

    /// The next word; past the end (never, for the shim's words) a code
    /// that decodes as nothing more to read.
    fn word(&mut self) -> u32 {
        let w = self.words.get(self.at).copied().unwrap_or(u32::MAX);
        self.at += 1;
        w
    }

    fn more(&self) -> bool {
        self.at < self.words.len()
    }

    fn piece(&mut self) -> WordPiece {
        WordPiece {
            index: self.word(),
            units: self.word(),
        }
    }

    /// A list of `n` items, never longer than the words left.
    fn list<T>(&mut self, item: impl Fn(&mut Self) -> T) -> Vec<T> {
        let n = self.word() as usize;
        let mut items = Vec::with_capacity(n.min(self.words.len().saturating_sub(self.at)));
        for _ in 0..n {
            if !self.more() {
                break;
            }
            items.push(item(self));
        }
        items
    }

    fn content(&mut self) -> Content<WordPiece, WordFault> {
        match self.word() {
            C_THREW => Content::Threw(self.word()),
            C_STRING => Content::String(self.piece()),
            C_BLOCKS => Content::Blocks(self.list(Self::block)),
            _ => Content::Other(self.word()),
        }
    }

    fn block(&mut self) -> Block<WordPiece, WordFault> {
        match self.word() {
            B_HOLE => Block::Hole,
            B_NULLISH => Block::Nullish(self.word()),
            B_THREW => Block::Threw(self.word()),
            B_TYPE_THREW => Block::TypeThrew(self.word()),
            B_TEXT => Block::Text(self.value()),
            B_THINKING => Block::Thinking(self.value()),
            B_TOOL_CALL => Block::ToolCall(ToolCall {
                arguments: self.arguments(),
                name: self.value(),
            }),
            _ => Block::Other,
        }
    }

    fn value(&mut self) -> Value<WordPiece, WordFault> {
        match self.word() {
            V_READ_THREW => Value::ReadThrew(self.word()),
            V_TEXT => Value::Text(Some(self.piece())),
            V_NOT_TEXT => Value::NotText(self.word()),
            _ => Value::Text(None),
        }
    }

    fn arguments(&mut self) -> Arguments<WordPiece, WordFault> {
        match self.word() {
            A_READ_THREW => Arguments::ReadThrew(self.word()),
            A_NULLISH => Arguments::Nullish(self.word()),
            A_ENTRIES_THREW => Arguments::EntriesThrew(self.word()),
            _ => Arguments::Entries(self.list(|s| {
                let key = s.piece();
                let json = match s.word() {
                    J_THREW => Err(s.word()),
                    _ => Ok(s.piece()),
                };
                (key, json)
            })),
        }
    }

    /// The next message, `None` at the end (the source's `next_message`).
    pub fn next_message(&mut self) -> Option<Message<WordPiece, WordFault>> {
        if !self.more() {
            return None;
        }
        Some(match self.word() {
            M_NULLISH => Message::Nullish(self.word()),
            M_THREW => Message::Threw(self.word()),
            M_ROLE_THREW => Message::RoleThrew(self.word()),
            M_USER => Message::User(self.content()),
            M_ASSISTANT => Message::Assistant(self.content()),
            M_TOOL_RESULT => Message::ToolResult(self.content()),
            _ => Message::Skipped,
        })
    }
}

/// The output as operations on the pieces, for `assembleText`: `[0, i]`
/// is piece `i`, `[1, i, n]` its first `n` code units, `[2, a, b]`
/// `literals` from code unit `a` to `b` (consecutive literals are one
/// operation).
#[derive(Default)]
pub struct PieceOps {
    ops: Vec<u32>,
    literals: String,
    /// The length of `literals` in UTF-16 code units.
    literal_units: u32,
    /// Where the last operation starts, when it is a literal (which the next
    /// literal then extends).
    last_literal: Option<usize>,
}

pub const OP_PIECE: u32 = 0;
pub const OP_PREFIX: u32 = 1;
pub const OP_LITERAL: u32 = 2;

impl PieceOps {
    pub fn ops(&self) -> &[u32] {
        &self.ops
    }

    pub fn literals(&self) -> &str {
        &self.literals
    }
}

impl Sink<WordPiece> for PieceOps {
    fn literal(&mut self, s: &str) {
        let start = self.literal_units;
        self.literals.push_str(s);
        self.literal_units += s.encode_utf16().count() as u32;
        match self.last_literal.and_then(|op| self.ops.get_mut(op + 2)) {
            Some(end) => *end = self.literal_units,
            None => {
                self.last_literal = Some(self.ops.len());
                self.ops.extend([OP_LITERAL, start, self.literal_units]);
            }
        }
    }

    fn text(&mut self, t: &WordPiece) {
        self.last_literal = None;
        self.ops.extend([OP_PIECE, t.index]);
    }

    fn text_prefix(&mut self, t: &WordPiece, units: usize) {
        self.last_literal = None;
        self.ops.extend([OP_PREFIX, t.index, units as u32]);
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
