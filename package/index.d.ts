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

// The web's types by way of `globalThis`, so that an app whose libraries
// lack one (a Node app: es2022 and Node's types, no DOM, no `WebAssembly`)
// compiles, and gets the rest of each union rather than `any`: a global
// class's instances where the app's libraries declare it, else `never`.
type GlobalInstance<K extends "Request" | "Response" | "URL"> = typeof globalThis extends { [P in K]: { prototype: infer T } } ? T : never;
type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer T } } } ? T : never;
type WasmMemory = typeof globalThis extends { WebAssembly: { Memory: { prototype: infer T } } } ? T : { readonly buffer: ArrayBuffer; grow(delta: number): number };
/** The bytes of the `.wasm`: the DOM's `BufferSource`. */
type WasmBytes = ArrayBuffer | ArrayBufferView;

/** What `init` accepts: where to fetch the `.wasm` from (a URL, a `Request`, a `Response`), its bytes, or a compiled module. */
export type InitInput = string | GlobalInstance<"Request"> | GlobalInstance<"URL"> | GlobalInstance<"Response"> | WasmBytes | WasmModule;
/** What `initSync` accepts: the `.wasm`'s bytes or a compiled module. */
export type SyncInitInput = WasmBytes | WasmModule;
/** The instantiated module, as `init` and `initSync` return it. */
export interface InitOutput {
  readonly memory: WasmMemory;
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
