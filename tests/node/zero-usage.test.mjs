// A provider that reports no usage leaves zeros in pi-ai's assistant
// message: the Compactor estimates such a message instead of believing the
// context is empty; so it does with a usage whose sum is no number (a loop
// by hand that fills only some fields). pi's own functions keep pi's numbers;
// a SessionStore's session record counts as the Compactor does.
import "fake-indexeddb/auto";
import { test } from "node:test";
import assert from "node:assert/strict";
import { Compactor, SessionStore, estimateContextTokens } from "agent-compaction";

const zeros = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

function conversation(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const text = `message ${i}: ` + "words of the conversation ".repeat(9);
    out.push(
      i % 2 === 0
        ? { role: "user", content: text, timestamp: 1000 + i }
        : { role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "local", model: "m", usage: zeros, stopReason: "stop", timestamp: 1000 + i },
    );
  }
  return out;
}

for (const estimator of ["calibrated", "pi"]) {
  test(`${estimator}: zero usage is no usage, 400 messages in an 8,000-token window need compaction`, () => {
    const messages = conversation(400);
    const compactor = new Compactor({ contextWindow: 8000, estimator, settings: { reserveTokens: 1000, keepRecentTokens: 2000 } });
    const tokens = compactor.contextTokens(messages);
    assert.ok(tokens > 15000, `contextTokens ${tokens}`);
    assert.equal(compactor.needsCompaction(messages), true);
    // Turn by turn, as an agent adds them.
    const grown = new Compactor({ contextWindow: 8000, estimator, settings: { reserveTokens: 1000, keepRecentTokens: 2000 } });
    const so_far = [];
    for (const m of messages) {
      so_far.push(m);
      grown.contextTokens(so_far);
    }
    assert.equal(grown.contextTokens(so_far), tokens);
    assert.equal(grown.needsCompaction(so_far), true);
  });
}

test("a real usage after zero ones is still taken", () => {
  const messages = conversation(20);
  messages.push({ ...messages[19], usage: { ...zeros, input: 5000, totalTokens: 5000 }, timestamp: 2000 });
  const compactor = new Compactor({ contextWindow: 200000, estimator: "pi" });
  assert.equal(compactor.contextTokens(messages), 5000);
});

test("pi's estimateContextTokens keeps pi's number", () => {
  const messages = conversation(400);
  const r = estimateContextTokens(messages);
  assert.equal(r.usageTokens, 0);
  assert.equal(r.lastUsageIndex, 399);
});

test("a usage with fields missing and no total (pi's sum is NaN) is estimated: the threshold still comes", () => {
  // A loop by hand that reports what its provider sent: input and output only.
  const partial = (m) => (m.role === "assistant" ? { ...m, usage: { input: 900, output: 40 } } : m);
  const messages = conversation(400).map(partial);
  assert.ok(Number.isNaN(estimateContextTokens(messages).tokens), "pi's number stays NaN");
  for (const estimator of ["calibrated", "pi"]) {
    const compactor = new Compactor({ contextWindow: 8000, estimator, settings: { reserveTokens: 1000, keepRecentTokens: 2000 } });
    const tokens = compactor.contextTokens(messages);
    assert.ok(Number.isFinite(tokens) && tokens > 15000, `${estimator}: contextTokens ${tokens}`);
    assert.equal(compactor.needsCompaction(messages), true);
  }
  // With a total, the total counts, as in pi.
  const totalled = conversation(20).map((m) => (m.role === "assistant" ? { ...m, usage: { output: 40, totalTokens: 3000 } } : m));
  assert.equal(new Compactor({ contextWindow: 200000, estimator: "pi" }).contextTokens(totalled), estimateContextTokens(totalled).tokens);
});

test("a session saved with zero or partial usage lists the Compactor's count, not 0 or NaN", async () => {
  const store = await SessionStore.open({ name: "zero-usage" });
  const partial = (m) => (m.role === "assistant" ? { ...m, usage: { input: 900, output: 40 } } : m);
  for (const messages of [conversation(40), conversation(40).map(partial)]) {
    const expected = new Compactor({ contextWindow: 200000, estimator: "pi" }).contextTokens(messages);
    assert.ok(expected > 1000);
    const { id } = await store.createSession();
    assert.equal((await store.save(id, messages)).contextTokens, expected);
    assert.equal((await store.list()).find((s) => s.id === id).contextTokens, expected);
  }
  store.close();
});
