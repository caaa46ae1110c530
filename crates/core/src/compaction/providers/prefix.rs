//! The prefix form of a summary request: the conversation as the model last
//! saw it (pi-ai's `Context`: system prompt, tools, messages), then one more
//! user message asking for the summary. Providers cache a request's prefix,
//! so when tools, system prompt and messages go exactly as the
//! conversation's own requests sent them, the summary is billed mostly as
//! cached input.
//!
//! "Exactly" means as pi-ai 0.73.1 converts a `Context`, key order included
//! (providers hash the serialized prefix): `transformMessages` (thinking of
//! other models as text, their tool call ids normalized, errored and aborted
//! replies left out, a call never answered given pi-ai's "No result
//! provided"), then the `openai-completions` or `anthropic` provider's
//! `convertMessages` and `convertTools`. Where pi-ai's output depends on
//! what a summarizer cannot know, the defaults are:
//! - an assistant message is the summarizer's own model's when its `api` is
//!   the provider's and its `model` is the `model` option (pi-ai compares
//!   the provider's name too);
//! - the model reads images;
//! - OpenAI-compatible: pi-ai's settings for a plain compatible server and
//!   for api.openai.com with a non-reasoning model: the system prompt as a
//!   `system` message, `strict: false` on every tool, tool results without
//!   a `name`, another model's tool call id cut to 40 characters only when
//!   it holds a `|` (pi-ai also cuts every id for its `openai` provider);
//! - Anthropic: an API key (not an OAuth token), pi-ai's default cache
//!   retention ("short"): `cache_control: { type: "ephemeral" }` on the
//!   system prompt, the last tool, the last block of the last user-role
//!   message, and the instruction (4 breakpoints at most).
//!
//! A context that cannot be read so (a missing field, a value of another
//! type, `tools` that are not an array) gives `None`: the request then goes
//! in the serialized form, as does one without `context` or `instruction`.

use super::{Failure, Json, MaxTokensField, Provider};
use crate::js::shape::{Field, Shape};

/// A value of the request's `context`, read where it is; the body carries
/// the engine's own values ([`Source::Value`]), strings uncopied.
pub trait Source: Json + Clone {
    type Value: Clone;
    fn value(self) -> Self::Value;
    /// The string itself, when the value is one.
    fn into_text(self) -> Option<Self::Text>;
    fn text_value(text: Self::Text) -> Self::Value;
    /// The items of an array; `None` for anything else, or an array that
    /// cannot be read (a proxy whose traps throw).
    fn list(&self) -> Option<Vec<Self>>;
    fn is_truthy(&self) -> bool;
    fn is_empty(text: &Self::Text) -> bool;
    /// A string the core wrote.
    fn text_of(text: &str) -> Self::Text;
    /// `text` without its lone surrogates (pi-ai's `sanitizeSurrogates`).
    fn sanitized(text: &Self::Text) -> Self::Text;
    /// `JSON.stringify(value)`; `None` when it throws.
    fn stringified(&self) -> Option<Self::Value>;
    /// `JSON.parse(text)`; `None` when it throws.
    fn parsed(text: &Self::Text) -> Option<Self>;
}

pub(super) type F<J> = Field<<J as Source>::Value>;

/// pi-ai's text for a tool call that has no result.
pub(super) const NO_RESULT: &str = "No result provided";
/// pi-ai's text for a tool result that holds only images.
pub(super) const SEE_IMAGE: &str = "(see attached image)";
/// pi-ai's OpenAI-compatible user message carrying tool results' images.
const ATTACHED_IMAGES: &str = "Attached image(s) from tool result:";

