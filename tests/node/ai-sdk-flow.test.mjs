// agent-compaction/ai-sdk, flows: the real AI SDK (`ai` 7) driving the
// conversation. Over HTTP: @ai-sdk/openai-compatible against the local
// model of the demo (scripts/local-model.mjs: real fetch, streaming, the
// provider's real overflow error body). Deterministic step sequences:
// the SDK's own MockLanguageModelV3, answering from the prompt it is sent
// (its size decides an overflow, as a provider's window does).
import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { APICallError, ToolLoopAgent, experimental_createSteering, generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { Compactor, isContextOverflow, removeLastCompaction, transformContext } from "agent-compaction";
import {
  OVERFLOW_RECOVERY_FAILED,
  PROVIDER_OPTIONS_KEY,
  aiSdkConversation,
  aiSdkSummarizer,
  fromUIMessages,
  isOverflowError,
  toModelMessages,
  toUIMessages,
} from "agent-compaction/ai-sdk";
import { startServer } from "../../scripts/serve.mjs";
import { createLocalModel } from "../../scripts/local-model.mjs";

const SUMMARY_PREFIX = "The conversation history before this point was compacted";
const OPENAI_OVERFLOW = (n, m) =>
  `This model's maximum context length is ${n} tokens. However, your messages resulted in ${m} tokens. Please reduce the length of the messages.`;

/** Tokens of a prompt the way the mock provider counts them (chars / 4). */
const promptTokens = (prompt) => Math.ceil(JSON.stringify(prompt).length / 4);
const promptText = (prompt) => JSON.stringify(prompt);
const usage = (input, output = 10) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});
const overflowError = (window, tokens) =>
  new APICallError({
    message: OPENAI_OVERFLOW(window, tokens),
    url: "https://mock.invalid/v1/chat/completions",
    requestBodyValues: {},
    statusCode: 400,
    responseBody: JSON.stringify({ error: { message: OPENAI_OVERFLOW(window, tokens), code: "context_length_exceeded" } }),
    isRetryable: false,
  });

/**
 * A mock chat model with a context window: a prompt over it is the
 * provider's overflow error; otherwise `answer(prompt, callIndex)` decides
 * (a tool call or text). Every prompt is recorded with its size.
 */
function windowedModel({ window, answer, forceOverflow = () => false }) {
  const calls = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt, tools }) => {
      const tokens = promptTokens(prompt);
      const i = calls.length;
      calls.push({ prompt, tokens, tools });
      if (tokens > window || forceOverflow(i)) throw overflowError(window, Math.max(tokens, window + 1));
      const a = answer(prompt, i);
      const content = a.toolCall
        ? [{ type: "tool-call", toolCallId: `call-${i}`, toolName: a.toolCall.name, input: JSON.stringify(a.toolCall.input) }]
        : [{ type: "text", text: a.text }];
      return {
        content,
        finishReason: { unified: a.toolCall ? "tool-calls" : "stop", raw: undefined },
        usage: usage(tokens),
        warnings: [],
      };
    },
  });
  return { model, calls };
}

/** A summary model: records what it was asked to summarize. */
function summaryModel() {
  const prompts = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt);
      return {
        content: [{ type: "text", text: `## Goal\nKeep working (summary ${prompts.length}).` }],
        finishReason: { unified: "stop", raw: undefined },
        usage: usage(100, 20),
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

const workTool = (sizeOf = () => 1600) =>
  tool({
    description: "Does a unit of work and reports it",
    inputSchema: jsonSchema({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }),
    execute: async ({ n }) => `RESULT-${n}: ` + "w".repeat(sizeOf(n)),
  });

/** A conversation with some history to compact. */
function history(turns) {
  const out = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: "user", content: `older question ${i} ` + "q".repeat(1200), timestamp: 1000 + i });
    out.push({
      role: "assistant",
      content: [{ type: "text", text: `older answer ${i} ` + "a".repeat(1200) }],
      api: "ai-sdk", provider: "mock", model: "m", stopReason: "stop", timestamp: 1000 + i,
    });
  }
  return out;
}

/**
 * `turns` finished turns, each reading a file whose output (12,000
 * characters, ~3,000 tokens by pi's estimate) is old tool output to clear.
 */
function oldToolTurns(turns) {
  const flat = [];
  let clock = 1000;
  for (let i = 0; i < turns; i++) {
    flat.push({ role: "user", content: `question ${i}`, timestamp: clock++ });
    flat.push({
      role: "assistant",
      content: [{ type: "toolCall", id: `old_${i}`, name: "read", arguments: { path: `/f${i}` } }],
      api: "ai-sdk", provider: "mock", model: "m", stopReason: "toolUse", timestamp: clock++,
    });
    flat.push({
      role: "toolResult", toolCallId: `old_${i}`, toolName: "read",
      content: [{ type: "text", text: `OUTPUT-${i}: ` + "o".repeat(12_000) }], isError: false, timestamp: clock++,
    });
    flat.push({ role: "assistant", content: [{ type: "text", text: `answer ${i}` }], api: "ai-sdk", provider: "mock", model: "m", stopReason: "stop", timestamp: clock++ });
  }
  return flat;
}

