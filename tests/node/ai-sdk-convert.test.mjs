// agent-compaction/ai-sdk, conversion: every ModelMessage shape the AI SDK
// (v7) defines goes to the flat array and back unchanged, a flat array
// goes to ModelMessages and back unchanged, and pi's functions
// (estimates, cut points, serializeConversation, prepareCompaction) see a
// converted conversation exactly as the hand-written pi equivalent.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  Compactor,
  convertToLlm,
  estimateContextTokens,
  estimateTokens,
  findCutPoint,
  prepareCompaction,
  serializeConversation,
  transformContext,
} from "agent-compaction";
import { jsonSchema } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import {
  aiSdkConversation,
  aiSdkSummarizer,
  fromModelMessages,
  fromUIMessages,
  toModelMessages,
  toUIMessages,
  usageFromAiSdk,
  PROVIDER_OPTIONS_KEY,
} from "agent-compaction/ai-sdk";

const T = 1_700_000_000_000;
const po = (k) => ({ [k]: { cache: { type: "ephemeral" } } });
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** Every shape: one ModelMessage per case (a new set of objects per call). */
const shapes = () => ({
  "system": { role: "system", content: "You are terse." },
  "system with providerOptions": { role: "system", content: "Be kind.", providerOptions: po("anthropic") },
  "user string": { role: "user", content: "hello" },
  "user text parts, part and message providerOptions": {
    role: "user",
    content: [{ type: "text", text: "a" }, { type: "text", text: "b", providerOptions: po("openai") }],
    providerOptions: po("anthropic"),
  },
  "user image (base64)": { role: "user", content: [{ type: "text", text: "see" }, { type: "image", image: PNG, mediaType: "image/png" }] },
  "user image (URL object, bytes, no media type)": {
    role: "user",
    content: [
      { type: "image", image: new URL("https://example.com/a.png") },
      { type: "image", image: new Uint8Array([1, 2, 3]), mediaType: "image/jpeg" },
    ],
  },
  "user file parts (every data form)": {
    role: "user",
    content: [
      { type: "file", data: { type: "data", data: PNG }, mediaType: "application/pdf", filename: "a.pdf" },
      { type: "file", data: { type: "url", url: new URL("https://example.com/b.pdf") }, mediaType: "application/pdf" },
      { type: "file", data: { type: "text", text: "inline doc" }, mediaType: "text/plain" },
      { type: "file", data: { type: "reference", reference: { openai: "file-1" } }, mediaType: "application/pdf" },
      { type: "file", data: new Uint8Array([7, 8]).buffer, mediaType: "application/octet-stream" },
    ],
  },
  "assistant string": { role: "assistant", content: "plain answer" },
  "assistant text, reasoning, tool calls, files, providerOptions": {
    role: "assistant",
    content: [
      { type: "reasoning", text: "thinking…", providerOptions: { anthropic: { signature: "sig" } } },
      { type: "text", text: "I will read it." },
      { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "src/a.rs" } },
      { type: "tool-call", toolCallId: "c2", toolName: "web_search", input: { q: "x" }, providerExecuted: true, providerOptions: po("openai") },
      { type: "tool-call", toolCallId: "c3", toolName: "echo", input: "a string input" },
      { type: "file", data: { type: "data", data: PNG }, mediaType: "image/png" },
      { type: "reasoning-file", data: { type: "data", data: PNG }, mediaType: "image/png" },
      { type: "custom", kind: "openai.compaction", providerOptions: po("openai") },
      { type: "tool-result", toolCallId: "c2", toolName: "web_search", output: { type: "json", value: { hits: 3 } } },
      { type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1", reason: "writes files" },
    ],
    providerOptions: po("openai"),
  },
  "tool results in every output form": {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "c1", toolName: "read_file", output: { type: "text", value: "fn main() {}" } },
      { type: "tool-result", toolCallId: "c2", toolName: "stat", output: { type: "json", value: { size: 12, tags: ["a", null], ok: true } } },
      { type: "tool-result", toolCallId: "c3", toolName: "run", output: { type: "error-text", value: "exit 1" } },
      { type: "tool-result", toolCallId: "c4", toolName: "run", output: { type: "error-json", value: { code: 2 } }, providerOptions: po("openai") },
      { type: "tool-result", toolCallId: "c5", toolName: "rm", output: { type: "execution-denied", reason: "not allowed" } },
      { type: "tool-result", toolCallId: "c6", toolName: "rm", output: { type: "execution-denied" } },
      {
        type: "tool-result",
        toolCallId: "c7",
        toolName: "shot",
        output: {
          type: "content",
          value: [
            { type: "text", text: "screenshot:" },
            { type: "file", data: { type: "data", data: PNG }, mediaType: "image/png" },
            { type: "file", data: { type: "url", url: new URL("https://example.com/c.png") }, mediaType: "image/png", filename: "c.png" },
            { type: "image-data", data: PNG, mediaType: "image/png" },
            { type: "text", text: "more", providerOptions: po("anthropic") },
          ],
          providerOptions: po("openai"),
        },
      },
      { type: "tool-result", toolCallId: "c8", toolName: "j", output: { type: "json", value: "just a string" } },
    ],
    providerOptions: po("anthropic"),
  },
  "tool approval response (alone)": {
    role: "tool",
    content: [{ type: "tool-approval-response", approvalId: "ap1", approved: false, reason: "no" }],
  },
  "tool approval response and result in one message": {
    role: "tool",
    content: [
      { type: "tool-approval-response", approvalId: "ap2", approved: true, providerExecuted: true },
      { type: "tool-result", toolCallId: "c9", toolName: "x", output: { type: "text", value: "done" } },
    ],
  },
});
const SHAPES = shapes();

