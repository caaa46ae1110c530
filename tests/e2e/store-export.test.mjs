// SessionStore.exportJsonl read by pi itself: both fixture sessions are
// imported into the store in each engine (Chromium, Firefox, WebKit through
// tests/support/browsers.mjs; real IndexedDB), changed as
// an app changes them (a turn appended, a compaction inserted), exported,
// and the exported file is opened in Node with pi 0.73.1's SessionManager.
// pi's buildSessionContext must give the LLM context that transformContext
// gives on the stored array, and importing the export must give the array.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";

const { SessionManager } = await import(
  new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js", import.meta.url).href
);
const FIXTURES = new URL("../../fixtures/", import.meta.url);
const PAGE = `<!doctype html><meta charset="utf-8"><title>export</title>
<script type="module">window.m = await import("/pkg/index.js");</script>`;

/** The text a message carries, as pi's context would send it. */
const text = (m) =>
  typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? p.thinking ?? p.name ?? "").join("|");

for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser, workDir;
    before(async () => {
      server = await startServer({ port: 0, handlers: [pageHandler("/export.html", PAGE)] });
      browser = await launch(engine);
      workDir = mkdtempSync(join(tmpdir(), "store-export-"));
    });
    after(async () => {
      await browser?.close();
      await server?.close();
      rmSync(workDir, { recursive: true, force: true });
    });

    for (const name of ["pi-large-session.jsonl", "pi-before-compaction.jsonl"]) {
      test(`${name}: imported, changed and exported by the store, pi's buildSessionContext sees what transformContext sees`, async () => {
        const jsonl = readFileSync(new URL(name, FIXTURES), "utf8");
        const page = await browser.newPage();
        await page.goto(`${server.url}export.html`);
        await page.waitForFunction(() => window.m, null, { timeout: 30_000 });
        const out = await page.evaluate(async (jsonl) => {
          const m = window.m;
          const store = await m.SessionStore.open({ name: "export-" + Math.random() });
          const meta = await store.importJsonl(jsonl);
          let messages = await store.load(meta.id);
          const t = Math.max(...messages.map((x) => x.timestamp ?? 0)) + 1000;
          messages = [
            ...messages,
            { role: "user", content: "one more request after the import", timestamp: t },
            { role: "assistant", content: [{ type: "text", text: "done" }], api: "openai-completions", provider: "local", model: "m",
              usage: { input: 150_000, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 150_001, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
              stopReason: "stop", timestamp: t + 1 },
          ];
          const compactor = new m.Compactor({ contextWindow: 200_000, settings: { keepRecentTokens: 20_000 } });
          messages = (await compactor.compact(messages)).messages;
          await store.save(meta.id, messages);
          const exported = await store.exportJsonl(meta.id);
          const again = await store.importJsonl(exported);
          const reimported = await store.load(again.id);
          const stored = await store.load(meta.id);
          const context = m.transformContext(stored);
          // Equal as values: the same keys and values, in any key order.
          const canonical = (v) =>
            Array.isArray(v) ? v.map(canonical)
            : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]))
            : v;
          return {
            exported,
            context: JSON.parse(JSON.stringify(context)),
            roundTrip: JSON.stringify(canonical(reimported)) === JSON.stringify(canonical(stored)),
            newId: again.id !== meta.id,
          };
        }, jsonl);
        await page.close();

        assert.equal(out.roundTrip, true, "importJsonl(exportJsonl(s)) loads s");
        const file = join(workDir, name);
        writeFileSync(file, out.exported);
        const pi = SessionManager.open(file, workDir).buildSessionContext().messages;
        assert.equal(pi.length, out.context.length, "same number of messages in the context");
        for (let i = 0; i < pi.length; i++) {
          const [ours, theirs] = [out.context[i], pi[i]];
          assert.equal(theirs.role, ours.role, `context[${i}].role`);
          if (ours.role === "compactionSummary" || ours.role === "branchSummary") {
            // pi keeps the file-list tags (and a branch preamble) in its text.
            assert.ok(theirs.summary.includes(ours.summary), `context[${i}]: pi's summary holds ours`);
          } else {
            assert.equal(text(theirs), text(ours), `context[${i}] text`);
            assert.equal(theirs.timestamp, ours.timestamp, `context[${i}].timestamp`);
          }
        }
        assert.equal(out.context[0].role, "compactionSummary", "the new compaction starts the context");
      });
    }

    test("a session whose model is not a \"provider/modelId\" key is exported without it, and pi reads the file", async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}export.html`);
      await page.waitForFunction(() => window.m, null, { timeout: 30_000 });
      const out = await page.evaluate(async () => {
        const m = window.m;
        const store = await m.SessionStore.open({ name: "export-model-" + Math.random() });
        const messages = [{ role: "user", content: "hello", timestamp: 1_750_000_000_000 }];
        // createSession takes any model string; a pi file whose model change
        // has an empty provider is imported as "/modelId".
        const created = await store.createSession({ model: "gpt-4o" });
        await store.save(created.id, messages);
        const piFile = [
          { type: "session", version: 3, id: "model-file", timestamp: "2025-06-15T00:00:00.000Z", cwd: "/w" },
          { type: "message", id: "a", parentId: null, timestamp: "2025-06-15T00:00:01.000Z", message: messages[0] },
          { type: "model_change", id: "b", parentId: "a", timestamp: "2025-06-15T00:00:02.000Z", provider: "", modelId: "local-model" },
        ].map((e) => JSON.stringify(e)).join("\n");
        const imported = await store.importJsonl(piFile);
        const exports = [];
        for (const meta of [created, imported]) {
          try {
            exports.push({ model: meta.model, jsonl: await store.exportJsonl(meta.id), loaded: await store.load(meta.id) });
          } catch (e) {
            exports.push({ model: meta.model, error: `${e.name}: ${e.message}` });
          }
        }
        store.close();
        return exports;
      });
      await page.close();
      assert.deepEqual(out.map((e) => e.model), ["gpt-4o", "/local-model"]);
      for (const [i, e] of out.entries()) {
        assert.equal(e.error, undefined, `export ${i} does not fail`);
        assert.ok(!e.jsonl.includes('"model_change"'), `export ${i} names no model`);
        const file = join(workDir, `model-${i}.jsonl`);
        writeFileSync(file, e.jsonl);
        const pi = SessionManager.open(file, workDir).buildSessionContext().messages;
        assert.deepEqual(pi.map(text), e.loaded.map(text), `pi reads export ${i}`);
      }
    });
  });
}
