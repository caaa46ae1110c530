// Compaction in the background (docs/summarizers.md): a threshold
// compaction starts early on a copy of the messages, nothing waits for it,
// and its summary goes in at its cut when it arrives, the messages added
// meanwhile after it. With the real pi-agent-core `Agent` (attach) over
// HTTP, with the AI SDK conversation, and with the Compactor's own methods.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Agent } from "@mariozechner/pi-agent-core";
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import { APICallError, generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Compactor, rebaseCompaction } from "agent-compaction";
import { aiSdkConversation } from "agent-compaction/ai-sdk";
import { PROVIDER_ERRORS, useMockLlm } from "../support/mock-llm-server.mjs";

const mock = useMockLlm();
const SUMMARY_PREFIX = "The conversation history before this point was compacted";
const big = (label, chars) => `${label}: ` + "lorem ipsum ".repeat(Math.round(chars / 12));
const sent = (record) => JSON.stringify(record.body.messages);
const summaries = (messages) => messages.filter((m) => m.role === "compactionSummary");
const textOf = (m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join(""));
const until = async (condition, what) => {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
};

/** A summarizer that answers when `release()` is called (or fails with `fail()`). */
function gatedSummarizer() {
  const calls = [];
  let open;
  let opened = new Promise((r) => (open = r));
  return {
    calls,
    release: () => open({ ok: true }),
    fail: () => open({ ok: false }),
    summarize: async (request) => {
      calls.push(request);
      const how = await opened;
      opened = Promise.resolve(how);
      if (!how.ok) throw new Error("summarizer down");
      return "## Goal\nbackground summary";
    },
  };
}

/**
 * An agent over the mock server: a 20,000-token window, a threshold of
 * 16,000 (reserve 4,000), the background start at 0.8 of it (12,800);
 * pi's estimate (characters / 4), so that each turn's size is known.
 */
function setup({ summarize, attach = {} }) {
  const events = [];
  const compactor = new Compactor({
    contextWindow: 20_000,
    estimator: "pi",
    settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 },
    summarize,
    onEvent: (e) => events.push(e),
  });
  const agent = new Agent({
    initialState: { model: mock.model({ id: "m", contextWindow: 20_000 }), systemPrompt: "You are terse.", messages: [] },
    getApiKey: () => "local",
  });
  const detach = compactor.attach(agent, attach);
  mock.setMode((r) => {
    const prompt = Math.ceil(sent(r).length / 4);
    return { text: `answer ${mock.requests.length}`, usage: { prompt_tokens: prompt, completion_tokens: 5, total_tokens: prompt + 5 } };
  });
  return { agent, compactor, events, detach };
}

/** Three large turns, which start the background compaction; resolves once its summary request is made. */
async function summaryRequested(agent, gate) {
  for (const label of ["first", "second", "third"]) await agent.prompt(big(`${label} question`, 18_000));
  await until(() => gate.calls.length === 1, "the summary request");
}

const starts = (events) => events.filter((e) => e.type === "compaction_start");
const ends = (events) => events.filter((e) => e.type === "compaction_end");

