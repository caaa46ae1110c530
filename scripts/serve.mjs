// Demo server: the built demo `www/dist/` at `/`, the built package `pkg/`
// at `/pkg/`, and (when run as the demo server) the local OpenAI-compatible
// model (scripts/local-model.mjs) at `/local/v1/`. Dependency-free
// (node:http). Binds 127.0.0.1 only.
//
//   node scripts/serve.mjs            → builds the demo (scripts/demo-build.mjs), then PORT or 8787
//   PORT=0 node scripts/serve.mjs     → any free port
//   SKIP_DEMO_BUILD=1 node scripts/serve.mjs  → serve www/dist/ as it is
//
// `npm start` runs setup, builds pkg/, then this.
//
// Modular on purpose: `startServer({ port, handlers, mounts })` takes extra
// request handlers (tried before the static files, e.g. a future
// OpenAI-compatible `/v1/...` endpoint) and returns `{ url, port, server, close }`.
import { createReadStream, existsSync, realpathSync } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));

export const MIME_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".jsonl": "application/jsonl; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".ts": "text/plain; charset=utf-8",
  ".md": "text/plain; charset=utf-8", // shown as text, not downloaded
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/** The default mounts: the built package, the documentation the demo links to, and the built demo page. */
export const DEFAULT_MOUNTS = [
  { prefix: "/pkg/", dir: join(root, "pkg") },
  { prefix: "/docs/", dir: join(root, "docs") },
  { prefix: "/", dir: join(root, "www", "dist") },
];

export function sendText(res, status, text, headers = {}) {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
  res.end(text);
}

/** A request handler serving `html` at `path` (a test or benchmark page). */
export function pageHandler(path, html, headers = {}) {
  return (req, res, url) => {
    if (url.pathname !== path) return false;
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache", ...headers });
    res.end(html);
    return true;
  };
}

/**
 * A request handler serving the files under `dir` at URL prefix `prefix`.
 * Returns true when it handled the request (including with a 4xx), false when
 * the URL is outside its prefix. Paths that escape `dir` — by `..`, encoded
 * separators, NUL bytes or symlinks pointing outside — get 403/404.
 */
export function staticHandler(prefix, dir) {
  const base = resolve(dir);
  let realBase; // resolved lazily: `pkg/` may be built after the server starts
  return async (req, res, url) => {
    if (!url.pathname.startsWith(prefix)) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendText(res, 405, "Method Not Allowed\n", { allow: "GET, HEAD" });
      return true;
    }
    let rel;
    try {
      rel = decodeURIComponent(url.pathname.slice(prefix.length));
    } catch {
      sendText(res, 400, "Bad Request\n");
      return true;
    }
    if (rel.includes("\0") || rel.includes("\\")) {
      sendText(res, 400, "Bad Request\n");
      return true;
    }
    const target = resolve(base, "." + "/" + rel);
    if (target !== base && !target.startsWith(base + sep)) {
      sendText(res, 403, "Forbidden\n");
      return true;
    }
    try {
      realBase ??= await realpath(base);
      let file = await realpath(target);
      if (file !== realBase && !file.startsWith(realBase + sep)) {
        sendText(res, 403, "Forbidden\n");
        return true;
      }
      let info = await stat(file);
      if (info.isDirectory()) {
        if (!url.pathname.endsWith("/")) {
          // (leading slashes collapsed: "//host/dir" must not redirect off-site)
          res.writeHead(301, { location: `/${url.pathname.replace(/^\/+/, "")}/${url.search}` });
          res.end();
          return true;
        }
        file = join(file, "index.html");
        info = await stat(file);
      }
      if (!info.isFile()) throw Object.assign(new Error("not a file"), { code: "ENOENT" });
      res.writeHead(200, {
        "content-type": MIME_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream",
        "content-length": info.size,
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
      });
      if (req.method === "HEAD") res.end();
      else createReadStream(file).on("error", (e) => res.destroy(e)).pipe(res);
    } catch (err) {
      realBase = undefined;
      if (err.code === "ENOENT" || err.code === "ENOTDIR") sendText(res, 404, "Not Found\n");
      else sendText(res, 500, "Internal Server Error\n");
    }
    return true;
  };
}

/**
 * Start the server. `handlers` run first, in order; each is
 * `(req, res, url) => boolean | Promise<boolean>` (true = handled).
 * Then the static `mounts` (first matching prefix wins). Otherwise 404.
 */
export function startServer({
  port = process.env.PORT || 8787,
  host = "127.0.0.1",
  handlers = [],
  mounts = DEFAULT_MOUNTS,
} = {}) {
  const chain = [...handlers, ...mounts.map((m) => staticHandler(m.prefix, m.dir))];
  const server = createServer(async (req, res) => {
    try {
      // Prefixing (not resolving against a base) keeps "//x" a path, not a host.
      const url = new URL(`http://${host}${req.url?.startsWith("/") ? req.url : "/"}`);
      for (const handle of chain) if (await handle(req, res, url)) return;
      sendText(res, 404, "Not Found\n");
    } catch (err) {
      if (!res.headersSent) sendText(res, 500, "Internal Server Error\n");
      else res.destroy(err);
    }
  });
  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(Number(port), host, () => {
      server.off("error", reject);
      const actual = server.address().port;
      resolvePromise({
        url: `http://${host}:${actual}/`,
        port: actual,
        server,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections?.();
          }),
      });
    });
  });
}

const isMain = (() => {
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1] ?? "")).href;
  } catch {
    return false;
  }
})();
if (isMain) {
  if (!existsSync(join(root, "pkg", "index.js"))) {
    console.error("pkg/ is not built yet: run `node scripts/build.mjs` first (npm start does).");
    process.exit(1);
  }
  if (!process.env.SKIP_DEMO_BUILD) {
    const { buildDemo } = await import("./demo-build.mjs");
    const started = Date.now();
    try {
      await buildDemo();
    } catch (err) {
      console.error("building the demo failed:", err?.message ?? err);
      process.exit(1);
    }
    console.log(`demo built into www/dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } else if (!existsSync(join(root, "www", "dist", "index.html"))) {
    console.warn("note: www/dist/ is not built; run `node scripts/demo-build.mjs`.");
  }
  // The demo's local OpenAI-compatible model (scripts/local-model.mjs) at /local/v1/.
  const { createLocalModel } = await import("./local-model.mjs");
  let running;
  try {
    running = await startServer({ handlers: [createLocalModel().handle] });
  } catch (err) {
    console.error(err.code === "EADDRINUSE" ? `port ${err.port} is in use: set PORT (PORT=0 picks a free one)` : err);
    process.exit(1);
  }
  const { url, close } = running;
  console.log(`agent-compaction demo: ${url}`);
  console.log(`local model (OpenAI-compatible): ${url}local/v1`);
  const stop = () => close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
