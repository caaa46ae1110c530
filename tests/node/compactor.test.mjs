// The Compactor's compaction flow through the built package: prompts, the
// summarizer contract, every failure leaving the caller's array untouched,
// cancellation, hooks, fallback, chunking, events and re-entrancy.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  Compactor,
  convertToLlm,
  prepareCompaction,
  serializeConversation,
  transformContext,
} from "agent-compaction";
import { usage } from "../support/pi-usage.mjs";

const fixture = (name) =>
  readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "message")
    .map((e) => e.message);
const large = fixture("pi-large-session.jsonl");


let clock = 1_000;
const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
const assistant = (text, inputTokens) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "openai-completions",
  provider: "local",
  model: "m",
  usage: usage(inputTokens),
  stopReason: "stop",
  timestamp: clock++,
});

/** A conversation of `turns` user/assistant pairs of ~`size` characters each. */
function conversation(turns, size = 4000, label = "request") {
  const out = [];
  for (let i = 0; i < turns; i++) {
    out.push(user(`${label} ${i}: ` + "u".repeat(size)));
    out.push(assistant(`answer ${i}: ` + "a".repeat(size), (i + 1) * 2 * (size / 4)));
  }
  return out;
}

function recorder(answer = (req) => `## Goal\nsummary for ${req.kind}`) {
  const requests = [];
  const summarize = async (req) => {
    requests.push(req);
    return answer(req);
  };
  return { requests, summarize };
}

function snapshot(messages) {
  return { length: messages.length, items: [...messages] };
}

function assertUntouched(messages, snap) {
  assert.equal(messages.length, snap.length);
  snap.items.forEach((m, i) => assert.equal(messages[i], m, `element ${i} replaced`));
  assert.ok(!messages.some((m) => m.role === "compactionSummary" && !snap.items.includes(m)));
}

