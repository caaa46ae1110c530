// The ready-made summarizer callbacks (openAiSummarizer, anthropicSummarizer)
// against the mock LLM server: the exact request each sends, the result and
// its usage, every error path, aborts and bad options. Needs a built pkg/
// (`node scripts/build.mjs`).
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, afterEach, before, describe, test } from "node:test";
import { complete } from "@mariozechner/pi-ai";
import { anthropicSummarizer, openAiSummarizer } from "agent-compaction";
import { MOCK_SUMMARY, MOCK_USAGE, PROVIDER_ERRORS, startMockLlm } from "../support/mock-llm-server.mjs";

const OPENAI = "OpenAI-compatible summarizer";
const ANTHROPIC = "Anthropic summarizer";

const SYSTEM = "You are a context summarization assistant. Do NOT continue the conversation.";
// Text that JSON must carry exactly: quotes, backslashes, newlines, emoji,
// CJK, a lone surrogate, and markup.
const PROMPT =
  '<conversation>\n[User]: Fix "src/main.rs" \\ path C:\\tmp\t😀 日本語 \ud800 </script>\n</conversation>\n\nSummarize.';

let mock;
before(async () => {
  mock = await startMockLlm();
});
after(() => mock.close());
afterEach(() => mock.reset());

const openAiBase = () => `${mock.url}v1`;
const anthropicBase = () => mock.url.slice(0, -1); // no trailing slash

function request(overrides = {}) {
  return {
    kind: "history",
    systemPrompt: SYSTEM,
    prompt: PROMPT,
    maxTokens: 13107,
    signal: new AbortController().signal,
    reason: "threshold",
    ...overrides,
  };
}

/** The only request the mock received. */
function onlyRequest() {
  assert.equal(mock.requests.length, 1, "exactly one request reached the server");
  return mock.requests[0];
}

/** Headers the summarizer chose (without the ones Node's fetch adds itself). */
function sentHeaders(record) {
  const fetchOwn = new Set(["host", "connection", "accept", "accept-language", "sec-fetch-mode", "user-agent", "accept-encoding", "content-length"]);
  return Object.fromEntries(Object.entries(record.headers).filter(([k]) => !fetchOwn.has(k)));
}

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };

/** The same reply read by pi-ai's own provider, for its usage. */
async function piUsage(api, baseUrl) {
  const model = {
    id: "mock-model",
    name: "mock",
    api,
    provider: api === "anthropic-messages" ? "anthropic" : "local",
    baseUrl,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 4096,
  };
  const reply = await complete(model, { systemPrompt: "s", messages: [{ role: "user", content: "u", timestamp: 1 }] }, { apiKey: "local" });
  assert.equal(reply.stopReason, "stop", reply.errorMessage);
  return reply.usage;
}

/** A port nothing listens on. */
async function closedPort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** Runs `body` with `globalThis.fetch` replaced by a recorder answering `reply`. */
async function withFetchStub(reply, body) {
  const calls = [];
  const original = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    calls.push({ url, init, body: JSON.parse(init.body), headers: new Headers(init.headers) });
    return new Response(JSON.stringify(reply), { status: 200, headers: { "content-type": "application/json" } });
  };
  try {
    await body();
  } finally {
    globalThis.fetch = original;
  }
  return calls;
}

const OPENAI_REPLY = { choices: [{ index: 0, message: { role: "assistant", content: "summary" }, finish_reason: "stop" }] };
const ANTHROPIC_REPLY = { type: "message", content: [{ type: "text", text: "summary" }], stop_reason: "end_turn" };

