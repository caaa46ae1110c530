// SPEC §0 (loading) in real environments:
//   a) Vite 8: a production build and the dev server, with no Vite config,
//      for the repository layout (node_modules/agent-compaction linking to pkg/, a
//      linked package) and for an installed copy (the files `npm pack` would
//      publish, as a plain directory in node_modules: pre-bundled by the dev
//      server); Vite SSR (ssrLoadModule); a Vite app with a module worker
//      (the build needs `worker: { format: "es" }`: the default "iife"
//      cannot hold top-level await);
//   b) module Web Workers importing /pkg/index.js (no window, no document;
//      IndexedDB is not opened by importing), in Chromium, Firefox and
//      WebKit (tests/support/browsers.mjs); the rest in Chromium;
//   c) Node importing "agent-compaction" by name (the `node` condition).
// Needs a built pkg/ (`node scripts/build.mjs`) and /usr/bin/chromium.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM } from "../support/chromium.mjs";
import { ENGINES, launch } from "../support/browsers.mjs";
import { build, createServer, version as viteVersion } from "vite";
import { sendText, startServer } from "../../scripts/serve.mjs";


const repo = fileURLToPath(new URL("../../", import.meta.url));
const pkgDir = join(repo, "pkg");
const viteApp = join(repo, "tests/vite-app");
const PREAMBLE = "The conversation history before this point was compacted into the following summary:";

/** What tests/vite-app/main.js must write into #result. */
const EXPECTED_APP_RESULT = {
  ok: true,
  count: 2,
  first:
    `${PREAMBLE}\n\n<compaction_summary>\nThe user asked a first question.` +
    "\n\n<read-files>\na.ts\n</read-files>\n</compaction_summary>",
  sameObject: true,
  summarizedBy: "extractive",
  tier: "clear",
  storeTitle: "from a bundle",
};

let browser;
let tmp;
let installedApp; // tmp copy of tests/vite-app with the packed package in node_modules/

before(async () => {
  browser = await chromium.launch(CHROMIUM);
  tmp = mkdtempSync(join(tmpdir(), "agent-compaction-e2e-"));
  // The files the published package contains, per `npm pack`.
  const [packed] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: pkgDir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
  installedApp = join(tmp, "installed-app");
  cpSync(viteApp, installedApp, { recursive: true });
  const target = join(installedApp, "node_modules/agent-compaction");
  for (const { path } of packed.files) {
    mkdirSync(dirname(join(target, path)), { recursive: true });
    cpSync(join(pkgDir, path), join(target, path));
  }
});

