// The calibrated token estimate against a real tokenizer: for every class of
// the generated corpus (tests/node/estimator-corpus.mjs), the Compactor's
// estimate (estimator: "calibrated", read through contextTokens on a single
// user message, no reported usage) is within ±15 % of o200k_base's count
// (gpt-tokenizer, a devDependency used only here and in the benchmark).
// Also: the option is validated, and "pi" keeps pi's chars/4.
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

test('estimator "pi" is chars / 4, like estimateTokens', () => {
  const text = "你好".repeat(100);
  assert.equal(estimate("pi", text), 50);
  assert.equal(estimate("pi", text), estimateTokens(user(text)));
  // The calibrated one counts CJK far above chars / 4; the default is pi's
  // for now.
  assert.ok(estimate("calibrated", text) > 100);
  assert.equal(estimate(undefined, text), 50);
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
