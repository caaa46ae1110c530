//! `serializeConversation`, pi-compatible: LLM messages flattened into the
//! plain text a summarizer reads (`[User]: …`, `[Assistant]: …`,
//! `[Tool result]: …`), so that it summarizes the conversation instead of
//! continuing it.
//!
//! # JavaScript semantics
//!
//! The rule is: **an error exactly where pi throws, and pi's text
//! everywhere else.** pi reads messages without checking them, so its output
//! on malformed input follows from JavaScript's coercions, which are
//! reproduced here:
//!
//! - A message that is not an object (a number, a string, an array) has no
//!   `role` and is skipped; so is an object whose `role` is missing or not one
//!   of the three LLM roles. A `null` message is an error (pi reads `.role`
//!   of it).
//! - Content blocks: a `null` block is an error; a block that is a number, a
//!   string or an array has no `type` and is skipped.
//! - Texts are joined with `Array.prototype.join`: a missing or `null`
//!   `text` (or `thinking`) adds nothing but still counts as a part, so an
//!   assistant message whose only text block is empty yields `[Assistant]: `.
//!   Any other value is converted as `String(value)` does: numbers as
//!   JavaScript prints them, `true`, `[object Object]`, an array as its
//!   elements joined with `,`.
//! - A tool call's name goes through a template literal: a missing name is
//!   `undefined`, `null` is `null`, the rest as above.
//! - A tool call's arguments go through `Object.entries`: an object gives its
//!   own keys in JavaScript's order (integer keys first), an array its
//!   indices, a string one entry per UTF-16 code unit (so an emoji is two
//!   lone surrogates, which `JSON.stringify` escapes), a number or boolean
//!   nothing; missing or `null` arguments are an error.
//! - An object with its own `toString` property cannot be converted to a
//!   string in JavaScript (no function can come from JSON, so the property
//!   shadows `Object.prototype.toString` with a non-function): an error.
//! - `content` must be an array, or, for a user message, a string. An
//!   assistant message whose `content` is a string yields nothing (pi
//!   iterates its characters, none of which is a block); a tool result whose
//!   `content` is a string is an error (pi calls `.filter` on it).
//! - `redacted: true` on a thinking block changes nothing: pi includes its
//!   `thinking` text.
//!
//! Where several problems exist, the one reported is the one pi trips over
//! first.

use super::error::{FieldPath, InputError};
use super::js_number::number_to_js_string;
use super::js_string::JsStr;
use super::json::{stringify, Json, JsonObject};

/// Tool results longer than this many UTF-16 code units are cut (pi's
/// `TOOL_RESULT_MAX_CHARS`).
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// pi's `serializeConversation(messages)`; see the module documentation for
/// what malformed messages do.
pub fn serialize_conversation(messages: &[Json]) -> Result<JsStr, InputError> {
    let mut out = Parts::default();
    for (i, message) in messages.iter().enumerate() {
        let at = || FieldPath::element("messages", i);
        let message = match message {
            Json::Object(o) => o,
            Json::Null => return Err(wrong_type(at(), "a message object", Some(message))),
            _ => continue,
        };
        let Some(Json::String(role)) = message.get("role") else {
            continue;
        };
        if role.eq_str("user") {
            user(message, at, &mut out)?;
        } else if role.eq_str("assistant") {
            assistant(message, at, &mut out)?;
        } else if role.eq_str("toolResult") {
            tool_result(message, at, &mut out)?;
        }
    }
    Ok(out.text)
}

/// The output: parts separated by a blank line.
#[derive(Default)]
struct Parts {
    text: JsStr,
    started: bool,
}

impl Parts {
    /// Starts a part with its label and returns the text to append to.
    fn start(&mut self, label: &str) -> &mut JsStr {
        if std::mem::replace(&mut self.started, true) {
            self.text.push_str("\n\n");
        }
        self.text.push_str(label);
        &mut self.text
    }
}

fn user(
    message: &JsonObject,
    at: impl Fn() -> FieldPath,
    out: &mut Parts,
) -> Result<(), InputError> {
    let joined;
    let content = match message.get("content") {
        Some(Json::String(s)) => s,
        Some(Json::Array(blocks)) => {
            let texts = text_blocks(blocks, &at)?;
            joined = join(&texts, "", "text", &at)?.1;
            &joined
        }
        other => {
            let path = at().field("content");
            return Err(wrong_type(path, "a string or an array", other));
        }
    };
    if !content.is_empty() {
        out.start("[User]: ").push_js(content);
    }
    Ok(())
}

fn assistant(
    message: &JsonObject,
    at: impl Fn() -> FieldPath,
    out: &mut Parts,
) -> Result<(), InputError> {
    let blocks = match message.get("content") {
        Some(Json::Array(blocks)) => blocks,
        // Iterating a string yields strings, none of which is a block.
        Some(Json::String(_)) => return Ok(()),
        other => return Err(wrong_type(at().field("content"), "an array", other)),
    };
    let mut texts = Vec::new();
    let mut thinking = Vec::new();
    let mut calls = Vec::new();
    for (j, block) in blocks.iter().enumerate() {
        let block = match block {
            Json::Object(o) => o,
            Json::Null => {
                let path = at().field("content").at(j);
                return Err(wrong_type(path, "a content block", Some(block)));
            }
            _ => continue,
        };
        if is_type(block, "text") {
            texts.push((j, block.get("text")));
        } else if is_type(block, "thinking") {
            thinking.push((j, block.get("thinking")));
        } else if is_type(block, "toolCall") {
            calls.push(tool_call(block, || at().field("content").at(j))?);
        }
    }
    // pi joins the thinking before the text; a failure there comes first.
    let thinking = join(&thinking, "\n", "thinking", &at)?;
    let texts = join(&texts, "\n", "text", &at)?;
    // A list is shown when it had parts, even empty ones.
    if thinking.0 > 0 {
        out.start("[Assistant thinking]: ").push_js(&thinking.1);
    }
    if texts.0 > 0 {
        out.start("[Assistant]: ").push_js(&texts.1);
    }
    if let Some((first, rest)) = calls.split_first() {
        let text = out.start("[Assistant tool calls]: ");
        text.push_js(first);
        for call in rest {
            text.push_str("; ");
            text.push_js(call);
        }
    }
    Ok(())
}

