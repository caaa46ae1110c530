// The binding's one shim module (crates/wasm/src/js/shim.js, written by
// crates/wasm/build.rs at every cargo build from the shim modules): it
// loads as a module and exports every export of every module, with the same
// kind of value (a dropped import or a clash of top-level names would break
// one of these).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";

const SHIM = new URL("../../crates/wasm/src/js/shim.js", import.meta.url);
const MODULES = new URL("../../crates/wasm/src/js/shim/", import.meta.url);

test("shim.js exports what each module exports, and nothing clashes", async () => {
  assert.ok(existsSync(SHIM), "crates/wasm/src/js/shim.js is missing: run a cargo build first");
  const all = await import(SHIM.href);
  const names = readdirSync(MODULES).filter((f) => f.endsWith(".js"));
  for (const file of names) {
    const one = await import(new URL(file, MODULES).href);
    for (const key of Object.keys(one)) {
      assert.ok(key in all, `${file}'s ${key}`);
      assert.equal(typeof all[key], typeof one[key], `${file}'s ${key}`);
    }
  }
});
