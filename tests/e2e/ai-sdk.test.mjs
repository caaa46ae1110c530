// agent-compaction/ai-sdk in a browser page, in each engine
// (tests/support/browsers.mjs): the real `ai` 7 and
// @ai-sdk/openai-compatible (bundled once with Vite, mapped by an import
// map), real fetch to the local model of the demo, real IndexedDB.
//   - the README's AI SDK quick start, cut out of README.md (compiled by
//     tsc) and run as written until it has compacted;
//   - a conversation reloaded from SessionStore mid-way (a new page load)
//     that goes on from the stored flat array, summary first;
//   - the store with converted conversations: revisions, ConflictError,
//     exportJsonl / importJsonl;
//   - a provider's own compaction (Anthropic's block, OpenAI's item, as the
//     AI SDK's providers carry them) saved, read back in a new page, sent
//     as the same part to its provider, exported and imported whole;
//   - OpenAI's /responses/compact as the summarizer, called from the page
//     (tests/support/compaction-providers.mjs): its item and user messages
//     saved, read back in a new page and sent before what was kept.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { build } from "vite";
import { ENGINES, launch } from "../support/browsers.mjs";
import { filesHandler, readmeExample } from "../support/readme.mjs";
import { startServer } from "../../scripts/serve.mjs";
import { createLocalModel } from "../../scripts/local-model.mjs";
import { openAiResponsesServer } from "../support/compaction-providers.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const SUMMARY = /The conversation history before this point was compacted/;

const IMPORTS = `<script type="importmap">{ "imports": {
  "agent-compaction": "/pkg/index.js",
  "agent-compaction/ai-sdk": "/pkg/ai-sdk.js",
  "ai": "/vendor/ai.js",
  "@ai-sdk/openai-compatible": "/vendor/ai.js"
} }</script>`;
const page = (module) => `<!doctype html><meta charset="utf-8"><title>ai-sdk</title>${IMPORTS}
<script type="module">window.app = await import("${module}");</script>`;

/** The test's own app module: a conversation it can open again by session id. */
const APP = `
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { Compactor, SessionStore, ConflictError } from "agent-compaction";
import { aiSdkConversation, aiSdkSummarizer, fromModelMessages, toModelMessages, toUIMessages } from "agent-compaction/ai-sdk";
import { transformContext, openAiResponsesCompaction } from "agent-compaction";

const provider = createOpenAICompatible({ name: "local", baseURL: new URL("/local/v1", location.href).href, includeUsage: true });
const model = provider("local-coder");
const tools = {
  read_file: tool({
    description: "Read a text file of the project and return its whole content.",
    inputSchema: jsonSchema({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }),
    execute: async ({ path }) => (await fetch("/files/" + path)).text(),
  }),
};
export { ConflictError, SessionStore, toUIMessages, fromModelMessages, toModelMessages, transformContext, Compactor, openAiResponsesCompaction };
export async function open(sessionId) {
  const store = await SessionStore.open({ name: "ai-sdk-e2e" });
  const id = sessionId ?? (await store.createSession({ title: "e2e" })).id;
  const compactor = new Compactor({
    contextWindow: 16000,
    settings: { reserveTokens: 3000, keepRecentTokens: 4000 },
    summarize: aiSdkSummarizer(model),
  });
  const conv = aiSdkConversation({ compactor, store, sessionId: id, messages: await store.load(id) });
  const turn = async (text) => {
    await conv.append({ role: "user", content: text });
    await conv.run((call) => generateText({ model, tools, stopWhen: stepCountIs(6), ...call }));
    return conv.messages;
  };
  return { store, id, conv, turn };
}
`;

let vendorDir;
let vendor;
before(async () => {
  vendorDir = mkdtempSync(join(tmpdir(), "ai-sdk-vendor-"));
  await build({
    root: repo,
    configFile: false,
    logLevel: "silent",
    build: {
      outDir: vendorDir,
      emptyOutDir: true,
      minify: false,
      lib: { entry: join(repo, "tests/support/ai-sdk-vendor.js"), formats: ["es"], fileName: () => "ai.js" },
    },
  });
  vendor = readFileSync(join(vendorDir, "ai.js"), "utf8");
});
after(() => vendorDir && rmSync(vendorDir, { recursive: true, force: true }));

