// The stall rule through the Compactor's own API: a threshold compaction
// that frees less than 5 % of the context (or fails, or has nothing to do)
// is not asked for again until the context grows 5 % past what it left,
// the window or model changes, or the messages are replaced (an undo);
// `compaction_end` says until when. Overflow and manual compactions are
// never held back.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Compactor } from "agent-compaction";

/** A short summary: what a compaction frees is the old turns' size. */
const shortSummary = () => ({ text: "Short summary." });

/** `turns` small old turns (~100 tokens each by pi's estimate), then one big request of ~`big` tokens. */
function conversation(turns, big = 16_000) {
  let t = 1_000;
  const out = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: "user", content: `question ${i} ` + "q".repeat(200), timestamp: t++ });
    out.push({
      role: "assistant", content: [{ type: "text", text: `answer ${i} ` + "a".repeat(200) }],
      api: "x", provider: "p", model: "m", stopReason: "stop", timestamp: t++,
    });
  }
  out.push({ role: "user", content: "big " + "lorem ipsum ".repeat(big / 3), timestamp: t++ });
  return out;
}
const user = (tokens) => ({ role: "user", content: "more ".repeat((tokens * 4) / 5), timestamp: 9_000 });

function setup(extra = {}) {
  const events = [];
  const compactor = new Compactor({
    contextWindow: 20_000,
    model: "p/m",
    estimator: "pi",
    settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 },
    summarize: shortSummary,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  const ends = () => events.filter((e) => e.type === "compaction_end");
  return { compactor, ends };
}

describe("the stall rule", () => {
  test("a summary that frees under 5 %: quiet until the context grows 5 % past it", async () => {
    const { compactor, ends } = setup();
    const messages = conversation(3);
    assert.equal(compactor.needsCompaction(messages), true);
    const result = await compactor.compact(messages, { reason: "threshold" });
    assert.ok(result.tokensAfter > 0.95 * result.tokensBefore, "freed under 5 %");
    const end = ends().at(-1);
    assert.equal(end.tier, "summarize");
    assert.equal(end.quietUntil, Math.ceil(result.tokensAfter * 1.05));

    let now = result.messages;
    assert.equal(compactor.needsCompaction(now), false, "over the threshold, but quiet");
    assert.equal(compactor.afterRun(now, { overflow: false, retried: false }), "nothing");
    now = [...now, user(400)];
    assert.ok(compactor.contextTokens(now) <= end.quietUntil);
    assert.equal(compactor.needsCompaction(now), false, "grown, but under 5 %");
    now = [...now, user(1_000)];
    assert.ok(compactor.contextTokens(now) > end.quietUntil);
    assert.equal(compactor.needsCompaction(now), true, "grown past 5 %");
    assert.equal(compactor.afterRun(now, { overflow: false, retried: false }), "threshold");
  });

  test("a compaction that frees more holds nothing back", async () => {
    const { compactor, ends } = setup();
    const messages = conversation(30, 14_000);
    const result = await compactor.compact(messages, { reason: "threshold" });
    assert.ok(result.tokensAfter < 0.95 * result.tokensBefore);
    assert.equal("quietUntil" in ends().at(-1), false);
  });

  test("a failed threshold compaction holds at the context it left; an undo or a new window ends the hold", async () => {
    const { compactor, ends } = setup({ summarize: undefined });
    // The extractive summary of one small turn is bigger than the turn.
    const messages = conversation(1);
    await assert.rejects(compactor.compact(messages, { reason: "threshold" }), /would not make the context smaller/);
    const tokens = compactor.contextTokens(messages);
    assert.equal(ends().at(-1).quietUntil, Math.ceil(tokens * 1.05));
    assert.equal(compactor.needsCompaction(messages), false);

    // The same window again changes nothing; another one ends the hold.
    compactor.setContextWindow(20_000);
    assert.equal(compactor.needsCompaction(messages), false);
    compactor.setContextWindow(19_000);
    assert.equal(compactor.contextWindow, 19_000);
    assert.equal(compactor.needsCompaction(messages), true);

    // A held compaction, then the messages replaced by something else.
    await assert.rejects(compactor.compact(messages, { reason: "threshold" }));
    assert.equal(compactor.needsCompaction(messages), false);
    const edited = [...messages.slice(0, -1), { ...messages.at(-1) }];
    assert.equal(compactor.needsCompaction(edited), true, "not the same conversation grown");

    // And a new model.
    await assert.rejects(compactor.compact(edited, { reason: "threshold" }));
    assert.equal(compactor.needsCompaction(edited), false);
    compactor.setModel("p/other");
    assert.equal(compactor.needsCompaction(edited), true);
  });

  test("undoing a stalled summary checks the restored messages again", async () => {
    const { compactor } = setup();
    const messages = conversation(3);
    const result = await compactor.compact(messages, { reason: "threshold" });
    assert.equal(compactor.needsCompaction(result.messages), false);
    assert.equal(compactor.needsCompaction(messages), true);
  });

  test("overflow and manual compactions are never held back, and hold nothing", async () => {
    const { compactor, ends } = setup({ summarize: undefined });
    const messages = conversation(1);
    for (const reason of ["overflow", "manual"]) {
      await assert.rejects(compactor.compact(messages, { reason }), /would not make the context smaller/);
      assert.equal("quietUntil" in ends().at(-1), false);
      assert.equal(compactor.needsCompaction(messages), true);
    }
    await assert.rejects(compactor.compact(messages, { reason: "threshold" }));
    assert.equal(compactor.needsCompaction(messages), false);
    assert.equal(compactor.afterRun(messages, { overflow: true, retried: false }), "overflowRetry", "an overflow is still retried");
  });

  test("an aborted threshold compaction holds nothing", async () => {
    const { compactor, ends } = setup({ summarize: () => new Promise(() => {}) });
    const messages = conversation(3);
    const running = compactor.compact(messages, { reason: "threshold" });
    compactor.abort();
    await assert.rejects(running);
    assert.equal(ends().at(-1).aborted, true);
    assert.equal("quietUntil" in ends().at(-1), false);
    assert.equal(compactor.needsCompaction(messages), true);
  });

  test("setContextWindow: a clear error for a bad window; setModel keeps working", () => {
    const { compactor } = setup();
    assert.throws(() => compactor.setContextWindow(), TypeError);
    assert.throws(() => compactor.setContextWindow("big"), TypeError);
    assert.equal(compactor.contextWindow, 20_000);
    compactor.setModel({ provider: "p", id: "m2", contextWindow: 50_000 });
    assert.equal(compactor.contextWindow, 50_000);
    compactor.setContextWindow(30_000);
    assert.equal(compactor.contextWindow, 30_000);
  });
});
