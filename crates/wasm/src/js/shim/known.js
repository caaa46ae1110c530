// The compactor's own copy of the messages it has indexed (`known`), kept in
// line with the caller's array by object identity: one scan in JavaScript,
// where identity is visible, returning the identity facts of anything but
// an append. What a difference means is decided in Rust (the core's
// conversation::edit, applied by its conversation::tracker and
// conversation::llm through crates/wasm/src/compactor.rs). Imported by
// compactor.rs, (through summarizer.js) compaction.rs, and, for
// `identityFacts`, the store's save.rs.

// Whether messages[0 .. known.length) are known[0 ..), object for object
// (also where a compaction's result goes into an array that grew meanwhile:
// compactor.rs `arrive`).
// By `findIndex`: V8 (TurboFan) compiles it into a loop about twice as fast
// as a plain `for` (which checks both arrays' maps and the stack on every
// element), and it reads every index, holes too, as a plain loop does
// (`every` would skip holes). A message replaced anywhere must be seen,
// before the last summary too (an edited or newly pinned message changes
// what the model is sent), so every known message is compared: a pointer
// comparison each, about a microsecond per thousand messages, and no read
// of any message.
export function sameRun(known, messages) {
  // The newest 32 first, in a plain loop: where an edit is likeliest, and
  // what gets V8 to optimize this function (and inline findIndex) within a
  // few hundred calls, as a loop over everything did. Without a loop of its
  // own the function waits thousands of calls, and until then findIndex
  // calls the callback at ~8 ns an element.
  const n = known.length;
  for (let i = Math.max(0, n - 32); i < n; i++) if (messages[i] !== known[i]) return false;
  return known.findIndex((k, j) => messages[j] !== k) < 0;
}

// Brings `known` (the compactor's own copy of the messages it has indexed)
// in line with `messages`. The common case — the same messages plus new ones
// at the end — is checked on the first and last known messages and, when
// `scan` is true, on every known message (`sameRun`: a message replaced by a
// new object anywhere is seen); when it is false, on those two alone (the
// caller knows the array is the one it checked). It then returns the index
// from which `messages` is new (the old length of `known`): a number, no
// allocation, and the binding reads it without a conversion. Otherwise it
// gathers the identity facts (`identityFacts`), makes `known` a copy of
// `messages` (from the prefix on), and returns -1: `takeSync()` then gives
// [the old length of `known`, the facts]. What changed is decided in Rust
// (crates/core/src/conversation/edit.rs). May throw on hostile input;
// imported with `catch`.
let synced = [0, null];

export function takeSync() {
  return synced;
}

export function syncKnown(known, messages, scan) {
  const n = messages.length;
  const m = known.length;
  const unchanged =
    n >= m &&
    (m === 0 || (messages[m - 1] === known[m - 1] && messages[0] === known[0] && (!scan || sameRun(known, messages))));
  if (unchanged) {
    copyObjects(known, messages, m, n);
    return m;
  }
  const facts = identityFacts(known, messages, true);
  const d = facts[0];
  known.length = d;
  copyObjects(known, messages, d, n);
  synced = [m, facts];
  return -1;
}

// Appends messages[from..n) to `known`, up to the first element that is no
// object (as roleCode tells one): the binding reads every new message after
// a sync, and reading that one reports it (then `known` starts over), so a
// sparse array's length is never walked.
function copyObjects(known, messages, from, n) {
  for (let i = from; i < n; i++) {
    const message = messages[i];
    if (typeof message !== "object" || message === null) return;
    known.push(message);
  }
}

// The LLM cache's sync: rebaseKnown (a context that moved to a new summary),
// then syncKnown from the start. Returns syncKnown's number when nothing was
// rebased; otherwise -1, and `takeSync()` gives syncKnown's two values
// ([from, null] for an append from `from`) followed by where the rebase cut
// `known`. One crossing for both on every turn. May throw on hostile input;
// imported with `catch`.
export function syncLlm(known, messages, scan) {
  const p = rebaseKnown(known, messages);
  const r = syncKnown(known, messages, scan);
  if (p < 1) return r;
  if (r >= 0) synced = [r, null];
  synced = [...synced, p];
  return -1;
}

