//! Tests of the conversation serialization sent to the summarizer: each
//! message kind, truncation of tool results, and pi's exact output format.

use super::*;
use crate::js::json::{parse, stringified, JsonObject};
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
        // The limit falls exactly between two blocks.
        vec![message(
            "toolResult",
            vec![text(&"p".repeat(2000)), text("x")],
        )],
        // ... or after an empty block, with a block cut after it.
        vec![message(
            "toolResult",
            vec![
                text(&"p".repeat(1000)),
                text(""),
                text(&"q".repeat(999)),
                text("rs"),
                text("t"),
            ],
        )],
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
    assert!(got(&tool_result_of(&[], 2001).0).ends_with("x\n\n[... 1 more characters truncated]"));

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
    let out = serialize_conversation(&inputs[10])
        .unwrap()
        .to_string_lossy();
    assert_eq!(
        out,
        format!(
            "[Tool result]: {}\n\n[... 1 more characters truncated]",
            "p".repeat(2000)
        )
    );
    let out = serialize_conversation(&inputs[11])
        .unwrap()
        .to_string_lossy();
    assert_eq!(
        out,
        format!(
            "[Tool result]: {}{}r\n\n[... 2 more characters truncated]",
            "p".repeat(1000),
            "q".repeat(999)
        )
    );
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

// ---- Faults only JavaScript values have --------------------------------------

/// Messages given as facts, as the boundary's source gives them; a fault
/// explains itself.
struct Facts(std::vec::IntoIter<Message<JsonText<'static>, &'static str>>);

impl MessageSource for Facts {
    type Text = JsonText<'static>;
    type Fault = &'static str;
    fn next_message(&mut self) -> Option<Message<JsonText<'static>, &'static str>> {
        self.0.next()
    }
    fn explain(&self, fault: &&'static str) -> String {
        (*fault).into()
    }
}

type Fact = Message<JsonText<'static>, &'static str>;

fn run(messages: Vec<Fact>) -> Result<String, String> {
    let mut out = JsStr::new();
    serialize(&mut Facts(messages.into_iter()), &mut out)
        .map(|()| out.to_string_lossy())
        .map_err(|e| e.to_string())
}

fn t(s: &str) -> JsonText<'static> {
    Cow::Owned(JsStr::from(s))
}

fn text_block(s: &str) -> Block<JsonText<'static>, &'static str> {
    Block::Text(Value::Text(Some(t(s))))
}

fn call(
    arguments: Arguments<JsonText<'static>, &'static str>,
    name: Value<JsonText<'static>, &'static str>,
) -> Block<JsonText<'static>, &'static str> {
    Block::ToolCall(ToolCall { arguments, name })
}

#[test]
fn holes_are_skipped_by_filter_and_undefined_to_for_of() {
    let holey = || Content::Blocks(vec![Block::Hole, text_block("a"), Block::Hole]);
    assert_eq!(
        run(vec![Message::User(holey()), Message::ToolResult(holey())]),
        Ok("[User]: a\n\n[Tool result]: a".into())
    );
    assert_eq!(
        run(vec![Message::Assistant(holey())]),
        Err("messages[0].content[0] must be a content block, got undefined".into())
    );
}

#[test]
fn reads_that_throw_are_unreadable_fields() {
    let cases: Vec<(Fact, &str)> = vec![
        (
            Message::Threw("trap"),
            "messages[0] could not be read: trap",
        ),
        (
            Message::RoleThrew("getter"),
            "messages[0].role could not be read: getter",
        ),
        (
            Message::User(Content::Threw("getter")),
            "messages[0].content could not be read: getter",
        ),
        (
            Message::ToolResult(Content::Blocks(vec![text_block("a"), Block::Threw("trap")])),
            "messages[0].content[1] could not be read: trap",
        ),
        (
            Message::Assistant(Content::Blocks(vec![Block::TypeThrew("getter")])),
            "messages[0].content[0].type could not be read: getter",
        ),
        (
            Message::Assistant(Content::Blocks(vec![call(
                Arguments::EntriesThrew("ownKeys trap"),
                Value::Text(None),
            )])),
            "messages[0].content[0].arguments could not be read: ownKeys trap",
        ),
        (
            Message::Assistant(Content::Blocks(vec![call(
                Arguments::Entries(vec![(t("a"), Ok(t("1")))]),
                Value::ReadThrew("getter"),
            )])),
            "messages[0].content[0].name could not be read: getter",
        ),
    ];
    for (message, want) in cases {
        assert_eq!(run(vec![message]), Err(want.into()));
    }
}

