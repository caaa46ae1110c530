// The fidelity benchmark: what the model still sees of a long
// session after it has been compacted again and again. A program that prints
// a table, not a test; `npm run bench` runs it last, `npm run bench:fidelity`
// alone.
//
// One generated session (deterministic) of ten segments with planted facts:
//   - modified files: every turn edits or writes a path of its own;
//   - constraints the user states ("Constraint K3: never …");
//   - the last request: each segment ends with a long turn whose request
//     the cut falls after (the turn is split), the case where a request is
//     most easily lost;
//   - unresolved tool errors ("error E7: …", never fixed later);
//   - decisions the assistant states ("Decision D2: use …");
//   - pinned messages (`pinned: true`: standing rules).
// After each segment the session is compacted (manually, as a user would),
// and the model's context is read as it would be sent: every text of
// `convertToLlm(transformContext(messages))` (pi: of `convertToLlm` of
// `buildSessionContext(entries).messages`). A fact counts as seen when its
// marker text is in that context verbatim.
//
// Columns:
//   - ours, with the extractive summarizer (no `summarize` callback);
//   - ours, with a summarizer that answers with the prompt's own structure
//     and nothing of the conversation ("structure only": it keeps the
//     section headings and what the previous summary had under them). What
//     survives there is what the library itself guarantees: kept messages,
//     the file lists, and whatever it carries beside the summary;
//   - pi 0.73.1's own compaction (`prepareCompaction` + `compact` of
//     @mariozechner/pi-coding-agent, with pi-ai's faux provider answering
//     with the same structure-only summarizer): the baseline.
import { fileURLToPath } from "node:url";
import * as ours from "agent-compaction";
import { rng as random } from "../../tests/node/estimator-corpus.mjs";

const piDist = new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/", import.meta.url);

const SEGMENTS = 10;
const TURNS_PER_SEGMENT = 10;
const CONTEXT_WINDOW = 32_000;
const SETTINGS = { reserveTokens: 4_000, keepRecentTokens: 3_000 };

// ---------------------------------------------------------------------------
// The session.

const MODULES = ["parser", "cache", "router", "scheduler", "auth", "billing", "search", "upload", "metrics", "export"];
const VERBS = ["refactor", "fix the bug in", "add tests for", "speed up", "document", "simplify"];
const RULES = [
  "reply in British English",
  "never push to the main branch directly",
  "keep every public function documented",
  "run the linter before every commit",
];
const CONSTRAINTS = [
  "never modify files under vendor/",
  "do not add new dependencies",
  "keep the API backwards compatible",
  "only use the standard library for dates",
  "never log user emails",
];
const DECISIONS = [
  "use SQLite for the local cache",
  "keep retries at three with exponential backoff",
  "store timestamps as UTC milliseconds",
  "split the router into one file per resource",
  "drop support for the legacy v1 endpoint",
];

/** Filler that reads like a file: `lines` lines, seeded. */
function fileText(rand, path, lines) {
  const out = [`// ${path}`];
  for (let i = 0; i < lines; i++) {
    const name = MODULES[Math.floor(rand() * MODULES.length)];
    out.push(`export function ${name}Step${i}(input) { return input.map((x) => x * ${Math.floor(rand() * 97)} + ${i}); }`);
  }
  return out.join("\n");
}

/**
 * The session as a list of steps: `{ message }` to append (assistant
 * messages without usage: each column adds what its provider would report),
 * `{ compact: true }` after each segment; and the facts planted, by kind.
 */
