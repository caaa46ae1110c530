// agent-compaction/ai-sdk, useChat: toUIMessages shows the flat array as the
// UIMessages the AI SDK itself builds (file parts with URLs the SDK accepts,
// tool parts in the states useChat gives them), shows every message the
// core's display rule shows, with ids unique and stable; fromUIMessages
// stores UI messages so that toUIMessages gives them back.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { safeValidateUIMessages } from "ai";
import { agentMessagesToChatMessages } from "agent-compaction";
import { fromModelMessages, fromUIMessages, toModelMessages, toUIMessages } from "agent-compaction/ai-sdk";

const T = 1_700_000_000_000;
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const png = `data:image/png;base64,${PNG}`;

/** The flat array as an app stores it (JSON), shown. */
const shown = (model, options) => toUIMessages(JSON.parse(JSON.stringify(fromModelMessages(model, { timestamp: T }))), options);
const parts = (ui) => ui.flatMap((m) => m.parts).filter((p) => p.type !== "step-start");

async function assertValid(ui) {
  const v = await safeValidateUIMessages({ messages: ui });
  assert.ok(v.success, v.success ? "" : v.error.message);
}

describe("toUIMessages: the parts useChat holds", () => {
  test("images, files and approval requests are file parts and tool states, never placeholder text", async () => {
    const ui = shown([
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image", image: new URL("https://example.com/a.png") },
          { type: "image", image: new Uint8Array([1, 2, 3]), mediaType: "image/jpeg" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "here" },
          { type: "file", data: PNG, mediaType: "image/png" },
          { type: "tool-call", toolCallId: "c1", toolName: "rm", input: { p: 1 } },
          { type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1" },
        ],
      },
    ]);
    assert.deepEqual(parts(ui), [
      { type: "text", text: "look" },
      // No media type given: the top-level segment, as the SDK's own conversion writes it.
      { type: "file", mediaType: "image", url: "https://example.com/a.png" },
      { type: "file", mediaType: "image/jpeg", url: "data:image/jpeg;base64,AQID" },
      { type: "text", text: "here", state: "done" },
      { type: "file", mediaType: "image/png", url: png },
      { type: "tool-rm", toolCallId: "c1", state: "approval-requested", input: { p: 1 }, approval: { id: "ap1" } },
    ]);
    await assertValid(ui);
  });

  test("every file's url is a URL the SDK accepts: strings kept, bytes and base64 as data: URLs, a provider's file by reference", async () => {
    const ui = shown([
      {
        role: "user",
        content: [
          { type: "image", image: png, mediaType: "image/png" },
          { type: "image", image: "https://example.com/b.png", mediaType: "image/png" },
          { type: "file", data: { type: "data", data: "JVBERg==" }, mediaType: "application/pdf", filename: "a.pdf" },
          { type: "file", data: new Uint8Array([1, 2]), mediaType: "application/pdf" },
          { type: "file", data: "data:application/pdf;base64,AAEC", mediaType: "application/pdf" },
          { type: "file", data: { type: "text", text: "hi" }, mediaType: "text/plain" },
          { type: "file", data: { type: "reference", reference: { openai: "file-1" } }, mediaType: "application/pdf" },
        ],
      },
    ]);
    assert.deepEqual(ui[0].parts, [
      { type: "file", mediaType: "image/png", url: png },
      { type: "file", mediaType: "image/png", url: "https://example.com/b.png" },
      { type: "file", mediaType: "application/pdf", url: "data:application/pdf;base64,JVBERg==", filename: "a.pdf" },
      { type: "file", mediaType: "application/pdf", url: "data:application/pdf;base64,AQI=" },
      { type: "file", mediaType: "application/pdf", url: "data:application/pdf;base64,AAEC" },
      { type: "file", mediaType: "text/plain", url: "data:text/plain;base64,aGk=" },
      { type: "file", mediaType: "application/pdf", url: "", providerReference: { openai: "file-1" } },
    ]);
    await assertValid(ui);
    // Read back as useChat would send them, the files are the same files.
    const back = toModelMessages(await fromUIMessages(ui));
    assert.deepEqual(back[0].content.map((p) => (p.data.type === "url" ? p.data.url.href : p.data)), [
      png,
      "https://example.com/b.png",
      "data:application/pdf;base64,JVBERg==",
      "data:application/pdf;base64,AQI=",
      "data:application/pdf;base64,AAEC",
      "data:text/plain;base64,aGk=",
      { type: "reference", reference: { openai: "file-1" } },
    ]);
    // A file the UI holds by reference keeps the URL it shows.
    const uploaded = [{ id: "u1", role: "user", parts: [{ type: "file", mediaType: "application/pdf", url: "https://example.com/x.pdf", providerReference: { openai: "file-1" } }] }];
    assert.deepEqual(toUIMessages(JSON.parse(JSON.stringify(await fromUIMessages(uploaded)))), uploaded);
  });

  test("tool parts take the states useChat gives them: provider-executed results, approvals, denials, dynamic tools", async () => {
    const ui = [
      { id: "a1", role: "assistant", parts: [{ type: "step-start" }, { type: "tool-rm", toolCallId: "c1", state: "approval-requested", input: { path: "/" }, approval: { id: "ap1" } }] },
      { id: "a2", role: "assistant", parts: [{ type: "step-start" }, { type: "tool-rm", toolCallId: "c2", state: "approval-responded", input: { path: "/" }, approval: { id: "ap2", approved: true } }] },
      { id: "a3", role: "assistant", parts: [{ type: "step-start" }, { type: "tool-rm", toolCallId: "c3", state: "output-denied", input: { path: "/" }, approval: { id: "ap3", approved: false, reason: "no way" } }] },
      {
        id: "a4",
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "tool-web_search", toolCallId: "c4", state: "output-available", input: { q: "x" }, output: { hits: 3 }, providerExecuted: true },
          { type: "text", text: "found 3", state: "done" },
        ],
      },
      { id: "a5", role: "assistant", parts: [{ type: "step-start" }, { type: "dynamic-tool", toolName: "mcp_x", toolCallId: "c5", state: "output-available", input: {}, output: "ok" }] },
      { id: "a6", role: "assistant", parts: [{ type: "step-start" }, { type: "tool-rm", toolCallId: "c6", state: "output-available", input: { path: "/" }, output: "gone", approval: { id: "ap6", approved: true } }] },
    ];
    await assertValid(ui);
    for (const message of ui) {
      assert.deepEqual(toUIMessages(JSON.parse(JSON.stringify(await fromUIMessages([message])))), [message], message.id);
    }
    // The same from ModelMessages: a denial after an approval request is output-denied.
    const fromModel = shown([
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "c1", toolName: "rm", input: { p: 1 } },
          { type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1" },
          { type: "tool-call", toolCallId: "c2", toolName: "web_search", input: { q: "x" }, providerExecuted: true },
          { type: "tool-result", toolCallId: "c2", toolName: "web_search", output: { type: "json", value: { hits: 3 } } },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-approval-response", approvalId: "ap1", approved: false, reason: "no" },
          { type: "tool-result", toolCallId: "c1", toolName: "rm", output: { type: "execution-denied", reason: "no" } },
        ],
      },
    ]);
    assert.deepEqual(parts(fromModel), [
      { type: "tool-rm", toolCallId: "c1", state: "output-denied", input: { p: 1 }, approval: { id: "ap1", approved: false, reason: "no" } },
      { type: "tool-web_search", toolCallId: "c2", state: "output-available", input: { q: "x" }, output: { hits: 3 }, providerExecuted: true },
    ]);
    await assertValid(fromModel);
  });
});