describe("compact: one summary inserted, nothing else changed", () => {
  test("inserts exactly one compactionSummary at firstKeptIndex; same objects elsewhere; input untouched", async () => {
    const messages = conversation(20);
    const snap = snapshot(messages);
    const { summarize } = recorder();
    // pi's estimate: the cut and tokensBefore are prepareCompaction's.
    const c = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize, estimator: "pi" });
    const prep = prepareCompaction(messages, { keepRecentTokens: 10_000 });
    const out = await c.compact(messages);
    assertUntouched(messages, snap);
    assert.equal(out.messages.length, messages.length + 1);
    assert.equal(out.firstKeptIndex, prep.firstKeptIndex);
    assert.equal(out.messages[out.firstKeptIndex], out.summary);
    out.messages.forEach((m, i) => {
      if (i < out.firstKeptIndex) assert.equal(m, messages[i]);
      if (i > out.firstKeptIndex) assert.equal(m, messages[i - 1]);
    });
    assert.equal(out.summary.role, "compactionSummary");
    assert.equal(out.summary.summary, "## Goal\nsummary for history");
    assert.equal(out.summary.tokensBefore, prep.tokensBefore);
    assert.equal(out.tokensBefore, prep.tokensBefore);
    assert.deepEqual(out.summary.details, { readFiles: [], modifiedFiles: [] });
    assert.ok(Math.abs(out.summary.timestamp - Date.now()) < 5000);
    assert.ok(out.tokensAfter < out.tokensBefore);
    assert.equal(transformContext(out.messages)[0], out.summary);
    assert.equal(c.isCompacting, false);
  });

  test("with the calibrated estimate the cut keeps keepRecentTokens by that estimate", async () => {
    // Chinese, which pi's chars / 4 counts at less than half: no usage, so
    // the estimates are all there is (and no ratio to learn).
    const messages = [];
    for (let i = 0; i < 40; i++) {
      messages.push(user(`request ${i}: ` + "你好，世界".repeat(200)));
      const { usage: _, ...a } = assistant(`answer ${i}: ` + "我们来看看".repeat(200), 0);
      messages.push(a);
    }
    const snap = snapshot(messages);
    const { summarize } = recorder();
    const c = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize, estimator: "calibrated" });
    const probe = new Compactor({ contextWindow: 1_000_000, estimator: "calibrated" });
    const estimate = (list) => list.reduce((t, m) => t + probe.contextTokens([m]), 0);
    const out = await c.compact(messages);
    assertUntouched(messages, snap);
    assert.equal(out.messages.length, messages.length + 1);
    assert.equal(out.messages[out.firstKeptIndex], out.summary);
    out.messages.forEach((m, i) => {
      if (i < out.firstKeptIndex) assert.equal(m, messages[i]);
      if (i > out.firstKeptIndex) assert.equal(m, messages[i - 1]);
    });
    // The newest messages from the cut on hold keepRecentTokens, one fewer
    // would not (every message here is a valid cut point).
    const kept = messages.slice(out.firstKeptIndex);
    assert.ok(estimate(kept) >= 10_000 && estimate(kept.slice(1)) < 10_000, `${estimate(kept)}`);
    // pi's estimate would keep more of them (it counts each at under half).
    const prep = prepareCompaction(messages, { keepRecentTokens: 10_000 });
    assert.ok(out.firstKeptIndex > prep.firstKeptIndex, `${out.firstKeptIndex} vs pi's ${prep.firstKeptIndex}`);
    assert.equal(out.tokensBefore, estimate(messages));
    assert.equal(out.tokensBefore, probe.contextTokens(messages));
    probe.free();
    c.free();
  });

  test("the history request: system prompt, serialized conversation, maxTokens 0.8 × reserve, reason, custom focus", async () => {
    const messages = conversation(20);
    const rec = recorder();
    const c = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize: rec.summarize });
    await c.compact(messages, { customInstructions: "the parser bug" });
    assert.equal(rec.requests.length, 1);
    const [req] = rec.requests;
    assert.equal(req.kind, "history");
    assert.equal(req.reason, "manual");
    assert.equal(req.maxTokens, Math.floor(0.8 * 8000));
    assert.ok(req.signal instanceof AbortSignal);
    assert.match(req.systemPrompt, /do not continue it/);
    const prep = prepareCompaction(messages, { keepRecentTokens: 10_000 });
    const text = serializeConversation(convertToLlm(prep.messagesToSummarize));
    assert.ok(req.prompt.startsWith(`<conversation>\n${text}\n</conversation>\n\n`));
    for (const heading of ["## Goal", "## Constraints & Preferences", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Next Steps", "## Critical Context"]) {
      assert.ok(req.prompt.includes(heading), heading);
    }
    assert.ok(!req.prompt.includes("<previous-summary>"));
    assert.ok(req.prompt.endsWith("\n\nAdditional focus: the parser bug"));
  });

  test("a split turn sends a turn-prefix request (0.5 × reserve) alongside the history and merges both", async () => {
    const rec = recorder();
    // pi's estimate: the split is prepareCompaction's.
    const c = new Compactor({ contextWindow: 200_000, summarize: rec.summarize, estimator: "pi" });
    const prep = prepareCompaction(large, { keepRecentTokens: 20_000 });
    assert.equal(prep.isSplitTurn, true);
    const out = await c.compact(large);
    const kinds = rec.requests.map((r) => r.kind).sort();
    assert.deepEqual(kinds, ["history", "turnPrefix"]);
    const prefix = rec.requests.find((r) => r.kind === "turnPrefix");
    assert.equal(prefix.maxTokens, Math.floor(0.5 * 16384));
    const prefixText = serializeConversation(convertToLlm(prep.turnPrefixMessages));
    assert.ok(prefix.prompt.startsWith(`<conversation>\n${prefixText}\n</conversation>`));
    assert.ok(out.summary.summary.startsWith("## Goal\nsummary for history\n\n---\n\n"));
    assert.ok(out.summary.summary.endsWith("summary for turnPrefix"));
    // The large session edits files: they are carried in details.
    assert.ok(out.summary.details.modifiedFiles.length > 0);
    assert.deepEqual(out.summary.details.modifiedFiles, [...out.summary.details.modifiedFiles].sort());
  });

  test("re-compaction folds the previous summary in and summarizes only what follows it", async () => {
    const rec = recorder((req) => (req.prompt.includes("<previous-summary>") ? "SECOND" : "FIRST"));
    const c = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize: rec.summarize });
    const first = await c.compact(conversation(20));
    const grown = [...first.messages, ...conversation(20, 4000, "later")];
    const second = await c.compact(grown);
    const req = rec.requests[1];
    assert.ok(req.prompt.includes("<previous-summary>\nFIRST\n</previous-summary>"));
    // Nothing from before the first summary is sent again.
    assert.ok(!req.prompt.includes("request 0: "));
    assert.equal(second.summary.summary, "SECOND");
    assert.equal(second.messages.filter((m) => m.role === "compactionSummary").length, 2);
    assert.ok(second.firstKeptIndex > first.firstKeptIndex);
  });

  test("usage is stored on the summary, summed over several requests", async () => {
    const c = new Compactor({
      contextWindow: 200_000,
      summarize: async (req) => ({ text: "S " + req.kind, usage: usage(100, req.kind === "history" ? 7 : 3) }),
    });
    const out = await c.compact(large);
    assert.equal(out.summary.usage.input, 200);
    assert.equal(out.summary.usage.output, 10);
  });

  test("an over-long summary is cut at maxTokens × 4 characters with a marker", async () => {
    const c = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 1000, keepRecentTokens: 10_000 },
      summarize: async () => "x".repeat(50_000),
    });
    const out = await c.compact(conversation(20));
    assert.equal(out.summary.summary.length, 800 * 4);
    assert.match(out.summary.summary, /\[Summary cut here: it was longer than its budget\.\]$/);
  });

  test("contextTokens and needsCompaction drop right after a compaction (stale usage ignored)", async () => {
    const messages = conversation(20);
    // The last answer reports 40,010 tokens: over 45,000 - 8,000.
    const c = new Compactor({ contextWindow: 45_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize: async () => "short" });
    assert.equal(c.needsCompaction(messages), true);
    const before = c.contextTokens(messages);
    const out = await c.compact(messages, { reason: "threshold" });
    assert.equal(c.contextTokens(out.messages), out.tokensAfter);
    assert.ok(out.tokensAfter < before / 2);
    assert.equal(c.needsCompaction(out.messages), false);
  });
});

