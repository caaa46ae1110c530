// compactor.attach(agent): the automatic flows of SPEC §3 with the real
// pi-agent-core 0.73.1 `Agent` and pi-ai's own OpenAI client, talking to the
// mock LLM server over HTTP. The server decides each answer from what the
// agent sent (a normal answer with the usage a provider would report, a
// provider's real overflow error, ...) and records every request, so each
// test asserts both what the agent holds and what the model received.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Agent } from "@mariozechner/pi-agent-core";
import { Compactor } from "agent-compaction";
import { PROVIDER_ERRORS, useMockLlm } from "../support/mock-llm-server.mjs";

const OVERFLOW = { status: 400, json: PROVIDER_ERRORS.openai[400] };
const RECOVERY_FAILED =
  "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";
const SUMMARY_PREFIX = "The conversation history before this point was compacted";

const mock = useMockLlm();

const model = (id = "m", contextWindow = 20_000) => mock.model({ id, contextWindow });

/** What the model was sent, as text (to find messages in it). */
const sent = (record) => JSON.stringify(record.body.messages);
/** Whether a message of the request starts with `text` (a summary may quote it; that is not the message). */
const sentMessage = (record, text) =>
  record.body.messages.some((m) => {
    const content = typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join("");
    return content.startsWith(text);
  });
/** The size a provider would count for a request: characters / 4. */
const promptTokens = (record) => Math.ceil(sent(record).length / 4);

/** A normal answer reporting the request's own size as its usage. */
function answer(record, text = "Done: " + record.body.messages.length + " messages seen.") {
  const prompt = promptTokens(record);
  return { text, usage: { prompt_tokens: prompt, completion_tokens: 10, total_tokens: prompt + 10 } };
}

/** An agent and a compactor (extractive summaries: no summarizer requests). */
function setup({ window = 20_000, messages = [], compactor: extra = {}, attach = {} } = {}) {
  const events = [];
  const states = [];
  const compactor = new Compactor({
    contextWindow: window,
    model: "local/m",
    settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 },
    onEvent: (e) => events.push(e),
    ...extra,
  });
  const agent = new Agent({
    initialState: { model: model("m", window), systemPrompt: "You are terse.", messages },
    getApiKey: () => "local",
  });
  const detach = compactor.attach(agent, { onStateChange: (s) => states.push(s), ...attach });
  return { agent, compactor, events, states, detach };
}

const roles = (messages) => messages.map((m) => m.role);
const summaries = (messages) => messages.filter((m) => m.role === "compactionSummary");
const ends = (events) => events.filter((e) => e.type === "compaction_end");
const big = (label, n = 12_000) => `${label}: ` + "lorem ipsum ".repeat(n / 12);

/**
 * A reopened session of six turns, each reading a file whose output is
 * ~3,000 tokens by pi's estimate (12,000 characters): old tool output to
 * clear. With `CLEARING` the compactor clears all but the last turns'.
 */
function toolSession() {
  let clock = 1_000;
  const out = [];
  for (let i = 0; i < 6; i++) {
    const id = `call_${i}`;
    out.push({ role: "user", content: `question ${i}`, timestamp: clock++ });
    out.push({
      role: "assistant",
      content: [{ type: "toolCall", id, name: "read", arguments: { path: `/f${i}` } }],
      api: "openai-completions", provider: "local", model: "m", stopReason: "toolUse", timestamp: clock++,
    });
    out.push({
      role: "toolResult", toolCallId: id, toolName: "read",
      content: [{ type: "text", text: big(`output ${i}`, 12_000) }], isError: false, timestamp: clock++,
    });
    out.push({
      role: "assistant", content: [{ type: "text", text: `answer ${i}` }],
      api: "openai-completions", provider: "local", model: "m", stopReason: "stop", timestamp: clock++,
    });
  }
  return out;
}
const CLEARING = {
  // pi's estimate, so that the placeholder's size is 12,000 chars / 4.
  estimator: "pi",
  settings: { reserveTokens: 4_000, keepRecentTokens: 3_000, toolOutputClearing: { protectTokens: 1_000, minFreedTokens: 1_000 } },
};

/** Resolves once the agent is idle and any retry it scheduled has run. */
async function settled(agent) {
  for (let i = 0; i < 50; i++) {
    await agent.waitForIdle();
    await new Promise((r) => setTimeout(r, 20));
    if (!agent.state.isStreaming) return;
  }
}

