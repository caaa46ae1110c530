// The calibrated estimate's cost per byte of text, in Node through the
// package, for two builds in one process (alternating rounds):
// `node scripts/bench/classify-bytes.mjs <pkgA> <pkgB>` (each a built package
// directory, e.g. a copy of an older pkg/ and pkg/). Every text of the pi
// fixtures (as the calibrated estimate reads them: text and thinking blocks,
// tool-call arguments as JSON, tool and bash outputs) is measured as a user
// message's content by `Compactor.contextTokens` (a fresh message object per
// call, so nothing is cached): with `estimator: "calibrated"` (the texts
// encoded, copied into wasm and classified) and with `"pi"` (lengths only),
// the difference being what reading the text costs. Prints ns per byte
// (median and least of the rounds) per build, and checks that both builds
// give the same estimates. A measurement tool (what the calibrated
// estimate costs per turn), not a test; ROUNDS= sets the rounds.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [dirA, dirB] = process.argv.slice(2);
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const load = async (dir) => import(pathToFileURL(path.resolve(dir, "node.js")).href);
const builds = [
  ["A", dirA, await load(dirA)],
  ["B", dirB, await load(dirB)],
];

const texts = [];
// Bash outputs of 20k characters or more: pi-before-compaction's turn 989
// (51k characters of .git/objects paths), the text its threshold check reads.
const bashOutputs = [];
for (const name of ["pi-before-compaction.jsonl", "pi-large-session.jsonl"]) {
  for (const line of fs.readFileSync(path.join(root, "fixtures", name), "utf8").split("\n")) {
    if (!line) continue;
    const m = JSON.parse(line).message;
    if (!m) continue;
    const add = (s) => typeof s === "string" && s.length > 0 && texts.push(s);
    if (typeof m.content === "string") add(m.content);
    else if (Array.isArray(m.content))
      for (const b of m.content) {
        if (b.type === "text") add(b.text);
        else if (b.type === "thinking") add(b.thinking);
        else if (b.type === "toolCall") add(JSON.stringify(b.arguments));
      }
    add(m.output);
    if (m.role === "bashExecution" && typeof m.output === "string" && m.output.length >= 20_000) bashOutputs.push(m.output);
    add(m.command);
  }
}
const bytesOf = (set) => set.reduce((n, t) => n + Buffer.byteLength(t), 0);
const sets = [
  ["all texts", texts],
  ["texts of 20k chars or more", texts.filter((t) => t.length >= 20_000)],
  ["bash outputs of 20k chars or more", bashOutputs],
];

const compactors = new Map();
for (const [key, , lib] of builds)
  for (const estimator of ["calibrated", "pi"])
    compactors.set(`${key}/${estimator}`, new lib.Compactor({ contextWindow: 100_000_000, estimator }));

// Nanoseconds to measure every text of `set` once, and the estimates' sum.
function pass(compactor, set) {
  let sum = 0;
  const start = process.hrtime.bigint();
  for (const t of set) sum += compactor.contextTokens([{ role: "user", content: t, timestamp: 1 }]);
  return [Number(process.hrtime.bigint() - start), sum];
}

for (const [name, set] of sets) {
  const bytes = bytesOf(set);
  const times = new Map([...compactors.keys()].map((k) => [k, []]));
  const sums = new Map();
  for (const k of compactors.keys()) pass(compactors.get(k), set); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    const keys = [...compactors.keys()];
    if (r % 2) keys.reverse();
    for (const k of keys) {
      const [ns, sum] = pass(compactors.get(k), set);
      times.get(k).push(ns / bytes);
      sums.set(k, sum);
    }
  }
  const stat = (k) => {
    const v = times.get(k).toSorted((a, b) => a - b);
    return { median: v[Math.floor(v.length / 2)], least: v[0] };
  };
  console.log(`${name}: ${set.length} texts, ${bytes} bytes, ${ROUNDS} rounds`);
  for (const [key, dir] of builds) {
    const cal = stat(`${key}/calibrated`);
    const pi = stat(`${key}/pi`);
    console.log(
      `  ${key} (${dir}): calibrated ${cal.median.toFixed(2)} ns/byte (least ${cal.least.toFixed(2)}), ` +
        `pi's ${pi.median.toFixed(2)} (least ${pi.least.toFixed(2)}), reading ≈ ${(cal.median - pi.median).toFixed(2)} ns/byte; ` +
        `estimates sum ${sums.get(`${key}/calibrated`)}`,
    );
  }
  const same = sums.get("A/calibrated") === sums.get("B/calibrated");
  console.log(`  same estimates: ${same ? "yes" : "NO"}`);
}
for (const c of compactors.values()) c.free();