describe("tokensAfter with the calibrated estimate", () => {
  // Code the calibrated estimate counts at well over what this provider
  // reports (its usage grows by characters / 4): a ratio near 0.6 is learnt.
  function code(turns) {
    const out = [];
    let reported = 500;
    for (let i = 0; i < turns; i++) {
      const text = `// file${i}\n` + `const v${i} = ${i};\n`.repeat(1250);
      out.push(user(`turn ${i}: fix this\n` + text));
      reported += Math.ceil(text.length / 4) + 20;
      out.push(assistant(`Fixed bug ${i}.`, reported));
    }
    return out;
  }

  test("is contextTokens right after, in the provider's tokens as tokensBefore is, in compaction_end and the quiet rule", async () => {
    const messages = code(20);
    const events = [];
    const c = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 10_000, keepRecentTokens: 60_000, toolOutputClearing: false },
      summarize: async () => "## Goal\nFix the bugs.",
      onEvent: (e) => events.push(e),
    });
    assert.equal(c.needsCompaction(messages), true);
    const before = c.contextTokens(messages);
    assert.equal(before, messages.at(-1).usage.totalTokens);
    // The summary keeps 60,000 of the provider's tokens: about 100,000 by
    // the estimate, more than the whole context as the provider counts it.
    const out = await c.compact(messages, { reason: "threshold" });
    assert.equal(out.tokensBefore, before);
    assert.equal(c.contextTokens(out.messages), out.tokensAfter);
    assert.ok(out.tokensAfter > 60_000 && out.tokensAfter < 0.95 * before, `${out.tokensAfter} of ${before}`);
    const fresh = new Compactor({ contextWindow: 100_000 });
    assert.ok(fresh.contextTokens(out.messages) > before, "unscaled, the kept part alone is more than tokensBefore");
    fresh.free();
    const end = events.at(-1);
    assert.equal(end.type, "compaction_end");
    assert.equal(end.result.tokensAfter, out.tokensAfter);
    // It freed more than 5 %: the threshold is not held back.
    assert.equal(end.quietUntil, undefined);
    assert.equal(c.needsCompaction(out.messages), false);
    c.free();
  });
});

