// The store's conflict error class. It lives in the main shim bundle, not
// with the store's modules: the package's entry exports it at import time,
// before the store's wasm module is loaded (SessionStore.open loads it), and
// the errors the store module makes later must be instances of this same
// class for `instanceof ConflictError` to hold.

// A save made from a stale revision. Exported by the package, so that an
// app can test `instanceof ConflictError`.
export class ConflictError extends Error {
  constructor(message) {
    super(message);
    this.name = "ConflictError";
  }
}