#[test]
fn conversions_that_throw_name_the_value() {
    let bigint = "a bigint at \"n\" (Do not know how to serialize a BigInt)";
    assert_eq!(
        run(vec![Message::Assistant(Content::Blocks(vec![call(
            Arguments::Entries(vec![(t("a"), Ok(t("1"))), (t("n"), Err(bigint))]),
            Value::Text(Some(t("f"))),
        )]))]),
        Err(format!(
            "messages[0].content[0].arguments must be an object whose values \
             JSON.stringify accepts, got {bigint}"
        ))
    );
    assert_eq!(
        run(vec![Message::User(Content::Blocks(vec![Block::Text(
            Value::NotText("a symbol")
        )]))]),
        Err("messages[0].content[0].text must be a string, got a symbol".into())
    );
}

/// pi filters (reading every `type`), then maps (reading every `text`),
/// then joins (converting); an assistant message is read block by block
/// (building tool calls), then its thinking and texts are joined.
#[test]
fn faults_are_reported_in_pis_order_of_reads() {
    let user = |blocks| run(vec![Message::User(Content::Blocks(blocks))]);
    assert_eq!(
        user(vec![
            Block::Text(Value::NotText("a symbol")),
            Block::Text(Value::ReadThrew("text getter")),
            Block::TypeThrew("type getter"),
        ]),
        Err("messages[0].content[2].type could not be read: type getter".into())
    );
    assert_eq!(
        user(vec![
            Block::Text(Value::NotText("a symbol")),
            Block::Text(Value::ReadThrew("text getter")),
        ]),
        Err("messages[0].content[1].text could not be read: text getter".into())
    );
    let assistant = |blocks| run(vec![Message::Assistant(Content::Blocks(blocks))]);
    assert_eq!(
        assistant(vec![
            Block::Text(Value::NotText("a symbol")),
            Block::Thinking(Value::NotText("a function")),
            call(Arguments::Nullish("null"), Value::NotText("a symbol")),
        ]),
        Err("messages[0].content[2].arguments must be an object, got null".into())
    );
    assert_eq!(
        assistant(vec![
            Block::Text(Value::NotText("a symbol")),
            Block::Thinking(Value::NotText("a function")),
            Block::Text(Value::ReadThrew("text getter")),
        ]),
        Err("messages[0].content[2].text could not be read: text getter".into())
    );
    assert_eq!(
        assistant(vec![
            Block::Text(Value::NotText("a symbol")),
            Block::Thinking(Value::NotText("a function")),
        ]),
        Err("messages[0].content[1].thinking must be a string, got a function".into())
    );
    // A later message's fault is never reached.
    assert_eq!(
        run(vec![Message::Nullish("undefined"), Message::Threw("trap")]),
        Err("messages[0] must be a message object, got undefined".into())
    );
}

#[test]
fn converted_values_are_shown_as_given() {
    // `${JSON.stringify(undefined)}` is "undefined"; a source gives it.
    assert_eq!(
        run(vec![
            Message::Skipped,
            Message::Assistant(Content::Blocks(vec![
                Block::Other,
                call(
                    Arguments::Entries(vec![
                        (t("path"), Ok(t("\"a.txt\""))),
                        (t("offset"), Ok(t("undefined"))),
                    ]),
                    Value::Text(Some(t("read"))),
                ),
                call(Arguments::Entries(vec![]), Value::Text(Some(t("ls")))),
            ])),
        ]),
        Ok("[Assistant tool calls]: read(path=\"a.txt\", offset=undefined); ls()".into())
    );
}

// ---- Comparison with pi in Node -------------------------------------------

const PI: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../node_modules/@mariozechner/pi-coding-agent/dist/core"
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
    format!("{}/../../fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
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