after(async () => {
  await browser?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/**
 * Open `url` in a new page; wait until `#result` holds JSON. Returns the
 * parsed result, the responses seen and any page/console errors.
 */
async function runPage(url, { selector = "#result" } = {}) {
  const page = await browser.newPage();
  const problems = [];
  const responses = [];
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console.error: ${msg.text()}`);
  });
  page.on("response", (res) => responses.push({ url: res.url(), status: res.status(), type: res.headers()["content-type"] ?? "" }));
  try {
    await page.goto(url);
    const handle = await page.waitForFunction(
      (sel) => {
        const text = document.querySelector(sel)?.textContent ?? "";
        return text.startsWith("{") ? text : false;
      },
      selector,
      { timeout: 15_000 },
    );
    return { result: JSON.parse(await handle.jsonValue()), responses, problems };
  } finally {
    await page.close();
  }
}

/**
 * The package's one wasm module was fetched once, as wasm; returns its response.
 */
function assertWasmLoaded(responses) {
  const wasm = responses.filter((r) => new URL(r.url).pathname.endsWith(".wasm"));
  assert.equal(wasm.length, 1, JSON.stringify(responses, null, 1));
  assert.match(new URL(wasm[0].url).pathname, /\/agent_compaction_bg[-.]/);
  assert.equal(wasm[0].status, 200);
  assert.match(wasm[0].type, /^application\/wasm/);
  return wasm[0];
}

describe(`Vite ${viteVersion}`, () => {
  for (const layout of ["repo", "installed"]) {
    const root = () => (layout === "repo" ? viteApp : installedApp);

    test(`vite build, no config (${layout} layout): the built page runs`, async () => {
      const outDir = join(tmp, `dist-${layout}`);
      await build({
        root: root(),
        configFile: false,
        logLevel: "warn",
        cacheDir: join(tmp, `vite-cache-build-${layout}`),
        build: { outDir, emptyOutDir: true },
      });
      const assets = readdirSync(join(outDir, "assets"));
      assert.ok(assets.some((f) => /^agent_compaction_bg-.*\.wasm$/.test(f)), `wasm emitted as an asset: ${assets}`);
      const server = await startServer({ port: 0, mounts: [{ prefix: "/", dir: outDir }] });
      try {
        const { result, responses, problems } = await runPage(server.url);
        assert.deepEqual(problems, []);
        assert.deepEqual(result, EXPECTED_APP_RESULT);
        assert.match(assertWasmLoaded(responses).url, /\/assets\/agent_compaction_bg-.*\.wasm$/);
      } finally {
        await server.close();
      }
    });

    test(`vite dev server, no config (${layout} layout): the page runs`, async () => {
      const server = await createServer({
        root: root(),
        configFile: false,
        logLevel: "warn",
        cacheDir: join(tmp, `vite-cache-dev-${layout}`),
        server: { host: "127.0.0.1", port: 0 },
      });
      await server.listen();
      try {
        const { result, responses, problems } = await runPage(server.resolvedUrls.local[0]);
        assert.deepEqual(problems, []);
        assert.deepEqual(result, EXPECTED_APP_RESULT);
        const wasm = assertWasmLoaded(responses);
        const prebundled = responses.some((r) => /\/deps\/agent-compaction\.js(\?|$)/.test(r.url));
        if (layout === "installed") {
          // A package installed in node_modules is pre-bundled by the dev server
          // (top-level await and new URL(…, import.meta.url) moved into
          // .vite/deps/): the wasm URL must still point at the package's file.
          assert.ok(prebundled, "agent-compaction was pre-bundled");
          assert.match(wasm.url, /\/node_modules\/agent-compaction\/agent_compaction_bg\.wasm$/);
        } else {
          // A linked package (symlink out of node_modules) is served as source.
          assert.ok(!prebundled, "a linked package is not pre-bundled");
          assert.match(wasm.url, /\/pkg\/agent_compaction_bg\.wasm$/);
        }
      } finally {
        await server.close();
      }
    });
  }
});

test(`Vite ${viteVersion} server-side rendering (ssrLoadModule) imports the package`, async () => {
  // SPEC §0: importing does not crash server-side rendering.
  writeFileSync(
    join(installedApp, "ssr-entry.js"),
    `import { convertToLlm, transformContext } from "agent-compaction";
export const render = (messages) => JSON.stringify(convertToLlm(transformContext(messages)));
`,
  );
  const server = await createServer({
    root: installedApp,
    configFile: false,
    logLevel: "warn",
    appType: "custom",
    server: { middlewareMode: true, hmr: false },
  });
  try {
    const { render } = await server.ssrLoadModule("/ssr-entry.js");
    const messages = [
      { role: "user", content: "old", timestamp: 1 },
      { role: "compactionSummary", summary: "S", tokensBefore: 10, timestamp: 2 },
    ];
    assert.deepEqual(JSON.parse(render(messages)), [
      { role: "user", content: [{ type: "text", text: `${PREAMBLE}\n\n<compaction_summary>\nS\n</compaction_summary>` }], timestamp: 2 },
    ]);
  } finally {
    await server.close();
  }
});

// A Vite app whose module worker imports the package (the installed copy):
// `new Worker(new URL("./worker.js", import.meta.url), { type: "module" })`.
const WORKER_APP = {
  "index.html": '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><pre id="result">loading…</pre><script type="module" src="./main.js"></script>\n',
  "main.js": `const out = document.getElementById("result");
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
worker.onerror = (e) => { out.textContent = JSON.stringify({ ok: false, error: e.message || "worker error" }); };
worker.onmessage = (e) => {
  if (e.data.ready) worker.postMessage(${JSON.stringify([
    { role: "user", content: "old", timestamp: 1 },
    { role: "compactionSummary", summary: "S", tokensBefore: 10, timestamp: 2 },
    { role: "user", content: "new", timestamp: 3 },
  ])});
  else out.textContent = JSON.stringify(e.data);
};
`,
  "worker.js": `import { convertToLlm, transformContext } from "agent-compaction";
self.onmessage = (e) => postMessage({ ok: true, llm: convertToLlm(transformContext(e.data)) });
postMessage({ ready: true }); // messages posted before this point would be lost (top-level await)
`,
};
const EXPECTED_WORKER_APP_RESULT = {
  ok: true,
  llm: [
    { role: "user", content: [{ type: "text", text: `${PREAMBLE}\n\n<compaction_summary>\nS\n</compaction_summary>` }], timestamp: 2 },
    { role: "user", content: "new", timestamp: 3 },
  ],
};

describe(`Vite ${viteVersion}, a module worker importing the package`, () => {
  let root;
  before(() => {
    root = join(tmp, "worker-app");
    for (const [name, text] of Object.entries(WORKER_APP)) {
      mkdirSync(root, { recursive: true });
      writeFileSync(join(root, name), text);
    }
    cpSync(join(installedApp, "node_modules"), join(root, "node_modules"), { recursive: true });
  });

  test("vite build: the default worker format (iife) cannot hold top-level await; worker.format 'es' works", async (t) => {
    const config = (outDir, worker) => ({
      root,
      configFile: false,
      logLevel: "silent",
      cacheDir: join(tmp, "vite-cache-worker-build"),
      build: { outDir, emptyOutDir: true },
      ...(worker ? { worker } : {}),
    });
    // Vite's default: reported, not asserted (a future Vite may change it).
    let defaultOutcome = "builds";
    try {
      await build(config(join(tmp, "dist-worker-default")));
    } catch (err) {
      const message = err.message.replace(/\x1b\[[0-9;]*m/g, "");
      defaultOutcome = `fails: ${/[^\n]*top-level await[^\n]*/i.exec(message)?.[0].trim() ?? message.split("\n")[0]}`;
    }
    t.diagnostic(`worker build with Vite's default worker.format: ${defaultOutcome}`);

    const outDir = join(tmp, "dist-worker-es");
    await build(config(outDir, { format: "es" }));
    const server = await startServer({ port: 0, mounts: [{ prefix: "/", dir: outDir }] });
    try {
      const { result, responses, problems } = await runPage(server.url);
      assert.deepEqual(problems, []);
      assert.deepEqual(result, EXPECTED_WORKER_APP_RESULT);
      assertWasmLoaded(responses);
    } finally {
      await server.close();
    }
  });

  test("vite dev server, no config: the worker runs", async () => {
    const server = await createServer({
      root,
      configFile: false,
      logLevel: "warn",
      server: { host: "127.0.0.1", port: 0 },
    });
    await server.listen();
    try {
      const { result, responses, problems } = await runPage(server.resolvedUrls.local[0]);
      assert.deepEqual(problems, []);
      assert.deepEqual(result, EXPECTED_WORKER_APP_RESULT);
      assertWasmLoaded(responses);
    } finally {
      await server.close();
    }
  });
});