fn tool_result(
    message: &JsonObject,
    at: impl Fn() -> FieldPath,
    out: &mut Parts,
) -> Result<(), InputError> {
    let blocks = match message.get("content") {
        Some(Json::Array(blocks)) => blocks,
        other => return Err(wrong_type(at().field("content"), "an array", other)),
    };
    let texts = text_blocks(blocks, &at)?;
    let (_, content) = join(&texts, "", "text", &at)?;
    if content.is_empty() {
        return Ok(());
    }
    let text = out.start("[Tool result]: ");
    match content.as_units().get(..TOOL_RESULT_MAX_CHARS) {
        Some(kept) if content.len() > TOOL_RESULT_MAX_CHARS => {
            // Cut by code units, as `slice` does: a surrogate pair may split.
            text.push_units(kept);
            text.push_str("\n\n[... ");
            text.push_str(&(content.len() - TOOL_RESULT_MAX_CHARS).to_string());
            text.push_str(" more characters truncated]");
        }
        _ => text.push_js(&content),
    }
    Ok(())
}

/// The `text` of each block whose `type` is `"text"`, with the block's index.
/// A `null` block is an error (pi reads `.type` of it); other non-objects
/// are not text blocks.
fn text_blocks<'a>(
    blocks: &'a [Json],
    at: &impl Fn() -> FieldPath,
) -> Result<Vec<(usize, Option<&'a Json>)>, InputError> {
    let mut texts = Vec::new();
    for (j, block) in blocks.iter().enumerate() {
        match block {
            Json::Object(o) if is_type(o, "text") => texts.push((j, o.get("text"))),
            Json::Null => {
                let path = at().field("content").at(j);
                return Err(wrong_type(path, "a content block", Some(block)));
            }
            _ => {}
        }
    }
    Ok(texts)
}

/// `block.type === name`.
fn is_type(block: &JsonObject, name: &str) -> bool {
    matches!(block.get("type"), Some(Json::String(t)) if t.eq_str(name))
}

/// `values.join(separator)`, with the number of values joined. `field` names
/// the property each value came from, for errors.
fn join(
    values: &[(usize, Option<&Json>)],
    separator: &str,
    field: &'static str,
    at: &impl Fn() -> FieldPath,
) -> Result<(usize, JsStr), InputError> {
    let mut out = JsStr::new();
    for (n, &(j, value)) in values.iter().enumerate() {
        if n > 0 {
            out.push_str(separator);
        }
        match value {
            None | Some(Json::Null) => {}
            Some(value) => push_to_string(value, &mut out)
                .map_err(|e| e.at(at().field("content").at(j).field(field)))?,
        }
    }
    Ok((values.len(), out))
}

/// `${block.name}(k=JSON.stringify(v), …)` for a tool-call block.
fn tool_call(block: &JsonObject, at: impl Fn() -> FieldPath) -> Result<JsStr, InputError> {
    // pi builds the argument list (`Object.entries`) before reading the name.
    let mut args = JsStr::new();
    match block.get("arguments") {
        Some(Json::Object(o)) => {
            for (k, v) in o.iter() {
                push_entry(&mut args, |a| a.push_js(k), v);
            }
        }
        Some(Json::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                push_entry(&mut args, |a| a.push_str(&i.to_string()), v);
            }
        }
        Some(Json::String(s)) => {
            for (i, &unit) in s.as_units().iter().enumerate() {
                let one = Json::String(JsStr::from_units(vec![unit]));
                push_entry(&mut args, |a| a.push_str(&i.to_string()), &one);
            }
        }
        Some(Json::Number(_) | Json::Bool(_)) => {}
        other @ (None | Some(Json::Null)) => {
            return Err(wrong_type(at().field("arguments"), "an object", other));
        }
    }
    let mut call = JsStr::new();
    match block.get("name") {
        None => call.push_str("undefined"),
        Some(name) => {
            push_to_string(name, &mut call).map_err(|e| e.at(at().field("name")))?;
        }
    }
    call.push_str("(");
    call.push_js(&args);
    call.push_str(")");
    Ok(call)
}

/// Appends `, key=JSON.stringify(value)` (without the comma at first).
fn push_entry(args: &mut JsStr, key: impl FnOnce(&mut JsStr), value: &Json) {
    if !args.is_empty() {
        args.push_str(", ");
    }
    key(args);
    args.push_str("=");
    stringify(value, args);
}

/// JavaScript cannot convert an object that has its own `toString`
/// property to a string: from JSON, that property is never a function.
struct NotConvertible;

