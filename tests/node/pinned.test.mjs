// What must survive a compaction, through the
// built package: pinned messages (`pinned: true`) are sent to the model after
// every summary, in order, as the same objects, and counted in the
// Compactor's numbers; the latest user request is quoted verbatim in the
// summary when the cut summarizes it (a split turn), within its budget, and
// never twice; both through `attach` with a real pi-agent-core Agent talking
// to the mock LLM server, and through pi session files. A message before the
// last summary that the app edits, pins or unpins by replacing its object is
// seen as the new object by every adapter: the hooks, modelContext,
// contextTokens, attach and the AI SDK conversation.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Agent } from "@mariozechner/pi-agent-core";
import {
  Compactor,
  convertToLlm,
  estimateTokens,
  messagesToPiSession,
  piSessionToMessages,
  prepareCompaction,
  transformContext,
} from "agent-compaction";
import { aiSdkConversation } from "agent-compaction/ai-sdk";
import { useMockLlm } from "../support/mock-llm-server.mjs";
import { usage } from "../support/pi-usage.mjs";

const HEADING = "## Latest user request (verbatim)";


let clock = 1_000;
const user = (content, extra = {}) => ({ role: "user", content, timestamp: clock++, ...extra });
const assistant = (text, inputTokens, extra = {}) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "openai-completions",
  provider: "local",
  model: "m",
  usage: usage(inputTokens),
  stopReason: "stop",
  timestamp: clock++,
  ...extra,
});
const toolCall = (i) => ({
  role: "assistant",
  content: [{ type: "toolCall", id: `call-${i}`, name: "read", arguments: { path: `src/f${i}.rs` } }],
  api: "openai-completions",
  provider: "local",
  model: "m",
  usage: usage(1000),
  stopReason: "toolUse",
  timestamp: clock++,
});
const toolResult = (i, size) => ({
  role: "toolResult",
  toolCallId: `call-${i}`,
  toolName: "read",
  content: [{ type: "text", text: `file ${i}: ` + "x".repeat(size) }],
  isError: false,
  timestamp: clock++,
});

/** `turns` user/assistant pairs of about `size` characters each. */
function turns(n, size = 4000, label = "request") {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push(user(`${label} ${i}: ` + "u".repeat(size)));
    out.push(assistant(`answer ${i}: ` + "a".repeat(size), (i + 1) * 2 * (size / 4)));
  }
  return out;
}

/** A last turn whose tool calls and results outweigh keepRecentTokens: the cut splits it. */
function longTurn(request, steps = 6, size = 4000) {
  const out = [typeof request === "string" ? user(request) : request];
  for (let i = 0; i < steps; i++) out.push(toolCall(clock), toolResult(clock - 1, size));
  out.push(assistant("All done.", 60_000));
  return out;
}

const rule = (n) => user(`Pinned rule ${n}: never touch vendor/.`, { pinned: true });
const summaryOf = (messages) => messages.findLast((m) => m.role === "compactionSummary");
const texts = (llm) => llm.map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join("")));

function compactor(extra = {}) {
  return new Compactor({
    contextWindow: 100_000,
    model: "local/m",
    estimator: "pi",
    settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 },
    ...extra,
  });
}

