// The package outside a page's main thread, in each engine (Chromium,
// Firefox, WebKit through tests/support/browsers.mjs; ENGINES= narrows
// them), as docs/bundlers-workers-ssr.md and docs/persistence.md describe:
// - module Web Workers importing the default entry and
//   `agent-compaction/manual-init`: a compaction with the extractive
//   summary and with openAiSummarizer to the server; a SessionStore in each
//   worker and in the page on one session: a lock held in one context keeps
//   the others waiting (or out, after lockTimeoutMs), change notices reach
//   the others, and a save from a copy another context saved over is a
//   ConflictError that writes nothing; `persist()` in a worker tells what
//   the page was granted;
// - contexts without `navigator.locks` or `BroadcastChannel` (insecure
//   contexts, older engines; removed here before the package loads): the
//   documented fallback, a lock per realm and no notices, and still no save
//   from a stale copy;
// - a module SharedWorker with the default entry;
// - a Service Worker: the default entry's top-level await is refused where
//   the engine refuses it (Chromium, Firefox), and manual-init with `init`
//   in the event works in all three, its store included.
// Needs a built pkg/ (`node scripts/build.mjs`) and the browsers
// scripts/setup.sh installs.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { createMockLlm } from "../support/mock-llm-server.mjs";
import { pageHandler, sendText, startServer } from "../../scripts/serve.mjs";

// A script for every kind of worker: runs `{ code, arg }` (a function's
// source, called with the package, this context's state and `arg`) and
// answers on the port that came with the message. It listens before the
// package loads and imports it inside the handler, as the guide says
// (`?entry=manual` loads manual-init and calls init; `?strip=locks,channel`
// removes those APIs first, as a context without them).
const AGENT = `const params = new URL(self.location.href).searchParams;
const strip = (params.get("strip") ?? "").split(",");
if (strip.includes("locks")) Object.defineProperty(Object.getPrototypeOf(navigator), "locks", { get: () => undefined, configurable: true });
if (strip.includes("channel")) delete self.BroadcastChannel;
let loading;
const load = () => (loading ??= params.get("entry") === "manual"
  ? import("/pkg/manual-init.js").then(async (m) => { await m.init({ module_or_path: new URL("/pkg/agent_compaction_bg.wasm", self.location.href) }); return m; })
  : import("/pkg/index.js"));
const state = {};
async function run(data, port) {
  try {
    const fn = new Function("return (" + data.code + ")")();
    port.postMessage({ ok: true, value: await fn(await load(), state, data.arg) });
  } catch (e) {
    port.postMessage({ ok: false, error: { name: e?.name, message: String(e?.message ?? e) } });
  }
}
if ("onconnect" in self) self.onconnect = (e) => { e.ports[0].onmessage = (m) => run(m.data, m.data.port); };
else self.onmessage = (m) => run(m.data, m.data.port);
`;

// A module Service Worker on manual-init: no top-level await; `init` in
// the event (it returns the same instance once loaded).
const SERVICE_WORKER_MANUAL = `import * as m from "/pkg/manual-init.js";
const ready = () => m.init({ module_or_path: new URL("/pkg/agent_compaction_bg.wasm", self.location.href) });
const state = {};
self.addEventListener("install", (e) => { self.skipWaiting(); e.waitUntil(ready()); });
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
self.addEventListener("message", (event) => {
  const port = event.ports[0];
  event.waitUntil((async () => {
    try {
      await ready();
      const fn = new Function("return (" + event.data.code + ")")();
      port.postMessage({ ok: true, value: await fn(m, state, event.data.arg) });
    } catch (e) {
      port.postMessage({ ok: false, error: { name: e?.name, message: String(e?.message ?? e) } });
    }
  })());
});
`;

// The default entry in a Service Worker: its top-level await.
const SERVICE_WORKER_DEFAULT = `import { Compactor } from "/pkg/index.js";
self.addEventListener("message", (event) => event.ports[0].postMessage({ ok: typeof Compactor === "function" }));
`;

