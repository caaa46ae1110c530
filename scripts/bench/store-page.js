// In-page half of scripts/bench/store.mjs: runs in Chromium, Firefox or
// WebKit against the engine's real IndexedDB. Served by store.mjs at
// /bench/store-page.js and imported by its page; the Node side starts
// `start(kind, args, token)` once per session size (kind "measure") and once
// for the engine's raw IndexedDB costs (kind "floor"); the page posts what
// it measured to /bench/report. (Posting, rather than returning through the
// driver, keeps the driver quiet while the page measures: WebKit's driver
// would otherwise poll the page with scripts every few milliseconds.)
//
// Two stores, fed the very same arrays, turn by turn:
//   - ours: SessionStore.save(id, messages) — the store has seen the previous
//     array (it saved it), as an app's store has;
//   - what pi-web-ui does today (its SessionsStore.save): one readwrite
//     transaction over "sessions" and "sessions-metadata" (both keyPath "id",
//     index "lastModified") that puts the whole session record
//     { id, title, model, thinkingLevel, messages, createdAt, lastModified }
//     and its metadata record { id, title, createdAt, lastModified,
//     messageCount, usage, thinkingLevel, preview }. `put` structured-clones
//     the whole array every turn. The app-side work pi-web-ui does before
//     calling save (summing usage, the preview) is done outside the timed
//     region: the baseline is timed at its cheapest.
import * as ac from "/pkg/index.js";

const now = () => performance.now();

export function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

export function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("transaction aborted"));
  });
}

// ---------------------------------------------------------------------------
// Messages: the fixtures' user/assistant/toolResult messages, repeated with
// fresh timestamps.

let pool;
let summaryTemplate;
let turnPicks;

async function fixtureMessages(name) {
  const text = await (await fetch(`/fixtures/${name}`)).text();
  return ac.piSessionToMessages(text).messages;
}

async function ensurePool() {
  if (pool) return;
  const all = [
    ...(await fixtureMessages("pi-large-session.jsonl")),
    ...(await fixtureMessages("pi-before-compaction.jsonl")),
  ];
  summaryTemplate = all.find((m) => m.role === "compactionSummary");
  pool = all.filter((m) => m.role === "user" || m.role === "assistant" || m.role === "toolResult");
  // One turn = a user message, an assistant message that calls a tool, and a
  // tool result, taken in order from the pool.
  const users = pool.filter((m) => m.role === "user");
  const calls = pool.filter(
    (m) => m.role === "assistant" && Array.isArray(m.content) && m.content.some((b) => b?.type === "toolCall"),
  );
  const results = pool.filter((m) => m.role === "toolResult");
  turnPicks = { users, calls, results };
}

let clock = Date.UTC(2026, 0, 1);
const fresh = (m) => ({ ...m, timestamp: (clock += 1000) });

/** A session of `size` messages whose last compaction cut where ours would. */
function session(size) {
  const out = new Array(size - 1);
  for (let i = 0; i < size - 1; i++) out[i] = fresh(pool[i % pool.length]);
  const prep = ac.prepareCompaction(out, ac.resolveSettings({}));
  const at = prep ? prep.firstKeptIndex : Math.max(0, out.length - 50);
  const summary = { ...summaryTemplate, tokensBefore: prep?.tokensBefore ?? 180_000, timestamp: clock + 500 };
  clock += 1000;
  out.splice(at, 0, summary);
  return { messages: out, summaryAt: at };
}

let turnNo = 0;
function turn() {
  const k = turnNo++;
  const { users, calls, results } = turnPicks;
  return [
    fresh(users[k % users.length]),
    fresh(calls[k % calls.length]),
    fresh(results[k % results.length]),
  ];
}

// ---------------------------------------------------------------------------
// The pi-web-ui baseline.

async function openBaseline(name) {
  const open = indexedDB.open(name, 1);
  open.onupgradeneeded = () => {
    const db = open.result;
    for (const store of ["sessions", "sessions-metadata"]) {
      db.createObjectStore(store, { keyPath: "id" }).createIndex("lastModified", "lastModified");
    }
  };
  return request(open);
}

