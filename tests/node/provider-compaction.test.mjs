// The providers' own compaction through the AI SDK adapter (docs/ai-sdk.md),
// with the real @ai-sdk/anthropic and @ai-sdk/openai providers against local
// servers that follow the documented wire formats
// (tests/support/compaction-providers.mjs): Anthropic's threshold compaction
// (`compact_20260112`) and OpenAI's Responses compaction item, generated and
// streamed. The compaction becomes a compactionSummary holding the part as
// received; the next request to that provider sends the part unchanged, in
// place of what it covers (the server refuses an altered one); another
// model gets its readable text; estimates count from it, and the
// conversation's own threshold never compacts on top of it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { APICallError, generateText, streamText } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Compactor, anthropicCompaction, openAiResponsesCompaction, messagesToPiSession, piSessionToMessages, transformContext } from "agent-compaction";
import { aiSdkConversation, fromModelMessages, toModelMessages, toUIMessages } from "agent-compaction/ai-sdk";
import { startServer } from "../../scripts/serve.mjs";
import { anthropicServer, openAiResponsesServer } from "../support/compaction-providers.mjs";

const TRIGGER = 50_000;
const ANTHROPIC_OPTIONS = { anthropic: { contextManagement: { edits: [{ type: "compact_20260112", trigger: { type: "input_tokens", value: TRIGGER } }] } } };
const OPENAI_OPTIONS = { openai: { contextManagement: [{ type: "compaction", compactThreshold: TRIGGER }] } };
/** A user message of about `tokens` tokens (4 characters each). */
const long = (label, tokens) => `${label}: ` + "lorem ipsum ".repeat(Math.ceil((tokens * 4) / 12));

let server, anthropic, openai, a, o;
before(async () => {
  a = anthropicServer();
  o = openAiResponsesServer();
  server = await startServer({ port: 0, handlers: [a.handler, o.handler], mounts: [] });
  anthropic = createAnthropic({ baseURL: `${server.url}v1`, apiKey: "test" });
  openai = createOpenAI({ baseURL: `${server.url}v1`, apiKey: "test" });
});
after(() => server?.close());

/** A conversation that never compacts by itself before 200k tokens, unless told to. */
const conversation = (options = {}) =>
  aiSdkConversation({ compactor: new Compactor({ contextWindow: 200_000, summarize: async () => "## Goal\nour own summary" }), ...options });

