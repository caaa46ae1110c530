// `pinned` and a clearing marker's `tokensFreed` / `outputTokens` are
// checked like every other field: a TypeError naming the index and field,
// from every function that reads them; a count that is a number out of
// range (NaN, negative, fractional, past 2^53) is a RangeError that shows it,
// as is an index argument out of range. An element that is no message (a
// hole of a sparse array) is a TypeError naming its index at once, however
// long the array.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Compactor, agentMessagesToChatMessages, convertToLlm, findCutPoint, messagesToPiSession, prepareCompaction,
  rebaseCompaction, serializeConversation, transformContext,
} from "agent-compaction";
import { historyTools } from "agent-compaction/pi-agent-core";

const user = (text, extra = {}) => ({ role: "user", content: text, timestamp: 1, ...extra });
const summary = { role: "compactionSummary", summary: "S", tokensBefore: 10, timestamp: 2 };
const marker = (extra) => ({ role: "toolOutputCleared", toolCallIds: ["c1"], outputTokens: [100], tokensFreed: 100, timestamp: 3, ...extra });
const toolResult = { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "x".repeat(400) }], isError: false, timestamp: 2 };

// The hooks never reject: they report a hook_error event and return their input.
async function hookError(messages) {
  const events = [];
  const compactor = new Compactor({ contextWindow: 200000, onEvent: (e) => events.push(e) });
  const out = await compactor.agentHooks().transformContext(messages);
  assert.equal(out, messages);
  const e = events.find((e) => e.type === "hook_error");
  assert.ok(e, "a hook_error event");
  throw e.error;
}

const typeError = (field, got) => (e) =>
  e instanceof TypeError && e.message.startsWith(`messages[${field} must be `) && e.message.endsWith(`got ${got}`);
const rangeError = (field, got) => (e) =>
  e instanceof RangeError && e.message === `messages[${field} must be a non-negative safe integer, got ${got}`;
// A number is out of range; another type is the wrong type.
const countError = (field, got) => (/^(NaN|-?[\d.e+]+)$/.test(got) ? rangeError : typeError)(field, got);

test("pinned that is not a boolean", async () => {
  for (const [bad, got] of [["yes", "a string"], [1, "a number"], [{}, "an object"], [null, "null"]]) {
    const messages = [user("a", { pinned: bad }), summary, user("b")];
    const compactor = new Compactor({ contextWindow: 200000 });
    assert.throws(() => compactor.contextTokens(messages), typeError("0].pinned", got));
    assert.throws(() => transformContext(messages), typeError("0].pinned", got));
    await assert.rejects(hookError(messages), typeError("0].pinned", got));
  }
  // Absent, undefined and false: not pinned; true: pinned.
  for (const ok of [{}, { pinned: undefined }, { pinned: false }, { pinned: true }]) {
    const messages = [user("a", ok), summary, user("b")];
    new Compactor({ contextWindow: 200000 }).contextTokens(messages);
    transformContext(messages);
  }
});

test("with several bad messages, the error names the first and describes its own value", () => {
  const messages = [
    user("a"),
    user("b", { pinned: "yes" }),
    user("c", { pinned: 5 }),
    { role: "user", content: 7, timestamp: 1 },
    { role: "user", get content() { throw new Error("getter broke"); }, timestamp: 1 },
  ];
  assert.throws(() => findCutPoint(messages, 0, messages.length, 10), typeError("1].pinned", "a string"));
  assert.throws(() => new Compactor({ contextWindow: 200000 }).contextTokens(messages), typeError("1].pinned", "a string"));
  // A throw first, a bad value after it: the throw is reported, with its own text.
  const thrown = [user("a"), messages[4], messages[3]];
  assert.throws(() => findCutPoint(thrown, 0, thrown.length, 10), /messages\[1\] could not be read: getter broke$/);
  // The bad value of one call is not reported by the next.
  assert.throws(() => findCutPoint([user("a"), messages[3]], 0, 2, 10), typeError("1].content", "a number"));
});

// What the user sees of a marker (its divider) reads all of its fields.
const divider = (messages) => agentMessagesToChatMessages(messages, { divider: true });

