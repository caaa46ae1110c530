// In-page half of scripts/bench/history-store.mjs: the history search of a
// SessionStore against the engine's real IndexedDB. Served at
// /bench/history-store-page.js; the page asks the Node side for its next
// plan (GET /bench/next?chain=…, answered once there is one), runs it with
// store-page.js's runJobs (each result posted to /bench/report), and
// reloads itself when the plan says so: the plan after a reload starts
// from a new page, a new wasm instance and a new SessionStore.
//
// Jobs:
//   - "compact": the fidelity session's steps through a Compactor, saved to
//     the store after each compaction (and at the end), so that the saves
//     build the index;
//   - "probe": every probe with store.searchHistory (limit 5), the texts of
//     the hits' messages as store.load gives them, and the hits of the
//     Compactor's own search over that array for comparison;
//   - "write": n generated messages saved without their summary, then saved
//     with it (the compaction's save, which indexes the n messages), and
//     the sizes of the index and of the message records;
//   - "search": the first search (after a reload: cold), the later ones,
//     and the search after the index records are deleted (the rebuild).
import * as ac from "/pkg/index.js";
import { CONTEXT_WINDOW, compactSteps, generated, hiddenFunctions, SETTINGS, TIMING_QUERIES, textOf } from "/bench/history-data.js";
import { done, environment, request, runJobs, stats } from "/bench/store-page.js";

const now = () => performance.now();

/** Session `id`'s range of keys ([id, ...]) in the store's object stores. */
const sessionRange = (id) => IDBKeyRange.bound([id], [id, []]);

/** `body(db)` on a connection of its own to database `name` (the store's, untimed). */
async function raw(name, body) {
  const db = await request(indexedDB.open(name));
  try {
    return await body(db);
  } finally {
    db.close();
  }
}

/**
 * The session's history records: how many, the bytes of their Uint8Array
 * values (meta, statistics, postings) and the UTF-8 bytes of their texts;
 * and the UTF-8 bytes of its message records as JSON.
 */
function sizes(name, id) {
  return raw(name, async (db) => {
    const tx = db.transaction(["history", "messages"], "readonly");
    const history = await request(tx.objectStore("history").getAll(sessionRange(id)));
    const encoder = new TextEncoder();
    let index = 0;
    let texts = 0;
    for (const v of history) {
      if (v instanceof Uint8Array) index += v.byteLength;
      else texts += encoder.encode(v[1]).byteLength;
    }
    let messages = 0;
    for (const v of await request(tx.objectStore("messages").getAll(sessionRange(id)))) messages += new Blob([JSON.stringify(v)]).size;
    return { records: history.length, index, texts, messages };
  });
}

async function compact({ name, id, steps }) {
  const store = await ac.SessionStore.open({ name });
  try {
    await store.createSession({ id, title: "history probes" });
    const saves = [];
    const save = async (messages) => {
      const t0 = now();
      await store.save(id, messages);
      saves.push(now() - t0);
    };
    const { compactor, messages, compactions } = await compactSteps(ac, steps, { afterCompaction: save });
    await save(messages);
    try {
      return {
        messages: messages.length,
        compactions,
        functions: hiddenFunctions(compactor, messages),
        visible: JSON.stringify(compactor.modelContext(messages)),
        saves: stats(saves),
        sizes: await sizes(name, id),
      };
    } finally {
      compactor.free();
    }
  } finally {
    store.close();
  }
}

async function probe({ name, id, probes }) {
  const store = await ac.SessionStore.open({ name });
  const compactor = new ac.Compactor({ contextWindow: CONTEXT_WINDOW, settings: SETTINGS });
  try {
    const found = [];
    const times = [];
    for (const p of probes) {
      const t0 = now();
      found.push((await store.searchHistory(id, p.query, { limit: 5 })).hits);
      times.push(now() - t0);
    }
    const messages = await store.load(id);
    const results = probes.map((p, i) => ({
      texts: found[i].map((h) => textOf(messages[h.index])),
      hits: found[i].map((h) => h.index),
      inMemory: compactor.searchHistory(messages, p.query, { limit: 5 }).hits.map((h) => h.index),
    }));
    const pinned = messages.flatMap((m, i) => (m.pinned ? [i] : []));
    return { results, pinned, first: times[0], later: stats(times.slice(1)) };
  } finally {
    compactor.free();
    store.close();
  }
}

async function write({ name, id, n, chars }) {
  const messages = generated(n, chars);
  const plain = messages.filter((m) => m.role !== "compactionSummary");
  const store = await ac.SessionStore.open({ name });
  try {
    await store.createSession({ id, title: "history timing" });
    let t0 = now();
    await store.save(id, plain);
    const plainSave = now() - t0;
    t0 = now();
    await store.save(id, messages);
    const compactionSave = now() - t0;
    return { plainSave, compactionSave, sizes: await sizes(name, id) };
  } finally {
    store.close();
  }
}

async function search({ name, id, rounds }) {
  const store = await ac.SessionStore.open({ name });
  try {
    let t0 = now();
    const first = await store.searchHistory(id, "config");
    const cold = now() - t0;
    const later = [];
    for (let i = 0; i < rounds; i++) {
      t0 = now();
      await store.searchHistory(id, TIMING_QUERIES[i % TIMING_QUERIES.length]);
      later.push(now() - t0);
    }
    const mean = later.reduce((a, b) => a + b, 0) / later.length;
    await raw(name, (db) => {
      const tx = db.transaction("history", "readwrite");
      tx.objectStore("history").delete(sessionRange(id));
      return done(tx);
    });
    t0 = now();
    const rebuilt = await store.searchHistory(id, "config");
    const rebuild = now() - t0;
    const refs = (s) => JSON.stringify(s.hits.map((h) => h.ref));
    return {
      searched: first.searched,
      cold,
      mean,
      later: stats(later),
      rebuild,
      rebuiltSame: refs(rebuilt) === refs(first) && rebuilt.searched === first.searched,
      rebuiltSizes: await sizes(name, id),
    };
  } finally {
    store.close();
  }
}

const JOBS = { environment: async () => environment(), compact, probe, write, search };

/** Runs the plans the Node side hands chain `chain`, reloading the page where a plan says so. */
export async function follow(chain) {
  for (;;) {
    const next = await (await fetch(`/bench/next?chain=${encodeURIComponent(chain)}`)).json();
    if (next.done) return;
    await runJobs(JOBS, next.token);
    if (next.reload) {
      location.reload();
      return;
    }
  }
}