export function generateSession(seed = 15) {
  const rand = random(seed);
  const steps = [];
  const facts = { files: [], constraints: [], errors: [], decisions: [], pinned: [], lastRequests: [] };
  let clock = Date.UTC(2026, 5, 1);
  let call = 0;
  const at = () => (clock += 1000);
  const user = (text, extra = {}) => steps.push({ message: { role: "user", content: text, timestamp: at(), ...extra } });
  const assistant = (content, stopReason = "stop") =>
    steps.push({ message: { role: "assistant", content, api: "openai-completions", provider: "bench", model: "echo", stopReason, timestamp: at() } });
  const toolRound = (tools, errorText, lines = 14) => {
    const calls = tools.map(([name, path]) => ({ type: "toolCall", id: `call_${++call}`, name, arguments: { path } }));
    assistant([{ type: "text", text: "Working on it." }, ...calls], "toolUse");
    calls.forEach((c, i) => {
      const failing = errorText !== undefined && i === calls.length - 1;
      steps.push({
        message: {
          role: "toolResult", toolCallId: c.id, toolName: c.name,
          content: [{ type: "text", text: failing ? errorText : fileText(rand, c.arguments.path, lines) }],
          isError: failing, timestamp: at(),
        },
      });
    });
  };
  let pinnedNext = 0;
  for (let s = 0; s < SEGMENTS; s++) {
    for (let t = 0; t < TURNS_PER_SEGMENT; t++) {
      if ((s === 0 && t === 1) || (s === 4 && t === 0) || (s === 7 && t === 3)) {
        const rule = `Pinned rule P${pinnedNext + 1}: ${RULES[pinnedNext % RULES.length]}.`;
        pinnedNext++;
        facts.pinned.push(rule);
        user(rule, { pinned: true });
        assistant([{ type: "text", text: "Understood; I will follow that rule." }]);
      }
      const module = MODULES[(s + t) % MODULES.length];
      const verb = VERBS[Math.floor(rand() * VERBS.length)];
      let request = `Task ${s + 1}.${t + 1}: ${verb} the ${module} module.`;
      if (t === 2 || (t === 6 && s % 2 === 0)) {
        const constraint = `Constraint K${facts.constraints.length + 1}: ${CONSTRAINTS[facts.constraints.length % CONSTRAINTS.length]}`;
        facts.constraints.push(constraint);
        request += ` ${constraint}.`;
      }
      user(request);
      const edited = `src/${module}/s${s + 1}t${t + 1}.ts`;
      facts.files.push(edited);
      const error = t === 4 && s % 3 === 1 ? `error E${facts.errors.length + 1}: tsc failed on ${edited}` : undefined;
      if (error) facts.errors.push(error);
      toolRound([["read", `src/${module}/index.ts`], [t % 2 ? "edit" : "write", edited]], error);
      let answer = `Done with task ${s + 1}.${t + 1}.`;
      if (t === 5) {
        const decision = `Decision D${facts.decisions.length + 1}: ${DECISIONS[facts.decisions.length % DECISIONS.length]}`;
        facts.decisions.push(decision);
        answer += ` ${decision}.`;
      }
      assistant([{ type: "text", text: answer }]);
    }
    // The segment's last, long turn: its request ends up before the cut.
    const last = `Final request R${s + 1}: migrate the ${MODULES[s % MODULES.length]} module to the new storage layer and report what changed.`;
    facts.lastRequests.push(last);
    user(last);
    // About 8,000 tokens of work: far more than keepRecentTokens.
    for (let round = 0; round < 6; round++) {
      const path = `src/${MODULES[s % MODULES.length]}/migrate${round + 1}-s${s + 1}.ts`;
      facts.files.push(path);
      toolRound([["read", `src/storage/layer${round}.ts`], ["write", path]], undefined, 30);
    }
    steps.push({ compact: true, segment: s + 1, lastRequest: last });
  }
  return { steps, facts };
}

// ---------------------------------------------------------------------------
// The summarizer that answers with the prompt's structure only.

const HISTORY_SECTIONS = [
  "## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked",
  "## Key Decisions", "## Next Steps", "## Critical Context",
];
const PREFIX_SECTIONS = ["## Original Request", "## Early Progress", "## Context for the Remaining Turn"];

function between(text, open, close) {
  const a = text.indexOf(open);
  if (a < 0) return null;
  const b = text.indexOf(close, a + open.length);
  return b < 0 ? null : text.slice(a + open.length, b);
}

/**
 * The section headings the prompt asks for, each with what the previous
 * summary (if the prompt carries one) had under it; nothing from the
 * conversation.
 */
