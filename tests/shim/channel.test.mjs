// Unit tests of shim/channel.js: change notices posted after the call that
// made them, in order, flushed when a channel closes; listeners called one
// by one, one that throws not stopping the others.
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeChannel, deliver, openChannel, postChange, subscribe } from "../../crates/wasm/src/js/shim/channel.js";

// The channels do not keep a Node process alive (they are unref'd): a
// timer does, while a test waits for them.
const keepAlive = (promise) => {
  const timer = setInterval(() => {}, 1000);
  return promise.finally(() => clearInterval(timer));
};

test("notices reach the other store in order, and not synchronously", async () => {
  const name = "test-channel-" + Math.random();
  const heard = [];
  let done;
  const all = new Promise((r) => (done = r));
  const other = openChannel(name, (event) => {
    heard.push(event.n);
    if (heard.length === 3) done();
  });
  const mine = openChannel(name, () => assert.fail("a channel does not hear itself"));
  postChange(mine, { n: 1 });
  postChange(mine, { n: 2 });
  postChange(mine, { n: 3 });
  assert.deepEqual(heard, []);
  await keepAlive(all);
  assert.deepEqual(heard, [1, 2, 3]);
  closeChannel(mine);
  closeChannel(other);
});

test("closing a channel sends what it still had to send", async () => {
  const name = "test-channel-" + Math.random();
  let got;
  const heard = new Promise((r) => (got = r));
  const other = openChannel(name, got);
  const mine = openChannel(name, () => {});
  postChange(mine, { last: true });
  closeChannel(mine);
  assert.deepEqual(await keepAlive(heard), { last: true });
  closeChannel(other);
});

test("subscribe and deliver: a throwing listener is reported, the others still called", () => {
  const listeners = new Set();
  const calls = [];
  const unsubscribe = subscribe(listeners, (e) => calls.push(["a", e]));
  subscribe(listeners, () => {
    throw new Error("listener bug");
  });
  subscribe(listeners, (e) => calls.push(["c", e]));
  // The error is rethrown from a timer, as an event listener's would be
  // reported: the timer is captured here and run under assert.throws.
  const timers = [];
  const captured = (event) => {
    const realSetTimeout = globalThis.setTimeout;
    globalThis.setTimeout = (fn) => timers.push(fn);
    try {
      deliver(listeners, event);
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
  };
  captured(1);
  assert.deepEqual(calls, [["a", 1], ["c", 1]]);
  assert.equal(timers.length, 1);
  assert.throws(timers[0], /listener bug/);
  unsubscribe();
  captured(2);
  assert.deepEqual(calls.at(-1), ["c", 2]);
  assert.equal(listeners.size, 2);
  assert.equal(timers.length, 2);
});
