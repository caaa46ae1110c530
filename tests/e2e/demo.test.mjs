// The demo page (www/, built here with scripts/demo-build.mjs into a private
// directory) served by scripts/serve.mjs with the local model, in headless
// Chromium through playwright-core: the server, the page loading without
// errors, the session list (new, rename, delete, switching), the settings
// panel kept in IndexedDB across a reload, and pi session files in and out.
// The compaction flows themselves are in flows.test.mjs.
//
// Needs a built pkg/ (`node scripts/build.mjs`), /usr/bin/chromium and
// the fixtures in fixtures/.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { buildDemo, DEMO_DIST } from "../../scripts/demo-build.mjs";
import { createLocalModel } from "../../scripts/local-model.mjs";
import { DEFAULT_MOUNTS, startServer } from "../../scripts/serve.mjs";
import { CHROMIUM } from "../support/chromium.mjs";

const RESULTS = fileURLToPath(new URL("../../test-results/", import.meta.url));
const fixture = (name) => fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url));
const pkgDir = fileURLToPath(new URL("../../pkg/", import.meta.url));

let tmp;
let dist;
let server;
let browser;
let context;
let problems = [];

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "agent-compaction-demo-"));
  mkdirSync(RESULTS, { recursive: true });
  dist = await buildDemo({ outDir: join(tmp, "dist") });
  server = await startServer({
    port: 0,
    handlers: [createLocalModel().handle],
    mounts: [
      { prefix: "/pkg/", dir: pkgDir },
      { prefix: "/", dir: dist },
    ],
  });
  browser = await chromium.launch(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

afterEach(async () => {
  await context?.close();
  context = undefined;
  const seen = problems;
  problems = [];
  assert.deepEqual(seen, [], "page errors, console errors or failed requests");
});

async function model(path, body) {
  const res = await fetch(new URL(`local/v1/${path}`, server.url), body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  return res.json();
}

/** A fresh browser profile on the demo; errors of any kind are collected. */
async function openDemo() {
  await model("reset", {});
  await model("config", { delayMs: 0 });
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console.error: ${msg.text()}`);
  });
  page.on("requestfailed", (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  await page.goto(server.url);
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  return page;
}

/** A second tab on the demo, in the profile `openDemo` made; its errors are collected too. */
async function openSecondTab() {
  const other = await context.newPage();
  other.on("pageerror", (err) => problems.push(`pageerror (second tab): ${err.message}`));
  other.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console.error (second tab): ${msg.text()}`);
  });
  await other.goto(server.url);
  await other.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  return other;
}

const sessionTitles = (page) => page.locator("#session-list .session-title").allTextContents();
const currentId = (page) => page.evaluate(() => window.demo.session?.id);

async function send(page, text) {
  const before = await page.evaluate(() => Number(document.body.dataset.settled ?? 0));
  await page.locator("#input").fill(text);
  await page.locator("#input").press("Enter");
  await page.waitForFunction(
    (n) => Number(document.body.dataset.settled ?? 0) > n && document.body.dataset.busy === "false",
    before,
    { timeout: 60_000, polling: 50 },
  );
}

test("server: the built demo at /, the package at /pkg/, the guides at /docs/, MIME types, 404 and no directory traversal", async () => {
  assert.deepEqual(
    DEFAULT_MOUNTS.map((m) => [m.prefix, m.dir]),
    [
      ["/pkg/", join(fileURLToPath(new URL("../../", import.meta.url)), "pkg")],
      ["/docs/", join(fileURLToPath(new URL("../../", import.meta.url)), "docs")],
      ["/", DEMO_DIST],
    ],
    "npm start serves www/dist/, pkg/ and the guides the demo links to",
  );
  const get = (path) => fetch(new URL(path, server.url));
  const assets = readdirSync(join(dist, "assets"));
  const types = {
    "/": "text/html",
    "/index.html": "text/html",
    [`/assets/${assets.find((f) => f.endsWith(".js"))}`]: "text/javascript",
    [`/assets/${assets.find((f) => f.endsWith(".css"))}`]: "text/css",
    [`/assets/${assets.find((f) => f.endsWith(".wasm"))}`]: "application/wasm",
    "/pkg/index.js": "text/javascript",
    "/pkg/agent_compaction_bg.wasm": "application/wasm",
    "/local/v1/models": "application/json",
  };
  for (const [path, type] of Object.entries(types)) {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get("content-type"), new RegExp(`^${type}`), path);
    await res.arrayBuffer();
  }
  for (const path of ["/nope.js", "/pkg/nope.wasm", "/app.js"]) assert.equal((await get(path)).status, 404, path);
  // fetch() normalizes "..", so send raw request lines.
  const raw = (path) =>
    new Promise((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: server.port, path }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on("error", reject);
      req.end();
    });
  for (const path of [
    "/../package.json", // path-check: data (a traversal probe)
    "/pkg/../../package.json",
    "/pkg/..%2f..%2fpackage.json",
    "/%2e%2e/package.json",
    "/..%5cpackage.json",
    "/pkg/%2e%2e/%2e%2e/Cargo.toml",
    "/%2e%2e/app.js",
    "/pkg/%00",
  ]) {
    const status = await raw(path);
    assert.ok(status >= 400 && status < 500, `${path} → ${status}`);
  }
});

