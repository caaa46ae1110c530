//! SessionStore in a real headless Chromium with real IndexedDB, and the
//! engine quirks it handles (locks that never come, connections the
//! browser closes, storage unavailable, durability, persist/estimate).
#![cfg(target_arch = "wasm32")]

use agent_compaction::session_file::pi_session_to_messages;
use agent_compaction::storage::SessionStore;
use js_sys::{Array, Promise, Reflect};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const LARGE: &str = include_str!("../../../fixtures/pi-large-session.jsonl");
const BEFORE_COMPACTION: &str = include_str!("../../../fixtures/pi-before-compaction.jsonl");

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
// A version-1 database written by hand, as the first release lays it out,
// plus a record missing the fields a later version relies on.
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
      sessions.put({ id: "sparse", createdAt: 5 });
      messages.put({ role: "user", content: "sparse one", timestamp: 5 }, ["sparse", 0]);
      messages.put({ role: "user", content: "sparse two", timestamp: 6 }, ["sparse", 1]);
    };
    r.onsuccess = () => { r.result.close(); resolve(); };
    r.onerror = () => reject(r.error);
  });
}
// An open connection that ignores versionchange (an older version of the
// library in another tab), and its close.
export function holdOpen(name) {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(name);
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}
export function closeDb(db) { db.close(); }
// How many messages each of a session's records holds (a pack: several).
export function rawSizes(name, id) {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(name);
    r.onsuccess = () => {
      const db = r.result;
      const q = db.transaction("messages").objectStore("messages")
        .getAll(IDBKeyRange.bound([id], [id, []], true, true));
      q.onsuccess = () => { db.close(); resolve(q.result.map((v) => (Array.isArray(v) ? v.length : 1))); };
      q.onerror = () => reject(q.error);
    };
    r.onerror = () => reject(r.error);
  });
}
// Sets a session record's lastModified `ms` ahead of this clock (written by
// a tab whose clock runs ahead); resolves with it.
export function lastModifiedAhead(name, id, ms) {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(name);
    r.onsuccess = () => {
      const db = r.result;
      const sessions = db.transaction("sessions", "readwrite").objectStore("sessions");
      const q = sessions.get(id);
      q.onsuccess = () => {
        const ahead = Date.now() + ms;
        sessions.put({ ...q.result, lastModified: ahead }).onsuccess = () => { db.close(); resolve(ahead); };
      };
      q.onerror = () => reject(q.error);
    };
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
// The database's version and the sessions store's index names.
export function schemaOf(name) {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(name);
    r.onsuccess = () => {
      const db = r.result;
      const store = db.transaction("sessions").objectStore("sessions");
      const out = { version: db.version, indexes: [...store.indexNames], stores: [...db.objectStoreNames] };
      db.close();
      resolve(out);
    };
    r.onerror = () => reject(r.error);
  });
}
// Deep equality that ignores key order (JSON values only).
export function sameValue(a, b) {
  const norm = (v) => Array.isArray(v) ? v.map(norm)
    : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, norm(v[k])]))
    : v;
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}
export function hasWebLocks() {
  return typeof navigator.locks?.request === "function";
}
// Hides navigator.locks (as in Node or an insecure context) until the
// returned function is called.
export function hideWebLocks() {
  Object.defineProperty(navigator, "locks", { value: undefined, configurable: true });
  return () => { delete navigator.locks; };
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Two overlapping withSessionLock callers on one store, each saving inside;
// a rename through a second store started while the first holds the lock;
// then a callback that throws. With `hide`, navigator.locks is hidden
// meanwhile (restored whatever happens).
export async function lockScenario(store, other, id, m1, m2, hide) {
  const restore = hide ? hideWebLocks() : () => {};
  try {
    const webLocks = hasWebLocks();
    const { log, results } = await overlappingLocks(store, other, id, m1, m2);
    const error = await store.withSessionLock(id, () => { throw new RangeError("boom"); }).then(
      () => null, (e) => e);
    const after = await store.withSessionLock(id, () => 7);
    return { webLocks, log, results, error, after };
  } finally {
    restore();
  }
}
async function overlappingLocks(store, other, id, m1, m2) {
  const log = [];
  let renamed;
  const first = store.withSessionLock(id, async () => {
    log.push("first start");
    renamed = other.rename(id, "renamed").then(() => log.push("other store's rename"));
    await sleep(60);
    const loaded = await store.load(id);
    await store.save(id, [...loaded, m1]);
    const nested = await store.withSessionLock(id, async () => "nested");
    log.push(`first end (${nested})`);
    return "first";
  });
  const second = store.withSessionLock(id, async () => {
    log.push("second start");
    const loaded = await store.load(id);
    await store.save(id, [...loaded, m2]);
    log.push("second end");
    return "second";
  });
  const results = await Promise.all([first, second]);
  await renamed;
  return { log, results };
}
export function pause(ms) {
  return sleep(ms);
}
// Whether this page holds the Web Lock `name`.
export async function lockHeld(name) {
  const state = await navigator.locks.query();
  return state.held.some((l) => l.name === name);
}
// Asks for the lock `name` as another tab of this package does: a notice on
// the locks channel. Resolves with how long (ms) until the page let it go,
// or -1 after `ms`.
export async function askFor(name, ms) {
  const t0 = performance.now();
  const channel = new BroadcastChannel("agent-compaction-locks");
  channel.postMessage({ want: name });
  channel.close();
  while (performance.now() - t0 < ms) {
    if (!(await lockHeld(name))) return performance.now() - t0;
    await sleep(2);
  }
  return -1;
}
// Takes the lock `name` as code that knows nothing of the notices does;
// resolves with how long (ms) that took.
export async function takeLock(name) {
  const t0 = performance.now();
  await navigator.locks.request(name, () => {});
  return performance.now() - t0;
}
// Counts the reads of message records (getAll) until stopped.
export function countReads() {
  const proto = IDBObjectStore.prototype;
  const getAll = proto.getAll;
  const counter = { count: 0 };
  proto.getAll = function (...args) {
    if (this.name === "messages") counter.count++;
    return getAll.apply(this, args);
  };
  counter.stop = () => { proto.getAll = getAll; };
  return counter;
}
// Collects the events an onChange listener receives.
export function collector() {
  const events = [];
  return { events, listener: (e) => events.push(e) };
}
export async function eventsAfter(events, count, ms) {
  const deadline = Date.now() + ms;
  while (events.length < count && Date.now() < deadline) await sleep(5);
  return events;
}
// A connection at `version` (creating the database), kept open: an upgrade
// elsewhere waits for it (it has no versionchange handler).
export function openRaw(name, version) {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(name, version);
    r.onupgradeneeded = () => {
      r.result.createObjectStore("sessions", { keyPath: "id" });
      r.result.createObjectStore("messages");
    };
    r.onsuccess = () => resolve(r.result);
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
    #[wasm_bindgen(js_name = holdOpen)]
    fn hold_open(name: &str) -> Promise;
    #[wasm_bindgen(js_name = closeDb)]
    fn close_db(db: &JsValue);
    #[wasm_bindgen(js_name = rawKeys)]
    fn raw_keys(name: &str, id: &str) -> Promise;
    #[wasm_bindgen(js_name = lastModifiedAhead)]
    fn last_modified_ahead(name: &str, id: &str, ms: u32) -> Promise;
    #[wasm_bindgen(js_name = rawSizes)]
    fn raw_sizes(name: &str, id: &str) -> Promise;
    #[wasm_bindgen(js_name = withFunction)]
    fn with_function() -> JsValue;
    #[wasm_bindgen(js_name = schemaOf)]
    fn schema_of(name: &str) -> Promise;
    #[wasm_bindgen(js_name = sameValue)]
    fn same_value(a: &JsValue, b: &JsValue) -> bool;
    #[wasm_bindgen(js_name = hasWebLocks)]
    fn has_web_locks() -> bool;
    #[wasm_bindgen(js_name = lockScenario)]
    fn lock_scenario_js(
        store: &JsValue,
        other: &JsValue,
        id: &str,
        m1: &JsValue,
        m2: &JsValue,
        hide: bool,
    ) -> Promise;
    fn pause(ms: u32) -> Promise;
    #[wasm_bindgen(js_name = lockHeld)]
    fn lock_held(name: &str) -> Promise;
    #[wasm_bindgen(js_name = askFor)]
    fn ask_for(name: &str, ms: u32) -> Promise;
    #[wasm_bindgen(js_name = takeLock)]
    fn take_lock(name: &str) -> Promise;
    #[wasm_bindgen(js_name = countReads)]
    fn count_reads() -> JsValue;
    fn collector() -> JsValue;
    #[wasm_bindgen(js_name = eventsAfter)]
    fn events_after(events: &JsValue, count: u32, ms: u32) -> Promise;
    fn cyclic() -> JsValue;
    #[wasm_bindgen(js_name = openRaw)]
    fn open_raw(name: &str, version: u32) -> Promise;
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

/// `store.save(id, messages)`, awaited.
async fn save(
    store: &SessionStore,
    id: &str,
    messages: impl Into<JsValue>,
) -> Result<JsValue, JsValue> {
    wait(store.save(id.into(), messages.into(), JsValue::UNDEFINED)).await
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
    let meta = save(&store, "s", messages.clone()).await.unwrap();
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

    // One new turn: three records whatever the session's length, and here
    // (32 + 4 loose messages reached) a pack of the oldest loose ones.
    let before = puts(&store);
    let next = with(
        &messages,
        &[
            &message("next", 1),
            &assistant("stop", 5, 2),
            &message("more", 3),
        ],
    );
    save(&store, "s", next.clone()).await.unwrap();
    assert_eq!(puts(&store) - before, 4.0);
    // Saving the same array again writes nothing, not even a new revision.
    let saved = save(&store, "s", next.clone()).await.unwrap();
    let again = save(&store, "s", next.clone()).await.unwrap();
    assert_eq!(puts(&store) - before, 4.0);
    assert!(deep_equal(&again, &saved));

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
    save(&store, "s", base).await.unwrap();
    let keys_before: Array = wait(raw_keys("store-summary", "s"))
        .await
        .unwrap()
        .unchecked_into();
    let s = summary(10);
    let compacted = array(&[&m0, &m1, &s, &m2, &m3]);
    let before = puts(&store);
    let meta = save(&store, "s", compacted.clone()).await.unwrap();
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
    save(&store, "s", array(&[&m0, &m1, &err])).await.unwrap();
    let s = summary(10);
    let retry = array(&[&m0, &s, &m1]);
    let meta = save(&store, "s", retry.clone()).await.unwrap();
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(3.0));
    assert_eq!(field(&store.stats(), "recordsDeleted").as_f64(), Some(1.0));
    assert!(deep_equal(
        &wait(store.load("s".into())).await.unwrap(),
        &retry
    ));

    // Dropping a real message is refused, and nothing is written.
    let e = save(&store, "s", array(&[&m0, &s])).await.unwrap_err();
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
    save(&a, "s", array(&[&m0])).await.unwrap();
    let loaded: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    save(&a, "s", array(&[&m0, &message("from a", 2)]))
        .await
        .unwrap();
    let from_b = with(&loaded, &[&message("from b", 3)]);
    let e = save(&b, "s", from_b).await.unwrap_err();
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
    save(&b, "s", with(&now, &[&message("from b", 3)]))
        .await
        .unwrap();
    let all: Array = wait(a.load("s".into())).await.unwrap().unchecked_into();
    assert_eq!(all.length(), 3);
    a.close();
    b.close();
}

#[wasm_bindgen_test]
async fn a_save_of_the_same_messages_keeps_the_revision() {
    let a = fresh("store-same").await;
    let b = open("store-same").await;
    create(&a, "s").await;
    let (m0, m1) = (message("hello", 1), assistant("stop", 5, 2));
    save(&a, "s", array(&[&m0])).await.unwrap();
    let loaded: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    let two = array(&[&m0, &m1]);
    save(&a, "s", two.clone()).await.unwrap();
    // b saving what it loaded, unchanged, still learns it is out of date.
    let e = save(&b, "s", loaded).await.unwrap_err();
    assert_eq!(
        field(&e, "name").as_string().as_deref(),
        Some("ConflictError")
    );
    // b reloads; a saves the same array again: no new revision, so b's
    // next save is no conflict.
    let loaded: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    let meta = save(&a, "s", two.clone()).await.unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(2.0));
    let three = with(&loaded, &[&message("from b", 3)]);
    let meta = save(&b, "s", three.clone()).await.unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(3.0));
    assert!(deep_equal(&wait(a.load("s".into())).await.unwrap(), &three));
    a.close();
    b.close();
}

