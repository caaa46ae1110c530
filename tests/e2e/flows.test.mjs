// The demo's compaction flows end to end: the built demo (www/, built here
// with scripts/demo-build.mjs into a private directory) running pi-agent-core's
// real Agent in headless Chromium, Firefox and WebKit
// (tests/support/browsers.mjs) against the local model
// (scripts/local-model.mjs, mounted like `npm start` does at /local/v1). The
// flows type, press keys and click through Playwright-style locators
// (Playwright's own; over puppeteer in Firefox; over WebDriver in WebKit,
// where each test's page is a WebDriver session of its own, for storage of
// its own).
//
// Each test asserts what the user sees (the page) AND what the model
// received (the local model's request log, read over HTTP), and saves a
// screenshot of its key moment to test-results/flows-*.png (Chromium;
// flows-firefox-*.png, flows-webkit-*.png for the others).
//
// The local model is configured over its HTTP endpoints (delayMs 0, the
// window). One test holds the summarization request (a handler in front of
// the model) to look at the page while a compaction runs.
//
// Needs a built pkg/ (`node scripts/build.mjs`) and the browsers
// scripts/setup.sh installs.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, afterEach, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { buildDemo } from "../../scripts/demo-build.mjs";
import { createLocalModel } from "../../scripts/local-model.mjs";
import { startServer } from "../../scripts/serve.mjs";
import { ENGINES, launch } from "../support/browsers.mjs";

const RESULTS = fileURLToPath(new URL("../../test-results/", import.meta.url));
const PREAMBLE = "The conversation history before this point was compacted into the following summary:";
const RECOVERY_FAILED =
  "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";
// Chromium logs every HTTP error response; the overflow tests expect those.
const HTTP_400 = /Failed to load resource: the server responded with a status of 400/;
// The engines whose pages the flows can type into and click (see above).
const FLOW_ENGINES = ENGINES;
// Prompts whose tool results are a few thousand tokens each (local-tools.js).
const PROMPTS = [
  "read src/parser.rs",
  "now run the tests",
  "read src/store.rs please",
  "what does src/engine.rs do?",
  "list src/core",
  "read src/cache.rs",
  "read src/session.rs",
];
const SETTLE_TIMEOUT = 60_000;

let tmp;
let server;
let browser;
let engine;
let gate;
let current; // the test's page (in a browser context of its own)
let problems = [];
let allowed = [];

/**
 * A handler in front of the local model that can hold the next
 * summarization request (ours: the prompt has a <conversation> block) until
 * released, or fail every one (`failSummaries`). Other requests pass
 * through untouched.
 */
function createGate(local) {
  let armed = false;
  let arrived;
  let release;
  const reset = () => {
    arrived = new Promise((resolve) => {
      gate.onArrive = resolve;
    });
  };
  const gate = {
    onArrive: () => {},
    /** Answer every summarization request with an HTTP 500. */
    failSummaries: false,
    /** Hold the next summary request; resolves `arrived` when it comes. */
    arm() {
      armed = true;
      reset();
    },
    get arrived() {
      return arrived;
    },
    release() {
      release?.();
      release = undefined;
    },
    async handle(req, res, url) {
      if ((!armed && !gate.failSummaries) || req.method !== "POST" || url.pathname !== "/local/v1/chat/completions") return false;
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const raw = Buffer.concat(chunks);
      if (gate.failSummaries && raw.includes("<conversation>")) {
        gate.failed = (gate.failed ?? 0) + 1;
        res.writeHead(500, { "content-type": "application/json", "access-control-allow-origin": "*" });
        res.end(JSON.stringify({ error: { message: "The summarizer is down", type: "server_error", param: null, code: null } }));
        return true;
      }
      if (armed && raw.includes("<conversation>")) {
        armed = false;
        const held = new Promise((resolve) => {
          release = resolve;
        });
        gate.onArrive();
        await held;
      }
      // Replay the body to the model.
      const replay = Readable.from([raw]);
      replay.method = req.method;
      replay.url = req.url;
      replay.headers = req.headers;
      return local.handle(replay, res, url);
    },
  };
  reset();
  return gate;
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "agent-compaction-flows-"));
  mkdirSync(RESULTS, { recursive: true });
  const dist = await buildDemo({ outDir: join(tmp, "dist") });
  const local = createLocalModel();
  gate = createGate(local);
  server = await startServer({
    port: 0,
    handlers: [gate.handle, local.handle],
    mounts: [{ prefix: "/", dir: dist }],
  });
});

