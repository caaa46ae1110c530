// What a long session costs the user: tokens billed (cached and not),
// dollars, and the seconds spent waiting for compactions. A program that
// prints tables, not a test; `npm run bench:session-cost` runs it alone.
//
// One scripted coding session (TURNS user requests, each answered by the
// local model with one or two tool calls whose outputs are 6–20 KB, then a
// short answer) runs against the local model (scripts/local-model.mjs) with
// prompt caching (scripts/lib/prompt-cache.mjs) and a provider's time per
// token, once behind OpenAI's Chat Completions and once behind Anthropic's
// Messages API, each time three times:
//   - ours, as configured by default: a pi-agent-core `Agent` with
//     `compactor.attach(agent)` and the ready summarizer for that API, which
//     repeats the conversation's cached prefix (the prefix form), threshold
//     compactions started in the background;
//   - ours with pi's serialized summary prompt and each compaction awaited
//     (`cacheFriendly: false`, `backgroundAt: false`);
//   - pi 0.73.1: its own `AgentSession` (pi-coding-agent, in memory) with
//     the same model, tools and compaction settings, compacting with its
//     own `compact()`.
// All get the same system prompt (pi's) and the same requests, one after
// the other, each sent when the agent is idle again (a compaction in the
// background may still run). The wait is what blocked the user: a
// compaction awaited at the end of a turn or before a request. The
// provider's time is taken as real time scaled by TIME_SCALE and reported
// unscaled.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent } from "@mariozechner/pi-agent-core";
import { anthropicSummarizer, Compactor, openAiSummarizer } from "agent-compaction";
import { createLocalModel, demoAgentTools } from "../local-model.mjs";
import { startServer } from "../serve.mjs";
import { createRng } from "../../www/local-tools.js";

const PI_COMPACTION = new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/compaction.js", import.meta.url);
const TURNS = Number(process.env.TURNS ?? 300);
const CONTEXT_WINDOW = 100_000;
/** pi's default compaction settings. */
const SETTINGS = { reserveTokens: 16_384, keepRecentTokens: 20_000 };
/**
 * The provider's time per token (ms), in the range of today's large models:
 * ~10,000 uncached prompt tokens a second, ten times that from the cache,
 * 50 answer tokens a second.
 */
const PROVIDER_TIME = { inputMsPerToken: 0.1, cachedInputMsPerToken: 0.01, outputMsPerToken: 20 };
/** Real milliseconds per modeled millisecond. */
const TIME_SCALE = Number(process.env.TIME_SCALE ?? 0.01);
/**
 * The two providers: how pi-ai reaches the local model, the ready
 * summarizer that calls it, and list prices in US dollars per million
 * tokens (OpenAI's for GPT-5, Anthropic's for Claude Sonnet 4.5 with
 * 5-minute cache writes).
 */
const PROVIDERS = [
  {
    name: "OpenAI Chat Completions",
    api: "openai-completions",
    provider: "local",
    path: "local/v1",
    summarizer: (baseUrl, model) => openAiSummarizer({ baseUrl, model, apiKey: "local" }),
    prices: { model: "GPT-5", input: 1.25, cacheWrite: 1.25, cacheRead: 0.125, output: 10 },
    caching: "OpenAI's rules (exact prefix, at least 1,024 tokens, 128-token steps)",
  },
  {
    name: "Anthropic Messages",
    api: "anthropic-messages",
    provider: "anthropic",
    path: "local",
    summarizer: (baseUrl, model) => anthropicSummarizer({ baseUrl, model, apiKey: "local" }),
    prices: { model: "Claude Sonnet 4.5", input: 3, cacheWrite: 3.75, cacheRead: 0.3, output: 15 },
    caching: "Anthropic's rules (the request's cache_control breakpoints, a 20-block lookback, at least 1,024 tokens)",
  },
];

// ---------------------------------------------------------------------------
// The session.

const MODULES = ["parser", "cache", "router", "scheduler", "auth", "billing", "search", "upload", "metrics", "export"];
const CRATES = ["core", "store", "engine", "codec"];

/** The user's requests: deterministic, each naming what the local model's tools will open. */
function requests(turns) {
  const rng = createRng(2026);
  const pick = (list) => list[rng.int(list.length)];
  const make = [
    () => `Read src/${pick(MODULES)}/mod.rs and fix the bug in ${pick(MODULES)}_handler.`,
    () => `Run the tests with \`cargo test -p ${pick(CRATES)}\` and tell me what fails.`,
    () => `List the files under src/${pick(MODULES)}/ and say which one holds the retry logic.`,
    () => `Search for ${pick(MODULES)}_config in the code.`,
    () => `Read src/${pick(MODULES)}.ts and src/${pick(MODULES)}.rs and compare them.`,
    () => "Build the project and report the warnings.",
  ];
  return Array.from({ length: turns }, () => pick(make)());
}

// ---------------------------------------------------------------------------
// Running it.

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(done) {
  while (!done()) await sleep(1);
}