/// `store.save(id, messages, { replace: true })`, awaited.
async fn replace(
    store: &SessionStore,
    id: &str,
    messages: impl Into<JsValue>,
) -> Result<JsValue, JsValue> {
    let options = parse("{\"replace\":true}");
    wait(store.save(id.into(), messages.into(), options)).await
}

#[wasm_bindgen_test]
async fn a_stale_save_tried_again_stays_a_conflict_until_the_session_is_loaded_again() {
    let a = fresh("store-stale-retry").await;
    let b = open("store-stale-retry").await;
    create(&a, "s").await;
    let (m0, m1, m2) = (
        message("one", 1),
        assistant("stop", 5, 2),
        message("three", 3),
    );
    save(&a, "s", array(&[&m0, &m1, &m2])).await.unwrap();
    let stale: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    let added = array(&[&m0, &m1, &m2, &message("from a", 4)]);
    save(&a, "s", added.clone()).await.unwrap();
    // b cuts its stale copy back (replace) and retries after the conflict,
    // without loading: each try is refused, a's message stays.
    let cut = stale.slice(0, 1);
    for _ in 0..3 {
        let e = replace(&b, "s", cut.clone()).await.unwrap_err();
        assert_eq!(error_name(&e), "ConflictError", "{}", error_message(&e));
    }
    // b appends to its stale copy after a cut the session back: a retry
    // must not put back what a removed.
    replace(&a, "s", added.slice(0, 1)).await.unwrap();
    let turn = with(&stale, &[&message("from b", 5)]);
    for _ in 0..3 {
        let e = save(&b, "s", turn.clone()).await.unwrap_err();
        assert_eq!(error_name(&e), "ConflictError", "{}", error_message(&e));
    }
    let stored: Array = wait(a.load("s".into())).await.unwrap().unchecked_into();
    assert!(deep_equal(&stored, &array(&[&m0])));
    // Loaded again, b saves.
    let now: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    let meta = save(&b, "s", with(&now, &[&message("from b", 5)]))
        .await
        .unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(4.0));
    a.close();
    b.close();
}

#[wasm_bindgen_test]
async fn a_copy_of_a_deleted_session_is_not_saved_into_one_created_again_under_its_id() {
    let a = fresh("store-recreated").await;
    let b = open("store-recreated").await;
    let heard = collector();
    let _unsubscribe = a.on_change(field(&heard, "listener")).unwrap();
    create(&a, "main").await;
    let (m0, m1) = (message("old", 1), assistant("stop", 5, 2));
    save(&a, "main", array(&[&m0, &m1])).await.unwrap();
    let copy: Array = wait(a.load("main".into())).await.unwrap().unchecked_into();
    // b deletes it and creates a new, empty "main"; a hears both.
    wait(b.delete("main".into())).await.unwrap();
    create(&b, "main").await;
    wait(events_after(&field(&heard, "events"), 2, 2000))
        .await
        .unwrap();
    let turn = with(&copy, &[&message("a's turn", 3)]);
    for _ in 0..2 {
        let e = save(&a, "main", turn.clone()).await.unwrap_err();
        assert_eq!(error_name(&e), "ConflictError", "{}", error_message(&e));
        assert!(error_message(&e).contains("was deleted since"));
        let e = replace(&a, "main", turn.clone()).await.unwrap_err();
        assert_eq!(error_name(&e), "ConflictError");
    }
    // b's session is still its own, even once it reaches the copy's revision.
    let fresh_turn = message("b's first", 4);
    let meta = save(&b, "main", array(&[&fresh_turn])).await.unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(1.0));
    wait(events_after(&field(&heard, "events"), 3, 2000))
        .await
        .unwrap();
    let e = replace(&a, "main", turn.clone()).await.unwrap_err();
    assert_eq!(error_name(&e), "ConflictError");
    let stored: Array = wait(b.load("main".into())).await.unwrap().unchecked_into();
    assert!(deep_equal(&stored, &array(&[&fresh_turn])));
    // Loaded again, a saves.
    let now: Array = wait(a.load("main".into())).await.unwrap().unchecked_into();
    save(&a, "main", with(&now, &[&message("a's turn", 3)]))
        .await
        .unwrap();
    // The same when this store deleted it itself, with nothing to hear.
    let copy: Array = wait(a.load("main".into())).await.unwrap().unchecked_into();
    wait(a.delete("main".into())).await.unwrap();
    create(&b, "main").await;
    let e = save(&a, "main", with(&copy, &[&message("late", 5)]))
        .await
        .unwrap_err();
    assert_eq!(error_name(&e), "ConflictError");
    // A store that creates the id itself saves into it (once it heard of
    // the delete: a notice arriving later would outdate its new copy).
    wait(b.delete("main".into())).await.unwrap();
    wait(events_after(&field(&heard, "events"), 5, 2000))
        .await
        .unwrap();
    create(&a, "main").await;
    save(&a, "main", with(&copy, &[&message("late", 5)]))
        .await
        .unwrap();
    a.close();
    b.close();
}