/// The body of the prefix form, or `None` for the serialized form (see the
/// module's documentation). `model` is the `model` option as sent and as
/// compared with assistant messages' `model`.
pub fn body<J: Source>(
    provider: Provider,
    field: MaxTokensField,
    model: (J::Value, &str),
    max_tokens: f64,
    context: &J,
    instruction: &J,
) -> Option<Shape<J::Value>> {
    let instruction = instruction.text().filter(|t| !J::is_empty(t))?;
    // OpenAI's compaction sends what it covers (`responses::body`).
    if !context.is_object() || provider == Provider::OpenAiResponsesCompaction {
        return None;
    }
    let system = context.get("systemPrompt");
    let system = match system.is_truthy() {
        true => Some(system.into_text()?),
        false => None,
    };
    let tools = context.get("tools");
    let tools = match tools.is_present() {
        true => tools.list()?,
        false => Vec::new(),
    };
    let given = context.get("messages");
    let messages = transform(provider, model.1, given.list()?)?;
    let mut body = Shape(vec![("model", Field::Value(model.0))]);
    let mut ask = message("user", text::<J>(instruction));
    match provider {
        Provider::OpenAi => {
            let mut list = open_ai_messages(system, messages)?;
            list.push(ask);
            body.push("messages", objects(list));
            body.push(field.name(), Field::Number(max_tokens));
            body.push("stream", Field::Bool(false));
            let mut list = Vec::new();
            for tool in tools {
                list.push(open_ai_tool(tool)?);
            }
            if !list.is_empty() || has_tool_history(&given) {
                body.push("tools", Field::List(list));
            }
        }
        Provider::Anthropic | Provider::AnthropicCompaction => {
            let mut list = anthropic_messages(messages)?;
            let compaction = provider == Provider::AnthropicCompaction;
            let last_user = list.iter_mut().rev().find(|m| is_user(m));
            if compaction {
                // The conversation itself is compacted: no instruction.
                last_user.into_iter().for_each(mark);
            } else {
                last_user.into_iter().chain([&mut ask]).for_each(mark);
                list.push(ask);
            }
            body.push("messages", objects(list));
            body.push("max_tokens", Field::Number(max_tokens));
            if compaction {
                body.push("compaction", Field::Object(super::summarize()));
            }
            if let Some(system) = system {
                let mut block = Shape(vec![
                    ("type", Field::Str("text")),
                    ("text", clean::<J>(&system)),
                ]);
                block.push("cache_control", ephemeral());
                body.push("system", Field::List(vec![Field::Object(block)]));
            }
            let mut list = Vec::new();
            let last = tools.len().wrapping_sub(1);
            for (i, tool) in tools.into_iter().enumerate() {
                list.push(anthropic_tool(tool, i == last)?);
            }
            if !list.is_empty() {
                body.push("tools", Field::List(list));
            }
        }
        Provider::OpenAiResponsesCompaction => return None,
    }
    Some(body)
}

/// A prefix-form reply without a summary (no text, or a tool call) is asked
/// again in the serialized form; an HTTP error is not.
pub fn retry_serialized(failure: &Failure) -> bool {
    failure.status.is_none()
}

/// A tool call id: the message's own value, or pi-ai's normalized text.
#[derive(Clone)]
pub(super) struct Id<V> {
    pub(super) text: String,
    given: Option<V>,
}

impl<V> Id<V> {
    fn field(self) -> Field<V> {
        match self.given {
            Some(v) => Field::Value(v),
            None => Field::String(self.text),
        }
    }
}

/// An assistant's block after `transformMessages`.
pub(super) enum Block<J: Source> {
    Text(J::Text),
    /// A thinking block of the summarizer's model, as it is.
    Thinking(J),
    /// A tool call, its id, and whether its `thoughtSignature` is kept.
    Call(J, Id<J::Value>, bool),
}

/// A message after `transformMessages`.
pub(super) enum Msg<J: Source> {
    User(J),
    Assistant(Vec<Block<J>>),
    /// A tool result (`None`: pi-ai's stand-in for a call never answered),
    /// with its call's id.
    Tool(Option<J>, Id<J::Value>),
}

/// The roles and block types read, in the order [`pick`] numbers them.
pub(super) const ROLES: [&str; 3] = ["user", "toolResult", "assistant"];
pub(super) const TYPES: [&str; 4] = ["text", "thinking", "toolCall", "image"];
pub(super) const USER: usize = 0;
pub(super) const TOOL_RESULT: usize = 1;
pub(super) const ASSISTANT: usize = 2;
pub(super) const TEXT: usize = 0;
pub(super) const THINKING: usize = 1;
pub(super) const TOOL_CALL: usize = 2;
pub(super) const IMAGE: usize = 3;

