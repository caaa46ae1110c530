// Unit tests of shim/store.js (the identity facts a save's diff is made
// from are known.js's, tested in known-summarizer.test.mjs): the key runs assembled, the
// value comparisons and storability checks (and which message of a pack
// the browser could not clone), the pinned messages and
// clearing markers found by position, records to messages, session
// records merged and shown, store errors with stable names, and the
// origin's storage asked to persist and estimated, with and without
// navigator.storage.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConflictError } from "../../crates/wasm/src/js/shim/errors.js";
import {
  adoptEqual, assembleKeys, checkStorable, conflictErrorClass, firstUnclonable, firstUserText, flattenRecords,
  estimateStorage, markWords, mergeMeta, persistStorage, publicMeta, storeError,
} from "../../crates/wasm/src/js/shim/store.js";

const objs = (n) => Array.from({ length: n }, (_, i) => ({ role: "user", content: `m${i}` }));

test("markWords: pinned messages and clearing markers in a range, as [index, role code, pinned] triples", () => {
  const throwing = { get role() { throw new Error("no"); } };
  const messages = [
    { role: "user", content: "rule", pinned: true },
    { role: "user", content: "x", pinned: "yes" },
    { role: "toolOutputCleared", toolCallIds: [] },
    null,
    throwing,
    { role: "custom", content: "c", pinned: true },
    { role: "compactionSummary", summary: "s", pinned: true },
  ];
  // user = 0, toolOutputCleared = 7, custom = 4, compactionSummary = 6
  // (roles.js); the core decides a pinned summary is not pinned.
  assert.deepEqual([...markWords(messages, 0, messages.length)], [0, 0, 1, 2, 7, 0, 5, 4, 1, 6, 6, 1]);
  assert.deepEqual([...markWords(messages, 1, 3)], [2, 7, 0]);
  assert.deepEqual([...markWords(messages, 3, 5)], []);
});

test("assembleKeys: a turn concatenates; other runs pick old and added keys", () => {
  const keys = [["s", 0], ["s", 1], ["s", 2]];
  const added = [["s", 3]];
  const turn = assembleKeys(keys, added, Uint32Array.of(0, 0, 3, 1, 0, 1));
  assert.deepEqual(turn, [...keys, ...added]);
  const inserted = assembleKeys(keys, [["s", 0, 1]], Uint32Array.of(0, 0, 1, 1, 0, 1, 0, 2, 3));
  assert.deepEqual(inserted, [["s", 0], ["s", 0, 1], ["s", 2]]);
  assert.deepEqual(assembleKeys(keys, [], Uint32Array.of()), []);
});

test("adoptEqual takes the caller's objects for stored records equal by value", () => {
  const stored = [{ role: "user", content: "a", timestamp: new Date(5) }, { role: "user", content: "b" }];
  const mine = [{ role: "user", content: "a", timestamp: new Date(5) }, { role: "user", content: "x" }];
  const adopted = adoptEqual(stored, mine);
  assert.equal(adopted[0], mine[0]);
  assert.equal(adopted[1], stored[1]);
  const hostile = new Proxy({}, { ownKeys() { throw new Error("trap"); } });
  assert.deepEqual(adoptEqual([{}], [hostile]), [{}], "an unreadable message equals nothing");
});

test("checkStorable names the first message and path that cannot be stored", () => {
  const cyclic = { role: "user", content: [] };
  cyclic.content.push({ back: cyclic });
  assert.equal(checkStorable([{ role: "user", content: "ok" }], [0]), null);
  assert.deepEqual(checkStorable([{}, { role: "user", f() {} }], [0, 1]), [1, ".f", "is a function"]);
  assert.deepEqual(checkStorable([cyclic], [0]), [0, ".content[0].back", "refers back to an enclosing object (a cycle)"]);
  assert.deepEqual(checkStorable([[1]], [0]), [0, "", "is an array, not a message object"]);
  assert.deepEqual(checkStorable([{ s: Symbol("x") }], [0]), [0, ".s", "is a symbol"]);
  // IndexedDB could store it, but the session could no longer be exported.
  assert.deepEqual(checkStorable([{ usage: { input: 10n } }], [0]), [0, ".usage.input", "is a BigInt (JSON has no such number)"]);
  const throwing = Object.defineProperty({}, "x", { enumerable: true, get() { throw new Error("no"); } });
  assert.deepEqual(checkStorable([throwing], [0]), [0, "", "reading it threw: no"]);
});

test("firstUnclonable: the first message of a range structuredClone rejects, else the range's start", () => {
  // A WeakMap is plain to checkStorable (no own keys) but cannot be cloned, as a DOM node.
  const messages = [...objs(3), { role: "user", content: [{ type: "text", text: "x", handle: new WeakMap() }] }, ...objs(2)];
  assert.equal(firstUnclonable(messages, 0, 6), 3);
  assert.equal(firstUnclonable(messages, 1, 6), 3);
  assert.equal(firstUnclonable(messages, 4, 6), 4, "none in the range: its start");
  assert.equal(firstUnclonable(messages, 0, 3), 0);
});