/** What pi-web-ui's app computes before saving (not timed). */
function baselineRecords(id, messages, createdAt) {
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  for (const m of messages) {
    if (m.role !== "assistant" || !m.usage) continue;
    usage.input += m.usage.input ?? 0;
    usage.output += m.usage.output ?? 0;
    usage.cacheRead += m.usage.cacheRead ?? 0;
    usage.cacheWrite += m.usage.cacheWrite ?? 0;
    usage.totalTokens += m.usage.totalTokens ?? 0;
    usage.cost.total += m.usage.cost?.total ?? 0;
  }
  const firstUser = messages.find((m) => m.role === "user");
  const text = typeof firstUser?.content === "string" ? firstUser.content : (firstUser?.content?.find?.((b) => b.type === "text")?.text ?? "");
  const lastModified = new Date().toISOString();
  const model = { id: "claude-sonnet-4-5", provider: "anthropic", api: "anthropic-messages", contextWindow: 200_000, maxTokens: 64_000 };
  return {
    data: { id, title: "bench", model, thinkingLevel: "off", messages, createdAt, lastModified },
    meta: { id, title: "bench", createdAt, lastModified, messageCount: messages.length, usage, thinkingLevel: "off", preview: text.slice(0, 100) },
  };
}

/**
 * pi-web-ui's save: one readwrite transaction, two puts. Returns
 * [ms until both puts succeeded (when pi-web-ui's promise resolves),
 *  ms until the transaction completed].
 */
async function baselineSave(db, { data, meta }) {
  const t0 = now();
  const tx = db.transaction(["sessions", "sessions-metadata"], "readwrite");
  const complete = done(tx);
  const a = request(tx.objectStore("sessions").put(data));
  const b = request(tx.objectStore("sessions-metadata").put(meta));
  await a;
  await b;
  const t1 = now();
  await complete;
  return [t1 - t0, now() - t0];
}

async function baselineGet(db, id) {
  const tx = db.transaction("sessions", "readonly");
  return request(tx.objectStore("sessions").get(id));
}

// ---------------------------------------------------------------------------

/**
 * How many records the store keeps for session `id` in database `name`, and
 * how many of them loadContext reads (from the session record's
 * `contextKey` on), read through a connection of its own (untimed).
 */
async function recordCounts(name, id) {
  const db = await request(indexedDB.open(name));
  try {
    const tx = db.transaction(["sessions", "messages"], "readonly");
    const meta = await request(tx.objectStore("sessions").get(id));
    const end = [id, []];
    const messages = tx.objectStore("messages");
    const all = await request(messages.count(IDBKeyRange.bound([id], end, true, true)));
    const context = meta?.contextKey ? await request(messages.count(IDBKeyRange.bound(meta.contextKey, end, false, true))) : all;
    return { all, context };
  } finally {
    db.close();
  }
}

