// The clearing tier's marker in the store, in each engine (Chromium, Firefox,
// WebKit; real IndexedDB): a threshold compaction that clears old tool output
// inserts one toolOutputCleared marker; the store saves it like any message
// (load and loadContext give it back, a later turn saves on top), exports it
// as a custom entry that pi 0.73.1's own loader reads in Node, and imports it
// back; undo (removeLastCompaction) saved with replace gives the array back.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";

const { SessionManager } = await import(
  new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js", import.meta.url).href
);
const PAGE = `<!doctype html><meta charset="utf-8"><title>clearing</title>
<script type="module">window.m = await import("/pkg/index.js");</script>`;

for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser, workDir;
    before(async () => {
      server = await startServer({ port: 0, handlers: [pageHandler("/clearing.html", PAGE)] });
      browser = await launch(engine);
      workDir = mkdtempSync(join(tmpdir(), "clearing-store-"));
    });
    after(async () => {
      await browser?.close();
      await server?.close();
      rmSync(workDir, { recursive: true, force: true });
    });

    test("a clearing marker is stored, reloaded, exported for pi and imported back", async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}clearing.html`);
      await page.waitForFunction(() => window.m, null, { timeout: 30_000 });
      const out = await page.evaluate(async () => {
        const m = window.m;
        let clock = 1_700_000_000_000;
        const messages = [];
        for (let t = 0; t < 10; t++) {
          const id = `call_${t}`;
          messages.push(
            { role: "user", content: `request ${t}`, timestamp: clock++ },
            { role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: `/f${t}` } }],
              api: "openai-completions", provider: "local", model: "m", stopReason: "toolUse", timestamp: clock++ },
            { role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: "x".repeat(80_000) }],
              isError: false, timestamp: clock++ },
            { role: "assistant", content: [{ type: "text", text: `done ${t}` }], api: "openai-completions", provider: "local",
              model: "m", stopReason: "stop", timestamp: clock++ },
          );
        }
        const store = await m.SessionStore.open({ name: "clearing-" + Math.random() });
        const meta = await store.createSession({ title: "clearing" });
        await store.save(meta.id, messages);
        const compactor = new m.Compactor({ contextWindow: 200_000, estimator: "pi", summarize: async () => { throw new Error("not called"); } });
        const r = await compactor.compact(messages, { reason: "threshold" });
        await store.save(meta.id, r.messages);
        const loaded = await store.load(meta.id);
        const context = await store.loadContext(meta.id);
        // A later turn saved on top.
        const more = [...loaded, { role: "user", content: "next", timestamp: clock++ }];
        await store.save(meta.id, more);
        const reloaded = await store.load(meta.id);
        const exported = await store.exportJsonl(meta.id);
        const imported = await store.load((await store.importJsonl(exported)).id);
        // Undo: the marker goes (saved with replace), the outputs come back.
        const undone = m.removeLastCompaction(reloaded);
        await store.save(meta.id, undone, { replace: true });
        const afterUndo = await store.load(meta.id);
        const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
        return {
          tier: r.tier,
          marker: r.marker,
          markerIndex: r.markerIndex,
          loadedSame: same(loaded, r.messages),
          contextSame: same(context, m.transformContext(r.messages)),
          reloadedSame: same(reloaded, more),
          importedSame: same(imported, more),
          undoneSame: same(afterUndo, [...messages, more[more.length - 1]]),
          placeholders: m.convertToLlm(reloaded).filter((x) => x.role === "toolResult" && x.content[0].text.startsWith("[Output of read cleared")).length,
          exported,
          expectedContext: JSON.parse(JSON.stringify([...messages, more[more.length - 1]])),
        };
      });
      await page.close();
      assert.equal(out.tier, "clear");
      assert.equal(out.marker.role, "toolOutputCleared");
      assert.equal(out.marker.toolCallIds.length, 6);
      assert.equal(out.placeholders, 6);
      assert.ok(out.loadedSame, "load gives the saved array");
      assert.ok(out.contextSame, "loadContext gives the model's context");
      assert.ok(out.reloadedSame, "a later save on top");
      assert.ok(out.importedSame, "import of the export");
      assert.ok(out.undoneSame, "undo saved");
      // pi's own loader reads the export; the marker is a custom entry pi
      // keeps out of the model's context.
      const file = join(workDir, `${engine}.jsonl`);
      writeFileSync(file, out.exported);
      const manager = SessionManager.open(file, workDir);
      const custom = manager.getEntries().filter((e) => e.type === "custom");
      assert.equal(custom.length, 1);
      assert.deepEqual(custom[0].data, out.marker);
      assert.deepEqual(manager.buildSessionContext().messages, out.expectedContext);
    });
  });
}
