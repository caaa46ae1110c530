// What the model is sent, through every adapter with the same cases
// (tests/support/context-cases.mjs): the Compactor's modelContext, its
// agentHooks (transformContext + convertToLlm), attach with a real
// pi-agent-core Agent talking to the mock LLM server over HTTP, and the AI
// SDK conversation (modelMessages, prepareStep, run with the SDK's mock
// model). One engine decides; every adapter must send the same messages.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Agent } from "@mariozechner/pi-agent-core";
import { generateText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Compactor, isContextOverflow } from "agent-compaction";
import { aiSdkConversation } from "agent-compaction/ai-sdk";
import { useMockLlm } from "../support/mock-llm-server.mjs";
import { CASES, labelOf, user } from "../support/context-cases.mjs";

const compactor = () => new Compactor({ contextWindow: 200_000, model: "local/m" });
const labels = (messages) => messages.map(labelOf);
/** pi-ai leaves failed attempts out at the provider: the hooks hand them on. */
const atProvider = (messages) => messages.filter((m) => !(m.role === "assistant" && (m.stopReason === "error" || m.stopReason === "aborted")));

const mock = useMockLlm();


/** An AI SDK mock model that records each prompt. */
function recordingModel() {
  const prompts = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt);
      return {
        content: [{ type: "text", text: "ok" }],
        finishReason: { unified: "stop", raw: undefined },
        usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

for (const c of CASES) {
  describe(c.name, () => {
    test("compactor.modelContext", () => {
      // Agent messages: the markers stay (the model never gets them as such).
      const out = compactor().modelContext(c.messages).filter((m) => m.role !== "toolOutputCleared");
      assert.deepEqual(labels(out), c.expected);
      // The same objects, except placeholders.
      for (const m of out) if (labelOf(m) !== "CLEARED") assert.ok(c.messages.includes(m));
    });

    test("compactor.modelContext, the array grown one message at a time", () => {
      // One compactor asked at every length answers as a fresh one does:
      // what it keeps between calls (the view's steps) never goes stale,
      // whether a message, a failed attempt, a marker or a summary arrives.
      const growing = compactor();
      for (let n = 1; n <= c.messages.length; n++) {
        const prefix = c.messages.slice(0, n);
        assert.deepEqual(labels(growing.modelContext(prefix)), labels(compactor().modelContext(prefix)), `after ${n} messages`);
      }
    });

    test("compactor.modelContextChange, the array grown one message at a time", () => {
      // What the caller holds plus what is added is, at every length, what
      // a fresh compactor answers; only the messages a new marker or
      // summary changes the view for are sent whole again.
      const growing = compactor();
      let held = [];
      let view;
      for (let n = 1; n <= c.messages.length; n++) {
        const prefix = c.messages.slice(0, n);
        const change = growing.modelContextChange(prefix, view === undefined ? undefined : { view, length: held.length });
        const moved = ["toolOutputCleared", "compactionSummary"].includes(prefix[n - 1].role);
        assert.equal(change.kept, moved || n === 1 ? 0 : held.length, `after ${n} messages`);
        assert.equal(change.view === view, !moved && n > 1, `after ${n} messages: the same view while it only grew`);
        held = [...held.slice(0, change.kept), ...change.added];
        view = change.view;
        assert.deepEqual(labels(held), labels(compactor().modelContext(prefix)), `after ${n} messages`);
      }
    });

    test("agentHooks: transformContext + convertToLlm", async () => {
      const hooks = compactor().agentHooks();
      const llm = await hooks.convertToLlm(await hooks.transformContext(c.messages));
      assert.deepEqual(labels(atProvider(llm)), c.expected);
    });

    test("attach: a real Agent's request to the provider", async () => {
      mock.setMode(() => ({ text: "L:answer", usage: { prompt_tokens: 100, completion_tokens: 1, total_tokens: 101 } }));
      const comp = compactor();
      const agent = new Agent({ initialState: { model: mock.model(), systemPrompt: "sys", messages: c.messages }, getApiKey: () => "local" });
      const detach = comp.attach(agent);
      await agent.prompt("L:next");
      await agent.waitForIdle();
      detach();
      const sent = mock.requests[0].body.messages.filter((m) => m.role !== "system" && m.role !== "developer");
      assert.deepEqual(labels(sent), [...c.expected, "next"]);
    });

    test("AI SDK: modelMessages, prepareStep and run", async () => {
      const conv = aiSdkConversation({ compactor: compactor(), messages: c.messages });
      assert.deepEqual(labels(conv.modelMessages()), c.expected);
      const step = await conv.prepareStep({ stepNumber: 0, steps: [] });
      assert.deepEqual(labels(step.messages), c.expected);
      await conv.append({ role: "user", content: "L:next" });
      const { model: m, prompts } = recordingModel();
      await conv.run((args) => generateText({ model: m, ...args }));
      assert.deepEqual(labels(prompts[0]), [...c.expected, "next"]);
    });
  });
}

describe("toUIMessages shows what the core's display rule shows", () => {
  test("summaries and clearing markers become dividers with divider: true, and nothing without; a custom message only with display", async () => {
    const { toUIMessages, DIVIDER_PART_TYPE, CLEARED_DIVIDER_PART_TYPE, fromUIMessages } = await import("agent-compaction/ai-sdk");
    const { agentMessagesToChatMessages } = await import("agent-compaction");
    const c = CASES.find((x) => x.messages.some((m) => m.role === "toolOutputCleared"));
    const flat = [...c.messages, { role: "custom", customType: "note", content: "hidden", display: false, timestamp: 1 }, { role: "custom", customType: "note", content: "shown", display: true, timestamp: 2 }];
    const types = (ui) => ui.flatMap((m) => m.parts.map((p) => p.type)).filter((t) => t.startsWith("data-"));
    const withDividers = toUIMessages(flat, { divider: true });
    assert.deepEqual(types(withDividers), [DIVIDER_PART_TYPE, CLEARED_DIVIDER_PART_TYPE, "data-custom"]);
    const cleared = withDividers.find((m) => m.parts[0].type === CLEARED_DIVIDER_PART_TYPE).parts[0].data;
    const core = agentMessagesToChatMessages(flat, { divider: true }).find((m) => m.role === "toolOutputClearedDivider");
    assert.deepEqual(cleared, { tokensFreed: core.tokensFreed, toolCount: core.toolCount, timestamp: core.timestamp });
    assert.deepEqual(types(toUIMessages(flat)), ["data-custom"]);
    assert.equal(withDividers.filter((m) => m.parts.some((p) => p.type === "data-custom" && p.data.content === "hidden")).length, 0);
    // Dividers are not messages: reading the UI back skips them.
    const back = await fromUIMessages(withDividers.filter((m) => m.parts.every((p) => p.type === DIVIDER_PART_TYPE || p.type === CLEARED_DIVIDER_PART_TYPE)));
    assert.deepEqual(back, []);
  });
});

describe("the after-run rule, as the AI SDK's run asks it", () => {
  test("an overflow is retried once, a second one is pi's recovery-failed; a success is a threshold check", () => {
    const flat = CASES[0].messages;
    const small = new Compactor({ contextWindow: 200_000 });
    assert.equal(small.afterRun(flat, { overflow: true, retried: false }), "overflowRetry");
    assert.equal(small.afterRun(flat, { overflow: true, retried: true }), "recoveryFailed");
    assert.equal(small.afterRun(flat, { overflow: false, retried: false }), "nothing");
    const full = new Compactor({ contextWindow: 30, settings: { reserveTokens: 10, keepRecentTokens: 5 } });
    assert.equal(full.afterRun([...flat, { role: "user", content: "x".repeat(400), timestamp: 1 }], { overflow: false, retried: true }), "threshold");
    const off = new Compactor({ contextWindow: 200_000, settings: { enabled: false } });
    assert.equal(off.afterRun(flat, { overflow: true, retried: false }), "nothing");
    for (const bad of [undefined, null, 1]) assert.throws(() => small.afterRun(flat, bad), /facts must be an object/);
  });

  test("a reply that answered with its input over the window is a silent overflow: the answer stays, compacted without a retry", () => {
    const window = 20_000;
    const compactor = new Compactor({ contextWindow: window, settings: { reserveTokens: 2_000, keepRecentTokens: 4_000 } });
    const usage = (input) => ({ input, output: 40, cacheRead: 0, cacheWrite: 0, totalTokens: input + 40, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
    const reply = (stopReason, input, extra = {}) => ({
      role: "assistant", content: [{ type: "text", text: "an answer" }], api: "openai-completions", provider: "p", model: "m",
      stopReason, usage: usage(input), timestamp: 2, ...extra,
    });
    const ask = { role: "user", content: "question", timestamp: 1 };
    const answered = [ask, reply("stop", window + 5_000)];
    const overflow = isContextOverflow(answered[1], window);
    assert.equal(overflow, true, "pi calls it an overflow");
    assert.equal(compactor.afterRun(answered, { overflow, retried: false }), "silentOverflow");
    assert.equal(compactor.afterRun(answered, { overflow, retried: true }), "silentOverflow", "after a retry too");
    // A reply that carries no answer is retried once, as before.
    const refused = [ask, reply("error", 0, { content: [], errorMessage: "prompt is too long: 25000 tokens > 20000 maximum" })];
    assert.equal(compactor.afterRun(refused, { overflow: isContextOverflow(refused[1], window), retried: false }), "overflowRetry");
    // A call that failed and left no reply (the AI SDK's), after an earlier answer that fit: retried.
    const earlier = [ask, reply("stop", 1_000)];
    assert.equal(compactor.afterRun(earlier, { overflow: true, retried: false }), "overflowRetry");
    assert.equal(compactor.afterRun([ask], { overflow: true, retried: false }), "overflowRetry");
  });
});

describe("compactor.modelContextChange", () => {
  const c = CASES.find((x) => x.messages.some((m) => m.role === "toolOutputCleared"));
  const expected = () => labels(compactor().modelContext(c.messages));

  test("what a caller holds of another view, or more than the view has, is not kept", () => {
    const comp = compactor();
    const first = comp.modelContextChange(c.messages);
    assert.equal(first.kept, 0);
    assert.deepEqual(labels(first.added), expected());
    const length = first.added.length;
    assert.deepEqual(comp.modelContextChange(c.messages, { view: first.view, length }), { view: first.view, kept: length, added: [] });
    assert.equal(comp.modelContextChange(c.messages, { view: first.view, length: 2 }).kept, 2, "a shorter hold is kept as it is");
    const more = comp.modelContextChange(c.messages, { view: first.view, length: length + 1 });
    assert.equal(more.kept, 0);
    assert.deepEqual(labels(more.added), expected());
    // Another compactor's view of the same array has another id.
    const other = compactor().modelContextChange(c.messages);
    assert.notEqual(other.view, first.view);
    assert.equal(comp.modelContextChange(c.messages, { view: other.view, length }).kept, 0);
    // Another array in between: the view is made anew.
    comp.modelContext(CASES[0].messages);
    const back = comp.modelContextChange(c.messages, { view: first.view, length });
    assert.equal(back.kept, 0);
    assert.deepEqual(labels(back.added), expected());
  });

  test("calls in between (modelContext on the same growing array) leave what the caller holds valid", () => {
    const comp = compactor();
    const grown = [...c.messages];
    const first = comp.modelContextChange(grown);
    grown.push(user("x1"));
    comp.modelContext(grown);
    grown.push(user("x2"));
    const next = comp.modelContextChange([...grown], { view: first.view, length: first.added.length });
    assert.equal(next.kept, first.added.length);
    assert.deepEqual(labels(next.added), ["x1", "x2"]);
  });

  test("an array a caller changes (modelContext's, or added) leaves the next answers as they were", () => {
    const comp = compactor();
    const grown = [...c.messages];
    const a = comp.modelContext(grown);
    a.length = 0;
    const change = comp.modelContextChange(grown);
    change.added.reverse();
    change.added.push(user("junk"));
    grown.push(user("x1"));
    const b = comp.modelContext(grown);
    b.splice(0, 2, user("junk"));
    grown.push(user("x2"));
    assert.deepEqual(labels(comp.modelContext(grown)), labels(compactor().modelContext(grown)));
    const whole = comp.modelContextChange(grown);
    assert.deepEqual(labels(whole.added), labels(compactor().modelContext(grown)));
  });

  test("a bad since is a TypeError naming it", () => {
    const comp = compactor();
    for (const [since, field] of [
      [5, /since must be/],
      [null, /since must be/],
      [{ view: "1", length: 0 }, /since\.view must be a whole number/],
      [{ view: 1 }, /since\.length must be a whole number/],
      [{ view: 1, length: -1 }, /since\.length must be a whole number/],
      [{ view: 1, length: 1.5 }, /since\.length must be a whole number/],
    ]) {
      assert.throws(() => comp.modelContextChange(c.messages, since), (e) => e instanceof TypeError && field.test(e.message), JSON.stringify(since));
    }
    assert.throws(() => comp.modelContextChange("x"), TypeError);
    const hostile = Object.defineProperty({}, "view", { get() { throw new Error("no view"); } });
    assert.throws(() => comp.modelContextChange(c.messages, hostile), (e) => e instanceof TypeError && /since could not be read: no view/.test(e.message));
  });
});
