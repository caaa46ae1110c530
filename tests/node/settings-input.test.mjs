// Settings reach the core as they are: a number JSON cannot carry (NaN,
// ±Infinity) or a function is refused like any other invalid value, by the
// Compactor and by resolveSettings alike.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Compactor, resolveSettings } from "agent-compaction";

const make = (settings) => new Compactor({ contextWindow: 200000, settings });

const numeric = [
  ["reserveTokens", (v) => ({ reserveTokens: v })],
  ["keepRecentTokens", (v) => ({ keepRecentTokens: v })],
  ['modelOverrides["a/b"].reserveTokens', (v) => ({ modelOverrides: { "a/b": { reserveTokens: v } } })],
  ["toolOutputClearing.protectTokens", (v) => ({ toolOutputClearing: { protectTokens: v } })],
  ["toolOutputClearing.minFreedTokens", (v) => ({ toolOutputClearing: { minFreedTokens: v } })],
  ["toolOutputClearing.protectTurns", (v) => ({ toolOutputClearing: { protectTurns: v } })],
];

test("non-finite numbers are RangeErrors naming the field, as -1 and 1.5 are", () => {
  for (const [field, settings] of numeric) {
    for (const bad of [NaN, Infinity, -Infinity, -1, 1.5]) {
      const pattern = new RegExp(
        `^settings\\.${field.replace(/[.[\]"/]/g, "\\$&")} must be a non-negative safe integer, got ${String(bad).replace("+", "")}$`,
      );
      assert.throws(() => make(settings(bad)), (e) => e instanceof RangeError && pattern.test(e.message), `${field} = ${bad}`);
      assert.throws(() => resolveSettings(settings(bad)), (e) => e instanceof RangeError && pattern.test(e.message), `resolveSettings ${field} = ${bad}`);
    }
  }
});

test("the Compactor's own numeric options: a number out of range is a RangeError showing it, another type a TypeError", () => {
  const expected = {
    summarizerContextWindow: "a non-negative safe integer",
    summarizeTimeoutMs: "a whole number of milliseconds from 0 to 2147483647 (0: no timeout)",
  };
  for (const [field, what] of Object.entries(expected)) {
    for (const bad of [NaN, Infinity, -1, 1.5, 2 ** 53]) {
      assert.throws(() => new Compactor({ contextWindow: 200000, [field]: bad }), {
        name: "RangeError",
        message: `options.${field} must be ${what}, got ${bad}`,
      });
    }
    assert.throws(() => new Compactor({ contextWindow: 200000, [field]: "60000" }), {
      name: "TypeError",
      message: `options.${field} must be ${what}, got a string`,
    });
  }
});

test("summarizeTimeoutMs longer than a timer can wait is refused: it would fire at once and fail every summary", async () => {
  for (const bad of [2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
    assert.throws(() => new Compactor({ contextWindow: 200000, summarizeTimeoutMs: bad }), {
      name: "RangeError",
      message: `options.summarizeTimeoutMs must be a whole number of milliseconds from 0 to 2147483647 (0: no timeout), got ${bad}`,
    });
  }
  // The longest timer, and none at all, let a slow summarizer answer.
  const messages = [];
  for (let i = 0; i < 40; i++) {
    messages.push({ role: "user", content: `question ${i} ${"word ".repeat(200)}`, timestamp: i });
  }
  for (const summarizeTimeoutMs of [2 ** 31 - 1, 0]) {
    const c = new Compactor({
      contextWindow: 20000,
      settings: { reserveTokens: 2000, keepRecentTokens: 4000 },
      summarizeTimeoutMs,
      summarize: () => new Promise((resolve) => setTimeout(() => resolve("the summary"), 30)),
    });
    assert.equal((await c.compact(messages)).summarizedBy, "summarizer", `summarizeTimeoutMs ${summarizeTimeoutMs}`);
  }
});

test("a function where a setting belongs is a TypeError naming the field", () => {
  const f = () => {};
  for (const [settings, field] of [
    [{ toolOutputClearing: f }, "settings.toolOutputClearing"],
    [{ reserveTokens: f }, "settings.reserveTokens"],
    [{ toolOutputClearing: { neverClear: [f] } }, "settings.toolOutputClearing.neverClear[0]"],
  ]) {
    const check = (e) => e instanceof TypeError && e.message.startsWith(`${field} must be `) && e.message.endsWith("got a function");
    assert.throws(() => make(settings), check);
    assert.throws(() => resolveSettings(settings), check);
  }
});

test("an undefined element of an array (a hole) is a TypeError naming its index at once, however long the array", () => {
  const check = (field) => (e) => e instanceof TypeError && e.message.startsWith(`${field} must be JSON data`) && e.message.endsWith("got undefined");
  for (const [settings, field] of [
    [{ toolOutputClearing: { neverClear: new Array(2 ** 32 - 1) } }, "settings.toolOutputClearing.neverClear[0]"],
    [{ toolOutputClearing: { neverClear: ["read", undefined] } }, "settings.toolOutputClearing.neverClear[1]"],
    [{ appOwn: [1, , 3] }, "settings.appOwn[1]"],
  ]) {
    assert.throws(() => make(settings), check(field));
    assert.throws(() => resolveSettings(settings), check(field));
  }
  assert.equal(resolveSettings({ toolOutputClearing: { neverClear: ["read"] } }).reserveTokens, 16384);
});

test("settings that are, or hold, a revoked proxy cannot be read: a TypeError naming settings", () => {
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  };
  const check = (e) => e instanceof TypeError && e.message === "settings could not be read: Cannot perform 'IsArray' on a proxy that has been revoked";
  for (const settings of [revoked(), { toolOutputClearing: revoked() }, { toolOutputClearing: { neverClear: revoked() } }]) {
    assert.throws(() => make(settings), check);
    assert.throws(() => resolveSettings(settings), check);
  }
});

test("resolveSettings reads toolOutputClearing as the Compactor does", () => {
  for (const settings of [
    { toolOutputClearing: { protectTokens: -1 } },
    { toolOutputClearing: "yes" },
    { toolOutputClearing: { neverClear: [1] } },
  ]) {
    let compactorError;
    try { make(settings); } catch (e) { compactorError = e; }
    assert.ok(compactorError, JSON.stringify(settings));
    assert.throws(() => resolveSettings(settings), (e) => e.constructor === compactorError.constructor && e.message === compactorError.message);
  }
  assert.deepEqual(resolveSettings({ toolOutputClearing: { protectTokens: 0 }, reserveTokens: undefined }).reserveTokens, 16384);
});

test("missing, undefined and null settings still take the defaults", () => {
  assert.equal(make({ reserveTokens: undefined, keepRecentTokens: null }).settings.reserveTokens, 16384);
  assert.equal(make({ toolOutputClearing: null }).settings.keepRecentTokens, 20000);
});