describe("pinned messages", () => {
  test("re-sent after one summary, as the same objects, right after it; counted in contextTokens and tokensAfter", async () => {
    const r1 = rule(1);
    const messages = [user("start"), r1, ...turns(8)];
    const c = compactor();
    const out = await c.compact(messages);
    const { transformContext: hookContext, convertToLlm: hookConvert } = c.agentHooks();
    const context = await hookContext(out.messages);
    assert.equal(context[0], out.summary);
    assert.equal(context[1], r1, "the pinned message itself, right after the summary");
    assert.deepEqual(context.slice(2), out.messages.slice(out.firstKeptIndex + 1));
    // The stateless transformContext sees the same.
    assert.deepEqual(transformContext(out.messages), context);
    assert.equal(transformContext(out.messages)[1], r1);
    // And the model is sent it.
    const llm = await hookConvert(context);
    assert.equal(llm[1], r1);
    assert.deepEqual(convertToLlm(context).map((m) => m.role), llm.map((m) => m.role));

    // Counted: the same session without the flag counts the rule's estimate less.
    const unpinned = out.messages.map((m) => (m === r1 ? { ...r1, pinned: undefined } : m));
    const other = compactor();
    const diff = c.contextTokens(out.messages) - other.contextTokens(unpinned);
    assert.equal(diff, estimateTokens(r1));
    assert.equal(c.contextTokens(out.messages), out.tokensAfter, "tokensAfter counts it too");
    // A fresh usage includes it (the provider was sent it): no double count.
    const answered = [...out.messages, user("next"), assistant("ok", 5_000, { timestamp: Date.now() + 60_000 })];
    assert.equal(c.contextTokens(answered), 5_010);
  });

  test("with the calibrated estimator too: the re-sent messages count, measured when a decision needs them", async () => {
    const r1 = rule(1);
    const messages = [r1, ...turns(8)];
    const c = compactor({ estimator: "calibrated" });
    const out = await c.compact(messages);
    assert.equal(transformContext(out.messages)[1], r1);
    const unpinned = out.messages.map((m) => (m === r1 ? { ...r1, pinned: undefined } : m));
    const other = compactor({ estimator: "calibrated" });
    const diff = c.contextTokens(out.messages) - other.contextTokens(unpinned);
    assert.ok(diff > 0 && diff < 40, `the rule's calibrated estimate: ${diff}`);
    assert.ok(c.needsCompaction(out.messages) === false);
  });

  test("the threshold sees them: a pinned message alone can cross it", async () => {
    const big = user("Pinned spec: " + "s".repeat(40_000), { pinned: true });
    const messages = [big, ...turns(8)];
    const c = compactor();
    const out = await c.compact(messages);
    const unpinned = out.messages.map((m) => (m === big ? { ...big, pinned: false } : m));
    const other = compactor();
    const [withPin, without] = [c.contextTokens(out.messages), other.contextTokens(unpinned)];
    assert.equal(withPin - without, estimateTokens(big), "10,000 re-sent tokens count");
    // A window whose threshold lies between the two.
    const window = 4_000 + Math.floor((withPin + without) / 2);
    c.setModel("local/m", window);
    other.setModel("local/m", window);
    assert.equal(other.needsCompaction(unpinned), false);
    assert.equal(c.needsCompaction(out.messages), true);
  });

  test("after several compactions: every pinned message, in original order, and a later pinned one joins them", async () => {
    const [r1, r2, r3] = [rule(1), rule(2), rule(3)];
    let messages = [r1, ...turns(4, 4000, "a"), r2, ...turns(4, 4000, "b")];
    const c = compactor();
    const hooks = c.agentHooks();
    for (let k = 0; k < 4; k++) {
      messages = (await c.compact(messages)).messages;
      const context = await hooks.transformContext(messages);
      const pinnedSeen = context.filter((m) => m.pinned);
      const expected = k === 0 ? [r1, r2] : [r1, r2, r3];
      assert.deepEqual(pinnedSeen, expected, `after compaction ${k + 1}`);
      assert.equal(context[0], summaryOf(messages));
      for (let i = 0; i < expected.length; i++) assert.equal(pinnedSeen[i], expected[i]);
      assert.deepEqual(transformContext(messages), context);
      assert.equal(context.filter((m) => m === r1).length, 1, "sent once");
      messages = [...messages, ...(k === 0 ? [r3] : []), ...turns(5, 4000, `c${k}`)];
    }
    assert.equal(messages.filter((m) => m.role === "compactionSummary").length, 4);
  });

  test("a pinned message survives a pi session file round trip, and pi's own numbers do not change", () => {
    const r1 = rule(1);
    const messages = [user("start"), r1, ...turns(3)];
    const back = piSessionToMessages(messagesToPiSession(messages)).messages;
    assert.equal(back[1].pinned, true);
    assert.equal(estimateTokens(r1), estimateTokens({ ...r1, pinned: undefined }));
    const settings = { keepRecentTokens: 3_000 };
    const a = prepareCompaction(messages, settings);
    const b = prepareCompaction(messages.map((m) => ({ ...m, pinned: undefined })), settings);
    assert.equal(a.tokensBefore, b.tokensBefore);
    assert.equal(a.firstKeptIndex, b.firstKeptIndex);
  });
});

