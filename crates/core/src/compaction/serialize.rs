//! `serializeConversation`, pi-compatible: LLM messages flattened into the
//! plain text a summarizer reads (`[User]: …`, `[Assistant]: …`,
//! `[Tool result]: …`), so that it summarizes the conversation instead of
//! continuing it.
//!
//! # Sources and sinks
//!
//! The serializer reads messages through a [`MessageSource`]: each message
//! comes as the facts pi's serializer reads from it (its role, its content,
//! each block's type, the text, thinking, name and arguments it reads, each
//! already converted as JavaScript converts it), with a fault wherever that
//! read or conversion throws in JavaScript. The decisions — what is shown,
//! in which order, which fault is reported — are made here, in pi's order
//! of reads, so the error reported is the one pi meets first. The text is
//! written to a [`Sink`] made of the source's own pieces: natively a
//! [`JsStr`] built from [`Json`] values ([`serialize_conversation`]); at the
//! boundary the engine gathers the caller's objects and concatenates its
//! own strings, so nothing is copied and every value converts exactly as it
//! does for pi (`undefined`, functions, BigInts, cycles in fields pi never
//! reads).
//!
//! # JavaScript semantics
//!
//! The rule is: **an error exactly where pi throws, and pi's text
//! everywhere else.** pi reads messages without checking them, so its output
//! on malformed input follows from JavaScript's coercions, which are
//! reproduced here for JSON values:
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

use crate::error::{FieldPath, InputError};
use crate::js::json::{stringify, Json, JsonObject};
use crate::js::number::{integer_to_string, number_to_js_string};
use crate::js::string::JsStr;
use std::borrow::Cow;

pub mod words;

/// Tool results longer than this many UTF-16 code units are cut (pi's
/// `TOOL_RESULT_MAX_CHARS`).
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// A piece of text the output is made of: one of the caller's strings, or
/// one the source converted.
pub trait Piece {
    /// JavaScript's `.length`: UTF-16 code units.
    fn units(&self) -> usize;
}

/// Where the text goes.
pub trait Sink<T> {
    fn literal(&mut self, s: &str);
    fn text(&mut self, t: &T);
    /// The first `units` code units of `t`, as `t.slice(0, units)`: a
    /// surrogate pair may be split.
    fn text_prefix(&mut self, t: &T, units: usize);
}

/// The messages, one at a time, as facts read by the source.
pub trait MessageSource {
    type Text: Piece;
    /// A read or conversion that fails; explained only when reported.
    type Fault;
    /// The next message; `None` after the last.
    fn next_message(&mut self) -> Option<Message<Self::Text, Self::Fault>>;
    /// What a fault found: a value's description ("null", "a number") where
    /// it has the wrong type, what was thrown where reading threw.
    fn explain(&self, fault: &Self::Fault) -> String;
}

/// What pi's serializer reads from `messages[i]`.
pub enum Message<T, F> {
    /// `null` or `undefined`: pi reads `.role` of it.
    Nullish(F),
    /// Reading the element threw.
    Threw(F),
    /// Reading `role` threw.
    RoleThrew(F),
    /// Any other role, or none.
    Skipped,
    User(Content<T, F>),
    Assistant(Content<T, F>),
    ToolResult(Content<T, F>),
}

/// A message's `content`.
pub enum Content<T, F> {
    /// Reading it threw.
    Threw(F),
    /// Shown for a user message; an error for a tool result (pi calls
    /// `.filter` on it); nothing for an assistant message (iterating a string
    /// yields strings, none of which is a block).
    String(T),
    /// The elements `filter` visits (user and tool-result messages: an
    /// array), or those `for…of` yields (assistant messages: any iterable).
    Blocks(Vec<Block<T, F>>),
    /// Neither a string nor an array.
    Other(F),
}

/// One element of `content`, with the fields pi reads from it for the
/// message's role (thinking and tool calls only in assistant messages).
pub enum Block<T, F> {
    /// A hole in a sparse array: `filter` skips it, `for…of` reads
    /// `undefined`.
    Hole,
    /// `null` or `undefined`.
    Nullish(F),
    /// Reading the element threw.
    Threw(F),
    /// Reading `type` threw.
    TypeThrew(F),
    /// A type pi does not read in this message.
    Other,
    Text(Value<T, F>),
    Thinking(Value<T, F>),
    ToolCall(ToolCall<T, F>),
}

/// A `text` or `thinking` value converted as `Array.prototype.join` converts
/// it, or a tool call's `name` converted by a template literal.
pub enum Value<T, F> {
    /// Reading it threw.
    ReadThrew(F),
    /// `None` for `null` and `undefined`, which `join` turns into nothing.
    Text(Option<T>),
    /// Converting it to a string threw.
    NotText(F),
}