// What the edit from `known` (the array an adapter last saw) to `messages`
// needs to know, by object identity, as one Int32Array: [prefix], when
// messages[0..known.length) are the known objects; otherwise [prefix, class
// of each known[prefix..], class of each messages[prefix..]], where an
// object's class is its first index in known[prefix..] minus prefix, or -1
// for an object not there. The edit is made from that in Rust
// (crates/core/src/conversation/edit.rs). Used by the compactor's syncs and
// the store's save (crates/wasm/src/storage/save.rs), which scans every
// known message (a message replaced anywhere must be written; a few
// microseconds for thousands of messages, next to the write). With
// `toObject` (the compactor's syncs), the classes of `messages` end before
// its first element from `prefix` on that is no object: the core edits the
// array up to it and reads the rest as new, which reports it
// (crates/core/src/conversation/tracker.rs, `Synced::from_scan`).
export function identityFacts(known, messages, toObject = false) {
  const m = known.length;
  let n = messages.length;
  // A plain loop, not sameRun: this scan runs once per save or edit, too
  // rarely for V8 to optimize sameRun's findIndex, while a loop is
  // optimized within the scan itself (on-stack replacement).
  let p = 0;
  while (p < n && p < m && messages[p] === known[p]) p++;
  if (p === m) return Int32Array.of(m);
  if (toObject) {
    for (let j = p; j < n; j++) {
      const message = messages[j];
      if (typeof message !== "object" || message === null) {
        n = j;
        break;
      }
    }
  }
  const out = new Int32Array(1 + (m - p) + (n - p));
  out[0] = p;
  const first = new Map();
  for (let k = p; k < m; k++) {
    let c = first.get(known[k]);
    if (c === undefined) first.set(known[k], (c = k - p));
    out[1 + k - p] = c;
  }
  const o = 1 + m - p;
  for (let j = p; j < n; j++) out[o + j - p] = first.get(messages[j]) ?? -1;
  return out;
}

// messages[0..at) + [item] + messages[at..), as a new array.
export function insertAt(messages, at, item) {
  const out = Array.prototype.slice.call(messages, 0, at);
  out.push(item);
  for (let i = at; i < messages.length; i++) out.push(messages[i]);
  return out;
}

// When `messages` starts with a message `known` lacks and goes on with
// known[p..] (a context that moved forward to a new summary), makes `known`
// [messages[0], ...known[p..]] and returns p; otherwise returns -1 and
// leaves `known` alone. May throw on hostile input; imported with `catch`.
export function rebaseKnown(known, messages) {
  const n = messages.length;
  const m = known.length;
  if (n < 2 || m < 2 || messages[0] === known[0]) return -1;
  const p = known.indexOf(messages[1]);
  if (p < 1) return -1;
  const upto = Math.min(n - 1, m - p);
  for (let k = 1; k < upto; k++) if (messages[1 + k] !== known[p + k]) return -1;
  known.splice(0, p, messages[0]);
  return p;
}

// Drops the first `dropped` outputs and puts `first` (when defined) in front.
export function rebaseOut(out, dropped, first) {
  if (first === undefined) out.splice(0, dropped);
  else out.splice(0, dropped, first);
}

// Indices of messages[0..end) whose `pinned` is `true`, ascending: one pass
// for the stateless `transformContext` (the Compactor knows them from the
// facts it gathered once). Which of them count as pinned is decided in Rust
// (crates/core/src/message/pinned.rs). May throw on hostile input; imported
// with `catch`.
export function pinnedIndices(messages, end) {
  const out = [];
  for (let i = 0; i < end; i++) {
    const m = messages[i];
    if (typeof m !== "object" || m === null) continue;
    const pinned = m.pinned;
    if (pinned === true) out.push(i);
    // Not a boolean: reported by the binding (0xffffffff, then the index).
    else if (pinned !== undefined && pinned !== false) return [0xffffffff, i];
  }
  return out;
}

// The history search's copy of the hidden messages it has indexed
// (crates/wasm/src/history.rs): `known[i]` is the message indexed at i.
// Returns which of `hidden` (ascending indices) hold another message than
// the one indexed there (or none yet), and makes `known` hold exactly the
// messages at `hidden`. What to drop and add is decided in Rust
// (core history::lookup::sync). May throw (a getter on the array); imported
// with `catch`.
export function historyChanged(known, messages, hidden) {
  const changed = [];
  for (const i of hidden) if (known[i] !== messages[i]) changed.push(i);
  known.length = 0;
  for (const i of hidden) known[i] = messages[i];
  return Uint32Array.from(changed);
}
