// Unit tests of shim/known.js (the compactor's copy of the caller's array,
// kept in line by object identity) and shim/summarizer.js (deadline and
// cancellation around the app's summarizer promise).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  historyChanged, identityFacts, insertAt, rebaseKnown, rebaseOut, sameRun, syncKnown, syncLlm, takeSync,
} from "../../crates/wasm/src/js/shim/known.js";
import {
  SummarizerTimeout, isAbortError, isTimeout, linkAbort, newAbortController, settleWithin, settledUnless,
} from "../../crates/wasm/src/js/shim/summarizer.js";

const objs = (n) => Array.from({ length: n }, (_, i) => ({ i }));

// What takeSync() gives after a change other than an append: the old
// length of `known` and the identity facts (plain numbers, for deepEqual).
const taken = () => {
  const [m, facts, ...rest] = takeSync();
  return [m, facts && [...facts], ...rest];
};

test("syncKnown: an append is a number; anything else the identity facts", () => {
  const [a, b, c, d, s] = objs(5);
  let known = [a, b];
  assert.equal(syncKnown(known, [a, b, c], true), 2);
  assert.deepEqual(known, [a, b, c]);
  // Anything but an append: -1, the old length and the facts from
  // takeSync() (what they mean is the core's conversation::edit), and
  // `known` a copy of the array.
  assert.equal(syncKnown(known, [a, s, b, c, d], true), -1);
  assert.deepEqual(taken(), [3, [1, 0, 1, -1, 0, 1, -1]]);
  assert.deepEqual(known, [a, s, b, c, d]);
  assert.equal(syncKnown(known, [a, s, c, d], true), -1);
  assert.deepEqual(taken(), [5, [2, 0, 1, 2, 1, 2]]);
  assert.deepEqual(known, [a, s, c, d]);
  known = [a, b, c];
  assert.equal(syncKnown(known, [a, d, s, b], true), -1);
  assert.deepEqual(taken(), [3, [1, 0, 1, -1, -1, 0]]);
  assert.deepEqual(known, [a, d, s, b]);
  // Cut back: shorter.
  known = [a, b, c];
  assert.equal(syncKnown(known, [a], true), -1);
  assert.deepEqual(taken(), [3, [1, 0, 1]]);
  assert.deepEqual(known, [a]);
  // Emptied.
  assert.equal(syncKnown(known, [], true), -1);
  assert.deepEqual(taken(), [1, [0, 0]]);
  assert.deepEqual(known, []);
  // A message replaced anywhere but first or last is seen by the scan ...
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [a, s, c, d], true), -1);
  assert.deepEqual(taken(), [4, [1, 0, 1, 2, -1, 1, 2]]);
  assert.deepEqual(known, [a, s, c, d]);
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [a, b, s, d], true), -1);
  assert.deepEqual(taken(), [4, [2, 0, 1, -1, 1]]);
  // ... and not without it (the caller trusts the array).
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [a, b, s, d, c], false), 4);
  // Without the scan, a change at either end is still seen.
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [s, b, c, d], false), -1);
  assert.deepEqual(taken(), [4, [0, 0, 1, 2, 3, -1, 1, 2, 3]]);
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [a, b, c], false), -1);
  assert.deepEqual(taken(), [4, [3, 0]]);
});

test("identityFacts: a turn is one number; otherwise classes of first occurrence", () => {
  const [a, b, c, d, s] = objs(5);
  assert.deepEqual([...identityFacts([a, b], [a, b, c])], [2]);
  assert.deepEqual([...identityFacts([], [a])], [0]);
  assert.deepEqual([...identityFacts([], [])], [0]);
  // Summary s inserted at 1: prefix 1; known[1..] = b, c (classes 0, 1);
  // new[1..] = s, b, c (classes -1, 0, 1).
  assert.deepEqual([...identityFacts([a, b, c], [a, s, b, c])], [1, 0, 1, -1, 0, 1]);
  // A duplicate object gets the class of its first place.
  assert.deepEqual([...identityFacts([a, b, b, c], [a, d, b])], [1, 0, 0, 2, -1, 0]);
  // Truncated: messages are a prefix of known.
  assert.deepEqual([...identityFacts([a, b, c], [a])], [1, 0, 1]);
  // Replaced in place: the prefix ends there, the rest are the same classes.
  assert.deepEqual([...identityFacts([a, b, c], [a, d, c, s])], [1, 0, 1, -1, 1, -1]);
  assert.deepEqual([...identityFacts([a, b, c], [d, b, c])], [0, 0, 1, 2, -1, 1, 2]);
});

