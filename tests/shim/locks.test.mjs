// Unit tests of shim/locks.js with a lock manager of this file standing in
// for navigator.locks: the lease is kept and reused as the policy says (the
// policy is a stand-in for core::storage::lease::answer, asked with the
// facts the shim packs), calls run one at a time, a release lets go, and
// without Web Locks the calls queue in this realm.
import { test } from "node:test";
import assert from "node:assert/strict";
import { releaseLocks, returnLease, setLeasePolicy, takeLease, withLock } from "../../crates/wasm/src/js/shim/locks.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A minimal exclusive lock manager with `ifAvailable`.
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
    request(name, options, callback) {
      log.requests++;
      if (typeof options === "function") [callback, options] = [options, {}];
      if (!held.has(name)) return grant(name, callback);
      if (options.ifAvailable) return Promise.resolve(callback(null));
      return new Promise((resolve) => {
        if (!waiting.has(name)) waiting.set(name, []);
        waiting.get(name).push(() => resolve(grant(name, callback)));
      });
    },
  };
}

function useLocks(locks) {
  Object.defineProperty(globalThis, "navigator", { value: locks ? { locks } : undefined, configurable: true, writable: true });
}

// The core's policy (lease.rs), as numbers; it records what it was asked.
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
