// The demo on the AI SDK: its "Run the agent on the AI SDK" setting swaps
// pi-agent-core's Agent for www/ai-sdk-agent.js (streamText with
// @ai-sdk/openai-compatible and agent-compaction/ai-sdk's conversation),
// with the same page: the indicator, the divider, the stats bar, /compact
// and undo. The built demo (scripts/demo-build.mjs into a private
// directory) against the local model, in Chromium and Firefox (the page is
// driven by typing and clicking, which the browser abstraction gives those
// two). Asserts what the user sees and what the model received.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { buildDemo } from "../../scripts/demo-build.mjs";
import { createLocalModel } from "../../scripts/local-model.mjs";
import { startServer } from "../../scripts/serve.mjs";
import { ENGINES, launch } from "../support/browsers.mjs";

const PREAMBLE = "The conversation history before this point was compacted into the following summary:";
const HTTP_400 = /Failed to load resource: the server responded with a status of 400/;
const ENGINES_HERE = ENGINES.filter((e) => e !== "webkit");
const PROMPTS = ["read src/parser.rs", "now run the tests", "read src/store.rs please", "what does src/engine.rs do?", "list src/core", "read src/cache.rs", "read src/session.rs"];

let tmp, server, browser, current;
let problems = [];
let allowed = [];

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "agent-compaction-demo-ai-sdk-"));
  const dist = await buildDemo({ outDir: join(tmp, "dist") });
  const local = createLocalModel();
  server = await startServer({ port: 0, handlers: [local.handle], mounts: [{ prefix: "/", dir: dist }] });
});
after(async () => {
  await server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});
afterEach(async () => {
  await current?.close();
  current = undefined;
  const unexpected = problems.filter((p) => !allowed.some((re) => re.test(p)));
  problems = [];
  allowed = [];
  assert.deepEqual(unexpected, [], "page errors or console errors");
});

async function model(path, body) {
  const res = await fetch(new URL(`local/v1/${path}`, server.url), body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  return res.json();
}
const requestLog = () => model("requests");
const textOf = (c) => (typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => p?.text ?? "").join("") : "");
const sentConversation = (r) => r.body.messages.filter((m) => m.role !== "system" && m.role !== "developer");
const startsWithSummary = (r) => textOf(sentConversation(r)[0]?.content).startsWith(PREAMBLE);

/** A fresh profile on the demo, switched to the AI SDK in its settings dialog. */
async function openDemoOnAiSdk(config = {}) {
  await model("reset", {});
  await model("config", { delayMs: 0, contextWindow: 16_000, ...config });
  const page = await browser.newIsolatedPage({ viewport: { width: 1280, height: 860 } });
  current = page;
  page.onProblem((p) => problems.push(p));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body?.dataset.ready === "true", null, { timeout: 30_000 });
  await page.locator("#open-settings").click();
  await page.locator("#set-ai-sdk").click();
  await page.locator("#settings-save").click();
  // The session is reopened on the AI SDK agent (body[data-runtime]), idle.
  await page.waitForFunction(
    () => document.body.dataset.runtime === "ai-sdk" && document.body.dataset.busy === "false" && /AI SDK/.test(document.getElementById("endpoint-label")?.textContent ?? ""),
    null,
    { timeout: 30_000 },
  );
  return page;
}
const settledCount = (page) => page.evaluate(() => Number(document.body.dataset.settled ?? 0));
async function send(page, text) {
  const before = await settledCount(page);
  await page.locator("#input").fill(text);
  await page.locator("#input").press("Enter");
  await page.waitForFunction((n) => Number(document.body.dataset.settled ?? 0) > n && document.body.dataset.busy === "false", before, { timeout: 60_000, polling: 50 });
}
const rows = (page) =>
  page.evaluate(() => [...document.querySelectorAll("#conversation > li")].map((li) => ({ role: li.dataset.role ?? li.className, text: li.textContent, error: li.classList.contains("error") })));
const roles = (page) => page.evaluate(() => window.demo.session.messages.map((m) => m.role));
const stats = (page) => page.evaluate(() => ({ tokens: Number(document.getElementById("stats").dataset.tokens), text: document.getElementById("stats").textContent }));