describe("attach: threshold compactions in the background", () => {
  test("past 0.8 of the threshold a compaction starts, the agent goes on with the full context, and the summary goes in at its cut when it arrives", async () => {
    const gate = gatedSummarizer();
    const states = [];
    const { agent, compactor, events } = setup({ summarize: gate.summarize, attach: { onStateChange: (s) => states.push(s) } });
    for (const label of ["first", "second", "third"]) await agent.prompt(big(`${label} question`, 18_000));
    // ~13,500 tokens: past 12,800, under 16,000.
    assert.deepEqual(starts(events), [{ type: "compaction_start", reason: "threshold", background: true }]);
    await until(() => gate.calls.length === 1, "the summary request");
    assert.equal(compactor.isCompacting, true);
    assert.equal(compactor.isCompactingInBackground, true);
    // Nobody waits for it: the state keeps the input enabled.
    assert.deepEqual([states.at(-1).isCompacting, states.at(-1).isCompactingInBackground], [false, true]);
    assert.ok(!states.some((s) => s.isCompacting), "never a compaction to wait for");
    assert.equal(summaries(agent.state.messages).length, 0, "nothing inserted yet");

    // The next turn is not held back: it goes out with the full context.
    await agent.prompt("fourth question");
    assert.equal(mock.requests.length, 4);
    assert.ok(!sent(mock.requests[3]).includes(SUMMARY_PREFIX));
    assert.ok(sent(mock.requests[3]).includes("first question"));

    gate.release();
    await until(() => summaries(agent.state.messages).length === 1, "the summary");
    const messages = agent.state.messages;
    const at = messages.findIndex((m) => m.role === "compactionSummary");
    assert.equal(ends(events).length, 1);
    assert.equal(ends(events)[0].result.firstKeptIndex, at, "at the cut chosen at the start");
    // Nothing lost; the fourth turn, added meanwhile, after the summary.
    assert.deepEqual(
      messages.filter((m) => m.role !== "compactionSummary").map((m) => (m.role === "user" ? textOf(m).split(":")[0] : m.role)),
      ["first question", "assistant", "second question", "assistant", "third question", "assistant", "fourth question", "assistant"],
    );
    assert.ok(messages.slice(at + 1).some((m) => m.role === "user" && textOf(m) === "fourth question"));
    assert.equal(compactor.isCompacting, false);
    assert.equal(compactor.isCompactingInBackground, false);
    assert.deepEqual([states.at(-1).isCompacting, states.at(-1).isCompactingInBackground], [false, false]);

    await agent.prompt("fifth question");
    const last = sent(mock.requests.at(-1));
    assert.ok(last.includes(SUMMARY_PREFIX) && last.includes("background summary"), "the next request starts with the summary");
    assert.ok(last.includes("fourth question"));
    assert.ok(!last.includes("first question: lorem"), "the summarized turns are not sent");
  });

  test("a request over the threshold before the summary arrives waits for it and goes out with it; one compaction, not two", async () => {
    const gate = gatedSummarizer();
    const { agent, events } = setup({ summarize: gate.summarize });
    await summaryRequested(agent, gate);
    // ~18,000 tokens with this prompt: over the threshold, so its request waits.
    let done = false;
    const turn = agent.prompt(big("fourth question", 18_000)).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(mock.requests.length, 3, "the request waits for the summary");
    assert.equal(done, false);
    gate.release();
    await turn;
    assert.equal(mock.requests.length, 4);
    const request = sent(mock.requests[3]);
    assert.ok(request.includes(SUMMARY_PREFIX) && request.includes("fourth question"), "it goes out with the summary");
    assert.ok(Math.ceil(request.length / 4) < 16_000, "under the threshold");
    assert.equal(summaries(agent.state.messages).length, 1);
    assert.equal(ends(events).length, 1, "the background compaction, not a second one");
    assert.equal(gate.calls.length, 1);
  });

  test("a failed background summary blocks nothing and leaves nothing behind; the threshold compacts later as usual", async () => {
    const gate = gatedSummarizer();
    const { agent, events, compactor } = setup({ summarize: gate.summarize });
    await summaryRequested(agent, gate);
    gate.fail();
    await until(() => !compactor.isCompacting, "the failure");
    assert.match(ends(events)[0].errorMessage, /summarizer down/);
    assert.equal(summaries(agent.state.messages).length, 0);
    assert.equal(agent.state.messages.length, 6);
    await agent.prompt("fourth question");
    assert.equal(mock.requests.length, 4, "the next turn went out");
  });

  test("a request waiting for a background summary that fails goes out as it is: the threshold goes quiet (the stall rule), the summarizer is not asked again at once", async () => {
    const gate = gatedSummarizer();
    const { agent, events } = setup({ summarize: gate.summarize });
    await summaryRequested(agent, gate);
    // Over the threshold with this prompt: its request waits for the summary.
    const turn = agent.prompt(big("fourth question", 18_000));
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(mock.requests.length, 3, "the request waits for the summary");
    gate.fail();
    await turn;
    assert.equal(mock.requests.length, 4, "the request went out");
    assert.ok(sent(mock.requests[3]).includes("first question"), "with the whole context");
    assert.equal(gate.calls.length, 1, "the summarizer was asked once");
    assert.equal(ends(events).length, 1);
    assert.match(ends(events)[0].errorMessage, /summarizer down/);
    assert.equal(typeof ends(events)[0].quietUntil, "number", "the threshold is quiet until the context grows");
  });

  test("a run that ends over the threshold while a background summary is written waits for it; when it fails, the summarizer is not asked again at once (the stall rule)", async () => {
    const gate = gatedSummarizer();
    const { agent, events, compactor } = setup({ summarize: gate.summarize });
    await summaryRequested(agent, gate);
    // A long answer takes the context over the threshold at the run's end.
    const answer = big("long answer", 12_000);
    mock.setMode((r) => {
      const prompt = Math.ceil(sent(r).length / 4);
      const output = Math.ceil(answer.length / 4);
      return { text: answer, usage: { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output } };
    });
    const turn = agent.prompt("fourth question");
    await until(() => mock.requests.length === 4 && compactor.needsCompaction(agent.state.messages), "the long answer");
    gate.fail();
    await turn;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(gate.calls.length, 1, "the summarizer was asked once");
    assert.equal(ends(events).length, 1);
    assert.match(ends(events)[0].errorMessage, /summarizer down/);
    assert.equal(summaries(agent.state.messages).length, 0);
    assert.equal(compactor.needsCompaction(agent.state.messages), false, "the threshold is quiet until the context grows");
  });

  test("an overflow while a background summary is written: the summary, arriving meanwhile, is the compaction the one retry needs; the summarizer is asked once", async () => {
    const gate = gatedSummarizer();
    const { agent, events } = setup({ summarize: gate.summarize });
    await summaryRequested(agent, gate);
    const before = mock.requests.length;
    // The provider's window is smaller than the compactor believes: the
    // next request overflows, and the summary arrives while it is out.
    mock.setMode(async (r) => {
      if (sent(r).includes(SUMMARY_PREFIX)) return { text: "answered", usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 } };
      gate.release();
      await new Promise((res) => setTimeout(res, 100));
      return { status: 400, json: PROVIDER_ERRORS.openai[400] };
    });
    await agent.prompt("fourth question");
    await until(() => agent.state.messages.at(-1)?.stopReason === "stop" && !agent.state.isStreaming, "the retry's answer");
    const messages = agent.state.messages;
    assert.equal(mock.requests.length - before, 2, "the overflowing request and one retry");
    const retry = sent(mock.requests.at(-1));
    assert.ok(retry.includes(SUMMARY_PREFIX) && retry.includes("background summary") && retry.includes("fourth question"));
    assert.equal(gate.calls.length, 1, "the summarizer was asked once");
    assert.deepEqual(ends(events).map((e) => [e.reason, !!e.result]), [["threshold", true]], "no second compaction");
    assert.equal(summaries(messages).length, 1);
    assert.ok(!messages.some((m) => m.stopReason === "error"), "the failed attempt is gone");
    assert.equal(textOf(messages.at(-1)), "answered");
  });

  test("a summary that arrives during a tool loop goes in at the run's next request, and the requests after it in the run carry it too", async () => {
    const faux = registerFauxProvider({ api: "background-test", provider: "background", models: [{ id: "m", contextWindow: 20_000 }] });
    try {
      const gate = gatedSummarizer();
      const compactor = new Compactor({ contextWindow: 20_000, estimator: "pi", settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 }, summarize: gate.summarize });
      let openTool;
      const toolRan = [];
      const slow = {
        name: "slow", label: "Slow", description: "Takes its time.", parameters: { type: "object", properties: {} },
        execute: async () => {
          toolRan.push(true);
          if (toolRan.length === 1) await new Promise((r) => (openTool = r));
          return { content: [{ type: "text", text: "tool output" }], details: {} };
        },
      };
      const agent = new Agent({ initialState: { model: faux.getModel(), systemPrompt: "You are terse.", tools: [slow], messages: [] }, getApiKey: () => "k" });
      compactor.attach(agent);
      const seen = [];
      const sees = (reply) => (context) => {
        seen.push(context.messages.slice());
        return reply;
      };
      faux.setResponses([
        fauxAssistantMessage("answer 1"),
        fauxAssistantMessage("answer 2"),
        fauxAssistantMessage("answer 3"),
        sees(fauxAssistantMessage(fauxToolCall("slow", {}), { stopReason: "toolUse" })),
        sees(fauxAssistantMessage(fauxToolCall("slow", {}), { stopReason: "toolUse" })),
        sees(fauxAssistantMessage("answer 4")),
      ]);
      await summaryRequested(agent, gate);
      const run = agent.prompt("fourth question");
      await until(() => openTool !== undefined, "the tool call");
      // The summary arrives while the tool runs (the agent is busy: it waits).
      gate.release();
      await until(() => !compactor.isCompacting, "the summary");
      assert.equal(summaries(agent.state.messages).length, 0, "not in while the run goes on");
      openTool();
      await run;
      const summaryFirst = (messages) => textOf(messages[0]).startsWith(SUMMARY_PREFIX);
      assert.ok(!summaryFirst(seen[0]), "the run's first request: before the summary arrived");
      assert.ok(summaryFirst(seen[1]), "the next request starts with the summary");
      assert.ok(summaryFirst(seen[2]), "and the one after it, from the loop's own array");
      assert.ok(!JSON.stringify(seen[2]).includes("first question: lorem"), "the summarized turns are not sent");
      assert.ok(JSON.stringify(seen[2]).includes("fourth question"));
      const messages = agent.state.messages;
      assert.equal(summaries(messages).length, 1, "one summary, in the agent's messages");
      assert.deepEqual(
        messages.filter((m) => m.role !== "compactionSummary").map((m) => m.role),
        ["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "toolResult", "assistant", "toolResult", "assistant"],
        "nothing lost",
      );
      assert.equal(gate.calls.length, 1);
    } finally {
      faux.unregister();
    }
  });

  test("a summary whose messages changed meanwhile (an undo) is dropped, never inserted", async () => {
    const gate = gatedSummarizer();
    const { agent, compactor } = setup({ summarize: gate.summarize });
    await summaryRequested(agent, gate);
    const undone = agent.state.messages.slice(0, 4);
    agent.state.messages = undone;
    gate.release();
    await until(() => !compactor.isCompacting, "the summary");
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(summaries(agent.state.messages).length, 0);
    assert.deepEqual(agent.state.messages, undone);
  });

  test("abort() cancels a background compaction: nothing inserted", async () => {
    const gate = gatedSummarizer();
    const { agent, compactor, events } = setup({ summarize: gate.summarize });
    await summaryRequested(agent, gate);
    compactor.abort();
    await until(() => ends(events).length === 1, "compaction_end");
    assert.equal(ends(events)[0].aborted, true);
    gate.release();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(summaries(agent.state.messages).length, 0);
  });

  test("while a request waits for the background summary, the state says isCompacting (the input disabled), and not once it went in", async () => {
    const gate = gatedSummarizer();
    const states = [];
    const { agent, compactor } = setup({ summarize: gate.summarize, attach: { onStateChange: (s) => states.push(s) } });
    await summaryRequested(agent, gate);
    assert.deepEqual([states.at(-1).isCompacting, states.at(-1).isCompactingInBackground], [false, true]);
    const turn = agent.prompt(big("fourth question", 18_000));
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(mock.requests.length, 3, "the request waits for the summary");
    assert.deepEqual([states.at(-1).isCompacting, states.at(-1).isCompactingInBackground], [true, false], "the conversation waits for it");
    assert.deepEqual([compactor.isCompacting, compactor.isCompactingInBackground], [true, false]);
    gate.release();
    await turn;
    assert.deepEqual([states.at(-1).isCompacting, states.at(-1).isCompactingInBackground], [false, false]);
    assert.equal(summaries(agent.state.messages).length, 1);
  });

  test("compactor.abort() while an overflow's retry waits for the background summary ends the recovery: no second compaction, the provider's error stays", async () => {
    const gate = gatedSummarizer();
    const states = [];
    const { agent, compactor, events } = setup({ summarize: gate.summarize, attach: { onStateChange: (s) => states.push(s) } });
    await summaryRequested(agent, gate);
    const before = mock.requests.length;
    mock.setMode(() => ({ status: 400, json: PROVIDER_ERRORS.openai[400] }));
    const run = agent.prompt("fourth question");
    await until(() => agent.state.messages.at(-1)?.stopReason === "error", "the overflow");
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(agent.state.isStreaming, true, "the retry waits for the summary");
    assert.deepEqual([states.at(-1).isCompacting, states.at(-1).isCompactingInBackground], [true, false], "and the state says so");
    compactor.abort();
    let ended = false;
    run.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ended, true, "the run ended at once");
    assert.equal(agent.state.isStreaming, false);
    assert.deepEqual(starts(events).map((e) => [e.reason, e.background]), [["threshold", true]], "no overflow compaction after the abort");
    assert.deepEqual(ends(events).map((e) => [e.reason, e.aborted]), [["threshold", true]]);
    assert.equal(gate.calls.length, 1, "the summarizer was asked once");
    assert.equal(mock.requests.length - before, 1, "no retry");
    assert.equal(agent.state.messages.at(-1).stopReason, "error", "the provider's error stays");
    assert.equal(summaries(agent.state.messages).length, 0);
    assert.deepEqual([states.at(-1).isCompacting, states.at(-1).isCompactingInBackground], [false, false]);
  });

  test("agent.abort() while a request waits for the background summary ends the run at once; the background compaction, which belongs to no run, goes on and its summary goes in", async () => {
    const gate = gatedSummarizer();
    const states = [];
    const { agent, compactor, events } = setup({ summarize: gate.summarize, attach: { onStateChange: (s) => states.push(s) } });
    await summaryRequested(agent, gate);
    const run = agent.prompt(big("fourth question", 18_000));
    await new Promise((r) => setTimeout(r, 150));
    agent.abort();
    let ended = false;
    run.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ended, true, "the run ended at once");
    assert.equal(agent.state.isStreaming, false);
    assert.equal(mock.requests.length, 3, "nothing sent");
    assert.equal(gate.calls[0].signal.aborted, false, "the background compaction goes on");
    assert.deepEqual([compactor.isCompacting, compactor.isCompactingInBackground], [true, true]);
    assert.deepEqual([states.at(-1).isCompacting, states.at(-1).isCompactingInBackground], [false, true]);
    gate.release();
    await until(() => summaries(agent.state.messages).length === 1, "the summary");
    assert.deepEqual(ends(events).map((e) => [e.reason, e.aborted, !!e.result]), [["threshold", false, true]]);
    assert.equal(agent.state.messages.at(-1).stopReason, "aborted", "the aborted run's message after the summary");
  });

  test("detach() while a background compaction runs aborts it: nothing inserted, saved or reported after it", async () => {
    const gate = gatedSummarizer();
    const states = [];
    const saved = [];
    const store = { async save(id, messages) { saved.push(messages.length); } };
    const { agent, events, detach } = setup({ summarize: gate.summarize, attach: { onStateChange: (s) => states.push(s), store, sessionId: "s1" } });
    await summaryRequested(agent, gate);
    const [savesBefore, statesBefore] = [saved.length, states.length];
    detach();
    await until(() => ends(events).length === 1, "compaction_end");
    assert.equal(ends(events)[0].aborted, true);
    assert.equal(gate.calls[0].signal.aborted, true);
    gate.release();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(summaries(agent.state.messages).length, 0);
    assert.equal(saved.length, savesBefore);
    assert.equal(states.length, statesBefore);
  });

  test("backgroundAt: false compacts at the threshold and blocks, as pi does", async () => {
    const gate = gatedSummarizer();
    const states = [];
    const { agent, events, compactor } = setup({ summarize: gate.summarize, attach: { backgroundAt: false, onStateChange: (s) => states.push(s) } });
    for (const label of ["first", "second", "third"]) await agent.prompt(big(`${label} question`, 18_000));
    assert.equal(starts(events).length, 0, "nothing started under the threshold");
    // Over the threshold: the compaction blocks, and the state says so.
    const turn = agent.prompt(big("fourth question", 18_000));
    await until(() => gate.calls.length === 1, "the summary request");
    assert.equal(compactor.isCompactingInBackground, false);
    assert.deepEqual([states.at(-1).isCompacting, states.at(-1).isCompactingInBackground], [true, false]);
    gate.release();
    await turn;
    assert.equal(summaries(agent.state.messages).length, 1);
    assert.throws(() => setup({ summarize: gate.summarize, attach: { backgroundAt: 0 } }), {
      name: "RangeError",
      message: "attach: options.backgroundAt must be a number in (0, 1] (a fraction of the threshold) or false, got 0",
    });
    assert.throws(() => setup({ summarize: gate.summarize, attach: { backgroundAt: "0.5" } }), {
      name: "TypeError",
      message: "attach: options.backgroundAt must be a number in (0, 1] (a fraction of the threshold) or false, got a string",
    });
  });
});

