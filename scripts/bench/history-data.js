// What the history benchmarks share between Node (history-probe.mjs,
// history-store.mjs) and the browser page (history-store-page.js): the
// fidelity session compacted after each segment, the functions its hidden
// tool outputs show, generated messages of a given length, and the queries
// the timings search for. No imports: the package module is passed in (the
// built package in Node, /pkg/index.js in a page).

export const CONTEXT_WINDOW = 32_000;
export const SETTINGS = { reserveTokens: 4_000, keepRecentTokens: 3_000 };

/** The queries whose mean time the timing tables give. */
export const TIMING_QUERIES = ["retry timeout", "billing upload error", "id_4242", "schema migration index", "router cache metrics deploy"];

/** A message's searched text, as the probes check it. */
export const textOf = (m) =>
  typeof m.content === "string"
    ? m.content
    : [...(m.content ?? [])].map((b) => b.text ?? JSON.stringify(b.arguments ?? "")).join("\n");

/**
 * The fidelity session's `steps` (generateSession() of fidelity.mjs) run
 * through a Compactor of the package `ac`, compacted at each `compact` step
 * as the fidelity benchmark does it; `afterCompaction(messages)` is awaited
 * after each compaction. Resolves to { compactor, messages, compactions }.
 */
export async function compactSteps(ac, steps, { afterCompaction = async () => {} } = {}) {
  const compactor = new ac.Compactor({ contextWindow: CONTEXT_WINDOW, settings: SETTINGS });
  let messages = [];
  let compactions = 0;
  for (const step of steps) {
    if (step.compact) {
      const result = await compactor.compact(messages);
      if (result) {
        messages = result.messages;
        compactions++;
        await afterCompaction(messages);
      }
      continue;
    }
    let message = step.message;
    if (message.role === "assistant") {
      const tokens = ac.estimateContextTokens(ac.transformContext(messages)).tokens;
      message = { ...message, usage: { input: tokens, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: tokens + 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } };
    }
    messages = [...messages, message];
  }
  return { compactor, messages, compactions };
}

/**
 * A function a tool output shows (`export function parserStep3(`), one per
 * module, from the messages the model no longer sees:
 * [{ name, words (how a question names it) }].
 */
export function hiddenFunctions(compactor, messages) {
  const seenModules = new Set();
  const functions = [];
  const visible = new Set(compactor.modelContext(messages));
  for (const m of messages) {
    if (m.role !== "toolResult" || visible.has(m)) continue;
    for (const [, name, module, step] of textOf(m).matchAll(/export function ((\w+)Step(\d+))\(/g)) {
      if (seenModules.has(module)) continue;
      seenModules.add(module);
      functions.push({ name, words: `${module} step ${step} function` });
    }
  }
  return functions;
}

/** `n` generated messages, `chars` characters each, with a compaction summary after them and one message after that. */
export function generated(n, chars, seed = 11) {
  const vocabulary = "parser cache router scheduler auth billing search upload metrics export error timeout retry config build release deploy queue worker token schema index migration".split(" ");
  let s = seed;
  const rand = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const out = [];
  for (let i = 0; i < n; i++) {
    const words = [];
    for (let len = 0; len < chars; ) {
      const w = rand() < 0.03 ? `id_${Math.floor(rand() * 1e6)}` : vocabulary[Math.floor(rand() * vocabulary.length)];
      words.push(w);
      len += w.length + 1;
    }
    const text = words.join(" ");
    out.push(i % 2 ? { role: "assistant", content: [{ type: "text", text }], stopReason: "stop", timestamp: i } : { role: "user", content: text, timestamp: i });
  }
  out.push({ role: "compactionSummary", summary: "## Goal\nwork", tokensBefore: 1, timestamp: n }, { role: "user", content: "next", timestamp: n + 1 });
  return out;
}