describe("ModelMessage -> flat -> ModelMessage", () => {
  for (const [name, shape] of Object.entries(SHAPES)) {
    test(name, () => {
      const flat = fromModelMessages([shapes()[name]], { timestamp: T });
      // The flat array is JSON (the store, pi session files): bytes and URLs are encoded.
      const stored = JSON.parse(JSON.stringify(flat));
      assert.deepEqual(stored, flat, "the flat messages survive JSON");
      assert.deepStrictEqual(toModelMessages(stored), [shape]);
    });
  }
  test("a whole conversation, all shapes in a row, through JSON", () => {
    const all = Object.values(SHAPES);
    const flat = JSON.parse(JSON.stringify(fromModelMessages(Object.values(shapes()), { timestamp: T })));
    assert.deepStrictEqual(toModelMessages(flat), all);
  });
  test("two tool messages in a row stay two", () => {
    const two = [
      { role: "tool", content: [{ type: "tool-result", toolCallId: "a", toolName: "t", output: { type: "text", value: "1" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "b", toolName: "t", output: { type: "text", value: "2" } }] },
    ];
    const flat = JSON.parse(JSON.stringify(fromModelMessages(structuredClone(two))));
    assert.equal(flat.length, 2);
    assert.deepStrictEqual(toModelMessages(flat), two);
  });
});

/** Hand-written pi messages and what the SDK has for them. */
function piConversation() {
  const usage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const asst = (content, stopReason = "toolUse") => ({ role: "assistant", content, api: "ai-sdk", provider: "local", model: "m", usage, stopReason, timestamp: T });
  const out = [];
  for (let i = 0; i < 12; i++) {
    out.push({ role: "user", content: `task ${i}: ` + "explain the parser ".repeat(40), timestamp: T });
    out.push(asst([{ type: "text", text: "Reading." }, { type: "toolCall", id: `r${i}`, name: "read_file", arguments: { path: `src/f${i}.rs` } }]));
    out.push({ role: "toolResult", toolCallId: `r${i}`, toolName: "read_file", content: [{ type: "text", text: "x".repeat(2000 + i) }], isError: false, timestamp: T });
    out.push(asst([{ type: "thinking", thinking: "ok" }, { type: "text", text: "Done " + i }], "stop"));
  }
  return out;
}

describe("flat -> ModelMessage -> flat", () => {
  test("hand-written pi messages and a summary come back deep-equal (and the same objects)", () => {
    const pi = piConversation();
    const summary = { role: "compactionSummary", summary: "## Goal\nparse", tokensBefore: 9000, timestamp: T, details: { readFiles: ["src/a.rs"], modifiedFiles: [] } };
    const flat = [...pi.slice(0, 8), summary, ...pi.slice(8)];
    const model = toModelMessages(flat);
    const back = fromModelMessages(model);
    assert.deepStrictEqual(back, flat);
    back.forEach((m, i) => assert.equal(m, flat[i]));
  });
  test("through a structured clone of the ModelMessages (no identity): content, tool calls, results, summary identical; only pi's metadata defaults", () => {
    const pi = piConversation();
    const summary = { role: "compactionSummary", summary: "S", tokensBefore: 5, timestamp: T };
    const flat = [summary, ...pi];
    const back = fromModelMessages(structuredClone(toModelMessages(flat)), { timestamp: T, usage: pi[1].usage, provider: "local", model: "m" });
    assert.deepStrictEqual(back, flat);
  });
  test("a summary becomes the user message pi sends, carrying itself in providerOptions", () => {
    const summary = { role: "compactionSummary", summary: "Goal: X", tokensBefore: 5, timestamp: T, fromHook: true };
    const [m] = toModelMessages([summary]);
    assert.equal(m.role, "user");
    assert.equal(m.content[0].text, convertToLlm([summary])[0].content[0].text);
    assert.deepEqual(m.providerOptions[PROVIDER_OPTIONS_KEY].message, summary);
    // It survives JSON (the SDK copies messages) and comes back as compactionSummary.
    assert.deepStrictEqual(fromModelMessages(JSON.parse(JSON.stringify([m]))), [summary]);
  });
  test("each message is converted once (the same ModelMessage objects step after step)", () => {
    const flat = piConversation();
    const a = toModelMessages(flat);
    const b = toModelMessages([...flat, { role: "user", content: "next", timestamp: T }]);
    for (let i = 0; i < a.length; i++) assert.equal(b[i], a[i]);
  });
});

describe("pi's functions on converted messages", () => {
  const pi = piConversation();
  const sdk = toModelMessages(pi).map((m) => structuredClone(m));
  const converted = fromModelMessages(sdk, { timestamp: T, usage: pi[1].usage, provider: "local", model: "m" });

  test("estimates", () => {
    assert.deepEqual(converted.map(estimateTokens), pi.map(estimateTokens));
    assert.deepEqual(estimateContextTokens(converted), estimateContextTokens(pi));
  });
  test("cut points and prepareCompaction", () => {
    for (const keep of [500, 1000, 2000, 4000, 8000]) {
      assert.deepEqual(findCutPoint(converted, 0, converted.length, keep), findCutPoint(pi, 0, pi.length, keep));
    }
    const settings = { enabled: true, reserveTokens: 1000, keepRecentTokens: 2000 };
    const a = prepareCompaction(converted, settings);
    const b = prepareCompaction(pi, settings);
    assert.equal(a.firstKeptIndex, b.firstKeptIndex);
    assert.equal(a.tokensBefore, b.tokensBefore);
  });
  test("serializeConversation", () => {
    assert.equal(serializeConversation(convertToLlm(converted)), serializeConversation(convertToLlm(pi)));
  });
  test("a json tool output is text pi code sees", () => {
    const flat = fromModelMessages([SHAPES["tool results in every output form"]]);
    assert.equal(flat[1].content[0].text, JSON.stringify({ size: 12, tags: ["a", null], ok: true }));
    assert.ok(estimateTokens(flat[1]) > 0);
    assert.match(serializeConversation(convertToLlm(flat)), /"size":12/);
  });
  test("the text of a tool call whose input is not an object, and of a file given as text, is text pi code sees", () => {
    // An OpenAI custom tool's input is the patch itself (a string); a file's data may be text.
    const patch = "*** Begin Patch\n*** Update File: src/main.rs\n-fn old_name() {}\n+fn new_name() {}\n*** End Patch";
    const doc = "The deployment runbook: restart the frobnicator before the quux service.";
    const sdk = [
      { role: "user", content: [{ type: "text", text: "Read this." }, { type: "file", data: { type: "text", text: doc }, mediaType: "text/plain", filename: "runbook.txt" }] },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "p1", toolName: "apply_patch", input: patch },
          { type: "tool-call", toolCallId: "p2", toolName: "pick", input: ["a", 1] },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "p1", toolName: "apply_patch", output: { type: "text", value: "Done" } },
          { type: "tool-result", toolCallId: "p2", toolName: "pick", output: { type: "text", value: "a" } },
        ],
      },
    ];
    const flat = fromModelMessages(structuredClone(sdk), { timestamp: T });
    const serialized = serializeConversation(convertToLlm(flat));
    for (const text of [patch, doc, JSON.stringify(["a", 1])]) assert.ok(serialized.includes(text), `serializeConversation shows ${JSON.stringify(text.slice(0, 20))}`);
    assert.ok(estimateTokens(flat[0]) >= Math.ceil(doc.length / 4), `the file's text is estimated: ${estimateTokens(flat[0])}`);
    assert.ok(estimateTokens(flat[1]) >= Math.ceil(patch.length / 4), `the patch is estimated: ${estimateTokens(flat[1])}`);
    // The parts themselves still come back as they were.
    assert.deepStrictEqual(toModelMessages(JSON.parse(JSON.stringify(flat))), sdk);
  });
  test("never a cut between a tool call and its results, even when one tool message held several", () => {
    const msgs = [];
    for (let i = 0; i < 30; i++) {
      msgs.push({ role: "user", content: `q${i} ` + "words ".repeat(30) });
      msgs.push({
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: `a${i}`, toolName: "t", input: { i } },
          { type: "tool-call", toolCallId: `b${i}`, toolName: "t", input: { i } },
        ],
      });
      msgs.push({
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: `a${i}`, toolName: "t", output: { type: "json", value: { big: "y".repeat(300 * (i % 4)) } } },
          { type: "tool-result", toolCallId: `b${i}`, toolName: "t", output: { type: "text", value: "z".repeat(200) } },
        ],
      });
      msgs.push({ role: "assistant", content: [{ type: "text", text: "ok " + i }] });
    }
    const flat = fromModelMessages(msgs, { timestamp: T });
    for (let keep = 50; keep < 4000; keep += 37) {
      const cut = findCutPoint(flat, 0, flat.length, keep);
      const first = flat[cut.firstKeptIndex];
      assert.notEqual(first.role, "toolResult", `keep ${keep}`);
      // What is sent from the cut on starts with a whole message, never a lone result.
      const sent = toModelMessages(flat.slice(cut.firstKeptIndex));
      assert.notEqual(sent[0].role, "tool");
    }
  });
  test("transformContext on a converted array with a summary sends the summary first", () => {
    const summary = { role: "compactionSummary", summary: "S", tokensBefore: 5, timestamp: T };
    const flat = [...converted.slice(0, 20), summary, ...converted.slice(20)];
    const sent = toModelMessages(transformContext(flat));
    assert.equal(sent[0].providerOptions[PROVIDER_OPTIONS_KEY].message, summary);
    assert.equal(sent.length, toModelMessages(converted.slice(20)).length + 1);
  });
});

