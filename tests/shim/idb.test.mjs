// Unit tests of shim/idb.js with stand-ins for IndexedDB's request,
// transaction, cursor and store objects (fake-indexeddb is not installed;
// the real IndexedDB is tested in the browser: crates/wasm/tests/store.rs).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  commitTransaction, fillSessionDefaults, openDatabase, readPinned, recordsRange, readRecords, requestPromise, sameKey,
  storeTransaction, valuesDescending,
} from "../../crates/wasm/src/js/shim/idb.js";

const later = (f) => setTimeout(f, 0);

function request(result, error) {
  const r = { result, error };
  later(() => (error ? r.onerror() : r.onsuccess()));
  return r;
}

test("requestPromise and readRecords: results, errors and a throwing store", async () => {
  assert.equal(await requestPromise(request(5)), 5);
  await assert.rejects(requestPromise(request(undefined, new Error("denied"))), /denied/);
  const store = { getAll: () => request(["a", "b"]), getAllKeys: () => request([1, 2]) };
  assert.deepEqual(await readRecords(store, null), [["a", "b"], [1, 2]]);
  const closed = { getAll() { throw new Error("closed"); } };
  await assert.rejects(readRecords(closed, null), /closed/);
});

test("readPinned: each listed record once, a pack's message at its slot, a missing record skipped", async () => {
  const records = new Map([["k1", { role: "user", content: "rule" }], ["k2", [{ n: 0 }, { n: 1 }, { n: 2 }]]]);
  const asked = [];
  const store = { get: (key) => (asked.push(key), request(records.get(key))) };
  const out = await readPinned(store, [["k1", 0], ["k2", 2], ["gone", 0], ["k2", 0]]);
  assert.deepEqual(out, [{ role: "user", content: "rule" }, { n: 2 }, { n: 0 }]);
  assert.deepEqual(asked, ["k1", "k2", "gone", "k2"]);
  assert.deepEqual(await readPinned(store, []), []);
  const closed = { get() { throw new Error("closed"); } };
  await assert.rejects(readPinned(closed, [["k1", 0]]), /closed/);
});

test("storeTransaction and commitTransaction", async () => {
  const calls = [];
  const db = { transaction: (...args) => (calls.push(args), {}) };
  storeTransaction(db, true, true);
  storeTransaction(db, false, false);
  storeTransaction(db, true, true, "strict");
  storeTransaction(db, true, false, "default");
  storeTransaction(db, false, true, "strict");
  assert.deepEqual(calls, [
    [["sessions", "messages", "history"], "readwrite"],
    ["sessions", "readonly"],
    // A strict write asks for it; the default and reads pass no options.
    [["sessions", "messages", "history"], "readwrite", { durability: "strict" }],
    ["sessions", "readwrite"],
    [["sessions", "messages", "history"], "readonly"],
  ]);
  const tx = { commit() { this.committed = true; later(() => this.oncomplete()); } };
  await commitTransaction(tx);
  assert.equal(tx.committed, true);
  const aborted = { error: new Error("QuotaExceededError"), commit() { later(() => this.onabort()); } };
  await assert.rejects(commitTransaction(aborted), /QuotaExceeded/);
  const silent = { error: null, commit() { later(() => this.onabort()); } };
  await assert.rejects(commitTransaction(silent), (e) => e === "The transaction was aborted");
});

test("sameKey compares with indexedDB.cmp; nulls only equal nulls", () => {
  globalThis.indexedDB = { cmp: (a, b) => (JSON.stringify(a) === JSON.stringify(b) ? 0 : 1) };
  try {
    assert.equal(sameKey(null, undefined), true);
    assert.equal(sameKey(null, ["s", 1]), false);
    assert.equal(sameKey(["s", 1], ["s", 1]), true);
    assert.equal(sameKey(["s", 1], ["s", 2]), false);
    globalThis.indexedDB = { cmp() { throw new Error("not a key"); } };
    assert.equal(sameKey({}, {}), false);
  } finally {
    delete globalThis.indexedDB;
  }
});

// A cursor over `records`: each continue() calls onsuccess with the next.
function cursorRequest(records, onUpdate) {
  const r = {};
  let i = 0;
  const step = () => {
    r.result = i < records.length
      ? { value: records[i], update: (v) => onUpdate(v), continue: () => { i++; later(step); } }
      : null;
    r.onsuccess();
  };
  later(step);
  return r;
}

