// The SessionStore's session locks: Web Locks (shared by the origin's tabs
// and workers) held as leases, a queue in this realm where `navigator.locks`
// is missing (Node, insecure contexts) or refused (opaque origins), and the
// channel on which a context says it wants a lock. The lease policy — when a
// kept lock is reused, how long it is kept, what a failed request falls
// back to — is decided in Rust (crates/core/src/storage/lease.rs) through
// the function `setLeasePolicy` installs; this module holds the state and
// runs the timers. Imported by crates/wasm/src/store/locks.rs.

// Questions to the policy (core::storage::lease::question).
const TAKE = 0;
const IDLE = 1;
const FAILED = 2;

let policy = null;
let channelName = null;

// `decide(question, calls, bits)` answers as core::storage::lease::answer;
// `channel` is the BroadcastChannel's name for lock wishes.
export function setLeasePolicy(decide, channel) {
  policy = decide;
  channelName = channel;
}

const hidden = () => typeof document === "object" && document?.visibilityState === "hidden";

// What the policy reads of a lease: granted 1, giving up 2, failed 4, page hidden 8.
function ask(question, lease) {
  const bits = (lease.release ? 1 : 0) | (lease.done ? 2 : 0) | (lease.failed ? 4 : 0) | (hidden() ? 8 : 0);
  return policy(question, lease.calls, bits);
}

// Runs `callback` after the calls queued before it on `name` in this realm.
const realmLocks = new Map();
function realmLock(name, callback) {
  const run = (realmLocks.get(name) || Promise.resolve()).then(() => callback());
  const tail = run.then(
    () => {},
    () => {},
  );
  realmLocks.set(name, tail);
  tail.then(() => {
    if (realmLocks.get(name) === tail) realmLocks.delete(name);
  });
  return run;
}

// A lease: a Web Lock this realm holds across calls. Its calls run one at a
// time, in the order they were made (`tail`). A context that finds the lock
// taken says so on the channel before queueing for it; a lease told so (or
// whose page is hidden or going away) takes no new calls and lets the lock
// go as soon as its current ones end.
const leases = new Map();
let lockChannel;

function lockNotices() {
  if (lockChannel !== undefined) return lockChannel;
  lockChannel = null;
  try {
    lockChannel = new BroadcastChannel(channelName);
    lockChannel.onmessage = (e) => {
      const lease = typeof e.data?.want === "string" ? leases.get(e.data.want) : undefined;
      if (lease) giveUp(lease);
    };
    if (typeof lockChannel.unref === "function") lockChannel.unref();
  } catch {
    // No BroadcastChannel: a lease ends after its linger whoever waits.
    lockChannel = null;
  }
  if (typeof document === "object" && typeof document?.addEventListener === "function") {
    document.addEventListener("visibilitychange", () => {
      if (hidden()) for (const lease of [...leases.values()]) giveUp(lease);
    });
    globalThis.addEventListener?.("pagehide", () => {
      for (const lease of [...leases.values()]) giveUp(lease);
    });
  }
  return lockChannel;
}

// No new calls; the lock goes once the current ones end.
function giveUp(lease) {
  lease.done = true;
  if (leases.get(lease.name) === lease) leases.delete(lease.name);
  if (lease.calls === 0) end(lease);
}

function end(lease) {
  clearTimeout(lease.timer);
  if (leases.get(lease.name) === lease) leases.delete(lease.name);
  if (lease.release) lease.release();
}

function openLease(locks, name) {
  const lease = { name, calls: 0, timer: undefined, release: null, done: false, failed: null, tail: null };
  leases.set(name, lease);
  const channel = lockNotices();
  lease.tail = new Promise((granted) => {
    const hold = () =>
      new Promise((release) => {
        lease.release = release;
        granted();
      });
    locks
      .request(name, { ifAvailable: true }, (lock) => (lock ? hold() : null))
      .then(() => {
        if (lease.release) return;
        // Taken: tell its holder (a lease of another tab lets it go), then queue.
        if (channel) {
          try {
            channel.postMessage({ want: name });
          } catch {
            // A closed channel: the holder's lease ends on its own.
          }
        }
        return locks.request(name, hold);
      })
      .catch((e) => {
        lease.failed = e;
        end(lease);
        granted();
      });
  });
  return lease;
}

// The lease's last call ended: kept for the policy's linger, or let go.
function idle(lease) {
  const ms = ask(IDLE, lease);
  if (!(ms >= 0)) {
    giveUp(lease);
    return;
  }
  lease.timer = setTimeout(() => end(lease), ms);
  if (typeof lease.timer?.unref === "function") lease.timer.unref();
}

// Runs `callback` holding the exclusive lock `name`; resolves or rejects as
// `callback`'s promise does.
export function withLock(name, callback) {
  const locks = globalThis.navigator?.locks;
  if (!locks || typeof locks.request !== "function" || !policy) return realmLock(name, callback);
  const lease = leases.get(name) ?? openLease(locks, name);
  lease.calls++;
  clearTimeout(lease.timer);
  const run = lease.tail.then(() => {
    if (!lease.failed) return callback();
    const security = lease.failed?.name === "SecurityError" ? 1 : 0;
    if (policy(FAILED, 0, security) === 1) return realmLock(name, callback);
    throw lease.failed;
  });
  const settled = () => {
    if (--lease.calls === 0) idle(lease);
  };
  lease.tail = run.then(settled, settled);
  return run;
}

// The lease of `name` when the policy lets a call take it at once (granted,
// idle, taking calls): taken for one call made without a callback (null
// otherwise), which `returnLease` ends; calls made meanwhile queue behind
// it. Skips withLock's promise hops on a turn's next save.
export function takeLease(name) {
  if (typeof globalThis.navigator?.locks?.request !== "function" || !policy) return null;
  const lease = leases.get(name);
  if (!lease || ask(TAKE, lease) !== 1) return null;
  lease.calls++;
  clearTimeout(lease.timer);
  lease.tail = new Promise((handBack) => {
    lease.handBack = handBack;
  });
  return lease;
}

export function returnLease(lease) {
  lease.handBack();
  if (--lease.calls === 0) idle(lease);
}

// Lets go at once of the locks this realm keeps whose names start with
// `prefix` (a closed store's), once their current calls end.
export function releaseLocks(prefix) {
  for (const lease of [...leases.values()]) if (lease.name.startsWith(prefix)) giveUp(lease);
}
