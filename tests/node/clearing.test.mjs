// The clearing tier through the public API: a threshold compaction that
// clears old tool output (a toolOutputCleared marker, no summarizer call),
// one where clearing is not enough (the summarizer is called), what is never
// cleared (the last two turns, pinned outputs, tools named in neverClear),
// convertToLlm's placeholders keeping tool-call pairing, display, undo and the
// context tokens after a marker.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Compactor,
  agentMessagesToChatMessages,
  convertToLlm,
  messagesToPiSession,
  piSessionToMessages,
  removeLastCompaction,
  transformContext,
} from "agent-compaction";
import { usage } from "../support/pi-usage.mjs";

const { SessionManager } = await import(
  new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js", import.meta.url).href
);

let clock = 1_000;
let calls = 0;
const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
const call = (id, name) => ({
  role: "assistant",
  content: [{ type: "toolCall", id, name, arguments: { path: `/src/${id}.ts` } }],
  api: "openai-completions",
  provider: "local",
  model: "m",
  stopReason: "toolUse",
  timestamp: clock++,
});
const result = (id, name, chars, extra = {}) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text: "x".repeat(chars) }],
  isError: false,
  timestamp: clock++,
  ...extra,
});
const answer = (text) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "openai-completions",
  provider: "local",
  model: "m",
  stopReason: "stop",
  timestamp: clock++,
});

/** `turns` turns: a request, a tool call and its output of `chars` characters, an answer. */
function session(turns, chars, name = () => "read", extra = () => ({})) {
  const out = [];
  for (let t = 0; t < turns; t++) {
    const id = `call_${t}_${calls++}`;
    out.push(user(`request ${t}`), call(id, name(t)), result(id, name(t), chars, extra(t)), answer(`done ${t}`));
  }
  return out;
}

function compactor(options = {}) {
  const summaries = [];
  const events = [];
  const c = new Compactor({
    contextWindow: 200_000,
    estimator: "pi",
    summarize: async (req) => {
      summaries.push(req);
      return "## Goal\nsummary";
    },
    onEvent: (e) => events.push(e),
    ...options,
  });
  return { c, summaries, events };
}

test("a threshold crossed by big tool outputs clears them: one marker, no summarizer call", async () => {
  // 10 turns of 80,000-character outputs (20,000 tokens each): ~200k tokens.
  const messages = session(10, 80_000);
  const { c, summaries, events } = compactor();
  assert.equal(c.needsCompaction(messages), true);
  const before = c.contextTokens(messages);
  const r = await c.compact(messages, { reason: "threshold" });
  assert.equal(summaries.length, 0);
  assert.equal(r.tier, "clear");
  assert.equal(r.marker.role, "toolOutputCleared");
  assert.equal(r.messages.length, messages.length + 1);
  assert.equal(r.messages[r.markerIndex], r.marker);
  // Nothing else changed: the same objects around the marker.
  assert.deepEqual(r.messages.filter((m) => m !== r.marker), messages);
  r.messages.filter((m) => m !== r.marker).forEach((m, i) => assert.equal(m, messages[i]));
  // The last two turns and the newest 40,000 tokens of output before them stay.
  const ids = messages.filter((m) => m.role === "toolResult").map((m) => m.toolCallId);
  // (turns 9 and 8 protected; 7 and 6 are the 40,000 kept; 5 crosses the line.)
  assert.deepEqual(r.marker.toolCallIds, ids.slice(0, 6));
  assert.deepEqual(r.toolCallIds, r.marker.toolCallIds);
  assert.ok(r.marker.outputTokens.every((t) => t === 20_000));
  // Each output's 20,000 less its placeholder's (its characters / 4).
  const placeholder = Math.ceil("[Output of read cleared to save context: ~20,000 tokens]".length / 4);
  assert.equal(r.tokensFreed, 6 * (20_000 - placeholder));
  assert.equal(r.marker.tokensFreed, r.tokensFreed);
  assert.equal(r.tokensBefore, before);
  assert.equal(r.tokensAfter, before - r.tokensFreed);
  // The marker is appended: what comes after it came after the clearing.
  assert.equal(r.markerIndex, messages.length);
  // The context tokens reflect it at once.
  assert.equal(c.contextTokens(r.messages), r.tokensAfter);
  assert.equal(c.needsCompaction(r.messages), false);
  // Events say which tier ran.
  const end = events.find((e) => e.type === "compaction_end");
  assert.equal(end.tier, "clear");
  assert.equal(end.result, r);
});