#[wasm_bindgen_test]
async fn sessions_are_created_listed_renamed_and_deleted() {
    let store = fresh("store-sessions").await;
    create(&store, "one").await;
    create(&store, "two").await;
    save(&store, "one", array(&[&message("hi", 1)]))
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
    // Renamed by this tab after a tab whose clock runs ahead wrote the
    // record: its lastModified does not go back (nor would list()'s order).
    let ahead = wait(last_modified_ahead("store-sessions", "two", 3_600_000))
        .await
        .unwrap();
    let meta = wait(store.rename("two".into(), "Again".into()))
        .await
        .unwrap();
    assert_eq!(field(&meta, "lastModified").as_f64(), ahead.as_f64());
    assert_eq!(field(&meta, "title").as_string().as_deref(), Some("Again"));
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
    save(&store, "s", array(&[&m0])).await.unwrap();
    for (bad, expect) in [
        (with_function(), "messages[2].content[0].bad is a function"),
        (cyclic(), "messages[2].self.back"),
    ] {
        let next = array(&[&m0, &message("fine", 2), &bad]);
        let e = save(&store, "s", next).await.unwrap_err();
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

/// The `name` of a rejection, and that it is a real `Error`.
fn error_name(e: &JsValue) -> String {
    assert!(e.is_instance_of::<js_sys::Error>(), "not an Error: {e:?}");
    field(e, "name").as_string().unwrap_or_default()
}

#[wasm_bindgen_test]
async fn store_errors_have_stable_names() {
    let store = fresh("store-names").await;
    create(&store, "s").await;
    // SessionExistsError: createSession, and fork onto a taken id.
    let e = wait(store.create_session(parse("{\"id\":\"s\"}")))
        .await
        .unwrap_err();
    assert_eq!(error_name(&e), "SessionExistsError");
    assert!(error_message(&e).contains("already exists"));
    create(&store, "t").await;
    let e = wait(store.fork("s".into(), 0.into(), parse("{\"id\":\"t\"}")))
        .await
        .unwrap_err();
    assert_eq!(error_name(&e), "SessionExistsError");
    // SessionNotFoundError: load, save, rename, delete, fork, export.
    for p in [
        store.load("nobody".into()),
        store.load_context("nobody".into()),
        store.rename("nobody".into(), "x".into()),
        store.delete("nobody".into()),
        store.fork("nobody".into(), 0.into(), JsValue::UNDEFINED),
        store.export_jsonl("nobody".into()),
        store.save("nobody".into(), Array::new().into(), JsValue::UNDEFINED),
    ] {
        let e = wait(p).await.unwrap_err();
        assert_eq!(
            error_name(&e),
            "SessionNotFoundError",
            "{}",
            error_message(&e)
        );
    }
    // RefusedDropError.
    let (m0, m1) = (message("q", 1), message("r", 2));
    save(&store, "s", array(&[&m0, &m1])).await.unwrap();
    let e = save(&store, "s", array(&[&m1])).await.unwrap_err();
    assert_eq!(error_name(&e), "RefusedDropError");
    assert!(error_message(&e).contains("replace: true"));
    // ConflictError, an instance of the exported class.
    let other = open("store-names").await;
    let loaded: Array = wait(other.load("s".into())).await.unwrap().unchecked_into();
    save(&store, "s", array(&[&m0, &m1, &message("s", 3)]))
        .await
        .unwrap();
    let e = save(&other, "s", with(&loaded, &[&message("o", 4)]))
        .await
        .unwrap_err();
    assert_eq!(error_name(&e), "ConflictError");
    let class: js_sys::Function = SessionStore::conflict_error().unchecked_into();
    assert!(e.is_instance_of::<js_sys::Error>());
    assert!(js_sys::Reflect::get(&class, &"prototype".into())
        .unwrap()
        .unchecked_into::<js_sys::Object>()
        .is_prototype_of(&e));
    other.close();
    // StoreClosedError.
    store.close();
    let e = wait(store.list()).await.unwrap_err();
    assert_eq!(error_name(&e), "StoreClosedError");

    // UpgradeBlockedError: an older version stays open elsewhere.
    wait(delete_db("store-names-old")).await.unwrap();
    let old = wait(open_raw("store-names-old", 2)).await.unwrap();
    let e = SessionStore::open(parse("{\"name\":\"store-names-old\"}"))
        .await
        .err()
        .expect("blocked");
    assert_eq!(
        error_name(&e),
        "UpgradeBlockedError",
        "{}",
        error_message(&e)
    );
    let close: js_sys::Function = field(&old, "close").unchecked_into();
    close.call0(&old).unwrap();
    // OpenFailedError: the database is of a newer version than this library's.
    wait(delete_db("store-names-new")).await.unwrap();
    let newer = wait(open_raw("store-names-new", 99)).await.unwrap();
    close.call0(&newer).unwrap();
    let e = SessionStore::open(parse("{\"name\":\"store-names-new\"}"))
        .await
        .err()
        .expect("a newer version");
    assert_eq!(error_name(&e), "OpenFailedError", "{}", error_message(&e));
}

#[wasm_bindgen_test]
async fn a_version_1_database_with_data_opens_with_its_data() {
    wait(delete_db("store-v1")).await.unwrap();
    wait(make_v1("store-v1")).await.unwrap();
    let store = open("store-v1").await;
    // Upgraded to version 4: the index and the history store are there,
    // the records kept.
    let schema = wait(schema_of("store-v1")).await.unwrap();
    assert_eq!(field(&schema, "version").as_f64(), Some(4.0));
    assert!(deep_equal(
        &field(&schema, "indexes"),
        &parse("[\"byLastModified\"]")
    ));
    assert!(deep_equal(
        &field(&schema, "stores"),
        &parse("[\"history\",\"messages\",\"sessions\"]")
    ));
    let list: Array = wait(store.list()).await.unwrap().unchecked_into();
    assert_eq!(list.length(), 2);
    // The sparse record got defaults: lastModified from createdAt (so it is
    // listed, newest first), a title, and its messages counted.
    let sparse = list.get(0);
    assert_eq!(field(&sparse, "id").as_string().as_deref(), Some("sparse"));
    assert_eq!(field(&sparse, "lastModified").as_f64(), Some(5.0));
    assert_eq!(field(&sparse, "messageCount").as_f64(), Some(2.0));
    assert_eq!(
        field(&sparse, "title").as_string().as_deref(),
        Some("New session")
    );
    assert_eq!(field(&sparse, "revision").as_f64(), Some(0.0));
    let old = list.get(1);
    assert_eq!(field(&old, "title").as_string().as_deref(), Some("From v1"));
    assert_eq!(field(&old, "messageCount").as_f64(), Some(2.0));
    assert_eq!(field(&old, "preview").as_string().as_deref(), Some("hello"));
    let loaded: Array = wait(store.load("old".into()))
        .await
        .unwrap()
        .unchecked_into();
    assert!(deep_equal(
        &loaded,
        &parse("[{\"role\":\"user\",\"content\":\"hello\",\"timestamp\":1},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"stopReason\":\"stop\",\"timestamp\":2}]")
    ));
    // And it can be appended to; it is then the newest.
    let next = with(&loaded, &[&message("again", 3)]);
    let meta = save(&store, "old", next.clone()).await.unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(5.0));
    assert!(deep_equal(
        &wait(store.load("old".into())).await.unwrap(),
        &next
    ));
    let list: Array = wait(store.list()).await.unwrap().unchecked_into();
    assert_eq!(
        field(&list.get(0), "id").as_string().as_deref(),
        Some("old")
    );
    let sparse: Array = wait(store.load_context("sparse".into()))
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(sparse.length(), 2);
    let next = with(&sparse, &[&message("three", 7)]);
    let meta = save(&store, "sparse", next).await.unwrap();
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(3.0));
    assert_eq!(field(&meta, "revision").as_f64(), Some(1.0));
    store.close();
    // Opening the upgraded database again changes nothing.
    let again = open("store-v1").await;
    let list: Array = wait(again.list()).await.unwrap().unchecked_into();
    assert_eq!(list.length(), 2);
    again.close();
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

fn branch_summary(t: u32) -> JsValue {
    parse(&format!(
        "{{\"role\":\"branchSummary\",\"summary\":\"left a branch {t}\",\"fromId\":\"x\",\"timestamp\":{t}}}"
    ))
}

async fn keys_of(db: &str, id: &str) -> u32 {
    let keys: Array = wait(raw_keys(db, id)).await.unwrap().unchecked_into();
    keys.length()
}

#[wasm_bindgen_test]
async fn fork_copies_a_prefix_adds_a_branch_summary_and_shares_no_records() {
    let store = fresh("store-fork").await;
    create(&store, "src").await;
    let (m0, m1, s, m3, m4) = (
        message("first", 1),
        assistant("stop", 5, 2),
        summary(10),
        message("after the summary", 11),
        assistant("stop", 5, 12),
    );
    let source = array(&[&m0, &m1, &s, &m3, &m4]);
    save(&store, "src", source.clone()).await.unwrap();

    // A prefix: the records before atIndex, under a new id and title.
    let meta = wait(store.fork("src".into(), 2.into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    let prefix_id = field(&meta, "id").as_string().unwrap();
    assert_ne!(prefix_id, "src");
    assert_eq!(prefix_id.len(), 36, "a fresh UUIDv7");
    assert_eq!(
        field(&meta, "title").as_string().as_deref(),
        Some("T (fork)")
    );
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(2.0));
    assert_eq!(
        field(&meta, "preview").as_string().as_deref(),
        Some("first")
    );
    let loaded = wait(store.load(prefix_id.as_str().into())).await.unwrap();
    assert!(deep_equal(&loaded, &array(&[&m0, &m1])));

    // With a summary, past the compaction: loadContext of the fork starts
    // at the copied compaction summary.
    let branch = branch_summary(20);
    let options: JsValue = js_sys::Object::new().into();
    Reflect::set(&options, &"summary".into(), &branch).unwrap();
    Reflect::set(&options, &"title".into(), &"Other way".into()).unwrap();
    let meta = wait(store.fork("src".into(), 4.into(), options))
        .await
        .unwrap();
    let branched_id = field(&meta, "id").as_string().unwrap();
    assert_eq!(
        field(&meta, "title").as_string().as_deref(),
        Some("Other way")
    );
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(5.0));
    let expected = array(&[&m0, &m1, &s, &m3, &branch]);
    let loaded = wait(store.load(branched_id.as_str().into())).await.unwrap();
    assert!(deep_equal(&loaded, &expected));
    let context = wait(store.load_context(branched_id.as_str().into()))
        .await
        .unwrap();
    assert!(deep_equal(&context, &array(&[&s, &m3, &branch])));
    // The fork is a session like any other: it can be appended to.
    let next = with(&loaded.unchecked_into(), &[&message("go on", 30)]);
    let meta = wait(store.save(branched_id.as_str().into(), next.into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(6.0));

    // The whole session and none of it are forks too.
    let all = wait(store.fork("src".into(), 5.into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(field(&all, "messageCount").as_f64(), Some(5.0));
    let none = wait(store.fork("src".into(), 0.into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(field(&none, "messageCount").as_f64(), Some(0.0));

    // Bad arguments: clear errors, nothing written.
    let listed_before = wait(store.list())
        .await
        .unwrap()
        .unchecked_into::<Array>()
        .length();
    let bad_summary: JsValue = js_sys::Object::new().into();
    Reflect::set(
        &bad_summary,
        &"summary".into(),
        &message("not a summary", 1),
    )
    .unwrap();
    for (at, options, class, expect) in [
        (
            JsValue::from(6),
            JsValue::UNDEFINED,
            "RangeError",
            "has 5 messages",
        ),
        (
            JsValue::from(-1),
            JsValue::UNDEFINED,
            "RangeError",
            "got -1",
        ),
        (
            JsValue::from(1.5),
            JsValue::UNDEFINED,
            "RangeError",
            "got 1.5",
        ),
        (
            JsValue::from("2"),
            JsValue::UNDEFINED,
            "TypeError",
            "must be a number",
        ),
        (
            JsValue::from(2),
            bad_summary,
            "TypeError",
            "got role \"user\"",
        ),
    ] {
        let e = wait(store.fork("src".into(), at, options))
            .await
            .unwrap_err();
        assert_eq!(field(&e, "name").as_string().as_deref(), Some(class));
        assert!(error_message(&e).contains(expect), "{}", error_message(&e));
    }
    let e = wait(store.fork("missing".into(), 0.into(), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert!(
        error_message(&e).contains("no session \"missing\""),
        "{}",
        error_message(&e)
    );
    let listed_after = wait(store.list())
        .await
        .unwrap()
        .unchecked_into::<Array>()
        .length();
    assert_eq!(listed_after, listed_before);

    // The source is unchanged; deleting the source or a fork leaves the other whole.
    assert!(deep_equal(
        &wait(store.load("src".into())).await.unwrap(),
        &source
    ));
    assert_eq!(keys_of("store-fork", "src").await, 5);
    wait(store.delete(prefix_id.as_str().into())).await.unwrap();
    assert!(deep_equal(
        &wait(store.load("src".into())).await.unwrap(),
        &source
    ));
    wait(store.delete("src".into())).await.unwrap();
    let fresh_store = open("store-fork").await;
    let loaded = wait(fresh_store.load(branched_id.as_str().into()))
        .await
        .unwrap();
    assert_eq!(loaded.unchecked_into::<Array>().length(), 6);
    assert_eq!(keys_of("store-fork", branched_id.as_str()).await, 6);
    store.close();
    fresh_store.close();
}

#[wasm_bindgen_test]
async fn pi_session_files_import_and_export_round_trip() {
    let store = fresh("store-jsonl").await;
    for text in [LARGE, BEFORE_COMPACTION] {
        let parsed = pi_session_to_messages(text.into()).unwrap();
        let messages = field(&parsed, "messages");
        let file_id = field(&field(&parsed, "session"), "id").as_string().unwrap();

        // Import keeps the file's id; load gives what piSessionToMessages gives.
        let meta = wait(store.import_jsonl(text.into(), JsValue::UNDEFINED))
            .await
            .unwrap();
        assert_eq!(field(&meta, "id").as_string(), Some(file_id.clone()));
        assert_eq!(
            field(&meta, "messageCount").as_f64(),
            Some(messages.unchecked_ref::<Array>().length() as f64)
        );
        assert_eq!(
            field(&meta, "model")
                .as_string()
                .map(|m| m.starts_with("anthropic/")),
            Some(true)
        );
        assert!(!field(&meta, "title").as_string().unwrap().is_empty());
        let loaded = wait(store.load(file_id.as_str().into())).await.unwrap();
        assert!(deep_equal(&loaded, &messages), "import then load");
        // loadContext agrees with the context pi builds (the last summary on).
        let context: Array = wait(store.load_context(file_id.as_str().into()))
            .await
            .unwrap()
            .unchecked_into();
        let all: Array = messages.clone().unchecked_into();
        let last_summary = (0..all.length()).rev().find(|&i| {
            field(&all.get(i), "role").as_string().as_deref() == Some("compactionSummary")
        });
        assert_eq!(
            context.length(),
            all.length() - last_summary.unwrap_or(0),
            "loadContext starts at the last summary"
        );

        // Export writes version 3 and reads back into the same array; its
        // import under an id that exists gets a new id.
        let exported = wait(store.export_jsonl(file_id.as_str().into()))
            .await
            .unwrap()
            .as_string()
            .unwrap();
        let header = parse(exported.lines().next().unwrap());
        assert_eq!(field(&header, "version").as_f64(), Some(3.0));
        assert_eq!(field(&header, "id").as_string(), Some(file_id.clone()));
        let again = wait(store.import_jsonl(exported.as_str().into(), JsValue::UNDEFINED))
            .await
            .unwrap();
        let again_id = field(&again, "id").as_string().unwrap();
        assert_ne!(again_id, file_id, "an id collision gets a new id");
        assert_eq!(again_id.len(), 36);
        assert_eq!(field(&again, "title"), field(&meta, "title"));
        let loaded = wait(store.load(again_id.as_str().into())).await.unwrap();
        assert!(deep_equal(&loaded, &messages), "export then import");
    }

    // A session built here: export then import gives the same array, and
    // the title travels as pi's session name.
    let created = wait(store.create_session(parse(
        "{\"id\":\"mine\",\"title\":\"Mine\",\"model\":\"openai/gpt-5\"}",
    )))
    .await
    .unwrap();
    assert_eq!(field(&created, "id").as_string().as_deref(), Some("mine"));
    let mut details_summary = summary(10);
    Reflect::set(
        &details_summary,
        &"details".into(),
        &parse("{\"readFiles\":[\"a.rs\"],\"modifiedFiles\":[\"b.rs\"]}"),
    )
    .unwrap();
    details_summary = details_summary.clone();
    let original = array(&[
        &message("build it", 1),
        &assistant("stop", 5, 2),
        &details_summary,
        &message("and then", 11),
        &branch_summary(12),
        &assistant("stop", 7, 13),
    ]);
    save(&store, "mine", original.clone()).await.unwrap();
    let text = wait(store.export_jsonl("mine".into())).await.unwrap();
    assert!(text.as_string().unwrap().contains("\"session_info\""));
    wait(store.delete("mine".into())).await.unwrap();
    let meta = wait(store.import_jsonl(text, JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(field(&meta, "id").as_string().as_deref(), Some("mine"));
    assert_eq!(field(&meta, "title").as_string().as_deref(), Some("Mine"));
    assert_eq!(
        field(&meta, "model").as_string().as_deref(),
        Some("openai/gpt-5")
    );
    let loaded = wait(store.load("mine".into())).await.unwrap();
    assert!(
        same_value(&loaded, &original),
        "import ∘ export is the identity"
    );
    let context = wait(store.load_context("mine".into())).await.unwrap();
    assert_eq!(context.unchecked_into::<Array>().length(), 4);

    // A title option wins; bad input is a clear error and stores nothing.
    let titled = wait(store.import_jsonl(LARGE.into(), parse("{\"title\":\"Named\"}")))
        .await
        .unwrap();
    assert_eq!(
        field(&titled, "title").as_string().as_deref(),
        Some("Named")
    );
    let count = wait(store.list())
        .await
        .unwrap()
        .unchecked_into::<Array>()
        .length();
    let e = wait(store.import_jsonl(42.into(), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    let e = wait(store.import_jsonl("not a session\n".into(), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert!(
        error_message(&e).starts_with("SessionStore.importJsonl: "),
        "{}",
        error_message(&e)
    );
    let e = wait(store.export_jsonl("nobody".into())).await.unwrap_err();
    assert!(
        error_message(&e).contains("no session \"nobody\""),
        "{}",
        error_message(&e)
    );
    assert_eq!(
        wait(store.list())
            .await
            .unwrap()
            .unchecked_into::<Array>()
            .length(),
        count
    );
    store.close();
}

/// Runs `lockScenario` (navigator.locks hidden with `hide`) and checks its
/// outcome: the callers ran one after the other, saves inside did not
/// deadlock, a second store's rename waited, a throwing callback freed the lock.
async fn lock_scenario(db: &str, hide: bool) {
    let store = fresh(db).await;
    let other = open(db).await;
    let check = open(db).await;
    create(&store, "s").await;
    save(&store, "s", array(&[&message("start", 1)]))
        .await
        .unwrap();
    let (m1, m2) = (message("one", 2), message("two", 3));
    let store: JsValue = store.into();
    let out = wait(lock_scenario_js(
        &store,
        &JsValue::from(other),
        "s",
        &m1,
        &m2,
        hide,
    ))
    .await
    .unwrap();
    assert!(has_web_locks(), "navigator.locks is back");
    assert_eq!(field(&out, "webLocks").as_bool(), Some(!hide));
    assert!(
        deep_equal(
            &field(&out, "log"),
            &parse("[\"first start\",\"first end (nested)\",\"second start\",\"second end\",\"other store's rename\"]")
        ),
        "{:?}",
        js_sys::JSON::stringify(&field(&out, "log")).unwrap()
    );
    assert!(deep_equal(
        &field(&out, "results"),
        &parse("[\"first\",\"second\"]")
    ));
    assert!(field(&out, "error").is_instance_of::<js_sys::RangeError>());
    assert_eq!(field(&out, "after").as_f64(), Some(7.0));
    let loaded = wait(check.load("s".into())).await.unwrap();
    assert!(deep_equal(
        &loaded,
        &array(&[&message("start", 1), &m1, &m2])
    ));
    let list: Array = wait(check.list()).await.unwrap().unchecked_into();
    assert_eq!(
        field(&list.get(0), "title").as_string().as_deref(),
        Some("renamed")
    );
    let e = wait(check.with_session_lock("s".into(), 5.into()))
        .await
        .unwrap_err();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    check.close();
}

#[wasm_bindgen_test]
async fn with_session_lock_serializes_callers_and_a_save_inside_does_not_deadlock() {
    lock_scenario("store-lock", false).await;
}

#[wasm_bindgen_test]
async fn without_web_locks_the_lock_is_a_queue_in_the_page() {
    lock_scenario("store-lock-fallback", true).await;
}

#[wasm_bindgen_test]
async fn on_change_tells_other_stores_and_their_stale_saves_conflict() {
    let a = fresh("store-change").await;
    let b = open("store-change").await;
    let heard = collector();
    let unsubscribe: js_sys::Function = b
        .on_change(field(&heard, "listener"))
        .unwrap()
        .unchecked_into();
    let own = collector();
    let _own = a.on_change(field(&own, "listener")).unwrap();
    let events = field(&heard, "events");

    create(&a, "s").await;
    let m0 = message("hello", 1);
    save(&a, "s", array(&[&m0])).await.unwrap();
    wait(a.rename("s".into(), "Renamed".into())).await.unwrap();
    let forked = wait(a.fork("s".into(), 1.into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    let forked_id = field(&forked, "id").as_string().unwrap();
    wait(a.delete(forked_id.as_str().into())).await.unwrap();
    let heard_events: Array = wait(events_after(&events, 5, 2000))
        .await
        .unwrap()
        .unchecked_into();
    let summary: Vec<String> = heard_events
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                field(&e, "type").as_string().unwrap(),
                field(&e, "sessionId").as_string().unwrap(),
                js_sys::JSON::stringify(&field(&e, "revision"))
                    .ok()
                    .and_then(|r| r.as_string())
                    .unwrap_or_else(|| "-".into())
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            "created s 0".to_string(),
            "saved s 1".into(),
            "renamed s 1".into(),
            format!("forked {forked_id} 1"),
            format!("deleted {forked_id} -"),
        ]
    );
    assert_eq!(
        field(&heard_events.get(3), "sourceId")
            .as_string()
            .as_deref(),
        Some("s")
    );
    // A store is not told of its own changes.
    assert_eq!(field(&own, "events").unchecked_into::<Array>().length(), 0);

    // b read revision 1; a saves revision 2; b hears of it and drops its
    // copy, but a save from b's old array is still a conflict, not a drop.
    let loaded: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    save(&a, "s", array(&[&m0, &message("from a", 2)]))
        .await
        .unwrap();
    wait(events_after(&events, 6, 2000)).await.unwrap();
    let e = save(&b, "s", with(&loaded, &[&message("from b", 3)]))
        .await
        .unwrap_err();
    assert_eq!(
        field(&e, "name").as_string().as_deref(),
        Some("ConflictError"),
        "{}",
        error_message(&e)
    );
    let now: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    let meta = save(&b, "s", with(&now, &[&message("from b", 3)]))
        .await
        .unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(3.0));
    // a hears b's save; a rename elsewhere keeps a's copy (same revision).
    let a_heard: Array = wait(events_after(&field(&own, "events"), 1, 2000))
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(
        field(&a_heard.get(0), "type").as_string().as_deref(),
        Some("saved")
    );

    // Unsubscribed: no more events.
    unsubscribe.call0(&JsValue::UNDEFINED).unwrap();
    let count = events.unchecked_ref::<Array>().length();
    let all: Array = wait(a.load("s".into())).await.unwrap().unchecked_into();
    save(&a, "s", with(&all, &[&message("more", 4)]))
        .await
        .unwrap();
    wait(events_after(&field(&own, "events"), 99, 100))
        .await
        .unwrap();
    assert_eq!(events.unchecked_ref::<Array>().length(), count);
    let e = b.on_change(3.into()).unwrap_err();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    a.close();
    b.close();
}

#[wasm_bindgen_test]
async fn a_stale_save_writes_nothing_though_its_writes_were_queued() {
    // A save queues its record writes before the session record's revision
    // comes back; a stale one must undo them all.
    let a = fresh("store-stale-queued").await;
    let b = open("store-stale-queued").await;
    create(&a, "s").await;
    let (m0, m1, m2) = (
        message("one", 1),
        assistant("stop", 5, 2),
        message("three", 3),
    );
    save(&a, "s", array(&[&m0, &m1, &m2])).await.unwrap();
    let loaded: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    let after_a = array(&[&m0, &m1, &m2, &message("from a", 4)]);
    save(&a, "s", after_a.clone()).await.unwrap();
    let keys_before: Array = wait(raw_keys("store-stale-queued", "s"))
        .await
        .unwrap()
        .unchecked_into();
    let puts_before = puts(&b);
    // Appends (whose keys may be those of a's record), then a replacing save
    // that would delete records: both stale.
    let appended = with(
        &loaded,
        &[
            &message("b1", 5),
            &assistant("stop", 5, 6),
            &message("b3", 7),
        ],
    );
    let e = save(&b, "s", appended).await.unwrap_err();
    assert_eq!(
        field(&e, "name").as_string().as_deref(),
        Some("ConflictError")
    );
    let loaded: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    save(&a, "s", with(&after_a, &[&message("from a again", 8)]))
        .await
        .unwrap();
    let e = wait(b.save(
        "s".into(),
        array(&[&loaded.get(0), &message("b only", 9)]).into(),
        parse("{\"replace\":true}"),
    ))
    .await
    .unwrap_err();
    assert_eq!(
        field(&e, "name").as_string().as_deref(),
        Some("ConflictError")
    );
    assert_eq!(puts(&b), puts_before, "nothing counted as written");
    let keys: Array = wait(raw_keys("store-stale-queued", "s"))
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(
        keys.length(),
        keys_before.length() + 1,
        "only a's record added"
    );
    let expected = with(&after_a, &[&message("from a again", 8)]);
    let check = open("store-stale-queued").await;
    let stored = wait(check.load("s".into())).await.unwrap();
    assert!(
        deep_equal(&stored, &expected),
        "a's records as a wrote them"
    );
    a.close();
    b.close();
    check.close();
}

/// Calls a restoring function when dropped (a failed assertion included).
struct Restore(js_sys::Function);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = self.0.call0(&JsValue::UNDEFINED);
    }
}

fn reads_of(counter: &JsValue) -> f64 {
    field(counter, "count").as_f64().unwrap()
}

/// loadContext from a store that knows where the context starts (one read
/// of the records, sent with the session record's), after another store
/// moved it (a compaction there: read again from the new summary), and
/// from a store that never read the session.
#[wasm_bindgen_test]
async fn load_context_follows_compactions_made_elsewhere() {
    let db = "store-context-moved";
    let a = fresh(db).await;
    let b = open(db).await;
    create(&a, "s").await;
    let (m0, s1, m2) = (message("zero", 1), summary(2), message("two", 3));
    save(&a, "s", array(&[&m0, &s1, &m2])).await.unwrap();
    let reads = count_reads();
    let _restore = Restore(field(&reads, "stop").unchecked_into());
    let first = wait(a.load_context("s".into())).await.unwrap();
    let once = reads_of(&reads);
    assert!(deep_equal(&first, &array(&[&s1, &m2])));
    let again = wait(a.load_context("s".into())).await.unwrap();
    assert!(deep_equal(&again, &array(&[&s1, &m2])));

    // b compacts: a new summary after m2, and one more message.
    let loaded: Array = wait(b.load("s".into())).await.unwrap().unchecked_into();
    let (s3, m4) = (summary(4), message("four", 5));
    save(&b, "s", with(&loaded, &[&s3, &m4])).await.unwrap();
    let before = reads_of(&reads);
    let moved = wait(a.load_context("s".into())).await.unwrap();
    let moved_reads = reads_of(&reads) - before;
    assert!(
        deep_equal(&moved, &array(&[&s3, &m4])),
        "from the new summary"
    );
    let all = wait(a.load("s".into())).await.unwrap();
    assert!(deep_equal(&all, &array(&[&m0, &s1, &m2, &s3, &m4])));
    // a saves on top of what it loaded last (the whole array).
    save(&a, "s", with(&all.unchecked_into(), &[&message("six", 6)]))
        .await
        .unwrap();

    // A store that never read the session.
    let c = open(db).await;
    let fresh_context = wait(c.load_context("s".into())).await.unwrap();
    assert!(deep_equal(
        &fresh_context,
        &array(&[&s3, &m4, &message("six", 6)])
    ));
    // The moved context costs one more read (a has not heard of b's save
    // yet: notices come in a later task).
    assert_eq!(once, 1.0, "the records read once");
    assert_eq!(
        moved_reads, 2.0,
        "a guess that missed, then the right range"
    );
    let e = wait(c.load_context("nope".into())).await.unwrap_err();
    assert!(
        error_message(&e).contains("no session"),
        "{}",
        error_message(&e)
    );
    a.close();
    b.close();
    c.close();
}

async fn held(name: &str) -> bool {
    wait(lock_held(name)).await.unwrap().as_bool().unwrap()
}

async fn sleep(ms: u32) {
    wait(pause(ms)).await.unwrap();
}

/// Appends a message to `messages` and saves them all.
fn append_and_save(store: &SessionStore, messages: &Array, text: &str, t: u32) -> Promise {
    messages.push(&message(text, t));
    store.save(
        "s".into(),
        messages.slice(0, messages.length()).into(),
        JsValue::UNDEFINED,
    )
}

#[wasm_bindgen_test]
async fn the_page_keeps_a_session_lock_briefly_and_lets_it_go_when_asked() {
    let store = fresh("store-lease").await;
    let name = "agent-compaction:store-lease:s";
    create(&store, "s").await;
    let messages = Array::new();
    let save = |text: &str, t: u32| append_and_save(&store, &messages, text, t);
    // After a save the page still holds the lock, for a while.
    wait(save("one", 1)).await.unwrap();
    assert!(held(name).await, "kept after the save");
    sleep(400).await;
    assert!(!held(name).await, "let go after a while");

    // Another tab of this package asks for it: let go at once.
    wait(save("two", 2)).await.unwrap();
    assert!(held(name).await);
    let ms = wait(ask_for(name, 1000)).await.unwrap().as_f64().unwrap();
    assert!((0.0..60.0).contains(&ms), "let go after {ms} ms");

    // Code that does not ask (an older version in another tab) waits at
    // most the while the lock is kept.
    wait(save("three", 3)).await.unwrap();
    let ms = wait(take_lock(name)).await.unwrap().as_f64().unwrap();
    assert!(ms < 400.0, "waited {ms} ms");

    // Saves made at once while the lock is kept (the first runs under it
    // directly, the others queue behind it): each after the one before, so
    // none is a conflict, and all is written in order.
    wait(save("m4", 4)).await.unwrap();
    assert!(held(name).await);
    let pending: Vec<Promise> = (5..11).map(|t| save(&format!("m{t}"), t)).collect();
    for p in pending {
        wait(p).await.unwrap();
    }
    let loaded: Array = wait(store.load("s".into())).await.unwrap().unchecked_into();
    assert_eq!(loaded.length(), 10);
    assert!(deep_equal(&loaded, &messages));

    // Closing the store lets its locks go.
    wait(save("last", 11)).await.unwrap();
    store.close();
    sleep(0).await;
    assert!(!held(name).await, "closed: let go");
}

#[wasm_bindgen_test]
async fn a_change_is_announced_even_when_the_store_closes_right_after() {
    let a = fresh("store-close-notice").await;
    let b = open("store-close-notice").await;
    let heard = collector();
    let _unsubscribe = b.on_change(field(&heard, "listener")).unwrap();
    create(&a, "s").await;
    save(&a, "s", array(&[&message("hi", 1)])).await.unwrap();
    a.close();
    let events: Array = wait(events_after(&field(&heard, "events"), 2, 2000))
        .await
        .unwrap()
        .unchecked_into();
    let types: Vec<String> = events
        .iter()
        .map(|e| field(&e, "type").as_string().unwrap())
        .collect();
    assert_eq!(types, vec!["created".to_string(), "saved".into()]);
    b.close();
}

#[wasm_bindgen_test]
async fn a_save_keeps_what_another_store_changed_in_the_session_record() {
    // A save queues the session record made from the one it saw last; a
    // rename elsewhere (same revision) must survive it.
    let a = fresh("store-renamed-elsewhere").await;
    let b = open("store-renamed-elsewhere").await;
    create(&a, "s").await;
    let m0 = message("hello", 1);
    save(&a, "s", array(&[&m0])).await.unwrap();
    let renamed = wait(b.rename("s".into(), "Renamed".into())).await.unwrap();
    let meta = save(&a, "s", array(&[&m0, &message("more", 2)]))
        .await
        .unwrap();
    assert_eq!(
        field(&meta, "title").as_string().as_deref(),
        Some("Renamed")
    );
    assert!(
        field(&meta, "lastModified").as_f64() >= field(&renamed, "lastModified").as_f64(),
        "lastModified never goes back"
    );
    assert_eq!(field(&meta, "revision").as_f64(), Some(2.0));
    let list: Array = wait(b.list()).await.unwrap().unchecked_into();
    assert!(
        same_value(&list.get(0), &meta),
        "the record as the save returned it"
    );
    // And a save that changes nothing but the messages keeps it too.
    let meta = save(
        &a,
        "s",
        array(&[&m0, &message("more", 2), &message("again", 3)]),
    )
    .await
    .unwrap();
    assert_eq!(
        field(&meta, "title").as_string().as_deref(),
        Some("Renamed")
    );
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(3.0));
    let list: Array = wait(b.list()).await.unwrap().unchecked_into();
    assert!(same_value(&list.get(0), &meta));
    a.close();
    b.close();
}

async fn sizes(db: &str, id: &str) -> Vec<u32> {
    let sizes: Array = wait(raw_sizes(db, id)).await.unwrap().unchecked_into();
    sizes.iter().map(|v| v.as_f64().unwrap() as u32).collect()
}

fn slice(a: &Array, from: u32, to: u32) -> Array {
    a.slice(from, to)
}

#[wasm_bindgen_test]
async fn turns_fold_into_packs_and_an_edit_rewrites_only_the_pack_it_touches() {
    let db = "store-packs";
    let store = fresh(db).await;
    create(&store, "s").await;
    // 80 turns saved one at a time, as attach saves them.
    let mut messages = Array::new();
    for t in 0..80u32 {
        messages = with(
            &messages,
            &[
                &message(&format!("q{t}"), 2 * t + 1),
                &assistant("stop", 5, 2 * t + 2),
            ],
        );
        let before = puts(&store);
        save(&store, "s", messages.clone()).await.unwrap();
        // Two new records, and now and then a pack of older ones.
        assert!(puts(&store) - before <= 4.0, "turn {t}");
    }
    // 160 messages: four packs of 32 merged into one, the newest 32 loose.
    let mut expected = vec![128];
    expected.extend([1; 32]);
    assert_eq!(sizes(db, "s").await, expected);
    assert!(deep_equal(
        &wait(store.load("s".into())).await.unwrap(),
        &messages
    ));
    let other = open(db).await;
    assert!(deep_equal(
        &wait(other.load("s".into())).await.unwrap(),
        &messages
    ));
    other.close();

    // A compaction's summary inside the big pack: that pack is split where
    // the summary goes (its first part under its own key, the summary and
    // the rest under a new one), nothing else is written.
    let keys_before: Array = wait(raw_keys(db, "s")).await.unwrap().unchecked_into();
    let s = summary(1000);
    let compacted = with(&slice(&messages, 0, 40), &[&s]);
    let compacted = compacted.concat(&slice(&messages, 40, 160));
    let before = puts(&store);
    save(&store, "s", compacted.clone()).await.unwrap();
    assert_eq!(puts(&store) - before, 2.0);
    let keys_after: Array = wait(raw_keys(db, "s")).await.unwrap().unchecked_into();
    assert_eq!(keys_after.length(), keys_before.length() + 1);
    assert!(deep_equal(&keys_after.get(0), &keys_before.get(0)));
    assert!(deep_equal(
        &keys_after.slice(2, keys_after.length()),
        &keys_before.slice(1, keys_before.length())
    ));
    let mut expected = vec![40, 89];
    expected.extend([1; 32]);
    assert_eq!(sizes(db, "s").await, expected);

    // Another store (a new page) reads the context from the summary's record.
    let other = open(db).await;
    let context: Array = wait(other.load_context("s".into()))
        .await
        .unwrap()
        .unchecked_into();
    assert!(deep_equal(&context, &slice(&compacted, 40, 161)));
    assert!(deep_equal(
        &wait(other.load("s".into())).await.unwrap(),
        &compacted
    ));

    // A fork from inside a pack.
    let fork = wait(other.fork("s".into(), 45.into(), parse("{\"id\":\"f\"}")))
        .await
        .unwrap();
    assert_eq!(field(&fork, "messageCount").as_f64(), Some(45.0));
    assert!(deep_equal(
        &wait(other.load("f".into())).await.unwrap(),
        &slice(&compacted, 0, 45)
    ));

    // A failed attempt appended, then dropped: its own record goes.
    let failed = with(
        &compacted,
        &[&message("again", 2000), &assistant("error", 0, 2001)],
    );
    save(&store, "s", failed).await.unwrap();
    let deleted = field(&store.stats(), "recordsDeleted").as_f64().unwrap();
    let retried = with(&compacted, &[&message("again", 2000)]);
    save(&store, "s", retried.clone()).await.unwrap();
    assert_eq!(
        field(&store.stats(), "recordsDeleted").as_f64().unwrap() - deleted,
        1.0
    );
    assert!(deep_equal(
        &wait(store.load("s".into())).await.unwrap(),
        &retried
    ));

    // What loadContext returned, saved with replace: the messages before
    // the summary go, also the ones that shared its pack.
    let context: Array = wait(other.load_context("s".into()))
        .await
        .unwrap()
        .unchecked_into();
    let next = with(&context, &[&message("after", 3000)]);
    wait(other.save("s".into(), next.clone().into(), parse("{\"replace\":true}")))
        .await
        .unwrap();
    assert!(deep_equal(
        &wait(other.load("s".into())).await.unwrap(),
        &next
    ));
    let fresh_store = open(db).await;
    assert!(deep_equal(
        &wait(fresh_store.load("s".into())).await.unwrap(),
        &next
    ));
    assert!(deep_equal(
        &wait(fresh_store.load_context("s".into())).await.unwrap(),
        &next
    ));
    // The fork kept its own records.
    assert!(deep_equal(
        &wait(fresh_store.load("f".into())).await.unwrap(),
        &slice(&compacted, 0, 45)
    ));
    fresh_store.close();
    other.close();
    store.close();
}

#[wasm_bindgen_test]
async fn a_context_starting_inside_a_pack_loads_and_saves_with_replace() {
    let db = "store-pack-context";
    let store = fresh(db).await;
    create(&store, "s").await;
    // Saved whole, 200 messages go in packs at once, and the last summary
    // (at 190) starts a record; the older one (at 50) is inside the first.
    let messages = Array::new();
    for t in 0..200u32 {
        messages.push(&match t {
            50 | 190 => summary(t),
            _ => message(&format!("m{t}"), t),
        });
    }
    save(&store, "s", messages.clone()).await.unwrap();
    let layout = sizes(db, "s").await;
    assert_eq!(layout[0], 128);
    let starts: Vec<u32> = layout
        .iter()
        .scan(0, |at, n| {
            let start = *at;
            *at += n;
            Some(start)
        })
        .collect();
    assert!(starts.contains(&190), "a record starts at 190: {layout:?}");
    let context: Array = wait(store.load_context("s".into()))
        .await
        .unwrap()
        .unchecked_into();
    assert!(deep_equal(&context, &slice(&messages, 190, 200)));
    // Without the last summary the context starts inside the first pack.
    let without = slice(&messages, 0, 190).concat(&slice(&messages, 191, 200));
    wait(store.save(
        "s".into(),
        without.clone().into(),
        parse("{\"replace\":true}"),
    ))
    .await
    .unwrap();
    assert_eq!(sizes(db, "s").await[0], 128, "that pack is not rewritten");
    let other = open(db).await;
    let context: Array = wait(other.load_context("s".into()))
        .await
        .unwrap()
        .unchecked_into();
    assert!(deep_equal(&context, &slice(&without, 50, 199)));
    // Appending to it still needs replace (it would drop 0..50); with
    // replace the pack is rewritten without the dropped messages.
    let next = with(&context, &[&message("after", 500)]);
    let e = save(&other, "s", next.clone()).await.unwrap_err();
    assert!(
        error_message(&e).contains("replace: true"),
        "{}",
        error_message(&e)
    );
    wait(other.save("s".into(), next.clone().into(), parse("{\"replace\":true}")))
        .await
        .unwrap();
    let third = open(db).await;
    assert!(deep_equal(
        &wait(third.load("s".into())).await.unwrap(),
        &next
    ));
    assert!(deep_equal(
        &wait(third.load_context("s".into())).await.unwrap(),
        &next
    ));
    assert_eq!(sizes(db, "s").await.iter().sum::<u32>(), next.length());
    third.close();
    other.close();
    store.close();
}

#[wasm_bindgen_test]
async fn a_message_that_is_an_array_is_refused() {
    let store = fresh("store-array-message").await;
    create(&store, "s").await;
    let e = wait(store.save(
        "s".into(),
        parse("[{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1},[1,2]]"),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap_err();
    assert!(e.is_instance_of::<js_sys::TypeError>());
    assert!(
        error_message(&e).contains("messages[1] is an array"),
        "{}",
        error_message(&e)
    );
    assert!(
        sizes("store-array-message", "s").await.is_empty(),
        "nothing written"
    );
    store.close();
}

/// A small deterministic generator (xorshift) for the random session below.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % u64::from(n.max(1))) as u32
    }
}

fn stamps(a: &Array) -> Vec<u32> {
    a.iter()
        .map(|m| field(&m, "timestamp").as_f64().unwrap_or(-1.0) as u32)
        .collect()
}

/// The array from its last summary on (what loadContext returns).
fn context_of(messages: &Array) -> Array {
    let n = messages.length();
    let last = (0..n).rev().find(|&i| {
        field(&messages.get(i), "role").as_string().as_deref() == Some("compactionSummary")
    });
    messages.slice(last.unwrap_or(0), n)
}

#[wasm_bindgen_test]
async fn random_edits_through_two_stores_always_read_back_as_saved() {
    for (k, seed) in [
        0x9e37_79b9_7f4a_7c15u64,
        0x2545_f491_4f6c_dd1d,
        0xdead_beef_cafe_f00d,
        7,
    ]
    .into_iter()
    .enumerate()
    {
        random_session(&format!("store-random-{k}"), seed).await;
    }
}

async fn random_session(db: &str, seed: u64) {
    // Appends of a turn or of hundreds, compactions at any index, failed
    // attempts dropped, messages removed or inserted anywhere with replace,
    // saves from loadContext's array; saved through one store or another
    // (the other reads the records first), read back by a third after each.
    let stores = [fresh(db).await, open(db).await];
    create(&stores[0], "s").await;
    let mut rng = Rng(seed);
    let mut messages = Array::new();
    let mut t = 0u32;
    let mut next_t = || {
        t += 1;
        t
    };
    let mut current = 0usize;
    let mut used = [true, false];
    for step in 0..160 {
        let n = messages.length();
        let mut replace = false;
        let kind = rng.below(100);
        let next: Array = match kind {
            0..=39 => {
                let more: Vec<JsValue> = (0..1 + rng.below(5))
                    .map(|i| match i % 2 {
                        0 => message(&format!("m{step}"), next_t()),
                        _ => assistant("stop", 5, next_t()),
                    })
                    .collect();
                let refs: Vec<&JsValue> = more.iter().collect();
                with(&messages, &refs)
            }
            40..=44 => {
                let a = messages.slice(0, n);
                for _ in 0..30 + rng.below(150) {
                    a.push(&message("bulk", next_t()));
                }
                a
            }
            45..=59 if n > 2 => {
                let at = 1 + rng.below(n - 1);
                let a = messages.slice(0, at);
                a.push(&summary(next_t()));
                a.concat(&messages.slice(at, n))
            }
            60..=69 => {
                // A failed attempt saved, then dropped without replace.
                let failed = with(&messages, &[&assistant("error", 0, next_t())]);
                save(&stores[current], "s", failed).await.unwrap();
                messages.slice(0, n)
            }
            70..=79 if n > 3 => {
                replace = true;
                let a = messages.slice(0, n);
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(a.length());
                    a.splice(at, 1, &message("swapped", next_t()));
                }
                let drop = rng.below(a.length());
                a.splice(drop, 1 + rng.below(3), &message("replaced", next_t()));
                a
            }
            80..=89 if n > 1 => {
                let at = rng.below(n);
                let a = messages.slice(0, at);
                for _ in 0..1 + rng.below(40) {
                    a.push(&message("inserted", next_t()));
                }
                a.concat(&messages.slice(at, n))
            }
            90..=94 => {
                // The other store: the first time it reads the records
                // (it has never seen the session); later, as an app that
                // heard of the changes, it loads the session first.
                current = 1 - current;
                if used[current] {
                    wait(stores[current].load("s".into())).await.unwrap();
                }
                used[current] = true;
                let more = message("other store", next_t());
                with(&messages, &[&more])
            }
            _ => {
                // Saving what loadContext returned (and a turn) drops the
                // history before the summary: replace.
                replace = true;
                let context: Array = wait(stores[current].load_context("s".into()))
                    .await
                    .unwrap()
                    .unchecked_into();
                with(&context, &[&message("after context", next_t())])
            }
        };
        let options = if replace {
            parse("{\"replace\":true}")
        } else {
            JsValue::UNDEFINED
        };
        wait(stores[current].save("s".into(), next.clone().into(), options))
            .await
            .unwrap_or_else(|e| panic!("step {step} (kind {kind}): {}", error_message(&e)));
        let before = std::mem::replace(&mut messages, next);
        let reader = open(db).await;
        let loaded = wait(reader.load("s".into())).await.unwrap();
        if !deep_equal(&loaded, &messages) {
            let l: Array = loaded.clone().unchecked_into();
            let first = (0..l.length().max(messages.length()))
                .find(|&i| !deep_equal(&l.get(i), &messages.get(i)));
            panic!(
                "step {step} (kind {kind}): load gave {} messages, saved {}; first difference at {first:?}: {:?} vs {:?}; records {:?}; before {:?} saved {:?} loaded {:?}",
                l.length(),
                messages.length(),
                js_sys::JSON::stringify(&l.get(first.unwrap_or(0))).unwrap(),
                js_sys::JSON::stringify(&messages.get(first.unwrap_or(0))).unwrap(),
                sizes(db, "s").await,
                stamps(&before),
                stamps(&messages),
                stamps(&l),
            );
        }
        let context = wait(reader.load_context("s".into())).await.unwrap();
        assert!(
            deep_equal(&context, &context_of(&messages)),
            "step {step} (kind {kind}): loadContext"
        );
        reader.close();
    }
    assert!(
        sizes(db, "s").await.iter().any(|&n| n > 1),
        "packs were made"
    );
    for store in stores {
        store.close();
    }
}

/// An upgrade blocked by another open connection that does not close on
/// `versionchange` (an older version in another tab) is an error at once,
/// not a promise that never settles; once that connection closes, the store
/// opens (and the blocked request's late connection is closed, so it blocks
/// nothing).
#[wasm_bindgen_test]
async fn an_upgrade_blocked_by_an_open_old_connection_fails_at_once() {
    wait(delete_db("store-blocked")).await.unwrap();
    wait(make_v1("store-blocked")).await.unwrap();
    let held = wait(hold_open("store-blocked")).await.unwrap();
    let options = parse(r#"{"name":"store-blocked"}"#);
    let Err(e) = SessionStore::open(options).await else {
        panic!("the upgrade was blocked, yet open resolved");
    };
    let message = error_message(&e);
    assert!(
        message.contains("is blocked by another open connection"),
        "{message}"
    );
    close_db(&held);
    let store = open("store-blocked").await;
    let schema = wait(schema_of("store-blocked")).await.unwrap();
    assert_eq!(field(&schema, "version").as_f64(), Some(4.0));
    store.close();
    wait(delete_db("store-blocked")).await.unwrap();
}

// The engine quirks: locks that never come, connections the
// browser closes, storage that is unavailable, durability, persist and
// estimate. Written engine-neutral: what differs between engines is read
// from the page, never assumed.
#[wasm_bindgen(inline_js = r#"
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Holds the Web Lock `name` as another context would (a page kept in the
// back/forward cache): resolves once held, with the function letting it go.
export function holdLock(name) {
  return new Promise((held) => {
    navigator.locks.request(name, () => new Promise((release) => held(release)));
  });
}
export function release(f) { f(); }
export function hideWebLocks() {
  Object.defineProperty(navigator, "locks", { value: undefined, configurable: true });
  return () => { delete navigator.locks; };
}
// Runs `f` with navigator.locks hidden, restored whatever happens.
export async function withoutWebLocks(f) {
  const restore = hideWebLocks();
  try { return await f(); } finally { restore(); }
}
// A withSessionLock callback that waits until `go()` is called.
export function gate() {
  let go;
  const opened = new Promise((r) => (go = r));
  return { go: () => go(), callback: () => opened.then(() => "gated") };
}
export function go(g) { g.go(); }
export function gateCallback(g) { return g.callback; }
export async function timed(p) {
  const t0 = performance.now();
  try { return { ok: true, value: await p, ms: performance.now() - t0 }; }
  catch (e) { return { ok: false, error: e, ms: performance.now() - t0 }; }
}
export function counter() {
  const c = { calls: 0 };
  c.f = () => { c.calls++; return "ran"; };
  return c;
}
// Every connection opened on database `db` from now on (the store's own
// among them), until `stop()`.
export function watchConnections(db) {
  const proto = IDBFactory.prototype;
  const open = proto.open;
  const requests = [];
  proto.open = function (name, ...rest) {
    const r = open.call(this, name, ...rest);
    if (name === db) requests.push(r);
    return r;
  };
  return {
    stop() { proto.open = open; },
    all() { return requests.filter((r) => r.readyState === "done" && !r.error).map((r) => r.result); },
  };
}
export function stopWatching(w) { w.stop(); }
export function connectionCount(w) { return w.all().length; }
// Closes the connection the store uses now (the newest one), as the
// browser's closing it does to the page's requests: they throw
// InvalidStateError "The database connection is closing".
export function closeNewest(w) { const all = w.all(); all[all.length - 1].close(); }
// The same, followed by the close event the browser fires when it closes a
// connection on its own (storage cleared, its storage process gone).
export function closeNewestAsTheBrowserDoes(w) {
  const all = w.all();
  const db = all[all.length - 1];
  db.close();
  db.dispatchEvent(new Event("close"));
}
// Closes the database `db`'s connection right before its next `count`
// write transactions (or every one: Infinity), so that each fails as on a
// connection the browser closed under the call. Returns the undo.
export function closeBeforeWrites(db, count) {
  const proto = IDBDatabase.prototype;
  const transaction = proto.transaction;
  let left = count;
  proto.transaction = function (stores, mode, ...rest) {
    if (this.name === db && mode === "readwrite" && left > 0) {
      left--;
      this.close();
    }
    return transaction.call(this, stores, mode, ...rest);
  };
  return () => { proto.transaction = transaction; };
}
export function undo(f) { f(); }
// Makes the next commit of a write on database `db` end as on a connection
// the browser closed while it committed, the page not told how it ended:
// the transaction commits (`landed`) or is aborted, and the connection
// closes (its close event). Before it closes, when `theirs` is
// [sessionId, message], another page's save (as one can where
// `navigator.locks` is missing and the session's lock keeps out only this
// page) appends the message to what is stored, in a transaction that runs
// after this one. Returns the undo.
export function loseNextCommit(db, landed, theirs) {
  const proto = IDBTransaction.prototype;
  const commit = proto.commit;
  let left = 1;
  proto.commit = function () {
    const conn = this.db;
    if (conn.name !== db || this.mode !== "readwrite" || left === 0) return commit.call(this);
    left--;
    if (landed) {
      const told = this.onabort;
      this.oncomplete = () => told();
      commit.call(this);
    } else {
      this.abort();
    }
    if (theirs) {
      const [id, message] = theirs;
      const tx = conn.transaction(["sessions", "messages"], "readwrite");
      const sessions = tx.objectStore("sessions");
      sessions.get(id).onsuccess = (e) => {
        const r = e.target.result;
        tx.objectStore("messages").put(message, [id, 1000 + r.messageCount]);
        sessions.put({ ...r, revision: r.revision + 1, messageCount: r.messageCount + 1, lastModified: Date.now() });
      };
    }
    conn.close();
    conn.dispatchEvent(new Event("close"));
  };
  return () => { proto.commit = commit; };
}
// Records the durability of each write transaction on database `db`: what
// the store asked for, and what the engine says where it has the attribute.
export function recordDurability(db) {
  const proto = IDBDatabase.prototype;
  const transaction = proto.transaction;
  const log = [];
  proto.transaction = function (stores, mode, options) {
    const tx = transaction.call(this, stores, mode, options);
    if (this.name === db && mode === "readwrite") {
      log.push({ asked: options?.durability ?? "default", engine: "durability" in tx ? tx.durability : null });
    }
    return tx;
  };
  return { log, stop: () => { proto.transaction = transaction; } };
}
export function durabilityLog(r) { const out = r.log.slice(); r.log.length = 0; return out; }
export function stopRecording(r) { r.stop(); }
// Runs `f` with `indexedDB` gone from the page (private modes, a privacy
// setting), restored whatever happens.
export async function withoutIndexedDb(f) {
  const own = Object.getOwnPropertyDescriptor(globalThis, "indexedDB");
  Object.defineProperty(globalThis, "indexedDB", { value: undefined, configurable: true, writable: true });
  try { return await f(); } finally {
    if (own) Object.defineProperty(globalThis, "indexedDB", own); else delete globalThis.indexedDB;
  }
}
export async function withoutStorageManager(f) {
  const own = Object.getOwnPropertyDescriptor(Navigator.prototype, "storage");
  Object.defineProperty(Navigator.prototype, "storage", { get: () => undefined, configurable: true });
  // WebKitGTK has no navigator.storage at all: then there is nothing to put back.
  try { return await f(); } finally {
    if (own) Object.defineProperty(Navigator.prototype, "storage", own);
    else delete Navigator.prototype.storage;
  }
}
export function hasStorageEstimate() { return typeof navigator.storage?.estimate === "function"; }
export { sleep as nap };
"#)]
extern "C" {
    #[wasm_bindgen(js_name = holdLock)]
    fn hold_lock(name: &str) -> Promise;
    fn release(f: &JsValue);
    #[wasm_bindgen(js_name = withoutWebLocks)]
    fn without_web_locks(f: &js_sys::Function) -> Promise;
    fn gate() -> JsValue;
    fn go(g: &JsValue);
    #[wasm_bindgen(js_name = gateCallback)]
    fn gate_callback(g: &JsValue) -> JsValue;
    fn timed(p: &Promise) -> Promise;
    fn counter() -> JsValue;
    #[wasm_bindgen(js_name = watchConnections)]
    fn watch_connections(db: &str) -> JsValue;
    #[wasm_bindgen(js_name = stopWatching)]
    fn stop_watching(w: &JsValue);
    #[wasm_bindgen(js_name = connectionCount)]
    fn connection_count(w: &JsValue) -> u32;
    #[wasm_bindgen(js_name = closeNewest)]
    fn close_newest(w: &JsValue);
    #[wasm_bindgen(js_name = closeNewestAsTheBrowserDoes)]
    fn close_newest_as_the_browser_does(w: &JsValue);
    #[wasm_bindgen(js_name = closeBeforeWrites)]
    fn close_before_writes(db: &str, count: f64) -> JsValue;
    #[wasm_bindgen(js_name = loseNextCommit)]
    fn lose_next_commit(db: &str, landed: bool, theirs: &JsValue) -> JsValue;
    fn undo(f: &JsValue);
    #[wasm_bindgen(js_name = recordDurability)]
    fn record_durability(db: &str) -> JsValue;
    #[wasm_bindgen(js_name = durabilityLog)]
    fn durability_log(r: &JsValue) -> Array;
    #[wasm_bindgen(js_name = stopRecording)]
    fn stop_recording(r: &JsValue);
    #[wasm_bindgen(js_name = withoutIndexedDb)]
    fn without_indexed_db(f: &js_sys::Function) -> Promise;
    #[wasm_bindgen(js_name = withoutStorageManager)]
    fn without_storage_manager(f: &js_sys::Function) -> Promise;
    #[wasm_bindgen(js_name = hasStorageEstimate)]
    fn has_storage_estimate() -> bool;
}

async fn open_with(name: &str, lock_timeout_ms: u32) -> SessionStore {
    let options = parse(&format!(
        "{{\"name\":\"{name}\",\"lockTimeoutMs\":{lock_timeout_ms}}}"
    ));
    SessionStore::open(options).await.unwrap()
}

/// `timed(p)`: `(ok, value or error, ms)`.
async fn timed_out(p: Promise) -> (bool, JsValue, f64) {
    let out = wait(timed(&p)).await.unwrap();
    let ok = field(&out, "ok").as_bool().unwrap();
    let value = field(&out, if ok { "value" } else { "error" });
    (ok, value, field(&out, "ms").as_f64().unwrap())
}

#[wasm_bindgen_test]
async fn a_lock_that_never_comes_fails_the_call_after_the_lock_timeout_and_writes_nothing() {
    let db = "store-lock-timeout";
    wait(delete_db(db)).await.unwrap();
    let store = open_with(db, 300).await;
    create(&store, "s").await;
    let m0 = message("kept", 1);
    save(&store, "s", array(&[&m0])).await.unwrap();
    sleep(300).await; // the page's own lease is let go
                      // Another context takes the lock and never lets go (Safari keeps the
                      // locks of a page in its back/forward cache).
    let letting_go = wait(hold_lock("agent-compaction:store-lock-timeout:s"))
        .await
        .unwrap();
    let (ok, e, ms) = timed_out(store.save(
        "s".into(),
        array(&[&m0, &message("lost?", 2)]).into(),
        JsValue::UNDEFINED,
    ))
    .await;
    assert!(!ok);
    assert_eq!(error_name(&e), "LockTimeoutError", "{}", error_message(&e));
    assert!(
        error_message(&e).contains("within 300 ms"),
        "{}",
        error_message(&e)
    );
    assert!((250.0..3000.0).contains(&ms), "failed after {ms} ms");
    // withSessionLock too: its callback is never called.
    let calls = counter();
    let (ok, e, _) = timed_out(store.with_session_lock("s".into(), field(&calls, "f"))).await;
    assert!(!ok);
    assert_eq!(error_name(&e), "LockTimeoutError");
    // The other writes as well.
    for p in [
        store.rename("s".into(), "renamed".into()),
        store.delete("s".into()),
        store.fork("s".into(), 0.into(), JsValue::UNDEFINED),
    ] {
        let (ok, e, _) = timed_out(p).await;
        assert!(!ok);
        assert_eq!(error_name(&e), "LockTimeoutError", "{}", error_message(&e));
    }
    // Reads take no lock.
    let loaded = wait(store.load("s".into())).await.unwrap();
    assert!(deep_equal(&loaded, &array(&[&m0])), "nothing written");
    release(&letting_go);
    sleep(50).await;
    assert_eq!(field(&calls, "calls").as_f64(), Some(0.0), "never ran");
    let list: Array = wait(store.list()).await.unwrap().unchecked_into();
    assert_eq!(list.length(), 1, "no fork was made");
    assert_eq!(
        field(&list.get(0), "title").as_string().as_deref(),
        Some("T")
    );
    assert_eq!(field(&list.get(0), "revision").as_f64(), Some(1.0));
    // The lock is free again: the calls work.
    let next = array(&[&m0, &message("now", 3)]);
    save(&store, "s", next.clone()).await.unwrap();
    assert!(deep_equal(
        &wait(store.load("s".into())).await.unwrap(),
        &next
    ));
    // Not closed here: under chromedriver (not under Playwright's Chromium,
    // where tests/e2e/store-quirks.test.mjs closes it) the page stops
    // answering the driver a few hundred ms after this store is closed.
    // Left open, the page goes on (an open question, noted in the README).
    assert_eq!(
        wait(store.list())
            .await
            .unwrap()
            .unchecked_into::<Array>()
            .length(),
        1
    );
}

#[wasm_bindgen_test]
async fn without_web_locks_the_queue_in_the_page_is_bounded_too() {
    let db = "store-lock-timeout-realm";
    wait(delete_db(db)).await.unwrap();
    let a = open_with(db, 250).await;
    let b = open_with(db, 250).await;
    create(&a, "s").await;
    let a: Rc<SessionStore> = Rc::new(a);
    let b: Rc<SessionStore> = Rc::new(b);
    let (sa, sb) = (a.clone(), b.clone());
    let scenario = Closure::once_into_js(move || {
        future_to_promise(async move {
            // A's callback holds the lock; B's save waits behind it in the
            // page's queue, then gives up.
            let g = gate();
            let held = sa.with_session_lock("s".into(), gate_callback(&g));
            let (ok, e, ms) = timed_out(sb.save(
                "s".into(),
                array(&[&message("b", 1)]).into(),
                JsValue::UNDEFINED,
            ))
            .await;
            assert!(!ok);
            assert_eq!(error_name(&e), "LockTimeoutError", "{}", error_message(&e));
            assert!(ms >= 200.0, "{ms}");
            go(&g);
            assert_eq!(
                wait(held).await.unwrap().as_string().as_deref(),
                Some("gated")
            );
            // Free again: B saves.
            wait(sb.save(
                "s".into(),
                array(&[&message("b", 2)]).into(),
                JsValue::UNDEFINED,
            ))
            .await?;
            Ok(JsValue::TRUE)
        })
    });
    wait(without_web_locks(scenario.unchecked_ref()))
        .await
        .unwrap();
    let loaded: Array = wait(a.load("s".into())).await.unwrap().unchecked_into();
    assert!(
        deep_equal(&loaded, &array(&[&message("b", 2)])),
        "only the second save"
    );
    a.close();
    b.close();
}

#[wasm_bindgen_test]
async fn the_lock_timeout_option_is_checked() {
    for (options, class) in [
        ("{\"name\":\"store-lt\",\"lockTimeoutMs\":0}", "RangeError"),
        ("{\"name\":\"store-lt\",\"lockTimeoutMs\":-1}", "RangeError"),
        (
            "{\"name\":\"store-lt\",\"lockTimeoutMs\":1e12}",
            "RangeError",
        ),
        (
            "{\"name\":\"store-lt\",\"lockTimeoutMs\":\"5\"}",
            "TypeError",
        ),
        (
            "{\"name\":\"store-lt\",\"lockTimeoutMs\":null}",
            "TypeError",
        ),
    ] {
        let e = SessionStore::open(parse(options))
            .await
            .err()
            .expect(options);
        assert_eq!(
            field(&e, "name").as_string().as_deref(),
            Some(class),
            "{options}"
        );
        assert!(
            error_message(&e).contains("lockTimeoutMs"),
            "{}",
            error_message(&e)
        );
    }
}

#[wasm_bindgen_test]
async fn a_connection_closed_under_the_store_is_reopened_and_nothing_is_written_twice() {
    let db = "store-reopen";
    wait(delete_db(db)).await.unwrap();
    let watch = watch_connections(db);
    let store = open(db).await;
    assert_eq!(connection_count(&watch), 1);
    create(&store, "s").await;
    let first = array(&[&message("one", 1), &assistant("stop", 10, 2)]);
    save(&store, "s", first.clone()).await.unwrap();

    // Closed between calls (its requests now throw "The database
    // connection is closing"): the next read reopens it.
    close_newest(&watch);
    let loaded = wait(store.load("s".into())).await.unwrap();
    assert!(deep_equal(&loaded, &first));
    assert_eq!(connection_count(&watch), 2, "reopened once");

    // Closed right before a save's write: the save is run again on a new
    // connection, and written once.
    let puts_before = puts(&store);
    let undo_close = close_before_writes(db, 1.0);
    let second = with(&first, &[&message("two", 3)]);
    let meta = save(&store, "s", second.clone()).await.unwrap();
    undo(&undo_close);
    assert_eq!(field(&meta, "revision").as_f64(), Some(2.0), "one revision");
    assert_eq!(field(&meta, "messageCount").as_f64(), Some(3.0));
    assert_eq!(puts(&store) - puts_before, 1.0, "one record put");
    assert!(deep_equal(
        &wait(store.load("s".into())).await.unwrap(),
        &second
    ));
    assert_eq!(
        wait(raw_sizes(db, "s"))
            .await
            .unwrap()
            .unchecked_into::<Array>()
            .iter()
            .map(|n| n.as_f64().unwrap())
            .sum::<f64>(),
        3.0
    );

    // The same for a compaction, a fork, an import, a rename, a create, a delete.
    let third = with(&second, &[&summary(4), &message("after", 5)]);
    let undo_close = close_before_writes(db, 1.0);
    let meta = save(&store, "s", third.clone()).await.unwrap();
    undo(&undo_close);
    assert_eq!(field(&meta, "revision").as_f64(), Some(3.0));
    let context = wait(store.load_context("s".into())).await.unwrap();
    assert!(deep_equal(
        &context,
        &array(&[&summary(4), &message("after", 5)])
    ));

    let undo_close = close_before_writes(db, 1.0);
    let forked = wait(store.fork("s".into(), 2.into(), parse("{\"id\":\"f\"}")))
        .await
        .unwrap();
    undo(&undo_close);
    assert_eq!(field(&forked, "messageCount").as_f64(), Some(2.0));

    let text = wait(store.export_jsonl("s".into())).await.unwrap();
    let undo_close = close_before_writes(db, 1.0);
    let imported = wait(store.import_jsonl(text.clone(), parse("{\"title\":\"imp\"}")))
        .await
        .unwrap();
    undo(&undo_close);
    let imported_id = field(&imported, "id").as_string().unwrap();

    let undo_close = close_before_writes(db, 1.0);
    wait(store.rename("f".into(), "fork renamed".into()))
        .await
        .unwrap();
    undo(&undo_close);
    let undo_close = close_before_writes(db, 1.0);
    wait(store.create_session(parse("{\"id\":\"c\"}")))
        .await
        .unwrap();
    undo(&undo_close);
    let undo_close = close_before_writes(db, 1.0);
    wait(store.delete("c".into())).await.unwrap();
    undo(&undo_close);

    let list: Array = wait(store.list()).await.unwrap().unchecked_into();
    let ids: Vec<String> = list
        .iter()
        .map(|m| field(&m, "id").as_string().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "one session each, none twice: {ids:?}");
    assert!(ids.contains(&"s".to_owned()) && ids.contains(&"f".to_owned()));
    assert!(ids.contains(&imported_id));
    let renamed = list
        .iter()
        .find(|m| field(m, "id").as_string().as_deref() == Some("f"))
        .unwrap();
    assert_eq!(
        field(&renamed, "title").as_string().as_deref(),
        Some("fork renamed")
    );
    assert!(deep_equal(
        &wait(store.load(imported_id.as_str().into())).await.unwrap(),
        &third
    ));

    // The browser closing it on its own (the close event): the next call
    // just reopens.
    let before = connection_count(&watch);
    close_newest_as_the_browser_does(&watch);
    assert!(deep_equal(
        &wait(store.load("s".into())).await.unwrap(),
        &third
    ));
    assert_eq!(connection_count(&watch), before + 1);
    stop_watching(&watch);
    store.close();
}

#[wasm_bindgen_test]
async fn a_retried_save_reports_its_own_commit_and_refuses_another_pages_save_of_the_next_revision()
{
    let db = "store-lost-commit";
    wait(delete_db(db)).await.unwrap();
    let store = open(db).await;
    create(&store, "s").await;
    let kept = array(&[&message("one", 1), &message("two", 2)]);
    save(&store, "s", kept.clone()).await.unwrap();
    let stored = |store: &SessionStore| wait(store.load("s".into()));

    // The commit went through, the connection with it: the second attempt
    // finds the record it wrote and reports the save, writing nothing more.
    let ours = with(&kept, &[&message("ours", 3)]);
    let undo_close = lose_next_commit(db, true, &JsValue::NULL);
    let meta = save(&store, "s", ours.clone()).await;
    undo(&undo_close);
    let meta = meta.unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(2.0), "one revision");
    let other = open(db).await;
    assert!(deep_equal(&stored(&other).await.unwrap(), &ours));

    // The commit did not go through, and another page saved the next
    // revision before the second attempt: not this save, a conflict.
    let mine = with(&ours, &[&message("mine", 4)]);
    let theirs = message("theirs", 5);
    let elsewhere = array(&[&"s".into(), &theirs]);
    let undo_close = lose_next_commit(db, false, &elsewhere);
    let e = save(&store, "s", mine.clone()).await;
    undo(&undo_close);
    let e = e.expect_err("another page's save is not this one");
    assert_eq!(error_name(&e), "ConflictError", "{}", error_message(&e));
    // Theirs is what is stored; the app, its array in hand, reloads and
    // saves again: nothing is lost.
    let now = with(&ours, &[&theirs]);
    assert!(deep_equal(&stored(&other).await.unwrap(), &now));
    let reloaded: Array = stored(&store).await.unwrap().unchecked_into();
    assert!(deep_equal(&reloaded, &now));
    let both = with(&reloaded, &[&message("mine", 4)]);
    let meta = save(&store, "s", both.clone()).await.unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(4.0));
    assert!(deep_equal(&stored(&other).await.unwrap(), &both));
    other.close();
    store.close();
}

#[wasm_bindgen_test]
async fn a_connection_lost_twice_is_a_connection_lost_error_and_the_session_is_intact() {
    let db = "store-lost-twice";
    wait(delete_db(db)).await.unwrap();
    let store = open(db).await;
    create(&store, "s").await;
    let kept = array(&[&message("one", 1), &message("two", 2)]);
    save(&store, "s", kept.clone()).await.unwrap();
    let undo_close = close_before_writes(db, f64::INFINITY);
    let e = save(&store, "s", with(&kept, &[&message("three", 3)]))
        .await
        .unwrap_err();
    undo(&undo_close);
    assert_eq!(
        error_name(&e),
        "ConnectionLostError",
        "{}",
        error_message(&e)
    );
    let text = error_message(&e);
    assert!(
        text.starts_with("SessionStore.save: the browser closed the connection"),
        "{text}"
    );
    assert!(text.contains("and again on a reopened one"), "{text}");
    assert!(text.contains("nothing was written twice"), "{text}");
    // Intact, as another store reads it, and this store goes on.
    let other = open(db).await;
    assert!(deep_equal(
        &wait(other.load("s".into())).await.unwrap(),
        &kept
    ));
    let meta = save(&store, "s", with(&kept, &[&message("three", 3)]))
        .await
        .unwrap();
    assert_eq!(field(&meta, "revision").as_f64(), Some(2.0));
    other.close();
    // A store closed by the app is not reopened: StoreClosedError.
    store.close();
    let e = wait(store.load("s".into())).await.unwrap_err();
    assert_eq!(error_name(&e), "StoreClosedError");
}

#[wasm_bindgen_test]
async fn compactions_forks_and_imports_are_strict_turns_are_not() {
    let db = "store-durability";
    wait(delete_db(db)).await.unwrap();
    let store = open(db).await;
    let recorder = record_durability(db);
    create(&store, "s").await;
    let turn = array(&[&message("one", 1), &assistant("stop", 10, 2)]);
    save(&store, "s", turn.clone()).await.unwrap();
    let compacted = with(&turn, &[&summary(3), &message("two", 4)]);
    save(&store, "s", compacted.clone()).await.unwrap();
    save(&store, "s", with(&compacted, &[&message("three", 5)]))
        .await
        .unwrap();
    wait(store.fork("s".into(), 1.into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    let text = wait(store.export_jsonl("s".into())).await.unwrap();
    wait(store.import_jsonl(text, JsValue::UNDEFINED))
        .await
        .unwrap();
    wait(store.rename("s".into(), "r".into())).await.unwrap();
    let log = durability_log(&recorder);
    stop_recording(&recorder);
    let asked: Vec<String> = log
        .iter()
        .map(|e| field(&e, "asked").as_string().unwrap())
        .collect();
    assert_eq!(
        asked,
        ["default", "default", "strict", "default", "strict", "strict", "default"],
        "create, turn, compaction, turn, fork, import, rename"
    );
    // Where the engine reports it, it took the hint.
    for (entry, want) in log.iter().zip(&asked) {
        let engine = field(&entry, "engine");
        if let Some(engine) = engine.as_string() {
            if want == "strict" {
                assert_eq!(engine, "strict");
            } else {
                assert_ne!(engine, "strict");
            }
        }
    }
    store.close();
}

#[wasm_bindgen_test]
async fn without_indexed_db_open_fails_clearly() {
    // Whatever happens in there is returned, not asserted: a panic inside
    // the closure would leave its promise pending.
    let attempt = Closure::once_into_js(|| {
        future_to_promise(async {
            Ok(
                match SessionStore::open(parse("{\"name\":\"store-none\"}")).await {
                    Ok(store) => {
                        store.close();
                        JsValue::from_str("opened")
                    }
                    Err(e) => e,
                },
            )
        })
    });
    let e = wait(without_indexed_db(attempt.unchecked_ref()))
        .await
        .unwrap();
    assert_eq!(error_name(&e), "OpenFailedError");
    let text = error_message(&e);
    assert!(text.starts_with("SessionStore.open: could not open database \"store-none\": IndexedDB storage is unavailable here"), "{text}");
    assert!(text.contains("no indexedDB"), "{text}");
    assert!(text.contains("private browsing"), "{text}");
    // A newer database on disk says so, not "unavailable".
    wait(delete_db("store-newer")).await.unwrap();
    let newer = wait(open_raw("store-newer", 50)).await.unwrap();
    close_db(&newer);
    let e = SessionStore::open(parse("{\"name\":\"store-newer\"}"))
        .await
        .err()
        .unwrap();
    assert_eq!(error_name(&e), "OpenFailedError");
    assert!(
        error_message(&e).contains("newer version of agent-compaction"),
        "{}",
        error_message(&e)
    );
    wait(delete_db("store-newer")).await.unwrap();
}

#[wasm_bindgen_test]
async fn persist_and_estimate_answer_and_say_when_the_api_is_missing() {
    let store = fresh("store-persist").await;
    let persisted = wait(store.persist()).await.unwrap();
    assert!(persisted.as_bool().is_some(), "a boolean: {persisted:?}");
    let estimate = wait(store.estimate()).await.unwrap();
    if has_storage_estimate() {
        assert_eq!(field(&estimate, "supported").as_bool(), Some(true));
        let usage = field(&estimate, "usage").as_f64().unwrap();
        let quota = field(&estimate, "quota").as_f64().unwrap();
        assert!(usage >= 0.0 && quota > 0.0, "{usage} / {quota}");
    }
    assert!(field(&estimate, "persisted").as_bool().is_some());
    let store = Rc::new(store);
    let s = store.clone();
    let missing = Closure::once_into_js(move || {
        future_to_promise(async move {
            let p = wait(s.persist()).await?;
            let e = wait(s.estimate()).await?;
            Ok(Array::of2(&p, &e).into())
        })
    });
    let out: Array = wait(without_storage_manager(missing.unchecked_ref()))
        .await
        .unwrap()
        .unchecked_into();
    assert_eq!(out.get(0).as_bool(), Some(false));
    assert!(deep_equal(
        &out.get(1),
        &parse("{\"supported\":false,\"usage\":null,\"quota\":null,\"persisted\":false}")
    ));
    // A closed store still answers (they do not touch the database).
    store.close();
    assert!(wait(store.persist()).await.unwrap().as_bool().is_some());
}
