// Where the calibrated estimate's per-turn cost differs from pi's estimate,
// turn by turn: `node scripts/bench/per-turn-diff.mjs [pkg]` replays the
// bench's replays (REPLAYS=large,before,200k,1m; ROUNDS=) with our
// compactor twice per round, `estimator: "pi"` and `"calibrated"`, in
// alternating order in one process, and prints per replay: both totals of
// the per-turn medians and their ratio (what the bench's calibrated table
// shows), the excess split by kind of turn (inserts a summary, reads
// texts, other), and the turns with the largest excess, with what the
// calibrated side read on them (an untimed pass that wraps
// `TextEncoder.prototype.encodeInto` after the timed rounds: bytes encoded
// to be classified, `gatherTexts`, and to tighten a bound, `gatherTextBytes`;
// NO_READS=1 skips it).
// A measurement tool (where the per-turn totals go), not a test.
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  loadFixture,
  perTurn,
  realSummaryText,
  repeatedMessages,
  replay,
  syntheticTurns,
  timedHooks,
} from "./sessions.mjs";

const dir = process.argv[2] ?? "pkg";
const ROUNDS = Number(process.env.ROUNDS ?? 9);
const TOP = Number(process.env.TOP ?? 12);
const M = await import(pathToFileURL(path.resolve(dir, "node.js")).href);

const large = loadFixture("pi-large-session.jsonl");
const before = loadFixture("pi-before-compaction.jsonl");
const synthetic = repeatedMessages([large, before], 10_000);
const settings = M.resolveSettings({});
const cutAt = (flat) => M.prepareCompaction(flat, settings).firstKeptIndex;
const picked = (process.env.REPLAYS ?? "large,before,200k,1m").split(",");
const all = {
  large: () => ["fixture pi-large-session", large.turns, 200_000],
  before: () => ["fixture pi-before-compaction", before.turns, 200_000],
  "200k": () => ["200k", syntheticTurns(synthetic, 300, { cutAt, summaryText: realSummaryText() }).turns, 200_000],
  "1m": () => ["1M", syntheticTurns(synthetic, 3000, { cutAt, summaryText: realSummaryText() }).turns, 1_000_000],
};

const timed = (turns, window, estimator) => timedHooks(M, turns, window, estimator);

// What the calibrated side encodes per turn (untimed).
async function reads(turns, window) {
  const proto = TextEncoder.prototype;
  const original = proto.encodeInto;
  const out = turns.map(() => ({ classified: 0, tightened: 0 }));
  let turn = 0;
  proto.encodeInto = function (s, into) {
    const r = original.call(this, s, into);
    const stack = new Error().stack ?? "";
    if (stack.includes("gatherTextBytes")) out[turn].tightened += r.written;
    else if (stack.includes("gatherTexts")) out[turn].classified += r.written;
    return r;
  };
  try {
    const c = new M.Compactor({ contextWindow: window, estimator: "calibrated" });
    const hooks = c.agentHooks();
    await replay(turns, async (messages, _s, t) => {
      turn = t;
      await hooks.convertToLlm(await hooks.transformContext(messages));
      c.needsCompaction(messages);
    });
    c.free();
  } finally {
    proto.encodeInto = original;
  }
  return out;
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const ms = (ns) => (ns / 1e6).toFixed(2);
const us = (ns) => (ns / 1e3).toFixed(1);

for (const key of picked) {
  const [name, turns, window] = all[key]();
  const sides = { pi: [], calibrated: [] };
  await timed(turns, window, "pi");
  await timed(turns, window, "calibrated");
  for (let r = 0; r < ROUNDS; r++) {
    for (const est of r % 2 ? ["calibrated", "pi"] : ["pi", "calibrated"]) sides[est].push(await timed(turns, window, est));
  }
  // After the timed rounds: wrapping `encodeInto` disturbs what follows.
  const read = process.env.NO_READS ? turns.map(() => ({ classified: 0, tightened: 0 })) : await reads(turns, window);
  const pi = perTurn(sides.pi);
  const cal = perTurn(sides.calibrated);
  const diff = Float64Array.from(cal, (v, t) => v - pi[t]);
  const kind = (t) => (turns[t].insert ? "insert" : read[t].classified ? "classifies" : read[t].tightened ? "tightens" : "other");
  const byKind = {};
  diff.forEach((d, t) => {
    const k = (byKind[kind(t)] ??= { n: 0, pi: 0, cal: 0 });
    k.n++;
    k.pi += pi[t];
    k.cal += cal[t];
  });
  console.log(`\n## ${name}: ${turns.length} turns, ${ROUNDS} rounds`);
  console.log(`total pi ${ms(sum(pi))} ms, calibrated ${ms(sum(cal))} ms, ratio ${(sum(cal) / sum(pi)).toFixed(3)}; excess ${ms(sum(cal) - sum(pi))} ms`);
  for (const [k, v] of Object.entries(byKind))
    console.log(`  ${k}: ${v.n} turns, pi ${ms(v.pi)} ms, calibrated ${ms(v.cal)} ms, excess ${ms(v.cal - v.pi)} ms`);
  const order = [...diff.keys()].sort((a, b) => diff[b] - diff[a]).slice(0, TOP);
  console.log("  largest excess: turn, kind, role, pi / calibrated µs, bytes classified / tightened");
  for (const t of order) {
    const m = turns[t].message;
    console.log(`  ${t} ${kind(t)} ${m.role} ${us(pi[t])} / ${us(cal[t])} ${read[t].classified} / ${read[t].tightened}`);
  }
}