describe("failure never loses anything", () => {
  const failures = {
    "throws": () => {
      throw new Error("callback exploded");
    },
    "rejects": async () => {
      throw new Error("provider said no");
    },
    "returns an empty string": async () => "   ",
    "returns a number": async () => 42,
    "returns { text } without a string": async () => ({ text: null }),
  };
  for (const [name, summarize] of Object.entries(failures)) {
    test(`the summarizer ${name}: rejected, array untouched, compaction_end with the error, next call works`, async () => {
      const messages = conversation(20);
      const snap = snapshot(messages);
      const events = [];
      const c = new Compactor({
        contextWindow: 100_000,
        settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
        summarize,
        onEvent: (e) => events.push(e),
      });
      await assert.rejects(c.compact(messages), (e) => e instanceof Error && e.message.startsWith("Compaction failed: "));
      assertUntouched(messages, snap);
      assert.equal(c.isCompacting, false);
      assert.deepEqual(events.map((e) => e.type), ["compaction_start", "compaction_end"]);
      const end = events[1];
      assert.equal(end.aborted, false);
      assert.equal(end.result, undefined);
      assert.match(end.errorMessage, /^Compaction failed: /);
      // The next call works once the summarizer does.
      const c2 = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize: async () => "ok" });
      assert.equal((await c2.compact(messages)).summary.summary, "ok");
    });
  }

  test("a summarizer's rejection is the cause of compact's error: its status and its own cause are there to read", async () => {
    const messages = conversation(20);
    const network = new TypeError("fetch failed");
    const refused = Object.assign(new Error("OpenAI-compatible summarizer: HTTP 429: Rate limit reached"), { status: 429, cause: network });
    const c = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize: async () => { throw refused; } });
    const error = await c.compact(messages).then(() => assert.fail("resolved"), (e) => e);
    assert.equal(error.message, "Compaction failed: OpenAI-compatible summarizer: HTTP 429: Rate limit reached");
    assert.equal(error.cause, refused);
    assert.equal(error.cause.status, 429);
    // A failure of the summary itself (no rejection) has no cause.
    const empty = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize: async () => "   " });
    const e2 = await empty.compact(messages).then(() => assert.fail("resolved"), (e) => e);
    assert.equal(e2.cause, undefined);
  });

  test("a malformed message among those summarized is a TypeError named by the caller's index, after an earlier summary too (as compactIfNeeded throws)", async () => {
    const messages = [...conversation(3), { role: "compactionSummary", summary: "S", tokensBefore: 1, timestamp: clock++ }, ...conversation(6)];
    const bad = messages.length - 6;
    messages[bad] = { role: "user", timestamp: clock++ };
    const before = messages.slice();
    const c = new Compactor({ contextWindow: 100_000, settings: { keepRecentTokens: 2_000 }, summarize: async () => assert.fail("not called") });
    const message = `messages[${bad}].content must be a string or an array, got undefined`;
    await assert.rejects(c.compact(messages), { name: "TypeError", message: `Compaction failed: ${message}` });
    assert.deepEqual(messages, before, "nothing changed");
    // The same messages, in the other entry points that compact.
    await assert.rejects(c.compactIfNeeded(messages, { reason: "manual" }), { name: "TypeError" });
    await assert.rejects(c.compactInBackground(messages), { name: "TypeError" });
  });

  test("automatic reasons carry pi's prefixes", async () => {
    for (const [reason, prefix] of [["threshold", "Auto-compaction failed: "], ["overflow", "Context overflow recovery failed: "]]) {
      const events = [];
      const c = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize: async () => "", onEvent: (e) => events.push(e) });
      await assert.rejects(c.compact(conversation(20), { reason, willRetry: true }));
      assert.ok(events[1].errorMessage.startsWith(prefix), events[1].errorMessage);
      assert.equal(events[0].reason, reason);
      assert.equal(events[1].willRetry, false);
    }
  });

  test("a hung summarizer times out (summarizeTimeoutMs) and its signal is aborted", async () => {
    let signal;
    const c = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
      summarizeTimeoutMs: 30,
      summarize: (req) => {
        signal = req.signal;
        return new Promise(() => {});
      },
    });
    await assert.rejects(c.compact(conversation(20)), /did not answer within 30 ms/);
    assert.equal(signal.aborted, true);
    assert.equal(c.isCompacting, false);
  });

  test("abort() and the caller's AbortSignal cancel: aborted, no fallback, nothing inserted", async () => {
    const hang = ({ signal }) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    for (const how of ["abort()", "signal"]) {
      const events = [];
      const messages = conversation(20);
      const snap = snapshot(messages);
      const c = new Compactor({
        contextWindow: 100_000,
        settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
        summarize: hang,
        fallback: "extractive",
        onEvent: (e) => events.push(e),
      });
      const controller = new AbortController();
      const running = c.compact(messages, { signal: controller.signal });
      assert.equal(c.isCompacting, true);
      setTimeout(() => (how === "abort()" ? c.abort() : controller.abort()), 10);
      await assert.rejects(running, (e) => e.name === "AbortError");
      assertUntouched(messages, snap);
      assert.equal(c.isCompacting, false);
      assert.equal(events.at(-1).aborted, true);
      assert.equal(events.at(-1).errorMessage, undefined);
    }
  });

  test("a late answer after abort() is not used", async () => {
    let resolveLate;
    const c = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
      summarize: () => new Promise((r) => (resolveLate = r)),
    });
    const running = c.compact(conversation(20));
    await new Promise((r) => setTimeout(r, 5));
    c.abort();
    resolveLate("too late");
    await assert.rejects(running, (e) => e.name === "AbortError");
  });

  test("with fallback: \"extractive\", a failed summarizer yields an extractive summary and says so", async () => {
    const c = new Compactor({ contextWindow: 200_000, summarize: async () => { throw new Error("503 from provider"); }, fallback: "extractive" });
    const out = await c.compact(large);
    assert.equal(out.summarizedBy, "extractive");
    assert.match(out.fallbackReason, /503 from provider/);
    assert.ok(out.summary.summary.includes("## Goal"));
    for (const file of out.summary.details.modifiedFiles) assert.ok(out.summary.summary.includes(file), file);
  });

  test("without a summarizer the extractive summary is the default", async () => {
    const out = await new Compactor({ contextWindow: 200_000 }).compact(large);
    assert.equal(out.summarizedBy, "extractive");
    assert.ok(out.summary.summary.length <= Math.floor(0.8 * 16384) * 4);
    assert.ok(out.tokensAfter < out.tokensBefore);
  });
});