describe("the Compactor's background methods", () => {
  const turn = (i, chars = 4_000) => [
    { role: "user", content: big(`question ${i}`, chars), timestamp: 1_000 + 2 * i },
    {
      role: "assistant", content: [{ type: "text", text: `answer ${i}` }], api: "openai-completions", provider: "local", model: "m",
      stopReason: "stop", timestamp: 1_001 + 2 * i,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    },
  ];
  const compactor = () =>
    new Compactor({ contextWindow: 10_000, estimator: "pi", settings: { reserveTokens: 2_000, keepRecentTokens: 1_000 }, summarize: () => "## Goal\nS" });

  test("backgroundNext: start past the fraction, insert when ready, compact over the threshold; takeBackground puts the summary at its cut with the later messages after it", async () => {
    const c = compactor();
    // 7 turns of ~1,000 tokens: past 0.8 × 8,000, under 8,000.
    const messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i));
    assert.equal(c.backgroundNext(messages), "nothing", "no fraction: never in the background");
    assert.equal(c.backgroundNext(messages, 0.8), "start");
    assert.equal(c.backgroundNext(messages.slice(0, 8), 0.8), "nothing");
    const running = c.compactInBackground(messages);
    assert.equal(c.backgroundNext(messages, 0.8), "nothing", "never two");
    assert.equal(c.takeBackground(messages), undefined, "not ready");
    const result = await running;
    await c.waitForBackground();
    const grown = messages.concat(turn(7, 100));
    assert.equal(c.backgroundNext(grown, 0.8), "insert");
    // Something else than the messages is a TypeError, and the summary stays.
    for (const bad of [undefined, 5, { length: 3 }]) assert.throws(() => c.takeBackground(bad), TypeError);
    assert.equal(c.backgroundNext(grown, 0.8), "insert", "still ready");
    const out = c.takeBackground(grown);
    assert.equal(out.messages.length, grown.length + 1);
    assert.equal(out.messages[out.firstKeptIndex].role, "compactionSummary");
    assert.equal(out.firstKeptIndex, result.firstKeptIndex);
    assert.deepEqual(out.messages.slice(-2), grown.slice(-2), "the later messages after it");
    assert.equal(c.takeBackground(grown), undefined, "taken once");
    const over = [0, 1, 2, 3, 4, 5, 6, 7, 8].flatMap((i) => turn(i));
    assert.equal(c.backgroundNext(over, 0.8), "compact");
  });

  test("compactInBackground refuses a reason other than threshold and willRetry (it is a threshold compaction nobody waits for), before anything starts", async () => {
    const c = compactor();
    const messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i));
    await assert.rejects(c.compactInBackground(messages, { reason: "manual" }), { name: "TypeError", message: /^options\.reason must be "threshold" or left out/ });
    await assert.rejects(c.compactInBackground(messages, { willRetry: true }), { name: "TypeError", message: /^options\.willRetry must be false or left out/ });
    assert.equal(c.isCompacting, false, "nothing started");
    const out = await c.compactInBackground(messages, { reason: "threshold" });
    assert.ok(out, "an explicit threshold reason is the same compaction");
  });

  test("compactIfNeeded: starts in the background past backgroundAt, puts the summary in at the next call, compacts over the threshold; bad options are refused", async () => {
    const events = [];
    const gate = gatedSummarizer();
    const c = new Compactor({
      contextWindow: 10_000, estimator: "pi", settings: { reserveTokens: 2_000, keepRecentTokens: 1_000 },
      summarize: gate.summarize, onEvent: (e) => events.push(e),
    });
    const messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i));
    assert.equal(await c.compactIfNeeded(messages), undefined, "under the threshold, no background: nothing");
    let ended = 0;
    assert.equal(await c.compactIfNeeded(messages, { backgroundAt: 0.8, onBackgroundEnd: () => ended++ }), undefined, "started, not awaited");
    assert.deepEqual(starts(events), [{ type: "compaction_start", reason: "threshold", background: true }]);
    await until(() => gate.calls.length === 1, "the summary request");
    gate.release();
    await until(() => ended === 1, "onBackgroundEnd");
    const grown = messages.concat(turn(7, 100));
    const out = await c.compactIfNeeded(grown, { backgroundAt: 0.8 });
    assert.equal(out.messages[out.firstKeptIndex].role, "compactionSummary");
    assert.deepEqual(out.messages.slice(-2), grown.slice(-2), "the later messages after it");
    assert.equal(gate.calls.length, 1);

    // Over the threshold with nothing under way: a threshold compaction now.
    const over = [0, 1, 2, 3, 4, 5, 6, 7, 8].flatMap((i) => turn(i));
    const now = await new Compactor({ contextWindow: 10_000, estimator: "pi", settings: { reserveTokens: 2_000, keepRecentTokens: 1_000 }, summarize: () => "## Goal\nS" })
      .compactIfNeeded(over);
    assert.equal(now.messages.filter((m) => m.role === "compactionSummary").length, 1);

    await assert.rejects(c.compactIfNeeded(messages, { reason: "manual" }), {
      name: "TypeError",
      message: 'options.reason must be "threshold" or "overflow", got a string',
    });
    await assert.rejects(c.compactIfNeeded(messages, { backgroundAt: 0 }), {
      name: "RangeError",
      message: "options.backgroundAt must be a number in (0, 1]: a fraction of the threshold, got 0",
    });
    await assert.rejects(c.compactIfNeeded(messages, { onBackgroundEnd: "later" }), { name: "TypeError" });
    await assert.rejects(c.compactIfNeeded("not messages"), { name: "TypeError" });
  });

  test("compactIfNeeded after an overflow: the summary being written in the background is the compaction (awaited, the summarizer asked once); with none, an overflow compaction now", async () => {
    const events = [];
    const messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i));
    const gate = gatedSummarizer();
    const options = { contextWindow: 10_000, estimator: "pi", settings: { reserveTokens: 2_000, keepRecentTokens: 1_000 }, onEvent: (e) => events.push(e) };
    const c = new Compactor({ ...options, summarize: gate.summarize });
    c.compactInBackground(messages);
    await until(() => gate.calls.length === 1, "the background summary request");
    let recovered;
    const recovering = c.compactIfNeeded(messages, { reason: "overflow", willRetry: true }).then((r) => (recovered = r));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(recovered, undefined, "it waits for the background summary");
    gate.release();
    await recovering;
    assert.equal(recovered.messages.filter((m) => m.role === "compactionSummary").length, 1);
    assert.equal(gate.calls.length, 1, "no second compaction");
    events.length = 0;
    const direct = await new Compactor({ ...options, summarize: () => "## Goal\nS" }).compactIfNeeded(messages, { reason: "overflow", willRetry: true });
    assert.equal(direct.messages.filter((m) => m.role === "compactionSummary").length, 1, "under the threshold, an overflow compacts anyway");
    assert.deepEqual(ends(events).map((e) => [e.reason, e.willRetry]), [["overflow", true]]);
  });

  test("the usage of a reply added while the summary was written is stale: it counts as a kept message's, for this compactor and a fresh one", async () => {
    const c = compactor();
    const messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i));
    const result = await c.compactInBackground(messages);
    await c.waitForBackground();
    // The next turn went out with the whole context (7,000 tokens) before the summary went in.
    const [question, reply] = turn(7, 100);
    const full = { ...reply, usage: { ...reply.usage, input: 7_100, totalTokens: 7_110 } };
    const grown = [...messages, question, full];
    const out = c.takeBackground(grown);
    const summary = out.messages[out.firstKeptIndex];
    assert.equal(summary, out.summary);
    assert.equal(summary.keptMessages, result.summary.keptMessages + 2, "the two added meanwhile are kept messages");
    assert.equal(result.summary.keptMessages, messages.length - result.firstKeptIndex, "the compaction's own result is untouched");
    const sent = c.contextTokens(out.messages);
    assert.ok(sent < 3_000, `the context after the summary is counted, not the reply's stale 7,110 (${sent})`);
    assert.equal(compactor().contextTokens(out.messages), sent, "the same from the array alone");
    assert.equal(c.needsCompaction(out.messages), false);
  });

  test("rebaseCompaction: a result for the array grown meanwhile, the same rule as takeBackground; an edited array drops it", async () => {
    const c = compactor();
    const messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i));
    const result = await c.compact(messages);
    assert.equal(rebaseCompaction(result, messages, messages), result, "nothing added: the result itself");
    const grown = [...messages, ...turn(7, 100)];
    const out = rebaseCompaction(result, messages, grown);
    assert.deepEqual(out.messages.slice(-2), grown.slice(-2));
    assert.equal(out.messages.length, grown.length + 1);
    assert.equal(out.summary.keptMessages, result.summary.keptMessages + 2);
    assert.equal(out.messages[out.firstKeptIndex], out.summary);
    const edited = grown.slice();
    edited[3] = { ...edited[3] };
    assert.equal(rebaseCompaction(result, messages, edited), undefined, "an edit meanwhile: the array wins");
    assert.equal(rebaseCompaction(result, messages, messages.slice(0, -1)), undefined, "messages taken away");
    assert.throws(() => rebaseCompaction(result, messages, "no"), { name: "TypeError", message: /^messages must be an array of messages/ });
    assert.throws(() => rebaseCompaction(undefined, messages, grown), { name: "TypeError", message: /^result must be what compact resolved to/ });
  });

  test("a clearing that arrives after more replies goes after them: the freed tokens still come off their stale usage", async () => {
    const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const messages = [];
    let t = 1_000;
    for (let i = 0; i < 8; i++) {
      messages.push({ role: "user", content: `step ${i}`, timestamp: t++ });
      messages.push({ role: "assistant", content: [{ type: "toolCall", id: `c${i}`, name: "read", arguments: { path: `f${i}` } }], api: "openai-completions", provider: "local", model: "m", stopReason: "toolUse", usage: zero, timestamp: t++ });
      messages.push({ role: "toolResult", toolCallId: `c${i}`, toolName: "read", content: [{ type: "text", text: "x".repeat(16_000) }], isError: false, timestamp: t++ });
    }
    const c = new Compactor({
      contextWindow: 40_000, estimator: "pi",
      settings: { reserveTokens: 4_000, keepRecentTokens: 2_000, toolOutputClearing: { protectTokens: 4_000, minFreedTokens: 1_000, protectTurns: 0 } },
      summarize: () => "## Goal\nS",
    });
    const result = await c.compactInBackground(messages);
    assert.equal(result.tier, "clear");
    await c.waitForBackground();
    const before = c.contextTokens(result.messages);
    // A reply that went out with every output, before the marker went in.
    const reply = { role: "assistant", content: [{ type: "text", text: "done" }], api: "openai-completions", provider: "local", model: "m", stopReason: "stop", timestamp: t++,
      usage: { ...zero, input: 32_100, totalTokens: 32_110 } };
    const out = c.takeBackground([...messages, reply]);
    assert.equal(out.markerIndex, messages.length + 1, "the marker after the reply");
    assert.equal(out.messages[out.markerIndex], out.marker);
    const after = c.contextTokens(out.messages);
    assert.ok(after < 32_110 - result.tokensFreed + 100 && after < before + 100, `what the marker freed comes off the reply's usage (${after})`);
  });

  test("a result for messages that changed is dropped; a bad fraction is a TypeError", async () => {
    const c = compactor();
    const messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i));
    await c.compactInBackground(messages);
    await c.waitForBackground();
    const edited = messages.slice();
    edited[2] = { ...edited[2] };
    assert.equal(c.takeBackground(edited), undefined);
    assert.equal(c.backgroundNext(messages, 0.8), "start", "dropped: none ready any more");
    assert.throws(() => c.backgroundNext(messages, 1.5), { name: "RangeError", message: "fraction must be a number in (0, 1]: a fraction of the threshold, got 1.5" });
  });

  test("a compactInBackground refused (one already runs, a manual compaction runs, bad options) leaves the one under way alone: its summary still goes in", async () => {
    let release;
    const gate = new Promise((r) => (release = r));
    const c = new Compactor({
      contextWindow: 10_000, estimator: "pi", settings: { reserveTokens: 2_000, keepRecentTokens: 1_000 },
      summarize: async () => { await gate; return "## Goal\nS"; },
    });
    const messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i));
    const running = c.compactInBackground(messages);
    await assert.rejects(c.compactInBackground(messages), { message: /already running/ });
    await assert.rejects(c.compactInBackground(messages, { reason: "manual" }), { name: "TypeError" });
    assert.equal(c.isCompactingInBackground, true, "the first one still runs in the background");
    release();
    await running;
    await c.waitForBackground();
    const grown = messages.concat(turn(7, 100));
    assert.equal(c.backgroundNext(grown, 0.8), "insert");
    const out = c.takeBackground(grown);
    assert.equal(out?.messages.length, grown.length + 1, "the first one's summary goes in");

    // A manual compaction running is not one in the background, and a
    // compactInBackground refused meanwhile does not make it one.
    const other = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i + 10));
    const manual = c.compact(other);
    await assert.rejects(c.compactInBackground(other), { message: /already running/ });
    assert.equal(c.isCompactingInBackground, false);
    assert.equal(c.backgroundNext(other, 0.8), "nothing");
    await manual;
    await c.waitForBackground();
    assert.equal(c.takeBackground(other), undefined, "no background result: the manual one is the caller's");
  });

  test("a background summary is ready as its compaction ends: from its compaction_end on, backgroundNext says insert and takeBackground puts it in", async () => {
    const seen = [];
    let messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i));
    const c = new Compactor({
      contextWindow: 10_000, estimator: "pi", settings: { reserveTokens: 2_000, keepRecentTokens: 1_000 },
      summarize: async () => "## Goal\nS",
      onEvent: (e) => {
        if (e.type !== "compaction_end") return;
        seen.push([c.isCompacting, c.isCompactingInBackground, c.backgroundNext(messages, 0.8)]);
        if (seen.length === 1) seen.push(c.takeBackground(messages)?.messages.length);
      },
    });
    const first = c.compactInBackground(messages);
    messages = messages.concat(turn(7, 100));
    await first;
    assert.deepEqual(seen, [[false, false, "insert"], messages.length + 1], "taken in the compaction_end handler");
    messages = [0, 1, 2, 3, 4, 5, 6].flatMap((i) => turn(i + 10));
    await c.compactInBackground(messages);
    assert.equal(c.backgroundNext(messages, 0.8), "insert", "ready once compactInBackground's promise resolved");
    assert.equal(c.takeBackground(messages)?.messages.length, messages.length + 1);
  });
});

