// Unit tests of the shim helpers for what must survive a compaction:
// known.js pinnedIndices (the pinned messages before a summary, for the
// stateless transformContext), text.js requestText (the latest request's
// text a summary quotes) and the `pinned` slot of facts.js gatherFacts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { pinnedIndices } from "../../crates/wasm/src/js/shim/known.js";
import { requestText } from "../../crates/wasm/src/js/shim/text.js";
import { FACTS_STRIDE, gatherFacts } from "../../crates/wasm/src/js/shim/facts.js";

test("pinnedIndices: messages before `end` whose pinned is true; a non-boolean is reported", () => {
  const messages = [
    { role: "user", content: "a", pinned: true },
    { role: "user", content: "b", pinned: false },
    null,
    7,
    { role: "custom", content: "c", pinned: true },
    { role: "user", content: "d" },
    { role: "user", content: "e", pinned: true },
  ];
  assert.deepEqual(pinnedIndices(messages, messages.length), [0, 4, 6]);
  assert.deepEqual(pinnedIndices(messages, 5), [0, 4]);
  assert.deepEqual(pinnedIndices(messages, 0), []);
  for (const bad of ["yes", 1, {}, null]) {
    const with_bad = [...messages.slice(0, 3), { role: "user", content: "x", pinned: bad }];
    assert.deepEqual(pinnedIndices(with_bad, with_bad.length), [0xffffffff, 3]);
  }
  const hostile = [{ get pinned() { throw new Error("getter"); } }];
  assert.throws(() => pinnedIndices(hostile, 1), /getter/);
});

test("requestText: a string content as is, else the text parts joined by newlines", () => {
  assert.equal(requestText({ role: "user", content: "plain" }), "plain");
  assert.equal(
    requestText({
      role: "user",
      content: [
        { type: "text", text: "one" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        null,
        { type: "text", text: 5 },
        { type: "text", text: "two" },
      ],
    }),
    "one\ntwo",
  );
  assert.equal(requestText({ role: "user", content: [{ type: "image" }] }), "");
  assert.equal(requestText({ role: "user" }), "");
});

test("gatherFacts: slot 20 is 1 for pinned === true, else 0", () => {
  const f = gatherFacts(
    [
      { role: "user", content: "x", timestamp: 1, pinned: true },
      { role: "user", content: "y", timestamp: 2, pinned: "true" },
      { role: "custom", content: "z", timestamp: 3, pinned: true },
    ],
    0,
    3,
    false,
  );
  assert.deepEqual([f[20], f[FACTS_STRIDE + 20], f[2 * FACTS_STRIDE + 20]], [1, 0, 1]);
});
