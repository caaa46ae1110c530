// Unit tests of shim/known.js (the compactor's copy of the caller's array,
// kept in line by object identity) and shim/summarizer.js (deadline and
// cancellation around the app's summarizer promise).
import { test } from "node:test";
import assert from "node:assert/strict";
import { insertAt, rebaseKnown, rebaseOut, sameRun, syncKnown, syncLlm, takeSync } from "../../crates/wasm/src/js/shim/known.js";
import {
  SummarizerTimeout, isAbortError, isTimeout, linkAbort, newAbortController, settleWithin,
} from "../../crates/wasm/src/js/shim/summarizer.js";

const objs = (n) => Array.from({ length: n }, (_, i) => ({ i }));

test("syncKnown: appended, one inserted, one removed, anything else cut back", () => {
  const [a, b, c, d, s] = objs(5);
  let known = [a, b];
  assert.equal(syncKnown(known, [a, b, c], 0, 0), 2);
  assert.deepEqual(known, [a, b, c]);
  // Anything but an append: -1, and the details from takeSync().
  assert.equal(syncKnown(known, [a, s, b, c, d], 0, 0), -1);
  assert.deepEqual(takeSync(), [1, 1, 4]);
  assert.deepEqual(known, [a, s, b, c, d]);
  assert.equal(syncKnown(known, [a, s, c, d], 0, 0), -1);
  assert.deepEqual(takeSync(), [2, 2, 4]);
  assert.deepEqual(known, [a, s, c, d]);
  known = [a, b, c];
  assert.equal(syncKnown(known, [a, d, s, b], 0, 0), -1);
  assert.deepEqual(takeSync(), [0, 1, 1]);
  assert.deepEqual(known, [a, d, s, b]);
  // A message replaced inside the scanned context is seen.
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [a, b, s, d], 0, 1), -1);
  assert.deepEqual(takeSync(), [0, 2, 2]);
  // ... and not when the scan starts past it (the caller trusts the array).
  known = [a, b, c, d];
  assert.equal(syncKnown(known, [a, b, s, d, c], 0, 4), 4);
});

test("syncLlm: rebases a context that moved to a new summary, then syncs", () => {
  const [s0, a, b, c, d, s1] = objs(6);
  // An append, nothing rebased: the number alone.
  let known = [s0, a, b];
  assert.equal(syncLlm(known, [s0, a, b, c], 0), 3);
  assert.deepEqual(known, [s0, a, b, c]);
  // The context moved to s1 and goes on with b, c, then d is new: -1,
  // syncKnown's details ([0, from, from] for an append) and the cut.
  assert.equal(syncLlm(known, [s1, b, c, d], 0xffffffff), -1);
  assert.deepEqual(takeSync(), [0, 3, 3, 2]);
  assert.deepEqual(known, [s1, b, c, d]);
  // Moved, but a message in the kept part was replaced: no rebase (three
  // numbers), cut back to the start.
  known = [s0, a, b, c];
  assert.equal(syncLlm(known, [s1, b, d], 0), -1);
  assert.deepEqual(takeSync(), [0, 0, 0]);
  assert.deepEqual(known, [s1, b, d]);
  // Moved, and the last message taken out: the rebase, then the removal.
  known = [s0, a, b, c, d];
  assert.equal(syncLlm(known, [s1, b, c], 0), -1);
  assert.deepEqual(takeSync(), [2, 3, 3, 2]);
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
  assert.equal(sameRun([a, b], [a, b], 0, 2), true);
  assert.equal(sameRun([a, b], [a, c], 0, 2), false);
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
