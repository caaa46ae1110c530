// What crates/wasm/src/compaction.rs imports, gathered from the modules
// that own it: one `module =` path for its one import block. Each of
// those modules is also named by a `module =` path of its own, so that
// wasm-bindgen copies it into the package's snippets.

export { settleWithin, linkAbort, isTimeout, isAbortError, newAbortController } from "./summarizer.js";
export { insertAt } from "./known.js";
export { joinTexts } from "./text.js";
export { extractFacts } from "./facts.js";