describe("failed attempts", () => {
  test("an assistant message that ended in an error or an abort is never sent (as pi-ai skips it); toModelMessages alone converts it", () => {
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const failed = (stopReason) => ({ role: "assistant", content: [], api: "a", provider: "p", model: "m", usage, stopReason, errorMessage: "boom", timestamp: T });
    const flat = [{ role: "user", content: "hi", timestamp: T }, failed("error"), failed("aborted"), { role: "user", content: "again", timestamp: T }];
    const conv = aiSdkConversation({ compactor: new Compactor({ contextWindow: 100_000 }), messages: flat });
    assert.deepStrictEqual(conv.modelMessages(), [{ role: "user", content: "hi" }, { role: "user", content: "again" }]);
    // The converter is lossless: what is sent is the engine's decision.
    assert.equal(toModelMessages(flat).length, 4);
  });
});

describe("bad input", () => {
  test("clear TypeErrors", () => {
    assert.throws(() => fromModelMessages("x"), TypeError);
    assert.throws(() => fromModelMessages([{ role: "robot", content: "" }]), /role must be/);
    assert.throws(() => fromModelMessages([null]), TypeError);
    assert.throws(() => toModelMessages([null]), TypeError);
    assert.throws(() => toModelMessages({}), TypeError);
  });

  const ok = { role: "user", content: "hello" };
  const fails = (messages, message, options) => assert.throws(() => fromModelMessages(messages, options), { name: "TypeError", message });

  test("a message's content of the wrong shape is named by index and field", () => {
    fails([ok, { role: "user", content: 5 }], "fromModelMessages: messages[1].content must be a string or an array of parts, got a number");
    fails([ok, { role: "user", content: null }], "fromModelMessages: messages[1].content must be a string or an array of parts, got null");
    fails([ok, { role: "assistant" }], "fromModelMessages: messages[1].content must be a string or an array of parts, got undefined");
    fails([{ role: "system", content: ["x"] }], "fromModelMessages: messages[0].content must be a string (a system message's text), got an array");
    fails([ok, ok, { role: "tool", content: "done" }], "fromModelMessages: messages[2].content must be an array of parts, got a string");
    fails([ok, [ok]], "fromModelMessages: messages[1] must be a ModelMessage object, got an array");
    fails([{ role: 7, content: "x" }], 'fromModelMessages: messages[0].role must be "system", "user", "assistant" or "tool", got a number');
  });

  test("a part that is not an object with a string type, or whose pi fields have the wrong type, is named", () => {
    fails([ok, { role: "assistant", content: [null] }], "fromModelMessages: messages[1].content[0] must be an object, got null");
    fails([ok, { role: "user", content: [{ type: "text", text: "a" }, { text: "b" }] }], "fromModelMessages: messages[1].content[1].type must be a string, got undefined");
    fails([{ role: "user", content: [{ type: "text", text: 5 }] }], "fromModelMessages: messages[0].content[0].text must be a string, got a number");
    fails([{ role: "assistant", content: [{ type: "reasoning" }] }], "fromModelMessages: messages[0].content[0].text must be a string, got undefined");
    fails(
      [{ role: "assistant", content: [{ type: "tool-call", toolName: "f", input: {} }] }],
      "fromModelMessages: messages[0].content[0].toolCallId must be a string, got undefined",
    );
    const result = (output) => [ok, { role: "tool", content: [{ type: "tool-result", toolCallId: "t", toolName: "n", output }] }];
    fails(result(undefined), "fromModelMessages: messages[1].content[0].output must be an object (a tool output), got undefined");
    fails(result({ type: "text", value: 1 }), "fromModelMessages: messages[1].content[0].output.value must be a string, got a number");
    fails(result({ type: "content", value: 5 }), "fromModelMessages: messages[1].content[0].output.value must be an array of parts, got a number");
    fails(result({ type: "content", value: [{ type: "text", text: "a" }, "b"] }), "fromModelMessages: messages[1].content[0].output.value[1] must be an object, got a string");
    const cyclic = {};
    cyclic.self = cyclic;
    assert.throws(() => fromModelMessages(result({ type: "json", value: cyclic })), {
      name: "TypeError",
      message: /^fromModelMessages: messages\[1\]\.content\[0\]\.output\.value must be JSON data: /,
    });
  });

  test("a cycle in a part kept whole is a TypeError naming where it closes; a shared object is no cycle", () => {
    const cyc = { type: "custom-part", text: "x" };
    cyc.self = cyc;
    fails([ok, { role: "user", content: [cyc] }], "fromModelMessages: messages[1].content[0].self refers back to messages[1].content[0] (a cycle): a part must be JSON data");
    const deep = { type: "custom-part", data: { list: [1, { "odd key": null }] } };
    deep.data.list[1]["odd key"] = deep.data;
    fails(
      [{ role: "assistant", content: [{ type: "text", text: "a" }, deep] }],
      'fromModelMessages: messages[0].content[1].data.list[1]["odd key"] refers back to messages[0].content[1].data (a cycle): a part must be JSON data',
    );
    const shared = { n: 1 };
    const [m] = fromModelMessages([{ role: "user", content: [{ type: "custom-part", a: shared, b: [shared] }] }], { timestamp: T });
    assert.deepStrictEqual(toModelMessages([m])[0].content, [{ type: "custom-part", a: { n: 1 }, b: [{ n: 1 }] }]);
  });

  test("options of the wrong type are named", () => {
    fails([ok], "fromModelMessages: options must be an object, got null", null);
    fails([ok], "fromModelMessages: options.timestamp must be a number (milliseconds since the epoch), got a string", { timestamp: "now" });
    fails([ok], "fromModelMessages: options.model must be a string, got a number", { model: 4 });
  });

  test("fromUIMessages names the UI message and its field", async () => {
    const rejects = (ui, message, options) => assert.rejects(fromUIMessages(ui, options), { name: "TypeError", message });
    await rejects([1, 2], "fromUIMessages: uiMessages[0] must be a UIMessage object, got a number");
    await rejects([{ id: "a", role: "user", parts: [{ type: "text", text: "x" }] }, { id: "b", role: "user" }], "fromUIMessages: uiMessages[1].parts must be an array of parts, got undefined");
    await rejects([{ id: "a", role: "user", parts: [null] }], "fromUIMessages: uiMessages[0].parts[0] must be an object, got null");
    // A hole of a sparse array is named at once, however long the array.
    const ui = { id: "a", role: "user", parts: [{ type: "text", text: "x" }] };
    await rejects([ui, , ui], "fromUIMessages: uiMessages[1] must be a UIMessage object, got undefined");
    await rejects(new Array(2 ** 32 - 1), "fromUIMessages: uiMessages[0] must be a UIMessage object, got undefined");
    await rejects([{ id: "a", role: "robot", parts: [] }], 'fromUIMessages: uiMessages[0].role must be "system", "user" or "assistant", got "robot"');
    await rejects(
      [{ id: "a", role: "user", parts: [{ type: "text", text: "x" }] }, { id: "b", role: "user", parts: [{ type: "text", text: 5 }] }],
      "fromUIMessages: convertToModelMessages(uiMessages[1])[0].content[0].text must be a string, got a number",
    );
    await rejects([], "fromUIMessages: options must be an object, got a string", "x");
  });

  test("toUIMessages: options must be an object", () => {
    assert.throws(() => toUIMessages([], null), { name: "TypeError", message: "toUIMessages: options must be an object, got null" });
  });

  test("a flat message of the wrong shape is named by caller, index and field in toModelMessages, toUIMessages and the conversation", async () => {
    const user = { role: "user", content: "hello", timestamp: T };
    const answer = { role: "assistant", content: [{ type: "text", text: "hi" }], api: "a", provider: "p", model: "m", stopReason: "stop", timestamp: T };
    const cases = [
      [{ role: "user", timestamp: T }, "messages[2].content must be a string or an array of content blocks, got undefined"],
      [{ role: "user", content: [{ type: "text", text: "a" }, null], timestamp: T }, "messages[2].content[1] must be a content block object, got null"],
      [{ ...answer, content: "hi" }, "messages[2].content must be an array of content blocks, got a string"],
      [{ role: "toolResult", toolCallId: "c", toolName: "t", isError: false, timestamp: T }, "messages[2].content must be an array of content blocks, got undefined"],
    ];
    for (const [bad, text] of cases) {
      const flat = [user, answer, bad, user];
      assert.throws(() => toModelMessages(flat), { name: "TypeError", message: `toModelMessages: ${text}` });
      assert.throws(() => toUIMessages(flat), { name: "TypeError", message: `toUIMessages: ${text}` });
      const compactor = new Compactor({ contextWindow: 100_000 });
      assert.throws(() => aiSdkConversation({ compactor, messages: flat }), { name: "TypeError", message: `aiSdkConversation: options.${text}` });
      const conversation = aiSdkConversation({ compactor, messages: [user, answer] });
      await assert.rejects(conversation.setMessages(flat), { name: "TypeError", message: `setMessages: ${text}` });
      // A message changed in place after it was given: named as the compactor names a message of the flat array.
      const changed = { ...user };
      await conversation.setMessages([user, answer, changed, user]);
      delete changed.content;
      Object.assign(changed, bad);
      assert.throws(() => conversation.modelMessages(), { name: "TypeError", message: text });
    }
    // A pi-only message is named by its own index, not as the only message converted.
    const summary = { role: "compactionSummary", summary: 5, tokensBefore: 1, timestamp: T };
    assert.throws(() => toModelMessages([user, summary]), { name: "TypeError", message: "toModelMessages: messages[1].summary must be a string, got a number" });
    assert.throws(() => toModelMessages([user, { role: "custom", customType: "x", display: true, content: [null], timestamp: T }]), {
      name: "TypeError",
      message: "toModelMessages: messages[1].content[0] must be a content block object, got null",
    });
    assert.throws(() => toModelMessages([user, 5]), { name: "TypeError", message: "toModelMessages: messages[1] must be a message object, got a number" });
    assert.throws(() => toUIMessages([user, 5]), { name: "TypeError", message: "toUIMessages: messages[1] must be a message object, got a number" });
  });
});

