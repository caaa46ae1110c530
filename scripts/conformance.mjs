// The full conformance run against pi 0.73.1 (SPEC.md §2):
//
//   node scripts/conformance.mjs [--sessions N] [--seed S] [--max-messages M] [--stop]
//
// Compares every pure function of agent-compaction with pi's own on the two
// real sessions of fixtures/ (with the fixtures README's reference
// numbers), on the table of provider error texts for isContextOverflow, and
// on N generated sessions (seeds S … S+N-1; default 1,000 sessions from seed
// 1). Prints a summary table and, for each function that differs, the seed
// and the first differing message; exits non-zero on any mismatch.
// `--stop` stops at the first mismatch. Run `node scripts/build.mjs` first.

import * as lib from "agent-compaction";
import { generateSession } from "../tests/conformance/generator.mjs";
import {
  compareJsValueTable,
  compareOverflowTable,
  compareSession,
  FUNCTIONS,
  formatMismatch,
  hasSerializeConversation,
  loadFixture,
  loadPi,
} from "../tests/conformance/compare.mjs";

function parseArgs(argv) {
  const args = { sessions: 1000, seed: 1, maxMessages: undefined, stop: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || !/^\d+$/.test(v)) {
        console.error(`${a} needs a non-negative integer`);
        process.exit(2);
      }
      return Number(v);
    };
    if (a === "--sessions") args.sessions = value();
    else if (a === "--seed") args.seed = value();
    else if (a === "--max-messages") args.maxMessages = value();
    else if (a === "--stop") args.stop = true;
    else if (a === "--help" || a === "-h") {
      console.log("usage: node scripts/conformance.mjs [--sessions N] [--seed S] [--max-messages M] [--stop]");
      process.exit(0);
    } else {
      console.error(`unknown argument ${a}`);
      process.exit(2);
    }
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const pi = await loadPi();
const started = performance.now();
const stats = {};
const timings = {};
const mismatches = []; // first mismatch per function
const mismatchCount = {};
const all = []; // every mismatch, for the one-line list
const record = (m) => {
  all.push(m);
  mismatchCount[m.fn] = (mismatchCount[m.fn] ?? 0) + 1;
  if (!mismatches.some((x) => x.fn === m.fn)) mismatches.push(m);
};
const checks = []; // reference numbers: [what, expected, ours, pi]

// -- Fixtures -----------------------------------------------------------------
let fixtureMessages = 0;
{
  const t0 = performance.now();
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  const large = loadFixture(pi, "pi-large-session.jsonl");
  const before = loadFixture(pi, "pi-before-compaction.jsonl");
  const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };
  checks.push(
    ["large-session: messages", 914, large.messages.length, large.path.filter((e) => e.type === "message").length],
    ["large-session: Σ estimates", 124_661, sum(large.messages.map(lib.estimateTokens)), sum(large.messages.map(pi.estimateTokens))],
    ["large-session: LLM context", 914, lib.transformContext(large.messages).length, pi.buildSessionContext(large.path).messages.length],
    ["large-session: tokensBefore (keep 20000)", 177_657, lib.prepareCompaction(large.messages, settings)?.tokensBefore, pi.prepareCompaction(large.path, settings)?.tokensBefore],
    ["before-compaction: messages + summaries", 992, before.withSummaries.length, before.path.filter((e) => e.type === "message" || e.type === "compaction").length],
    [
      "before-compaction: Σ estimates",
      377_413,
      sum(before.withSummaries.map(lib.estimateTokens)),
      sum(before.path.map((e) => (e.type === "message" ? pi.estimateTokens(e.message) : e.type === "compaction" ? pi.estimateTokens({ role: "compactionSummary", summary: e.summary }) : 0))),
    ],
    ["before-compaction: LLM context", 446, lib.transformContext(before.withSummaries).length, pi.buildSessionContext(before.path).messages.length],
    ["before-compaction: tokensBefore (keep 20000)", 180_820, lib.prepareCompaction(before.withSummaries, settings)?.tokensBefore, pi.prepareCompaction(before.path, settings)?.tokensBefore],
  );
  for (const [name, flat] of [
    ["fixture:pi-large-session", large.messages],
    ["fixture:pi-before-compaction", before.withSummaries],
    ["fixture:pi-before-compaction (messages only)", before.messages],
  ]) {
    fixtureMessages += flat.length;
    const m = compareSession(lib, pi, flat, name, { stats, timings });
    if (m) record(m);
  }
  timings["(fixtures, total)"] = performance.now() - t0;
}

