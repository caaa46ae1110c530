// The local model's prompt caches (scripts/lib/prompt-cache.mjs), the
// provider behaviour the session-cost benchmark prices: OpenAI's documented
// rules (exact prefix, 1,024 tokens at least, 128-token increments) and
// Anthropic's (breakpoints, a 20-block lookback, writes and reads apart),
// read through pi-ai's own clients as an agent sees them.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { Agent } from "@mariozechner/pi-agent-core";
import { complete, isContextOverflow } from "@mariozechner/pi-ai";
import { cachedTokensOf, createAnthropicCache, createPromptCache, promptPieces } from "../../scripts/lib/prompt-cache.mjs";
import { createLocalModel, demoAgentTools } from "../../scripts/local-model.mjs";
import { startServer } from "../../scripts/serve.mjs";

const text = (n, seed = "a") => `${seed} `.repeat(n / 2);
const body = (...contents) => ({ messages: contents.map((content, i) => ({ role: i % 2 ? "assistant" : "user", content })) });

describe("the cache's rules", () => {
  test("no hit under 1,024 tokens, hits in increments of 128 above", () => {
    assert.equal(cachedTokensOf(4 * 1023, 5000), 0);
    assert.equal(cachedTokensOf(4 * 1024, 5000), 1024);
    assert.equal(cachedTokensOf(4 * 1151, 5000), 1024);
    assert.equal(cachedTokensOf(4 * 1152, 5000), 1152);
    assert.equal(cachedTokensOf(4 * 3000, 1000), 0, "a prompt under 1,024 tokens is never served from the cache");
    assert.equal(cachedTokensOf(4 * 9000, 2000), 1920, "never more than the prompt");
  });

  test("a repeated prefix is served, a changed beginning is not", () => {
    const cache = createPromptCache();
    const first = body(text(8000), text(200, "b"));
    const p1 = Math.ceil(promptPieces(first).join("").length / 4);
    assert.equal(cache.lookup(first, p1), 0, "the first request computes everything");
    const next = body(text(8000), text(200, "b"), text(400, "c"));
    const hit = cache.lookup(next, p1 + 100);
    assert.ok(hit >= p1 - 128 && hit <= p1, `the previous request is served: ${hit} of ${p1}`);
    assert.equal(hit % 128, 0);
    const changed = body(text(8000, "z"), text(200, "b"), text(400, "c"));
    assert.equal(cache.lookup(changed, p1 + 100), 0, "a different first message shares nothing");
  });

  test("the tools come first: other tools, no hit", () => {
    const cache = createPromptCache();
    const withTools = (name) => ({ tools: [{ type: "function", function: { name } }], ...body(text(8000)) });
    cache.lookup(withTools("read"), 2100);
    assert.equal(cache.lookup(withTools("write"), 2100), 0);
    assert.ok(cache.lookup(withTools("read"), 2100) >= 1024);
  });

  test("an entry unused for longer than its time to live is gone", () => {
    const cache = createPromptCache({ ttlMs: 1000 });
    const b = body(text(8000));
    cache.lookup(b, 2100, 0);
    assert.ok(cache.lookup(b, 2100, 900) >= 1024);
    assert.equal(cache.lookup(b, 2100, 5000), 0);
  });
});