describe("the latest request, verbatim", () => {
  const REQUEST = "Final request R1: migrate the cache module to the new storage layer and report what changed.";

  test("a split turn: quoted whole at the end of the summary, whoever wrote it", async () => {
    const messages = [...turns(3), ...longTurn(REQUEST)];
    const plan = prepareCompaction(messages, { keepRecentTokens: 3_000 });
    assert.equal(plan.isSplitTurn, true, "the cut falls inside the last turn");
    const summarizers = {
      extractive: {},
      summarize: { summarize: async () => "## Goal\nfrom the app" },
      beforeCompact: { beforeCompact: async () => ({ summary: "from the hook" }) },
    };
    for (const [name, options] of Object.entries(summarizers)) {
      const out = await compactor(options).compact(messages);
      const text = out.summary.summary;
      assert.ok(text.endsWith(`\n\n${HEADING}\n\n${REQUEST}`), `${name}: ${text.slice(-300)}`);
      assert.equal(text.split(HEADING).length, 2, `${name}: one section`);
      const seen = texts(convertToLlm(transformContext(out.messages))).join("\n");
      assert.ok(seen.includes(REQUEST), `${name}: the model sees it`);
    }
  });

  test("a pinned request is re-sent whole, not quoted a second time", async () => {
    const request = user(REQUEST, { pinned: true });
    const out = await compactor().compact([...turns(3), ...longTurn(request)]);
    assert.ok(!out.summary.summary.includes(HEADING));
    const context = transformContext(out.messages);
    assert.equal(context[1], request);
  });

  test("a kept request adds nothing", async () => {
    const messages = [...turns(8), user("short last request")];
    const out = await compactor().compact(messages);
    assert.ok(out.firstKeptIndex < messages.length - 1);
    assert.ok(!out.summary.summary.includes(HEADING));
  });

  test("over the budget (keepRecentTokens characters): the start, and a marker of what was left out", async () => {
    const long = "L".repeat(2_500);
    const messages = [...turns(3, 1000), ...longTurn(long, 6, 1000)];
    const out = await compactor({ settings: { reserveTokens: 4_000, keepRecentTokens: 1_000 } }).compact(messages);
    const quoted = out.summary.summary.split(`${HEADING}\n\n`)[1];
    assert.equal(
      quoted,
      "L".repeat(1_000) + "\n\n[... 1500 more characters of this request were left out: the verbatim quote keeps the first 1000]",
    );
  });

  test("a request with images: its text parts are quoted", async () => {
    const request = user([
      { type: "text", text: "Look at this screenshot:" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "text", text: "why is the button red?" },
    ]);
    const out = await compactor().compact([...turns(3), ...longTurn(request)]);
    assert.ok(out.summary.summary.endsWith(`${HEADING}\n\nLook at this screenshot:\nwhy is the button red?`));
  });

  test("the next compaction quotes the then-latest request once; the previous summary reaches the summarizer without its quote", async () => {
    const prompts = [];
    const c = compactor({
      summarize: async (req) => {
        prompts.push(req.prompt);
        return "## Goal\nsummary " + prompts.length;
      },
    });
    let messages = (await c.compact([...turns(3), ...longTurn("first long request")])).messages;
    assert.ok(summaryOf(messages).summary.endsWith("first long request"));
    messages = [...messages, ...turns(2), ...longTurn("second long request")];
    prompts.length = 0;
    messages = (await c.compact(messages)).messages;
    const summary = summaryOf(messages).summary;
    assert.equal(summary.split(HEADING).length, 2, summary);
    assert.ok(summary.endsWith("second long request"));
    assert.ok(!summary.includes("first long request"));
    assert.ok(prompts.some((p) => p.includes("<previous-summary>")));
    for (const p of prompts) {
      const previous = p.split("<previous-summary>")[1] ?? "";
      assert.ok(!previous.includes(HEADING), "the previous summary is passed without its quote");
    }
  });
});

