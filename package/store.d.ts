// SessionStore: sessions in IndexedDB, and the errors its calls reject with.
import type { AgentMessage, AnyMessage, BranchSummaryMessage } from "./messages.js";
import type { HistoryPage, HistorySearch } from "./compactor.js";

/** A session as `list()` shows it. */
export interface SessionMeta {
  id: string;
  title: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  lastModified: number;
  messageCount: number;
  /** Estimated tokens of the LLM context (the last summary on; stale usage ignored). */
  contextTokens: number;
  /** The first user text, shortened to about 100 characters. */
  preview: string;
  model?: string;
  /** Increases with every save; a save from an older revision is a `ConflictError`. */
  revision: number;
}
export interface SessionStoreOptions {
  /** The IndexedDB database name (default "agent-compaction"). */
  name?: string;
  /**
   * How long a call waits for its session's lock before it fails with an
   * `Error` named "LockTimeoutError", having done nothing (default 30000;
   * 1 to 2147483647). A lock can stay taken for good: Safari keeps the locks
   * of a page in its back/forward cache and of a worker across reloads.
   * Raise it when another tab's `withSessionLock` callbacks run longer (a
   * slow LLM summarizing).
   */
  lockTimeoutMs?: number;
}
/** The origin's storage, as `SessionStore.estimate()` reads it. */
export interface StorageEstimate {
  /** False where `navigator.storage.estimate` is missing or failed; the numbers are then null. */
  supported: boolean;
  /** Bytes the origin uses (all of its storage, not only this database). */
  usage: number | null;
  /** Bytes the browser may let the origin use. */
  quota: number | null;
  /** Whether the browser keeps the origin's storage under pressure (see `persist()`). */
  persisted: boolean;
}
export interface CreateSessionOptions {
  /** Default: a fresh UUIDv7. */
  id?: string;
  /** Default: "New session". */
  title?: string;
  /** A "provider/modelId" key. */
  model?: string;
}
export interface SaveOptions {
  /** Allow a save that drops stored messages (other than trailing failed attempts). */
  replace?: boolean;
}
export interface ForkOptions {
  /** Appended after the copied messages: a summary of the branch being left. */
  summary?: BranchSummaryMessage;
  /** Default: a fresh UUIDv7. */
  id?: string;
  /** Default: the source's title followed by " (fork)". */
  title?: string;
}
export interface ImportJsonlOptions {
  /** Default: the file's session name, else its first user text, else "Imported session". */
  title?: string;
}
/**
 * A change committed through another `SessionStore` on the same database:
 * another tab, a worker, or another store opened in this page. A store is
 * not told of its own changes (their promises are).
 */
export type SessionChangeEvent =
  | { type: "created" | "saved" | "renamed" | "imported"; sessionId: string; revision: number }
  | { type: "forked"; sessionId: string; revision: number; sourceId: string }
  | { type: "deleted"; sessionId: string };
/** Cumulative record writes of this store (diagnostics). */
export interface SessionStoreStats {
  recordsPut: number;
  recordsDeleted: number;
}
/**
 * A save made from a stale revision (another tab saved in between, or
 * deleted the session and created another under its id): nothing was
 * written. The same save tried again is refused again until the store
 * loads the session again.
 */
export class ConflictError extends Error {
  name: "ConflictError";
}
/**
 * Sessions persisted in IndexedDB. A call that fails rejects with an `Error`
 * whose `name` is one of `SessionStoreErrorName` (bad arguments: `TypeError`,
 * `RangeError`).
 */