for (const stream of [false, true]) {
  describe(`Anthropic threshold compaction (${stream ? "streamText" : "generateText"})`, () => {
    const call = (model) => (args) =>
      stream ? streamText({ model, providerOptions: ANTHROPIC_OPTIONS, ...args }) : generateText({ model, providerOptions: ANTHROPIC_OPTIONS, ...args });

    test("the block becomes a boundary; the next request sends it first and unchanged, and nothing it covers", async () => {
      const c = conversation();
      const model = anthropic("claude-sonnet-4-5");
      await c.append({ role: "user", content: long("first question about the parser", 30_000) });
      await c.run(call(model));
      await c.append({ role: "user", content: long("second question about the cache", 30_000) });
      const before = a.state.requests.length;
      const second = await c.run(call(model));
      // The SDK's text joins the summary's text part and the reply.
      assert.match(await second.text, /saw summary: yes/, "the server compacted");
      const flat = c.messages;
      const summary = flat.findLast((m) => m.role === "compactionSummary");
      assert.ok(summary, "the compaction is a summary in the flat array");
      assert.match(summary.summary, /^<summary>Provider summary #\d+: the user asked about first question about the parser/);
      assert.equal(summary.provider.name, "anthropic");
      assert.equal(summary.provider.provider, "anthropic.messages");
      assert.equal(summary.provider.model, "claude-sonnet-4-5");
      assert.ok(summary.tokensBefore >= TRIGGER, "tokensBefore is the compaction's input");
      // Nothing lost: every message is still in the flat array, the summary before the reply.
      const roles = flat.map((m) => m.role);
      assert.deepEqual(roles.slice(-2), ["compactionSummary", "assistant"]);
      assert.equal(roles.filter((r) => r === "user").length, 2);
      // The reply's usage is the context after the compaction, so the estimate counts from the summary.
      assert.ok(c.contextTokens < 32_000, `context tokens ${c.contextTokens}`);
      assert.equal(transformContext(flat)[0], summary, "the pi view starts at it");

      await c.append({ role: "user", content: "third question" });
      const third = await c.run(call(model));
      assert.match(await third.text, /^saw summary: yes; context tokens: \d+; last: third question/, "the old block is not part of the new reply");
      const sent = a.state.requests.at(-1).body.messages;
      assert.equal(sent[0].role, "assistant");
      assert.deepEqual(sent[0].content[0], { type: "compaction", content: summary.summary }, "the block, first and unchanged");
      const users = sent.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
      assert.deepEqual(users.map((u) => u.slice(0, 40)), [JSON.stringify([{ type: "text", text: "third question" }]).slice(0, 40)], "what it covers is not sent");
      assert.ok(a.state.requests.length > before);
    });

    test("useChat's rows: the reply the provider compacted before is one row after the divider, with no row that shows nothing", async () => {
      const c = conversation();
      const model = anthropic("claude-sonnet-4-5");
      await c.append({ role: "user", content: long("first question", 30_000) });
      await c.run(call(model));
      await c.append({ role: "user", content: long("second question", 30_000) });
      await c.run(call(model));
      assert.ok(c.messages.some((m) => m.role === "compactionSummary" && m.provider), "the provider compacted");
      const visible = (row) => row.parts.some((p) => p.type !== "step-start" && p.type !== "custom");
      for (const divider of [false, true]) {
        const rows = toUIMessages(c.messages, { divider });
        assert.ok(rows.every(visible), `every row shows something (divider: ${divider})`);
        const kinds = rows.map((r) => (r.parts.some((p) => p.type === "data-compaction") ? "divider" : r.role));
        assert.deepEqual(kinds, divider ? ["user", "assistant", "user", "divider", "assistant"] : ["user", "assistant", "user", "assistant"]);
        assert.match(rows.at(-1).parts.find((p) => p.type === "text").text, /saw summary: yes/);
      }
    });

    test("another model is sent the summary's text; the conversation's threshold stays off after the provider's compaction", async () => {
      const c = conversation();
      const model = anthropic("claude-sonnet-4-5");
      await c.append({ role: "user", content: long("a question about billing", 60_000) });
      await c.run(call(model));
      const summary = c.messages.findLast((m) => m.role === "compactionSummary");
      assert.ok(summary?.provider, "the provider compacted");
      // To an OpenAI model: the readable text as a user message, no Anthropic block.
      const toOpenAi = toModelMessages(transformContext(c.messages), { provider: "openai.responses" });
      assert.equal(toOpenAi[0].role, "user");
      assert.match(JSON.stringify(toOpenAi[0].content), /Provider summary/);
      assert.ok(!toOpenAi.some((m) => Array.isArray(m.content) && m.content.some((p) => p.providerOptions?.anthropic)), "no Anthropic block");
      // Without a provider: the text too.
      assert.equal(toModelMessages(transformContext(c.messages))[0].role, "user");
      // A block Vertex's Anthropic made (its provider id does not start
      // with the block's key) goes back to it as it is.
      const vertex = c.messages.map((m) => (m === summary ? { ...m, provider: { ...m.provider, provider: "vertex.anthropic.messages" } } : m));
      const toVertex = toModelMessages(transformContext(vertex), { provider: "vertex.anthropic.messages" });
      assert.equal(toVertex[0].role, "assistant");
      assert.deepEqual(toVertex[0].content[0].providerOptions, summary.provider.part.providerOptions, "the block as received");
      assert.equal(toModelMessages(transformContext(vertex), { provider: "vertex.google" })[0].role, "user", "another Vertex model gets the text");
      // The conversation's threshold would compact a context this size, but the provider compacts it.
      let ours = 0;
      const summarize = async () => (ours++, "## Goal\nours");
      const small = conversation({ messages: c.messages, compactor: new Compactor({ contextWindow: 50_000, summarize }) });
      await small.append({ role: "user", content: long("more about billing", 55_000) });
      assert.ok(small.compactor.needsCompaction(small.messages), "over the conversation's own threshold");
      const out = await small.run(call(model));
      assert.match(await out.text, /saw summary: yes/);
      assert.equal(ours, 0, "the conversation's summarizer never ran");
      assert.equal(small.messages.filter((m) => m.role === "compactionSummary" && m.provider).length, 2, "the provider compacted again");
      assert.equal(small.messages.filter((m) => m.role === "compactionSummary" && !m.provider).length, 0, "no summary of ours on top");
    });
  });
}

describe("OpenAI Responses compaction", () => {
  test("the encrypted item becomes a boundary; the next request sends it back and nothing before it", async () => {
    for (const stream of [false, true]) {
      const c = conversation();
      const model = openai.responses("gpt-5.2");
      const call = (args) => (stream ? streamText : generateText)({ model, providerOptions: OPENAI_OPTIONS, ...args });
      await c.append({ role: "user", content: long("the migration plan", 60_000) });
      const first = await c.run(call);
      assert.match(await first.text, /^saw summary: yes/);
      const summary = c.messages.findLast((m) => m.role === "compactionSummary");
      assert.equal(summary?.provider?.name, "openai");
      assert.equal(summary.provider.provider, "openai.responses");
      assert.match(summary.summary, /compacted by openai\.responses; its summary is encrypted/);
      // The reply came before the item, in the same message: the item is the last boundary.
      assert.deepEqual(c.messages.map((m) => m.role).slice(-2), ["assistant", "compactionSummary"]);
      await c.append({ role: "user", content: "what next?" });
      const second = await c.run(call);
      assert.match(await second.text, /saw summary: yes; context tokens: \d+; last: what next\?/);
      const input = o.state.requests.at(-1).body.input;
      assert.ok(!JSON.stringify(input).includes("the migration plan: lorem"), "what the item covers is not sent");
      const item = input.find((x) => x.type === "item_reference" || x.type === "compaction");
      assert.equal(item.id, summary.provider.part.providerOptions.openai.itemId);
    }
  });
});

describe("an encrypted compaction and another model", () => {
  test("switching from OpenAI to Claude: our own summary of what the item covers stands in, once; OpenAI still gets its item", async () => {
    let calls = 0;
    const summarize = async (request) => (calls++, `## Goal\nOur summary of: ${request.prompt.includes("the migration plan") ? "the migration plan" : "?"}`);
    const c = conversation({ compactor: new Compactor({ contextWindow: 200_000, summarize }) });
    const gpt = openai.responses("gpt-5.2");
    await c.append({ role: "user", content: long("the migration plan", 60_000) });
    await c.run((args) => generateText({ model: gpt, providerOptions: OPENAI_OPTIONS, ...args }));
    const sealed = c.messages.findLast((m) => m.role === "compactionSummary");
    assert.match(sealed.summary, /encrypted/);
    // Now to Claude: the note would be all it gets.
    const claude = anthropic("claude-sonnet-4-5");
    await c.append({ role: "user", content: "what was the plan?" });
    const out = await c.run((args) => generateText({ model: claude, ...args }));
    assert.match(out.text, /last: what was the plan\?/);
    assert.equal(calls, 1, "one summary of ours, made when needed");
    const standIn = c.messages.findLast((m) => m.role === "compactionSummary");
    assert.equal(standIn.summary, "## Goal\nOur summary of: the migration plan");
    assert.deepEqual(standIn.provider, sealed.provider, "the item is kept");
    const sent = JSON.stringify(a.state.requests.at(-1).body.messages[0]);
    assert.match(sent, /Our summary of: the migration plan/, "Claude reads our summary");
    // Back to OpenAI: its item again, and no second summary of ours.
    await c.append({ role: "user", content: "and now?" });
    await c.run((args) => generateText({ model: gpt, providerOptions: OPENAI_OPTIONS, ...args }));
    const input = o.state.requests.at(-1).body.input;
    assert.ok(input.some((x) => x.id === sealed.provider.part.providerOptions.openai.itemId), "OpenAI gets its item");
    assert.equal(calls, 1);
  });
});

describe("an encrypted compaction and the same provider's Chat Completions model", () => {
  test("openai.chat would drop the item unseen: it is another model, sent our summary of what the item covers", async () => {
    let calls = 0;
    const summarize = async (request) => (calls++, `## Goal\nOur summary of: ${request.prompt.includes("the migration plan") ? "the migration plan" : "?"}`);
    const c = conversation({ compactor: new Compactor({ contextWindow: 200_000, summarize }) });
    await c.append({ role: "user", content: long("the migration plan", 60_000) });
    await c.run((args) => generateText({ model: openai.responses("gpt-5.2"), providerOptions: OPENAI_OPTIONS, ...args }));
    const sealed = c.messages.findLast((m) => m.role === "compactionSummary");
    assert.match(sealed.summary, /encrypted/);
    // The same provider's Chat Completions model, answering from a stub that records what it was sent.
    const sent = [];
    const chat = createOpenAI({
      apiKey: "test",
      fetch: async (_url, init) => {
        sent.push(JSON.parse(init.body));
        const reply = { id: "c", object: "chat.completion", created: 1, model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] };
        return new Response(JSON.stringify(reply), { headers: { "content-type": "application/json" } });
      },
    }).chat("gpt-4o");
    assert.equal(chat.provider, "openai.chat");
    const part = sealed.provider.part;
    assert.deepEqual(toModelMessages([sealed], { provider: "openai.chat" })[0].role, "user", "its text, as a user message");
    assert.deepEqual(toModelMessages([sealed], { provider: "openai.responses" }), [{ role: "assistant", content: [part] }], "the Responses API still gets the item");
    await c.append({ role: "user", content: "what was the plan?" });
    await c.run((args) => generateText({ model: chat, ...args }));
    assert.equal(calls, 1, "one summary of ours stands in for the note");
    assert.match(JSON.stringify(sent.at(-1).messages), /Our summary of: the migration plan/, "the chat model reads our summary");
  });
});

