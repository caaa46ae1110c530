// `npm run bench`: the per-turn cost of keeping an agent's context, ours
// (agent-compaction's Compactor) against pi 0.73.1's functions, in one Node
// process. A program that prints numbers, not a test: it checks nothing but
// that both sides see the same context.
//
// Replays (sessions/turns built in scripts/bench/sessions.mjs):
//   - each pi fixture, message by message (the before-compaction fixture's
//     two compactions inserted as summaries, as a compaction inserts them);
//   - a 10,000-message session (the fixtures' messages repeated, fresh
//     timestamps) with a summary inserted every 300 messages (200k window)
//     and, separately, every 3,000 messages (1M window).
// Each turn appends one message (a new array, built outside the timed
// region, identically for both sides) and then runs the per-turn path:
//   pi:   ctx = slice from the last summary; convertToLlm(ctx);
//         shouldCompact(estimateContextTokens(ctx).tokens, window, settings)
//   ours: ctx = await hooks.transformContext(messages);
//         await hooks.convertToLlm(ctx); compactor.needsCompaction(messages)
// Both are async functions awaited per turn (the Agent awaits its hooks).
// Rounds alternate (pi then ours, ours then pi); each turn's cost is the
// median over rounds. Also: prepareCompaction + serialization per fixture,
// and the wasm heap's growth over the 10,000-message replay (child process,
// scripts/bench/memory.mjs). PER_TURN_ONLY=1 stops after these tables
// (without the SessionStore benchmark in browsers, the fidelity run, the
// history probes, the history search with the store in browsers and the
// session-cost run).
import { execFileSync } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import * as ours from "agent-compaction";
import {
  loadFixture,
  median,
  perTurn,
  realSummaryText,
  repeatedMessages,
  replay,
  syntheticTurns,
  tenths,
} from "./bench/sessions.mjs";

const piDist = new URL("../node_modules/@mariozechner/pi-coding-agent/dist/core/", import.meta.url);
const piCompaction = await import(new URL("compaction/compaction.js", piDist));
const piMessages = await import(new URL("messages.js", piDist));
const piUtils = await import(new URL("compaction/utils.js", piDist));

const ROUNDS = 7;
const PREP_RUNS = 20;
const SYNTHETIC_MESSAGES = 10_000;
const PI_SETTINGS = piCompaction.DEFAULT_COMPACTION_SETTINGS;
const OUR_SETTINGS = ours.resolveSettings({});
const log = (...a) => console.error(...a);
// Our hooks never reject: on an internal failure they return their input and
// report it here. Counted, so that a failure path is never timed unnoticed.
let hookErrors = 0;
// The comparison with pi uses pi's estimate ("pi": the same numbers, so the
// same decisions, checked below); the calibrated estimate (the default) is
// timed beside it in the same rounds, in its own table.
const newCompactor = (contextWindow, estimator = "pi") =>
  new ours.Compactor({
    contextWindow,
    estimator,
    onEvent: (e) => {
      if (e.type === "hook_error" && hookErrors++ === 0) log(`  ! hook error: ${e.error?.message}`);
    },
  });

// ---------------------------------------------------------------------------
// The per-turn paths.

/**
 * pi's per-turn path, as a pi-based app on the flat array runs it. The app
 * inserts summaries itself, so it tracks the last summary's index (given as
 * `summaryIndex`, maintained by the replay outside the timed region): the
 * cheapest reasonable way to find the context, no scan. Its hooks are async
 * functions, as `new Agent({ transformContext, convertToLlm })` takes them.
 */
function piTurn(contextWindow) {
  const transformContext = async (messages, summaryIndex) =>
    summaryIndex < 0 ? messages : messages.slice(summaryIndex);
  const convertToLlm = async (messages) => piMessages.convertToLlm(messages);
  return async (messages, summaryIndex) => {
    const ctx = await transformContext(messages, summaryIndex);
    const llm = await convertToLlm(ctx);
    const tokens = piCompaction.estimateContextTokens(ctx).tokens;
    const need = piCompaction.shouldCompact(tokens, contextWindow, PI_SETTINGS);
    return { ctx, llm, need };
  };
}