test("syncKnown copies, and its identity scan classifies, up to the first element that is no object (the core reads it next and reports it)", () => {
  const [a, b, c, s] = objs(4);
  const sparse = [a];
  sparse.length = 1e8;
  // An append: copied up to the hole.
  let known = [];
  assert.equal(syncKnown(known, sparse, true), 0);
  assert.deepEqual(known, [a]);
  known = [a, b];
  const edited = [a, s, b, , c]; // eslint-disable-line no-sparse-arrays
  assert.equal(syncKnown(known, edited, true), -1);
  // new[1..] classified up to the hole: s (-1), b (0).
  assert.deepEqual(taken(), [2, [1, 0, -1, 0]]);
  assert.deepEqual(known, [a, s, b]);
  known = [b, c];
  assert.equal(syncKnown(known, sparse, true), -1);
  assert.deepEqual(taken(), [2, [0, 0, 1, -1]]);
  assert.deepEqual(known, [a]);
  for (const bad of [null, 5, "user"]) {
    known = [];
    assert.equal(syncKnown(known, [a, bad, b], true), 0);
    assert.deepEqual(known, [a]);
  }
  // The store's scan (no stop) classifies every element.
  assert.deepEqual([...identityFacts([a, b], [a, s, b, , c])], [1, 0, -1, 0, -1, -1]); // eslint-disable-line no-sparse-arrays
  assert.deepEqual([...identityFacts([a, b], [a, s, b, , c], true)], [1, 0, -1, 0]); // eslint-disable-line no-sparse-arrays
});

test("syncLlm: rebases a context that moved to a new summary, then syncs", () => {
  const [s0, a, b, c, d, s1] = objs(6);
  // An append, nothing rebased: the number alone.
  let known = [s0, a, b];
  assert.equal(syncLlm(known, [s0, a, b, c], true), 3);
  assert.deepEqual(known, [s0, a, b, c]);
  // The context moved to s1 and goes on with b, c, then d is new: -1,
  // syncKnown's values ([from, null] for an append) and the cut.
  assert.equal(syncLlm(known, [s1, b, c, d], false), -1);
  assert.deepEqual(taken(), [3, null, 2]);
  assert.deepEqual(known, [s1, b, c, d]);
  // Moved, but a message in the kept part was replaced: no rebase (no
  // cut after the facts), the facts of the whole array.
  known = [s0, a, b, c];
  assert.equal(syncLlm(known, [s1, b, d], true), -1);
  assert.deepEqual(taken(), [4, [0, 0, 1, 2, 3, -1, 2, -1]]);
  assert.deepEqual(known, [s1, b, d]);
  // Moved, and the last message taken out: the rebase, then the removal.
  known = [s0, a, b, c, d];
  assert.equal(syncLlm(known, [s1, b, c], true), -1);
  assert.deepEqual(taken(), [4, [3, 0], 2]);
  assert.deepEqual(known, [s1, b, c]);
});

test("rebaseKnown and rebaseOut follow a context that moved to a new summary", () => {
  const [s0, a, b, c, s1] = objs(5);
  const known = [s0, a, b, c];
  assert.equal(rebaseKnown(known, [s1, b, c]), 2);
  assert.deepEqual(known, [s1, b, c]);
  assert.equal(rebaseKnown([s0, a], [s0, a]), -1);
  const out = [1, 2, 3, 4];
  rebaseOut(out, 2, 9);
  assert.deepEqual(out, [9, 3, 4]);
  rebaseOut(out, 1, undefined);
  assert.deepEqual(out, [3, 4]);
  assert.deepEqual(insertAt([1, 2, 3], 1, 7), [1, 7, 2, 3]);
  assert.equal(sameRun([a, b], [a, b]), true);
  assert.equal(sameRun([a, b], [a, c]), false);
});

test("sameRun: every known message, holes read as undefined", () => {
  const [a, b, c, d] = objs(4);
  assert.equal(sameRun([a, b, c], [a, b, c, d]), true);
  assert.equal(sameRun([a, b, c], [d, b, c]), false);
  assert.equal(sameRun([a, b, c], [a, d, c]), false);
  assert.equal(sameRun([a, b, c], [a, b, d]), false);
  // Holes and undefined read alike, as a plain loop reads them.
  assert.equal(sameRun([a, undefined], [a, , ]), true); // eslint-disable-line no-sparse-arrays
  assert.equal(sameRun([a, b], [a, , ]), false); // eslint-disable-line no-sparse-arrays
  assert.equal(sameRun([a, , ], [a, undefined]), true); // eslint-disable-line no-sparse-arrays
  assert.equal(sameRun([a, , ], [a, b]), false); // eslint-disable-line no-sparse-arrays
  assert.equal(sameRun([a, b, c], [a, , c]), false); // eslint-disable-line no-sparse-arrays
});