describe("app data that looks like the storage markers", () => {
  const keys = ["$aiSdkBytes", "$aiSdkArrayBuffer", "$aiSdkUrl", "$aiSdkObject"];
  const lookalikes = [];
  for (const k of keys) {
    lookalikes.push({ [k]: "https://example.com/x" });
    lookalikes.push({ [k]: "AAEC" });
    lookalikes.push({ [k]: { [k]: "AAEC" } });
    lookalikes.push({ nested: { deeper: { [k]: "AAEC" } } });
    lookalikes.push([{ [k]: "AAEC" }, [{ [k]: 1 }], { [k]: null }]);
    lookalikes.push({ [k]: "AAEC", other: 1 });
  }
  lookalikes.push({ $aiSdkObject: { $aiSdkUrl: "https://example.com/" } });
  // An own "__proto__" key (as JSON.parse makes it): a key like any other.
  lookalikes.push(JSON.parse('{"__proto__":{"polluted":true},"keep":1}'));
  lookalikes.push([JSON.parse('{"__proto__":[1]}'), { nested: JSON.parse('{"__proto__":null}') }]);
  for (const [i, value] of lookalikes.entries()) {
    test(`providerOptions value ${i}: ${JSON.stringify(value)} comes back as it was`, () => {
      const shapes = [
        {
          role: "user",
          content: [
            { type: "text", text: "hi", providerOptions: { app: { value } } },
            { type: "file", data: "AAEC", mediaType: "application/pdf", providerOptions: { app: { value } } },
          ],
          providerOptions: { app: { value } },
        },
        {
          role: "assistant",
          content: [{ type: "file", data: "AAEC", mediaType: "application/pdf", providerOptions: { app: value } }],
        },
      ];
      const flat = JSON.parse(JSON.stringify(fromModelMessages(structuredClone(shapes), { timestamp: T })));
      assert.deepStrictEqual(toModelMessages(flat), shapes);
    });
  }
  test("real bytes and URLs next to lookalikes still round-trip", () => {
    const shape = {
      role: "user",
      content: [
        { type: "file", data: new Uint8Array([0, 1, 2]), mediaType: "application/octet-stream", providerOptions: { app: { $aiSdkBytes: "AAEC" } } },
        { type: "file", data: new URL("https://example.com/a.png"), mediaType: "image/png", providerOptions: { app: { $aiSdkUrl: "x" } } },
      ],
    };
    const flat = JSON.parse(JSON.stringify(fromModelMessages([shape], { timestamp: T })));
    assert.deepStrictEqual(toModelMessages(flat), [shape]);
  });
});

