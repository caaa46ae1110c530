// What the Compactor decides never depends on the messages' clocks: which
// usage is stale after a summary, and whether what a clearing marker freed
// still counts, are decided by position in the array. Messages stamped by a
// server, imported, or numbered 1000 + i, with the package's own markers and
// summaries stamped Date.now(), give the same numbers and decisions as a
// session on one clock; shifting every timestamp by a year either way, or
// giving all of them the same value, changes nothing (SPEC §3).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Compactor } from "agent-compaction";
import { usage } from "../support/pi-usage.mjs";

const YEAR = 365 * 24 * 3600 * 1000;

/** A conversation's turns; `stamp(i)` gives the i-th message's timestamp. */
function turn(t, stamp, next, chars, reported) {
  const id = `call_${t}`;
  return [
    { role: "user", content: `request ${t}`, timestamp: stamp(next()) },
    {
      role: "assistant",
      content: [{ type: "toolCall", id, name: "read", arguments: { path: `/src/${t}.ts` } }],
      api: "openai-completions", provider: "local", model: "m", stopReason: "toolUse",
      usage: usage(reported), timestamp: stamp(next()),
    },
    {
      role: "toolResult", toolCallId: id, toolName: "read",
      content: [{ type: "text", text: "x".repeat(chars) }], isError: false, timestamp: stamp(next()),
    },
    {
      role: "assistant", content: [{ type: "text", text: `done ${t}` }],
      api: "openai-completions", provider: "local", model: "m", stopReason: "stop",
      usage: usage(reported + chars / 4), timestamp: stamp(next()),
    },
  ];
}

/**
 * One scripted conversation: turns that grow the context past the
 * threshold, a threshold compaction (the clearing tier), more turns whose
 * provider reports the smaller context, then a manual compaction (a summary)
 * and turns after it. Returns every number and decision along the way.
 */
async function script(stamp) {
  let n = 0;
  const next = () => n++;
  const c = new Compactor({
    contextWindow: 200_000,
    estimator: "pi",
    summarize: async () => "## Goal\nsummary",
  });
  const seen = [];
  const look = (label, messages) =>
    seen.push([label, messages.length, c.contextTokens(messages), c.needsCompaction(messages)]);
  let messages = [];
  let reported = 1_000;
  for (let t = 0; t < 8; t++) {
    messages = [...messages, ...turn(t, stamp, next, 96_000, reported)];
    reported += 24_000;
    look(`turn ${t}`, messages);
  }
  const cleared = await c.compact(messages, { reason: "threshold" });
  assert.equal(cleared.tier, "clear");
  messages = cleared.messages;
  seen.push(["clearing", cleared.tokensAfter, cleared.markerIndex]);
  look("cleared", messages);
  // The provider now reports the context with the placeholders in it.
  reported = Math.round(cleared.tokensAfter);
  for (let t = 8; t < 11; t++) {
    messages = [...messages, ...turn(t, stamp, next, 400, reported)];
    reported += 300;
    look(`turn ${t}`, messages);
  }
  const summarized = await c.compact(messages, { reason: "manual" });
  messages = summarized.messages;
  seen.push(["summary", summarized.tokensBefore, summarized.tokensAfter, summarized.firstKeptIndex]);
  look("summarized", messages);
  for (let t = 11; t < 13; t++) {
    messages = [...messages, ...turn(t, stamp, next, 400, 3_000 + 100 * t)];
    look(`turn ${t}`, messages);
  }
  // A fresh Compactor over the whole array (a session loaded from
  // storage) counts the same.
  seen.push(["fresh", new Compactor({ contextWindow: 200_000, estimator: "pi", summarize: async () => "s" }).contextTokens(messages)]);
  return seen;
}

test("usage after a clearing marker is found by position: a clock behind Date.now() does not keep subtracting what it freed", async () => {
  const seen = await script((i) => 1000 + i);
  const at = (label) => seen.find((s) => s[0] === label);
  // Right after the clearing, what it freed comes off the last usage.
  const cleared = at("cleared");
  assert.ok(cleared[2] > 0 && cleared[2] < 150_000, `after clearing: ${cleared[2]}`);
  assert.equal(cleared[3], false);
  assert.equal(cleared[2], at("clearing")[1]);
  // The next turns' usage already saw the placeholders: it is the count
  // (the last reply's input, plus its output).
  const later = at("turn 10");
  assert.equal(later[2], Math.round(at("clearing")[1]) + 600 + 100 + 10);
  // After the summary, the kept messages' usage is stale; the next reply's counts.
  const summarized = at("summarized");
  assert.ok(summarized[2] < 3_000, `after the summary: ${summarized[2]}`);
  const afterSummary = at("turn 12");
  assert.equal(afterSummary[2], 3_000 + 1_200 + 100 + 10);
});

test("shifting every timestamp by a year either way, or giving all the same value, changes no number and no decision", async () => {
  const base = await script((i) => 1_700_000_000_000 + i);
  for (const [name, stamp] of [
    ["behind by a year", (i) => 1_700_000_000_000 - YEAR + i],
    ["ahead by a year", (i) => Date.now() + YEAR + i],
    ["all the same", () => 1_700_000_000_000],
    ["small numbers", (i) => 1000 + i],
  ]) {
    assert.deepEqual(await script(stamp), base, name);
  }
});

test("a summary's keptMessages must be a non-negative whole number: another number is a RangeError showing it, another type a TypeError, each naming it", () => {
  const c = new Compactor({ contextWindow: 200_000 });
  const summary = (keptMessages) => ({ role: "compactionSummary", summary: "s", tokensBefore: 10, timestamp: 1, keptMessages });
  for (const [bad, shown] of [[-1, "-1"], [1.5, "1.5"], [NaN, "NaN"], [2 ** 53, "9007199254740992"]]) {
    assert.throws(
      () => c.contextTokens([{ role: "user", content: "a", timestamp: 0 }, summary(bad)]),
      (e) => e instanceof RangeError && e.message === `messages[1].keptMessages must be a non-negative safe integer, got ${shown}`,
      String(bad),
    );
  }
  for (const bad of ["2", null, {}]) {
    assert.throws(
      () => c.contextTokens([{ role: "user", content: "a", timestamp: 0 }, summary(bad)]),
      (e) => e instanceof TypeError && /messages\[1\]\.keptMessages/.test(e.message),
      String(bad),
    );
  }
  // Absent (a summary written by hand) or a count: accepted.
  assert.equal(typeof c.contextTokens([summary(undefined)]), "number");
  assert.equal(typeof new Compactor({ contextWindow: 200_000 }).contextTokens([summary(0)]), "number");
});

test("a compaction's summary says how many messages it kept", async () => {
  const c = new Compactor({ contextWindow: 200_000, estimator: "pi", summarize: async () => "## Goal\ns" });
  let n = 0;
  const messages = [];
  for (let t = 0; t < 6; t++) messages.push(...turn(t, (i) => i, () => n++, 40_000, 1_000 + 10_000 * t));
  const r = await c.compact(messages, { reason: "manual" });
  assert.equal(r.summary.keptMessages, messages.length - r.firstKeptIndex);
  assert.equal(r.messages[r.firstKeptIndex], r.summary);
});
