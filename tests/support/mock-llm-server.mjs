// A mock LLM server for tests and the demo: OpenAI Chat Completions
// (`POST {prefix}/chat/completions`) and Anthropic Messages
// (`POST {prefix}/messages`), with `prefix` = "/v1" by default, plus
// `GET {prefix}/models`. Dependency-free (node:http), 127.0.0.1 only.
//
//   const mock = await startMockLlm();            // { url, port, requests, setMode, close, ... }
//   openAiSummarizer({ baseUrl: `${mock.url}v1`, model: "m" });
//   anthropicSummarizer({ baseUrl: mock.url.slice(0, -1), apiKey: "k", model: "m" });
//
// Every request is recorded (`requests`; CORS preflights in `preflights`)
// with its method, path, headers and parsed JSON body. What it answers is
// switched with `setMode(mode)`:
//   "text"       a normal reply with usage (the default)
//   "empty"      a reply with no text
//   "hang"       no answer until the client gives up (the record's
//                `aborted` turns true and `closed` resolves when it does)
//   "malformed"  200 with a truncated JSON body
//   "error400" | "error401" | "error429" | "error500" | "error529"
//                the provider's real error body with that status
//   { text, usage? }         a normal reply with this text
//   { toolCalls, usage? }    OpenAI only: an answer that calls tools,
//                            `toolCalls` = [{ id, name, arguments }]
//   { status, json | body, headers? }   exactly this response
//   (record) => mode | Promise<mode>    decided per request (a string
//                result that is not a mode name is the reply text)
// Replies stream (SSE, as the providers do) when the request asks for
// `stream: true`, so pi-ai's own clients can talk to it; `"text"` replies
// are the same either way.
//
// CORS: preflights are answered and every response carries
// `access-control-allow-origin: *`, so a page on another origin can call it.
//
// `createMockLlm()` gives the same thing as a request handler
// (`handle(req, res, url) → boolean`) for scripts/serve.mjs's `handlers`.
import { createServer } from "node:http";
import { after, before, beforeEach } from "node:test";
import { CORS, readBody, send, sendJson } from "../../scripts/http.mjs";

export const MOCK_SUMMARY = [
  "## Goal",
  "Summarize the conversation for the mock test.",
  "",
  "## Progress",
  "### Done",
  "- [x] Answered by the mock LLM server",
].join("\n");

