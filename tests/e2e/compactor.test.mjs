// The Compactor's async compaction flow in a real browser (each engine:
// Chromium, Firefox, WebKit through tests/support/browsers.mjs): every
// summarizer failure injected by a JS
// callback, cancellation (abort() and AbortSignal), late answers, the
// one-at-a-time guard, re-entrancy from onEvent and the summarizer, the
// extractive fallback, the real fetch summarizer against the mock LLM
// mounted on the page's own origin, and the wasm heap over 100 compactions
// of the large fixture session.
//
// Each scenario runs inside the page (`page.evaluate`, importing
// /pkg/index.js) and returns plain data; identities of the caller's objects
// are compared in the page. Needs a built pkg/ (`node scripts/build.mjs`),
// the browsers scripts/setup.sh installs and the fixtures in fixtures/.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import { ENGINES, launch } from "../support/browsers.mjs";
import { pageHandler, startServer } from "../../scripts/serve.mjs";
import { createMockLlm, MOCK_SUMMARY, MOCK_USAGE, PROVIDER_ERRORS } from "../support/mock-llm-server.mjs";


const LARGE_SESSION = new URL("../../fixtures/pi-large-session.jsonl", import.meta.url);

// A page with nothing but the package and a few helpers (window.h). The
// scenarios import /pkg/index.js themselves.
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>compactor</title>
<script type="module">
  const m = await import("/pkg/index.js");
  let clock = 1_000;
  const usage = (input, output = 10) => ({
    input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  });
  const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
  const assistant = (text, inputTokens) => ({
    role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "local",
    model: "m", usage: usage(inputTokens), stopReason: "stop", timestamp: clock++,
  });
  const errorInfo = (e) => ({
    name: e?.name, message: e?.message ?? String(e), isError: e instanceof Error,
    isDOMException: typeof DOMException !== "undefined" && e instanceof DOMException,
  });
  window.h = {
    // 100k window, 8k reserve, 10k kept: 20 turns of ~2k tokens leave plenty to summarize.
    OPTIONS: { contextWindow: 100_000, settings: { reserveTokens: 8000, keepRecentTokens: 10_000 } },
    conversation(turns = 20, size = 4000, label = "request") {
      const out = [];
      for (let i = 0; i < turns; i++) {
        out.push(user(label + " " + i + ": " + "u".repeat(size)));
        out.push(assistant("answer " + i + ": " + "a".repeat(size), (i + 1) * 2 * (size / 4)));
      }
      return out;
    },
    snapshot: (messages) => ({ length: messages.length, items: [...messages] }),
    // The caller's array after a compaction: same length, same objects, no summary.
    check(messages, snap) {
      return {
        sameLength: messages.length === snap.length,
        sameElements: snap.items.every((item, i) => messages[i] === item),
        summaries: messages.filter((x) => x?.role === "compactionSummary").length,
      };
    },
    // A result: the summary where it says, every other element the caller's own.
    checkResult(out, messages) {
      const at = out.firstKeptIndex;
      return {
        insertedAt: out.messages[at] === out.summary,
        length: out.messages.length === messages.length + 1,
        othersSame: out.messages.every((x, i) => i === at || x === messages[i < at ? i : i - 1]),
        summaries: out.messages.filter((x) => x?.role === "compactionSummary").length,
      };
    },
    async settle(promise) {
      try {
        return { ok: true, value: await promise };
      } catch (e) {
        return { ok: false, error: errorInfo(e) };
      }
    },
    errorInfo,
    event: (e, c) => ({
      type: e.type, reason: e.reason, aborted: e.aborted, willRetry: e.willRetry,
      errorMessage: e.errorMessage, hasResult: e.result !== undefined,
      // read in the start handler only (in the end handler it is a detail of ordering)
      isCompacting: c && e.type === "compaction_start" ? c.isCompacting : undefined,
    }),
    tick: (ms = 0) => new Promise((r) => setTimeout(r, ms)),
    // Each way a summarizer callback can fail.
    failures: {
      throws: () => { throw new Error("callback exploded"); },
      rejects: async () => { throw new Error("provider said no"); },
      "returns an empty string": async () => "   ",
      "returns a number": async () => 42,
      "returns undefined": async () => undefined,
      "returns { text: null }": async () => ({ text: null }),
      "never settles (timeout)": () => new Promise(() => {}),
    },
  };
  // Unhandled rejections in the page (a scenario reads and clears them).
  window.h.unhandled = [];
  addEventListener("unhandledrejection", (e) => window.h.unhandled.push(String(e.reason?.message ?? e.reason)));
  document.documentElement.dataset.ready = "true";
