// Node entry: reads the wasm next to this file and instantiates it at
// import; the store's module is read the same way at the first
// `SessionStore.open` (which then fails clearly: Node has no IndexedDB,
// unless the app installs one on globalThis), the extractive
// summarizer's at the first compaction that needs it, and the `run`
// module's at the first fetch summarizer call or clearing tier.
import { readFileSync } from "node:fs";
import { initSync } from "./agent_compaction.js";
import { setExtractiveLoader } from "./extractive.js";
import { setRunLoader } from "./run.js";
import { lazySessionStore } from "./session-store.js";

setExtractiveLoader(async () => {
  const extractive = await import("./agent_compaction_extractive.js");
  extractive.initSync({ module: readFileSync(new URL("./agent_compaction_extractive_bg.wasm", import.meta.url)) });
  return extractive;
});
setRunLoader(async () => {
  const run = await import("./agent_compaction_run.js");
  run.initSync({ module: readFileSync(new URL("./agent_compaction_run_bg.wasm", import.meta.url)) });
  return run;
});
initSync({ module: readFileSync(new URL("./agent_compaction_bg.wasm", import.meta.url)) });

export * from "./agent_compaction.js";
export { default as init, initSync } from "./agent_compaction.js";
export { ConflictError } from "./session-store.js";
export const SessionStore = lazySessionStore(async () => {
  const store = await import("./agent_compaction_store.js");
  store.initSync({ module: readFileSync(new URL("./agent_compaction_store_bg.wasm", import.meta.url)) });
  return store;
});