// Worker pages, served by the demo server through extra handlers (the same
// hook a future /v1 endpoint uses).
//
// Top-level await and workers: while a module worker's graph is still
// evaluating (the package awaits its wasm), messages posted to the worker are
// dispatched to no listener and lost (HTML: the port message queue is enabled
// before the module's evaluation promise settles). So a worker either
// registers `onmessage` first and imports the package dynamically (worker A),
// or imports it statically and announces when it is ready (worker B).
const WORKER_MESSAGES = [
  { role: "user", content: "old", timestamp: 1 },
  { role: "compactionSummary", summary: "S1", tokensBefore: 10, timestamp: 2 },
  { role: "user", content: "middle", timestamp: 3 },
  { role: "compactionSummary", summary: "S2", tokensBefore: 20, timestamp: 4, details: { readFiles: [], modifiedFiles: ["b.ts"] } },
  { role: "assistant", content: [{ type: "text", text: "latest" }], timestamp: 5 },
];

const WORKER_PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><pre id="result">loading…</pre>
<script type="module">
const messages = ${JSON.stringify(WORKER_MESSAGES)};
const fail = (error) => { document.getElementById("result").textContent = JSON.stringify({ ok: false, error }); };
const start = (name) => { const w = new Worker(name, { type: "module" }); w.onerror = (e) => fail(name + ": " + (e.message || "worker error")); return w; };
const a = new Promise((resolve) => {
  const w = start("/worker-test/listen-first.js");
  w.onmessage = (e) => resolve(e.data);
  w.postMessage(messages); // right away: the worker listens before it imports
});
const b = new Promise((resolve) => {
  const w = start("/worker-test/static-import.js");
  let early = null;
  w.onmessage = (e) => {
    if (e.data.ready) return w.postMessage({ tag: "after-ready", messages });
    if (e.data.tag === "before-ready") early = e.data;
    else resolve({ earlyAnswered: early !== null, ...e.data });
  };
  w.postMessage({ tag: "before-ready", messages }); // posted while the worker evaluates
});
Promise.all([a, b]).then(([listenFirst, staticImport]) => {
  document.getElementById("result").textContent = JSON.stringify({ ok: true, listenFirst, staticImport });
}, (err) => fail(String(err)));
</script>`;

const LISTEN_FIRST_WORKER = `// Record any IndexedDB open: importing the package must not open one.
const opened = [];
const realOpen = indexedDB.open.bind(indexedDB);
indexedDB.open = (...args) => { opened.push(args[0]); return realOpen(...args); };
const loading = import("/pkg/index.js");
self.onmessage = async (event) => {
  try {
    const lib = await loading;
    const messages = event.data;
    const context = lib.transformContext(messages);
    const llm = lib.convertToLlm(context);
    const display = lib.agentMessagesToChatMessages(messages, { divider: true });
    postMessage({
      ok: true,
      contextLength: context.length,
      contextStartsAtLastSummary: context[0] === messages[3],
      llm,
      displayRoles: display.map((m) => m.role),
      hasWindow: typeof window !== "undefined",
      hasDocument: typeof document !== "undefined",
      indexedDbOpened: opened,
    });
  } catch (err) {
    postMessage({ ok: false, error: String(err && err.stack || err) });
  }
};
`;

const STATIC_IMPORT_WORKER = `import { convertToLlm, transformContext } from "/pkg/index.js";
self.onmessage = (event) => {
  const { tag, messages } = event.data;
  try {
    postMessage({ tag, ok: true, llm: convertToLlm(transformContext(messages)) });
  } catch (err) {
    postMessage({ tag, ok: false, error: String(err && err.stack || err) });
  }
};
postMessage({ ready: true });
`;

const EXPECTED_WORKER_LLM = [
  {
    role: "user",
    content: [{ type: "text", text: `${PREAMBLE}\n\n<compaction_summary>\nS2\n\n<modified-files>\nb.ts\n</modified-files>\n</compaction_summary>` }],
    timestamp: 4,
  },
  { role: "assistant", content: [{ type: "text", text: "latest" }], timestamp: 5 },
];

for (const engine of ENGINES) {
  test(`module Web Workers import the package and run transformContext / convertToLlm (${engine})`, async (t) => {
    const files = {
      "/worker-test/": ["text/html", WORKER_PAGE],
      "/worker-test/listen-first.js": ["text/javascript", LISTEN_FIRST_WORKER],
      "/worker-test/static-import.js": ["text/javascript", STATIC_IMPORT_WORKER],
    };
    // The .wasm responses, as the server sends them (workers' requests are
    // not a page's responses in every driver).
    const responses = [];
    const server = await startServer({
      port: 0,
      handlers: [
        (req, res, url) => {
          if (url.pathname.endsWith(".wasm")) {
            const writeHead = res.writeHead.bind(res);
            res.writeHead = (status, headers = {}) => {
              responses.push({ url: url.href, status, type: headers["content-type"] ?? "" });
              return writeHead(status, headers);
            };
            return false;
          }
          const file = files[url.pathname];
          if (!file) return false;
          sendText(res, 200, file[1], { "content-type": `${file[0]}; charset=utf-8` });
          return true;
        },
      ],
    });
    const browser = await launch(engine);
    try {
      const page = await browser.newPage();
      const problems = [];
      page.onProblem((p) => problems.push(p));
      await page.goto(new URL("/worker-test/", server.url).href);
      await page.waitForFunction(() => (document.querySelector("#result")?.textContent ?? "").startsWith("{"), null, { timeout: 15_000 });
      const result = JSON.parse(await page.evaluate(() => document.querySelector("#result").textContent));
      await page.flush();
      assert.deepEqual(problems, []);
      assert.equal(result.ok, true, result.error);

      const a = result.listenFirst;
      assert.equal(a.ok, true, a.error);
      assert.equal(a.hasWindow, false);
      assert.equal(a.hasDocument, false);
      assert.deepEqual(a.indexedDbOpened, []);
      assert.equal(a.contextLength, 2);
      assert.equal(a.contextStartsAtLastSummary, true);
      assert.deepEqual(a.llm, EXPECTED_WORKER_LLM);
      assert.deepEqual(a.displayRoles, ["user", "compactionDivider", "user", "compactionDivider", "assistant"]);

      const b = result.staticImport;
      assert.equal(b.ok, true, b.error);
      assert.equal(b.tag, "after-ready");
      assert.deepEqual(b.llm, EXPECTED_WORKER_LLM);
      t.diagnostic(
        `a message posted while the worker's static import was still evaluating was ${b.earlyAnswered ? "answered" : "LOST"} (${engine})`,
      );

      assert.ok(responses.length >= 1 && responses.every((r) => r.status === 200 && r.type.startsWith("application/wasm")), JSON.stringify(responses));
    } finally {
      await browser.close();
      await server.close();
    }
  });
}

