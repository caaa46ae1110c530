// Unit tests of shim/roles.js and shim/values.js: role codes as the Rust
// core reads them (crates/core/src/message/role.rs), and the safe readers
// for hostile values (throwing getters, revoked proxies).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  NOT_AN_OBJECT, OTHER_ROLE, ROLE_NOT_A_STRING, UNREADABLE, compactionDivider, roleCode, roleCodes,
  textUserMessage, userMessage,
} from "../../crates/wasm/src/js/shim/roles.js";
import { arrayLength, describeValue, runFacts, sliceArray, thrownMessage, viewChange, viewHeld } from "../../crates/wasm/src/js/shim/values.js";

const hostile = Object.defineProperty({}, "role", { get() { throw new Error("no"); } });

test("role codes follow the core's Role order, with codes for what is not a message", () => {
  const roles = ["user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary", "toolOutputCleared"];
  assert.deepEqual(roles.map((role) => roleCode({ role })), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(roleCode({ role: "somethingElse" }), OTHER_ROLE);
  assert.equal(roleCode(null), NOT_AN_OBJECT);
  assert.equal(roleCode("user"), NOT_AN_OBJECT);
  assert.equal(roleCode({ role: 3 }), ROLE_NOT_A_STRING);
  assert.equal(roleCode(hostile), UNREADABLE);
});

test("roleCodes reads a range in one call and survives a throwing element", () => {
  const messages = new Proxy([{ role: "user" }, { role: "assistant" }, {}], {
    get(target, key) {
      if (key === "2") throw new Error("trap");
      return target[key];
    },
  });
  assert.deepEqual([...roleCodes(messages, 0, 3)], [0, 1, UNREADABLE]);
  assert.deepEqual([...roleCodes(messages, 1, 3)], [1, UNREADABLE]);
});

test("messages the core creates keep pi's key order", () => {
  assert.deepEqual(Object.keys(textUserMessage("hi", 5)), ["role", "content", "timestamp"]);
  assert.deepEqual(textUserMessage("hi", 5).content, [{ type: "text", text: "hi" }]);
  assert.deepEqual(userMessage("x", 1), { role: "user", content: "x", timestamp: 1 });
  assert.deepEqual(compactionDivider(10, 2), { role: "compactionDivider", tokensBefore: 10, timestamp: 2 });
});

test("values: descriptions, thrown messages and array lengths never throw where they must not", () => {
  const { proxy, revoke } = Proxy.revocable([], {});
  revoke();
  assert.equal(describeValue(proxy), "a revoked proxy");
  assert.equal(describeValue([]), "an array");
  assert.equal(describeValue(null), "null");
  assert.equal(describeValue(1n), "a bigint");
  assert.equal(thrownMessage(new TypeError("bad")), "bad");
  assert.equal(thrownMessage("text"), "text");
  assert.equal(thrownMessage(42), "a number was thrown");
  assert.equal(arrayLength({}), -1);
  assert.equal(arrayLength([1, 2]), 2);
  assert.throws(() => arrayLength(proxy));
  assert.deepEqual(sliceArray([1, 2, 3], 1, 3), [2, 3]);
});

test("values: modelContextChange's argument and answer, afterRun's facts", () => {
  assert.deepEqual(viewHeld({ view: 3, length: 7, other: 1 }), [3, 7]);
  assert.deepEqual(viewHeld({}), [undefined, undefined]);
  assert.throws(() => viewHeld(Object.defineProperty({}, "view", { get() { throw new Error("no"); } })), /no/);
  assert.deepEqual(viewChange(3, 2, ["m"]), { view: 3, kept: 2, added: ["m"] });
  assert.equal(runFacts({ overflow: false, retried: false }), 0);
  assert.equal(runFacts({ overflow: true }), 1);
  assert.equal(runFacts({ overflow: 0, retried: "yes" }), 2);
  assert.equal(runFacts({ overflow: 1, retried: true }), 3);
  for (const bad of [undefined, null, 5, "x"]) assert.throws(() => runFacts(bad), TypeError);
});
