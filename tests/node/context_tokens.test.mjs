// The compactor's context tokens right after the app inserts a summary:
// every kept message's usage is stale (SPEC §3), so their estimates count.
// The estimates the compactor left unmeasured (tool-call arguments of
// messages that reported usage) are bounded from their sizes and measured
// only when the threshold check needs them; these tests check that the
// answers are those of the measured numbers, at and around the threshold,
// and that measuring is indeed spared when the answer is clear. The first
// three are about pi's estimates (estimator: "pi": the numbers are
// estimateTokens'); the calibrated estimate, whose every message is left
// unmeasured under a bound from its length (tightened from the texts' UTF-8
// lengths before any is classified), has its own tests here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Compactor, estimateContextTokens, estimateTokens } from "agent-compaction";
import { usage } from "../support/pi-usage.mjs";

let clock = 1_000;
const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
/** An assistant turn with tool calls whose arguments need escaping. */
const toolTurn = (i) => ({
  role: "assistant",
  content: [
    { type: "text", text: `step ${i}` },
    {
      type: "toolCall",
      id: `c${i}`,
      name: "write",
      arguments: {
        path: `src/file_${i}.ts`,
        content: `line "one"\n\tline\u0001two \\ ${"é😀".repeat(i)} \ud800`.repeat(1 + (i % 5)),
        raw: "\u0001".repeat(300 + i),
        flags: [true, null, 1.5e-7, -0, { deep: [i, "x"] }],
      },
    },
  ],
  api: "openai-completions",
  provider: "local",
  model: "m",
  usage: usage(50_000 + i * 1000),
  stopReason: "toolUse",
  timestamp: clock++,
});
const result = (i) => ({
  role: "toolResult",
  toolCallId: `c${i}`,
  toolName: "write",
  content: [{ type: "text", text: `wrote ${i}` }],
  isError: false,
  timestamp: clock++,
});

function session(turns) {
  const out = [];
  for (let i = 0; i < turns; i++) out.push(user(`request ${i}`), toolTurn(i), result(i));
  return out;
}

/** The array with a summary inserted at `at`, stamped after every message. */
function withSummary(messages, at) {
  const summary = { role: "compactionSummary", summary: "## Goal\nS", tokensBefore: 90_000, timestamp: clock++ };
  return [...messages.slice(0, at), summary, ...messages.slice(at)];
}

/** Counts JSON.stringify calls on tool-call arguments while `f` runs. */
function countingStringify(f) {
  const original = JSON.stringify;
  let calls = 0;
  JSON.stringify = function (value, ...rest) {
    if (value && typeof value === "object" && "path" in value) calls++;
    return original.call(this, value, ...rest);
  };
  try {
    const value = f();
    return { value, calls };
  } finally {
    JSON.stringify = original;
  }
}

const before = session(12);
const after = withSummary(before, 9);
// Every usage after the summary is stale: the context is the summary and
// the estimates of the kept messages.
const exact = after.slice(9).reduce((n, m) => n + estimateTokens(m), 0);
const reserveTokens = 1000;

/** A compactor that saw `before` (estimates gathered lazily), then `after`. */
function compactorAt(threshold, estimator = "pi") {
  const c = new Compactor({ contextWindow: threshold + reserveTokens, settings: { reserveTokens, keepRecentTokens: 10 }, estimator });
  assert.equal(c.needsCompaction(before), threshold < 61_010); // fresh usage: 61,010
  return c;
}

test("right after an inserted summary, needsCompaction answers as the measured number does, at every threshold near it", () => {
  assert.ok(exact > 100);
  for (const threshold of [20, exact - 50, exact - 2, exact - 1, exact, exact + 1, exact + 2, exact + 50, exact * 10]) {
    const c = compactorAt(threshold);
    assert.equal(c.needsCompaction(after), exact > threshold, `threshold ${threshold}`);
    assert.equal(c.contextTokens(after), exact, `threshold ${threshold}`);
    c.free();
  }
});

test("arguments are not stringified when the bounds settle the answer, and are when they do not", () => {
  const far = compactorAt(exact * 10);
  const clear = countingStringify(() => far.needsCompaction(after));
  assert.deepEqual(clear, { value: false, calls: 0 });
  // contextTokens is exact: it measures.
  const measured = countingStringify(() => far.contextTokens(after));
  assert.equal(measured.value, exact);
  assert.ok(measured.calls > 0);
  far.free();
  const near = compactorAt(exact);
  const open = countingStringify(() => near.needsCompaction(after));
  assert.equal(open.value, false);
  assert.ok(open.calls > 0);
  near.free();
});