describe("openAiSummarizer", () => {
  test("POSTs an OpenAI Chat Completions request: path, method, headers and the exact JSON body", async () => {
    const summarize = openAiSummarizer({
      baseUrl: `${openAiBase()}/`, // a trailing slash is tolerated
      apiKey: "sk-test-123",
      model: "qwen2.5-7b-instruct",
      headers: { "X-App": "compaction-demo" },
    });
    await summarize(request());
    const sent = onlyRequest();
    assert.equal(sent.method, "POST");
    assert.equal(sent.path, "/v1/chat/completions");
    assert.equal(sent.url, "/v1/chat/completions");
    assert.deepEqual(sentHeaders(sent), {
      "content-type": "application/json",
      authorization: "Bearer sk-test-123",
      "x-app": "compaction-demo",
    });
    // A non-OpenAI server gets `max_tokens`, which every compatible server knows.
    const expected = {
      model: "qwen2.5-7b-instruct",
      messages: [
        { role: "system", content: SYSTEM },
        { role: "user", content: PROMPT },
      ],
      max_tokens: 13107,
      stream: false,
    };
    assert.equal(sent.rawBody, JSON.stringify(expected), "exact JSON, fields in this order");
    assert.deepEqual(sent.body, expected);
    assert.equal(sent.body.messages[1].content, PROMPT, "the prompt arrives unchanged, lone surrogate included");
  });

  test("resolves to the reply's text and its usage in pi-ai's shape, as pi-ai's own provider reads it", async () => {
    const summarize = openAiSummarizer({ baseUrl: openAiBase(), model: "m" });
    const result = await summarize(request());
    const { prompt_tokens, completion_tokens, total_tokens } = MOCK_USAGE.openai;
    const cached = MOCK_USAGE.openai.prompt_tokens_details.cached_tokens;
    assert.deepEqual(result, {
      text: MOCK_SUMMARY,
      usage: {
        input: prompt_tokens - cached, // pi-ai's `input` excludes cache hits
        output: completion_tokens,
        cacheRead: cached,
        cacheWrite: 0,
        totalTokens: total_tokens,
        cost: ZERO_COST,
      },
    });
    assert.deepEqual(result.usage, await piUsage("openai-completions", openAiBase()));
  });

  test("without apiKey (the app's own proxy) sends no authorization; given headers replace defaults", async () => {
    await openAiSummarizer({ baseUrl: openAiBase(), model: "m" })(request());
    await openAiSummarizer({
      baseUrl: openAiBase(),
      apiKey: "sk-page",
      model: "m",
      headers: { Authorization: "Proxy session-42", "Content-Type": "application/json; charset=utf-8" },
    })(request());
    const [proxied, replaced] = mock.requests;
    assert.deepEqual(sentHeaders(proxied), { "content-type": "application/json" });
    assert.deepEqual(sentHeaders(replaced), {
      "content-type": "application/json; charset=utf-8",
      authorization: "Proxy session-42",
    });
  });

  test("options.headers may also be a Headers, a Map or an array of pairs", async () => {
    for (const headers of [new Headers({ "x-trace": "abc" }), new Map([["x-trace", "abc"]]), [["X-Trace", "abc"]]]) {
      await openAiSummarizer({ baseUrl: openAiBase(), model: "m", headers })(request());
    }
    assert.deepEqual(mock.requests.map((r) => sentHeaders(r)), Array(3).fill({ "content-type": "application/json", "x-trace": "abc" }));
  });

  test("maxTokens is sent as an integer (rounded down); an empty system prompt sends no system message", async () => {
    await openAiSummarizer({ baseUrl: openAiBase(), model: "m" })(request({ maxTokens: 13107.2, systemPrompt: "" }));
    assert.deepEqual(onlyRequest().body, {
      model: "m",
      messages: [{ role: "user", content: PROMPT }],
      max_tokens: 13107,
      stream: false,
    });
  });

  test("api.openai.com and Azure OpenAI get max_completion_tokens (their reasoning models refuse max_tokens); maxTokensField overrides", async () => {
    const calls = await withFetchStub(OPENAI_REPLY, async () => {
      await openAiSummarizer({ baseUrl: "https://api.openai.com/v1", apiKey: "sk", model: "gpt-5-mini" })(request());
      await openAiSummarizer({ baseUrl: "https://my-res.openai.azure.com/openai/v1/", apiKey: "k", model: "gpt-4.1" })(request());
      await openAiSummarizer({ baseUrl: "https://api.openai.com/v1", model: "gpt-4o", maxTokensField: "max_tokens" })(request());
    });
    assert.deepEqual(calls.map((c) => c.url), [
      "https://api.openai.com/v1/chat/completions",
      "https://my-res.openai.azure.com/openai/v1/chat/completions",
      "https://api.openai.com/v1/chat/completions",
    ]);
    assert.deepEqual(calls.map((c) => Object.keys(c.body)), [
      ["model", "messages", "max_completion_tokens", "stream"],
      ["model", "messages", "max_completion_tokens", "stream"],
      ["model", "messages", "max_tokens", "stream"],
    ]);
    assert.equal(calls[0].body.max_completion_tokens, 13107);
    assert.equal(calls[0].init.method, "POST");

    // and a proxy in front of OpenAI can ask for it
    await openAiSummarizer({ baseUrl: openAiBase(), model: "o4-mini", maxTokensField: "max_completion_tokens" })(request());
    assert.equal(onlyRequest().rawBody, JSON.stringify({
      model: "o4-mini",
      messages: [{ role: "system", content: SYSTEM }, { role: "user", content: PROMPT }],
      max_completion_tokens: 13107,
      stream: false,
    }));
  });

  test("content given as text parts is joined; a reply without usage gives a result without usage", async () => {
    mock.setMode({
      status: 200,
      json: {
        choices: [{ index: 0, message: { role: "assistant", content: [{ type: "text", text: "part one, " }, { type: "text", text: "part two" }] }, finish_reason: "stop" }],
      },
    });
    const result = await openAiSummarizer({ baseUrl: openAiBase(), model: "m" })(request());
    assert.deepEqual(result, { text: "part one, part two" });
    assert.equal("usage" in result, false);
  });

  test("passes request.signal to fetch: an abort rejects with fetch's AbortError, unwrapped, and the connection is dropped", async () => {
    mock.setMode("hang");
    const controller = new AbortController();
    const pending = openAiSummarizer({ baseUrl: openAiBase(), model: "m" })(request({ signal: controller.signal }));
    const [sent] = await mock.waitForRequests(1);
    assert.equal(sent.path, "/v1/chat/completions");
    controller.abort();
    await assert.rejects(pending, (err) => {
      assert.equal(err.name, "AbortError");
      assert.ok(!String(err.message).startsWith(OPENAI), `not wrapped: ${err.message}`);
      return true;
    });
    await sent.closed;
    assert.equal(sent.aborted, true, "the server saw the client go away");
  });
});