for (const name of ENGINES_HERE) {
  describe(name, () => {
    before(async () => {
      browser = await launch(name);
    });
    after(async () => {
      await browser?.close();
    });

    test("threshold: the AI SDK agent compacts, the divider and stats show it, the next request starts with the summary", { timeout: 180_000 }, async () => {
      const page = await openDemoOnAiSdk();
      let sent = 0;
      while (!(await requestLog()).some((r) => r.kind === "summary")) {
        assert.ok(sent < PROMPTS.length, "compacted within the prompts");
        await send(page, PROMPTS[sent++]);
      }
      const log = await requestLog();
      assert.ok(log.every((r) => r.status === 200), "no overflow");
      assert.ok(log.filter((r) => r.kind === "chat").every((r) => r.body.stream === true), "streamText streams");
      const shown = await rows(page);
      const flat = await roles(page);
      assert.equal(flat.filter((r) => r === "compactionSummary").length, 1);
      assert.equal(shown.filter((r) => r.role === "compactionDivider").length, 1, "one divider");
      assert.equal(shown.length, flat.length, "one row per message");
      assert.match((await stats(page)).text, /last compaction \(threshold\)/);
      const stored = await page.evaluate(async () => (await window.demo.store.load(window.demo.session.id)).length);
      assert.equal(stored, flat.length, "IndexedDB holds the flat array");
      const mark = log.length;
      await send(page, PROMPTS[sent]);
      const next = (await requestLog()).slice(mark).find((r) => r.kind === "chat");
      assert.ok(startsWithSummary(next), "the next request starts with the summary");
    });

    test("overflow: one compaction, exactly one retry that succeeds, no error shown", { timeout: 180_000 }, async () => {
      allowed = [HTTP_400];
      const page = await openDemoOnAiSdk();
      await send(page, PROMPTS[0]);
      await send(page, PROMPTS[1]);
      const mark = (await requestLog()).length;
      await model("config", { overflowNext: 1 });
      await send(page, PROMPTS[2]);
      const log = (await requestLog()).slice(mark);
      const kinds = log.map((r) => r.kind);
      assert.equal(kinds[0], "overflow", kinds.join());
      assert.equal(kinds.filter((k) => k === "overflow").length, 1);
      assert.ok(kinds.includes("summary"));
      const chats = log.filter((r) => r.kind === "chat");
      assert.ok(chats.length >= 1 && chats.every((r) => r.status === 200 && startsWithSummary(r)));
      assert.deepEqual((await rows(page)).filter((r) => r.error), []);
      assert.match((await stats(page)).text, /last compaction \(overflow\)/);
    });

    test("a message sent while the new settings open the session again goes to it, on the AI SDK", { timeout: 180_000 }, async () => {
      await model("reset", {});
      await model("config", { delayMs: 0, contextWindow: 16_000 });
      const page = await browser.newIsolatedPage({ viewport: { width: 1280, height: 860 } });
      current = page;
      page.onProblem((p) => problems.push(p));
      await page.goto(server.url);
      await page.waitForFunction(() => document.body?.dataset.ready === "true", null, { timeout: 30_000 });
      await send(page, PROMPTS[0]);
      await page.locator("#open-settings").click();
      await page.locator("#set-ai-sdk").click();
      await page.locator("#settings-save").click();
      // at once, before the session is open again
      await page.locator("#input").fill(PROMPTS[1]);
      await page.locator("#input").press("Enter");
      await page.waitForFunction(
        (text) => document.body.dataset.runtime === "ai-sdk" && document.body.dataset.busy === "false" && window.demo.session?.messages.at(-1)?.role === "assistant" && window.demo.session.messages.some((m) => m.role === "user" && m.content?.[0]?.text === text),
        PROMPTS[1],
        { timeout: 30_000 },
      );
      assert.equal(await page.evaluate(() => document.querySelector("#input").value), "", "the input was taken");
      const chats = (await requestLog()).filter((r) => r.kind === "chat");
      assert.ok(chats.at(-1).body.messages.some((m) => textOf(m.content) === PROMPTS[1]), "the model got it");
      assert.ok(!(await rows(page)).some((r) => r.error), "no run stopped");
    });

    test("/compact and undo on the AI SDK agent", { timeout: 180_000 }, async () => {
      const page = await openDemoOnAiSdk();
      for (const p of PROMPTS.slice(0, 2)) await send(page, p);
      await send(page, "/compact");
      assert.equal((await rows(page)).filter((r) => r.role === "compactionDivider").length, 1);
      const compacted = await stats(page);
      const undo = page.locator("#undo-compaction");
      assert.ok(await undo.isEnabled());
      await undo.click();
      await page.waitForFunction(() => !document.querySelector("#conversation > li[data-role=compactionDivider]"));
      assert.ok(!(await roles(page)).includes("compactionSummary"));
      assert.ok((await stats(page)).tokens > compacted.tokens, "the stats go back up");
      await page.waitForFunction(async () => {
        const stored = await window.demo.store.load(window.demo.session.id);
        return stored.length === window.demo.session.messages.length && !stored.some((m) => m.role === "compactionSummary");
      });
      const mark = (await requestLog()).length;
      await send(page, PROMPTS[2]);
      const next = (await requestLog()).slice(mark).find((r) => r.kind === "chat");
      assert.ok(!startsWithSummary(next));
      assert.equal(textOf(sentConversation(next)[0].content), PROMPTS[0]);
    });
  });
}
