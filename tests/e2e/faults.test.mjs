// Fault trials: a tab closed or crashed at a random moment while
// an app keeps saving a session, and while it compacts it (a real
// Compactor with a summarizer that answers after a random delay, then a
// save), 20 trials each, in each engine (Chromium, Firefox, WebKit through
// tests/support/browsers.mjs) with IndexedDB on disk (WebKit's automation
// session keeps it in memory). Crashing: Chromium's DevTools Page.crash;
// Firefox's web content processes ended by pid; WebKit cannot crash a page
// under WebDriver and go on (WebKitWebDriver ends the session and its
// ephemeral storage), so its crash trials run without a driver: MiniBrowser
// on a data directory of its own (IndexedDB on disk), the page running from
// its URL and reporting over HTTP, its WebKitWebProcess SIGKILLed by pid
// (the browser and its network process, which holds IndexedDB, live on),
// and a new MiniBrowser on the same directory reading what is stored
// (tests/support/browsers.mjs openWebKitOnDisk).
//
// The page reports to the test, by a POST to /report on its own origin
// (answered once recorded, so the page goes on only after the test knows),
// the fingerprint of every array it starts saving and of every save that
// resolved. After the
// tab is gone, a new tab loads the session and it must be exactly one of
// the arrays the page tried to save — the last one whose save resolved, or
// one started after it — so no message a completed save returned for is
// missing and nothing half-written shows. Prints
// `ROBUSTNESS fault-trials=<n> lost=<n>` for the robustness report.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch, openWebKitOnDisk } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";

const TRIALS = Number(process.env.TRIALS ?? 20);

const PAGE = `<!doctype html><meta charset="utf-8"><title>faults</title>
<script type="module">
  const m = await import("/pkg/index.js");
  // FNV-1a over the JSON text: equal arrays, equal fingerprints.
  const fingerprint = (messages) => {
    const text = JSON.stringify(messages);
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
    return messages.length + ":" + h.toString(16);
  };
  const usage = (input) => ({ input, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: input + 20,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
  let clock = 1_750_000_000_000;
  const turn = (label, size) => [
    { role: "user", content: label + ": " + "please change the parser ".repeat(size / 25), timestamp: clock++ },
    { role: "assistant", content: [{ type: "text", text: "done with " + label + " " + "x".repeat(size) }],
      api: "openai-completions", provider: "local", model: "m", usage: usage(9_000), stopReason: "stop", timestamp: clock++ },
  ];
  window.fingerprint = fingerprint;
  const report = (db, event) =>
    fetch("/report?db=" + encodeURIComponent(db), { method: "POST", body: JSON.stringify(event) }).then((r) => r.text());
  window.setup = async (db) => {
    const store = await m.SessionStore.open({ name: db });
    const { id } = await store.createSession({ title: "faults" });
    let messages = [];
    for (let i = 0; i < 40; i++) messages = messages.concat(turn("seed " + i, 400));
    await store.save(id, messages);
    store.close();
    return { id, fingerprint: fingerprint(messages) };
  };
  // Keeps changing the session until the tab dies.
  window.run = async (db, id, mode) => {
    const store = await m.SessionStore.open({ name: db });
    const compactor = new m.Compactor({
      contextWindow: 12_000,
      settings: { reserveTokens: 2_000, keepRecentTokens: 3_000 },
      fallback: "none",
      summarize: (req) => new Promise((resolve) => setTimeout(() => resolve("## Goal\\nkeep going " + Math.random()), Math.random() * 30)),
    });
    let messages = await store.load(id);
    for (let round = 0; ; round++) {
      messages = messages.concat(mode === "save" ? Array.from({ length: 60 }, (_, k) => turn("r" + round + "." + k, 300)).flat() : turn("r" + round, 300));
      if (mode === "compaction") messages = (await compactor.compact(messages, { reason: "threshold" }))?.messages ?? messages;
      const print = fingerprint(messages);
      await report(db, { type: "start", print });
      await store.save(id, messages);
      await report(db, { type: "done", print });
    }
  };
  window.load = async (db, id) => {
    const store = await m.SessionStore.open({ name: db });
    const messages = await store.load(id);
    const meta = (await store.list()).find((s) => s.id === id);
    store.close();
    return { print: fingerprint(messages), count: meta.messageCount, length: messages.length };
  };
  window.ready = true;
  // Run from the URL, with no driver (WebKit on disk, openWebKitOnDisk):
  // ?auto=run sets up and keeps saving, reporting "setup", "start", "done";
  // ?auto=load reports what is stored as "loaded".
  const auto = new URLSearchParams(location.search);
  if (auto.get("auto") === "run") {
    const db = auto.get("db");
    const { id, fingerprint } = await window.setup(db);
    await report(db, { type: "setup", id, print: fingerprint });
    window.run(db, id, auto.get("mode"));
  } else if (auto.get("auto") === "load") {
    const db = auto.get("db");
    await report(db, { type: "loaded", ...(await window.load(db, auto.get("id"))) });
  }
</script>`;

// The page's reports, by database (one per trial).
const listeners = new Map();
async function reports(req, res, url) {
  if (url.pathname !== "/report") return false;
  let body = "";
  for await (const chunk of req) body += chunk;
  listeners.get(url.searchParams.get("db"))?.(JSON.parse(body));
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("ok");
  return true;
}