/// Which of `names` the string at `key` is; `names.len()` for none.
pub(super) fn pick<J: Json>(value: &J, key: &str, names: &[&str]) -> usize {
    let found = value.get(key).string();
    (names.iter())
        .position(|n| found.as_deref() == Some(*n))
        .unwrap_or(names.len())
}

/// pi-ai's `transformMessages` for this provider and model.
pub(super) fn transform<J: Source>(
    provider: Provider,
    model: &str,
    messages: Vec<J>,
) -> Option<Vec<Msg<J>>> {
    let mut out = Vec::new();
    // Ids normalized so far (original, new), for the results that follow.
    let mut renamed: Vec<(String, String)> = Vec::new();
    // The last assistant's calls and the results seen since.
    let mut pending: Vec<Id<J::Value>> = Vec::new();
    let mut answered: Vec<String> = Vec::new();
    let answer_pending =
        |out: &mut Vec<Msg<J>>, pending: &mut Vec<Id<J::Value>>, answered: &mut Vec<String>| {
            for id in pending.drain(..) {
                if !answered.contains(&id.text) {
                    out.push(Msg::Tool(None, id));
                }
            }
            answered.clear();
        };
    for m in messages {
        if !m.is_object() {
            return None;
        }
        match pick(&m, "role", &ROLES) {
            USER => {
                answer_pending(&mut out, &mut pending, &mut answered);
                out.push(Msg::User(m));
            }
            TOOL_RESULT => {
                let given = m.get("toolCallId");
                let text = given.string()?;
                let id = match renamed.iter().find(|(from, _)| *from == text) {
                    Some((_, to)) => Id {
                        text: to.clone(),
                        given: None,
                    },
                    None => Id {
                        text,
                        given: Some(given.value()),
                    },
                };
                answered.push(id.text.clone());
                out.push(Msg::Tool(Some(m), id));
            }
            ASSISTANT => {
                answer_pending(&mut out, &mut pending, &mut answered);
                let same =
                    pick(&m, "api", &[provider.api()]) == 0 && pick(&m, "model", &[model]) == 0;
                let mut blocks = Vec::new();
                for b in m.get("content").list()? {
                    match pick(&b, "type", &TYPES) {
                        TEXT => blocks.push(Block::Text(b.get("text").into_text()?)),
                        THINKING => {
                            let keep = b.get("redacted").is_truthy()
                                || (same && b.get("thinkingSignature").is_truthy());
                            let thinking = b.get("thinking");
                            if keep || !thinking.is_truthy() {
                                if keep && same {
                                    blocks.push(Block::Thinking(b));
                                }
                                continue;
                            }
                            let text = thinking.into_text()?;
                            if !J::is_blank(&text) {
                                blocks.push(match same {
                                    true => Block::Thinking(b),
                                    false => Block::Text(text),
                                });
                            }
                        }
                        TOOL_CALL => {
                            let given = b.get("id");
                            let text = given.string()?;
                            let new = (!same)
                                .then(|| normalize_id(provider, &text))
                                .filter(|new| *new != text);
                            let id = match new {
                                Some(new) => {
                                    renamed.push((text, new.clone()));
                                    Id {
                                        text: new,
                                        given: None,
                                    }
                                }
                                None => Id {
                                    text,
                                    given: Some(given.value()),
                                },
                            };
                            pending.push(id.clone());
                            blocks.push(Block::Call(b, id, same));
                        }
                        _ => {}
                    }
                }
                if pick(&m, "stopReason", &["error", "aborted"]) < 2 {
                    pending.clear();
                    continue;
                }
                out.push(Msg::Assistant(blocks));
            }
            // pi-ai's providers send no other role.
            _ => {}
        }
    }
    answer_pending(&mut out, &mut pending, &mut answered);
    Some(out)
}

