// The package's API. The declarations are written by hand, by topic, in the
// files re-exported here; tests/node/declarations.test.mjs checks them
// against what the built package exports (every export, class member and
// function's parameter count), and tests/types compiles uses of them.
export * from "./messages.js";
export * from "./flat-array.js";
export * from "./settings.js";
export * from "./summarizers.js";
export * from "./compactor.js";
export * from "./session-files.js";
export * from "./store.js";

/** What `init` accepts: where to fetch the `.wasm` from, its bytes, or a compiled module. */
export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;
/** What `initSync` accepts: the `.wasm`'s bytes or a compiled module. */
export type SyncInitInput = BufferSource | WebAssembly.Module;
/** The instantiated module, as `init` and `initSync` return it. */
export interface InitOutput {
  readonly memory: WebAssembly.Memory;
}

/**
 * Instantiates the package's `.wasm`. The package's entry has already done
 * so when its import resolves; with `agent-compaction/manual-init`, call this
 * (or `initSync`) before anything else: `await init({ module_or_path: url })`
 * with the URL of `agent_compaction_bg.wasm`, a `Response`, its bytes or a
 * compiled module. A URL or request is fetched (compiled while it streams
 * when served as `application/wasm`). Passing the input itself rather than
 * `{ module_or_path }` is deprecated.
 */
export function init(
  module_or_path: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>,
): Promise<InitOutput>;

/**
 * Instantiates the package's `.wasm` synchronously from its bytes or a
 * compiled module: `initSync({ module: bytes })` (see `init`). Passing the
 * input itself rather than `{ module }` is deprecated.
 */
export function initSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;