/** A stored session, loaded back: its last answer reported a nearly full window. */
function reopenedSession() {
  let clock = 1_000;
  const out = [];
  for (let i = 0; i < 6; i++) {
    out.push({ role: "user", content: big(`old question ${i}`, 8_000), timestamp: clock++ });
    out.push({
      role: "assistant",
      content: [{ type: "text", text: `old answer ${i}` }],
      api: "openai-completions",
      provider: "local",
      model: "m",
      usage: { input: 17_000, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 17_005, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop",
      timestamp: clock++,
    });
  }
  return out;
}

describe("attach(agent): automatic compaction in a real pi-agent-core Agent", () => {
  test("threshold: one summary after the turn that crossed it, the next request starts with it, nothing is retried", async () => {
    mock.setMode((r) => answer(r));
    const { agent, events, states } = setup();
    await agent.prompt(big("first question"));
    await agent.prompt(big("second question"));
    assert.equal(summaries(agent.state.messages).length, 0, "under the threshold so far");
    await agent.prompt(big("third question", 40_000));
    await settled(agent);

    const messages = agent.state.messages;
    assert.equal(summaries(messages).length, 1);
    assert.deepEqual(
      ends(events).map((e) => [e.reason, e.willRetry, !!e.result, e.errorMessage]),
      [["threshold", false, true, undefined]],
    );
    assert.equal(mock.requests.length, 3, "no retry after a threshold compaction");
    // Every message is still there (the summary is inserted, nothing dropped).
    assert.deepEqual(roles(messages).filter((r) => r !== "compactionSummary"), ["user", "assistant", "user", "assistant", "user", "assistant"]);
    assert.ok(states.some((s) => s.isCompacting), "onStateChange reported the compaction");
    const last = states.at(-1);
    assert.equal(last.isCompacting, false);
    assert.ok(last.contextTokens < 16_000, `context after: ${last.contextTokens}`);
    assert.equal(last.lastTier, "summarize", "onStateChange says which tier ran");
    assert.equal(states[0].lastTier, undefined, "and nothing before a compaction ran");

    await agent.prompt("fourth question");
    const request = sent(mock.requests.at(-1));
    assert.ok(request.includes(SUMMARY_PREFIX), "the next request starts with the summary");
    assert.ok(!sentMessage(mock.requests.at(-1), "first question"), "and leaves the summarized messages out");
    assert.ok(request.includes("fourth question"));
  });

  test("overflow with no answer: the failed attempt goes, one compaction, exactly one retry that succeeds", async () => {
    // The compactor believes in a 20k window (threshold 16k); the provider
    // really takes 12k, so a request fails before the threshold is reached.
    const { agent, events } = setup({ window: 20_000 });
    mock.setMode((r) => (promptTokens(r) > 12_000 ? OVERFLOW : answer(r)));
    for (let i = 1; i <= 4; i++) await agent.prompt(big(`question ${i}`, 8_000));
    await settled(agent);
    assert.deepEqual(ends(events), [], "well under the threshold so far");
    mock.requests.length = 0;

    await agent.prompt(big("question 5", 16_000));
    await settled(agent);
    const messages = agent.state.messages;
    assert.equal(mock.requests.length, 2, "the overflowing request and one retry");
    assert.ok(sent(mock.requests[1]).includes(SUMMARY_PREFIX), "the retry carries the summary");
    assert.ok(!messages.some((m) => m.stopReason === "error"), "the failed attempt is gone");
    assert.equal(messages.at(-1).role, "assistant");
    assert.equal(messages.at(-1).stopReason, "stop");
    assert.deepEqual(
      ends(events).map((e) => [e.reason, e.willRetry, !!e.result]),
      [["overflow", true, true]],
    );
    assert.equal(summaries(messages).length, 1);
    assert.deepEqual(
      roles(messages).filter((r) => r !== "compactionSummary"),
      ["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"],
      "every message but the failed attempt is still there",
    );
  });

  test("repeated overflow: recovery fails once with pi's text, and the server sees a bounded number of requests", async () => {
    const { agent, events } = setup({ window: 20_000 });
    mock.setMode((r) => answer(r));
    for (let i = 1; i <= 4; i++) await agent.prompt(big(`question ${i}`, 8_000));
    await settled(agent);
    mock.setMode(() => OVERFLOW);
    mock.requests.length = 0;
    events.length = 0;

    await agent.prompt("question 5");
    await settled(agent);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(mock.requests.length, 2, "one request and one retry, no loop");
    const errors = ends(events).map((e) => e.errorMessage);
    assert.deepEqual(errors, [undefined, RECOVERY_FAILED], JSON.stringify(ends(events).map((e) => [e.reason, e.willRetry, !!e.result, e.errorMessage])));
    assert.equal(agent.state.messages.at(-1).stopReason, "error", "the provider's error stays visible");
    assert.equal(summaries(agent.state.messages).length, 1, "exactly one summary");
  });

  test("an overflow with nothing left to summarize ends with an error that says so, and no retry", async () => {
    const { agent, events } = setup({ window: 20_000 });
    mock.setMode(() => OVERFLOW);
    await agent.prompt("a short question");
    await settled(agent);
    assert.equal(mock.requests.length, 1);
    const [end] = ends(events);
    assert.equal(end.result, undefined);
    assert.equal(end.willRetry, false);
    assert.match(end.errorMessage, /^Context overflow recovery failed: nothing to summarize/);
    assert.equal(agent.state.messages.at(-1).stopReason, "error", "the provider's error stays");
  });

  test("a tool's output that overflows mid-run is recovered as pi does: the summary takes the whole turn, one retry from it", async () => {
    // The last tool output alone is over keepRecentTokens: no cut point
    // follows it but the failed attempt's place, where pi's session (which
    // keeps the attempt) cuts. Without it nothing would be summarized.
    const { agent, events } = setup({ attach: { backgroundAt: false } });
    const read = {
      name: "read", label: "Read", description: "Reads a file.",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      execute: async (_id, { path }) => ({ content: [{ type: "text", text: big(`contents of ${path}`, 60_000) }], details: undefined }),
    };
    agent.state.tools = [read];
    mock.setMode((r) => answer(r));
    for (let i = 1; i <= 3; i++) await agent.prompt(big(`question ${i}`, 8_000));
    mock.requests.length = 0;
    let calls = 0;
    mock.setMode((r) => {
      if (promptTokens(r) > 20_000) return OVERFLOW;
      if (calls++ === 0) return { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "/big.log" } }] };
      return answer(r, "The log says all is well.");
    });
    await agent.prompt("read /big.log");
    await settled(agent);

    const messages = agent.state.messages;
    assert.deepEqual(
      ends(events).map((e) => [e.reason, e.willRetry, !!e.result, e.errorMessage]),
      [["overflow", true, true, undefined]],
    );
    assert.equal(mock.requests.length, 3, "the tool call, the overflowing request, one retry");
    assert.deepEqual(
      roles(messages),
      ["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "toolResult", "compactionSummary", "assistant"],
      "the summary goes where the failed attempt was; nothing else is lost",
    );
    const retry = mock.requests[2].body.messages;
    assert.deepEqual(retry.map((m) => m.role), ["system", "user"], "the retry is sent the summary alone");
    assert.ok(sentMessage(mock.requests[2], SUMMARY_PREFIX));
    assert.ok(summaries(messages)[0].summary.includes("## Latest user request (verbatim)\n\nread /big.log"));
    assert.ok(!sent(mock.requests[2]).includes("maximum context length"), "never the failed attempt");
    assert.equal(messages.at(-1).stopReason, "stop");
  });

  test("with compaction disabled, an overflow stays the provider's error: no compaction, no retry", async () => {
    const { agent, events } = setup({ window: 20_000, compactor: { settings: { enabled: false, reserveTokens: 4_000, keepRecentTokens: 3_000 } } });
    mock.setMode(() => OVERFLOW);
    for (let i = 1; i <= 4; i++) await agent.prompt(big(`question ${i}`, 8_000));
    await settled(agent);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(mock.requests.length, 4, "one request a prompt, no retry");
    assert.deepEqual(events, [], "no compaction");
    assert.equal(agent.state.messages.at(-1).stopReason, "error", "the provider's error stays");
    assert.equal(summaries(agent.state.messages).length, 0);
  });

  test("a new user message resets the one-retry guard: a later overflow gets its own retry", async () => {
    const { agent, events } = setup({ window: 20_000 });
    mock.setMode((r) => (promptTokens(r) > 12_000 ? OVERFLOW : answer(r)));
    for (let i = 1; i <= 8; i++) {
      await agent.prompt(big(`question ${i}`, 16_000));
      await settled(agent);
    }
    assert.ok(!ends(events).some((e) => e.errorMessage), ends(events).map((e) => e.errorMessage).join());
    const recoveries = ends(events).filter((e) => e.reason === "overflow" && e.willRetry && e.result).length;
    assert.ok(recoveries >= 2, `${recoveries} recoveries`);
    assert.equal(mock.requests.length, 8 + recoveries, "one retry per recovery");
    assert.equal(agent.state.messages.at(-1).stopReason, "stop");
  });

  test("silent overflow: the answer stays, compaction with reason overflow, no retry", async () => {
    const { agent, events } = setup({ window: 12_000 });
    mock.setMode((r) => answer(r));
    for (const q of ["first question", "second question", "third question"]) await agent.prompt(big(q, 8_000));
    await settled(agent);
    assert.deepEqual(ends(events), []);
    mock.requests.length = 0;
    mock.setMode(() => ({ text: "a real answer", usage: { prompt_tokens: 13_000, completion_tokens: 5, total_tokens: 13_005 } }));
    await agent.prompt("fourth question");
    await settled(agent);

    assert.equal(mock.requests.length, 1, "no retry");
    const messages = agent.state.messages;
    assert.equal(messages.at(-1).content[0].text, "a real answer", "the answer is kept");
    const end = ends(events).at(-1);
    assert.deepEqual([end.reason, end.willRetry, !!end.result], ["overflow", false, true]);
  });

  test("an overflow from another model is not this model's: no overflow recovery after a switch to a bigger window", async () => {
    const { agent, compactor, events } = setup({ window: 12_000 });
    mock.setMode(() => OVERFLOW);
    // The app switches to a bigger model while the failed answer comes in.
    agent.subscribe((event) => {
      if (event.type === "message_end" && event.message.role === "assistant") {
        agent.state.model = model("big", 1_000_000);
        compactor.setModel("local/big", 1_000_000);
      }
    });
    await agent.prompt("a question");
    await settled(agent);
    assert.equal(mock.requests.length, 1, "no retry");
    assert.deepEqual(ends(events), [], "no compaction");
    assert.equal(agent.state.messages.at(-1).stopReason, "error");
  });

  test("before a prompt: a session reopened over its threshold is compacted before the request goes out", async () => {
    const reopened = reopenedSession();
    const { agent, events } = setup({ messages: reopened });
    mock.setMode((r) => answer(r));
    await agent.prompt("new question");
    await settled(agent);

    assert.equal(mock.requests.length, 1);
    const request = sent(mock.requests[0]);
    assert.ok(request.includes(SUMMARY_PREFIX), "the first request already carries the summary");
    assert.ok(!sentMessage(mock.requests[0], "old question 0"), "and not the summarized messages");
    assert.ok(request.includes("new question"));
    assert.equal(summaries(agent.state.messages).length, 1);
    assert.equal(ends(events).filter((e) => e.result).length, 1);
    // The whole history is still in the agent, with the new turn after it.
    assert.equal(agent.state.messages.length, reopened.length + 1 + 2);
    assert.equal(agent.state.messages.at(-1).role, "assistant");
  });

  // While a compaction runs, the app may add a message to the agent (a
  // notice, a message of its own): pushed onto the agent's array, or in a
  // new array. It stays, after the summary, and the compaction is not
  // wasted; an app that changed the messages otherwise keeps its change.
  for (const [how, change, kept] of [
    ["pushed onto the agent's array", (agent, note) => agent.state.messages.push(note), true],
    ["in a new array that starts with the old one", (agent, note) => (agent.state.messages = [...agent.state.messages, note]), true],
    ["in an array whose first message the app replaced", (agent, note) => (agent.state.messages = [{ ...agent.state.messages[0] }, ...agent.state.messages.slice(1), note]), false],
  ]) {
    test(`before a prompt: a message the app adds during the compaction, ${how}, ${kept ? "stays after the summary" : "wins over the summary"}`, async () => {
      const note = { role: "user", content: "NOTE added while compacting", timestamp: 9_000 };
      let agent;
      const added = [];
      const s = setup({
        messages: reopenedSession(),
        compactor: {
          beforeCompact: async () => {
            if (added.length === 0) added.push(change(agent, note));
          },
        },
      });
      agent = s.agent;
      mock.setMode((r) => answer(r));
      await agent.prompt("new question");
      await settled(agent);
      const messages = agent.state.messages;
      assert.equal(messages.filter((m) => m.content === note.content).length, 1, "the app's message is there, once");
      assert.equal(ends(s.events).filter((e) => e.result).length, 1, "one compaction, not a second after the run");
      if (!kept) {
        assert.equal(summaries(messages).length, 0, "the app's change wins: no summary");
        assert.notEqual(messages[0], reopenedSession()[0]);
        return;
      }
      assert.equal(summaries(messages).length, 1);
      const at = messages.findIndex((m) => m.role === "compactionSummary");
      const noteAt = messages.findIndex((m) => m.content === note.content);
      assert.ok(noteAt > at, "after the summary");
      assert.equal(messages[at].keptMessages, messages.length - at - 1 - 1, "counted among the kept messages (all but the run's answer)");
      // The next request sends it, after the summary.
      await agent.prompt("another question");
      await settled(agent);
      const last = sent(mock.requests.at(-1));
      assert.ok(last.includes(SUMMARY_PREFIX) && last.includes(note.content));
      assert.ok(!sentMessage(mock.requests.at(-1), "old question 0"));
    });
  }

  test("before a prompt: old tool output is cleared (no summary) and the first request carries the placeholders", async () => {
    const reopened = toolSession();
    const { agent, events, states } = setup({
      messages: reopened,
      compactor: CLEARING,
    });
    mock.setMode((r) => answer(r));
    await agent.prompt("new question");
    await settled(agent);

    assert.equal(mock.requests.length, 1);
    const request = sent(mock.requests[0]);
    assert.ok(!request.includes(SUMMARY_PREFIX), "no summary");
    assert.ok(request.includes("[Output of read cleared to save context: ~3,0"), "placeholders");
    assert.ok(!request.includes("output 0: lorem"), "the old output is not sent");
    assert.ok(request.includes("output 5: lorem"), "the last turns' output is");
    assert.ok(request.includes("new question"));
    const end = ends(events).find((e) => e.result);
    assert.equal(end.tier, "clear");
    assert.equal(states.at(-1).lastTier, "clear", "onStateChange says the clearing tier ran");
    assert.equal(summaries(agent.state.messages).length, 0);
    const markers = agent.state.messages.filter((m) => m.role === "toolOutputCleared");
    assert.equal(markers.length, 1);
    assert.equal(agent.state.messages.length, reopened.length + 1 + 1 + 1);
    assert.equal(agent.state.messages.at(-1).role, "assistant");
  });

  test("before a prompt: after clearing, the run's later requests carry the placeholders too", async () => {
    const reopened = toolSession();
    const { agent } = setup({
      messages: reopened,
      compactor: CLEARING,
    });
    mock.setMode((r) => answer(r));
    const run = agent.prompt("new question");
    // Delivered in the same run, after the first answer: a second request
    // built from the loop's own array, which lacks the marker.
    agent.followUp({ role: "user", content: "follow-up question", timestamp: Date.now() });
    await run;
    await settled(agent);

    assert.equal(mock.requests.length, 2, "one run, two requests");
    const second = sent(mock.requests[1]);
    assert.ok(second.includes("follow-up question"));
    assert.ok(second.includes("[Output of read cleared to save context: ~3,0"), "placeholders in the later request");
    assert.ok(!second.includes("output 0: lorem"), "the cleared output is not sent again");
    assert.equal(agent.state.messages.filter((m) => m.role === "toolOutputCleared").length, 1);
  });

  /** A reopened session of six turns, ~12,000 tokens: under a 20,000 window's threshold, over a 12,000 window. */
  function midSession() {
    let clock = 1_000;
    const out = [];
    for (let i = 0; i < 6; i++) {
      out.push({ role: "user", content: big(`old question ${i}`, 8_000), timestamp: clock++ });
      out.push({
        role: "assistant", content: [{ type: "text", text: `old answer ${i}` }],
        api: "openai-completions", provider: "local", model: "m", stopReason: "stop", timestamp: clock++,
      });
    }
    return out;
  }
  /** The provider's overflow error for a request over `window` tokens, else a normal answer. */
  const windowed = (window) => (r) => (promptTokens(r) > window ? OVERFLOW : answer(r));

  test("a model with a smaller window: the next request is checked against it and compacted first", async () => {
    // No compaction in the background: the first turn stays uncompacted.
    const { agent, compactor, events } = setup({ messages: midSession(), attach: { backgroundAt: false } });
    mock.setMode(windowed(20_000));
    await agent.prompt("first question");
    await settled(agent);
    assert.deepEqual(ends(events), [], "under the 20,000 window's threshold");

    agent.state.model = model("small", 12_000);
    mock.setMode(windowed(12_000));
    await agent.prompt("second question");
    await settled(agent);
    assert.equal(compactor.contextWindow, 12_000, "the agent's new model applied");
    assert.equal(mock.requests.length, 2, "no overflow, no retry");
    assert.ok(promptTokens(mock.requests[0]) > 12_000, "the old context would not have fit");
    assert.ok(sent(mock.requests[1]).includes(SUMMARY_PREFIX), "compacted before the request went out");
    assert.ok(promptTokens(mock.requests[1]) <= 12_000);
    assert.deepEqual(ends(events).map((e) => [e.reason, !!e.result]), [["threshold", true]]);
    assert.equal(agent.state.messages.at(-1).stopReason, "stop");
  });

  test("a model switched during a run: its next request is checked against the new window", async () => {
    // No compaction in the background under the first window.
    const { agent, compactor, events } = setup({ messages: midSession(), attach: { backgroundAt: false } });
    mock.setMode(windowed(20_000));
    agent.subscribe((e) => {
      if (e.type === "message_end" && e.message.role === "assistant" && agent.state.model.id === "m") {
        agent.state.model = model("small", 12_000);
        mock.setMode(windowed(12_000));
      }
    });
    const run = agent.prompt("first question");
    agent.followUp({ role: "user", content: "follow-up question", timestamp: Date.now() });
    await run;
    await settled(agent);
    assert.equal(compactor.contextWindow, 12_000);
    assert.equal(mock.requests.length, 2, "one run, two requests, no overflow");
    assert.ok(!sent(mock.requests[0]).includes(SUMMARY_PREFIX));
    assert.ok(sent(mock.requests[1]).includes(SUMMARY_PREFIX), "the second request carries the summary");
    assert.ok(sent(mock.requests[1]).includes("follow-up question"));
    assert.equal(ends(events).filter((e) => e.result).length, 1);
    assert.equal(agent.state.messages.at(-1).stopReason, "stop");
  });

  test("a model whose window the settings cannot work with is reported, not ignored silently", async () => {
    const { agent, compactor, events } = setup({ attach: { backgroundAt: false } });
    mock.setMode((r) => answer(r));
    await agent.prompt("first question");
    agent.state.model = model("tiny", 3_000);
    await agent.prompt("second question");
    await agent.prompt("third question");
    await settled(agent);
    const errors = events.filter((e) => e.type === "hook_error");
    assert.equal(errors.length, 1, "once per change");
    assert.equal(errors[0].hook, "transformContext");
    assert.ok(errors[0].error instanceof RangeError);
    assert.match(errors[0].error.message, /reserveTokens \(4000\) must be less than contextWindow \(3000\)/);
    assert.equal(compactor.contextWindow, 20_000, "the compactor keeps its window");
    assert.equal(mock.requests.length, 3, "the requests go out as they are");
  });

  test("a threshold compaction that frees almost nothing is not repeated on the next turns", async () => {
    // Three small old turns and a big request: a summary of the old turns frees under 5 %.
    let clock = 1_000;
    const reopened = [];
    for (let i = 0; i < 3; i++) {
      reopened.push({ role: "user", content: `old question ${i} ` + "q".repeat(200), timestamp: clock++ });
      reopened.push({
        role: "assistant", content: [{ type: "text", text: `old answer ${i}` }],
        api: "openai-completions", provider: "local", model: "m", stopReason: "stop", timestamp: clock++,
      });
    }
    reopened.push({ role: "user", content: big("big request", 66_000), timestamp: clock++ });
    const { agent, events } = setup({
      messages: reopened,
      compactor: { estimator: "pi", summarize: () => ({ text: "Short summary." }) },
    });
    mock.setMode((r) => answer(r));
    await agent.prompt("next question");
    await settled(agent);
    await agent.prompt("another question");
    await settled(agent);
    assert.equal(mock.requests.length, 2);
    const all = ends(events);
    assert.equal(all.length, 1, "one compaction, not one per turn");
    assert.equal(all[0].reason, "threshold");
    assert.ok(all[0].result.tokensAfter > 0.95 * all[0].result.tokensBefore);
    assert.equal(all[0].quietUntil, Math.ceil(all[0].result.tokensAfter * 1.05));
  });

  test("messages sent while compacting are queued and delivered after it, in order", async () => {
    let release;
    const gate = new Promise((r) => (release = r));
    let compacting;
    const started = new Promise((r) => (compacting = r));
    const { agent, compactor } = setup({
      compactor: {
        beforeCompact: async () => {
          compacting();
          await gate;
        },
      },
    });
    mock.setMode((r) => answer(r));
    await agent.prompt(big("first", 20_000));
    // The answer reports a nearly full window: compaction after the run.
    mock.setMode(() => ({ text: "long answer", usage: { prompt_tokens: 17_000, completion_tokens: 5, total_tokens: 17_005 } }));
    const run = agent.prompt(big("second", 20_000));
    await started;
    assert.equal(compactor.isCompacting, true);
    await assert.rejects(agent.prompt("too early"), /already processing/, "the agent is busy while compacting");
    agent.followUp({ role: "user", content: "queued one", timestamp: Date.now() });
    agent.followUp({ role: "user", content: "queued two", timestamp: Date.now() + 1 });
    mock.setMode((r) => answer(r));
    release();
    await run;
    await settled(agent);
    await settled(agent);
    const texts = agent.state.messages.filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : m.content[0].text));
    assert.deepEqual(texts.slice(-2), ["queued one", "queued two"]);
    assert.equal(agent.state.messages.at(-1).role, "assistant");
    assert.ok(sent(mock.requests.at(-1)).includes("queued two"));
  });

  /** A summarizer that answers only when `release()` is called; it honours its signal. */
  function gatedSummarizer() {
    const calls = [];
    let open;
    const opened = new Promise((r) => (open = r));
    return {
      calls,
      release: () => open(),
      summarize: (request) => {
        calls.push(request);
        return new Promise((resolve, reject) => {
          opened.then(() => resolve("## Goal\ngated summary"));
          request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true });
        });
      },
    };
  }
  const until = async (condition, what) => {
    for (let i = 0; i < 500; i++) {
      if (condition()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail(`timed out waiting for ${what}`);
  };

  test("agent.abort() during the compaction after a run cancels it: aborted, nothing inserted, the agent idle and promptable at once, queued messages stay queued", async () => {
    const gate = gatedSummarizer();
    const { agent, compactor, events, states } = setup({ compactor: { summarize: gate.summarize, fallback: "none" }, attach: { backgroundAt: false } });
    mock.setMode((r) => answer(r));
    await agent.prompt(big("first", 20_000));
    mock.setMode(() => ({ text: "long answer", usage: { prompt_tokens: 17_000, completion_tokens: 5, total_tokens: 17_005 } }));
    const run = agent.prompt(big("second", 20_000));
    await until(() => gate.calls.length === 1, "the summary request");
    agent.followUp({ role: "user", content: "queued", timestamp: Date.now() });
    const before = agent.state.messages;
    agent.abort();
    let ended = false;
    run.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ended, true, "the run ended at once");
    assert.equal(agent.state.isStreaming, false);
    assert.equal(gate.calls[0].signal.aborted, true, "the summarizer's signal is aborted");
    assert.deepEqual(ends(events).map((e) => [e.reason, e.aborted, e.result]), [["threshold", true, undefined]]);
    assert.equal(compactor.isCompacting, false);
    assert.equal(states.at(-1).isCompacting, false);
    assert.equal(agent.state.messages, before, "the messages are untouched");
    assert.equal(summaries(agent.state.messages).length, 0);
    assert.equal(mock.requests.length, 2, "nothing sent after the stop");
    assert.equal(agent.hasQueuedMessages(), true, "what the app queued stays queued");
    gate.release();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(summaries(agent.state.messages).length, 0, "a late answer goes nowhere");
    // Promptable at once; the next run compacts as usual (before its request).
    agent.clearFollowUpQueue();
    mock.setMode((r) => answer(r));
    await agent.prompt("third");
    assert.equal(summaries(agent.state.messages).length, 1);
    assert.ok(sent(mock.requests.at(-1)).includes(SUMMARY_PREFIX));
  });

  test("agent.abort() during the compaction before a request cancels it: nothing inserted, no request, the run ends aborted", async () => {
    const gate = gatedSummarizer();
    const reopened = [];
    for (let i = 0; i < 6; i++) {
      reopened.push({ role: "user", content: big(`old question ${i}`, 8_000), timestamp: 1_000 + 2 * i });
      reopened.push({
        role: "assistant", content: [{ type: "text", text: `old answer ${i}` }], api: "openai-completions", provider: "local", model: "m",
        usage: { input: 17_000, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 17_005, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop", timestamp: 1_001 + 2 * i,
      });
    }
    const { agent, events } = setup({ messages: reopened, compactor: { summarize: gate.summarize, fallback: "none" }, attach: { backgroundAt: false } });
    mock.setMode((r) => answer(r));
    const run = agent.prompt("new question");
    await until(() => gate.calls.length === 1, "the summary request");
    agent.abort();
    let ended = false;
    run.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ended, true, "the run ended at once");
    assert.equal(gate.calls[0].signal.aborted, true);
    assert.deepEqual(ends(events).map((e) => [e.reason, e.aborted]), [["threshold", true]]);
    assert.equal(summaries(agent.state.messages).length, 0);
    assert.equal(mock.requests.length, 0, "the request was not sent");
    assert.equal(agent.state.messages.at(-1).stopReason, "aborted");
    gate.release();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(summaries(agent.state.messages).length, 0);
  });

  test("detach() during a compaction aborts it: nothing more reaches the agent, its store or onStateChange", async () => {
    const gate = gatedSummarizer();
    const saved = [];
    const store = { async save(id, messages) { saved.push(messages.length); } };
    const { agent, compactor, events, states, detach } = setup({
      compactor: { summarize: gate.summarize, fallback: "none" },
      attach: { backgroundAt: false, store, sessionId: "s1" },
    });
    mock.setMode((r) => answer(r));
    await agent.prompt(big("first", 20_000));
    mock.setMode(() => ({ text: "long answer", usage: { prompt_tokens: 17_000, completion_tokens: 5, total_tokens: 17_005 } }));
    const run = agent.prompt(big("second", 20_000));
    await until(() => gate.calls.length === 1, "the summary request");
    const [savesBefore, statesBefore, messagesBefore] = [saved.length, states.length, agent.state.messages];
    detach();
    await run;
    assert.equal(agent.state.isStreaming, false, "the detached agent is not held up");
    assert.equal(gate.calls[0].signal.aborted, true);
    assert.deepEqual(ends(events).map((e) => [e.reason, e.aborted]), [["threshold", true]]);
    assert.equal(compactor.isCompacting, false);
    gate.release();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(agent.state.messages, messagesBefore);
    assert.equal(summaries(agent.state.messages).length, 0);
    assert.equal(saved.length, savesBefore, "no save after detach");
    assert.equal(states.length, statesBefore, "no onStateChange after detach");
  });

  test("with a store: every change is saved; a failed save is a save_error event and the messages stay", async () => {
    const saved = [];
    let failing = false;
    const store = {
      async save(id, messages) {
        if (failing) throw new Error("QuotaExceededError: the storage quota was exceeded");
        saved.push({ id, messages: [...messages] });
      },
    };
    const { agent, events } = setup({ attach: { store, sessionId: "s1" } });
    mock.setMode((r) => answer(r));
    await agent.prompt(big("first", 20_000));
    mock.setMode(() => ({ text: "long answer", usage: { prompt_tokens: 17_000, completion_tokens: 5, total_tokens: 17_005 } }));
    await agent.prompt(big("second", 20_000));
    await settled(agent);
    mock.setMode((r) => answer(r));
    const last = saved.at(-1);
    assert.equal(last.id, "s1");
    assert.deepEqual(last.messages, agent.state.messages, "the last save holds the compacted array");
    assert.equal(summaries(last.messages).length, 1);

    failing = true;
    await agent.prompt("third");
    await settled(agent);
    const errors = events.filter((e) => e.type === "save_error");
    assert.ok(errors.length > 0);
    assert.match(errors[0].error.message, /quota/);
    assert.equal(agent.state.messages.at(-1).role, "assistant", "the in-memory messages are intact");
    assert.equal(agent.state.messages.length, last.messages.length + 2);
  });

  test("detach restores the agent's hooks and stops the flows; bad arguments are TypeErrors", async () => {
    const { agent, compactor, detach, events } = setup({ window: 12_000 });
    assert.equal(agent.transformContext, compactor.agentHooks().transformContext);
    assert.throws(() => compactor.attach(agent), /already attached/);
    detach();
    assert.notEqual(agent.transformContext, compactor.agentHooks().transformContext);
    mock.setMode(() => OVERFLOW);
    await agent.prompt("question");
    await settled(agent);
    assert.equal(mock.requests.length, 1);
    assert.deepEqual(ends(events), []);

    assert.throws(() => compactor.attach({}), TypeError);
    assert.throws(() => compactor.attach(agent, { store: {} }), /save\(\)/);
    assert.throws(() => compactor.attach(agent, { store: { save() {} } }), /sessionId/);
    assert.throws(() => compactor.attach(agent, { onStateChange: 5 }), /onStateChange/);
    // Still usable after the bad calls.
    const again = compactor.attach(agent);
    again();
  });
});