/// pi-ai's tool call id for another model: Anthropic's pattern
/// (`[a-zA-Z0-9_-]`, 64 UTF-16 units at most); for OpenAI-compatible
/// servers only an id holding a `|` (the Responses API's `call|item`) is
/// changed: its call part, in that pattern, 40 units at most.
fn normalize_id(provider: Provider, id: &str) -> String {
    let (id, max) = match (provider, id.split_once('|')) {
        (Provider::Anthropic | Provider::AnthropicCompaction, _) => (id, 64),
        (Provider::OpenAiResponsesCompaction, _) => (id.split('|').next().unwrap_or(id), 64),
        (Provider::OpenAi, Some((call, _))) => (call, 40),
        (Provider::OpenAi, None) => return id.to_owned(),
    };
    let mut out = String::new();
    for c in id.chars() {
        match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            true => out.push(c),
            // JavaScript's pattern replaces each UTF-16 unit.
            false => out.extend(std::iter::repeat_n('_', c.len_utf16())),
        }
    }
    out.truncate(max.min(out.len()));
    out
}

/// pi-ai's `hasToolHistory`: a tool result, or an assistant's tool call.
fn has_tool_history<J: Source>(messages: &J) -> bool {
    let list = |value: J| value.list().unwrap_or_default();
    list(messages.clone())
        .iter()
        .any(|m| match pick(m, "role", &ROLES) {
            TOOL_RESULT => true,
            ASSISTANT => list(m.get("content"))
                .iter()
                .any(|b| pick(b, "type", &TYPES) == TOOL_CALL),
            _ => false,
        })
}

pub(super) fn text<J: Source>(text: J::Text) -> F<J> {
    Field::Value(J::text_value(text))
}

/// A text as pi-ai sends it: without lone surrogates.
pub(super) fn clean<J: Source>(text: &J::Text) -> F<J> {
    Field::Value(J::text_value(J::sanitized(text)))
}

/// The string at `key`.
pub(super) fn text_at<J: Source>(value: &J, key: &str) -> Option<J::Text> {
    value.get(key).into_text()
}

/// The value at `key`, as it is.
pub(super) fn value_at<J: Source>(value: &J, key: &str) -> F<J> {
    Field::Value(value.get(key).value())
}

