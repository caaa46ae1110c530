// Unit tests of shim/facts.js and shim/text.js: the numbers gathered per
// message for the core (layout of crates/wasm/src/js/message_facts.rs), the
// file-operation and summarizer facts, and strings across the boundary.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  FACTS_STRIDE, extractFacts, gatherFacts, takeBad, takeThrown, toolCallPaths,
} from "../../crates/wasm/src/js/shim/facts.js";
import { sanitizeSurrogates as piSanitize } from "../../node_modules/@mariozechner/pi-ai/dist/utils/sanitize-unicode.js";
import {
  assembleText, codeUnits, fromCodeUnits, gatherConversation, sanitizeSurrogates,
} from "../../crates/wasm/src/js/shim/text.js";

const assistant = {
  role: "assistant",
  content: [
    { type: "thinking", thinking: "hmm" },
    { type: "text", text: "hello" },
    { type: "toolCall", name: "read", arguments: { path: "a.rs" } },
  ],
  stopReason: "toolUse",
  usage: { input: 10, output: 5, cacheRead: 1, cacheWrite: 2, totalTokens: 18 },
  timestamp: 7,
};

test("gatherFacts: lengths by block type, usage and stop reason in one array", () => {
  const f = gatherFacts([{ role: "user", content: "four", timestamp: 3 }, assistant], 0, 2, false);
  assert.equal(f.length, 2 * FACTS_STRIDE);
  assert.deepEqual([f[0], f[1], f[16], f[17]], [0, 4, 3, 0]);
  const o = FACTS_STRIDE;
  assert.equal(f[o], 1);
  assert.equal(f[o + 2], 5, "text");
  assert.equal(f[o + 3], 3, "thinking");
  assert.equal(f[o + 4], "read".length + JSON.stringify({ path: "a.rs" }).length, "tool call");
  assert.equal(f[o + 9], 2, "toolUse");
  assert.deepEqual([...f.subarray(o + 10, o + 16)], [1, 10, 5, 1, 2, 18]);
  // lazy: the arguments of a message with usage are measured later; until
  // then the tool-call slot holds an upper bound found from sizes alone
  // (object 2, key 6 per unit + 4, string 6 per unit + 2), flag 1
  const lazy = gatherFacts([assistant], 0, 1, true);
  assert.equal(lazy[4], "read".length + 2 + (6 * 4 + 4) + (6 * 4 + 2));
  assert.ok(lazy[4] >= f[o + 4], "the bound is never below the measured length");
  assert.equal(lazy[19], 1);
  // no cheap bound (a toJSON method): flag 2, nothing counted for the arguments
  const withToJson = { ...assistant, content: [{ type: "toolCall", id: "t", name: "read", arguments: { toJSON: () => ({}) } }] };
  const unbounded = gatherFacts([withToJson], 0, 1, true);
  assert.equal(unbounded[19], 2);
  assert.equal(unbounded[4], "read".length);
});

test("gatherFacts: a bad block and a throwing getter are recorded, not thrown", () => {
  const f = gatherFacts([{ role: "user", content: [{ type: "text", text: 5 }] }], 0, 1, false);
  assert.equal(f[17], 3);
  assert.equal(f[18], 0);
  assert.equal(takeBad(), 5);
  const hostile = { role: "user", get content() { throw new Error("boom"); } };
  const g = gatherFacts([hostile], 0, 1, false);
  assert.equal(g[17], 10);
  assert.equal(takeThrown(), "boom");
  assert.equal(takeThrown(), "");
});

test("toolCallPaths and extractFacts read what pi and the extractive summarizer read", () => {
  assert.deepEqual(toolCallPaths([{ role: "user", content: "x" }, assistant], 0, 2), ["read", "a.rs"]);
  const facts = JSON.parse(extractFacts([
    assistant,
    { role: "bashExecution", command: "ls", output: "out", exitCode: 1 },
  ]));
  assert.deepEqual(facts[0], { r: "assistant", t: "hello", n: null, e: false, c: [["read", "a.rs"]] });
  assert.deepEqual(facts[1], { r: "bashExecution", t: "out", n: "bash", e: true, c: [] });
});

test("code units round-trip exactly, lone surrogates and long strings included", () => {
  const text = "a\ud800b" + "x".repeat(20000) + "\u{1F600}";
  const units = codeUnits(text);
  assert.equal(units.length, text.length);
  assert.equal(fromCodeUnits(units), text);
});

test("sanitizeSurrogates drops lone surrogates and keeps pairs, as pi-ai does", () => {
  for (const text of ["plain", "😀 pair", "lone \ud800 high", "lone \udc00 low", "\udc00\ud800", "\ud83d\ude00\ude00", ""]) {
    assert.equal(sanitizeSurrogates(text), piSanitize(text), JSON.stringify(text));
  }
  assert.equal(sanitizeSurrogates("a\ud800b😀"), "ab😀");
});

test("gatherConversation gathers pieces; assembleText composes from ops", () => {
  const pieces = [];
  const messages = [{ role: "user", content: "hi" }, { role: "custom" }, { role: "user", content: "yes" }];
  const words = gatherConversation(messages, 0, 2, pieces);
  // M_USER, C_STRING, piece 0, length 2, then M_SKIPPED
  assert.deepEqual([...words], [4, 1, 0, 2, 3]);
  assert.deepEqual(pieces, ["hi"]);
  // A later range adds its pieces after those.
  assert.deepEqual([...gatherConversation(messages, 2, 3, pieces)], [4, 1, 1, 3]);
  assert.deepEqual(pieces, ["hi", "yes"]);
  const literals = "[User]: ";
  const ops = Uint32Array.of(2, 0, literals.length, 0, 0, 1, 0, 1);
  assert.equal(assembleText(["hello"], ops, literals), "[User]: helloh");
});