describe("attach(agent): one compactor per agent", () => {
  test("a second Compactor attached to the same agent is refused; detach leaves hooks the app set after attach", async () => {
    const { agent, compactor, detach } = setup({ window: 12_000 });
    const other = new Compactor({ contextWindow: 12_000, settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 } });
    assert.throws(() => other.attach(agent), { name: "Error", message: /^attach: this agent is attached to another Compactor/ });
    assert.equal(agent.transformContext, compactor.agentHooks().transformContext, "the first one's hooks stay");
    detach();
    // Once detached, the other one may attach, and its detach puts the agent's own hooks back.
    const original = agent.transformContext;
    const originalConvert = agent.convertToLlm;
    const detachOther = other.attach(agent);
    assert.equal(agent.transformContext, other.agentHooks().transformContext);
    detachOther();
    assert.equal(agent.transformContext, original);
    // A hook the app installed over the compactor's after attach stays when it detaches.
    const again = compactor.attach(agent);
    const wrapped = async (messages, signal) => compactor.agentHooks().transformContext(messages, signal);
    agent.transformContext = wrapped;
    again();
    assert.equal(agent.transformContext, wrapped, "the app's own hook is not replaced");
    assert.equal(agent.convertToLlm, originalConvert, "the compactor's own is put back");
  });
});