const sorted = (xs) => Float64Array.from(xs).sort();
export function stats(xs) {
  const s = sorted(xs);
  const q = (p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
  const n = s.length;
  return { median: n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2, p90: q(0.9), min: s[0], max: s[n - 1], n };
}

let measured = 0;
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Builds a session of `size` messages in both stores (untimed), then times
 * one-turn saves on each side, then `loads` loads of each kind.
 *
 * Saves back to back: `rounds` rounds, each a block of `block` + 1 saves on
 * one side and then on the other (which side first alternates); the first
 * save of a block is untimed, so that no side is timed while the other's
 * previous write is still being finished in the background. Saves after
 * idle: `idleSaves` per side, each after `idleMs` of nothing, as between an
 * agent's turns (one side's saves, then the other's).
 */
export async function measure(
  size,
  { rounds = 6, block = 5, idleSaves = 8, idleMs = 250, loads = 15, run = "bench" } = {},
) {
  await ensurePool();
  const id = `s${size}`;
  const store = await ac.SessionStore.open({ name: `${run}-ours-${size}` });
  const base = await openBaseline(`${run}-piwebui-${size}`);
  try {
    const built = session(size);
    const summaryAt = built.summaryAt;
    await store.createSession({ id, title: "bench" });
    const createdAt = new Date().toISOString();
    await store.save(id, built.messages);
    await baselineSave(base, baselineRecords(id, built.messages, createdAt));
    const bytes = new Blob([JSON.stringify(built.messages)]).size;

    // Both sides append the same turns, in the same order, each to its own
    // array (a new array per turn, as an agent makes it; untimed).
    const turns = [];
    const turnAt = (k) => {
      while (turns.length <= k) turns.push(turn());
      return turns[k];
    };
    const sides = {
      ours: {
        messages: built.messages,
        n: 0,
        async save() {
          this.messages = this.messages.concat(turnAt(this.n++));
          await pause(0);
          const t0 = now();
          await store.save(id, this.messages);
          return now() - t0;
        },
      },
      base: {
        messages: built.messages,
        n: 0,
        resolved: [],
        async save() {
          this.messages = this.messages.concat(turnAt(this.n++));
          const records = baselineRecords(id, this.messages, createdAt);
          await pause(0);
          const [resolved, complete] = await baselineSave(base, records);
          this.resolved.push(resolved);
          return complete;
        },
      },
    };
    const hot = { ours: [], base: [] };
    const putsBefore = store.stats().recordsPut;
    for (let r = 0; r < rounds; r++) {
      for (const side of r % 2 === 0 ? ["ours", "base"] : ["base", "ours"]) {
        await sides[side].save(); // untimed
        for (let i = 0; i < block; i++) hot[side].push(await sides[side].save());
      }
    }
    const resolvedHot = sides.base.resolved.filter((_, i) => i % (block + 1) !== 0);
    const recordsPerSave = (store.stats().recordsPut - putsBefore) / sides.ours.n;
    const idle = { ours: [], base: [] };
    for (const side of measured++ % 2 === 0 ? ["ours", "base"] : ["base", "ours"]) {
      for (let i = 0; i < idleSaves; i++) {
        await pause(idleMs);
        idle[side].push(await sides[side].save());
      }
    }
    const messages = sides.ours.messages;
    if (sides.base.messages.length !== messages.length) throw new Error("the two sides grew differently");

    // Loads: rotating order; each result checked. *raw* is loadContext's
    // IndexedDB work alone, through a connection of its own: one readonly
    // transaction reading the session record and, with one getAll, the
    // records from its contextKey on (no lock, no unpacking, no wasm).
    const records = await recordCounts(`${run}-ours-${size}`, id);
    const rawDb = await request(indexedDB.open(`${run}-ours-${size}`));
    const raw = [];
    const context = [];
    const full = [];
    const get = [];
    let contextLength = 0;
    for (let i = 0; i < loads + 2; i++) {
      const kinds = [
        async () => {
          const t0 = now();
          const r = await store.loadContext(id);
          const t = now() - t0;
          contextLength = r.length;
          if (r[0]?.role !== "compactionSummary" || r.length !== messages.length - summaryAt) {
            throw new Error(`loadContext returned ${r.length} messages starting with ${r[0]?.role}`);
          }
          return ["context", t];
        },
        async () => {
          const t0 = now();
          const r = await store.load(id);
          const t = now() - t0;
          if (r.length !== messages.length) throw new Error(`load returned ${r.length} messages`);
          return ["full", t];
        },
        async () => {
          const t0 = now();
          const tx = rawDb.transaction(["sessions", "messages"], "readonly");
          const meta = await request(tx.objectStore("sessions").get(id));
          const r = await request(tx.objectStore("messages").getAll(IDBKeyRange.bound(meta.contextKey, [id, []], false, true)));
          const t = now() - t0;
          if (r.length !== records.context) throw new Error(`the raw context read returned ${r.length} records`);
          return ["raw", t];
        },
        async () => {
          const t0 = now();
          const r = await baselineGet(base, id);
          const t = now() - t0;
          if (r.messages.length !== messages.length) throw new Error(`get returned ${r.messages.length} messages`);
          return ["get", t];
        },
      ];
      const order = kinds.map((_, k) => kinds[(k + i) % kinds.length]);
      for (const k of order) {
        await pause(0);
        const [kind, t] = await k();
        if (i < 2) continue; // warm-up
        ({ context, full, get, raw })[kind].push(t);
      }
    }
    rawDb.close();
    return {
      size,
      bytes,
      records,
      contextLength,
      recordsPerSave,
      turnsSaved: sides.ours.n,
      ours: stats(hot.ours),
      whole: stats(hot.base),
      wholeResolved: stats(resolvedHot),
      idleOurs: stats(idle.ours),
      idleWhole: stats(idle.base),
      loadContext: stats(context),
      rawContext: stats(raw),
      get: stats(get),
      load: stats(full),
    };
  } finally {
    store.close();
    base.close();
  }
}

/** The timer's resolution as seen here: the smallest step of performance.now(). */
function timerStep() {
  let step = Infinity;
  for (let i = 0; i < 200; i++) {
    const a = now();
    let b = now();
    while (b === a) b = now();
    step = Math.min(step, b - a);
  }
  return step;
}

export const environment = () => ({
  userAgent: navigator.userAgent,
  crossOriginIsolated: globalThis.crossOriginIsolated === true,
  timerStepMs: timerStep(),
});

/**
 * What the engine's IndexedDB costs alone, without the store: the fixed cost
 * of a readwrite transaction that puts one small record (one assistant
 * message) and of one that puts a turn's three messages and a meta record;
 * a readonly `get` of one small record; and, for each size, a put and a get
 * of one record holding that many messages (the whole-record side's own
 * cost, measured apart from the turn loop). Each `reps` times after one
 * warm-up, in a database of its own.
 */
export async function floor({ sizes = [500, 2000, 5000], reps = 15, run = "bench" } = {}) {
  await ensurePool();
  const open = indexedDB.open(`${run}-floor`, 1);
  open.onupgradeneeded = () => {
    open.result.createObjectStore("small");
    open.result.createObjectStore("big");
  };
  const db = await request(open);
  try {
    const small = fresh(pool.find((m) => m.role === "assistant"));
    const smallBytes = new Blob([JSON.stringify(small)]).size;
    const time = async (body) => {
      const xs = [];
      for (let i = 0; i <= reps; i++) {
        await pause(0);
        const t0 = now();
        await body(i);
        if (i > 0) xs.push(now() - t0);
      }
      return stats(xs);
    };
    let k = 0;
    const putOne = await time(async () => {
      const tx = db.transaction("small", "readwrite");
      tx.objectStore("small").put(small, k++);
      await done(tx);
    });
    const putTurn = await time(async () => {
      const tx = db.transaction("small", "readwrite");
      const os = tx.objectStore("small");
      for (const m of turn()) os.put(m, k++);
      os.put({ id: "meta", revision: k, messageCount: k }, "meta");
      await done(tx);
    });
    const getOne = await time(async (i) => {
      const tx = db.transaction("small", "readonly");
      await request(tx.objectStore("small").get(i % Math.max(1, k)));
    });
    const bySize = [];
    for (const size of sizes) {
      const messages = session(size).messages;
      const bytes = new Blob([JSON.stringify(messages)]).size;
      const put = await time(async () => {
        const tx = db.transaction("big", "readwrite");
        tx.objectStore("big").put({ id: size, messages }, size);
        await done(tx);
      });
      const get = await time(async () => {
        const tx = db.transaction("big", "readonly");
        const r = await request(tx.objectStore("big").get(size));
        if (r.messages.length !== messages.length) throw new Error("floor: the record came back short");
      });
      bySize.push({ size, bytes, put, get });
    }
    return { smallBytes, putOne, putTurn, getOne, bySize };
  } finally {
    db.close();
  }
}

const JOBS = { environment: async () => environment(), measure, floor };

/**
 * Runs the plan the Node side registered under `token` (GET
 * /bench/plan?token=…: `{ jobs: [[kind, args], …] }`) with the job
 * functions of `kinds`, one job after the other, posting
 * `{ token, index, result }` or `{ token, index, error }` to /bench/report
 * after each (and stopping at an error). Resolves when the plan is done.
 */
export async function runJobs(kinds, token) {
  const post = (msg) => fetch("/bench/report", { method: "POST", body: JSON.stringify({ token, ...msg }) });
  const describe = (e) => `${e?.name ?? "Error"}: ${e?.message ?? String(e)}`;
  try {
    const plan = await (await fetch(`/bench/plan?token=${encodeURIComponent(token)}`)).json();
    for (let index = 0; index < plan.jobs.length; index++) {
      const [kind, args] = plan.jobs[index];
      let msg;
      try {
        const body = kinds[kind];
        if (!body) throw new Error(`unknown job ${kind}`);
        msg = { index, result: await body(...args) };
      } catch (e) {
        msg = { index, error: describe(e) };
      }
      await post(msg);
      if (msg.error) return;
    }
  } catch (e) {
    await post({ index: -1, error: describe(e) }).catch(() => {});
  }
}

/** Runs this module's plan `token` (kinds "environment", "measure" and "floor", see runJobs); returns at once. */
export function runPlan(token) {
  runJobs(JOBS, token);
  return true;
}
