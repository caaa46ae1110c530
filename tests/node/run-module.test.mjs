// The `run` module is the package's fourth wasm module: what only runs
// inside a compaction (the calls of the summarizers openAiSummarizer and
// anthropicSummarizer return, the clearing tier of a threshold compaction),
// loaded by the first call that needs it
// through the package's own entry (node.js reads it from disk). Here the
// loader the entry installed is wrapped, to count loads and to make one
// fail, as a browser offline or a missing file would. Needs a built pkg/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Compactor, anthropicSummarizer, openAiSummarizer } from "agent-compaction";
import { setRunLoader } from "../../pkg/run.js";
import { startMockLlm, MOCK_SUMMARY } from "../support/mock-llm-server.mjs";

const wasm = new URL("../../pkg/agent_compaction_run_bg.wasm", import.meta.url);
let loads = 0;
let offline = false;
const loader = async () => {
  loads += 1;
  if (offline) throw new Error("ENOENT: agent_compaction_run_bg.wasm");
  const module = await import("../../pkg/agent_compaction_run.js");
  module.initSync({ module: readFileSync(wasm) });
  return module;
};
setRunLoader(loader);

let mock;
before(async () => {
  mock = await startMockLlm();
});
after(() => mock.close());

const options = { contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 } };
const conversation = () => {
  const out = [];
  for (let i = 0; i < 20; i++) {
    out.push({ role: "user", content: `request ${i}: edit src/f${i}.ts ` + "u".repeat(4000), timestamp: 2 * i + 1 });
    out.push({
      role: "assistant", content: [{ type: "text", text: "done " + "a".repeat(4000) }], api: "x", provider: "x", model: "m",
      usage: { input: (i + 1) * 2000, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: (i + 1) * 2000 + 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop", timestamp: 2 * i + 2,
    });
  }
  return out;
};

test("the factories do not load it: they check their options at once, synchronously", () => {
  const summarize = openAiSummarizer({ baseUrl: `${mock.url}v1`, model: "m" });
  assert.equal(typeof summarize, "function");
  assert.throws(() => anthropicSummarizer({ model: "m" }), TypeError);
  assert.throws(() => openAiSummarizer({ baseUrl: `${mock.url}v1`, model: "m", headers: { "x-a": 1 } }), TypeError);
  assert.equal(loads, 0, "nothing loaded the run module yet");
});

test("a failed load fails the summarizer's call with the file's name; the compaction changes nothing and the next call tries again", async () => {
  offline = true;
  const summarize = openAiSummarizer({ baseUrl: `${mock.url}v1`, model: "m" });
  const error = await summarize({ systemPrompt: "s", prompt: "p", maxTokens: 100, signal: new AbortController().signal }).then(
    () => assert.fail("resolved"),
    (e) => e,
  );
  assert.equal(error.message, "the compaction module (agent_compaction_run_bg.wasm) could not be loaded: ENOENT: agent_compaction_run_bg.wasm");
  assert.equal(error.cause.message, "ENOENT: agent_compaction_run_bg.wasm");

  const messages = conversation();
  const before = [...messages];
  const compactor = new Compactor({ ...options, summarize, fallback: "none" });
  await assert.rejects(compactor.compact(messages), /Compaction failed: .*agent_compaction_run_bg\.wasm\) could not be loaded/);
  assert.ok(messages.length === before.length && messages.every((m, i) => m === before[i]), "the caller's array is untouched");
  assert.equal(mock.requests.length, 0, "no request was sent");
  assert.equal(loads, 2);

  offline = false;
  const out = await compactor.compact(messages);
  assert.equal(out.summarizedBy, "summarizer");
  assert.equal(out.summary.summary, MOCK_SUMMARY);
  assert.equal(loads, 3, "each call tried to load it; the third succeeded");
});

test("once loaded, it is not loaded again: every summarizer of both providers shares it", async () => {
  const first = loads;
  const a = anthropicSummarizer({ baseUrl: mock.url.slice(0, -1), model: "m", apiKey: "k" });
  const b = openAiSummarizer({ baseUrl: `${mock.url}v1`, model: "m" });
  const request = { systemPrompt: "s", prompt: "p", maxTokens: 100, signal: new AbortController().signal };
  const [x, y] = await Promise.all([a(request), b(request)]);
  assert.equal(x.text, MOCK_SUMMARY);
  assert.equal(y.text, MOCK_SUMMARY);
  // A bad request is still the call's own TypeError, as before the move.
  await assert.rejects(b({ prompt: 1 }), { name: "TypeError", message: /OpenAI-compatible summarizer: .*systemPrompt/ });
  assert.equal(loads, first, "no new load");
});

// The clearing tier: a threshold compaction with big old tool outputs.
const toolSession = (turns, chars) => {
  const out = [];
  let clock = 1;
  for (let t = 0; t < turns; t++) {
    const id = `call_${t}`;
    out.push({ role: "user", content: `request ${t}`, timestamp: clock++ });
    out.push({
      role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: `/src/${t}.ts` } }],
      api: "x", provider: "x", model: "m", stopReason: "toolUse", timestamp: clock++,
    });
    out.push({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: "x".repeat(chars) }], isError: false, timestamp: clock++ });
    out.push({ role: "assistant", content: [{ type: "text", text: `done ${t}` }], api: "x", provider: "x", model: "m", stopReason: "stop", timestamp: clock++ });
  }
  return out;
};

test("the clearing tier runs in it: a failed load fails the threshold compaction clearly, touching nothing; the next one clears", async () => {
  const messages = toolSession(10, 80_000);
  const before = [...messages];
  let summarized = 0;
  const events = [];
  const compactor = new Compactor({
    contextWindow: 200_000,
    estimator: "pi",
    summarize: async () => (summarized++, "## Goal\nsummary"),
    onEvent: (e) => events.push(e),
  });
  // Installing the loader again forgets the module loaded above, as a fresh page would.
  setRunLoader(loader);
  // A manual compaction never clears: it does not need the module.
  const first = loads;
  const manual = await compactor.compact(messages);
  assert.equal(manual.tier, "summarize");
  assert.equal(loads, first);
  const calls = summarized;

  offline = true;
  await assert.rejects(compactor.compact(messages, { reason: "threshold" }), {
    message: "Auto-compaction failed: the compaction module (agent_compaction_run_bg.wasm) could not be loaded: ENOENT: agent_compaction_run_bg.wasm",
  });
  assert.ok(messages.length === before.length && messages.every((m, i) => m === before[i]), "the caller's array is untouched");
  assert.equal(summarized, calls, "no summarizer call after the failed load");
  assert.equal(events.at(-1).type, "compaction_end");
  assert.match(events.at(-1).errorMessage, /could not be loaded/);
  assert.equal(compactor.isCompacting, false);

  offline = false;
  const cleared = await compactor.compact(messages, { reason: "threshold" });
  assert.equal(cleared.tier, "clear");
  assert.equal(cleared.marker.role, "toolOutputCleared");
  assert.equal(cleared.messages.length, messages.length + 1);
  assert.equal(summarized, calls, "clearing was enough");
  assert.equal(loads, first + 2);
});
