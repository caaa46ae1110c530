// `SessionStore` as the package exports it. The store is the package's
// second wasm module (agent_compaction_store.js and its .wasm): the first
// `SessionStore.open` loads and instantiates it, so that an app that never
// opens a store never downloads it, and `import … from "agent-compaction"`
// still needs no init call. What `open` resolves with is the store module's
// own SessionStore object; `instanceof SessionStore` holds for it.
import { ConflictError } from "./snippets/shim.js";

export { ConflictError };

/**
 * The exported class, with `load` fetching and instantiating the store
 * module (index.js and manual-init.js: by URL beside this file; node.js:
 * from disk). Loaded once; a failed load is tried again at the next `open`.
 */
export function lazySessionStore(load) {
  let module;
  let loading;
  const loaded = () =>
    (loading ??= load().then(
      (m) => (module = m),
      (cause) => {
        loading = undefined;
        const error = new Error(
          `SessionStore.open: the store's module (agent_compaction_store_bg.wasm) could not be loaded: ${cause?.message ?? cause}`,
          { cause },
        );
        error.name = "OpenFailedError";
        throw error;
      },
    ));
  return class SessionStore {
    constructor() {
      throw new TypeError("SessionStore has no constructor: use `await SessionStore.open(options)`");
    }
    static async open(options) {
      return (await loaded()).SessionStore.open(options);
    }
    static get ConflictError() {
      return ConflictError;
    }
    static [Symbol.hasInstance](value) {
      return module !== undefined && value instanceof module.SessionStore;
    }
  };
}

/** The store module, instantiated from its URL beside this file (browsers, bundlers, workers). */
export const loadStoreModule = async () => {
  const store = await import("./agent_compaction_store.js");
  await store.default({ module_or_path: new URL("./agent_compaction_store_bg.wasm", import.meta.url) });
  return store;
};
