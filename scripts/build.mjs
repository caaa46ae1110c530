// Builds pkg/: the npm package `agent-compaction`.
//   cargo (release, wasm32) → wasm-bindgen --target web → wasm-opt -Oz
//   (scripts/lib/wasm-steps.mjs) → entry files and package.json from
//   package/ (wasm-bindgen's JS minified) → sizes printed (gzip); `npm run size` breaks them down by area.
import { copyFileSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { bindgen, cargoBuild, minifyJs, optimize } from "./lib/wasm-steps.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "pkg");
// Built beside pkg/ and swapped in at the end, so that a test or a server
// reading pkg/ while a build runs never sees a half-written package.
const next = join(root, `pkg.next-${process.pid}`);

const raw = cargoBuild(root);
rmSync(next, { recursive: true, force: true });
mkdirSync(next);
let wasm = bindgen(root, raw, next);
await minifyJs(next);
optimize(root, wasm, wasm);
for (const f of readdirSync(join(root, "package"))) copyFileSync(join(root, "package", f), join(next, f));
copyFileSync(join(root, "README.md"), join(next, "README.md"));
const old = join(root, `pkg.old-${process.pid}`);
try {
  renameSync(pkg, old);
} catch (e) {
  if (e.code !== "ENOENT") throw e;
}
renameSync(next, pkg);
rmSync(old, { recursive: true, force: true });
wasm = join(pkg, "agent_compaction_bg.wasm");

// Link the package into node_modules so that tests, the demo and the
// TypeScript check import it by name, through its real `exports` map.
mkdirSync(join(root, "node_modules"), { recursive: true });
rmSync(join(root, "node_modules/agent-compaction"), { recursive: true, force: true });
symlinkSync("../pkg", join(root, "node_modules/agent-compaction"), "dir");

const sizes = (file) => {
  const bytes = readFileSync(file);
  return { raw: statSync(file).size, gzip: gzipSync(bytes, { level: 9 }).length };
};
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const glue = ["agent_compaction.js", "index.js"].map((f) => join(pkg, f));
const snippets = [];
const walk = (dir) => {
  for (const f of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, f.name);
    if (f.isDirectory()) walk(p);
    else if (p.endsWith(".js")) snippets.push(p);
  }
};
walk(join(pkg, "snippets"));
const w = sizes(wasm);
const js = [...glue, ...snippets].map(sizes).reduce((a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip }));
console.log("\npkg/ built:");
console.log(`  .wasm          ${kb(w.raw)} raw, ${kb(w.gzip)} gzipped`);
console.log(`  JS glue        ${kb(js.raw)} raw, ${kb(js.gzip)} gzipped (agent_compaction.js, index.js, snippets)`);
const total = w.gzip + js.gzip;
console.log(`  total          ${kb(total)} gzipped (.wasm + JS glue); per area: npm run size`);
