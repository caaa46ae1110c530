// The history search of a stored session (docs/history.md), in each engine
// (Chromium, Firefox, WebKit; real IndexedDB): the save of a compaction
// indexes what its summary hides in the same transaction, so that a store
// opened in another page searches and reads the session without loading
// it, with the same hits as the Compactor's search of the loaded array; a
// second compaction's save extends the index at the right places; a
// pinned message, which the model is still sent, is never a hit (pinned
// before a summary hides it or after, and through a fork); nor is a failed
// attempt after the last summary, until the next one; an undo drops
// the index in its save and the next search rebuilds it; deleting the
// session deletes its index; the pi-agent-core tools answer from the store;
// and a database of version 3 is upgraded with its sessions intact, each
// indexed at its first search.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>history store</title>
<script type="module">window.m = await import("/pkg/index.js"); window.pi = await import("/pkg/pi-agent-core.js");</script>
<script>
let clock = 1_000;
const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
const assistant = (text, calls = []) => ({
  role: "assistant",
  content: [{ type: "text", text }, ...calls.map(([id, name, args]) => ({ type: "toolCall", id, name, arguments: args }))],
  api: "openai-completions", provider: "test", model: "m",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: calls.length ? "toolUse" : "stop", timestamp: clock++,
});
const result = (id, name, text) => ({ role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text }], isError: false, timestamp: clock++ });
const filler = (label) => label + " " + "lorem ipsum dolor ".repeat(300);
const work = (tag, n) => Array.from({ length: n }, (_, i) => [user(filler(tag + " task " + i)), assistant(filler(tag + " done " + i))]).flat();
// The first turns hold details a summary leaves out; later ones more.
window.first = () => [
  user("Constraint K1: never modify files under vendor/ in this repository."),
  assistant("Understood.", [["c1", "read", { path: "src/parser/config.ts" }]]),
  result("c1", "read", "export function parseConfigFile(path) {\\n  // ...\\n}"),
  assistant("Running the tests.", [["c2", "bash", { command: "npm test" }]]),
  result("c2", "bash", "error E0502: cannot borrow cache as mutable"),
  assistant("Decision D1: keep retries at three with exponential backoff."),
  ...work("first", 6),
  user("What is next?"),
];
window.second = () => [
  user("Constraint K2: the public API of src/api/index.ts stays frozen until the 2.0 release."),
  assistant("Noted: the API stays as it is.", [["c3", "bash", { command: "npm run lint" }]]),
  result("c3", "bash", "lint failed: rule no-floating-promises in src/worker/queue.ts line 88"),
  ...work("second", 6),
  user("And now?"),
];
window.compactor = () => new m.Compactor({ contextWindow: 20_000, settings: { reserveTokens: 4_000, keepRecentTokens: 2_000 } });
window.historyKeys = (name, id) => new Promise((resolve, reject) => {
  const open = indexedDB.open(name);
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const db = open.result;
    const request = db.transaction("history").objectStore("history").getAllKeys(IDBKeyRange.bound([id], [id, []]));
    request.onsuccess = () => { db.close(); resolve(request.result.map((k) => k[1])); };
    request.onerror = () => reject(request.error);
  };
});
</script>`;

const QUERIES = ["cannot borrow cache", "parseConfigFile", "retries backoff decision", "vendor constraint"];

for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser;
    before(async () => {
      server = await startServer({ port: 0, handlers: [pageHandler("/history-store.html", PAGE)] });
      browser = await launch(engine);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    const open = async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}history-store.html`);
      await page.waitForFunction(() => window.m && window.pi, null, { timeout: 30_000 });
      return page;
    };

    test("a compaction's save indexes what it hides; another page searches and reads it without loading, as the Compactor does", async () => {
      const name = "history-" + Math.random().toString(36).slice(2);
      const page = await open();
      const id = await page.evaluate(async ({ name }) => {
        const store = await m.SessionStore.open({ name });
        const { id } = await store.createSession({ title: "history" });
        const messages = first();
        await store.save(id, messages);
        const before = await historyKeys(name, id);
        const out = await compactor().compact(messages);
        await store.save(id, out.messages);
        const after = await historyKeys(name, id);
        store.close();
        return { id, before, after, firstKept: out.firstKeptIndex };
      }, { name });
      await page.close();
      assert.deepEqual(id.before, [], "nothing is hidden before the first compaction: no index");
      assert.ok(id.after.includes(0) && id.after.includes(2) && id.after.includes(3), `the save wrote the index: ${id.after}`);
      assert.ok(id.firstKept > 6, "the details are behind the summary");

      const other = await open();
      const seen = await other.evaluate(async ({ name, id, queries }) => {
        const store = await m.SessionStore.open({ name });
        const searches = [];
        for (const q of queries) searches.push(await store.searchHistory(id, q, { limit: 3 }));
        const page = await store.readHistory(id, searches[0].hits[0].ref);
        const small = await store.readHistory(id, searches[0].hits[0].ref, { maxChars: 5 });
        const loaded = await store.load(id);
        const c = compactor();
        const memory = queries.map((q) => c.searchHistory(loaded, q, { limit: 3 }));
        const errors = [];
        for (const call of [() => store.searchHistory(id, "  "), () => store.searchHistory("nope", "cache"), () => store.readHistory(id, "h1.0-zzzz"), () => store.searchHistory(id, "x", { limit: 0 })]) {
          errors.push(await call().then(() => "resolved", (e) => `${e.name}: ${e.message}`));
        }
        store.close();
        return { searches, memory, page, small, at: loaded[searches[0].hits[0].index], errors };
      }, { name, id: id.id, queries: QUERIES });
      await other.close();
      assert.deepEqual(seen.searches, seen.memory, "the store's hits are the Compactor's over the loaded array");
      for (const [i, s] of seen.searches.entries()) assert.ok(s.hits.length > 0, QUERIES[i]);
      assert.equal(seen.searches[0].hits[0].role, "toolResult");
      assert.equal(seen.at.content[0].text, "error E0502: cannot borrow cache as mutable", "a hit's index is its place in load()");
      assert.equal(seen.page.text, "error E0502: cannot borrow cache as mutable");
      assert.equal(seen.page.next, null);
      assert.deepEqual([seen.small.text, seen.small.next], ["error", 5]);
      assert.match(seen.errors[0], /^Error: .*query is empty/);
      assert.match(seen.errors[1], /SessionStore\.searchHistory.*nope/);
      assert.match(seen.errors[2], /changed|not in the history/);
      assert.equal(seen.errors[3], "RangeError: options.limit must be a whole number from 1 to 100, got 0");
    });

    test("a second compaction's save extends the index; an undo drops it and the next search rebuilds it; delete removes it", async () => {
      const name = "history-" + Math.random().toString(36).slice(2);
      const page = await open();
      const out = await page.evaluate(async ({ name }) => {
        const store = await m.SessionStore.open({ name });
        const { id } = await store.createSession({ title: "history" });
        const one = await compactor().compact(first());
        await store.save(id, one.messages);
        store.close();
        // Another store, which loads the session, goes on and compacts again.
        const again = await m.SessionStore.open({ name });
        const whole = await again.load(id);
        const two = await compactor().compact([...whole, ...second()]);
        await again.save(id, two.messages);
        const k2 = await again.searchHistory(id, "public API frozen release");
        const lint = await again.searchHistory(id, "floating promises lint");
        const old = await again.searchHistory(id, "cannot borrow cache");
        const loaded = await again.load(id);
        const memory = compactor().searchHistory(loaded, "public API frozen release");
        const pi = window.pi.historyTools(compactor(), { store: again, sessionId: id });
        const tool = await pi[0].execute("t1", { query: "floating promises lint" });
        const read = await pi[1].execute("t2", { ref: lint.hits[0].ref });
        // The undo: the last summary removed, saved with replace.
        const undone = m.removeLastCompaction(loaded);
        await again.save(id, undone, { replace: true });
        const dropped = await historyKeys(name, id);
        const afterUndo = await again.searchHistory(id, "public API frozen release");
        const rebuilt = await historyKeys(name, id);
        const oldAfterUndo = await again.searchHistory(id, "cannot borrow cache");
        const memoryAfterUndo = compactor().searchHistory(undone, "cannot borrow cache");
        await again.delete(id);
        const deleted = await historyKeys(name, id);
        again.close();
        return {
          k2, lint, old, memory, loaded: loaded.map((x) => typeof x.content === "string" ? x.content : x.content?.[0]?.text ?? x.role),
          tool: tool.content[0].text, read: read.content[0].text, dropped, afterUndo, rebuilt, oldAfterUndo, memoryAfterUndo, deleted,
        };
      }, { name });
      await page.close();
      assert.ok(out.k2.hits.length > 0 && out.lint.hits.length > 0 && out.old.hits.length > 0);
      assert.deepEqual(out.k2, out.memory, "as the Compactor's search of the whole array");
      assert.match(out.loaded[out.k2.hits[0].index], /^Constraint K2/, "the index is the place in load()");
      assert.match(out.loaded[out.lint.hits[0].index], /no-floating-promises/);
      assert.match(out.loaded[out.old.hits[0].index], /E0502/);
      assert.match(out.tool, /no-floating-promises/);
      assert.match(out.read, /lint failed: rule no-floating-promises in src\/worker\/queue\.ts line 88/);
      assert.deepEqual(out.dropped, [], "the undo's save dropped the index");
      assert.deepEqual(out.afterUndo.hits.filter((h) => /K2/.test(h.excerpt)), [], "what the undo made visible is no longer a hit");
      assert.ok(out.rebuilt.includes(0), "the search rebuilt the index");
      assert.deepEqual(out.oldAfterUndo, out.memoryAfterUndo);
      assert.deepEqual(out.deleted, [], "delete removed the index");
    });

    test("a pinned message before the last summary is never a hit, as with the Compactor: after a compaction, a pin, an unpin, a second compaction and a fork", async () => {
      const name = "history-" + Math.random().toString(36).slice(2);
      const page = await open();
      const out = await page.evaluate(async ({ name }) => {
        const pin = (m, pinned = true) => ({ ...m, pinned });
        const store = await m.SessionStore.open({ name });
        const { id } = await store.createSession({ title: "pinned" });
        // Each search from a store that did not save the session, beside a
        // fresh Compactor's search of the array load() returns.
        const both = async (sessionId, query) => {
          const other = await m.SessionStore.open({ name });
          const loaded = await other.load(sessionId);
          const stored = await other.searchHistory(sessionId, query, { limit: 20 });
          other.close();
          const memory = compactor().searchHistory(loaded, query, { limit: 20 });
          return { stored, memory, at: loaded.findIndex((x) => typeof x.content === "string" && x.content.includes(query)) };
        };
        const reads = async (sessionId, ref) => {
          const loaded = await store.load(sessionId);
          const stored = await store.readHistory(sessionId, ref).then((p) => p.text, (e) => `${e.name}: ${e.message}`);
          let memory;
          try { memory = compactor().readHistory(loaded, ref).text; } catch (e) { memory = `${e.name}: ${e.message}`; }
          return { stored, memory };
        };
        const out = {};
        // A pinned rule and an unpinned note, both behind the summary of a
        // compaction's save (the fill it writes).
        const start = [pin(user("Rule: never touch the okapi directory.")), user("The zebra config lives in zebra.toml."), ...first()];
        const one = await compactor().compact(start);
        await store.save(id, one.messages);
        out.compacted = { okapi: await both(id, "okapi"), zebra: await both(id, "zebra"), wide: await both(id, "lorem task") };
        // Pinned later (a change before the summary: the index is rebuilt).
        let messages = await store.load(id);
        const zebraRef = out.compacted.zebra.stored.hits[0].ref;
        messages = messages.map((x, i) => (i === 1 ? pin(x) : x));
        await store.save(id, messages, { replace: true });
        out.pinnedLater = { zebra: await both(id, "zebra"), read: await reads(id, zebraRef) };
        // Unpinned later: a hit again.
        messages = messages.map((x, i) => (i === 0 ? pin(x, false) : x));
        await store.save(id, messages, { replace: true });
        out.unpinned = { okapi: await both(id, "okapi") };
        // A second compaction hides a pinned message that was after the
        // first summary (the save's fill) and an unpinned one.
        const two = await compactor().compact([...messages, pin(user("Rule: the narwhal service stays read-only.")), user("The quokka cache was cleared."), ...second()]);
        await store.save(id, two.messages);
        out.second = { narwhal: await both(id, "narwhal"), quokka: await both(id, "quokka"), wide: await both(id, "lorem task") };
        // A fork has no index: its first search builds it from the records.
        const fork = await store.fork(id, two.messages.length);
        out.fork = { narwhal: await both(fork.id, "narwhal"), zebra: await both(fork.id, "zebra"), wide: await both(fork.id, "lorem task") };
        store.close();
        return out;
      }, { name });
      await page.close();
      for (const [step, searches] of Object.entries(out)) {
        for (const [word, s] of Object.entries(searches)) {
          if (word === "read") continue;
          assert.deepEqual(s.stored, s.memory, `${step}, ${word}: the store's hits are the Compactor's over load()`);
        }
      }
      const places = (s) => s.stored.hits.map((h) => h.index);
      assert.deepEqual(places(out.compacted.okapi), [], "the pinned rule is still sent: not a hit");
      assert.deepEqual(places(out.compacted.zebra), [out.compacted.zebra.at], "the unpinned note is");
      assert.deepEqual(places(out.pinnedLater.zebra), [], "pinned later: no longer a hit");
      assert.match(out.pinnedLater.read.stored, /^Error: message 1 is not in the history/, "nor read by an earlier reference");
      assert.equal(out.pinnedLater.read.stored, out.pinnedLater.read.memory);
      assert.deepEqual(places(out.unpinned.okapi), [out.unpinned.okapi.at], "unpinned later: a hit");
      assert.deepEqual(places(out.second.narwhal), [], "a pinned message the second summary hides is still sent");
      assert.deepEqual(places(out.second.quokka), [out.second.quokka.at]);
      assert.deepEqual(places(out.fork.narwhal), []);
      assert.deepEqual(places(out.fork.zebra), []);
      assert.ok(out.second.wide.stored.hits.length > 0 && out.fork.wide.stored.searched === out.second.wide.stored.searched);
    });

    test("a failed attempt after the last summary is not a hit, in the store as with the Compactor; the next summary makes it one in both", async () => {
      const name = "history-" + Math.random().toString(36).slice(2);
      const page = await open();
      const out = await page.evaluate(async ({ name }) => {
        // An aborted attempt keeps what was streamed; an error one too.
        const failed = (text, stopReason) => ({ ...assistant(text), stopReason, ...(stopReason === "error" ? { errorMessage: "overloaded" } : {}) });
        const attempts = () => [failed("Uploading the build to bucket QUARTZ-9 first.", "aborted"), failed("Retrying the upload to QUARTZ-9.", "error"), user("Try the upload again.")];
        const store = await m.SessionStore.open({ name });
        // Each search from a store that did not save the session, beside a
        // fresh Compactor's search of the array load() returns.
        const both = async (id, query) => {
          const other = await m.SessionStore.open({ name });
          const loaded = await other.load(id);
          const stored = await other.searchHistory(id, query, { limit: 20 });
          const tool = await other.historyTool(id, "search_history", { query });
          other.close();
          const c = compactor();
          const memory = c.searchHistory(loaded, query, { limit: 20 });
          const memoryTool = c.historyTool(loaded, "search_history", { query });
          const failedAt = loaded.flatMap((x, i) => (x.stopReason === "aborted" || x.stopReason === "error" ? [i] : []));
          return { stored, memory, tool, memoryTool, failedAt };
        };
        const out = {};
        // Before any compaction.
        const early = await store.createSession({ title: "uncompacted" });
        await store.save(early.id, [...first().slice(0, 3), ...attempts()]);
        out.uncompacted = await both(early.id, "QUARTZ");
        // After a compaction, saved by a turn's save.
        const { id } = await store.createSession({ title: "failed attempts" });
        const one = await compactor().compact(first());
        await store.save(id, one.messages);
        const turn = [...one.messages, ...attempts()];
        await store.save(id, turn);
        out.afterSummary = await both(id, "QUARTZ");
        out.wide = await both(id, "lorem task");
        // A second compaction's summary leaves them out.
        const two = await compactor().compact([...turn, ...second()]);
        await store.save(id, two.messages);
        out.second = await both(id, "QUARTZ");
        store.close();
        return out;
      }, { name });
      await page.close();
      for (const [step, s] of Object.entries(out)) {
        assert.deepEqual(s.stored, s.memory, `${step}: the store's hits are the Compactor's over load()`);
        assert.equal(s.tool, s.memoryTool, `${step}: and so are the tool's answers`);
      }
      assert.deepEqual(out.uncompacted.stored, { hits: [], searched: 0 }, "nothing is searched before a compaction");
      assert.equal(out.afterSummary.failedAt.length, 2);
      assert.deepEqual(out.afterSummary.stored.hits, [], "no summary left them out");
      assert.ok(out.wide.stored.hits.length > 0, "what the summary left out is searched");
      assert.equal(out.second.failedAt.length, 2);
      assert.deepEqual(out.second.stored.hits.map((h) => h.index).sort((a, b) => a - b), out.second.failedAt);
    });

    test("a database of version 3 with sessions in it is upgraded: the sessions load as they were and are indexed at their first search", async () => {
      const name = "history-" + Math.random().toString(36).slice(2);
      const page = await open();
      const out = await page.evaluate(async ({ name }) => {
        // A session written by this version, copied record by record into a
        // database made as version 3 was (no history store).
        const source = await m.SessionStore.open({ name: name + "-source" });
        const { id } = await source.createSession({ title: "old" });
        const one = await compactor().compact(first());
        await source.save(id, one.messages);
        source.close();
        const req = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
        const db = await req(indexedDB.open(name + "-source"));
        const tx = db.transaction(["sessions", "messages"]);
        const sessions = await req(tx.objectStore("sessions").getAll());
        const values = await req(tx.objectStore("messages").getAll());
        const keys = await req(tx.objectStore("messages").getAllKeys());
        db.close();
        const open3 = indexedDB.open(name, 3);
        open3.onupgradeneeded = () => {
          const old = open3.result;
          old.createObjectStore("sessions", { keyPath: "id" }).createIndex("byLastModified", "lastModified");
          old.createObjectStore("messages");
        };
        const old = await req(open3);
        const write = old.transaction(["sessions", "messages"], "readwrite");
        for (const s of sessions) write.objectStore("sessions").put(s);
        values.forEach((v, i) => write.objectStore("messages").put(v, keys[i]));
        await new Promise((resolve) => (write.oncomplete = resolve));
        old.close();
        const store = await m.SessionStore.open({ name });
        const loaded = await store.load(id);
        const before = await historyKeys(name, id);
        const found = await store.searchHistory(id, "cannot borrow cache");
        const after = await historyKeys(name, id);
        const list = await store.list();
        store.close();
        return { same: JSON.stringify(loaded) === JSON.stringify(one.messages), before, found, after, titles: list.map((x) => x.title) };
      }, { name });
      await page.close();
      assert.ok(out.same, "the upgraded session loads as it was saved");
      assert.deepEqual(out.titles, ["old"]);
      assert.deepEqual(out.before, [], "no index before the first search");
      assert.match(out.found.hits[0]?.excerpt ?? "", /E0502/);
      assert.ok(out.after.includes(0), "the first search wrote the index");
    });
  });
}
