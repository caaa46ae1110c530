// Unit tests of shim/extractive.js: the extractive summarizer's module is
// loaded once, on first use; a failed load says which file and is tried
// again at the next call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { extractiveSummary, setExtractiveLoader } from "../../crates/wasm/src/js/shim/extractive.js";

test("without a loader, the call rejects with an Error naming the module", async () => {
  setExtractiveLoader(undefined);
  await assert.rejects(extractiveSummary("[]", [], [], undefined, undefined, 100), {
    message: /agent_compaction_extractive_bg\.wasm\) could not be loaded: the package's entry set no loader/,
  });
});

test("the module loads once and every call reaches its export with the same arguments", async () => {
  let loads = 0;
  const calls = [];
  setExtractiveLoader(async () => {
    loads += 1;
    return { extractiveSummary: (...args) => (calls.push(args), `summary ${calls.length}`) };
  });
  const [a, b] = await Promise.all([
    extractiveSummary("[1]", ["r.ts"], ["m.ts"], "old", "focus", 10),
    extractiveSummary("[2]", [], [], undefined, undefined, 20),
  ]);
  assert.equal(await extractiveSummary("[3]", [], [], undefined, undefined, 30), "summary 3");
  assert.deepEqual([a, b], ["summary 1", "summary 2"]);
  assert.equal(loads, 1);
  assert.deepEqual(calls[0], ["[1]", ["r.ts"], ["m.ts"], "old", "focus", 10]);
});

test("a failed load rejects with its cause and is tried again at the next call", async () => {
  let attempts = 0;
  const offline = new TypeError("Failed to fetch");
  setExtractiveLoader(async () => {
    attempts += 1;
    if (attempts === 1) throw offline;
    return { extractiveSummary: () => "back online" };
  });
  const error = await extractiveSummary("[]", [], [], undefined, undefined, 10).then(
    () => assert.fail("resolved"),
    (e) => e,
  );
  assert.match(error.message, /could not be loaded: Failed to fetch$/);
  assert.equal(error.cause, offline);
  assert.equal(await extractiveSummary("[]", [], [], undefined, undefined, 10), "back online");
  assert.equal(attempts, 2);
});
