//! The caller's messages as a [`MessageSource`] for `serializeConversation`,
//! and the text composed out of the engine's own strings.
//!
//! One call to the shim (`gatherConversation`) reads what pi's serializer
//! reads from every message and converts it as JavaScript converts it,
//! recording every read or conversion that throws; the strings stay in a
//! JavaScript array (`pieces`) and only their indices and lengths cross into
//! wasm, as a `Uint32Array` of words. The core decides the text as a list of
//! operations on those pieces ([`TextOps`]), and one more call
//! (`assembleText`) concatenates them. So the caller's text is never copied
//! into wasm memory and comes back exactly, lone surrogates included.

use crate::js::errors::thrown_message;
use crate::js::message_access::JsArray;
use agent_compaction_core::compaction::serialize::{
    Arguments, Block, Content, Message, MessageSource, Piece, Sink, ToolCall, Value,
};
use agent_compaction_core::error::{FieldPath, InputError};
use js_sys::{Array, JsString, Uint32Array};
use wasm_bindgen::prelude::*;

#[cfg_attr(
    not(all(feature = "compactor", feature = "store")),
    wasm_bindgen(module = "/src/js/shim.js")
)]
#[cfg_attr(
    all(feature = "compactor", feature = "store"),
    wasm_bindgen(module = "/src/js/shim_all.js")
)]
extern "C" {
    #[wasm_bindgen(js_name = gatherConversation, catch)]
    fn gather_conversation(
        messages: &Array,
        length: u32,
        pieces: &Array,
    ) -> Result<Uint32Array, JsValue>;
    #[wasm_bindgen(js_name = assembleText, catch)]
    fn assemble_text(pieces: &Array, ops: &[u32], literals: &str) -> Result<JsString, JsValue>;
}

// The words' codes: must match the shim's `M_`, `C_`, `B_`, `V_`, `A_` and
// `J_` constants. The rest (`M_SKIPPED`, `C_OTHER`, `B_OTHER`, `V_NONE`,
// `A_ENTRIES`, `J_TEXT`) are the default branches below.
const M_NULLISH: u32 = 0;
const M_THREW: u32 = 1;
const M_ROLE_THREW: u32 = 2;
const M_USER: u32 = 4;
const M_ASSISTANT: u32 = 5;
const M_TOOL_RESULT: u32 = 6;
const C_THREW: u32 = 0;
const C_STRING: u32 = 1;
const C_BLOCKS: u32 = 2;
const B_HOLE: u32 = 0;
const B_NULLISH: u32 = 1;
const B_THREW: u32 = 2;
const B_TYPE_THREW: u32 = 3;
const B_TEXT: u32 = 5;
const B_THINKING: u32 = 6;
const B_TOOL_CALL: u32 = 7;
const V_READ_THREW: u32 = 0;
const V_TEXT: u32 = 2;
const V_NOT_TEXT: u32 = 3;
const A_READ_THREW: u32 = 0;
const A_NULLISH: u32 = 1;
const A_ENTRIES_THREW: u32 = 2;
const J_THREW: u32 = 1;

/// A string in `pieces`, with its length in UTF-16 code units.
#[derive(Clone, Copy)]
pub struct JsPiece {
    index: u32,
    units: u32,
}

impl Piece for JsPiece {
    fn units(&self) -> usize {
        self.units as usize
    }
}

/// A fault is the index of its explanation in `pieces`.
type Fault = u32;

/// The gathered facts of a conversation, read one message at a time.
pub struct JsMessages {
    words: Vec<u32>,
    at: usize,
    pieces: Array,
}

impl JsMessages {
    /// Gathers `messages` in one call.
    pub fn gather(messages: &JsArray) -> Result<JsMessages, InputError> {
        let pieces = Array::new();
        let words = gather_conversation(messages.as_array(), messages.len(), &pieces)
            .map_err(|thrown| InputError::Unreadable {
                path: FieldPath::argument("messages"),
                reason: thrown_message(&thrown),
            })?
            .to_vec();
        Ok(JsMessages {
            words,
            at: 0,
            pieces,
        })
    }