describe("our own compaction on top of an encrypted one", () => {
  /**
   * A conversation OpenAI compacted (its encrypted item, a summary whose
   * text is a note) and three steps after it; our summarizer says which
   * text it summarized.
   */
  async function afterOpenAiItem() {
    const requests = [];
    const summarize = async (request) => {
      requests.push(request);
      return request.prompt.includes("the migration plan: lorem") ? "## Goal\nOur summary of: the migration plan" : `## Goal\nOur summary #${requests.length}`;
    };
    const c = conversation({ compactor: new Compactor({ contextWindow: 200_000, settings: { keepRecentTokens: 2_000 }, summarize }) });
    const gpt = openai.responses("gpt-5.2");
    const step = (args) => generateText({ model: gpt, providerOptions: OPENAI_OPTIONS, ...args });
    await c.append({ role: "user", content: long("the migration plan", 60_000) });
    await c.run(step);
    const sealed = c.messages.findLast((m) => m.role === "compactionSummary");
    assert.match(sealed.summary, /encrypted/);
    for (let i = 0; i < 3; i++) {
      await c.append({ role: "user", content: long(`later step ${i}`, 2_000) });
      await c.run(step);
    }
    return { c, requests, sealed, step };
  }

  test("/compact after OpenAI's item: what the item covers is summarized first, so the new summary builds on readable text", async () => {
    const { c, requests, sealed } = await afterOpenAiItem();
    await c.compact();
    const summaries = c.messages.filter((m) => m.role === "compactionSummary");
    assert.equal(summaries.length, 2);
    assert.equal(summaries[0].summary, "## Goal\nOur summary of: the migration plan", "the item's note replaced by our summary of what it covers");
    assert.deepEqual(summaries[0].provider, sealed.provider, "the item is kept");
    const last = requests.at(-1).prompt;
    assert.match(last, /Our summary of: the migration plan/, "the new summary is made from the readable one");
    assert.doesNotMatch(last, /encrypted/);
    assert.ok(!summaries[1].provider, "the last summary is ours");
  });

  test("an overflow after OpenAI's item: the recovery's summary builds on our readable summary of what the item covers, not on its note", async () => {
    const { c, requests, step } = await afterOpenAiItem();
    // The provider refuses the next request as too long, once.
    let refused = false;
    await c.append({ role: "user", content: "one more step" });
    const out = await c.run((args) => {
      if (!refused) {
        refused = true;
        const message = "This model's maximum context length is 200000 tokens. However, your messages resulted in 210000 tokens.";
        throw new APICallError({ message, url: "u", requestBodyValues: {}, statusCode: 400, responseBody: JSON.stringify({ error: { message, code: "context_length_exceeded" } }), isRetryable: false });
      }
      return step(args);
    });
    assert.ok(refused && (await out.text), "the retry answered");
    const summaries = c.messages.filter((m) => m.role === "compactionSummary");
    assert.equal(summaries.length, 2, "the item and the recovery's summary");
    assert.equal(summaries[0].summary, "## Goal\nOur summary of: the migration plan", "the item's note replaced by our summary of what it covers");
    assert.match(requests.at(-1).prompt, /Our summary of: the migration plan/, "the recovery's summary is made from the readable one");
    assert.doesNotMatch(requests.at(-1).prompt, /encrypted/);
  });
});

