// The engine quirks the SessionStore handles, in pages of each
// engine (Chromium, Firefox, WebKit through tests/support/browsers.mjs;
// ENGINES= narrows them):
// - a page whose `indexedDB` is gone before the package loads (private
//   modes, a privacy setting): SessionStore.open fails with an
//   OpenFailedError that says storage is unavailable and why, while the
//   Compactor and the flat-array functions work as ever;
// - a sandboxed iframe (an opaque origin), where the browser itself refuses
//   IndexedDB with a SecurityError: the same, from the engine's own error;
// - a lock another tab never lets go: the call fails with LockTimeoutError
//   after lockTimeoutMs, writes nothing, and works once the tab is gone;
// - the browser clearing the site's IndexedDB under an open store (it
//   closes the connection, its close event): the store reopens on the next
//   call instead of failing for good. Chromium only: DevTools'
//   Storage.clearDataForOrigin; no Firefox or WebKit driver here clears a
//   site's data.
// The sandboxed iframe in Chromium needs a launch flag (Local Network
// Access), so that one test launches Chromium through playwright-core
// itself. Needs a built pkg/ (`node scripts/build.mjs`) and the browsers
// scripts/setup.sh installs.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { chromium } from "playwright-core";
import { ENGINES, launch } from "../support/browsers.mjs";
import { CHROMIUM } from "../support/chromium.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";

const PKG = fileURLToPath(new URL("../../pkg/", import.meta.url));

// A plain page (the scenarios import /pkg/index.js themselves).
const PAGE = `<!doctype html><meta charset="utf-8"><title>store quirks</title><p>quirks</p>`;

// `indexedDB` removed before anything else runs, as where a browser or a
// privacy setting disables it.
const NO_IDB_PAGE = `<!doctype html><meta charset="utf-8"><title>no indexedDB</title>
<script>
  delete window.indexedDB;
  if (typeof indexedDB !== "undefined") Object.defineProperty(window, "indexedDB", { value: undefined });
</script>
<script type="module">
  window.results = (async () => {
    const m = await import("/pkg/index.js");
    return await (${String(useWithoutStore)})(m);
  })();
</script>`;

// A page that runs the same in a sandboxed iframe (opaque origin): the
// package comes from /cors-pkg/, served with CORS for it.
function sandboxPage(origin) {
  const inner = `<!doctype html><script type="module">
    const report = (v) => parent.postMessage(v, "*");
    try {
      const m = await import("${origin}cors-pkg/index.js");
      report(await (${String(useWithoutStore)})(m));
    } catch (e) {
      report({ loadError: String(e && e.stack || e) });
    }
  </script>`;
  return `<!doctype html><meta charset="utf-8"><title>sandboxed</title>
<script>
  window.results = new Promise((resolve) => addEventListener("message", (e) => resolve(e.data)));
</script>
<iframe sandbox="allow-scripts" srcdoc="${inner.replaceAll("&", "&amp;").replaceAll('"', "&quot;")}"></iframe>`;
}

// Runs in the page: SessionStore.open's error, then the rest of the package.
async function useWithoutStore(m) {
  const out = { indexedDB: typeof indexedDB };
  try {
    await m.SessionStore.open({ name: "quirks-none" });
    out.open = "opened";
  } catch (e) {
    out.open = { name: e?.name, message: e?.message, isError: e instanceof Error };
  }
  const usage = (input) => ({
    input, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: input + 10,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  });
  const messages = [];
  for (let i = 0; i < 30; i++) {
    messages.push({ role: "user", content: "question " + i + " " + "q".repeat(2000), timestamp: 2 * i + 1 });
    messages.push({
      role: "assistant", content: [{ type: "text", text: "answer " + i + " " + "a".repeat(2000) }],
      api: "openai-completions", provider: "local", model: "m", usage: usage((i + 1) * 1000),
      stopReason: "stop", timestamp: 2 * i + 2,
    });
  }
  out.estimate = m.estimateContextTokens(messages).tokens;
  out.transformed = m.transformContext(messages).length;
  out.llm = m.convertToLlm(messages).length;
  const compactor = new m.Compactor({
    contextWindow: 32_000,
    // pi's estimate: the cut falls between turns, so the summary is the
    // summarizer's one answer (no split turn).
    estimator: "pi",
    settings: { reserveTokens: 4000, keepRecentTokens: 8000 },
    summarize: async () => "## Goal\nsummarized without a store",
  });
  out.needs = compactor.needsCompaction(messages);
  const result = await compactor.compact(messages);
  out.summary = result?.summary?.summary;
  out.kept = result ? result.messages.length : null;
  out.firstKept = result?.firstKeptIndex;
  return out;
}

