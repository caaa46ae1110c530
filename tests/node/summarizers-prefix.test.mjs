// The ready summarizers' prefix form (request.context + request.instruction)
// against the real pi-ai 0.73.1: pi-ai sends a conversation to the local
// model, then the summarizer sends the same context and one more user
// message. The tools, system prompt and messages must be pi-ai's own, byte
// for byte, so that the provider serves them from its prompt cache, which
// the local model reports by OpenAI's and Anthropic's rules. Also: the
// serialized form when the context cannot be sent, and the one retry.
// Needs a built pkg/ (`node scripts/build.mjs`).
import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import { complete } from "@mariozechner/pi-ai";
import { anthropicSummarizer, openAiSummarizer } from "agent-compaction";
import { cachedTokensOf, promptPieces } from "../../scripts/lib/prompt-cache.mjs";
import { createLocalModel, demoAgentTools } from "../../scripts/local-model.mjs";
import { startServer } from "../../scripts/serve.mjs";

const SYSTEM = "You are a coding agent working in a Rust repository; keep changes small. ".repeat(100);
const INSTRUCTION =
  "Summarize the conversation above as a context checkpoint, in exactly this format:\n\n## Goal\n[...]\n\n## Progress\n[...]\n\n## Critical Context\n[...]";
// A 1×1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

const API = {
  openai: { api: "openai-completions", provider: "local", id: "local-coder" },
  anthropic: { api: "anthropic-messages", provider: "anthropic", id: "claude-sonnet-4-5" },
};

/**
 * A conversation as pi-agent-core keeps it: text, thinking, tool calls,
 * results (one an error, one with an image), a reply of another model
 * (its thinking becomes text, its Responses-API call id is normalized), an
 * aborted reply (left out), and the user's latest message.
 */
function conversation({ api, provider, id }) {
  const own = (content, stopReason = "toolUse") => ({ role: "assistant", content, api, provider, model: id, usage: USAGE, stopReason, timestamp: 2 });
  const thought = api === "openai-completions"
    ? { type: "thinking", thinking: "The parser test fails: read it first.", thinkingSignature: "reasoning_content" }
    : { type: "thinking", thinking: "The parser test fails: read it first.", thinkingSignature: "EqQBCkgIARABGAIiQL4signed" };
  const result = (toolCallId, toolName, content, isError = false) => ({ role: "toolResult", toolCallId, toolName, content, isError, timestamp: 3 });
  return [
    { role: "user", content: "Fix the failing parser test in src/parser.rs 😀", timestamp: 1 },
    own([
      thought,
      { type: "text", text: "Let me read the parser and run the tests." },
      { type: "toolCall", id: "call_1", name: "read_file", arguments: { path: "src/parser.rs" } },
      { type: "toolCall", id: "call_2", name: "run_command", arguments: { command: "cargo test -p core" } },
    ]),
    result("call_1", "read_file", [{ type: "text", text: "pub fn parse(input: &str) -> Result<Ast, Error> {\n    todo!()\n}\n".repeat(20) }]),
    result("call_2", "run_command", [{ type: "text", text: "test parser::tests::empty ... FAILED\ntest result: FAILED. 3 passed; 1 failed" }], true),
    own([{ type: "text", text: "The test expects an empty AST. Let me look at the screenshot." }, { type: "toolCall", id: "call_3", name: "read_file", arguments: { path: "docs/ast.png" } }]),
    result("call_3", "read_file", [{ type: "text", text: "docs/ast.png:" }, { type: "image", mimeType: "image/png", data: PNG }]),
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Another model's thought.", thinkingSignature: "{\"id\":\"rs_1\"}" },
        { type: "text", text: "Listing the sources." },
        { type: "toolCall", id: "call_9|fc_abc+/=", name: "list_files", arguments: { path: "src" } },
      ],
      api: "openai-responses",
      provider: "openai",
      model: "gpt-5",
      usage: USAGE,
      stopReason: "toolUse",
      timestamp: 4,
    },
    result("call_9|fc_abc+/=", "list_files", [{ type: "text", text: "src/parser.rs\nsrc/lib.rs" }]),
    own([{ type: "text", text: "I was cut off" }], "aborted"),
    { role: "user", content: [{ type: "text", text: "Also keep the public API unchanged." }], timestamp: 5 },
  ];
}

function request(overrides = {}) {
  return {
    kind: "history",
    systemPrompt: "You are a context summarization assistant.",
    prompt: "<conversation>\n[User]: Fix the failing parser test in src/parser.rs\n</conversation>\n\nAnswer in exactly this format:\n\n## Goal\n[...]",
    maxTokens: 2000,
    signal: new AbortController().signal,
    reason: "threshold",
    ...overrides,
  };
}