describe("hooks, state and events", () => {
  test("beforeCompact can cancel (aborted) or supply the summary (fromHook)", async () => {
    const events = [];
    const cancel = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
      summarize: async () => assert.fail("not called"),
      beforeCompact: async (event) => {
        assert.equal(event.reason, "manual");
        assert.ok(event.preparation.messagesToSummarize.length > 0);
        assert.ok(event.signal instanceof AbortSignal);
        return { cancel: true };
      },
      onEvent: (e) => events.push(e),
    });
    await assert.rejects(cancel.compact(conversation(20)));
    assert.equal(events.at(-1).aborted, true);

    const supply = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
      summarize: async () => assert.fail("not called"),
      beforeCompact: () => ({ summary: "from the app", details: { readFiles: ["a"], modifiedFiles: [] } }),
    });
    const out = await supply.compact(conversation(20));
    assert.equal(out.summary.summary, "from the app");
    assert.equal(out.summary.fromHook, true);
    assert.deepEqual(out.summary.details, { readFiles: ["a"], modifiedFiles: [] });
    assert.equal(out.summarizedBy, "hook");

    // An empty summary is refused, as the summarizer's is: nothing changes.
    const ends = [];
    const empty = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
      fallback: "extractive",
      beforeCompact: () => ({ summary: "  " }),
      onEvent: (e) => e.type === "compaction_end" && ends.push(e),
    });
    await assert.rejects(empty.compact(conversation(20)), { message: "Compaction failed: beforeCompact returned an empty summary" });
    assert.equal(ends[0].result, undefined);
  });

  test("a second compact while one runs is rejected, not queued and not run twice", async () => {
    let calls = 0;
    const c = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
      summarize: () => {
        calls++;
        return new Promise((r) => setTimeout(() => r("S"), 20));
      },
    });
    const messages = conversation(20);
    const first = c.compact(messages);
    await assert.rejects(c.compact(messages), /already running/);
    await first;
    assert.equal(calls, 1);
  });

  test("nothing to summarize: a clear error when manual, a no-op when automatic, no callback call", async () => {
    const c = new Compactor({ contextWindow: 100_000, summarize: async () => assert.fail("not called") });
    const small = conversation(2, 100);
    await assert.rejects(c.compact(small), /Nothing to compact: the conversation fits in keepRecentTokens/);
    assert.equal(await c.compact(small, { reason: "threshold" }), undefined);
    // A huge paste: far more than keepRecentTokens, and still nothing to
    // summarize, as a message is never split. The error says why, rather
    // than that the conversation fits.
    const pasted = [user("x ".repeat(200_000)), assistant("ok", 60_000), user("and?")];
    await assert.rejects(c.compact(pasted), (e) => {
      assert.match(e.message, /Nothing to compact: the newest messages keepRecentTokens keeps reach back to the start of the context \(a message is never split\)/);
      return true;
    });
    const ended = [...small, { role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: clock++ }];
    await assert.rejects(c.compact(ended), /Already compacted/);
  });

  test("event handlers may call back into the compactor (no re-entrancy error)", async () => {
    const seen = [];
    const messages = conversation(20);
    let c;
    c = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 8000, keepRecentTokens: 10_000 },
      summarize: async () => {
        seen.push(["in summarize", c.isCompacting, c.contextTokens(messages) > 0]);
        return "S";
      },
      onEvent: (e) => seen.push([e.type, c.isCompacting, c.needsCompaction(messages)]),
    });
    await c.compact(messages);
    assert.deepEqual(seen.map((s) => s[0]), ["compaction_start", "in summarize", "compaction_end"]);
    assert.equal(seen[0][1], true);
    assert.equal(seen[1][1], true);
    assert.equal(seen[1][2], true);
  });

  test("compaction_end carries the result compact resolves to", async () => {
    const events = [];
    const c = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize: async () => "S", onEvent: (e) => events.push(e) });
    const out = await c.compact(conversation(20), { reason: "threshold" });
    const end = events.at(-1);
    assert.equal(end.type, "compaction_end");
    assert.equal(end.reason, "threshold");
    assert.equal(end.result, out);
    assert.equal(end.aborted, false);
    assert.equal(end.willRetry, false);
  });

  test("events are plain objects with exactly their fields, in order; results and errors passed through", async () => {
    const events = [];
    const onEvent = (e) => events.push(e);
    const settings = { reserveTokens: 8000, keepRecentTokens: 10_000 };
    const ok = new Compactor({ contextWindow: 100_000, settings, summarize: async () => "S", onEvent });
    const out = await ok.compact(conversation(20), { reason: "threshold", willRetry: true });
    const failing = new Compactor({ contextWindow: 100_000, settings, summarize: async () => "", onEvent });
    await assert.rejects(failing.compact(conversation(20)));
    const bad = { length: 1, get 0() { throw new Error("no reading"); } };
    assert.equal(await ok.agentHooks().transformContext(bad), bad);
    assert.deepEqual(events.map((e) => Object.keys(e)), [
      ["type", "reason"],
      // `tier`: which tier ran, with a result.
      ["type", "reason", "result", "aborted", "willRetry", "tier"],
      ["type", "reason"],
      ["type", "reason", "result", "aborted", "willRetry", "errorMessage"],
      ["type", "hook", "error"],
    ]);
    for (const e of events) assert.equal(Object.getPrototypeOf(e), Object.prototype);
    assert.deepEqual(events[0], { type: "compaction_start", reason: "threshold" });
    assert.equal(events[1].result, out);
    assert.equal(events[1].willRetry, true);
    assert.equal(events[1].tier, "summarize");
    assert.ok("result" in events[3] && events[3].result === undefined);
    assert.equal(events[3].errorMessage, "Compaction failed: the summarizer returned an empty summary");
    assert.equal(events[4].type, "hook_error");
    assert.equal(events[4].hook, "transformContext");
    assert.ok(events[4].error instanceof Error);
  });

  test("a summarizer window smaller than the history: chunks folded in with the update prompt", async () => {
    const rec = recorder((req) => `S${rec.requests.length}`);
    const c = new Compactor({ contextWindow: 200_000, summarizerContextWindow: 40_000, summarize: rec.summarize });
    await c.compact(large);
    const history = rec.requests.filter((r) => r.kind === "history");
    assert.ok(history.length > 1, `${history.length} chunks`);
    for (const r of history) assert.ok(r.prompt.length < 40_000 * 4, `prompt of ${r.prompt.length} chars`);
    history.slice(1).forEach((r) => assert.match(r.prompt, /<previous-summary>\nS\d+\n<\/previous-summary>/));
  });
});

