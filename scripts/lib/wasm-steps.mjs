// The steps that turn the Rust crate into the package's wasm, shared by
// scripts/build.mjs (which ships the result) and scripts/size.mjs (which
// rebuilds it with function names kept, to attribute bytes to areas).
//   cargo (release, wasm32) → wasm-bindgen --target web → wasm-opt;
//   and the JS minifier build.mjs runs over wasm-bindgen's JavaScript.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, relative } from "node:path";

const run = (root, cmd, args, env) =>
  execFileSync(cmd, args, { cwd: root, stdio: "inherit", env: env ? { ...process.env, ...env } : process.env });

/** The package's one wasm module: `<NAME>.js` (wasm-bindgen's glue) and `<NAME>_bg.wasm`. */
export const NAME = "agent_compaction";

const CARGO_ARGS = ["build", "--release", "--target", "wasm32-unknown-unknown", "--lib", "-p", "agent-compaction"];

// The optional size build (SIZE_BUILD=1): std compiled with its
// `optimize_for_size` paths (-Zbuild-std, which needs the rust-src
// component), panics that trap at once instead of formatting a message that
// nothing on wasm32-unknown-unknown prints (-Cpanic=immediate-abort: a panic
// is the same `RuntimeError: unreachable` in JavaScript either way), and no
// source locations for `#[track_caller]` functions. All three are unstable
// options, enabled with RUSTC_BOOTSTRAP=1 for this one command; a compiler
// that refuses them (too old, renamed, no rust-src) gets the stable build.
const SIZE_BUILD = {
  args: ["-Zbuild-std=std,panic_abort", "-Zbuild-std-features=optimize_for_size"],
  rustflags: ["-Zunstable-options", "-Cpanic=immediate-abort", "-Zlocation-detail=none"],
};

// The environment cargo runs in: the caller's RUSTFLAGS, then `extra`, then
// path remapping. Panic locations name std's and the dependencies' sources
// by absolute path (the crates' own are relative already): the build
// machine's rust-src and cargo registry, in every .wasm built. Remapped to
// paths inside those directories, the module is the same whichever machine
// builds it, and smaller.
function cargoEnv(extra = []) {
  const sysroot = execFileSync(process.env.RUSTC ?? "rustc", ["--print", "sysroot"], { encoding: "utf8" }).trim();
  const cargoHome = process.env.CARGO_HOME ?? join(homedir(), ".cargo");
  const remap = [join(sysroot, "lib/rustlib/src/rust"), join(cargoHome, "registry/src")].map((p) => `--remap-path-prefix=${p}=`);
  const own = process.env.CARGO_ENCODED_RUSTFLAGS?.split("\x1f") ?? (process.env.RUSTFLAGS ?? "").split(/\s+/);
  // Encoded (unit-separated), so that paths with spaces stay whole.
  const flags = [...own.filter(Boolean), ...extra, ...remap].join("\x1f");
  return { CARGO_ENCODED_RUSTFLAGS: flags };
}

/**
 * Compiles the binding crate; returns the path of its raw .wasm. Stable
 * flags only, unless `size` (the optional size build, which falls back to
 * the stable one when the compiler refuses its flags). `cargo` is the
 * command to run (a test substitutes one that refuses the unstable flags).
 */
export function cargoBuild(root, { size = process.env.SIZE_BUILD === "1", cargo = "cargo" } = {}) {
  const out = (dir) => join(root, dir, "wasm32-unknown-unknown/release/agent_compaction.wasm");
  if (size) {
    // Its own target directory keeps these artifacts apart from the stable build's.
    const dir = "target/pkg-size";
    const args = [...CARGO_ARGS, "--target-dir", join(root, dir), ...SIZE_BUILD.args];
    const env = { ...process.env, ...cargoEnv(SIZE_BUILD.rustflags), RUSTC_BOOTSTRAP: "1" };
    const result = spawnSync(cargo, args, { cwd: root, stdio: ["ignore", "inherit", "pipe"], env, encoding: "utf8" });
    if (result.status === 0) return out(dir);
    if (process.env.VERBOSE) process.stderr.write(result.stderr ?? "");
    console.log("SIZE_BUILD: the compiler refused the size build's unstable flags; building with stable flags instead.");
  }
  run(root, cargo, [...CARGO_ARGS, "--target-dir", join(root, "target/pkg")], cargoEnv());
  return out("target/pkg");
}

