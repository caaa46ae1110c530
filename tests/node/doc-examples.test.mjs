// Every example of the documentation (README.md, docs/*.md), as a reader
// copies it: each ```ts block a reader would paste is an `<!-- example: NAME -->`
// (tests/support/doc-examples.mjs), compiled with tsc --strict against the
// package's declarations, and its JavaScript run here in Node against the
// built package, the local OpenAI-compatible model of the demo
// (scripts/local-model.mjs) and an in-memory IndexedDB (fake-indexeddb).
// The examples are written for a page: `location` is the test server's URL.
// Each example has a driver below that uses it as an app would and checks
// what the reader was promised; an example without one fails.
import "fake-indexeddb/auto";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { CODE_LANGS, codeBlocks, compileExamples, docFiles, examples } from "../support/doc-examples.mjs";
import { piSessionToMessages } from "agent-compaction";
import { startServer } from "../../scripts/serve.mjs";
import { createLocalModel } from "../../scripts/local-model.mjs";

const SUMMARY = /The conversation history before this point was compacted/;
const text = (m) =>
  typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join("");
const roles = (messages) => messages.map((m) => m.role);
const count = (messages, role) => messages.filter((m) => m.role === role).length;

test("every code block a reader would copy is a named, runnable example", () => {
  for (const file of docFiles()) {
    for (const block of codeBlocks(file)) {
      if (CODE_LANGS.has(block.lang)) {
        assert.ok(block.name, `${file}:${block.line}: a \`\`\`${block.lang} block without an <!-- example: NAME --> line before it`);
      }
    }
  }
});

/** A conversation of `turns` user questions and answers, ~1,000 tokens each. */
function conversation(turns) {
  const messages = [];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: "user", content: `question ${i}: ` + "explain the module layout ".repeat(80), timestamp: 1_000 + i });
    messages.push({
      role: "assistant",
      content: [{ type: "text", text: `answer ${i}: ` + "the layout is flat ".repeat(80) }],
      api: "openai-completions",
      provider: "local",
      model: "local-coder",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop",
      timestamp: 1_000 + i,
    });
  }
  return messages;
}

/** The model's requests of one kind ("chat", "summary"). */
const requests = (local, kind) => local.requests.filter((r) => r.kind === kind);

/** Checks shared by the conversations that run until they compacted. */
function assertCompactedAndSaved(local, { messages, stored, asked }) {
  assert.equal(JSON.stringify(stored), JSON.stringify(messages), "the store holds exactly the flat array");
  assert.deepEqual(stored.filter((m) => m.role === "user").map(text), asked, "every question is kept, in order");
  assert.ok(count(messages, "compactionSummary") >= 1, "it compacted");
  const chats = requests(local, "chat");
  assert.ok(chats.every((r) => r.status === 200), "no request overflowed");
  assert.match(JSON.stringify(chats.at(-1).body.messages), SUMMARY, "the model is sent the summary");
  assert.ok(chats.at(-1).body.messages.length < messages.length, "the model no longer sees the summarized messages");
}