test("the page loads without errors: one new session, the local model, an empty context", async () => {
  const page = await openDemo();
  assert.deepEqual(await sessionTitles(page), ["New session"]);
  assert.equal(await page.locator("#session-title").textContent(), "New session");
  assert.match(await page.locator("#endpoint-label").textContent(), /^local-coder @ local model · 16,000-token window$/);
  assert.match(await page.locator("#stat-tokens").textContent(), /^0 \/ 16,000 tokens$/);
  assert.match(await page.locator("#stat-threshold").textContent(), /compacts above 13,000/);
  assert.equal(await page.locator("#conversation > li").count(), 0);
  assert.ok(await page.locator("#input").isEnabled());
  assert.ok(await page.locator("#undo-compaction").isDisabled(), "nothing to undo");
  assert.ok(await page.locator("#compacting").isHidden());
  assert.ok(await page.locator("#model-view").isHidden());
  await page.locator("#toggle-model-view").click();
  assert.equal(await page.locator("#model-count").getAttribute("data-messages"), "0");
  assert.match(await page.locator("#model-system").textContent(), /read_file: Read a text file/);
  await page.screenshot({ path: join(RESULTS, "demo-empty.png") });
});

test("session list: new, switch (each session its own agent), rename, delete", async () => {
  const page = await openDemo();
  await send(page, "read src/alpha.rs");
  const first = await currentId(page);
  await page.waitForFunction(() => document.querySelector("#session-list .session-title")?.textContent === "read src/alpha.rs");

  // New: a second session, opened, empty.
  await page.locator("#new-session").click();
  await page.waitForFunction((id) => window.demo.session && window.demo.session.id !== id, first);
  const second = await currentId(page);
  assert.deepEqual(await sessionTitles(page), ["New session", "read src/alpha.rs"], "newest first");
  assert.equal(await page.locator("#conversation > li").count(), 0);
  assert.equal(await page.locator("#session-list > li[aria-current=true]").getAttribute("data-id"), second);
  await model("reset", { keepConfig: true });
  await send(page, "read src/beta.rs");
  const [request] = (await model("requests")).filter((r) => r.kind === "chat");
  assert.ok(!JSON.stringify(request.body.messages).includes("alpha"), "the new session's agent starts from its own messages");

  // Switch back: the first session's conversation, and its agent continues it.
  await page.locator(`#session-list > li[data-id="${first}"] .session-open`).click();
  await page.waitForFunction((id) => window.demo.session?.id === id, first);
  await page.waitForFunction(() => document.querySelector("#conversation > li.user")?.textContent.includes("alpha"));
  assert.ok(!(await page.locator("#conversation").textContent()).includes("beta"));
  await model("reset", { keepConfig: true });
  await send(page, "read src/gamma.rs");
  const sent = JSON.stringify((await model("requests")).find((r) => r.kind === "chat").body.messages);
  assert.ok(sent.includes("alpha") && !sent.includes("beta"), "the first session's history, not the second's");

  // Rename (inline; Enter saves), and the header follows.
  const row = page.locator(`#session-list > li[data-id="${second}"]`);
  await row.locator(".session-rename").click();
  await page.locator("#session-list .rename-input").fill("Beta work");
  await page.locator("#session-list .rename-input").press("Enter");
  await page.waitForFunction((id) => document.querySelector(`#session-list > li[data-id="${id}"] .session-title`)?.textContent === "Beta work", second);
  const stored = await page.evaluate(async () => (await window.demo.store.list()).map((m) => [m.id, m.title]));
  assert.deepEqual(Object.fromEntries(stored)[second], "Beta work", "renamed in IndexedDB");
  // Escape cancels a rename.
  await row.locator(".session-rename").click();
  await page.locator("#session-list .rename-input").fill("never saved");
  await page.locator("#session-list .rename-input").press("Escape");
  await page.waitForFunction((id) => document.querySelector(`#session-list > li[data-id="${id}"] .session-title`)?.textContent === "Beta work", second);
  await page.screenshot({ path: join(RESULTS, "demo-sessions.png") });

  // Delete the open session (with a confirmation): the other one opens.
  await page.locator(`#session-list > li[data-id="${first}"] .session-delete`).click();
  await page.locator(`#session-list > li[data-id="${first}"] .session-delete-cancel`).click();
  assert.equal(await page.locator("#session-list > li").count(), 2, "cancelled");
  await page.locator(`#session-list > li[data-id="${first}"] .session-delete`).click();
  await page.locator(`#session-list > li[data-id="${first}"] .session-delete-confirm`).click();
  await page.waitForFunction((id) => window.demo.session?.id === id && document.querySelectorAll("#session-list > li").length === 1, second);
  assert.deepEqual(await sessionTitles(page), ["Beta work"]);
  assert.equal(await page.evaluate(async (id) => (await window.demo.store.list()).some((m) => m.id === id), first), false);
  // Deleting the last one leaves a fresh session.
  await page.locator(`#session-list > li[data-id="${second}"] .session-delete`).click();
  await page.locator(`#session-list > li[data-id="${second}"] .session-delete-confirm`).click();
  await page.waitForFunction((id) => window.demo.session && window.demo.session.id !== id, second);
  assert.deepEqual(await sessionTitles(page), ["New session"]);
  assert.equal(await page.locator("#conversation > li").count(), 0);
});