describe("removeLastCompaction", () => {
  test("undo: the array without its last summary, same objects otherwise; the input itself when there is none", async () => {
    const { removeLastCompaction } = await import("agent-compaction");
    const messages = conversation(20);
    const c = new Compactor({ contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 }, summarize: async () => "S" });
    const out = await c.compact(messages);
    const undone = removeLastCompaction(out.messages);
    assert.equal(undone.length, messages.length);
    undone.forEach((m, i) => assert.equal(m, messages[i]));
    assert.equal(removeLastCompaction(messages), messages);
    // Two summaries: only the last goes.
    const twice = [...out.messages.slice(0, 2), { role: "compactionSummary", summary: "old", tokensBefore: 1, timestamp: 1 }, ...out.messages.slice(2)];
    const once = removeLastCompaction(twice);
    assert.equal(once.filter((m) => m.role === "compactionSummary").length, 1);
    assert.equal(once.find((m) => m.role === "compactionSummary").summary, "old");
    assert.throws(() => removeLastCompaction([{ role: "compactionSummary" }]), (e) => e instanceof TypeError && /messages\[0\]\.summary/.test(e.message));
    // The compactor follows an undo back (its numbers go up again).
    assert.equal(c.contextTokens(undone), c.contextTokens(messages));
  });

  // Turns that read a file each: a tool call, its output, an answer; the
  // provider's usage grows by the output's characters / 4.
  function reading(turns) {
    const out = [];
    let reported = 1_000;
    for (let i = 0; i < turns; i++) {
      out.push(user(`turn ${i}: read file${i}.ts and fix bug ${i}`));
      reported += 50;
      out.push({ ...assistant("", reported), content: [{ type: "toolCall", id: `c${i}`, name: "read", arguments: { path: `src/file${i}.ts` } }], stopReason: "toolUse" });
      const text = `// file${i}\n` + `const v${i} = ${i};\n`.repeat(1250);
      out.push({ role: "toolResult", toolCallId: `c${i}`, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: clock++ });
      reported += text.length / 4 + 100;
      out.push(assistant(`Fixed bug ${i}.`, reported));
    }
    return out;
  }

  for (const estimator of ["pi", "calibrated"]) {
    const make = (settings = {}) =>
      new Compactor({
        estimator,
        contextWindow: 100_000,
        settings: { reserveTokens: 10_000, keepRecentTokens: 15_000, ...settings },
        summarize: async () => "## Goal\nFix the bugs.",
      });

    test(`undone after a turn (${estimator}): the turn's usage counted the summary, so it counts no more, with the same compactor or a fresh one`, async () => {
      const { removeLastCompaction } = await import("agent-compaction");
      const c = make();
      const base = reading(20);
      const before = c.contextTokens(base);
      assert.equal(c.needsCompaction(base), true);
      const out = await c.compact(base, { reason: "manual" });
      // One more turn: the provider reports what it was sent, the summary
      // and the kept turns.
      const next = [user("next question"), assistant("answer", out.tokensAfter + 30)];
      const grown = [...out.messages, ...next];
      // (usage() reports 10 output tokens besides the input.)
      assert.equal(c.contextTokens(grown), out.tokensAfter + 40);
      const undone = removeLastCompaction(grown);
      assert.deepEqual(undone, [...base, ...next]);
      for (const [who, k] of [["same", c], ["fresh", make()]]) {
        const tokens = k.contextTokens(undone);
        assert.ok(tokens > before && tokens < before + 100, `${who}: ${tokens}, before the compaction ${before}`);
        assert.equal(k.needsCompaction(undone), true, who);
      }
      // The next usage the provider reports counts.
      const later = [...undone, user("go on"), assistant("done", before + 500)];
      assert.equal(c.contextTokens(later), before + 510);
    });

    test(`a clearing undone after a turn (${estimator}): the turn's usage saw the placeholders, so it counts no more`, async () => {
      const { removeLastCompaction } = await import("agent-compaction");
      const clearing = { toolOutputClearing: { protectTokens: 5_000, minFreedTokens: 1_000 } };
      const c = make(clearing);
      const base = reading(20);
      const before = c.contextTokens(base);
      const cleared = await c.compact(base, { reason: "threshold" });
      assert.equal(cleared.tier, "clear");
      const grown = [...cleared.messages, user("next"), assistant("reply", cleared.tokensAfter + 200)];
      assert.equal(c.contextTokens(grown), cleared.tokensAfter + 210);
      const undone = removeLastCompaction(grown);
      assert.ok(!undone.some((m) => m.role === "toolOutputCleared"));
      for (const [who, k] of [["same", c], ["fresh", make(clearing)]]) {
        const tokens = k.contextTokens(undone);
        assert.ok(tokens > before && tokens < before + 100, `${who}: ${tokens}, before the clearing ${before}`);
        assert.equal(k.needsCompaction(undone), true, who);
      }
    });

    test(`undone after a turn, a summary that freed under half (${estimator}): the compactor that saw the undo counts what is sent`, async () => {
      const { removeLastCompaction } = await import("agent-compaction");
      // It keeps most of the context: the turn's usage is over half the
      // usage before, and only the edit tells it is stale.
      const c = make({ keepRecentTokens: 60_000 });
      const base = reading(20);
      const before = c.contextTokens(base);
      const out = await c.compact(base, { reason: "manual" });
      assert.ok(out.tokensAfter > before / 2, `${out.tokensAfter} of ${before}`);
      // The turn runs through the compactor (its hooks, or contextTokens).
      const grown = [...out.messages, user("next question"), assistant("answer", out.tokensAfter + 30)];
      assert.equal(c.contextTokens(grown), out.tokensAfter + 40);
      const undone = removeLastCompaction(grown);
      const tokens = c.contextTokens(undone);
      assert.ok(tokens > before && tokens < before + 100, `${tokens}, before the compaction ${before}`);
      assert.equal(c.needsCompaction(undone), true);
    });
  }
});

