// The history search of the SessionStore, in Chromium, Firefox and WebKit
// (`npm run bench:history-store`, also at the end of `npm run bench`;
// `ENGINES=firefox` narrows the engines, `SIZES=1000,10000` the session
// sizes of the timings).
//
// Each engine runs with IndexedDB on disk: Chromium and Firefox launched
// through tests/support/browsers.mjs with a persistent profile in a
// temporary directory, WebKit as MiniBrowser without automation on a data
// directory of its own (openWebKitOnDisk; under WebDriver, MiniBrowser
// keeps IndexedDB in memory). The page (scripts/bench/history-store-page.js)
// runs one plan after the other and posts its results; between plans it
// reloads, so every search measured as "first" is the first of a new page
// and a new SessionStore.
//
//   1. Probes: the fidelity session's steps (generateSession() of
//      fidelity.mjs) are run through a Compactor in the page, compacted
//      after each segment as history-probe.mjs does it, and saved to the
//      store after each compaction and at the end: the saves build the
//      index. After a reload, every probe of history-probe.mjs is searched
//      with store.searchHistory (limit 5); a probe is found when a hit's
//      message (in store.load's array) holds its fact. The table is
//      compared with the Node one (Compactor.searchHistory in memory).
//   2. Timings at each size: n generated messages of ~400 characters
//      (history-data.js) saved without their summary, then with it (the
//      compaction's save, which indexes the n messages in its transaction);
//      the index's size; after a reload the first search, the mean of 40
//      later ones (history-probe.mjs's queries), and the search after the
//      session's history records are deleted (the rebuild).
// Prints markdown on stdout (progress on stderr); a missed target is
// printed as MISSED, not an exit code.
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ENGINES, launch, openWebKitOnDisk } from "../../tests/support/browsers.mjs";
import { DEFAULT_MOUNTS, pageHandler, startServer } from "../serve.mjs";
import { generateSession } from "./fidelity.mjs";
import { countProbe, probeRowsTable, probes, probeTable } from "./history-probe.mjs";
import { browserVersion, ENGINE_NAMES, existsPid, fmt, ISOLATED, listFiles, mb, moduleHandler, planHandlers, runPlan } from "./store.mjs";

const SIZES = (process.env.SIZES ?? "1000,10000,100000").split(",").map((s) => {
  const n = Number(s.trim());
  if (!Number.isInteger(n) || n < 1) throw new Error(`SIZES: ${JSON.stringify(s)} is not a whole number of messages`);
  return n;
});
const CHARS = 400;
const ROUNDS = 40;
const KINDS = ["recall", "artifact", "continuation", "decision"];
const log = (...a) => console.error(...a);
const n = (x) => x.toLocaleString("en-US");
const kb = (b) => (b >= 1024 * 1024 ? mb(b) : `${(b / 1024).toFixed(0)} KB`);

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>history store benchmark</title>
<script type="module">
  const bench = await import("/bench/history-store-page.js");
  bench.follow(new URLSearchParams(location.search).get("chain"));
