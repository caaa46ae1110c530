// Browser / bundler / worker entry: instantiates the wasm with top-level
// await, so `import { transformContext } from "agent-compaction"` needs no
// init call. Touches no window, document or indexedDB.
import init from "./agent_compaction.js";

await init({ module_or_path: new URL("./agent_compaction_bg.wasm", import.meta.url) });

export * from "./agent_compaction.js";
export { default as init, initSync } from "./agent_compaction.js";
export { ConflictError } from "./snippets/shim.js";