/** Ours: the compactor's hooks (as the Agent calls them) and its threshold check. */
function ourTurn(compactor) {
  const hooks = compactor.agentHooks();
  return async (messages) => {
    const ctx = await hooks.transformContext(messages);
    const llm = await hooks.convertToLlm(ctx);
    const need = compactor.needsCompaction(messages);
    return { ctx, llm, need };
  };
}

async function timedReplay(turns, turn) {
  const times = new Float64Array(turns.length);
  let sink = 0;
  await replay(turns, async (messages, summaryIndex, t) => {
    const t0 = process.hrtime.bigint();
    const r = await turn(messages, summaryIndex);
    times[t] = Number(process.hrtime.bigint() - t0);
    sink += r.llm.length + (r.need ? 1 : 0);
  });
  return { times, sink };
}

/** One untimed replay of both sides that checks they see the same context. */
async function checkedReplay(spec) {
  const pi = piTurn(spec.window);
  const compactor = newCompactor(spec.window);
  const our = ourTurn(compactor);
  const check = { mismatches: 0, needPi: 0, needOurs: 0, needDiffer: 0 };
  await replay(spec.turns, async (messages, summaryIndex, t) => {
    const a = await pi(messages, summaryIndex);
    const b = await our(messages, summaryIndex);
    const same =
      a.ctx.length === b.ctx.length &&
      a.ctx[0] === b.ctx[0] &&
      a.llm.length === b.llm.length &&
      a.llm.every((m, i) => m === b.llm[i] || (m.role === "user" && b.llm[i].role === "user" && m.timestamp === b.llm[i].timestamp));
    if (!same) {
      if (check.mismatches++ === 0) log(`  ! ${spec.name}: contexts differ at turn ${t} (pi ${a.llm.length}, ours ${b.llm.length})`);
    }
    if (a.need) check.needPi++;
    if (b.need) check.needOurs++;
    if (a.need !== b.need) check.needDiffer++;
  });
  compactor.free();
  return check;
}

// ---------------------------------------------------------------------------
// Statistics.

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const HEAVY_ARGS = 10_000;
const heavyToolCall = (m) =>
  m.role === "assistant" &&
  Array.isArray(m.content) &&
  m.content.reduce((n, b) => n + (b.type === "toolCall" ? JSON.stringify(b.arguments ?? {}).length : 0), 0) >= HEAVY_ARGS;

async function benchReplay(spec) {
  log(`replay ${spec.name}: ${spec.turns.length} turns, window ${spec.window}`);
  const check = await checkedReplay(spec); // also the warm-up
  // a second warm-up of each side
  await timedReplay(spec.turns, piTurn(spec.window));
  {
    const c = newCompactor(spec.window);
    await timedReplay(spec.turns, ourTurn(c));
    c.free();
  }
  {
    const c = newCompactor(spec.window, "calibrated");
    await timedReplay(spec.turns, ourTurn(c));
    c.free();
  }
  const piRounds = [];
  const ourRounds = [];
  const calibratedRounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const runPi = async () => piRounds.push((await timedReplay(spec.turns, piTurn(spec.window))).times);
    const runOurs = (estimator, rounds) => async () => {
      const c = newCompactor(spec.window, estimator);
      rounds.push((await timedReplay(spec.turns, ourTurn(c))).times);
      c.free();
    };
    const sides = [runPi, runOurs("pi", ourRounds), runOurs("calibrated", calibratedRounds)];
    for (const run of r % 2 === 0 ? sides : sides.reverse()) await run();
  }
  const pi = perTurn(piRounds);
  const our = perTurn(ourRounds);
  const calibrated = perTurn(calibratedRounds);
  const insertTurns = spec.turns.flatMap((t, i) => (t.insert ? [i] : []));
  // Where the totals go: turns that insert a summary, turns that append an
  // assistant message with >= 10,000 characters of tool-call arguments
  // (JSON), and the rest.
  const kinds = spec.turns.map((t) => (t.insert ? "insert" : heavyToolCall(t.message) ? "heavy" : "other"));
  const split = (xs) => {
    const out = { insert: { n: 0, total: 0 }, heavy: { n: 0, total: 0 }, other: { n: 0, total: 0 } };
    xs.forEach((v, i) => {
      out[kinds[i]].n++;
      out[kinds[i]].total += v;
    });
    return out;
  };
  return {
    ...spec,
    check,
    split: { pi: split(pi), ours: split(our) },
    pi: { median: median(pi), total: sum(pi), ...tenths(pi), inserts: median(insertTurns.map((i) => pi[i])) },
    ours: { median: median(our), total: sum(our), ...tenths(our), inserts: median(insertTurns.map((i) => our[i])) },
    calibrated: { median: median(calibrated), total: sum(calibrated), inserts: median(insertTurns.map((i) => calibrated[i])) },
    insertTurns: insertTurns.length,
  };
}