</script>`;

// Chains by id: the plans a page is handed one after the other, across its reloads.
const chains = new Map();

/** A chain of plans for one page: `push({ token, reload })` hands it the next, `push({ done: true })` ends it. */
function newChain() {
  const id = `c${Date.now()}${Math.random().toString(36).slice(2, 8)}`;
  const chain = {
    id,
    queue: [],
    waiting: null,
    push(item) {
      const send = this.waiting;
      this.waiting = null;
      if (send) send(item);
      else this.queue.push(item);
    },
  };
  chains.set(id, chain);
  return chain;
}

function handlers() {
  const here = (file) => new URL(file, import.meta.url);
  return [
    pageHandler("/bench/history-store.html", PAGE, ISOLATED),
    moduleHandler("/bench/history-store-page.js", here("./history-store-page.js")),
    moduleHandler("/bench/history-data.js", here("./history-data.js")),
    moduleHandler("/bench/store-page.js", here("./store-page.js")),
    (req, res, url) => {
      if (url.pathname !== "/bench/next") return false;
      const chain = chains.get(url.searchParams.get("chain"));
      const send = (item) => {
        res.writeHead(chain ? 200 : 404, { "content-type": "application/json", ...ISOLATED });
        res.end(JSON.stringify(item));
      };
      if (!chain) send({ error: "no such chain" });
      else if (chain.queue.length) send(chain.queue.shift());
      else chain.waiting = send;
      return true;
    },
    ...planHandlers(),
  ];
}

/**
 * Opens `engine` on the benchmark page of chain `chain` with IndexedDB on
 * disk: { gone() (why the browser cannot answer, or null), close() }.
 */
async function open(engine, server, chain, dir) {
  const url = `${server.url}bench/history-store.html?chain=${chain.id}`;
  if (engine === "webkit") {
    const browser = await openWebKitOnDisk(url, { dataDir: dir });
    return {
      storage: "IndexedDB on disk (MiniBrowser without automation, its own data directory)",
      gone: () => (browser.exited() ? `webkit: ${browser.exited()}` : null),
      close: () => browser.close(),
    };
  }
  const browser = await launch(engine, { profile: dir });
  try {
    const page = await browser.newPage();
    const problems = [];
    page.onProblem((p) => problems.push(p));
    await page.goto(url);
    return {
      storage: "IndexedDB on disk (persistent profile)",
      gone: () => (browser.pid && !existsPid(browser.pid) ? `${engine}: the browser process ended` : problems.find((p) => p.startsWith("pageerror")) ?? null),
      close: () => browser.close(),
    };
  } catch (e) {
    await browser.close();
    throw e;
  }
}

/** One engine: { engine, env, storage, built, probed, rows, timings }. */
async function measureEngine(engine, server) {
  const dir = mkdtempSync(join(os.tmpdir(), `agent-compaction-history-bench-${engine}-`));
  const chain = newChain();
  let browser;
  try {
    browser = await open(engine, server, chain, dir);
    const plan = (jobs, reload = true) => runPlan(jobs, async (token) => chain.push({ token, reload }), { gone: browser.gone });
    const run = `h${Date.now()}`;
    const session = generateSession();

    log(`  ${engine}: the fidelity session, compacted and saved…`);
    const probesDb = { name: `${run}-probes`, id: "fidelity" };
    const [env, built] = await plan([["environment", []], ["compact", [{ ...probesDb, steps: session.steps }]]]);
    const list = probes({ ...session.facts, functions: built.functions });
    log(`  ${engine}: ${list.length} probes…`);
    const [probed] = await plan([["probe", [{ ...probesDb, probes: list.map(({ query }) => ({ query })) }]]]);
    const rows = new Map();
    list.forEach((p, i) => countProbe(rows, p, built.visible, probed.results[i].texts));

    const timings = [];
    for (const [k, size] of SIZES.entries()) {
      const db = { name: `${run}-${size}`, id: `generated-${size}` };
      log(`  ${engine} ${n(size)}: saves…`);
      const [written] = await plan([["write", [{ ...db, n: size, chars: CHARS }]]]);
      log(`  ${engine} ${n(size)}: without summary ${fmt(written.plainSave)}, the compaction's save ${fmt(written.compactionSave)}, index ${kb(written.sizes.index)} + ${kb(written.sizes.texts)} of texts; searches…`);
      const [searched] = await plan([["search", [{ ...db, rounds: ROUNDS }]]], k < SIZES.length - 1);
      log(`  ${engine} ${n(size)}: first ${fmt(searched.cold)}, later ${fmt(searched.mean)}, rebuild ${fmt(searched.rebuild)}`);
      timings.push({ n: size, ...written, ...searched });
    }
    chain.push({ done: true });
    if (engine === "webkit" && !listFiles(dir).some((f) => /IndexedDB/i.test(f))) throw new Error(`webkit: no IndexedDB files under ${dir}: the data did not go to disk`);
    return { engine, env, storage: browser.storage, built, probed, rows, timings };
  } finally {
    chains.delete(chain.id);
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const verdict = (ok) => (ok ? "met" : "**MISSED**");
const pct = (a, b) => `${((100 * a) / b).toFixed(0)} %`;

/** The markdown section of one engine's run. */
function section(r, node, elapsed) {
  const lines = [];
  const p = (s = "") => lines.push(s);
  const cpus = os.cpus();
  const load = os.loadavg().map((x) => x.toFixed(1)).join(", ");
  p(`### History search with the SessionStore in ${ENGINE_NAMES[r.engine]}`);
  p();
  p(
    `Measured by \`npm run bench:history-store\` (\`scripts/bench/history-store.mjs\`) on ${new Date().toISOString().slice(0, 10)}: ${browserVersion(r.engine, r.env)}, ` +
      `${r.storage}, ${cpus[0]?.model ?? "unknown CPU"} × ${cpus.length} (load average ${load} at the end), ${os.platform()}/${os.arch()}; this engine's run took ${elapsed.toFixed(0)} s.`,
  );
  p();
  const b = r.built;
  // The store searches pinned messages too; the Compactor leaves them out (the model is sent them again).
  const pinned = new Set(r.probed.pinned);
  const sameHits = r.probed.results.filter((x) => same(x.hits, x.inMemory)).length;
  const unpinned = (x) => x.hits.filter((i) => !pinned.has(i));
  const pinnedOnly = r.probed.results.filter((x) => !same(x.hits, x.inMemory) && same(unpinned(x), x.inMemory.slice(0, unpinned(x).length))).length;
  const otherHits = r.probed.results.length - sameHits - pinnedOnly;
  p(
    `The fidelity session (${n(b.messages)} messages, ${b.compactions} compactions), saved after each compaction (${b.saves.n} saves: median ${fmt(b.saves.median)}, slowest ${fmt(b.saves.max)}); ` +
      `its index: ${n(b.sizes.records)} records, ${kb(b.sizes.index)} of postings and statistics and ${kb(b.sizes.texts)} of texts (the message records: ${kb(b.sizes.messages)} as JSON). ` +
      `Each planted fact searched with \`store.searchHistory(id, query, { limit: 5 })\` in a new page (first search ${fmt(r.probed.first)}, the others median ${fmt(r.probed.later.median)}):`,
  );
  p();
  for (const line of probeRowsTable(r.rows)) p(line);
  p();
  const equal = KINDS.every((k) => same(r.rows.get(k), node.rows.get(k)));
  p(
    `The same table as Node's (\`Compactor.searchHistory\` in memory): ${equal ? "yes" : "**no**"}. ` +
      `The store's hits are those of \`Compactor.searchHistory\` over \`store.load\`'s array in the page for ${sameHits} of ${r.probed.results.length} probes; ` +
      `for ${pinnedOnly} more they differ only by pinned messages, which the store searches and the Compactor leaves out (the model is sent them again)` +
      `${otherHits ? `; **${otherHits} differ otherwise**` : ""}.`,
  );
  p();
  p(`Generated messages of ~${CHARS} characters:`);
  p();
  p("| messages | save without the summary | the compaction's save (indexes them) | index: postings and statistics + texts (records) | message records (JSON) | first search, new page | later searches: mean (median) | search after the index is deleted (rebuild) |");
  p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const t of r.timings) {
    p(
      `| ${n(t.n)} | ${fmt(t.plainSave)} | ${fmt(t.compactionSave)} | ${kb(t.sizes.index)} + ${kb(t.sizes.texts)} (${n(t.sizes.records)}) | ${kb(t.sizes.messages)} | ${fmt(t.cold)} | ${fmt(t.mean)} (${fmt(t.later.median)}) | ${fmt(t.rebuild)} |`,
    );
  }
  const odd = r.timings.filter((t) => t.searched !== t.n || !t.rebuiltSame || !same(t.rebuiltSizes, t.sizes));
  if (odd.length) {
    p();
    for (const t of odd) {
      p(`**Check failed at ${n(t.n)}:** searched ${n(t.searched)} messages; after the rebuild: ${t.rebuiltSame ? "same hits" : "other hits"}, index ${kb(t.rebuiltSizes.index)} + ${kb(t.rebuiltSizes.texts)} (${n(t.rebuiltSizes.records)} records).`);
    }
  }
  p();
  p("Targets:");
  p();
  for (const k of KINDS) {
    const row = r.rows.get(k);
    p(`- recall@5 of ${k} probes ≥ 95 %: ${pct(row.at5, row.probes)} — ${verdict(row.at5 / row.probes >= 0.95)}`);
  }
  const at10k = r.timings.find((t) => t.n === 10_000);
  if (at10k) p(`- a search under 10 ms at 10,000 messages (mean of the later searches): ${fmt(at10k.mean)} — ${verdict(at10k.mean < 10)}`);
  return lines.join("\n");
}

/** Runs the benchmark in `engines` (default: $ENGINES, else all three); resolves to the markdown report. */
export async function runHistoryStoreBench({ engines = ENGINES } = {}) {
  if (!existsSync(new URL("../../pkg/index.js", import.meta.url))) throw new Error("pkg/ is not built: run `node scripts/build.mjs` first");
  const node = await probeTable();
  const server = await startServer({ port: 0, handlers: handlers(), mounts: DEFAULT_MOUNTS });
  const sections = [];
  try {
    for (const engine of engines) {
      log(`history store benchmark: ${engine}…`);
      const started = performance.now();
      const r = await measureEngine(engine, server);
      sections.push(section(r, node, (performance.now() - started) / 1000));
    }
  } finally {
    await server.close();
  }
  return sections.join("\n\n");
}

const isMain = (() => {
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1] ?? "")).href;
  } catch {
    return false;
  }
})();
if (isMain) console.log(await runHistoryStoreBench());
