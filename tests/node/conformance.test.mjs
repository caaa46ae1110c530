// Conformance with pi 0.73.1 (SPEC.md §2, "pi-compatible on the flat
// array"): every pure function compared with pi's own, on the two real
// sessions of fixtures/ (with the fixtures README's reference
// numbers), on generated sessions (fixed seeds) and on a table of real
// provider error texts for isContextOverflow.
//
// The full run, with more sessions, is `node scripts/conformance.mjs`.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import * as lib from "agent-compaction";
import { generateOddSession, generateSession, toPiEntries } from "../conformance/generator.mjs";
import {
  compareJsValueTable,
  compareOverflowTable,
  compareSession,
  formatMismatch,
  FUNCTIONS,
  hasSerializeConversation,
  loadFixture,
  loadPi,
  OVERFLOW_ERROR_TEXTS,
  pathToFlat,
} from "../conformance/compare.mjs";

const pi = await loadPi();
// Every comparison below runs: the shared comparison code skips
// serialization only when the export is missing, which must fail here.
assert.ok(hasSerializeConversation(lib), "agent-compaction exports serializeConversation");

function assertNoMismatch(m) {
  if (m) assert.fail(formatMismatch(m));
}

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const sortedSet = (s) => [...s].sort();

/** Ours on `flat` vs pi on the real (migrated) file entries. */
function assertPreparationMatchesFile(flat, path, keepRecentTokens) {
  const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens };
  const ours = lib.prepareCompaction(flat, settings);
  const theirs = pi.prepareCompaction(path, { ...settings });
  const toFlat = pathToFlat(path, flat);
  const piEmpty = !theirs || (theirs.messagesToSummarize.length === 0 && theirs.turnPrefixMessages.length === 0);
  assert.equal(ours === undefined, piEmpty, "ours is undefined exactly when pi has nothing to summarize");
  if (!ours) return { ours, theirs };
  assert.equal(ours.firstKeptIndex, toFlat(path.findIndex((e) => e.id === theirs.firstKeptEntryId)), "firstKeptIndex");
  assert.equal(ours.isSplitTurn, theirs.isSplitTurn, "isSplitTurn");
  assert.equal(ours.tokensBefore, theirs.tokensBefore, "tokensBefore");
  assert.equal(ours.previousSummary, theirs.previousSummary, "previousSummary");
  assert.deepStrictEqual(
    ours.fileOps,
    { read: sortedSet(theirs.fileOps.read), written: sortedSet(theirs.fileOps.written), edited: sortedSet(theirs.fileOps.edited) },
    "fileOps",
  );
  for (const list of ["messagesToSummarize", "turnPrefixMessages"]) {
    assert.equal(ours[list].length, theirs[list].length, `${list}.length`);
    ours[list].forEach((m, i) => assert.ok(m === theirs[list][i], `${list}[${i}] is pi's very object`));
  }
  for (const list of ["messagesToSummarize", "turnPrefixMessages"]) {
    assert.equal(
      lib.serializeConversation(lib.convertToLlm(ours[list])),
      pi.serializeConversation(pi.convertToLlm(theirs[list])),
      `serializeConversation(convertToLlm(${list}))`,
    );
  }
  return { ours, theirs };
}

/** Cut points: ours on `flat` vs pi on the real file entries. */
function assertCutPointsMatchFile(flat, flatStart, path, pathStart, budgets) {
  const toFlat = pathToFlat(path, flat);
  for (const keep of budgets) {
    const ours = lib.findCutPoint(flat, flatStart, flat.length, keep);
    const theirs = pi.findCutPoint(path, pathStart, path.length, keep);
    assert.deepStrictEqual(
      { firstKeptIndex: ours.firstKeptIndex, turnStartIndex: ours.turnStartIndex, isSplitTurn: ours.isSplitTurn },
      { firstKeptIndex: toFlat(theirs.firstKeptEntryIndex), turnStartIndex: toFlat(theirs.turnStartIndex), isSplitTurn: theirs.isSplitTurn },
      `findCutPoint with keepRecentTokens ${keep}`,
    );
  }
}

