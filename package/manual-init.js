// `agent-compaction/manual-init`: the package without the top-level await.
// The app calls `await init(urlOrResponse)` or `initSync({ module: bytes })`
// before anything else.
export * from "./agent_compaction.js";
export { default, default as init } from "./agent_compaction.js";
export { ConflictError } from "./snippets/shim.js";
