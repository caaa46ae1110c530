// The README's "any other loop, by hand" quick start, run as written: the
// code block is cut out of README.md (compiled by tsc, tests/support/readme.mjs),
// served as a module to a page in each
// engine (tests/support/browsers.mjs: Chromium, Firefox, WebKit; real
// IndexedDB, real fetch to the local model of the demo), and driven until it
// has compacted. Checks what a user of the
// example relies on: every message kept and saved, one summary inserted,
// the next request to the model starting with it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { filesHandler, readmeExample } from "../support/readme.mjs";
import { startServer } from "../../scripts/serve.mjs";
import { createLocalModel } from "../../scripts/local-model.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>example</title>
<script type="importmap">{ "imports": { "agent-compaction": "/pkg/index.js" } }</script>
<script type="module">window.example = await import("/example.js");</script>`;

for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser, local;
    before(async () => {
      const code = await readmeExample("manual-loop");
      local = createLocalModel({ delayMs: 0 });
      const pages = filesHandler({ "/example.js": [code, "text/javascript"], "/example.html": [PAGE, "text/html"] });
      server = await startServer({ port: 0, handlers: [pages, local.handle] });
      browser = await launch(engine);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    test("the README's by-hand loop talks to the model, compacts past the threshold and saves every message", async () => {
      const page = await browser.newPage();
      const errors = [];
      page.onProblem((p) => p.startsWith("pageerror: ") && errors.push(p));
      await page.goto(`${server.url}example.html`);
      await page.waitForFunction(() => window.example?.send, null, { timeout: 30_000 });

      const outcome = await page.evaluate(async () => {
        const asked = [];
        let last;
        for (let i = 0; i < 14; i++) {
          const question = `question ${i}: please explain ` + "the module layout in detail ".repeat(150);
          asked.push(question);
          last = await window.example.send(question);
        }
        const stored = await last.store.load(last.sessionId);
        const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join(""));
        return {
          asked,
          roles: last.messages.map((m) => m.role),
          storedSame: JSON.stringify(stored) === JSON.stringify(last.messages),
          userTexts: stored.filter((m) => m.role === "user").map(text),
        };
      });
      await page.flush();
      assert.deepEqual(errors, []);
      assert.equal(outcome.storedSame, true, "the store holds exactly the array");
      assert.deepEqual(outcome.userTexts, outcome.asked, "every question is kept, in order");
      const summaries = outcome.roles.filter((r) => r === "compactionSummary").length;
      assert.ok(summaries >= 1, "it compacted");

      const log = local.requests;
      const summaryRequests = log.filter((r) => r.kind === "summary");
      assert.equal(summaryRequests.length, summaries, "one summarizer request per summary");
      const lastChat = log.filter((r) => r.kind === "chat").at(-1);
      assert.match(lastChat.body.messages[0].content, /The conversation history before this point was compacted/);
      assert.ok(lastChat.body.messages.length < outcome.roles.length, "the model no longer sees the summarized messages");
      await page.close();
    });
  });
}
