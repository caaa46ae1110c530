//! SessionStore in a real headless Chromium with real IndexedDB.
#![cfg(target_arch = "wasm32")]

use agent_compaction::wasm::session_files::pi_session_to_messages;
use agent_compaction::wasm::store::SessionStore;
use js_sys::{Array, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const LARGE: &str = include_str!("../../shared/fixtures/pi-large-session.jsonl");

#[wasm_bindgen(inline_js = r#"
export function parse(text) { return JSON.parse(text); }
export function deepEqual(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
export function deleteDb(name) {
  return new Promise((resolve, reject) => {
    const r = indexedDB.deleteDatabase(name);
    r.onsuccess = () => resolve();
    r.onerror = () => reject(r.error);
    r.onblocked = () => resolve();
  });
}
// A version-1 database written by hand, as the first release lays it out.
export function makeV1(name) {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(name, 1);
    r.onupgradeneeded = () => {
      const db = r.result;
      const sessions = db.createObjectStore("sessions", { keyPath: "id" });
      const messages = db.createObjectStore("messages");
      sessions.put({ id: "old", title: "From v1", createdAt: 1, lastModified: 2, messageCount: 2,
        contextTokens: 3, preview: "hello", revision: 4, contextKey: null });
      messages.put({ role: "user", content: "hello", timestamp: 1 }, ["old", 0]);
      messages.put({ role: "assistant", content: [{ type: "text", text: "hi" }], stopReason: "stop", timestamp: 2 }, ["old", 1]);
    };
    r.onsuccess = () => { r.result.close(); resolve(); };
    r.onerror = () => reject(r.error);
  });
}
// Keys of a session's message records, read raw.
export function rawKeys(name, id) {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(name);
    r.onsuccess = () => {
      const db = r.result;
      const q = db.transaction("messages").objectStore("messages")
        .getAllKeys(IDBKeyRange.bound([id], [id, []], true, true));
      q.onsuccess = () => { db.close(); resolve(q.result); };
      q.onerror = () => reject(q.error);
    };
    r.onerror = () => reject(r.error);
  });
}
export function withFunction() {
  return { role: "user", content: [{ type: "text", text: "x", bad: () => 1 }], timestamp: 9 };
}
export function cyclic() {
  const m = { role: "user", content: "loop", timestamp: 9 };
  m.self = { back: m };
  return m;
}
"#)]
extern "C" {
    fn parse(text: &str) -> JsValue;
    #[wasm_bindgen(js_name = deepEqual)]
    fn deep_equal(a: &JsValue, b: &JsValue) -> bool;
    #[wasm_bindgen(js_name = deleteDb)]
    fn delete_db(name: &str) -> Promise;
    #[wasm_bindgen(js_name = makeV1)]
    fn make_v1(name: &str) -> Promise;
    #[wasm_bindgen(js_name = rawKeys)]
    fn raw_keys(name: &str, id: &str) -> Promise;
    #[wasm_bindgen(js_name = withFunction)]
    fn with_function() -> JsValue;
    fn cyclic() -> JsValue;
}

async fn wait(p: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(p).await
}

async fn fresh(name: &str) -> SessionStore {
    wait(delete_db(name)).await.unwrap();
    open(name).await
}

async fn open(name: &str) -> SessionStore {
    let options = parse(&format!("{{\"name\":\"{name}\"}}"));
    SessionStore::open(options).await.unwrap()
}

fn field(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &key.into()).unwrap()
}

fn message(text: &str, t: u32) -> JsValue {
    parse(&format!(
        "{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":{t}}}"
    ))
}

fn assistant(stop: &str, output: u32, t: u32) -> JsValue {
    parse(&format!(
        "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"a{t}\"}}],\"stopReason\":\"{stop}\",\
         \"usage\":{{\"input\":100,\"output\":{output},\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":{}}},\"timestamp\":{t}}}",
        100 + output
    ))
}

fn summary(t: u32) -> JsValue {
    parse(&format!(
        "{{\"role\":\"compactionSummary\",\"summary\":\"## Goal\\nsummary {t}\",\"tokensBefore\":1000,\"timestamp\":{t}}}"
    ))
}

async fn create(store: &SessionStore, id: &str) -> JsValue {
    wait(store.create_session(parse(&format!("{{\"id\":\"{id}\",\"title\":\"T\"}}"))))
        .await
        .unwrap()
}

fn error_message(e: &JsValue) -> String {
    e.unchecked_ref::<js_sys::Error>().message().into()
}

fn puts(store: &SessionStore) -> f64 {
    field(&store.stats(), "recordsPut").as_f64().unwrap()
}

fn array(items: &[&JsValue]) -> Array {
    items.iter().map(|v| (*v).clone()).collect()
}

fn with(base: &Array, extra: &[&JsValue]) -> Array {
    let a = base.slice(0, base.length());
    for e in extra {
        a.push(e);
    }
    a
}