test("fillSessionDefaults applies the decided patch, counting messages where asked", async () => {
  const records = [{ id: "ok" }, { id: "old", title: 3 }, { id: "uncounted" }];
  const updated = [];
  const put = [];
  globalThis.IDBKeyRange = { bound: (...args) => ({ bound: args }) };
  const sessions = {
    openCursor: () => cursorRequest(records, (v) => updated.push(v)),
    put: (v) => put.push(v),
  };
  const messages = { count: (range) => request(range.bound[0][0] === "uncounted" ? 7 : -1) };
  const decide = (record) => {
    if (record.id === "ok") return null;
    if (record.id === "old") return { fields: { title: "New session", contextKey: null }, count: false };
    return { fields: { revision: 0 }, count: true };
  };
  try {
    fillSessionDefaults(sessions, messages, decide);
    await new Promise((r) => setTimeout(r, 30));
  } finally {
    delete globalThis.IDBKeyRange;
  }
  assert.deepEqual(updated, [{ id: "old", title: "New session", contextKey: null }]);
  assert.deepEqual(put, [{ id: "uncounted", revision: 0, messageCount: 7 }]);
  assert.deepEqual(records[1], { id: "old", title: 3 }, "the cursor's value is not changed in place");
});

test("valuesDescending reads an index backwards through one cursor", async () => {
  let asked;
  const store = {
    index: (name) => ({
      openCursor: (range, direction) => ((asked = [name, range, direction]), cursorRequest([3, 2, 1], () => {})),
    }),
  };
  assert.deepEqual(await valuesDescending(store, "byLastModified"), [3, 2, 1]);
  assert.deepEqual(asked, ["byLastModified", null, "prev"]);
});

test("openDatabase: the upgrade step runs, a step that throws aborts the open, a blocked open fails at once", async () => {
  // A stand-in factory whose open request is driven by the test.
  const opened = [];
  class IDBFactory {
    open(name, version) {
      const r = { name, version, result: { closed: false, close() { this.closed = true; } } };
      r.transaction = { aborted: false, abort() { this.aborted = true; } };
      opened.push(r);
      return r;
    }
  }
  const saved = { IDBFactory: globalThis.IDBFactory, indexedDB: globalThis.indexedDB };
  try {
    globalThis.IDBFactory = IDBFactory;
    globalThis.indexedDB = undefined;
    await assert.rejects(openDatabase("db", 3, () => {}), (e) => e.kind === "none");
    globalThis.indexedDB = { open() {} };
    await assert.rejects(openDatabase("db", 3, () => {}), (e) => e.kind === "none");
    globalThis.indexedDB = Object.assign(new IDBFactory(), { open() { throw new Error("refused"); } });
    await assert.rejects(openDatabase("db", 3, () => {}), (e) => e.kind === "threw" && e.error.message === "refused");
    globalThis.indexedDB = new IDBFactory();

    let seen;
    const ok = openDatabase("db", 3, (db, tx, old) => (seen = [db, tx, old]));
    const r = opened.at(-1);
    assert.deepEqual([r.name, r.version], ["db", 3]);
    r.onupgradeneeded({ oldVersion: 1 });
    assert.deepEqual(seen, [r.result, r.transaction, 1]);
    r.onsuccess();
    assert.equal(await ok, r.result);
    assert.equal(r.transaction.aborted, false);

    const bad = openDatabase("db", 3, () => {
      throw new Error("step failed");
    });
    const b = opened.at(-1);
    b.onupgradeneeded({ oldVersion: 0 });
    assert.equal(b.transaction.aborted, true);
    b.onerror();
    await assert.rejects(bad, (e) => e.kind === "upgrade" && e.error.message === "step failed");

    const failing = openDatabase("db", 3, () => {});
    const f = opened.at(-1);
    f.error = new Error("disk");
    f.onerror();
    await assert.rejects(failing, (e) => e.kind === "request" && e.error.message === "disk");

    const blocked = openDatabase("db", 3, () => {});
    const k = opened.at(-1);
    k.onblocked();
    let later;
    await assert.rejects(blocked, (e) => {
      later = e.later;
      return e.kind === "blocked" && later instanceof Promise;
    });
    k.onsuccess();
    await later;
    assert.equal(k.result.closed, true);
  } finally {
    Object.assign(globalThis, saved);
  }
});

test("recordsRange: all of a session's records, those from a key on, those before a key", () => {
  const saved = globalThis.IDBKeyRange;
  globalThis.IDBKeyRange = { bound: (lower, upper, lowerOpen, upperOpen) => ({ lower, upper, lowerOpen, upperOpen }) };
  try {
    assert.deepEqual(recordsRange("s", null, null), { lower: ["s"], upper: ["s", []], lowerOpen: true, upperOpen: true });
    assert.deepEqual(recordsRange("s", ["s", 4], null), { lower: ["s", 4], upper: ["s", []], lowerOpen: false, upperOpen: true });
    assert.deepEqual(recordsRange("s", null, ["s", 2]), { lower: ["s"], upper: ["s", 2], lowerOpen: true, upperOpen: true });
  } finally {
    globalThis.IDBKeyRange = saved;
  }
});
