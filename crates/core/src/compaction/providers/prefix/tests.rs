//! Native tests of the prefix form: a small JSON value stands in for the
//! engine's, `¿` for a lone surrogate (what pi-ai's `sanitizeSurrogates`
//! removes), and bodies are compared as the JSON text `JSON.stringify`
//! would write, key order included.

use super::*;
use crate::compaction::providers::{read_reply, Reply};
use serde_json::json;

/// A JavaScript value: `Undef` is `undefined` (left out of JSON objects).
#[derive(Clone, Debug, PartialEq)]
enum T {
    Undef,
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<T>),
    Obj(Vec<(String, T)>),
}

impl From<serde_json::Value> for T {
    fn from(v: serde_json::Value) -> T {
        use serde_json::Value as J;
        match v {
            J::Null => T::Null,
            J::Bool(b) => T::Bool(b),
            J::Number(n) => T::Num(n.as_f64().unwrap()),
            J::String(s) => T::Str(s),
            J::Array(a) => T::Arr(a.into_iter().map(T::from).collect()),
            J::Object(o) => T::Obj(o.into_iter().map(|(k, v)| (k, T::from(v))).collect()),
        }
    }
}

impl Json for T {
    type Text = String;
    fn get(&self, key: &str) -> T {
        match self {
            T::Obj(fields) => {
                (fields.iter().find(|(k, _)| k == key)).map_or(T::Undef, |(_, v)| v.clone())
            }
            _ => T::Undef,
        }
    }
    fn items(&self) -> Vec<T> {
        match self {
            T::Arr(items) => items.clone(),
            _ => Vec::new(),
        }
    }
    fn number(&self) -> Option<f64> {
        match self {
            T::Num(n) => Some(*n),
            _ => None,
        }
    }
    fn text(&self) -> Option<String> {
        self.string()
    }
    fn string(&self) -> Option<String> {
        match self {
            T::Str(s) => Some(s.clone()),
            _ => None,
        }
    }
    fn is_object(&self) -> bool {
        matches!(self, T::Obj(_) | T::Arr(_))
    }
    fn is_present(&self) -> bool {
        !matches!(self, T::Undef | T::Null)
    }
    fn join(joined: String, separator: &str, next: String) -> String {
        joined + separator + &next
    }
    fn is_blank(text: &String) -> bool {
        text.trim().is_empty()
    }
}