const NODE_SCRIPT = `
import { agentMessagesToChatMessages, convertToLlm, transformContext } from "agent-compaction";
const messages = [
  { role: "user", content: "old", timestamp: 1 },
  { role: "compactionSummary", summary: "S", tokensBefore: 10, timestamp: 2 },
  { role: "user", content: "new", timestamp: 3 },
];
const llm = convertToLlm(transformContext(messages));
console.log(JSON.stringify({
  resolved: import.meta.resolve("agent-compaction"),
  count: llm.length,
  first: llm[0].content[0].text,
  same: llm[1] === messages[2],
  display: agentMessagesToChatMessages(messages).map((m) => m.role),
  globals: [typeof window, typeof document, typeof indexedDB],
}));
`;

for (const layout of ["repo", "installed"]) {
  test(`Node ${process.version} imports "agent-compaction" by name, no init call (${layout} layout)`, () => {
    const cwd = layout === "repo" ? repo : installedApp;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", NODE_SCRIPT], { cwd, encoding: "utf8", timeout: 15_000 });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr, "");
    const out = JSON.parse(run.stdout);
    assert.match(out.resolved, /\/node\.js$/, "the `node` condition of the exports map");
    if (layout === "installed") assert.ok(out.resolved.includes("/installed-app/node_modules/agent-compaction/"), out.resolved);
    assert.equal(out.count, 2);
    assert.equal(out.first, `${PREAMBLE}\n\n<compaction_summary>\nS\n</compaction_summary>`);
    assert.equal(out.same, true);
    assert.deepEqual(out.display, ["user", "user"]);
    assert.deepEqual(out.globals, ["undefined", "undefined", "undefined"]);
  });
}