// -- The overflow table -------------------------------------------------------
const overflow = compareOverflowTable(lib, pi);
stats["isContextOverflow"] = (stats["isContextOverflow"] ?? 0) + overflow.cases;
for (const d of overflow.differences) record(d);
const jsValues = compareJsValueTable(lib, pi, stats);
for (const d of jsValues.differences) record(d);

// -- Generated sessions -------------------------------------------------------
let generatedMessages = 0;
let sessionsRun = 0;
const failedSeeds = [];
const tGen = performance.now();
for (let seed = args.seed; seed < args.seed + args.sessions; seed++) {
  const flat = generateSession(seed, args.maxMessages === undefined ? {} : { maxMessages: args.maxMessages });
  generatedMessages += flat.length;
  sessionsRun++;
  const m = compareSession(lib, pi, flat, seed, { stats, timings });
  if (m) {
    record(m);
    failedSeeds.push(seed);
    if (args.stop) break;
  }
  if (sessionsRun % 250 === 0) process.stderr.write(`  … ${sessionsRun} sessions\n`);
}
const generatedMs = performance.now() - tGen;
const totalMs = performance.now() - started;

// -- Report -------------------------------------------------------------------
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log("\nagent-compaction vs pi 0.73.1 — conformance\n");
console.log("Reference numbers (fixtures README):");
let referenceFailures = 0;
for (const [what, expected, ours, theirs] of checks) {
  const ok = ours === expected && theirs === expected;
  if (!ok) referenceFailures++;
  console.log(`  ${ok ? "ok  " : "FAIL"} ${pad(what, 46)} expected ${lpad(expected.toLocaleString("en-US"), 8)}  ours ${lpad(ours?.toLocaleString("en-US"), 8)}  pi ${lpad(theirs?.toLocaleString("en-US"), 8)}`);
}
console.log("");
console.log(`Sessions: ${sessionsRun} generated (seeds ${args.seed}–${args.seed + sessionsRun - 1}, ${generatedMessages.toLocaleString("en-US")} messages) + 3 fixture arrays (${fixtureMessages.toLocaleString("en-US")} messages) + ${overflow.cases.toLocaleString("en-US")} isContextOverflow table cases + ${jsValues.cases} JavaScript-value cases`);
if (!hasSerializeConversation(lib)) {
  console.log("serializeConversation: SKIPPED — not exported by agent-compaction yet (compared as soon as it is)");
}
console.log("");
console.log(`  ${pad("function", 40)} ${lpad("comparisons", 12)} ${lpad("mismatches", 11)}`);
for (const fn of FUNCTIONS) {
  const n = stats[fn] ?? 0;
  const bad = mismatchCount[fn] ?? 0;
  console.log(`  ${pad(fn, 40)} ${lpad(n.toLocaleString("en-US"), 12)} ${lpad(bad, 11)}`);
}
console.log("");
console.log("Time (ms) by section (both libraries):");
for (const [section, ms] of Object.entries(timings)) console.log(`  ${pad(section, 58)} ${lpad(ms.toFixed(0), 8)}`);
console.log(`  ${pad("generated sessions (incl. generation)", 58)} ${lpad(generatedMs.toFixed(0), 8)}`);
console.log(`  ${pad("total", 58)} ${lpad(totalMs.toFixed(0), 8)}`);

const totalMismatches = Object.values(mismatchCount).reduce((a, b) => a + b, 0);
if (totalMismatches > 0 || referenceFailures > 0) {
  console.log(`\n${totalMismatches} mismatching session(s)/case(s), ${referenceFailures} reference number(s) off.`);
  if (failedSeeds.length > 0) console.log(`Seeds with a mismatch: ${failedSeeds.slice(0, 50).join(", ")}${failedSeeds.length > 50 ? ", …" : ""}`);
  console.log("Every mismatch (function, seed or table, input):");
  for (const m of all.slice(0, 60)) {
    const d = m.detail;
    const what = d.input ?? d.kind ?? "";
    console.log(`  ${m.fn}  ${JSON.stringify(m.seed)}  ${typeof what === "string" ? what : JSON.stringify(what)}${d.firstDifferingIndex !== undefined ? `  first differing message ${d.firstDifferingIndex}` : ""}`);
  }
  if (all.length > 60) console.log(`  … ${all.length - 60} more`);
  console.log("\nFirst mismatch per function:\n");
  for (const m of mismatches) console.log(formatMismatch(m) + "\n");
  process.exit(1);
}
console.log("\nNo mismatch.");