pub struct ToolCall<T, F> {
    pub arguments: Arguments<T, F>,
    /// Not used when `arguments` fails: pi reads the name after them.
    pub name: Value<T, F>,
}

/// `Object.entries(block.arguments)`.
pub enum Arguments<T, F> {
    /// Reading `arguments` threw.
    ReadThrew(F),
    /// `null` or `undefined`.
    Nullish(F),
    /// `Object.entries` threw.
    EntriesThrew(F),
    /// Each key, with `${JSON.stringify(value)}` or what it threw.
    Entries(Vec<(T, Result<T, F>)>),
}

/// pi's `serializeConversation(messages)` on JSON values; see the module
/// documentation for what malformed messages do.
pub fn serialize_conversation(messages: &[Json]) -> Result<JsStr, InputError> {
    let mut out = JsStr::new();
    serialize(&mut JsonMessages(messages.iter()), &mut out)?;
    Ok(out)
}

/// pi's `serializeConversation` over any source, written to `out`.
pub fn serialize<S, K>(source: &mut S, out: &mut K) -> Result<(), InputError>
where
    S: MessageSource,
    K: Sink<S::Text>,
{
    let mut parts = Parts {
        out,
        started: false,
    };
    for i in 0.. {
        let Some(message) = source.next_message() else {
            break;
        };
        let at = At::message(i);
        let (fault, at, expected) = match &message {
            Message::User(content) => {
                user(source, content, i, &mut parts)?;
                continue;
            }
            Message::Assistant(content) => {
                assistant(source, content, i, &mut parts)?;
                continue;
            }
            Message::ToolResult(content) => {
                tool_result(source, content, i, &mut parts)?;
                continue;
            }
            Message::Skipped => continue,
            Message::Nullish(f) => (f, at, Some("a message object")),
            Message::Threw(f) => (f, at, None),
            Message::RoleThrew(f) => (f, at.field("role"), None),
        };
        return Err(fail(source, at, expected, fault));
    }
    Ok(())
}

/// Where a fault is: `messages[i]`, a block of its `content`, or a field of
/// either.
#[derive(Clone, Copy)]
struct At {
    message: usize,
    block: Option<usize>,
    field: Option<&'static str>,
}

impl At {
    fn message(i: usize) -> At {
        At {
            message: i,
            block: None,
            field: None,
        }
    }

    fn block(i: usize, j: usize) -> At {
        At {
            block: Some(j),
            ..At::message(i)
        }
    }

    fn field(self, name: &'static str) -> At {
        At {
            field: Some(name),
            ..self
        }
    }
}

/// The error for a fault at `at`: `expected` names what the value should
/// have been; without it, reading (or iterating) threw.
fn error_at(at: At, expected: Option<&'static str>, explanation: String) -> InputError {
    let mut path = FieldPath::element("messages", at.message);
    if let Some(j) = at.block {
        path = path.field("content").at(j);
    }
    if let Some(name) = at.field {
        path = path.field(name);
    }
    match expected {
        Some(expected) => InputError::WrongType {
            path,
            expected,
            got: explanation,
        },
        None => InputError::Unreadable {
            path,
            reason: explanation,
        },
    }
}

fn fail<S: MessageSource>(
    source: &S,
    at: At,
    expected: Option<&'static str>,
    fault: &S::Fault,
) -> InputError {
    error_at(at, expected, source.explain(fault))
}

/// The output: parts separated by a blank line.
struct Parts<'o, K> {
    out: &'o mut K,
    started: bool,
}

impl<K> Parts<'_, K> {
    /// Starts a part with its label and returns the sink to append to.
    fn start<T>(&mut self, label: &str) -> &mut K
    where
        K: Sink<T>,
    {
        if std::mem::replace(&mut self.started, true) {
            self.out.literal("\n\n");
        }
        self.out.literal(label);
        self.out
    }
}

type Blocks<S> = [Block<<S as MessageSource>::Text, <S as MessageSource>::Fault>];

/// `content`'s blocks; `None` for a string, which each role treats its
/// own way. Anything else is an error expecting `expected`.
fn blocks<'c, S: MessageSource>(
    source: &S,
    content: &'c Content<S::Text, S::Fault>,
    i: usize,
    expected: &'static str,
) -> Result<Option<&'c Blocks<S>>, InputError> {
    let at = At::message(i).field("content");
    match content {
        Content::Blocks(blocks) => Ok(Some(blocks)),
        Content::String(_) => Ok(None),
        Content::Threw(f) => Err(fail(source, at, None, f)),
        Content::Other(f) => Err(fail(source, at, Some(expected), f)),
    }
}