const piBranch = await import(new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/branch-summarization.js", import.meta.url));
const piUtils = await import(new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/utils.js", import.meta.url));
const piMessages = await import(new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/messages.js", import.meta.url));

describe("summarizeBranch", () => {
  const entries = (msgs) => msgs.map((message, i) => ({ type: "message", id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: new Date(message.timestamp).toISOString(), message }));

  test("selects what pi selects (newest first within contextWindow - reserveTokens, no tool results) and carries the file lists", async () => {
    const requests = [];
    const c = new Compactor({ contextWindow: 60_000, settings: { reserveTokens: 16_384, keepRecentTokens: 20_000 }, summarize: async (req) => (requests.push(req), { text: "## Goal\nbranch", usage: usage(5) }) });
    const branch = await c.summarizeBranch(large, { fromId: "leaf-7", customInstructions: "the theme work" });
    const pi = piBranch.prepareBranchEntries(entries(large), 60_000 - 16_384);
    const expectedText = piUtils.serializeConversation(piMessages.convertToLlm(pi.messages));
    assert.equal(requests.length, 1);
    assert.equal(requests[0].kind, "branch");
    assert.equal(requests[0].maxTokens, 2048);
    assert.ok(requests[0].prompt.startsWith(`<conversation>\n${expectedText}\n</conversation>\n\n`));
    assert.ok(requests[0].prompt.endsWith("\n\nAdditional focus: the theme work"));
    const lists = piUtils.computeFileLists(pi.fileOps);
    assert.deepEqual(branch.details, { readFiles: lists.readFiles, modifiedFiles: lists.modifiedFiles });
    assert.equal(branch.role, "branchSummary");
    assert.equal(branch.summary, "## Goal\nbranch");
    assert.equal(branch.fromId, "leaf-7");
    assert.equal(branch.usage.input, 5);
  });

  test("replaceInstructions replaces the instructions; no summarizer gives an extractive summary; failures reject", async () => {
    const requests = [];
    const c = new Compactor({ contextWindow: 200_000, summarize: async (req) => (requests.push(req), "B") });
    await c.summarizeBranch(conversation(3, 100), { customInstructions: "Only list files.", replaceInstructions: true });
    assert.ok(requests[0].prompt.endsWith("</conversation>\n\nOnly list files."));
    const offline = await new Compactor({ contextWindow: 200_000 }).summarizeBranch(large);
    assert.ok(offline.summary.includes("## Goal"));
    assert.ok(offline.summary.length <= 2048 * 4);
    const failing = new Compactor({ contextWindow: 200_000, summarize: async () => "", fallback: "none" });
    await assert.rejects(failing.summarizeBranch(large), /^Error: Branch summary failed: /);
    await assert.rejects(c.summarizeBranch([]), /Nothing to summarize/);
  });

  test("a malformed message is a TypeError naming the caller's index, with or without a summarizer", async () => {
    const toolCall = { ...assistant("reading"), content: [{ type: "toolCall", id: "t1", name: "read", arguments: { path: "/a" } }], stopReason: "toolUse" };
    const toolResult = { role: "toolResult", toolCallId: "t1", toolName: "read", content: [{ type: "text", text: "a" }], isError: false, timestamp: clock++ };
    // Index 4 is the fourth message the summarizer would be shown (the tool result is left out).
    const branch = [user("a"), toolCall, toolResult, user("b"), { role: "user", timestamp: clock++ }, assistant("c", 100)];
    const expected = { name: "TypeError", message: "messages[4].content must be a string or an array, got undefined" };
    await assert.rejects(new Compactor({ contextWindow: 200_000, summarize: async () => "B" }).summarizeBranch(branch), expected);
    await assert.rejects(new Compactor({ contextWindow: 200_000 }).summarizeBranch(branch), expected);
  });

  test("a newest message over the budget is named, not called a tool result", async () => {
    const c = new Compactor({ contextWindow: 20_000, settings: { reserveTokens: 10_000, keepRecentTokens: 2_000 }, summarize: async () => "B" });
    const branch = [user("a"), assistant("b", 100), user("x".repeat(40_004))];
    await assert.rejects(c.summarizeBranch(branch), {
      message: "Nothing to summarize: the branch's newest message besides tool results (messages[2], 10001 tokens) is over the branch summary's budget of 10000 tokens (contextWindow - reserveTokens)",
    });
    assert.equal(piBranch.prepareBranchEntries(entries(branch), 10_000).messages.length, 0, "pi's walk selects nothing either");
  });
});

describe("setModel", () => {
  test("switches model and window for later checks; a running compaction keeps the settings it started with", async () => {
    const seen = [];
    let c;
    c = new Compactor({
      contextWindow: 100_000,
      model: "a/small",
      settings: { reserveTokens: 8000, keepRecentTokens: 10_000, modelOverrides: { "b/big": { reserveTokens: 30_000 } } },
      beforeCompact: () => {
        c.setModel({ provider: "b", id: "big", contextWindow: 400_000 });
      },
      summarize: async (req) => (seen.push(req.maxTokens), "S"),
    });
    await c.compact(conversation(20));
    assert.deepEqual(seen, [Math.floor(0.8 * 8000)]);
    assert.equal(c.contextWindow, 400_000);
    assert.equal(c.settings.reserveTokens, 30_000);
    await c.compact(conversation(40));
    assert.equal(seen[1], Math.floor(0.8 * 30_000));
    // Settings that cannot work with the new window are refused; the old ones stay.
    assert.throws(() => c.setModel("a/small", 15_000), RangeError);
    assert.equal(c.contextWindow, 400_000);
    assert.equal(c.settings.reserveTokens, 30_000);
  });
});

describe("guards", () => {
  test("a compaction that would not make the context smaller is refused, and nothing is inserted", async () => {
    const messages = conversation(3, 2000);
    const snap = snapshot(messages);
    const events = [];
    const c = new Compactor({
      contextWindow: 100_000,
      settings: { reserveTokens: 16_384, keepRecentTokens: 600 },
      summarize: async () => "word ".repeat(20_000),
      onEvent: (e) => events.push(e),
    });
    await assert.rejects(c.compact(messages), /^Error: Compaction failed: the summary would not make the context smaller \(\d+ tokens before, \d+ after\)$/);
    assertUntouched(messages, snap);
    assert.equal(events.at(-1).aborted, false);
  });
});

describe("agentHooks across compactions", () => {
  test("the hooks give what the stateless functions give, turn after turn, through compactions and undo", async () => {
    const { removeLastCompaction } = await import("agent-compaction");
    const c = new Compactor({ contextWindow: 200_000, summarize: async () => "## Goal\nS" });
    const hooks = c.agentHooks();
    let messages = [];
    const check = async (label) => {
      const ctx = await hooks.transformContext(messages);
      assert.deepEqual(ctx, transformContext(messages), `${label}: context`);
      const llm = await hooks.convertToLlm(ctx);
      assert.deepEqual(llm, convertToLlm(transformContext(messages)), `${label}: llm`);
      assert.equal(c.contextTokens(messages), c.contextTokenEstimate(messages).tokens);
    };
    for (let i = 0; i < large.length; i++) {
      messages = [...messages, large[i]];
      if (i % 97 === 0) await check(`turn ${i}`);
      if (i === 400 || i === 700) {
        messages = (await c.compact(messages)).messages;
        await check(`after compaction at ${i}`);
      }
    }
    messages = removeLastCompaction(messages);
    await check("after undo");
    // A failed attempt removed at the end.
    messages = messages.slice(0, -1);
    await check("after removing the last message");
    // Messages replaced by new objects (SPEC: to change a message, replace
    // it), anywhere but the ends: in the context, and before the last summary.
    messages = (await c.compact(messages)).messages;
    await check("after a third compaction");
    const at = messages.length - 5;
    messages = messages.map((m, i) => (i === at || i === 3 ? user(`edited ${i} ` + "x".repeat(9000)) : m));
    await check("after replacing two messages");
    messages = messages.map((m, i) => (i === at + 1 ? { ...m, content: "shorter" } : m));
    await check("after replacing another");
  });
});

test("a turn-prefix request that fails while the history is being summarized is not an unhandled rejection", async () => {
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  process.on("unhandledRejection", onUnhandled);
  try {
    const messages = [
      user("a".repeat(8000)),
      assistant("b".repeat(8000), 4000),
      user("c".repeat(8000)),
      assistant("d".repeat(8000), 8000),
      assistant("e".repeat(16000), 12000),
    ];
    const compactor = new Compactor({
      contextWindow: 16000,
      settings: { reserveTokens: 3000, keepRecentTokens: 4000 },
      fallback: "extractive",
      summarize: async (req) => {
        if (req.kind === "history") await new Promise((r) => setTimeout(r, 50));
        throw new Error(`down (${req.kind})`);
      },
    });
    const out = await compactor.compact(messages);
    assert.equal(out.summarizedBy, "extractive");
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(unhandled.map((e) => e.message), []);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});
