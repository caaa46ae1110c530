// The extractive summarizer is the package's third wasm module
// (agent_compaction_extractive.js and its .wasm). The main module asks for
// it only when a compaction or a branch summary needs it — no summarizer
// callback, or a failed call with `fallback: "extractive"` — so an app whose
// own summarizer answers never downloads it. Each entry tells the main
// module's shim how to load it: here by URL beside this file (browsers,
// bundlers, workers); node.js reads it from disk.
import { setExtractiveLoader } from "./snippets/shim.js";

export { setExtractiveLoader };

/** The extractive module, instantiated from its URL beside this file. */
export const loadExtractiveModule = async () => {
  const module = await import("./agent_compaction_extractive.js");
  await module.default({ module_or_path: new URL("./agent_compaction_extractive_bg.wasm", import.meta.url) });
  return module;
};
