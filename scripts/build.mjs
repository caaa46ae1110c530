// Builds pkg/: the npm package `agent-compaction`.
//   cargo (release, wasm32; stable flags, or the optional size build with
//   SIZE_BUILD=1) → wasm-bindgen --target web → wasm-opt -Oz
//   (scripts/lib/wasm-steps.mjs); short import names; wasm-bindgen's JS
//   minified; then the entry files and package.json from package/, and the
//   README with the Markdown it links to → sizes printed (gzip);
//   `npm run size` breaks them down by area.
import {
  copyFileSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { NAME, bindgen, cargoBuild, minifyJs, optimize, shortImports } from "./lib/wasm-steps.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "pkg");
// Built beside pkg/ and swapped in at the end, so that a test or a server
// reading pkg/ while a build runs never sees a half-written package.
const next = join(root, `pkg.next-${process.pid}`);

// The small entries (index.js and its Node and manual-init twins) ship
// without their comments, which are most of their bytes: the repository's
// package/ keeps them, and index.d.ts documents the API. Only whole-line
// `//` comments and `/** … */` blocks go; every line of code stays as
// written, so that a bundler still finds `new URL("…wasm", import.meta.url)`.
const COMMENTED_ENTRIES = ["index.js", "manual-init.js", "node.js"];
// The top-level Markdown files the package ships, beside every docs/*.md.
const DOCS = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md", "CHANGELOG.md", "CONTRIBUTING.md"];
function withoutComments(text, name) {
  const out = text.replace(/^[ \t]*\/\*\*(?:(?!\*\/)[\s\S])*\*\/[ \t]*\n/gm, "").replace(/^[ \t]*\/\/.*\n/gm, "");
  // A `/*` or `//` left at the start of a line would be a comment the
  // patterns above did not expect: stop rather than ship it half-stripped.
  if (/^[ \t]*\/[*/]/m.test(out)) throw new Error(`package/${name}: a comment the build cannot strip`);
  return out;
}

const raw = cargoBuild(root);
rmSync(next, { recursive: true, force: true });
mkdirSync(next);
const { wasm, shim } = bindgen(root, raw, next);
optimize(root, wasm, wasm);
shortImports(wasm, join(next, `${NAME}.js`));
for (const f of readdirSync(join(root, "package"))) copyFileSync(join(root, "package", f), join(next, f));
// ai-sdk.js and pi-agent-core.js, the bindings to the AI SDK and to
// pi-agent-core, are plain JavaScript that names no file: minified like the glue.
await minifyJs([join(next, `${NAME}.js`), shim, join(next, "ai-sdk.js"), join(next, "pi-agent-core.js")]);
for (const f of COMMENTED_ENTRIES) writeFileSync(join(next, f), withoutComments(readFileSync(join(next, f), "utf8"), f));
// The README, and the Markdown files it links to and they link to in turn
// (the guides, the benchmarks, the changelog, the repository's layout and
// how to build it), at the same relative paths: a reader of
// node_modules/agent-compaction/README.md can follow every link
// (tests/node/doc-links.test.mjs checks it on what `npm pack` ships).
for (const f of DOCS) copyFileSync(join(root, f), join(next, f));
mkdirSync(join(next, "docs"));
for (const f of readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md"))) {
  copyFileSync(join(root, "docs", f), join(next, "docs", f));
}
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

// Every .wasm and JavaScript file the package ships, and what a page loads
// at `import … from "agent-compaction"` (pi-agent-core.js and ai-sdk.js
// load with their own entries; node.js and manual-init.js are index.js's
// twins).
const gz = (file) => gzipSync(readFileSync(join(pkg, file)), { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const walk = (dir) =>
  readdirSync(join(pkg, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : /\.(js|wasm)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
const shipped = walk("").sort();
const atImport = shipped.filter((f) => !["ai-sdk.js", "pi-agent-core.js", "node.js", "manual-init.js"].includes(f));
const total = (files) => kb(files.map(gz).reduce((a, b) => a + b, 0));
console.log(`\npkg/ built${process.env.SIZE_BUILD === "1" ? " (SIZE_BUILD=1)" : ""}. Raw, gzipped (-9):`);
for (const file of shipped) console.log(`  ${file.padEnd(58)} ${kb(statSync(join(pkg, file)).size).padStart(9)} ${kb(gz(file)).padStart(9)}`);
console.log(`  loaded at import (the .wasm, its glue, the shim, index.js): ${total(atImport)}`);
console.log(`  every file above: ${total(shipped)}`);
console.log("Per area: npm run size");
