// Unit tests of shim/run.js: the run module (what only runs inside a
// compaction) is loaded once, on first use; a failed load says which file
// and is tried again at the next call; the fetch summarizer it backs passes
// its endpoint and request through unchanged.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lazyFetchSummarizer, runModule, setRunLoader } from "../../crates/wasm/src/js/shim/run.js";

test("without a loader, the call rejects with an Error naming the module", async () => {
  setRunLoader(undefined);
  await assert.rejects(lazyFetchSummarizer({})({}), {
    message: "the compaction module (agent_compaction_run_bg.wasm) could not be loaded: the package's entry set no loader",
  });
});

test("the module loads once, at the first call, and every call reaches fetchSummarize with its endpoint and request", async () => {
  let loads = 0;
  const calls = [];
  setRunLoader(async () => {
    loads += 1;
    return { fetchSummarize: async (endpoint, request) => (calls.push([endpoint, request]), { text: `summary ${calls.length}` }) };
  });
  const endpoint = { provider: 0 };
  const summarize = lazyFetchSummarizer(endpoint);
  assert.equal(loads, 0, "creating the summarizer loads nothing");
  const request = { prompt: "p" };
  const [a, b] = await Promise.all([summarize(request), summarize(request)]);
  assert.deepEqual([a, b], [{ text: "summary 1" }, { text: "summary 2" }]);
  assert.equal(loads, 1);
  assert.equal(calls[0][0], endpoint);
  assert.equal(calls[0][1], request);
  assert.equal(await runModule(), await runModule());
});

test("a failed load rejects with its cause and is tried again at the next call", async () => {
  let attempts = 0;
  const offline = new TypeError("Failed to fetch");
  setRunLoader(async () => {
    attempts += 1;
    if (attempts === 1) throw offline;
    return { fetchSummarize: async () => ({ text: "back online" }) };
  });
  const summarize = lazyFetchSummarizer({});
  const error = await summarize({}).then(() => assert.fail("resolved"), (e) => e);
  assert.match(error.message, /could not be loaded: Failed to fetch$/);
  assert.equal(error.cause, offline);
  assert.deepEqual(await summarize({}), { text: "back online" });
  assert.equal(attempts, 2);
});
