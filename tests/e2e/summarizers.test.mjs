// The ready-made summarizers in a real browser: a page served by
// scripts/serve.mjs imports /pkg/index.js and calls the mock LLM server on
// another origin (CORS preflights included), in each engine (Chromium,
// Firefox, WebKit through tests/support/browsers.mjs). Needs a built pkg/
// and the browsers scripts/setup.sh installs.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, afterEach, before, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";
import { MOCK_SUMMARY, MOCK_USAGE, PROVIDER_ERRORS, startMockLlm } from "../support/mock-llm-server.mjs";


const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>summarizers</title>
<script type="module">
  import * as pkg from "/pkg/index.js";
  window.pkg = pkg;
  // Runs a summarizer; resolves to { ok, result } or { ok: false, error }.
  window.runSummarizer = async (factory, options, request) => {
    const controller = new AbortController();
    window.controller = controller;
    try {
      const summarize = pkg[factory](options);
      const result = await summarize({ kind: "history", reason: "manual", signal: controller.signal, ...request });
      return { ok: true, result };
    } catch (e) {
      return { ok: false, error: { name: e.name, message: e.message, status: e.status, isError: e instanceof Error } };
    }
  };
  // The same, with every "{LONE}" in the request a lone surrogate (made in
  // the page: the drivers' own serialization may not carry one).
  window.runWithLone = (factory, options, request) =>
    window.runSummarizer(factory, options, JSON.parse(JSON.stringify(request).replaceAll("{LONE}", "\\ud800")));
  document.documentElement.dataset.ready = "true";