describe("aiSdkSummarizer's prefix request", () => {
  test("leaves failed attempts (stopReason error or aborted) out, as the conversation's own requests did", async () => {
    const prompts = [];
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        prompts.push(prompt);
        return {
          content: [{ type: "text", text: "## Goal\nKeep going." }],
          finishReason: { unified: "stop", raw: undefined },
          usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
          warnings: [],
        };
      },
    });
    const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const answer = (text, stopReason, t) => ({ role: "assistant", content: [{ type: "text", text }], api: "ai-sdk", provider: "mock", model: "m", usage: zero, stopReason, timestamp: t });
    const flat = [];
    for (let i = 0; i < 6; i++) {
      flat.push({ role: "user", content: `q${i} ` + "lorem ipsum ".repeat(300), timestamp: T + 2 * i });
      flat.push(answer(`a${i} ` + "dolor sit ".repeat(300), "stop", T + 2 * i + 1));
    }
    flat.push({ role: "user", content: "q6", timestamp: T + 20 }, answer("half an answer", "aborted", T + 21));
    flat.push({ role: "user", content: "q7", timestamp: T + 22 }, { ...answer("", "error", T + 23), errorMessage: "boom" });
    flat.push({ role: "user", content: "q8", timestamp: T + 24 });
    const compactor = new Compactor({ contextWindow: 16_000, settings: { reserveTokens: 3_000, keepRecentTokens: 1_000 }, summarize: aiSdkSummarizer(model) });
    const conv = aiSdkConversation({ compactor, messages: flat, tools: {}, backgroundAt: false });
    const own = conv.modelMessages();
    await conv.compact();
    const text = (m) => JSON.stringify(m.content);
    // The summary request: the conversation as its own request sent it, then the instruction.
    const prefix = prompts[0].filter((m) => m.role !== "system").slice(0, -1);
    assert.equal(prefix.length, own.length);
    assert.ok(!prefix.some((m) => /half an answer/.test(text(m))), "the aborted attempt is not sent");
    assert.deepStrictEqual(prefix.map((m) => m.role), own.map((m) => m.role));
  });
});