describe("the local model with promptCache, through pi-ai", () => {
  let local;
  let server;
  let model;
  before(async () => {
    local = createLocalModel({ delayMs: 0, promptCache: true, contextWindow: 100_000 });
    server = await startServer({ port: 0, handlers: [local.handle], mounts: [] });
    model = {
      id: "local-coder",
      name: "local",
      api: "openai-completions",
      provider: "local",
      baseUrl: `${server.url}local/v1`,
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 100_000,
      maxTokens: 1000,
    };
  });
  after(() => server.close());
  beforeEach(() => local.reset({ keepConfig: true }));

  test("the second turn's request reads the first one's prompt from the cache, and pi-ai reports it as cacheRead", async () => {
    const messages = [{ role: "user", content: `Summarize this document: ${text(12_000)}`, timestamp: 1 }];
    const first = await complete(model, { systemPrompt: "You are terse.", messages }, { apiKey: "local" });
    assert.equal(first.usage.cacheRead, 0);
    messages.push(first, { role: "user", content: "And in one word?", timestamp: 2 });
    const second = await complete(model, { systemPrompt: "You are terse.", messages }, { apiKey: "local" });
    const [r1, r2] = local.requests;
    assert.ok(second.usage.cacheRead >= r1.promptTokens - 128, `cacheRead ${second.usage.cacheRead} of ${r1.promptTokens}`);
    assert.equal(second.usage.cacheRead, r2.cachedTokens);
    assert.equal(second.usage.input + second.usage.cacheRead, r2.promptTokens, "pi-ai's input excludes the cached tokens");
  });

  test("time per token: an uncached prompt takes its time, the same prompt cached reads in a fraction of it", async () => {
    local.setConfig({ inputMsPerToken: 0.05, cachedInputMsPerToken: 0.005 });
    try {
      const messages = [{ role: "user", content: text(24_000), timestamp: 1 }];
      const timed = async () => {
        const start = performance.now();
        await complete(model, { messages }, { apiKey: "local" });
        return performance.now() - start;
      };
      const cold = await timed();
      const warm = await timed();
      // ~6,000 prompt tokens: 300 ms uncached, 30 ms cached.
      assert.ok(cold >= 290, `uncached: ${cold} ms`);
      assert.ok(warm < cold / 2, `cached: ${warm} ms against ${cold} ms`);
    } finally {
      local.setConfig({ inputMsPerToken: 0, cachedInputMsPerToken: 0 });
    }
  });

  test("the timing fields are checked like the others", () => {
    assert.throws(() => local.setConfig({ outputMsPerToken: -1 }), /outputMsPerToken" must be a number ≥ 0/);
    assert.throws(() => local.setConfig({ promptCache: "yes" }), /promptCache" must be a boolean/);
  });
});

describe("Anthropic's rules", () => {
  const EPHEMERAL = { type: "ephemeral" };
  const block = (text, marked = false) => (marked ? { type: "text", text, cache_control: EPHEMERAL } : { type: "text", text });
  const request = (...turns) => ({
    system: [block(text(8000, "s"), true)],
    messages: turns.map((content, i) => ({ role: i % 2 ? "assistant" : "user", content })),
  });

  test("a breakpoint writes its prefix; the next request reads it and writes only what is new", () => {
    const cache = createAnthropicCache();
    const first = cache.lookup(request([block(text(8000, "u"), true)]));
    assert.deepEqual(first, { input: 0, read: 0, written: 4000 });
    const second = cache.lookup(request([block(text(8000, "u"))], [block("ok")], [block(text(400, "v"), true)]));
    assert.equal(second.read, 4000, "the first request's prefix, found at a block before the new breakpoint");
    assert.equal(second.written, Math.floor((16_000 + 2 + 400) / 4) - 4000);
    assert.equal(second.input, 1, "only rounding is left outside the breakpoints");
  });

  test("without a breakpoint nothing is cached; under 1,024 tokens nothing is written", () => {
    const cache = createAnthropicCache();
    const plain = { messages: [{ role: "user", content: [block(text(8000))] }] };
    assert.deepEqual(cache.lookup(plain), { input: 2000, read: 0, written: 0 });
    assert.deepEqual(cache.lookup(plain), { input: 2000, read: 0, written: 0 });
    const small = { messages: [{ role: "user", content: [block(text(4000), true)] }] };
    assert.deepEqual(cache.lookup(small), { input: 1000, read: 0, written: 0 });
  });

  test("the lookback reaches 20 blocks before a breakpoint, not 21", () => {
    const turns = (n) => Array.from({ length: n }, (_, i) => [block(`step ${i}`)]);
    // 21 blocks later only the system prompt's own breakpoint is found.
    for (const [extra, expected] of [[20, 4000], [21, 2000]]) {
      const cache = createAnthropicCache();
      cache.lookup(request([block(text(8000, "u"), true)]));
      const later = request([block(text(8000, "u"))], ...turns(extra - 1), [block("last", true)]);
      assert.equal(cache.lookup(later).read, expected, `${extra} blocks later`);
    }
  });

  test("an entry unused for five minutes is gone", () => {
    const cache = createAnthropicCache();
    const r = request([block(text(8000, "u"), true)]);
    cache.lookup(r, 0);
    assert.equal(cache.lookup(r, 4 * 60_000).read, 4000);
    assert.equal(cache.lookup(r, 10 * 60_000).read, 0);
  });
});

describe("the local model's Anthropic Messages API, through pi-ai's Anthropic client", () => {
  let local;
  let server;
  let model;
  before(async () => {
    local = createLocalModel({ delayMs: 0, promptCache: true, contextWindow: 30_000 });
    server = await startServer({ port: 0, handlers: [local.handle], mounts: [] });
    model = {
      id: "claude-sonnet-4-5",
      name: "local",
      api: "anthropic-messages",
      provider: "anthropic",
      baseUrl: `${server.url}local`,
      reasoning: false,
      input: ["text"],
      cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      contextWindow: 30_000,
      maxTokens: 4000,
    };
  });
  after(() => server.close());
  beforeEach(() => local.reset({ keepConfig: true }));

  test("an agent with tools: tool calls run, and each request reads what the previous one wrote", async () => {
    const agent = new Agent({
      initialState: { model, systemPrompt: "You are a coding agent. ".repeat(300), tools: demoAgentTools(), messages: [] },
      getApiKey: () => "local",
    });
    await agent.prompt("Read src/parser.rs and fix the bug");
    await agent.prompt("Run the tests with `cargo test -p core`");
    const replies = agent.state.messages.filter((m) => m.role === "assistant");
    assert.deepEqual(replies.map((m) => m.stopReason), ["toolUse", "stop", "toolUse", "stop"]);
    assert.ok(agent.state.messages.some((m) => m.role === "toolResult" && m.toolName === "read_file"));
    const log = local.requests;
    assert.equal(log.length, 4);
    replies.forEach((m, i) => {
      assert.equal(m.usage.cacheRead, log[i].cachedTokens, `request ${i}: read`);
      assert.equal(m.usage.cacheWrite, log[i].cacheWriteTokens, `request ${i}: written`);
      assert.equal(m.usage.input + m.usage.cacheRead + m.usage.cacheWrite, log[i].promptTokens);
    });
    assert.equal(log[0].cachedTokens, 0);
    for (let i = 1; i < 4; i++) {
      assert.equal(log[i].cachedTokens, log[i - 1].cachedTokens + log[i - 1].cacheWriteTokens, `request ${i} reads all the previous one cached`);
    }
  });

  test("a prompt over the window is Anthropic's prompt-too-long error, which pi recognizes as an overflow", async () => {
    const reply = await complete(model, { messages: [{ role: "user", content: text(130_000), timestamp: 1 }] }, { apiKey: "local" });
    assert.equal(reply.stopReason, "error");
    assert.match(reply.errorMessage, /prompt is too long: \d+ tokens > 30000 maximum/);
    assert.ok(isContextOverflow(reply, 30_000));
  });
});