// ---------------------------------------------------------------------------
// prepareCompaction + serialization on each fixture.

function benchPrepare(fixture) {
  const messages = fixture.messages;
  const entries = fixture.piEntries; // built outside the timed region
  const runOurs = () => {
    const t0 = process.hrtime.bigint();
    const prep = ours.prepareCompaction(messages, OUR_SETTINGS);
    const t1 = process.hrtime.bigint();
    const text = ours.serializeConversation(ours.convertToLlm(prep.messagesToSummarize));
    const t2 = process.hrtime.bigint();
    return { prepare: Number(t1 - t0), serialize: Number(t2 - t1), prep, text };
  };
  const runPi = () => {
    const t0 = process.hrtime.bigint();
    const prep = piCompaction.prepareCompaction(entries, PI_SETTINGS);
    const t1 = process.hrtime.bigint();
    const text = piUtils.serializeConversation(piMessages.convertToLlm(prep.messagesToSummarize));
    const t2 = process.hrtime.bigint();
    return { prepare: Number(t1 - t0), serialize: Number(t2 - t1), prep, text };
  };
  const a = runPi();
  const b = runOurs();
  const same =
    a.text === b.text &&
    a.prep.messagesToSummarize.length === b.prep.messagesToSummarize.length &&
    a.prep.tokensBefore === b.prep.tokensBefore;
  if (!same) log(`  ! ${fixture.name}: prepareCompaction/serialization results differ`);
  for (let i = 0; i < 3; i++) runPi(), runOurs();
  const pi = [];
  const our = [];
  for (let i = 0; i < PREP_RUNS; i++) {
    if (i % 2 === 0) pi.push(runPi()), our.push(runOurs());
    else our.push(runOurs()), pi.push(runPi());
  }
  const stats = (rs) => ({
    total: median(rs.map((r) => r.prepare + r.serialize)),
    prepare: median(rs.map((r) => r.prepare)),
    serialize: median(rs.map((r) => r.serialize)),
  });
  return {
    name: fixture.name,
    messages: messages.length,
    summarized: b.prep.messagesToSummarize.length,
    chars: b.text.length,
    same,
    pi: stats(pi),
    ours: stats(our),
  };
}

// ---------------------------------------------------------------------------
// Memory: in fresh child processes, so that nothing else has grown the wasm
// memory first.