#[wasm_bindgen_test]
async fn large_session_round_trips_and_appends_write_only_new_records() {
    let store = fresh("store-large").await;
    create(&store, "s").await;
    let session = pi_session_to_messages(LARGE.into()).unwrap();
    let messages: Array = field(&session, "messages").unchecked_into();
    assert!(messages.length() > 100);
    let meta = wait(store.save("s".into(), messages.clone().into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(
        field(&meta, "messageCount").as_f64(),
        Some(messages.length() as f64)
    );
    assert_eq!(field(&meta, "revision").as_f64(), Some(1.0));
    assert!(field(&meta, "contextTokens").as_f64().unwrap() > 0.0);
    assert!(
        field(&meta, "contextKey").is_undefined(),
        "internal fields stay inside"
    );
    let loaded = wait(store.load("s".into())).await.unwrap();
    assert!(
        deep_equal(&loaded, &messages),
        "load returns what was saved"
    );

    // One new turn: three records, whatever the session's length.
    let before = puts(&store);
    let next = with(
        &messages,
        &[
            &message("next", 1),
            &assistant("stop", 5, 2),
            &message("more", 3),
        ],
    );
    wait(store.save("s".into(), next.clone().into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(puts(&store) - before, 3.0);
    // Saving the same array again writes nothing.
    wait(store.save("s".into(), next.clone().into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(puts(&store) - before, 3.0);

    // A second store (another tab) reads the same array.
    let other = open("store-large").await;
    let loaded = wait(other.load("s".into())).await.unwrap();
    assert!(deep_equal(&loaded, &next));
    store.close();
    other.close();
}

#[wasm_bindgen_test]
async fn a_summary_insertion_writes_one_record_and_load_context_starts_there() {
    let store = fresh("store-summary").await;
    create(&store, "s").await;
    let (m0, m1, m2, m3) = (
        message("first question", 1),
        assistant("stop", 5, 2),
        message("second", 3),
        assistant("stop", 5, 4),
    );
    let base = array(&[&m0, &m1, &m2, &m3]);
    wait(store.save("s".into(), base.into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    let keys_before: Array = wait(raw_keys("store-summary", "s"))
        .await
        .unwrap()
        .unchecked_into();
    let s = summary(10);
    let compacted = array(&[&m0, &m1, &s, &m2, &m3]);
    let before = puts(&store);
    let meta = wait(store.save("s".into(), compacted.clone().into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(puts(&store) - before, 1.0, "only the summary is written");
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(5.0));
    // The records after the summary kept their keys.
    let keys_after: Array = wait(raw_keys("store-summary", "s"))
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(keys_after.length(), 5);
    assert!(deep_equal(&keys_after.get(3), &keys_before.get(2)));
    assert!(deep_equal(&keys_after.get(4), &keys_before.get(3)));

    let loaded = wait(store.load("s".into())).await.unwrap();
    assert!(deep_equal(&loaded, &compacted));
    let context = wait(store.load_context("s".into())).await.unwrap();
    assert!(deep_equal(&context, &array(&[&s, &m2, &m3])));
    // Preview: the first user text.
    assert_eq!(
        field(&meta, "preview").as_string().as_deref(),
        Some("first question")
    );
    // Stale usage (m3 at t=4 is before the summary at t=10) is not counted.
    assert!(field(&meta, "contextTokens").as_f64().unwrap() < 100.0);

    // Saving what loadContext returned would drop messages.
    let e = wait(store.save("s".into(), context.clone(), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert!(
        error_message(&e).contains("replace: true"),
        "{}",
        error_message(&e)
    );
    let meta = wait(store.save("s".into(), context.clone(), parse("{\"replace\":true}")))
        .await
        .unwrap();
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(3.0));
    let loaded = wait(store.load("s".into())).await.unwrap();
    assert!(deep_equal(&loaded, &context));
    store.close();
}

#[wasm_bindgen_test]
async fn a_trailing_failed_attempt_may_go_other_drops_need_replace() {
    let store = fresh("store-drop").await;
    create(&store, "s").await;
    let (m0, m1, err) = (
        message("q", 1),
        assistant("stop", 5, 2),
        assistant("error", 0, 3),
    );
    wait(store.save(
        "s".into(),
        array(&[&m0, &m1, &err]).into(),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap();
    let s = summary(10);
    let retry = array(&[&m0, &s, &m1]);
    let meta = wait(store.save("s".into(), retry.clone().into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(3.0));
    assert_eq!(field(&store.stats(), "recordsDeleted").as_f64(), Some(1.0));
    assert!(deep_equal(
        &wait(store.load("s".into())).await.unwrap(),
        &retry
    ));

    // Dropping a real message is refused, and nothing is written.
    let e = wait(store.save("s".into(), array(&[&m0, &s]).into(), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert!(
        error_message(&e).contains("index 2"),
        "{}",
        error_message(&e)
    );
    assert!(deep_equal(
        &wait(store.load("s".into())).await.unwrap(),
        &retry
    ));
    store.close();
}

#[wasm_bindgen_test]
async fn a_save_from_a_stale_revision_is_a_conflict_error() {
    let a = fresh("store-conflict").await;
    let b = open("store-conflict").await;
    create(&a, "s").await;
    let m0 = message("hello", 1);
    wait(a.save("s".into(), array(&[&m0]).into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    let loaded: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    wait(a.save(
        "s".into(),
        array(&[&m0, &message("from a", 2)]).into(),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap();
    let from_b = with(&loaded, &[&message("from b", 3)]);
    let e = wait(b.save("s".into(), from_b.into(), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert_eq!(
        field(&e, "name").as_string().as_deref(),
        Some("ConflictError")
    );
    assert!(e.is_instance_of::<js_sys::Error>());
    assert!(e.is_instance_of::<js_sys::Object>());
    let class: js_sys::Function = SessionStore::conflict_error().unchecked_into();
    assert!(
        js_sys::Reflect::get_prototype_of(&e).unwrap()
            == field(&class, "prototype").unchecked_into()
    );
    // Nothing of b's save was written; after a reload b can save.
    let now: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    assert_eq!(now.length(), 2);
    wait(b.save(
        "s".into(),
        with(&now, &[&message("from b", 3)]).into(),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap();
    let all: Array = wait(a.load("s".into())).await.unwrap().unchecked_into();
    assert_eq!(all.length(), 3);
    a.close();
    b.close();
}

#[wasm_bindgen_test]
async fn sessions_are_created_listed_renamed_and_deleted() {
    let store = fresh("store-sessions").await;
    create(&store, "one").await;
    create(&store, "two").await;
    wait(store.save(
        "one".into(),
        array(&[&message("hi", 1)]).into(),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap();
    let list: Array = wait(store.list()).await.unwrap().unchecked_into();
    assert_eq!(list.length(), 2);
    assert_eq!(
        field(&list.get(0), "id").as_string().as_deref(),
        Some("one"),
        "newest first"
    );
    let meta = wait(store.rename("two".into(), "Renamed".into()))
        .await
        .unwrap();
    assert_eq!(
        field(&meta, "title").as_string().as_deref(),
        Some("Renamed")
    );
    let e = create_err(&store, "one").await;
    assert!(e.contains("already exists"), "{e}");
    let defaulted = wait(store.create_session(JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(field(&defaulted, "id").as_string().unwrap().len(), 36);
    wait(store.delete("one".into())).await.unwrap();
    let keys: Array = wait(raw_keys("store-sessions", "one"))
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(keys.length(), 0, "all of its records are gone");
    let e = wait(store.load("one".into())).await.unwrap_err();
    assert!(
        error_message(&e).contains("no session \"one\""),
        "{}",
        error_message(&e)
    );
    store.close();
    let e = wait(store.list()).await.unwrap_err();
    assert!(
        error_message(&e).contains("closed"),
        "{}",
        error_message(&e)
    );
}

async fn create_err(store: &SessionStore, id: &str) -> String {
    let e = wait(store.create_session(parse(&format!("{{\"id\":\"{id}\"}}"))))
        .await
        .unwrap_err();
    error_message(&e)
}

#[wasm_bindgen_test]
async fn bad_input_is_a_type_error_naming_the_index_and_writes_nothing() {
    let store = fresh("store-bad").await;
    create(&store, "s").await;
    let m0 = message("ok", 1);
    wait(store.save("s".into(), array(&[&m0]).into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    for (bad, expect) in [
        (with_function(), "messages[2].content[0].bad is a function"),
        (cyclic(), "messages[2].self.back"),
    ] {
        let next = array(&[&m0, &message("fine", 2), &bad]);
        let e = wait(store.save("s".into(), next.into(), JsValue::UNDEFINED))
            .await
            .unwrap_err();
        assert!(e.is_instance_of::<js_sys::TypeError>());
        assert!(error_message(&e).contains(expect), "{}", error_message(&e));
        let keys: Array = wait(raw_keys("store-bad", "s"))
            .await
            .unwrap()
            .unchecked_into();
        assert_eq!(keys.length(), 1, "nothing of that save was written");
    }
    store.close();
}

#[wasm_bindgen_test]
async fn a_version_1_database_with_data_opens_with_its_data() {
    wait(delete_db("store-v1")).await.unwrap();
    wait(make_v1("store-v1")).await.unwrap();
    let store = open("store-v1").await;
    let list: Array = wait(store.list()).await.unwrap().unchecked_into();
    assert_eq!(list.length(), 1);
    assert_eq!(
        field(&list.get(0), "title").as_string().as_deref(),
        Some("From v1")
    );
    let loaded: Array = wait(store.load("old".into()))
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(loaded.length(), 2);
    // And it can be appended to.
    let next = with(&loaded, &[&message("again", 3)]);
    let meta = wait(store.save("old".into(), next.into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(5.0));
    store.close();
}

#[wasm_bindgen_test]
async fn a_deleted_database_is_reported() {
    let store = fresh("store-deleted").await;
    create(&store, "s").await;
    wait(delete_db("store-deleted")).await.unwrap();
    let e = wait(store.list()).await.unwrap_err();
    assert!(
        error_message(&e).contains("deleted or upgraded"),
        "{}",
        error_message(&e)
    );
}
