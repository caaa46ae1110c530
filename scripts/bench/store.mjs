// The SessionStore benchmark (run at the end of `npm run bench`, or alone:
// `node scripts/bench/store.mjs`, after `node scripts/build.mjs`).
//
// In headless Chromium (the tests' CHROMIUM launch configuration) with a
// persistent profile in a temporary directory, so that IndexedDB is on disk
// as in a real browser profile (an incognito context keeps it in memory).
// Sessions of 500, 2,000 and 5,000 messages are built from the fixtures'
// messages (piSessionToMessages; repeated with fresh timestamps) with a
// compactionSummary where a compaction would have cut; at each size:
//   - one new turn (user + assistant + toolResult appended to a new array)
//     saved with store.save(id, messages), against what pi-web-ui does today
//     (one readwrite transaction that puts the whole session record and its
//     metadata record); the same turns for both, in alternating blocks of
//     back-to-back saves, and then after idle pauses as between turns;
//   - loading: store.loadContext(id) against the whole record's `get`, and
//     store.load(id) for reference.
// The page runs under cross-origin isolation (COOP/COEP), so performance.now()
// is precise to a few microseconds rather than 100 µs. The in-page half is
// scripts/bench/store-page.js. Prints markdown on stdout (progress on
// stderr); a missed target is printed as MISSED, not an exit code.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM } from "../../tests/support/chromium.mjs";
import { DEFAULT_MOUNTS, pageHandler, startServer } from "../serve.mjs";

const SIZES = [500, 2000, 5000];
// Back-to-back saves: ROUNDS blocks of BLOCK timed saves per side (+1
// untimed at the start of each block); then IDLE_SAVES per side, each after
// IDLE_MS without activity.
const ROUNDS = 6;
const BLOCK = 5;
const SAVES = ROUNDS * BLOCK;
const IDLE_SAVES = 8;
const IDLE_MS = 250;
const LOADS = 15;
const FIXTURES = fileURLToPath(new URL("../../fixtures/", import.meta.url));
const PAGE_MODULE = new URL("./store-page.js", import.meta.url);
const PKG_INDEX = new URL("../../pkg/index.js", import.meta.url);
const log = (...a) => console.error(...a);

const ISOLATED = {
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-embedder-policy": "require-corp",
  "cache-control": "no-cache",
};
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>store benchmark</title>
<script type="module">
  window.bench = await import("/bench/store-page.js");
  document.documentElement.dataset.ready = "true";
</script>`;

function handlers() {
  return [
    pageHandler("/bench/store.html", PAGE, ISOLATED),
    (req, res, url) => {
      if (url.pathname === "/bench/store-page.js") {
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", ...ISOLATED });
        res.end(readFileSync(PAGE_MODULE));
        return true;
      }
      return false;
    },
  ];
}

const fmt = (ms) => (ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(2)} ms`);
const cell = (s) => `${fmt(s.median)} (p90 ${fmt(s.p90)})`;
const mb = (b) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const n = (x) => x.toLocaleString("en-US");