for (const engine of ENGINES) {
  describe(engine, () => {
    let server, browser, local, openAi;
    before(async () => {
      openAi = openAiResponsesServer();
      const code = await readmeExample("ai-sdk");
      local = createLocalModel({ delayMs: 0 });
      const files = {
        "/vendor/ai.js": [vendor, "text/javascript"],
        "/example.js": [code, "text/javascript"],
        "/example.html": [page("/example.js"), "text/html"],
        "/app.js": [APP, "text/javascript"],
        "/app.html": [page("/app.js"), "text/html"],
      };
      const serveFiles = filesHandler(files);
      const handler = (req, res, url) => {
        if (url.pathname.startsWith("/files/")) {
          const path = decodeURIComponent(url.pathname.slice("/files/".length));
          res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
          res.end(`// ${path}\n` + "pub fn item() -> u32 { 1 }\n".repeat(140));
          return true;
        }
        return serveFiles(req, res, url);
      };
      server = await startServer({ port: 0, handlers: [handler, local.handle, openAi.handler] });
      browser = await launch(engine);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    test("the README's AI SDK example streams, uses its tool, compacts past the threshold and saves every message", async () => {
      local.reset();
      const p = await browser.newPage();
      const errors = [];
      p.onProblem((x) => x.startsWith("pageerror: ") && errors.push(x));
      await p.goto(`${server.url}example.html`);
      await p.waitForFunction(() => window.app?.send, null, { timeout: 60_000 });
      const outcome = await p.evaluate(async () => {
        const asked = [];
        let last;
        let streamed = "";
        for (let i = 0; i < 12; i++) {
          const question = `question ${i}: read src/mod${i}.rs and explain ` + "the module layout in detail ".repeat(60);
          asked.push(question);
          last = await window.app.send(question, (t) => (streamed += t));
        }
        const stored = await last.store.load(last.sessionId);
        const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join(""));
        return {
          asked,
          streamed: streamed.length,
          roles: last.messages.map((m) => m.role),
          storedSame: JSON.stringify(stored) === JSON.stringify(last.messages),
          userTexts: stored.filter((m) => m.role === "user").map(text),
          toolResults: stored.filter((m) => m.role === "toolResult").length,
        };
      });
      await p.flush();
      assert.deepEqual(errors, []);
      assert.ok(outcome.streamed > 0, "text streamed");
      assert.equal(outcome.storedSame, true, "the store holds exactly the flat array");
      assert.deepEqual(outcome.userTexts, outcome.asked);
      assert.ok(outcome.toolResults >= 12, "the tool ran every turn");
      const summaries = outcome.roles.filter((r) => r === "compactionSummary").length;
      assert.ok(summaries >= 1, "it compacted");
      const chats = local.requests.filter((r) => r.kind === "chat");
      assert.ok(chats.every((r) => r.status === 200));
      assert.match(JSON.stringify(chats.at(-1).body.messages[0]), SUMMARY);
      assert.ok(local.requests.some((r) => r.kind === "summary"), "summarized through the app's model");
      await p.close();
    });

    test("reload mid-conversation: the stored flat array goes on, summary first; revisions, ConflictError, export/import", async () => {
      local.reset();
      const p = await browser.newPage();
      const errors = [];
      p.onProblem((x) => x.startsWith("pageerror: ") && errors.push(x));
      await p.goto(`${server.url}app.html`);
      await p.waitForFunction(() => window.app?.open, null, { timeout: 60_000 });
      const first = await p.evaluate(async () => {
        const s = await window.app.open();
        for (let i = 0; i < 10; i++) await s.turn(`step ${i}: read src/part${i}.rs ` + "and explain it ".repeat(80));
        const meta = (await s.store.list()).find((m) => m.id === s.id);
        return { id: s.id, count: s.conv.messages.length, json: JSON.stringify(s.conv.messages), revision: meta.revision };
      });
      assert.ok(JSON.parse(first.json).some((m) => m.role === "compactionSummary"), "compacted before the reload");

      // A new page load: nothing in memory, everything from IndexedDB.
      await p.goto(`${server.url}app.html`);
      await p.waitForFunction(() => window.app?.open, null, { timeout: 60_000 });
      const before = local.requests.length;
      const second = await p.evaluate(async (id) => {
        const s = await window.app.open(id);
        const loaded = JSON.stringify(s.conv.messages);
        await s.turn("step after reload: read src/after.rs");
        const meta = (await s.store.list()).find((m) => m.id === id);
        // Another store (another tab) saves: this conversation's next save conflicts.
        const other = await window.app.SessionStore.open({ name: "ai-sdk-e2e" });
        const theirs = await other.load(id);
        await other.save(id, [...theirs, { role: "user", content: "from another tab", timestamp: Date.now() }]);
        let conflict = null;
        try {
          await s.turn("this save conflicts");
        } catch (e) {
          conflict = { name: e.name, isConflict: e instanceof window.app.ConflictError };
        }
        // Export and import: the converted conversation comes back whole
        // (compared with sorted keys: pi's file format orders a summary's fields its own way).
        const canon = (v) =>
          Array.isArray(v) ? v.map(canon) : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v;
        const jsonl = await s.store.exportJsonl(id);
        const imported = await s.store.importJsonl(jsonl);
        const back = await s.store.load(imported.id);
        const stored = await s.store.load(id);
        return {
          loaded,
          revision: meta.revision,
          conflict,
          exportedSame: JSON.stringify(canon(back)) === JSON.stringify(canon(stored)),
          firstDiff: (() => {
            for (let i = 0; i < Math.max(back.length, stored.length); i++) {
              if (JSON.stringify(canon(back[i])) !== JSON.stringify(canon(stored[i]))) return [i, JSON.stringify(stored[i]), JSON.stringify(back[i])];
            }
            return null;
          })(),
          kinds: [...new Set(stored.map((m) => m.role))].sort(),
          ui: window.app.toUIMessages(stored, { divider: true }).length,
        };
      }, first.id);
      await p.flush();
      assert.deepEqual(errors, []);
      assert.equal(second.loaded, first.json, "the reload gives the saved flat array");
      assert.ok(second.revision > first.revision, "revisions advance");
      assert.deepEqual(second.conflict, { name: "ConflictError", isConflict: true });
      assert.equal(second.exportedSame, true, `export then import gives the same messages: ${JSON.stringify(second.firstDiff)}`);
      assert.ok(second.ui > 0);
      assert.deepEqual(second.kinds, ["assistant", "compactionSummary", "toolResult", "user"]);
      const after = local.requests.slice(before).filter((r) => r.kind === "chat");
      assert.ok(after.length >= 1);
      assert.match(JSON.stringify(after[0].body.messages[0]), SUMMARY, "the first request after the reload starts with the summary");
      await p.close();
    });

    test("a provider's compaction is stored, read back in a new page and sent as the same part to its provider", async () => {
      const p = await browser.newPage();
      await p.goto(`${server.url}app.html`);
      await p.waitForFunction(() => window.app?.open, null, { timeout: 60_000 });
      const block = { type: "text", text: "<summary>the schema work so far</summary>", providerOptions: { anthropic: { type: "compaction", signature: "sig-1" } } };
      const item = { type: "custom", kind: "openai.compaction", providerOptions: { openai: { type: "compaction", itemId: "cmp_1", encryptedContent: "enc-1" } } };
      const id = await p.evaluate(async ({ block, item }) => {
        const { SessionStore, fromModelMessages } = window.app;
        const flat = [
          ...fromModelMessages([{ role: "user", content: "migrate the schema" }]),
          ...fromModelMessages([{ role: "assistant", content: [block, { type: "text", text: "done" }] }], { provider: "anthropic.messages", model: "claude" }),
          ...fromModelMessages([{ role: "user", content: "and the index?" }, { role: "assistant", content: [{ type: "text", text: "added" }, item] }], { provider: "openai.responses", model: "gpt" }),
        ];
        const store = await SessionStore.open({ name: "ai-sdk-provider" });
        const { id } = await store.createSession({ title: "provider" });
        await store.save(id, flat);
        store.close();
        return id;
      }, { block, item });
      await p.goto(`${server.url}app.html`);
      await p.waitForFunction(() => window.app?.open, null, { timeout: 60_000 });
      const out = await p.evaluate(async (id) => {
        const { SessionStore, toModelMessages, transformContext } = window.app;
        const store = await SessionStore.open({ name: "ai-sdk-provider" });
        const loaded = await store.load(id);
        const context = await store.loadContext(id);
        const imported = await store.load((await store.importJsonl(await store.exportJsonl(id))).id);
        await store.delete(id);
        store.close();
        return {
          roles: loaded.map((m) => m.role),
          toOpenAi: toModelMessages(transformContext(loaded), { provider: "openai.responses" }),
          toClaude: toModelMessages(transformContext(loaded), { provider: "anthropic.messages" }),
          contextRoles: context.map((m) => m.role),
          whole: toModelMessages(loaded, { provider: "anthropic.messages" })[1],
          same: JSON.stringify(imported) === JSON.stringify(loaded),
        };
      }, id);
      await p.close();
      assert.deepEqual(out.roles, ["user", "compactionSummary", "assistant", "user", "assistant", "compactionSummary"]);
      assert.deepEqual(out.contextRoles, ["compactionSummary"], "loadContext starts at the last (OpenAI's) compaction");
      assert.deepEqual(out.toOpenAi, [{ role: "assistant", content: [item] }], "the item, as received, to OpenAI");
      assert.equal(out.toClaude[0].role, "user", "to Claude, the item's note as a summary");
      assert.deepEqual(out.whole, { role: "assistant", content: [block, { type: "text", text: "done" }] }, "Anthropic's block, first in its reply, as received");
      assert.equal(out.same, true, "export then import gives the same array");
    });

    test("openAiResponsesCompaction from the page: the item and its user messages are stored, read back and sent before what was kept", async () => {
      const p = await browser.newPage();
      await p.goto(`${server.url}app.html`);
      await p.waitForFunction(() => window.app?.open, null, { timeout: 60_000 });
      const before = openAi.state.compacted.length;
      const id = await p.evaluate(async () => {
        const { SessionStore, Compactor, openAiResponsesCompaction } = window.app;
        const messages = [];
        for (let i = 0; i < 8; i++) {
          messages.push({ role: "user", content: `request ${i}: ` + "tune the index ".repeat(400), timestamp: 1 + 2 * i });
          messages.push({ role: "assistant", content: [{ type: "text", text: `done ${i}` }], api: "openai-responses", provider: "openai", model: "gpt-5.2",
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 + 2 * i });
        }
        const summarize = openAiResponsesCompaction({ baseUrl: new URL("/v1", location.href).href, apiKey: "test", model: "gpt-5.2" });
        const compactor = new Compactor({ contextWindow: 20_000, settings: { reserveTokens: 3_000, keepRecentTokens: 4_000 }, summarize });
        const { messages: compacted } = await compactor.compact(messages);
        const store = await SessionStore.open({ name: "ai-sdk-openai-compact" });
        const { id } = await store.createSession({ title: "compact" });
        await store.save(id, compacted);
        store.close();
        return id;
      });
      assert.equal(openAi.state.compacted.length, before + 1, "the page asked OpenAI to compact");
      const compacted = openAi.state.compacted.at(-1);
      await p.goto(`${server.url}app.html`);
      await p.waitForFunction(() => window.app?.open, null, { timeout: 60_000 });
      const out = await p.evaluate(async (id) => {
        const { SessionStore, toModelMessages, transformContext } = window.app;
        const store = await SessionStore.open({ name: "ai-sdk-openai-compact" });
        const loaded = await store.load(id);
        const context = await store.loadContext(id);
        const imported = await store.load((await store.importJsonl(await store.exportJsonl(id))).id);
        await store.delete(id);
        store.close();
        // Plain copies: each value crosses to the test once.
        const copy = (value) => JSON.parse(JSON.stringify(value));
        return {
          toOpenAi: copy(toModelMessages(transformContext(loaded), { provider: "openai.responses" })),
          contextFirst: context[0].role,
          loaded: copy(loaded),
          imported: copy(imported),
        };
      }, id);
      await p.close();
      const summary = out.loaded.find((m) => m.role === "compactionSummary");
      const record = summary.provider;
      assert.equal(record.part.providerOptions.openai.itemId, compacted.id);
      assert.equal(record.part.providerOptions.openai.encryptedContent, openAi.state.issued.get(compacted.id));
      const users = compacted.input.filter((i) => i.role === "user");
      assert.deepEqual(record.input, users, "the user messages OpenAI returned, stored as they came");
      const sent = out.toOpenAi;
      assert.deepEqual(sent.slice(0, users.length).map((m) => m.content[0].text), users.map((u) => u.content[0].text), "the user messages first");
      assert.deepEqual(sent[users.length], { role: "assistant", content: [record.part] }, "then the item");
      assert.equal(sent.length, users.length + 1 + summary.keptMessages, "then what was kept");
      assert.equal(out.contextFirst, "compactionSummary");
      assert.deepEqual(out.imported, out.loaded, "export then import gives the same array");
    });
  });
}
