// The binding's one shim module (crates/wasm/src/js/shim.js) is the
// concatenation of the shim modules (scripts/shim-bundle.mjs): it is up to
// date, loads as a module, and exports every export of every module.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { MODULES, bundle } from "../../scripts/shim-bundle.mjs";

const SHIM = new URL("../../crates/wasm/src/js/shim.js", import.meta.url);

test("shim.js is the bundle of the shim modules (run node scripts/shim-bundle.mjs)", () => {
  assert.equal(readFileSync(SHIM, "utf8"), bundle());
});

test("shim.js exports what each module exports, and nothing clashes", async () => {
  const all = await import(SHIM.href);
  for (const name of MODULES) {
    const one = await import(new URL(`../../crates/wasm/src/js/shim/${name}.js`, import.meta.url).href);
    for (const key of Object.keys(one)) {
      assert.ok(key in all, `${name}.js's ${key}`);
      assert.equal(typeof all[key], typeof one[key], `${name}.js's ${key}`);
    }
  }
});
