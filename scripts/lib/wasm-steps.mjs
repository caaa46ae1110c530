// The steps that turn the Rust crate into the package's wasm, shared by
// scripts/build.mjs (which ships the result) and scripts/size.mjs (which
// rebuilds it with function names kept, to attribute bytes to areas).
//   cargo (release, wasm32) → wasm-bindgen --target web → wasm-opt;
//   and the JS minifier build.mjs runs over the package's .js files.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";

const run = (root, cmd, args, env) =>
  execFileSync(cmd, args, { cwd: root, stdio: "inherit", env: env ? { ...process.env, ...env } : process.env });

// The shipped build compiles the standard library itself (the rust-src
// component, which scripts/setup.sh adds), for size: std's own
// `optimize_for_size` code paths, and panics that trap at once
// (`-Cpanic=immediate-abort`) instead of formatting a message that nothing
// on wasm32-unknown-unknown prints. Together 10.7 KB gzipped. A panic is
// the same `RuntimeError: unreachable` in JavaScript either way, and the
// library is written never to panic. Both are unstable options of the
// stable compiler the machine has, enabled with RUSTC_BOOTSTRAP=1 for this
// one command (tests, clippy and the fuzzers build as usual); its own
// target directory keeps these artifacts apart from the test builds'.
// `-Zlocation-detail=none`: the source locations that `#[track_caller]`
// functions (indexing, `unwrap`, the allocation error paths) still pass
// along carry no file name, line or column: with panics that trap, nothing
// reads them (-0.5 KB gzipped at import).
const SIZE_BUILD = {
  args: ["-Zbuild-std=std,panic_abort", "-Zbuild-std-features=optimize_for_size"],
  env: { RUSTC_BOOTSTRAP: "1", RUSTFLAGS: "-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none" },
};

/**
 * The package's wasm modules, each the binding crate built with one cargo
 * feature (crates/wasm/src/lib.rs): the main module, which the package's
 * entry instantiates at import; the store, which `SessionStore.open` loads
 * on first use (package/session-store.js); the extractive summarizer, which
 * the first compaction that needs it loads (package/extractive.js); `run`,
 * what only runs inside a compaction, which the first call that needs it
 * loads (package/run.js). `loadedBy` says when, for the size reports.
 */
export const MODULES = [
  { name: "agent_compaction", feature: "compactor", loadedBy: "import" },
  { name: "agent_compaction_store", feature: "store", loadedBy: "the first SessionStore.open" },
  {
    name: "agent_compaction_extractive",
    feature: "extractive",
    loadedBy: "the first compaction without a summarizer (or after its failure)",
  },
  {
    name: "agent_compaction_run",
    feature: "run",
    loadedBy: "the first fetch summarizer call or threshold compaction that tries clearing",
  },
];

/** Compiles the binding crate for `module`; returns the path of its raw .wasm. */
export function cargoBuild(root, module) {
  const targetDir = join(root, "target/pkg");
  run(
    root,
    "cargo",
    [
      "build", "--release", "--target", "wasm32-unknown-unknown", "--lib", "-p", "agent-compaction",
      "--no-default-features", "--features", module.feature, "--target-dir", targetDir, ...SIZE_BUILD.args,
    ],
    SIZE_BUILD.env,
  );
  // Every build writes agent_compaction.wasm: keep each under its module's name.
  const raw = join(targetDir, `${module.name}.wasm`);
  copyFileSync(join(targetDir, "wasm32-unknown-unknown/release/agent_compaction.wasm"), raw);
  return raw;
}

/**
 * wasm-bindgen: writes <name>.js, the .d.ts files, snippets/ and
 * <name>_bg.wasm into outDir; shortens the import names (shortenImports
 * below); then moves the JavaScript snippets the module imports to
 * outDir/snippets/ (both modules import snippets/shim.js: one module
 * instance, whose ConflictError class the package's entry exports).
 * Returns the path of the .wasm.
 */
