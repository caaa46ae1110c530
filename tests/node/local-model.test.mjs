// The demo's local model (scripts/local-model.mjs) against the real clients:
// pi-ai's openai-completions provider (streaming text, tool calls, usage,
// overflow errors that pi's isContextOverflow recognises, silent overflow),
// a full pi-agent-core Agent run with the demo tools, the package's
// openAiSummarizer + Compactor for the structured summary, determinism, the
// request log and the config endpoints. Needs a built pkg/ for the
// summarizer test (`node scripts/build.mjs`).
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, afterEach, before, describe, test } from "node:test";
import { Agent } from "@mariozechner/pi-agent-core";
import { complete, isContextOverflow, streamSimple } from "@mariozechner/pi-ai";
import { Compactor, openAiSummarizer } from "agent-compaction";
import { startServer } from "../../scripts/serve.mjs";
import {
  DEFAULT_CONFIG,
  DEMO_TOOLS,
  createLocalModel,
  demoAgentTools,
  estimatePromptTokens,
  runDemoTool,
} from "../../scripts/local-model.mjs";

let local;
let server;
let base; // http://127.0.0.1:port/local/v1

before(async () => {
  local = createLocalModel({ delayMs: 0 });
  server = await startServer({ port: 0, handlers: [local.handle], mounts: [] });
  base = `${server.url}local/v1`;
});
after(() => server.close());
afterEach(() => local.reset());

/** The pi-ai Model a page (or this test) uses for the local model. */
function localModel(overrides = {}) {
  return {
    id: "local-coder",
    name: "Local coder (demo)",
    api: "openai-completions",
    provider: "local",
    baseUrl: base,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: DEFAULT_CONFIG.contextWindow,
    maxTokens: 4096,
    ...overrides,
  };
}

const TOOLS = DEMO_TOOLS.map(({ name, description, parameters }) => ({ name, description, parameters }));
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });

async function collect(stream) {
  const events = [];
  for await (const e of stream) events.push(e);
  return { events, message: await stream.result() };
}

const post = (path, json) =>
  fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(json) });

const chatBody = (extra = {}) => ({
  model: "local-coder",
  messages: [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Please look at src/parser.rs and run the tests" },
  ],
  tools: TOOLS.map((t) => ({ type: "function", function: t })),
  ...extra,
});

