// The binding's shim bundles (crates/wasm/src/js/shim.js, shim_store.js and
// shim_all.js, written by crates/wasm/build.rs at every cargo build from the
// shim modules): each loads as a module and exports every export of its
// modules, with the same kind of value (a dropped import or a clash of
// top-level names would break one of these). shim.js goes with both of the
// package's wasm modules, shim_store.js with the store's only (it imports
// what it uses of shim.js), shim_all.js with the build that has both.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";

const JS = new URL("../../crates/wasm/src/js/", import.meta.url);
const MODULES = new URL("shim/", JS);
const STORE_MODULES = ["store.js", "idb.js", "locks.js", "channel.js"];

async function bundle(name) {
  const url = new URL(name, JS);
  assert.ok(existsSync(url), `crates/wasm/src/js/${name} is missing: run a cargo build first`);
  return import(url.href);
}

async function assertExports(bundleExports, files) {
  for (const file of files) {
    const one = await import(new URL(file, MODULES).href);
    for (const key of Object.keys(one)) {
      assert.ok(key in bundleExports, `${file}'s ${key}`);
      assert.equal(typeof bundleExports[key], typeof one[key], `${file}'s ${key}`);
    }
  }
}

const files = readdirSync(MODULES).filter((f) => f.endsWith(".js"));

test("shim_all.js exports what each module exports, and nothing clashes", async () => {
  await assertExports(await bundle("shim_all.js"), files);
});

test("shim.js holds every module but the store's, and shim_store.js the store's", async () => {
  const main = await bundle("shim.js");
  const store = await bundle("shim_store.js");
  await assertExports(main, files.filter((f) => !STORE_MODULES.includes(f)));
  await assertExports(store, STORE_MODULES);
  assert.ok(!("storeError" in main) && !("withLock" in main), "the store's modules stay out of shim.js");
});

test("a conflict made by the store's bundle is an instance of the class shim.js exports", async () => {
  const main = await bundle("shim.js");
  const store = await bundle("shim_store.js");
  const error = store.storeError("ConflictError", "saved elsewhere");
  assert.ok(error instanceof main.ConflictError);
  assert.equal(error.name, "ConflictError");
});