pub(super) fn object<V>(fields: Vec<(&'static str, Field<V>)>) -> Field<V> {
    Field::Object(Shape(fields))
}

pub(super) fn objects<V>(list: Vec<Shape<V>>) -> Field<V> {
    Field::List(list.into_iter().map(Field::Object).collect())
}

pub(super) fn message<V>(role: &'static str, content: Field<V>) -> Shape<V> {
    Shape(vec![("role", Field::Str(role)), ("content", content)])
}

fn is_user<V>(message: &Shape<V>) -> bool {
    matches!(message.get("role"), Some(Field::Str("user")))
}

/// `{ type: "text", text }`, the text cleaned.
fn text_block<J: Source>(text: &J::Text) -> F<J> {
    object(vec![
        ("type", Field::Str("text")),
        ("text", clean::<J>(text)),
    ])
}

/// `a` and `b` joined by `separator`; `b` alone when there is no `a`.
pub(super) fn join<J: Json>(a: Option<J::Text>, separator: &str, b: J::Text) -> J::Text {
    match a {
        Some(a) => J::join(a, separator, b),
        None => b,
    }
}

/// `value`, or `empty` when it is `undefined` or `null` (JavaScript's `??`).
fn or<J: Source>(value: J, empty: F<J>) -> F<J> {
    match value.is_present() {
        true => Field::Value(value.value()),
        false => empty,
    }
}

// ------------------------------------------------------------ OpenAI

/// pi-ai's `openai-completions` messages.
fn open_ai_messages<J: Source>(
    system: Option<J::Text>,
    messages: Vec<Msg<J>>,
) -> Option<Vec<Shape<J::Value>>> {
    let mut out = Vec::new();
    if let Some(system) = system {
        out.push(message("system", clean::<J>(&system)));
    }
    // The images of a run of tool results, sent after it as a user message.
    let mut images = Vec::new();
    let mut messages = messages.into_iter().peekable();
    while let Some(m) = messages.next() {
        match m {
            Msg::User(user) => {
                let content = user.get("content");
                if let Some(content) = content.text() {
                    out.push(message("user", clean::<J>(&content)));
                    continue;
                }
                let mut parts = Vec::new();
                for part in content.list()? {
                    parts.push(match pick(&part, "type", &TYPES) {
                        TEXT => text_block::<J>(&text_at(&part, "text")?),
                        _ => image_url(&part)?,
                    });
                }
                if !parts.is_empty() {
                    out.push(message("user", Field::List(parts)));
                }
            }
            Msg::Assistant(blocks) => out.extend(open_ai_assistant(blocks)?),
            Msg::Tool(result, id) => {
                let joined =
                    result_text(result, |image| image_url(image).map(|url| images.push(url)))?;
                let content = joined.filter(|t| !J::is_empty(t));
                let content = content.unwrap_or_else(|| J::text_of(SEE_IMAGE));
                let mut tool = message("tool", clean::<J>(&content));
                tool.push("tool_call_id", id.field());
                out.push(tool);
                if !images.is_empty() && !matches!(messages.peek(), Some(Msg::Tool(..))) {
                    let mut parts = vec![text_block::<J>(&J::text_of(ATTACHED_IMAGES))];
                    parts.append(&mut images);
                    out.push(message("user", Field::List(parts)));
                }
            }
        }
    }
    Some(out)
}

/// A tool result's text blocks joined by "\n" (`None`: it has none), each
/// image given to `image`; pi-ai's stand-in for a call never answered
/// (`result` `None`).
pub(super) fn result_text<J: Source>(
    result: Option<J>,
    mut image: impl FnMut(&J) -> Option<()>,
) -> Option<Option<J::Text>> {
    let Some(result) = result else {
        return Some(Some(J::text_of(NO_RESULT)));
    };
    let mut joined = None;
    for block in result.get("content").list()? {
        match pick(&block, "type", &TYPES) {
            TEXT => joined = Some(join::<J>(joined, "\n", text_at(&block, "text")?)),
            IMAGE => image(&block)?,
            _ => {}
        }
    }
    Some(joined)
}

/// An image block's data URL.
pub(super) fn data_url<J: Source>(image: &J) -> Option<J::Text> {
    let mime = text_at(image, "mimeType")?;
    let data = text_at(image, "data")?;
    Some(J::join(
        J::join(J::text_of("data:"), "", mime),
        ";base64,",
        data,
    ))
}

/// An image as a data URL part.
fn image_url<J: Source>(image: &J) -> Option<F<J>> {
    Some(object(vec![
        ("type", Field::Str("image_url")),
        (
            "image_url",
            object(vec![("url", text::<J>(data_url(image)?))]),
        ),
    ]))
}

/// An assistant message: its texts joined as one string, the thinking of
/// the same model under the field its signature names, tool calls with
/// their arguments as JSON; none when it says nothing and calls nothing.
fn open_ai_assistant<J: Source>(blocks: Vec<Block<J>>) -> Option<Option<Shape<J::Value>>> {
    let mut said = None;
    let mut thought: Option<(J, J::Text)> = None;
    let mut calls = Vec::new();
    let mut details = Vec::new();
    for block in blocks {
        match block {
            Block::Text(t) if !J::is_blank(&t) => {
                said = Some(join::<J>(said, "", J::sanitized(&t)))
            }
            Block::Text(_) => {}
            Block::Thinking(b) => {
                let t = text_at(&b, "thinking")?;
                if !J::is_blank(&t) {
                    thought = Some(match thought {
                        Some((first, joined)) => (first, J::join(joined, "\n", t)),
                        None => (b, t),
                    });
                }
            }
            Block::Call(call, id, keep_signature) => {
                let function = object(vec![
                    ("name", value_at(&call, "name")),
                    (
                        "arguments",
                        Field::Value(call.get("arguments").stringified()?),
                    ),
                ]);
                calls.push(object(vec![
                    ("id", id.field()),
                    ("type", Field::Str("function")),
                    ("function", function),
                ]));
                let signature = call.get("thoughtSignature");
                if keep_signature && signature.is_truthy() {
                    let detail = J::parsed(&signature.into_text()?).filter(J::is_truthy);
                    details.extend(detail.map(|d| Field::Value(d.value())));
                }
            }
        }
    }
    if said.is_none() && calls.is_empty() {
        return Some(None);
    }
    let mut out = message("assistant", said.map_or(Field::Null, text::<J>));
    if let Some((first, joined)) = thought {
        let signature = first.get("thinkingSignature");
        if signature.is_truthy() {
            out.push(reasoning_field(&signature.string()?)?, text::<J>(joined));
        }
    }
    if !calls.is_empty() {
        out.push("tool_calls", Field::List(calls));
    }
    if !details.is_empty() {
        out.push("reasoning_details", Field::List(details));
    }
    Some(Some(out))
}

/// The field a thinking signature names: pi-ai records where a compatible
/// server sent the reasoning. Any other signature cannot be sent here.
fn reasoning_field(signature: &str) -> Option<&'static str> {
    ["reasoning_content", "reasoning", "reasoning_text"]
        .into_iter()
        .find(|f| *f == signature)
}