describe("MockLanguageModelV3: deterministic step sequences", () => {
  test("threshold between steps: compacts inside the tool loop, and the compaction persists into later steps", async () => {
    const window = 6000;
    const { model, calls } = windowedModel({
      window,
      answer: (prompt, i) => (i < 8 ? { toolCall: { name: "work", input: { n: i } } } : { text: "all done" }),
    });
    const sum = summaryModel();
    const compactor = new Compactor({ contextWindow: window, settings: { reserveTokens: 1500, keepRecentTokens: 1500 }, summarize: aiSdkSummarizer(sum.model) });
    const conv = aiSdkConversation({ compactor });
    await conv.append({ role: "user", content: "do the work" });
    const result = await conv.run((args) => generateText({ model, tools: { work: workTool(() => 3000) }, stopWhen: stepCountIs(20), ...args }));
    assert.equal(result.text, "all done");
    const flat = conv.messages;
    const summaries = flat.filter((m) => m.role === "compactionSummary");
    assert.ok(summaries.length >= 1, "compacted between steps");
    assert.equal(sum.prompts.length, summaries.length, "one summarizer call per compaction");
    // Every step after the first compaction starts with the latest summary.
    const firstWithSummary = calls.findIndex((c) => promptText(c.prompt).includes(SUMMARY_PREFIX));
    assert.ok(firstWithSummary > 0);
    for (const c of calls.slice(firstWithSummary)) assert.match(promptText(c.prompt[0]), /compacted into the following summary/);
    assert.ok(calls.every((c) => c.tokens <= window), "never over the window");
    // Nothing was deleted: every tool result is still in the flat array.
    const results = flat.filter((m) => m.role === "toolResult").map((m) => m.content[0].text.split(":")[0]);
    assert.deepEqual(results, [0, 1, 2, 3, 4, 5, 6, 7].map((n) => `RESULT-${n}`));
    assert.equal(flat.at(-1).role, "assistant");
    assert.equal(flat.at(-1).content[0].text, "all done");
    // Usage of each step is on its assistant message (the compactor reads it).
    assert.ok(flat.filter((m) => m.role === "assistant").every((m) => m.usage.input > 0 || m.timestamp < 2000));
  });

  test("threshold: old tool output cleared (no summary), and the model is sent the core's placeholders", async () => {
    const window = 20_000;
    const flat = oldToolTurns(6);
    const { model, calls } = windowedModel({ window, answer: () => ({ text: "done" }) });
    const sum = summaryModel();
    const compactor = new Compactor({
      contextWindow: window,
      estimator: "pi",
      settings: { reserveTokens: 4000, keepRecentTokens: 3000, toolOutputClearing: { protectTokens: 1000, minFreedTokens: 1000 } },
      summarize: aiSdkSummarizer(sum.model),
    });
    const conv = aiSdkConversation({ compactor, messages: flat });
    await conv.append({ role: "user", content: "new question" });
    const result = await conv.run((args) => generateText({ model, ...args }));
    assert.equal(result.text, "done");
    assert.equal(sum.prompts.length, 0, "no summarizer call: clearing was enough");
    const markers = conv.messages.filter((m) => m.role === "toolOutputCleared");
    assert.equal(markers.length, 1);
    assert.equal(calls.length, 1);
    const sent = promptText(calls[0].prompt);
    assert.match(sent, /\[Output of read cleared to save context: ~3,0\d\d tokens\]/, "the placeholder is sent");
    assert.ok(!sent.includes("OUTPUT-0: ooo"), "the cleared output is not");
    assert.ok(sent.includes("OUTPUT-5: ooo"), "the last turns' output is");
    assert.ok(calls[0].tokens < 16_000, `what was sent fits under the threshold: ${calls[0].tokens}`);
    // Nothing was deleted from the flat array.
    assert.equal(conv.messages.filter((m) => m.role === "toolResult").length, 6);
  });

  test("a clearing in the background that ends while a step's request is out goes in before the next step, after that step's answer: no summary follows", async () => {
    const window = 20_000;
    const flat = oldToolTurns(3);
    // Four steps of 6,000-character tool output: past backgroundAt (0.8 of
    // the 16,000 threshold) at the third step, a clearing starts in the
    // background and ends while that step's request is out.
    const { model, calls } = windowedModel({
      window,
      answer: (_, i) => (i < 4 ? { toolCall: { name: "work", input: { n: i } } } : { text: "done" }),
    });
    const sum = summaryModel();
    const events = [];
    const compactor = new Compactor({
      contextWindow: window,
      estimator: "pi",
      settings: { reserveTokens: 4000, keepRecentTokens: 3000, toolOutputClearing: { protectTokens: 1000, minFreedTokens: 1000, protectTurns: 1 } },
      summarize: aiSdkSummarizer(sum.model),
      onEvent: (e) => events.push(e),
    });
    const conv = aiSdkConversation({ compactor, messages: flat });
    await conv.append({ role: "user", content: "new question" });
    const result = await conv.run((args) => generateText({ model, tools: { work: workTool(() => 6000) }, stopWhen: stepCountIs(10), ...args }));
    assert.equal(result.text, "done");
    const ends = events.filter((e) => e.type === "compaction_end");
    assert.deepEqual(ends.map((e) => e.tier), ["clear"], "one compaction: the clearing");
    assert.equal(sum.prompts.length, 0, "no summarizer call");
    const at = conv.messages.findIndex((m) => m.role === "toolOutputCleared");
    assert.ok(at > 0);
    // Each answer after the marker was sent the placeholders; each before it was not.
    const withPlaceholders = new Set(calls.filter((c) => promptText(c.prompt).includes("cleared to save context")).map((c) => c.tokens));
    conv.messages.forEach((m, i) => {
      if (m.role !== "assistant" || !m.usage || i < 12) return;
      assert.equal(withPlaceholders.has(m.usage.input), i > at, `messages[${i}] (marker at ${at})`);
    });
    assert.ok(compactor.contextTokens(conv.messages) < calls.at(-1).tokens + 100);
  });

  test("overflow: compact, retry exactly once, the retry starts with the summary", async () => {
    const window = 8000;
    const { model, calls } = windowedModel({ window, answer: () => ({ text: "answered" }), forceOverflow: (i) => i === 0 });
    const events = [];
    const compactor = new Compactor({
      contextWindow: window,
      settings: { reserveTokens: 1000, keepRecentTokens: 1000 },
      summarize: aiSdkSummarizer(summaryModel().model),
      onEvent: (e) => events.push(e),
    });
    const conv = aiSdkConversation({ compactor, messages: history(6) });
    await conv.append({ role: "user", content: "next question" });
    const result = await conv.run((args) => generateText({ model, maxRetries: 0, ...args }));
    assert.equal(result.text, "answered");
    assert.equal(calls.length, 2, "one failed attempt, one retry");
    assert.match(promptText(calls[1].prompt[0]), /compacted into the following summary/);
    const ends = events.filter((e) => e.type === "compaction_end");
    assert.deepEqual(ends.map((e) => [e.reason, e.willRetry, !!e.result]), [["overflow", true, true]]);
    assert.equal(conv.messages.filter((m) => m.role === "compactionSummary").length, 1);
    assert.equal(conv.messages.at(-1).content[0].text, "answered");
  });

  test("a smaller window (setContextWindow): the next run is checked against it and compacted before its first call", async () => {
    const events = [];
    const compactor = new Compactor({
      contextWindow: 20_000,
      settings: { reserveTokens: 1000, keepRecentTokens: 1000 },
      summarize: aiSdkSummarizer(summaryModel().model),
      onEvent: (e) => events.push(e),
    });
    const conv = aiSdkConversation({ compactor, messages: history(8) });
    await conv.append({ role: "user", content: "next question" });
    assert.equal(compactor.needsCompaction(conv.messages), false, "under the 20,000 window's threshold");
    const window = 4000;
    assert.ok(promptTokens(conv.modelMessages()) > window, "the context would not fit the new window");
    conv.compactor.setContextWindow(window);
    const { model, calls } = windowedModel({ window, answer: () => ({ text: "answered" }) });
    const result = await conv.run((args) => generateText({ model, maxRetries: 0, ...args }));
    assert.equal(result.text, "answered");
    assert.equal(calls.length, 1, "no overflow, no retry");
    assert.match(promptText(calls[0].prompt[0]), /compacted into the following summary/);
    const ends = events.filter((e) => e.type === "compaction_end");
    assert.deepEqual(ends.map((e) => [e.reason, !!e.result]), [["threshold", true]]);
  });

  test("repeated overflow is bounded: two attempts, one compaction, then pi's recovery-failed text", async () => {
    const window = 8000;
    const { model, calls } = windowedModel({ window, answer: () => ({ text: "never" }), forceOverflow: () => true });
    const events = [];
    const compactor = new Compactor({
      contextWindow: window,
      settings: { reserveTokens: 1000, keepRecentTokens: 1000 },
      summarize: aiSdkSummarizer(summaryModel().model),
      onEvent: (e) => events.push(e),
    });
    const conv = aiSdkConversation({ compactor, messages: history(6) });
    await conv.append({ role: "user", content: "next question" });
    const before = conv.messages.length;
    await assert.rejects(
      conv.run((args) => generateText({ model, maxRetries: 0, ...args })),
      (e) => e.message === OVERFLOW_RECOVERY_FAILED && APICallError.isInstance(e.cause),
    );
    assert.equal(calls.length, 2);
    assert.equal(events.filter((e) => e.type === "compaction_start").length, 1);
    assert.equal(conv.messages.length, before + 1, "only the summary was added");
  });

  test("ToolLoopAgent: prepareStep given at construction; compacts between steps and recovers an overflow once", async () => {
    const window = 6000;
    let overflowAt = 5;
    const { model, calls } = windowedModel({
      window,
      answer: (prompt, i) => (i < 8 ? { toolCall: { name: "work", input: { n: i } } } : { text: "agent done" }),
      forceOverflow: (i) => i === overflowAt,
    });
    const events = [];
    const compactor = new Compactor({
      contextWindow: window,
      settings: { reserveTokens: 1500, keepRecentTokens: 1500 },
      summarize: aiSdkSummarizer(summaryModel().model),
      onEvent: (e) => events.push(e),
    });
    const conv = aiSdkConversation({ compactor });
    const agent = new ToolLoopAgent({ model, tools: { work: workTool(() => 2500) }, stopWhen: stepCountIs(20), prepareStep: conv.prepareStep });
    await conv.append({ role: "user", content: "agent task" });
    const result = await conv.run(({ messages }) => agent.generate({ messages }));
    assert.equal(result.text, "agent done");
    const reasons = events.filter((e) => e.type === "compaction_end" && e.result).map((e) => e.reason);
    assert.ok(reasons.includes("overflow"), `an overflow compaction (${reasons})`);
    // The steps before the overflow stayed in the flat array; the retry went on from them.
    const results = conv.messages.filter((m) => m.role === "toolResult").map((m) => m.content[0].text.split(":")[0]);
    assert.equal(new Set(results).size, results.length, "no step recorded twice");
    assert.ok(calls.every((c) => c.tokens <= window));
    overflowAt = -1;
  });

  test("the recovery-failed text is pi 0.73.1's own", async () => {
    const { readFile } = await import("node:fs/promises");
    const source = await readFile(new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/agent-session.js", import.meta.url), "utf8");
    assert.ok(source.includes(OVERFLOW_RECOVERY_FAILED), "agent-session.js holds the same text");
  });

  test("modelMessages stays the full conversion as steps append tool groups, with system messages sent as instructions", async () => {
    const compactor = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 1000, keepRecentTokens: 1000 } });
    const conv = aiSdkConversation({ compactor });
    await conv.append([{ role: "system", content: "be brief" }, { role: "user", content: "go" }]);
    const steps = [];
    for (let i = 0; i < 6; i++) {
      const r = await conv.prepareStep({ stepNumber: i, steps });
      const full = toModelMessages(transformContext(conv.messages)).filter((m) => m.role !== "system");
      assert.deepStrictEqual(r.messages, full);
      assert.deepStrictEqual(r.instructions, [{ role: "system", content: "be brief" }]);
      steps.push({
        response: {
          messages: [
            { role: "assistant", content: [{ type: "tool-call", toolCallId: `a${i}`, toolName: "t", input: {} }, { type: "tool-call", toolCallId: `b${i}`, toolName: "t", input: {} }] },
            {
              role: "tool",
              content: [
                { type: "tool-result", toolCallId: `a${i}`, toolName: "t", output: { type: "json", value: { i } } },
                { type: "tool-result", toolCallId: `b${i}`, toolName: "t", output: { type: "text", value: `b${i}` } },
              ],
            },
          ],
        },
      });
    }
    await conv.appendSteps(steps);
    const sent = conv.modelMessages();
    assert.equal(sent.filter((m) => m.role === "tool").length, 6, "each step's two results stay one tool message");
    assert.deepStrictEqual(sent, toModelMessages(transformContext(conv.messages)).filter((m) => m.role !== "system"));
  });

  test("each step sends a fresh compactor's view, converted, through cleared outputs and summaries; a caller's changes to a returned array change nothing", async () => {
    const tiers = [];
    const compactor = new Compactor({
      contextWindow: 16_000,
      estimator: "pi",
      settings: { reserveTokens: 4000, keepRecentTokens: 3000, toolOutputClearing: { protectTokens: 1000, minFreedTokens: 1000, protectTurns: 1 } },
      onEvent: (e) => e.type === "compaction_end" && e.result && tiers.push(e.result.tier ?? "summarize"),
    });
    const conv = aiSdkConversation({ compactor });
    await conv.append({ role: "system", content: "be brief" });
    // What a compactor that never saw this conversation sends: its view made whole.
    const fresh = () => toModelMessages(new Compactor({ contextWindow: 200_000 }).modelContext(conv.messages)).filter((m) => m.role !== "system");
    let n = 0;
    for (let turn = 0; turn < 14; turn++) {
      await conv.append({ role: "user", content: `question ${turn} ` + "q".repeat(3000) });
      const steps = [];
      for (let k = 0; k < 3; k++) {
        const r = await conv.prepareStep({ stepNumber: k, steps });
        assert.deepStrictEqual(r.messages, fresh(), `turn ${turn}, step ${k}`);
        r.messages.reverse();
        r.messages.push({ role: "user", content: "junk" });
        const again = conv.modelMessages();
        assert.deepStrictEqual(again, fresh(), `turn ${turn}, step ${k}, asked again`);
        again.length = 0;
        const id = `c${turn}_${k}`;
        const output = { type: "text", value: `OUT-${n++} ` + "o".repeat(6000) };
        const messages =
          k < 2
            ? [
                { role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read", input: { n } }] },
                { role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "read", output }] },
              ]
            : [{ role: "assistant", content: [{ type: "text", text: `answer ${turn}` }] }];
        steps.push({ response: { messages } });
      }
      await conv.appendSteps(steps);
      assert.deepStrictEqual(conv.modelMessages(), fresh(), `after turn ${turn}`);
    }
    assert.ok(tiers.includes("clear") && tiers.includes("summarize"), `both tiers ran: ${tiers}`);
    assert.ok(conv.messages.some((m) => m.role === "toolOutputCleared"));
  });

  test("useChat storage: UI messages (text, reasoning, tool parts, a divider) -> flat messages -> the same UI view", async () => {
    const ui = [
      { id: "u1", role: "user", parts: [{ type: "text", text: "read a.rs" }] },
      {
        id: "a1",
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "reasoning", text: "need the file", state: "done" },
          { type: "tool-read_file", toolCallId: "c1", state: "output-available", input: { path: "a.rs" }, output: "fn a() {}" },
          { type: "step-start" },
          { type: "text", text: "It defines a.", state: "done" },
        ],
      },
      { id: "compaction-1", role: "assistant", parts: [{ type: "data-compaction", data: { tokensBefore: 10, timestamp: 1 } }] },
      { id: "u2", role: "user", parts: [{ type: "text", text: "thanks" }] },
    ];
    const flat = await fromUIMessages(ui);
    assert.deepEqual(flat.map((m) => m.role), ["user", "assistant", "toolResult", "assistant", "user"]);
    assert.deepEqual(flat[1].content.map((c) => c.type), ["thinking", "toolCall"]);
    assert.equal(flat[2].content[0].text, "fn a() {}");
    const back = toUIMessages(flat);
    assert.deepEqual(back.map((m) => m.id), ["u1", "a1", "u2"]);
    const parts = back[1].parts.filter((p) => p.type !== "step-start");
    assert.deepEqual(parts, [
      { type: "reasoning", text: "need the file", state: "done" },
      { type: "tool-read_file", toolCallId: "c1", state: "output-available", input: { path: "a.rs" }, output: "fn a() {}" },
      { type: "text", text: "It defines a.", state: "done" },
    ]);
  });

  test("manual compaction and undo: compact() then setMessages(removeLastCompaction(...)); what is sent follows", async () => {
    const { model, calls } = windowedModel({ window: 100_000, answer: () => ({ text: "ok" }) });
    const compactor = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 1000, keepRecentTokens: 1000 }, summarize: aiSdkSummarizer(summaryModel().model) });
    const conv = aiSdkConversation({ compactor, messages: history(6) });
    const before = conv.messages;
    const out = await conv.compact({ customInstructions: "keep the numbers" });
    assert.equal(conv.messages, out.messages);
    assert.match(promptText(conv.modelMessages()[0]), /compacted into the following summary/);
    await conv.append({ role: "user", content: "after compact" });
    await conv.run((args) => generateText({ model, ...args }));
    assert.match(promptText(calls.at(-1).prompt[0]), /compacted into the following summary/);
    await conv.setMessages(removeLastCompaction(conv.messages));
    assert.ok(!conv.messages.some((m) => m.role === "compactionSummary"));
    assert.equal(conv.messages[0], before[0]);
    assert.deepStrictEqual(conv.modelMessages(), toModelMessages(conv.messages));
    await conv.run((args) => generateText({ model, ...args }));
    assert.ok(!promptText(calls.at(-1).prompt).includes("compacted into the following summary"), "the undone summary is no longer sent");
  });

  test("setMessages that fails reading the new array keeps the messages it had", async () => {
    const conv = aiSdkConversation({ compactor: new Compactor({ contextWindow: 100_000 }), messages: history(2) });
    const before = conv.messages;
    const broken = [...before, { get role() { throw new Error("role getter failed"); } }];
    await assert.rejects(conv.setMessages(broken), /role getter failed/);
    assert.equal(conv.messages, before);
    assert.deepStrictEqual(conv.modelMessages(), toModelMessages(before));
  });

  for (const [name, call] of [["generateText", generateText], ["streamText", streamText]]) {
    for (const approved of [true, false]) {
      test(`tool approval (${name}, ${approved ? "approved" : "denied"}): the result the SDK adds before the first step is kept, the tool runs once, later turns work`, async () => {
        let executed = 0;
        const tools = {
          rm: tool({
            inputSchema: jsonSchema({ type: "object", properties: { path: { type: "string" } } }),
            needsApproval: true,
            execute: async ({ path }) => {
              executed++;
              return `removed ${path}`;
            },
          }),
        };
        let n = 0;
        const prompts = [];
        const reply = (content, finish) => ({ content, finishReason: { unified: finish, raw: undefined }, usage: usage(10), warnings: [] });
        const answer = () =>
          n++ === 0
            ? reply([{ type: "tool-call", toolCallId: "call-1", toolName: "rm", input: JSON.stringify({ path: "/tmp/x" }) }], "tool-calls")
            : reply([{ type: "text", text: `answer ${n}` }], "stop");
        const streamOf = (r) => {
          const chunks = [{ type: "stream-start", warnings: [] }];
          for (const c of r.content) {
            if (c.type === "text") chunks.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: c.text }, { type: "text-end", id: "t" });
            else chunks.push(c);
          }
          chunks.push({ type: "finish", finishReason: r.finishReason, usage: r.usage });
          return { stream: new ReadableStream({ start: (c) => (chunks.forEach((x) => c.enqueue(x)), c.close()) }) };
        };
        const model = new MockLanguageModelV3({
          doGenerate: async ({ prompt }) => (prompts.push(prompt), answer()),
          doStream: async ({ prompt }) => (prompts.push(prompt), streamOf(answer())),
        });
        const conv = aiSdkConversation({ compactor: new Compactor({ contextWindow: 100_000 }), tools });
        await conv.append({ role: "user", content: "delete /tmp/x" });
        const run = () => conv.run((args) => call({ model, tools, stopWhen: stepCountIs(5), ...args }));
        const first = await run();
        const request = (await first.response).messages.at(-1).content.find((p) => p.type === "tool-approval-request");
        assert.ok(request, "the SDK asks for approval");
        await conv.append({ role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved }] });
        const second = await run();
        assert.equal(await second.text, "answer 2");
        assert.equal(executed, approved ? 1 : 0);
        // The tool's result (or its denial) is in the flat array, and sent with its call.
        const result = conv.messages.find((m) => m.role === "toolResult" && m.toolCallId === "call-1");
        assert.ok(result, "the tool result is kept");
        assert.match(JSON.stringify(result.content), approved ? /removed \/tmp\/x/ : /denied/i);
        const sent = JSON.stringify(prompts[1]);
        assert.ok(sent.includes('"toolCallId":"call-1"') && sent.includes("tool-result"), "the model is sent the call's result");
        await conv.append({ role: "user", content: "and now?" });
        const third = await run();
        assert.equal(await third.text, "answer 3");
        assert.equal(executed, approved ? 1 : 0, "an approved tool runs once");
      });
    }
  }

  test("a user message steered into a running call (experimental_steering) is sent at the next step and kept in the flat array, in order", async () => {
    const steering = experimental_createSteering();
    const { model, calls } = windowedModel({ window: 100_000, answer: (_, i) => (i === 0 ? { toolCall: { name: "work", input: { n: 0 } } } : { text: "done" }) });
    const conv = aiSdkConversation({ compactor: new Compactor({ contextWindow: 100_000 }) });
    await conv.append({ role: "user", content: "start" });
    const tools = {
      work: tool({
        inputSchema: jsonSchema({ type: "object", properties: { n: { type: "number" } } }),
        execute: async () => {
          steering.steer("use Paris, Texas instead");
          return "RESULT-0";
        },
      }),
    };
    await conv.run((args) => generateText({ model, tools, stopWhen: stepCountIs(5), experimental_steering: steering, ...args }));
    assert.ok(promptText(calls[1].prompt).includes("Paris, Texas"), "the next step is sent the steered message");
    const roles = conv.messages.map((m) => (m.role === "user" ? `user:${m.content}` : m.role));
    assert.deepStrictEqual(roles, ["user:start", "assistant", "toolResult", "user:use Paris, Texas instead", "assistant"]);
  });

  test("compact() during a running tool loop keeps the steps the loop appends meanwhile, after the summary", async () => {
    let release;
    const held = new Promise((r) => (release = r));
    const summarize = async () => (await held, "## Goal\nKeep working.");
    const compactor = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 1000, keepRecentTokens: 1000 }, summarize });
    const conv = aiSdkConversation({ compactor, messages: history(6), backgroundAt: false });
    const { model } = windowedModel({ window: 100_000, answer: (_, i) => (i < 3 ? { toolCall: { name: "work", input: { n: i } } } : { text: "done" }) });
    const compacting = conv.compact();
    await new Promise((r) => setTimeout(r, 10));
    const running = conv.run((args) => generateText({ model, tools: { work: workTool(() => 10) }, stopWhen: stepCountIs(10), ...args }));
    // The loop's steps go into the array while the summary is written.
    await new Promise((r) => setTimeout(r, 50));
    release();
    await compacting;
    await running;
    const texts = conv.messages.map((m) => JSON.stringify(m.content ?? m.summary));
    for (const n of [0, 1, 2]) assert.ok(texts.some((t) => t.includes(`RESULT-${n}`)), `step ${n}'s result is kept`);
    assert.equal(conv.messages.filter((m) => m.role === "compactionSummary").length, 1);
    assert.equal(conv.messages.at(-1).role, "assistant");
  });

  test("compact() while the loop's own threshold compaction runs waits for it, then answers for what is left (a /compact typed meanwhile is not refused as busy)", async () => {
    let release;
    const held = new Promise((r) => (release = r));
    const summarize = async () => (await held, "## Goal\nKeep working.");
    let started = 0;
    const onEvent = (e) => (started += e.type === "compaction_start" ? 1 : 0);
    const compactor = new Compactor({ contextWindow: 10_000, settings: { reserveTokens: 3_000, keepRecentTokens: 2_000 }, summarize, onEvent });
    const conv = aiSdkConversation({ compactor, messages: history(12), backgroundAt: false });
    const { model } = windowedModel({ window: 10_000, answer: (_, i) => (i < 3 ? { toolCall: { name: "work", input: { n: i } } } : { text: "done" }) });
    await conv.append({ role: "user", content: "go" });
    const running = conv.run((args) => generateText({ model, tools: { work: workTool(() => 400) }, stopWhen: stepCountIs(10), ...args }));
    // A step's threshold compaction is under way, its summary held.
    for (let i = 0; i < 200 && !compactor.isCompacting; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(compactor.isCompacting, true, "the loop compacts at the threshold");
    const manual = conv.compact().then(
      (out) => ({ out }),
      (error) => ({ error }),
    );
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(started, 1, "the manual compaction waits: none started beside the loop's");
    release();
    const { out, error } = await manual;
    await running;
    // Right after the loop's summary, everything after it is what
    // keepRecentTokens keeps: the manual compaction has nothing to do.
    assert.equal(out, undefined);
    assert.match(error?.message ?? "", /Nothing to compact/);
    assert.equal(started, 2, "it started once the loop's had ended");
    assert.equal(conv.messages.filter((m) => m.role === "compactionSummary").length, 1);
    assert.equal(conv.messages.at(-1).role, "assistant");
    // Once the conversation has grown past what is kept, /compact compacts.
    await conv.append({ role: "user", content: "more " + "m".repeat(12_000) });
    await conv.run((args) => generateText({ model, tools: { work: workTool(() => 400) }, ...args }));
    assert.ok(await conv.compact());
    assert.equal(conv.messages.filter((m) => m.role === "compactionSummary").length, 2);
  });

  test("a summary request repeats the conversation's last prompt and tools, then one instruction; a reply without text is asked again serialized", async () => {
    const tools = { work: workTool(() => 400) };
    const { model, calls } = windowedModel({ window: 50_000, answer: (prompt, i) => (i === 0 ? { toolCall: { name: "work", input: { n: 1 } } } : { text: "done" }) });
    const asked = [];
    let answers = [[{ type: "text", text: "## Goal\nKeep working." }]];
    const summarizer = new MockLanguageModelV3({
      doGenerate: async (options) => {
        asked.push(options);
        return { content: answers.shift() ?? [{ type: "text", text: "## Goal\nSerialized." }], finishReason: { unified: "stop", raw: undefined }, usage: usage(100, 20), warnings: [] };
      },
    });
    const compactor = new Compactor({ contextWindow: 50_000, settings: { reserveTokens: 4000, keepRecentTokens: 500 }, summarize: aiSdkSummarizer(summarizer) });
    const system = { role: "system", content: "You are terse.", timestamp: 1 };
    const conv = aiSdkConversation({ compactor, messages: [system, ...history(3)], tools });
    await conv.append({ role: "user", content: "do the work" });
    await conv.run((args) => generateText({ model, tools, stopWhen: stepCountIs(5), ...args }));
    await conv.compact();

    const last = calls.at(-1);
    const [request] = asked;
    // The last step's prompt (system message included), its answer, then
    // the instruction: the same JSON up to there, as a provider reads it.
    assert.equal(promptText(request.prompt.slice(0, last.prompt.length)), promptText(last.prompt));
    assert.equal(request.prompt.length, last.prompt.length + 2);
    assert.equal(request.prompt.at(-2).role, "assistant");
    const instruction = request.prompt.at(-1);
    assert.equal(instruction.role, "user");
    assert.match(instruction.content[0].text, /^Stop here: this conversation is being compacted/);
    assert.match(instruction.content[0].text, /up to, but not including, /);
    // The same tool definitions as the conversation's requests.
    assert.ok(last.tools.length === 1);
    assert.deepEqual(request.tools, last.tools);

    // A summarizer that answers the prefix form without text is asked once more, serialized.
    answers = [[{ type: "tool-call", toolCallId: "x", toolName: "work", input: JSON.stringify({ n: 9 }) }]];
    asked.length = 0;
    await conv.append({ role: "user", content: "more " + "m".repeat(4000) });
    await conv.run((args) => generateText({ model, tools, ...args }));
    const out = await conv.compact();
    assert.equal(asked.length, 2);
    assert.equal(asked[1].tools, undefined, "the serialized request sends no tools");
    assert.match(promptText(asked[1].prompt), /<conversation>/);
    assert.equal(out.summary.summary.split("\n")[1], "Serialized.");
  });

  test("a system prompt passed to each call as a string (instructions) is repeated by the summary request", async () => {
    const { model, calls } = windowedModel({ window: 50_000, answer: () => ({ text: "ok" }) });
    const sum = summaryModel();
    const compactor = new Compactor({ contextWindow: 50_000, settings: { reserveTokens: 4000, keepRecentTokens: 500 }, summarize: aiSdkSummarizer(sum.model) });
    const conv = aiSdkConversation({ compactor, messages: history(3), instructions: "You are terse." });
    await conv.append({ role: "user", content: "next" });
    await conv.run((args) => generateText({ model, instructions: "You are terse.", ...args }));
    await conv.compact();
    const last = calls.at(-1).prompt;
    assert.equal(last[0].content, "You are terse.");
    assert.equal(promptText(sum.prompts[0].slice(0, last.length)), promptText(last));
  });

  test("system messages are repeated by the summary request as the steps sent them: several, or one with providerOptions (a cache breakpoint)", async () => {
    const cases = [
      [{ role: "system", content: "You are terse.", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }],
      [{ role: "system", content: "You are terse." }, { role: "system", content: "Answer in English." }],
    ];
    for (const systems of cases) {
      const { model, calls } = windowedModel({ window: 50_000, answer: () => ({ text: "ok" }) });
      const sum = summaryModel();
      const compactor = new Compactor({ contextWindow: 50_000, settings: { reserveTokens: 4000, keepRecentTokens: 500 }, summarize: aiSdkSummarizer(sum.model) });
      const conv = aiSdkConversation({ compactor, messages: history(3) });
      for (const m of systems) await conv.append(m);
      await conv.append({ role: "user", content: "next" });
      await conv.run((args) => generateText({ model, ...args }));
      await conv.compact();
      const last = calls.at(-1).prompt;
      const sent = last.filter((m) => m.role === "system");
      assert.deepEqual(sent.map((m) => m.content), systems.map((m) => m.content));
      const same = promptText(sum.prompts[0].slice(0, last.length)) === promptText(last);
      assert.ok(same, `the summary request starts with the last step's prompt: ${JSON.stringify(sum.prompts[0].filter((m) => m.role === "system"))}`);
    }
  });

  test("bad options are TypeErrors", () => {
    const compactor = new Compactor({ contextWindow: 8000, settings: { reserveTokens: 1000, keepRecentTokens: 1000 } });
    assert.throws(() => aiSdkConversation(), TypeError);
    assert.throws(() => aiSdkConversation({ compactor: {} }), /must be a Compactor/);
    assert.throws(() => aiSdkConversation({ compactor, messages: "x" }), /messages must be an array/);
    assert.throws(() => aiSdkConversation({ compactor, store: {} }), /go together/);
    assert.throws(() => aiSdkConversation({ compactor, tools: [] }), /options.tools must be the tool set/);
    assert.throws(() => aiSdkConversation({ compactor, instructions: [] }), /options.instructions must be the system prompt/);
    assert.throws(() => aiSdkSummarizer(), TypeError);
    assert.rejects(aiSdkConversation({ compactor }).run("x"), TypeError);
    assert.rejects(aiSdkConversation({ compactor }).appendSteps("x"), TypeError);
  });

  test("a summarizer's maxOutputTokens it cannot use, and compact's options of the wrong type, are named when given", async () => {
    const model = summaryModel().model;
    assert.throws(() => aiSdkSummarizer(model, { maxOutputTokens: "500" }), {
      name: "TypeError",
      message: "aiSdkSummarizer: options.maxOutputTokens must be a number (a cap on the summary's tokens), got a string",
    });
    for (const bad of [0, -1, 1.5, NaN]) {
      assert.throws(() => aiSdkSummarizer(model, { maxOutputTokens: bad }), {
        name: "RangeError",
        message: `aiSdkSummarizer: options.maxOutputTokens must be a whole number of tokens, at least 1, got ${bad}`,
      });
    }
    const compactor = new Compactor({ contextWindow: 8000, settings: { reserveTokens: 1000, keepRecentTokens: 1000 } });
    const conversation = aiSdkConversation({ compactor, messages: history(4) });
    const before = conversation.messages;
    await assert.rejects(conversation.compact("focus on the tests"), { name: "TypeError", message: "compact: options must be an object, got a string" });
    assert.equal(conversation.messages, before, "nothing compacted");
  });

  test("bad input to run, appendSteps, append and prepareStep is a TypeError naming the step, message and field, and changes nothing", async () => {
    const compactor = new Compactor({ contextWindow: 8000, settings: { reserveTokens: 1000, keepRecentTokens: 1000 } });
    const conv = aiSdkConversation({ compactor, messages: history(1) });
    const before = conv.messages;
    const fails = async (promise, message) => {
      await assert.rejects(promise, { name: "TypeError", message });
      assert.equal(conv.messages, before, "the flat array is unchanged");
    };
    await fails(conv.run(() => null), "run: call must return the result of generateText or streamText, got null");
    await fails(conv.run(async () => "done"), "run: call must return the result of generateText or streamText, got a string");
    await fails(conv.run(() => ({ text: "hi" })), "run: the result's steps must be an array (generateText's or streamText's result.steps), got undefined");
    await fails(
      conv.run(() => ({ steps: Promise.resolve([{ response: { messages: [{ role: "assistant", content: [null] }] } }]) })),
      "run: result.steps[0].response.messages[0].content[0] must be an object, got null",
    );
    await fails(conv.appendSteps([{ response: { messages: 5 } }]), "appendSteps: steps[0].response.messages must be an array, got a number");
    await fails(conv.appendSteps([null]), "appendSteps: steps[0] must be a step object (one of the call's steps), got null");
    await fails(conv.appendSteps([{ response: "x" }]), "appendSteps: steps[0].response must be an object, got a string");
    const good = { response: { messages: [{ role: "assistant", content: [{ type: "text", text: "fine" }] }] } };
    // A bad step after a good one: neither is taken.
    await fails(
      conv.appendSteps([good, { response: { messages: [{ role: "assistant", content: "ok" }, { role: "tool", content: "x" }] } }]),
      "appendSteps: steps[1].response.messages[1].content must be an array of parts, got a string",
    );
    await fails(conv.append({ role: "user", content: 5 }), "append: message.content must be a string or an array of parts, got a number");
    await fails(conv.append([{ role: "user", content: "a" }, { role: "user" }]), "append: messages[1].content must be a string or an array of parts, got undefined");
    await fails(
      conv.prepareStep({ stepNumber: 1, steps: [{ response: { messages: [5] } }] }),
      "prepareStep: steps[0].response.messages[0] must be a ModelMessage object, got a number",
    );
    // The conversation still works: the good step is taken once.
    await conv.appendSteps([good]);
    assert.deepEqual(conv.messages.slice(before.length).map((m) => m.content), [[{ type: "text", text: "fine" }]]);
  });

  test("a bad message given to aiSdkConversation or setMessages is refused there, by caller, index and field; the conversation keeps what it had", async () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const call = (args) => ({
      role: "assistant",
      content: [{ type: "toolCall", id: "c1", name: "read", arguments: args }],
      api: "ai-sdk", provider: "mock", model: "m", stopReason: "toolUse", timestamp: 1,
    });
    const cases = [
      ["a content that is a number", (flat) => flat.push({ role: "user", content: 5, timestamp: 1 }), "[4].content must be a string or an array of content blocks, got a number"],
      ["a user message without content", (flat) => flat.push({ role: "user", timestamp: 1 }), "[4].content must be a string or an array of content blocks, got undefined"],
      ["tool-call arguments that are a revoked Proxy", (flat) => flat.push(call(proxy)), "[4].content[0].arguments could not be read: JSON.stringify failed: Cannot perform 'get' on a proxy that has been revoked"],
      ["tool-call arguments JSON cannot write", (flat) => flat.push(call({ n: 1n })), "[4].content[0].arguments could not be read: JSON.stringify failed: Do not know how to serialize a BigInt"],
      ["a hole", (flat) => (flat.length = 5), "[4] must be a message object, got undefined"],
      ["null", (flat) => flat.push(null), "[4] must be a message object, got null"],
      ["a revoked Proxy", (flat) => flat.push(proxy), "[4].role could not be read: Cannot perform 'get' on a proxy that has been revoked"],
      ["a summary that is a number", (flat) => flat.push({ role: "compactionSummary", summary: 5, tokensBefore: 1, timestamp: 1 }), "[4].summary must be a string, got a number"],
    ];
    const step = { response: { messages: [{ role: "assistant", content: [{ type: "text", text: "step answer" }] }] } };
    for (const [what, spoil, text] of cases) {
      const bad = history(2);
      spoil(bad);
      bad.push({ role: "user", content: "after", timestamp: 1 });
      const compactor = new Compactor({ contextWindow: 100_000 });
      assert.throws(() => aiSdkConversation({ compactor, messages: bad }), { name: "TypeError", message: `aiSdkConversation: options.messages${text}` }, what);
      const conv = aiSdkConversation({ compactor, messages: history(2) });
      const before = conv.messages;
      await assert.rejects(conv.setMessages(bad), { name: "TypeError", message: `setMessages: messages${text}` }, what);
      assert.equal(conv.messages, before, `${what}: the messages it had`);
      assert.deepStrictEqual(conv.modelMessages(), toModelMessages(before), what);
      // The next call works, and adds its messages once.
      await conv.appendSteps([step]);
      assert.deepEqual(conv.messages.slice(before.length).map((m) => m.content[0].text), ["step answer"], what);
    }
  });

  test("a step whose message the engine would refuse is refused before anything is taken: appendSteps and prepareStep called again add each step once", async () => {
    const step = (text) => ({ response: { messages: [{ role: "assistant", content: [{ type: "text", text }] }] } });
    // A tool call whose input JSON cannot write (the engine measures its arguments).
    const unwritable = { response: { messages: [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "c", toolName: "t", input: { n: 1n } }] }] } };
    const conv = aiSdkConversation({ compactor: new Compactor({ contextWindow: 100_000 }), messages: history(2) });
    const before = conv.messages;
    await assert.rejects(conv.appendSteps([step("a"), unwritable]), { name: "TypeError", message: /^messages\[5\]\.content\[0\]\.arguments could not be read/ });
    assert.equal(conv.messages, before, "appendSteps took nothing");
    await assert.rejects(conv.prepareStep({ stepNumber: 2, steps: [step("a"), unwritable] }), /^TypeError: messages\[5\]\.content\[0\]\.arguments could not be read/);
    assert.equal(conv.messages, before, "prepareStep took nothing");
    await conv.prepareStep({ stepNumber: 1, steps: [step("a")] });
    await conv.appendSteps([step("a"), step("b")]);
    assert.deepEqual(conv.messages.slice(before.length).map((m) => m.content[0].text), ["a", "b"], "each step once");
  });

  test("a non-overflow error is not retried and compacts nothing", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new APICallError({ message: "Rate limit reached", url: "u", requestBodyValues: {}, statusCode: 429, isRetryable: false });
      },
    });
    const compactor = new Compactor({ contextWindow: 8000, settings: { reserveTokens: 1000, keepRecentTokens: 1000 } });
    const conv = aiSdkConversation({ compactor, messages: history(6) });
    await assert.rejects(conv.run((args) => generateText({ model, maxRetries: 0, ...args })), /Rate limit/);
    assert.equal(model.doGenerateCalls.length, 1);
    assert.ok(!conv.messages.some((m) => m.role === "compactionSummary"));
  });

  test("with compaction disabled, an overflow is the provider's error, as attach leaves it: no compaction, no retry", async () => {
    const window = 8000;
    const { model, calls } = windowedModel({ window, answer: () => ({ text: "never" }), forceOverflow: () => true });
    const events = [];
    const compactor = new Compactor({ contextWindow: window, settings: { enabled: false, reserveTokens: 1000, keepRecentTokens: 1000 }, onEvent: (e) => events.push(e) });
    const conv = aiSdkConversation({ compactor, messages: history(6) });
    await conv.append({ role: "user", content: "next question" });
    const before = conv.messages;
    const error = await conv.run((args) => generateText({ model, maxRetries: 0, ...args })).then(
      () => assert.fail("resolved"),
      (e) => e,
    );
    assert.ok(APICallError.isInstance(error), "the provider's error itself");
    assert.ok(await isOverflowError(error, window));
    assert.equal(compactor.afterRun(conv.messages, { overflow: true, retried: false }), "nothing", "the core's decision");
    assert.equal(calls.length, 1, "no retry");
    assert.deepEqual(events, [], "no compaction");
    assert.equal(conv.messages, before, "the flat array is unchanged");
  });

  test("a 200-step tool loop never exceeds the window and never summarizes a message twice", async () => {
    const window = 8000;
    const { model, calls } = windowedModel({
      window,
      answer: (prompt, i) => (i < 199 ? { toolCall: { name: "work", input: { n: i } } } : { text: "loop finished" }),
    });
    const sum = summaryModel();
    // Serialized summary requests: each one's <conversation> shows what it summarized.
    const compactor = new Compactor({ contextWindow: window, settings: { reserveTokens: 1500, keepRecentTokens: 2000 }, summarize: aiSdkSummarizer(sum.model), cacheFriendly: false });
    const conv = aiSdkConversation({ compactor });
    await conv.append({ role: "user", content: "run the long job" });
    // Each step sends exactly toModelMessages(transformContext(flat)): the
    // conversation's incremental output is checked against the full conversion.
    let checked = 0;
    const prepareStep = async (options) => {
      const r = await conv.prepareStep(options);
      const full = toModelMessages(transformContext(conv.messages));
      assert.equal(r.messages.length, full.length);
      r.messages.forEach((m, i) => assert.equal(m, full[i], `step ${options.stepNumber}, message ${i}`));
      checked++;
      return r;
    };
    const result = await conv.run((args) =>
      generateText({ model, tools: { work: workTool((n) => 400 + ((n * 37) % 900)) }, stopWhen: stepCountIs(200), ...args, prepareStep }),
    );
    assert.equal(checked, 200);
    assert.equal(result.text, "loop finished");
    assert.equal(calls.length, 200, "200 steps, no overflow retry");
    const max = Math.max(...calls.map((c) => c.tokens));
    assert.ok(max <= window, `largest prompt ${max} <= ${window}`);
    // A compaction started in the background by the last steps goes in when it ends.
    await compactor.waitForBackground();
    await new Promise((r) => setTimeout(r, 0));
    const flat = conv.messages;
    const summaries = flat.filter((m) => m.role === "compactionSummary");
    assert.ok(summaries.length >= 10, `compacted ${summaries.length} times`);
    assert.equal(sum.prompts.length, summaries.length);
    // Each tool result is summarized by exactly one compaction (or still in the context).
    const seen = new Map();
    sum.prompts.forEach((p, k) => {
      const text = promptText(p);
      const conversation = text.slice(text.indexOf("<conversation>"), text.indexOf("</conversation>"));
      for (const m of conversation.matchAll(/RESULT-(\d+):/g)) {
        assert.ok(!seen.has(m[1]) || seen.get(m[1]) === k, `RESULT-${m[1]} summarized twice`);
        seen.set(m[1], k);
      }
    });
    const inContext = new Set(promptText(calls.at(-1).prompt).match(/RESULT-\d+/g));
    for (let n = 0; n < 199; n++) assert.ok(seen.has(String(n)) || inContext.has(`RESULT-${n}`), `RESULT-${n} summarized or in context`);
    // Nothing deleted: all 199 results are in the flat array, once each.
    assert.equal(flat.filter((m) => m.role === "toolResult").length, 199);
  });

  test("useChat display: summaries out, dividers in their place, tool parts with outputs; ids stable across a compaction", async () => {
    const window = 6000;
    const { model } = windowedModel({ window, answer: (p, i) => (i % 3 < 2 ? { toolCall: { name: "work", input: { n: i } } } : { text: `answer ${i}` }) });
    const compactor = new Compactor({ contextWindow: window, settings: { reserveTokens: 1500, keepRecentTokens: 1500 }, summarize: aiSdkSummarizer(summaryModel().model) });
    const conv = aiSdkConversation({ compactor });
    let beforeIds;
    for (let t = 0; t < 4; t++) {
      const [user] = await fromUIMessages([{ id: `u${t}`, role: "user", parts: [{ type: "text", text: `turn ${t}` }] }]);
      assert.equal(user.aiSdk.uiId, `u${t}`);
      await conv.append([]); // nothing: a no-op
      // The stored form of a UI message is a flat message; the conversation takes ModelMessages or that.
      await conv.append({ role: "user", content: `turn ${t}` });
      await conv.run((args) => generateText({ model, tools: { work: workTool(() => 3000) }, stopWhen: stepCountIs(5), ...args }));
      if (t === 0) beforeIds = toUIMessages(conv.messages).map((m) => m.id);
    }
    const flat = conv.messages;
    assert.ok(flat.some((m) => m.role === "compactionSummary"));
    const plain = toUIMessages(flat);
    const withDivider = toUIMessages(flat, { divider: true });
    assert.ok(plain.every((m) => !JSON.stringify(m).includes("compaction_summary")));
    const dividers = withDivider.filter((m) => m.parts[0]?.type === "data-compaction");
    assert.equal(dividers.length, flat.filter((m) => m.role === "compactionSummary").length);
    // A clearing marker is shown as its own divider, as agentMessagesToChatMessages shows it.
    const cleared = withDivider.filter((m) => m.parts[0]?.type === "data-tool-output-cleared");
    assert.equal(cleared.length, flat.filter((m) => m.role === "toolOutputCleared").length);
    assert.equal(withDivider.length, plain.length + dividers.length + cleared.length);
    assert.deepEqual(plain.filter((m) => m.role === "user").map((m) => m.parts[0].text), ["turn 0", "turn 1", "turn 2", "turn 3"]);
    const toolParts = plain.flatMap((m) => m.parts).filter((p) => p.type === "tool-work");
    assert.ok(toolParts.length > 0 && toolParts.every((p) => p.state === "output-available" && p.output.startsWith("RESULT-")));
    // The ids of the first turn's rows did not change after compactions.
    assert.deepEqual(plain.slice(0, beforeIds.length).map((m) => m.id), beforeIds);
  });
});