describe("a failed threshold compaction", () => {
  test("a block without a summary (content: null) is no boundary: nothing changes but the reply", async () => {
    for (const stream of [false, true]) {
      const c = conversation();
      await c.append({ role: "user", content: long("the deploy log", 60_000) });
      a.state.failThreshold = true;
      const model = anthropic("claude-sonnet-4-5");
      const out = await c.run((args) => (stream ? streamText : generateText)({ model, providerOptions: ANTHROPIC_OPTIONS, ...args }));
      assert.match(await out.text, /^saw summary: no/);
      assert.equal(c.messages.filter((m) => m.role === "compactionSummary").length, 0);
      assert.deepEqual(c.messages.map((m) => m.role), ["user", "assistant"]);
    }
  });
});

describe("providerCompaction: true", () => {
  test("the conversation's threshold stays off before the provider's first compaction too", async () => {
    let ours = 0;
    const summarize = async () => (ours++, "## Goal\nours");
    const c = conversation({ providerCompaction: true, compactor: new Compactor({ contextWindow: 40_000, summarize }) });
    await c.append({ role: "user", content: long("a long paste", 45_000) });
    assert.ok(c.compactor.needsCompaction(c.messages), "over the conversation's own threshold");
    const out = await c.run((args) => generateText({ model: anthropic("claude-sonnet-4-5"), providerOptions: ANTHROPIC_OPTIONS, ...args }));
    assert.match(out.text, /^saw summary: no/, "under the provider's trigger: nothing compacted");
    assert.equal(ours, 0);
    assert.equal(c.messages.filter((m) => m.role === "compactionSummary").length, 0);
    // Without the option, the same context is compacted by the conversation.
    const plain = conversation({ compactor: new Compactor({ contextWindow: 40_000, summarize }) });
    await plain.append({ role: "user", content: "first" });
    await plain.run((args) => generateText({ model: anthropic("claude-sonnet-4-5"), ...args }));
    await plain.append({ role: "user", content: long("a long paste", 45_000) });
    await plain.run((args) => generateText({ model: anthropic("claude-sonnet-4-5"), ...args }));
    assert.equal(ours, 1, "the conversation compacted on its own threshold");
  });
});