describe("anthropicSummarizer", () => {
  test("POSTs an Anthropic Messages request: path, method, every header and the exact JSON body", async () => {
    const summarize = anthropicSummarizer({
      apiKey: "sk-ant-test",
      model: "claude-haiku-4-5",
      baseUrl: `${anthropicBase()}/`,
      headers: { "anthropic-beta": "prompt-caching-2024-07-31" },
    });
    await summarize(request());
    const sent = onlyRequest();
    assert.equal(sent.method, "POST");
    assert.equal(sent.path, "/v1/messages");
    assert.deepEqual(sentHeaders(sent), {
      "content-type": "application/json",
      "x-api-key": "sk-ant-test",
      "anthropic-version": "2023-06-01",
      "anthropic-dangerous-direct-browser-access": "true",
      "anthropic-beta": "prompt-caching-2024-07-31",
    });
    assert.equal(sent.headers.authorization, undefined);
    const expected = {
      model: "claude-haiku-4-5",
      max_tokens: 13107,
      system: SYSTEM,
      messages: [{ role: "user", content: PROMPT }],
    };
    assert.equal(sent.rawBody, JSON.stringify(expected), "exact JSON, fields in this order");
    assert.deepEqual(sent.body, expected);
  });

  test("defaults to https://api.anthropic.com/v1/messages", async () => {
    const calls = await withFetchStub(ANTHROPIC_REPLY, async () => {
      const result = await anthropicSummarizer({ apiKey: "sk-ant", model: "claude-sonnet-4-5" })(request());
      assert.deepEqual(result, { text: "summary" });
    });
    assert.equal(calls.length, 1);
    assert.equal(calls[0].url, "https://api.anthropic.com/v1/messages");
    assert.equal(calls[0].headers.get("x-api-key"), "sk-ant");
    assert.equal(calls[0].headers.get("anthropic-dangerous-direct-browser-access"), "true");
  });

  test("resolves to the text and usage in pi-ai's shape, as pi-ai's own provider reads it", async () => {
    const result = await anthropicSummarizer({ apiKey: "k", model: "m", baseUrl: anthropicBase() })(request());
    const u = MOCK_USAGE.anthropic;
    assert.deepEqual(result, {
      text: MOCK_SUMMARY,
      usage: {
        input: u.input_tokens,
        output: u.output_tokens,
        cacheRead: u.cache_read_input_tokens,
        cacheWrite: u.cache_creation_input_tokens,
        totalTokens: u.input_tokens + u.output_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
        cost: ZERO_COST,
      },
    });
    assert.deepEqual(result.usage, await piUsage("anthropic-messages", anthropicBase()));
  });

  test("joins the text blocks with newlines, skipping thinking and tool blocks", async () => {
    mock.setMode({
      status: 200,
      json: {
        type: "message",
        role: "assistant",
        content: [
          { type: "thinking", thinking: "let me think", signature: "sig" },
          { type: "text", text: "## Goal\nfirst" },
          { type: "tool_use", id: "t1", name: "read", input: {} },
          { type: "text", text: "## Next Steps\nsecond" },
        ],
        stop_reason: "end_turn",
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    });
    const result = await anthropicSummarizer({ apiKey: "k", model: "m", baseUrl: anthropicBase() })(request());
    assert.equal(result.text, "## Goal\nfirst\n## Next Steps\nsecond");
    assert.deepEqual(result.usage, { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: ZERO_COST });
  });

  test("an empty system prompt is left out", async () => {
    await anthropicSummarizer({ apiKey: "k", model: "m", baseUrl: anthropicBase() })(request({ systemPrompt: "" }));
    assert.deepEqual(onlyRequest().body, { model: "m", max_tokens: 13107, messages: [{ role: "user", content: PROMPT }] });
  });

  test("with a baseUrl (the app's own proxy) apiKey may be left out: no x-api-key is sent", async () => {
    await anthropicSummarizer({ model: "m", baseUrl: anthropicBase() })(request());
    const sent = onlyRequest();
    assert.equal(sent.headers["x-api-key"], undefined);
    assert.equal(sent.headers["anthropic-version"], "2023-06-01");
  });

  test("an abort rejects with fetch's AbortError, unwrapped", async () => {
    mock.setMode("hang");
    const controller = new AbortController();
    const pending = anthropicSummarizer({ apiKey: "k", model: "m", baseUrl: anthropicBase() })(request({ signal: controller.signal }));
    const [sent] = await mock.waitForRequests(1);
    assert.equal(sent.path, "/v1/messages");
    controller.abort();
    await assert.rejects(pending, { name: "AbortError" });
    await sent.closed;
    assert.equal(sent.aborted, true);
  });
});

const PROVIDERS = [
  { name: "openai", label: OPENAI, make: () => openAiSummarizer({ baseUrl: openAiBase(), apiKey: "sk", model: "m" }) },
  { name: "anthropic", label: ANTHROPIC, make: () => anthropicSummarizer({ apiKey: "k", model: "m", baseUrl: anthropicBase() }) },
];

describe("errors", () => {
  for (const { name, label, make } of PROVIDERS) {
    for (const status of [400, 401, 429, 500, 529]) {
      test(`${name}: HTTP ${status} rejects with the provider's own message and the status`, async () => {
        mock.setMode(`error${status}`);
        const providerMessage = PROVIDER_ERRORS[name][status].error.message;
        await assert.rejects(make()(request()), (err) => {
          assert.ok(err instanceof Error);
          assert.equal(err.name, "Error");
          assert.equal(err.message, `${label}: HTTP ${status}: ${providerMessage}`);
          assert.equal(err.status, status);
          return true;
        });
        assert.equal(mock.requests.length, 1, "no retry");
      });
    }

    test(`${name}: an error body with status 200 is an error too`, async () => {
      mock.setMode({ status: 200, json: PROVIDER_ERRORS[name][529] });
      await assert.rejects(make()(request()), {
        message: `${label}: HTTP 200: ${PROVIDER_ERRORS[name][529].error.message}`,
      });
    });

    test(`${name}: a reply with no text rejects ("no text in the response")`, async () => {
      mock.setMode("empty");
      await assert.rejects(make()(request()), (err) => {
        assert.equal(err.name, "Error");
        assert.match(err.message, new RegExp(`^${label}: no text in the response \\((finish|stop)_reason: "(stop|end_turn)"\\)$`));
        return true;
      });
    });

    test(`${name}: a malformed JSON body rejects with the status and the start of the body`, async () => {
      mock.setMode("malformed");
      await assert.rejects(make()(request()), (err) => {
        assert.match(err.message, new RegExp(`^${label}: HTTP 200: the response is not a JSON object: \\{"id":"chatcmpl-mock"`));
        return true;
      });
    });

    test(`${name}: a non-JSON error page (a proxy's 502) rejects with its text`, async () => {
      mock.setMode({ status: 502, body: "<html><body><h1>502 Bad Gateway</h1></body></html>", headers: { "content-type": "text/html" } });
      await assert.rejects(make()(request()), {
        message: `${label}: HTTP 502: <html><body><h1>502 Bad Gateway</h1></body></html>`,
        status: 502,
      });
    });
  }

  test("an OpenAI reply whose budget went to reasoning says why there is no text", async () => {
    mock.setMode({
      status: 200,
      json: { choices: [{ index: 0, message: { role: "assistant", content: null, reasoning_content: "..." }, finish_reason: "length" }] },
    });
    await assert.rejects(PROVIDERS[0].make()(request()), {
      message: `${OPENAI}: no text in the response (finish_reason: "length")`,
    });
  });

  test("other OpenAI-compatible error shapes: a bare error string, vLLM's top-level message", async () => {
    const summarize = PROVIDERS[0].make();
    mock.setMode({ status: 404, json: { error: "model 'llama3' not found, try pulling it first" } });
    await assert.rejects(summarize(request()), { message: `${OPENAI}: HTTP 404: model 'llama3' not found, try pulling it first` });
    mock.setMode({ status: 400, json: { object: "error", message: "max_tokens must be at least 1", type: "BadRequestError", param: null, code: 400 } });
    await assert.rejects(summarize(request()), { message: `${OPENAI}: HTTP 400: max_tokens must be at least 1` });
  });

  for (const { name, label } of PROVIDERS) {
    test(`${name}: a network failure rejects with an Error naming the URL, with fetch's error as cause`, async () => {
      const port = await closedPort();
      const summarize =
        name === "openai"
          ? openAiSummarizer({ baseUrl: `http://127.0.0.1:${port}/v1`, model: "m" })
          : anthropicSummarizer({ apiKey: "k", model: "m", baseUrl: `http://127.0.0.1:${port}` });
      const path = name === "openai" ? "/v1/chat/completions" : "/v1/messages";
      await assert.rejects(summarize(request()), (err) => {
        assert.equal(err.name, "Error");
        assert.ok(err.message.startsWith(`${label}: POST http://127.0.0.1:${port}${path} failed: fetch failed`), err.message);
        assert.match(err.message, /ECONNREFUSED/);
        assert.ok(err.cause instanceof TypeError, "fetch's own error is the cause");
        return true;
      });
    });
  }

  test("an abort with a reason rejects with that reason itself", async () => {
    mock.setMode("hang");
    const controller = new AbortController();
    const reason = new Error("compaction cancelled by the user");
    const pending = PROVIDERS[0].make()(request({ signal: controller.signal }));
    await mock.waitForRequests(1);
    controller.abort(reason);
    await assert.rejects(pending, (err) => err === reason);
  });

  test("an already aborted signal rejects with an AbortError and sends nothing", async () => {
    for (const { make } of PROVIDERS) {
      await assert.rejects(make()(request({ signal: AbortSignal.abort() })), { name: "AbortError" });
    }
    assert.equal(mock.requests.length, 0);
  });

  test("a bad request rejects with a TypeError naming the field, a RangeError for a number out of range (the call itself never throws)", async () => {
    const summarize = PROVIDERS[0].make();
    const cases = [
      [undefined, `${OPENAI}: request must be an object, got undefined`],
      [request({ prompt: 42 }), `${OPENAI}: request.prompt must be a string, got a number`],
      [request({ systemPrompt: undefined }), `${OPENAI}: request.systemPrompt must be a string, got undefined`],
      [request({ maxTokens: 0 }), `${OPENAI}: request.maxTokens must be a number ≥ 1, got 0`, RangeError],
      [request({ maxTokens: "100" }), `${OPENAI}: request.maxTokens must be a number ≥ 1, got a string`],
      [request({ maxTokens: Infinity }), `${OPENAI}: request.maxTokens must be a number ≥ 1, got Infinity`, RangeError],
    ];
    for (const [req, message, kind = TypeError] of cases) {
      const result = summarize(req);
      assert.ok(result instanceof Promise);
      await assert.rejects(result, (err) => err.constructor === kind && err.message === message);
    }
    assert.equal(mock.requests.length, 0);
  });
});

describe("bad options", () => {
  test("openAiSummarizer throws a TypeError naming the field", () => {
    const cases = [
      [undefined, "openAiSummarizer: options must be an object, got undefined"],
      [{ model: "m" }, "openAiSummarizer: options.baseUrl must be a non-empty string, got undefined"],
      [{ baseUrl: "", model: "m" }, 'openAiSummarizer: options.baseUrl must be a non-empty string, got ""'],
      [{ baseUrl: 8080, model: "m" }, "openAiSummarizer: options.baseUrl must be a non-empty string, got a number"],
      [{ baseUrl: "http://x/v1" }, "openAiSummarizer: options.model must be a non-empty string, got undefined"],
      [{ baseUrl: "http://x/v1", model: "m", apiKey: 123 }, "openAiSummarizer: options.apiKey must be a string, got a number"],
      [{ baseUrl: "http://x/v1", model: "m", headers: "x-a: 1" }, "openAiSummarizer: options.headers must be an object of strings, a Headers or an array of [name, value] pairs, got a string"],
      [{ baseUrl: "http://x/v1", model: "m", headers: { "x-n": 1 } }, 'openAiSummarizer: options.headers["x-n"] must be a string, got a number'],
      [{ baseUrl: "http://x/v1", model: "m", maxTokensField: "tokens" }, 'openAiSummarizer: options.maxTokensField must be "max_tokens" or "max_completion_tokens", got "tokens"'],
    ];
    for (const [options, message] of cases) {
      assert.throws(() => openAiSummarizer(options), (err) => err instanceof TypeError && err.message === message, message);
    }
    assert.throws(
      () => openAiSummarizer({ baseUrl: "http://x/v1", model: "m", headers: { "bad name": "1" } }),
      (err) => err instanceof TypeError && err.message.startsWith('openAiSummarizer: options.headers["bad name"] is not a valid header: '),
    );
    // the value is never quoted: it may be a key
    assert.throws(
      () => openAiSummarizer({ baseUrl: "http://x/v1", model: "m", headers: { authorization: "Bearer sk-\nsecret" } }),
      (err) => err instanceof TypeError && err.message.startsWith('openAiSummarizer: options.headers["authorization"] is not a valid header: ') && !err.message.includes("secret"),
    );
    assert.throws(
      () => openAiSummarizer({ baseUrl: "http://x/v1", model: "m", apiKey: "sk-secret\u2028" }),
      (err) => err instanceof TypeError && err.message === "openAiSummarizer: options.apiKey cannot be sent in the authorization header: it holds characters HTTP headers do not allow",
    );
    assert.throws(
      () => openAiSummarizer({ baseUrl: "http://x/v1", model: "m", get headers() { throw new Error("boom"); } }),
      (err) => err instanceof TypeError && err.message === "openAiSummarizer: options.headers could not be read: boom",
    );
  });

  test("anthropicSummarizer throws a TypeError naming the field", () => {
    const cases = [
      [null, "anthropicSummarizer: options must be an object, got null"],
      [{ model: "m" }, "anthropicSummarizer: options.apiKey must be a non-empty string (or give a baseUrl: your own proxy, which adds the key), got undefined"],
      [{ model: "m", apiKey: "" }, 'anthropicSummarizer: options.apiKey must be a non-empty string (or give a baseUrl: your own proxy, which adds the key), got ""'],
      [{ apiKey: "k" }, "anthropicSummarizer: options.model must be a non-empty string, got undefined"],
      [{ apiKey: "k", model: ["m"] }, "anthropicSummarizer: options.model must be a non-empty string, got an array"],
      [{ apiKey: "k", model: "m", baseUrl: 1 }, "anthropicSummarizer: options.baseUrl must be a string, got a number"],
      [{ apiKey: "k", model: "m", headers: [["a"]] }, "anthropicSummarizer: options.headers[0] must be a [name, value] pair of strings"],
      [{ apiKey: "k", model: "m", headers: new Date() }, "anthropicSummarizer: options.headers must be an object of strings, a Headers or an array of [name, value] pairs, got an object"],
      [{ apiKey: "sk-ant-\nsecret", model: "m" }, "anthropicSummarizer: options.apiKey cannot be sent in the x-api-key header: it holds characters HTTP headers do not allow"],
    ];
    for (const [options, message] of cases) {
      assert.throws(() => anthropicSummarizer(options), (err) => err instanceof TypeError && err.message === message, message);
    }
  });

  test("a summarizer made with good options is a function returning a Promise", async () => {
    const summarize = openAiSummarizer({ baseUrl: openAiBase(), model: "m" });
    assert.equal(typeof summarize, "function");
    const result = summarize(request());
    assert.ok(result instanceof Promise);
    await result;
  });
});
