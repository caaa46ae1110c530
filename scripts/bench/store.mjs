// The SessionStore benchmark, in Chromium, Firefox and WebKit (run at the
// end of `npm run bench`, or alone: `node scripts/bench/store.mjs`, after
// `node scripts/build.mjs`; `ENGINES=firefox` narrows it as in the tests).
//
// Each engine is launched through tests/support/browsers.mjs (Chromium by
// playwright-core, Firefox by puppeteer-core, WebKit by WebKitWebDriver +
// MiniBrowser), Chromium and Firefox with a persistent profile in a temporary
// directory, so that IndexedDB is on disk as in a real browser profile.
// MiniBrowser under WebDriver keeps website data in an ephemeral session
// (WebKit then keeps IndexedDB in memory), so WebKit is measured twice: under
// WebDriver, and as Safari users get it, on disk: MiniBrowser started
// without automation on a data directory of its own (XDG_DATA_HOME), the
// page running the same plan by itself (see `webkitOnDisk`).
//
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
// Then the engine's raw IndexedDB costs without the store (the "floor": a
// small readwrite transaction, a small get, a put and a get of the whole
// session alone), which say why a target is missed where one is.
// The page runs under cross-origin isolation (COOP/COEP) where the engine
// offers it, so performance.now() is as precise as the engine allows. The
// in-page half is scripts/bench/store-page.js; the page runs a plan of jobs
// and posts each result to the server (the driver stays quiet meanwhile).
// Prints markdown on stdout (progress on stderr); a missed target is printed
// as MISSED, not an exit code.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ENGINES, launch, openWebKitOnDisk } from "../../tests/support/browsers.mjs";
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

export const ISOLATED = {
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
  const plan = new URLSearchParams(location.search).get("plan");
  if (plan) window.bench.runPlan(plan);
</script>`;

// Plans by token: the jobs a page runs, and where its reports go.
const plans = new Map();

/** A handler serving the module `file` (a file URL) at `path`, under cross-origin isolation. */
export function moduleHandler(path, file) {
  return (req, res, url) => {
    if (url.pathname !== path) return false;
    res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", ...ISOLATED });
    res.end(readFileSync(file));
    return true;
  };
}

/** The handlers of the plans `runPlan` registers: a page reads its jobs, and posts each result. */
export function planHandlers() {
  return [
    (req, res, url) => {
      if (url.pathname !== "/bench/plan") return false;
      const plan = plans.get(url.searchParams.get("token"));
      res.writeHead(plan ? 200 : 404, { "content-type": "application/json", ...ISOLATED });
      res.end(JSON.stringify(plan ? { jobs: plan.jobs } : { error: "no such plan" }));
      return true;
    },
    async (req, res, url) => {
      if (url.pathname !== "/bench/report" || req.method !== "POST") return false;
      let body = "";
      for await (const chunk of req) body += chunk;
      const msg = JSON.parse(body);
      plans.get(msg.token)?.report(msg);
      res.writeHead(200, { "content-type": "text/plain", ...ISOLATED });
      res.end("ok");
      return true;
    },
  ];
}

function handlers() {
  return [pageHandler("/bench/store.html", PAGE, ISOLATED), moduleHandler("/bench/store-page.js", PAGE_MODULE), ...planHandlers()];
}

/**
 * Registers `jobs` ([kind, args] pairs) under a fresh token and calls
 * `begin(token)` (which makes a page run them); resolves to their results in
 * order. `onResult(index, result)` sees each as it comes. Rejects on a job's
 * error, when `gone()` says the page cannot answer any more, or after
 * `timeoutMs`.
 */
export async function runPlan(jobs, begin, { onResult = () => {}, gone = () => null, timeoutMs = 30 * 60_000 } = {}) {
  const token = `p${Date.now()}${Math.random().toString(36).slice(2, 8)}`;
  const results = [];
  let settle;
  const finished = new Promise((resolve, reject) => (settle = { resolve, reject }));
  plans.set(token, {
    jobs,
    report(msg) {
      if (msg.error) return settle.reject(new Error(`the page's ${jobs[msg.index]?.[0] ?? "plan"} failed: ${msg.error}`));
      results[msg.index] = msg.result;
      onResult(msg.index, msg.result);
      if (results.filter((r) => r !== undefined).length === jobs.length) settle.resolve(results);
    },
  });
  const started = Date.now();
  const watch = setInterval(() => {
    const why = gone();
    if (why) settle.reject(new Error(why));
    else if (Date.now() - started > timeoutMs) settle.reject(new Error(`the benchmark page did not finish within ${timeoutMs / 60_000} min`));
  }, 500);
  try {
    await begin(token);
    return await finished;
  } finally {
    clearInterval(watch);
    plans.delete(token);
  }
}