test("convertToLlm sends cleared outputs as placeholders that keep tool-call pairing", async () => {
  const messages = session(10, 80_000);
  const { c } = compactor();
  const r = await c.compact(messages, { reason: "threshold" });
  const llm = convertToLlm(r.messages);
  // The marker is not sent; every message else is, in order.
  assert.equal(llm.length, messages.length);
  assert.ok(!llm.some((m) => m.role === "toolOutputCleared"));
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "toolResult" && r.marker.toolCallIds.includes(m.toolCallId)) {
      assert.notEqual(llm[i], m);
      assert.deepEqual(llm[i], {
        role: "toolResult",
        toolCallId: m.toolCallId,
        toolName: "read",
        content: [{ type: "text", text: "[Output of read cleared to save context: ~20,000 tokens]" }],
        isError: false,
        timestamp: m.timestamp,
      });
      // Its call is right before it, with the same id.
      assert.equal(llm[i - 1].content[0].id, m.toolCallId);
    } else {
      assert.equal(llm[i], m);
    }
  }
  // The agent hooks agree with the pure function.
  const hooks = c.agentHooks();
  const viaHooks = await hooks.convertToLlm(await hooks.transformContext(r.messages));
  assert.deepEqual(viaHooks, llm);
  // A later message appended: the hook's cache keeps the placeholders.
  const more = [...r.messages, user("next")];
  assert.deepEqual(await hooks.convertToLlm(await hooks.transformContext(more)), convertToLlm(more));
  // Undo through the hook's cache too: the outputs come back.
  const undone = removeLastCompaction(more);
  assert.deepEqual(await hooks.convertToLlm(await hooks.transformContext(undone)), convertToLlm(undone));
  assert.equal(convertToLlm(undone)[2], messages[2]);
});

test("when clearing is not enough, the summarizer is called and no marker is inserted", async () => {
  // Small outputs and long answers: clearing frees too little.
  const messages = [];
  for (let t = 0; t < 12; t++) {
    messages.push(...session(1, 12_000));
    messages.push(user("y".repeat(60_000)));
  }
  const { c, summaries, events } = compactor();
  assert.equal(c.needsCompaction(messages), true);
  const r = await c.compact(messages, { reason: "threshold" });
  assert.ok(summaries.length >= 1);
  assert.equal(r.tier, "summarize");
  assert.equal(r.summary.role, "compactionSummary");
  assert.ok(!r.messages.some((m) => m.role === "toolOutputCleared"));
  assert.equal(events.find((e) => e.type === "compaction_end").tier, "summarize");
});

test("manual and overflow compactions summarize straight away", async () => {
  for (const reason of ["manual", "overflow"]) {
    const messages = session(10, 80_000);
    const { c, summaries } = compactor();
    const r = await c.compact(messages, { reason });
    assert.equal(r.tier, "summarize", reason);
    assert.ok(summaries.length >= 1, reason);
  }
});

test("clearing can be switched off, and frees nothing below minFreedTokens", async () => {
  const messages = session(10, 80_000);
  const off = compactor({ settings: { toolOutputClearing: false } });
  assert.equal((await off.c.compact(messages, { reason: "threshold" })).tier, "summarize");
  const high = compactor({ settings: { toolOutputClearing: { minFreedTokens: 150_000 } } });
  assert.equal((await high.c.compact(messages, { reason: "threshold" })).tier, "summarize");
  assert.throws(
    () => new Compactor({ contextWindow: 100_000, settings: { toolOutputClearing: { protectTokens: -1 } } }),
    /settings\.toolOutputClearing\.protectTokens must be a non-negative safe integer, got -1/,
  );
  assert.throws(
    () => new Compactor({ contextWindow: 100_000, settings: { toolOutputClearing: { neverClear: "read" } } }),
    /settings\.toolOutputClearing\.neverClear must be an array of tool names/,
  );
});