test("flattenRecords: packs give their messages under their key; a skip leaves the first pack's start out", () => {
  const values = [["m0", "m1", "m2"], "m3", ["m4", "m5"]];
  const keys = ["k0", "k3", "k4"];
  const [messages, perMessage, packs] = flattenRecords(values, keys, 0);
  assert.deepEqual(messages, ["m0", "m1", "m2", "m3", "m4", "m5"]);
  assert.deepEqual(perMessage, ["k0", "k0", "k0", "k3", "k4", "k4"]);
  assert.deepEqual([...packs], [0, 3, 4, 2]);
  const [context, , contextPacks] = flattenRecords(values, keys, 2);
  assert.deepEqual(context, ["m2", "m3", "m4", "m5"]);
  assert.deepEqual([...contextPacks], [0, 1, 2, 2]);
  // Loose records only: the arrays as read.
  const loose = ["a", "b"];
  assert.equal(flattenRecords(loose, ["x", "y"], 0)[0], loose);
});

test("firstUserText: the first user message's text among the first messages", () => {
  const messages = [
    { role: "assistant", content: [{ type: "text", text: "no" }] },
    { role: "user", content: [{ type: "image" }, { type: "text", text: "yes" }] },
  ];
  assert.equal(firstUserText(messages, 64), "yes");
  assert.equal(firstUserText(messages, 1), undefined);
  assert.equal(firstUserText([{ role: "user", content: "plain" }], 64), "plain");
});

test("mergeMeta and publicMeta: fields over the stored record; internal fields hidden", () => {
  const stored = { id: "s", title: "t", revision: 1, extra: true };
  const fields = { revision: 2, contextKey: null };
  const queued = mergeMeta(stored, fields, undefined);
  assert.deepEqual(queued, { id: "s", title: "t", revision: 2, extra: true, contextKey: null });
  assert.equal(mergeMeta(stored, fields, queued), null, "the same as queued");
  assert.deepEqual(mergeMeta({ ...stored, title: "renamed" }, fields, queued).title, "renamed");
  const shown = publicMeta({ id: "s", contextKey: ["s", 1], contextSlot: 0, title: "t" }, ["contextKey", "contextSlot"]);
  assert.deepEqual(shown, { id: "s", title: "t" });
});

test("store errors are real Errors with stable names; ConflictError keeps its class", () => {
  const conflict = storeError("ConflictError", "saved elsewhere");
  assert.ok(conflict instanceof ConflictError && conflict instanceof Error);
  assert.equal(conflictErrorClass(), ConflictError);
  assert.equal(conflict.name, "ConflictError");
  const quota = storeError("QuotaExceededError", "full");
  assert.ok(quota instanceof Error && !(quota instanceof ConflictError));
  assert.equal(quota.name, "QuotaExceededError");
  assert.equal(String(quota), "QuotaExceededError: full");
});

test("persistStorage and estimateStorage: the browser's answers, and clear ones where navigator.storage is missing", async (t) => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  const use = (navigator) => Object.defineProperty(globalThis, "navigator", { value: navigator, configurable: true, writable: true });
  t.after(() => (saved ? Object.defineProperty(globalThis, "navigator", saved) : delete globalThis.navigator));
  use(undefined);
  assert.equal(await persistStorage(), false);
  assert.deepEqual(await estimateStorage(), { supported: false, usage: null, quota: null, persisted: false });
  use({ storage: {} });
  assert.equal(await persistStorage(), false);
  assert.deepEqual(await estimateStorage(), { supported: false, usage: null, quota: null, persisted: false });
  let persisted = false;
  use({
    storage: {
      persist: async () => (persisted = true),
      persisted: async () => persisted,
      estimate: async () => ({ usage: 1234, quota: 5_000_000, usageDetails: { indexedDB: 1234 } }),
    },
  });
  assert.deepEqual(await estimateStorage(), { supported: true, usage: 1234, quota: 5_000_000, persisted: false });
  assert.equal(await persistStorage(), true);
  assert.equal((await estimateStorage()).persisted, true);
  // Refused, or failing: false, and no numbers rather than wrong ones.
  use({ storage: { persist: async () => false, estimate: async () => { throw new Error("denied"); } } });
  assert.equal(await persistStorage(), false);
  assert.deepEqual(await estimateStorage(), { supported: false, usage: null, quota: null, persisted: false });
  use({ storage: { persist: () => Promise.reject(new TypeError("not here")), estimate: async () => ({ usage: NaN }) } });
  assert.equal(await persistStorage(), false);
  assert.equal((await estimateStorage()).supported, false);
});

test("persistStorage in a worker (persisted() but no persist()): whether a page persisted the origin already", async (t) => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  const use = (navigator) => Object.defineProperty(globalThis, "navigator", { value: navigator, configurable: true, writable: true });
  t.after(() => (saved ? Object.defineProperty(globalThis, "navigator", saved) : delete globalThis.navigator));
  use({ storage: { persisted: async () => true, estimate: async () => ({ usage: 1, quota: 2 }) } });
  assert.equal(await persistStorage(), true);
  use({ storage: { persisted: async () => false } });
  assert.equal(await persistStorage(), false);
  use({ storage: { persisted: () => Promise.reject(new Error("denied")) } });
  assert.equal(await persistStorage(), false);
  use({ storage: { persisted: async () => "yes" } });
  assert.equal(await persistStorage(), false);
});
