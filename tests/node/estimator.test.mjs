// The calibrated token estimate against a real tokenizer: for every class of
// the generated corpus (tests/node/estimator-corpus.mjs), the Compactor's
// estimate (estimator: "calibrated", read through contextTokens on a single
// user message, no reported usage) is within ±15 % of o200k_base's count
// (gpt-tokenizer, a devDependency used only here and in the benchmark).
// Also: the option is validated, "pi" keeps pi's chars/4 (the default for
// now), and the calibrated estimate corrects itself by the usage the
// provider reports (learned when a compaction measures the context: a
// provider counting 2× keeps less and compacts again sooner than one counting
// 1×; the system prompt in the reported numbers does not count as such).
import { test } from "node:test";
import assert from "node:assert/strict";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { Compactor, estimateTokens } from "agent-compaction";
import { buildCorpus } from "./estimator-corpus.mjs";

const user = (content) => ({ role: "user", content, timestamp: 1 });

function estimate(estimator, text) {
  const c = new Compactor({ contextWindow: 10_000_000, estimator });
  try {
    return c.contextTokens([user(text)]);
  } finally {
    c.free();
  }
}

for (const seed of [15, 2026]) {
  const corpus = buildCorpus({ seed });
  for (const [name, texts] of Object.entries(corpus)) {
    test(`calibrated estimate within ±15 % of o200k: ${name} (seed ${seed})`, () => {
      let real = 0;
      let est = 0;
      for (const t of texts) {
        real += o200k(t);
        est += estimate("calibrated", t);
      }
      const ratio = real / est;
      assert.ok(ratio >= 0.85 && ratio <= 1.15, `${name}: o200k ${real} ÷ estimate ${est} = ${ratio.toFixed(3)}`);
    });
  }
}

test('estimator "pi" is chars / 4, like estimateTokens; "calibrated" is the default', () => {
  const text = "你好".repeat(100);
  assert.equal(estimate("pi", text), 50);
  assert.equal(estimate("pi", text), estimateTokens(user(text)));
  // The calibrated one, the default, counts CJK far above chars / 4.
  assert.ok(estimate("calibrated", text) > 100);
  assert.equal(estimate(undefined, text), estimate("calibrated", text));
});

// A session whose provider counts `factor` × the calibrated estimate: four
// user/assistant steps of ~1,500 estimated tokens, a system prompt the
// estimates never see, and every session ends on the same reported usage
// (20,000) so that only how the provider's numbers grew differs.
const words = (n, salt) => Array.from({ length: n }, (_, i) => `step${salt} word${i % 97} value`).join(" ");
function session(factor, estimator) {
  const probe = new Compactor({ contextWindow: 10_000_000, estimator: "calibrated" });
  const steps = [];
  for (let k = 0; k < 4; k++) {
    const u = user(words(400, k));
    const a = { role: "assistant", content: [{ type: "text", text: `done ${k}` }], stopReason: "stop" };
    steps.push([u, a, probe.contextTokens([u]) + probe.contextTokens([{ ...a, timestamp: 1 }])]);
  }
  probe.free();
  let reported = 20_000;
  const usages = [];
  for (let k = 3; k >= 0; k--) {
    usages[k] = reported;
    reported -= factor * steps[k][2];
  }
  assert.ok(reported > 0, "the system prompt is in every reported number");
  const messages = [];
  steps.forEach(([u, a], k) => {
    messages.push({ ...u, timestamp: 2 * k + 1 });
    const usage = { input: usages[k], output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: usages[k] };
    messages.push({ ...a, usage, timestamp: 2 * k + 2 });
  });
  const settings = { reserveTokens: 1000, keepRecentTokens: 3000 };
  return { messages, compactor: new Compactor({ contextWindow: 40_000, settings, estimator }) };
}

/** How many trailing user messages it takes until needsCompaction. */
function messagesUntilCompaction({ messages, compactor }) {
  for (let n = 1; n <= 100; n++) {
    messages.push(user(words(400, 100 + n)));
    messages.at(-1).timestamp = 100 + n;
    if (compactor.needsCompaction(messages)) return n;
  }
  return Infinity;
}

test("the calibrated estimate learns the provider's ratio when it compacts, and scales what follows the last usage by it", async () => {
  const probe = new Compactor({ contextWindow: 10_000_000, estimator: "calibrated" });
  const estimates = (messages) => messages.reduce((t, m) => t + probe.contextTokens([m]), 0);
  const runs = [];
  for (const factor of [1, 2]) {
    const s = session(factor, "calibrated");
    s.messages.push(user(words(400, 50)), user(words(400, 51)));
    s.messages.at(-2).timestamp = 50;
    s.messages.at(-1).timestamp = 51;
    // Not learned before the context is measured: the same numbers.
    const before = s.compactor.contextTokenEstimate(s.messages);
    assert.equal(before.usageTokens, 20_000);
    assert.equal(before.trailingTokens, estimates(s.messages.slice(8)));
    const r = await s.compactor.compact(s.messages);
    const kept = s.messages.length - r.firstKeptIndex;
    s.messages = [...r.messages];
    // After the summary every estimate counts, scaled by the ratio learned.
    const after = s.compactor.contextTokenEstimate(s.messages);
    const context = s.messages.slice(r.firstKeptIndex);
    assert.equal(context[0].role, "compactionSummary");
    assert.ok(Math.abs(after.tokens - factor * estimates(context)) <= 1, `${factor}×: ${after.tokens} vs ${factor} × ${estimates(context)}`);
    runs.push({ kept, until: messagesUntilCompaction(s) });
    s.compactor.free();
  }
  probe.free();
  const [one, two] = runs;
  // What is kept is measured in the provider's tokens: less of it at 2×.
  assert.ok(two.kept >= 1 && two.kept < one.kept, `messages kept: 1× ${one.kept}, 2× ${two.kept}`);
  // And the session reporting 2× reaches the threshold again sooner.
  assert.ok(one.until < 100 && two.until < one.until, `messages until the next compaction: 1× ${one.until}, 2× ${two.until}`);
});

test('estimator "pi" is not corrected: after a compaction both providers keep as much, and compact again at the same message', async () => {
  const runs = [];
  for (const factor of [1, 2]) {
    const s = session(factor, "pi");
    s.messages.push(user(words(400, 50)), user(words(400, 51)));
    const r = await s.compactor.compact(s.messages);
    s.messages = [...r.messages];
    runs.push([r.firstKeptIndex, messagesUntilCompaction(s)]);
    s.compactor.free();
  }
  assert.deepEqual(runs[0], runs[1]);
  assert.ok(runs[0][1] < 100);
});

test("a bad estimator option is a TypeError naming it", () => {
  for (const estimator of ["o200k", 4, null, {}]) {
    assert.throws(
      () => new Compactor({ contextWindow: 1000, estimator }),
      (e) => e instanceof TypeError && /estimator/.test(e.message),
      String(estimator),
    );
  }
});