export function structureOnly(prompt) {
  const afterConversation = prompt.slice(prompt.lastIndexOf("</conversation>"));
  const prefix = afterConversation.includes("## Original Request") && !afterConversation.includes("## Goal");
  const previous = between(prompt, "<previous-summary>\n", "\n</previous-summary>") ?? "";
  const carried = (heading) => {
    const start = previous.indexOf(`${heading}\n`);
    if (start < 0) return [];
    const body = previous.slice(start + heading.length + 1).split("\n");
    const end = body.findIndex((l) => l.startsWith("#"));
    return (end < 0 ? body : body.slice(0, end)).filter((l) => l.trim() && l.trim() !== "(none)");
  };
  const sections = prefix ? PREFIX_SECTIONS : HISTORY_SECTIONS;
  return sections
    .flatMap((h) => {
      const lines = carried(h);
      return h === "## Progress" ? [h] : [h, ...(lines.length ? lines : ["(none)"]), ""];
    })
    .join("\n")
    .trim();
}

// ---------------------------------------------------------------------------
// The columns.

/** Every text the model is sent, joined. */
function contextText(llmMessages) {
  const parts = [];
  for (const m of llmMessages) {
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content ?? [];
    for (const b of content) {
      if (b.type === "text") parts.push(b.text);
      else if (b.type === "toolCall") parts.push(JSON.stringify(b.arguments));
    }
  }
  return parts.join("\n");
}