test("arguments with no cheap bound are measured, and their errors are reported as before", () => {
  const odd = session(3);
  // A plain object whose toJSON makes its JSON far longer than its fields.
  odd[1].content[1].arguments = { path: "p", toJSON: () => "x".repeat(8000) };
  odd[4].content[1].arguments = { path: "p", when: new Date(0) };
  const withOdd = withSummary(odd, 0);
  const oddExact = withOdd.reduce((n, m) => n + estimateTokens(m), 0);
  for (const threshold of [oddExact - 1, oddExact]) {
    const c = compactorAt(threshold);
    c.needsCompaction(odd);
    const r = countingStringify(() => c.needsCompaction(withOdd));
    assert.equal(r.value, oddExact > threshold, `threshold ${threshold}`);
    assert.ok(r.calls > 0);
    assert.equal(c.contextTokens(withOdd), oddExact);
    c.free();
  }
  const bad = session(3);
  bad[4].content[1].arguments = { path: "p", size: 10n };
  const d = compactorAt(exact * 10);
  d.needsCompaction(bad);
  assert.throws(
    () => d.needsCompaction(withSummary(bad, 0)),
    (e) => e instanceof TypeError && /messages\[5\]\.content\[1\]\.arguments/.test(e.message) && /BigInt/i.test(e.message),
  );
  d.free();
});

// The calibrated estimate: the exact number is what a compactor that
// measures everything gives (contextTokens), the same for a fresh one.
const calibratedExact = (() => {
  const c = new Compactor({ contextWindow: 1_000_000, estimator: "calibrated" });
  const n = c.contextTokens(after);
  c.free();
  return n;
})();

test("calibrated: right after an inserted summary, needsCompaction answers as the measured number does, at every threshold near it", () => {
  const e = calibratedExact;
  assert.ok(e > exact, `CJK-free but escaped arguments: calibrated ${e} vs pi ${exact}`);
  for (const threshold of [20, e - 50, e - 2, e - 1, e, e + 1, e + 2, e + 50, e * 10]) {
    const c = compactorAt(threshold, "calibrated");
    assert.equal(c.needsCompaction(after), e > threshold, `threshold ${threshold}`);
    assert.equal(c.contextTokens(after), e, `threshold ${threshold}`);
    c.free();
  }
});

test("calibrated: texts are read only when the bounds leave the answer open, the largest first", () => {
  // Far above every bound (2.1 tokens per code unit): nothing is read.
  const far = compactorAt(calibratedExact * 20, "calibrated");
  assert.deepEqual(countingStringify(() => far.needsCompaction(after)), { value: false, calls: 0 });
  far.free();
  // Near the number: some are read, not every one of them twice.
  const near = compactorAt(calibratedExact, "calibrated");
  const open = countingStringify(() => near.needsCompaction(after));
  assert.equal(open.value, false);
  assert.ok(open.calls > 0);
  // Measured once: asking again reads nothing more.
  assert.deepEqual(countingStringify(() => near.needsCompaction(after)), { value: false, calls: 0 });
  near.free();
  // Between the two: the largest bounds are tightened (from the texts'
  // UTF-8 lengths, which stringifies the arguments) or measured first, and
  // reading stops once the answer is clear, before every kept message is
  // read. (×3: the bounds from lengths count bounded arguments per byte,
  // so ×4 is settled with nothing read.)
  const keptAssistants = after.slice(10).filter((m) => m.role === "assistant").length;
  const some = compactorAt(calibratedExact * 3, "calibrated");
  const r = countingStringify(() => some.needsCompaction(after));
  assert.equal(r.value, false);
  assert.ok(r.calls > 0 && r.calls < keptAssistants, `${r.calls} of ${keptAssistants} arguments read`);
  some.free();
});

test("a message inserted before, at or after the context start is followed like a fresh compactor sees it", async () => {
  const { transformContext } = await import("agent-compaction");
  const base = withSummary(session(10), 12); // context starts at 12
  for (const at of [0, 5, 11, 12, 13, 20, base.length]) {
    const c = new Compactor({ contextWindow: 200_000 });
    const hooks = c.agentHooks();
    await hooks.transformContext(base);
    const next = withSummary(base, at);
    next.push(user("after"));
    const ctx = await hooks.transformContext(next);
    assert.deepEqual(ctx, transformContext(next), `insert at ${at}`);
    const fresh = new Compactor({ contextWindow: 200_000 });
    assert.equal(c.contextTokens(next), fresh.contextTokens(next), `insert at ${at}`);
    assert.equal(c.needsCompaction(next), fresh.needsCompaction(next));
    c.free();
    fresh.free();
  }
});

test("calibrated: bounds tightened from UTF-8 lengths answer as the measured number, on every kind of text", () => {
  // Large outputs after the last usage (ASCII code, CJK, emoji, escapes in
  // arguments): their bounds from lengths leave the threshold open, their
  // bounds from UTF-8 lengths sometimes settle it, and any answer must be
  // the measured number's.
  const texts = [
    "fn main() {\n    let x = 42;\n}\n".repeat(400),
    "這是一個測試。日本語のテキストです。".repeat(300),
    "😀👍🏽🇫🇷 ok\n".repeat(500),
    "\n".repeat(3000),
    "aAbB.cC\n".repeat(900),
  ];
  const messages = [user("start"), toolTurn(1), ...texts.map((text, i) => ({ ...result(100 + i), content: [{ type: "text", text }] })), toolTurn(2)];
  const outputs = [...messages.slice(0, 2), ...messages.slice(2, 2 + texts.length)];
  const full = new Compactor({ contextWindow: 10_000_000, estimator: "calibrated" });
  const exactNow = full.contextTokens(outputs);
  full.free();
  const usageTokens = 51_010; // toolTurn(1)'s usage
  assert.ok(exactNow > usageTokens + 10_000, `${exactNow}`);
  for (const d of [-5000, -50, -1, 0, 1, 50, 5000, 20_000, 40_000]) {
    const threshold = exactNow + d;
    const c = new Compactor({ contextWindow: threshold + reserveTokens, settings: { reserveTokens }, estimator: "calibrated" });
    assert.equal(c.needsCompaction(outputs), exactNow > threshold, `threshold ${threshold}`);
    assert.equal(c.contextTokens(outputs), exactNow, `threshold ${threshold}`);
    c.free();
  }
});

