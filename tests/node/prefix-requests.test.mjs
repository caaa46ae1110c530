// Summary requests in the prefix form: the compactor hands the summarizer
// the conversation as the model last saw it (`context`: the system prompt,
// the tools, the messages convertToLlm gave) and one instruction to send
// after it, so that a provider's prompt cache serves the repeated prefix.
// With the real pi-agent-core `Agent` (attach) against the mock server, and
// with `compact()` directly for the cases that keep the serialized form.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Agent } from "@mariozechner/pi-agent-core";
import { streamSimple } from "@mariozechner/pi-ai";
import { Compactor, convertToLlm } from "agent-compaction";
import { useMockLlm } from "../support/mock-llm-server.mjs";

const mock = useMockLlm();
const SUMMARY_PREFIX = "The conversation history before this point was compacted";
const big = (label, n = 12_000) => `${label}: ` + "lorem ipsum ".repeat(n / 12);

/** A normal answer reporting the request's size (characters / 4) as its usage. */
function answer(record) {
  const prompt = Math.ceil(JSON.stringify(record.body.messages).length / 4);
  return { text: `Done with ${record.body.messages.length} messages.`, usage: { prompt_tokens: prompt, completion_tokens: 10, total_tokens: prompt + 10 } };
}

const readTool = {
  name: "read",
  label: "Read",
  description: "Read a file of the project.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  execute: async () => ({ content: [{ type: "text", text: "file" }], details: {} }),
};

async function settled(agent) {
  for (let i = 0; i < 500 && agent.state.isStreaming; i++) await new Promise((r) => setTimeout(r, 10));
}

describe("summary requests repeat the conversation as the model saw it", () => {
  test("attach: the request carries the agent's system prompt, tools and the messages it last sent, then the instruction", async () => {
    mock.setMode((r) => answer(r));
    const requests = [];
    const sentContexts = [];
    // A threshold of 12,000 tokens: at ~13,000 the window leaves ~6,000
    // for the instruction and the summary.
    const compactor = new Compactor({
      contextWindow: 20_000,
      model: "local/m",
      settings: { reserveTokens: 8_000, keepRecentTokens: 3_000 },
      summarize: (request) => {
        requests.push(request);
        return { text: `## Goal\nsummary ${requests.length}` };
      },
    });
    const agent = new Agent({
      initialState: { model: mock.model({ id: "m", contextWindow: 20_000 }), systemPrompt: "You are terse.", tools: [readTool], messages: [] },
      getApiKey: () => "local",
      streamFn: (model, context, options) => {
        sentContexts.push({ ...context, messages: context.messages.slice() });
        return streamSimple(model, context, options);
      },
    });
    // Blocking compactions: the request's messages are those of the turn that crossed the threshold.
    compactor.attach(agent, { backgroundAt: false });
    await agent.prompt(big("first question"));
    await agent.prompt(big("second question"));
    await agent.prompt(big("third question", 24_000));
    await settled(agent);
    assert.equal(requests.length, 1, "one threshold compaction");

    const [request] = requests;
    const last = sentContexts.at(-1);
    assert.equal(request.kind, "history");
    assert.equal(request.context.systemPrompt, "You are terse.");
    assert.deepEqual(request.context.tools.map((t) => t.name), ["read"]);
    assert.equal(request.context.tools[0].parameters, readTool.parameters, "the tools as the agent has them");
    // The messages of the last request, in order and the same objects, then the reply to it.
    assert.equal(request.context.messages.length, last.messages.length + 1);
    last.messages.forEach((m, i) => assert.equal(request.context.messages[i], m, `message ${i}`));
    const reply = request.context.messages.at(-1);
    assert.equal(reply.role, "assistant");
    assert.equal(reply.content[0].text, "Done with 6 messages.");
    // The instruction names the first message kept: the third question.
    assert.match(request.instruction, /^Stop here: this conversation is being compacted/);
    assert.ok(
      request.instruction.includes(`up to, but not including, the user's message number 3 (tool results not counted) that begins "third question: lorem ipsum`),
      request.instruction,
    );
    assert.ok(request.instruction.includes("## Goal") && request.instruction.includes("## Next Steps"));
    // The serialized form is still there for summarizers that do not use the prefix.
    assert.ok(request.prompt.startsWith("<conversation>\n[User]: first question"));
    const summaryAt = agent.state.messages.findIndex((m) => m.role === "compactionSummary");
    assert.ok(agent.state.messages[summaryAt + 1].content[0].text.startsWith("third question"));

    // The next compaction updates the summary the conversation now starts with.
    await agent.prompt(big("fourth question", 24_000));
    await settled(agent);
    assert.equal(requests.length, 2);
    const update = requests[1];
    assert.equal(update.context.messages[0].role, "user");
    assert.ok(update.context.messages[0].content[0].text.startsWith(SUMMARY_PREFIX));
    assert.ok(update.context.messages[0].content[0].text.includes("summary 1"));
    assert.ok(update.instruction.includes("The first message above holds the checkpoint of the earlier work."));
    assert.ok(update.instruction.includes(`the user's message number 3 (tool results not counted) that begins "fourth question`), update.instruction);
  });
});