impl NotConvertible {
    fn at(self, path: FieldPath) -> InputError {
        InputError::WrongType {
            path,
            expected: "a string",
            got: "an object whose toString is not a function".into(),
        }
    }
}

/// Appends `String(value)`. Arrays are joined with `,` (their `null`
/// elements as empty strings), iteratively so that nesting cannot exhaust
/// the stack.
fn push_to_string(value: &Json, out: &mut JsStr) -> Result<(), NotConvertible> {
    let items = match value {
        Json::Array(items) => items,
        scalar => return push_non_array(scalar, out),
    };
    let mut stack = vec![(items.iter(), true)];
    while let Some((iter, first)) = stack.last_mut() {
        let Some(item) = iter.next() else {
            stack.pop();
            continue;
        };
        if !std::mem::replace(first, false) {
            out.push_str(",");
        }
        match item {
            Json::Null => {}
            Json::Array(inner) => stack.push((inner.iter(), true)),
            scalar => push_non_array(scalar, out)?,
        }
    }
    Ok(())
}

fn push_non_array(value: &Json, out: &mut JsStr) -> Result<(), NotConvertible> {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(x) => number_to_js_string(*x, out),
        Json::String(s) => out.push_js(s),
        Json::Object(o) if o.get("toString").is_some() => return Err(NotConvertible),
        Json::Object(_) => out.push_str("[object Object]"),
        // Arrays are handled by `push_to_string`.
        Json::Array(_) => {}
    }
    Ok(())
}

/// How a value is described in an error message, as the boundary describes
/// JavaScript values; `None` is a missing property (`undefined`).
pub fn describe(value: Option<&Json>) -> &'static str {
    match value {
        None => "undefined",
        Some(Json::Null) => "null",
        Some(Json::Bool(_)) => "a boolean",
        Some(Json::Number(_)) => "a number",
        Some(Json::String(_)) => "a string",
        Some(Json::Array(_)) => "an array",
        Some(Json::Object(_)) => "an object",
    }
}