/// A tool as a function: its `parameters` as they are.
fn open_ai_tool<J: Source>(tool: J) -> Option<F<J>> {
    if !tool.is_object() {
        return None;
    }
    let function = object(vec![
        ("name", value_at(&tool, "name")),
        ("description", value_at(&tool, "description")),
        ("parameters", value_at(&tool, "parameters")),
        ("strict", Field::Bool(false)),
    ]);
    Some(object(vec![
        ("type", Field::Str("function")),
        ("function", function),
    ]))
}

// ------------------------------------------------------------ Anthropic

/// pi-ai's `anthropic` messages (without the breakpoint).
fn anthropic_messages<J: Source>(messages: Vec<Msg<J>>) -> Option<Vec<Shape<J::Value>>> {
    let mut out = Vec::new();
    // A run of tool results, sent as one user message.
    let mut results = Vec::new();
    let mut messages = messages.into_iter().peekable();
    while let Some(m) = messages.next() {
        match m {
            Msg::User(user) => {
                let content = user.get("content");
                if let Some(content) = content.text() {
                    if !J::is_blank(&content) {
                        out.push(message("user", clean::<J>(&content)));
                    }
                    continue;
                }
                let mut blocks = Vec::new();
                for part in content.list()? {
                    if pick(&part, "type", &TYPES) != TEXT {
                        blocks.push(image_block(&part)?);
                        continue;
                    }
                    let t = J::sanitized(&text_at(&part, "text")?);
                    if !J::is_blank(&t) {
                        blocks.push(object(vec![
                            ("type", Field::Str("text")),
                            ("text", text::<J>(t)),
                        ]));
                    }
                }
                if !blocks.is_empty() {
                    out.push(message("user", Field::List(blocks)));
                }
            }
            Msg::Assistant(blocks) => {
                let mut content = Vec::new();
                for block in blocks {
                    content.push(match block {
                        Block::Text(t) if J::is_blank(&t) => continue,
                        Block::Text(t) => text_block::<J>(&t),
                        Block::Thinking(b) => match anthropic_thinking(&b)? {
                            Some(block) => block,
                            None => continue,
                        },
                        Block::Call(call, id, _) => object(vec![
                            ("type", Field::Str("tool_use")),
                            ("id", id.field()),
                            ("name", value_at(&call, "name")),
                            ("input", or(call.get("arguments"), object(Vec::new()))),
                        ]),
                    });
                }
                if !content.is_empty() {
                    out.push(message("assistant", Field::List(content)));
                }
            }
            Msg::Tool(result, id) => {
                let (content, is_error) = match result {
                    Some(r) => (
                        tool_result_content(&r.get("content"))?,
                        value_at(&r, "isError"),
                    ),
                    None => (text::<J>(J::text_of(NO_RESULT)), Field::Bool(true)),
                };
                results.push(object(vec![
                    ("type", Field::Str("tool_result")),
                    ("tool_use_id", id.field()),
                    ("content", content),
                    ("is_error", is_error),
                ]));
                if !matches!(messages.peek(), Some(Msg::Tool(..))) {
                    out.push(message("user", Field::List(std::mem::take(&mut results))));
                }
            }
        }
    }
    Some(out)
}

