// IndexedDB plumbing for the SessionStore: opening the database, promises
// around requests and transactions, key ranges, reading records, the schema
// upgrade's cursor. No
// decisions: what an upgrade writes into an old record is decided in Rust
// (core::storage::meta::defaults) through the `decide` callback.
// Imported by crates/wasm/src/storage/records.rs, load.rs, schema.rs and
// sessions.rs.

// Resolves with an IDBRequest's result; rejects with its error.
export function requestPromise(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

// A transaction over the SessionStore's session records, and its message
// records too with `both`. `durability` ("strict" or "default", chosen by
// core::storage::save_plan::durability) is passed only when it is not the
// default; an engine without the option ignores it.
export function storeTransaction(db, write, both, durability) {
  const stores = both ? ["sessions", "messages", "history"] : "sessions";
  const mode = write ? "readwrite" : "readonly";
  if (write && durability && durability !== "default") return db.transaction(stores, mode, { durability });
  return db.transaction(stores, mode);
}

// Commits `tx` (at once, not when its last request is done): resolves when
// it completes, rejects with its error (or a text) when it aborts instead.
export function commitTransaction(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error ?? "The transaction was aborted");
    if (typeof tx.commit === "function") tx.commit();
  });
}

// The records of `range` as [values, keys]: getAll and getAllKeys, sent
// together (in Chromium 156 faster than one getAllRecords, whose record
// objects cost more than the second request). Rejects rather than throws:
// an exception would unwind through the wasm module.
export function readRecords(store, range) {
  let values;
  let keys;
  try {
    values = store.getAll(range);
    keys = store.getAllKeys(range);
  } catch (e) {
    return Promise.reject(e);
  }
  return Promise.all([requestPromise(values), requestPromise(keys)]);
}

// The pinned messages `loadContext` returns besides the context, from the
// session record's `pinnedKeys` ([key, slot] pairs, core::storage::marks):
// each record is asked for at once, and a pack (an array of messages) gives
// the message at the slot. A record gone missing gives nothing. Rejects
// rather than throws, as readRecords.
export function readPinned(store, pinnedKeys) {
  let requests;
  try {
    requests = pinnedKeys.map(([key]) => requestPromise(store.get(key)));
  } catch (e) {
    return Promise.reject(e);
  }
  return Promise.all(requests).then((values) => {
    const out = [];
    values.forEach((value, i) => {
      const message = Array.isArray(value) ? value[pinnedKeys[i][1]] : value;
      if (message !== undefined) out.push(message);
    });
    return out;
  });
}

// Session `id`'s message records (keys [id, ...position], so one session's
// records are one range: [id] < key < [id, []], an array sorting after every
// number), from the key `from` and before the key `to` where they are given.
export function recordsRange(id, from, to) {
  return IDBKeyRange.bound(from ?? [id], to ?? [id, []], from == null, true);
}

// Whether two record keys (or nulls) are the same.
export function sameKey(a, b) {
  if (a === null || a === undefined || b === null || b === undefined) {
    return (a === null || a === undefined) && (b === null || b === undefined);
  }
  try {
    return indexedDB.cmp(a, b) === 0;
  } catch {
    return false;
  }
}

// Opens the database `name` at `version`, running `step(db, transaction,
// oldVersion)` on `upgradeneeded` (if it throws, the upgrade is aborted and
// the open fails). Resolves with the connection; rejects with { kind, error }:
// "none" (no indexedDB here), "threw" (reading indexedDB or its open threw),
// "upgrade" (step threw), "request" (the request failed), or "blocked"
// (another open connection keeps the upgrade from running: at once rather
// than a promise that never settles) with `later`, which settles when the
// request does, the connection it may still open then closed.
export function openDatabase(name, version, step) {
  let request;
  try {
    const factory = globalThis.indexedDB;
    if (typeof IDBFactory !== "function" || !(factory instanceof IDBFactory)) return Promise.reject({ kind: "none" });
    request = factory.open(name, version);
  } catch (error) {
    return Promise.reject({ kind: "threw", error });
  }
  let failed = null;
  request.onupgradeneeded = (e) => {
    try {
      step(request.result, request.transaction, e.oldVersion);
    } catch (error) {
      failed = error;
      request.transaction.abort();
    }
  };
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(failed ? { kind: "upgrade", error: failed } : { kind: "request", error: request.error });
    request.onblocked = () => {
      const later = new Promise((settled) => {
        request.onsuccess = () => settled(request.result.close());
        request.onerror = () => settled();
      });
      reject({ kind: "blocked", later });
    };
  });
}

export function createIndex(store, name, keyPath) {
  store.createIndex(name, keyPath);
}

// Schema version 2's record step, inside the upgrade transaction (its
// requests finish before the database opens): each session record is
// handed to `decide`, which returns null (nothing to change) or
// { fields, count }: the fields to set, and whether `messageCount` must be
// counted from the session's message records first.
export function fillSessionDefaults(sessions, messages, decide) {
  const cursor = sessions.openCursor();
  cursor.onsuccess = () => {
    const c = cursor.result;
    if (!c) return;
    const s = { ...c.value };
    const patch = decide(s);
    if (patch) {
      Object.assign(s, patch.fields);
      if (patch.count) {
        const count = messages.count(recordsRange(s.id, null, null));
        count.onsuccess = () => {
          s.messageCount = count.result;
          sessions.put(s);
        };
      } else {
        c.update(s);
      }
    }
    c.continue();
  };
}

// The values of an object store's index by descending key, through one cursor.
export function valuesDescending(store, indexName) {
  return new Promise((resolve, reject) => {
    const out = [];
    const request = store.index(indexName).openCursor(null, "prev");
    request.onsuccess = () => {
      const cursor = request.result;
      if (!cursor) return resolve(out);
      out.push(cursor.value);
      cursor.continue();
    };
    request.onerror = () => reject(request.error);
  });
}

