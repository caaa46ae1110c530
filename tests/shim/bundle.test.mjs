// The binding's shim (crates/wasm/src/js/shim.js, written by
// crates/wasm/build.rs at every cargo build by joining the modules of
// shim/): it loads as one module and exports every export of every module,
// with the same kind of value (a dropped import, a module left out or a
// clash of top-level names would break one of these).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";

const JS = new URL("../../crates/wasm/src/js/", import.meta.url);
const MODULES = new URL("shim/", JS);

test("shim.js exports what each module of shim/ exports, and nothing clashes", async () => {
  const url = new URL("shim.js", JS);
  assert.ok(existsSync(url), "crates/wasm/src/js/shim.js is missing: run a cargo build first");
  const bundle = await import(url.href);
  const files = readdirSync(MODULES).filter((f) => f.endsWith(".js"));
  assert.ok(files.length > 0);
  for (const file of files) {
    const one = await import(new URL(file, MODULES).href);
    for (const key of Object.keys(one)) {
      assert.ok(key in bundle, `${file}'s ${key}`);
      assert.equal(typeof bundle[key], typeof one[key], `${file}'s ${key}`);
    }
  }
});

test("a conflict the store's module makes is an instance of the exported ConflictError", async () => {
  const bundle = await import(new URL("shim.js", JS).href);
  const error = bundle.storeError("ConflictError", "saved elsewhere");
  assert.ok(error instanceof bundle.ConflictError);
  assert.equal(error.name, "ConflictError");
});
