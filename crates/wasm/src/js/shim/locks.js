// The SessionStore's session locks: Web Locks (shared by the origin's tabs
// and workers) held as leases, a queue in this realm where `navigator.locks`
// is missing (Node, insecure contexts) or refused (opaque origins), and the
// channel on which a context says it wants a lock. The lease policy — when a
// kept lock is reused, how long it is kept, what a failed request falls
// back to — is decided in Rust (crates/core/src/storage/locks.rs) through
// the function `setLeasePolicy` installs; this module holds the state and
// runs the timers. No call waits for its lock longer than the timeout it is
// given (the store's lockTimeoutMs, chosen in Rust): it then leaves the
// queue, rejects with a value `lockTimedOut` recognizes, and its callback
// never runs. Imported by crates/wasm/src/storage/locks.rs.

// Questions to the policy (core::storage::locks::question).
const TAKE = 0;
const IDLE = 1;
const FAILED = 2;

let policy = null;
let channelName = null;

// `decide(question, calls, bits)` answers as core::storage::locks::answer;
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

// What a call that waited too long for its lock rejects with.
class LockWaitTimeout {
  constructor(ms) {
    this.ms = ms;
  }
}

// Whether `e` is the rejection of a call that waited longer than its timeout.
export function lockTimedOut(e) {
  return e instanceof LockWaitTimeout;
}

const ignore = () => {};

// Runs `callback` when `turn` (a promise that never rejects) resolves,
// unless `ms` pass first (no limit without a positive `ms`): then `run`
// rejects with a LockWaitTimeout, `onTimeout` is called, and `callback`
// never runs. `done` resolves when the next call may run: after `callback`
// settled, or at `turn` when this call gave up.
function bounded(turn, callback, ms, onTimeout) {
  let timedOut = false;
  let timer;
  const run = new Promise((resolve, reject) => {
    if (ms > 0) {
      timer = setTimeout(() => {
        timedOut = true;
        reject(new LockWaitTimeout(ms));
        onTimeout?.();
      }, ms);
    }
    turn.then(() => {
      if (timedOut) return;
      clearTimeout(timer);
      try {
        resolve(callback());
      } catch (e) {
        reject(e);
      }
    });
  });
  const done = turn.then(() => (timedOut ? undefined : run.then(ignore, ignore)));
  return [run, done];
}

// Runs `callback` after the calls queued before it on `name` in this realm.
const realmLocks = new Map();
function realmLock(name, callback, ms) {
  const [run, done] = bounded(realmLocks.get(name) || Promise.resolve(), callback, ms);
  realmLocks.set(name, done);
  done.then(() => {
    if (realmLocks.get(name) === done) realmLocks.delete(name);
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
  const lease = { name, calls: 0, timer: undefined, release: null, done: false, failed: null, tail: null, abort: null };
  leases.set(name, lease);
  const channel = lockNotices();
  lease.tail = new Promise((granted) => {
    const hold = () =>
      new Promise((release) => {
        lease.release = release;
        granted();
        // Granted after every call waiting for it gave up: let it go.
        if (lease.done && lease.calls === 0) end(lease);
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
        const abort = typeof AbortController === "function" ? new AbortController() : null;
        lease.abort = abort;
        return abort ? locks.request(name, { signal: abort.signal }, hold) : locks.request(name, hold);
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

// The last call waiting for a lock not granted yet gave up: the request is
// withdrawn (a lock a page in the back/forward cache keeps may never come),
// and the next call asks anew.
function withdraw(lease) {
  lease.done = true;
  if (leases.get(lease.name) === lease) leases.delete(lease.name);
  lease.abort?.abort();
}

// Runs `callback` holding the exclusive lock `name`; resolves or rejects as
// `callback`'s promise does. When the lock has not come after `ms`
// milliseconds, rejects with a LockWaitTimeout instead and never runs
// `callback`.
export function withLock(name, callback, ms) {
  const locks = globalThis.navigator?.locks;
  if (!locks || typeof locks.request !== "function" || !policy) return realmLock(name, callback, ms);
  const lease = leases.get(name) ?? openLease(locks, name);
  lease.calls++;
  clearTimeout(lease.timer);
  let ended = false;
  const settled = () => {
    if (ended) return;
    ended = true;
    if (--lease.calls > 0) return;
    if (lease.release) idle(lease);
    else withdraw(lease);
  };
  const [run, done] = bounded(
    lease.tail,
    () => {
      if (!lease.failed) return callback();
      const security = lease.failed?.name === "SecurityError" ? 1 : 0;
      if (policy(FAILED, 0, security) === 1) return realmLock(name, callback, ms);
      throw lease.failed;
    },
    ms,
    settled,
  );
  run.then(settled, settled);
  lease.tail = done;
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