/** pi's LLM context for the file vs transformContext on the flat array. */
function assertContextMatchesFile(flat, path) {
  const ours = lib.transformContext(flat);
  const theirs = pi.buildSessionContext(path).messages;
  assert.equal(ours.length, theirs.length, "context length");
  theirs.forEach((m, i) => {
    if (m.role === "compactionSummary") {
      assert.equal(ours[i].role, "compactionSummary");
      assert.deepStrictEqual(
        { summary: ours[i].summary, tokensBefore: ours[i].tokensBefore, timestamp: ours[i].timestamp },
        { summary: m.summary, tokensBefore: m.tokensBefore, timestamp: m.timestamp },
        `context[${i}] (summary)`,
      );
    } else {
      assert.ok(ours[i] === m, `context[${i}] is the very same message`);
    }
  });
  return { ours, theirs };
}

const CUT_BUDGETS = [0, 1, 1000, 5000, 20_000, 50_000, 100_000, 150_000, 1_000_000_000];

describe("fixture pi-large-session.jsonl", () => {
  const { path, messages: flat } = loadFixture(pi, "pi-large-session.jsonl");

  test("914 messages, 124,661 summed estimates (README), each estimate as pi's", () => {
    assert.equal(flat.length, 914);
    const ours = flat.map((m) => lib.estimateTokens(m));
    const theirs = flat.map((m) => pi.estimateTokens(m));
    ours.forEach((t, i) => assert.equal(t, theirs[i], `estimateTokens(messages[${i}])`));
    assert.equal(sum(ours), 124_661);
  });

  test("LLM context: pi's buildSessionContext gives the same 914 messages as transformContext", () => {
    const { ours } = assertContextMatchesFile(flat, path);
    assert.equal(ours.length, 914);
  });

  test("a new compaction with keepRecentTokens 20000: tokensBefore 177,657 (README), as pi's on the file", () => {
    const { ours, theirs } = assertPreparationMatchesFile(flat, path, 20_000);
    // pi: estimateContextTokens(buildSessionContext(pathEntries).messages).tokens,
    // here the last assistant's usage with nothing after it.
    assert.equal(ours.tokensBefore, 177_657);
    assert.equal(theirs.tokensBefore, 177_657);
    assert.deepStrictEqual(lib.estimateContextTokens(flat), pi.estimateContextTokens(flat));
  });

  test("preparation for several keepRecentTokens, as pi's on the file", () => {
    for (const keep of CUT_BUDGETS) assertPreparationMatchesFile(flat, path, keep);
  });

  test("cut points for several keepRecentTokens, as pi's on the file", () => {
    assertCutPointsMatchFile(flat, 0, path, 0, CUT_BUDGETS);
  });

  test("every function against pi on the flat array's entries", () => {
    assertNoMismatch(compareSession(lib, pi, flat, "fixture:pi-large-session"));
  });

  test("serializeConversation of the whole session as pi's", () => {
    const llm = pi.convertToLlm(flat);
    assert.equal(lib.serializeConversation(llm), pi.serializeConversation(llm));
    assert.equal(lib.serializeConversation(lib.convertToLlm(flat)), pi.serializeConversation(llm));
  });
});