test("a marker's tokensFreed", () => {
  for (const [bad, got] of [[NaN, "NaN"], [-5000, "-5000"], ["10", "a string"], [1e300, "1e+300"], [1.5, "1.5"], [2 ** 53, "9007199254740992"]]) {
    const messages = [user("a"), toolResult, marker({ tokensFreed: bad }), user("b")];
    assert.throws(() => new Compactor({ contextWindow: 200000 }).contextTokens(messages), countError("2].tokensFreed", got));
    assert.throws(() => new Compactor({ contextWindow: 200000 }).modelContext(messages), countError("2].tokensFreed", got));
    assert.throws(() => divider(messages), countError("2].tokensFreed", got));
  }
});

// The lists a marker clears by are read by the model's view, and so by
// every reader that decides what the model is sent or counts it: each
// refuses the same marker with the same error.
test("a marker's outputTokens and toolCallIds", async () => {
  for (const [lists, field, got] of [
    [{ outputTokens: [NaN] }, "2].outputTokens[0]", "NaN"],
    [{ outputTokens: [-5] }, "2].outputTokens[0]", "-5"],
    [{ outputTokens: ["10"] }, "2].outputTokens[0]", "a string"],
    [{ outputTokens: [1e300] }, "2].outputTokens[0]", "1e+300"],
    [{ outputTokens: "10" }, "2].outputTokens", "a string"],
    [{ toolCallIds: "c1" }, "2].toolCallIds", "a string"],
    [{ toolCallIds: [5] }, "2].toolCallIds[0]", "a number"],
    [{ toolCallIds: undefined }, "2].toolCallIds", "undefined"],
  ]) {
    const messages = [user("a"), toolResult, marker(lists), user("b")];
    const error = countError(field, got);
    const compactor = new Compactor({ contextWindow: 200000 });
    assert.throws(() => convertToLlm(messages), error);
    assert.throws(() => compactor.modelContext(messages), error);
    assert.throws(() => compactor.contextTokens(messages), error, "the count refuses what the view refuses");
    assert.throws(() => new Compactor({ contextWindow: 200000 }).needsCompaction(messages), error);
    assert.throws(() => divider(messages), error, "and so does the divider, rather than show garbage");
    await assert.rejects(hookError(messages), error);
  }
  const fine = [user("a"), toolResult, marker({}), user("b")];
  assert.match(convertToLlm(fine)[1].content[0].text, /~100 tokens/);
  assert.deepEqual(divider(fine)[2], { role: "toolOutputClearedDivider", tokensFreed: 100, toolCount: 1, timestamp: 3 });
  // outputTokens may be left out.
  const unsized = [user("a"), toolResult, marker({ outputTokens: undefined }), user("b")];
  new Compactor({ contextWindow: 200000 }).contextTokens(unsized);
  convertToLlm(unsized);
});

test("findCutPoint's start and end: a number outside the array is a RangeError that shows it", () => {
  const messages = [user("a"), user("b"), user("c")];
  for (const [start, end, message] of [
    [0, 99, "end must be an integer index within the array, got 99"],
    [0, -1, "end must be an integer index within the array, got -1"],
    [0, 1.5, "end must be an integer index within the array, got 1.5"],
    [NaN, 3, "start must be an integer index within the array, got NaN"],
    [3, 2, "start must be an integer index within the array, got 3"],
  ]) {
    assert.throws(() => findCutPoint(messages, start, end, 10), { name: "RangeError", message });
  }
  assert.throws(() => findCutPoint(messages, 0, "3", 10), { name: "TypeError", message: "end must be an integer index within the array, got a string" });
  // Everything fits in 10 tokens: nothing is cut.
  assert.equal(findCutPoint(messages, 0, 3, 10).firstKeptIndex, 0);
});

test("attached to an Agent, the hook at a run's first request never rejects either: a hook_error, and the run goes on", async () => {
  const { Agent } = await import("@mariozechner/pi-agent-core");
  const { fauxAssistantMessage, registerFauxProvider } = await import("@mariozechner/pi-ai");
  const faux = registerFauxProvider({ api: "field-checks-test", provider: "field-checks", models: [{ id: "m", contextWindow: 200_000 }] });
  try {
    const events = [];
    const compactor = new Compactor({ contextWindow: 200000, onEvent: (e) => events.push(e) });
    const agent = new Agent({ initialState: { model: faux.getModel(), messages: [user("a", { pinned: "yes" }), summary, user("b")] }, getApiKey: () => "k" });
    compactor.attach(agent);
    faux.setResponses([fauxAssistantMessage("answered")]);
    await agent.prompt("c");
    const e = events.find((e) => e.type === "hook_error" && e.hook === "transformContext");
    assert.ok(e, "a hook_error event from transformContext");
    assert.ok(typeError("0].pinned", "a string")(e.error), String(e.error));
    assert.equal(agent.state.messages.at(-1).role, "assistant");
    assert.equal(agent.state.messages.at(-1).stopReason, "stop", "the run was not broken by a rejected hook");
  } finally {
    faux.unregister();
  }
});