describe("anthropicCompaction: Anthropic's on-demand compaction as the summarizer", () => {
  const session = () => {
    let t = 1_000;
    const turn = (i) => [
      { role: "user", content: long(`request ${i} about the router`, 2_000), timestamp: t++ },
      { role: "assistant", content: [{ type: "text", text: `done ${i}` }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: t++ },
    ];
    return Array.from({ length: 12 }, (_, i) => turn(i)).flat();
  };
  const compactor = () =>
    new Compactor({ contextWindow: 30_000, settings: { reserveTokens: 4_000, keepRecentTokens: 6_000 }, summarize: anthropicCompaction({ baseUrl: server.url.slice(0, -1), apiKey: "test", model: "claude-sonnet-4-5" }) });

  test("the signed block is the summary, kept as its part; the request asks to summarize under the beta", async () => {
    const out = await compactor().compact(session());
    const summary = out.messages.find((m) => m.role === "compactionSummary");
    // Without the conversation (compact() by hand), the serialized transcript is compacted.
    assert.match(summary.summary, /^<summary>Provider summary #\d+ \(on demand\): the user asked about <conversation>\n\[User\]: request 0 about the router/);
    const part = summary.provider.part;
    assert.equal(part.text, summary.summary);
    assert.match(part.providerOptions.anthropic.signature, /^sig-\d+-/);
    assert.deepEqual([summary.provider.name, summary.provider.provider, summary.provider.model], ["anthropic", "anthropic.messages", "claude-sonnet-4-5"]);
    assert.ok(summary.usage.input > 0, "the cost is the compaction iteration's");
    const request = a.state.requests.at(-1);
    assert.deepEqual(request.body.compaction, { type: "summarize" });
    assert.ok(request.betas.includes("compact-2026-09-04"));
    assert.equal(request.body.stop_sequences, undefined);
  });

  test("through the AI SDK, the next request to Claude sends the signed block first and unchanged", async () => {
    const c = aiSdkConversation({ compactor: compactor(), messages: session() });
    const model = anthropic("claude-sonnet-4-5");
    await c.append({ role: "user", content: "and the tests?" });
    await c.compact();
    const summary = c.messages.find((m) => m.role === "compactionSummary");
    assert.ok(summary.provider, "the compaction's summary keeps the block");
    const out = await c.run((args) => generateText({ model, ...args }));
    assert.match(out.text, /^saw summary: yes; context tokens: \d+; last: and the tests\?/, "the server accepted the signed block");
    const sent = a.state.requests.at(-1);
    assert.deepEqual(sent.body.messages[0].content[0], { type: "compaction", content: summary.summary, signature: summary.provider.part.providerOptions.anthropic.signature });
    assert.ok(sent.betas.includes("compact-2026-09-04"), "the SDK names the beta for a signed block");
    // pi's view (pi-ai cannot send the block): the summary's text.
    assert.equal(transformContext(c.messages)[0].summary, summary.summary);
  });

  test("a cut that splits a turn: one request, and the block stays though the summary quotes the hidden request", async () => {
    const messages = session().slice(0, 8);
    let t = 5_000;
    messages.push({ role: "user", content: "fix the router tests", timestamp: t++ });
    for (let k = 0; k < 6; k++) {
      messages.push({ role: "assistant", content: [{ type: "toolCall", id: `toolu_${k}`, name: "run", arguments: { step: k } }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "toolUse", timestamp: t++ });
      messages.push({ role: "toolResult", toolCallId: `toolu_${k}`, toolName: "run", content: [{ type: "text", text: long(`run ${k}`, 1_500) }], isError: false, timestamp: t++ });
    }
    const before = a.state.requests.length;
    const out = await compactor().compact(messages);
    assert.equal(a.state.requests.length - before, 1, "one request for the history and the turn's start");
    const summary = out.messages.find((m) => m.role === "compactionSummary");
    assert.notEqual(out.messages[out.messages.indexOf(summary) + 1].role, "user", "the cut split the turn");
    assert.match(summary.summary, /## Latest user request \(verbatim\)\n\nfix the router tests$/);
    assert.ok(summary.summary.startsWith(summary.provider.part.text), "the block's text, then what other models read");
    const sent = JSON.stringify(a.state.requests.at(-1).body.messages);
    assert.match(sent, /fix the router tests/, "the request covers the turn's start too");
    assert.match(sent, /run 0/);
  });

  test("a request that did not compact fails the compaction and changes nothing", async () => {
    const messages = session();
    a.state.refuseCompaction = true;
    await assert.rejects(compactor().compact(messages), /Anthropic compaction: no compaction in the response \(stop_reason: "max_tokens"\)/);
    assert.equal(messages.filter((m) => m.role === "compactionSummary").length, 0);
    assert.throws(() => anthropicCompaction({ model: "m" }), /anthropicCompaction: options\.apiKey/);
  });
});

describe("pi session files", () => {
  test("a provider's compaction is exported as a compaction pi loads, and imported back with its part", async () => {
    const { SessionManager } = await import(new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js", import.meta.url).href);
    const c = conversation();
    await c.append({ role: "user", content: long("the schema question", 60_000) });
    await c.run((args) => generateText({ model: anthropic("claude-sonnet-4-5"), providerOptions: ANTHROPIC_OPTIONS, ...args }));
    await c.append({ role: "user", content: "and then?" });
    const flat = c.messages;
    const summary = flat.find((m) => m.role === "compactionSummary");
    assert.ok(summary?.provider);
    const jsonl = messagesToPiSession(flat);
    assert.deepEqual(piSessionToMessages(jsonl).messages, flat, "import of the export is the same array, the part included");
    const dir = mkdtempSync(join(tmpdir(), "provider-compaction-"));
    try {
      const file = join(dir, "s.jsonl");
      writeFileSync(file, jsonl);
      const context = SessionManager.open(file, dir).buildSessionContext();
      // pi's context: its compaction summary (the provider's text), then what followed.
      assert.equal(context.messages[0].role, "compactionSummary");
      assert.equal(context.messages[0].summary, summary.summary);
      assert.deepEqual(context.messages.slice(1).map((m) => m.role), ["assistant", "user"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("conversions", () => {
  test("a provider's compaction part round-trips through fromModelMessages and toModelMessages", () => {
    const block = { type: "text", text: "<summary>s</summary>", providerOptions: { anthropic: { type: "compaction" } } };
    const message = { role: "assistant", content: [block, { type: "text", text: "reply" }] };
    const flat = fromModelMessages([{ role: "user", content: "hi" }, message], { provider: "anthropic.messages", model: "m" });
    assert.deepEqual(flat.map((m) => m.role), ["user", "compactionSummary", "assistant"]);
    assert.equal(flat[1].summary, "<summary>s</summary>");
    const back = toModelMessages(flat, { provider: "anthropic.messages" });
    assert.deepEqual(back[1], message, "joined back into one message, the block first");
    // A block between other parts: both sides join back, through JSON too.
    const between = { role: "assistant", content: [{ type: "reasoning", text: "think", providerOptions: { anthropic: { signature: "sig" } } }, block, { type: "text", text: "reply" }] };
    const flat3 = fromModelMessages([between], { provider: "anthropic.messages", model: "m" });
    assert.deepEqual(flat3.map((m) => m.role), ["assistant", "compactionSummary", "assistant"]);
    assert.deepEqual(toModelMessages(flat3, { provider: "anthropic.messages" }), [between]);
    assert.deepEqual(toModelMessages(JSON.parse(JSON.stringify(flat3)), { provider: "anthropic.messages" }), [between]);
    const item = { type: "custom", kind: "openai.compaction", providerOptions: { openai: { type: "compaction", itemId: "cmp_1", encryptedContent: "enc" } } };
    const reply = { role: "assistant", content: [{ type: "text", text: "done" }, item] };
    const flat2 = fromModelMessages([reply], { provider: "openai.responses" });
    assert.deepEqual(flat2.map((m) => m.role), ["assistant", "compactionSummary"]);
    assert.deepEqual(toModelMessages(flat2, { provider: "openai.responses" }), [reply], "the item back after the reply");
    assert.deepEqual(toModelMessages([flat2[1]], { provider: "openai.responses" }), [{ role: "assistant", content: [item] }]);
    assert.throws(() => toModelMessages(flat2, { provider: 42 }), /options\.provider must be/);
    assert.throws(() => conversation({ providerCompaction: "yes" }), /providerCompaction must be a boolean/);
  });
});

describe("openAiResponsesCompaction: OpenAI's /responses/compact as the summarizer", () => {
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const reply = (content, t) => ({ role: "assistant", content, api: "openai-responses", provider: "openai", model: "gpt-5.2", usage, stopReason: "stop", timestamp: t });
  /** Ten turns, then one long turn of tool calls: the cut splits it. */
  const session = () => {
    let t = 1_000;
    const out = [];
    for (let i = 0; i < 10; i++) {
      out.push({ role: "user", content: long(`request ${i} about the router`, 2_000), timestamp: t++ });
      out.push(reply([{ type: "text", text: `done ${i}` }], t++));
    }
    out.push({ role: "user", content: [{ type: "text", text: "run the checks" }], timestamp: t++ });
    for (let k = 0; k < 6; k++) {
      out.push({ ...reply([{ type: "toolCall", id: `call_${k}|fc_${k}`, name: "run", arguments: { step: k } }], t++), stopReason: "toolUse" });
      out.push({ role: "toolResult", toolCallId: `call_${k}|fc_${k}`, toolName: "run", content: [{ type: "text", text: long(`check ${k} output`, 1_500) }], isError: false, timestamp: t++ });
    }
    out.push(reply([{ type: "text", text: "all checks ran" }], t++));
    return out;
  };
  const summarizer = (options = {}) => openAiResponsesCompaction({ baseUrl: `${server.url}v1`, apiKey: "test", model: "gpt-5.2", ...options });
  const compactor = (options) => new Compactor({ contextWindow: 40_000, settings: { reserveTokens: 4_000, keepRecentTokens: 6_000 }, summarize: summarizer(options) });

  test("one request covers everything the compaction hides, split turn included; the item is kept as the summary's part", async () => {
    const messages = session();
    const before = o.state.requests.length;
    const out = await compactor().compact(messages);
    const sent = o.state.requests.slice(before);
    assert.equal(sent.length, 1, "one request, no separate turn prefix");
    assert.ok(sent[0].compact, "to /responses/compact");
    const summary = out.messages.find((m) => m.role === "compactionSummary");
    const at = out.messages.indexOf(summary);
    assert.equal(out.messages[at - 1].role, "toolResult", "the cut split the last turn");
    assert.equal(out.messages[at + 1].content[0].type, "toolCall");
    // The input: what the summary hides, as Responses items, in order.
    const input = sent[0].body.input;
    assert.equal(sent[0].body.model, "gpt-5.2");
    assert.deepEqual(input[0], { role: "user", content: [{ type: "input_text", text: messages[0].content }] });
    assert.deepEqual(input[1], { role: "assistant", content: "done 0" });
    const calls = input.filter((i) => i.type === "function_call");
    assert.deepEqual(calls[0], { type: "function_call", call_id: "call_0", name: "run", arguments: '{"step":0}' });
    const outputs = input.filter((i) => i.type === "function_call_output");
    assert.equal(outputs[0].call_id, "call_0");
    assert.equal(outputs[0].output, messages[22].content[0].text);
    assert.equal(calls.length, outputs.length, "each call with its result");
    assert.deepEqual(input.at(-1), { type: "function_call_output", call_id: `call_${calls.length - 1}`, output: messages[at - 1].content[0].text }, "up to the cut");
    // The answer: a note for other readers, the item and the user messages for OpenAI.
    assert.match(summary.summary, /^\[The conversation before this point was compacted by openai\.responses; its summary is encrypted/);
    assert.match(summary.summary, /## Latest user request \(verbatim\)\n\nrun the checks$/, "for other models, the hidden request quoted");
    const record = summary.provider;
    assert.deepEqual([record.name, record.provider, record.model], ["openai", "openai.responses", "gpt-5.2"]);
    assert.deepEqual(record.part.kind, "openai.compaction");
    const item = o.state.compacted.at(-1);
    assert.equal(record.part.providerOptions.openai.itemId, item.id);
    assert.equal(record.part.providerOptions.openai.encryptedContent, o.state.issued.get(item.id));
    assert.deepEqual(record.input, input.filter((i) => i.role === "user"), "the user messages, as returned");
    assert.ok(summary.usage.input > 0 && summary.usage.output === 120, "usage from the reply");
  });

  test("the conversation's threshold keeps compacting after a summary it asked OpenAI for", async () => {
    const c = aiSdkConversation({ compactor: new Compactor({ contextWindow: 30_000, settings: { reserveTokens: 4_000, keepRecentTokens: 6_000 }, summarize: summarizer() }) });
    const gpt = openai.responses("gpt-5.2");
    const before = o.state.compacted.length;
    for (let i = 0; i < 14; i++) {
      await c.append({ role: "user", content: long(`turn ${i}`, 4_000) });
      await c.run((args) => generateText({ model: gpt, providerOptions: { openai: { store: false } }, ...args }));
    }
    const summaries = c.messages.filter((m) => m.role === "compactionSummary");
    assert.ok(summaries.length >= 2, `compacted ${summaries.length} times`);
    assert.equal(o.state.compacted.length - before, summaries.length, "each by OpenAI's compaction");
    assert.ok(summaries.every((m) => m.provider.onDemand === true), "marked as asked for");
  });

  test("with summarizerContextWindow, still one request: OpenAI's compaction is never chunked", async () => {
    const before = o.state.requests.length;
    const c = new Compactor({ contextWindow: 40_000, summarizerContextWindow: 8_000, settings: { reserveTokens: 4_000, keepRecentTokens: 6_000 }, summarize: summarizer() });
    const out = await c.compact(session());
    assert.equal(o.state.requests.length - before, 1);
    assert.ok(out.messages.find((m) => m.role === "compactionSummary").provider, "the item is kept");
  });

  for (const store of [false, true]) {
    test(`through the AI SDK (store: ${store}), OpenAI gets the user messages, then its item, then what was kept; a second compaction chains the first`, async () => {
      const c = aiSdkConversation({ compactor: compactor(), messages: session() });
      const gpt = openai.responses("gpt-5.2");
      const call = (args) => generateText({ model: gpt, providerOptions: { openai: { store } }, ...args });
      await c.compact();
      const summary = c.messages.find((m) => m.role === "compactionSummary");
      await c.append({ role: "user", content: "and the tests?" });
      const out = await c.run(call);
      assert.match(out.text, /^saw summary: yes; context tokens: \d+; last: and the tests\?/, "the server accepted the item");
      const input = o.state.requests.at(-1).body.input;
      const at = input.findIndex((i) => i.type === "compaction" || i.type === "item_reference");
      const itemId = summary.provider.part.providerOptions.openai.itemId;
      assert.deepEqual(input[at], store ? { type: "item_reference", id: itemId } : { type: "compaction", id: itemId, encrypted_content: summary.provider.part.providerOptions.openai.encryptedContent });
      assert.deepEqual(input.slice(0, at).map((i) => i.content[0].text), summary.provider.input.map((i) => i.content[0].text), "the user messages first");
      assert.equal(input[at + 1].type, "function_call", "then what the compaction kept");
      // Again: the second compaction's input starts with the first one's items.
      for (let i = 0; i < 6; i++) await c.append({ role: "user", content: long(`later request ${i}`, 2_000) }), await c.run(call);
      await c.compact();
      const second = o.state.compacted.at(-1);
      assert.deepEqual(second.previous, [itemId], "the first item is compacted with the rest");
      const first = second.input.findIndex((i) => i.type === "compaction");
      assert.deepEqual(second.input.slice(0, first), summary.provider.input);
      const summaries = c.messages.filter((m) => m.role === "compactionSummary");
      assert.equal(summaries.length, 2);
      assert.notEqual(summaries[1].provider.part.providerOptions.openai.itemId, itemId);
    });
  }

  test("a pinned message the item's user messages hold is sent once, after the item, as pinned messages are", async () => {
    const messages = session();
    messages.splice(1, 0, { role: "user", content: "Pinned: always answer in British English.", timestamp: 999, pinned: true });
    const c = aiSdkConversation({ compactor: compactor(), messages });
    await c.compact();
    const summary = c.messages.find((m) => m.role === "compactionSummary");
    assert.ok(summary.provider.input.some((i) => i.content[0].text.startsWith("Pinned:")), "OpenAI returned the pinned message with the others");
    await c.append({ role: "user", content: "and the tests?" });
    const out = await c.run((args) => generateText({ model: openai.responses("gpt-5.2"), providerOptions: { openai: { store: false } }, ...args }));
    assert.match(out.text, /^saw summary: yes/);
    const input = o.state.requests.at(-1).body.input;
    const pinned = input.flatMap((item, k) => (item.role === "user" && item.content[0].text.startsWith("Pinned:") ? [k] : []));
    const item = input.findIndex((i) => i.type === "compaction");
    assert.equal(pinned.length, 1, "sent once");
    assert.ok(pinned[0] > item, "after the item");
    assert.deepEqual(input.slice(0, item).map((i) => i.content[0].text), summary.provider.input.map((i) => i.content[0].text).filter((t) => !t.startsWith("Pinned:")), "the other user messages before it");
  });

  test("a failed request, or a request with nothing it can read, changes nothing; a branch summary goes to `readable`", async () => {
    const messages = session();
    o.state.refuseCompact = true;
    await assert.rejects(compactor().compact(messages), /OpenAI compaction: HTTP 500: The server had an error/);
    assert.equal(messages.filter((m) => m.role === "compactionSummary").length, 0);
    // summarizeBranch asks for readable text: none without `readable`...
    await assert.rejects(compactor().summarizeBranch(messages.slice(0, 4)), /no `covered` messages.*give openAiResponsesCompaction a `readable` summarizer/);
    // ...and `readable`'s with it.
    const branch = await compactor({ readable: async (request) => `## Goal\nreadable ${request.kind}` }).summarizeBranch(messages.slice(0, 4));
    assert.equal(branch.summary.split("\n")[1], "readable branch");
    assert.throws(() => openAiResponsesCompaction({ model: "m" }), /openAiResponsesCompaction: options\.apiKey/);
    assert.throws(() => summarizer({ readable: "no" }), /openAiResponsesCompaction: options\.readable must be a function/);
    assert.equal(summarizer().oneRequest, true);
    assert.equal(anthropicCompaction({ apiKey: "k", model: "m" }).oneRequest, true);
  });

  test("switching to Claude: `readable`'s summary of what the item covers stands in", async () => {
    let asked = 0;
    const readable = async (request) => (asked++, `## Goal\nReadable: ${request.prompt.includes("request 0 about the router") ? "the router work" : "?"}`);
    const c = aiSdkConversation({ compactor: compactor({ readable }), messages: session() });
    await c.compact();
    await c.append({ role: "user", content: "what was done?" });
    const out = await c.run((args) => generateText({ model: anthropic("claude-sonnet-4-5"), ...args }));
    assert.match(out.text, /last: what was done\?/);
    assert.equal(asked, 1);
    const summary = c.messages.find((m) => m.role === "compactionSummary");
    assert.match(summary.summary, /Readable: the router work/);
    assert.match(JSON.stringify(a.state.requests.at(-1).body.messages[0]), /Readable: the router work/, "Claude reads it");
  });
});