    pub fn pieces(&self) -> &Array {
        &self.pieces
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

    fn piece(&mut self) -> JsPiece {
        JsPiece {
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

    fn content(&mut self) -> Content<JsPiece, Fault> {
        match self.word() {
            C_THREW => Content::Threw(self.word()),
            C_STRING => Content::String(self.piece()),
            C_BLOCKS => Content::Blocks(self.list(Self::block)),
            _ => Content::Other(self.word()),
        }
    }

    fn block(&mut self) -> Block<JsPiece, Fault> {
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

    fn value(&mut self) -> Value<JsPiece, Fault> {
        match self.word() {
            V_READ_THREW => Value::ReadThrew(self.word()),
            V_TEXT => Value::Text(Some(self.piece())),
            V_NOT_TEXT => Value::NotText(self.word()),
            _ => Value::Text(None),
        }
    }

    fn arguments(&mut self) -> Arguments<JsPiece, Fault> {
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
}

impl MessageSource for JsMessages {
    type Text = JsPiece;
    type Fault = Fault;

    fn next_message(&mut self) -> Option<Message<JsPiece, Fault>> {
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

    fn explain(&self, fault: &Fault) -> String {
        self.pieces.get(*fault).as_string().unwrap_or_default()
    }
}

/// The output as operations on the pieces, for `assembleText`.
#[derive(Default)]
pub struct TextOps {
    ops: Vec<u32>,
    literals: String,
    /// The length of `literals` in UTF-16 code units.
    literal_units: u32,
    /// Where the last operation starts, when it is a literal (which the next
    /// literal then extends).
    last_literal: Option<usize>,
}

const OP_PIECE: u32 = 0;
const OP_PREFIX: u32 = 1;
const OP_LITERAL: u32 = 2;

impl TextOps {
    /// The text, concatenated by the engine.
    pub fn assemble(&self, pieces: &Array) -> Result<JsString, InputError> {
        if self.ops.is_empty() {
            return Ok(JsString::from(""));
        }
        assemble_text(pieces, &self.ops, &self.literals).map_err(|thrown| InputError::Unreadable {
            path: FieldPath::argument("messages"),
            reason: thrown_message(&thrown),
        })
    }
}

impl Sink<JsPiece> for TextOps {
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

    fn text(&mut self, t: &JsPiece) {
        self.last_literal = None;
        self.ops.extend([OP_PIECE, t.index]);
    }

    fn text_prefix(&mut self, t: &JsPiece, units: usize) {
        self.last_literal = None;
        self.ops.extend([OP_PREFIX, t.index, units as u32]);
    }
}

/// The caller's own JavaScript values, in a real headless Chromium: values
/// JSON cannot hold convert as they do for pi, and hostile objects are
/// TypeErrors naming the field, never a trap.
#[cfg(test)]
mod tests {
    use crate::serialize::serialize_conversation;
    use js_sys::{Array, JsString, Reflect};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    #[wasm_bindgen(inline_js = r#"
    const getter = (object, key, message) =>
      Object.defineProperty(object, key, { get() { throw new Error(message); }, enumerable: true });
    const revoked = (target) => {
      const r = Proxy.revocable(target, {});
      r.revoke();
      return r.proxy;
    };
    const call = (args, name = "read") => ({ role: "assistant", content: [{ type: "toolCall", id: "c", name, arguments: args }] });
    const cycle = () => {
      const o = { name: "node" };
      o.parent = o;
      return o;
    };
    export function unusualValues() {
      return [
        call({ path: "a.txt", offset: undefined, callback() {}, tag: Symbol("t"), n: NaN, d: new Date(0), nested: { u: undefined } }),
        { role: "user", content: "see", meta: cycle(), size: 10n },
        { role: "toolResult", content: [{ type: "text", text: "ok" }], details: { tree: cycle(), size: 10n } },
        { role: "user", content: [, { type: "text", text: "a" }, , { type: "text", text: 5n }] },
        { role: "assistant", content: [{ type: "text", text: { toString: () => "custom" } }], usage: { cost: { total: 0n } } },
        { role: "toolResult", content: [{ type: "text", text: "x".repeat(1999) + "\ud83d\ude00" + "\udc00" }] },
      ];
    }
    export function hostile() {
      return [
        [[getter({}, "role", "role getter")], "messages[0].role could not be read: role getter"],
        [[{ role: "user", content: "fine" }, revoked({})], "messages[1].role could not be read: "],
        [[{ role: "user", content: revoked([]) }], "messages[0].content could not be read: "],
        [[getter({ role: "assistant" }, "content", "content getter")], "messages[0].content could not be read: content getter"],
        [[{ role: "user", content: [getter({ type: "text" }, "text", "text getter")] }], "messages[0].content[0].text could not be read: text getter"],
        [[{ role: "assistant", content: [{ type: "text" }, getter({}, "type", "type getter")] }], "messages[0].content[1].type could not be read: type getter"],
        [[call(getter({}, "path", "argument getter"))], "messages[0].content[0].arguments could not be read: argument getter"],
        [[call({ n: 1n })], "messages[0].content[0].arguments must be an object whose values JSON.stringify accepts, got a bigint at \"n\" ("],
        [[call({ tree: cycle() })], "messages[0].content[0].arguments must be an object whose values JSON.stringify accepts, got an object at \"tree\" ("],
        [[call({}, Symbol("s"))], "messages[0].content[0].name must be a string, got a symbol (converting it threw: "],
        [[{ role: "user", content: [{ type: "text", text: Symbol("s") }] }], "messages[0].content[0].text must be a string, got a symbol (converting it threw: "],
        [[{ role: "assistant", content: [, { type: "text", text: "a" }] }], "messages[0].content[0] must be a content block, got undefined"],
        [[{ role: "assistant", content: (function* () { yield { type: "text", text: "a" }; throw new Error("generator"); })() }], "messages[0].content[1] could not be read: generator"],
        [[{ role: "toolResult", content: "text" }], "messages[0].content must be an array, got a string"],
        [[call(undefined)], "messages[0].content[0].arguments must be an object, got undefined"],
        [[undefined], "messages[0] must be a message object, got undefined"],
      ];
    }
    "#)]
    extern "C" {
        #[wasm_bindgen(js_name = unusualValues)]
        fn unusual_values() -> Array;
        fn hostile() -> Array;
    }

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn text_units(text: &JsString) -> Vec<u16> {
        (0..text.length())
            .map(|i| text.char_code_at(i) as u16)
            .collect()
    }

    #[wasm_bindgen_test]
    fn values_json_cannot_hold_convert_as_for_pi() {
        let text = serialize_conversation(unusual_values().into()).expect("serializes");
        let mut want = units(
            "[Assistant tool calls]: read(path=\"a.txt\", offset=undefined, callback=undefined, \
             tag=undefined, n=null, d=\"1970-01-01T00:00:00.000Z\", nested={})\n\n\
             [User]: see\n\n[Tool result]: ok\n\n[User]: a5\n\n[Assistant]: custom\n\n[Tool result]: ",
        );
        // Cut at 2000 code units: the emoji's high surrogate is kept alone,
        // and the lone low surrogate after it is counted.
        want.extend(std::iter::repeat_n(u16::from(b'x'), 1999));
        want.push(0xD83D);
        want.extend(units("\n\n[... 2 more characters truncated]"));
        assert_eq!(text_units(&text), want);
    }

    #[wasm_bindgen_test]
    fn hostile_input_is_a_type_error_naming_the_field() {
        for case in hostile().iter() {
            let case: Array = case.unchecked_into();
            let want = case.get(1).as_string().expect("expected message");
            let error = serialize_conversation(case.get(0)).expect_err(&want);
            assert!(error.is_instance_of::<js_sys::TypeError>(), "{want}");
            let message = Reflect::get(&error, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
                .unwrap_or_default();
            assert!(message.starts_with(&want), "{message} (expected {want}…)");
        }
        // The module keeps working.
        let fine = Array::of1(&js_sys::JSON::parse(r#"{"role":"user","content":"ok"}"#).unwrap());
        let text = serialize_conversation(fine.into()).expect("serializes");
        assert_eq!(String::from(text), "[User]: ok");
    }
}
