// Node entry: reads the wasm next to this file and instantiates it at import.
import { readFileSync } from "node:fs";
import { initSync } from "./agent_compaction.js";

initSync({ module: readFileSync(new URL("./agent_compaction_bg.wasm", import.meta.url)) });

export * from "./agent_compaction.js";
export { default as init, initSync } from "./agent_compaction.js";

// The store's conflict error class, exported by name (a wasm-bindgen static).
import { SessionStore } from "./agent_compaction.js";
export const ConflictError = SessionStore.ConflictError;