/** The serialized form's body, as the summarizers sent it before the prefix form. */
function serializedBody(which, model, r = request()) {
  return which === "openai"
    ? { model, messages: [{ role: "system", content: r.systemPrompt }, { role: "user", content: r.prompt }], max_tokens: r.maxTokens, stream: false }
    : { model, max_tokens: r.maxTokens, system: r.systemPrompt, messages: [{ role: "user", content: r.prompt }] };
}

describe("the prefix form repeats pi-ai's own request, and the provider serves it from its cache", () => {
  let local;
  let server;
  before(async () => {
    local = createLocalModel({ delayMs: 0, promptCache: true, contextWindow: 100_000 });
    server = await startServer({ port: 0, handlers: [local.handle], mounts: [] });
  });
  after(() => server.close());
  afterEach(() => local.reset({ keepConfig: true }));

  const setup = (which) => {
    const { api, provider, id } = API[which];
    const baseUrl = which === "openai" ? `${server.url}local/v1` : `${server.url}local`;
    const model = { id, name: id, api, provider, baseUrl, reasoning: false, input: ["text", "image"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100_000, maxTokens: 4000 };
    const make = which === "openai" ? openAiSummarizer : anthropicSummarizer;
    const summarize = make({ baseUrl, model: id, apiKey: "local" });
    // pi-agent-core's AgentTools, `execute` and all.
    const context = { systemPrompt: SYSTEM, tools: demoAgentTools(), messages: conversation(API[which]) };
    return { model, summarize, context };
  };

  test("OpenAI-compatible: the same tools and messages, JSON prefix included, then the instruction; mostly cached", async () => {
    const { model, summarize, context } = setup("openai");
    const reply = await complete(model, context, { apiKey: "local" });
    assert.notEqual(reply.stopReason, "error", reply.errorMessage);
    const result = await summarize(request({ context, instruction: INSTRUCTION }));
    assert.equal(local.requests.length, 2, "one summary request, no retry");
    const [pi, ours] = local.requests;
    const piJson = JSON.stringify(pi.body.messages);
    // The context exercises what pi-ai converts.
    for (const part of ['"role":"system"', '"reasoning_content":"The parser test', '"image_url"', '"tool_call_id":"call_9"', "Another model's thought.", '"tool_calls"']) {
      assert.ok(piJson.includes(part), `pi-ai sent ${part}`);
    }
    assert.ok(!piJson.includes("I was cut off"));

    assert.deepEqual(ours.body.messages.slice(0, -1), pi.body.messages);
    assert.deepEqual(ours.body.messages.at(-1), { role: "user", content: INSTRUCTION });
    assert.ok(JSON.stringify(ours.body.messages).startsWith(`${piJson.slice(0, -1)},`), "the messages' JSON starts with pi-ai's");
    assert.equal(JSON.stringify(ours.body.tools), JSON.stringify(pi.body.tools), "the tools' JSON is pi-ai's");
    assert.deepEqual(Object.keys(ours.body), ["model", "messages", "max_tokens", "stream", "tools"], "no tool_choice");
    assert.equal(ours.body.max_tokens, 2000);

    assert.equal(ours.kind, "summary");
    // All of pi-ai's request is a cached prefix; outside it only the
    // instruction, and the image (which the local model counts as 1,200
    // tokens, more than its JSON holds for the cache).
    assert.equal(ours.cachedTokens, cachedTokensOf(promptPieces(pi.body).join("").length, ours.promptTokens));
    const uncached = ours.promptTokens - ours.cachedTokens;
    assert.ok(uncached <= 1200 + Math.ceil(INSTRUCTION.length / 4) + 128, `cached ${ours.cachedTokens} of ${ours.promptTokens}`);
    assert.match(result.text, /^## Goal\n- Fix the failing parser test/m);
    assert.equal(result.usage.cacheRead, ours.cachedTokens);
    assert.equal(result.usage.input, ours.promptTokens - ours.cachedTokens);
  });

  test("Anthropic: pi-ai's system, tools and messages with its breakpoints, one more on the instruction; mostly read from the cache", async () => {
    const { model, summarize, context } = setup("anthropic");
    const reply = await complete(model, context, { apiKey: "local" });
    assert.notEqual(reply.stopReason, "error", reply.errorMessage);
    const result = await summarize(request({ context, instruction: INSTRUCTION }));
    assert.equal(local.requests.length, 2, "one summary request, no retry");
    const [pi, ours] = local.requests;
    const piJson = JSON.stringify(pi.body.messages);
    for (const part of ['"type":"thinking"', '"signature":"EqQBCkgIARABGAIiQL4signed"', '"is_error":true', '"type":"image"', '"tool_use_id":"call_9_fc_abc___"', '"text":"Another model\'s thought."', '"cache_control"']) {
      assert.ok(piJson.includes(part), `pi-ai sent ${part}`);
    }

    assert.deepEqual(ours.body.system, pi.body.system);
    assert.deepEqual(ours.body.tools, pi.body.tools);
    assert.equal(JSON.stringify(ours.body.tools), JSON.stringify(pi.body.tools));
    assert.deepEqual(ours.body.messages.slice(0, -1), pi.body.messages, "the breakpoint where pi-ai put it");
    assert.ok(JSON.stringify(ours.body.messages).startsWith(`${piJson.slice(0, -1)},`));
    assert.deepEqual(ours.body.messages.at(-1), { role: "user", content: [{ type: "text", text: INSTRUCTION, cache_control: { type: "ephemeral" } }] });
    assert.equal(JSON.stringify(ours.body).match(/"cache_control"/g).length, 4, "Anthropic allows four breakpoints");
    assert.deepEqual(Object.keys(ours.body), ["model", "messages", "max_tokens", "system", "tools"], "no tool_choice");

    assert.equal(ours.kind, "summary");
    assert.equal(ours.cachedTokens, pi.cachedTokens + pi.cacheWriteTokens, "everything pi-ai's request cached is read");
    assert.ok(ours.cachedTokens > 0.9 * ours.promptTokens, `read ${ours.cachedTokens} of ${ours.promptTokens}`);
    assert.match(result.text, /^## Goal\n- Fix the failing parser test/m);
    assert.equal(result.usage.cacheRead, ours.cachedTokens);
    assert.equal(result.usage.cacheWrite, ours.cacheWriteTokens);
    assert.equal(result.usage.input + result.usage.cacheRead + result.usage.cacheWrite, ours.promptTokens);
  });

  for (const which of ["openai", "anthropic"]) {
    test(`${which}: a model that answers the prefix form with a tool call is asked again in the serialized form`, async () => {
      const { summarize, context } = setup(which);
      const r = request({ context, instruction: "What should we look at next?" });
      const result = await summarize(r);
      assert.deepEqual(local.requests.map((q) => q.kind), ["chat", "summary"]);
      const [first, second] = local.requests;
      assert.ok(first.reply.toolCalls.length > 0, "the model called a tool");
      assert.deepEqual(second.body, serializedBody(which, API[which].id, r));
      assert.match(result.text, /^## Goal\n- Fix the failing parser test/m);
      assert.equal(result.usage.cacheRead, second.cachedTokens, "the usage is the answered call's");
    });
  }
});

/** Runs `body` with `globalThis.fetch` answering `replies` in turn (a status and a JSON body). */
async function withReplies(replies, body) {
  const calls = [];
  const original = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    calls.push(JSON.parse(init.body));
    if (init.signal?.aborted) throw init.signal.reason;
    const [status, reply] = replies[Math.min(calls.length, replies.length) - 1];
    return new Response(JSON.stringify(reply), { status, headers: { "content-type": "application/json" } });
  };
  try {
    await body();
  } finally {
    globalThis.fetch = original;
  }
  return calls;
}

const TEXT = {
  openai: (content, extra = {}) => [200, { choices: [{ message: { role: "assistant", content, ...extra }, finish_reason: "stop" }] }],
  anthropic: (text) => [200, { type: "message", content: text ? [{ type: "text", text }] : [], stop_reason: "end_turn" }],
};
const summarizer = (which) =>
  which === "openai" ? openAiSummarizer({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }) : anthropicSummarizer({ baseUrl: "http://127.0.0.1:9", model: "m" });
const CONTEXT = { systemPrompt: "s", messages: [{ role: "user", content: "hi", timestamp: 1 }] };
const boom = () => {
  throw new Error("a hostile trap");
};
function revoked() {
  const { proxy, revoke } = Proxy.revocable([], {});
  revoke();
  return proxy;
}

describe("when the prefix form is not sent, and the one retry", () => {
  for (const which of ["openai", "anthropic"]) {
    test(`${which}: without a context, an instruction, or with tools that are not an array, the serialized form is sent unchanged`, async () => {
      const cases = [
        {},
        { context: CONTEXT },
        { instruction: INSTRUCTION },
        { context: { ...CONTEXT, tools: { read_file: { description: "an AI SDK ToolSet" } } }, instruction: INSTRUCTION },
        { context: { messages: [{ role: "user", content: 42 }] }, instruction: INSTRUCTION },
        { context: CONTEXT, instruction: "" },
        // Hostile values: a throwing getter, a revoked proxy, a throwing trap.
        { context: { get messages() { throw new Error("no messages") } }, instruction: INSTRUCTION },
        { context: { messages: revoked() }, instruction: INSTRUCTION },
        { context: { messages: new Proxy([CONTEXT.messages[0]], { get: (t, k) => (k === "0" ? boom() : t[k]) }) }, instruction: INSTRUCTION },
      ];
      for (const extra of cases) {
        const r = request(extra);
        const calls = await withReplies([TEXT[which]("summary")], () => summarizer(which)(r));
        assert.deepEqual(calls, [serializedBody(which, "m", r)], JSON.stringify(Object.keys(extra)));
      }
    });

    test(`${which}: a prefix reply without text gets one serialized call, whose text is the result`, async () => {
      const r = request({ context: CONTEXT, instruction: INSTRUCTION });
      let result;
      const calls = await withReplies([TEXT[which](""), TEXT[which]("the summary")], async () => {
        result = await summarizer(which)(r);
      });
      assert.equal(calls.length, 2);
      assert.equal(calls[0].messages.at(-1).role, "user");
      assert.notDeepEqual(calls[0], serializedBody(which, "m", r), "the first call is the prefix form");
      assert.deepEqual(calls[1], serializedBody(which, "m", r));
      assert.equal(result.text, "the summary");
    });

    test(`${which}: a refusal is no summary: the prefix form is asked again serialized, which rejects when refused too; text cut at the token limit is the summary, as pi takes it`, async () => {
      const stopped = (reason, text) => {
        const key = which === "openai" ? "finish_reason" : "stop_reason";
        const [status, body] = TEXT[which](text);
        return [status, { ...body, [key]: reason, ...(which === "openai" && { choices: [{ ...body.choices[0], finish_reason: reason }] }) }];
      };
      const [key, refusal, cut] = which === "openai" ? ["finish_reason", "content_filter", "length"] : ["stop_reason", "refusal", "max_tokens"];
      const r = request({ context: CONTEXT, instruction: INSTRUCTION });
      let result;
      const calls = await withReplies([stopped(refusal, "I can't help with that."), TEXT[which]("## Goal\nFix the parser.")], async () => {
        result = await summarizer(which)(r);
      });
      assert.equal(calls.length, 2);
      assert.deepEqual(calls[1], serializedBody(which, "m", r));
      assert.equal(result.text, "## Goal\nFix the parser.");
      const label = which === "openai" ? "OpenAI-compatible summarizer" : "Anthropic summarizer";
      const serialized = await withReplies([stopped(refusal, "No."), stopped(refusal, "No.")], async () => {
        await assert.rejects(summarizer(which)(request()), {
          message: `${label}: the model refused to summarize (${key}: "${refusal}")`,
        });
      });
      assert.equal(serialized.length, 1, "the serialized form is not asked twice");
      const once = await withReplies([stopped(cut, "## Goal\nFix the par")], async () => {
        result = await summarizer(which)(r);
      });
      assert.equal(once.length, 1, "no second request");
      assert.equal(result.text, "## Goal\nFix the par");
    });

    test(`${which}: an HTTP error or an abort of the prefix form is not retried`, async () => {
      const r = request({ context: CONTEXT, instruction: INSTRUCTION });
      const calls = await withReplies([[429, { error: { message: "slow down" } }], TEXT[which]("late")], async () => {
        await assert.rejects(summarizer(which)(r), (e) => e.status === 429 && /HTTP 429: slow down/.test(e.message));
      });
      assert.equal(calls.length, 1);
      const controller = new AbortController();
      controller.abort();
      const aborted = await withReplies([TEXT[which]("late")], async () => {
        await assert.rejects(summarizer(which)(request({ context: CONTEXT, instruction: INSTRUCTION, signal: controller.signal })), { name: "AbortError" });
      });
      assert.equal(aborted.length, 1);
    });
  }

  test("openai: a reply that also calls a tool is not a summary; the serialized form is asked", async () => {
    const r = request({ context: CONTEXT, instruction: INSTRUCTION });
    let result;
    const calls = await withReplies(
      [TEXT.openai("I'll read it first.", { tool_calls: [{ id: "c", type: "function", function: { name: "read_file", arguments: "{}" } }] }), TEXT.openai("the summary")],
      async () => {
        result = await summarizer("openai")(r);
      },
    );
    assert.equal(calls.length, 2);
    assert.equal(result.text, "the summary");
  });
});