describe("toUIMessages: what the core's display rule shows", () => {
  const user = (text) => ({ role: "user", content: text, timestamp: 1000 });
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const assistant = (content) => ({ role: "assistant", content, api: "x", provider: "x", model: "m", usage, stopReason: "stop", timestamp: 1000 });
  const summary = { role: "compactionSummary", summary: "s", tokensBefore: 50_000, timestamp: 5000 };
  const marker = { role: "toolOutputCleared", toolCallIds: ["c0"], tokensFreed: 10, timestamp: 6000 };

  test("system messages, branch summaries, shell commands, app roles and images in tool results are shown", async () => {
    const bash = { role: "bashExecution", command: "ls", output: "a.rs", exitCode: 0, cancelled: false, truncated: false, timestamp: 3 };
    const note = { role: "appNote", text: "remember", timestamp: 4 };
    const flat = [
      { role: "system", content: "Be terse.", timestamp: 1 },
      user("u0"),
      assistant([{ type: "toolCall", id: "c0", name: "read", arguments: { path: "a.png" } }]),
      { role: "toolResult", toolCallId: "c0", toolName: "read", content: [{ type: "text", text: "an image:" }, { type: "image", data: PNG, mimeType: "image/png" }], isError: false, timestamp: 1000 },
      { role: "branchSummary", summary: "tried another way", fromId: "e1", timestamp: 2 },
      bash,
      note,
    ];
    const ui = toUIMessages(flat);
    assert.deepEqual(ui.map((m) => [m.role, m.parts.filter((p) => p.type !== "step-start").map((p) => p.type)]), [
      ["system", ["text"]],
      ["user", ["text"]],
      ["assistant", ["tool-read"]],
      ["assistant", ["data-branch-summary"]],
      ["assistant", ["data-bash-execution"]],
      ["assistant", ["data-message"]],
    ]);
    // One row for each message the core shows (the tool result joins its call's row).
    assert.equal(ui.length, agentMessagesToChatMessages(flat).filter((m) => m.role !== "toolResult").length);
    assert.deepEqual(ui[0].parts, [{ type: "text", text: "Be terse." }]);
    assert.deepEqual(ui[2].parts[1].output, [
      { type: "text", text: "an image:" },
      { type: "file", mediaType: "image/png", url: png },
    ]);
    assert.deepEqual(ui[3].parts[0].data, { summary: "tried another way", fromId: "e1", timestamp: 2 });
    const { role, ...shell } = bash;
    assert.deepEqual(ui[4].parts[0].data, shell);
    assert.equal(ui[5].parts[0].data, note);
    await assertValid(ui);
    // Rows that stand for pi-only messages are not new messages: reading the UI back keeps the system message only.
    assert.deepEqual((await fromUIMessages(ui.filter((m) => m.role !== "user" && !m.parts.some((p) => p.type === "tool-read")))).map((m) => m.role), ["system"]);
  });

  test("ids are unique, and stable across calls and as the array grows", () => {
    const flat = [user("a"), summary, user("b"), { ...summary }, marker, { ...marker }, user("c")];
    const ui = toUIMessages(flat, { divider: true });
    const ids = ui.map((m) => m.id);
    assert.equal(ids.length, 7);
    assert.equal(new Set(ids).size, ids.length, `duplicate ids: ${ids}`);
    assert.deepEqual(toUIMessages(flat, { divider: true }).map((m) => m.id), ids);
    const grown = toUIMessages([...flat, { ...summary }, user("d")], { divider: true }).map((m) => m.id);
    assert.deepEqual(grown.slice(0, ids.length), ids);
    assert.equal(new Set(grown).size, grown.length);
  });
});