let trials = 0;
let lost = 0;
for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser, dir;
    before(async () => {
      server = await startServer({ port: 0, handlers: [reports, pageHandler("/faults.html", PAGE)] });
      dir = mkdtempSync(join(os.tmpdir(), "faults-"));
      browser = await launch(engine, { profile: dir });
    });
    after(async () => {
      await browser?.close();
      await server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    async function open() {
      const page = await browser.newPage();
      await page.goto(`${server.url}faults.html`);
      await page.waitForFunction(() => window.ready, null, { timeout: 30_000 });
      return page;
    }

    /**
     * One WebKit crash trial without a driver (see the top): returns the
     * outcome, "last completed" or "in flight", or fails as a trial does.
     */
    async function crashOnDisk(mode, trial, trace) {
      const db = `faults-${mode}-${trial}-disk`;
      const dataDir = mkdtempSync(join(os.tmpdir(), "faults-webkit-disk-"));
      const started = [];
      let completed = null;
      let setup;
      let loaded;
      listeners.set(db, (event) => {
        if (event.type === "setup") {
          setup = event;
          started.push(event.print);
          completed = event.print;
        } else if (event.type === "start") started.push(event.print);
        else if (event.type === "done") completed = event.print;
        else if (event.type === "loaded") loaded = event;
      });
      const until = async (what, ready, handle) => {
        const deadline = Date.now() + 60_000;
        while (!ready()) {
          const gone = handle.exited();
          if (gone) throw new Error(`trial ${trial}: ${what}: ${gone}`);
          if (Date.now() > deadline) throw new Error(`trial ${trial}: ${what}: no report within 60 s`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      try {
        const writer = await openWebKitOnDisk(`${server.url}faults.html?auto=run&db=${db}&mode=${mode}`, { dataDir });
        let how;
        try {
          await until("setup", () => setup, writer);
          await new Promise((r) => setTimeout(r, 50 + Math.random() * 600));
          how = await writer.crash();
        } finally {
          await writer.close();
        }
        const completedAtDeath = completed;
        const startedAtDeath = started.slice();
        trace(how);
        const reader = await openWebKitOnDisk(`${server.url}faults.html?auto=load&db=${db}&id=${encodeURIComponent(setup.id)}`, { dataDir });
        try {
          await until("load", () => loaded, reader);
        } finally {
          await reader.close();
        }
        trials++;
        const since = startedAtDeath.indexOf(completedAtDeath);
        const allowed = started.slice(Math.max(since, 0));
        const ok = allowed.includes(loaded.print);
        if (!ok) lost++;
        assert.ok(ok, `trial ${trial} (webkit on disk, ${how}): the stored session (${loaded.print}) is not the last completed save (${completedAtDeath}) nor one started after it (${allowed.join(", ")})`);
        assert.equal(loaded.count, loaded.length, "the session's meta agrees with its records");
        return loaded.print === completedAtDeath ? "last completed" : "in flight";
      } finally {
        listeners.delete(db);
        rmSync(dataDir, { recursive: true, force: true });
      }
    }

    for (const mode of ["save", "compaction"]) {
      test(`tab closed or crashed mid-${mode}, ${TRIALS} random moments: the session is a state the app saved, never older than the last completed save`, { timeout: 600_000 }, async () => {
        const outcomes = { "last completed": 0, "in flight": 0 };
        let crashes = 0;
        for (let trial = 0; trial < TRIALS; trial++) {
          const db = `faults-${mode}-${trial}`;
          const trace = (...a) => process.env.TRACE && console.log(`[${mode} ${trial}]`, ...a);
          if (trial % 2 && !browser.can.crash && browser.can.crashOnDisk) {
            outcomes[await crashOnDisk(mode, trial, trace)]++;
            crashes++;
            continue;
          }
          const page = await open();
          trace("opened");
          const { id, fingerprint } = await page.evaluate((db) => window.setup(db), db);
          const started = [fingerprint];
          let completed = fingerprint;
          listeners.set(db, (event) => {
            if (event.type === "start") started.push(event.print);
            else completed = event.print;
          });
          page.evaluate(([db, id, mode]) => window.run(db, id, mode), [db, id, mode]).catch(() => {});
          await new Promise((r) => setTimeout(r, 50 + Math.random() * 600));
          const completedAtDeath = completed;
          const startedAtDeath = started.slice();
          if (trial % 2 && browser.can.crash) {
            await browser.crash(page);
          } else {
            await page.close();
          }
          trace("closed");
          const reader = await open();
          trace("reader");
          const loaded = await reader.evaluate(([db, id]) => window.load(db, id), [db, id]);
          await reader.close();
          trials++;
          // Reports after the moment of death may still arrive: a save that the
          // page saw resolve is at least as new as completedAtDeath.
          const since = startedAtDeath.indexOf(completedAtDeath);
          const allowed = started.slice(Math.max(since, 0));
          const ok = allowed.includes(loaded.print);
          if (!ok) lost++;
          assert.ok(ok, `trial ${trial}: the stored session (${loaded.print}) is not the last completed save (${completedAtDeath}) nor one started after it (${allowed.join(", ")})`);
          assert.equal(loaded.count, loaded.length, "the session's meta agrees with its records");
          outcomes[loaded.print === completedAtDeath ? "last completed" : "in flight"]++;
        }
        listeners.clear();
        console.log(
          `${engine} mid-${mode}: ${JSON.stringify(outcomes)}${browser.can.crash ? "" : crashes ? ` (${crashes} trials crashed MiniBrowser's web process, IndexedDB on disk, no driver; the others closed the tab)` : " (every trial closed the tab: no crash in this engine)"}`,
        );
    for (const note of browser.notes.splice(0)) console.log(`${engine}: ${note}`);
      });
    }
  });
}

after(() => console.log(`ROBUSTNESS fault-trials=${trials} lost=${lost}`));