export function bindgen(root, input, outDir, name) {
  run(root, "wasm-bindgen", [
    "--target", "web",
    "--out-dir", outDir,
    "--out-name", name,
    "--omit-default-module-path",
    input,
  ]);
  const js = join(outDir, `${name}.js`);
  const wasm = join(outDir, `${name}_bg.wasm`);
  shortenImports(js, wasm, `./${name}_bg.js`);
  shortenExports(js, wasm, [join(outDir, `${name}.d.ts`), join(outDir, `${name}_bg.wasm.d.ts`)]);
  // Then the snippets move: their import statements are what is left of
  // their paths (shortenImports renamed their keys in the imports object).
  // The shim bundles keep their names, so that both modules import the
  // same file; an inline snippet is the module's own: its name says whose.
  const snippets = join(outDir, "snippets");
  let text = readFileSync(js, "utf8");
  const nested = (d) =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => {
      const p = join(d, e.name);
      return e.isDirectory() ? nested(p) : [p];
    });
  for (const file of (existsSync(snippets) ? nested(snippets) : []).filter((f) => dirname(f) !== snippets)) {
    const shared = basename(dirname(file)) === "js";
    const flat = shared ? basename(file) : `${name}_${basename(file)}`;
    const from = `./${relative(outDir, file)}`;
    if (!text.includes(`'${from}'`) && !text.includes(`"${from}"`)) throw new Error(`${js} does not import ${from}`);
    text = text.replaceAll(`'${from}'`, `'./snippets/${flat}'`).replaceAll(`"${from}"`, `"./snippets/${flat}"`);
    renameSync(file, join(snippets, flat));
  }
  for (const e of existsSync(snippets) ? readdirSync(snippets, { withFileTypes: true }) : []) {
    if (e.isDirectory()) rmSync(join(snippets, e.name), { recursive: true });
  }
  writeFileSync(js, text);
  return wasm;
}

// wasm-opt from the npm package `binaryen` (a recent release that reads the
// target_features section rustc writes; Debian's 108 mangles the externref table).
// --low-memory-unused lets it fold `p + C` (C < 1 KiB) into load/store offsets:
// it differs only for a pointer that wraps past 2^32 into the first KiB, which
// Rust code never forms. Inlining every function that has a single caller
// (binaryen's default) saves a few bytes raw but costs ~7 KB gzipped: merged
// bodies compress worse, so only small ones are inlined (up to 20 bytes:
// measured against 0, 5, 10, 12, 15, 25, 30 and 45, it is the smallest
// gzipped in all four modules, -0.3 KB at import against 30). --converge
// repeats the passes until the module stops shrinking.
export const WASM_OPT_FLAGS = ["-Oz", "--low-memory-unused", "--one-caller-inline-max-function-size=20", "--converge"];

/**
 * Optimizes `input` into `output`. With `names`, the function names survive
 * (`-g`), for scripts/size.mjs; the shipped build strips them.
 */
export function optimize(root, input, output, { names = false } = {}) {
  const strip = names ? ["-g"] : ["--strip-debug"];
  // The producers and target_features sections are for tools, not browsers.
  run(root, join(root, "node_modules/.bin/wasm-opt"), [
    ...WASM_OPT_FLAGS, ...strip, "--strip-producers", "--strip-target-features", input, "-o", output,
  ]);
}

/**
 * Minifies wasm-bindgen's output in `dir` in place (each module's glue,
 * agent_compaction.js and agent_compaction_store.js, and the snippets), with the oxc minifier that rolldown
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
  for (const file of [...MODULES.map((m) => join(dir, `${m.name}.js`)), ...walk(join(dir, "snippets"))]) {
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

/** `n` as an unsigned LEB128 number, the wasm binary format's integers. */
function leb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

/** The `n`th short name: a, b, …, z, A, …, Z, aa, ab, … (valid identifiers and object keys). */
function shortName(n) {
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  let s = "";
  do {
    s = letters[n % 52] + s;
    n = Math.floor(n / 52) - 1;
  } while (n >= 0);
  return s;
}

/**
 * Shortens the names the wasm imports its JS functions by. wasm-bindgen
 * names each import `__wbg_<name>_<16 hex digits>` and repeats the module
 * path (`./agent_compaction_bg.js`, `./snippets/…/shim.js`) on every
 * one of the ~200 imports; the names are written twice, in the .wasm's import
 * section and as keys in agent_compaction.js, and the hex digits do not
 * compress. Here each module becomes `0`, `1`, … and each function of
 * wasm-bindgen's own module a short name; the snippets' functions keep their
 * names (they are the snippets' export names). Every renamed name must occur
 * exactly once in the glue (its key in the imports object), else the build
 * stops rather than guess.
 */
