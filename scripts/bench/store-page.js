// In-page half of scripts/bench/store.mjs: runs in headless Chromium against
// real (on-disk) IndexedDB. Served by store.mjs at /bench/store-page.js and
// imported by its page; the Node side calls `measure(size, options)` once per
// session size through page.evaluate and prints what it returns.
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

function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

function done(tx) {
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

const sorted = (xs) => Float64Array.from(xs).sort();
function stats(xs) {
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

    // Loads: alternating order; each result checked once.
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
          const r = await baselineGet(base, id);
          const t = now() - t0;
          if (r.messages.length !== messages.length) throw new Error(`get returned ${r.messages.length} messages`);
          return ["get", t];
        },
      ];
      const order = [0, 1, 2].map((k) => kinds[(k + i) % 3]);
      for (const k of order) {
        await pause(0);
        const [kind, t] = await k();
        if (i < 2) continue; // warm-up
        ({ context, full, get })[kind].push(t);
      }
    }
    return {
      size,
      bytes,
      contextLength,
      recordsPerSave,
      turnsSaved: sides.ours.n,
      ours: stats(hot.ours),
      whole: stats(hot.base),
      wholeResolved: stats(resolvedHot),
      idleOurs: stats(idle.ours),
      idleWhole: stats(idle.base),
      loadContext: stats(context),
      get: stats(get),
      load: stats(full),
    };
  } finally {
    store.close();
    base.close();
  }
}

export const environment = () => ({
  userAgent: navigator.userAgent,
  crossOriginIsolated: globalThis.crossOriginIsolated === true,
});