after(async () => {
  await server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

afterEach(async () => {
  gate.release();
  gate.failSummaries = false;
  gate.failed = 0;
  await current?.close();
  current = undefined;
  const unexpected = problems.filter((p) => !allowed.some((re) => re.test(p)));
  problems = [];
  allowed = [];
  assert.deepEqual(unexpected, [], "page errors or console errors");
});

// ------------------------------------------------------------ helpers

/** The local model's HTTP API. */
async function model(path, body) {
  const res = await fetch(new URL(`local/v1/${path}`, server.url), body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return res.json();
}
const requestLog = () => model("requests");

/** A fresh browser profile (its own IndexedDB) on the demo, the model reset and configured. */
async function openDemo(config = {}, { background = false } = {}) {
  await model("reset", {});
  await model("config", { delayMs: 0, contextWindow: 16_000, ...config });
  const page = await browser.newIsolatedPage({ viewport: { width: 1280, height: 860 } });
  current = page;
  page.onProblem((problem) => problems.push(problem));
  // Most flows follow compactions that block the next request, as pi's do
  // (`?background=off`); compaction in the background, the default, is
  // flow 13 here, in Node (tests/node/background.test.mjs) and with the
  // store in each engine (background-store.test.mjs).
  await page.goto(background ? server.url : `${server.url}?background=off`);
  await page.waitForFunction(() => document.body?.dataset.ready === "true", null, { timeout: 30_000 });
  return page;
}

const settledCount = (page) => page.evaluate(() => Number(document.body.dataset.settled ?? 0));

/** Resolves once the page went busy and came back to idle (after `before` settles). */
function waitSettled(page, before) {
  return page.waitForFunction(
    (n) => Number(document.body.dataset.settled ?? 0) > n && document.body.dataset.busy === "false",
    before,
    { timeout: SETTLE_TIMEOUT, polling: 50 },
  );
}

/** Types `text` into the composer, sends it with Enter. Returns the settled count before. */
async function type(page, text) {
  const before = await settledCount(page);
  await page.locator("#input").fill(text);
  await page.locator("#input").press("Enter");
  return before;
}

/** Sends `text` and waits until the agent (and any compaction and retry) is done. */
async function send(page, text) {
  const before = await type(page, text);
  await waitSettled(page, before);
}

/** What the conversation shows: one entry per row. */
function conversation(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll("#conversation > li")].map((li) => ({
      role: li.dataset.role ?? li.className,
      text: li.textContent,
      error: li.classList.contains("error"),
      queued: li.dataset.queued === "true",
    })),
  );
}

/** The page's messages (the agent's flat array), reduced to what the tests compare. */
function pageMessages(page) {
  return page.evaluate(() =>
    window.demo.session.messages.map((m) => ({
      role: m.role,
      text:
        typeof m.content === "string"
          ? m.content
          : Array.isArray(m.content)
            ? m.content.filter((b) => b.type === "text").map((b) => b.text).join("\n")
            : m.summary ?? "",
      stopReason: m.stopReason,
    })),
  );
}

const stats = (page) =>
  page.evaluate(() => {
    const s = document.getElementById("stats");
    return { tokens: Number(s.dataset.tokens), window: Number(s.dataset.window), threshold: Number(s.dataset.threshold), text: s.textContent };
  });

/** Records every value the stats bar shows from now on (window.__tokens). */
const recordStats = (page) =>
  page.evaluate(() => {
    const s = document.getElementById("stats");
    window.__tokens = [Number(s.dataset.tokens)];
    new MutationObserver(() => window.__tokens.push(Number(s.dataset.tokens))).observe(s, { attributes: true, attributeFilter: ["data-tokens"] });
  });

const textOf = (content) =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((p) => p?.text ?? "").join("") : "";
/** A chat request's messages without the system/developer prompt. */
const conversationSent = (record) => record.body.messages.filter((m) => m.role !== "system" && m.role !== "developer");
const startsWithSummary = (record) => {
  const first = conversationSent(record)[0];
  return first?.role === "user" && textOf(first.content).startsWith(PREAMBLE);
};
/** The summarizer's prompt of a summary request. */
const summaryPrompt = (record) => textOf(record.body.messages.findLast((m) => m.role === "user")?.content);

async function shot(page, name) {
  await page.screenshot({ path: join(RESULTS, engine === "chromium" ? `flows-${name}.png` : `flows-${engine}-${name}.png`) });
}

/** Sends PROMPTS until the local model saw a summary request; returns how many were sent. */
async function growUntilCompaction(page) {
  for (let i = 0; i < PROMPTS.length; i++) {
    await send(page, PROMPTS[i]);
    if ((await requestLog()).some((r) => r.kind === "summary")) return i + 1;
  }
  assert.fail("no compaction after every prompt");
}

// ------------------------------------------------------------ the flows

for (const name of FLOW_ENGINES) {
  describe(name, () => {
    before(async () => {
      engine = name;
      browser = await launch(name);
    });
    after(async () => {
      await browser?.close();
    });

    test("1. threshold: the conversation grows past the threshold, one summary, the next request starts with it and the kept messages", { timeout: 180_000 }, async () => {
      const page = await openDemo();
      await recordStats(page);
      const sent = await growUntilCompaction(page);
      assert.ok(sent >= 2, `compacted after ${sent} prompts`);
      const log = await requestLog();
      assert.deepEqual(log.filter((r) => r.kind === "overflow"), [], "the threshold, not an overflow, triggered it");
      assert.ok(log.every((r) => r.status === 200));
      // The summary requests came after the last chat request of the turn that crossed the threshold.
      const firstSummary = log.findIndex((r) => r.kind === "summary");
      assert.ok(log.slice(firstSummary).every((r) => r.kind === "summary"), "no chat request after the compaction yet");

      // What the user sees: every message, one divider where the summary went.
      const rows = await conversation(page);
      const messages = await pageMessages(page);
      assert.equal(messages.filter((m) => m.role === "compactionSummary").length, 1, "one summary inserted");
      assert.equal(rows.filter((r) => r.role === "compactionDivider").length, 1, "one divider");
      assert.match(rows.find((r) => r.role === "compactionDivider").text, /Context compacted/);
      assert.equal(rows.length, messages.length, "one row per message (the summary as a divider)");
      const userRows = rows.filter((r) => r.role === "user").map((r) => r.text);
      for (const prompt of PROMPTS.slice(0, sent)) {
        assert.equal(userRows.filter((t) => t.includes(prompt)).length, 1, `"${prompt}" is still shown`);
      }
      assert.ok(!rows.some((r) => r.text.includes("## Goal")), "the summary text is not shown in the conversation");
      // The stats bar went above the threshold, then dropped below it.
      const { tokens, threshold, window, text } = await stats(page);
      assert.equal(window, 16_000);
      assert.equal(threshold, 13_000, "reserve 3,000 for a 16k window");
      const seen = await page.evaluate(() => window.__tokens);
      assert.ok(Math.max(...seen) > threshold, `peak ${Math.max(...seen)} > ${threshold}`);
      assert.ok(tokens < threshold && tokens < Math.max(...seen) / 2, `after: ${tokens}`);
      assert.match(text, /last compaction \(threshold\)/);
      await shot(page, "1-threshold");

      // The next request: the summary first, then the kept messages, then the new prompt.
      const mark = log.length;
      const next = PROMPTS[sent];
      await send(page, next);
      const request = (await requestLog()).slice(mark).find((r) => r.kind === "chat");
      assert.ok(startsWithSummary(request), "the next request starts with the summary");
      assert.ok(textOf(conversationSent(request)[0].content).includes("<compaction_summary>\n## Goal"));
      const after = await pageMessages(page);
      const at = after.findIndex((m) => m.role === "compactionSummary");
      const promptAt = after.findIndex((m) => m.role === "user" && m.text === next);
      const openAiRole = { user: "user", assistant: "assistant", toolResult: "tool" };
      assert.deepEqual(
        conversationSent(request).map((m) => m.role),
        ["user", ...after.slice(at + 1, promptAt + 1).map((m) => openAiRole[m.role])],
        "the summary, the kept messages and the new prompt, nothing older",
      );
      const firstPromptAt = after.findIndex((m) => m.text === PROMPTS[0]);
      assert.ok(firstPromptAt < at, "the first prompt was summarized");
      assert.ok(!conversationSent(request).some((m) => textOf(m.content).startsWith(PROMPTS[0])), "summarized messages are not sent");
      assert.equal(textOf(conversationSent(request).at(-1).content), next);
    });

    test("2. overflow: the failed attempt disappears, one compaction, exactly one retry that succeeds", { timeout: 180_000 }, async () => {
      allowed = [HTTP_400];
      const page = await openDemo();
      await send(page, PROMPTS[0]);
      await send(page, PROMPTS[1]);
      const mark = (await requestLog()).length;
      assert.ok(!(await requestLog()).some((r) => r.kind === "summary"), "no compaction yet");

      await model("config", { overflowNext: 1 });
      await send(page, PROMPTS[2]);
      const log = (await requestLog()).slice(mark);
      const kinds = log.map((r) => r.kind);
      assert.equal(kinds[0], "overflow", kinds.join());
      assert.equal(log[0].status, 400);
      assert.equal(kinds.filter((k) => k === "overflow").length, 1, `one overflow: ${kinds}`);
      const summaries = kinds.filter((k) => k === "summary").length;
      assert.ok(summaries >= 1 && summaries <= 2, `one compaction (history, maybe a turn prefix): ${kinds}`);
      const retry = log.filter((r) => r.kind === "chat");
      assert.ok(retry.length >= 1, "a retry");
      assert.ok(kinds.lastIndexOf("summary") < kinds.indexOf("chat"), `the retry comes after the compaction: ${kinds}`);
      assert.ok(retry.every((r) => r.status === 200 && startsWithSummary(r)), "the retry (and its tool turns) carry the summary and succeed");
      // The retried request asks the same question: the user's prompt is its last message.
      assert.equal(textOf(conversationSent(retry[0]).at(-1).content), PROMPTS[2]);

      // What the user sees: no error, the prompt once, one divider, the answer.
      const rows = await conversation(page);
      assert.deepEqual(rows.filter((r) => r.error), [], "the failed attempt is gone");
      assert.equal(rows.filter((r) => r.role === "user" && r.text.includes(PROMPTS[2])).length, 1);
      assert.equal(rows.filter((r) => r.role === "compactionDivider").length, 1);
      assert.match(rows.at(-1).text, /Here is what I found/);
      const messages = await pageMessages(page);
      assert.ok(!messages.some((m) => m.stopReason === "error"));
      assert.equal(messages.at(-1).stopReason, "stop");
      // ... and what IndexedDB holds: the same, without the failed attempt.
      const stored = await page.evaluate(async () => (await window.demo.store.load(window.demo.session.id)).map((m) => m.stopReason ?? m.role));
      assert.ok(!stored.includes("error"), "the failed attempt is not stored");
      assert.equal(stored.length, messages.length);
      assert.equal(await page.locator("#notices .notice.error").count(), 0);
      await shot(page, "2-overflow-retried");
    });

    test("3. repeated overflow: recovery fails once, the error is shown, no loop", { timeout: 180_000 }, async () => {
      allowed = [HTTP_400];
      const page = await openDemo();
      await send(page, PROMPTS[0]);
      await send(page, PROMPTS[1]);
      const mark = (await requestLog()).length;

      await model("config", { overflowAlways: true });
      await send(page, PROMPTS[3]);
      const log = (await requestLog()).slice(mark);
      const kinds = log.map((r) => r.kind);
      assert.equal(kinds.filter((k) => k === "overflow").length, 2, `the request and one retry: ${kinds}`);
      assert.equal(kinds.filter((k) => k === "chat").length, 0, kinds.join());
      assert.equal(kinds[0], "overflow");
      assert.equal(kinds.at(-1), "overflow");
      const summaries = kinds.filter((k) => k === "summary").length;
      assert.ok(summaries >= 1 && summaries <= 2, `one compaction: ${kinds}`);
      assert.ok(startsWithSummary(log.at(-1)), "the retry carried the summary");
      // No loop: nothing more arrives.
      await new Promise((r) => setTimeout(r, 1_500));
      assert.equal((await requestLog()).length, mark + log.length, "no further requests");
      assert.equal(log.length, 2 + summaries, "a bounded number of requests");

      // What the user sees: the provider's error on the last attempt and pi's recovery-failed text.
      const rows = await conversation(page);
      const errors = rows.filter((r) => r.error);
      assert.equal(errors.length, 1, "one error row");
      assert.match(errors[0].text, /maximum context length is 16000 tokens/);
      assert.deepEqual(rows.at(-1), errors[0], "the error is the last row");
      const notices = await page.locator("#notices .notice.error").allTextContents();
      assert.equal(notices.filter((n) => n.includes(RECOVERY_FAILED)).length, 1, notices.join("\n"));
      assert.equal(rows.filter((r) => r.role === "compactionDivider").length, 1, "exactly one compaction");
      assert.ok(await page.locator("#input").isEnabled(), "input is usable again");
      assert.equal(await page.evaluate(() => document.body.dataset.busy), "false");
      await shot(page, "3-recovery-failed");
    });

    test("4. manual /compact focus on the tests: the instructions reach the summarizer's prompt", { timeout: 180_000 }, async () => {
      const page = await openDemo();
      // Three turns: the kept part starts after the first, so there is history
      // to summarize. (When the cut splits the only turn, just the turn prefix is
      // summarized, and pi's turn-prefix prompt takes no custom instructions.)
      for (const prompt of PROMPTS.slice(0, 3)) await send(page, prompt);
      assert.ok(!(await requestLog()).some((r) => r.kind === "summary"), "no compaction yet");
      const mark = (await requestLog()).length;

      await send(page, "/compact focus on the tests");
      const log = (await requestLog()).slice(mark);
      assert.ok(log.length >= 1 && log.every((r) => r.kind === "summary"), `only summary requests: ${log.map((r) => r.kind)}`);
      const history = log.filter((r) => summaryPrompt(r).includes("Additional focus"));
      assert.equal(history.length, 1, "one prompt carries the focus");
      assert.ok(summaryPrompt(history[0]).endsWith("\n\nAdditional focus: focus on the tests"), summaryPrompt(history[0]).slice(-200));

      // What the user sees: a divider, the command is not a message, the stats say "manual".
      const rows = await conversation(page);
      assert.equal(rows.filter((r) => r.role === "compactionDivider").length, 1);
      assert.ok(!rows.some((r) => r.text.includes("/compact")), "the command is not sent as a message");
      assert.match((await stats(page)).text, /last compaction \(manual\)/);
      assert.ok(await page.locator("#undo-compaction").isEnabled());
      // What the model sees now (the panel): the summary first, with the focus line.
      await page.locator("#toggle-model-view").click();
      const first = page.locator("#model-list > li").first();
      assert.equal(await first.getAttribute("data-summary"), "true");
      assert.match(await first.textContent(), /\*\*Focus\*\*: focus on the tests/);
      await shot(page, "4-manual-compact");

      // The next request starts with that summary.
      const mark2 = (await requestLog()).length;
      await send(page, PROMPTS[3]);
      const request = (await requestLog()).slice(mark2).find((r) => r.kind === "chat");
      assert.ok(startsWithSummary(request));
      assert.match(textOf(conversationSent(request)[0].content), /\*\*Focus\*\*: focus on the tests/);
    });

    test("5. reload: the session, its summary and its display come back from IndexedDB", { timeout: 180_000 }, async () => {
      const page = await openDemo();
      await send(page, PROMPTS[0]);
      await send(page, PROMPTS[1]);
      await send(page, "/compact keep the file names");
      await send(page, PROMPTS[2]);
      await page.locator("#toggle-model-view").click();
      const before = {
        rows: await conversation(page),
        messages: await pageMessages(page),
        stats: await stats(page),
        title: await page.locator("#session-title").textContent(),
        session: await page.evaluate(() => window.demo.session.id),
        modelView: await page.locator("#model-count").getAttribute("data-messages"),
      };
      assert.equal(before.title, PROMPTS[0], "the session is named after its first message");
      assert.equal(before.rows.filter((r) => r.role === "compactionDivider").length, 1);

      await page.reload();
      await page.waitForFunction(() => document.body?.dataset.ready === "true", null, { timeout: 30_000 });
      await page.waitForFunction(() => document.querySelectorAll("#conversation > li").length > 0);
      assert.equal(await page.evaluate(() => window.demo.session.id), before.session, "the same session is open");
      assert.deepEqual(await pageMessages(page), before.messages, "the same messages, the summary included");
      assert.deepEqual(await conversation(page), before.rows, "the same conversation on screen");
      assert.equal((await stats(page)).tokens, before.stats.tokens);
      assert.equal(await page.locator("#session-title").textContent(), before.title);
      const current = page.locator("#session-list > li[aria-current=true]");
      assert.equal(await current.count(), 1);
      assert.ok((await current.textContent()).startsWith(PROMPTS[0]));
      await page.locator("#toggle-model-view").click();
      assert.equal(await page.locator("#model-count").getAttribute("data-messages"), before.modelView);
      assert.equal(await page.locator("#model-list > li").first().getAttribute("data-summary"), "true");
      await shot(page, "5-reloaded");

      // The reloaded session talks to the model from its summary.
      const mark = (await requestLog()).length;
      await send(page, PROMPTS[3]);
      const request = (await requestLog()).slice(mark).find((r) => r.kind === "chat");
      assert.ok(startsWithSummary(request));
      assert.ok(!conversationSent(request).some((m) => textOf(m.content).startsWith(PROMPTS[0])));
    });

    test("6. input is disabled while compacting and enabled again after", { timeout: 180_000 }, async () => {
      const page = await openDemo();
      const input = page.locator("#input");
      const indicator = page.locator("#compacting");

      async function whileHeld(name) {
        assert.equal(await page.evaluate(() => document.body.dataset.compacting), "true");
        assert.ok(await input.isDisabled(), "input disabled");
        assert.ok(await page.locator("#send").isDisabled(), "send disabled");
        assert.ok(await page.locator("#undo-compaction").isDisabled(), "undo disabled");
        assert.ok(await indicator.isVisible(), "indicator shown");
        assert.match(await indicator.textContent(), /Compacting context…/);
        await shot(page, name);
      }
      async function afterRelease(before) {
        gate.release();
        await waitSettled(page, before);
        assert.ok(await input.isEnabled(), "input enabled again");
        assert.ok(await page.locator("#send").isEnabled());
        assert.ok(await indicator.isHidden(), "indicator hidden");
        assert.equal(await page.evaluate(() => document.body.dataset.compacting), "false");
      }

      // Automatic (threshold): the prompt that crosses it ends in a compaction the page waits for.
      gate.arm();
      let held = false;
      for (const prompt of PROMPTS) {
        const before = await type(page, prompt);
        const outcome = await Promise.race([gate.arrived.then(() => "held"), waitSettled(page, before).then(() => "settled")]);
        if (outcome === "settled") continue;
        held = true;
        await page.waitForFunction(() => document.body.dataset.compacting === "true", null, { timeout: 10_000 });
        await whileHeld("6-compacting-threshold");
        await afterRelease(before);
        break;
      }
      assert.ok(held, "a threshold compaction happened");
      assert.equal((await conversation(page)).filter((r) => r.role === "compactionDivider").length, 1);
      // one more turn, so that a manual compaction has something to summarize
      await send(page, "read src/extra.rs");

      // Manual: /compact holds the input the same way.
      gate.arm();
      const before = await type(page, "/compact");
      await gate.arrived;
      await page.waitForFunction(() => document.body.dataset.compacting === "true", null, { timeout: 10_000 });
      await whileHeld("6-compacting-manual");
      await afterRelease(before);
      assert.equal((await conversation(page)).filter((r) => r.role === "compactionDivider").length, 2);
    });

    test("7. a message with HTML is shown as text and runs nothing", { timeout: 180_000 }, async () => {
      const page = await openDemo();
      const evil = '<img src=x onerror="window.__xss=1">';
      await send(page, evil);
      const rows = await conversation(page);
      const user = rows.find((r) => r.role === "user");
      assert.equal(user.text, `You${evil}`);
      assert.ok(rows.some((r) => r.role === "assistant" && r.text.includes(evil)), "the agent's answer quotes it, as text");
      assert.equal(await page.locator("#conversation img").count(), 0);
      await page.locator("#toggle-model-view").click();
      assert.equal(await page.locator("img").count(), 0, "no img element anywhere");
      // The session list shows it as its title, as text.
      await page.waitForFunction((t) => document.querySelector("#session-list .session-title")?.textContent === t, evil);
      assert.equal(await page.evaluate(() => window.__xss), undefined);
      // The model received the characters.
      const request = (await requestLog()).find((r) => r.kind === "chat");
      assert.equal(textOf(conversationSent(request)[0].content), evil);
      await shot(page, "7-xss-as-text");
    });

    test("8. undo last compaction: the summary goes, the model sees the whole conversation again", { timeout: 180_000 }, async () => {
      const page = await openDemo();
      for (const prompt of PROMPTS.slice(0, 3)) await send(page, prompt);
      await send(page, "/compact");
      const compacted = await stats(page);
      assert.equal((await conversation(page)).filter((r) => r.role === "compactionDivider").length, 1);
      await page.locator("#toggle-model-view").click();
      const modelCountCompacted = Number(await page.locator("#model-count").getAttribute("data-messages"));

      const undo = page.locator("#undo-compaction");
      assert.ok(await undo.isEnabled());
      await undo.click();
      await page.waitForFunction(() => !document.querySelector("#conversation > li[data-role=compactionDivider]"));
      assert.ok(await undo.isDisabled(), "nothing left to undo");
      const messages = await pageMessages(page);
      assert.equal(messages.filter((m) => m.role === "compactionSummary").length, 0);
      assert.equal(Number(await page.locator("#model-count").getAttribute("data-messages")), messages.length, "the model sees every message again");
      assert.ok(messages.length > modelCountCompacted);
      assert.equal(await page.locator("#model-list > li[data-summary=true]").count(), 0);
      assert.ok((await stats(page)).tokens > compacted.tokens, "the stats bar goes back up");
      // IndexedDB holds the array without the summary.
      await page.waitForFunction(async () => {
        const stored = await window.demo.store.load(window.demo.session.id);
        return stored.length === window.demo.session.messages.length && !stored.some((m) => m.role === "compactionSummary");
      });
      await shot(page, "8-undone");

      // The next request carries the whole conversation, no summary.
      const mark = (await requestLog()).length;
      await send(page, PROMPTS[3]);
      const request = (await requestLog()).slice(mark).find((r) => r.kind === "chat");
      assert.ok(!startsWithSummary(request));
      assert.equal(textOf(conversationSent(request)[0].content), PROMPTS[0]);
    });

    test("9. a message sent while the agent works is queued and delivered after its answer", { timeout: 180_000 }, async () => {
      const page = await openDemo({ delayMs: 40 });
      const before = await type(page, PROMPTS[0]);
      await page.waitForFunction(() => document.body.dataset.streaming === "true");
      await type(page, "and then list src/core");
      const queued = page.locator("#conversation > li[data-queued=true]");
      // (a turn of the local model at 40 ms per chunk lasts well over a second)
      await queued.waitFor({ timeout: 10_000 });
      assert.match(await queued.textContent(), /You \(queued\)and then list src\/core/);
      assert.equal(await page.evaluate(() => document.body.dataset.streaming), "true", "queued while the agent works");
      await shot(page, "9-queued");
      await waitSettled(page, before);
      // (one run: the follow-up is delivered inside it, so it settles once)
      await page.waitForFunction(() => {
        const m = window.demo.session.messages;
        return m.filter((x) => x.role === "user").length === 2 && m.at(-1).role === "assistant" && m.at(-1).stopReason === "stop";
      }, null, { timeout: SETTLE_TIMEOUT });
      const rows = await conversation(page);
      assert.equal(rows.filter((r) => r.queued).length, 0);
      const users = rows.filter((r) => r.role === "user").map((r) => r.text);
      assert.deepEqual(users, [`You${PROMPTS[0]}`, "Youand then list src/core"]);
      const messages = await pageMessages(page);
      const second = messages.findIndex((m) => m.role === "user" && m.text === "and then list src/core");
      assert.equal(messages[second - 1].role, "assistant", "delivered after the first answer");
      assert.equal(messages.at(-1).role, "assistant");
      assert.equal(messages.at(-1).stopReason, "stop");
      // The model saw the second message only after it had answered the first.
      const chats = (await requestLog()).filter((r) => r.kind === "chat");
      const firstWithIt = chats.findIndex((r) => JSON.stringify(r.body.messages).includes("and then list src/core"));
      assert.ok(firstWithIt >= 2, "the first turn's requests went out without it");
      assert.equal(conversationSent(chats[firstWithIt]).at(-2).role, "assistant");
    });

    test("10. the summarizer fails: the extractive summary is used, and the page says so", { timeout: 180_000 }, async () => {
      allowed = [/Failed to load resource: the server responded with a status of 500/];
      const page = await openDemo();
      for (const prompt of PROMPTS.slice(0, 3)) await send(page, prompt);
      gate.failSummaries = true;
      await send(page, "/compact");
      assert.ok(gate.failed >= 1, "the summarizer was asked and failed");
      const messages = await page.evaluate(() => window.demo.session.messages.filter((m) => m.role === "compactionSummary").map((m) => m.summary));
      assert.equal(messages.length, 1, "compacted anyway");
      assert.match(messages[0], /## Goal/, "a structured (extractive) summary");
      assert.equal((await conversation(page)).filter((r) => r.role === "compactionDivider").length, 1);
      const notices = await page.locator("#notices .notice").allTextContents();
      assert.ok(notices.some((n) => /summarizer failed .*extractive summary was used/.test(n)), notices.join("\n"));
      assert.match((await stats(page)).text, /\(extractive summary\)/);
      await shot(page, "10-extractive-fallback");

      // The model continues from it.
      gate.failSummaries = false;
      const mark = (await requestLog()).length;
      await send(page, PROMPTS[3]);
      const request = (await requestLog()).slice(mark).find((r) => r.kind === "chat");
      assert.ok(startsWithSummary(request));
    });

    test("11. before a prompt: a session reopened over its (now smaller) window compacts before the request goes out", { timeout: 180_000 }, async () => {
      const page = await openDemo();
      for (const prompt of PROMPTS.slice(0, 3)) await send(page, prompt);
      const tokens = (await stats(page)).tokens;
      assert.ok(tokens > 9_750 && tokens < 13_000, `under 16k's threshold, over 12k's: ${tokens}`);
      assert.ok(!(await requestLog()).some((r) => r.kind === "summary"));

      // The local model's window shrinks; the page takes it from /config on reload.
      await model("config", { contextWindow: 12_000 });
      await page.reload();
      await page.waitForFunction(() => document.body?.dataset.ready === "true", null, { timeout: 30_000 });
      const reopened = await stats(page);
      assert.equal(reopened.window, 12_000);
      assert.equal(reopened.threshold, 12_000 - 2_250);
      assert.ok(reopened.tokens > reopened.threshold, "over the threshold now");
      assert.match(await page.locator("#endpoint-label").textContent(), /12,000-token window/);

      const mark = (await requestLog()).length;
      await send(page, PROMPTS[3]);
      const log = (await requestLog()).slice(mark);
      const kinds = log.map((r) => r.kind);
      assert.equal(kinds[0], "summary", `the compaction came first: ${kinds}`);
      const firstChat = log.find((r) => r.kind === "chat");
      assert.ok(startsWithSummary(firstChat), "the first request of the prompt already starts with the summary");
      assert.equal(textOf(conversationSent(firstChat).at(-1).content), PROMPTS[3]);
      assert.ok(log.every((r) => r.status === 200), `no overflow: ${kinds}`);
      const rows = await conversation(page);
      assert.equal(rows.filter((r) => r.role === "compactionDivider").length, 1);
      assert.match(rows.at(-1).text, /Here is what I found/);
      await shot(page, "11-before-prompt");
    });

    test("12. after /compact, a question about an earlier detail is answered from the history the summary left out", { timeout: 180_000 }, async () => {
      const page = await openDemo();
      for (const prompt of PROMPTS.slice(0, 3)) await send(page, prompt);
      await send(page, "/compact");
      const before = await pageMessages(page);
      const cut = before.findIndex((m) => m.role === "compactionSummary");
      assert.ok(cut > 0, "compacted");
      await send(page, "What did the tests report earlier?");
      const after = await pageMessages(page);
      const answer = after.at(-1);
      assert.equal(answer.role, "assistant");
      assert.equal(answer.stopReason, "stop");
      const quoted = /^From earlier in our conversation \(h\d+\.\d+-[0-9a-z]{4}\): “(.+)”$/.exec(answer.text);
      assert.ok(quoted, answer.text);
      // The line it quotes is in a message the summary replaced, word for word.
      assert.ok(before.slice(0, cut).some((m) => m.text.includes(quoted[1])), quoted[1]);
      const log = await requestLog();
      const call = log.filter((r) => r.kind === "chat").at(-2);
      assert.ok(JSON.stringify(call.body.tools).includes("search_history"), "the history tools are declared");
      await shot(page, "12-history");
    });

    test("13. compaction in the background (the default): the input stays enabled while the summary is written, a message sent meanwhile is answered, /compact waits for it", { timeout: 180_000 }, async () => {
      const page = await openDemo({}, { background: true });
      const input = page.locator("#input");
      const indicator = page.locator("#compacting");
      gate.arm();
      let held = false;
      for (const prompt of PROMPTS) {
        const before = await type(page, prompt);
        await waitSettled(page, before);
        held = await Promise.race([gate.arrived.then(() => true), new Promise((r) => setTimeout(() => r(false), 500))]);
        if (held) break;
      }
      assert.ok(held, "a compaction started in the background, and its turn settled");
      await page.waitForFunction(() => document.body.dataset.background === "true", null, { timeout: 10_000 });
      assert.equal(await page.evaluate(() => document.body.dataset.compacting), "false", "not a compaction the page waits for");
      assert.ok(await input.isEnabled(), "input enabled");
      assert.ok(await page.locator("#send").isEnabled(), "send enabled");
      assert.ok(await indicator.isVisible(), "a quiet indicator");
      assert.match(await indicator.textContent(), /in the background/);
      await shot(page, "13-background");

      // The conversation goes on while the summary is written.
      const chats = (await requestLog()).filter((r) => r.kind === "chat").length;
      await send(page, "hello");
      assert.ok((await requestLog()).filter((r) => r.kind === "chat").length > chats, "the message went out");
      assert.equal((await pageMessages(page)).filter((m) => m.role === "compactionSummary").length, 0, "the summary is not in yet");

      // /compact meanwhile waits for it (one compaction at a time, never
      // "already running"), then compacts what follows its summary: here
      // that fits in keepRecentTokens, pi's "Nothing to compact".
      const before = await type(page, "/compact");
      await page.waitForFunction(() => document.body.dataset.compacting === "true", null, { timeout: 10_000 });
      gate.release();
      await waitSettled(page, before);
      await page.waitForFunction(() => document.body.dataset.background === "false", null, { timeout: 10_000 });
      assert.ok(await indicator.isHidden(), "indicator hidden");
      const messages = await pageMessages(page);
      assert.equal(messages.filter((m) => m.role === "compactionSummary").length, 1, "the background summary went in");
      const at = messages.findIndex((m) => m.role === "compactionSummary");
      assert.ok(messages.slice(at).some((m) => m.role === "user" && m.text === "hello"), "the message sent meanwhile stays after it");
      assert.equal((await conversation(page)).filter((r) => r.role === "compactionDivider").length, 1);
      const notices = await page.locator("#notices").textContent();
      assert.doesNotMatch(notices, /already running/);
      assert.match(notices, /Nothing to compact/, "the manual compaction ran after the background one");
      // The background summary is saved, though the manual compaction found nothing more to summarize.
      const stored = await page.evaluate(async () => (await window.demo.store.load(window.demo.session.id)).map((m) => m.role));
      assert.deepEqual(stored, messages.map((m) => m.role), "IndexedDB holds what the page shows");
    });

    test("13b. undo waits while a summary is written in the background: it undoes that one once it is in, never the one before", { timeout: 180_000 }, async () => {
      const page = await openDemo({}, { background: true });
      const undo = page.locator("#undo-compaction");
      await send(page, PROMPTS[0]);
      await send(page, PROMPTS[1]);
      await send(page, "/compact");
      assert.ok(await undo.isEnabled(), "a compaction to undo");
      gate.arm();
      let held = false;
      for (const prompt of PROMPTS.slice(2)) {
        const before = await type(page, prompt);
        await waitSettled(page, before);
        held = await Promise.race([gate.arrived.then(() => true), new Promise((r) => setTimeout(() => r(false), 500))]);
        if (held) break;
      }
      assert.ok(held, "a compaction started in the background, and its turn settled");
      await page.waitForFunction(() => document.body.dataset.background === "true" && document.body.dataset.busy === "false", null, { timeout: 10_000 });
      assert.ok(await undo.isDisabled(), "no undo while the summary is written");
      assert.equal(await page.evaluate(() => window.demo.session.messages.filter((m) => m.role === "compactionSummary").length), 1);
      gate.release();
      await page.waitForFunction(() => window.demo.session.messages.filter((m) => m.role === "compactionSummary").length === 2, null, { timeout: 10_000 });
      await page.waitForFunction(() => !document.getElementById("undo-compaction").disabled, null, { timeout: 10_000 });
      await undo.click();
      await page.waitForFunction(() => window.demo.session.messages.filter((m) => m.role === "compactionSummary").length === 1, null, { timeout: 10_000 });
      await page.waitForFunction(() => document.querySelectorAll("#conversation > li[data-role=compactionDivider]").length === 1, null, { timeout: 10_000 });
      const dividers = (await conversation(page)).filter((r) => r.role === "compactionDivider");
      assert.match(dividers[0].text, /Context compacted/, "the manual compaction stays");
      const stored = await page.evaluate(async () => (await window.demo.store.load(window.demo.session.id)).map((m) => m.role));
      assert.deepEqual(stored, (await pageMessages(page)).map((m) => m.role));
    });
  });
}