export function shortenImports(jsPath, wasmPath, glueModule) {
  const bytes = readFileSync(wasmPath);
  let js = readFileSync(jsPath, "utf8");
  let p = 8;
  const u = () => {
    let r = 0, s = 0, x;
    do {
      x = bytes[p++];
      r += (x & 0x7f) * 2 ** s;
      s += 7;
    } while (x & 0x80);
    return r;
  };
  const str = () => {
    const n = u();
    const t = bytes.subarray(p, p + n).toString();
    p += n;
    return t;
  };
  const modules = new Map();
  const fields = new Map();
  while (p < bytes.length) {
    const id = bytes[p++];
    const sizeAt = p;
    const len = u();
    const begin = p;
    if (id !== 2) {
      p = begin + len;
      continue;
    }
    const out = [];
    const count = u();
    out.push(...leb(count));
    for (let k = 0; k < count; k++) {
      const module = str();
      const field = str();
      const descStart = p;
      const kind = bytes[p++];
      if (kind === 0) u();
      else if (kind === 1) {
        p++;
        const f = u();
        u();
        if (f & 1) u();
      } else if (kind === 2) {
        const f = u();
        u();
        if (f & 1) u();
      } else if (kind === 3) p += 2;
      else if (kind === 4) {
        p++;
        u();
      } else throw new Error(`import kind ${kind} is not expected`);
      if (!modules.has(module)) modules.set(module, String(modules.size));
      let newField = field;
      if (module === glueModule && kind === 0) {
        if (!fields.has(field)) fields.set(field, shortName(fields.size));
        newField = fields.get(field);
      }
      for (const s of [modules.get(module), newField]) {
        const b = Buffer.from(s);
        out.push(...leb(b.length), ...b);
      }
      out.push(...bytes.subarray(descStart, p));
    }
    if (p !== begin + len) throw new Error("the import section was not read to its end");
    const section = Buffer.from([2, ...leb(out.length), ...out]);
    writeFileSync(wasmPath, Buffer.concat([bytes.subarray(0, sizeAt - 1), section, bytes.subarray(begin + len)]));
    break;
  }
  const count = (re) => (js.match(re) ?? []).length;
  for (const [old, short] of fields) {
    const re = new RegExp(`(?<![\\w$])${old}(?![\\w$])`, "g");
    if (count(re) !== 1) throw new Error(`${jsPath}: the import ${old} occurs ${count(re)} times, expected once`);
    js = js.replace(re, short);
  }
  for (const [old, short] of modules) {
    const re = new RegExp(`"${old.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}":`, "g");
    if (count(re) < 1) throw new Error(`${jsPath}: the import module ${old} is not a key of the imports object`);
    js = js.replace(re, `"${short}":`);
  }
  writeFileSync(jsPath, js);
}

/**
 * Shortens the names the wasm exports its functions by, as shortenImports
 * does for imports. wasm-bindgen names a closure's entry point after its
 * whole type (`wasm_bindgen_<16 hex digits>___convert__closures_____invoke___…`,
 * up to 300 characters with several hashes that do not compress), and every
 * export's name is written twice: in the .wasm's export section and as
 * `wasm.<name>` in the glue, the only way the glue reaches the exports (the
 * build stops if it finds `wasm[` or a name it cannot account for). Each
 * export but `memory` (apps read `initSync().memory`) gets a name of one or two letters;
 * the `.d.ts` files' `InitOutput` says the same.
 */
export function shortenExports(jsPath, wasmPath, dtsPaths) {
  const bytes = readFileSync(wasmPath);
  let js = readFileSync(jsPath, "utf8");
  if (/\bwasm\[/.test(js)) throw new Error(`${jsPath}: the glue indexes the exports (wasm[…]); expected wasm.<name> only`);
  let p = 8;
  const u = () => {
    let r = 0, s = 0, x;
    do {
      x = bytes[p++];
      r += (x & 0x7f) * 2 ** s;
      s += 7;
    } while (x & 0x80);
    return r;
  };
  const renamed = new Map();
  while (p < bytes.length) {
    const id = bytes[p++];
    const sizeAt = p;
    const len = u();
    const begin = p;
    if (id !== 7) {
      p = begin + len;
      continue;
    }
    const count = u();
    const out = [...leb(count)];
    for (let k = 0; k < count; k++) {
      const n = u();
      const old = bytes.subarray(p, p + n).toString();
      p += n;
      const kind = bytes[p++];
      const index = u();
      // `memory` keeps its name: apps read `initSync().memory` (InitOutput).
      const name = old === "memory" ? old : shortName(renamed.size);
      renamed.set(old, name);
      const b = Buffer.from(name);
      out.push(...leb(b.length), ...b, kind, ...leb(index));
    }
    if (p !== begin + len) throw new Error("the export section was not read to its end");
    const section = Buffer.from([7, ...leb(out.length), ...out]);
    writeFileSync(wasmPath, Buffer.concat([bytes.subarray(0, sizeAt - 1), section, bytes.subarray(begin + len)]));
    break;
  }
  const escape = (t) => t.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  // One pass, so that a new name is never mistaken for an old one.
  js = js.replace(/\bwasm\.([A-Za-z_$][\w$]*)/g, (whole, old) => {
    const name = renamed.get(old);
    if (name === undefined) throw new Error(`${jsPath}: wasm.${old} is not an export of ${wasmPath}`);
    return `wasm.${name}`;
  });
  writeFileSync(jsPath, js);
  for (const d of dtsPaths) {
    if (!existsSync(d)) continue;
    let text = readFileSync(d, "utf8");
    for (const [old, name] of renamed) {
      text = text.replace(new RegExp(`(readonly |export const )${escape(old)}(?=[:?])`, "g"), `$1${name}`);
    }
    writeFileSync(d, text);
  }
}
