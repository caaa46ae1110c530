// Compaction in the background with the store, in each engine (Chromium,
// Firefox, WebKit; real IndexedDB): a compaction starts on a copy of the
// messages, the session goes on and is saved meanwhile, and the summary
// that arrives goes in at its cut, the later messages after it, saved as
// one change (load and loadContext give it back). A save of it on top of
// another tab's newer version is a ConflictError that writes nothing.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>background</title>
<script type="module">window.m = await import("/pkg/index.js");</script>`;

for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser;
    before(async () => {
      server = await startServer({ port: 0, handlers: [pageHandler("/background.html", PAGE)] });
      browser = await launch(engine);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    test("a summary from the background is saved at its cut with the messages added meanwhile; on another tab's newer version it is a ConflictError", async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}background.html`);
      await page.waitForFunction(() => window.m, null, { timeout: 30_000 });
      const out = await page.evaluate(async () => {
        const m = window.m;
        let clock = 1_700_000_000_000;
        const turn = (t) => [
          { role: "user", content: `request ${t} ` + "r".repeat(4_000), timestamp: clock++ },
          { role: "assistant", content: [{ type: "text", text: `done ${t}` }], api: "openai-completions", provider: "local",
            model: "m", stopReason: "stop", timestamp: clock++ },
        ];
        const messages = Array.from({ length: 8 }, (_, t) => turn(t)).flat();
        const db = "background-" + Math.random();
        const store = await m.SessionStore.open({ name: db });
        const { id } = await store.createSession({ title: "background" });
        await store.save(id, messages);
        let release;
        const gate = new Promise((r) => (release = r));
        const compactor = new m.Compactor({
          contextWindow: 12_000, estimator: "pi", settings: { reserveTokens: 2_000, keepRecentTokens: 2_000 },
          summarize: async () => (await gate, "## Goal\nbackground summary"),
        });
        const next = compactor.backgroundNext(messages, 0.8);
        compactor.compactInBackground(messages);
        // The session goes on and is saved while the summary is written.
        const grown = messages.concat(turn(8));
        await store.save(id, grown);
        const before = (await store.list()).find((s) => s.id === id).revision;
        release();
        await compactor.waitForBackground();
        const result = compactor.takeBackground(grown);
        await store.save(id, result.messages);
        const after = (await store.list()).find((s) => s.id === id).revision;
        const loaded = await store.load(id);
        const context = await store.loadContext(id);

        // Another tab saves a newer version while a second summary is written.
        const otherStore = await m.SessionStore.open({ name: db });
        const mine = result.messages.concat(turn(9), turn(10), turn(11));
        await store.save(id, mine);
        let release2;
        const gate2 = new Promise((r) => (release2 = r));
        const second = new m.Compactor({
          contextWindow: 12_000, estimator: "pi", settings: { reserveTokens: 2_000, keepRecentTokens: 2_000 },
          summarize: async () => (await gate2, "## Goal\nsecond summary"),
        });
        second.compactInBackground(mine);
        const theirs = (await otherStore.load(id)).concat(turn(12));
        await otherStore.save(id, theirs);
        release2();
        await second.waitForBackground();
        const late = second.takeBackground(mine);
        let conflict = null;
        try {
          await store.save(id, late.messages);
        } catch (e) {
          conflict = e.name;
        }
        const reloaded = await store.load(id);
        const text = (m) => (typeof m.content === "string" ? m.content.slice(0, 12) : m.role);
        const outcome = {
          next,
          revisions: [before, after],
          firstKept: result.firstKeptIndex,
          loaded: loaded.map((m) => m.role),
          lastLoaded: text(loaded.at(-2)),
          summaryAt: loaded.findIndex((m) => m.role === "compactionSummary"),
          contextFirst: context[0].role,
          contextSummary: context[0].summary,
          conflict,
          reloadedSummaries: reloaded.filter((m) => m.role === "compactionSummary").length,
          reloadedLength: reloaded.length,
          theirsLength: theirs.length,
        };
        compactor.free();
        second.free();
        store.close();
        otherStore.close();
        return outcome;
      });
      assert.equal(out.next, "start");
      assert.equal(out.revisions[1], out.revisions[0] + 1, "the summary is one save");
      assert.equal(out.summaryAt, out.firstKept, "at the cut chosen at the start");
      assert.equal(out.loaded.length, 19, "the 18 messages and the summary");
      assert.equal(out.lastLoaded, "request 8 rr", "the turn added meanwhile is after it");
      assert.deepEqual([out.contextFirst, out.contextSummary], ["compactionSummary", "## Goal\nbackground summary"]);
      assert.equal(out.conflict, "ConflictError");
      assert.equal(out.reloadedLength, out.theirsLength, "the other tab's version, untouched");
      assert.equal(out.reloadedSummaries, 1, "no second summary written");
    });
  });
}