describe("fixture pi-before-compaction.jsonl", () => {
  const { path, messages, withSummaries: flat, summaries } = loadFixture(pi, "pi-before-compaction.jsonl");

  test("992 messages with the two summaries, 377,413 summed estimates (README)", () => {
    assert.equal(messages.length, 990);
    assert.equal(summaries.length, 2);
    assert.equal(flat.length, 992);
    const ours = flat.map((m) => lib.estimateTokens(m));
    ours.forEach((t, i) => assert.equal(t, pi.estimateTokens(flat[i]), `estimateTokens(flat[${i}])`));
    assert.equal(sum(ours), 377_413);
    // pi's migrated session yields the same messages (summaries rebuilt from
    // the compaction entries), with the same sum.
    const yielded = path.flatMap((e) =>
      e.type === "message" ? [e.message] : e.type === "compaction" ? [{ role: "compactionSummary", summary: e.summary }] : [],
    );
    assert.equal(yielded.length, 992);
    assert.equal(sum(yielded.map((m) => pi.estimateTokens(m))), 377_413);
  });

  test("the summaries sit right before their first kept messages (firstKeptEntryIndex counts the header)", () => {
    for (const s of summaries) {
      const at = flat.findIndex((m) => m.role === "compactionSummary" && m.summary === s.summary);
      const kept = path.find((e) => e.id === s.firstKeptEntryId);
      assert.ok(kept && kept.type === "message", "pi's migration resolves it to a message entry");
      assert.ok(flat[at + 1] === kept.message, "the summary is right before pi's first kept message");
      assert.equal(kept.message.role, "user");
    }
  });

  test("LLM context: 446 messages, first the second summary, as pi's buildSessionContext", () => {
    const { ours } = assertContextMatchesFile(flat, path);
    assert.equal(ours.length, 446);
    assert.equal(ours[0].role, "compactionSummary");
    assert.equal(ours[0].summary, summaries[1].summary);
  });

  test("a new compaction with keepRecentTokens 20000: tokensBefore 180,820 (README), as pi's on the file", () => {
    const { ours, theirs } = assertPreparationMatchesFile(flat, path, 20_000);
    // pi: estimateContextTokens over [summary, kept messages, later messages]:
    // the last assistant's usage plus the estimates after it.
    assert.equal(ours.tokensBefore, 180_820);
    assert.equal(theirs.tokensBefore, 180_820);
    const context = lib.estimateContextTokens(lib.transformContext(flat));
    assert.equal(context.tokens, 180_820);
    assert.equal(context.usageTokens + context.trailingTokens, 180_820);
    assert.equal(ours.previousSummary, summaries[1].summary);
    // Re-compaction starts right after the previous summary.
    assert.ok(ours.messagesToSummarize[0] === flat[flat.indexOf(lib.transformContext(flat)[0]) + 1]);
  });

  test("preparation for several keepRecentTokens, as pi's on the file", () => {
    for (const keep of CUT_BUDGETS) assertPreparationMatchesFile(flat, path, keep);
  });

  test("cut points after the last summary for several keepRecentTokens, as pi's on the file", () => {
    const last = summaries[1];
    const pathStart = path.findIndex((e) => e.id === last.firstKeptEntryId);
    const flatStart = flat.findLastIndex((m) => m.role === "compactionSummary") + 1;
    assertCutPointsMatchFile(flat, flatStart, path, pathStart, CUT_BUDGETS);
  });

  test("every function against pi on the flat array's entries (with and without the summaries)", () => {
    assertNoMismatch(compareSession(lib, pi, flat, "fixture:pi-before-compaction"));
    assertNoMismatch(compareSession(lib, pi, messages, "fixture:pi-before-compaction (messages only)"));
  });

  test("serializeConversation of the whole session as pi's", () => {
    const llm = pi.convertToLlm(messages);
    assert.equal(lib.serializeConversation(llm), pi.serializeConversation(llm));
    assert.equal(lib.serializeConversation(lib.convertToLlm(messages)), pi.serializeConversation(llm));
  });
});

// ---------------------------------------------------------------------------
// Generated sessions
// ---------------------------------------------------------------------------

const FIRST_SEED = 1;
const SEEDS = 300;

describe(`generated sessions (seeds ${FIRST_SEED}–${FIRST_SEED + SEEDS - 1})`, () => {
  test("the generator is deterministic and its arrays map one entry per message", () => {
    for (const seed of [1, 2, 77]) {
      const a = generateSession(seed);
      const b = generateSession(seed);
      assert.ok(isDeepStrictEqual(a, b), `seed ${seed} gives the same session twice`);
      const entries = toPiEntries(a);
      assert.equal(entries.length, a.length);
      entries.forEach((e, i) => {
        if (e.type === "message") assert.ok(e.message === a[i]);
        if (e.type === "compaction") assert.equal(e.firstKeptEntryId, entries[i + 1]?.id);
      });
    }
  });

  const totals = {};
  for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed++) {
    test(`seed ${seed}`, () => {
      const flat = generateSession(seed);
      assertNoMismatch(compareSession(lib, pi, flat, seed, { stats: totals }));
    });
  }

  test("every function was compared", () => {
    for (const fn of FUNCTIONS) {
      assert.ok((totals[fn] ?? 0) > 0, `${fn} compared at least once`);
    }
  });
});