export class SessionStore {
  private constructor();
  free(): void;
  /**
   * Opens (creating or upgrading) the database. Only this touches `indexedDB`.
   * @throws Error named "UpgradeBlockedError" when the upgrade is blocked by an open
   * connection of an older version (another tab); "OpenFailedError" when the database
   * cannot be opened, whose message says why: storage unavailable (no `indexedDB`, a
   * private mode or a site setting refusing it, an opaque origin), or a newer database
   * on disk (see `SessionStoreErrorName`). Without a store the rest of the package
   * (`Compactor`, the flat-array functions) works as before.
   *
   * When the browser closes the connection later (WebKit's "Connection to Indexed
   * Database server lost", the database's `close` event), the store reopens it and a
   * call that failed so runs once more; writing nothing twice (a write's second try
   * reads what its first one committed). A call that fails so twice rejects with an
   * `Error` named "ConnectionLostError"; the stored sessions stay whole.
   */
  static open(options?: SessionStoreOptions): Promise<SessionStore>;
  /** The `ConflictError` class (also exported by the package). */
  static readonly ConflictError: typeof ConflictError;
  /** Closes the database connection and the change channel; later calls reject. */
  close(): void;
  /**
   * Asks the browser to keep this origin's storage when space runs low
   * (`navigator.storage.persist()`); resolves true when it will. Browsers may
   * otherwise evict a site's IndexedDB without asking (Safari after 7 days
   * without a visit). Call it once the user has something worth keeping, from
   * a user action (Firefox asks the user; Chromium decides from engagement,
   * and may say false at first and true later). False where the API is
   * missing (insecure contexts) or refused. A worker cannot ask: there it
   * resolves whether a page has persisted the origin already
   * (`navigator.storage.persisted()`). Works on a closed store.
   */
  persist(): Promise<boolean>;
  /**
   * The origin's usage and quota (`navigator.storage.estimate()`), and whether
   * it is persisted. Check it before a large import, or show it in settings;
   * a save beyond the quota fails with "QuotaExceededError" and writes
   * nothing. Where the API is missing, `supported` is false and the numbers
   * null. Works on a closed store.
   */
  estimate(): Promise<StorageEstimate>;
  createSession(options?: CreateSessionOptions): Promise<SessionMeta>;
  /** Newest first (by `lastModified`, through an index). */
  list(): Promise<SessionMeta[]>;
  rename(sessionId: string, title: string): Promise<SessionMeta>;
  /** Deletes the session and all of its records. */
  delete(sessionId: string): Promise<void>;
  /**
   * Stores `messages` as the session's array. Writes only what changed since
   * this store last loaded or saved the session, in one transaction, holding
   * the session's Web Lock from its read to its commit. A save that inserts
   * a `compactionSummary` commits with `durability: "strict"` (reported once
   * on disk) where the engine supports it; a turn's save keeps the default.
   * @throws ConflictError when another store saved the session since this
   * one loaded or saved it, or deleted it (a session created again under
   * its id is another one); again on every try until this store loads it.
   * @throws Error named "RefusedDropError" when the save would drop stored
   * messages (other than trailing failed attempts) without `{ replace: true }`;
   * "LockTimeoutError" when the session's lock did not come within `lockTimeoutMs`;
   * "QuotaExceededError", "SessionNotFoundError"... (see `SessionStoreErrorName`).
   * @throws TypeError when a message cannot be stored (names its index).
   */
  save<M extends AnyMessage>(sessionId: string, messages: readonly M[], options?: SaveOptions): Promise<SessionMeta>;
  /** The whole array, in order. */
  load<M extends AnyMessage = AgentMessage>(sessionId: string): Promise<M[]>;
  /**
   * What the model needs, reading only those records: the pinned messages
   * (`pinned: true`) before the last `compactionSummary`, in their order,
   * then that summary and everything after it. The Compactor's view of this
   * array is its view of the whole one. Without a summary, the whole array.
   */
  loadContext<M extends AnyMessage = AgentMessage>(sessionId: string): Promise<M[]>;
  /**
   * A word search of the session's messages before its last
   * `compactionSummary` but the pinned ones (what `loadContext` leaves
   * out), without loading the session: from its history index, which each
   * save that hides messages behind a new summary extends in its own
   * transaction. A session without one (imported, forked, or one a save
   * changed before its last summary) is read whole and indexed at its
   * first search. Hits are as `Compactor.searchHistory`'s, `index` being
   * the message's place in the array `load` returns.
   * @throws Error when the session does not exist or the query has no words.
   */
  searchHistory(sessionId: string, query: string, options?: { /** 1 to 100; 10 if not given. */ limit?: number }): Promise<HistorySearch>;
  /** The original text a search's `ref` points at, a page at a time (as `Compactor.readHistory`). */
  readHistory(
    sessionId: string,
    ref: string,
    options?: { /** A page's `next`. */ offset?: number; /** 1 to 16,000; 4,000 if not given. */ maxChars?: number },
  ): Promise<HistoryPage>;
  /**
   * What the history tool `name` answers the model for `args`, searching
   * and reading this session (as `Compactor.historyTool`, from the store).
   */
  historyTool(sessionId: string, name: "search_history" | "read_history", args: unknown): Promise<string>;
  /**
   * A new session holding copies of messages `[0, atIndex)` of `sessionId`,
   * then `options.summary` when given, written in one transaction. The source
   * is unchanged, and the two share no records: deleting either leaves the
   * other whole.
   * @throws TypeError when `atIndex` is not a number, or `summary` is not a
   * storable `branchSummary` message.
   * @throws RangeError when `atIndex` is not a whole number in `0..=messageCount`.
   * @throws ConflictError when another store saved the session since this
   * one last loaded or saved it (`atIndex` would count other messages).
   */
  fork(sessionId: string, atIndex: number, options?: ForkOptions): Promise<SessionMeta>;
  /**
   * The session as a pi session file (JSONL, format version 3): its title as
   * the session name and, when it is a "provider/modelId" key, its `model`
   * as the model pi resumes with (any other model string is left out).
   */
  exportJsonl(sessionId: string): Promise<string>;
  /**
   * Stores a pi session file (format version 1, 2 or 3) as a new session, in
   * one transaction. It keeps the file's session id unless a session with
   * that id is already here; then it gets a fresh UUIDv7 (read it from the
   * result). `load` then returns `piSessionToMessages(text).messages`.
   * @throws Error when the file has no session header or an entry cannot be read.
   */
  importJsonl(text: string, options?: ImportJsonlOptions): Promise<SessionMeta>;
  /**
   * Runs `callback` holding the session's exclusive lock, a Web Lock shared
   * by every tab and worker of the origin (a queue in this realm where
   * `navigator.locks` is missing), and resolves with what it resolves with.
   * Use it around a whole load → compact → save so that two tabs never
   * compact the same session at once; each store call needs the lock only
   * around its own transaction (the page keeps it up to 100 ms longer for
   * its next call on the session, and lets it go as soon as another tab or
   * worker asks for it).
   *
   * While the callback runs, this store's own calls on `sessionId` (save,
   * fork, rename, delete, importJsonl, withSessionLock) run without
   * requesting the lock again, so a save inside the callback does not
   * deadlock; that holds for any call of this store on that session in
   * the meantime, not only the callback's. Make those calls through this
   * store: another `SessionStore` instance would wait for the lock, which
   * the callback holds until that call returns (until its lock timeout).
   * @throws Error named "LockTimeoutError" when the lock did not come within
   * the store's `lockTimeoutMs`; the callback was not called.
   */
  withSessionLock<T>(sessionId: string, callback: () => T | PromiseLike<T>): Promise<Awaited<T>>;
  /**
   * Calls `listener` after each change committed through another store on
   * this database (see `SessionChangeEvent`): reload a session shown on
   * screen when it changed. A session changed elsewhere must be loaded
   * again before this store saves it, or the save is a `ConflictError`.
   * Returns the function that removes the listener.
   */
  onChange(listener: (event: SessionChangeEvent) => void): () => void;
  stats(): SessionStoreStats;
}

/**
 * The `name` of an `Error` a `SessionStore` call rejects with, other than
 * for bad arguments (those are `TypeError`s and `RangeError`s). The names
 * are stable: test `error.name`, not the message. A `ConflictError` is also
 * an instance of the exported `ConflictError` class.
 *
 * - `ConflictError`: another store saved the session since this one read
 *   it, or deleted it and created another under its id; nothing was
 *   written, and a save tried again without loading is refused again.
 *   Load it again, reapply the change, save.
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