/** Runs the benchmark; resolves to the markdown report. */
export async function runStoreBench() {
  if (!existsSync(PKG_INDEX)) throw new Error("pkg/ is not built: run `node scripts/build.mjs` first");
  const started = performance.now();
  const profile = mkdtempSync(join(os.tmpdir(), "agent-compaction-store-bench-"));
  const server = await startServer({
    port: 0,
    handlers: handlers(),
    mounts: [{ prefix: "/fixtures/", dir: FIXTURES }, ...DEFAULT_MOUNTS],
  });
  let context;
  const results = [];
  let env;
  try {
    context = await chromium.launchPersistentContext(profile, { ...CHROMIUM });
    const page = context.pages()[0] ?? (await context.newPage());
    const problems = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`${server.url}bench/store.html`);
    try {
      await page.waitForSelector("html[data-ready=true]", { timeout: 30_000 });
    } catch (e) {
      throw new Error(`the benchmark page did not load: ${problems.join("; ") || e.message}`);
    }
    env = await page.evaluate(() => window.bench.environment());
    const run = `run${Date.now()}`;
    for (const size of SIZES) {
      log(`store: ${n(size)} messages…`);
      const r = await page.evaluate(
        ([size, options]) => window.bench.measure(size, options),
        [size, { rounds: ROUNDS, block: BLOCK, idleSaves: IDLE_SAVES, idleMs: IDLE_MS, loads: LOADS, run }],
      );
      log(
        `  save ${fmt(r.ours.median)} vs put ${fmt(r.whole.median)} (after idle ${fmt(r.idleOurs.median)} vs ${fmt(r.idleWhole.median)}); loadContext ${fmt(r.loadContext.median)} vs get ${fmt(r.get.median)}, load ${fmt(r.load.median)}`,
      );
      results.push(r);
    }
  } finally {
    await context?.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  const elapsed = (performance.now() - started) / 1000;

  const lines = [];
  const p = (s = "") => lines.push(s);
  const cpus = os.cpus();
  const chrome = /(?:Headless)?Chrome\/([\d.]+)/.exec(env.userAgent)?.[1] ?? "unknown";
  p("### SessionStore in Chromium: one turn's save, loading for the LLM");
  p();
  p(
    `Measured by \`npm run bench\` (\`scripts/bench/store.mjs\`) on ${new Date().toISOString().slice(0, 10)}: headless Chromium ${chrome}, ` +
      `IndexedDB on disk (persistent profile), ${cpus[0]?.model ?? "unknown CPU"} × ${cpus.length}, ${os.platform()}/${os.arch()}` +
      `${env.crossOriginIsolated ? "" : " (page not cross-origin isolated: timer resolution 100 µs)"}. Median (p90) of ${SAVES} back-to-back saves and ${LOADS} loads per side and size; run took ${elapsed.toFixed(0)} s.`,
  );
  p();
  p("| messages (JSON size) | save one turn (ours) | whole-record put (pi-web-ui) | speed-up | loadContext (messages read) | whole-record get | load |");
  p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const r of results) {
    p(
      `| ${n(r.size)} (${mb(r.bytes)}) | ${cell(r.ours)} | ${cell(r.whole)} | ${(r.whole.median / r.ours.median).toFixed(0)}× | ${cell(r.loadContext)} (${n(r.contextLength)}) | ${cell(r.get)} | ${cell(r.load)} |`,
    );
  }
  p();
  p(`The same saves after ${IDLE_MS} ms without activity, as between an agent's turns (median (p90) of ${IDLE_SAVES} per side):`);
  p();
  p("| messages | save one turn (ours) | whole-record put (pi-web-ui) | speed-up |");
  p("| ---: | ---: | ---: | ---: |");
  for (const r of results) {
    p(`| ${n(r.size)} | ${cell(r.idleOurs)} | ${cell(r.idleWhole)} | ${(r.idleWhole.median / r.idleOurs.median).toFixed(0)}× |`);
  }
  p();
  const first = results[0];
  const last = results[results.length - 1];
  const speedup = last.whole.median / last.ours.median;
  const flat = last.ours.median / first.ours.median;
  const verdict = (ok) => (ok ? "met" : "**MISSED**");
  p("Targets (back-to-back medians):");
  p();
  p(`- one-turn save at ${n(last.size)} messages ≥ 20× faster than the whole-record put: ${speedup.toFixed(1)}× — ${verdict(speedup >= 20)}`);
  p(`- our save flat from ${n(first.size)} to ${n(last.size)} messages (median ratio within 1.5×): ${flat.toFixed(2)}× — ${verdict(flat <= 1.5)}`);
  for (const r of results) {
    const ratio = r.loadContext.median / r.get.median;
    p(`- loadContext no slower than the whole-record get at ${n(r.size)}: ${fmt(r.loadContext.median)} vs ${fmt(r.get.median)} (${ratio.toFixed(2)}×) — ${verdict(ratio <= 1)}`);
  }
  p();
  p("How it is measured:");
  p();
  p(
    "- Each size is a fresh session built from the fixtures' user, assistant and tool-result messages (`piSessionToMessages`, repeated with fresh timestamps) with one `compactionSummary` " +
      "where `prepareCompaction` cuts (the newest ~20k tokens kept), saved once untimed. A turn appends a user message, an assistant tool call and a tool result to a new array (`concat`, untimed); " +
      "both sides append the same turns in the same order, each to its own array.",
  );
  p(
    `- Back to back: ${ROUNDS} rounds of a block of ${BLOCK + 1} consecutive saves per side (which side goes first alternates), the first save of each block untimed so that neither side is timed while the other's last write is still being finished. ` +
      `After idle: ${IDLE_SAVES} saves per side, each after ${IDLE_MS} ms of nothing (the fixed cost of waking the storage path up is included there). The session grows by ${(first.turnsSaved * 3).toLocaleString("en-US")} messages during a size's run.`,
  );
  p(
    "- *ours*: `await store.save(id, messages)` with the store having saved the previous array (it puts " +
      `${first.recordsPerSave.toFixed(2)} message records per turn on average — the turn's three, and now and then a pack of older messages — and the meta record; the timed saves include those). ` +
      "*whole-record put*: pi-web-ui's `SessionsStore.save` in raw IndexedDB — one readwrite transaction over `sessions` and `sessions-metadata` putting `{ id, title, model, thinkingLevel, messages, createdAt, lastModified }` " +
      "and `{ id, title, createdAt, lastModified, messageCount, usage, thinkingLevel, preview }` (usage sums and preview computed untimed), timed to the transaction's `complete`, as ours is timed to its commit. " +
      `(Timed only to the two puts' success, where pi-web-ui's promise resolves: ${results.map((r) => `${fmt(r.wholeResolved.median)} at ${n(r.size)}`).join(", ")}.)`,
  );
  p(
    "- *loadContext* reads the meta record and the records from the last summary on (packs of older messages and the newest loose ones); *whole-record get* is one `get` of the session record in a readonly transaction; *load* reads every record. " +
      `${LOADS} of each after 2 warm-up rounds, in rotating order. Default transaction durability on both sides; \`performance.now()\` in a cross-origin-isolated page.`,
  );
  return lines.join("\n");
}

const isMain = (() => {
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1] ?? "")).href;
  } catch {
    return false;
  }
})();
if (isMain) console.log(await runStoreBench());