test("pinned outputs, tools in neverClear and the last two turns are never cleared", async () => {
  const messages = session(
    12,
    80_000,
    (t) => (t === 1 ? "plan" : "read"),
    (t) => (t === 2 ? { pinned: true } : {}),
  );
  const { c } = compactor({
    contextWindow: 260_000,
    settings: { toolOutputClearing: { neverClear: ["plan"], protectTokens: 0 } },
  });
  const r = await c.compact(messages, { reason: "threshold" });
  assert.equal(r.tier, "clear");
  const results = messages.filter((m) => m.role === "toolResult");
  const cleared = new Set(r.marker.toolCallIds);
  assert.ok(!cleared.has(results[1].toolCallId), "neverClear");
  assert.ok(!cleared.has(results[2].toolCallId), "pinned");
  assert.ok(!cleared.has(results[10].toolCallId) && !cleared.has(results[11].toolCallId), "last two turns");
  assert.equal(cleared.size, 8);
  // A second clearing finds nothing new to clear: it summarizes instead.
  const more = [...r.messages, ...session(4, 80_000)];
  const again = await c.compact(more, { reason: "threshold" });
  if (again.tier === "clear") {
    for (const id of again.marker.toolCallIds) assert.ok(!cleared.has(id));
  }
});

test("markers are shown as dividers, hidden without them, dropped by transformContext's summary rule", async () => {
  const messages = session(10, 80_000);
  const { c } = compactor();
  const r = await c.compact(messages, { reason: "threshold" });
  const view = agentMessagesToChatMessages(r.messages, { divider: true });
  assert.equal(view.length, r.messages.length);
  assert.deepEqual(view[r.markerIndex], {
    role: "toolOutputClearedDivider",
    tokensFreed: r.tokensFreed,
    toolCount: 6,
    timestamp: r.marker.timestamp,
  });
  assert.equal(agentMessagesToChatMessages(r.messages).length, messages.length);
  // No summary: the model's context is the whole array, marker included.
  assert.equal(transformContext(r.messages), r.messages);
  // Undo gives the caller's array back.
  assert.deepEqual(removeLastCompaction(r.messages), messages);
  // A later summary supersedes as always.
  const s = await c.compact([...r.messages, ...session(2, 100)], { reason: "manual" });
  const context = transformContext(s.messages);
  assert.equal(context[0], s.summary);
});

test("bad markers are clear errors in convertToLlm", () => {
  const messages = session(2, 100);
  const bad = [...messages, { role: "toolOutputCleared", toolCallIds: "x", tokensFreed: 1, timestamp: 1 }];
  assert.throws(() => convertToLlm(bad), (e) => e instanceof TypeError && /messages\[8\]\.toolCallIds must be an array of tool call ids/.test(e.message));
  const bad2 = [...messages, { role: "toolOutputCleared", toolCallIds: [3], tokensFreed: 1, timestamp: 1 }];
  assert.throws(() => convertToLlm(bad2), /messages\[8\]\.toolCallIds\[0\] must be a string, got/);
  // Without sizes, the placeholder says none.
  const ok = [...messages, { role: "toolOutputCleared", toolCallIds: [messages[2].toolCallId], tokensFreed: 1, timestamp: 1 }];
  assert.equal(convertToLlm(ok)[2].content[0].text, "[Output of read cleared to save context]");
});