describe("attach(agent) with a real pi-agent-core Agent", () => {
  const mock = useMockLlm();
  const promptTokens = (r) => Math.ceil(JSON.stringify(r.body.messages).length / 4);
  const answer = (r) => {
    const p = promptTokens(r);
    return { text: "ok", usage: { prompt_tokens: p, completion_tokens: 10, total_tokens: p + 10 } };
  };
  const bodyTexts = (r) => r.body.messages.map((m) => (typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join("")));
  const big = (label, n) => `${label}: ` + "lorem ipsum ".repeat(n / 12);
  const RULE = "Pinned rule: always answer in British English.";

  async function settled(agent) {
    for (let i = 0; i < 50; i++) {
      await agent.waitForIdle();
      await new Promise((r) => setTimeout(r, 20));
      if (!agent.state.isStreaming) return;
    }
  }

  function setup(messages) {
    const c = new Compactor({ contextWindow: 20_000, model: "local/m", settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 } });
    const agent = new Agent({
      initialState: { model: mock.model({ contextWindow: 20_000 }), systemPrompt: "You are terse.", messages },
      getApiKey: () => "local",
    });
    c.attach(agent);
    return { agent, c };
  }

  test("after a threshold compaction the next request has the summary, then the pinned message, then the kept turn", async () => {
    mock.setMode(answer);
    const { agent } = setup([{ role: "user", content: RULE, timestamp: 1, pinned: true }]);
    await agent.prompt(big("first question", 12_000));
    await agent.prompt(big("second question", 12_000));
    await agent.prompt(big("third question", 40_000));
    await settled(agent);
    assert.equal(agent.state.messages.filter((m) => m.role === "compactionSummary").length, 1);
    await agent.prompt("fourth question");
    const sent = bodyTexts(mock.requests.at(-1));
    const at = sent.findIndex((t) => t.startsWith("The conversation history before this point was compacted"));
    assert.ok(at >= 0, "the summary is sent");
    assert.equal(sent[at + 1], RULE, "the pinned message right after it");
    assert.equal(sent.filter((t) => t === RULE).length, 1);
    assert.equal(sent.at(-1), "fourth question");
  });

  test("before a prompt: the compaction made inside transformContext sends the pinned message too", async () => {
    let t = 1_000;
    const reopened = [{ role: "user", content: RULE, timestamp: t++, pinned: true }];
    for (let i = 0; i < 6; i++) {
      reopened.push({ role: "user", content: big(`old question ${i}`, 8_000), timestamp: t++ });
      reopened.push({
        role: "assistant",
        content: [{ type: "text", text: `old answer ${i}` }],
        api: "openai-completions",
        provider: "local",
        model: "m",
        usage: usage(17_000, 5),
        stopReason: "stop",
        timestamp: t++,
      });
    }
    mock.setMode(answer);
    const { agent } = setup(reopened);
    await agent.prompt("new question");
    await settled(agent);
    assert.equal(mock.requests.length, 1);
    const sent = bodyTexts(mock.requests[0]);
    const at = sent.findIndex((t) => t.startsWith("The conversation history before this point was compacted"));
    assert.ok(at >= 0, "the first request carries the summary");
    assert.equal(sent[at + 1], RULE);
    assert.equal(sent.at(-1), "new question");
  });
});

