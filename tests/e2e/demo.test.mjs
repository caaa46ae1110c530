// End-to-end test of the demo page (www/) served by scripts/serve.mjs, in
// headless Chromium through playwright-core. Needs a built pkg/
// (`node scripts/build.mjs`) and /usr/bin/chromium.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM } from "../support/chromium.mjs";
import { startServer } from "../../scripts/serve.mjs";
import { SAMPLE_SESSION } from "../../www/sample-session.js";


const fixture = (name) => fileURLToPath(new URL(`../../../shared/fixtures/${name}`, import.meta.url));
const PREAMBLE = "The conversation history before this point was compacted into the following summary:";

let server;
let browser;
let page;
const problems = []; // uncaught page errors and console errors on the main page

/** Watch a page for uncaught errors and console errors. */
function watch(p, sink) {
  p.on("pageerror", (err) => sink.push(`pageerror: ${err.message}`));
  p.on("console", (msg) => {
    if (msg.type() === "error") sink.push(`console.error: ${msg.text()}`);
  });
  p.on("requestfailed", (req) => sink.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  p.on("response", (res) => {
    if (res.status() >= 400) sink.push(`HTTP ${res.status()}: ${res.url()}`);
  });
}

async function openDemo(sink) {
  const p = await browser.newPage();
  watch(p, sink);
  await p.goto(server.url);
  await p.waitForSelector("html[data-ready=true]", { timeout: 10_000 });
  return p;
}

/** The state of both views, read from the DOM (long texts expanded). */
function views(p) {
  return p.evaluate(() => {
    // long texts are cut to a preview: expand them all to read the full text
    for (const more of document.querySelectorAll(".views button.more")) more.click();
    const rows = (id) => [...document.querySelectorAll(`#${id} > li`)];
    const display = rows("display-list");
    const llm = rows("llm-list");
    const text = (li) => [...li.querySelectorAll(".block-text")].map((n) => n.textContent).join("\n");
    return {
      displayRoles: display.map((li) => li.dataset.role),
      displayIndices: display.map((li) => Number(li.dataset.index)),
      displayText: display.map(text).join("\n"),
      displayCount: Number(document.getElementById("display-count").dataset.messages),
      dividerCount: Number(document.getElementById("display-count").dataset.dividers),
      llmRoles: llm.map((li) => li.dataset.role),
      llmTexts: llm.map(text),
      llmCount: Number(document.getElementById("llm-count").dataset.messages),
      llmCountText: document.getElementById("llm-count").textContent,
      error: document.getElementById("error").hidden ? "" : document.getElementById("error").textContent,
    };
  });
}

before(async () => {
  server = await startServer({ port: 0 });
  browser = await chromium.launch(CHROMIUM);
  page = await openDemo(problems);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test("server: MIME types, 404 and no directory traversal", async () => {
  const get = (path) => fetch(new URL(path, server.url));
  const types = {
    "/": "text/html",
    "/app.js": "text/javascript",
    "/style.css": "text/css",
    "/pkg/index.js": "text/javascript",
    "/pkg/agent_compaction_bg.wasm": "application/wasm",
    "/pkg/package.json": "application/json",
  };
  for (const [path, type] of Object.entries(types)) {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get("content-type"), new RegExp(`^${type}`), path);
    await res.arrayBuffer();
  }
  for (const path of ["/nope.js", "/pkg/nope.wasm"]) assert.equal((await get(path)).status, 404, path);
  // fetch() normalizes "..", so send raw request lines.
  const { request } = await import("node:http");
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
    "/../package.json",
    "/pkg/../../package.json",
    "/pkg/..%2f..%2fpackage.json",
    "/%2e%2e/package.json",
    "/..%5cpackage.json",
    "/pkg/%2e%2e/%2e%2e/Cargo.toml",
    "/pkg/%00",
  ]) {
    const status = await raw(path);
    assert.ok(status >= 400 && status < 500, `${path} → ${status}`);
  }
});

