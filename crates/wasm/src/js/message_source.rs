//! The caller's messages as a [`MessageSource`] for `serializeConversation`,
//! and the text composed out of the engine's own strings.
//!
//! The shim (`gatherConversation`) reads what pi's serializer reads from
//! every message of a chunk (`core::message::chunks`) and converts it as
//! JavaScript converts it, recording every read or conversion that throws;
//! the strings stay in a JavaScript array (`pieces`) and only their indices
//! and lengths cross into wasm, as a `Uint32Array` of words, which the core
//! decodes (`core::compaction::serialize::words`). The next chunk is
//! gathered only when the serializer reads past the last, so the message it
//! stops at (the first pi throws at) ends the reading, however long the
//! array. The core decides the text as a list of operations on those pieces
//! (`PieceOps`), and one more call (`assembleText`) concatenates them. So
//! the caller's text is never copied into wasm memory and comes back
//! exactly, lone surrogates included.

use crate::js::errors::messages_unreadable;
use crate::js::message_access::JsArray;
use agent_compaction_core::compaction::serialize::words::{PieceOps, WordFault, WordPiece, Words};
use agent_compaction_core::compaction::serialize::{Message, MessageSource};
use agent_compaction_core::error::InputError;
use agent_compaction_core::message::chunks::chunks;
use js_sys::{Array, JsString, Uint32Array};
use std::ops::Range;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = gatherConversation, catch)]
    fn gather_conversation(
        messages: &Array,
        from: u32,
        to: u32,
        pieces: &Array,
    ) -> Result<Uint32Array, JsValue>;
    #[wasm_bindgen(js_name = assembleText, catch)]
    fn assemble_text(pieces: &Array, ops: &[u32], literals: &str) -> Result<JsString, JsValue>;
}

/// The gathered facts of a conversation, a chunk of messages at a time,
/// decoded one message at a time by the core
/// (`core::compaction::serialize::words`).
pub struct JsMessages<'a> {
    messages: &'a JsArray,
    chunks: Box<dyn Iterator<Item = Range<usize>>>,
    words: Words,
    pieces: Array,
    /// A gathering that threw (the engine out of memory): the serializer
    /// was told the messages ended there; [`JsMessages::finish`] reports it.
    failed: Option<InputError>,
}

impl<'a> JsMessages<'a> {
    /// The messages, gathered when the serializer reads them.
    pub fn new(messages: &'a JsArray) -> JsMessages<'a> {
        JsMessages {
            messages,
            chunks: Box::new(chunks(0, messages.len() as usize)),
            words: Words::new(Vec::new()),
            pieces: Array::new(),
            failed: None,
        }
    }

    /// The words of the next chunk; `false` after the last (or a failure).
    fn gather_next(&mut self) -> bool {
        let Some(range) = self.chunks.next() else {
            return false;
        };
        let array = self.messages.as_array();
        match gather_conversation(array, range.start as u32, range.end as u32, &self.pieces) {
            Ok(words) => {
                self.words = Words::new(words.to_vec());
                true
            }
            Err(thrown) => {
                self.failed = Some(messages_unreadable(thrown));
                false
            }
        }
    }

    pub fn pieces(&self) -> &Array {
        &self.pieces
    }

    /// What a gathering threw, if one did.
    pub fn finish(&mut self) -> Result<(), InputError> {
        self.failed.take().map_or(Ok(()), Err)
    }
}

impl MessageSource for JsMessages<'_> {
    type Text = WordPiece;
    type Fault = WordFault;

    fn next_message(&mut self) -> Option<Message<WordPiece, WordFault>> {
        loop {
            if let Some(message) = self.words.next_message() {
                return Some(message);
            }
            if !self.gather_next() {
                return None;
            }
        }
    }

    fn explain(&self, fault: &WordFault) -> String {
        self.pieces.get(*fault).as_string().unwrap_or_default()
    }
}

/// The text the core's operations on the pieces make, concatenated by the
/// engine.
pub fn assemble(ops: &PieceOps, pieces: &Array) -> Result<JsString, InputError> {
    if ops.ops().is_empty() {
        return Ok(JsString::from(""));
    }
    assemble_text(pieces, ops.ops(), ops.literals()).map_err(messages_unreadable)
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