/// A thinking block of the summarizer's model: redacted, its opaque data;
/// signed, as thinking; unsigned (an aborted stream), as text; blank, none.
fn anthropic_thinking<J: Source>(b: &J) -> Option<Option<F<J>>> {
    let signature = b.get("thinkingSignature");
    if b.get("redacted").is_truthy() {
        return Some(Some(object(vec![
            ("type", Field::Str("redacted_thinking")),
            ("data", Field::Value(signature.value())),
        ])));
    }
    let t = text_at(b, "thinking")?;
    if J::is_blank(&t) {
        return Some(None);
    }
    if !signature.is_truthy() || J::is_blank(&signature.text()?) {
        return Some(Some(text_block::<J>(&t)));
    }
    Some(Some(object(vec![
        ("type", Field::Str("thinking")),
        ("thinking", clean::<J>(&t)),
        ("signature", Field::Value(signature.value())),
    ])))
}

/// pi-ai's `convertContentBlocks`: text only, as one string (joined by
/// "\n"); with images, blocks, led by a placeholder text when there is no
/// text.
fn tool_result_content<J: Source>(content: &J) -> Option<F<J>> {
    let blocks = content.list()?;
    let kinds: Vec<usize> = blocks.iter().map(|b| pick(b, "type", &TYPES)).collect();
    if !kinds.contains(&IMAGE) {
        let mut joined = None;
        for b in &blocks {
            joined = Some(join::<J>(joined, "\n", text_at(b, "text")?));
        }
        return Some(clean::<J>(&joined.unwrap_or_else(|| J::text_of(""))));
    }
    let mut out = Vec::new();
    if !kinds.contains(&TEXT) {
        out.push(text_block::<J>(&J::text_of(SEE_IMAGE)));
    }
    for (b, kind) in blocks.iter().zip(kinds) {
        out.push(match kind {
            TEXT => text_block::<J>(&text_at(b, "text")?),
            _ => image_block(b)?,
        });
    }
    Some(Field::List(out))
}

/// `{ type: "image", source: { type: "base64", media_type, data } }`.
fn image_block<J: Source>(image: &J) -> Option<F<J>> {
    let source = object(vec![
        ("type", Field::Str("base64")),
        ("media_type", text::<J>(text_at(image, "mimeType")?)),
        ("data", text::<J>(text_at(image, "data")?)),
    ]);
    Some(object(vec![
        ("type", Field::Str("image")),
        ("source", source),
    ]))
}

/// A tool: its schema's `properties` and `required`, eager input streaming
/// (pi-ai's default), a breakpoint on the last.
fn anthropic_tool<J: Source>(tool: J, last: bool) -> Option<F<J>> {
    let schema = tool.get("parameters");
    if !tool.is_object() || !schema.is_present() {
        return None;
    }
    let input_schema = object(vec![
        ("type", Field::Str("object")),
        (
            "properties",
            or(schema.get("properties"), object(Vec::new())),
        ),
        (
            "required",
            or(schema.get("required"), Field::List(Vec::new())),
        ),
    ]);
    let mut out = Shape(vec![
        ("name", value_at(&tool, "name")),
        ("description", value_at(&tool, "description")),
        ("eager_input_streaming", Field::Bool(true)),
        ("input_schema", input_schema),
    ]);
    if last {
        out.push("cache_control", ephemeral());
    }
    Some(Field::Object(out))
}

/// `{ type: "ephemeral" }`: pi-ai's `cache_control` by default.
fn ephemeral<V>() -> Field<V> {
    object(vec![("type", Field::Str("ephemeral"))])
}

/// A breakpoint on a user message's last block; a string content becomes
/// one text block.
fn mark<V>(message: &mut Shape<V>) {
    let Some((_, content)) = message.0.iter_mut().find(|(k, _)| *k == "content") else {
        return;
    };
    if !matches!(content, Field::List(_)) {
        let text = std::mem::replace(content, Field::Null);
        *content = Field::List(vec![object(vec![
            ("type", Field::Str("text")),
            ("text", text),
        ])]);
    }
    if let Field::List(blocks) = content {
        if let Some(Field::Object(last)) = blocks.last_mut() {
            last.push("cache_control", ephemeral());
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