function checkWithoutStore(out, why) {
  assert.equal(out.open?.name, "OpenFailedError", JSON.stringify(out.open));
  assert.equal(out.open.isError, true);
  assert.match(out.open.message, /^SessionStore\.open: could not open database "quirks-none": IndexedDB storage is unavailable here/);
  assert.match(out.open.message, why);
  assert.match(out.open.message, /private browsing/);
  assert.match(out.open.message, /the rest of the package works without a store/);
  assert.ok(out.estimate > 30_000, `estimate ${out.estimate}`);
  assert.equal(out.transformed, 60);
  assert.equal(out.llm, 60);
  assert.equal(out.needs, true);
  assert.equal(out.summary, "## Goal\nsummarized without a store");
  assert.equal(out.kept, 61, "every message kept, the summary inserted");
  assert.ok(out.firstKept > 0);
}

// The pkg/ files with CORS, for the sandboxed iframe's opaque origin.
const TYPES = { ".js": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };
async function corsPkg(req, res, url) {
  if (!url.pathname.startsWith("/cors-pkg/")) return false;
  const rel = normalize(decodeURIComponent(url.pathname.slice("/cors-pkg/".length)));
  if (rel.startsWith("..")) {
    res.writeHead(403).end();
    return true;
  }
  try {
    const body = await readFile(join(PKG, rel));
    res.writeHead(200, {
      "content-type": TYPES[extname(rel)] ?? "application/octet-stream",
      "access-control-allow-origin": "*",
    });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
  return true;
}

let server;
before(async () => {
  server = await startServer({
    port: 0,
    handlers: [
      pageHandler("/quirks.html", PAGE),
      pageHandler("/no-idb.html", NO_IDB_PAGE),
      corsPkg,
      // The sandboxed iframe's page (it names the server's own origin).
      (req, res, url) => {
        if (url.pathname !== "/sandboxed.html") return false;
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(sandboxPage(server.url));
        return true;
      },
    ],
  });
});
after(async () => {
  await server?.close();
});

for (const engine of ENGINES) {
  describe(engine, () => {
    let browser;
    before(async () => {
      browser = await launch(engine);
    });
    after(async () => {
      await browser?.close();
    });

    test("without indexedDB, open fails clearly and the Compactor and flat-array functions work", async () => {
      const page = await browser.newPage();
      try {
        await page.goto(`${server.url}no-idb.html`);
        const out = await page.evaluate(() => window.results);
        assert.equal(out.indexedDB, "undefined", "indexedDB is gone before the package loads");
        checkWithoutStore(out, /this environment has no indexedDB/);
      } finally {
        await page.close();
      }
    });

    test("where the browser refuses IndexedDB (an opaque origin), open fails with its SecurityError and the rest works", async (t) => {
      // Chromium refuses an opaque origin's requests to the loopback address
      // (Local Network Access) unless told otherwise; the test server is there.
      const own = engine === "chromium" ? await chromium.launch({ ...CHROMIUM, args: [...CHROMIUM.args, "--disable-features=LocalNetworkAccessChecks"] }) : null;
      const page = own ? await own.newPage() : await browser.newPage();
      try {
        await page.goto(`${server.url}sandboxed.html`);
        const out = await page.evaluate(() => window.results);
        assert.equal(out.loadError, undefined, out.loadError);
        if (out.open === "opened") {
          t.skip(`${engine} lets an opaque origin use IndexedDB`);
          return;
        }
        assert.equal(out.indexedDB, "object", "indexedDB is there: it is the browser that refuses");
        checkWithoutStore(out, /refused to open it \((SecurityError|InvalidStateError)/);
        t.diagnostic(`${engine}: ${out.open.message}`);
      } finally {
        await (own ? own.close() : page.close());
      }
    });

    test("a lock another tab never lets go times the call out, nothing is written, and it works once the tab is gone", async () => {
      const a = await browser.newPage();
      const b = await browser.newPage();
      try {
        await a.goto(`${server.url}quirks.html`);
        await b.goto(`${server.url}quirks.html`);
        await a.evaluate(async () => {
          const { SessionStore } = await import("/pkg/index.js");
          await new Promise((r) => { const q = indexedDB.deleteDatabase("quirks-lock"); q.onsuccess = q.onerror = q.onblocked = r; });
          const store = await SessionStore.open({ name: "quirks-lock", lockTimeoutMs: 400 });
          await store.createSession({ id: "s", title: "locked" });
          window.m0 = { role: "user", content: "kept", timestamp: 1 };
          await store.save("s", [window.m0]);
          window.store = store;
          await new Promise((r) => setTimeout(r, 300)); // its own lease let go
        });
        // Tab B takes the session's lock and never lets go (as a page kept in
        // Safari's back/forward cache does).
        await b.evaluate(() => new Promise((held) => {
          navigator.locks.request("agent-compaction:quirks-lock:s", () => { held(); return new Promise(() => {}); });
        }));
        const timedOut = await a.evaluate(async () => {
          const t0 = performance.now();
          const settle = (p) => p.then((v) => ({ ok: true, v }), (e) => ({ ok: false, name: e.name, message: e.message }));
          const save = await settle(store.save("s", [m0, { role: "user", content: "lost?", timestamp: 2 }]));
          const ms = performance.now() - t0;
          let ran = false;
          const locked = await settle(store.withSessionLock("s", () => { ran = true; }));
          const loaded = await store.load("s");
          return { save, ms, locked, ran, loaded: loaded.map((m) => m.content) };
        });
        assert.equal(timedOut.save.ok, false);
        assert.equal(timedOut.save.name, "LockTimeoutError", timedOut.save.message);
        assert.match(timedOut.save.message, /did not come within 400 ms, so nothing was done/);
        assert.ok(timedOut.ms >= 350 && timedOut.ms < 5000, `${timedOut.ms} ms`);
        assert.equal(timedOut.locked.name, "LockTimeoutError");
        assert.equal(timedOut.ran, false);
        assert.deepEqual(timedOut.loaded, ["kept"]);
        // Tab B goes away: its lock with it.
        await b.close();
        const after = await a.evaluate(async () => {
          const meta = await store.save("s", [m0, { role: "user", content: "now", timestamp: 3 }]);
          const loaded = (await store.load("s")).map((m) => m.content);
          store.close();
          await new Promise((r) => setTimeout(r, 600));
          return { revision: meta.revision, loaded };
        });
        assert.deepEqual(after, { revision: 2, loaded: ["kept", "now"] });
        assert.equal(await a.evaluate(() => "still answering"), "still answering");
      } finally {
        await b.close();
        await a.close();
      }
    });

    test("the browser clearing the site's IndexedDB under an open store: the next call reopens", async (t) => {
      if (engine !== "chromium") {
        t.skip(`no ${engine} driver here clears a site's data (Chromium: DevTools' Storage.clearDataForOrigin)`);
        return;
      }
      const page = await browser.newPage();
      try {
        await page.goto(`${server.url}quirks.html`);
        await page.evaluate(async () => {
          const { SessionStore } = await import("/pkg/index.js");
          await new Promise((r) => { const q = indexedDB.deleteDatabase("quirks-cleared"); q.onsuccess = q.onerror = q.onblocked = r; });
          window.store = await SessionStore.open({ name: "quirks-cleared" });
          await store.createSession({ id: "s" });
          await store.save("s", [{ role: "user", content: "before", timestamp: 1 }]);
        });
        // What "Clear site data" does: the browser closes every connection to
        // the origin's databases and deletes them.
        const cdp = await browser.context.newCDPSession(page.raw);
        await cdp.send("Storage.clearDataForOrigin", { origin: server.url.replace(/\/$/, ""), storageTypes: "indexeddb" });
        const out = await page.evaluate(async () => {
          const settle = (p) => p.then((v) => ({ ok: true, v }), (e) => ({ ok: false, name: e.name, message: e.message }));
          let list = await settle(store.list());
          // Chromium may still be deleting when the store reopens: the
          // reopening request is then aborted too, and the call fails as a
          // lost connection that changed nothing and says to try again. The
          // next call reopens.
          const lostOnce = !list.ok && list.name === "ConnectionLostError" ? list.message : null;
          if (lostOnce) list = await settle(store.list());
          const created = await settle(store.createSession({ id: "again" }));
          const saved = await settle(store.save("again", [{ role: "user", content: "after", timestamp: 2 }]));
          const loaded = await settle(store.load("again"));
          return { lostOnce, list, created: created.ok, saved: saved.ok, loaded: loaded.ok && loaded.v.map((m) => m.content) };
        });
        if (out.lostOnce) {
          t.diagnostic(`the first call met the clearing still going on: ${out.lostOnce}`);
          assert.match(out.lostOnce, /nothing was changed; try again/);
          assert.equal(out.list.ok, true, "the call after a lost connection reopens the database");
        }
        t.diagnostic(out.list.ok ? "the store reopened the database" : `closed for good: ${out.list.message}`);
        if (out.list.ok) {
          // Closed (the close event) and reopened: the sessions were cleared.
          assert.deepEqual(out.list.v, []);
          assert.equal(out.created, true);
          assert.equal(out.saved, true);
          assert.deepEqual(out.loaded, ["after"]);
        } else {
          // An engine that announces the deletion as a versionchange: closed
          // for good, and says so.
          assert.equal(out.list.name, "StoreClosedError", out.list.message);
          assert.match(out.list.message, /deleted or upgraded/);
        }
      } finally {
        await page.close();
      }
    });
  });
}