fn user<S: MessageSource, K: Sink<S::Text>>(
    source: &S,
    content: &Content<S::Text, S::Fault>,
    i: usize,
    parts: &mut Parts<'_, K>,
) -> Result<(), InputError> {
    let texts = match blocks(source, content, i, "a string or an array")? {
        Some(blocks) => text_blocks(source, blocks, i)?,
        None => match content {
            Content::String(text) => vec![text],
            _ => Vec::new(),
        },
    };
    if texts.iter().any(|t| t.units() > 0) {
        let out = parts.start("[User]: ");
        for text in texts {
            out.text(text);
        }
    }
    Ok(())
}

fn assistant<S: MessageSource, K: Sink<S::Text>>(
    source: &S,
    content: &Content<S::Text, S::Fault>,
    i: usize,
    parts: &mut Parts<'_, K>,
) -> Result<(), InputError> {
    // Iterating a string yields strings, none of which is a block.
    let Some(blocks) = blocks(source, content, i, "an array")? else {
        return Ok(());
    };
    // pi's loop over the blocks reads every block and builds each tool
    // call; the texts are converted after it, when they are joined.
    for (j, block) in blocks.iter().enumerate() {
        block_fault(source, block, At::block(i, j), true)?;
        let at = At::block(i, j);
        let (fault, at, expected) = match block {
            Block::Text(Value::ReadThrew(f)) => (f, at.field("text"), None),
            Block::Thinking(Value::ReadThrew(f)) => (f, at.field("thinking"), None),
            Block::ToolCall(call) => match tool_call_fault(call) {
                Some((f, field, expected)) => (f, at.field(field), expected),
                None => continue,
            },
            _ => continue,
        };
        return Err(fail(source, at, expected, fault));
    }
    // pi joins the thinking before the text; a failure there comes first.
    let thinking = joined(source, blocks, i, "thinking")?;
    let texts = joined(source, blocks, i, "text")?;
    // A list is shown when it had parts, even empty ones.
    for (label, list) in [
        ("[Assistant thinking]: ", thinking),
        ("[Assistant]: ", texts),
    ] {
        for (n, text) in list.into_iter().enumerate() {
            let out = if n == 0 {
                parts.start(label)
            } else {
                parts.out.literal("\n");
                &mut *parts.out
            };
            if let Some(text) = text {
                out.text(text);
            }
        }
    }
    let calls = blocks.iter().filter_map(|b| match b {
        Block::ToolCall(call) => Some(call),
        _ => None,
    });
    for (n, call) in calls.enumerate() {
        let out = if n == 0 {
            parts.start("[Assistant tool calls]: ")
        } else {
            parts.out.literal("; ");
            &mut *parts.out
        };
        push_tool_call(out, call);
    }
    Ok(())
}

fn tool_result<S: MessageSource, K: Sink<S::Text>>(
    source: &S,
    content: &Content<S::Text, S::Fault>,
    i: usize,
    parts: &mut Parts<'_, K>,
) -> Result<(), InputError> {
    let Some(blocks) = blocks(source, content, i, "an array")? else {
        // pi calls `.filter` on it.
        let at = At::message(i).field("content");
        return Err(error_at(at, Some("an array"), "a string".into()));
    };
    let texts = text_blocks(source, blocks, i)?;
    let total: usize = texts.iter().map(|t| t.units()).sum();
    if total == 0 {
        return Ok(());
    }
    let out = parts.start("[Tool result]: ");
    // Cut by code units, as `slice` does: a surrogate pair may split.
    let mut left = TOOL_RESULT_MAX_CHARS;
    for text in texts {
        if text.units() <= left {
            out.text(text);
            left -= text.units();
        } else {
            if left > 0 {
                out.text_prefix(text, left);
            }
            break;
        }
    }
    if total > TOOL_RESULT_MAX_CHARS {
        out.literal("\n\n[... ");
        out.literal(&integer_to_string((total - TOOL_RESULT_MAX_CHARS) as u64));
        out.literal(" more characters truncated]");
    }
    Ok(())
}