/** Four turns of ~1,000 tokens each (by pi's estimate), the last one kept. */
function turns() {
  const out = [];
  let t = 1_000;
  for (let i = 0; i < 4; i++) {
    out.push({ role: "user", content: big(`question ${i}`, 4_000), timestamp: t++ });
    out.push({
      role: "assistant", content: [{ type: "text", text: `answer ${i}` }],
      api: "openai-completions", provider: "local", model: "m", stopReason: "stop", timestamp: t++,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    });
  }
  return out;
}

function recording(options = {}) {
  const requests = [];
  const compactor = new Compactor({
    contextWindow: 20_000,
    model: "local/m",
    estimator: "pi",
    settings: { reserveTokens: 4_000, keepRecentTokens: 1_000 },
    summarize: (r) => {
      requests.push(r);
      return "## Goal\nshort";
    },
    ...options,
  });
  return { compactor, requests };
}

const conversation = { systemPrompt: "Be brief.", tools: [readTool] };

describe("when a summary request keeps the serialized form", () => {
  test("compact() with the conversation's system prompt and tools takes the prefix form; without them, or opted out, it does not", async () => {
    let { compactor, requests } = recording();
    await compactor.compact(turns(), { conversation });
    assert.equal(requests[0].context.systemPrompt, "Be brief.");
    assert.equal(requests[0].context.messages.length, 8);
    assert.ok(requests[0].instruction.includes(`message number 4 (tool results not counted) that begins "question 3: lorem`));
    assert.equal(requests[0].maxTokens, 3_200, "room enough for the whole budget");

    ({ compactor, requests } = recording());
    await compactor.compact(turns());
    assert.equal("context" in requests[0], false, "no conversation given");
    assert.equal("instruction" in requests[0], false);

    ({ compactor, requests } = recording({ cacheFriendly: false }));
    await compactor.compact(turns(), { conversation });
    assert.equal("context" in requests[0], false, "cacheFriendly: false");

    // A system prompt alone is enough; the tools are left out then.
    ({ compactor, requests } = recording());
    await compactor.compact(turns(), { conversation: { systemPrompt: "" } });
    assert.deepEqual(Object.keys(requests[0].context), ["systemPrompt", "messages"]);
  });

  test("the context is what the conversation's own requests sent: failed attempts left out, cleared outputs as placeholders, pinned messages re-sent", async () => {
    const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const said = (text, stopReason, t, extra = {}) => ({
      role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "local", model: "m",
      stopReason, usage: zero, timestamp: t, ...extra,
    });
    let t = 1_000;
    const messages = [{ role: "user", content: "RULE: answer in British English", pinned: true, timestamp: t++ }];
    messages.push(...turns().map((m) => ({ ...m, timestamp: t++ })));
    messages.splice(4, 0, { role: "compactionSummary", summary: "## Goal\nearlier work", tokensBefore: 9_000, timestamp: t++ });
    messages.push({ role: "user", content: "look at the file", timestamp: t++ });
    messages.push(said("", "toolUse", t++, { content: [{ type: "toolCall", id: "call-1", name: "read", arguments: { path: "a.ts" } }] }));
    messages.push({ role: "toolResult", toolCallId: "call-1", toolName: "read", content: [{ type: "text", text: big("file a.ts") }], isError: false, timestamp: t++ });
    messages.push(said("half an answer", "aborted", t++));
    messages.push(said("", "error", t++, { errorMessage: "502 bad gateway" }));
    messages.push(said("The file is fine.", "stop", t++));
    messages.push({ role: "toolOutputCleared", toolCallIds: ["call-1"], outputTokens: [3_000], tokensFreed: 2_980, timestamp: t++ });
    messages.push({ role: "user", content: big("next question", 4_000), timestamp: t++ });
    const { compactor, requests } = recording();
    const sent = convertToLlm(compactor.modelContext(messages));
    await compactor.compact(messages, { conversation });
    const context = requests[0].context.messages;
    assert.deepEqual(context, sent, "the same messages, in the same order");
    assert.ok(!context.some((m) => m.stopReason === "aborted" || m.stopReason === "error"), "no failed attempt");
    assert.ok(context.some((m) => m.role === "toolResult" && /cleared to save context/.test(m.content[0].text)), "the placeholder");
    assert.equal(context[1].content, "RULE: answer in British English", "the pinned rule after the summary");
  });

  test("an overflow, or a context that would not fit the summarizer's window, is summarized from the serialized copy", async () => {
    let { compactor, requests } = recording();
    await compactor.compact(turns(), { reason: "overflow", conversation });
    assert.equal("context" in requests[0], false, "the provider refused that context already");

    // ~4,000 tokens of context and 1,000 for the instruction leave 2,900
    // of 7,900: under the summary's budget of 3,200 (0.8 × reserve).
    ({ compactor, requests } = recording({ summarizerContextWindow: 7_900 }));
    await compactor.compact(turns(), { conversation });
    assert.equal("context" in requests[0], false);
    assert.equal(requests[0].maxTokens, 3_200);
    const context = new Compactor({ estimator: "pi", contextWindow: 20_000, settings: { reserveTokens: 4_000, keepRecentTokens: 1_000 } }).contextTokens(turns());
    ({ compactor, requests } = recording({ summarizerContextWindow: context + 1_000 + 3_200 }));
    await compactor.compact(turns(), { conversation });
    assert.ok(requests[0].context, "it fits a window with room for the budget");
    assert.equal(requests[0].maxTokens, 3_200);
  });

  test("bad options are a TypeError naming the field, and nothing is compacted", async () => {
    const { compactor, requests } = recording();
    await assert.rejects(compactor.compact(turns(), { conversation: "be brief" }), {
      name: "TypeError",
      message: "options.conversation must be an object, got a string",
    });
    await assert.rejects(compactor.compact(turns(), { conversation: { systemPrompt: 7 } }), {
      name: "TypeError",
      message: "options.conversation.systemPrompt must be a string, or AI SDK system messages (an object or an array), got a number",
    });
    await assert.rejects(compactor.compact(turns(), { conversation: { systemPrompt: "s", tools: "read_file" } }), {
      name: "TypeError",
      message: "options.conversation.tools must be an array of pi-ai tools or an AI SDK tool set (an object), got a string",
    });
    assert.equal(requests.length, 0);
    assert.equal(compactor.isCompacting, false);
    assert.throws(() => new Compactor({ contextWindow: 1_000, cacheFriendly: "yes" }), {
      name: "TypeError",
      message: "options.cacheFriendly must be a boolean, got a string",
    });
  });
});
