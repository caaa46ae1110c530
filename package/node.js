// Node entry: reads the wasm next to this file and instantiates it at
// import. `SessionStore.open` fails clearly in Node, which has no
// IndexedDB, unless the app installs one on globalThis.
import { readFileSync } from "node:fs";
import { initSync } from "./agent_compaction.js";

initSync({ module: readFileSync(new URL("./agent_compaction_bg.wasm", import.meta.url)) });

export * from "./agent_compaction.js";
export { default as init, initSync } from "./agent_compaction.js";
export { ConflictError } from "./snippets/shim.js";
