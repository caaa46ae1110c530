// The SessionStore's scans over the caller's arrays and its records, where
// only JavaScript can look (object identity, deep equality, what a value is
// made of), its error objects, and the origin's storage (persist, estimate).
// Decisions are made in Rust: the diff's plan (crates/core/src/conversation/edit.rs
// from known.js's identityFacts, and crates/core/src/storage/diff.rs),
// what may be dropped, the keys, the record's fields (the core's storage/meta.rs), the
// errors (error.rs). Imported by crates/wasm/src/storage/records.rs, load.rs
// and mod.rs.

import { ConflictError } from "./errors.js";
import { roleCode } from "./roles.js";

// A store error (crates/core/src/storage/error.rs): a ConflictError, or an
// Error whose `name` is the variant's stable name.
export function storeError(name, message) {
  if (name === "ConflictError") return new ConflictError(message);
  const error = new Error(message);
  error.name = name;
  return error;
}

export function conflictErrorClass() {
  return ConflictError;
}

// Stored records that equal the caller's messages, replaced by the caller's
// objects (a save of an array this store never loaded): a greedy walk with
// a deep comparison, so the identity diff then sees what really changed.
export function adoptEqual(stored, messages) {
  const adopted = stored.slice();
  let i = 0;
  for (let j = 0; j < messages.length && i < stored.length; j++) {
    if (equalOrUnreadable(messages[j], stored[i])) adopted[i++] = messages[j];
  }
  return adopted;
}

// A message whose reading throws (a hostile getter or Proxy) equals
// nothing; it is reported as unstorable later. Nothing here may throw: an
// exception would unwind through the wasm module mid-save.
function equalOrUnreadable(a, b) {
  try {
    return deepEqual(a, b);
  } catch {
    return false;
  }
}

function deepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !deepEqual(a[k], b[k])) return false;
  }
  return true;
}

// Whether messages[indices] can be stored: null, or [index, path, what].
// Functions and symbols cannot be cloned; a cycle and a BigInt are refused
// too (a message must stay JSON-like for export: JSON.stringify throws on
// both), and so is a message that is an array (a stored array is a pack of
// messages). Getters that throw are reported.
export function checkStorable(messages, indices) {
  for (const index of indices) {
    let problem;
    try {
      const message = messages[index];
      problem = Array.isArray(message) ? ["", "is an array, not a message object"] : check(message, "", []);
    } catch (e) {
      problem = ["", `reading it threw: ${e && e.message ? e.message : String(e)}`];
    }
    if (problem) return [index, problem[0], problem[1]];
  }
  return null;
}

function check(value, path, ancestors) {
  const t = typeof value;
  if (t === "function") return [path, "is a function"];
  if (t === "symbol") return [path, "is a symbol"];
  if (t === "bigint") return [path, "is a BigInt (JSON has no such number)"];
  if (t !== "object" || value === null) return null;
  if (ancestors.includes(value)) return [path, "refers back to an enclosing object (a cycle)"];
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const p = check(value[i], `${path}[${i}]`, ancestors);
        if (p) return p;
      }
    } else {
      for (const k of Object.keys(value)) {
        const p = check(value[k], `${path}.${k}`, ancestors);
        if (p) return p;
      }
    }
  } finally {
    ancestors.pop();
  }
  return null;
}

// The index of the first of messages[from, to) the browser cannot clone
// (structuredClone throws: a DOM node, a WeakMap, …), after a put of the
// pack record holding them failed with a DataCloneError; `from` when none
// does alone or structuredClone is missing.
export function firstUnclonable(messages, from, to) {
  if (typeof structuredClone !== "function") return from;
  for (let i = from; i < to; i++) {
    try {
      structuredClone(messages[i]);
    } catch {
      return i;
    }
  }
  return from;
}

// The keys array after an edit, from runs the core planned
// (core::storage::diff::key_runs): [0, a, b] is keys[a..b), [1, a, b] is
// added[a..b).
export function assembleKeys(keys, added, runs) {
  // Two runs, all old keys then the new ones: a turn.
  if (runs.length === 6 && runs[0] === 0 && runs[1] === 0 && runs[2] === keys.length && runs[3] === 1) {
    return keys.concat(added);
  }
  const out = [];
  for (let r = 0; r < runs.length; r += 3) {
    const from = runs[r] === 0 ? keys : added;
    for (let i = runs[r + 1]; i < runs[r + 2]; i++) out.push(from[i]);
  }
  return out;
}