</script>`;

const REQUEST = { systemPrompt: "You summarize.", prompt: "Summarize: 日本語 😀 \"quoted\"", maxTokens: 1000 };

for (const engine of ENGINES) {
  describe(engine, () => {
    let mock;
    let server;
    let browser;
    let page;
    const problems = [];

    before(async () => {
      mock = await startMockLlm();
      server = await startServer({
        port: 0,
        handlers: [
          pageHandler("/summarizers.html", PAGE),
        ],
      });
      browser = await launch(engine);
      page = await browser.newPage();
      page.onProblem((p) => p.startsWith("pageerror: ") && problems.push(p));
      await page.goto(`${server.url}summarizers.html`);
      await page.waitForFunction(() => document.documentElement.dataset.ready === "true", null, { timeout: 10_000 });
    });

    after(async () => {
      await browser?.close();
      await server?.close();
      await mock?.close();
    });

    afterEach(async () => {
      mock.reset();
      await page.flush();
      assert.deepEqual(problems, []);
    });

    const pageOrigin = () => server.url.slice(0, -1);
    const run = (factory, options, request = REQUEST) =>
      page.evaluate(([f, o, r]) => window.runSummarizer(f, o, r), [factory, options, request]);

    test("the two origins differ, so every call below is a cross-origin request", () => {
      assert.notEqual(new URL(server.url).origin, new URL(mock.url).origin);
    });

    test("openAiSummarizer from a page: preflight, then the request with its headers and body; text and usage", async () => {
      const out = await run("openAiSummarizer", { baseUrl: `${mock.url}v1`, apiKey: "sk-browser", model: "local-model" });
      assert.equal(out.ok, true, JSON.stringify(out.error));
      const cached = MOCK_USAGE.openai.prompt_tokens_details.cached_tokens;
      assert.deepEqual(out.result, {
        text: MOCK_SUMMARY,
        usage: {
          input: MOCK_USAGE.openai.prompt_tokens - cached,
          output: MOCK_USAGE.openai.completion_tokens,
          cacheRead: cached,
          cacheWrite: 0,
          totalTokens: MOCK_USAGE.openai.total_tokens,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
      });

      assert.equal(mock.requests.length, 1);
      const [sent] = mock.requests;
      assert.equal(sent.method, "POST");
      assert.equal(sent.path, "/v1/chat/completions");
      assert.equal(sent.headers.origin, pageOrigin());
      assert.equal(sent.headers["sec-fetch-mode"], "cors");
      assert.equal(sent.headers.authorization, "Bearer sk-browser");
      assert.equal(sent.headers["content-type"], "application/json");
      assert.deepEqual(sent.body, {
        model: "local-model",
        messages: [
          { role: "system", content: REQUEST.systemPrompt },
          { role: "user", content: REQUEST.prompt },
        ],
        max_tokens: 1000,
        stream: false,
      });

      // authorization and a JSON content-type are not "simple": the browser asked first
      const preflight = mock.preflights.find((p) => p.path === "/v1/chat/completions");
      assert.ok(preflight, "a CORS preflight was sent");
      assert.equal(preflight.headers["access-control-request-method"], "POST");
      assert.deepEqual(preflight.headers["access-control-request-headers"].split(",").sort(), ["authorization", "content-type"]);
    });

    test("anthropicSummarizer from a page sends the browser-access header Anthropic requires", async () => {
      const out = await run("anthropicSummarizer", { apiKey: "sk-ant-browser", model: "claude-haiku-4-5", baseUrl: mock.url });
      assert.equal(out.ok, true, JSON.stringify(out.error));
      assert.equal(out.result.text, MOCK_SUMMARY);
      assert.equal(out.result.usage.cacheWrite, MOCK_USAGE.anthropic.cache_creation_input_tokens);

      const [sent] = mock.requests;
      assert.equal(sent.path, "/v1/messages");
      assert.equal(sent.headers.origin, pageOrigin());
      assert.equal(sent.headers["x-api-key"], "sk-ant-browser");
      assert.equal(sent.headers["anthropic-version"], "2023-06-01");
      assert.equal(sent.headers["anthropic-dangerous-direct-browser-access"], "true");
      assert.deepEqual(sent.body, {
        model: "claude-haiku-4-5",
        max_tokens: 1000,
        system: REQUEST.systemPrompt,
        messages: [{ role: "user", content: REQUEST.prompt }],
      });
      const preflight = mock.preflights.find((p) => p.path === "/v1/messages");
      assert.deepEqual(preflight.headers["access-control-request-headers"].split(",").sort(), [
        "anthropic-dangerous-direct-browser-access",
        "anthropic-version",
        "content-type",
        "x-api-key",
      ]);
    });

    test("the prefix form from a page: the context as pi-ai sends it, lone surrogates removed, then the instruction", async () => {
      const context = {
        systemPrompt: "Be brief.",
        messages: [
          { role: "user", content: "Fix it {LONE}now", timestamp: 1 },
          {
            role: "assistant",
            content: [{ type: "text", text: "Reading." }, { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.rs" } }],
            api: "openai-completions",
            provider: "local",
            model: "local-model",
            stopReason: "toolUse",
            timestamp: 2,
          },
          { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "fn a() {}" }], isError: false, timestamp: 3 },
        ],
        tools: [{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }],
      };
      const request = { ...REQUEST, context, instruction: "Summarize the conversation above." };
      const openAi = await page.evaluate(([o, r]) => window.runWithLone("openAiSummarizer", o, r), [{ baseUrl: `${mock.url}v1`, model: "local-model" }, request]);
      assert.equal(openAi.ok, true, JSON.stringify(openAi.error));
      assert.deepEqual(mock.requests[0].body, {
        model: "local-model",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Fix it now" },
          { role: "assistant", content: "Reading.", tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a.rs"}' } }] },
          { role: "tool", content: "fn a() {}", tool_call_id: "c1" },
          { role: "user", content: "Summarize the conversation above." },
        ],
        max_tokens: 1000,
        stream: false,
        tools: [{ type: "function", function: { ...context.tools[0], strict: false } }],
      });
      const anthropic = await page.evaluate(([o, r]) => window.runWithLone("anthropicSummarizer", o, r), [{ baseUrl: mock.url, model: "claude-haiku-4-5", apiKey: "k" }, request]);
      assert.equal(anthropic.ok, true, JSON.stringify(anthropic.error));
      const cache_control = { type: "ephemeral" };
      assert.deepEqual(mock.requests[1].body, {
        model: "claude-haiku-4-5",
        messages: [
          { role: "user", content: "Fix it now" },
          { role: "assistant", content: [{ type: "text", text: "Reading." }, { type: "tool_use", id: "c1", name: "read", input: { path: "a.rs" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "fn a() {}", is_error: false, cache_control }] },
          { role: "user", content: [{ type: "text", text: "Summarize the conversation above.", cache_control }] },
        ],
        max_tokens: 1000,
        system: [{ type: "text", text: "Be brief.", cache_control }],
        tools: [{ name: "read", description: "Read a file", eager_input_streaming: true, input_schema: context.tools[0].parameters, cache_control }],
      });
    });

    test("a provider error reaches the page with the provider's message and status", async () => {
      mock.setMode("error429");
      const out = await run("openAiSummarizer", { baseUrl: `${mock.url}v1`, model: "m" });
      assert.deepEqual(out, {
        ok: false,
        error: {
          name: "Error",
          message: `OpenAI-compatible summarizer: HTTP 429: ${PROVIDER_ERRORS.openai[429].error.message}`,
          status: 429,
          isError: true,
        },
      });
      mock.setMode("error401");
      const anthropic = await run("anthropicSummarizer", { apiKey: "bad", model: "m", baseUrl: mock.url });
      assert.equal(anthropic.error.message, "Anthropic summarizer: HTTP 401: invalid x-api-key");
    });

    test("an abort in the page rejects with the browser's AbortError and drops the connection", async () => {
      mock.setMode("hang");
      await page.evaluate((base) => {
        window.pending = window.runSummarizer("openAiSummarizer", { baseUrl: base, model: "m" }, {
          systemPrompt: "s",
          prompt: "p",
          maxTokens: 10,
        });
      }, `${mock.url}v1`);
      const [sent] = await mock.waitForRequests(1);
      await page.evaluate(() => window.controller.abort());
      const out = await page.evaluate(() => window.pending);
      assert.equal(out.ok, false);
      assert.equal(out.error.name, "AbortError");
      assert.ok(!out.error.message.startsWith("OpenAI-compatible summarizer"), out.error.message);
      await sent.closed;
      assert.equal(sent.aborted, true);
    });

    test("a network failure in the page is an Error naming the URL", async () => {
      const probe = createServer();
      await new Promise((r) => probe.listen(0, "127.0.0.1", r));
      const { port } = probe.address();
      await new Promise((r) => probe.close(r));
      const out = await run("openAiSummarizer", { baseUrl: `http://127.0.0.1:${port}/v1`, model: "m" });
      assert.equal(out.ok, false);
      assert.equal(out.error.name, "Error");
      // The engine's own words for a refused connection ("Failed to fetch",
      // "NetworkError when attempting to fetch resource.", "Load failed").
      const own = await page.evaluate((url) => fetch(url, { method: "POST" }).then(() => "answered", (e) => e.message), `http://127.0.0.1:${port}/v1/chat/completions`);
      assert.notEqual(own, "answered");
      assert.equal(out.error.message, `OpenAI-compatible summarizer: POST http://127.0.0.1:${port}/v1/chat/completions failed: ${own}`);
    });
  });
}
