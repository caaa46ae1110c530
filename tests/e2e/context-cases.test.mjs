// The model's view through the store, in each engine (real IndexedDB): every
// case of the table the other adapters share (tests/support/context-cases.mjs:
// pins, clearing markers, failed attempts, split turns) is saved, then read
// back with `loadContext` by a store opened in another page, which never read
// the session: the pinned messages before the last summary, then the summary
// on. The model's context of that array is the whole array's
// (`transformContext`), and what the model is then sent (`convertToLlm`,
// failed attempts left out at the provider as pi-ai does) is the case's
// expected view.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";
import { CASES, labelOf } from "../support/context-cases.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>context cases</title>
<script type="module">window.m = await import("/pkg/index.js");</script>`;

const atProvider = (messages) => messages.filter((m) => !(m.role === "assistant" && (m.stopReason === "error" || m.stopReason === "aborted")));

for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser;
    before(async () => {
      server = await startServer({ port: 0, handlers: [pageHandler("/context-cases.html", PAGE)] });
      browser = await launch(engine);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    const open = async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}context-cases.html`);
      await page.waitForFunction(() => window.m, null, { timeout: 30_000 });
      return page;
    };

    test("loadContext in a store that never read the session gives every shared case's view", async () => {
      const name = "context-cases-" + Math.random().toString(36).slice(2);
      const writer = await open();
      const ids = await writer.evaluate(
        async ({ name, cases }) => {
          const store = await window.m.SessionStore.open({ name });
          const ids = [];
          for (const c of cases) {
            const meta = await store.createSession({ title: c.name });
            await store.save(meta.id, c.messages);
            ids.push(meta.id);
          }
          store.close();
          return ids;
        },
        { name, cases: CASES },
      );
      await writer.close();
      const reader = await open();
      const out = await reader.evaluate(
        async ({ name, ids, cases }) => {
          const m = window.m;
          const store = await m.SessionStore.open({ name });
          const out = [];
          for (let i = 0; i < ids.length; i++) {
            const context = m.transformContext(await store.loadContext(ids[i]));
            out.push({
              llm: m.convertToLlm(context),
              sameAsTransform: JSON.stringify(context) === JSON.stringify(m.transformContext(cases[i].messages)),
            });
          }
          store.close();
          return out;
        },
        { name, ids, cases: CASES },
      );
      await reader.close();
      CASES.forEach((c, i) => {
        assert.deepEqual(atProvider(out[i].llm).map(labelOf), c.expected, c.name);
        assert.ok(out[i].sameAsTransform, `${c.name}: the model's context of loadContext is the saved array's`);
      });
    });
  });
}