// The first user message's text among messages[0..limit), or undefined.
export function firstUserText(messages, limit) {
  const n = Math.min(messages.length, limit);
  for (let i = 0; i < n; i++) {
    try {
      const m = messages[i];
      if (!m || m.role !== "user") continue;
      if (typeof m.content === "string") return m.content;
      if (Array.isArray(m.content)) {
        for (const block of m.content) {
          if (block && block.type === "text" && typeof block.text === "string") return block.text;
        }
      }
      return "";
    } catch {
      // An unreadable message (a hostile getter) has no preview.
    }
  }
  return undefined;
}

// The messages of messages[from, to) the store keeps track of by position
// (core::storage::marks decides what they are): for each whose `pinned` is
// `true` or whose role is "toolOutputCleared", the triple [index, role code,
// pinned flag], all in one Uint32Array. A message that cannot be read is
// left out (the save's checks name it).
export function markWords(messages, from, to) {
  const out = [];
  for (let i = from; i < to; i++) {
    try {
      const m = messages[i];
      if (m === null || typeof m !== "object") continue;
      const pinned = m.pinned === true;
      if (pinned || m.role === "toolOutputCleared") out.push(i, roleCode(m), pinned ? 1 : 0);
    } catch {
      // Unreadable: not a mark.
    }
  }
  return Uint32Array.from(out);
}

// Records as read ([values, keys]) to messages: a pack record (an array of
// messages, see core::packing) gives each of its messages, all under the
// pack's key; `skip` messages of the first record are left out when it is a
// pack (where loadContext's summary sits inside one). Returns [messages,
// each message's record key, the packs as (first index, count) pairs].
export function flattenRecords(values, keys, skip) {
  const packs = [];
  let messages = values;
  let perMessage = keys;
  for (let r = 0; r < values.length; r++) {
    const value = values[r];
    if (!Array.isArray(value)) {
      if (messages !== values) {
        messages.push(value);
        perMessage.push(keys[r]);
      }
      continue;
    }
    if (messages === values) {
      messages = values.slice(0, r);
      perMessage = keys.slice(0, r);
    }
    const from = r === 0 ? Math.min(skip, value.length) : 0;
    if (value.length > from) packs.push(messages.length, value.length - from);
    for (let i = from; i < value.length; i++) {
      messages.push(value[i]);
      perMessage.push(keys[r]);
    }
  }
  return [messages, perMessage, Uint32Array.from(packs)];
}

// A save's session record: the stored one with `fields` over it (the core
// chose them). Null when that is `queued` (the record the save queued
// already) property for property.
export function mergeMeta(stored, fields, queued) {
  const meta = Object.assign({}, stored, fields);
  if (queued === undefined) return meta;
  const keys = Object.keys(meta);
  if (keys.length !== Object.keys(queued).length) return meta;
  for (const k of keys) if (!Object.hasOwn(queued, k) || !Object.is(meta[k], queued[k])) return meta;
  return null;
}

// A session record as the app sees it: without the `internal` fields
// (core::storage::meta::INTERNAL_FIELDS).
export function publicMeta(record, internal) {
  const meta = {};
  for (const k of Object.keys(record)) if (!internal.includes(k)) meta[k] = record[k];
  return meta;
}

// navigator.storage, where this realm has it.
const storageManager = () => {
  const storage = globalThis.navigator?.storage;
  return storage && typeof storage === "object" ? storage : null;
};

// Asks the browser to keep the origin's storage (navigator.storage.persist()):
// resolves true when it is persisted, false when refused or where the API is
// missing (insecure contexts, older engines). A worker, which has
// `persisted()` but cannot ask, answers whether a page persisted the origin
// already. A rejection of the browser's call is a refusal too: the question
// has no other answer.
export async function persistStorage() {
  const storage = storageManager();
  const ask = typeof storage?.persist === "function" ? "persist" : typeof storage?.persisted === "function" ? "persisted" : null;
  if (!ask) return false;
  try {
    return (await storage[ask]()) === true;
  } catch {
    return false;
  }
}

// The origin's usage and quota in bytes (navigator.storage.estimate()), and
// whether it is persisted; where the API is missing or fails, `supported`
// is false and the numbers are null.
export async function estimateStorage() {
  const storage = storageManager();
  const out = { supported: false, usage: null, quota: null, persisted: false };
  if (typeof storage?.estimate !== "function") return out;
  try {
    const e = await storage.estimate();
    const number = (x) => (typeof x === "number" && Number.isFinite(x) ? x : null);
    out.usage = number(e?.usage);
    out.quota = number(e?.quota);
    out.supported = out.usage !== null || out.quota !== null;
  } catch {
    return out;
  }
  if (typeof storage.persisted === "function") {
    try {
      out.persisted = (await storage.persisted()) === true;
    } catch {
      // Unknown: not persisted as far as the app can tell.
    }
  }
  return out;
}
