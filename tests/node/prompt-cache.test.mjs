// The local model's prompt cache (scripts/lib/prompt-cache.mjs), the
// provider behaviour the session-cost benchmark prices: OpenAI's documented
// rules (exact prefix, 1,024 tokens at least, 128-token increments), read
// through pi-ai's own OpenAI client as an agent sees it.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { complete } from "@mariozechner/pi-ai";
import { cachedTokensOf, createPromptCache, promptPieces } from "../../scripts/lib/prompt-cache.mjs";
import { createLocalModel } from "../../scripts/local-model.mjs";
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