test("settings: another endpoint is kept in IndexedDB across a reload; bad settings are refused", async () => {
  const page = await openDemo();
  await page.locator("#open-settings").click();
  assert.ok(await page.locator("#settings-dialog").isVisible());
  assert.equal(await page.locator("#set-base-url").inputValue(), "", "the local model by default");
  await page.locator("#set-base-url").fill("http://127.0.0.1:9/v1");
  await page.locator("#set-model").fill("gpt-test");
  await page.locator("#set-api-key").fill("sk-test-123");
  await page.locator("#set-context-window").fill("32000");
  // Settings that cannot work are refused (resolveSettings), the dialog stays open.
  await page.locator("#set-reserve").fill("20000");
  await page.locator("#set-keep").fill("15000");
  await page.locator("#settings-save").click();
  await page.waitForSelector("#settings-error:not([hidden])");
  assert.match(await page.locator("#settings-error").textContent(), /20000.*15000.*32000|32000/);
  assert.ok(await page.locator("#settings-dialog").isVisible());
  await page.locator("#set-reserve").fill("4000");
  await page.locator("#set-keep").fill("");
  await page.screenshot({ path: join(RESULTS, "demo-settings.png") });
  await page.locator("#settings-save").click();
  await page.waitForFunction(() => !document.getElementById("settings-dialog").open);
  await page.waitForFunction(() => document.getElementById("endpoint-label").textContent.startsWith("gpt-test"));
  assert.equal(await page.locator("#endpoint-label").textContent(), "gpt-test @ 127.0.0.1:9 · 32,000-token window");
  await page.waitForFunction(() => document.getElementById("stats").dataset.window === "32000");
  assert.equal(await page.locator("#stats").getAttribute("data-threshold"), String(32_000 - 4_000));

  await page.reload();
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  assert.equal(await page.locator("#endpoint-label").textContent(), "gpt-test @ 127.0.0.1:9 · 32,000-token window");
  assert.equal(await page.locator("#stats").getAttribute("data-threshold"), "28000");
  await page.locator("#open-settings").click();
  assert.equal(await page.locator("#set-base-url").inputValue(), "http://127.0.0.1:9/v1");
  assert.equal(await page.locator("#set-model").inputValue(), "gpt-test");
  assert.equal(await page.locator("#set-api-key").inputValue(), "sk-test-123");
  assert.equal(await page.locator("#set-context-window").inputValue(), "32000");
  assert.equal(await page.locator("#set-reserve").inputValue(), "4000");
  assert.equal(await page.locator("#set-keep").inputValue(), "");
  // Cancel changes nothing.
  await page.locator("#set-model").fill("something-else");
  await page.locator("#settings-cancel").click();
  assert.match(await page.locator("#endpoint-label").textContent(), /^gpt-test/);

  // Back to the local model: its window comes from its own /config.
  await model("config", { contextWindow: 12_000 });
  await page.locator("#open-settings").click();
  await page.locator("#settings-local").click();
  assert.equal(await page.locator("#set-base-url").inputValue(), "");
  await page.locator("#settings-save").click();
  await page.waitForFunction(() => document.getElementById("endpoint-label").textContent.startsWith("local-coder"));
  assert.equal(await page.locator("#endpoint-label").textContent(), "local-coder @ local model · 12,000-token window");
  assert.equal(await page.locator("#stats").getAttribute("data-threshold"), String(12_000 - 2_250));
  await page.reload();
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  assert.match(await page.locator("#endpoint-label").textContent(), /^local-coder @ local model/);
});