const usageFor = (tokens) => ({
  input: tokens, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: tokens + 20,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

/** What the model sees after each compaction, for our Compactor with `summarize`. */
async function runOurs(session, summarize) {
  const compactor = new ours.Compactor({ contextWindow: CONTEXT_WINDOW, settings: SETTINGS, ...(summarize ? { summarize } : {}) });
  let messages = [];
  const seen = [];
  for (const step of session.steps) {
    if (step.compact) {
      const result = await compactor.compact(messages);
      if (result) messages = result.messages;
      seen.push({ text: contextText(ours.convertToLlm(ours.transformContext(messages))), lastRequest: step.lastRequest });
      continue;
    }
    let message = step.message;
    if (message.role === "assistant") {
      // The provider reports the context it was sent: our estimate of it.
      message = { ...message, usage: usageFor(ours.estimateContextTokens(ours.transformContext(messages)).tokens) };
    }
    messages = [...messages, message];
  }
  return seen;
}

/** The same with pi's own compaction, on pi's session entries. */
async function runPi(session) {
  const piAi = await import("@mariozechner/pi-ai");
  const compaction = await import(new URL("compaction/compaction.js", piDist));
  const sessions = await import(new URL("session-manager.js", piDist));
  const piMessages = await import(new URL("messages.js", piDist));
  const faux = piAi.registerFauxProvider({ api: "fidelity-bench", provider: "bench", models: [{ id: "echo", contextWindow: CONTEXT_WINDOW, maxTokens: 8_000 }] });
  const answer = (context) => {
    const prompt = context.messages.at(-1).content;
    const text = typeof prompt === "string" ? prompt : prompt.map((b) => b.text ?? "").join("");
    return piAi.fauxAssistantMessage(structureOnly(text));
  };
  faux.setResponses(Array.from({ length: 4 * SEGMENTS }, () => answer));
  const settings = { enabled: true, ...SETTINGS };
  const entries = [];
  let parentId = null;
  const push = (entry) => {
    const id = `e${entries.length + 1}`;
    entries.push({ ...entry, id, parentId });
    parentId = id;
  };
  const seen = [];
  try {
    for (const step of session.steps) {
      if (step.compact) {
        const preparation = compaction.prepareCompaction(entries, settings);
        if (preparation) {
          const result = await compaction.compact(preparation, faux.getModel(), "no-key");
          push({ type: "compaction", timestamp: new Date().toISOString(), ...result });
        }
        const context = sessions.buildSessionContext(entries).messages;
        seen.push({ text: contextText(piMessages.convertToLlm(context)), lastRequest: step.lastRequest });
        continue;
      }
      let message = step.message;
      if (message.role === "assistant") {
        const context = sessions.buildSessionContext(entries).messages;
        message = { ...message, usage: usageFor(compaction.estimateContextTokens(context).tokens) };
      }
      push({ type: "message", timestamp: new Date(message.timestamp).toISOString(), message });
    }
  } finally {
    faux.unregister();
  }
  return seen;
}

// ---------------------------------------------------------------------------
// The table.

/** For each compaction: how many facts of each kind the model still sees. */
function score(session, seen) {
  const kinds = ["files", "constraints", "errors", "decisions", "pinned"];
  // Facts planted so far, at each compaction: walk the steps in order.
  const firstStep = new Map();
  session.steps.forEach((step, i) => {
    const text = step.message ? contextText([step.message]) : "";
    for (const kind of kinds) {
      for (const fact of session.facts[kind]) if (!firstStep.has(fact) && text.includes(fact)) firstStep.set(fact, i);
    }
  });
  const compactions = session.steps.map((s, i) => (s.compact ? i : -1)).filter((i) => i >= 0);
  return seen.map(({ text, lastRequest }, k) => {
    const row = { compaction: k + 1, lastRequest: text.includes(lastRequest) };
    for (const kind of kinds) {
      const facts = session.facts[kind].filter((f) => firstStep.get(f) < compactions[k]);
      row[kind] = { seen: facts.filter((f) => text.includes(f)).length, of: facts.length };
    }
    return row;
  });
}

export async function runFidelityBench({ print = console.log } = {}) {
  const session = generateSession();
  const columns = [
    ["ours, extractive summarizer", await runOurs(session)],
    ["ours, structure-only summarizer", await runOurs(session, async (request) => structureOnly(request.prompt))],
    ["pi 0.73.1, structure-only summarizer", await runPi(session)],
  ];
  const f = session.facts;
  print("## Fidelity: what the model still sees after each compaction\n");
  print(
    `One generated session (${session.steps.filter((s) => s.message).length} messages, ${SEGMENTS} segments, compacted after each; ` +
      `window ${CONTEXT_WINDOW}, reserve ${SETTINGS.reserveTokens}, keep ${SETTINGS.keepRecentTokens}) with planted facts: ` +
      `${f.files.length} modified files, ${f.constraints.length} constraints, ${f.errors.length} unresolved tool errors, ` +
      `${f.decisions.length} decisions, ${f.pinned.length} pinned messages, and each segment's last request (its long turn is split by the cut). ` +
      "Each cell: facts planted so far that the model's context still holds verbatim.\n",
  );
  const results = [];
  for (const [name, seen] of columns) {
    const rows = score(session, seen);
    results.push({ name, rows });
    print(`#### ${name}\n`);
    print("| after compaction | modified files | last request | constraints | tool errors | decisions | pinned |");
    print("| ---: | ---: | :---: | ---: | ---: | ---: | ---: |");
    const cell = (c) => (c.of === 0 ? "–" : c.seen === c.of ? `${c.seen}/${c.of}` : `**${c.seen}/${c.of}**`);
    for (const r of rows) {
      print(`| ${r.compaction} | ${cell(r.files)} | ${r.lastRequest ? "yes" : "**no**"} | ${cell(r.constraints)} | ${cell(r.errors)} | ${cell(r.decisions)} | ${cell(r.pinned)} |`);
    }
    print("");
  }
  const last = (rows) => rows.at(-1);
  const met = results
    .filter((r) => r.name.startsWith("ours"))
    .map((r) => {
      const l = last(r.rows);
      return { name: r.name, files: l.files.seen === l.files.of, lastRequest: l.lastRequest, pinned: l.pinned.seen === l.pinned.of };
    });
  print("Targets (after ten compactions, in all our columns): every modified file path, the last request, every pinned message.\n");
  print("| column | every modified file | the last request | every pinned message |");
  print("| --- | :---: | :---: | :---: |");
  const yes = (ok) => (ok ? "met" : "**missed**");
  for (const m of met) print(`| ${m.name} | ${yes(m.files)} | ${yes(m.lastRequest)} | ${yes(m.pinned)} |`);
  print("");
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runFidelityBench();
