export * from "./agent_compaction.js";
export { default as init, initSync } from "./agent_compaction.js";
