// Unit tests of shim/locks.js with a lock manager of this file standing in
// for navigator.locks: the lease is kept and reused as the policy says (the
// policy is a stand-in for core::storage::locks::answer, asked with the
// facts the shim packs), calls run one at a time, a release lets go,
// without Web Locks the calls queue in this realm, and a call that waits
// longer than its timeout gives up its place and never runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  lockTimedOut, releaseLocks, returnLease, setLeasePolicy, takeLease, withLock,
} from "../../crates/wasm/src/js/shim/locks.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A minimal exclusive lock manager with `ifAvailable` and `signal` (an
// aborted request leaves the queue and rejects with an AbortError).
function fakeLocks() {
  const held = new Set();
  const waiting = new Map();
  const log = { requests: 0, grants: 0, releases: 0 };
  const grant = async (name, callback) => {
    held.add(name);
    log.grants++;
    try {
      return await callback({ name });
    } finally {
      held.delete(name);
      log.releases++;
      const next = waiting.get(name)?.shift();
      if (next) next();
    }
  };
  return {
    log,
    isHeld: (name) => held.has(name),
    waiting: (name) => waiting.get(name)?.length ?? 0,
    request(name, options, callback) {
      log.requests++;
      if (typeof options === "function") [callback, options] = [options, {}];
      if (!held.has(name)) return grant(name, callback);
      if (options.ifAvailable) return Promise.resolve(callback(null));
      return new Promise((resolve, reject) => {
        if (!waiting.has(name)) waiting.set(name, []);
        const entry = () => resolve(grant(name, callback));
        waiting.get(name).push(entry);
        options.signal?.addEventListener("abort", () => {
          const queue = waiting.get(name);
          if (!queue?.includes(entry)) return;
          queue.splice(queue.indexOf(entry), 1);
          log.aborted = (log.aborted ?? 0) + 1;
          const e = new Error("aborted");
          e.name = "AbortError";
          reject(e);
        });
      });
    },
  };
}

function useLocks(locks) {
  Object.defineProperty(globalThis, "navigator", { value: locks ? { locks } : undefined, configurable: true, writable: true });
}

// The core's policy (storage/locks.rs), as numbers; it records what it was asked.
const asked = [];
function policy(linger) {
  return (question, calls, bits) => {
    asked.push([question, calls, bits]);
    if (question === 0) return calls === 0 && (bits & 1) && !(bits & 6) ? 1 : 0;
    if (question === 1) return bits & 14 ? -1 : linger;
    return bits & 1 ? 1 : 0;
  };
}

test("without Web Locks, calls on a name run one at a time in order", async () => {
  useLocks(undefined);
  const order = [];
  const a = withLock("r", async () => { await sleep(20); order.push("a"); return 1; });
  const b = withLock("r", async () => { order.push("b"); return 2; });
  assert.deepEqual(await Promise.all([a, b]), [1, 2]);
  assert.deepEqual(order, ["a", "b"]);
});

test("a granted lock is kept for the policy's linger and reused, then let go", async () => {
  const locks = fakeLocks();
  useLocks(locks);
  setLeasePolicy(policy(60), "test-locks-" + Math.random());
  asked.length = 0;
  assert.equal(await withLock("s1", () => "one"), "one");
  assert.equal(locks.isHeld("s1"), true, "kept after the call");
  assert.ok(asked.some(([q]) => q === 1), "the policy was asked when the lease went idle");
  const lease = takeLease("s1");
  assert.notEqual(lease, null, "an idle granted lease is taken at once");
  assert.equal(takeLease("s1"), null, "not twice");
  // A call made meanwhile waits for the taken lease.
  let ran = false;
  const queued = withLock("s1", () => { ran = true; });
  await sleep(5);
  assert.equal(ran, false);
  returnLease(lease);
  await queued;
  assert.equal(ran, true);
  assert.equal(locks.log.requests, 1, "one request to the lock manager for three calls");
  await sleep(120);
  assert.equal(locks.isHeld("s1"), false, "let go after the linger");
});

test("a policy answering release lets the lock go when its calls end; releaseLocks gives up kept ones", async () => {
  const locks = fakeLocks();
  useLocks(locks);
  setLeasePolicy(policy(-1), "test-locks-" + Math.random());
  await withLock("s2", () => {});
  await sleep(0);
  assert.equal(locks.isHeld("s2"), false);
  setLeasePolicy(policy(10_000), "test-locks-" + Math.random());
  await withLock("db:x:a", () => {});
  await withLock("other", () => {});
  assert.equal(locks.isHeld("db:x:a"), true);
  releaseLocks("db:x:");
  await sleep(0);
  assert.equal(locks.isHeld("db:x:a"), false);
  assert.equal(locks.isHeld("other"), true);
  releaseLocks("other");
});