test("pi session files: the marker is a custom entry pi's own loader reads, and comes back", async () => {
  const messages = session(10, 80_000);
  const { c } = compactor();
  const r = await c.compact(messages, { reason: "threshold" });
  const text = messagesToPiSession(r.messages, { id: "s-clearing", cwd: "/p" });
  const lines = text.trim().split("\n").map((l) => JSON.parse(l));
  const custom = lines.filter((e) => e.type === "custom");
  assert.equal(custom.length, 1);
  assert.equal(custom[0].customType, "agent-compaction.toolOutputCleared");
  assert.deepEqual(custom[0].data, r.marker);
  // pi 0.73.1 loads it without error, leaves the entry out of the model's
  // context and sends the outputs whole (pi does not clear).
  const dir = mkdtempSync(join(tmpdir(), "agent-compaction-clearing-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "s.jsonl");
  writeFileSync(file, text);
  const manager = SessionManager.open(file, dir);
  assert.ok(manager.getEntries().some((e) => e.type === "custom" && e.customType === "agent-compaction.toolOutputCleared"));
  assert.deepEqual(manager.buildSessionContext().messages, messages);
  // Import gives the marker back: the same array.
  assert.deepEqual(piSessionToMessages(text).messages, r.messages);
});

test("a summary after a clearing counts what is sent: tokensBefore the cleared context, the kept cleared outputs as placeholders", async () => {
  for (const estimator of ["pi", "calibrated"]) {
    const { c } = compactor({ contextWindow: 64_000, estimator, settings: { toolOutputClearing: { protectTokens: 10_000 } } });
    const messages = session(30, 8_000);
    const cleared = await c.compact(messages, { reason: "threshold" });
    assert.equal(cleared.tier, "clear");
    const before = c.contextTokens(cleared.messages);
    assert.equal(before, cleared.tokensAfter);
    const s = await c.compact(cleared.messages, { reason: "manual" });
    // What the model was sent before: the cleared context, on the result
    // and on the summary (the divider shows it).
    assert.equal(s.tokensBefore, before, estimator);
    assert.equal(s.summary.tokensBefore, before);
    // Some cleared outputs were kept: they are sent as placeholders, and
    // counted so, by this compactor and a fresh one.
    const sent = convertToLlm(c.modelContext(s.messages));
    assert.ok(sent.some((m) => m.role === "toolResult" && m.content[0].text.startsWith("[Output of read cleared")));
    const fresh = new Compactor({ contextWindow: 64_000, estimator });
    const withFull = fresh.contextTokens(s.messages.filter((m) => m.role !== "toolOutputCleared"));
    assert.equal(c.contextTokens(s.messages), s.tokensAfter);
    assert.equal(fresh.contextTokens(s.messages), s.tokensAfter);
    assert.ok(s.tokensAfter < before, `${s.tokensAfter} < ${before}`);
    assert.ok(withFull - s.tokensAfter > 3_000, `${withFull} counts the kept outputs in full, ${s.tokensAfter} as placeholders`);
    // A reply's usage saw the placeholders: it counts as reported.
    const reply = { ...answer("ok"), usage: usage(9_000) };
    assert.equal(c.contextTokens([...s.messages, reply]), 9_010);
    fresh.free();
    c.free();
  }
});

/** `turns` turns like `session`'s, each tool call id given by `id(t)` and output size by `chars(t)`. */
function sessionWithIds(turns, id, chars = () => 80_000, extra = () => ({})) {
  const out = [];
  for (let t = 0; t < turns; t++) {
    out.push(user(`request ${t}`), call(id(t), "read"), result(id(t), "read", chars(t), extra(t)), answer(`done ${t}`));
  }
  return out;
}

/** What the model is sent of each tool result: "cleared" or "whole", by the compactor, its hooks and the pure functions. */
async function sentOutputs(c, messages) {
  const view = convertToLlm(c.modelContext(messages));
  const hooks = c.agentHooks();
  assert.deepEqual(await hooks.convertToLlm(await hooks.transformContext(messages)), view);
  return view
    .filter((m) => m.role === "toolResult")
    .map((m) => (m.content[0].text.startsWith("[Output of") ? `${m.toolCallId}: ${m.content[0].text}` : `${m.toolCallId}: whole`));
}

test("an output whose call id an output that stays whole shares is not cleared (a provider that reuses ids)", async () => {
  // Turns 0-4 have ids of their own; turns 5-9 all have id "call_0", the
  // last two of them protected. A marker names outputs by id, so listing
  // "call_0" would send the protected outputs as placeholders too.
  const messages = sessionWithIds(10, (t) => (t < 5 ? `own_${t}` : "call_0"));
  const { c } = compactor();
  const r = await c.compact(messages, { reason: "threshold" });
  assert.equal(r.tier, "clear");
  assert.deepEqual(r.marker.toolCallIds, ["own_0", "own_1", "own_2", "own_3", "own_4"]);
  const sent = await sentOutputs(c, r.messages);
  assert.deepEqual(sent.slice(5), Array(5).fill("call_0: whole"));
  // What is counted is what is sent.
  const fresh = new Compactor({ contextWindow: 200_000, estimator: "pi" });
  assert.equal(c.contextTokens(r.messages), r.tokensAfter);
  assert.equal(fresh.contextTokens(convertToLlm(c.modelContext(r.messages))), r.tokensAfter);
  // Every output with the same id: clearing frees nothing, a summary follows.
  const same = sessionWithIds(10, () => "call_0");
  const s = await compactor().c.compact(same, { reason: "threshold" });
  assert.equal(s.tier, "summarize");
  fresh.free();
});

test("an id a later marker lists again keeps the placeholder the first marker gave it", async () => {
  // "x" is cleared by the first marker; a later turn reuses it, and the
  // second marker clears that one: the first output's placeholder keeps
  // its own size (its text, and the provider's cached prefix, unchanged).
  const first = sessionWithIds(10, (t) => (t === 0 ? "x" : `a_${t}`));
  const { c } = compactor();
  const one = await c.compact(first, { reason: "threshold" });
  assert.equal(one.tier, "clear");
  assert.equal(one.marker.toolCallIds[0], "x");
  const before = (await sentOutputs(c, one.messages))[0];
  assert.match(before, /^x: \[Output of read cleared to save context: ~20,0\d\d tokens\]$/);
  const more = [...one.messages, ...sessionWithIds(10, (t) => (t === 0 ? "x" : `b_${t}`), (t) => (t === 0 ? 40_000 : 80_000))];
  const two = await c.compact(more, { reason: "threshold" });
  assert.equal(two.tier, "clear");
  assert.ok(two.marker.toolCallIds.includes("x"));
  const sent = await sentOutputs(c, two.messages);
  assert.equal(sent[0], before);
  assert.match(sent[10], /^x: \[Output of read cleared to save context: ~10,0\d\d tokens\]$/);
  const fresh = new Compactor({ contextWindow: 200_000, estimator: "pi" });
  assert.equal(c.contextTokens(two.messages), two.tokensAfter);
  assert.equal(fresh.contextTokens(convertToLlm(c.modelContext(two.messages))), two.tokensAfter);
  fresh.free();
});

test("a pinned output the summary re-sends keeps a later output with its call id whole", async () => {
  const pinned = sessionWithIds(1, () => "p", () => 400, () => ({ pinned: true }));
  const old = sessionWithIds(6, (t) => `old_${t}`, () => 40_000);
  const { c } = compactor();
  const s = await c.compact([...pinned, ...old], { reason: "manual" });
  const later = sessionWithIds(10, (t) => (t === 0 ? "p" : `new_${t}`));
  const r = await c.compact([...s.messages, ...later], { reason: "threshold" });
  assert.equal(r.tier, "clear");
  assert.ok(!r.marker.toolCallIds.includes("p"), r.marker.toolCallIds.join());
  const sent = await sentOutputs(c, r.messages);
  assert.equal(sent[0], "p: whole");
  assert.ok(sent.includes("p: whole") && sent.filter((x) => x === "p: whole").length === 2);
});
