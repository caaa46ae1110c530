// The boundary attacked from JavaScript: every exported function
// and method, each argument position, called in each engine (Chromium,
// Firefox, WebKit through tests/support/browsers.mjs) with a
// matrix of bad inputs — undefined, null, numbers, strings, arrays of
// non-objects, objects without a role, wrong field types, cyclic objects,
// throwing getters, Proxies, revoked Proxies, BigInt, symbols, functions, a
// 50 MB string and a 200,000-message array. For each call: a result (where
// the input happens to be valid) or an Error with a useful message; never a
// wasm trap (a panic aborts and poisons the module); and the module answers
// the very next valid call correctly. The count of calls is printed for the
// robustness report (`ROBUSTNESS bad-inputs=<n> failures=<n>`).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>bad input</title>
<script type="module">window.m = await import("/pkg/index.js");</script>`;

// Runs in the page: builds the inputs and the call targets, returns failures.
async function attack(targetNames) {
  const m = window.m;
  const user = (text, t = 1) => ({ role: "user", content: text, timestamp: t });
  const assistant = (text, t = 2) => ({
    role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "p", model: "x",
    usage: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 110, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop", timestamp: t,
  });
  const valid = [user("hello " + "x".repeat(4000)), assistant("hi " + "y".repeat(4000)), user("more"), assistant("done", 4)];
  const settings = { enabled: true, reserveTokens: 1000, keepRecentTokens: 500 };

  const cyclic = { role: "user", content: "loop", timestamp: 1 };
  cyclic.self = cyclic;
  const cyclicArray = [user("a")];
  cyclicArray.push(cyclicArray);
  const throwing = Object.defineProperty({}, "role", { get() { throw new Error("getter says no"); } });
  const throwingContent = Object.defineProperty({ role: "user", timestamp: 1 }, "content", { get() { throw new Error("no content"); } });
  const trap = new Proxy({}, { get() { throw new Error("proxy trap"); }, has() { throw new Error("proxy has"); }, ownKeys() { throw new Error("proxy keys"); } });
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  const { proxy: revokedArray, revoke: revokeArray } = Proxy.revocable([], {});
  revokeArray();
  const huge = "x".repeat(50 * 1024 * 1024);
  const many = Array.from({ length: 200_000 }, (_, i) => (i % 2 ? assistant("a" + i, i) : user("u" + i, i)));

  const inputs = {
    undefined: undefined, null: null, zero: 0, negative: -1, nan: NaN, infinity: Infinity, big: 1e308,
    string: "text", empty: "", bool: true, bigint: 10n, symbol: Symbol("s"), fn: () => 1, date: new Date(0),
    map: new Map([["role", "user"]]), emptyArray: [], numbers: [1, 2, 3], nulls: [null], strings: ["user"],
    noRole: [{}], roleNumber: [{ role: 5 }], userNoContent: [{ role: "user" }],
    wrongTypes: [{ role: "assistant", content: "x", usage: "lots", stopReason: 7, timestamp: "now" }],
    toolResultBad: [{ role: "toolResult", toolCallId: 5, content: [{ type: "text", text: 9 }] }],
    summaryBad: [{ role: "compactionSummary", summary: 42, details: { readFiles: [1] } }],
    cyclic, cyclicInArray: [cyclic], cyclicArray, throwing, throwingInArray: [throwing],
    throwingContent: [throwingContent], proxy: trap, proxyInArray: [trap], revoked, revokedArray,
    revokedInArray: [revoked], huge, hugeMessage: [user(huge)], many,
    object: { a: 1 }, settingsBad: { reserveTokens: -5, keepRecentTokens: "many" },
  };

  const compactor = new m.Compactor({ contextWindow: 10_000, settings });
  const store = await m.SessionStore.open({ name: "bad-input-" + Math.random() });
  const { id } = await store.createSession({ title: "t" });
  await store.save(id, valid);
  const fakeAgent = { subscribe: () => () => {}, state: { messages: [], model: { provider: "p", id: "x" } }, convertToLlm: () => [] };
  const hooks = compactor.agentHooks();

  // [name, (x) => call]
  const targets = [
    ["transformContext", (x) => m.transformContext(x)],
    ["convertToLlm", (x) => m.convertToLlm(x)],
    ["agentMessagesToChatMessages(x)", (x) => m.agentMessagesToChatMessages(x)],
    ["agentMessagesToChatMessages(valid, x)", (x) => m.agentMessagesToChatMessages(valid, x)],
    ["serializeConversation", (x) => m.serializeConversation(x)],
    ["resolveSettings(x)", (x) => m.resolveSettings(x)],
    ["resolveSettings({}, x)", (x) => m.resolveSettings({}, x)],
    ["piSessionToMessages", (x) => m.piSessionToMessages(x)],
    ["messagesToPiSession(x)", (x) => m.messagesToPiSession(x)],
    ["messagesToPiSession(valid, x)", (x) => m.messagesToPiSession(valid, x)],
    ["findCutPoint(x, ...)", (x) => m.findCutPoint(x, 0, 4, 100)],
    ["findCutPoint(valid, x, ...)", (x) => m.findCutPoint(valid, x, 4, 100)],
    ["findCutPoint(valid, 0, x, ...)", (x) => m.findCutPoint(valid, 0, x, 100)],
    ["findCutPoint(valid, 0, 4, x)", (x) => m.findCutPoint(valid, 0, 4, x)],
    ["prepareCompaction(x, settings)", (x) => m.prepareCompaction(x, settings)],
    ["prepareCompaction(valid, x)", (x) => m.prepareCompaction(valid, x)],
    ["estimateTokens", (x) => m.estimateTokens(x)],
    ["estimateContextTokens", (x) => m.estimateContextTokens(x)],
    ["calculateContextTokens", (x) => m.calculateContextTokens(x)],
    ["shouldCompact(x, ...)", (x) => m.shouldCompact(x, 1000, settings)],
    ["shouldCompact(1, x, ...)", (x) => m.shouldCompact(1, x, settings)],
    ["shouldCompact(1, 1000, x)", (x) => m.shouldCompact(1, 1000, x)],
    ["isContextOverflow(x)", (x) => m.isContextOverflow(x)],
    ["isContextOverflow(assistant, x)", (x) => m.isContextOverflow(valid[1], x)],
    ["removeLastCompaction", (x) => m.removeLastCompaction(x)],
    ["openAiSummarizer", (x) => m.openAiSummarizer(x)],
    ["anthropicSummarizer", (x) => m.anthropicSummarizer(x)],
    ["new Compactor", (x) => new m.Compactor(x)],
    ["compactor.contextTokens", (x) => compactor.contextTokens(x)],
    ["compactor.contextTokenEstimate", (x) => compactor.contextTokenEstimate(x)],
    ["compactor.needsCompaction", (x) => compactor.needsCompaction(x)],
    ["compactor.compact(x)", (x) => compactor.compact(x)],
    ["compactor.compact(valid, x)", (x) => compactor.compact(valid, x)],
    ["compactor.summarizeBranch(x)", (x) => compactor.summarizeBranch(x)],
    ["compactor.summarizeBranch(valid, x)", (x) => compactor.summarizeBranch(valid, x)],
    ["compactor.setModel(x)", (x) => compactor.setModel(x)],
    ["compactor.setModel(key, x)", (x) => compactor.setModel("p/x", x)],
    ["compactor.attach(x)", (x) => { const d = compactor.attach(x); d(); }],
    ["compactor.attach(agent, x)", (x) => { const d = compactor.attach(fakeAgent, x); d(); }],
    ["hooks.transformContext", (x) => hooks.transformContext(x)],
    ["hooks.convertToLlm", (x) => hooks.convertToLlm(x)],
    ["SessionStore.open", (x) => m.SessionStore.open(x).then((s) => s.close())],
    ["store.createSession", (x) => store.createSession(x).then((meta) => store.delete(meta.id))],
    ["store.save(x, valid)", (x) => store.save(x, valid)],
    ["store.save(id, x)", (x) => store.save(id, x)],
    ["store.save(id, valid, x)", (x) => store.save(id, valid, x)],
    ["store.load", (x) => store.load(x)],
    ["store.loadContext", (x) => store.loadContext(x)],
    ["store.rename(x, t)", (x) => store.rename(x, "t")],
    ["store.rename(id, x)", (x) => store.rename(id, x)],
    ["store.delete", (x) => store.delete(x)],
    ["store.fork(x, 0)", (x) => store.fork(x, 0)],
    ["store.fork(id, x)", (x) => store.fork(id, x).then((meta) => store.delete(meta.id))],
    ["store.fork(id, 1, x)", (x) => store.fork(id, 1, x).then((meta) => store.delete(meta.id))],
    ["store.exportJsonl", (x) => store.exportJsonl(x)],
    ["store.importJsonl", (x) => store.importJsonl(x).then((meta) => store.delete(meta.id))],
    ["store.withSessionLock(x, fn)", (x) => store.withSessionLock(x, () => 1)],
    ["store.withSessionLock(id, x)", (x) => store.withSessionLock(id, x)],
    ["store.onChange", (x) => store.onChange(x)()],
  ].filter(([name]) => targetNames.includes(name));

  const expectedContext = m.transformContext(valid);
  const canary = async () => {
    const context = m.transformContext(valid);
    const tokens = compactor.contextTokens(valid);
    const loaded = await store.load(id);
    return context.length === expectedContext.length && context[0] === valid[0] && tokens > 0 && loaded.length === valid.length;
  };
  const withTimeout = (p, ms) =>
    Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error("TIMEOUT")), ms))]);

  const failures = [];
  let calls = 0;
  for (const [name, call] of targets) {
    for (const [inputName, input] of Object.entries(inputs)) {
      calls++;
      let outcome = "returned";
      const started = performance.now();
      if (window.__trace) console.log(`start ${name} <- ${inputName}`);
      try {
        const r = call(input);
        if (r && typeof r.then === "function") await withTimeout(r, 30_000);
      } catch (e) {
        if (e instanceof WebAssembly.RuntimeError || /unreachable|RuntimeError/.test(String(e?.stack ?? e))) {
          outcome = `PANIC: ${e}`;
        } else if (e?.message === "TIMEOUT") {
          outcome = "hung";
        } else if (!(e instanceof Error)) {
          outcome = `threw a non-Error: ${String(e)}`;
        } else if (typeof e.message !== "string" || e.message.length < 12) {
          outcome = `an unhelpful message: ${JSON.stringify(e.message)}`;
        } else {
          outcome = "error";
        }
      }
      if (window.__trace) console.log(`end ${name} <- ${inputName} ${Math.round(performance.now() - started)} ms ${outcome}`);
      let healthy = false;
      try {
        healthy = await withTimeout(canary(), 30_000);
      } catch (e) {
        healthy = false;
      }
      if (!["returned", "error"].includes(outcome) || !healthy) {
        failures.push(`${name} <- ${inputName}: ${outcome}${healthy ? "" : "; the next valid call failed"}`);
        if (!healthy) return { calls, failures, poisoned: true };
      }
    }
  }
  store.close();
  return { calls, failures, poisoned: false };
}

const GROUPS = [
  ["transformContext", "convertToLlm", "agentMessagesToChatMessages(x)", "agentMessagesToChatMessages(valid, x)", "serializeConversation", "resolveSettings(x)", "resolveSettings({}, x)", "piSessionToMessages", "messagesToPiSession(x)", "messagesToPiSession(valid, x)"],
  ["findCutPoint(x, ...)", "findCutPoint(valid, x, ...)", "findCutPoint(valid, 0, x, ...)", "findCutPoint(valid, 0, 4, x)", "prepareCompaction(x, settings)", "prepareCompaction(valid, x)", "estimateTokens", "estimateContextTokens", "calculateContextTokens", "shouldCompact(x, ...)", "shouldCompact(1, x, ...)", "shouldCompact(1, 1000, x)", "isContextOverflow(x)", "isContextOverflow(assistant, x)", "removeLastCompaction", "openAiSummarizer", "anthropicSummarizer"],
  ["new Compactor", "compactor.contextTokens", "compactor.contextTokenEstimate", "compactor.needsCompaction", "compactor.compact(x)", "compactor.compact(valid, x)", "compactor.summarizeBranch(x)", "compactor.summarizeBranch(valid, x)", "compactor.setModel(x)", "compactor.setModel(key, x)", "compactor.attach(x)", "compactor.attach(agent, x)", "hooks.transformContext", "hooks.convertToLlm"],
  ["SessionStore.open", "store.createSession", "store.save(x, valid)", "store.save(id, x)", "store.save(id, valid, x)", "store.load", "store.loadContext", "store.rename(x, t)", "store.rename(id, x)", "store.delete", "store.fork(x, 0)", "store.fork(id, x)", "store.fork(id, 1, x)", "store.exportJsonl", "store.importJsonl", "store.withSessionLock(x, fn)", "store.withSessionLock(id, x)", "store.onChange"],
];

let total = 0;
let totalFailures = 0;
for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser;
    before(async () => {
      server = await startServer({ port: 0, handlers: [pageHandler("/bad-input.html", PAGE)] });
      browser = await launch(engine);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    for (const [i, group] of GROUPS.entries()) {
      test(`bad inputs, group ${i + 1}: ${group[0]} … ${group.at(-1)}: an Error or a result, never a panic, and the next call works`, { timeout: 600_000 }, async () => {
        const page = await browser.newPage();
        if (process.env.TRACE) page.raw?.on?.("console", (msg) => console.log(msg.text?.() ?? msg)); // Chromium, Firefox
        await page.goto(`${server.url}bad-input.html`);
        if (process.env.TRACE) await page.evaluate(() => (window.__trace = true));
        await page.waitForFunction(() => window.m, null, { timeout: 30_000 });
        const { calls, failures } = await page.evaluate(attack, group);
        total += calls;
        totalFailures += failures.length;
        await page.close();
        assert.deepEqual(failures, [], failures.join("\n"));
        assert.ok(calls >= group.length * 40, `${calls} calls`);
      });
    }
  });
}

after(() => console.log(`ROBUSTNESS bad-inputs=${total} failures=${totalFailures}`));