test("a refused lock request falls back to the realm queue when the policy says so", async () => {
  const refusing = {
    request() {
      const e = new Error("opaque origin");
      e.name = "SecurityError";
      return Promise.reject(e);
    },
  };
  useLocks(refusing);
  setLeasePolicy(policy(50), "test-locks-" + Math.random());
  assert.equal(await withLock("s3", () => "queued here"), "queued here");
  const failing = { request: () => Promise.reject(new Error("broken")) };
  useLocks(failing);
  await assert.rejects(withLock("s4", () => "never"), /broken/);
  useLocks(undefined);
});

test("without Web Locks, a call that waits longer than its timeout gives up its place and never runs", async () => {
  useLocks(undefined);
  const order = [];
  let release;
  const first = withLock("t1", () => new Promise((r) => (release = r)).then(() => order.push("first")), 1000);
  const t0 = Date.now();
  const second = withLock("t1", () => order.push("second (must not run)"), 40);
  const third = withLock("t1", () => order.push("third"), 1000);
  const e = await second.then(() => null, (x) => x);
  assert.equal(lockTimedOut(e), true, "rejected as a timeout");
  assert.ok(Date.now() - t0 >= 35, "after about its timeout");
  assert.equal(lockTimedOut(new Error("x")), false);
  release();
  await Promise.all([first, third]);
  await sleep(10);
  assert.deepEqual(order, ["first", "third"], "the timed-out call never ran; the next one still waited its turn");
  assert.equal(await withLock("t1", () => "free again", 50), "free again");
});

test("a Web Lock that never comes times the call out and withdraws the request", async () => {
  const locks = fakeLocks();
  useLocks(locks);
  setLeasePolicy(policy(60), "test-locks-" + Math.random());
  // Another context holds the lock (a page kept in the back/forward cache).
  let letGo;
  locks.request("t2", () => new Promise((r) => (letGo = r)));
  let ran = 0;
  const a = withLock("t2", () => ran++, 50);
  const b = withLock("t2", () => ran++, 80);
  const ea = await a.then(() => null, (x) => x);
  assert.equal(lockTimedOut(ea), true);
  assert.equal(locks.waiting("t2"), 1, "still asked for while a call waits");
  const eb = await b.then(() => null, (x) => x);
  assert.equal(lockTimedOut(eb), true);
  assert.equal(locks.waiting("t2"), 0, "withdrawn when the last waiting call gave up");
  assert.equal(locks.log.aborted, 1);
  letGo();
  await sleep(5);
  assert.equal(ran, 0, "nothing ran without the lock");
  assert.equal(locks.isHeld("t2"), false);
  // The next call asks anew and gets it.
  assert.equal(await withLock("t2", () => "granted", 50), "granted");
  assert.equal(ran, 0);
  releaseLocks("t2");
});

test("a lock granted after every waiting call gave up is let go at once", async () => {
  // A lock manager that ignores `signal` (an engine without it).
  const locks = fakeLocks();
  const plain = { request: (name, options, callback) => {
    if (typeof options === "object" && options?.signal) options = {};
    return locks.request(name, options, callback);
  } };
  useLocks(plain);
  setLeasePolicy(policy(10_000), "test-locks-" + Math.random());
  let letGo;
  locks.request("t3", () => new Promise((r) => (letGo = r)));
  let ran = false;
  const e = await withLock("t3", () => (ran = true), 30).then(() => null, (x) => x);
  assert.equal(lockTimedOut(e), true);
  letGo();
  await sleep(5);
  assert.equal(ran, false);
  assert.equal(locks.isHeld("t3"), false, "not kept for the linger: nobody is left to use it");
});

test("a call queued behind a long call of its own page times out; the ones after it still run in order", async () => {
  const locks = fakeLocks();
  useLocks(locks);
  setLeasePolicy(policy(60), "test-locks-" + Math.random());
  const order = [];
  let finish;
  const long = withLock("t4", () => new Promise((r) => (finish = r)).then(() => order.push("long")), 1000);
  const short = withLock("t4", () => order.push("short (must not run)"), 30);
  const after = withLock("t4", () => order.push("after"), 1000);
  assert.equal(lockTimedOut(await short.then(() => null, (x) => x)), true);
  finish();
  await Promise.all([long, after]);
  assert.deepEqual(order, ["long", "after"]);
  assert.equal(locks.log.requests, 1, "one lease: one request, granted at once");
  releaseLocks("t4");
});