export const fmt = (ms) => (ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(2)} ms`);
const cell = (s) => `${fmt(s.median)} (p90 ${fmt(s.p90)})`;
export const mb = (b) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const n = (x) => x.toLocaleString("en-US");

const FLOOR_REPS = 15;

/** The plan every engine runs. */
function jobs(run) {
  return [
    ["environment", []],
    ...SIZES.map((size) => ["measure", [size, { rounds: ROUNDS, block: BLOCK, idleSaves: IDLE_SAVES, idleMs: IDLE_MS, loads: LOADS, run }]]),
    ["floor", [{ sizes: SIZES, reps: FLOOR_REPS, run }]],
  ];
}

function progress(label) {
  return (index, r) => {
    if (!r || r.size === undefined) {
      if (r?.bySize) log(`  ${label} floor: small readwrite tx ${fmt(r.putOne.median)}, turn-sized tx ${fmt(r.putTurn.median)}, small get ${fmt(r.getOne.median)}`);
      return;
    }
    log(
      `  ${label} ${n(r.size)}: save ${fmt(r.ours.median)} vs put ${fmt(r.whole.median)} (after idle ${fmt(r.idleOurs.median)} vs ${fmt(r.idleWhole.median)}); loadContext ${fmt(r.loadContext.median)} (raw ${fmt(r.rawContext.median)}) vs get ${fmt(r.get.median)}, load ${fmt(r.load.median)}`,
    );
  };
}

/** One engine through browsers.mjs: resolves to { env, results, floor, storage }. */
async function driven(engine, server) {
  const profile = mkdtempSync(join(os.tmpdir(), `agent-compaction-store-bench-${engine}-`));
  let browser;
  try {
    browser = await launch(engine, { profile });
    const page = await browser.newPage();
    const problems = [];
    page.onProblem((p) => problems.push(p));
    await page.goto(`${server.url}bench/store.html`);
    try {
      await page.waitForFunction(() => document.documentElement.dataset.ready === "true", undefined, { timeout: 60_000 });
    } catch (e) {
      await page.flush();
      throw new Error(`${engine}: the benchmark page did not load: ${problems.join("; ") || e.message}`);
    }
    const [env, ...rest] = await runPlan(jobs(`run${Date.now()}`), (token) => page.evaluate((t) => window.bench.runPlan(t), token), {
      onResult: progress(engine),
      gone: () => (browser.pid && !existsPid(browser.pid) ? `${engine}: the browser process ended` : null),
    });
    return {
      engine,
      env,
      results: rest.slice(0, SIZES.length),
      floor: rest[SIZES.length],
      storage: browser.can.persistentProfile
        ? "IndexedDB on disk (persistent profile)"
        : "IndexedDB of MiniBrowser's WebDriver session, which is ephemeral (kept in memory)",
    };
  } finally {
    await browser?.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

export function existsPid(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * WebKit with IndexedDB on disk: MiniBrowser without `--automation` (so not
 * through WebDriver, whose sessions are ephemeral), its data and cache
 * directories (XDG_DATA_HOME, XDG_CACHE_HOME) in a temporary directory, under
 * `xvfb-run -a` when there is no display. The page is opened with
 * `?plan=<token>` and runs the plan by itself, posting each result.
 */
async function webkitOnDisk(server) {
  const dir = mkdtempSync(join(os.tmpdir(), "agent-compaction-store-bench-webkit-disk-"));
  let browser;
  try {
    const [env, ...rest] = await runPlan(
      jobs(`run${Date.now()}`),
      async (token) => {
        browser = await openWebKitOnDisk(`${server.url}bench/store.html?plan=${token}`, { dataDir: dir });
      },
      {
        onResult: progress("webkit (on disk)"),
        gone: () => (browser?.exited() ? `webkit (on disk): ${browser.exited()}` : null),
      },
    );
    const files = listFiles(dir).filter((f) => /IndexedDB/i.test(f));
    if (files.length === 0) throw new Error(`webkit (on disk): no IndexedDB files under ${dir}: the data did not go to disk`);
    return {
      engine: "webkit",
      onDisk: true,
      env,
      results: rest.slice(0, SIZES.length),
      floor: rest[SIZES.length],
      storage: "IndexedDB on disk (MiniBrowser without automation, its own data directory)",
    };
  } finally {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function listFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out;
}

export const ENGINE_NAMES = { chromium: "Chromium", firefox: "Firefox", webkit: "WebKit" };

export function browserVersion(engine, env) {
  if (engine === "chromium") return `headless Chromium ${/(?:Headless)?Chrome\/([\d.]+)/.exec(env.userAgent)?.[1] ?? "unknown"}`;
  if (engine === "firefox") return `headless Firefox ${/Firefox\/([\d.]+)/.exec(env.userAgent)?.[1] ?? "unknown"}`;
  let gtk = "";
  try {
    gtk = execFileSync("dpkg-query", ["-W", "-f=${Version}", "libwebkit2gtk-4.1-0"], { encoding: "utf8" }).split("-")[0];
  } catch {
    // not a Debian system
  }
  return `WebKitGTK ${gtk || "unknown"} MiniBrowser (AppleWebKit/${/AppleWebKit\/([\d.]+)/.exec(env.userAgent)?.[1] ?? "?"}) under Xvfb`;
}

/** The markdown section of one engine's run. */
function section(run, elapsed) {
  const { engine, env, results, floor } = run;
  const lines = [];
  const p = (s = "") => lines.push(s);
  const cpus = os.cpus();
  const load = os.loadavg().map((x) => x.toFixed(1)).join(", ");
  p(`### SessionStore in ${ENGINE_NAMES[engine]}${run.onDisk ? " (on disk)" : ""}: one turn's save, loading for the LLM`);
  p();
  const timer = env.crossOriginIsolated
    ? `cross-origin-isolated page (timer step ${(env.timerStepMs * 1000).toFixed(0)} µs)`
    : `page not cross-origin isolated (timer step ${(env.timerStepMs * 1000).toFixed(0)} µs)`;
  p(
    `Measured by \`npm run bench\` (\`scripts/bench/store.mjs\`) on ${new Date().toISOString().slice(0, 10)}: ${browserVersion(engine, env)}, ` +
      `${run.storage}, ${cpus[0]?.model ?? "unknown CPU"} × ${cpus.length} (load average ${load} at the end), ${os.platform()}/${os.arch()}, ${timer}. ` +
      `Median (p90) of ${SAVES} back-to-back saves and ${LOADS} loads per side and size; this engine's run took ${elapsed.toFixed(0)} s.`,
  );
  p();
  p("| messages (JSON size) | save one turn (ours) | whole-record put (pi-web-ui) | speed-up | loadContext (messages / records read) | its reads in raw IndexedDB | whole-record get | load (records) |");
  p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const r of results) {
    p(
      `| ${n(r.size)} (${mb(r.bytes)}) | ${cell(r.ours)} | ${cell(r.whole)} | ${(r.whole.median / r.ours.median).toFixed(0)}× | ${cell(r.loadContext)} (${n(r.contextLength)} / ${n(r.records.context)}) | ${cell(r.rawContext)} | ${cell(r.get)} | ${cell(r.load)} (${n(r.records.all)}) |`,
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
  p(
    `The engine's IndexedDB alone (no store; median (p90) of ${FLOOR_REPS}): a readwrite transaction putting one ${(floor.smallBytes / 1024).toFixed(1)} KB message ${cell(floor.putOne)}; ` +
      `one putting a turn's three messages and a meta record ${cell(floor.putTurn)}; a readonly get of one message ${cell(floor.getOne)}; ` +
      floor.bySize.map((b) => `the ${n(b.size)}-message session as one record: put ${cell(b.put)}, get ${cell(b.get)}`).join("; ") +
      ".",
  );
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
  return { text: lines.join("\n"), first, results };
}

function method(first, runs) {
  const lines = [];
  const p = (s = "") => lines.push(s);
  p("How it is measured (every engine alike):");
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
      `${runs.map((r) => `${r.results[0].recordsPerSave.toFixed(2)}`).join(" / ")} message records per turn on average in ${runs.map((r) => ENGINE_NAMES[r.engine] + (r.onDisk ? " on disk" : "")).join(" / ")} — the turn's three, and now and then a pack of older messages — and the meta record; the timed saves include those). ` +
      "*whole-record put*: pi-web-ui's `SessionsStore.save` in raw IndexedDB — one readwrite transaction over `sessions` and `sessions-metadata` putting `{ id, title, model, thinkingLevel, messages, createdAt, lastModified }` " +
      "and `{ id, title, createdAt, lastModified, messageCount, usage, thinkingLevel, preview }` (usage sums and preview computed untimed), timed to the transaction's `complete`, as ours is timed to its commit. " +
      `(Timed only to the two puts' success, where pi-web-ui's promise resolves, at ${SIZES.map(n).join(" / ")}: ` +
      runs.map((r) => `${ENGINE_NAMES[r.engine]}${r.onDisk ? " on disk" : ""} ${r.results.map((x) => fmt(x.wholeResolved.median)).join(" / ")}`).join("; ") +
      ".)",
  );
  p(
    "- *loadContext* reads the meta record and the records from the last summary on (packs of older messages and the newest loose ones); *whole-record get* is one `get` of the session record in a readonly transaction; *its reads in raw IndexedDB* is what loadContext asks of IndexedDB, alone (a connection of its own, one readonly transaction: a `get` of the session record and one `getAll` of the records from its `contextKey` on; no lock, no unpacking, no crossing into wasm); *load* reads every record. " +
      `${LOADS} of each after 2 warm-up rounds, in rotating order. Default transaction durability on both sides; the page posts its results to the benchmark's server, so no driver talks to it while it measures.`,
  );
  return lines.join("\n");
}

