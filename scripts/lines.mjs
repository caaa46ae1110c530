// `npm run lines`: how big the binding is next to the core (the binding
// should stay clearly smaller than the core's non-test code), counted the
// same way every time: lines that are neither blank nor comments, outside
// tests (`tests.rs` files, `tests/` folders and a trailing
// `#[cfg(test)] mod tests { … }`). The TypeScript declarations the binding
// carries as `typescript_custom_section` text are counted apart: they are
// the package's .d.ts, not code. The generated shim.js is not counted
// (their modules in crates/wasm/src/js/shim/ are).
//
// The store side is the SessionStore's binding (crates/wasm/src/storage
// and the shim modules only the store imports: store.js, idb.js, locks.js,
// channel.js) over the core's storage code (crates/core/src/storage),
// counted the same way.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function files(dir, ext) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === "tests" ? [] : files(p, ext);
    return e.name.endsWith(ext) && e.name !== "tests.rs" ? [p] : [];
  });
}

/** { code, declarations } lines of one file. */
function count(path) {
  let text = readFileSync(path, "utf8");
  let declarations = 0;
  if (path.endsWith(".rs")) {
    const tests = text.search(/^\s*#\[cfg\((all\()?test[^\n]*\n\s*(pub )?mod tests\s*\{/m);
    if (tests >= 0) text = text.slice(0, tests);
    text = text.replace(/typescript_custom_section\)\]\s*const \w+: &(?:'static )?str = r#"([\s\S]*?)"#;/g, (_, ts) => {
      declarations += ts.split("\n").filter((l) => l.trim()).length;
      return "";
    });
  }
  const code = text.split("\n").filter((l) => {
    const t = l.trim();
    return t && !t.startsWith("//") && !t.startsWith("/*") && !t.startsWith("*");
  }).length;
  return { code, declarations };
}

function total(paths) {
  return paths.map(count).reduce((a, b) => ({ code: a.code + b.code, declarations: a.declarations + b.declarations }), { code: 0, declarations: 0 });
}

const core = total(files(join(root, "crates/core/src"), ".rs"));
const bindingRust = total(files(join(root, "crates/wasm/src"), ".rs"));
const shim = total(files(join(root, "crates/wasm/src/js/shim"), ".js"));
const entries = total(files(join(root, "package"), ".js"));
const binding = bindingRust.code + shim.code;
const STORE_SHIM = ["store.js", "idb.js", "locks.js", "channel.js"];
const storeBinding =
  total(files(join(root, "crates/wasm/src/storage"), ".rs")).code +
  total(STORE_SHIM.map((f) => join(root, "crates/wasm/src/js/shim", f))).code;
const storeCore = total(files(join(root, "crates/core/src/storage"), ".rs")).code;

const rows = [
  ["core (crates/core/src)", core.code],
  ["binding Rust (crates/wasm/src)", bindingRust.code],
  ["binding JavaScript (crates/wasm/src/js/shim)", shim.code],
  ["binding, together", binding],
  ["package entries (package/*.js)", entries.code],
  [".d.ts text in the binding's Rust (not counted above)", bindingRust.declarations],
  ["store binding (crates/wasm/src/storage + store shim JS)", storeBinding],
  ["store core (crates/core/src/storage)", storeCore],
];
if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ core: core.code, bindingRust: bindingRust.code, shim: shim.code, entries: entries.code, declarations: bindingRust.declarations, storeBinding, storeCore }));
} else {
  console.log("lines of code outside tests (not blank, not comments)\n");
  for (const [name, n] of rows) console.log(`${name.padEnd(56)} ${String(n).padStart(6)}`);
  console.log(`\nbinding / core: ${(binding / core.code).toFixed(2)}`);
  console.log(`binding with package entries / core: ${((binding + entries.code) / core.code).toFixed(2)}`);
  console.log(`store side, binding / core: ${(storeBinding / storeCore).toFixed(2)}`);
}
