// `agent-compaction/manual-init`: the package without the top-level await.
// The app calls `await init(urlOrResponse)` or `initSync({ module: bytes })`
// before anything else. The store's own wasm module still loads at the
// first `SessionStore.open`, from beside this file (session-store.js), and
// the extractive summarizer's at the first compaction that needs it
// (extractive.js), the `run` module's at the first fetch summarizer call
// or clearing tier (run.js).
import { loadExtractiveModule, setExtractiveLoader } from "./extractive.js";
import { loadRunModule, setRunLoader } from "./run.js";
import { lazySessionStore, loadStoreModule } from "./session-store.js";

setExtractiveLoader(loadExtractiveModule);
setRunLoader(loadRunModule);

export * from "./agent_compaction.js";
export { default, default as init } from "./agent_compaction.js";
export { ConflictError } from "./session-store.js";
export const SessionStore = lazySessionStore(loadStoreModule);