describe("generated sessions with odd but possible fields (seeds 1–200)", () => {
  // Where both throw (an absent usage), they agree: the wording differs on
  // purpose; where only ours throws, it is a mismatch.
  const agreeing = { ...lib };
  for (const name of FUNCTIONS) {
    const f = lib[name];
    if (typeof f !== "function") continue;
    agreeing[name] = (...args) => {
      try {
        return f(...args);
      } catch (error) {
        pi[name](...args);
        throw error;
      }
    };
  }
  for (let seed = 1; seed <= 200; seed++) {
    test(`seed ${seed}`, () => {
      assertNoMismatch(compareSession(agreeing, pi, generateOddSession(seed), `odd ${seed}`));
    });
  }
});

// ---------------------------------------------------------------------------
// isContextOverflow on real provider error texts
// ---------------------------------------------------------------------------

describe("isContextOverflow on provider error texts, as pi-ai's", () => {
  test("the table has a realistic text for every overflow pattern of pi-ai", () => {
    for (const pattern of pi.getOverflowPatterns()) {
      const hits = OVERFLOW_ERROR_TEXTS.filter(([kind, text]) => kind === "pattern" && pattern.test(text));
      assert.ok(hits.length > 0, `a text for ${pattern}`);
    }
    // Every "pattern" text is an overflow for pi, every exclusion is not.
    for (const [kind, text] of OVERFLOW_ERROR_TEXTS) {
      const m = { role: "assistant", stopReason: "error", errorMessage: text, usage: {} };
      if (kind === "pattern") assert.equal(pi.isContextOverflow(m), true, text);
      if (kind === "exclusion") assert.equal(pi.isContextOverflow(m), false, text);
    }
  });

  test("ours equals pi's on every case (error texts, stop reasons, windows, usage thresholds)", () => {
    const { cases, differences } = compareOverflowTable(lib, pi);
    assert.ok(cases > 1000);
    if (differences.length > 0) {
      assert.fail(`${differences.length} of ${cases} cases differ; first:\n${formatMismatch(differences[0])}`);
    }
  });
});

// ---------------------------------------------------------------------------
// JavaScript values JSON cannot hold (SPEC §2, "Exact JavaScript semantics")
// ---------------------------------------------------------------------------

describe("messages holding JavaScript values that JSON cannot hold, as pi takes them", () => {
  test("estimateTokens and serializeConversation equal pi's", () => {
    const { differences } = compareJsValueTable(lib, pi);
    if (differences.length > 0) {
      assert.fail(
        `${differences.length} case(s) differ from pi:\n` + differences.map((d) => formatMismatch(d)).join("\n"),
      );
    }
  });
});

// ---------------------------------------------------------------------------
// Usage numbers as pi's arithmetic takes them
// ---------------------------------------------------------------------------

describe("usage fields holding null (a NaN saved to a session file), as pi takes them", () => {
  const usage = { input: 100, output: 10, cacheRead: 5, cacheWrite: 0, totalTokens: 0 };
  const assistant = (u, stopReason = "stop") => ({ role: "assistant", content: [], usage: u, stopReason, timestamp: 1 });
  const cases = [
    ["input", { ...usage, input: null }],
    ["cacheRead", { ...usage, cacheRead: null }],
    ["cacheWrite", { ...usage, cacheWrite: null }],
    ["output", { ...usage, output: null }],
    ["totalTokens", { ...usage, totalTokens: null }],
  ];

  test("calculateContextTokens and estimateContextTokens count null as 0 in the sum", () => {
    for (const [field, u] of cases) {
      assert.equal(lib.calculateContextTokens(u), pi.calculateContextTokens(u), `calculateContextTokens, ${field}: null`);
      const messages = [{ role: "user", content: "hello", timestamp: 0 }, assistant(u)];
      assert.deepStrictEqual(lib.estimateContextTokens(messages), pi.estimateContextTokens(messages), `estimateContextTokens, ${field}: null`);
    }
    assert.equal(lib.calculateContextTokens({ ...usage, cacheRead: null }), 110);
  });

  test("isContextOverflow: a null input or cacheRead adds as 0, a null output is not zero output", () => {
    for (const [field, u] of cases) {
      for (const stop of ["stop", "length"]) {
        for (const window of [50, 104, 120]) {
          const m = assistant(stop === "length" ? { ...u, output: field === "output" ? null : 0 } : u, stop);
          assert.equal(lib.isContextOverflow(m, window), pi.isContextOverflow(m, window), `${stop}, ${field}: null, window ${window}`);
        }
      }
    }
  });
});