describe("@ai-sdk/openai-compatible over HTTP against the local model", () => {
  let server, local, provider, model;
  before(async () => {
    local = createLocalModel({ delayMs: 0 });
    server = await startServer({ port: 0, handlers: [local.handle] });
    provider = createOpenAICompatible({ name: "local", baseURL: `${server.url}local/v1`, apiKey: "local", includeUsage: true });
    model = provider("local-coder");
  });
  after(() => server?.close());
  beforeEach(() => local.reset());

  const readTool = () =>
    tool({
      description: "Read a text file of the project and return its whole content.",
      inputSchema: jsonSchema({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }),
      execute: async ({ path }) => `// ${path}\n` + "fn item() { let x = 1; }\n".repeat(150),
    });
  const newConversation = (extra = {}) => {
    const events = [];
    const compactor = new Compactor({
      contextWindow: 16_000,
      settings: { reserveTokens: 3_000, keepRecentTokens: 4_000 },
      summarize: aiSdkSummarizer(model),
      onEvent: (e) => events.push(e),
    });
    return { conv: aiSdkConversation({ compactor, ...extra }), events };
  };

  test("with the provider's prompt cache: compactions start in the background, and their summary requests repeat the conversation and are served from the cache", async () => {
    local.setConfig({ promptCache: true });
    const tools = { read_file: readTool() };
    const { conv, events } = newConversation({ tools });
    for (let i = 0; i < 12; i++) {
      await conv.append({ role: "user", content: `turn ${i}: read src/mod${i}.rs and explain ` + "the module layout ".repeat(60) });
      await conv.run((args) => streamText({ model, tools, stopWhen: stepCountIs(6), ...args }));
    }
    await conv.compactor.waitForBackground();
    await new Promise((r) => setTimeout(r, 0));
    assert.ok(events.some((e) => e.type === "compaction_start" && e.background === true), "started in the background");
    const summaries = local.requests.filter((r) => r.kind === "summary");
    assert.ok(summaries.length >= 1, "compacted");
    const input = summaries.reduce((n, r) => n + r.promptTokens, 0);
    const cached = summaries.reduce((n, r) => n + r.cachedTokens, 0);
    assert.ok(cached >= 0.8 * input, `${cached} of ${input} summary input tokens cached`);
    assert.ok(conv.messages.some((m) => m.role === "compactionSummary"), "the summary went in");
    assert.ok(local.requests.every((r) => r.status === 200), "no overflow");
  });

  test("streamText tool loop over turns: real usage, compaction past the threshold through the app's model, summary sent first", async () => {
    const { conv, events } = newConversation();
    for (let i = 0; i < 12; i++) {
      await conv.append({ role: "user", content: `turn ${i}: read src/mod${i}.rs and explain ` + "the module layout ".repeat(60) });
      let streamed = "";
      const result = await conv.run((args) =>
        streamText({
          model,
          tools: { read_file: readTool() },
          stopWhen: stepCountIs(6),
          onChunk: ({ chunk }) => {
            if (chunk.type === "text-delta") streamed += chunk.text;
          },
          ...args,
        }),
      );
      const steps = await result.steps;
      assert.equal(streamed, steps.map((s) => s.text).join(""), "every step's text streamed through onChunk");
    }
    const summaries = conv.messages.filter((m) => m.role === "compactionSummary");
    assert.ok(summaries.length >= 1, "compacted");
    const summaryRequests = local.requests.filter((r) => r.kind === "summary");
    // Through the app's model: one request per compaction, two when a turn was split (pi's turn prefix).
    const done = events.filter((e) => e.type === "compaction_end" && e.result).length;
    assert.equal(done, summaries.length);
    assert.ok(summaryRequests.length >= done && summaryRequests.length <= 2 * done, `${summaryRequests.length} summary requests for ${done} compactions`);
    const chats = local.requests.filter((r) => r.kind === "chat");
    assert.ok(chats.every((r) => r.status === 200), "no overflow");
    assert.match(JSON.stringify(chats.at(-1).body.messages[0]), /compacted into the following summary/);
    // The usage the provider reported is on the assistant messages.
    const last = conv.messages.findLast((m) => m.role === "assistant");
    assert.equal(last.usage.input, chats.at(-1).promptTokens);
    assert.equal(last.provider, "local.chat");
  });

  test("overflow from the provider (real error body over fetch): compacted, retried once, answered", async () => {
    const { conv, events } = newConversation({ messages: history(8) });
    local.setConfig({ overflowNext: 1 });
    await conv.append({ role: "user", content: "hello again" });
    const result = await conv.run((args) => streamText({ model, ...args }));
    assert.ok((await result.text).length > 0);
    const chats = local.requests.filter((r) => r.kind === "chat" || r.kind === "overflow");
    assert.deepEqual(chats.map((r) => r.status), [400, 200]);
    assert.match(JSON.stringify(chats[1].body.messages[0]), /compacted into the following summary/);
    assert.deepEqual(events.filter((e) => e.type === "compaction_end").map((e) => [e.reason, e.willRetry]), [["overflow", true]]);
  });

  test("repeated overflow from the provider ends with pi's text after exactly two requests (generateText and streamText)", async () => {
    for (const fn of [generateText, streamText]) {
      local.reset();
      const { conv } = newConversation({ messages: history(8) });
      local.setConfig({ overflowAlways: true });
      await conv.append({ role: "user", content: "hello again" });
      await assert.rejects(
        conv.run((args) => fn({ model, maxRetries: 0, ...args })),
        (e) => e.message === OVERFLOW_RECOVERY_FAILED && APICallError.isInstance(e.cause) && e.cause.statusCode === 400,
      );
      assert.equal(local.requests.filter((r) => r.kind !== "summary").length, 2, fn.name);
    }
  });

  test("isOverflowError: the provider's real error is recognized as pi's isContextOverflow does", async () => {
    local.setConfig({ overflowAlways: true });
    const error = await generateText({ model, prompt: "hi", maxRetries: 0 }).catch((e) => e);
    assert.ok(APICallError.isInstance(error));
    assert.equal(await isOverflowError(error, 16_000), true);
    assert.equal(await isOverflowError(new Error("maximum context length"), 16_000), false, "only APICallErrors");
    assert.equal(isContextOverflow({ role: "assistant", stopReason: "error", errorMessage: `400 ${error.message}`, content: [], api: "a", provider: "p", model: "m", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, timestamp: 0 }), true);
  });

  test("aiSdkSummarizer passes the abort signal and the token budget to the model", async () => {
    const summarize = aiSdkSummarizer(model, { maxOutputTokens: 300 });
    const out = await summarize({ kind: "history", systemPrompt: "sys", prompt: "<conversation>\n[User]: hi\n</conversation>\n\n## Goal", maxTokens: 1000, signal: new AbortController().signal, reason: "manual" });
    assert.ok(out.text.length > 0);
    assert.ok(out.usage.totalTokens > 0);
    const req = local.requests.at(-1);
    assert.equal(req.body.max_tokens, 300);
    assert.equal(req.body.messages[0].role, "system");
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(summarize({ kind: "history", systemPrompt: "s", prompt: "p", maxTokens: 100, signal: aborted.signal, reason: "manual" }), (e) => e.name === "AbortError" || /abort/i.test(e.message));
  });

  test("a summary survives the SDK: it is sent as a user message and comes back as compactionSummary", async () => {
    const { conv } = newConversation({ messages: [{ role: "compactionSummary", summary: "## Goal\nX", tokensBefore: 100, timestamp: 1 }] });
    await conv.append({ role: "user", content: "continue" });
    await conv.run((args) => generateText({ model, ...args }));
    const req = local.requests.find((r) => r.kind === "chat");
    assert.equal(req.body.messages[0].role, "user");
    assert.match(req.body.messages[0].content, /<compaction_summary>\n## Goal\nX/);
    assert.equal(conv.messages[0].role, "compactionSummary");
    assert.ok(!JSON.stringify(req.body).includes(PROVIDER_OPTIONS_KEY), "our providerOptions never reach the wire");
  });
});
