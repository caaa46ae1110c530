// The extractive summarizer is the package's third wasm module, loaded by
// the first compaction (or branch summary) that needs it, through the
// package's own entry (node.js reads it from disk). Here the loader the
// entry installed is wrapped, to count loads and to make one fail, as a
// browser offline or a missing file would. Needs a built pkg/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Compactor } from "agent-compaction";
import { setExtractiveLoader } from "../../pkg/extractive.js";

const wasm = new URL("../../pkg/agent_compaction_extractive_bg.wasm", import.meta.url);
let loads = 0;
let offline = false;
setExtractiveLoader(async () => {
  loads += 1;
  if (offline) throw new Error("ENOENT: agent_compaction_extractive_bg.wasm");
  const module = await import("../../pkg/agent_compaction_extractive.js");
  module.initSync({ module: readFileSync(wasm) });
  return module;
});

const options = { contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 } };
const conversation = (label) => {
  const out = [];
  for (let i = 0; i < 20; i++) {
    out.push({ role: "user", content: `${label} ${i}: edit src/f${i}.ts ` + "u".repeat(4000), timestamp: 2 * i + 1 });
    out.push({
      role: "assistant", content: [{ type: "text", text: "done " + "a".repeat(4000) }], api: "x", provider: "x", model: "m",
      usage: { input: (i + 1) * 2000, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: (i + 1) * 2000 + 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop", timestamp: 2 * i + 2,
    });
  }
  return out;
};

test("a failed load fails the compaction with the file's name, changes nothing, and is tried again next time", async () => {
  offline = true;
  const messages = conversation("request");
  const before = [...messages];
  const events = [];
  const compactor = new Compactor({ ...options, onEvent: (e) => events.push(e) });
  await assert.rejects(compactor.compact(messages), {
    message:
      "Compaction failed: the extractive summarizer's module (agent_compaction_extractive_bg.wasm) could not be loaded: ENOENT: agent_compaction_extractive_bg.wasm",
  });
  assert.deepEqual(messages, before, "the caller's array is untouched");
  assert.ok(messages.every((m, i) => m === before[i]));
  assert.match(events.at(-1).errorMessage, /could not be loaded/);
  assert.equal(compactor.isCompacting, false);
  // A failed summarizer with the fallback ends the same way: the summarizer's
  // failure is not hidden behind a fallback that could not run.
  const fallback = new Compactor({ ...options, fallback: "extractive", summarize: async () => { throw new Error("503"); } });
  await assert.rejects(fallback.compact(messages), /Compaction failed: .*could not be loaded/);

  offline = false;
  const out = await compactor.compact(messages);
  assert.equal(out.summarizedBy, "extractive");
  assert.match(out.summary.summary, /^## Goal\n- request 0: edit src\/f0\.ts/);
  assert.equal(loads, 3, "each call tried to load it; the third succeeded");
});

test("once loaded, it is not loaded again: compactions and branch summaries share it", async () => {
  const first = loads;
  const compactor = new Compactor(options);
  const out = await compactor.compact(conversation("task"));
  assert.equal(out.summarizedBy, "extractive");
  const branch = await compactor.summarizeBranch(conversation("branch").slice(0, 6));
  assert.equal(branch.role, "branchSummary");
  assert.match(branch.summary, /branch 0: edit src\/f0\.ts/);
  assert.equal(loads, first, "no new load");
});
