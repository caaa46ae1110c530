//! `serializeConversation` (`core::serialize`) on arbitrary message arrays:
//! valid and malformed messages, blocks and values (lone surrogates, odd
//! numbers, objects with a `toString` key, deep nesting). Checks that it
//! never panics and that a prefix of the messages serializes to a prefix of
//! the text, failing with the same error (see `checks::serialize_prefix`).
#![no_main]

use agent_compaction_core::js::string::JsStr;
use agent_compaction_core::js::json::{Json, JsonObject, MAX_DEPTH};
use agent_compaction_fuzz::checks;
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

/// Strings pi's serializer treats specially, or that are awkward.
const KNOWN: &[&str] = &[
    "",
    "text",
    "thinking",
    "toolCall",
    "image",
    "toString",
    "role",
    "content",
    "arguments",
    "name",
    "user",
    "assistant",
    "toolResult",
    "0",
    "01",
    "4294967295",
    "\u{2028}",
    "😀",
];

#[derive(Arbitrary, Debug)]
enum Str {
    Known(u8),
    Text(String),
    /// UTF-16 code units, lone surrogates included.
    Units(Vec<u16>),
    /// A long run of one code unit (tool results are cut at 2000 units).
    Long(u16, u16),
}

impl Str {
    fn js(&self) -> JsStr {
        match self {
            Str::Known(i) => JsStr::from(KNOWN[usize::from(*i) % KNOWN.len()]),
            Str::Text(s) => JsStr::from(s.as_str()),
            Str::Units(u) => JsStr::from_units(u.clone()),
            Str::Long(n, unit) => JsStr::from_units(vec![*unit; usize::from(*n % 5000)]),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Scalar {
    Null,
    Bool(bool),
    Number(f64),
    Str(Str),
}

impl Scalar {
    fn json(&self) -> Json {
        match self {
            Scalar::Null => Json::Null,
            Scalar::Bool(b) => Json::Bool(*b),
            // JSON has no NaN or infinities.
            Scalar::Number(x) if x.is_finite() => Json::Number(*x),
            Scalar::Number(_) => Json::Number(0.0),
            Scalar::Str(s) => Json::String(s.js()),
        }
    }
}

/// A value: scalars, flat arrays and objects, and arrays or objects nested
/// up to `MAX_DEPTH` levels (built iteratively; JSON from `parse` is never
/// deeper).
#[derive(Arbitrary, Debug)]
enum Value {
    Scalar(Scalar),
    Array(Vec<Scalar>),
    Object(Vec<(Str, Scalar)>),
    Deep {
        depth: u16,
        objects: bool,
        leaf: Scalar,
    },
}

impl Value {
    fn json(&self) -> Json {
        match self {
            Value::Scalar(s) => s.json(),
            Value::Array(items) => Json::Array(items.iter().map(Scalar::json).collect()),
            Value::Object(entries) => Json::Object(JsonObject::from_entries(
                entries.iter().map(|(k, v)| (k.js(), v.json())).collect(),
            )),
            Value::Deep {
                depth,
                objects,
                leaf,
            } => {
                let mut value = leaf.json();
                for _ in 0..usize::from(*depth) % (MAX_DEPTH - 4) {
                    value = if *objects {
                        let mut o = JsonObject::new();
                        o.insert(JsStr::from("k"), value);
                        Json::Object(o)
                    } else {
                        Json::Array(vec![value])
                    };
                }
                value
            }
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Field {
    Missing,
    Value(Value),
}

#[derive(Arbitrary, Debug)]
enum Block {
    Text(Field),
    Thinking(Field),
    ToolCall {
        name: Field,
        arguments: Field,
    },
    Image,
    /// Any `type` (or none) and any fields.
    Other(Vec<(Str, Value)>),
    /// Not an object.
    Value(Scalar),
}

impl Block {
    fn json(&self) -> Json {
        let mut o = JsonObject::new();
        let typed = |o: &mut JsonObject, t: &str| o.insert(JsStr::from("type"), Json::from(t));
        let field = |o: &mut JsonObject, k: &str, f: &Field| {
            if let Field::Value(v) = f {
                o.insert(JsStr::from(k), v.json());
            }
        };
        match self {
            Block::Text(text) => {
                typed(&mut o, "text");
                field(&mut o, "text", text);
            }
            Block::Thinking(thinking) => {
                typed(&mut o, "thinking");
                field(&mut o, "thinking", thinking);
            }
            Block::ToolCall { name, arguments } => {
                typed(&mut o, "toolCall");
                field(&mut o, "name", name);
                field(&mut o, "arguments", arguments);
            }
            Block::Image => {
                typed(&mut o, "image");
                o.insert(JsStr::from("data"), Json::from("AAAA"));
            }
            Block::Other(entries) => {
                for (k, v) in entries {
                    o.insert(k.js(), v.json());
                }
            }
            Block::Value(s) => return s.json(),
        }
        Json::Object(o)
    }
}

#[derive(Arbitrary, Debug)]
enum Content {
    Missing,
    Text(Str),
    Blocks(Vec<Block>),
    Value(Value),
}

#[derive(Arbitrary, Debug)]
enum Role {
    User,
    Assistant,
    ToolResult,
    Other(Str),
    Missing,
    NotAString(Scalar),
}

#[derive(Arbitrary, Debug)]
enum Message {
    Message {
        role: Role,
        content: Content,
    },
    /// Not an object (`null` is an error, the rest is skipped).
    Value(Scalar),
}

impl Message {
    fn json(&self) -> Json {
        let (role, content) = match self {
            Message::Value(s) => return s.json(),
            Message::Message { role, content } => (role, content),
        };
        let mut o = JsonObject::new();
        let role = match role {
            Role::User => Some(Json::from("user")),
            Role::Assistant => Some(Json::from("assistant")),
            Role::ToolResult => Some(Json::from("toolResult")),
            Role::Other(s) => Some(Json::String(s.js())),
            Role::Missing => None,
            Role::NotAString(s) => Some(s.json()),
        };
        if let Some(role) = role {
            o.insert(JsStr::from("role"), role);
        }
        let content = match content {
            Content::Missing => None,
            Content::Text(s) => Some(Json::String(s.js())),
            Content::Blocks(blocks) => Some(Json::Array(blocks.iter().map(Block::json).collect())),
            Content::Value(v) => Some(v.json()),
        };
        if let Some(content) = content {
            o.insert(JsStr::from("content"), content);
        }
        Json::Object(o)
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    messages: Vec<Message>,
    prefix: u8,
}

fuzz_target!(|input: Input| {
    let messages: Vec<Json> = input.messages.iter().map(Message::json).collect();
    checks::serialize_prefix(&messages, usize::from(input.prefix));
});