describe("aiSdkSummarizer's replies", () => {
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
  /** A model answering `replies` in turn (content and unified finish reason), recording each prompt. */
  function scripted(replies) {
    const prompts = [];
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        const [content, finish] = replies[prompts.length];
        prompts.push(prompt);
        return { content, finishReason: { unified: finish, raw: finish }, usage, warnings: [] };
      },
    });
    return { model, prompts };
  }
  const request = (prefix) => ({
    kind: "history",
    systemPrompt: "You summarize.",
    prompt: "<conversation>…</conversation> Summarize.",
    maxTokens: 1000,
    signal: new AbortController().signal,
    reason: "manual",
    ...(prefix && {
      context: { systemPrompt: "You code.", messages: [{ role: "user", content: "fix the parser", timestamp: T }], tools: { read: { description: "read a file", inputSchema: jsonSchema({ type: "object" }) } } },
      instruction: "Write the checkpoint.",
    }),
  });
  const text = (t) => ({ type: "text", text: t });
  const call = { type: "tool-call", toolCallId: "c1", toolName: "read", input: "{}" };

  test("a prefix reply that calls a tool is no summary, even with text before the call: asked again serialized", async () => {
    const { model, prompts } = scripted([
      [[text("Let me read the file first."), call], "tool-calls"],
      [[text("## Goal\nFix the parser.")], "stop"],
    ]);
    const out = await aiSdkSummarizer(model)(request(true));
    assert.equal(out.text, "## Goal\nFix the parser.");
    assert.equal(prompts.length, 2);
    assert.match(JSON.stringify(prompts[1]), /<conversation>/, "the second request is the serialized one");
  });

  test("text cut at the token limit (finishReason length) is the summary, as pi takes it: asked once", async () => {
    const { model, prompts } = scripted([[[text("## Goal\nFix the par")], "length"]]);
    assert.equal((await aiSdkSummarizer(model)(request(true))).text, "## Goal\nFix the par");
    assert.equal(prompts.length, 1);
  });

  for (const [finish, why] of [
    ["content-filter", "the model refused to summarize"],
    ["error", "the reply ended in an error"],
  ]) {
    test(`text that stopped with finishReason ${finish} is no summary: the prefix form is asked again serialized, then it rejects`, async () => {
      const { model, prompts } = scripted([
        [[text("## Goal\nFix the par")], finish],
        [[text("## Goal\nFix the parser.")], "stop"],
      ]);
      assert.equal((await aiSdkSummarizer(model)(request(true))).text, "## Goal\nFix the parser.");
      assert.equal(prompts.length, 2);
      const cut = scripted([[[text("## Goal\nFix the par")], finish]]);
      await assert.rejects(aiSdkSummarizer(cut.model)(request(false)), { message: `aiSdkSummarizer: ${why} (finishReason: "${finish}")` });
    });
  }
});