/// `content.filter((c) => c.type === "text").map((c) => c.text).join("")`,
/// as the pieces to concatenate: every block's type is read first, then
/// every text, then the texts are converted.
fn text_blocks<'b, S: MessageSource>(
    source: &S,
    blocks: &'b Blocks<S>,
    i: usize,
) -> Result<Vec<&'b S::Text>, InputError> {
    for (j, block) in blocks.iter().enumerate() {
        block_fault(source, block, At::block(i, j), false)?;
    }
    for (j, block) in blocks.iter().enumerate() {
        if let Block::Text(Value::ReadThrew(f)) = block {
            return Err(fail(source, At::block(i, j).field("text"), None, f));
        }
    }
    Ok(joined(source, blocks, i, "text")?
        .into_iter()
        .flatten()
        .collect())
}

/// The error for a block pi cannot read `.type` of. A hole is `undefined`
/// to `for…of` but skipped by `filter`.
fn block_fault<S: MessageSource>(
    source: &S,
    block: &Block<S::Text, S::Fault>,
    at: At,
    holes_are_undefined: bool,
) -> Result<(), InputError> {
    let expected = Some("a content block");
    match block {
        Block::Hole if holes_are_undefined => Err(error_at(at, expected, "undefined".into())),
        Block::Nullish(f) => Err(fail(source, at, expected, f)),
        Block::Threw(f) => Err(fail(source, at, None, f)),
        Block::TypeThrew(f) => Err(fail(source, at.field("type"), None, f)),
        _ => Ok(()),
    }
}

/// The first failure building a tool call, in pi's order (the arguments,
/// each argument's `JSON.stringify`, then the name): the fault, the field
/// and what was expected there.
fn tool_call_fault<T, F>(
    call: &ToolCall<T, F>,
) -> Option<(&F, &'static str, Option<&'static str>)> {
    let args = "arguments";
    match &call.arguments {
        Arguments::ReadThrew(f) | Arguments::EntriesThrew(f) => return Some((f, args, None)),
        Arguments::Nullish(f) => return Some((f, args, Some("an object"))),
        Arguments::Entries(entries) => {
            if let Some(f) = entries.iter().find_map(|(_, v)| v.as_ref().err()) {
                let expected = "an object whose values JSON.stringify accepts";
                return Some((f, args, Some(expected)));
            }
        }
    }
    match &call.name {
        Value::ReadThrew(f) => Some((f, "name", None)),
        Value::NotText(f) => Some((f, "name", Some("a string"))),
        Value::Text(_) => None,
    }
}

/// The `text` (or `thinking`) values of the blocks of that type, converted
/// for `join`: the first that cannot be converted is an error.
fn joined<'b, S: MessageSource>(
    source: &S,
    blocks: &'b Blocks<S>,
    i: usize,
    field: &'static str,
) -> Result<Vec<Option<&'b S::Text>>, InputError> {
    let mut out = Vec::new();
    for (j, block) in blocks.iter().enumerate() {
        let value = match block {
            Block::Text(v) if field == "text" => v,
            Block::Thinking(v) if field == "thinking" => v,
            _ => continue,
        };
        match value {
            Value::Text(text) => out.push(text.as_ref()),
            Value::NotText(f) => {
                let at = At::block(i, j).field(field);
                return Err(fail(source, at, Some("a string"), f));
            }
            // Reported while reading the blocks, before any join.
            Value::ReadThrew(_) => out.push(None),
        }
    }
    Ok(out)
}

/// `${block.name}(${k}=${JSON.stringify(v)}, …)`.
fn push_tool_call<T, F, K: Sink<T>>(out: &mut K, call: &ToolCall<T, F>) {
    if let Value::Text(Some(name)) = &call.name {
        out.text(name);
    }
    out.literal("(");
    if let Arguments::Entries(entries) = &call.arguments {
        for (n, (key, value)) in entries.iter().enumerate() {
            if n > 0 {
                out.literal(", ");
            }
            out.text(key);
            out.literal("=");
            if let Ok(json) = value {
                out.text(json);
            }
        }
    }
    out.literal(")");
}

// ---- JSON values ---------------------------------------------------------

impl Piece for Cow<'_, JsStr> {
    fn units(&self) -> usize {
        self.len()
    }
}

impl Sink<Cow<'_, JsStr>> for JsStr {
    fn literal(&mut self, s: &str) {
        self.push_str(s);
    }

    fn text(&mut self, t: &Cow<'_, JsStr>) {
        self.push_js(t);
    }

    fn text_prefix(&mut self, t: &Cow<'_, JsStr>, units: usize) {
        let all = t.as_units();
        self.push_units(all.get(..units).unwrap_or(all));
    }
}

/// JSON values as a message source: every fault is the description of the
/// value that JavaScript could not read or convert.
struct JsonMessages<'a>(std::slice::Iter<'a, Json>);