/**
 * The AI SDK side of `setup`: the same window, settings and summarizer
 * (`gate`), a mock model that counts a prompt's tokens as the provider
 * would and answers `answer <n>`; `before(i)` runs before call `i` answers
 * (it may throw the provider's error). `step()` is one `run` of a call.
 * Three large turns are taken, which start the background compaction.
 */
async function aiSdkSetup({ before = async () => {}, answer = (n) => `answer ${n}`, tools } = {}) {
  const gate = gatedSummarizer();
  const prompts = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const i = prompts.length;
      prompts.push(prompt);
      await before(i, gate);
      const tokens = Math.ceil(JSON.stringify(prompt).length / 4);
      const text = answer(prompts.length);
      const usage = (output) => ({ inputTokens: { total: tokens, noCache: tokens, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: output, text: output, reasoning: 0 } });
      // `{ toolCall: name }`: a step that calls that tool.
      if (text.toolCall) {
        const content = [{ type: "tool-call", toolCallId: `call-${prompts.length}`, toolName: text.toolCall, input: "{}" }];
        return { content, finishReason: { unified: "tool-calls", raw: undefined }, usage: usage(5), warnings: [] };
      }
      return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: undefined }, usage: usage(Math.ceil(text.length / 4)), warnings: [] };
    },
  });
  const events = [];
  const compactor = new Compactor({ contextWindow: 20_000, estimator: "pi", settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 }, summarize: gate.summarize, onEvent: (e) => events.push(e) });
  const conv = aiSdkConversation({ compactor });
  const step = () => conv.run((args) => generateText({ model, maxRetries: 0, tools, stopWhen: stepCountIs(5), ...args }));
  for (const label of ["first", "second", "third"]) {
    await conv.append({ role: "user", content: big(`${label} question`, 18_000) });
    await step();
  }
  return { gate, prompts, events, compactor, conv, step };
}