/**
 * wasm-bindgen: writes <NAME>.js, <NAME>_bg.wasm and the shim snippet
 * (snippets/<crate>-<hash>/src/js/shim.js) into outDir, used as they come.
 * Returns the path of the .wasm and of the snippet. Beside them goes
 * snippets/shim.js, one line that re-exports the snippet under a name that
 * does not change, for the package's entries: they export its
 * `ConflictError` class, usable before the module is initialized
 * (manual-init). Any other snippet stops the build.
 */
export function bindgen(root, input, outDir) {
  run(root, "wasm-bindgen", [
    "--target", "web", "--no-typescript", "--omit-default-module-path",
    "--out-dir", outDir, "--out-name", NAME, input,
  ]);
  const snippets = join(outDir, "snippets");
  const files = (d) =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(d, e.name)) : [join(d, e.name)]));
  const found = (existsSync(snippets) ? files(snippets) : []).map((f) => relative(snippets, f));
  if (found.length !== 1 || !/^[\w-]+\/src\/js\/shim\.js$/.test(found[0])) {
    throw new Error(`wasm-bindgen wrote snippets ${JSON.stringify(found)}; expected one <crate>/src/js/shim.js`);
  }
  writeFileSync(join(snippets, "shim.js"), `export * from "./${found[0]}";\n`);
  return { wasm: join(outDir, `${NAME}_bg.wasm`), shim: join(snippets, found[0]) };
}

// wasm-opt from the npm package `binaryen` (a recent release that reads the
// target_features section rustc writes; Debian's 108 mangles the externref table).
// --low-memory-unused lets it fold `p + C` (C < 1 KiB) into load/store offsets:
// it differs only for a pointer that wraps past 2^32 into the first KiB, which
// Rust code never forms. Inlining every function that has a single caller
// (binaryen's default) saves a few bytes raw but costs KBs gzipped: merged
// bodies compress worse, so only small ones are inlined (up to 20 bytes).
// --converge repeats the passes until the module stops shrinking.
export const WASM_OPT_FLAGS = ["-Oz", "--low-memory-unused", "--one-caller-inline-max-function-size=20", "--converge"];

/**
 * Optimizes `input` into `output`. With `names`, the function names survive
 * (`-g`), for scripts/size.mjs; the shipped build strips them.
 */
export function optimize(root, input, output, { names = false } = {}) {
  const strip = names ? ["-g"] : ["--strip-debug"];
  mkdirSync(dirname(output), { recursive: true });
  // The producers and target_features sections are for tools, not browsers.
  run(root, join(root, "node_modules/.bin/wasm-opt"), [
    ...WASM_OPT_FLAGS, ...strip, "--strip-producers", "--strip-target-features", input, "-o", output,
  ]);
}

/**
 * Minifies `files` in place (wasm-bindgen's glue, the shim, ai-sdk.js, pi-agent-core.js),
 * with the oxc minifier that rolldown (Vite's bundler, already a dev
 * dependency through vite) exposes. Function and class names are kept, so
 * `Compactor.name`, error classes and stack traces read as in the source;
 * the .d.ts files stay the readable API. The entries that load the wasm
 * are left as written: a bundler must find their
 * `new URL("…wasm", import.meta.url)` verbatim.
 */