const drivers = {
  async "manual-loop"(example, local) {
    const asked = [];
    let last;
    for (let i = 0; i < 14; i++) {
      asked.push(`question ${i}: please explain ` + "the module layout in detail ".repeat(150));
      last = await example.send(asked.at(-1));
    }
    assertCompactedAndSaved(local, { messages: last.messages, stored: await last.store.load(last.sessionId), asked });

    // An overflow: the failed attempt is taken out, the context compacted, the request made once more.
    const summaries = count(last.messages, "compactionSummary");
    local.setConfig({ overflowNext: 1 });
    const first = local.requests.length;
    asked.push("question 14: and the tests?");
    last = await example.send(asked.at(-1));
    assert.deepEqual(local.requests.slice(first).map((r) => r.kind), ["overflow", "summary", "chat"]);
    assert.equal(count(last.messages, "compactionSummary"), summaries + 1, "compacted for the retry");
    assert.deepEqual(roles(last.messages).slice(-2), ["user", "assistant"]);
    assert.equal(last.messages.at(-1).stopReason, "stop", "the retry answered; the failed attempt is gone");
    assert.equal(JSON.stringify(await last.store.load(last.sessionId)), JSON.stringify(last.messages));

    // Two in a row: pi's "recovery failed", and no third request.
    local.setConfig({ overflowNext: 2 });
    const before = local.requests.length;
    await assert.rejects(example.send("question 15: once more"), /maximum context length/);
    const asks = local.requests.slice(before).filter((r) => r.kind !== "summary");
    assert.deepEqual(asks.map((r) => r.kind), ["overflow", "overflow"], "one retry, then no further request");
  },

  async "pi-agent-core"(example, local) {
    const asked = [];
    let last;
    for (let i = 0; i < 14; i++) {
      asked.push(`question ${i}: please explain ` + "the module layout in detail ".repeat(150));
      last = await example.send(asked.at(-1));
    }
    assert.match(example.status, /^\d+ \/ 16000 tokens$/, "the stats line reads context / window");
    const stored = await last.store.load(last.sessionId);
    assertCompactedAndSaved(local, { messages: last.messages, stored, asked });
    assert.equal(requests(local, "summary").length, count(last.messages, "compactionSummary"), "one summarizer request per summary");
  },

  async "agent-hooks"(example, local) {
    let last;
    for (let i = 0; i < 14; i++) last = await example.turn(`question ${i}: ` + "the module layout in detail ".repeat(150));
    assert.ok(count(last.messages, "compactionSummary") >= 1, "it compacted");
    assert.ok(last.contextTokens < 13_000, "under the threshold after each turn");
    const chats = requests(local, "chat");
    assert.match(JSON.stringify(chats.at(-1).body.messages), SUMMARY, "the agent sent the summary through the hooks");
    assert.ok(chats.at(-1).body.messages.length < last.messages.length);
  },

  async "ai-sdk-generate-text"(example, local) {
    let messages;
    for (let i = 0; i < 12; i++) messages = await example.ask(`question ${i}: ` + "the module layout in detail ".repeat(150));
    assert.ok(count(messages, "compactionSummary") >= 1, "compacted between calls");
    assert.equal(requests(local, "summary").length, 0, "the extractive summary needs no request");
    assert.match(JSON.stringify(requests(local, "chat").at(-1).body.messages), SUMMARY);
  },

  async "custom-summarizer"(example, local) {
    const history = conversation(24);
    const out = await example.compactNow(history);
    assert.equal(out.summarizedBy, "summarizer");
    assert.equal(count(out.messages, "compactionSummary"), 1);
    assert.equal(out.messages.length, history.length + 1, "nothing deleted");
    assert.ok(out.tokensAfter < out.tokensBefore);
    const asked = requests(local, "summary").map((r) => JSON.stringify(r.body.messages));
    assert.ok(asked.some((body) => body.includes("Additional focus: keep the schema details")), "the instructions reach the summarizer");
  },

  async history(example) {
    const filler = (i) => ({ role: "user", content: `step ${i}: ` + "routine work on the build ".repeat(40), timestamp: 10 + i });
    const messages = [
      { role: "user", content: "The deploy failed with error E0502 in parseConfigFile.", timestamp: 1 },
      { role: "compactionSummary", summary: "## Goal\nShip the release.", tokensBefore: 50_000, timestamp: 2 },
      ...Array.from({ length: 3 }, (_, i) => filler(i)),
    ];
    const found = example.lookUp(messages, "E0502 parse config");
    assert.deepEqual(found, ["The deploy failed with error E0502 in parseConfigFile."]);
    assert.deepEqual(example.lookUp(messages, "routine"), [], "what the model sees is not searched");
    const tools = [];
    const agent = { state: { messages, tools, model: { provider: "p", id: "m", contextWindow: 128_000 } }, subscribe: () => () => {} };
    const added = [];
    Object.defineProperty(agent.state, "tools", { get: () => added, set: (t) => added.splice(0, added.length, ...t) });
    example.setUp(agent);
    assert.deepEqual(added.map((t) => t.name), ["search_history", "read_history"]);
    const answer = await added[0].execute("c1", { query: "E0502" });
    assert.match(answer.content[0].text, /error E0502 in parseConfigFile/);
  },

  async "provider-compaction"(example) {
    const { createAnthropic } = await import("@ai-sdk/anthropic");
    const { anthropicServer } = await import("../support/compaction-providers.mjs");
    const provider = anthropicServer();
    const server = await startServer({ port: 0, handlers: [provider.handler], mounts: [] });
    try {
      const model = createAnthropic({ baseURL: `${server.url}v1`, apiKey: "test" })("claude-sonnet-4-5");
      const first = await example.ask(model, "Read this log: " + "line ok\n".repeat(80_000));
      assert.match(first, /saw summary: yes/, "past 150,000 tokens the provider compacted");
      const second = await example.ask(model, "What failed?");
      assert.match(second, /^saw summary: yes; context tokens: \d+; last: What failed\?/);
      const sent = provider.state.requests.at(-1).body.messages;
      assert.equal(sent[0].content[0].type, "compaction", "the block went back first");
      assert.equal(sent.filter((m) => m.role === "user").length, 1, "nothing it covers was sent");
    } finally {
      await server.close();
    }
  },

  async "openai-compaction"(example) {
    const { generateText } = await import("ai");
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { openAiResponsesServer } = await import("../support/compaction-providers.mjs");
    const provider = openAiResponsesServer();
    const server = await startServer({ port: 0, handlers: [provider.handler], mounts: [] });
    try {
      const model = createOpenAI({ baseURL: `${server.url}v1`, apiKey: "test" }).responses("gpt-5.2");
      const conversation = example.openAiConversation(`${server.url}v1`);
      const ask = async (question) => {
        await conversation.append({ role: "user", content: question });
        const result = await conversation.run((args) => generateText({ model, ...args, providerOptions: { openai: { store: false } } }));
        return result.text;
      };
      for (let i = 0; i < 4; i++) await ask(`step ${i}: ` + "read the build log ".repeat(4_000));
      await conversation.compact();
      assert.equal(provider.state.compacted.length, 1, "OpenAI compacted");
      const answer = await ask("What failed?");
      assert.match(answer, /^saw summary: yes; context tokens: \d+; last: What failed\?/);
      const input = provider.state.requests.at(-1).body.input;
      const item = input.findIndex((i) => i.type === "compaction");
      assert.ok(item > 0 && input.slice(0, item).every((i) => i.role === "user"), "the user messages, then the item");
    } finally {
      await server.close();
    }
  },

  async "history-store"(example) {
    const { SessionStore } = await import("agent-compaction");
    const store = await SessionStore.open();
    const { id } = await store.createSession({ title: "stored history" });
    const filler = (i) => ({ role: "user", content: `step ${i}: ` + "routine work on the build ".repeat(40), timestamp: 10 + i });
    const error = "The deploy failed with error E0502 in parseConfigFile.";
    await store.save(id, [
      { role: "user", content: error, timestamp: 1 },
      { role: "compactionSummary", summary: "## Goal\nShip the release.", tokensBefore: 50_000, timestamp: 2 },
      ...Array.from({ length: 3 }, (_, i) => filler(i)),
    ]);
    store.close();
    assert.equal(await example.lookUpStored(id, "E0502 parse config"), error);
    assert.equal(await example.lookUpStored(id, "routine"), undefined, "what the model sees is not searched");
    const added = [];
    const agent = { state: { messages: [], model: { provider: "p", id: "m", contextWindow: 128_000 } }, subscribe: () => () => {} };
    Object.defineProperty(agent.state, "tools", { get: () => added, set: (t) => added.splice(0, added.length, ...t) });
    await example.resume(agent, id);
    assert.deepEqual(agent.state.messages.map((m) => m.role), ["compactionSummary", "user", "user", "user"]);
    const answer = await added[0].execute("c1", { query: "E0502" });
    assert.match(answer.content[0].text, /error E0502 in parseConfigFile/);
  },

  async pinned(example) {
    const rule = "Rule: never modify files under vendor/.";
    const messages = [...conversation(2), ...example.addRule([], rule), ...conversation(24)];
    const out = await example.compactor.compact(messages);
    const context = example.compactor.modelContext(out.messages);
    assert.equal(context[0].role, "compactionSummary");
    assert.equal(context[1].content, rule, "the rule is sent right after the summary");
    assert.equal(context[1].pinned, true);
    assert.equal(context.filter((m) => m.content === rule).length, 1);
  },

  async "session-store"(example) {
    const messages = conversation(3);
    const { meta, all, forModel, sessions } = await example.keep(messages);
    assert.deepEqual(all, messages);
    assert.deepEqual(forModel, messages, "no summary: the whole array");
    assert.equal(meta.title, "Refactor");
    assert.ok(sessions.some((s) => s.id === meta.id && s.messageCount === messages.length));
  },

  async conflict(example) {
    const { SessionStore } = await import("agent-compaction");
    const [mine, theirs] = [await SessionStore.open({ name: "conflict" }), await SessionStore.open({ name: "conflict" })];
    const { id } = await mine.createSession();
    const start = conversation(1);
    await mine.save(id, start);
    await theirs.load(id);
    const saved = [...start, ...conversation(1)];
    assert.equal(await example.saveOrReload(theirs, id, saved), saved, "no conflict: saved");
    const reloaded = await example.saveOrReload(mine, id, [...start, { role: "user", content: "mine", timestamp: 9 }]);
    assert.deepEqual(reloaded, saved, "a conflict: what the other store saved");
    await assert.rejects(example.saveOrReload(mine, "no such session", start), { name: "SessionNotFoundError" });
  },

  async "undo-and-fork"(example) {
    const { compactor, store } = example;
    const history = conversation(24);
    const { id } = await store.createSession();
    const { messages } = await compactor.compact(history);
    await store.save(id, messages);
    const undone = await example.undoLastCompaction(id, messages);
    assert.deepEqual(undone, history, "the summary is gone, every message is back");
    assert.deepEqual(await store.load(id), history);

    const fork = await example.forkAt(id, history, 10);
    const forked = await store.load(fork.id);
    assert.equal(fork.title, "Another way");
    assert.deepEqual(forked.slice(0, 10), history.slice(0, 10));
    assert.equal(forked.length, 11);
    assert.equal(forked[10].role, "branchSummary");
    await store.delete(id);
    assert.equal((await store.load(fork.id)).length, 11, "the fork shares nothing with its source");
  },

  async "pi-session-files"(example) {
    const messages = conversation(2);
    const { jsonl, back, session } = example.toPiAndBack(messages);
    assert.deepEqual(back, messages);
    assert.equal(JSON.parse(jsonl.split("\n")[0]).version, 3);
    assert.equal(session.cwd, "/home/me/project");
    const { meta, exported } = await example.importFile(new Blob([jsonl]));
    assert.equal(meta.messageCount, messages.length);
    assert.deepEqual(example.toPiAndBack(piSessionToMessages(exported).messages).back, messages);
  },

  async "ai-sdk"(example, local) {
    const asked = [];
    let streamed = "";
    let last;
    for (let i = 0; i < 12; i++) {
      asked.push(`question ${i}: read src/mod${i}.rs and explain ` + "the module layout in detail ".repeat(60));
      last = await example.send(asked.at(-1), (delta) => (streamed += delta));
    }
    assert.ok(streamed.length > 0, "text streamed");
    const stored = await last.store.load(last.sessionId);
    assertCompactedAndSaved(local, { messages: last.messages, stored, asked });
    assert.ok(count(stored, "toolResult") >= 12, "the tool ran every turn");
    assert.ok(requests(local, "summary").length >= 1, "summarized through the app's model");
  },
};

describe("the documentation's examples, run in Node", () => {
  let server, local, compiled;
  const all = examples();
  before(async () => {
    compiled = await compileExamples();
    local = createLocalModel({ delayMs: 0 });
    // The project's files the AI SDK example's tool reads.
    const files = (req, res, url) => {
      if (!url.pathname.startsWith("/files/")) return false;
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      res.end(`// ${decodeURIComponent(url.pathname.slice(7))}\n` + "pub fn item() -> u32 { 1 }\n".repeat(140));
      return true;
    };
    server = await startServer({ port: 0, handlers: [files, local.handle] });
    globalThis.location = new URL(server.url);
  });
  after(async () => {
    delete globalThis.location;
    await server?.close();
  });

  for (const [name, block] of all) {
    test(`${block.file}: example "${name}"`, async () => {
      const drive = drivers[name];
      assert.ok(drive, `example "${name}" (${block.file}:${block.line}) has a driver in tests/node/doc-examples.test.mjs`);
      local.reset();
      const example = await import(pathToFileURL(compiled.js(name)).href);
      await drive(example, local);
    });
  }

  test("every driver has its example", () => {
    assert.deepEqual(Object.keys(drivers).filter((name) => !all.has(name)), []);
  });
});
