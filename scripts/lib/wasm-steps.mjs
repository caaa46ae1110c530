// The steps that turn the Rust crate into the package's wasm, shared by
// scripts/build.mjs (which ships the result) and scripts/size.mjs (which
// rebuilds it with function names kept, to attribute bytes to areas).
//   cargo (release, wasm32) → wasm-bindgen --target web → wasm-opt;
//   and the JS minifier build.mjs runs over the package's .js files.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const run = (root, cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: "inherit" });

/** Compiles the binding crate; returns the path of the raw .wasm. */
export function cargoBuild(root) {
  run(root, "cargo", ["build", "--release", "--target", "wasm32-unknown-unknown", "--lib", "-p", "agent-compaction"]);
  return join(root, "target/wasm32-unknown-unknown/release/agent_compaction.wasm");
}

/** wasm-bindgen: writes agent_compaction.js, the .d.ts files, snippets/ and agent_compaction_bg.wasm into outDir. */
export function bindgen(root, input, outDir) {
  run(root, "wasm-bindgen", [
    "--target", "web",
    "--out-dir", outDir,
    "--out-name", "agent_compaction",
    "--omit-default-module-path",
    input,
  ]);
  return join(outDir, "agent_compaction_bg.wasm");
}

// wasm-opt from the npm package `binaryen` (a recent release that reads the
// target_features section rustc writes; Debian's 108 mangles the externref table).
// --low-memory-unused lets it fold `p + C` (C < 1 KiB) into load/store offsets:
// it differs only for a pointer that wraps past 2^32 into the first KiB, which
// Rust code never forms. Inlining every function that has a single caller
// (binaryen's default) saves a few bytes raw but costs ~7 KB gzipped: merged
// bodies compress worse, so only small ones are inlined. --converge repeats
// the passes until the module stops shrinking.
export const WASM_OPT_FLAGS = ["-Oz", "--low-memory-unused", "--one-caller-inline-max-function-size=30", "--converge"];

/**
 * Optimizes `input` into `output`. With `names`, the function names survive
 * (`-g`), for scripts/size.mjs; the shipped build strips them and the
 * producers section.
 */
export function optimize(root, input, output, { names = false } = {}) {
  const strip = names ? ["-g"] : ["--strip-debug"];
  run(root, join(root, "node_modules/.bin/wasm-opt"), [...WASM_OPT_FLAGS, ...strip, "--strip-producers", input, "-o", output]);
}

/**
 * Minifies wasm-bindgen's output in `dir` in place (agent_compaction.js and
 * the snippets it imports), with the oxc minifier that rolldown
 * (Vite's bundler, already a dev dependency through vite) exposes. Function
 * and class names are kept, so `Compactor.name`, error classes and stack
 * traces read as in the source; the .d.ts files stay the readable API.
 * The package's small entries (index.js, node.js) are left as written: a
 * bundler must find their `new URL("…wasm", import.meta.url)` verbatim.
 */
export async function minifyJs(dir) {
  const { minifySync } = await import("rolldown/utils");
  const walk = (d) =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => {
      const p = join(d, e.name);
      return e.isDirectory() ? walk(p) : p.endsWith(".js") ? [p] : [];
    });
  for (const file of [join(dir, "agent_compaction.js"), ...walk(join(dir, "snippets"))]) {
    const result = minifySync(file, readFileSync(file, "utf8"), {
      module: true,
      compress: { keepNames: { function: true, class: true } },
      mangle: { keepNames: true },
      codegen: { removeWhitespace: true },
      sourcemap: false,
    });
    if (result.errors?.length) throw new Error(`minifying ${file}: ${result.errors.map((e) => e.message).join("; ")}`);
    writeFileSync(file, result.code);
  }
}