describe("usageFromAiSdk", () => {
  test("a number that is not finite counts as not reported, in every field (totalTokens too)", () => {
    const u = usageFromAiSdk({ inputTokens: NaN, outputTokens: Infinity, totalTokens: NaN, inputTokenDetails: {} });
    assert.deepStrictEqual([u.input, u.output, u.cacheRead, u.cacheWrite, u.totalTokens], [0, 0, 0, 0, 0]);
    const v = usageFromAiSdk({ inputTokens: 120, outputTokens: 30, totalTokens: -Infinity });
    assert.equal(v.totalTokens, 150);
    // An uncached count that is no finite number: the input is what the cache did not serve.
    for (const noCacheTokens of [NaN, Infinity, "400", Symbol("n"), 10n, {}]) {
      const w = usageFromAiSdk({ inputTokens: 1000, inputTokenDetails: { noCacheTokens, cacheReadTokens: 300, cacheWriteTokens: 100 }, outputTokens: 50 });
      assert.deepStrictEqual([w.input, w.cacheRead, w.cacheWrite, w.totalTokens], [600, 300, 100, 1050], String(noCacheTokens));
    }
  });

  test("a cached count that includes the request's cache writes (OpenRouter) is read as pi-ai reads it", () => {
    // The raw usage { prompt_tokens: 1000, completion_tokens: 50,
    // prompt_tokens_details: { cached_tokens: 900, cache_write_tokens: 300 } }:
    // @ai-sdk/openai makes its uncached count 1000 - 900 - 300 = -200;
    // pi-ai's openai-completions provider takes the writes out of the cached
    // count (cacheRead 600) and reads input 1000 - 600 - 300 = 100.
    const u = usageFromAiSdk({
      inputTokens: 1000,
      inputTokenDetails: { noCacheTokens: -200, cacheReadTokens: 900, cacheWriteTokens: 300 },
      outputTokens: 50,
      totalTokens: 1050,
    });
    assert.deepStrictEqual([u.input, u.output, u.cacheRead, u.cacheWrite, u.totalTokens], [100, 50, 600, 300, 1050]);
    // Counts that add up are kept as they are.
    const plain = usageFromAiSdk({ inputTokens: 1000, inputTokenDetails: { noCacheTokens: 400, cacheReadTokens: 300, cacheWriteTokens: 300 }, outputTokens: 50, totalTokens: 1050 });
    assert.deepStrictEqual([plain.input, plain.cacheRead, plain.cacheWrite], [400, 300, 300]);
  });
});