test("pi session files: import shows the whole session with its dividers, the model view pi's context; export gives a pi file", async () => {
  const page = await openDemo();
  await page.locator("#import-file").setInputFiles(fixture("pi-before-compaction.jsonl"));
  await page.waitForFunction(() => document.querySelectorAll("#conversation > li").length > 900, null, { timeout: 30_000 });
  const roles = await page.locator("#conversation > li").evaluateAll((rows) => rows.map((r) => r.dataset.role));
  // fixtures/README.md: 992 messages, two of them compaction summaries
  assert.equal(roles.filter((r) => r === "compactionDivider").length, 2);
  assert.equal(roles.length, 992);
  assert.equal(await page.locator("#session-list > li").count(), 2);
  await page.locator("#toggle-model-view").click();
  // pi's buildSessionContext gives 446 messages, the summary first
  assert.equal(await page.locator("#model-count").getAttribute("data-messages"), "446");
  assert.equal(await page.locator("#model-list > li").first().getAttribute("data-summary"), "true");
  assert.equal(await page.locator("#stats").evaluate((s) => s.classList.contains("over")), true, "far over a 16k window");
  await page.screenshot({ path: join(RESULTS, "demo-imported.png") });

  const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#export-session").click()]);
  const path = join(tmp, "export.jsonl");
  await download.saveAs(path);
  const lines = readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[0].type, "session");
  assert.equal(lines[0].version, 3);
  assert.equal(lines.filter((e) => e.type === "compaction").length, 2);
  assert.equal(lines.filter((e) => e.type === "message").length, 990);
});

test("two tabs on one session: what one tab adds shows up in the other", async () => {
  const page = await openDemo();
  const other = await openSecondTab();
  assert.equal(await other.evaluate(() => window.demo.session.id), await currentId(page), "both opened the same session");

  await send(page, "read src/shared.rs");
  await other.waitForFunction(() => document.querySelector("#conversation > li.user")?.textContent.includes("read src/shared.rs"), null, { timeout: 15_000 });
  await other.waitForFunction(() => document.querySelectorAll("#conversation > li").length === window.demo.session.messages.length && window.demo.session.messages.at(-1)?.stopReason === "stop");
  assert.equal(await other.locator("#conversation > li").count(), await page.locator("#conversation > li").count());
  await other.waitForFunction(() => /changed in another tab/.test(document.getElementById("notices").textContent));

  // The second tab continues the session without a conflict.
  await send(other, "now run the tests");
  await page.waitForFunction(() => document.querySelector("#conversation")?.textContent.includes("now run the tests"), null, { timeout: 15_000 });
  assert.equal(await other.locator("#notices .notice.error").count(), 0);
  const stored = await page.evaluate(async () => (await window.demo.store.load(window.demo.session.id)).filter((m) => m.role === "user").length);
  assert.equal(stored, 2);
});

test("two tabs send at once: the tab whose save was refused reloads with its own turn added, nothing lost or doubled", async () => {
  const page = await openDemo();
  const other = await openSecondTab();
  await send(page, "read src/shared.rs");
  await other.waitForFunction(() => window.demo.session?.messages.length === 4 && document.body.dataset.busy === "false", null, { timeout: 15_000 });
  const id = await currentId(page);

  // Both runs overlap: the first to save wins, the other's saves are refused (ConflictError).
  await model("config", { delayMs: 40 });
  const settled = (p) => p.evaluate(() => Number(document.body.dataset.settled ?? 0));
  const [a, b] = [await settled(page), await settled(other)];
  await page.locator("#input").fill("read src/store.rs please");
  await other.locator("#input").fill("read src/cache.rs");
  await Promise.all([page.locator("#input").press("Enter"), other.locator("#input").press("Enter")]);
  const idle = (p, n) => p.waitForFunction((m) => Number(document.body.dataset.settled ?? 0) > m && document.body.dataset.busy === "false", n, { timeout: 60_000, polling: 50 });
  await Promise.all([idle(page, a), idle(other, b)]);

  const users = (list) => list.filter((m) => m.role === "user").map((m) => m.content[0].text);
  const expected = ["read src/shared.rs", "read src/cache.rs", "read src/store.rs please"];
  const stored = () => page.evaluate(async (sessionId) => window.demo.store.load(sessionId), id);
  // The refused tab reloads the session and adds its turn after the other's (saved), and the first tab shows it.
  const deadline = Date.now() + 15_000;
  while (users(await stored()).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const final = await stored();
  assert.deepEqual([...users(final)].sort(), [...expected].sort(), "each message stored once");
  assert.equal(final.length, 12, "both turns, whole: user, tool call, tool result, answer each");
  for (const p of [page, other]) {
    await p.waitForFunction(
      (n) => window.demo.session?.messages.length === n && document.querySelectorAll("#conversation > li").length === n && document.body.dataset.busy === "false",
      final.length,
      { timeout: 15_000 },
    );
    assert.deepEqual(users(await p.evaluate(() => window.demo.session.messages)), users(final));
  }
});
