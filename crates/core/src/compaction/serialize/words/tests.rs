//! The wire format natively: words written as the shim writes them are
//! decoded and serialized, the operations assembled as the shim assembles
//! them, and the text compared with the JSON serializer's for the same
//! messages; faults name their field.

use super::super::{serialize, serialize_conversation, MessageSource};
use super::*;
use crate::js::json;

/// Builds words and pieces as text.js's `gatherConversation` does.
#[derive(Default)]
struct Writer {
    words: Vec<u32>,
    pieces: Vec<String>,
}

impl Writer {
    fn piece(&mut self, s: &str) -> u32 {
        self.pieces.push(s.into());
        (self.pieces.len() - 1) as u32
    }
    /// A code and a string as a piece with its length.
    fn text(&mut self, code: u32, s: &str) {
        let i = self.piece(s);
        self.words
            .extend([code, i, s.encode_utf16().count() as u32]);
    }
    /// A code and a fault's explanation.
    fn fault(&mut self, code: u32, why: &str) {
        let i = self.piece(why);
        self.words.extend([code, i]);
    }
    fn push(&mut self, words: &[u32]) {
        self.words.extend_from_slice(words);
    }
}

struct Source {
    words: Words,
    pieces: Vec<String>,
}

impl MessageSource for Source {
    type Text = WordPiece;
    type Fault = WordFault;
    fn next_message(&mut self) -> Option<Message<WordPiece, WordFault>> {
        self.words.next_message()
    }
    fn explain(&self, fault: &WordFault) -> String {
        self.pieces[*fault as usize].clone()
    }
}

/// What `assembleText` makes of the operations.
fn assemble(ops: &PieceOps, pieces: &[String]) -> String {
    let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    let literals = units(ops.literals());
    let mut out: Vec<u16> = Vec::new();
    let o = ops.ops();
    let mut i = 0;
    while i < o.len() {
        match o[i] {
            OP_PIECE => {
                out.extend(units(&pieces[o[i + 1] as usize]));
                i += 2;
            }
            OP_PREFIX => {
                let p = units(&pieces[o[i + 1] as usize]);
                out.extend(&p[..o[i + 2] as usize]);
                i += 3;
            }
            _ => {
                out.extend(&literals[o[i + 1] as usize..o[i + 2] as usize]);
                i += 3;
            }
        }
    }
    String::from_utf16(&out).unwrap()
}

fn run(w: Writer) -> Result<String, String> {
    let mut source = Source {
        words: Words::new(w.words),
        pieces: w.pieces,
    };
    let mut ops = PieceOps::default();
    serialize(&mut source, &mut ops).map_err(|e| e.to_string())?;
    Ok(assemble(&ops, &source.pieces))
}

fn json_text(messages: &str) -> String {
    let json::Json::Array(messages) = json::parse(messages).unwrap() else {
        panic!("not an array")
    };
    serialize_conversation(&messages).unwrap().to_string_lossy()
}

#[test]
fn every_kind_of_message_and_block_decodes_to_the_json_serializers_text() {
    let mut w = Writer::default();
    // A user message with a string; one with blocks (a hole, another type).
    w.push(&[M_USER]);
    w.text(C_STRING, "hello");
    w.push(&[M_USER, C_BLOCKS, 3, B_HOLE, B_OTHER, B_TEXT]);
    w.text(V_TEXT, "second");
    // An assistant message: thinking, text without a value, a tool call.
    w.push(&[M_ASSISTANT, C_BLOCKS, 3, B_THINKING]);
    w.text(V_TEXT, "hmm");
    w.push(&[B_TEXT, V_NONE, B_TOOL_CALL, A_ENTRIES, 1]);
    let key = w.piece("path");
    w.push(&[key, 4]);
    w.text(J_TEXT, "\"a.txt\"");
    w.text(V_TEXT, "read");
    // A skipped role, then a tool result whose text is cut to 2000.
    w.push(&[M_SKIPPED, M_TOOL_RESULT, C_BLOCKS, 1, B_TEXT]);
    let long = "x".repeat(2100);
    w.text(V_TEXT, &long);
    // JSON has no holes: the words' hole is left out of the JSON (`filter`
    // skips it).
    let text = run(w).unwrap();
    let without_hole = json_text(&format!(
        r#"[{{"role":"user","content":"hello"}},
            {{"role":"user","content":[{{"type":"image"}},{{"type":"text","text":"second"}}]}},
            {{"role":"assistant","content":[{{"type":"thinking","thinking":"hmm"}},{{"type":"text"}},
              {{"type":"toolCall","name":"read","arguments":{{"path":"a.txt"}}}}]}},
            {{"role":"custom","content":"skipped"}},
            {{"role":"toolResult","content":[{{"type":"text","text":"{long}"}}]}}]"#
    ));
    assert_eq!(text, without_hole);
    assert!(text.contains("[Assistant tool calls]: read(path=\"a.txt\")"));
}

#[test]
fn faults_are_reported_at_their_field_with_their_explanation() {
    let cases: Vec<(Writer, &str)> = vec![
        (
            {
                let mut w = Writer::default();
                w.fault(M_NULLISH, "null");
                w
            },
            "messages[0] must be a message object, got null",
        ),
        (
            {
                let mut w = Writer::default();
                w.fault(M_ROLE_THREW, "role getter");
                w
            },
            "messages[0].role could not be read: role getter",
        ),
        (
            {
                let mut w = Writer::default();
                w.push(&[M_USER, C_BLOCKS, 1, B_TEXT]);
                w.fault(V_READ_THREW, "text getter");
                w
            },
            "messages[0].content[0].text could not be read: text getter",
        ),
        (
            {
                let mut w = Writer::default();
                w.push(&[M_ASSISTANT, C_BLOCKS, 1, B_TOOL_CALL]);
                w.fault(A_NULLISH, "undefined");
                w.push(&[V_NONE]);
                w
            },
            "messages[0].content[0].arguments",
        ),
    ];
    for (w, message) in cases {
        let e = run(w).unwrap_err();
        assert!(
            e.starts_with(message),
            "{e:?} should start with {message:?}"
        );
    }
}

#[test]
fn truncated_words_end_the_conversation_instead_of_panicking() {
    // A list longer than the words left, and a message cut short.
    let words = Words::new(vec![M_USER, C_BLOCKS, 1000]);
    let mut source = Source {
        words,
        pieces: Vec::new(),
    };
    let mut ops = PieceOps::default();
    assert!(serialize(&mut source, &mut ops).is_ok());
    assert!(ops.ops().is_empty());
    assert!(Words::new(Vec::new()).next_message().is_none());
}

#[test]
fn consecutive_literals_are_one_operation_and_pieces_break_them() {
    let mut ops = PieceOps::default();
    ops.literal("ab");
    ops.literal("\u{1F600}");
    ops.text(&WordPiece { index: 4, units: 3 });
    ops.literal("c");
    ops.text_prefix(&WordPiece { index: 5, units: 9 }, 2);
    assert_eq!(
        ops.ops(),
        [OP_LITERAL, 0, 4, OP_PIECE, 4, OP_LITERAL, 4, 5, OP_PREFIX, 5, 2]
    );
    assert_eq!(ops.literals(), "ab\u{1F600}c");
}
