export * from "./agent_compaction.js";
// The store's types (its module loads at the first SessionStore.open).
export * from "./agent_compaction_store.js";
// Both modules declare these; the package's are the main module's.
export {
  default as init,
  initSync,
  type InitInput,
  type InitOutput,
  type SyncInitInput,
} from "./agent_compaction.js";

/**
 * The `name` of an `Error` a `SessionStore` call rejects with, other than
 * for bad arguments (those are `TypeError`s and `RangeError`s). The names
 * are stable: test `error.name`, not the message. A `ConflictError` is also
 * an instance of the exported `ConflictError` class.
 *
 * - `ConflictError`: another store saved the session since this one read
 *   it; nothing was written. Load it again, reapply the change, save.
 * - `QuotaExceededError`: the browser refused the write for lack of room;
 *   nothing of the change was written, nothing stored before was lost.
 * - `SessionNotFoundError`: no session with that id in this store.
 * - `SessionExistsError`: `createSession` or `fork` with an id already taken.
 * - `RefusedDropError`: a save would drop stored messages (other than
 *   trailing failed attempts) without `{ replace: true }`.
 * - `UpgradeBlockedError`: `SessionStore.open` could not upgrade the
 *   database: another tab still has it open at an older version.
 * - `OpenFailedError`: `SessionStore.open` could not open the database (a
 *   newer version on disk, a failed upgrade, storage unavailable).
 * - `StoreClosedError`: the store was closed, or the database was deleted
 *   or upgraded by another connection; open the store again.
 * - `StorageError`: any other IndexedDB failure (its message has the
 *   browser's error name and message).
 * - `LockTimeoutError`: the session's lock did not come within the store's
 *   `lockTimeoutMs` (another tab or worker holds it, or a page kept in the
 *   back/forward cache); nothing was done.
 * - `ConnectionLostError`: the browser closed the connection to the
 *   database, and again after the store reopened it; each write is
 *   all-or-nothing, so the stored sessions are whole.
 */
export type SessionStoreErrorName =
  | "ConflictError"
  | "QuotaExceededError"
  | "SessionNotFoundError"
  | "SessionExistsError"
  | "RefusedDropError"
  | "UpgradeBlockedError"
  | "OpenFailedError"
  | "StoreClosedError"
  | "StorageError"
  | "LockTimeoutError"
  | "ConnectionLostError";

/** An error a `SessionStore` call rejects with (see `SessionStoreErrorName`). */
export interface SessionStoreError extends Error {
  name: SessionStoreErrorName;
}