// The page: `call(target, fn, arg)` runs `fn` in a worker (a Worker, a
// SharedWorker's port, a ServiceWorker) and resolves with its answer.
const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>workers</title>
<script>
  window.call = (target, fn, arg, ms = 30000) => new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = setTimeout(() => resolve({ ok: false, error: { name: "NoAnswer", message: "no answer in " + ms + " ms" } }), ms);
    channel.port1.onmessage = (e) => { clearTimeout(timer); resolve(e.data); };
    target.postMessage({ code: String(fn), arg, port: channel.port2 }, [channel.port2]);
  });
  // \`run(f, arg)\`: \`fns[f]\` run in \`target\`, its value, or an error naming it.
  window.runIn = (target, fns, label = "") => async (f, arg) => {
    const answer = await window.call(target, fns[f], arg);
    if (!answer.ok) throw new Error(label + f + ": " + answer.error.name + ": " + answer.error.message);
    return answer.value;
  };
  // What a worker of any kind is put through with the page (\`run\` calls
  // it): both compactions, the store opened, a session the page made loaded,
  // then appended to under the lock, and what is stored after.
  window.exercise = async (run, { db, conversation, title }) => {
    const out = {};
    out.compaction = await run("COMPACT", { conversation });
    out.apis = await run("OPEN", { db });
    const m = await import("/pkg/index.js");
    const store = await m.SessionStore.open({ name: db });
    const { id } = await store.createSession({ title });
    await store.save(id, new Function("return (" + conversation + ")")()(2, 10));
    await run("LOAD", { id });
    out.held = await run("HOLD", { id, ms: 10, text: "a in lock" });
    out.stored = await run("STORED", { id });
    store.close();
    return out;
  };
