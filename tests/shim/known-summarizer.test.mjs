// Unit tests of shim/known.js (the compactor's copy of the caller's array,
// kept in line by object identity) and shim/summarizer.js (deadline and
// cancellation around the app's summarizer promise).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  historyChanged, identityFacts, insertAt, rebaseKnown, rebaseOut, sameRun, syncKnown, syncLlm, takeSync,
} from "../../crates/wasm/src/js/shim/known.js";
import {
  SummarizerTimeout, isAbortError, isTimeout, linkAbort, newAbortController, settleWithin,
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
  assert.equal(syncKnown(known, [a, b, c], 0, 0), 2);
  assert.deepEqual(known, [a, b, c]);
  // Anything but an append: -1, the old length and the facts from
  // takeSync() (what they mean is the core's conversation::edit), and
  // `known` a copy of the array.
  assert.equal(syncKnown(known, [a, s, b, c, d], 0, 0), -1);
  assert.deepEqual(taken(), [3, [1, 0, 1, -1, 0, 1, -1]]);
  assert.deepEqual(known, [a, s, b, c, d]);
  assert.equal(syncKnown(known, [a, s, c, d], 0, 0), -1);
  assert.deepEqual(taken(), [5, [2, 0, 1, 2, 1, 2]]);
  assert.deepEqual(known, [a, s, c, d]);
  known = [a, b, c];
  assert.equal(syncKnown(known, [a, d, s, b], 0, 0), -1);
  assert.deepEqual(taken(), [3, [1, 0, 1, -1, -1, 0]]);
  assert.deepEqual(known, [a, d, s, b]);
  // Cut back: shorter.
  known = [a, b, c];
  assert.equal(syncKnown(known, [a], 0, 0), -1);
  assert.deepEqual(taken(), [3, [1, 0, 1]]);
  assert.deepEqual(known, [a]);
  // Emptied.
  assert.equal(syncKnown(known, [], 0, 0), -1);
  assert.deepEqual(taken(), [1, [0, 0]]);
  assert.deepEqual(known, []);
  // A message replaced inside the scanned context is seen.
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [a, b, s, d], 0, 1), -1);
  assert.deepEqual(taken(), [4, [2, 0, 1, -1, 1]]);
  // ... and not when the scan starts past it (the caller trusts the array).
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [a, b, s, d, c], 0, 4), 4);
  // The facts are gathered from the context start when the array agrees
  // there and on its first message (as the common case trusts before it).
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [a, s, c], 2, 2), -1);
  assert.deepEqual(taken(), [4, [3, 0]]);
  assert.deepEqual(known, [a, b, c]);
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [s, b, c, s], 2, 2), -1);
  assert.deepEqual(taken(), [4, [0, 0, 1, 2, 3, -1, 1, 2, -1]]);
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
  // From a start the caller vouches for: what lies before is not compared.
  assert.deepEqual([...identityFacts([a, b, c], [d, b, c, s], 1)], [3]);
  assert.deepEqual([...identityFacts([a, b, c], [d, b, s], 1)], [2, 0, -1]);
});

test("syncLlm: rebases a context that moved to a new summary, then syncs", () => {
  const [s0, a, b, c, d, s1] = objs(6);
  // An append, nothing rebased: the number alone.
  let known = [s0, a, b];
  assert.equal(syncLlm(known, [s0, a, b, c], 0), 3);
  assert.deepEqual(known, [s0, a, b, c]);
  // The context moved to s1 and goes on with b, c, then d is new: -1,
  // syncKnown's values ([from, null] for an append) and the cut.
  assert.equal(syncLlm(known, [s1, b, c, d], 0xffffffff), -1);
  assert.deepEqual(taken(), [3, null, 2]);
  assert.deepEqual(known, [s1, b, c, d]);
  // Moved, but a message in the kept part was replaced: no rebase (no
  // cut after the facts), the facts of the whole array.
  known = [s0, a, b, c];
  assert.equal(syncLlm(known, [s1, b, d], 0), -1);
  assert.deepEqual(taken(), [4, [0, 0, 1, 2, 3, -1, 2, -1]]);
  assert.deepEqual(known, [s1, b, d]);
  // Moved, and the last message taken out: the rebase, then the removal.
  known = [s0, a, b, c, d];
  assert.equal(syncLlm(known, [s1, b, c], 0), -1);
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
  assert.equal(sameRun([a, b], [a, b], 0), true);
  assert.equal(sameRun([a, b], [a, c], 0), false);
});

test("sameRun: from s to the end of known, holes read as undefined", () => {
  const [a, b, c, d] = objs(4);
  assert.equal(sameRun([a, b, c], [a, b, c, d], 0), true);
  assert.equal(sameRun([a, b, c], [d, b, c], 0), false);
  assert.equal(sameRun([a, b, c], [d, b, c], 1), true);
  assert.equal(sameRun([a, b, c], [a, b, d], 1), false);
  // A hole is undefined, as a plain loop reads it (`every` would skip it).
  assert.equal(sameRun([a, undefined], [a, , ], 0), true); // eslint-disable-line no-sparse-arrays
  assert.equal(sameRun([a, b], [a, , ], 0), false); // eslint-disable-line no-sparse-arrays
  assert.equal(sameRun([a, , ], [a, undefined], 0), true); // eslint-disable-line no-sparse-arrays
  assert.equal(sameRun([a, , ], [a, b], 0), false); // eslint-disable-line no-sparse-arrays
  assert.equal(sameRun([a, b, c], [a, , c], 1), false); // eslint-disable-line no-sparse-arrays
});