</script>`;

for (const engine of ENGINES) {
  describe(engine, () => {
    let server;
    let browser;
    let page;
    let mock;
    let problems = []; // page errors and console errors
    let expected = []; // console errors a test expects (regexps)

    function watch(p) {
      p.onProblem((problem) => problems.push(problem));
    }

    before(async () => {
      mock = createMockLlm({ prefix: "/llm" });
      server = await startServer({
        port: 0,
        handlers: [
          mock.handle,
          pageHandler("/compactor.html", PAGE),
          async (req, res, url) => {
            if (url.pathname !== "/fixtures/pi-large-session.jsonl") return false;
            const body = await readFile(LARGE_SESSION);
            res.writeHead(200, { "content-type": "application/jsonl; charset=utf-8", "content-length": body.length });
            res.end(body);
            return true;
          },
        ],
      });
      browser = await launch(engine);
      page = await browser.newPage();
      watch(page);
      await page.goto(`${server.url}compactor.html`);
      try {
        await page.waitForFunction(() => document.documentElement.dataset.ready === "true", null, { timeout: 10_000 });
      } catch (e) {
        throw new Error(`the test page did not load /pkg/index.js (is pkg/ built?): ${problems.join("; ") || e.message}`);
      }
    });

    after(async () => {
      await browser?.close();
      await server?.close();
    });

    beforeEach(() => {
      problems = [];
      expected = [];
      mock.reset();
    });

    afterEach(async () => {
      // let errors from the test's last tasks arrive before looking
      await page.evaluate(() => new Promise((r) => setTimeout(r, 10)));
      const unexpected = problems.filter((p) => !expected.some((re) => re.test(p)));
      assert.deepEqual(unexpected, [], "page errors or console errors");
    });

    // What each failure's error says after the prefix (pi 0.73's "Compaction failed: ").
    const FAILURE_MESSAGES = {
      throws: "callback exploded",
      rejects: "provider said no",
      "returns an empty string": "the summarizer returned an empty summary",
      "returns a number": "the summarizer returned a number, not a string or { text }",
      "returns undefined": "the summarizer returned undefined, not a string or { text }",
      "returns { text: null }": "the summarizer returned an object whose text is null, not a string",
      "never settles (timeout)": "the summarizer did not answer within 50 ms",
    };
    const TIMEOUT_MS = 50;

    test("without a summarizer the compaction summarizes extractively; with one, the app's summary is used", async () => {
      const r = await page.evaluate(async () => {
        const m = await import("/pkg/index.js");
        const h = window.h;
        const out = {};
        const own = await new m.Compactor({ ...h.OPTIONS, summarize: async () => "## Goal\nthe app's own summary" }).compact(h.conversation(20));
        out.ownSummary = own.summarizedBy;
        const first = await new m.Compactor(h.OPTIONS).compact(h.conversation(20));
        const second = await new m.Compactor(h.OPTIONS).compact(h.conversation(20, 4000, "task"));
        out.by = [first.summarizedBy, second.summarizedBy];
        out.goal = second.summary.summary.split("\n").slice(0, 2).join(" / ");
        return out;
      });
      assert.equal(r.ownSummary, "summarizer");
      assert.deepEqual(r.by, ["extractive", "extractive"]);
      assert.match(r.goal, /^## Goal \/ - task 0: u+/);
    });

    describe("a failing summarizer callback changes nothing", () => {
      for (const [kind, detail] of Object.entries(FAILURE_MESSAGES)) {
        test(`the callback ${kind}: rejected, array untouched, no summary, compaction_end carries the error, next call works`, async () => {
          const r = await page.evaluate(
            async ([kind, timeoutMs]) => {
              const m = await import("/pkg/index.js");
              const h = window.h;
              const messages = h.conversation(20);
              const snap = h.snapshot(messages);
              const events = [];
              const requests = [];
              let behaviour = h.failures[kind];
              let c;
              c = new m.Compactor({
                ...h.OPTIONS,
                ...(kind.startsWith("never settles") ? { summarizeTimeoutMs: timeoutMs } : {}),
                summarize: (req) => {
                  requests.push(req);
                  return behaviour(req);
                },
                onEvent: (e) => events.push(h.event(e, c)),
              });
              const running = c.compact(messages);
              const compactingRightAway = c.isCompacting;
              const failed = await h.settle(running);
              const afterFailure = {
                ...h.check(messages, snap),
                isCompacting: c.isCompacting,
                calls: requests.length,
                // the compactor cancels its signal when a compaction fails
                signalAborted: requests[0]?.signal.aborted,
                signalReason: requests[0]?.signal.reason?.name,
              };
              const failureEvents = events.splice(0);
              // The same compactor, once its summarizer works again.
              behaviour = async (req) => "## Goal\nrecovered " + req.kind;
              const next = await h.settle(c.compact(messages));
              return {
                compactingRightAway,
                failed,
                afterFailure,
                failureEvents,
                next: next.ok
                  ? {
                      ok: true,
                      summary: next.value.summary.summary,
                      summarizedBy: next.value.summarizedBy,
                      ...h.checkResult(next.value, messages),
                    }
                  : next,
                nextEvents: events.map((e) => [e.type, e.aborted, e.hasResult, e.errorMessage ?? null]),
                afterNext: { ...h.check(messages, snap), isCompacting: c.isCompacting },
              };
            },
            [kind, TIMEOUT_MS],
          );
          const message = `Compaction failed: ${detail}`;
          assert.equal(r.compactingRightAway, true, "isCompacting is true as soon as compact returns");
          assert.equal(r.failed.ok, false, "compact rejected");
          assert.equal(r.failed.error.isError, true);
          assert.equal(r.failed.error.message, message);
          assert.deepEqual(r.afterFailure, {
            sameLength: true,
            sameElements: true,
            summaries: 0,
            isCompacting: false,
            calls: 1,
            signalAborted: true,
            signalReason: kind.startsWith("never settles") ? "TimeoutError" : "AbortError",
          });
          assert.deepEqual(r.failureEvents, [
            { type: "compaction_start", reason: "manual", aborted: undefined, willRetry: undefined, errorMessage: undefined, hasResult: false, isCompacting: true },
            { type: "compaction_end", reason: "manual", aborted: false, willRetry: false, errorMessage: message, hasResult: false, isCompacting: undefined },
          ]);
          assert.deepEqual(r.next, {
            ok: true,
            summary: "## Goal\nrecovered history",
            summarizedBy: "summarizer",
            insertedAt: true,
            length: true,
            othersSame: true,
            summaries: 1,
          });
          assert.deepEqual(r.nextEvents, [
            ["compaction_start", undefined, false, null],
            ["compaction_end", false, true, null],
          ]);
          assert.deepEqual(r.afterNext, { sameLength: true, sameElements: true, summaries: 0, isCompacting: false });
        });
      }

      test("automatic reasons carry pi's prefixes; willRetry is reported false on failure", async () => {
        const r = await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const h = window.h;
          const out = [];
          for (const reason of ["threshold", "overflow"]) {
            const events = [];
            const messages = h.conversation(20);
            const snap = h.snapshot(messages);
            const c = new m.Compactor({ ...h.OPTIONS, summarize: h.failures.rejects, onEvent: (e) => events.push(h.event(e)) });
            const failed = await h.settle(c.compact(messages, { reason, willRetry: true }));
            out.push({ reason, failed, events, ...h.check(messages, snap), isCompacting: c.isCompacting });
          }
          return out;
        });
        for (const [i, [reason, prefix]] of [["threshold", "Auto-compaction failed: "], ["overflow", "Context overflow recovery failed: "]].entries()) {
          const x = r[i];
          assert.equal(x.reason, reason);
          assert.equal(x.failed.error.message, `${prefix}provider said no`);
          assert.deepEqual(x.events.map((e) => [e.type, e.reason]), [["compaction_start", reason], ["compaction_end", reason]]);
          assert.equal(x.events[1].errorMessage, `${prefix}provider said no`);
          assert.equal(x.events[1].willRetry, false);
          assert.equal(x.events[1].aborted, false);
          assert.deepEqual([x.sameLength, x.sameElements, x.summaries, x.isCompacting], [true, true, 0, false]);
        }
      });
    });

    describe('fallback: "extractive"', () => {
      for (const [kind, detail] of Object.entries(FAILURE_MESSAGES)) {
        test(`the callback ${kind}: an extractive summary, summarizedBy "extractive", fallbackReason`, async () => {
          const r = await page.evaluate(
            async ([kind, timeoutMs]) => {
              const m = await import("/pkg/index.js");
              const h = window.h;
              const messages = h.conversation(20);
              const snap = h.snapshot(messages);
              const events = [];
              const raw = [];
              let c;
              c = new m.Compactor({
                ...h.OPTIONS,
                summarizeTimeoutMs: timeoutMs,
                fallback: "extractive",
                summarize: h.failures[kind],
                onEvent: (e) => {
                  raw.push(e);
                  events.push(h.event(e, c));
                },
              });
              const started = performance.now();
              const done = await h.settle(c.compact(messages));
              const elapsed = performance.now() - started;
              if (!done.ok) return { done };
              const out = done.value;
              return {
                done: { ok: true },
                elapsed,
                summarizedBy: out.summarizedBy,
                fallbackReason: out.fallbackReason,
                role: out.summary.role,
                text: out.summary.summary,
                maxChars: Math.floor(0.8 * 8000) * 4,
                tokensSmaller: out.tokensAfter < out.tokensBefore,
                ...h.checkResult(out, messages),
                caller: h.check(messages, snap),
                events: events.map((e) => [e.type, e.aborted, e.errorMessage ?? null]),
                endResultIsOut: raw.at(-1).result === out,
                isCompacting: c.isCompacting,
              };
            },
            [kind, TIMEOUT_MS],
          );
          assert.equal(r.done.ok, true, JSON.stringify(r.done.error));
          assert.equal(r.summarizedBy, "extractive");
          assert.equal(r.fallbackReason, detail);
          assert.equal(r.role, "compactionSummary");
          assert.ok(r.text.startsWith("## Goal\n"), r.text.slice(0, 80));
          assert.ok(r.text.includes("request 0: "), "the first request is in the extractive summary");
          assert.ok(r.text.length <= r.maxChars, `${r.text.length} chars`);
          assert.equal(r.tokensSmaller, true);
          assert.deepEqual([r.insertedAt, r.length, r.othersSame, r.summaries], [true, true, true, 1]);
          assert.deepEqual(r.caller, { sameLength: true, sameElements: true, summaries: 0 });
          assert.deepEqual(r.events, [["compaction_start", undefined, null], ["compaction_end", false, null]]);
          assert.equal(r.endResultIsOut, true);
          assert.equal(r.isCompacting, false);
          if (kind.startsWith("never settles")) assert.ok(r.elapsed < 2000, `timed out after ${r.elapsed} ms`);
        });
      }
    });

    describe("cancellation is not a failure: aborted, no fallback, nothing inserted", () => {
      // `how`: "abort()" | "signal"; `summarizer`: "honours the signal" | "ignores the signal"
      const cancel = ([how, summarizer]) =>
        page.evaluate(
          async ([how, summarizer]) => {
            const m = await import("/pkg/index.js");
            const h = window.h;
            const messages = h.conversation(20);
            const snap = h.snapshot(messages);
            const events = [];
            const requests = [];
            let called;
            const calledOnce = new Promise((r) => (called = r));
            let behaviour =
              summarizer === "honours the signal"
                ? ({ signal }) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
                : () => new Promise(() => {});
            let c;
            c = new m.Compactor({
              ...h.OPTIONS,
              fallback: "extractive", // must not be used: a cancellation is not a failure
              summarize: (req) => {
                requests.push(req);
                called();
                return behaviour(req);
              },
              onEvent: (e) => events.push(h.event(e, c)),
            });
            const controller = new AbortController();
            h.unhandled.length = 0;
            const running = c.compact(messages, { signal: controller.signal });
            await calledOnce;
            const compactingWhileWaiting = c.isCompacting;
            const started = performance.now();
            if (how === "abort()") c.abort();
            else controller.abort();
            const cancelled = await h.settle(running);
            const elapsed = performance.now() - started;
            await h.tick(20); // nothing more happens later
            const result = {
              compactingWhileWaiting,
              cancelled,
              elapsed,
              ...h.check(messages, snap),
              isCompacting: c.isCompacting,
              signalAborted: requests[0].signal.aborted,
              calls: requests.length,
              events: events.splice(0),
              unhandled: h.unhandled.splice(0),
            };
            behaviour = async () => "## Goal\nafter the cancel";
            const next = await h.settle(c.compact(messages));
            result.next = next.ok
              ? { ok: true, summary: next.value.summary.summary, summarizedBy: next.value.summarizedBy, ...h.checkResult(next.value, messages) }
              : next;
            result.nextEvents = events.map((e) => [e.type, e.aborted ?? null]);
            return result;
          },
          [how, summarizer],
        );

      const assertCancelled = (r) => {
        assert.equal(r.compactingWhileWaiting, true);
        assert.equal(r.cancelled.ok, false, "compact rejected");
        assert.equal(r.cancelled.error.name, "AbortError");
        assert.ok(r.elapsed < 1000, `cancelled after ${r.elapsed} ms`);
        assert.deepEqual([r.sameLength, r.sameElements, r.summaries], [true, true, 0], "the caller's array is untouched");
        assert.equal(r.isCompacting, false);
        assert.equal(r.signalAborted, true, "the summarizer's signal is aborted");
        assert.equal(r.calls, 1);
        assert.deepEqual(r.unhandled, []);
        assert.deepEqual(r.events, [
          { type: "compaction_start", reason: "manual", aborted: undefined, willRetry: undefined, errorMessage: undefined, hasResult: false, isCompacting: true },
          { type: "compaction_end", reason: "manual", aborted: true, willRetry: false, errorMessage: undefined, hasResult: false, isCompacting: undefined },
        ]);
        assert.deepEqual(r.next, {
          ok: true,
          summary: "## Goal\nafter the cancel",
          summarizedBy: "summarizer",
          insertedAt: true,
          length: true,
          othersSame: true,
          summaries: 1,
        });
        assert.deepEqual(r.nextEvents, [["compaction_start", null], ["compaction_end", false]]);
      };

      test("compactor.abort() while the summarizer waits on its signal", async () => {
        assertCancelled(await cancel(["abort()", "honours the signal"]));
      });

      test("the caller's AbortSignal aborts while the summarizer waits on its signal", async () => {
        assertCancelled(await cancel(["signal", "honours the signal"]));
      });

      test("a summarizer that never settles (and ignores its signal) is cut off by abort()", async () => {
        assertCancelled(await cancel(["abort()", "ignores the signal"]));
      });

      test("a summarizer that never settles (and ignores its signal) is cut off by the caller's signal", async () => {
        assertCancelled(await cancel(["signal", "ignores the signal"]));
      });

      test("a summarizer that resolves after abort(), or in the same task just before it: nothing inserted", async () => {
        const r = await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const h = window.h;
          const out = {};
          for (const order of ["resolve after abort()", "resolve, then abort() in the same task"]) {
            const messages = h.conversation(20);
            const snap = h.snapshot(messages);
            const events = [];
            let resolveLate;
            let called;
            const calledOnce = new Promise((r) => (called = r));
            const c = new m.Compactor({
              ...h.OPTIONS,
              fallback: "extractive",
              summarize: () => {
                called();
                return new Promise((r) => (resolveLate = r));
              },
              onEvent: (e) => events.push(h.event(e)),
            });
            const running = c.compact(messages);
            await calledOnce;
            if (order === "resolve after abort()") {
              c.abort();
              resolveLate("## Goal\ntoo late");
            } else {
              resolveLate("## Goal\ntoo late");
              c.abort();
            }
            const settled = await h.settle(running);
            await h.tick(20);
            out[order] = {
              settled: settled.ok ? { ok: true, summary: settled.value?.summary?.summary } : settled,
              ...h.check(messages, snap),
              isCompacting: c.isCompacting,
              events: events.map((e) => [e.type, e.aborted ?? null, e.hasResult, e.errorMessage ?? null]),
            };
          }
          return out;
        });
        for (const [order, x] of Object.entries(r)) {
          assert.equal(x.settled.ok, false, `${order}: compact rejected (got ${JSON.stringify(x.settled)})`);
          assert.equal(x.settled.error.name, "AbortError", order);
          assert.deepEqual([x.sameLength, x.sameElements, x.summaries, x.isCompacting], [true, true, 0, false], order);
          assert.deepEqual(x.events, [["compaction_start", null, false, null], ["compaction_end", true, false, null]], order);
        }
      });

      for (const config of ["summarizer", "openAiSummarizer (fetch)", "extractive default"]) {
        test(`a signal already aborted when compact is called (${config}): rejected as aborted, nothing inserted`, async () => {
          const x = await page.evaluate(async (config) => {
            const m = await import("/pkg/index.js");
            const h = window.h;
            const messages = h.conversation(20);
            const snap = h.snapshot(messages);
            const events = [];
            const c = new m.Compactor({
              ...h.OPTIONS,
              ...(config === "summarizer"
                ? { summarize: ({ signal }) => (signal.aborted ? Promise.reject(signal.reason) : Promise.resolve("## Goal\nran anyway")) }
                : config.startsWith("openAiSummarizer")
                  ? { summarize: m.openAiSummarizer({ baseUrl: "/llm", model: "mock-model" }) }
                  : {}),
              onEvent: (e) => events.push(h.event(e)),
            });
            h.unhandled.length = 0;
            const settled = await h.settle(c.compact(messages, { signal: AbortSignal.abort() }));
            await h.tick(20);
            return {
              unhandled: h.unhandled.splice(0),
              settled: settled.ok ? { ok: true, summarizedBy: settled.value?.summarizedBy } : settled,
              ...h.check(messages, snap),
              isCompacting: c.isCompacting,
              events: events.map((e) => [e.type, e.aborted ?? null, e.hasResult]),
            };
          }, config);
          assert.equal(x.settled.ok, false, `${config}: compact with an aborted signal should reject, got ${JSON.stringify(x.settled)}`);
          assert.equal(x.settled.error.name, "AbortError", config);
          assert.deepEqual([x.sameLength, x.sameElements, x.summaries, x.isCompacting], [true, true, 0, false], config);
          assert.deepEqual(x.events, [["compaction_start", null, false], ["compaction_end", true, false]], config);
          if (config.startsWith("openAiSummarizer")) assert.equal(mock.requests.length, 0, "no request left the page");
          assert.deepEqual(x.unhandled, [], `${config}: the summarizer's rejection was left unhandled`);
        });
      }
    });

    describe("one compaction at a time; callbacks may call back in", () => {
      test("a second compact while one runs is rejected at once (no events, no second call); the first completes", async () => {
        const r = await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const h = window.h;
          const messages = h.conversation(20);
          const other = h.conversation(20, 4000, "other");
          const events = [];
          let calls = 0;
          let release;
          let called;
          const calledOnce = new Promise((r) => (called = r));
          const c = new m.Compactor({
            ...h.OPTIONS,
            summarize: () => {
              calls++;
              called();
              return calls === 1 ? new Promise((r) => (release = r)) : "## Goal\nthird";
            },
            onEvent: (e) => events.push(h.event(e)),
          });
          const first = c.compact(messages);
          const secondSameArray = await h.settle(c.compact(messages));
          await calledOnce;
          const secondOtherArray = await h.settle(c.compact(other, { reason: "threshold" }));
          const eventsWhileRunning = events.map((e) => e.type);
          const compactingWhileRunning = c.isCompacting;
          release("## Goal\nfirst");
          const done = await h.settle(first);
          const callsBeforeThird = calls;
          const third = await h.settle(c.compact(other));
          return {
            secondSameArray,
            secondOtherArray,
            eventsWhileRunning,
            compactingWhileRunning,
            first: done.ok ? { ok: true, summary: done.value.summary.summary, ...h.checkResult(done.value, messages) } : done,
            callsBeforeThird,
            third: third.ok ? { ok: true, summary: third.value.summary.summary } : third,
            events: events.map((e) => [e.type, e.reason]),
            isCompacting: c.isCompacting,
          };
        });
        const busy = "a compaction is already running: wait for it to end, or abort() it";
        assert.equal(r.secondSameArray.ok, false);
        assert.equal(r.secondSameArray.error.message, busy);
        assert.equal(r.secondOtherArray.ok, false);
        assert.equal(r.secondOtherArray.error.message, busy);
        assert.deepEqual(r.eventsWhileRunning, ["compaction_start"]);
        assert.equal(r.compactingWhileRunning, true);
        assert.deepEqual(r.first, { ok: true, summary: "## Goal\nfirst", insertedAt: true, length: true, othersSame: true, summaries: 1 });
        assert.equal(r.callsBeforeThird, 1, "the rejected calls never reached the summarizer");
        assert.deepEqual(r.third, { ok: true, summary: "## Goal\nthird" }, "the compactor is free again");
        assert.deepEqual(r.events, [
          ["compaction_start", "manual"],
          ["compaction_end", "manual"],
          ["compaction_start", "manual"],
          ["compaction_end", "manual"],
        ]);
        assert.equal(r.isCompacting, false);
      });

      test("onEvent and the summarizer call back into the compactor: reads work, compact is refused while running, a compact started in compaction_end runs", async () => {
        const r = await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const h = window.h;
          const messages = h.conversation(20);
          const snap = h.snapshot(messages);
          const log = [];
          let c;
          let nested;
          let ends = 0;
          const reads = () => ({
            isCompacting: c.isCompacting,
            tokens: c.contextTokens(messages),
            needs: c.needsCompaction(messages),
            window: c.contextWindow,
            reserve: c.settings.reserveTokens,
            estimate: c.contextTokenEstimate(messages).tokens,
          });
          const pending = [];
          c = new m.Compactor({
            ...h.OPTIONS,
            summarize: async (req) => {
              log.push({ where: "summarize", ...reads() });
              const again = await h.settle(c.compact(messages));
              log.push({ where: "compact from summarize", ok: again.ok, message: again.error?.message });
              return "## Goal\nS" + (ends + 1);
            },
            onEvent: (e) => {
              const entry = { where: e.type, ...reads() };
              log.push(entry);
              if (e.type === "compaction_start") {
                // compact from the start handler: refused, without breaking the running one
                pending.push(h.settle(c.compact(messages)).then((x) => log.push({ where: "compact from compaction_start", ok: x.ok, message: x.error?.message })));
              }
              if (e.type === "compaction_end" && ++ends === 1) {
                // the first compaction has ended: a new one may start from its end handler
                nested = c.compact(messages);
              }
            },
          });
          const tokensBefore = c.contextTokens(messages);
          const first = await h.settle(c.compact(messages));
          const second = await h.settle(nested);
          await Promise.all(pending);
          return {
            tokensBefore,
            first: first.ok ? { ok: true, summary: first.value.summary.summary, ...h.checkResult(first.value, messages) } : first,
            second: second.ok ? { ok: true, summary: second.value.summary.summary, ...h.checkResult(second.value, messages) } : second,
            log,
            caller: h.check(messages, snap),
            isCompacting: c.isCompacting,
          };
        });
        assert.deepEqual(r.first, { ok: true, summary: "## Goal\nS1", insertedAt: true, length: true, othersSame: true, summaries: 1 });
        assert.deepEqual(r.second, { ok: true, summary: "## Goal\nS2", insertedAt: true, length: true, othersSame: true, summaries: 1 });
        assert.deepEqual(r.caller, { sameLength: true, sameElements: true, summaries: 0 });
        assert.equal(r.isCompacting, false);
        const busy = "a compaction is already running: wait for it to end, or abort() it";
        const where = r.log.map((e) => e.where);
        // Each compaction: start, summarize, the refused compact from summarize, end; the
        // second one started from the first one's end handler. (The refusal of the compact
        // called in the start handler is logged when its promise settles, so it is counted
        // apart.)
        const fromStart = "compact from compaction_start";
        const once = ["compaction_start", "summarize", "compact from summarize", "compaction_end"];
        assert.deepEqual(where.filter((w) => w !== fromStart), [...once, ...once]);
        assert.equal(where.filter((w) => w === fromStart).length, 2);
        for (const e of r.log) {
          if (e.where.startsWith("compact from")) {
            assert.deepEqual([e.ok, e.message], [false, busy], e.where);
            continue;
          }
          // reads inside handlers and the callback work and agree with a read from outside
          assert.equal(e.tokens, r.tokensBefore, e.where);
          assert.equal(e.estimate, r.tokensBefore, e.where);
          assert.equal(e.needs, false, e.where); // 40k tokens < 100k - 8k
          assert.equal(e.window, 100_000);
          assert.equal(e.reserve, 8000);
          if (e.where !== "compaction_end") assert.equal(e.isCompacting, true, e.where);
        }
      });

      test("a summarizer that calls abort() itself, then rejects as fetch would: aborted, nothing inserted, no unhandled rejection", async () => {
        const x = await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const h = window.h;
          const messages = h.conversation(20);
          const snap = h.snapshot(messages);
          const events = [];
          let c;
          c = new m.Compactor({
            ...h.OPTIONS,
            fallback: "extractive",
            summarize: ({ signal }) => {
              c.abort(); // e.g. a "stop" button handled inside the app's summarizer
              return Promise.reject(signal.reason);
            },
            onEvent: (e) => events.push(h.event(e)),
          });
          h.unhandled.length = 0;
          const settled = await h.settle(c.compact(messages));
          await h.tick(20);
          return {
            unhandled: h.unhandled.splice(0),
            settled: settled.ok ? { ok: true, summarizedBy: settled.value?.summarizedBy } : settled,
            ...h.check(messages, snap),
            isCompacting: c.isCompacting,
            events: events.map((e) => [e.type, e.aborted ?? null, e.hasResult]),
          };
        });
        assert.equal(x.settled.ok, false, `got ${JSON.stringify(x.settled)}`);
        assert.equal(x.settled.error.name, "AbortError");
        assert.deepEqual([x.sameLength, x.sameElements, x.summaries, x.isCompacting], [true, true, 0, false]);
        assert.deepEqual(x.events, [["compaction_start", null, false], ["compaction_end", true, false]]);
        assert.deepEqual(x.unhandled, [], "the summarizer's rejection was left unhandled");
      });

      for (const config of ["summarizer", "extractive default"]) {
        test(`abort() from the compaction_start handler cancels (${config}): rejected as aborted, nothing inserted`, async () => {
          const x = await page.evaluate(async (config) => {
            const m = await import("/pkg/index.js");
            const h = window.h;
            const messages = h.conversation(20);
            const snap = h.snapshot(messages);
            const events = [];
            let c;
            c = new m.Compactor({
              ...h.OPTIONS,
              ...(config === "summarizer"
                ? { summarize: ({ signal }) => new Promise((_, reject) => {
                    if (signal.aborted) reject(signal.reason);
                    signal.addEventListener("abort", () => reject(signal.reason));
                  }) }
                : {}),
              onEvent: (e) => {
                events.push(h.event(e, c));
                if (e.type === "compaction_start") c.abort();
              },
            });
            h.unhandled.length = 0;
            const settled = await h.settle(c.compact(messages));
            await h.tick(20);
            return {
              unhandled: h.unhandled.splice(0),
              settled: settled.ok ? { ok: true, summarizedBy: settled.value?.summarizedBy } : settled,
              ...h.check(messages, snap),
              isCompacting: c.isCompacting,
              events: events.map((e) => [e.type, e.aborted ?? null, e.hasResult, e.isCompacting]),
            };
          }, config);
          assert.equal(x.settled.ok, false, `${config}: abort() during compaction_start should cancel, got ${JSON.stringify(x.settled)}`);
          assert.equal(x.settled.error.name, "AbortError", config);
          assert.deepEqual([x.sameLength, x.sameElements, x.summaries, x.isCompacting], [true, true, 0, false], config);
          assert.deepEqual(x.events, [["compaction_start", null, false, true], ["compaction_end", true, false, undefined]], config);
          assert.deepEqual(x.unhandled, [], `${config}: the summarizer's rejection was left unhandled`);
        });
      }
    });

    describe("the real fetch summarizer, on the page's own origin", () => {
      test("openAiSummarizer → mock LLM at /llm: the request it received, the summary and usage inserted", async () => {
        const r = await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const h = window.h;
          const messages = h.conversation(20);
          const snap = h.snapshot(messages);
          const asked = [];
          const events = [];
          const real = m.openAiSummarizer({ baseUrl: "/llm", model: "mock-model" });
          const c = new m.Compactor({
            ...h.OPTIONS,
            summarize: (req) => {
              asked.push({ kind: req.kind, systemPrompt: req.systemPrompt, prompt: req.prompt, maxTokens: req.maxTokens });
              return real(req);
            },
            onEvent: (e) => events.push(h.event(e)),
          });
          const prep = m.prepareCompaction(messages, { keepRecentTokens: 10_000 });
          const conversation = m.serializeConversation(m.convertToLlm(prep.messagesToSummarize));
          const done = await h.settle(c.compact(messages, { customInstructions: "the parser bug" }));
          if (!done.ok) return { done };
          const out = done.value;
          return {
            done: { ok: true },
            asked,
            conversation,
            firstKeptIndex: prep.firstKeptIndex,
            out: {
              summary: out.summary.summary,
              usage: out.summary.usage,
              summarizedBy: out.summarizedBy,
              firstKeptIndex: out.firstKeptIndex,
              tokensSmaller: out.tokensAfter < out.tokensBefore,
              ...h.checkResult(out, messages),
            },
            caller: h.check(messages, snap),
            events: events.map((e) => [e.type, e.aborted ?? null, e.hasResult]),
            isCompacting: c.isCompacting,
          };
        });
        assert.equal(r.done.ok, true, JSON.stringify(r.done.error));
        // What the compactor asked its summarizer for
        assert.equal(r.asked.length, 1);
        const [ask] = r.asked;
        assert.equal(ask.kind, "history");
        assert.equal(ask.maxTokens, Math.floor(0.8 * 8000));
        assert.match(ask.systemPrompt, /do not continue it/);
        assert.ok(r.conversation.includes("[User]: request 0: "), "the serialized conversation holds the first request");
        assert.ok(ask.prompt.startsWith(`<conversation>\n${r.conversation}\n</conversation>\n\n`));
        assert.ok(ask.prompt.endsWith("\n\nAdditional focus: the parser bug"));
        // What the mock received
        assert.equal(mock.requests.length, 1);
        const [sent] = mock.requests;
        assert.equal(sent.method, "POST");
        assert.equal(sent.path, "/llm/chat/completions");
        assert.equal(sent.headers.authorization, undefined, "no API key in the page");
        assert.deepEqual(sent.body, {
          model: "mock-model",
          messages: [
            { role: "system", content: ask.systemPrompt },
            { role: "user", content: ask.prompt },
          ],
          max_tokens: Math.floor(0.8 * 8000),
          stream: false,
        });
        assert.ok(sent.body.messages[1].content.includes("<conversation>\n[User]: request 0: "));
        // What was inserted
        const cached = MOCK_USAGE.openai.prompt_tokens_details.cached_tokens;
        assert.deepEqual(r.out, {
          summary: MOCK_SUMMARY,
          usage: {
            input: MOCK_USAGE.openai.prompt_tokens - cached,
            output: MOCK_USAGE.openai.completion_tokens,
            cacheRead: cached,
            cacheWrite: 0,
            totalTokens: MOCK_USAGE.openai.total_tokens,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
          },
          summarizedBy: "summarizer",
          firstKeptIndex: r.firstKeptIndex,
          tokensSmaller: true,
          insertedAt: true,
          length: true,
          othersSame: true,
          summaries: 1,
        });
        assert.deepEqual(r.caller, { sameLength: true, sameElements: true, summaries: 0 });
        assert.deepEqual(r.events, [["compaction_start", null, false], ["compaction_end", false, true]]);
        assert.equal(r.isCompacting, false);
      });

      test("a provider error (HTTP 429) through fetch: rejected with the provider's message, nothing inserted", async () => {
        expected.push(/status of 429/);
        mock.setMode("error429");
        const r = await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const h = window.h;
          const messages = h.conversation(20);
          const snap = h.snapshot(messages);
          const events = [];
          const c = new m.Compactor({ ...h.OPTIONS, summarize: m.openAiSummarizer({ baseUrl: "/llm", model: "mock-model" }), onEvent: (e) => events.push(h.event(e)) });
          const failed = await h.settle(c.compact(messages));
          return { failed, ...h.check(messages, snap), isCompacting: c.isCompacting, events: events.map((e) => [e.type, e.aborted ?? null, e.errorMessage ?? null]) };
        });
        const providerMessage = PROVIDER_ERRORS.openai[429].error.message;
        assert.equal(r.failed.ok, false);
        assert.ok(r.failed.error.message.startsWith("Compaction failed: "), r.failed.error.message);
        assert.ok(r.failed.error.message.includes("429"), r.failed.error.message);
        assert.ok(r.failed.error.message.includes(providerMessage), r.failed.error.message);
        assert.deepEqual([r.sameLength, r.sameElements, r.summaries, r.isCompacting], [true, true, 0, false]);
        assert.deepEqual(r.events, [["compaction_start", null, null], ["compaction_end", false, r.failed.error.message]]);
        assert.equal(mock.requests.length, 1);
      });

      test("a hung provider: abort() cancels the fetch itself; a timeout with fallback gives the extractive summary", async () => {
        mock.setMode("hang");
        // abort(): start in the page, wait for the request to reach the mock, then abort.
        await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const h = window.h;
          const messages = h.conversation(20);
          const events = [];
          const c = new m.Compactor({ ...h.OPTIONS, fallback: "extractive", summarize: m.openAiSummarizer({ baseUrl: "/llm", model: "mock-model" }), onEvent: (e) => events.push(h.event(e)) });
          window.hung = { c, messages, snap: h.snapshot(messages), events, running: h.settle(c.compact(messages)) };
        });
        const [record] = await mock.waitForRequests(1);
        const aborted = await page.evaluate(async () => {
          const { c, messages, snap, events, running } = window.hung;
          const h = window.h;
          const compacting = c.isCompacting;
          c.abort();
          const settled = await running;
          delete window.hung;
          return { compacting, settled, ...h.check(messages, snap), isCompacting: c.isCompacting, events: events.map((e) => [e.type, e.aborted ?? null]) };
        });
        await record.closed;
        assert.equal(record.aborted, true, "the browser closed the hung request");
        assert.equal(aborted.compacting, true);
        assert.equal(aborted.settled.ok, false);
        assert.equal(aborted.settled.error.name, "AbortError");
        assert.deepEqual([aborted.sameLength, aborted.sameElements, aborted.summaries, aborted.isCompacting], [true, true, 0, false]);
        assert.deepEqual(aborted.events, [["compaction_start", null], ["compaction_end", true]]);

        // timeout + fallback
        const timed = await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const h = window.h;
          const messages = h.conversation(20);
          const snap = h.snapshot(messages);
          const c = new m.Compactor({ ...h.OPTIONS, summarizeTimeoutMs: 300, fallback: "extractive", summarize: m.openAiSummarizer({ baseUrl: "/llm", model: "mock-model" }) });
          const done = await h.settle(c.compact(messages));
          if (!done.ok) return { done };
          return { done: { ok: true }, summarizedBy: done.value.summarizedBy, fallbackReason: done.value.fallbackReason, goal: done.value.summary.summary.startsWith("## Goal\n"), ...h.checkResult(done.value, messages), caller: h.check(messages, snap) };
        });
        assert.equal(timed.done.ok, true, JSON.stringify(timed.done.error));
        assert.equal(timed.summarizedBy, "extractive");
        assert.equal(timed.fallbackReason, "the summarizer did not answer within 300 ms");
        assert.equal(timed.goal, true);
        assert.deepEqual([timed.insertedAt, timed.othersSame, timed.summaries], [true, true, 1]);
        assert.deepEqual(timed.caller, { sameLength: true, sameElements: true, summaries: 0 });
        assert.equal(mock.requests.length, 2);
        await mock.requests[1].closed;
        assert.equal(mock.requests[1].aborted, true, "the timed-out request was cancelled");
      });
    });

    describe("memory", () => {
      test("100 compactions of the large session (extractive default), undone in between: the wasm heap stays within 2× of its size after the first", async (t) => {
        const r = await page.evaluate(async () => {
          const m = await import("/pkg/index.js");
          const { initSync } = await import("/pkg/agent_compaction.js");
          const exports = initSync(); // the already-instantiated exports
          const sameExports = initSync() === exports;
          const text = await (await fetch("/fixtures/pi-large-session.jsonl")).text();
          const large = text
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l))
            .filter((e) => e.type === "message")
            .map((e) => e.message);
          const c = new m.Compactor({ contextWindow: 200_000 });
          const tokensOriginal = c.contextTokens(large);
          const started = performance.now();
          let messages = large;
          let first;
          let afterFirst;
          let out;
          let undoneIdentical = 0;
          let sameSummary = 0;
          let summarizedBy = new Set();
          for (let i = 0; i < 100; i++) {
            out = await c.compact(messages);
            summarizedBy.add(out.summarizedBy);
            if (i === 0) {
              first = out;
              afterFirst = exports.memory.buffer.byteLength;
            }
            if (out.summary.summary === first.summary.summary && out.firstKeptIndex === first.firstKeptIndex) sameSummary++;
            messages = m.removeLastCompaction(out.messages);
            if (messages.length === large.length && messages.every((x, j) => x === large[j])) undoneIdentical++;
          }
          const afterHundredth = exports.memory.buffer.byteLength;
          return {
            count: large.length,
            sameExports,
            hasMemory: exports.memory instanceof WebAssembly.Memory,
            afterFirst,
            afterHundredth,
            elapsed: performance.now() - started,
            undoneIdentical,
            sameSummary,
            summarizedBy: [...summarizedBy],
            summaryChars: first.summary.summary.length,
            budgetChars: Math.floor(0.8 * 16384) * 4,
            modifiedFiles: first.summary.details.modifiedFiles.length,
            tokensSmaller: first.tokensAfter < first.tokensBefore,
            tokensBackAfterUndo: c.contextTokens(messages) === tokensOriginal,
          };
        });
        assert.ok(r.count > 500, `${r.count} messages`);
        assert.equal(r.sameExports, true);
        assert.equal(r.hasMemory, true);
        assert.deepEqual(r.summarizedBy, ["extractive"]);
        assert.equal(r.undoneIdentical, 100, "removeLastCompaction gave the original array back every time");
        assert.equal(r.sameSummary, 100, "the extractive summary is deterministic");
        assert.ok(r.summaryChars > 0 && r.summaryChars <= r.budgetChars, `${r.summaryChars} chars`);
        assert.ok(r.modifiedFiles > 0);
        assert.equal(r.tokensSmaller, true);
        assert.equal(r.tokensBackAfterUndo, true);
        assert.ok(
          r.afterHundredth <= 2 * r.afterFirst,
          `wasm heap ${r.afterFirst} bytes after the first compaction, ${r.afterHundredth} after the 100th`,
        );
        t.diagnostic(`heap ${r.afterFirst} → ${r.afterHundredth} bytes; 100 compactions in ${Math.round(r.elapsed)} ms`);
      });
    });
  });
}
