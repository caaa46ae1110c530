// How the usage real providers report becomes the Compactor's context
// tokens: a reasoning model's output counts reasoning it is never sent
// again (OpenAI's completion_tokens, the AI SDK's outputTokens), so a reply
// far below the one before in total is still a real count; pi-ai's OpenAI
// client over HTTP to the mock server, and the AI SDK's usage mapped with
// usageFromAiSdk. A usage no context can have (below zero) is no usage.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent } from "@mariozechner/pi-agent-core";
import { Compactor, estimateContextTokens } from "agent-compaction";
import { usageFromAiSdk } from "agent-compaction/ai-sdk";
import { useMockLlm } from "../support/mock-llm-server.mjs";

const mock = useMockLlm();

/** OpenAI's usage of a reply that read `prompt` tokens and reasoned for `reasoning` of its `completion`. */
const openAiUsage = (prompt, completion, reasoning) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  prompt_tokens_details: { cached_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: reasoning },
});

for (const estimator of ["calibrated", "pi"]) {
  test(`${estimator}: a reasoning model's long first answer does not hide the turns after it (attach, pi-ai over HTTP)`, async () => {
    const events = [];
    const compactor = new Compactor({ contextWindow: 30_000, estimator, settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 }, onEvent: (e) => events.push(e) });
    const agent = new Agent({
      initialState: { model: mock.model({ id: "m", contextWindow: 30_000, reasoning: true }), systemPrompt: "terse", messages: [] },
      getApiKey: () => "local",
    });
    compactor.attach(agent);
    let turn = 0;
    // The first answer reasons for 9,000 tokens; then 60 a turn.
    mock.setMode(() => {
      turn++;
      return { text: `answer ${turn}`, usage: openAiUsage(1_000 * turn + 500, turn === 1 ? 9_040 : 100, turn === 1 ? 9_000 : 60) };
    });
    for (let i = 0; i < 3; i++) {
      await agent.prompt(`question ${i} ` + "lorem ipsum ".repeat(200));
      await agent.waitForIdle();
    }
    const messages = agent.state.messages;
    assert.equal(messages.at(-1).usage.totalTokens, 3_600);
    // The last reply's usage counts, as in pi.
    assert.equal(compactor.contextTokens(messages), 3_600);
    assert.equal(compactor.contextTokens(messages), estimateContextTokens(messages).tokens);
    assert.equal(new Compactor({ contextWindow: 30_000, estimator, settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 } }).contextTokens(messages), 3_600);
    assert.deepEqual(events.filter((e) => e.type === "compaction_start"), []);
  });
}

test("the AI SDK's usage of a reasoning model (OpenAI Responses) counts turn by turn", () => {
  // ai 7's LanguageModelUsage as @ai-sdk/openai reports the Responses API:
  // the output counts its reasoning.
  const sdk = (input, cached, output, reasoning) => ({
    inputTokens: input,
    inputTokenDetails: { noCacheTokens: input - cached, cacheReadTokens: cached, cacheWriteTokens: undefined },
    outputTokens: output,
    outputTokenDetails: { textTokens: output - reasoning, reasoningTokens: reasoning },
    totalTokens: input + output,
  });
  const reply = (text, usage) => ({ role: "assistant", content: [{ type: "text", text }], api: "openai-responses", provider: "openai", model: "o3", usage: usageFromAiSdk(usage), stopReason: "stop", timestamp: 1 });
  const messages = [
    { role: "user", content: "question 1", timestamp: 1 },
    reply("answer 1", sdk(12_000, 0, 30_000, 29_990)),
    { role: "user", content: "question 2", timestamp: 1 },
    reply("answer 2", sdk(12_020, 12_000, 500, 490)),
  ];
  assert.deepEqual({ ...messages[3].usage, cost: undefined }, { input: 20, output: 500, cacheRead: 12_000, cacheWrite: 0, totalTokens: 12_520, cost: undefined });
  for (const estimator of ["calibrated", "pi"]) {
    assert.equal(new Compactor({ contextWindow: 200_000, estimator }).contextTokens(messages), 12_520, estimator);
  }
});

test("a usage below zero is no usage: the messages are estimated", () => {
  const big = "word ".repeat(8_000);
  for (const usage of [
    { input: -5_000, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: -4_990 },
    { input: 5_000, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: -1 },
  ]) {
    const messages = [
      { role: "user", content: big, timestamp: 1 },
      { role: "assistant", content: [{ type: "text", text: "ok" }], api: "openai-responses", provider: "p", model: "m", usage, stopReason: "stop", timestamp: 2 },
    ];
    const compactor = new Compactor({ contextWindow: 8_000, estimator: "pi", settings: { reserveTokens: 1_000, keepRecentTokens: 2_000 } });
    assert.equal(compactor.contextTokens(messages), 10_001, JSON.stringify(usage));
    assert.equal(compactor.needsCompaction(messages), true);
    // pi's own function keeps pi's number.
    assert.equal(estimateContextTokens(messages).tokens, usage.totalTokens);
  }
});

test("a compaction's tokensAfter is on the same scale whether the model reasoned or not", async () => {
  // The same 30 turns, the provider reading 1.0 × pi's estimate over a
  // 1,500-token system prompt; once with every fifth answer reasoning for
  // 12,000 tokens (counted in its output, never sent again).
  const session = (reasoning) => {
    const out = [];
    let read = 1_500;
    for (let i = 0; i < 30; i++) {
      const question = `question ${i} ` + "lorem ipsum dolor sit amet ".repeat(60);
      out.push({ role: "user", content: question, timestamp: 1 });
      read += Math.ceil(question.length / 4);
      const text = `answer ${i} ` + "consectetur adipiscing elit ".repeat(40);
      const written = Math.ceil(text.length / 4) + (reasoning && i % 5 === 0 ? 12_000 : 0);
      const usage = { input: read, output: written, cacheRead: 0, cacheWrite: 0, totalTokens: read + written, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
      out.push({ role: "assistant", content: [{ type: "text", text }], api: "openai-responses", provider: "openai", model: "o3", usage, stopReason: "stop", timestamp: 1 });
      read += Math.ceil(text.length / 4);
    }
    return out;
  };
  const compacted = async (messages) => {
    const compactor = new Compactor({ contextWindow: 32_000, settings: { reserveTokens: 4_000, keepRecentTokens: 6_000 } });
    const out = await compactor.compact(messages, { reason: "threshold" });
    assert.equal(compactor.contextTokens(out.messages), out.tokensAfter);
    return out.tokensAfter;
  };
  assert.equal(await compacted(session(true)), await compacted(session(false)));
});