function piModel(provider, baseUrl) {
  const { prices } = provider;
  return {
    id: "local-coder",
    name: "Local coder",
    api: provider.api,
    provider: provider.provider,
    baseUrl,
    reasoning: false,
    input: ["text"],
    cost: { input: prices.input, output: prices.output, cacheRead: prices.cacheRead, cacheWrite: prices.cacheWrite },
    contextWindow: CONTEXT_WINDOW,
    maxTokens: 4_000,
  };
}

/** pi 0.73.1's own session: its agent loop, threshold check, overflow recovery and `compact()`. */
async function runPi({ model, prompts, compactions }) {
  const pi = await import("@mariozechner/pi-coding-agent");
  const { estimateTokens } = await import(PI_COMPACTION);
  const dir = mkdtempSync(join(tmpdir(), "session-cost-"));
  try {
    const authStorage = pi.AuthStorage.inMemory();
    authStorage.setRuntimeApiKey(model.provider, "local");
    const { session } = await pi.createAgentSession({
      cwd: dir,
      agentDir: dir,
      authStorage,
      model,
      noTools: "builtin",
      customTools: demoAgentTools(),
      sessionManager: pi.SessionManager.inMemory(dir),
      settingsManager: pi.SettingsManager.inMemory({ compaction: { enabled: true, ...SETTINGS } }),
    });
    let started = 0;
    session.subscribe((e) => {
      if (e.type === "compaction_start") started = performance.now();
      if (e.type === "compaction_end") {
        // pi's estimate of what the model now sees (the kept messages' usage is the old context's).
        const after = session.agent.state.messages.reduce((n, m) => n + estimateTokens(m), 0);
        compactions.push({
          ms: performance.now() - started,
          ok: Boolean(e.result),
          before: e.result?.tokensBefore,
          after: e.result ? after : undefined,
        });
      }
    });
    const systemPrompt = session.agent.state.systemPrompt;
    for (const text of prompts) {
      await session.prompt(text);
      await until(() => !session.isCompacting && !session.isStreaming && !session.isRetrying);
    }
    return systemPrompt;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Ours: a pi-agent-core Agent with the compactor attached, with the ready
 * summarizer's prefix form and compaction in the background (the
 * defaults), or with pi's serialized prompt and each compaction awaited
 * (`cacheFriendly: false`, `backgroundAt: false`). Resolves to the
 * milliseconds the user waited on compaction: the agent's
 * `transformContext` (a request held for a summary) and the end of each
 * run after its last answer (a compaction awaited there).
 */
async function runOurs({ model, prompts, compactions, systemPrompt, summarize, cacheFriendly, background }) {
  const starts = new Map();
  let n = 0;
  const compactor = new Compactor({
    model,
    settings: SETTINGS,
    summarize,
    cacheFriendly,
    onEvent: (e) => {
      if (e.type === "compaction_start") starts.set(n, performance.now());
      if (e.type === "compaction_end") {
        compactions.push({
          ms: performance.now() - starts.get(n++),
          ok: Boolean(e.result),
          cleared: e.tier === "clear",
          before: e.result?.tokensBefore,
          after: e.result?.tokensAfter,
        });
      }
    },
  });
  const agent = new Agent({ initialState: { model, systemPrompt, tools: demoAgentTools(), messages: [] }, getApiKey: () => "local" });
  const detach = compactor.attach(agent, background ? {} : { backgroundAt: false });
  // A wait counts when a compaction ended within it (the hook's own
  // per-request work, in real time, is not the provider's and not a wait).
  let waited = 0;
  const transform = agent.transformContext;
  agent.transformContext = async (messages, signal) => {
    const [t, ended] = [performance.now(), n];
    try {
      return await transform(messages, signal);
    } finally {
      if (n > ended) waited += performance.now() - t;
    }
  };
  let lastAnswer = 0;
  let endedBefore = 0;
  agent.subscribe((e) => {
    if (e.type === "message_end" && e.message.role === "assistant") [lastAnswer, endedBefore] = [performance.now(), n];
  });
  try {
    for (const text of prompts) {
      await agent.prompt(text);
      if (n > endedBefore) waited += performance.now() - lastAnswer;
      // The next request is sent when the agent is idle; a compaction in the background goes on.
      await until(() => !agent.state.isStreaming && (background || !compactor.isCompacting));
    }
    await compactor.waitForBackground();
    await until(() => !agent.state.isStreaming);
    return waited;
  } finally {
    detach();
    compactor.free();
  }
}

/** Sums of the provider's log at its prices: chat requests and compaction requests apart. */
function bill(log, prices) {
  const sum = (kind) => {
    const rs = log.filter((r) => r.kind === kind);
    const total = (f) => rs.reduce((n, r) => n + (f(r) ?? 0), 0);
    const input = total((r) => r.promptTokens);
    const cached = total((r) => r.cachedTokens);
    const written = total((r) => r.cacheWriteTokens);
    const output = total((r) => r.completionTokens);
    const plain = input - cached - written;
    const dollars = (plain * prices.input + written * prices.cacheWrite + cached * prices.cacheRead + output * prices.output) / 1e6;
    return { requests: rs.length, input, cached, uncached: input - cached, output, dollars };
  };
  return { chat: sum("chat"), summary: sum("summary"), refused: log.filter((r) => r.kind === "overflow").length };
}

export async function runSessionCostBench({ print = console.log, turns = TURNS } = {}) {
  const local = createLocalModel({
    delayMs: 0,
    contextWindow: CONTEXT_WINDOW,
    promptCache: true,
    inputMsPerToken: PROVIDER_TIME.inputMsPerToken * TIME_SCALE,
    cachedInputMsPerToken: PROVIDER_TIME.cachedInputMsPerToken * TIME_SCALE,
    outputMsPerToken: PROVIDER_TIME.outputMsPerToken * TIME_SCALE,
  });
  const server = await startServer({ port: 0, handlers: [local.handle], mounts: [] });
  const prompts = requests(turns);
  const tables = [];
  try {
    for (const provider of PROVIDERS) {
      const baseUrl = `${server.url}${provider.path}`;
      const model = piModel(provider, baseUrl);
      local.reset({ keepConfig: true });
      const piCompactions = [];
      const systemPrompt = await runPi({ model, prompts, compactions: piCompactions });
      const piBill = bill(local.requests, provider.prices);
      const piWaited = piCompactions.reduce((n, x) => n + x.ms, 0);
      const columns = [];
      for (const [name, cacheFriendly, background] of [
        ["ours (prefix form, in the background: the defaults)", true, true],
        ["ours (pi's prompt, compaction awaited)", false, false],
      ]) {
        local.reset({ keepConfig: true });
        const compactions = [];
        const summarize = provider.summarizer(baseUrl, model.id);
        const waited = await runOurs({ model, prompts, compactions, systemPrompt, summarize, cacheFriendly, background });
        columns.push({ name, bill: bill(local.requests, provider.prices), compactions, waited });
      }
      columns.push({ name: "pi 0.73.1 (`AgentSession`, its `compact()`)", bill: piBill, compactions: piCompactions, waited: piWaited });
      tables.push({ provider, columns });
    }
  } finally {
    await server.close();
  }

  const k = (n) => `${Math.round(n / 1000).toLocaleString("en-US")}k`;
  const pct = (a, b) => (b === 0 ? "–" : `${((100 * a) / b).toFixed(0)} %`);
  const seconds = (ms) => `${(ms / TIME_SCALE / 1000).toFixed(1)} s`;
  const stalled = (cs) => cs.filter((c) => c.ok && c.before > 0 && c.after > 0.95 * c.before).length;
  print("## What a long session costs the user\n");
  print(
    `One scripted coding session: ${turns} requests to the local model (tool outputs of 6–20 KB), window ${CONTEXT_WINDOW.toLocaleString("en-US")}, ` +
      `pi's default settings (reserve ${SETTINGS.reserveTokens}, keep ${SETTINGS.keepRecentTokens}). The provider takes ${PROVIDER_TIME.inputMsPerToken} ms per uncached prompt token, ` +
      `${PROVIDER_TIME.cachedInputMsPerToken} ms per cached one and ${PROVIDER_TIME.outputMsPerToken} ms per answer token.\n`,
  );
  const rows = [
    ["input tokens, whole session: uncached / cached", (c) => `${k(c.bill.chat.uncached + c.bill.summary.uncached)} / ${k(c.bill.chat.cached + c.bill.summary.cached)}`],
    ["input tokens, compactions alone: uncached / cached", (c) => `${k(c.bill.summary.uncached)} / ${k(c.bill.summary.cached)}`],
    ["compactions' input served from the cache", (c) => pct(c.bill.summary.cached, c.bill.summary.input)],
    ["dollars, whole session", (c) => `$${(c.bill.chat.dollars + c.bill.summary.dollars).toFixed(2)}`],
    ["dollars, compactions alone", (c) => `$${c.bill.summary.dollars.toFixed(2)}`],
    ["compactions: summarized / old tool output cleared", (c) => `${c.compactions.filter((x) => x.ok && !x.cleared).length} / ${c.compactions.filter((x) => x.cleared).length}`],
    ["summary requests (a split turn takes two)", (c) => String(c.bill.summary.requests)],
    ["seconds the user waited on compaction", (c) => seconds(c.waited)],
    ["requests refused for overflow", (c) => String(c.bill.refused)],
    ["compactions that freed < 5 %", (c) => String(stalled(c.compactions))],
  ];
  for (const { provider, columns } of tables) {
    const p = provider.prices;
    print(`#### ${provider.name}: caching by ${provider.caching}; dollars at ${p.model}'s list prices ($${p.input} input, $${p.cacheWrite} cache write, $${p.cacheRead} cache read, $${p.output} output per million tokens)\n`);
    print(`| | ${columns.map((c) => c.name).join(" | ")} |`);
    print(`| --- | ${columns.map(() => "---:").join(" | ")} |`);
    for (const [label, cell] of rows) print(`| ${label} | ${columns.map(cell).join(" | ")} |`);
    print("");
  }
  return tables;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runSessionCostBench();