describe("aiSdkConversation: threshold compactions in the background", () => {
  test("the steps go on while the summary is written; it goes into the flat array at its cut when it arrives", async () => {
    const { gate, prompts, events, compactor, conv, step } = await aiSdkSetup();
    assert.equal(starts(events).at(-1)?.background, true);
    await until(() => gate.calls.length === 1, "the summary request");
    await conv.append({ role: "user", content: "fourth question" });
    await step();
    assert.ok(!JSON.stringify(prompts.at(-1)).includes(SUMMARY_PREFIX), "not held back");
    gate.release();
    await until(() => summaries(conv.messages).length === 1, "the summary");
    const at = conv.messages.findIndex((m) => m.role === "compactionSummary");
    assert.ok(conv.messages.slice(at).some((m) => m.role === "user" && m.content === "fourth question"));
    assert.equal(conv.messages.length, 9);
    await conv.append({ role: "user", content: "fifth question" });
    await step();
    assert.match(JSON.stringify(prompts.at(-1)), /background summary/);
    assert.throws(() => aiSdkConversation({ compactor, backgroundAt: 2 }), {
      name: "RangeError",
      message: "aiSdkConversation: options.backgroundAt must be a number in (0, 1] (a fraction of the threshold) or false, got 2",
    });
    assert.throws(() => aiSdkConversation({ compactor, backgroundAt: "all" }), { name: "TypeError" });
  });

  test("an overflow while a background summary is written: the summary, arriving meanwhile, is the compaction the one retry needs (as with attach)", async () => {
    let overflowAt = -1;
    const { gate, prompts, events, conv, step } = await aiSdkSetup({
      before: async (i, gate) => {
        if (i !== overflowAt) return;
        gate.release();
        await new Promise((r) => setTimeout(r, 100));
        const message = "This model's maximum context length is 20000 tokens. However, your messages resulted in 25000 tokens.";
        throw new APICallError({ message, url: "https://mock.invalid/v1/chat/completions", requestBodyValues: {}, statusCode: 400, responseBody: JSON.stringify({ error: { message, code: "context_length_exceeded" } }), isRetryable: false });
      },
    });
    await until(() => gate.calls.length === 1, "the summary request");
    overflowAt = prompts.length;
    await conv.append({ role: "user", content: "fourth question" });
    const result = await step();
    assert.equal(result.text, `answer ${overflowAt + 2}`, "the retry answered");
    assert.equal(prompts.length, overflowAt + 2, "the overflowing request and one retry");
    assert.match(JSON.stringify(prompts.at(-1)), /background summary/);
    assert.equal(gate.calls.length, 1, "the summarizer was asked once");
    assert.ok(!ends(events).some((e) => e.reason === "overflow"), "no overflow compaction");
    assert.equal(summaries(conv.messages).length, 1);
  });

  test("a step waiting for a background summary that fails goes out as it is: the threshold goes quiet, the summarizer is not asked again at once (as with attach)", async () => {
    const { gate, prompts, events, conv, step } = await aiSdkSetup();
    await until(() => gate.calls.length === 1, "the summary request");
    // Over the threshold with this message: its step waits for the summary.
    await conv.append({ role: "user", content: big("fourth question", 18_000) });
    const waiting = step();
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(prompts.length, 3, "the step waits for the summary");
    gate.fail();
    await waiting;
    assert.equal(prompts.length, 4, "the step went out");
    assert.ok(JSON.stringify(prompts[3]).includes("first question"), "with the whole context");
    assert.equal(gate.calls.length, 1, "the summarizer was asked once");
    assert.equal(ends(events).length, 1);
    assert.match(ends(events)[0].errorMessage, /summarizer down/);
    assert.equal(summaries(conv.messages).length, 0);
  });

  test("a call whose answer takes the context over the threshold while a background summary is written waits for it; when it fails, the summarizer is not asked again at once (as with attach)", async () => {
    const { gate, prompts, events, compactor, conv, step } = await aiSdkSetup({ answer: (n) => (n === 4 ? big("long answer", 12_000) : `answer ${n}`) });
    await until(() => gate.calls.length === 1, "the summary request");
    await conv.append({ role: "user", content: "fourth question" });
    let done = false;
    const call = step().then(() => (done = true));
    await until(() => prompts.length === 4, "the fourth call");
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(done, false, "the call waits for the summary");
    gate.fail();
    await call;
    assert.equal(gate.calls.length, 1, "the summarizer was asked once");
    assert.equal(ends(events).length, 1);
    assert.match(ends(events)[0].errorMessage, /summarizer down/);
    assert.equal(summaries(conv.messages).length, 0);
    assert.equal(compactor.needsCompaction(conv.messages), false, "the threshold is quiet until the context grows");
  });

  test("a summary that arrives during a tool loop goes in at the call's next step (as with attach)", async () => {
    let openTool;
    const slow = tool({
      description: "Takes its time.",
      inputSchema: jsonSchema({ type: "object", properties: {} }),
      execute: async () => {
        await new Promise((r) => (openTool = r));
        return "tool output";
      },
    });
    const { gate, prompts, compactor, conv, step } = await aiSdkSetup({
      tools: { slow },
      answer: (n) => (n === 4 ? { toolCall: "slow" } : `answer ${n}`),
    });
    await until(() => gate.calls.length === 1, "the summary request");
    await conv.append({ role: "user", content: "fourth question" });
    const call = step();
    await until(() => openTool !== undefined, "the tool call");
    gate.release();
    await until(() => !compactor.isCompacting, "the summary");
    openTool();
    await call;
    assert.equal(prompts.length, 5);
    assert.ok(!JSON.stringify(prompts[3]).includes(SUMMARY_PREFIX), "the call's first step: before the summary arrived");
    assert.ok(JSON.stringify(prompts[4]).includes(SUMMARY_PREFIX), "the next step starts with the summary");
    assert.ok(!JSON.stringify(prompts[4]).includes("first question: lorem"), "the summarized turns are not sent");
    assert.ok(JSON.stringify(prompts[4]).includes("tool output"));
    assert.equal(summaries(conv.messages).length, 1);
    assert.equal(gate.calls.length, 1);
  });
});
