// Builds pkg/: the npm package `agent-compaction`.
//   cargo (release, wasm32) → wasm-bindgen --target web → wasm-opt -Oz
//   → entry files and package.json from package/ → sizes printed (gzip).
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "pkg");
// Built beside pkg/ and swapped in at the end, so that a test or a server
// reading pkg/ while a build runs never sees a half-written package.
const next = join(root, `pkg.next-${process.pid}`);
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: "inherit" });

run("cargo", ["build", "--release", "--target", "wasm32-unknown-unknown", "--lib", "-p", "agent-compaction"]);
rmSync(next, { recursive: true, force: true });
mkdirSync(next);
run("wasm-bindgen", [
  "--target", "web",
  "--out-dir", next,
  "--out-name", "agent_compaction",
  "--omit-default-module-path",
  join(root, "target/wasm32-unknown-unknown/release/agent_compaction.wasm"),
]);
let wasm = join(next, "agent_compaction_bg.wasm");
// wasm-opt from the npm package `binaryen` (a recent release that reads the
// target_features section rustc writes; Debian's 108 mangles the externref table).
// --low-memory-unused lets it fold `p + C` (C < 1 KiB) into load/store offsets:
// it differs only for a pointer that wraps past 2^32 into the first KiB, which
// Rust code never forms. Inlining every function that has a single caller
// (binaryen's default) saves a few bytes raw but costs ~7 KB gzipped: merged
// bodies compress worse, so only small ones are inlined. --converge repeats
// the passes until the module stops shrinking.
run(join(root, "node_modules/.bin/wasm-opt"), [
  "-Oz", "--low-memory-unused", "--one-caller-inline-max-function-size=30", "--converge",
  "--strip-debug", "--strip-producers", wasm, "-o", wasm,
]);
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
