// The history probe benchmark: after the fidelity benchmark's session and its
// ten compactions (scripts/bench/fidelity.mjs, the extractive summarizer),
// every planted fact is looked up with `searchHistory` by a question that
// paraphrases it, in the words a model would search with (the fact's topic,
// not its own sentence), and counted as found when one of the first k hits'
// messages holds the fact's text. The columns are Factory's four probe types:
//   - recall: constraints the user stated ("never log user emails");
//   - artifact: exact artifacts from tool outputs (an error code and its
//     text, a function a file defines);
//   - continuation: the request a segment ended on, which the next one
//     continues;
//   - decision: decisions the assistant stated.
// Then the query time at 1,000, 10,000 and 100,000 messages (generated
// text), with the time of the first search, which builds the index.
// A program that prints tables, not a test; `npm run bench` runs it.
import * as ours from "agent-compaction";
import { generateSession } from "./fidelity.mjs";
import { compactSteps, generated, hiddenFunctions, textOf, TIMING_QUERIES } from "./history-data.js";

// Paraphrases: the topic words a model would search with, not the fact's sentence.
const CONSTRAINT_PROBES = {
  "never modify files under vendor/": "rule about changing the vendor directory",
  "do not add new dependencies": "may we add another dependency",
  "keep the API backwards compatible": "API compatibility requirement for callers",
  "only use the standard library for dates": "which library for date handling",
  "never log user emails": "logging of user email addresses",
};
const DECISION_PROBES = {
  "use SQLite for the local cache": "which database we picked for the local cache",
  "keep retries at three with exponential backoff": "how many retry attempts and what backoff",
  "store timestamps as UTC milliseconds": "how we decided to store timestamps",
  "split the router into one file per resource": "how the router was divided into files",
  "drop support for the legacy v1 endpoint": "what happened to the old v1 endpoint",
};

/** The probes of the session's facts: { kind, fact (the text a hit must hold), query }. */
export function probes(facts) {
  const out = [];
  for (const c of facts.constraints) {
    const text = c.replace(/^Constraint K\d+: /, "");
    // A constraint stated twice (K1 and K6) is found by either.
    out.push({ kind: "recall", fact: text, query: CONSTRAINT_PROBES[text] });
  }
  for (const e of facts.errors) {
    const [, code, path] = /^error (E\d+): tsc failed on (\S+)$/.exec(e);
    const module = path.split("/")[1];
    out.push({ kind: "artifact", fact: e, query: `${code} type check failure in ${module}` });
  }
  for (const f of facts.functions) out.push({ kind: "artifact", fact: f.name, query: `where is ${f.words} defined` });
  for (const r of facts.lastRequests) {
    const module = /the (\w+) module/.exec(r)[1];
    out.push({ kind: "continuation", fact: r, query: `migrating ${module} to the new storage layer` });
  }
  for (const d of facts.decisions) {
    const text = d.replace(/^Decision D\d+: /, "");
    out.push({ kind: "decision", fact: text, query: DECISION_PROBES[text] });
  }
  return out;
}

/** The session compacted after each segment, as the fidelity benchmark does it. */
async function compactedSession() {
  const session = generateSession();
  const { compactor, messages } = await compactSteps(ours, session.steps);
  return { compactor, messages, facts: { ...session.facts, functions: hiddenFunctions(compactor, messages) } };
}

/**
 * Counts probe `p` in its kind's row of `rows`: `visible` is what the model
 * is sent (as JSON), `texts` the texts of the messages of its first hits,
 * best first.
 */
export function countProbe(rows, p, visible, texts) {
  const row = rows.get(p.kind) ?? { probes: 0, at1: 0, at5: 0, hidden: 0 };
  rows.set(p.kind, row);
  row.probes++;
  if (!visible.includes(p.fact)) row.hidden++;
  const holds = (text) => text.includes(p.fact);
  if (texts.slice(0, 1).some(holds)) row.at1++;
  if (texts.some(holds)) row.at5++;
}

/** recall@1 and recall@5 of each probe kind. */
export async function probeTable() {
  const { compactor, messages, facts } = await compactedSession();
  const visible = JSON.stringify(compactor.modelContext(messages));
  const rows = new Map();
  for (const p of probes(facts)) {
    const hits = compactor.searchHistory(messages, p.query, { limit: 5 }).hits;
    countProbe(rows, p, visible, hits.map((h) => textOf(messages[h.index])));
  }
  return { rows, messages: messages.length, compactions: messages.filter((m) => m.role === "compactionSummary").length };
}

/** The markdown table of `rows` (probeTable's). */
export function probeRowsTable(rows) {
  const pct = (a, b) => `${((100 * a) / b).toFixed(0)} %`;
  return [
    "| probe type | probes | not in the model's context | recall@1 | recall@5 |",
    "| --- | --- | --- | --- | --- |",
    ...["recall", "artifact", "continuation", "decision"].map((kind) => {
      const r = rows.get(kind);
      return `| ${kind} | ${r.probes} | ${r.hidden} | ${pct(r.at1, r.probes)} | ${pct(r.at5, r.probes)} |`;
    }),
  ];
}

/** First-search (index build) and later-query times at each size. */
export function timingTable(sizes = [1_000, 10_000, 100_000]) {
  return sizes.map((n) => {
    const messages = generated(n, 400);
    const compactor = new ours.Compactor({ contextWindow: 200_000 });
    let t = performance.now();
    const { searched } = compactor.searchHistory(messages, "config");
    const build = performance.now() - t;
    t = performance.now();
    const rounds = 40;
    for (let i = 0; i < rounds; i++) compactor.searchHistory(messages, TIMING_QUERIES[i % TIMING_QUERIES.length]);
    const query = (performance.now() - t) / rounds;
    compactor.free();
    return { n, searched, build, query };
  });
}

export async function runHistoryProbeBench({ print = console.log, sizes } = {}) {
  const { rows, messages, compactions } = await probeTable();
  print(`\nHistory probes: the fidelity session (${messages} messages, ${compactions} compactions), each planted fact searched by a paraphrase`);
  for (const line of probeRowsTable(rows)) print(line);
  print("\nHistory search time (Node, generated messages of ~400 characters)");
  print("| messages | first search (builds the index) | later searches (mean) |");
  print("| --- | --- | --- |");
  for (const t of timingTable(sizes)) print(`| ${t.n.toLocaleString("en")} | ${t.build.toFixed(0)} ms | ${t.query.toFixed(2)} ms |`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runHistoryProbeBench();
}