test("sameRun and syncKnown see a message replaced far from the end", () => {
  const many = objs(100);
  const [x] = objs(1);
  const replaced = many.with(10, x);
  assert.equal(sameRun(many.slice(), many, 0), true);
  assert.equal(sameRun(many.slice(), replaced, 0), false);
  assert.equal(sameRun(many.slice(), replaced, 5), false);
  assert.equal(sameRun(many.slice(), replaced, 11), true);
  // From a context start (the copy), and from the start.
  for (const start of [5, 0]) {
    const known = [];
    assert.equal(syncKnown(known, many.slice(0, 99), start, start), 0);
    assert.equal(syncKnown(known, many, start, start), 99);
    assert.equal(syncKnown(known, [...replaced, x], start, start), -1);
    assert.equal(taken()[1][0], 10);
    assert.deepEqual(known, [...replaced, x]);
  }
});

test("syncKnown: the copy of the context it scans follows every change", () => {
  const [p, s0, a, b, c, d, x, s1] = objs(8);
  // The copy of known[s..] (s the context start) that the scan runs over.
  const copy = (known, s) => {
    assert.deepEqual(known.c, known.slice(s));
  };
  const known = [];
  assert.equal(syncKnown(known, [p, s0, a], 1, 1), 0);
  assert.equal(known.c, undefined);
  // Made by the first scan from the context start, then pushed to.
  assert.equal(syncKnown(known, [p, s0, a, b], 1, 1), 3);
  copy(known, 1);
  assert.equal(syncKnown(known, [p, s0, a, b, c], 1, 1), 4);
  copy(known, 1);
  // A message replaced in the context: a change, the copy dropped ...
  assert.equal(syncKnown(known, [p, s0, x, b, c], 1, 1), -1);
  assert.deepEqual(taken(), [5, [2, 0, 1, 2, -1, 1, 2]]);
  assert.equal(known.c, undefined);
  // ... so that putting the old one back is seen too (a copy kept from
  // before would still hold it, and match).
  assert.equal(syncKnown(known, [p, s0, a, b, c], 1, 1), -1);
  assert.deepEqual(taken(), [5, [2, 0, 1, 2, -1, 1, 2]]);
  assert.equal(syncKnown(known, [p, s0, a, b, c, d], 1, 1), 5);
  copy(known, 1);
  assert.equal(syncKnown(known, [p, s0, x, b, c, d], 1, 1), -1);
  assert.deepEqual(known, [p, s0, x, b, c, d]);
  assert.equal(syncKnown(known, [p, s0, a, b, c, d], 1, 1), -1);
  assert.deepEqual(known, [p, s0, a, b, c, d]);
  // The context start moved (a summary appended): made again from there.
  assert.equal(syncKnown(known, [p, s0, a, b, c, d, s1], 1, 1), 6);
  copy(known, 1);
  assert.equal(syncKnown(known, [p, s0, a, b, c, d, s1, x], 6, 6), 7);
  copy(known, 6);
  assert.equal(syncKnown(known, [p, s0, a, b, c, d, s1, x, b], 6, 6), 8);
  copy(known, 6);
  // Emptied from outside (the binding's reset after a failure) and filled
  // again: the old copy is not used, a replacement is still seen.
  known.length = 0;
  assert.equal(syncKnown(known, [p, s0, a, b, c, d, s1, x, b], 6, 6), 0);
  assert.equal(syncKnown(known, [p, s0, a, b, c, d, s1, a, b], 6, 6), -1);
  assert.equal(taken()[1][0], 7);
  assert.equal(syncKnown(known, [p, s0, a, b, c, d, s1, a, b, c], 6, 6), 9);
  copy(known, 6);
  // Trusted (scanFrom past the end): no scan, a replacement inside is not seen.
  assert.equal(syncKnown(known, [p, s0, a, b, c, d, s1, x, b, c, d], 6, 0xffffffff), 10);
});

test("syncKnown: the copy holds what known holds, each message read once", () => {
  // A getter that gives another object at every read (hostile input): the
  // copy must still be known's end, object for object.
  const [p, s0, a] = objs(3);
  let reads = 0;
  const messages = [p, s0, a];
  Object.defineProperty(messages, 3, { get: () => ({ read: reads++ }), enumerable: true, configurable: true });
  const known = [p, s0, a];
  assert.equal(syncKnown(known, [p, s0, a], 1, 1), 3);
  assert.ok(Array.isArray(known.c));
  assert.equal(syncKnown(known, messages, 1, 1), 3);
  assert.deepEqual(known.c, known.slice(1));
  assert.equal(known.c[2], known[3]);
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