</script>`;

// The conversation each context builds: `turns` user/assistant pairs.
function conversation(turns, size) {
  const usage = (input) => ({
    input, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: input + 10,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  });
  const out = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: "user", content: `request ${i}: ${"u".repeat(size)}`, timestamp: 1000 + 2 * i });
    out.push({
      role: "assistant", content: [{ type: "text", text: `answer ${i}: ${"a".repeat(size)}` }], api: "openai-completions",
      provider: "local", model: "m", usage: usage((i + 1) * (size / 2)), stopReason: "stop", timestamp: 1001 + 2 * i,
    });
  }
  return out;
}

// What each worker runs. `arg` carries the database name, the session id
// and the conversation's source.
const COMPACT = async (m, _state, { conversation }) => {
  const make = new Function(`return (${conversation})`)();
  const options = { contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 } };
  const messages = make(20, 4000);
  const offline = await new m.Compactor(options).compact(messages);
  const fetched = await new m.Compactor({ ...options, summarize: m.openAiSummarizer({ baseUrl: "/llm", model: "mock-model" }) }).compact(messages);
  return {
    offline: { by: offline.summarizedBy, length: offline.messages.length, kept: offline.messages[offline.firstKeptIndex + 1] === messages[offline.firstKeptIndex] },
    fetched: { by: fetched.summarizedBy, starts: fetched.summary.summary.slice(0, 7), usage: fetched.summary.usage?.input ?? null },
  };
};

const OPEN = async (m, state, { db, lockTimeoutMs }) => {
  state.store = await m.SessionStore.open({ name: db, ...(lockTimeoutMs ? { lockTimeoutMs } : {}) });
  state.events = [];
  state.store.onChange((event) => state.events.push(event));
  return { locks: typeof navigator.locks?.request === "function", channel: typeof BroadcastChannel === "function" };
};

const LOAD = async (_m, state, { id }) => {
  state.messages = await state.store.load(id);
  return state.messages.length;
};

// Appends one message to the copy this context holds and saves it.
const APPEND = async (m, state, { id, text }) => {
  try {
    state.messages = [...state.messages, { role: "user", content: text, timestamp: 5000 }];
    const meta = await state.store.save(id, state.messages);
    return { saved: true, revision: meta.revision, at: Date.now() };
  } catch (e) {
    return { saved: false, name: e.name, conflict: e instanceof m.ConflictError, at: Date.now() };
  }
};

// Holds the session's lock for `ms`, appending inside it.
const HOLD = async (_m, state, { id, ms, text }) => {
  return await state.store.withSessionLock(id, async () => {
    const messages = await state.store.load(id);
    await new Promise((resolve) => setTimeout(resolve, ms));
    state.messages = [...messages, { role: "user", content: text, timestamp: 6000 }];
    await state.store.save(id, state.messages);
    return { released: Date.now() };
  });
};

const PERSIST = async (_m, state) => await state.store.persist();

const EVENTS = async (_m, state) => state.events.map((e) => `${e.type} ${e.revision}`);

const STORED = async (m, state, { id }) => {
  const messages = await state.store.load(id);
  const listed = (await state.store.list()).find((s) => s.id === id);
  return { texts: messages.filter((x) => typeof x.content === "string" && !x.content.startsWith("request")).map((x) => x.content), revision: listed.revision, count: listed.messageCount };
};

// The functions window.exercise runs in a worker.
const EXERCISE_FNS = { COMPACT: String(COMPACT), OPEN: String(OPEN), LOAD: String(LOAD), HOLD: String(HOLD), STORED: String(STORED) };

// What window.exercise gives for a worker that works as a module worker does.
function exercised(result) {
  assert.equal(result.compaction.offline.by, "extractive");
  assert.equal(result.compaction.fetched.by, "summarizer");
  assert.deepEqual(result.apis, { locks: true, channel: true });
  assert.deepEqual(result.stored, { texts: ["a in lock"], revision: 2, count: 5 });
}

for (const engine of ENGINES) {
  describe(engine, () => {
    let server;
    let browser;
    let page;
    let mock;
    let problems = [];
    let runs = 0;

    before(async () => {
      mock = createMockLlm({ prefix: "/llm" });
      const files = {
        "/workers/agent.js": AGENT,
        "/workers/sw-manual.js": SERVICE_WORKER_MANUAL,
        "/workers/sw-default.js": SERVICE_WORKER_DEFAULT,
      };
      server = await startServer({
        port: 0,
        handlers: [
          mock.handle,
          pageHandler("/workers/", PAGE),
          (req, res, url) => {
            const file = files[url.pathname];
            if (!file) return false;
            sendText(res, 200, file, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" });
            return true;
          },
        ],
      });
      browser = await launch(engine);
      page = await browser.newPage();
      page.onProblem((p) => problems.push(p));
      await page.goto(`${server.url}workers/`);
    });

    after(async () => {
      await page?.flush();
      await browser?.close();
      await server?.close();
      assert.deepEqual(problems, []);
    });

    // Runs `steps` in the page with `window.w(name, query)` starting a module
    // worker and `window.run(name, fn, arg)` calling it.
    const scenario = (steps, arg) =>
      page.evaluate(
        async ({ steps, arg, fns }) => {
          const workers = {};
          window.w = (name, query = "") => (workers[name] = new Worker(`/workers/agent.js?${query}&n=${name}`, { type: "module" }));
          window.run = (name, f, a) => window.runIn(workers[name], fns, `${name} `)(f, a);
          try {
            return await new Function(`return (${steps})`)()(arg);
          } finally {
            for (const worker of Object.values(workers)) worker.terminate();
          }
        },
        { steps: String(steps), arg, fns: { COMPACT: String(COMPACT), OPEN: String(OPEN), LOAD: String(LOAD), APPEND: String(APPEND), HOLD: String(HOLD), PERSIST: String(PERSIST), EVENTS: String(EVENTS), STORED: String(STORED) } },
      );

    for (const entry of ["default", "manual"]) {
      test(`module workers (${entry === "manual" ? "manual-init" : "the default entry"}): compaction, and one session shared with another worker and the page`, async () => {
        const db = `workers-${entry}-${runs++}`;
        const result = await scenario(
          async ({ db, entry, conversation }) => {
            const out = {};
            w("a", `entry=${entry}`);
            w("b", `entry=${entry}`);
            out.compaction = await run("a", "COMPACT", { conversation });
            await run("a", "OPEN", { db });
            await run("b", "OPEN", { db, lockTimeoutMs: 300 });
            // The page too, through the same entry.
            const m = await import(entry === "manual" ? "/pkg/manual-init.js" : "/pkg/index.js");
            if (entry === "manual") await m.init({ module_or_path: new URL("/pkg/agent_compaction_bg.wasm", location.href) });
            const store = await m.SessionStore.open({ name: db });
            // The page asks to keep the origin's storage (Firefox grants it
            // here); a worker, which cannot ask, reports what was granted.
            out.pagePersist = await store.persist();
            out.workerPersist = await run("a", "PERSIST");
            const pageEvents = [];
            store.onChange((e) => pageEvents.push(`${e.type} ${e.revision}`));
            const meta = await store.createSession({ title: "from the page" });
            const id = meta.id;
            const make = new Function(`return (${conversation})`)();
            let pageCopy = make(2, 10);
            await store.save(id, pageCopy);
            await run("a", "LOAD", { id });
            await run("b", "LOAD", { id });
            // a appends; b and the page hear it; b's and the page's copies are stale.
            out.a1 = await run("a", "APPEND", { id, text: "a1" });
            await new Promise((r) => setTimeout(r, 300));
            out.bHeard = await run("b", "EVENTS");
            out.bStale = await run("b", "APPEND", { id, text: "stale b" });
            try {
              await store.save(id, [...pageCopy, { role: "user", content: "stale page", timestamp: 1 }]);
              out.pageStale = "saved";
            } catch (e) {
              out.pageStale = { name: e.name, conflict: e instanceof m.ConflictError };
            }
            // a holds the lock 800 ms; b's save (lockTimeoutMs 300) gives up,
            // the page's load → save waits for it and lands after it.
            const holding = run("a", "HOLD", { id, ms: 800, text: "a in lock" });
            await new Promise((r) => setTimeout(r, 150));
            await run("b", "LOAD", { id });
            out.bTimedOut = await run("b", "APPEND", { id, text: "b timed out" });
            const pageSave = store.withSessionLock(id, async () => {
              pageCopy = await store.load(id);
              return await store.save(id, [...pageCopy, { role: "user", content: "page after lock", timestamp: 7000 }]);
            }).then(
              (meta) => ({ saved: true, at: Date.now(), revision: meta.revision }),
              (e) => ({ saved: false, name: e.name, at: Date.now() }),
            );
            out.held = await holding;
            out.pageSave = await pageSave;
            await new Promise((r) => setTimeout(r, 300));
            out.aHeard = await run("a", "EVENTS");
            out.pageHeard = pageEvents;
            out.stored = await run("b", "STORED", { id });
            store.close();
            return out;
          },
          { db, entry, conversation: String(conversation) },
        );
        assert.deepEqual(result.compaction, {
          offline: { by: "extractive", length: 41, kept: true },
          fetched: { by: "summarizer", starts: "## Goal", usage: 200 },
        });
        assert.equal(result.workerPersist, result.pagePersist);
        assert.equal(result.a1.saved, true);
        assert.equal(result.a1.revision, 2);
        assert.deepEqual(result.bHeard, ["created 0", "saved 1", "saved 2"]);
        assert.deepEqual({ ...result.bStale, at: 0 }, { saved: false, name: "ConflictError", conflict: true, at: 0 });
        assert.deepEqual(result.pageStale, { name: "ConflictError", conflict: true });
        assert.deepEqual({ ...result.bTimedOut, at: 0 }, { saved: false, name: "LockTimeoutError", conflict: false, at: 0 });
        assert.equal(result.pageSave.saved, true, result.pageSave.name);
        assert.ok(result.pageSave.at >= result.held.released, `the page saved at ${result.pageSave.at}, before the worker let the lock go at ${result.held.released}`);
        assert.equal(result.pageSave.revision, 4);
        assert.deepEqual(result.aHeard, ["created 0", "saved 1", "saved 4"]);
        assert.deepEqual(result.pageHeard, ["saved 2", "saved 3"]);
        assert.deepEqual(result.stored, { texts: ["a1", "a in lock", "page after lock"], revision: 4, count: 7 });
      });
    }

    test("without navigator.locks and BroadcastChannel: a lock per realm, no notices, and still no save from a stale copy", async () => {
      const db = `workers-bare-${runs++}`;
      const result = await scenario(
        async ({ db, conversation }) => {
          const out = {};
          w("a", "strip=locks,channel");
          w("b", "strip=locks,channel");
          out.apis = await run("a", "OPEN", { db, lockTimeoutMs: 300 });
          await run("b", "OPEN", { db, lockTimeoutMs: 300 });
          const m = await import("/pkg/index.js");
          const store = await m.SessionStore.open({ name: db });
          const { id } = await store.createSession({ title: "bare" });
          await store.save(id, new Function(`return (${conversation})`)()(2, 10));
          store.close();
          await run("a", "LOAD", { id });
          await run("b", "LOAD", { id });
          out.a1 = await run("a", "APPEND", { id, text: "a1" });
          await new Promise((r) => setTimeout(r, 300));
          out.bHeard = await run("b", "EVENTS");
          out.bStale = await run("b", "APPEND", { id, text: "stale b" });
          // a's lock does not keep b out: b's save runs at once, and a's
          // save inside its lock, from the copy it loaded, is refused.
          const holding = run("a", "HOLD", { id, ms: 800, text: "a in lock" }).then(
            (v) => ({ ok: true, ...v }),
            (e) => ({ ok: false, message: e.message }),
          );
          await new Promise((r) => setTimeout(r, 150));
          await run("b", "LOAD", { id });
          out.bDuringLock = await run("b", "APPEND", { id, text: "b during a's lock" });
          out.held = await holding;
          out.stored = await run("b", "STORED", { id });
          return out;
        },
        { db, conversation: String(conversation) },
      );
      assert.deepEqual(result.apis, { locks: false, channel: false });
      assert.equal(result.a1.saved, true);
      assert.deepEqual(result.bHeard, []);
      assert.equal(result.bStale.name, "ConflictError");
      assert.equal(result.bDuringLock.saved, true);
      assert.equal(result.held.ok, false);
      assert.match(result.held.message, /ConflictError/);
      assert.deepEqual(result.stored, { texts: ["a1", "b during a's lock"], revision: 3, count: 6 });
    });

    test("a module SharedWorker imports the package; its store saves under the lock", async (t) => {
      const supported = await page.evaluate(() => typeof SharedWorker === "function");
      if (!supported) return t.skip(`${engine} has no SharedWorker`);
      const db = `workers-shared-${runs++}`;
      const result = await page.evaluate(
        async ({ db, fns, conversation }) => {
          const shared = new SharedWorker("/workers/agent.js", { type: "module", name: db });
          shared.port.start();
          return await window.exercise(window.runIn(shared.port, fns), { db, conversation, title: "shared" });
        },
        { db, conversation: String(conversation), fns: EXERCISE_FNS },
      );
      exercised(result);
    });

    test("a Service Worker: manual-init works, its store included; the default entry's top-level await is refused", async (t) => {
      const result = await page.evaluate(
        async ({ db, fns, conversation }) => {
          const activated = async (file, scope) => {
            const registration = await navigator.serviceWorker.register(file, { type: "module", scope });
            const worker = registration.installing ?? registration.waiting ?? registration.active;
            if (worker.state !== "activated") {
              await new Promise((resolve, reject) => {
                worker.onstatechange = () => {
                  if (worker.state === "activated") resolve();
                  if (worker.state === "redundant") reject(new Error("redundant"));
                };
              });
            }
            return registration;
          };
          const out = {};
          try {
            const registration = await activated("/workers/sw-default.js", "/workers/default-scope/");
            out.defaultEntry = { registered: true, answer: await window.call(registration.active, "", null, 3000) };
            await registration.unregister();
          } catch (e) {
            out.defaultEntry = { registered: false, name: e.name };
          }
          const registration = await activated("/workers/sw-manual.js", "/workers/manual-scope/");
          Object.assign(out, await window.exercise(window.runIn(registration.active, fns), { db, conversation, title: "service" }));
          await registration.unregister();
          return out;
        },
        { db: `workers-service-${runs++}`, conversation: String(conversation), fns: EXERCISE_FNS },
      );
      if (engine === "webkit") {
        // WebKit starts it and dispatches the events that arrive while the
        // package loads to no listener, as in a module worker.
        t.diagnostic(`the default entry in a Service Worker (${engine}): ${JSON.stringify(result.defaultEntry)}`);
      } else {
        assert.deepEqual(result.defaultEntry, { registered: false, name: "TypeError" });
      }
      exercised(result);
    });
  });
}