fn wrong_type(path: FieldPath, expected: &'static str, got: Option<&Json>) -> InputError {
    InputError::WrongType {
        path,
        expected,
        got: describe(got).into(),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::core::json::{parse, stringified, JsonObject};
    use proptest::prelude::*;
    use std::path::Path;

    /// Messages (JSON) and pi's text for them (a JSON string literal, so that
    /// lone surrogates can be written). The texts were printed by pi 0.73.1's
    /// `serializeConversation` in Node; `matches_pi_in_node` checks them again.
    const CASES: &[(&str, &str)] = &[
        (r#"[]"#, r#""""#),
        (
            r#"[{"role":"user","content":"Hello"}]"#,
            r#""[User]: Hello""#,
        ),
        (
            r#"[{"role":"user","content":""},{"role":"user","content":[]},{"role":"user","content":[{"type":"text","text":""}]},{"role":"toolResult","content":[]},{"role":"assistant","content":[]}]"#,
            r#""""#,
        ),
        (
            r#"[{"role":"user","content":[{"type":"text","text":"Look at "},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"this"}]}]"#,
            r#""[User]: Look at this""#,
        ),
        (
            r#"[{"role":"user","content":"héllo 日本語 😀 \u2028 tab\t end"},{"role":"assistant","content":[{"type":"text","text":"a\n\nb"}]}]"#,
            r#""[User]: héllo 日本語 😀 \u2028 tab\t end\n\n[Assistant]: a\n\nb""#,
        ),
        (
            r#"[{"role":"user","content":"lone \uD800 high, lone \uDC00 low, reversed \uDE00\uD83D"}]"#,
            r#""[User]: lone \ud800 high, lone \udc00 low, reversed \ude00\ud83d""#,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"thinking","thinking":"plan A"},{"type":"text","text":"First."},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"src/a.rs"}},{"type":"text","text":"Second."},{"type":"thinking","thinking":"plan B","redacted":true},{"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"ls -la","timeout":30}}]}]"#,
            r#""[Assistant thinking]: plan A\nplan B\n\n[Assistant]: First.\nSecond.\n\n[Assistant tool calls]: read(path=\"src/a.rs\"); bash(command=\"ls -la\", timeout=30)""#,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"text","text":""}]}]"#,
            r#""[Assistant]: ""#,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"text"},{"type":"text","text":null},{"type":"thinking"}]}]"#,
            r#""[Assistant thinking]: \n\n[Assistant]: \n""#,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"thinking","thinking":"","redacted":true}]}]"#,
            r#""[Assistant thinking]: ""#,
        ),
        (
            r#"[{"role":"assistant","content":"plain string content is iterated, not shown"}]"#,
            r#""""#,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"toolCall","arguments":{}},{"type":"toolCall","name":null,"arguments":{"a":null}},{"type":"toolCall","name":1e21,"arguments":[]},{"type":"toolCall","name":["a",null,["b",true]],"arguments":{}},{"type":"toolCall","name":{"a":1},"arguments":{}},{"type":"toolCall","name":-0,"arguments":{}}]}]"#,
            r#""[Assistant tool calls]: undefined(); null(a=null); 1e+21(); a,,b,true(); [object Object](); 0()""#,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"toolCall","name":"f","arguments":{"b":1,"10":"ten","2":"two","a":{"z":1,"1":[1,{"y":null,"0":false}]},"01":"not an index","-1":0,"4294967295":"too big","4294967294":"max index"}}]}]"#,
            r#""[Assistant tool calls]: f(2=\"two\", 10=\"ten\", 4294967294=\"max index\", b=1, a={\"1\":[1,{\"0\":false,\"y\":null}],\"z\":1}, 01=\"not an index\", -1=0, 4294967295=\"too big\")""#,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"toolCall","name":"n","arguments":{"big":1e21,"negzero":-0,"tenth":0.1,"tiny":5e-324,"small":1e-7,"safe":9007199254740993,"neg":-1.5e-10,"int":100,"exp":1.5e300}}]}]"#,
            r#""[Assistant tool calls]: n(big=1e+21, negzero=0, tenth=0.1, tiny=5e-324, small=1e-7, safe=9007199254740992, neg=-1.5e-10, int=100, exp=1.5e+300)""#,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"toolCall","name":"u","arguments":{"emoji":"😀","cjk":"日本語","lone":"\uD800x","ctl":"\u0000\u001f\b\f\n\r\t\"\\/","sep":"\u2028\u2029","\uDC00key":1,"é":"é"}}]}]"#,
            r#""[Assistant tool calls]: u(emoji=\"😀\", cjk=\"日本語\", lone=\"\\ud800x\", ctl=\"\\u0000\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\", sep=\"\u2028\u2029\", \udc00key=1, é=\"é\")""#,
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"toolCall","name":"arr","arguments":[1,"two",{"three":3},null]},{"type":"toolCall","name":"str","arguments":"a😀"},{"type":"toolCall","name":"num","arguments":42},{"type":"toolCall","name":"bool","arguments":false},{"type":"toolCall","name":"proto","arguments":{"toString":1,"__proto__":{"x":1}}}]}]"#,
            r#""[Assistant tool calls]: arr(0=1, 1=\"two\", 2={\"three\":3}, 3=null); str(0=\"a\", 1=\"\\ud83d\", 2=\"\\ude00\"); num(); bool(); proto(toString=1, __proto__={\"x\":1})""#,
        ),
        (
            r#"[{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"line 1\n"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"line 2"}],"isError":false}]"#,
            r#""[Tool result]: line 1\nline 2""#,
        ),
        (
            r#"[{"role":"toolResult","content":[{"type":"text","text":""},{"type":"image","data":""}]},{"role":"toolResult","content":[1,"x",[],{"type":"text","text":"kept"},{"text":"no type"}]}]"#,
            r#""[Tool result]: kept""#,
        ),
        (
            r#"[{"role":"user","content":[{"type":"text","text":42},{"type":"text","text":true},{"type":"text","text":{"a":1}},{"type":"text","text":[null,1.5,["x",[]],{}]},{"type":"text","text":-0}]}]"#,
            r#""[User]: 42true[object Object],1.5,x,,[object Object]0""#,
        ),
        (
            r#"[{"role":"bashExecution","command":"ls","output":"x"},{"role":"custom","content":"c"},{"role":"compactionSummary","summary":"s"},{"content":"no role"},{"role":5,"content":"numeric role"},{"role":"User","content":"case matters"},5,"user",[{"role":"user","content":"in an array"}],true,{"role":"user","content":"only this"}]"#,
            r#""[User]: only this""#,
        ),
    ];

    /// Messages on which pi throws a `TypeError`, and our message for each.
    /// Where there are several problems, the one pi meets first is named.
    const ERRORS: &[(&str, &str)] = &[
        (
            r#"[null]"#,
            "messages[0] must be a message object, got null",
        ),
        (
            r#"[{"role":"user"}]"#,
            "messages[0].content must be a string or an array, got undefined",
        ),
        (
            r#"[{"role":"user","content":5}]"#,
            "messages[0].content must be a string or an array, got a number",
        ),
        (
            r#"[{"role":"user","content":{"filter":1}}]"#,
            "messages[0].content must be a string or an array, got an object",
        ),
        (
            r#"[{"role":"user","content":[{"type":"text","text":"a"},null]}]"#,
            "messages[0].content[1] must be a content block, got null",
        ),
        (
            r#"[{"role":"assistant"}]"#,
            "messages[0].content must be an array, got undefined",
        ),
        (
            r#"[{"role":"assistant","content":null}]"#,
            "messages[0].content must be an array, got null",
        ),
        (
            r#"[{"role":"assistant","content":{}}]"#,
            "messages[0].content must be an array, got an object",
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"text","text":"a"},null]}]"#,
            "messages[0].content[1] must be a content block, got null",
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"toolCall","name":"x"}]}]"#,
            "messages[0].content[0].arguments must be an object, got undefined",
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"toolCall","name":"x","arguments":null}]}]"#,
            "messages[0].content[0].arguments must be an object, got null",
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"text","text":{"toString":1}}]}]"#,
            "messages[0].content[0].text must be a string, got an object whose toString is not a function",
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"thinking","thinking":[1,{"toString":null}]}]}]"#,
            "messages[0].content[1].thinking must be a string, got an object whose toString is not a function",
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"toolCall","name":{"toString":"x"},"arguments":{}}]}]"#,
            "messages[0].content[0].name must be a string, got an object whose toString is not a function",
        ),
        (
            r#"[{"role":"toolResult","content":"a string"}]"#,
            "messages[0].content must be an array, got a string",
        ),
        (
            r#"[{"role":"toolResult"}]"#,
            "messages[0].content must be an array, got undefined",
        ),
        (
            r#"[{"role":"toolResult","content":[null]}]"#,
            "messages[0].content[0] must be a content block, got null",
        ),
        (
            r#"[{"role":"user","content":"fine"},{"role":"toolResult","content":"x"}]"#,
            "messages[1].content must be an array, got a string",
        ),
        // pi joins the thinking parts before the text parts.
        (
            r#"[{"role":"assistant","content":[{"type":"text","text":{"toString":1}},{"type":"thinking","thinking":{"toString":1}}]}]"#,
            "messages[0].content[1].thinking must be a string, got an object whose toString is not a function",
        ),
        // pi lists the arguments before it reads the name.
        (
            r#"[{"role":"assistant","content":[{"type":"toolCall","name":{"toString":1}}]}]"#,
            "messages[0].content[0].arguments must be an object, got undefined",
        ),
        // pi filters the blocks (reading `.type`) before it joins the texts.
        (
            r#"[{"role":"user","content":[{"type":"text","text":{"toString":1}},null]}]"#,
            "messages[0].content[1] must be a content block, got null",
        ),
        (
            r#"[{"role":"assistant","content":[{"type":"text","text":{"toString":1}},null]}]"#,
            "messages[0].content[1] must be a content block, got null",
        ),
    ];

    fn messages(json: &str) -> Vec<Json> {
        match parse(json) {
            Ok(Json::Array(items)) => items,
            other => panic!("test input is not an array: {other:?}"),
        }
    }

    fn js_literal(json: &str) -> JsStr {
        match parse(json) {
            Ok(Json::String(s)) => s,
            other => panic!("expected a JSON string literal: {other:?}"),
        }
    }

    fn text(s: &str) -> Json {
        Json::Object(JsonObject::from_entries(vec![
            (JsStr::from("type"), Json::from("text")),
            (JsStr::from("text"), Json::from(s)),
        ]))
    }

    fn message(role: &str, content: Vec<Json>) -> Json {
        Json::Object(JsonObject::from_entries(vec![
            (JsStr::from("role"), Json::from(role)),
            (JsStr::from("content"), Json::Array(content)),
        ]))
    }

    #[test]
    fn matches_pis_text() {
        for (input, want) in CASES {
            let got = serialize_conversation(&messages(input));
            assert_eq!(got, Ok(js_literal(want)), "for {input}");
        }
    }

    #[test]
    fn errors_name_the_field_pi_trips_over() {
        for (input, want) in ERRORS {
            match serialize_conversation(&messages(input)) {
                Err(e) => assert_eq!(e.to_string(), *want, "for {input}"),
                Ok(text) => panic!("{input} gave {text:?}, expected an error"),
            }
        }
    }

    /// Tool results of `len` code units, made of `unit` after `prefix`.
    fn tool_result_of(prefix: &[u16], len: usize) -> (Vec<Json>, Vec<u16>) {
        let mut units = prefix.to_vec();
        units.resize(len, u16::from(b'x'));
        let block = Json::Object(JsonObject::from_entries(vec![
            (JsStr::from("type"), Json::from("text")),
            (
                JsStr::from("text"),
                Json::String(JsStr::from_units(units.clone())),
            ),
        ]));
        (vec![message("toolResult", vec![block])], units)
    }

    fn truncation_inputs() -> Vec<Vec<Json>> {
        let emoji = [0xD83D, 0xDE00];
        let mut straddle = vec![u16::from(b'a'); 1999];
        straddle.extend(emoji);
        let mut ends_with_pair = vec![u16::from(b'a'); 1998];
        ends_with_pair.extend(emoji);
        vec![
            tool_result_of(&[], 1999).0,
            tool_result_of(&[], 2000).0,
            tool_result_of(&[], 2001).0,
            tool_result_of(&[], 12345).0,
            tool_result_of(&straddle, 2001).0,
            tool_result_of(&straddle, 2500).0,
            tool_result_of(&ends_with_pair, 2000).0,
            tool_result_of(&ends_with_pair, 2001).0,
            // Two blocks whose join crosses the limit.
            vec![message(
                "toolResult",
                vec![text(&"p".repeat(1500)), text(&"q".repeat(600))],
            )],
            // User text is never cut.
            vec![message("user", vec![text(&"u".repeat(5000))])],
        ]
    }

    #[test]
    fn tool_results_are_cut_at_2000_code_units() {
        let label: Vec<u16> = "[Tool result]: ".encode_utf16().collect();
        let expect = |units: &[u16]| -> Vec<u16> {
            let mut out = label.clone();
            if units.len() <= TOOL_RESULT_MAX_CHARS {
                out.extend_from_slice(units);
            } else {
                out.extend_from_slice(&units[..TOOL_RESULT_MAX_CHARS]);
                let marker = format!(
                    "\n\n[... {} more characters truncated]",
                    units.len() - TOOL_RESULT_MAX_CHARS
                );
                out.extend(marker.encode_utf16());
            }
            out
        };
        for len in [0, 1, 1999, 2000, 2001, 4000] {
            let (input, units) = tool_result_of(&[], len);
            let got = serialize_conversation(&input).unwrap();
            let want = if len == 0 { vec![] } else { expect(&units) };
            assert_eq!(got.as_units(), want.as_slice(), "length {len}");
        }
        let got = |input: &[Json]| serialize_conversation(input).unwrap().to_string_lossy();
        assert!(got(&tool_result_of(&[], 2000).0).ends_with('x'));
        assert!(
            got(&tool_result_of(&[], 2001).0).ends_with("x\n\n[... 1 more characters truncated]")
        );

        // A pair straddling the limit: the high surrogate is kept alone.
        let inputs = truncation_inputs();
        let out = serialize_conversation(&inputs[4]).unwrap();
        let units = out.as_units();
        let cut = label.len() + TOOL_RESULT_MAX_CHARS;
        assert_eq!(units[cut - 1], 0xD83D);
        assert_eq!(units[cut], u16::from(b'\n'));
        assert!(out
            .to_string_lossy()
            .ends_with("\n\n[... 1 more characters truncated]"));
        // A pair ending exactly at the limit stays whole.
        let out = serialize_conversation(&inputs[6]).unwrap();
        assert_eq!(out.len(), label.len() + 2000);
        assert_eq!(&out.as_units()[out.len() - 2..], &[0xD83D, 0xDE00]);
        // The limit applies to the joined text.
        let out = serialize_conversation(&inputs[8])
            .unwrap()
            .to_string_lossy();
        assert!(out.ends_with(&format!(
            "{}\n\n[... 100 more characters truncated]",
            "q".repeat(500)
        )));
        let out = serialize_conversation(&inputs[9]).unwrap();
        assert_eq!(out.len(), "[User]: ".len() + 5000);
    }

    #[test]
    fn parts_are_separated_by_blank_lines_in_message_order() {
        let input = messages(
            r#"[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"toolCall","name":"ls","arguments":{}}]},{"role":"toolResult","content":[{"type":"text","text":"r"}]},{"role":"assistant","content":[{"type":"text","text":"a"}]}]"#,
        );
        assert_eq!(
            serialize_conversation(&input).unwrap().to_string_lossy(),
            "[User]: q\n\n[Assistant tool calls]: ls()\n\n[Tool result]: r\n\n[Assistant]: a"
        );
    }

    #[test]
    fn deeply_nested_values_do_not_exhaust_the_stack() {
        // `String([[[…]]])` and `JSON.stringify` of deep nesting, built
        // without the parser's depth limit.
        let mut deep = Json::from("x");
        for _ in 0..100_000 {
            deep = Json::Array(vec![deep]);
        }
        let block = Json::Object(JsonObject::from_entries(vec![
            (JsStr::from("type"), Json::from("text")),
            (JsStr::from("text"), deep),
        ]));
        let input = vec![message("user", vec![block])];
        assert_eq!(
            serialize_conversation(&input).unwrap().to_string_lossy(),
            "[User]: x"
        );
        // Dropping the value recurses (the derived `Drop`); leak it instead.
        std::mem::forget(input);
    }

    // ---- Comparison with pi in Node -------------------------------------------

    const PI: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/node_modules/@mariozechner/pi-coding-agent/dist/core"
    );

    /// Runs an ES module script in Node with `args`, feeding `input` on stdin;
    /// `None` (with a note) when Node or pi is not installed.
    fn node(script: &str, args: &[&str], input: &str) -> Option<String> {
        use std::io::Write;
        use std::process::{Command, Stdio};
        if Command::new("node").arg("--version").output().is_err() {
            eprintln!("node not on PATH: skipping the comparison with pi");
            return None;
        }
        if !Path::new(PI).exists() {
            eprintln!("pi is not installed under node_modules: skipping the comparison");
            return None;
        }
        let mut child = Command::new("node")
            .args(["--input-type=module", "-e", script])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node starts");
        let mut stdin = child.stdin.take().expect("stdin");
        let input = input.to_owned();
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let output = child.wait_with_output().expect("node runs");
        writer.join().expect("writer").expect("stdin written");
        assert!(output.status.success(), "node failed");
        Some(String::from_utf8(output.stdout).expect("UTF-8 output"))
    }

    /// One JSON line per input: `{"ok": text}` or `{"error": "TypeError: …"}`.
    const RUN_PI: &str = r#"
        import { pathToFileURL } from "node:url";
        import { readFileSync } from "node:fs";
        const { serializeConversation } = await import(pathToFileURL(process.argv[1]).href);
        const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.length);
        process.stdout.write(lines.map((l) => {
          try { return JSON.stringify({ ok: serializeConversation(JSON.parse(l)) }); }
          catch (e) { return JSON.stringify({ error: `${e?.constructor?.name}: ${e?.message}` }); }
        }).join("\n"));
    "#;

    /// pi's result for each input: `Ok(text)` or `Err(its error)`.
    fn pi_results(inputs: &[Vec<Json>]) -> Option<Vec<Result<JsStr, String>>> {
        let lines: Vec<String> = inputs
            .iter()
            .map(|m| stringified(&Json::Array(m.clone())).to_string_lossy())
            .collect();
        let utils = format!("{PI}/compaction/utils.js");
        let out = node(RUN_PI, &[&utils], &lines.join("\n"))?;
        let results: Vec<_> = out
            .split('\n')
            .map(|line| match parse(line) {
                Ok(v) => match (v.get("ok"), v.get("error")) {
                    (Some(Json::String(s)), _) => Ok(s.clone()),
                    (_, Some(Json::String(e))) => Err(e.to_string_lossy()),
                    _ => panic!("unexpected line from node: {line}"),
                },
                Err(e) => panic!("bad line from node ({e}): {line}"),
            })
            .collect();
        assert_eq!(results.len(), inputs.len());
        Some(results)
    }

    /// The number of inputs pi threw on; `None` when skipped.
    fn assert_same_as_pi(inputs: &[Vec<Json>]) -> Option<usize> {
        let expected = pi_results(inputs)?;
        let mut errors = 0;
        for (input, want) in inputs.iter().zip(expected) {
            let ours = serialize_conversation(input);
            let shown = || stringified(&Json::Array(input.clone())).to_string_lossy();
            match (ours, want) {
                (Ok(ours), Ok(want)) => assert_eq!(ours, want, "for {}", shown()),
                (Err(_), Err(want)) => {
                    assert!(want.starts_with("TypeError:"), "pi threw {want}");
                    errors += 1;
                }
                (ours, want) => panic!("for {}: ours {ours:?}, pi {want:?}", shown()),
            }
        }
        Some(errors)
    }

    #[test]
    fn matches_pi_in_node() {
        let mut inputs: Vec<Vec<Json>> = CASES.iter().map(|(m, _)| messages(m)).collect();
        inputs.extend(ERRORS.iter().map(|(m, _)| messages(m)));
        inputs.extend(truncation_inputs());
        if let Some(errors) = assert_same_as_pi(&inputs) {
            assert_eq!(errors, ERRORS.len());
        }
    }

    /// Random message-shaped values, many of them malformed, compared with
    /// pi: the same text, or an error where pi throws.
    #[test]
    fn random_messages_match_pi_in_node() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let inputs: Vec<Vec<Json>> = (0..400)
            .map(|_| (0..rng.below(5)).map(|_| gen_message(&mut rng)).collect())
            .collect();
        // Both outcomes must be exercised.
        if let Some(errors) = assert_same_as_pi(&inputs) {
            assert!(errors > 20 && errors < 300, "{errors} errors");
        }
    }

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn pick<T: Clone>(&mut self, items: &[T]) -> T {
            items[self.below(items.len())].clone()
        }
    }

    fn gen_string(rng: &mut Rng) -> Json {
        let pieces: &[&[u16]] = &[
            &[0x61],
            &[0x20],
            &[0x0A],
            &[0x22],
            &[0xE9],
            &[0x65E5],
            &[0xD83D, 0xDE00],
            &[0xD800],
            &[0xDC00],
            &[0x2028],
            &[0x00],
        ];
        let mut units = Vec::new();
        let long = rng.below(10) == 0;
        for _ in 0..rng.below(if long { 2100 } else { 6 }) {
            units.extend_from_slice(rng.pick(pieces));
        }
        Json::String(JsStr::from_units(units))
    }

    fn gen_scalar(rng: &mut Rng) -> Json {
        match rng.below(8) {
            0 => Json::Null,
            1 => Json::Bool(rng.below(2) == 0),
            2 => Json::Number(rng.pick(&[0.0, -0.0, 1.5, 1e21, 5e-324, -7.0, 0.1, 123456789.0])),
            _ => gen_string(rng),
        }
    }

    fn gen_key(rng: &mut Rng) -> JsStr {
        JsStr::from(rng.pick(&[
            "a",
            "b",
            "path",
            "0",
            "7",
            "10",
            "01",
            "-1",
            "toString",
            "é",
            "4294967295",
        ]))
    }

    /// Arguments, names and texts: scalars, arrays and objects, a few levels deep.
    fn gen_value(rng: &mut Rng, depth: usize) -> Json {
        match if depth > 2 { 0 } else { rng.below(5) } {
            3 => Json::Array(
                (0..rng.below(4))
                    .map(|_| gen_value(rng, depth + 1))
                    .collect(),
            ),
            4 => Json::Object(JsonObject::from_entries(
                (0..rng.below(4))
                    .map(|_| (gen_key(rng), gen_value(rng, depth + 1)))
                    .collect(),
            )),
            _ => gen_scalar(rng),
        }
    }

    fn object(entries: Vec<(&str, Option<Json>)>) -> Json {
        Json::Object(JsonObject::from_entries(
            entries
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (JsStr::from(k), v)))
                .collect(),
        ))
    }

    /// Usually well-formed, each field sometimes missing or odd.
    fn sometimes(rng: &mut Rng, good: Json) -> Option<Json> {
        match rng.below(12) {
            0 => None,
            1 => Some(gen_value(rng, 1)),
            _ => Some(good),
        }
    }

    fn gen_block(rng: &mut Rng) -> Json {
        match rng.below(20) {
            0 => return Json::Null,
            1 => return gen_scalar(rng),
            _ => {}
        }
        let kind = rng.pick(&[
            "text", "text", "thinking", "toolCall", "toolCall", "image", "other",
        ]);
        let ty = sometimes(rng, Json::from(kind));
        match kind {
            "toolCall" => {
                let name = gen_string(rng);
                let name = sometimes(rng, name);
                let args = Json::Object(JsonObject::from_entries(
                    (0..rng.below(4))
                        .map(|_| (gen_key(rng), gen_value(rng, 1)))
                        .collect(),
                ));
                let args = sometimes(rng, args);
                object(vec![("type", ty), ("name", name), ("arguments", args)])
            }
            "thinking" => {
                let t = gen_string(rng);
                let t = sometimes(rng, t);
                object(vec![
                    ("type", ty),
                    ("thinking", t),
                    ("redacted", Some(Json::Bool(rng.below(2) == 0))),
                ])
            }
            _ => {
                let t = gen_string(rng);
                let t = sometimes(rng, t);
                object(vec![("type", ty), ("text", t)])
            }
        }
    }

    fn gen_message(rng: &mut Rng) -> Json {
        if rng.below(60) == 0 {
            return gen_scalar(rng);
        }
        let role = rng.pick(&[
            "user",
            "assistant",
            "toolResult",
            "user",
            "assistant",
            "toolResult",
            "custom",
        ]);
        let blocks = Json::Array((0..rng.below(5)).map(|_| gen_block(rng)).collect());
        let content = match rng.below(10) {
            0 => gen_string(rng),
            _ => blocks,
        };
        let role = sometimes(rng, Json::from(role));
        let content = sometimes(rng, content);
        object(vec![("role", role), ("content", content)])
    }

    /// The messages of a pi session file, converted by pi's `convertToLlm`,
    /// and pi's text for them.
    const RUN_PI_ON_SESSION: &str = r#"
        import { pathToFileURL } from "node:url";
        import { readFileSync } from "node:fs";
        const [, core, file] = process.argv;
        const { serializeConversation } = await import(pathToFileURL(`${core}/compaction/utils.js`).href);
        const { convertToLlm } = await import(pathToFileURL(`${core}/messages.js`).href);
        const messages = readFileSync(file, "utf8").split("\n").filter((l) => l.length)
          .map((l) => JSON.parse(l)).filter((e) => e.type === "message").map((e) => e.message);
        const llm = convertToLlm(messages);
        process.stdout.write(JSON.stringify({ llm, text: serializeConversation(llm) }));
    "#;

    fn fixture(name: &str) -> String {
        format!("{}/../shared/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    /// pi's (LLM messages, text) for a session file.
    fn pi_on_session(file: &str) -> Option<(Vec<Json>, JsStr)> {
        if !Path::new(file).exists() {
            eprintln!("{file} is missing: skipping");
            return None;
        }
        let out = node(RUN_PI_ON_SESSION, &[PI, file], "")?;
        let out = parse(&out).expect("node printed JSON");
        let llm = out
            .get("llm")
            .and_then(Json::as_array)
            .expect("llm")
            .to_vec();
        let text = out
            .get("text")
            .and_then(Json::as_str)
            .expect("text")
            .clone();
        Some((llm, text))
    }

    #[test]
    fn large_session_matches_pi() {
        let file = fixture("pi-large-session.jsonl");
        let Some((llm, want)) = pi_on_session(&file) else {
            return;
        };
        // Parsed here, from the file: pi's convertToLlm keeps these as they are.
        let text = std::fs::read_to_string(&file).expect("fixture");
        let mut ours = Vec::new();
        for line in text.lines().filter(|l| !l.is_empty()) {
            let entry = parse(line).expect("fixture line");
            if entry
                .get("type")
                .and_then(Json::as_str)
                .is_some_and(|t| t.eq_str("message"))
            {
                ours.push(entry.get("message").expect("message").clone());
            }
        }
        assert_eq!(ours.len(), 914);
        assert!(ours == llm, "convertToLlm changed the messages");
        let got = serialize_conversation(&ours).expect("serializes");
        // Not vacuous: a long text with cut tool results.
        assert!(want.len() > 200_000, "{}", want.len());
        assert!(want
            .to_string_lossy()
            .contains("more characters truncated]"));
        assert!(got == want, "text differs from pi's");
    }

    #[test]
    fn session_with_bash_executions_matches_pi() {
        let Some((llm, want)) = pi_on_session(&fixture("pi-before-compaction.jsonl")) else {
            return;
        };
        assert!(want.len() > 200_000, "{}", want.len());
        assert!(serialize_conversation(&llm).expect("serializes") == want);
    }

    // ---- Never panics ----------------------------------------------------------

    fn arb_leaf() -> impl Strategy<Value = Json> {
        prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<f64>().prop_map(Json::Number),
            proptest::collection::vec(any::<u16>(), 0..6)
                .prop_map(|u| Json::String(JsStr::from_units(u))),
            proptest::sample::select(vec![
                "user",
                "assistant",
                "toolResult",
                "text",
                "thinking",
                "toolCall",
            ])
            .prop_map(Json::from),
        ]
    }

    fn arb_json() -> impl Strategy<Value = Json> {
        let key = proptest::sample::select(vec![
            "role",
            "content",
            "type",
            "text",
            "thinking",
            "name",
            "arguments",
            "toString",
            "0",
            "x",
        ]);
        arb_leaf().prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
                proptest::collection::vec((key.clone(), inner), 0..6).prop_map(|e| {
                    Json::Object(JsonObject::from_entries(
                        e.into_iter().map(|(k, v)| (JsStr::from(k), v)).collect(),
                    ))
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics(input in proptest::collection::vec(arb_json(), 0..6)) {
            // Errors are fine; a panic would abort the wasm module.
            let _ = serialize_conversation(&input);
        }

        #[test]
        fn well_formed_conversations_always_serialize(
            turns in proptest::collection::vec((0usize..3, ".{0,40}"), 0..8)
        ) {
            let input: Vec<Json> = turns.iter().map(|(role, s)| match role {
                0 => message("user", vec![text(s)]),
                1 => message("assistant", vec![text(s)]),
                _ => message("toolResult", vec![text(s)]),
            }).collect();
            let out = serialize_conversation(&input).unwrap().to_string_lossy();
            let parts: Vec<String> = turns.iter().filter_map(|(role, s)| match role {
                0 if !s.is_empty() => Some(format!("[User]: {s}")),
                1 => Some(format!("[Assistant]: {s}")),
                2 if !s.is_empty() => Some(format!("[Tool result]: {s}")),
                _ => None,
            }).collect();
            prop_assert_eq!(out, parts.join("\n\n"));
        }
    }
}