impl Source for T {
    type Value = T;
    fn value(self) -> T {
        self
    }
    fn into_text(self) -> Option<String> {
        self.string()
    }
    fn text_value(text: String) -> T {
        T::Str(text)
    }
    fn list(&self) -> Option<Vec<T>> {
        match self {
            T::Arr(items) => Some(items.clone()),
            _ => None,
        }
    }
    fn is_truthy(&self) -> bool {
        match self {
            T::Undef | T::Null => false,
            T::Bool(b) => *b,
            T::Num(n) => *n != 0.0 && !n.is_nan(),
            T::Str(s) => !s.is_empty(),
            T::Arr(_) | T::Obj(_) => true,
        }
    }
    fn is_empty(text: &String) -> bool {
        text.is_empty()
    }
    fn text_of(text: &str) -> String {
        text.to_owned()
    }
    fn sanitized(text: &String) -> String {
        text.replace('¿', "")
    }
    fn stringified(&self) -> Option<T> {
        match self {
            T::Undef => Some(T::Undef),
            T::Num(n) if n.is_nan() => None,
            v => Some(T::Str(value_json(v).unwrap())),
        }
    }
    fn parsed(text: &String) -> Option<T> {
        serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .map(T::from)
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// `JSON.stringify` of a value: `None` for `undefined`.
fn value_json(v: &T) -> Option<String> {
    Some(match v {
        T::Undef => return None,
        T::Null => "null".into(),
        T::Bool(b) => b.to_string(),
        T::Num(n) => n.to_string(),
        T::Str(s) => quote(s),
        T::Arr(items) => {
            let items: Vec<_> = items
                .iter()
                .map(|i| value_json(i).unwrap_or("null".into()))
                .collect();
            format!("[{}]", items.join(","))
        }
        T::Obj(fields) => {
            let fields: Vec<_> = (fields.iter())
                .filter_map(|(k, v)| Some(format!("{}:{}", quote(k), value_json(v)?)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
    })
}

fn field_json(f: &Field<T>) -> Option<String> {
    Some(match f {
        Field::Str(s) => quote(s),
        Field::String(s) => quote(s),
        Field::Number(n) => n.to_string(),
        Field::Bool(b) => b.to_string(),
        Field::Null => "null".into(),
        Field::Undefined => return None,
        Field::Value(v) => return value_json(v),
        Field::Object(o) => shape_json(o),
        Field::List(items) => {
            let items: Vec<_> = items
                .iter()
                .map(|i| field_json(i).unwrap_or("null".into()))
                .collect();
            format!("[{}]", items.join(","))
        }
    })
}

/// The body as `JSON.stringify` writes it.
fn shape_json(s: &Shape<T>) -> String {
    let fields: Vec<_> = (s.0.iter())
        .filter_map(|(k, v)| Some(format!("{}:{}", quote(k), field_json(v)?)))
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// JSON written over several lines (broken between tokens only), as one.
fn expect(expected: &str) -> String {
    let joined: String = expected.lines().map(str::trim).collect();
    assert!(
        serde_json::from_str::<serde_json::Value>(&joined).is_ok(),
        "{joined}"
    );
    joined
}

const MODEL: &str = "local-coder";

fn prefix(provider: Provider, context: serde_json::Value, instruction: T) -> Option<Shape<T>> {
    body(
        provider,
        MaxTokensField::MaxTokens,
        (T::Str(MODEL.into()), MODEL),
        500.0,
        &T::from(context),
        &instruction,
    )
}

fn ask() -> T {
    T::Str("Summarize¿.".into())
}

/// The body's JSON; panics on the serialized form.
fn sent(provider: Provider, context: serde_json::Value) -> String {
    shape_json(&prefix(provider, context, ask()).expect("the prefix form"))
}

/// The JSON of the body's `key`.
fn part(provider: Provider, context: serde_json::Value, key: &str) -> String {
    let body = prefix(provider, context, ask()).expect("the prefix form");
    body.get(key).and_then(field_json).unwrap_or_default()
}

const BOTH: [Provider; 2] = [Provider::OpenAi, Provider::Anthropic];

fn own(content: serde_json::Value, api: &str) -> serde_json::Value {
    json!({ "role": "assistant", "api": api, "model": MODEL, "content": content, "stopReason": "stop" })
}

fn user(text: &str) -> serde_json::Value {
    json!({ "role": "user", "content": text })
}

fn tool_schema() -> serde_json::Value {
    json!({ "type": "object", "properties": { "path": { "type": "string" } }, "required": ["path"] })
}

#[test]
fn the_prefix_form_needs_a_readable_context_and_an_instruction() {
    let context = || json!({ "systemPrompt": "s", "messages": [user("hi")] });
    for provider in BOTH {
        assert!(prefix(provider, context(), ask()).is_some());
        assert!(
            prefix(provider, context(), T::Undef).is_none(),
            "no instruction"
        );
        assert!(prefix(provider, context(), T::Str(String::new())).is_none());
        assert!(prefix(provider, context(), T::Num(1.0)).is_none());
        let none = |context: serde_json::Value| prefix(provider, context, ask()).is_none();
        assert!(none(json!(null)), "no context");
        assert!(none(json!("text")));
        assert!(none(json!({ "systemPrompt": "s" })), "no messages");
        assert!(none(json!({ "messages": {} })));
        assert!(
            none(json!({ "messages": [], "tools": { "read": {} } })),
            "an AI SDK ToolSet"
        );
        assert!(none(json!({ "messages": [], "systemPrompt": 7 })));
        assert!(
            none(json!({ "messages": [], "systemPrompt": [{ "role": "system", "content": "s" }] })),
            "the AI SDK's system messages"
        );
        assert!(none(json!({ "messages": [null] })));
        assert!(none(
            json!({ "messages": [{ "role": "user", "content": 5 }] })
        ));
        assert!(none(
            json!({ "messages": [{ "role": "user", "content": [{ "type": "text" }] }] })
        ));
        assert!(none(
            json!({ "messages": [{ "role": "user", "content": [{ "type": "image", "data": "x" }] }] })
        ));
        assert!(none(
            json!({ "messages": [{ "role": "assistant", "content": "text" }] })
        ));
        assert!(none(
            json!({ "messages": [{ "role": "assistant", "content": [{ "type": "text", "text": 1 }] }] })
        ));
        assert!(
            none(json!({ "messages": [{ "role": "toolResult", "content": [] }] })),
            "no toolCallId"
        );
        assert!(none(
            json!({ "messages": [{ "role": "toolResult", "toolCallId": "c", "content": "x" }] })
        ));
        assert!(none(json!({ "messages": [], "tools": [null] })));
        // Absent tools and a null system prompt are no tools and none.
        assert!(prefix(
            provider,
            json!({ "messages": [], "tools": null, "systemPrompt": null }),
            ask()
        )
        .is_some());
    }
    // Anthropic reads the schema's fields: a tool without one is refused.
    let tool = json!({ "messages": [], "tools": [{ "name": "t", "description": "d" }] });
    assert!(prefix(Provider::Anthropic, tool.clone(), ask()).is_none());
    assert!(prefix(Provider::OpenAi, tool, ask()).is_some());
    // A thought whose signature names no known field cannot be sent.
    let thought = |sig: &str| json!({ "messages": [own(json!([{ "type": "thinking", "thinking": "t", "thinkingSignature": sig }, { "type": "text", "text": "a" }]), "openai-completions")] });
    assert!(prefix(Provider::OpenAi, thought("reasoning_content"), ask()).is_some());
    assert!(prefix(Provider::OpenAi, thought("sig-0xff"), ask()).is_none());
}

#[test]
fn open_ai_a_whole_conversation_as_pi_ai_sends_it() {
    let context = json!({
        "systemPrompt": "You are a coding agent¿.",
        "tools": [
            { "name": "read_file", "label": "Read", "description": "Read a file", "parameters": tool_schema(), "execute": "fn" },
            { "name": "bash", "parameters": { "type": "object" } }
        ],
        "messages": [
            { "role": "user", "content": "Fix src/a.rs¿", "timestamp": 1 },
            { "role": "user", "content": [{ "type": "text", "text": "see" }, { "type": "image", "mimeType": "image/png", "data": "AAA" }] },
            own(json!([
                { "type": "thinking", "thinking": "plan¿", "thinkingSignature": "reasoning_content" },
                { "type": "text", "text": "Reading¿" },
                { "type": "text", "text": "  " },
                { "type": "text", "text": " it." },
                { "type": "toolCall", "id": "call_1", "name": "read_file", "arguments": { "path": "src/a.rs" } },
                { "type": "toolCall", "id": "call_2", "name": "bash", "arguments": { "command": "ls" } }
            ]), "openai-completions"),
            { "role": "toolResult", "toolCallId": "call_1", "toolName": "read_file", "content": [{ "type": "text", "text": "fn a()¿" }, { "type": "text", "text": "}" }], "isError": false },
            { "role": "toolResult", "toolCallId": "call_2", "toolName": "bash", "content": [{ "type": "text", "text": "No such file" }, { "type": "image", "mimeType": "image/jpeg", "data": "BBB" }], "isError": true },
            own(json!([{ "type": "toolCall", "id": "call_3", "name": "bash", "arguments": {} }]), "openai-completions"),
            { "role": "toolResult", "toolCallId": "call_3", "toolName": "bash", "content": [{ "type": "image", "mimeType": "image/gif", "data": "CCC" }], "isError": false },
            own(json!([{ "type": "text", "text": "Done." }]), "openai-completions")
        ]
    });
    let expected = expect(
        r#"{"model":"local-coder","messages":[
        {"role":"system","content":"You are a coding agent."},
        {"role":"user","content":"Fix src/a.rs"},
        {"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAA"}}]},
        {"role":"assistant","content":"Reading it.","reasoning_content":"plan¿","tool_calls":[
          {"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"src/a.rs\"}"}},
          {"id":"call_2","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},
        {"role":"tool","content":"fn a()\n}","tool_call_id":"call_1"},
        {"role":"tool","content":"No such file","tool_call_id":"call_2"},
        {"role":"user","content":[{"type":"text","text":"Attached image(s) from tool result:"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,BBB"}}]},
        {"role":"assistant","content":null,"tool_calls":[{"id":"call_3","type":"function","function":{"name":"bash","arguments":"{}"}}]},
        {"role":"tool","content":"(see attached image)","tool_call_id":"call_3"},
        {"role":"user","content":[{"type":"text","text":"Attached image(s) from tool result:"},{"type":"image_url","image_url":{"url":"data:image/gif;base64,CCC"}}]},
        {"role":"assistant","content":"Done."},
        {"role":"user","content":"Summarize¿."}],
        "max_tokens":500,"stream":false,"tools":[
        {"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"},"strict":false}},
        {"type":"function","function":{"name":"bash","parameters":{"type":"object"},"strict":false}}]}"#,
    );
    assert_eq!(sent(Provider::OpenAi, context), expected);
}

#[test]
fn open_ai_images_of_a_run_of_tool_results_follow_the_run() {
    let context = json!({ "messages": [
        own(json!([{ "type": "toolCall", "id": "a", "name": "x", "arguments": {} }, { "type": "toolCall", "id": "b", "name": "x", "arguments": {} }]), "openai-completions"),
        { "role": "toolResult", "toolCallId": "a", "content": [{ "type": "image", "mimeType": "m", "data": "1" }] },
        { "role": "toolResult", "toolCallId": "b", "content": [{ "type": "image", "mimeType": "m", "data": "2" }] }
    ]});
    let messages = part(Provider::OpenAi, context, "messages");
    let roles: Vec<_> = messages
        .match_indices("\"role\":\"")
        .map(|(i, _)| &messages[i + 8..i + 12])
        .collect();
    assert_eq!(roles, ["assi", "tool", "tool", "user", "user"]);
    assert!(messages.contains(r#"[{"type":"text","text":"Attached image(s) from tool result:"},{"type":"image_url","image_url":{"url":"data:m;base64,1"}},{"type":"image_url","image_url":{"url":"data:m;base64,2"}}]"#));
}

#[test]
fn open_ai_tools_are_an_empty_list_when_none_are_given_but_the_history_has_tool_calls() {
    let calls = json!({ "messages": [own(json!([{ "type": "toolCall", "id": "a", "name": "x", "arguments": {} }]), "openai-completions")] });
    assert_eq!(part(Provider::OpenAi, calls.clone(), "tools"), "[]");
    let results =
        json!({ "messages": [{ "role": "toolResult", "toolCallId": "a", "content": [] }] });
    assert_eq!(part(Provider::OpenAi, results, "tools"), "[]");
    assert_eq!(
        part(
            Provider::OpenAi,
            json!({ "messages": [user("u")], "tools": [] }),
            "tools"
        ),
        ""
    );
    assert_eq!(
        part(Provider::Anthropic, calls, "tools"),
        "",
        "Anthropic sends no empty list"
    );
}

#[test]
fn open_ai_assistant_messages_without_text_or_calls_are_left_out() {
    let context = json!({ "messages": [
        user("u"),
        own(json!([{ "type": "text", "text": "  " }]), "openai-completions"),
        own(json!([{ "type": "thinking", "thinking": "only a thought", "thinkingSignature": "reasoning" }]), "openai-completions"),
        own(json!([]), "openai-completions")
    ]});
    assert_eq!(
        part(Provider::OpenAi, context, "messages"),
        expect(r#"[{"role":"user","content":"u"},{"role":"user","content":"Summarize¿."}]"#)
    );
}

#[test]
fn open_ai_reasoning_details_come_from_the_same_models_signed_tool_calls() {
    let call = |sig: serde_json::Value| json!({ "type": "toolCall", "id": "c", "name": "x", "arguments": {}, "thoughtSignature": sig });
    let context = |api: &str| {
        json!({ "messages": [own(json!([
            call(json!("{\"type\":\"reasoning.encrypted\",\"id\":\"c\",\"data\":\"e\"}")),
            call(json!("not json")),
            call(json!("null")),
            call(json!(""))
        ]), api)] })
    };
    let messages = part(Provider::OpenAi, context("openai-completions"), "messages");
    assert!(
        messages.contains(
            r#""reasoning_details":[{"data":"e","id":"c","type":"reasoning.encrypted"}]}"#
        ),
        "{messages}"
    );
    let other = part(Provider::OpenAi, context("openai-responses"), "messages");
    assert!(
        !other.contains("reasoning_details"),
        "another model's signatures are dropped"
    );
}

#[test]
fn another_models_thinking_is_text_and_the_same_models_is_kept() {
    let blocks = json!([
        { "type": "thinking", "thinking": "deep", "thinkingSignature": "sig" },
        { "type": "thinking", "thinking": "  " },
        { "type": "thinking", "thinking": "", "thinkingSignature": "sig", "redacted": true },
        { "type": "text", "text": "answer" }
    ]);
    let openai = |api| {
        part(
            Provider::OpenAi,
            json!({ "messages": [own(blocks.clone(), api)] }),
            "messages",
        )
    };
    assert!(
        openai("anthropic-messages").starts_with(r#"[{"role":"assistant","content":"deepanswer"}"#)
    );
    // The same model's signed thought: "sig" names no field.
    assert!(prefix(
        Provider::OpenAi,
        json!({ "messages": [own(blocks.clone(), "openai-completions")] }),
        ask()
    )
    .is_none());

    let anthropic = |api| {
        part(
            Provider::Anthropic,
            json!({ "messages": [own(blocks.clone(), api)] }),
            "messages",
        )
    };
    assert!(anthropic("openai-completions").starts_with(
        r#"[{"role":"assistant","content":[{"type":"text","text":"deep"},{"type":"text","text":"answer"}]}"#
    ));
    assert!(anthropic("anthropic-messages").starts_with(
        r#"[{"role":"assistant","content":[{"type":"thinking","thinking":"deep","signature":"sig"},{"type":"redacted_thinking","data":"sig"},{"type":"text","text":"answer"}]}"#
    ));
    // Another model name is another model, even behind the same API.
    let mut other = own(blocks, "anthropic-messages");
    other["model"] = json!("claude-other");
    let other = part(
        Provider::Anthropic,
        json!({ "messages": [other] }),
        "messages",
    );
    assert!(other.starts_with(r#"[{"role":"assistant","content":[{"type":"text","text":"deep"},{"type":"text","text":"answer"}]}"#));
}

#[test]
fn errored_and_aborted_replies_are_left_out_and_unanswered_calls_get_pi_ais_result() {
    let call = |id: &str| json!({ "type": "toolCall", "id": id, "name": "x", "arguments": {} });
    let mut failed = own(
        json!([{ "type": "text", "text": "half" }, call("lost")]),
        "openai-completions",
    );
    failed["stopReason"] = json!("error");
    let mut aborted = own(
        json!([{ "type": "text", "text": "cut" }]),
        "openai-completions",
    );
    aborted["stopReason"] = json!("aborted");
    let context = json!({ "messages": [
        user("u"),
        own(json!([call("a"), call("b")]), "openai-completions"),
        { "role": "toolResult", "toolCallId": "a", "content": [{ "type": "text", "text": "ok" }] },
        failed,
        aborted,
        user("again"),
        own(json!([call("c")]), "openai-completions")
    ]});
    let messages = part(Provider::OpenAi, context.clone(), "messages");
    assert!(!messages.contains("half") && !messages.contains("cut") && !messages.contains("lost"));
    assert!(messages.contains(r#"{"role":"tool","content":"ok","tool_call_id":"a"},{"role":"tool","content":"No result provided","tool_call_id":"b"},{"role":"user","content":"again"}"#), "{messages}");
    assert!(messages.ends_with(r#"{"role":"tool","content":"No result provided","tool_call_id":"c"},{"role":"user","content":"Summarize¿."}]"#), "{messages}");
    let messages = part(Provider::Anthropic, context, "messages");
    assert!(messages.contains(r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"ok"},{"type":"tool_result","tool_use_id":"b","content":"No result provided","is_error":true}]}"#), "{messages}");
}

#[test]
fn another_models_tool_call_ids_are_normalized_and_their_results_follow() {
    assert_eq!(
        normalize_id(Provider::Anthropic, "call:1/é😀"),
        "call_1____"
    );
    assert_eq!(normalize_id(Provider::Anthropic, &"x".repeat(70)).len(), 64);
    assert_eq!(
        normalize_id(Provider::OpenAi, "call.1"),
        "call.1",
        "no `|`: unchanged"
    );
    assert_eq!(
        normalize_id(Provider::OpenAi, &format!("fc.{}|item+/=", "y".repeat(50))),
        format!("fc_{}", "y".repeat(37))
    );

    let call = json!({ "type": "toolCall", "id": "call|item", "name": "x", "arguments": {} });
    let result = json!({ "role": "toolResult", "toolCallId": "call|item", "content": [{ "type": "text", "text": "r" }] });
    let context =
        |api: &str| json!({ "messages": [own(json!([call.clone()]), api), result.clone()] });
    let openai = part(Provider::OpenAi, context("openai-responses"), "messages");
    assert!(
        openai.contains(r#""id":"call""#) && openai.contains(r#""tool_call_id":"call""#),
        "{openai}"
    );
    let anthropic = part(Provider::Anthropic, context("openai-responses"), "messages");
    assert!(
        anthropic.contains(r#""id":"call_item""#)
            && anthropic.contains(r#""tool_use_id":"call_item""#),
        "{anthropic}"
    );
    let same = part(
        Provider::Anthropic,
        context("anthropic-messages"),
        "messages",
    );
    assert!(
        same.contains(r#""id":"call|item""#) && same.contains(r#""tool_use_id":"call|item""#),
        "the same model's ids stay"
    );
}

#[test]
fn anthropic_a_whole_conversation_with_its_breakpoints() {
    let context = json!({
        "systemPrompt": "You are a coding agent¿.",
        "tools": [
            { "name": "read_file", "description": "Read a file", "parameters": tool_schema() },
            { "name": "bash", "description": "Run", "parameters": { "type": "object" } }
        ],
        "messages": [
            user("Fix src/a.rs¿"),
            user("  "),
            { "role": "user", "content": [{ "type": "text", "text": "¿" }, { "type": "image", "mimeType": "image/png", "data": "AAA" }] },
            own(json!([
                { "type": "thinking", "thinking": "plan¿", "thinkingSignature": "sig" },
                { "type": "thinking", "thinking": "unsigned", "thinkingSignature": " " },
                { "type": "text", "text": "Reading" },
                { "type": "toolCall", "id": "toolu_1", "name": "read_file", "arguments": { "path": "src/a.rs" } },
                { "type": "toolCall", "id": "toolu_2", "name": "bash" }
            ]), "anthropic-messages"),
            { "role": "toolResult", "toolCallId": "toolu_1", "content": [{ "type": "text", "text": "fn a()¿" }, { "type": "text", "text": "}" }], "isError": false },
            { "role": "toolResult", "toolCallId": "toolu_2", "content": [{ "type": "image", "mimeType": "image/jpeg", "data": "BBB" }], "isError": true }
        ]
    });
    let expected = expect(
        r#"{"model":"local-coder","messages":[
        {"role":"user","content":"Fix src/a.rs"},
        {"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAA"}}]},
        {"role":"assistant","content":[{"type":"thinking","thinking":"plan","signature":"sig"},{"type":"text","text":"unsigned"},{"type":"text","text":"Reading"},
          {"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"src/a.rs"}},{"type":"tool_use","id":"toolu_2","name":"bash","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"fn a()\n}","is_error":false},
          {"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"(see attached image)"},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"BBB"}}],"is_error":true,"cache_control":{"type":"ephemeral"}}]},
        {"role":"user","content":[{"type":"text","text":"Summarize¿.","cache_control":{"type":"ephemeral"}}]}],
        "max_tokens":500,
        "system":[{"type":"text","text":"You are a coding agent.","cache_control":{"type":"ephemeral"}}],
        "tools":[
        {"name":"read_file","description":"Read a file","eager_input_streaming":true,"input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
        {"name":"bash","description":"Run","eager_input_streaming":true,"input_schema":{"type":"object","properties":{},"required":[]},"cache_control":{"type":"ephemeral"}}]}"#,
    );
    let body = sent(Provider::Anthropic, context);
    assert_eq!(body, expected);
    assert_eq!(
        body.matches("cache_control").count(),
        4,
        "Anthropic allows four breakpoints"
    );
}

#[test]
fn anthropic_the_breakpoint_goes_on_the_last_user_role_message() {
    // The conversation ends with the model's reply: the breakpoint stays on
    // the user message before it, a string turned into a text block.
    let context = json!({ "messages": [
        user("first"),
        user("second"),
        own(json!([{ "type": "text", "text": "reply" }]), "anthropic-messages")
    ]});
    assert_eq!(
        part(Provider::Anthropic, context, "messages"),
        expect(
            r#"[{"role":"user","content":"first"},
        {"role":"user","content":[{"type":"text","text":"second","cache_control":{"type":"ephemeral"}}]},
        {"role":"assistant","content":[{"type":"text","text":"reply"}]},
        {"role":"user","content":[{"type":"text","text":"Summarize¿.","cache_control":{"type":"ephemeral"}}]}]"#
        )
    );
    // Without a system prompt or tools there are fewer breakpoints.
    let body = sent(Provider::Anthropic, json!({ "messages": [] }));
    assert_eq!(
        body,
        expect(
            r#"{"model":"local-coder","messages":[{"role":"user","content":[{"type":"text","text":"Summarize¿.","cache_control":{"type":"ephemeral"}}]}],"max_tokens":500}"#
        )
    );
}

#[test]
fn open_ai_the_token_field_and_no_system_message_without_a_system_prompt() {
    let body = body(
        Provider::OpenAi,
        MaxTokensField::MaxCompletionTokens,
        (T::Str("gpt".into()), "gpt"),
        64.0,
        &T::from(json!({ "systemPrompt": "", "messages": [user("")] })),
        &ask(),
    )
    .unwrap();
    assert_eq!(
        shape_json(&body),
        expect(
            r#"{"model":"gpt","messages":[{"role":"user","content":""},{"role":"user","content":"Summarize¿."}],"max_completion_tokens":64,"stream":false}"#
        )
    );
}

fn reply(
    provider: Provider,
    prefix: bool,
    parsed: serde_json::Value,
) -> Result<Reply<String>, Failure> {
    let status = parsed
        .get("status")
        .and_then(|s| s.as_f64())
        .unwrap_or(200.0);
    read_reply(
        provider,
        prefix,
        status,
        Some(T::from(parsed)),
        String::new,
        || None,
    )
}

#[test]
fn a_prefix_reply_that_calls_a_tool_or_says_nothing_is_asked_again_serialized() {
    let calls = json!({ "choices": [{ "message": { "content": "Let me read it.", "tool_calls": [{ "id": "c" }] }, "finish_reason": "tool_calls" }] });
    let failure = reply(Provider::OpenAi, true, calls.clone()).err().unwrap();
    assert!(retry_serialized(&failure));
    assert_eq!(
        reply(Provider::OpenAi, false, calls).ok().unwrap().text,
        "Let me read it.",
        "the serialized form keeps today's reading"
    );
    let empty = json!({ "choices": [{ "message": { "content": "" }, "finish_reason": "stop" }] });
    assert!(retry_serialized(
        &reply(Provider::OpenAi, true, empty).err().unwrap()
    ));
    let anthropic = json!({ "content": [{ "type": "text", "text": "I will" }, { "type": "tool_use", "id": "t" }], "stop_reason": "tool_use" });
    assert!(retry_serialized(
        &reply(Provider::Anthropic, true, anthropic.clone())
            .err()
            .unwrap()
    ));
    assert_eq!(
        reply(Provider::Anthropic, false, anthropic)
            .ok()
            .unwrap()
            .text,
        "I will"
    );
    let summary = json!({ "content": [{ "type": "text", "text": "## Goal" }], "usage": { "input_tokens": 5, "cache_read_input_tokens": 4000 } });
    let ok = reply(Provider::Anthropic, true, summary).ok().unwrap();
    assert_eq!(
        (ok.text.as_str(), ok.usage.unwrap().cache_read),
        ("## Goal", 4000.0)
    );
    // An HTTP error is not asked again.
    let error = json!({ "status": 429, "error": { "message": "slow down" } });
    assert!(!retry_serialized(
        &reply(Provider::OpenAi, true, error).err().unwrap()
    ));
}

#[test]
fn anthropic_on_demand_compaction_sends_the_conversation_itself_and_asks_to_summarize() {
    let context = json!({
        "systemPrompt": "You are a coding agent.",
        "messages": [user("Fix src/a.rs"), own(json!([{ "type": "text", "text": "Done" }]), "anthropic-messages"), user("Thanks")]
    });
    let expected = expect(
        r#"{"model":"local-coder","messages":[
        {"role":"user","content":"Fix src/a.rs"},
        {"role":"assistant","content":[{"type":"text","text":"Done"}]},
        {"role":"user","content":[{"type":"text","text":"Thanks","cache_control":{"type":"ephemeral"}}]}],
        "max_tokens":500,
        "compaction":{"type":"summarize"},
        "system":[{"type":"text","text":"You are a coding agent.","cache_control":{"type":"ephemeral"}}]}"#,
    );
    // No instruction after the conversation: the provider compacts it as it is.
    assert_eq!(sent(Provider::AnthropicCompaction, context), expected);
}

// ------------------------------------------------ OpenAI's /responses/compact

mod responses_compact {
    use super::*;
    use crate::compaction::providers::responses::{self, Compacted};
    use crate::compaction::providers::{checked, map_usage, Failure};

    const GPT: &str = "gpt-5.2";

    fn compact_body(covered: serde_json::Value) -> Option<serde_json::Value> {
        let body = responses::body((T::Str(GPT.into()), GPT), &T::from(covered))?;
        Some(serde_json::from_str(&shape_json(&body)).unwrap())
    }

    fn gpt(content: serde_json::Value) -> serde_json::Value {
        json!({ "role": "assistant", "api": "openai-responses", "model": GPT, "content": content, "stopReason": "toolUse" })
    }

    fn sealed_summary() -> serde_json::Value {
        json!({
            "role": "compactionSummary",
            "summary": responses::sealed_note(responses::PROVIDER),
            "provider": {
                "name": "openai", "provider": "openai.responses", "model": GPT,
                "part": { "type": "custom", "kind": "openai.compaction",
                          "providerOptions": { "openai": { "type": "compaction", "itemId": "cmp_1", "encryptedContent": "enc-1" } } },
                "input": [{ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "first ask" }] }]
            }
        })
    }

    #[test]
    fn the_covered_messages_go_as_responses_items() {
        let covered = json!([
            sealed_summary(),
            user("plain¿ text"),
            { "role": "user", "content": [
                { "type": "text", "text": "look" },
                { "type": "image", "mimeType": "image/png", "data": "AAA" }
            ] },
            { "role": "user", "content": [] },
            gpt(json!([
                { "type": "thinking", "thinking": "hmm", "thinkingSignature": "{}" },
                { "type": "text", "text": "reading" },
                { "type": "text", "text": "  " },
                { "type": "toolCall", "id": "call_1|fc_1", "name": "read", "arguments": { "path": "a.rs" } }
            ])),
            { "role": "toolResult", "toolCallId": "call_1|fc_1", "toolName": "read",
              "content": [{ "type": "text", "text": "fn a()" }, { "type": "text", "text": "fn b()" }], "isError": false },
            gpt(json!([
                { "type": "toolCall", "id": "call_2|fc_2", "name": "shot", "arguments": {} },
                { "type": "toolCall", "id": "call_3|fc_3", "name": "read", "arguments": { "path": "b.rs" } }
            ])),
            { "role": "toolResult", "toolCallId": "call_2|fc_2", "toolName": "shot",
              "content": [{ "type": "image", "mimeType": "image/png", "data": "BBB" }], "isError": false },
            // Another model's call: its id in the Responses pattern.
            { "role": "assistant", "api": "anthropic-messages", "model": "claude", "stopReason": "toolUse",
              "content": [{ "type": "toolCall", "id": "toolu_01.x", "name": "read", "arguments": {} }] },
            { "role": "toolResult", "toolCallId": "toolu_01.x", "toolName": "read", "content": [{ "type": "text", "text": "ok" }], "isError": false },
            // An errored reply is left out, as pi-ai does.
            { "role": "assistant", "api": "openai-responses", "model": GPT, "stopReason": "error", "content": [{ "type": "text", "text": "oops" }] },
            { "role": "bashExecution", "command": "ls" }
        ]);
        let expected = json!({ "model": GPT, "input": [
            { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "first ask" }] },
            { "type": "compaction", "id": "cmp_1", "encrypted_content": "enc-1" },
            { "role": "user", "content": [{ "type": "input_text", "text": "plain text" }] },
            { "role": "user", "content": [
                { "type": "input_text", "text": "look" },
                { "type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,AAA" }
            ] },
            { "role": "assistant", "content": "reading" },
            { "type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a.rs\"}" },
            { "type": "function_call_output", "call_id": "call_1", "output": "fn a()\nfn b()" },
            { "type": "function_call", "call_id": "call_2", "name": "shot", "arguments": "{}" },
            { "type": "function_call", "call_id": "call_3", "name": "read", "arguments": "{\"path\":\"b.rs\"}" },
            { "type": "function_call_output", "call_id": "call_2", "output": "(see attached image)" },
            { "type": "function_call_output", "call_id": "call_3", "output": "No result provided" },
            { "type": "function_call", "call_id": "toolu_01_x", "name": "read", "arguments": "{}" },
            { "type": "function_call_output", "call_id": "toolu_01_x", "output": "ok" }
        ] });
        assert_eq!(compact_body(covered), Some(expected));
    }

    #[test]
    fn nothing_readable_is_no_body() {
        assert_eq!(compact_body(json!([])), None);
        assert_eq!(compact_body(json!([{ "role": "bashExecution" }])), None);
        assert_eq!(compact_body(json!("not a list")), None);
        // A message pi-ai cannot read (a call without an id).
        let bad = json!([gpt(
            json!([{ "type": "toolCall", "name": "read", "arguments": {} }])
        )]);
        assert_eq!(compact_body(bad), None);
    }

    #[test]
    fn only_openai_compaction_records_are_sent_as_items() {
        assert!(responses::sealed(&T::from(sealed_summary())).is_some());
        let mut anthropic = sealed_summary();
        anthropic["provider"]["part"] = json!({ "type": "text", "text": "s", "providerOptions": { "anthropic": { "type": "compaction" } } });
        assert!(responses::sealed(&T::from(anthropic)).is_none());
        let mut no_content = sealed_summary();
        no_content["provider"]["part"]["providerOptions"]["openai"] =
            json!({ "type": "compaction", "itemId": "cmp_1" });
        assert!(responses::sealed(&T::from(no_content)).is_none());
        // Our own summary is the user message convertToLlm makes of it.
        assert!(responses::sealed(&T::from(
            json!({ "role": "compactionSummary", "summary": "s" })
        ))
        .is_none());
    }

    #[test]
    fn the_answer_is_the_last_item_and_the_user_messages_before_it() {
        let reply = T::from(json!({
            "id": "resp_1", "object": "response.compaction",
            "output": [
                { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "a" }] },
                { "type": "message", "role": "assistant", "content": "not kept" },
                { "role": "user", "content": "b" },
                { "type": "compaction", "id": "cmp_9", "encrypted_content": "enc-9" }
            ],
            "usage": { "input_tokens": 1000, "input_tokens_details": { "cached_tokens": 400 }, "output_tokens": 50, "total_tokens": 1050 }
        }));
        let parsed = checked(
            Provider::OpenAiResponsesCompaction,
            200.0,
            Some(reply),
            String::new,
            || None,
        )
        .ok()
        .unwrap();
        let Compacted {
            input,
            id,
            encrypted,
        } = responses::read(&parsed).ok().unwrap();
        assert_eq!(input.len(), 2);
        assert_eq!(input[1].get("content").string().as_deref(), Some("b"));
        assert_eq!(
            (id.string(), encrypted.string()),
            (Some("cmp_9".into()), Some("enc-9".into()))
        );
        let usage = map_usage(Provider::OpenAiResponsesCompaction, &parsed.get("usage"));
        assert_eq!(
            (
                usage.input,
                usage.cache_read,
                usage.output,
                usage.total_tokens
            ),
            (600.0, 400.0, 50.0, 1050.0)
        );

        let shape = responses::result_shape(
            Compacted {
                input,
                id,
                encrypted,
            },
            T::Str(GPT.into()),
            None,
        );
        let got: serde_json::Value = serde_json::from_str(&shape_json(&shape)).unwrap();
        assert_eq!(
            got["text"],
            json!(responses::sealed_note("openai.responses"))
        );
        assert_eq!(
            got["provider"]["part"],
            json!({ "type": "custom", "kind": "openai.compaction",
            "providerOptions": { "openai": { "type": "compaction", "itemId": "cmp_9", "encryptedContent": "enc-9" } } })
        );
        assert_eq!(
            got["provider"]["input"][0]["content"][0]["text"],
            json!("a")
        );
        assert_eq!(got["provider"]["onDemand"], json!(true));
        assert_eq!(
            (
                &got["provider"]["name"],
                &got["provider"]["provider"],
                &got["provider"]["model"]
            ),
            (&json!("openai"), &json!("openai.responses"), &json!(GPT))
        );
        // The record it makes is one the next request sends as its items.
        let summary = T::from(
            json!({ "role": "compactionSummary", "summary": "", "provider": got["provider"].clone() }),
        );
        assert!(responses::sealed(&summary).is_some());
    }

    #[test]
    fn an_answer_without_an_item_or_an_error_fails() {
        let no_item = T::from(
            json!({ "output": [{ "role": "user", "content": "a" }, { "type": "compaction", "id": "cmp_1" }] }),
        );
        let failure = responses::read(&no_item).err().unwrap();
        assert_eq!(
            failure,
            Failure {
                message: "OpenAI compaction: no compaction in the response".into(),
                status: None
            }
        );
        let error =
            T::from(json!({ "error": { "message": "Rate limit reached", "type": "rate_limit" } }));
        let failure = checked(
            Provider::OpenAiResponsesCompaction,
            429.0,
            Some(error),
            String::new,
            || None,
        )
        .err()
        .unwrap();
        assert_eq!(
            failure,
            Failure {
                message: "OpenAI compaction: HTTP 429: Rate limit reached".into(),
                status: Some(429.0)
            }
        );
    }

    #[test]
    fn the_endpoint_and_headers() {
        use crate::compaction::providers::{asks_once, default_headers, endpoint_url, HeaderValue};
        let p = Provider::OpenAiResponsesCompaction;
        assert_eq!(
            endpoint_url(p, None).to_string_lossy(),
            "https://api.openai.com/v1/responses/compact"
        );
        assert_eq!(
            endpoint_url(p, Some(&"/llm/v1/".into())).to_string_lossy(),
            "/llm/v1/responses/compact"
        );
        assert_eq!(
            default_headers(p, true).last(),
            Some(&("authorization", HeaderValue::ApiKey { prefix: "Bearer " }))
        );
        assert!(asks_once(p) && asks_once(Provider::AnthropicCompaction));
        assert!(!asks_once(Provider::OpenAi) && !asks_once(Provider::Anthropic));
        // Never the prefix form: its body is the covered conversation.
        assert!(prefix(p, json!({ "messages": [user("hi")] }), ask()).is_none());
    }
}
