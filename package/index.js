// Browser / bundler / worker entry: instantiates the wasm with top-level
// await, so `import { transformContext } from "agent-compaction"` needs no
// init call. Touches no window, document or indexedDB. The store's own wasm
// module loads at the first `SessionStore.open` (session-store.js), the
// extractive summarizer's at the first compaction that needs it
// (extractive.js), the `run` module's at the first fetch summarizer call
// or clearing tier (run.js).
import init from "./agent_compaction.js";
import { loadExtractiveModule, setExtractiveLoader } from "./extractive.js";
import { loadRunModule, setRunLoader } from "./run.js";
import { lazySessionStore, loadStoreModule } from "./session-store.js";

setExtractiveLoader(loadExtractiveModule);
setRunLoader(loadRunModule);
await init({ module_or_path: new URL("./agent_compaction_bg.wasm", import.meta.url) });

export * from "./agent_compaction.js";
export { default as init, initSync } from "./agent_compaction.js";
export { ConflictError } from "./session-store.js";
export const SessionStore = lazySessionStore(loadStoreModule);