describe("a message before the last summary replaced by a new object (messages are immutable)", () => {
  const mock = useMockLlm();
  const meta = { api: "openai-completions", provider: "local", model: "m", usage: usage(100), stopReason: "stop" };
  const say = (text, extra = {}) => ({ role: "assistant", content: [{ type: "text", text }], ...meta, timestamp: clock++, ...extra });
  const recap = () => ({ role: "compactionSummary", summary: "## Goal\nRecap of the work so far.", tokensBefore: 50_000, timestamp: clock++ });
  const BRITISH = "Rule: always answer in British English.";
  const FRENCH = "Rule: always answer in French.";
  /** [u0, a0, rule, a1, summary, u2, a2], the rule pinned. */
  const session = () => [user("u0"), say("a0"), user(BRITISH, { pinned: true }), say("a1"), recap(), user("u2"), say("a2")];
  const withRule = (messages, text) => messages.map((m) => (m.content === BRITISH ? { ...m, content: text } : m));
  const contentOf = (m) => (typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join(""));
  const ESTIMATORS = ["pi", "calibrated"];

  /** What every adapter of one Compactor that saw `before` gives for `after`, against the stateless functions and a fresh Compactor. */
  async function sameAsFresh(before, after, estimator, what) {
    const options = { contextWindow: 100_000, model: "local/m", estimator };
    const seen = new Compactor(options);
    const hooked = new Compactor(options);
    const hooks = hooked.agentHooks();
    seen.modelContext(before);
    seen.contextTokens(before);
    await hooks.convertToLlm(await hooks.transformContext(before));
    const expected = transformContext(after);
    const context = seen.modelContext(after);
    assert.deepEqual(context, expected, `modelContext, ${what} (${estimator})`);
    context.forEach((m, i) => assert.equal(m, expected[i], `modelContext sends the app's object at ${i}, ${what}`));
    const hookContext = await hooks.transformContext(after);
    assert.deepEqual(hookContext, expected, `transformContext hook, ${what} (${estimator})`);
    assert.deepEqual(await hooks.convertToLlm(hookContext), convertToLlm(expected), `convertToLlm hook, ${what} (${estimator})`);
    const fresh = new Compactor(options);
    assert.equal(seen.contextTokens(after), fresh.contextTokens(after), `contextTokens, ${what} (${estimator})`);
    assert.equal(hooked.contextTokens(after), fresh.contextTokens(after), `contextTokens after the hooks, ${what} (${estimator})`);
    assert.equal(seen.needsCompaction(after), fresh.needsCompaction(after));
    for (const c of [seen, hooked, fresh]) c.free();
    return expected;
  }

  test("the hooks, modelContext and contextTokens send and count an edited pinned rule, not the old one", async () => {
    for (const estimator of ESTIMATORS) {
      const before = session();
      const after = withRule(before, FRENCH);
      const sent = await sameAsFresh(before, after, estimator, "the rule edited");
      assert.deepEqual(sent.map(contentOf).slice(1), [FRENCH, "u2", "a2"]);
      assert.equal(sent[1], after[2]);
      // Edited again, to a longer text: counted anew.
      const longer = after.map((m) => (m.content === FRENCH ? { ...m, content: FRENCH + " Always, in every answer.".repeat(40) } : m));
      await sameAsFresh(after, longer, estimator, "edited again");
    }
  });

  test("pinning a message before the summary with a pinned copy, at any index, and unpinning it with a copy", async () => {
    for (const estimator of ESTIMATORS) {
      const plain = [user("u0"), say("a0"), user("u1"), say("a1"), recap(), user("u2"), say("a2")];
      for (let at = 0; at < 4; at++) {
        const pinned = plain.map((m, k) => (k === at ? { ...m, pinned: true } : m));
        const sent = await sameAsFresh(plain, pinned, estimator, `pinned at ${at}`);
        assert.equal(sent[1], pinned[at], `the pinned copy right after the summary (index ${at})`);
        const unpinned = pinned.map((m, k) => (k === at ? { ...m, pinned: false } : m));
        const after = await sameAsFresh(pinned, unpinned, estimator, `unpinned at ${at}`);
        assert.equal(after.length, 3, "summary, u2, a2");
      }
    }
  });

  test("attach: the request after the app edits the pinned rule, or pins a message, sends the new object", async () => {
    const text = (r) => r.body.messages.filter((m) => m.role !== "system").map(contentOf);
    mock.setMode({ text: "ok", usage: { prompt_tokens: 100, completion_tokens: 1, total_tokens: 101 } });
    for (const estimator of ESTIMATORS) {
      const base = session();
      const c = new Compactor({ contextWindow: 200_000, model: "local/m", estimator });
      const agent = new Agent({ initialState: { model: mock.model(), systemPrompt: "sys", messages: base }, getApiKey: () => "local" });
      const detach = c.attach(agent, { backgroundAt: false });
      await agent.prompt("first");
      await agent.waitForIdle();
      assert.deepEqual(text(mock.requests.at(-1)).slice(1, 4), [BRITISH, "u2", "a2"]);
      // The user edits the rule: the app replaces the object.
      agent.state.messages = withRule(agent.state.messages, FRENCH);
      await agent.prompt("second");
      await agent.waitForIdle();
      const sent = text(mock.requests.at(-1));
      assert.deepEqual(sent.slice(1, 4), [FRENCH, "u2", "a2"], `${estimator}: ${JSON.stringify(sent)}`);
      assert.ok(!sent.includes(BRITISH));
      // The user pins u0 the same way.
      agent.state.messages = agent.state.messages.map((m) => (m.content === "u0" ? { ...m, pinned: true } : m));
      await agent.prompt("third");
      await agent.waitForIdle();
      assert.deepEqual(text(mock.requests.at(-1)).slice(1, 5), ["u0", FRENCH, "u2", "a2"]);
      assert.deepEqual(text(mock.requests.at(-1)), convertToLlm(transformContext(agent.state.messages.slice(0, -1))).map(contentOf));
      detach();
      c.free();
    }
  });

  test("the AI SDK conversation: modelMessages after setMessages sends the edited rule and a new pin", async () => {
    for (const estimator of ESTIMATORS) {
      const base = session();
      const conv = aiSdkConversation({ compactor: new Compactor({ contextWindow: 200_000, estimator }), messages: base, backgroundAt: false });
      conv.modelMessages();
      const freshOf = (messages) =>
        aiSdkConversation({ compactor: new Compactor({ contextWindow: 200_000, estimator }), messages, backgroundAt: false }).modelMessages();
      const edited = withRule(base, FRENCH);
      await conv.setMessages(edited);
      const sent = conv.modelMessages();
      assert.deepEqual(sent, freshOf(edited), estimator);
      const all = JSON.stringify(sent);
      assert.ok(all.includes(FRENCH) && !all.includes(BRITISH), all);
      const pinned = edited.map((m) => (m.content === "u0" ? { ...m, pinned: true } : m));
      await conv.setMessages(pinned);
      assert.deepEqual(conv.modelMessages(), freshOf(pinned), `${estimator}, pinned by a copy`);
      assert.ok(JSON.stringify(conv.modelMessages()).includes('"u0"'));
    }
  });
});