export async function minifyJs(files) {
  const { minifySync } = await import("rolldown/utils");
  for (const file of files) {
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

/**
 * Short import names. wasm-bindgen names each import of its glue
 * `__wbg_<name>_<16 hex digits>` under the module "./<NAME>_bg.js", and
 * each import of the shim under the shim's path: about 10 KB of names in the
 * .wasm, and the same hashes again as keys in the glue, which gzip cannot
 * shrink. Here the glue's imports become module "a" with names `a0`, `a1`,
 * … and the shim's become module "b" under their own names; the import
 * section is rewritten in place (every other byte of the module stays) and
 * the glue's import object with it. Exports keep their names (`initSync()`
 * returns them). Anything the glue does not hold exactly as expected stops
 * the build: the wasm-bindgen CLI is pinned to the crate's version
 * (scripts/setup.sh), so a new layout comes with a deliberate upgrade.
 */
export function shortImports(wasmFile, glueFile) {
  const bytes = readFileSync(wasmFile);
  const glueModule = `./${NAME}_bg.js`;
  let shimModule;
  const renamed = new Map();
  const { before, imports, after } = importSection(bytes);
  const enc = new TextEncoder();
  const out = [leb(imports.length)];
  for (const { module, name, desc } of imports) {
    let m, n;
    if (module === glueModule) {
      m = "a";
      if (!renamed.has(name)) renamed.set(name, `a${renamed.size.toString(36)}`);
      n = renamed.get(name);
    } else if (module.startsWith("./snippets/") && (shimModule ??= module) === module) {
      [m, n] = ["b", name];
    } else {
      throw new Error(`shortImports: an import from ${JSON.stringify(module)}, which is neither the glue nor the shim`);
    }
    for (const s of [m, n]) out.push(leb(enc.encode(s).length), enc.encode(s));
    out.push(desc);
  }
  const body = Buffer.concat(out);
  writeFileSync(wasmFile, Buffer.concat([before, Buffer.from([2]), leb(body.length), body, after]));
  if (!glueFile) return;
  let glue = readFileSync(glueFile, "utf8");
  for (const [name, short] of renamed) {
    const key = `\n        ${name}: function(`;
    const at = glue.indexOf(key);
    if (at < 0 || glue.indexOf(key, at + 1) >= 0) throw new Error(`shortImports: the glue does not define ${name} exactly once`);
    glue = glue.replace(key, `\n        ${short}: function(`);
  }
  // The object the glue passes to WebAssembly.instantiate: the glue's own
  // imports, then the shim (imported once per use, all the same module).
  const returned = /\n    return \{\n        __proto__: null,\n        "\.\/[\w]+_bg\.js": import0,\n(?:        "\.\/snippets\/[\w./-]+": import\d+,\n)+    \};\n/g;
  const found = glue.match(returned) ?? [];
  if (found.length !== 1) throw new Error("shortImports: the glue's import object is not laid out as expected");
  glue = glue.replace(returned, "\n    return { __proto__: null, a: import0, b: import1 };\n");
  writeFileSync(glueFile, glue);
}

/** The import section of a module: the bytes before and after it, and its imports. */
function importSection(bytes) {
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
  const dec = new TextDecoder();
  while (p < bytes.length) {
    const start = p;
    const id = bytes[p++];
    const size = u();
    const end = p + size;
    if (id === 2) {
      const imports = [];
      for (let n = u(); n > 0; n--) {
        const ml = u(), module = dec.decode(bytes.subarray(p, p + ml));
        p += ml;
        const nl = u(), name = dec.decode(bytes.subarray(p, p + nl));
        p += nl;
        const d = p;
        if (bytes[p++] !== 0) throw new Error(`shortImports: import ${name} is not a function`);
        u();
        imports.push({ module, name, desc: bytes.subarray(d, p) });
      }
      return { before: bytes.subarray(0, start), imports, after: bytes.subarray(end) };
    }
    p = end;
  }
  throw new Error("shortImports: the module has no import section");
}

function leb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}