test("sameRun and syncKnown see a message replaced anywhere, far from the end too", () => {
  const many = objs(100);
  const [x] = objs(1);
  for (const at of [1, 10, 50, 67, 98]) {
    const replaced = many.with(at, x);
    assert.equal(sameRun(many.slice(), many), true);
    assert.equal(sameRun(many.slice(), replaced), false, `at ${at}`);
    const known = [];
    assert.equal(syncKnown(known, many.slice(0, 99), true), 0);
    assert.equal(syncKnown(known, many, true), 99);
    assert.equal(syncKnown(known, [...replaced, x], true), -1);
    assert.equal(taken()[1][0], at);
    assert.deepEqual(known, [...replaced, x]);
    // Put back: seen again.
    assert.equal(syncKnown(known, many, true), -1);
    assert.deepEqual(known, many);
  }
});

test("syncKnown: each message read once, and only where the scan needs it", () => {
  // A getter that gives another object at every read (hostile input):
  // `known` holds what was read, and the next call sees the difference.
  const [p, s0, a] = objs(3);
  let reads = 0;
  const messages = [p, s0, a];
  Object.defineProperty(messages, 3, { get: () => ({ read: reads++ }), enumerable: true, configurable: true });
  const known = [p, s0, a];
  assert.equal(syncKnown(known, messages, true), 3);
  assert.equal(reads, 1);
  assert.equal(syncKnown(known, messages, true), -1);
});

test("settleWithin resolves with the value, or times out and aborts the controller", async () => {
  assert.equal(await settleWithin(Promise.resolve(5), 1000, newAbortController()), 5);
  const controller = newAbortController();
  const late = new Promise(() => {});
  await assert.rejects(settleWithin(late, 20, controller), (e) => isTimeout(e) && e.name === "TimeoutError");
  assert.equal(controller.signal.aborted, true);
  assert.ok(controller.signal.reason instanceof SummarizerTimeout);
});

test("linkAbort passes the caller's abort on, and can be undone", async () => {
  const caller = new AbortController();
  const controller = newAbortController();
  const settled = settleWithin(new Promise(() => {}), 0, controller);
  linkAbort(caller.signal, controller);
  caller.abort(new DOMException("stop", "AbortError"));
  await assert.rejects(settled, (e) => isAbortError(e) && !isTimeout(e));
  const other = new AbortController();
  const mine = newAbortController();
  const undo = linkAbort(other.signal, mine);
  undo();
  other.abort();
  assert.equal(mine.signal.aborted, false);
  const already = new AbortController();
  already.abort();
  const linked = newAbortController();
  linkAbort(already.signal, linked);
  assert.equal(linked.signal.aborted, true);
  assert.equal(typeof linkAbort(undefined, linked), "function");
});

test("settledUnless: true when the promise settles either way, false when the signal aborts first or already has", async () => {
  assert.equal(await settledUnless(Promise.resolve(1), undefined), true);
  assert.equal(await settledUnless(Promise.reject(new Error("x")), new AbortController().signal), true);
  const stop = new AbortController();
  const waiting = settledUnless(new Promise(() => {}), stop.signal);
  stop.abort();
  assert.equal(await waiting, false);
  assert.equal(await settledUnless(new Promise(() => {}), stop.signal), false, "aborted already");
  // Settled first: a later abort changes nothing.
  const later = new AbortController();
  assert.equal(await settledUnless(Promise.resolve(), later.signal), true);
  later.abort();
});

test("historyChanged: the hidden places whose message is not the one indexed there, and known made the hidden messages", () => {
  const [a, b, c, d, e] = objs(5);
  const known = [];
  // First search: everything hidden is new.
  assert.deepEqual([...historyChanged(known, [a, b, c, d], Uint32Array.of(0, 1, 3))], [0, 1, 3]);
  assert.deepEqual(known, [a, b, , d]);
  // Nothing changed.
  assert.deepEqual([...historyChanged(known, [a, b, c, d], Uint32Array.of(0, 1, 3))], []);
  // b replaced at 1; 2 hidden now; 3 visible again (it leaves known).
  assert.deepEqual([...historyChanged(known, [a, e, c, d], Uint32Array.of(0, 1, 2))], [1, 2]);
  assert.deepEqual(known, [a, e, c]);
  // Hidden again later with the same object: indexed anew, since it left.
  assert.deepEqual([...historyChanged(known, [a, e, c, d], Uint32Array.of(0, 1, 2, 3))], [3]);
  assert.deepEqual([...historyChanged(known, [a, e, c, d], Uint32Array.of())], []);
  assert.equal(known.length, 0);
});
