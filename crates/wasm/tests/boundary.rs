//! The JavaScript boundary in a real headless Chromium (wasm-bindgen-test):
//! identity of returned objects, errors that name the index and field, and a
//! module that keeps working after any bad input.
#![cfg(target_arch = "wasm32")]

use agent_compaction::message::{
    agent_messages_to_chat_messages, convert_to_llm, transform_context,
};
use js_sys::{Array, JsString, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(inline_js = r#"
export function parse(text) { return JSON.parse(text); }
export function throwingRole() {
  return { get role() { throw new Error("role getter exploded"); } };
}
export function trapProxy() {
  return new Proxy({}, { get() { throw new TypeError("trap says no"); } });
}
export function deepFreeze(value) {
  if (value && typeof value === "object") {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
"#)]
extern "C" {
    fn parse(text: &str) -> JsValue;
    #[wasm_bindgen(js_name = throwingRole)]
    fn throwing_role() -> JsValue;
    #[wasm_bindgen(js_name = trapProxy)]
    fn trap_proxy() -> JsValue;
    #[wasm_bindgen(js_name = deepFreeze)]
    fn deep_freeze(value: &JsValue) -> JsValue;
}

fn sample() -> Array {
    parse(
        r###"[
      {"role":"user","content":"read main.rs","timestamp":1},
      {"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop","timestamp":2},
      {"role":"compactionSummary","summary":"## Goal\nfix 🦀 bug 漢字","tokensBefore":1234,"timestamp":3,
       "details":{"readFiles":["src/main.rs"],"modifiedFiles":["src/lib.rs","Cargo.toml"]}},
      {"role":"user","content":[{"type":"text","text":"go on"}],"timestamp":4},
      {"role":"custom","customType":"note","content":"hidden note","display":false,"timestamp":5},
      {"role":"toolResult","toolCallId":"t1","toolName":"read","content":[],"isError":false,"timestamp":6}
    ]"###,
    )
    .unchecked_into()
}

fn text_of(message: &JsValue) -> String {
    let content: Array = Reflect::get(message, &"content".into())
        .unwrap()
        .unchecked_into();
    Reflect::get(&content.get(0), &"text".into())
        .unwrap()
        .as_string()
        .unwrap()
}

fn type_error(result: Result<impl Into<JsValue>, JsValue>) -> String {
    let error = match result {
        Ok(_) => panic!("expected a TypeError"),
        Err(e) => e,
    };
    assert!(
        error.is_instance_of::<js_sys::TypeError>(),
        "not a TypeError: {error:?}"
    );
    String::from(error.unchecked_ref::<js_sys::Error>().message())
}

#[wasm_bindgen_test]
fn transform_context_slices_from_the_last_summary_keeping_objects() {
    let messages = sample();
    let context: Array = transform_context(messages.clone().into())
        .unwrap()
        .unchecked_into();
    assert_eq!(context.length(), 4);
    for i in 0..4 {
        assert!(Object::is(&context.get(i), &messages.get(i + 2)));
    }
    assert_eq!(messages.length(), 6, "input untouched");

    let no_summary = Array::of2(&messages.get(0), &messages.get(1));
    let same = transform_context(no_summary.clone().into()).unwrap();
    assert!(
        Object::is(&same, &no_summary),
        "the input itself when there is no summary"
    );
}

#[wasm_bindgen_test]
fn convert_to_llm_shows_the_summary_with_file_tags_and_keeps_the_rest() {
    let messages = sample();
    let llm = convert_to_llm(messages.clone().into()).unwrap();
    // The custom message becomes a user message; the summary too.
    assert_eq!(llm.length(), 6);
    assert!(Object::is(&llm.get(0), &messages.get(0)));
    assert!(Object::is(&llm.get(1), &messages.get(1)));
    assert!(Object::is(&llm.get(3), &messages.get(3)));
    assert!(Object::is(&llm.get(5), &messages.get(5)));
    assert_eq!(
        text_of(&llm.get(2)),
        "The conversation history before this point was compacted into the following summary:\n\n\
         <compaction_summary>\n## Goal\nfix 🦀 bug 漢字\n\n<read-files>\nsrc/main.rs\n</read-files>\n\n\
         <modified-files>\nsrc/lib.rs\nCargo.toml\n</modified-files>\n</compaction_summary>"
    );
    assert_eq!(Reflect::get(&llm.get(2), &"role".into()).unwrap(), "user");
    assert_eq!(Reflect::get(&llm.get(2), &"timestamp".into()).unwrap(), 3);
    assert_eq!(text_of(&llm.get(4)), "hidden note");
}

#[wasm_bindgen_test]
fn lone_surrogates_in_a_summary_survive_exactly() {
    let messages = Array::new();
    let summary = Object::new();
    Reflect::set(&summary, &"role".into(), &"compactionSummary".into()).unwrap();
    // "a" + lone high surrogate + "b": not representable as a Rust String.
    let text = JsString::from_char_code(&[0x61, 0xD800, 0x62]);
    Reflect::set(&summary, &"summary".into(), &text).unwrap();
    Reflect::set(&summary, &"timestamp".into(), &1.into()).unwrap();
    messages.push(&summary);
    let llm = convert_to_llm(messages.into()).unwrap();
    let content: Array = Reflect::get(&llm.get(0), &"content".into())
        .unwrap()
        .unchecked_into();
    let shown: JsString = Reflect::get(&content.get(0), &"text".into())
        .unwrap()
        .unchecked_into();
    let before = "The conversation history before this point was compacted into the following summary:\n\n<compaction_summary>\n";
    let start = before.len() as u32;
    assert_eq!(
        JsValue::from(shown.slice(start, start + 3)),
        JsValue::from(text)
    );
    assert_eq!(
        shown.length(),
        start + 3 + "\n</compaction_summary>".len() as u32
    );
}

#[wasm_bindgen_test]
fn display_hides_summaries_or_puts_a_divider_in_their_place() {
    let messages = sample();
    let shown =
        agent_messages_to_chat_messages(messages.clone().into(), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        shown.length(),
        4,
        "summary and hidden custom message left out"
    );
    let with_divider =
        agent_messages_to_chat_messages(messages.clone().into(), parse(r#"{"divider":true}"#))
            .unwrap();
    assert_eq!(with_divider.length(), 5);
    let divider = with_divider.get(2);
    assert_eq!(
        Reflect::get(&divider, &"role".into()).unwrap(),
        "compactionDivider"
    );
    assert_eq!(
        Reflect::get(&divider, &"tokensBefore".into()).unwrap(),
        1234
    );
    assert_eq!(Reflect::get(&divider, &"timestamp".into()).unwrap(), 3);
    assert!(
        Reflect::get(&divider, &"summary".into())
            .unwrap()
            .is_undefined(),
        "never the summary text"
    );
    assert!(Object::is(&with_divider.get(4), &messages.get(5)));
}

#[wasm_bindgen_test]
fn frozen_input_is_read_not_written() {
    let messages = deep_freeze(&sample().into());
    assert_eq!(convert_to_llm(messages.clone()).unwrap().length(), 6);
    let context: Array = transform_context(messages.clone())
        .unwrap()
        .unchecked_into();
    assert_eq!(context.length(), 4);
    assert_eq!(
        agent_messages_to_chat_messages(messages, JsValue::UNDEFINED)
            .unwrap()
            .length(),
        4
    );
}

#[wasm_bindgen_test]
fn bad_input_is_a_type_error_naming_index_and_field_and_the_module_keeps_working() {
    assert_eq!(
        type_error(transform_context(JsValue::NULL)),
        "messages must be an array of messages, got null"
    );
    assert_eq!(
        type_error(convert_to_llm(parse(r#"{"role":"user"}"#))),
        "messages must be an array of messages, got an object"
    );
    assert_eq!(
        type_error(transform_context(parse(
            r#"[{"role":"user","content":"x"}, 7]"#
        ))),
        "messages[1] must be a message object, got a number"
    );
    assert_eq!(
        type_error(convert_to_llm(parse(
            r#"[{"role":"user","content":"x"}, {"content":"y"}]"#
        ))),
        "messages[1].role must be a string, got undefined"
    );
    assert_eq!(
        type_error(agent_messages_to_chat_messages(
            parse(r#"[{"role":"user"},{"role":"compactionSummary","tokensBefore":1}]"#),
            JsValue::UNDEFINED
        )),
        "messages[1].summary must be a string, got undefined"
    );
    // Details that are not lists of strings are an extension's own data (pi
    // reads them so): no tags, no error.
    assert!(convert_to_llm(parse(
        r#"[{"role":"compactionSummary","summary":"s","details":{"readFiles":["a",3]}}]"#
    ))
    .is_ok());
    assert_eq!(
        type_error(agent_messages_to_chat_messages(
            sample().into(),
            parse(r#"{"divider":"yes"}"#)
        )),
        "options.divider must be a boolean, got a string"
    );

    let hostile = Array::of2(&sample().get(0), &throwing_role());
    assert_eq!(
        type_error(convert_to_llm(hostile.clone().into())),
        "messages[1].role could not be read: role getter exploded"
    );
    assert_eq!(
        type_error(transform_context(hostile.into())),
        "messages[1].role could not be read: role getter exploded"
    );
    let proxied = Array::of1(&trap_proxy());
    assert!(type_error(agent_messages_to_chat_messages(
        proxied.into(),
        JsValue::UNDEFINED
    ))
    .starts_with("messages[0].role could not be read: trap says no"));

    // Still working after all of that.
    let context: Array = transform_context(sample().into()).unwrap().unchecked_into();
    assert_eq!(context.length(), 4);
}
