// `agent-compaction/manual-init`: the same API as the package's entry, with
// no top-level await: call `init()` or `initSync()` first.
export * from "./index.js";
export { init as default } from "./index.js";
