// Unit tests of shim/idb.js with stand-ins for IndexedDB's request,
// transaction, cursor and store objects (fake-indexeddb is not installed;
// the real IndexedDB is tested in the browser: crates/wasm/tests/store.rs).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  commitTransaction, fillSessionDefaults, onUpgradeNeeded, readPinned, readRecords, requestPromise, sameKey,
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
    [["sessions", "messages"], "readwrite"],
    ["sessions", "readonly"],
    // A strict write asks for it; the default and reads pass no options.
    [["sessions", "messages"], "readwrite", { durability: "strict" }],
    ["sessions", "readwrite"],
    [["sessions", "messages"], "readonly"],
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

test("onUpgradeNeeded runs the step; a step that throws aborts the upgrade", () => {
  const make = () => {
    const target = new EventTarget();
    target.result = "db";
    target.transaction = { aborted: false, abort() { this.aborted = true; } };
    return target;
  };
  const ok = make();
  let seen;
  onUpgradeNeeded(ok, (db, tx, old) => (seen = [db, old]));
  ok.dispatchEvent(Object.assign(new Event("upgradeneeded"), { oldVersion: 1 }));
  assert.deepEqual(seen, ["db", 1]);
  assert.equal(ok.transaction.aborted, false);
  const bad = make();
  onUpgradeNeeded(bad, () => {
    throw new Error("step failed");
  });
  bad.dispatchEvent(new Event("upgradeneeded"));
  assert.equal(bad.transaction.aborted, true);
});
