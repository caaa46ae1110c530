// Compares the per-turn path of two builds of the package in one Node
// process (alternating rounds, median per turn over rounds), on the replays
// `npm run bench` uses: `node scripts/bench/per-turn-compare.mjs <pkgA> <pkgB>`
// (each a built package directory, e.g. pkg/ and a copy of an older build;
// REPLAYS= picks replays, ROUNDS= the rounds). Per build and estimator: the
// median turn, the sum of per-turn medians, and the median and least CPU
// time of a whole replay (the least: the round least disturbed by other
// processes).
// Used to check that a change (the calibrated estimate, for one) costs no
// more per turn; prints one line per replay and build, for both estimators
// where the build knows the option (a build from before it, once), with
// the median and total against the first line's and the bench's last ⅒ /
// first ⅒. A measurement tool, not a test.
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  loadFixture,
  median,
  perTurn,
  realSummaryText,
  repeatedMessages,
  syntheticTurns,
  tenths,
  timedHooks,
} from "./sessions.mjs";

const [dirA, dirB] = process.argv.slice(2);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const load = async (dir) => import(pathToFileURL(path.resolve(dir, "node.js")).href);
const A = await load(dirA);
const B = await load(dirB);

const large = loadFixture("pi-large-session.jsonl");
const before = loadFixture("pi-before-compaction.jsonl");
const synthetic = repeatedMessages([large, before], 10_000);
const settings = A.resolveSettings({});
const cutAt = (flat) => A.prepareCompaction(flat, settings).firstKeptIndex;
const s200k = syntheticTurns(synthetic, 300, { cutAt, summaryText: realSummaryText() });
const s1m = syntheticTurns(synthetic, 3000, { cutAt, summaryText: realSummaryText() });
// REPLAYS=large,before,200k,1m picks some (default: all four).
const picked = (process.env.REPLAYS ?? "large,before,200k,1m").split(",");
const replays = [
  ["large", "fixture pi-large-session", large.turns, 200_000],
  ["before", "fixture pi-before-compaction", before.turns, 200_000],
  ["200k", "10,000 messages, summary every 300 (200k)", s200k.turns, 200_000],
  ["1m", "10,000 messages, summary every 3,000 (1M)", s1m.turns, 1_000_000],
]
  .filter(([key]) => picked.includes(key))
  .map(([, ...rest]) => rest);

// Per turn, and the replay's CPU time (less disturbed than wall time by
// other processes on a shared machine): sessions.mjs's timedHooks.
const timed = timedHooks;

// A build from before the option (an older commit's, for one)
// ignores `estimator`: it is timed once, with its own default.
const accepts = (mod, estimator) => {
  try {
    new mod.Compactor({ contextWindow: 200_000, estimator }).free();
    return true;
  } catch {
    return false;
  }
};
const knowsEstimator = (mod) => accepts(mod, "pi") && !accepts(mod, "no such estimator");
const sides = [
  ...(knowsEstimator(A) ? [["A pi", A, "pi"], ["A calibrated", A, "calibrated"]] : [["A", A, undefined]]),
  ...(knowsEstimator(B) ? [["B pi", B, "pi"], ["B calibrated", B, "calibrated"]] : [["B", B, undefined]]),
];
// The bench's last ⅒ / first ⅒, with both tenths (µs).
const tenth = (per) => {
  const { first, last } = tenths(per);
  return `${(last / first).toFixed(2)} (${(first / 1000).toFixed(2)} → ${(last / 1000).toFixed(2)} µs)`;
};
for (const [name, turns, window] of replays) {
  const rounds = sides.map(() => []);
  for (const [, mod, est] of sides) await timed(mod, turns, window, est); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...sides.keys()].reverse() : [...sides.keys()];
    for (const k of order) rounds[k].push(await timed(sides[k][1], turns, window, sides[k][2]));
  }
  let first;
  for (const [k, [label]] of sides.entries()) {
    const per = perTurn(rounds[k]);
    const total = per.reduce((a, b) => a + b, 0);
    first ??= { median: median(per), total };
    const cpus = rounds[k].map((x) => x.cpu);
    const cpuText = `cpu per replay median ${(median(cpus) / 1000).toFixed(1)} ms, least ${(Math.min(...cpus) / 1000).toFixed(1)} ms`;
    const vs = k === 0 ? "" : ` (${(median(per) / first.median).toFixed(2)}× / ${(total / first.total).toFixed(2)}× the first)`;
    console.log(
      `${name} | ${label} | median ${(median(per) / 1000).toFixed(2)} µs | total ${(total / 1e6).toFixed(1)} ms${vs} | ⅒ ${tenth(per)} | ${cpuText}`,
    );
  }
}