describe("pi-ai's openai-completions client", () => {
  test("streams a tool call: preamble text, parsed JSON arguments, toolUse, usage", async () => {
    const { events, message } = await collect(
      streamSimple(localModel(), { systemPrompt: "You are a coding agent.", messages: [user("Fix the bug in src/parser.rs")], tools: TOOLS }, { apiKey: "local" }),
    );
    assert.equal(message.stopReason, "toolUse", message.errorMessage);
    const text = message.content.find((b) => b.type === "text");
    assert.match(text.text, /`src\/parser\.rs`/);
    const calls = message.content.filter((b) => b.type === "toolCall");
    assert.ok(calls.length >= 1 && calls.length <= 2);
    assert.equal(calls[0].name, "read_file");
    assert.deepEqual(calls[0].arguments, { path: "src/parser.rs" });
    assert.match(calls[0].id, /^call_[0-9a-f]{16}$/);
    assert.ok(events.some((e) => e.type === "toolcall_end"));
    // usage: prompt = the server's estimate of what it received, output = answer chars / 4
    const [record] = local.requests;
    assert.equal(record.kind, "chat");
    assert.equal(record.body.stream, true);
    assert.deepEqual(record.body.stream_options, { include_usage: true });
    assert.equal(message.usage.input, estimatePromptTokens(record.body));
    assert.equal(message.usage.input, record.promptTokens);
    const answerChars = record.reply.text.length + record.reply.toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
    assert.equal(message.usage.output, Math.ceil(answerChars / 4));
    assert.equal(message.usage.totalTokens, message.usage.input + message.usage.output);
  });

  test("without tools it answers with text, streamed in several chunks", async () => {
    const { events, message } = await collect(
      streamSimple(localModel(), { systemPrompt: "", messages: [user("How should I structure the cache module?")] }, { apiKey: "local" }),
    );
    assert.equal(message.stopReason, "stop", message.errorMessage);
    assert.equal(message.content.length, 1);
    assert.match(message.content[0].text, /How should I structure the cache module\?/);
    assert.ok(message.content[0].text.length > 200);
    assert.ok(events.filter((e) => e.type === "text_delta").length >= 4, "several deltas");
    assert.ok(message.usage.input > 0 && message.usage.output > 0);
  });

  test("after the tool results it answers with markdown that refers to them", async () => {
    const first = await complete(localModel(), { systemPrompt: "", messages: [user("Run `cargo test` please")], tools: TOOLS }, { apiKey: "local" });
    assert.equal(first.stopReason, "toolUse");
    const call = first.content.find((b) => b.type === "toolCall");
    assert.deepEqual(call.arguments, { command: "cargo test" });
    const output = runDemoTool(call.name, call.arguments);
    const second = await complete(
      localModel(),
      {
        systemPrompt: "",
        messages: [
          user("Run `cargo test` please"),
          first,
          { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text: output }], isError: false, timestamp: 2 },
        ],
        tools: TOOLS,
      },
      { apiKey: "local" },
    );
    assert.equal(second.stopReason, "stop", second.errorMessage);
    const text = second.content.map((b) => b.text ?? "").join("");
    assert.match(text, /`cargo test` exited with code \d/);
    assert.ok(text.length > 150 && text.length < 1200, `${text.length} chars`);
    const exit = /\[exit code: (\d+)\]/.exec(output)[1];
    assert.ok(text.includes(`exited with code ${exit}`));
  });

  test("non-streaming requests get a chat.completion with tool_calls and usage", async () => {
    const res = await post("/chat/completions", chatBody());
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("access-control-allow-origin"), "*");
    const json = await res.json();
    assert.equal(json.object, "chat.completion");
    const choice = json.choices[0];
    assert.equal(choice.finish_reason, "tool_calls");
    assert.ok(choice.message.tool_calls.length >= 1);
    for (const tc of choice.message.tool_calls) {
      assert.equal(tc.type, "function");
      assert.ok(["read_file", "run_command", "list_files"].includes(tc.function.name));
      JSON.parse(tc.function.arguments);
    }
    assert.equal(json.usage.prompt_tokens, estimatePromptTokens(chatBody()));
    assert.equal(json.usage.total_tokens, json.usage.prompt_tokens + json.usage.completion_tokens);
  });

  test("max_tokens cuts a text answer with finish_reason length", async () => {
    const res = await post("/chat/completions", { model: "local-coder", messages: [{ role: "user", content: "Explain the parser design" }], max_tokens: 5 });
    const json = await res.json();
    assert.equal(json.choices[0].finish_reason, "length");
    assert.equal(json.choices[0].message.content.length, 20);
  });
});

