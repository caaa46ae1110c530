// Builds pkg/: the npm package `agent-compaction`.
//   for each of its four wasm modules (the main one, and the lazily loaded
//   store, extractive summarizer and `run` module): cargo (release, wasm32, one feature) → wasm-bindgen --target web
//   → wasm-opt -Oz (scripts/lib/wasm-steps.mjs); then the entry files and
//   package.json from package/ (wasm-bindgen's JS minified) → sizes printed
//   (gzip); `npm run size` breaks them down by area.
import {
  copyFileSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { MODULES, bindgen, cargoBuild, minifyJs, optimize } from "./lib/wasm-steps.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "pkg");
// Built beside pkg/ and swapped in at the end, so that a test or a server
// reading pkg/ while a build runs never sees a half-written package.
const next = join(root, `pkg.next-${process.pid}`);

// The small entries a page loads at import (and their Node and manual-init
// twins) ship without their comments, which are most of their bytes
// (1.1 KB gzipped of the 11 KB of JS loaded at import): the repository's
// package/ keeps them, and index.d.ts documents the API. Only whole-line
// `//` comments and `/** … */` blocks go; every line of code stays as
// written, so that a bundler still finds `new URL("…wasm", import.meta.url)`.
const COMMENTED_ENTRIES = ["index.js", "manual-init.js", "node.js", "session-store.js", "extractive.js", "run.js"];
function withoutComments(text, name) {
  const out = text.replace(/^[ \t]*\/\*\*(?:(?!\*\/)[\s\S])*\*\/[ \t]*\n/gm, "").replace(/^[ \t]*\/\/.*\n/gm, "");
  // A `/*` or `//` left at the start of a line would be a comment the
  // patterns above did not expect: stop rather than ship it half-stripped.
  if (/^[ \t]*\/[*/]/m.test(out)) throw new Error(`package/${name}: a comment the build cannot strip`);
  return out;
}

const raws = MODULES.map((module) => cargoBuild(root, module));
rmSync(next, { recursive: true, force: true });
mkdirSync(next);
MODULES.forEach((module, i) => {
  const wasm = bindgen(root, raws[i], next, module.name);
  optimize(root, wasm, wasm);
});
await minifyJs(next);
for (const f of readdirSync(join(root, "package"))) copyFileSync(join(root, "package", f), join(next, f));
for (const f of COMMENTED_ENTRIES) writeFileSync(join(next, f), withoutComments(readFileSync(join(next, f), "utf8"), f));
copyFileSync(join(root, "README.md"), join(next, "README.md"));
const old = join(root, `pkg.old-${process.pid}`);
try {
  renameSync(pkg, old);
} catch (e) {
  if (e.code !== "ENOENT") throw e;
}
renameSync(next, pkg);
rmSync(old, { recursive: true, force: true });

// Link the package into node_modules so that tests, the demo and the
// TypeScript check import it by name, through its real `exports` map.
mkdirSync(join(root, "node_modules"), { recursive: true });
rmSync(join(root, "node_modules/agent-compaction"), { recursive: true, force: true });
symlinkSync("../pkg", join(root, "node_modules/agent-compaction"), "dir");

const sizes = (files) =>
  files
    .map((file) => ({ raw: statSync(file).size, gzip: gzipSync(readFileSync(file), { level: 9 }).length }))
    .reduce((a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip }));
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const at = (...files) => files.map((f) => join(pkg, f));
// What `import … from "agent-compaction"` loads, and what each lazily
// loaded module adds when it is first needed.
const inline = (name) => readdirSync(join(pkg, "snippets")).filter((f) => f.startsWith(`${name}_inline`)).map((f) => `snippets/${f}`);
const ownJs = {
  agent_compaction: ["index.js", "session-store.js", "extractive.js", "run.js", "snippets/shim.js"],
  agent_compaction_store: ["snippets/shim_store.js"],
  agent_compaction_extractive: [],
  agent_compaction_run: [],
};
const row = (label, s) => console.log(`  ${label.padEnd(14)} ${kb(s.raw)} raw, ${kb(s.gzip)} gzipped`);
console.log("\npkg/ built.");
for (const module of MODULES) {
  const wasm = sizes(at(`${module.name}_bg.wasm`));
  const jsFiles = [`${module.name}.js`, ...ownJs[module.name], ...inline(module.name)];
  const js = sizes(at(...jsFiles));
  const when = module.loadedBy === "import" ? "Loaded at import" : `Loaded by ${module.loadedBy}`;
  console.log(`${when} (${jsFiles.join(", ")}, ${module.name}_bg.wasm):`);
  row(".wasm", wasm);
  row("JS", js);
  console.log(`  total          ${kb(wasm.gzip + js.gzip)} gzipped`);
}
console.log("Per area: npm run size");
