// The package's fourth wasm module, `run` (agent_compaction_run.js and its
// .wasm): what only runs inside a compaction, kept out of what loads at
// import: the calls of the summarizers `openAiSummarizer` and
// `anthropicSummarizer` return, and the clearing tier of a threshold
// compaction. The main module asks for it at the first such call. Each entry tells the main module's shim how to load it:
// here by URL beside this file (browsers, bundlers, workers); node.js
// reads it from disk.
import { setRunLoader } from "./snippets/shim.js";

export { setRunLoader };

/** The run module, instantiated from its URL beside this file. */
export const loadRunModule = async () => {
  const module = await import("./agent_compaction_run.js");
  await module.default({ module_or_path: new URL("./agent_compaction_run_bg.wasm", import.meta.url) });
  return module;
};