test("every shape of edit (removals, replacements, reorders, duplicates, cut backs) is followed like a fresh compactor sees it", async () => {
  const { transformContext } = await import("agent-compaction");
  const base = withSummary(session(10), 12); // context starts at 12
  const n = base.length;
  const without = (a, ...at) => a.filter((_, i) => !at.includes(i));
  const edits = {
    "one removed before the context": without(base, 3),
    "one removed in the context": without(base, 15),
    "the summary removed": without(base, 12),
    "several removed": without(base, 2, 14, 16),
    "more removed than one by one": base.filter((_, i) => i % 3 !== 1),
    "a trailing one removed": base.slice(0, n - 1),
    "replaced in the context": base.with(14, user("replaced")),
    "the last replaced": base.with(n - 1, user("final")),
    reordered: [...base.slice(0, 14), base[15], base[14], ...base.slice(16)],
    "a duplicate": [...base.slice(0, 16), base[15], ...base.slice(16)],
    "cut back": base.slice(0, 13),
    emptied: [],
  };
  for (const estimator of ["pi", "calibrated"]) {
    for (const [name, edited] of Object.entries(edits)) {
      const c = new Compactor({ contextWindow: 200_000, estimator });
      const hooks = c.agentHooks();
      await hooks.transformContext(base);
      await hooks.convertToLlm(await hooks.transformContext(base));
      const next = [...edited, user("after")];
      const ctx = await hooks.transformContext(next);
      assert.deepEqual(ctx, transformContext(next), name);
      const fresh = new Compactor({ contextWindow: 200_000, estimator });
      assert.deepEqual(await hooks.convertToLlm(ctx), await fresh.agentHooks().convertToLlm(ctx), name);
      assert.equal(c.contextTokens(next), fresh.contextTokens(next), `${estimator}: ${name}`);
      assert.equal(c.needsCompaction(next), fresh.needsCompaction(next), name);
      // Then a turn as usual.
      next.push(user("next"));
      assert.equal(c.contextTokens(next), fresh.contextTokens(next), `${estimator}: ${name}, next turn`);
      c.free();
      fresh.free();
    }
  }
});

test("a failed attempt, never sent, counts nothing with the calibrated estimate; pi's estimate counts it as pi does", () => {
  const failed = (stopReason, extra = {}) => ({
    role: "assistant",
    content: [{ type: "text", text: "partial " + "lorem ipsum ".repeat(5_000) }],
    api: "openai-completions",
    provider: "local",
    model: "m",
    usage: usage(0, 0),
    stopReason,
    errorMessage: "the provider failed",
    timestamp: clock++,
    ...extra,
  });
  const settings = { reserveTokens: 2_000, keepRecentTokens: 1_000 };
  for (const stop of ["error", "aborted"]) {
    const summary = { role: "compactionSummary", summary: "## Goal\nS", tokensBefore: 90_000, timestamp: clock++ };
    // A pinned failed attempt before the summary, one after it, one with no summary.
    const messages = [user("u0"), failed(stop, { pinned: true }), user("u1")];
    messages.push({ ...summary, timestamp: clock++ }, user("u2"), failed(stop), user("u3"));
    const noSummary = [user("u0"), failed(stop), user("u1")];
    const sent = (list) => list.filter((m) => m.stopReason !== stop);
    for (const list of [messages, noSummary]) {
      const c = new Compactor({ contextWindow: 10_000, settings });
      const fresh = new Compactor({ contextWindow: 10_000, settings });
      assert.equal(c.contextTokens(list), fresh.contextTokens(sent(list)));
      assert.ok(c.contextTokens(list) < 100, `${c.contextTokens(list)}`);
      // The threshold follows: 60,000 characters that are never sent do not trigger it.
      assert.equal(c.needsCompaction(list), false);
      // pi's estimate keeps pi's numbers.
      const pi = new Compactor({ contextWindow: 10_000, settings, estimator: "pi" });
      assert.ok(pi.contextTokens(list) > 10_000);
      assert.equal(pi.needsCompaction(list), true);
      for (const x of [c, fresh, pi]) x.free();
    }
    assert.equal(new Compactor({ contextWindow: 10_000, settings, estimator: "pi" }).contextTokens(noSummary), estimateContextTokens(noSummary).tokens);
  }
});
