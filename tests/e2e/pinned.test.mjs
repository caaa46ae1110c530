// Pinned messages through the store, in each engine (Chromium, Firefox,
// WebKit through tests/support/browsers.mjs; real IndexedDB): a session with
// a pinned rule is compacted, saved, and loaded again by a store opened in
// another page; the loaded rule is still pinned and the model's view (the
// stateless transformContext and a new Compactor's hooks) has it right after
// the summary; a second compaction keeps it there, and the session's pi
// export and import keep the flag.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>pinned</title>
<script type="module">window.m = await import("/pkg/index.js");</script>`;
const RULE = "Pinned rule: never modify files under vendor/.";

for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser;
    before(async () => {
      server = await startServer({ port: 0, handlers: [pageHandler("/pinned.html", PAGE)] });
      browser = await launch(engine);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    const open = async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}pinned.html`);
      await page.waitForFunction(() => window.m, null, { timeout: 30_000 });
      return page;
    };

    test("a pinned message: compacted, saved, reloaded in another page, still pinned and sent after the summary", async () => {
      const name = "pinned-" + Math.random().toString(36).slice(2);
      const first = await open();
      const saved = await first.evaluate(
        async ({ name, rule }) => {
          const m = window.m;
          let t = 1_750_000_000_000;
          const turn = (i) => [
            { role: "user", content: `request ${i}: ` + "u".repeat(4000), timestamp: t++ },
            { role: "assistant", content: [{ type: "text", text: `answer ${i}: ` + "a".repeat(4000) }],
              api: "openai-completions", provider: "local", model: "m",
              usage: { input: 2000 * (i + 1), output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 2000 * (i + 1) + 10,
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
              stopReason: "stop", timestamp: t++ },
          ];
          let messages = [{ role: "user", content: rule, timestamp: t++, pinned: true }];
          for (let i = 0; i < 8; i++) messages.push(...turn(i));
          const store = await m.SessionStore.open({ name });
          const meta = await store.createSession({ title: "pinned" });
          await store.save(meta.id, messages);
          const compactor = new m.Compactor({ contextWindow: 100_000, settings: { keepRecentTokens: 3_000 } });
          const out = await compactor.compact(messages);
          await store.save(meta.id, out.messages);
          store.close();
          return { id: meta.id, firstKept: out.firstKeptIndex };
        },
        { name, rule: RULE },
      );
      await first.close();

      const second = await open();
      const seen = await second.evaluate(
        async ({ name, id, rule }) => {
          const m = window.m;
          const store = await m.SessionStore.open({ name });
          let messages = await store.load(id);
          const view = (ctx) => ctx.map((x) => [x.role, x.pinned === true, typeof x.content === "string" ? x.content.slice(0, 60) : ""]);
          const compactor = new m.Compactor({ contextWindow: 100_000, settings: { keepRecentTokens: 3_000 } });
          const hooks = compactor.agentHooks();
          const stateless = m.transformContext(messages);
          const hooked = await hooks.transformContext(messages);
          const tokensBefore = compactor.contextTokens(messages);
          // More turns, and a second compaction.
          let t = Math.max(...messages.map((x) => x.timestamp)) + 1;
          for (let i = 0; i < 6; i++) {
            messages = [...messages, { role: "user", content: `later ${i}: ` + "v".repeat(4000), timestamp: t++ }];
          }
          messages = (await compactor.compact(messages)).messages;
          await store.save(id, messages);
          const again = await store.load(id);
          const afterSecond = m.transformContext(again);
          const reimported = await store.load((await store.importJsonl(await store.exportJsonl(id))).id);
          store.close();
          return {
            pinnedStored: messages[0].pinned === true && messages[0].content === rule,
            stateless: view(stateless),
            sameObjects: stateless.every((x, i) => x === hooked[i]) && stateless.length === hooked.length,
            tokensBefore,
            afterSecond: view(afterSecond),
            summaries: again.filter((x) => x.role === "compactionSummary").length,
            reimportedPinned: reimported.filter((x) => x.pinned === true).map((x) => x.content),
          };
        },
        { name, id: saved.id, rule: RULE },
      );
      await second.close();

      assert.equal(seen.pinnedStored, true, "the flag is stored with the message");
      assert.deepEqual(seen.stateless[0].slice(0, 2), ["compactionSummary", false]);
      assert.deepEqual(seen.stateless[1], ["user", true, RULE]);
      assert.equal(seen.sameObjects, true, "the Compactor's hooks give the same view");
      assert.ok(seen.tokensBefore > Math.ceil(RULE.length / 4));
      assert.equal(seen.summaries, 2);
      assert.deepEqual(seen.afterSecond[0].slice(0, 2), ["compactionSummary", false]);
      assert.deepEqual(seen.afterSecond[1], ["user", true, RULE], "still right after the second summary");
      assert.equal(seen.afterSecond.filter((x) => x[1]).length, 1);
      assert.deepEqual(seen.reimportedPinned, [RULE], "pi export and import keep the flag");
    });
  });
}
