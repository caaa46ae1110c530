// The package imported during server-side rendering (docs/bundlers-workers-ssr.md,
// "Node and SSR"), each case in a Node process of its own with no `window`,
// `document` or `indexedDB`: every entry imports by name; SessionStore.open
// rejects with OpenFailedError and the process still ends by itself; the
// Compactor and the pure functions work; manual-init takes the bytes (Node's
// fetch reads no file: URL).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../", import.meta.url));

/** Runs `source` as an ES module in a fresh Node process at the repository root; its last stdout line, parsed. */
function inNode(source) {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", source], { cwd: repo, encoding: "utf8", timeout: 30_000 });
  return JSON.parse(out.trim().split("\n").at(-1));
}

const CONVERSATION = `
  const usage = (input) => ({ input, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: input + 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
  const messages = [];
  for (let i = 0; i < 20; i++) {
    messages.push({ role: "user", content: "request " + i + ": " + "u".repeat(4000), timestamp: 2 * i });
    messages.push({ role: "assistant", content: [{ type: "text", text: "a".repeat(4000) }], api: "openai-completions", provider: "p", model: "m", usage: usage((i + 1) * 2000), stopReason: "stop", timestamp: 2 * i + 1 });
  }
  const OPTIONS = { contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 } };
`;

test("every entry imports in Node; SessionStore.open rejects with OpenFailedError, the Compactor compacts, and the process ends", () => {
  const result = inNode(`
    const globals = { window: typeof window, document: typeof document, indexedDB: typeof indexedDB };
    const entries = {};
    for (const name of ["agent-compaction", "agent-compaction/manual-init", "agent-compaction/pi-agent-core", "agent-compaction/ai-sdk"]) {
      entries[name] = Object.keys(await import(name)).length > 0;
    }
    const m = await import("agent-compaction");
    let open;
    try {
      await m.SessionStore.open();
      open = "opened";
    } catch (e) {
      open = { name: e.name, isError: e instanceof Error, message: e.message };
    }
    ${CONVERSATION}
    const out = await new m.Compactor(OPTIONS).compact(messages);
    const context = m.transformContext(out.messages);
    console.log(JSON.stringify({ globals, entries, open, by: out.summarizedBy, length: out.messages.length, context: context.length }));
  `);
  assert.deepEqual(result.globals, { window: "undefined", document: "undefined", indexedDB: "undefined" });
  assert.deepEqual(result.entries, {
    "agent-compaction": true,
    "agent-compaction/manual-init": true,
    "agent-compaction/pi-agent-core": true,
    "agent-compaction/ai-sdk": true,
  });
  assert.equal(result.open.name, "OpenFailedError");
  assert.equal(result.open.isError, true);
  assert.match(result.open.message, /IndexedDB storage is unavailable here: this environment has no indexedDB/);
  assert.equal(result.by, "extractive");
  assert.equal(result.length, 41);
  assert.equal(result.context, 11);
});

test("manual-init in Node: init with the bytes, or initSync; a file: URL is refused by Node's fetch", () => {
  const result = inNode(`
    import { readFileSync } from "node:fs";
    import * as m from "agent-compaction/manual-init";
    const url = new URL(import.meta.resolve("agent-compaction/agent_compaction_bg.wasm"));
    let byUrl;
    try {
      await m.init({ module_or_path: url });
      byUrl = "loaded";
    } catch (e) {
      byUrl = e.name;
    }
    await m.init({ module_or_path: readFileSync(url) });
    ${CONVERSATION}
    const out = await new m.Compactor(OPTIONS).compact(messages);
    const again = m.initSync({ module: readFileSync(url) }) === (await m.init());
    console.log(JSON.stringify({ byUrl, by: out.summarizedBy, again }));
  `);
  assert.deepEqual(result, { byUrl: "TypeError", by: "extractive", again: true });
});