describe("attach(agent): a long-lived page", () => {
  /** A full collection, with the finalizers it queues run (they free what the module held). */
  const collect = async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc");
    for (let i = 0; i < 6; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  test("a detached agent is garbage-collected with its messages, after any number of attach / detach", async () => {
    // Sessions switched all day: each an agent attached for a run, then
    // detached, attached to another compactor, detached again and dropped.
    const shared = new Compactor({ contextWindow: 20_000, settings: { reserveTokens: 4_000, keepRecentTokens: 3_000 } });
    const session = async (i) => {
      const { agent, compactor, detach } = setup();
      await agent.prompt(`question ${i}`);
      await settled(agent);
      detach();
      const again = (i % 2 ? shared : compactor).attach(agent);
      again();
      return new WeakRef(agent);
    };
    const agents = [];
    for (let i = 0; i < 8; i++) agents.push(await session(i));
    await collect();
    assert.equal(agents.filter((a) => a.deref() !== undefined).length, 0, "no detached agent is kept");
  });
});

describe("attach(agent): a faulty summarizer never inserts two summaries nor starts a retry loop", () => {
  const faults = {
    throws: () => {
      throw new Error("summarizer exploded");
    },
    rejects: async () => Promise.reject(new Error("summarizer rejected")),
    "hangs until the timeout": (req) => new Promise((_, reject) => req.signal.addEventListener("abort", () => reject(req.signal.reason))),
    "returns garbage": async () => ({ not: "a summary" }),
    // Text of the conversation's kind: the mock provider counts characters
    // / 4, which the calibrated estimate's learnt ratio matches on it.
    "returns a 1 MB summary": async () => "## Goal\n" + "lorem ipsum ".repeat((1024 * 1024) / 12),
    "returns an empty string": async () => "",
  };
  for (const [name, summarize] of Object.entries(faults)) {
    for (const fallback of ["none", "extractive"]) {
      test(`summarizer ${name}, fallback ${fallback}: at most one summary per flow, no retry without one, a bounded number of requests`, async () => {
        const { agent, events } = setup({
          window: 20_000,
          compactor: { summarize, fallback, summarizeTimeoutMs: 300 },
        });
        mock.setMode((r) => answer(r));
        for (let i = 1; i <= 4; i++) await agent.prompt(big(`question ${i}`, 8_000));
        await settled(agent);
        // Then the provider overflows on every request.
        mock.setMode(() => OVERFLOW);
        mock.requests.length = 0;
        await agent.prompt("question 5");
        await settled(agent);
        await new Promise((r) => setTimeout(r, 100));

        const messages = agent.state.messages;
        const inserted = summaries(messages).length;
        const end = ends(events).find((e) => e.reason === "overflow");
        assert.ok(end, "a compaction was attempted");
        assert.ok(inserted <= 1, `${inserted} summaries`);
        if (end.result) {
          // A summary (the summarizer's, cut to its budget, or the extractive one): one retry.
          assert.equal(inserted, 1);
          assert.equal(mock.requests.length, 2, "the overflowing request and one retry");
          assert.ok(summaries(messages)[0].summary.length <= 0.8 * 4_000 * 4 + 200, "a 1 MB summary is cut to its budget");
        } else {
          // No summary: no retry, the provider's error stays, the reason is given.
          assert.equal(fallback, "none");
          assert.equal(inserted, 0);
          assert.equal(mock.requests.length, 1, "no retry without a summary");
          assert.match(end.errorMessage, /^Context overflow recovery failed: /);
          assert.equal(messages.at(-1).stopReason, "error");
        }
        assert.equal(messages.filter((m) => m.role === "user").length, 5, "every user message is still there");
      });
    }
  }
});
