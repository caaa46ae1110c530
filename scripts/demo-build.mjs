// Builds the demo (www/) for the browser with Vite: pi-agent-core, pi-ai's
// OpenAI Chat Completions provider (through www/pi-ai-browser.js) and the
// package from pkg/ (through node_modules/agent-compaction → ../pkg, which
// `node scripts/build.mjs` links, wasm emitted as an asset) into www/dist/,
// served by scripts/serve.mjs.
//
//   node scripts/demo-build.mjs          → www/dist/
//   buildDemo({ outDir })                → any directory (the tests build their own copy)
//
// Offline: everything comes from node_modules. The output is written beside
// the target and swapped in whole, so a server reading www/dist/ while a
// build runs never sees half a demo.
import { existsSync, mkdtempSync, realpathSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
export const DEMO_SOURCE = join(root, "www");
export const DEMO_DIST = join(DEMO_SOURCE, "dist");

/**
 * Builds the demo into `outDir` (default www/dist). Resolves to `outDir`.
 * Needs a built pkg/ (`node scripts/build.mjs`).
 */
export async function buildDemo({ outDir = DEMO_DIST, logLevel = "warn" } = {}) {
  if (!existsSync(join(root, "node_modules/agent-compaction/index.js"))) {
    throw new Error("pkg/ is not built (or not linked into node_modules): run `node scripts/build.mjs` first");
  }
  const { build, createLogger } = await import("vite");
  // pi-ai's env-api-keys.js names node:fs in a branch only Bun takes (it
  // says so itself); Vite stubs it for the browser. Not worth a warning.
  const logger = createLogger(logLevel);
  const warn = logger.warn.bind(logger);
  logger.warn = (msg, options) => {
    if (/"node:fs" has been externalized for browser compatibility, imported by .*env-api-keys\.js/.test(msg)) return;
    warn(msg, options);
  };
  const target = resolve(outDir);
  const parent = dirname(target);
  const next = `${target}.next-${process.pid}`;
  const cacheDir = mkdtempSync(join(tmpdir(), "agent-compaction-demo-vite-"));
  rmSync(next, { recursive: true, force: true });
  try {
    await build({
      root: DEMO_SOURCE,
      configFile: false,
      logLevel,
      customLogger: logger,
      cacheDir,
      base: "./",
      // The page's own files only: www/dist and the tests' copies are outputs.
      publicDir: false,
      build: {
        outDir: next,
        emptyOutDir: true,
        // The package instantiates its wasm with top-level await.
        target: "esnext",
        // One chunk per lazily loaded provider module is fine; keep the warning quiet.
        chunkSizeWarningLimit: 2048,
        reportCompressedSize: false,
      },
      resolve: {
        // pi-agent-core imports four names from pi-ai's entry, which registers
        // every provider and pulls SDKs that do not bundle for a browser: the
        // demo takes them from pi-ai's own files through a narrow shim (only
        // the OpenAI Chat Completions provider). Subpaths are untouched.
        alias: [{ find: /^@mariozechner\/pi-ai$/, replacement: join(DEMO_SOURCE, "pi-ai-browser.js") }],
      },
    });
  } catch (err) {
    rmSync(next, { recursive: true, force: true });
    throw err;
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
  const old = join(parent, `.${basename(target)}.old-${process.pid}`);
  try {
    renameSync(target, old);
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
  }
  renameSync(next, target);
  rmSync(old, { recursive: true, force: true });
  return target;
}

const isMain = (() => {
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1] ?? "")).href;
  } catch {
    return false;
  }
})();
if (isMain) {
  const started = Date.now();
  const out = await buildDemo({ logLevel: "info" });
  console.log(`demo built into ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