test("sample session: display view shows every non-summary message and one divider", async () => {
  const v = await views(page);
  const summaryAt = SAMPLE_SESSION.findIndex((m) => m.role === "compactionSummary");
  const nonSummary = SAMPLE_SESSION.filter((m) => m.role !== "compactionSummary");
  assert.equal(v.error, "");
  assert.equal(v.displayCount, nonSummary.length);
  assert.equal(v.dividerCount, 1);
  assert.deepEqual(
    v.displayRoles,
    SAMPLE_SESSION.map((m) => (m.role === "compactionSummary" ? "compactionDivider" : m.role)),
  );
  assert.equal(v.displayRoles.indexOf("compactionDivider"), summaryAt);
  // the divider never shows the summary text
  assert.ok(!v.displayText.includes("## Goal"), "summary text leaked into the display view");
  assert.ok(!v.displayText.includes(PREAMBLE));
});

test("sample session: LLM view starts with the summary and has the right count", async () => {
  const v = await views(page);
  const summaryAt = SAMPLE_SESSION.findIndex((m) => m.role === "compactionSummary");
  const expected = SAMPLE_SESSION.length - summaryAt; // the summary and everything after it
  assert.equal(v.llmCount, expected);
  assert.equal(v.llmRoles.length, expected);
  assert.match(v.llmCountText, new RegExp(`^${expected} messages`));
  assert.equal(v.llmRoles[0], "user");
  const first = v.llmTexts[0];
  assert.ok(first.startsWith(PREAMBLE), first.slice(0, 120));
  assert.ok(first.includes("<compaction_summary>\n## Goal\nFix sign-up rejecting"));
  assert.ok(first.includes("\n\n<read-files>\nsrc/auth/validate.ts\n</read-files>"));
  assert.ok(first.includes("\n\n<modified-files>\nsrc/auth/validate.ts\n</modified-files>\n</compaction_summary>"));
  assert.deepEqual(
    v.llmRoles.slice(1),
    SAMPLE_SESSION.slice(summaryAt + 1).map((m) => m.role),
  );
});

test("Insert summary here: the LLM view shrinks, Undo restores it", async () => {
  const before = await views(page);
  // the assistant message that runs the tests (a later row, after the existing summary)
  const target = SAMPLE_SESSION.findIndex((m) => m.role === "assistant" && m.content.some((b) => b.name === "bash"));
  assert.ok(target > SAMPLE_SESSION.findIndex((m) => m.role === "compactionSummary"));
  await page.locator(`#display-list > li[data-index="${target}"] button.insert`).click();

  const v = await views(page);
  assert.equal(v.error, "");
  const expected = 1 + SAMPLE_SESSION.length - target; // new summary + messages from the target on
  assert.equal(v.llmCount, expected);
  assert.ok(v.llmCount < before.llmCount);
  assert.ok(v.llmTexts[0].startsWith(PREAMBLE));
  // the new summary covers the messages since the previous summary: the test file was written there
  assert.ok(v.llmTexts[0].includes("<modified-files>\ntests/validate.test.ts\n</modified-files>"), v.llmTexts[0]);
  assert.ok(v.llmTexts[1].includes("npm test"), "the LLM view continues at the clicked message");
  // display: still every message, now with two dividers, the new one just before the clicked row
  assert.equal(v.displayCount, before.displayCount);
  assert.equal(v.dividerCount, 2);
  const clickedRow = v.displayIndices.indexOf(target + 1); // the array grew by one before it
  assert.equal(v.displayRoles[clickedRow - 1], "compactionDivider");
  assert.match(await page.locator("#status").textContent(), new RegExp(`LLM view ${before.llmCount} → ${expected}`));

  // A summary inserted before the last one changes nothing the model sees.
  await page.locator(`#display-list > li[data-index="2"] button.insert`).click();
  const v2 = await views(page);
  assert.equal(v2.dividerCount, 3);
  assert.equal(v2.llmCount, expected);

  await page.locator("#undo").click();
  await page.locator("#undo").click();
  const restored = await views(page);
  assert.equal(restored.llmCount, before.llmCount);
  assert.equal(restored.dividerCount, 1);
  assert.deepEqual(restored.llmTexts, before.llmTexts);
  assert.ok(await page.locator("#undo").isDisabled());
});