// A compaction's options and what its callbacks reject with may be hostile:
// the compaction ends (an error or the fallback), `compaction_end` is
// emitted, and the Compactor is free for the next one.
const long = () => Array.from({ length: 20 }, (_, i) => ({ role: "user", content: `request ${i} ` + "word ".repeat(400), timestamp: 1000 + i }));
const settings = { reserveTokens: 4000, keepRecentTokens: 3000 };
const settled = (promise) =>
  Promise.race([promise.then(() => "resolved", (e) => e), new Promise((r) => setTimeout(() => r("still pending after 2 s"), 2000))]);

test("a signal that is not an AbortSignal is a TypeError naming options.signal, and nothing starts", async () => {
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  for (const signal of ["x", 5, true, {}, { aborted: false }, revoked]) {
    const events = [];
    const compactor = new Compactor({ contextWindow: 30000, settings, onEvent: (e) => events.push(e.type) });
    for (const call of [() => compactor.compact(long(), { signal }), () => compactor.summarizeBranch(long(), { signal })]) {
      const e = await settled(call());
      assert.ok(e instanceof TypeError, `a TypeError, got ${e}`);
      assert.match(e.message, /^options\.signal must be an AbortSignal, got /);
    }
    assert.deepEqual(events, []);
    assert.equal(compactor.isCompacting, false);
    assert.equal(await settled(compactor.compact(long())), "resolved");
  }
  // A real one is taken: aborted beforehand, the compaction is cancelled.
  const compactor = new Compactor({ contextWindow: 30000, settings });
  assert.ok((await settled(compactor.compact(long(), { signal: AbortSignal.abort() }))) instanceof Error);
  assert.equal(compactor.isCompacting, false);
});

test("a summarizer that rejects with a hostile value, or an abort with one as its reason, ends the compaction", async () => {
  const hostile = {
    "a revoked proxy": () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    },
    "a proxy whose traps throw": () => new Proxy({}, { get() { throw new Error("get"); }, getPrototypeOf() { throw new Error("proto"); } }),
    "an object whose name getter throws": () => ({ get name() { throw new Error("name"); } }),
  };
  for (const [what, make] of Object.entries(hostile)) {
    for (const fallback of ["none", "extractive"]) {
      const events = [];
      const compactor = new Compactor({
        contextWindow: 30000,
        settings,
        fallback,
        summarize: async () => {
          throw make();
        },
        onEvent: (e) => events.push(e.type),
      });
      const outcome = await settled(compactor.compact(long()));
      if (fallback === "extractive") assert.equal(outcome, "resolved", `${what}: the extractive summary`);
      else assert.match(outcome?.message ?? String(outcome), /^Compaction failed: /, what);
      assert.deepEqual(events, ["compaction_start", "compaction_end"], what);
      assert.equal(compactor.isCompacting, false, what);
    }
    // Aborted by the app's signal with a hostile reason, mid-summary.
    const controller = new AbortController();
    const compactor = new Compactor({
      contextWindow: 30000,
      settings,
      summarize: ({ signal }) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    });
    // (Its rejection is the reason itself, which no promise can resolve with: mapped to a word.)
    const running = settled(compactor.compact(long(), { signal: controller.signal }).catch(() => Promise.reject("rejected")));
    await new Promise((r) => setTimeout(r, 10));
    controller.abort(make());
    assert.equal(await running, "rejected", what);
    assert.equal(compactor.isCompacting, false, what);
    // Free for the next one (not "already running"): cancelled at once by its own aborted signal.
    const next = await settled(compactor.compact(long(), { signal: AbortSignal.abort() }));
    assert.ok(next instanceof Error && !/already running/.test(next.message), `${what}: ${next}`);
  }
});

