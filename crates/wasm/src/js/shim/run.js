// The package's fourth wasm module (agent_compaction_run), loaded on first
// use: what only runs inside a compaction, so that the module loaded at
// import does not carry it: the calls of the summarizers that
// `openAiSummarizer` and `anthropicSummarizer` return (the factories stay in
// the main module and check their options at once; the call is a Promise
// anyway), and the clearing tier of a threshold compaction. The package's entry tells this module how to load it (from a URL
// beside the entry, or from disk in Node), as for the extractive module.

// Top-level names are unique across the shim's modules (build.rs bundles
// them into one scope).
let loadRun;
let runLoading;

/** Sets how the run module is loaded: `load()` resolves to its exports, initialized. */
export function setRunLoader(load) {
  loadRun = load;
  runLoading = undefined;
}

/**
 * The run module's exports, loaded once. A load that failed is tried again
 * next time, and rejects with an Error that says which file could not be
 * loaded (its `cause` is the loader's error).
 */
export function runModule() {
  runLoading ??= (async () => {
    if (loadRun === undefined) throw new Error("the package's entry set no loader");
    return loadRun();
  })().catch((cause) => {
    runLoading = undefined;
    throw new Error(
      `the compaction module (agent_compaction_run_bg.wasm) could not be loaded: ${cause?.message ?? cause}`,
      { cause },
    );
  });
  return runLoading;
}

/**
 * The summarizer a fetch summarizer factory returns, for `endpoint` (what
 * the factory read and checked from its options): each call loads the run
 * module on first use and resolves as its `fetchSummarize` does.
 */
export function lazyFetchSummarizer(endpoint) {
  return (request) => runModule().then((module) => module.fetchSummarize(endpoint, request));
}

/**
 * The clearing tier of a threshold compaction (the run module's `clearTier`:
 * the result object, or `undefined` when clearing is not enough), after
 * loading the module on first use.
 */
export function lazyClearTier(messages, input) {
  return runModule().then((module) => module.clearTier(messages, input));
}