impl<'a> MessageSource for JsonMessages<'a> {
    type Text = Cow<'a, JsStr>;
    type Fault = &'static str;

    fn next_message(&mut self) -> Option<Message<Cow<'a, JsStr>, &'static str>> {
        let message = match self.0.next()? {
            Json::Object(o) => o,
            Json::Null => return Some(Message::Nullish("null")),
            _ => return Some(Message::Skipped),
        };
        let role = match message.get("role") {
            Some(Json::String(role)) => role,
            _ => return Some(Message::Skipped),
        };
        let content = |assistant| json_content(message.get("content"), assistant);
        Some(if role.eq_str("user") {
            Message::User(content(false))
        } else if role.eq_str("assistant") {
            Message::Assistant(content(true))
        } else if role.eq_str("toolResult") {
            Message::ToolResult(content(false))
        } else {
            Message::Skipped
        })
    }

    fn explain(&self, fault: &&'static str) -> String {
        (*fault).into()
    }
}

type JsonText<'a> = Cow<'a, JsStr>;

fn json_content(content: Option<&Json>, assistant: bool) -> Content<JsonText<'_>, &'static str> {
    match content {
        Some(Json::String(s)) => Content::String(Cow::Borrowed(s)),
        Some(Json::Array(blocks)) => Content::Blocks(
            blocks
                .iter()
                .map(|block| json_block(block, assistant))
                .collect(),
        ),
        other => Content::Other(describe(other)),
    }
}

fn json_block(block: &Json, assistant: bool) -> Block<JsonText<'_>, &'static str> {
    let block = match block {
        Json::Object(o) => o,
        Json::Null => return Block::Nullish("null"),
        // Numbers, strings and arrays have no `type`.
        _ => return Block::Other,
    };
    if is_type(block, "text") {
        Block::Text(json_text(block.get("text")))
    } else if assistant && is_type(block, "thinking") {
        Block::Thinking(json_text(block.get("thinking")))
    } else if assistant && is_type(block, "toolCall") {
        Block::ToolCall(json_tool_call(block))
    } else {
        Block::Other
    }
}

/// `block.type === name`.
fn is_type(block: &JsonObject, name: &str) -> bool {
    matches!(block.get("type"), Some(Json::String(t)) if t.eq_str(name))
}

/// A value as `join` converts it.
fn json_text(value: Option<&Json>) -> Value<JsonText<'_>, &'static str> {
    match value {
        None | Some(Json::Null) => Value::Text(None),
        Some(Json::String(s)) => Value::Text(Some(Cow::Borrowed(s))),
        Some(value) => to_string(value),
    }
}

/// `String(value)`, owned.
fn to_string<'a>(value: &Json) -> Value<JsonText<'a>, &'static str> {
    let mut text = JsStr::new();
    match push_to_string(value, &mut text) {
        Ok(()) => Value::Text(Some(Cow::Owned(text))),
        Err(NotConvertible) => Value::NotText("an object whose toString is not a function"),
    }
}

fn json_tool_call(block: &JsonObject) -> ToolCall<JsonText<'_>, &'static str> {
    let json = |value: &Json| {
        let mut text = JsStr::new();
        stringify(value, &mut text);
        Ok(Cow::Owned(text))
    };
    let index = |i: usize| Cow::Owned(JsStr::from(i.to_string()));
    let arguments = match block.get("arguments") {
        Some(Json::Object(o)) => {
            Arguments::Entries(o.iter().map(|(k, v)| (Cow::Borrowed(k), json(v))).collect())
        }
        Some(Json::Array(items)) => Arguments::Entries(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| (index(i), json(v)))
                .collect(),
        ),
        Some(Json::String(s)) => Arguments::Entries(
            s.as_units()
                .iter()
                .enumerate()
                .map(|(i, &unit)| {
                    let one = Json::String(JsStr::from_units(vec![unit]));
                    (index(i), json(&one))
                })
                .collect(),
        ),
        Some(Json::Number(_) | Json::Bool(_)) => Arguments::Entries(Vec::new()),
        other @ (None | Some(Json::Null)) => Arguments::Nullish(describe(other)),
    };
    let name = match block.get("name") {
        None => Value::Text(Some(Cow::Owned(JsStr::from("undefined")))),
        Some(Json::String(s)) => Value::Text(Some(Cow::Borrowed(s))),
        Some(name) => to_string(name),
    };
    ToolCall { arguments, name }
}

/// JavaScript cannot convert an object that has its own `toString`
/// property to a string: from JSON, that property is never a function.
struct NotConvertible;

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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