/** The usage a "text" reply reports, in each provider's shape. */
export const MOCK_USAGE = {
  openai: {
    prompt_tokens: 1200,
    completion_tokens: 300,
    total_tokens: 1500,
    prompt_tokens_details: { cached_tokens: 1000, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
  anthropic: {
    input_tokens: 200,
    cache_creation_input_tokens: 50,
    cache_read_input_tokens: 1000,
    output_tokens: 300,
  },
};

/** The providers' own error bodies (as their APIs send them), by status. */
export const PROVIDER_ERRORS = {
  openai: {
    400: {
      error: {
        message:
          "This model's maximum context length is 8192 tokens. However, your messages resulted in 9216 tokens. Please reduce the length of the messages.",
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    },
    401: {
      error: {
        message:
          "Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      },
    },
    429: {
      error: {
        message:
          "Rate limit reached for gpt-4o-mini in organization org-mock on tokens per min (TPM): Limit 200000, Used 199000, Requested 5000. Please try again in 1.2s.",
        type: "tokens",
        param: null,
        code: "rate_limit_exceeded",
      },
    },
    500: {
      error: {
        message: "The server had an error while processing your request. Sorry about that!",
        type: "server_error",
        param: null,
        code: null,
      },
    },
    529: {
      error: { message: "The engine is currently overloaded, please try again later", type: "server_error", param: null, code: null },
    },
  },
  anthropic: {
    400: {
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" },
      request_id: "req_mock400",
    },
    401: {
      type: "error",
      error: { type: "authentication_error", message: "invalid x-api-key" },
      request_id: "req_mock401",
    },
    429: {
      type: "error",
      error: {
        type: "rate_limit_error",
        message:
          "This request would exceed the rate limit for your organization of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.",
      },
      request_id: "req_mock429",
    },
    500: {
      type: "error",
      error: { type: "api_error", message: "Internal server error" },
      request_id: "req_mock500",
    },
    529: {
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
      request_id: "req_mock529",
    },
  },
};

const MALFORMED_BODY = '{"id":"chatcmpl-mock","object":"chat.completion","choices":[{"index":0,"message":{"role":"assi';

let ids = 0;

function openAiReply(model, text, usage) {
  return {
    id: `chatcmpl-mock${++ids}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: text, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: "stop",
      },
    ],
    usage,
    service_tier: "default",
    system_fingerprint: "fp_mock",
  };
}

function anthropicReply(model, text, usage) {
  return {
    id: `msg_mock${++ids}`,
    type: "message",
    role: "assistant",
    model,
    content: text === "" ? [] : [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage,
  };
}

/** Splits text into a few stream deltas. */
function pieces(text) {
  const out = [];
  for (let i = 0; i < text.length; i += 24) out.push(text.slice(i, i + 24));
  return out;
}

function sse(res, events) {
  res.writeHead(200, { ...CORS, "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [event, data] of events) {
    res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  }
  res.end();
}

function streamOpenAi(res, body, text, usage) {
  const id = `chatcmpl-mock${++ids}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta, finish_reason = null, extra = {}) => [
    null,
    { id, object: "chat.completion.chunk", created, model: body.model, choices: [{ index: 0, delta, logprobs: null, finish_reason }], ...extra },
  ];
  const events = [chunk({ role: "assistant", content: "" })];
  for (const p of pieces(text)) events.push(chunk({ content: p }));
  events.push(chunk({}, "stop"));
  if (body.stream_options?.include_usage) {
    events.push([null, { id, object: "chat.completion.chunk", created, model: body.model, choices: [], usage }]);
  }
  events.push([null, "[DONE]"]);
  sse(res, events);
}

function streamAnthropic(res, body, text, usage) {
  const message = { ...anthropicReply(body.model, "", { ...usage, output_tokens: 1 }), content: [], stop_reason: null };
  const events = [["message_start", { type: "message_start", message }]];
  if (text !== "") {
    events.push(["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }]);
    events.push(["ping", { type: "ping" }]);
    for (const p of pieces(text)) {
      events.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index: 0 }]);
  }
  events.push([
    "message_delta",
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: usage.output_tokens } },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  sse(res, events);
}

/** An OpenAI answer calling `calls` ([{ id, name, arguments }]), streamed when asked. */
function replyToolCalls(res, record, calls, usage) {
  const { body } = record;
  const toolCalls = calls.map((c, index) => ({
    index,
    id: c.id,
    type: "function",
    function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) },
  }));
  const id = `chatcmpl-mock${++ids}`;
  const created = Math.floor(Date.now() / 1000);
  if (body?.stream !== true) {
    const reply = openAiReply(body?.model ?? "mock-model", null, usage);
    reply.id = id;
    reply.choices[0].message.tool_calls = toolCalls.map(({ index, ...call }) => call);
    reply.choices[0].finish_reason = "tool_calls";
    return sendJson(res, 200, reply);
  }
  const chunk = (delta, finish_reason = null, extra = {}) => [
    null,
    { id, object: "chat.completion.chunk", created, model: body.model, choices: [{ index: 0, delta, logprobs: null, finish_reason }], ...extra },
  ];
  const events = [chunk({ role: "assistant", content: null })];
  for (const call of toolCalls) events.push(chunk({ tool_calls: [call] }));
  events.push(chunk({}, "tool_calls"));
  if (body.stream_options?.include_usage) {
    events.push([null, { id, object: "chat.completion.chunk", created, model: body.model, choices: [], usage }]);
  }
  events.push([null, "[DONE]"]);
  sse(res, events);
}

/**
 * The mock as a request handler. Options: `prefix` (default "/v1"),
 * `mode` (default "text"), `text` (the default reply text).
 */
export function createMockLlm({ prefix = "/v1", mode: initialMode = "text", text: defaultText = MOCK_SUMMARY } = {}) {
  const requests = [];
  const preflights = [];
  const waiters = [];
  let mode = initialMode;

  const routes = {
    [`${prefix}/chat/completions`]: "openai",
    [`${prefix}/messages`]: "anthropic",
  };

  function notify() {
    for (const w of [...waiters]) {
      if (requests.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(requests.slice());
      }
    }
  }

  async function answer(res, record, current) {
    const { provider } = record;
    if (typeof current === "function") current = await current(record);
    if (typeof current === "string" && !Object.hasOwn(MODES, current)) current = { text: current };
    if (typeof current === "string") return MODES[current](res, record);
    if (current && typeof current === "object" && "toolCalls" in current) {
      if (provider !== "openai") throw new Error("mock LLM: tool calls are mocked for OpenAI only");
      return replyToolCalls(res, record, current.toolCalls, current.usage ?? MOCK_USAGE.openai);
    }
    if (current && typeof current === "object" && "text" in current) {
      return reply(res, record, current.text, current.usage ?? MOCK_USAGE[provider]);
    }
    if (current && typeof current === "object" && "status" in current) {
      if ("json" in current) return sendJson(res, current.status, current.json, current.headers);
      return send(res, current.status, current.body ?? "", current.headers);
    }
    throw new Error(`mock LLM: unknown mode ${JSON.stringify(current)}`);
  }

  function reply(res, record, text, usage) {
    const { provider, body } = record;
    const model = typeof body?.model === "string" ? body.model : "mock-model";
    if (body?.stream === true) {
      return provider === "openai" ? streamOpenAi(res, body, text, usage) : streamAnthropic(res, body, text, usage);
    }
    sendJson(res, 200, provider === "openai" ? openAiReply(model, text, usage) : anthropicReply(model, text, usage));
  }

  const errorMode = (status) => (res, record) =>
    sendJson(res, status, PROVIDER_ERRORS[record.provider][status], record.provider === "anthropic" ? { "request-id": `req_mock${status}` } : {});

  const MODES = {
    text: (res, record) => reply(res, record, defaultText, MOCK_USAGE[record.provider]),
    empty: (res, record) => reply(res, record, "", MOCK_USAGE[record.provider]),
    hang: () => {}, // the connection stays open until the client closes it (or close())
    malformed: (res) => send(res, 200, MALFORMED_BODY, { "content-type": "application/json" }),
    error400: errorMode(400),
    error401: errorMode(401),
    error429: errorMode(429),
    error500: errorMode(500),
    error529: errorMode(529),
  };

  async function handle(req, res, url) {
    const provider = routes[url.pathname];
    const isModels = url.pathname === `${prefix}/models`;
    if (!provider && !isModels) return false;
    if (req.method === "OPTIONS") {
      preflights.push({ method: req.method, path: url.pathname, headers: { ...req.headers } });
      const allow = {
        ...CORS,
        "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": req.headers["access-control-request-headers"] || "*",
        "access-control-max-age": "600",
      };
      if (req.headers["access-control-request-private-network"]) allow["access-control-allow-private-network"] = "true";
      res.writeHead(204, allow);
      res.end();
      return true;
    }
    if (isModels) {
      if (req.method !== "GET") sendJson(res, 405, { error: { message: "Method not allowed", type: "invalid_request_error" } });
      else sendJson(res, 200, { object: "list", data: [{ id: "mock-model", object: "model", created: 0, owned_by: "mock" }] });
      return true;
    }
    const rawBody = await readBody(req);
    let body = null;
    try {
      body = JSON.parse(rawBody);
    } catch {
      // kept as rawBody; the record's body stays null
    }
    const record = {
      provider,
      method: req.method,
      path: url.pathname,
      url: req.url,
      headers: { ...req.headers },
      body,
      rawBody,
      aborted: false,
    };
    let closed;
    Object.defineProperty(record, "closed", { value: new Promise((r) => (closed = r)), enumerable: false });
    res.on("close", () => {
      if (!res.writableFinished) record.aborted = true;
      closed();
    });
    requests.push(record);
    notify();
    if (req.method !== "POST") {
      sendJson(res, 405, { error: { message: `Method ${req.method} not allowed`, type: "invalid_request_error" } });
      return true;
    }
    if (body === null) {
      sendJson(res, 400, provider === "openai"
        ? { error: { message: "We could not parse the JSON body of your request.", type: "invalid_request_error", param: null, code: null } }
        : { type: "error", error: { type: "invalid_request_error", message: "There was an error parsing the body" } });
      return true;
    }
    await answer(res, record, mode);
    return true;
  }

  return {
    handle,
    requests,
    preflights,
    /** Switch what the next requests get (see the file's header). */
    setMode(next) {
      mode = next;
    },
    /** Resolves with the requests once at least `count` have arrived. */
    waitForRequests(count = requests.length + 1) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    /** Forget recorded requests and go back to the initial mode. */
    reset() {
      requests.length = 0;
      preflights.length = 0;
      mode = initialMode;
    },
  };
}

/**
 * Starts the mock on 127.0.0.1 (port 0 = any free port). Resolves to
 * `{ url, port, requests, preflights, setMode, waitForRequests, reset, model, close }`;
 * `url` ends with "/", so the OpenAI base URL is `${url}v1`.
 */
export async function startMockLlm({ port = 0, host = "127.0.0.1", ...options } = {}) {
  const mock = createMockLlm(options);
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(`http://${host}${req.url?.startsWith("/") ? req.url : "/"}`);
      if (await mock.handle(req, res, url)) return;
      if (req.method === "OPTIONS") {
        send(res, 204, "", { "access-control-allow-methods": "GET, POST, OPTIONS", "access-control-allow-headers": "*" });
        return;
      }
      sendJson(res, 404, { error: { message: `Unknown path ${url.pathname}`, type: "invalid_request_error" } });
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `mock LLM: ${err.message}`, type: "server_error" } });
      else res.destroy(err);
    }
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actual = server.address().port;
  const url = `http://${host}:${actual}/`;
  return {
    ...mock,
    url,
    port: actual,
    server,
    /** A pi-ai `Model` on the mock's OpenAI-compatible API (`overrides` replace its fields). */
    model: (overrides = {}) => ({
      id: "m",
      name: overrides.id ?? "m",
      api: "openai-completions",
      provider: "local",
      baseUrl: `${url}v1`,
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 200_000,
      maxTokens: 1000,
      ...overrides,
    }),
    close: () =>
      new Promise((done) => {
        server.close(() => done());
        server.closeAllConnections?.();
      }),
  };
}

/**
 * For a node:test file or `describe`: a mock started before its tests,
 * closed after them, with the recorded requests cleared before each test.
 * The object returned is the running mock once the tests run.
 */
export function useMockLlm(options) {
  const mock = {};
  before(async () => Object.assign(mock, await startMockLlm(options)));
  after(() => mock.close());
  beforeEach(() => {
    mock.requests.length = 0;
  });
  return mock;
}