function benchMemory(schedules) {
  const script = fileURLToPath(new URL("./bench/memory.mjs", import.meta.url));
  const out = [];
  for (const s of schedules) {
    for (const k of [1, 8]) {
      const arg = JSON.stringify({ every: s.every, window: s.window, cuts: s.cuts, total: SYNTHETIC_MESSAGES, compactors: k });
      const text = execFileSync(process.execPath, ["--expose-gc", script, arg], { encoding: "utf8" });
      out.push({ name: s.name, ...JSON.parse(text) });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------

const started = performance.now();
const large = loadFixture("pi-large-session.jsonl");
const before = loadFixture("pi-before-compaction.jsonl");
const summaryText = realSummaryText();
const synthetic = repeatedMessages([large, before], SYNTHETIC_MESSAGES);
// Where a compaction would cut: our prepareCompaction's firstKeptIndex
// (pi-compatible; keeps the newest ~20k tokens). Computed once per replay.
const cutAt = (flat) => {
  const prep = ours.prepareCompaction(flat, OUR_SETTINGS);
  if (!prep) throw new Error("nothing to summarize");
  return prep.firstKeptIndex;
};
const s200k = syntheticTurns(synthetic, 300, { cutAt, summaryText });
const s1m = syntheticTurns(synthetic, 3000, { cutAt, summaryText });
const contextSizes = (turns) => {
  const sizes = [];
  let n = 0;
  let idx = -1;
  for (const t of turns) {
    if (t.insert) {
      n++;
      idx = t.insert.at <= idx ? idx + 1 : t.insert.at;
    }
    n++;
    sizes.push(idx < 0 ? n : n - idx);
  }
  return sizes;
};

const replays = [
  { name: "fixture pi-large-session", turns: large.turns, window: 200_000, ratioTarget: 1.0 },
  { name: "fixture pi-before-compaction", turns: before.turns, window: 200_000, ratioTarget: 1.0 },
  { name: "10,000 messages, summary every 300 (200k window)", turns: s200k.turns, window: 200_000, ratioTarget: 1.0 },
  { name: "10,000 messages, summary every 3,000 (1M window)", turns: s1m.turns, window: 1_000_000, ratioTarget: 0.5 },
];
for (const r of replays) {
  const sizes = contextSizes(r.turns);
  r.maxContext = Math.max(...sizes);
  r.finalMessages = r.turns.length + r.turns.filter((t) => t.insert).length;
}

const results = [];
for (const spec of replays) results.push(await benchReplay(spec));
log("prepareCompaction + serialization");
const prepResults = [large, before].map(benchPrepare);
log("memory (child processes)");
const memory = benchMemory([
  { name: "summary every 300 (200k)", every: 300, window: 200_000, cuts: s200k.cuts },
  { name: "summary every 3,000 (1M)", every: 3000, window: 1_000_000, cuts: s1m.cuts },
]);
const elapsed = (performance.now() - started) / 1000;

// ---------------------------------------------------------------------------
// Report (markdown on stdout; progress went to stderr).

const us = (ns) => `${(ns / 1000).toFixed(2)} µs`;
const ms = (ns) => `${(ns / 1e6).toFixed(1)} ms`;
const x = (v) => v.toFixed(2);
const yes = (ok) => (ok ? "yes" : "**no**");
const kb = (b) => `${(b / 1024).toFixed(0)} KB`;

const lines = [];
const p = (s = "") => lines.push(s);
const cpus = os.cpus();
p("### Performance");
p();
p(
  `Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: Node ${process.version} (V8 ${process.versions.v8}), ` +
    `${cpus[0]?.model ?? "unknown CPU"} × ${cpus.length}, ${os.platform()}/${os.arch()}. ` +
    `pi = \`@mariozechner/pi-coding-agent\` 0.73.1. ${ROUNDS} alternating rounds; run took ${elapsed.toFixed(0)} s.`,
);
p();
p("| replay / measurement | messages | median per turn, pi | median per turn, ours | total, pi | total, ours | ratio ours/pi | ours last ⅒ / first ⅒ | target | met? |");
p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |");
for (const r of results) {
  const ratio = r.ours.total / r.pi.total;
  const growth = r.ours.last / r.ours.first;
  const okRatio = ratio <= r.ratioTarget;
  const okGrowth = growth <= 1.5;
  p(
    `| ${r.name} | ${r.finalMessages.toLocaleString("en-US")} | ${us(r.pi.median)} | ${us(r.ours.median)} | ${ms(r.pi.total)} | ${ms(r.ours.total)} | ${x(ratio)} | ${x(growth)} | ratio ≤ ${r.ratioTarget.toFixed(1)}, ⅒ ≤ 1.5 | ${
      okRatio && okGrowth ? "yes" : `**no** (${[!okRatio && "ratio", !okGrowth && "⅒"].filter(Boolean).join(", ")})`
    } |`,
  );
}
for (const r of prepResults) {
  const ratio = r.ours.total / r.pi.total;
  p(
    `| prepareCompaction + serializeConversation(convertToLlm(…)), ${r.name} | ${r.messages.toLocaleString("en-US")} | ${us(r.pi.total)} (per run) | ${us(r.ours.total)} (per run) | — | — | ${x(ratio)} | — | ratio ≤ 2.0 | ${yes(ratio <= 2)} |`,
  );
}
for (const m of memory.filter((m) => m.compactors === 1)) {
  const k8 = memory.find((n) => n.name === m.name && n.compactors === 8);
  const per = Math.max(m.wasmGrowth, k8.wasmGrowth / 8);
  p(
    `| wasm heap growth over the 10,000-message replay, ${m.name} | ${m.messages.toLocaleString("en-US")} | — | ${kb(m.wasmGrowth)} (1 compactor); ${kb(k8.wasmGrowth / 8)} each (8) | — | — | — | — | ≤ 1 MB | ${yes(per <= 1024 * 1024)} |`,
  );
}
p();
p("How the numbers are measured:");
p();
p(
  "- **Per turn**: each replay appends one message per turn to a new array (`concat`, and a copy with the summary spliced in when a compaction inserts one), built outside the timed region and identical for both sides. " +
    "The timed region is one awaited async call: pi = `slice` from the last summary (its index tracked by the app, no scan) + `convertToLlm` + `estimateContextTokens` + `shouldCompact`; " +
    "ours = `await hooks.transformContext(messages)` + `await hooks.convertToLlm(ctx)` + `compactor.needsCompaction(messages)`, with `estimator: \"pi\"` (pi's numbers, so the same decisions; the calibrated default has its own table below). `process.hrtime.bigint()` around each turn.",
);
p(
  `- Each side runs ${ROUNDS} rounds, alternating which goes first, after two untimed warm-up replays (the first checks that both sides give the model the same messages); a fresh \`Compactor\` per replay. ` +
    "A turn's cost is its median over the rounds; *median per turn* is the median of those over the replay, *total* their sum (turns where a summary is inserted included), " +
    "*ratio* = total ours / total pi, *last ⅒ / first ⅒* = median per-turn cost over the last tenth of the turns / over the first tenth.",
);
p(
  "- The 10,000-message session repeats the two fixtures' messages (shallow copies, timestamps one second apart); a summary (a real 5 KB pi summary) is inserted where our `prepareCompaction` cuts (the newest ~20k tokens kept) " +
    "after every 300 (200k window) or 3,000 (1M window) messages. Settings are the defaults.",
);
p(
  `- **prepareCompaction + serialization**: pi's \`prepareCompaction(entries)\` (session entries built from the messages beforehand) + \`serializeConversation(convertToLlm(messagesToSummarize))\` against ours on the flat array; median of ${PREP_RUNS} runs each, alternating, after warm-up; both produce the same text.`,
);
p(
  "- **Memory**: a fresh Node process per measurement replays the 10,000-message session through the compactor's per-turn path; growth of the wasm linear memory (`initSync()` returns the instance's exports, whose `memory.buffer.byteLength` is read before the first `Compactor` and after the replay; it grows in 64 KB pages and never shrinks, so this is the high-water mark). " +
    "Once with one compactor, once with eight fed the same arrays (growth ÷ 8: start-up slack in the first pages amortized); *met?* uses the larger of the two.",
);
p();
p(`Details (hook errors reported by our compactors during the run: ${hookErrors}):`);
p();
p("| replay | largest context (messages) | pi first ⅒ / last ⅒ per turn | ours first ⅒ / last ⅒ per turn | pi last ⅒ / first ⅒ | summary insertions: median turn pi / ours | context check | threshold check: turns over (pi / ours) |");
p("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
for (const r of results) {
  p(
    `| ${r.name} | ${r.maxContext.toLocaleString("en-US")} | ${us(r.pi.first)} / ${us(r.pi.last)} | ${us(r.ours.first)} / ${us(r.ours.last)} | ${x(r.pi.last / r.pi.first)} | ${
      r.insertTurns ? `${r.insertTurns}× — ${us(r.pi.inserts)} / ${us(r.ours.inserts)}` : "none"
    } | ${r.check.mismatches === 0 ? "same messages" : `**${r.check.mismatches} turns differ**`} | ${r.check.needPi} / ${r.check.needOurs} |`,
  );
}
p();
p(`Where the totals go (sum of per-turn medians; *heavy* = a turn appending an assistant message with ≥ ${HEAVY_ARGS.toLocaleString("en-US")} characters of tool-call arguments as JSON):`);
p();
p("| replay | summary insertions: n, pi / ours | heavy turns: n, pi / ours | other turns: n, pi / ours | other turns: ratio ours/pi |");
p("| --- | ---: | ---: | ---: | ---: |");
for (const r of results) {
  const cell = (k) => `${r.split.pi[k].n} — ${ms(r.split.pi[k].total)} / ${ms(r.split.ours[k].total)}`;
  p(`| ${r.name} | ${cell("insert")} | ${cell("heavy")} | ${cell("other")} | ${x(r.split.ours.other.total / r.split.pi.other.total)} |`);
}
p();
p(
  'The calibrated estimate (`estimator: "calibrated"`, the default) against pi\'s (`"pi"`, the columns above), ours both, in the same rounds. ' +
    "It reads a message's text only when the bounds leave a decision open: bounds from lengths first (2.1 tokens per code unit; tool-call arguments 1.115 per byte of their size bound), then, largest first, bounds from the texts' UTF-8 lengths (1.115 tokens per byte: the texts encoded, not classified), and only then the largest are read (classified) until the threshold check is settled. After a summary the app inserts itself every kept message is unmeasured, so that is where it shows:",
);
p();
p("| replay | median per turn, pi's estimate / calibrated | total, pi's estimate / calibrated | total ratio | summary insertions: median turn, pi's estimate / calibrated |");
p("| --- | ---: | ---: | ---: | ---: |");
for (const r of results) {
  p(
    `| ${r.name} | ${us(r.ours.median)} / ${us(r.calibrated.median)} | ${ms(r.ours.total)} / ${ms(r.calibrated.total)} | ${x(r.calibrated.total / r.ours.total)} | ${
      r.insertTurns ? `${us(r.ours.inserts)} / ${us(r.calibrated.inserts)}` : "none"
    } |`,
  );
}
p();
p("| prepareCompaction fixture | messages summarized | serialized chars | pi prepare / serialize | ours prepare / serialize |");
p("| --- | ---: | ---: | ---: | ---: |");
for (const r of prepResults) {
  p(`| ${r.name} | ${r.summarized} | ${r.chars.toLocaleString("en-US")} | ${us(r.pi.prepare)} / ${us(r.pi.serialize)} | ${us(r.ours.prepare)} / ${us(r.ours.serialize)} |`);
}
p();
p("| memory | compactors | wasm memory before → after | wasm growth per compactor | externref table growth (slots) | JS heap retained per compactor |");
p("| --- | ---: | ---: | ---: | ---: | ---: |");
for (const m of memory) {
  p(
    `| ${m.name} | ${m.compactors} | ${kb(m.wasmBefore)} → ${kb(m.wasmAfter)} | ${kb(m.wasmGrowth / m.compactors)} | ${m.externrefGrowth} | ${kb(m.jsRetained / m.compactors)} |`,
  );
}
p();
p("(JS heap retained = `heapUsed` after GC with the compactors alive minus after `free()` and GC, the messages alive in both: their own copies of the arrays. `heapUsed` is noisy by ~100 KB, so the one-compactor figure is rough.)");
console.log(lines.join("\n"));

// PER_TURN_ONLY=1: the tables above only (no browsers, no fidelity run).
if (process.env.PER_TURN_ONLY === "1") process.exit(0);

// The SessionStore benchmark, in Chromium, Firefox and WebKit (scripts/bench/store.mjs; ENGINES= narrows it).
log("SessionStore in each engine");
const { runStoreBench } = await import("./bench/store.mjs");
console.log(`\n${await runStoreBench()}`);

// What the model still sees after ten compactions (scripts/bench/fidelity.mjs).
log("fidelity");
const { runFidelityBench } = await import("./bench/fidelity.mjs");
console.log();
await runFidelityBench();

// What a search of the history finds after those compactions, and how fast (scripts/bench/history-probe.mjs).
log("history probes");
const { runHistoryProbeBench } = await import("./bench/history-probe.mjs");
await runHistoryProbeBench();

// The same search with the SessionStore in each engine, and its index's size (scripts/bench/history-store.mjs; ENGINES=, SIZES=).
log("history search with the SessionStore in each engine");
const { runHistoryStoreBench } = await import("./bench/history-store.mjs");
console.log(`\n${await runHistoryStoreBench()}`);

// What a long session costs the user with a caching provider (scripts/bench/session-cost.mjs).
log("session cost");
const { runSessionCostBench } = await import("./bench/session-cost.mjs");
console.log();
await runSessionCostBench();