/**
 * Runs the benchmark in `engines` (default: $ENGINES, else all three; WebKit
 * both under WebDriver and on disk); resolves to the markdown report.
 */
export async function runStoreBench({ engines = ENGINES } = {}) {
  if (!existsSync(PKG_INDEX)) throw new Error("pkg/ is not built: run `node scripts/build.mjs` first");
  const server = await startServer({
    port: 0,
    handlers: handlers(),
    mounts: [{ prefix: "/fixtures/", dir: FIXTURES }, ...DEFAULT_MOUNTS],
  });
  const sections = [];
  const runs = [];
  try {
    for (const engine of engines) {
      const variants = engine === "webkit" ? [() => driven(engine, server), () => webkitOnDisk(server)] : [() => driven(engine, server)];
      for (const variant of variants) {
        const started = performance.now();
        log(`store benchmark: ${engine}${variant === variants[1] ? " (on disk)" : ""}…`);
        const run = await variant();
        const s = section(run, (performance.now() - started) / 1000);
        runs.push(run);
        sections.push(s.text);
      }
    }
  } finally {
    await server.close();
  }
  return [...sections, method(runs[0].results[0], runs)].join("\n\n");
}

const isMain = (() => {
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1] ?? "")).href;
  } catch {
    return false;
  }
})();
if (isMain) console.log(await runStoreBench());
