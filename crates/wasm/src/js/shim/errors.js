// The store's conflict error class. The package's entries export it from
// the shim itself (pkg/snippets/shim.js), so that it exists before the wasm
// is initialized (manual-init); the errors the store makes are instances of
// this same class, so `instanceof ConflictError` holds.

// A save made from a stale revision. Exported by the package, so that an
// app can test `instanceof ConflictError`.
export class ConflictError extends Error {
  constructor(message) {
    super(message);
    this.name = "ConflictError";
  }
}