describe("pi-agent-core Agent", () => {
  test("runs prompts to completion: tool calls, large tool results, a final text", async () => {
    const events = [];
    const agent = new Agent({
      initialState: { systemPrompt: "You are a coding agent.", model: localModel(), tools: demoAgentTools() },
      getApiKey: () => "local",
    });
    agent.subscribe((e) => {
      events.push(e);
    });
    await agent.prompt("The tests in src/parser.rs fail, please fix them");
    const msgs = agent.state.messages;
    const last = msgs[msgs.length - 1];
    assert.equal(last.role, "assistant");
    assert.equal(last.stopReason, "stop", last.errorMessage);
    assert.match(last.content[0].text, /`src\/parser\.rs` \(\d+ lines\)/);
    const results = msgs.filter((m) => m.role === "toolResult");
    assert.ok(results.length >= 1 && results.length <= 2, `${results.length} tool results`);
    for (const r of results) {
      assert.equal(r.isError, false);
      const text = r.content[0].text;
      assert.ok(text.length >= 6 * 1024 && text.length <= 20 * 1024, `${r.toolName}: ${text.length} bytes`);
    }
    assert.ok(events.some((e) => e.type === "tool_execution_end"));
    assert.ok(events.some((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta"));
    assert.equal(events[events.length - 1].type, "agent_end");
    const turn1 = local.requests.length;
    assert.ok(local.requests.every((r) => r.kind === "chat"));
    assert.equal(local.requests[turn1 - 1].reply.finishReason, "stop");

    // A second prompt starts a new round of tool calls, with the first turn in context.
    await agent.prompt("Now list the files in src/store");
    const later = local.requests.slice(turn1);
    assert.equal(later[0].reply.finishReason, "tool_calls");
    assert.ok(later[0].reply.toolCalls.some((c) => c.name === "list_files" && JSON.parse(c.arguments).path === "src/store"));
    assert.ok(later[0].promptTokens > local.requests[turn1 - 1].promptTokens, "context grows");
    assert.equal(agent.state.messages.at(-1).stopReason, "stop");
    // The model saw what the tools returned, byte for byte.
    const toolMsg = later.at(-1).body.messages.find((m) => m.role === "tool");
    assert.equal(toolMsg.content, results[0].content[0].text);
  });
});

describe("context window", () => {
  test("an oversized request gets OpenAI's overflow error, recognised by isContextOverflow", async () => {
    local.setConfig({ contextWindow: 50 });
    const msg = await complete(localModel({ contextWindow: 50 }), { systemPrompt: "", messages: [user("x".repeat(400))] }, { apiKey: "local" });
    assert.equal(msg.stopReason, "error");
    assert.match(msg.errorMessage, /^400 This model's maximum context length is 50 tokens\. However, your messages resulted in 100 tokens\./);
    assert.equal(isContextOverflow(msg), true);
    assert.equal(isContextOverflow(msg, 50), true);
    assert.equal(local.requests[0].kind, "overflow");
    assert.equal(local.requests[0].overflow, "error");

    const res = await post("/chat/completions", { model: "m", messages: [{ role: "user", content: "y".repeat(400) }] });
    assert.equal(res.status, 400);
    const json = await res.json();
    assert.equal(json.error.code, "context_length_exceeded");
    assert.equal(json.error.type, "invalid_request_error");
  });

  test("silentOverflow answers normally but reports prompt_tokens above the window", async () => {
    local.setConfig({ contextWindow: 50, silentOverflow: true });
    const msg = await complete(localModel({ contextWindow: 50 }), { systemPrompt: "", messages: [user("z".repeat(400))] }, { apiKey: "local" });
    assert.equal(msg.stopReason, "stop");
    assert.equal(msg.usage.input, 100);
    assert.equal(isContextOverflow(msg), false, "no error text");
    assert.equal(isContextOverflow(msg, 50), true, "pi's silent-overflow check");
    assert.equal(local.requests[0].overflow, "silent");
    assert.equal(local.requests[0].kind, "chat");
  });

  test("overflowAlways: every chat request overflows, summaries do not", async () => {
    local.setConfig({ overflowAlways: true });
    for (let i = 0; i < 2; i++) {
      const msg = await complete(localModel(), { systemPrompt: "", messages: [user(`hi ${i}`)] }, { apiKey: "local" });
      assert.equal(isContextOverflow(msg), true);
    }
    const summary = await openAiSummarizer({ baseUrl: base, model: "local-coder" })({
      kind: "history",
      systemPrompt: "You write context checkpoints.",
      prompt: "<conversation>\n[User]: hi\n</conversation>\n\nAnswer in exactly this format:\n\n## Goal\n…",
      maxTokens: 2000,
      signal: new AbortController().signal,
      reason: "overflow",
    });
    assert.match(summary.text, /^## Goal\n- hi$/m);
    assert.deepEqual(local.requests.map((r) => r.kind), ["overflow", "overflow", "summary"]);
  });

  test("overflowNext: the next N chat requests overflow, then it answers again", async () => {
    local.setConfig({ overflowNext: 1 });
    const a = await complete(localModel(), { systemPrompt: "", messages: [user("one")] }, { apiKey: "local" });
    const b = await complete(localModel(), { systemPrompt: "", messages: [user("one")] }, { apiKey: "local" });
    assert.equal(isContextOverflow(a), true);
    assert.equal(b.stopReason, "stop");
    assert.equal(local.config.overflowNext, 0);
  });
});

describe("summarization requests", () => {
  test("the package's openAiSummarizer + Compactor get a short structured summary with the focus line", async () => {
    const agent = new Agent({
      initialState: { systemPrompt: "You are a coding agent.", model: localModel(), tools: demoAgentTools() },
      getApiKey: () => "local",
    });
    await agent.prompt("Refactor src/session.rs so that saving never blocks");
    await agent.prompt("Now run the tests and fix what fails");
    await agent.prompt("Finally look at src/store/index.ts");
    local.reset({ keepConfig: true });

    const compactor = new Compactor({
      model: localModel(),
      contextWindow: 16_000,
      settings: { reserveTokens: 4000, keepRecentTokens: 2000 },
      summarize: openAiSummarizer({ baseUrl: base, model: "local-coder" }),
      fallback: "none",
    });
    const out = await compactor.compact(agent.state.messages, { customInstructions: "the save path and its locking" });
    assert.ok(out.tokensAfter < out.tokensBefore, `${out.tokensAfter} < ${out.tokensBefore}`);
    const summaries = local.requests.filter((r) => r.kind === "summary");
    assert.ok(summaries.length >= 1);
    assert.equal(local.requests.length, summaries.length, "only summary requests");
    const text = out.summary.summary;
    for (const heading of ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Next Steps", "## Critical Context"]) {
      assert.ok(text.includes(heading), heading);
    }
    assert.match(text, /## Goal\n- Refactor src\/session\.rs so that saving never blocks/);
    assert.match(text, /- \*\*Focus\*\*: the save path and its locking/);
    assert.match(text, /- \[x\] Used read_file `src\/session\.rs`/);
    assert.ok(text.length < 1500, `${text.length} chars`);
    assert.ok(summaries.every((r) => r.reply.text.length < 1500));
  });

  test("an update prompt keeps the previous goal; a turn-prefix prompt gets its own format", async () => {
    const summarize = openAiSummarizer({ baseUrl: base, model: "local-coder" });
    const req = (prompt) => ({ kind: "history", systemPrompt: "You write context checkpoints.", prompt, maxTokens: 2000, signal: new AbortController().signal, reason: "manual" });
    const update = await summarize(
      req(
        '<conversation>\n[User]: second task\n\n[Assistant tool calls]: run_command(command="npm test")\n\n[Tool result]: # fail 2\n[exit code: 1]\n</conversation>\n\n' +
          "<previous-summary>\n## Goal\n- first task\n\n## Progress\n</previous-summary>\n\nThe conversation … Answer in exactly this format:\n\n## Goal\n[...]\n\n## Critical Context\n[...]",
      ),
    );
    assert.match(update.text, /^## Goal\n- first task\n- second task\n/);
    assert.match(update.text, /### Blocked\n- # fail 2/);
    assert.match(update.text, /Re-run `npm test`/);
    assert.doesNotMatch(update.text, /Focus/);
    const prefix = await summarize(req("<conversation>\n[User]: big turn request\n</conversation>\n\nThe conversation … beginning of a single turn:\n\n## Original Request\n[...]\n\n## Early Progress\n"));
    assert.match(prefix.text, /^## Original Request\nbig turn request\n\n## Early Progress\n/);
  });

  test("a huge prompt still gets every section and the focus line, under 1,500 characters", async () => {
    const conv = [];
    for (let i = 0; i < 40; i++) {
      conv.push(
        `[User]: request ${i} ${"must keep the API stable and never block the UI ".repeat(10)}`,
        `[Assistant tool calls]: read_file(path="src/${"deep/".repeat(20)}f${i}.rs"); run_command(command="cargo test ${"x".repeat(100)}")`,
        `[Tool result]: test result: FAILED. ${"y".repeat(300)}`,
      );
    }
    const previous = `## Goal\n- ${"g".repeat(400)}\n\n## Progress\n### Done\n${Array.from({ length: 9 }, (_, i) => `- [x] ${"d".repeat(300)} ${i}`).join("\n")}`;
    const prompt = `<conversation>\n${conv.join("\n\n")}\n</conversation>\n\n<previous-summary>\n${previous}\n</previous-summary>\n\nAnswer in exactly this format:\n\n## Goal\n…\n\nAdditional focus: ${"the focus ".repeat(60)}`;
    const res = await post("/chat/completions", { model: "m", messages: [{ role: "system", content: "You write context checkpoints." }, { role: "user", content: prompt }] });
    const text = (await res.json()).choices[0].message.content;
    assert.ok(text.length < 1500, `${text.length} chars`);
    for (const heading of ["## Goal", "### Done", "### Blocked", "## Next Steps", "## Critical Context"]) assert.ok(text.includes(heading), heading);
    assert.match(text, /- \*\*Focus\*\*: the focus the focus/);
    assert.match(text, /- request 0 must keep/);
  });
});

describe("conversation handling", () => {
  test("when the last user message is a compaction summary, the request is its Goal", async () => {
    const summary =
      "The conversation history before this point was compacted into the following summary:\n\n<compaction_summary>\n## Goal\n- Fix the eviction in src/cache.rs\n\n## Progress\n</compaction_summary>";
    const json = await (await post("/chat/completions", chatBody({ messages: [{ role: "user", content: summary }] }))).json();
    const calls = json.choices[0].message.tool_calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]);
    assert.deepEqual(calls[0], ["read_file", { path: "src/cache.rs" }]);
  });

  test("tool_choice none, or no declared tools, gives text; unknown tools get their required strings filled", async () => {
    const none = await (await post("/chat/completions", chatBody({ tool_choice: "none" }))).json();
    assert.equal(none.choices[0].finish_reason, "stop");
    assert.equal(none.choices[0].message.tool_calls, undefined);
    const custom = await (
      await post(
        "/chat/completions",
        chatBody({ tools: [{ type: "function", function: { name: "open", parameters: { type: "object", properties: { file: { type: "string" } }, required: ["file"] } } }] }),
      )
    ).json();
    const call = custom.choices[0].message.tool_calls[0];
    assert.equal(call.function.name, "open");
    assert.deepEqual(JSON.parse(call.function.arguments), { file: "src/parser.rs" });
  });

  test("delayMs paces the stream; a client that goes away mid-stream is let go", async () => {
    const slow = createLocalModel({ delayMs: 25 });
    const srv = await startServer({ port: 0, handlers: [slow.handle], mounts: [] });
    try {
      const model = localModel({ baseUrl: `${srv.url}local/v1` });
      const t0 = Date.now();
      const { events } = await collect(streamSimple(model, { systemPrompt: "", messages: [user("Explain the store design")] }, { apiKey: "local" }));
      const deltas = events.filter((e) => e.type === "text_delta").length;
      assert.ok(Date.now() - t0 >= deltas * 25 - 10, "one pause per chunk");
      const ctrl = new AbortController();
      const stream = streamSimple(model, { systemPrompt: "", messages: [user("Explain the store design again")] }, { apiKey: "local", signal: ctrl.signal });
      for await (const e of stream) if (e.type === "text_delta") ctrl.abort();
      assert.equal((await stream.result()).stopReason, "aborted");
      const after = await complete(model, { systemPrompt: "", messages: [user("still there?")] }, { apiKey: "local" });
      assert.equal(after.stopReason, "stop");
    } finally {
      await srv.close();
    }
  });
});

describe("determinism", () => {
  test("the same request gives the same bytes, streaming or not", async () => {
    for (const stream of [false, true]) {
      const body = chatBody({ stream, stream_options: stream ? { include_usage: true } : undefined });
      const a = await (await post("/chat/completions", body)).text();
      const b = await (await post("/chat/completions", body)).text();
      assert.equal(a, b);
      if (stream) {
        assert.ok(a.trimEnd().endsWith("data: [DONE]"));
        const chunks = a.split("\n\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)));
        assert.deepEqual(chunks.at(-1).choices, []);
        assert.ok(chunks.at(-1).usage.prompt_tokens > 0);
      }
    }
    const other = await (await post("/chat/completions", chatBody({ messages: [{ role: "user", content: "list src/core" }] }))).json();
    assert.equal(other.choices[0].message.tool_calls[0].function.name, "list_files");
  });

  test("runDemoTool: 6–20 KB, deterministic, argument-dependent, clear errors", () => {
    const cases = [
      ["read_file", { path: "src/lib.rs" }],
      ["read_file", { path: "www/app.js" }],
      ["read_file", { path: "README.md" }],
      ["read_file", { path: "package.json" }],
      ["read_file", { path: "Cargo.toml" }],
      ["list_files", { path: "." }],
      ["list_files", { path: "src/core" }],
      ["run_command", { command: "cargo test" }],
      ["run_command", { command: "npm test" }],
      ["run_command", { command: "npm run build" }],
      ["run_command", { command: "git log" }],
      ["run_command", { command: "echo hi" }],
    ];
    const seen = new Set();
    for (const [name, args] of cases) {
      const text = runDemoTool(name, args);
      assert.ok(text.length >= 6 * 1024 && text.length <= 20 * 1024, `${name} ${JSON.stringify(args)}: ${text.length}`);
      assert.equal(runDemoTool(name, { ...args }), text);
      assert.ok(!seen.has(text));
      seen.add(text);
    }
    assert.throws(() => runDemoTool("rm_rf", {}), /Unknown tool: rm_rf/);
    assert.throws(() => runDemoTool("read_file", {}), /"path" must be a non-empty string/);
    assert.deepEqual(DEMO_TOOLS.map((t) => t.name), ["read_file", "list_files", "run_command"]);
    for (const t of DEMO_TOOLS) assert.equal(t.parameters.type, "object");
  });

  test("www/local-tools.js is browser-safe (no imports)", async () => {
    const source = await readFile(new URL("../../www/local-tools.js", import.meta.url), "utf8");
    assert.doesNotMatch(source, /^\s*import\s/m);
    assert.doesNotMatch(source, /\brequire\(|\bprocess\.|\bBuffer\b/);
  });
});

describe("endpoints", () => {
  test("models, CORS preflight, unknown paths", async () => {
    const models = await (await fetch(`${base}/models`)).json();
    assert.deepEqual(models.data.map((m) => m.id), ["local-coder"]);
    const pre = await fetch(`${base}/chat/completions`, {
      method: "OPTIONS",
      headers: { origin: "http://example.test", "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), "*");
    assert.equal(pre.headers.get("access-control-allow-headers"), "authorization,content-type");
    assert.equal((await fetch(`${base}/nope`)).status, 404);
    assert.equal((await fetch(`${server.url}elsewhere`)).status, 404, "other paths fall through");
    assert.equal((await post("/chat/completions", { messages: "no" })).status, 400);
    assert.equal(local.requests.at(-1).kind, "invalid");
  });

  test("config: GET, POST (checked), reset restores it", async () => {
    assert.deepEqual(await (await fetch(`${base}/config`)).json(), { ...DEFAULT_CONFIG, delayMs: 0 });
    const set = await post("/config", { contextWindow: 8000, silentOverflow: true });
    assert.equal(set.status, 200);
    assert.equal((await set.json()).contextWindow, 8000);
    assert.equal(local.config.contextWindow, 8000);
    const bad = await post("/config", { contextWindow: -1 });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /contextWindow/);
    assert.equal((await post("/config", { bogus: 1 })).status, 400);
    assert.throws(() => local.setConfig({ delayMs: "fast" }), TypeError);

    await post("/reset", { keepConfig: true });
    assert.equal(local.config.contextWindow, 8000);
    await post("/reset", {});
    assert.equal(local.config.contextWindow, DEFAULT_CONFIG.contextWindow);
    assert.equal(local.config.silentOverflow, false);
  });

  test("request log: recorded with kind and body, filtered by kind, cleared by reset", async () => {
    await post("/chat/completions", chatBody());
    await post("/config", { contextWindow: 10 });
    await post("/chat/completions", chatBody());
    const all = await (await fetch(`${base}/requests`)).json();
    assert.deepEqual(all.map((r) => r.kind), ["chat", "overflow"]);
    assert.equal(all[0].path, "/local/v1/chat/completions");
    assert.equal(all[0].body.messages[1].content, "Please look at src/parser.rs and run the tests");
    assert.equal(typeof all[0].time, "number");
    assert.equal(all[0].reply.finishReason, "tool_calls");
    const overflows = await (await fetch(`${base}/requests?kind=overflow`)).json();
    assert.equal(overflows.length, 1);
    assert.equal((await post("/reset", {})).status, 200);
    assert.deepEqual(await (await fetch(`${base}/requests`)).json(), []);
  });
});