test("a sparse array of length 1e8 with a hole at index 1: every function that reads from the start names messages[1] at once", async () => {
  // Reading the array's whole length before the hole (1e8 elements) ran
  // out of memory or took seconds.
  const sparse = [user("a")];
  sparse.length = 1e8;
  const withLast = [user("a")];
  withLast.length = 1e8;
  withLast[1e8 - 1] = user("z");
  const hole = { name: "TypeError", message: "messages[1] must be a message object, got undefined" };
  const compactor = () => new Compactor({ contextWindow: 200000 });
  // A compactor that has seen another array: the change is an edit, not a turn.
  const seen = () => {
    const c = compactor();
    c.contextTokens([user("x"), user("y")]);
    return c;
  };
  const summarizer = async () => "S";
  for (const messages of [sparse, withLast]) {
    const calls = {
      serializeConversation: () => serializeConversation(messages),
      convertToLlm: () => convertToLlm(messages),
      agentMessagesToChatMessages: () => agentMessagesToChatMessages(messages),
      findCutPoint: () => findCutPoint(messages, 0, messages.length, 100),
      prepareCompaction: () => prepareCompaction(messages, { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 }),
      messagesToPiSession: () => messagesToPiSession(messages),
      contextTokens: () => compactor().contextTokens(messages),
      "contextTokens after another array": () => seen().contextTokens(messages),
      contextTokenEstimate: () => compactor().contextTokenEstimate(messages),
      modelContext: () => compactor().modelContext(messages),
      modelContextChange: () => seen().modelContextChange(messages),
      needsCompaction: () => compactor().needsCompaction(messages),
      backgroundNext: () => compactor().backgroundNext(messages),
      searchHistory: () => compactor().searchHistory(messages, "a"),
      readHistory: () => compactor().readHistory(messages, "m1"),
      historyTool: () => compactor().historyTool(messages, "search_history", { query: "a" }),
    };
    for (const [name, call] of Object.entries(calls)) assert.throws(call, hole, name);
    const rejects = {
      compact: [() => compactor().compact(messages, { summarizer }), "Compaction failed: "],
      compactIfNeeded: [() => compactor().compactIfNeeded(messages, { summarizer }), ""],
      compactInBackground: [() => compactor().compactInBackground(messages, { summarizer }), "Auto-compaction failed: "],
      summarizeBranch: [() => compactor().summarizeBranch(messages, { summarizer }), ""],
      "historyTools' search_history": [() => historyTools(compactor(), () => messages)[0].execute("t", { query: "a" }), ""],
    };
    for (const [name, [call, prefix]] of Object.entries(rejects)) {
      await assert.rejects(call(), (e) => e instanceof Error && e.message === prefix + hole.message, name);
    }
    // The hooks never reject: a hook_error with the same TypeError.
    await assert.rejects(hookError(messages), hole, "agentHooks().transformContext");
    const events = [];
    const c = new Compactor({ contextWindow: 200000, onEvent: (e) => events.push(e) });
    await c.agentHooks().convertToLlm([user("x")]);
    await c.agentHooks().convertToLlm(messages);
    const error = events.find((e) => e.type === "hook_error")?.error;
    assert.ok(error instanceof TypeError && error.message === hole.message, `agentHooks().convertToLlm: ${error}`);
  }
});

// A revoked proxy throws from `Array.isArray` itself: where an array
// belongs, that is the error of the field (or argument) it stands in, and
// the promise-returning calls reject with it.
test("a revoked proxy where an array belongs", async () => {
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    return proxy;
  };
  const unreadable = (field) => (e) =>
    e instanceof TypeError && e.message === `${field} could not be read: Cannot perform 'IsArray' on a proxy that has been revoked`;
  const messages = [user("a"), toolResult, marker({ outputTokens: revoked() }), user("b")];
  assert.throws(() => convertToLlm(messages), unreadable("messages[2].outputTokens"));
  assert.throws(() => divider(messages), unreadable("messages[2].outputTokens"));

  const compactor = new Compactor({ contextWindow: 200000 });
  let background;
  assert.doesNotThrow(() => { background = compactor.compactInBackground(revoked()); });
  await assert.rejects(background, unreadable("Compaction failed: messages"));
  assert.throws(() => rebaseCompaction({ messages: revoked() }, [], []), /^TypeError: result must be what compact resolved to/);
  assert.equal(compactor.contextTokens([user("a")]), new Compactor({ contextWindow: 200000 }).contextTokens([user("a")]));
});
