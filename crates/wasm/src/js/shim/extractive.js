// The extractive summarizer, loaded on first use. It is the package's third
// wasm module (agent_compaction_extractive): most apps summarize with their
// own model and need it only when that call fails, so it is not part of
// what loads at import. The package's entry tells this module how to load it
// (from a URL beside the entry, or from disk in Node); the main module calls
// `extractiveSummary` and awaits it like a summarizer call.

let loadModule;
let loading;

/** Sets how the extractive module is loaded: `load()` resolves to its exports, initialized. */
export function setExtractiveLoader(load) {
  loadModule = load;
  loading = undefined;
}

/**
 * The extractive summary (see the core's `compaction::extractive`) of the
 * messages whose facts `facts` holds (the JSON text `extractFacts` wrote),
 * within `maxChars` UTF-16 code units. Loads the module once; a load that
 * failed is tried again next time, and rejects with an Error that says which
 * file could not be loaded.
 */
export function extractiveSummary(facts, readFiles, modifiedFiles, previousSummary, customInstructions, maxChars) {
  loading ??= (async () => {
    if (loadModule === undefined) throw new Error("the package's entry set no loader");
    return loadModule();
  })().catch((cause) => {
    loading = undefined;
    throw new Error(
      `the extractive summarizer's module (agent_compaction_extractive_bg.wasm) could not be loaded: ${cause?.message ?? cause}`,
      { cause },
    );
  });
  return loading.then((module) =>
    module.extractiveSummary(facts, readFiles, modifiedFiles, previousSummary, customInstructions, maxChars),
  );
}