test("loading pi-large-session.jsonl shows 914 messages in both views", async () => {
  await page.locator("#file-input").setInputFiles(fixture("pi-large-session.jsonl"));
  await page.waitForFunction(() => document.getElementById("source").textContent.startsWith("pi-large-session.jsonl"));
  const v = await views(page);
  assert.equal(v.error, "");
  assert.equal(v.displayCount, 914);
  assert.equal(v.dividerCount, 0);
  assert.equal(v.displayRoles.length, 914);
  assert.equal(v.llmCount, 914);
  assert.equal(v.llmRoles.length, 914);
  const count = (roles, role) => roles.filter((r) => r === role).length;
  // fixtures/README.md: 88 user, 453 assistant, 373 tool results
  assert.deepEqual(
    [count(v.llmRoles, "user"), count(v.llmRoles, "assistant"), count(v.llmRoles, "toolResult")],
    [88, 453, 373],
  );

  // Insert a summary before the last user message: the LLM view becomes that tail.
  const lastUser = v.displayRoles.lastIndexOf("user");
  await page.locator("#display-list > li.row").nth(lastUser).locator("button.insert").click();
  const after = await views(page);
  assert.equal(after.llmCount, 1 + (914 - lastUser));
  assert.equal(after.displayCount, 914);
  assert.equal(after.dividerCount, 1);
});

test("loading pi-before-compaction.jsonl matches pi's own context (446 messages)", async () => {
  await page.locator("#file-input").setInputFiles(fixture("pi-before-compaction.jsonl"));
  await page.waitForFunction(() => document.getElementById("source").textContent.startsWith("pi-before-compaction.jsonl"));
  const v = await views(page);
  assert.equal(v.error, "");
  assert.equal(v.displayCount, 990);
  assert.equal(v.dividerCount, 2);
  // fixtures/README.md: pi's buildSessionContext gives 446 messages, the summary first
  assert.equal(v.llmCount, 446);
  assert.ok(v.llmTexts[0].startsWith(`${PREAMBLE}\n\n<compaction_summary>\n# Context Checkpoint`));
});

test("message text is rendered as text, never as HTML", async () => {
  const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
  const jsonl = [
    { type: "session", id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/" },
    { type: "message", timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: evil, timestamp: 1 } },
    { type: "compaction", timestamp: "2025-01-01T00:00:02.000Z", summary: `</compaction_summary>${evil}`, tokensBefore: 5 },
    { type: "message", timestamp: "2025-01-01T00:00:03.000Z", message: { role: "user", content: [{ type: "text", text: evil }], timestamp: 3 } },
  ]
    .map((e) => JSON.stringify(e))
    .join("\n");
  await page.locator("#file-input").setInputFiles({ name: "evil.jsonl", mimeType: "application/jsonl", buffer: Buffer.from(jsonl) });
  await page.waitForFunction(() => document.getElementById("source").textContent.startsWith("evil.jsonl"));
  const v = await views(page);
  assert.equal(v.error, "");
  assert.equal(v.displayCount, 2);
  assert.equal(v.dividerCount, 1);
  assert.equal(v.llmCount, 2);
  assert.ok(v.displayText.includes(evil));
  assert.ok(v.llmTexts[0].includes(`&lt;/compaction_summary&gt;${evil}`));
  assert.equal(await page.evaluate(() => document.querySelectorAll(".views img, .views script").length), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);

  await page.locator("#load-sample").click();
  assert.equal((await views(page)).llmCount, SAMPLE_SESSION.length - SAMPLE_SESSION.findIndex((m) => m.role === "compactionSummary"));
});

test("errors from the library are shown in the error area", async () => {
  const seen = [];
  const p = await openDemo(seen);
  try {
    const jsonl = '{"type":"message","timestamp":"2025-01-01T00:00:00.000Z","message":null}\n';
    await p.locator("#file-input").setInputFiles({ name: "bad.jsonl", mimeType: "application/jsonl", buffer: Buffer.from(jsonl) });
    await p.waitForSelector("#error:not([hidden])");
    const text = await p.locator("#error").textContent();
    assert.match(text, /agent-compaction failed on this session: .*messages\[0\]/);
    assert.equal(seen.filter((s) => s.startsWith("pageerror")).length, 0, seen.join("\n"));
    // loading the sample again clears it
    await p.locator("#load-sample").click();
    assert.equal(await p.locator("#error").isHidden(), true);
  } finally {
    await p.close();
  }
});

test("no page errors or console errors on the demo page", () => {
  assert.deepEqual(problems, []);
});
