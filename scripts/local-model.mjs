// A local OpenAI-compatible model for the demo and the end-to-end tests: a
// deterministic "coding agent" behind OpenAI Chat Completions, served by
// scripts/serve.mjs under `/local/v1` (dependency-free, node:http handler).
//
//   const local = createLocalModel({ delayMs: 0 });
//   startServer({ handlers: [local.handle] });
//   // pi-ai Model: { api: "openai-completions", provider: "local", id: "local-coder",
//   //               baseUrl: `${origin}/local/v1`, contextWindow: 16000, ... }, apiKey "local"
//
// Endpoints (prefix configurable, CORS open like tests/support/mock-llm-server.mjs):
//   GET  /local/v1/models             the one model ("local-coder")
//   POST /local/v1/chat/completions   streaming (SSE, `stream_options.include_usage`
//                                     → a final usage chunk) or not
//   POST /local/v1/messages           the same model behind Anthropic's Messages API
//                                     (pi-ai's `anthropic-messages` with
//                                     baseUrl `${origin}/local`), streaming or not
//   GET  /local/v1/config             the config (JSON)
//   POST /local/v1/config             merge a JSON partial into it; answers the new config
//   GET  /local/v1/requests           the request log (JSON array; `?kind=summary` filters)
//   POST /local/v1/reset              clear the log and restore the initial config
//                                     (body `{ "keepConfig": true }` keeps the config)
//
// What it answers is a pure function of the request body (plus the config):
// the same request gives the same bytes (ids are hashes of the body,
// `created` is a constant).
//   - A chat request with tools: for the last user message, one or two tool
//     calls chosen from the user's text (paths, commands, keywords), issued
//     together or one per round; once their results are in, a markdown answer
//     (a few hundred characters) that quotes facts from those results.
//   - A chat request without tools, with `tool_choice: "none"`, or a bare
//     greeting: a text answer. A text answer longer than `max_tokens` /
//     `max_completion_tokens` is cut there (finish_reason "length").
//   - A compaction summarization request (our structured prompt: a
//     `<conversation>` block and the "## Goal" … "## Critical Context"
//     format, or the turn-prefix format; or the conversation's own
//     messages, then a last user message asking for that format, as the
//     ready summarizers send it to reuse the prompt cache): a short structured summary
//     (< 1,500 characters) naming the first user request and, when the prompt
//     ends with "Additional focus: X", a "**Focus**: X" line.
//   - Usage: prompt_tokens = ceil(chars / 4) of every message's content, tool
//     call and tool definitions; completion_tokens = ceil(answer chars / 4).
//     With `promptCache`, a prompt prefix repeated from a recent request is
//     reported in prompt_tokens_details.cached_tokens, by OpenAI's rules, and
//     as cache_read_input_tokens / cache_creation_input_tokens by Anthropic's
//     on /messages (scripts/lib/prompt-cache.mjs); the `…MsPerToken` fields
//     make the answer take a provider's time (cached prompt tokens read
//     faster). On /messages an overflow is Anthropic's "prompt is too long".
//   - Context window: when prompt_tokens > config.contextWindow (or
//     `overflowAlways` / `overflowNext` force it for chat requests), HTTP 400
//     with OpenAI's context_length_exceeded body, which pi-ai turns into
//     "400 This model's maximum context length is N tokens. However, your
//     messages resulted in M tokens. …" — recognised by pi's
//     `isContextOverflow` (M = max(estimate, N + 1)). With `silentOverflow`
//     the request is answered normally instead, reporting prompt_tokens above
//     the window. `overflowNext` counts down by one per forced overflow.
//
// Request log records: { seq, time, method, path, kind: "chat" | "summary" |
// "overflow" | "invalid", status, body, promptTokens, cachedTokens, completionTokens
// (and on /messages: api "anthropic-messages", cacheWriteTokens),
// overflow: null | "error" | "silent", reply: { text, toolCalls, finishReason } | null }.
import { CORS, readBody, sendJson } from "./http.mjs";
import { anthropicBlocks, createAnthropicCache, createPromptCache } from "./lib/prompt-cache.mjs";
import {
  DEMO_TOOLS,
  demoAgentTools,
  hashHex,
  hashText,
  runDemoTool,
} from "../www/local-tools.js";

export { DEMO_TOOLS, demoAgentTools, runDemoTool };

/** The config a new model starts with (each field settable by setConfig / POST config). */
export const DEFAULT_CONFIG = Object.freeze({
  /** The model id listed by /models (requests may name any model). */
  modelId: "local-coder",
  /** Tokens (prompt_tokens as estimated here) above which a request overflows. */
  contextWindow: 16_000,
  /** Answer overflowing requests normally, reporting prompt_tokens above the window. */
  silentOverflow: false,
  /** Every chat (not summary) request overflows. */
  overflowAlways: false,
  /** The next N chat (not summary) requests overflow; counts down. */
  overflowNext: 0,
  /** Pause before the first chunk and between chunks (ms). */
  delayMs: 150,
  /** Characters per streamed text chunk. */
  chunkChars: 48,
  /**
   * Serve repeated prompt prefixes from a cache as OpenAI does
   * (scripts/lib/prompt-cache.mjs), reporting them in
   * `usage.prompt_tokens_details.cached_tokens`.
   */
  promptCache: false,
  /**
   * Time per token, as a provider takes it (added to `delayMs`): reading
   * an uncached prompt token, reading a cached one, writing an answer token.
   */
  inputMsPerToken: 0,
  cachedInputMsPerToken: 0,
  outputMsPerToken: 0,
});

const CONFIG_TYPES = {
  modelId: "string",
  contextWindow: "count",
  silentOverflow: "boolean",
  overflowAlways: "boolean",
  overflowNext: "count",
  delayMs: "count",
  chunkChars: "count",
  promptCache: "boolean",
  inputMsPerToken: "duration",
  cachedInputMsPerToken: "duration",
  outputMsPerToken: "duration",
};

/** `created` of every response: a constant, so that answers are reproducible. */
const CREATED = 1_735_689_600;

const SUMMARY_PREAMBLE = "The conversation history before this point was compacted into the following summary:";
const BRANCH_PREAMBLE = "The following is a summary of a branch that this conversation came back from:";

// ------------------------------------------------------------ HTTP helpers

function openAiError(res, status, message, type = "invalid_request_error", extra = {}) {
  sendJson(res, status, { error: { message, type, param: null, code: null, ...extra } });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------ reading a request

/** The text of a message's content: a string, or the text parts of an array. */
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((p) => p && typeof p.text === "string")
    .map((p) => p.text)
    .join("\n");
}

/** Characters counted for a message's content (an image counts as 4,800, like 1,200 tokens). */
function contentChars(content) {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const p of content) {
    if (p && typeof p.text === "string") n += p.text.length;
    else if (p && (p.type === "image_url" || p.type === "image")) n += 4800;
  }
  return n;
}

/**
 * The request's size in tokens as this model counts it: ceil(chars / 4) of
 * every message's content and tool calls, plus the tool definitions' JSON.
 */
export function estimatePromptTokens(body) {
  let chars = 0;
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    chars += contentChars(m?.content);
    for (const tc of Array.isArray(m?.tool_calls) ? m.tool_calls : []) {
      chars += String(tc?.function?.name ?? "").length + String(tc?.function?.arguments ?? "").length;
    }
  }
  if (Array.isArray(body?.tools) && body.tools.length > 0) chars += JSON.stringify(body.tools).length;
  return Math.ceil(chars / 4);
}

/** How a summary request that repeats the conversation begins its last user message. */
const PREFIX_INSTRUCTION = "Stop here: this conversation is being compacted";

/**
 * A summary request that repeats the conversation and asks for the summary
 * in its last user message: the conversation up to the message the
 * instruction names (by its opening words), serialized as the package's
 * serialized prompts are, in front of the instruction, so the same answer
 * applies.
 */
function prefixPrompt(messages) {
  const last = messages.findLastIndex((m) => m?.role === "user");
  const instruction = last >= 0 ? textOf(messages[last].content) : "";
  if (!instruction.startsWith(PREFIX_INSTRUCTION)) return null;
  const before = messages.slice(0, last).filter((m) => m?.role !== "system" && m?.role !== "developer");
  // "…up to, but not including, <the message> that begins "…"": the last one that does.
  const quoted = /up to, but not including, [^"]*? that begins "([\s\S]*?)(?:…)?"/.exec(instruction)?.[1];
  const at = quoted === undefined ? -1 : before.findLastIndex((m) => textOf(m.content).startsWith(quoted));
  const blocks = [];
  for (const m of at >= 0 ? before.slice(0, at) : before) {
    const text = textOf(m.content);
    if (m.role === "user" && text) blocks.push(`[User]: ${text}`);
    else if (m.role === "tool") blocks.push(`[Tool result]: ${text}`);
    else if (m.role === "assistant") {
      if (text) blocks.push(`[Assistant]: ${text}`);
      const calls = (m.tool_calls ?? []).map((c) => `${c.function?.name}(${Object.entries(safeJson(c.function?.arguments)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")})`);
      if (calls.length) blocks.push(`[Assistant tool calls]: ${calls.join("; ")}`);
    }
  }
  return `<conversation>\n${blocks.join("\n\n")}\n</conversation>\n\n${instruction}`;
}

const safeJson = (text) => {
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
};

/** The summarization prompt when the request is one (our structured prompt), else null. */
function summarizationPrompt(messages) {
  const prefix = prefixPrompt(messages);
  if (prefix !== null) return prefix;
  const system = messages
    .filter((m) => m?.role === "system" || m?.role === "developer")
    .map((m) => textOf(m.content))
    .join("\n");
  const lastUser = [...messages].reverse().find((m) => m?.role === "user");
  const prompt = lastUser ? textOf(lastUser.content) : "";
  const close = prompt.lastIndexOf("</conversation>");
  const asksForFormat =
    prompt.includes("<conversation>") &&
    close >= 0 &&
    /## (Goal|Original Request)/.test(prompt.slice(close));
  if (asksForFormat || (/context checkpoint/i.test(system) && prompt.includes("<conversation>"))) return prompt;
  const asked = lastUser !== undefined && lastUser === messages.at(-1) && !prompt.includes("<conversation>");
  if (asked && /## (Goal|Original Request)/.test(prompt) && !prompt.startsWith(SUMMARY_PREAMBLE) && !prompt.startsWith(BRANCH_PREAMBLE)) {
    return `<conversation>\n${transcript(messages.slice(0, -1))}\n</conversation>\n\n${prompt}`;
  }
  return null;
}

/** Chat messages as the blocks of a serialized conversation ("[User]: …"). */
function transcript(messages) {
  const blocks = [];
  for (const m of messages) {
    const text = textOf(m?.content);
    if (m?.role === "user") blocks.push(`[User]: ${text}`);
    else if (m?.role === "tool") blocks.push(`[Tool result]: ${text}`);
    else if (m?.role === "assistant") {
      if (text) blocks.push(`[Assistant]: ${text}`);
      const calls = (Array.isArray(m.tool_calls) ? m.tool_calls : []).map((tc) => {
        let args = {};
        try {
          args = JSON.parse(tc?.function?.arguments ?? "{}") ?? {};
        } catch {
          // arguments that are not JSON: the call by name only
        }
        return `${tc?.function?.name}(${Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")})`;
      });
      if (calls.length) blocks.push(`[Assistant tool calls]: ${calls.join("; ")}`);
    }
  }
  return blocks.join("\n\n");
}

const oneLine = (s, max) => {
  const flat = String(s).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
};

// ------------------------------------------------------------ the coding agent

const STOPWORDS = new Set(
  "about above after again also because been before being below between both could does doing down during each from further have having here into itself just more most once only other over please same should some such than that their them then there these they this those through under until very what when where which while will with would your yours could make sure look check tell show give need want like find thing things code file files project".split(" "),
);

const FILE_RE = /(?:^|[\s("'`[])((?:\.{0,2}\/)?[\w@.-]+(?:\/[\w@.-]+)*\.(?:rs|js|mjs|cjs|ts|tsx|jsx|json|md|toml|ya?ml|css|html|py|go|txt|lock|sh))(?=$|[\s)"'`,.;:!?\]])/g;
const DIR_RE = /(?:^|[\s("'`[])((?:\.\/)?[\w@-]+(?:\/[\w@-]+)*\/?)(?=$|[\s)"'`,.;:!?\]])/g;
const COMMAND_WORDS = /^(npm|npx|pnpm|yarn|node|cargo|git|make|ls|rg|grep|find|pytest|python|go|deno|bun|tsc)\b/;

/** Paths, directories and commands named or implied by the user's text. */
function readRequest(text) {
  const files = [];
  const dirs = [];
  const commands = [];
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    const span = m[1].trim();
    if (COMMAND_WORDS.test(span) && /\s/.test(span)) commands.push(span);
  }
  for (const m of text.matchAll(FILE_RE)) if (!files.includes(m[1])) files.push(m[1]);
  for (const m of text.matchAll(DIR_RE)) {
    const d = m[1];
    if (d.includes("/") && !/^\w+:\/\//.test(d) && !files.some((f) => f.startsWith(d))) {
      const dir = d.replace(/\/$/, "");
      if (dir && !dirs.includes(dir)) dirs.push(dir);
    }
  }
  if (commands.length === 0) {
    const rust = /\b(rust|cargo|crate)\b|\.rs\b/i.test(text);
    if (/\b(test|tests|failing|fails)\b/i.test(text)) commands.push(rust ? "cargo test" : "npm test");
    else if (/\b(build|compile)\b/i.test(text)) commands.push(rust ? "cargo build --release" : "npm run build");
    else if (/\b(lint|clippy|warnings?)\b/i.test(text)) commands.push(rust ? "cargo clippy -- -D warnings" : "npm run lint");
    else if (/\b(git|commits?|history|changelog)\b/i.test(text)) commands.push("git log --oneline -n 40");
    else {
      const search = /\b(?:search|grep|find|where is)\s+(?:for\s+)?["'`]?([\w.-]{3,})/i.exec(text);
      if (search) commands.push(`rg -n "${search[1]}"`);
    }
  }
  const words = (text.toLowerCase().match(/[a-z][a-z0-9_]{3,}/g) ?? []).filter((w) => !STOPWORDS.has(w));
  return { files, dirs, commands, keyword: words[0] ?? "main" };
}

/** A question about something said earlier in the conversation. */
const RECALL = /\b(earlier|previously|before the summary|remind me|did (i|we|you) (say|decide|agree|write|mention)|what was the|what were the|do you remember|recall)\b/i;
const RECALL_WORDS = new Set("earlier previously remind remember recall said say decide decided agree agreed mention mentioned write wrote what did".split(" "));

/** The words to search the history for: what the question names, without the asking. */
function recallQuery(text) {
  const { files, dirs } = readRequest(text);
  const words = (text.toLowerCase().match(/[a-z0-9][\w.-]*[a-z0-9]|[a-z0-9]/g) ?? []).filter(
    (w) => (w.length > 3 || /\d/.test(w)) && !STOPWORDS.has(w) && !RECALL_WORDS.has(w),
  );
  return [...new Set([...files, ...dirs, ...words])].slice(0, 6).join(" ") || "summary";
}

/** The tool calls for a request: one or two, from the tools the request declares. */
function planCalls(text, declared) {
  if (declared.has("search_history") && RECALL.test(text)) {
    return { calls: [["search_history", { query: recallQuery(text) }]], together: false };
  }
  const h = hashText(text);
  const { files, dirs, commands, keyword } = readRequest(text);
  const wanted = [];
  if (files[0]) wanted.push(["read_file", { path: files[0] }]);
  if (dirs[0]) wanted.push(["list_files", { path: dirs[0] }]);
  if (commands[0]) wanted.push(["run_command", { command: commands[0] }]);
  if (files[1]) wanted.push(["read_file", { path: files[1] }]);
  if (wanted.length === 0) {
    const ext = ["rs", "js", "ts"][h % 3];
    if (h % 4 === 0) wanted.push(["list_files", { path: "src" }], ["read_file", { path: `src/${keyword}.${ext}` }]);
    else if (h % 4 === 1) wanted.push(["read_file", { path: `src/${keyword}.${ext}` }]);
    else if (h % 4 === 2) wanted.push(["read_file", { path: `src/${keyword}.rs` }], ["run_command", { command: `cargo test ${keyword}` }]);
    else wanted.push(["run_command", { command: `rg -n "${keyword}" src` }], ["read_file", { path: `src/${keyword}.${ext}` }]);
  }
  let calls = wanted.filter(([name]) => declared.has(name));
  if (calls.length === 0 && wanted.length > 0 && declared.size > 0) {
    // None of the demo tools is declared: call the first declared tool,
    // filling its required string parameters from the request.
    const [name, schema] = [...declared.entries()][0];
    const args = {};
    for (const key of schema?.required ?? []) {
      const type = schema?.properties?.[key]?.type;
      args[key] =
        type === "number" || type === "integer" ? 1 : type === "boolean" ? false : /command|cmd/.test(key) ? commands[0] ?? "ls" : files[0] ?? dirs[0] ?? `src/${keyword}.rs`;
    }
    calls = [[name, args]];
  }
  return { calls: calls.slice(0, 2), together: ((h >>> 5) & 1) === 1 };
}

/** What the agent says when it starts a tool call. */
function preamble(name, args, h) {
  const target = args.path ?? args.command ?? Object.values(args)[0] ?? "";
  const lead = ["Let me", "I'll", "First I'll", "I will"][h % 4];
  switch (name) {
    case "read_file":
      return `${lead} read \`${target}\` to see what it does.`;
    case "list_files":
      return `${lead} list \`${target}\` to see how it is laid out.`;
    case "run_command":
      return `${lead} run \`${target}\` and look at the output.`;
    case "search_history":
      return `${lead} look that up in the earlier part of our conversation.`;
    default:
      return `${lead} use \`${name}\` on \`${target}\`.`;
  }
}

/** Facts taken from a tool result, for the final answer. */
function describeResult(name, args, text) {
  const target = args?.path ?? args?.command ?? name;
  const lines = text.split("\n").length;
  if (text.length < 400 && /\b(error|not found|must be|unknown tool|aborted|blocked)\b/i.test(text)) {
    return `\`${target}\` failed: ${oneLine(text, 160)}`;
  }
  if (name === "read_file") {
    const names = [];
    for (const m of text.matchAll(/\b(?:fn|struct|enum|trait|function|class|def|interface)\s+([A-Za-z_]\w*)/g)) {
      if (!names.includes(m[1])) names.push(m[1]);
      if (names.length === 3) break;
    }
    const todos = (text.match(/TODO/g) ?? []).length;
    return `\`${target}\` (${lines} lines${names.length ? `) defines ${names.map((n) => `\`${n}\``).join(", ")}` : ")"}${todos ? `; ${todos} TODO${todos > 1 ? "s" : ""} left in it` : ""}`;
  }
  if (name === "list_files") {
    const total = /(\d+ directories, \d+ files(?:, \d+ bytes)?)/.exec(text);
    return `\`${target}\` holds ${total ? total[1] : `${lines} entries`}`;
  }
  if (name === "run_command") {
    const exit = /\[exit code: (\d+)\]|exit (?:code|status)[: ]+(\d+)/i.exec(text);
    const code = exit ? exit[1] ?? exit[2] : null;
    const key = [...text.split("\n")].reverse().find((l) => /test result:|# (pass|fail)|Finished|warning: \d+|error(\[|:)/i.test(l));
    return `\`${target}\` exited with code ${code ?? "?"}${key ? ` (${oneLine(key, 90)})` : ""}`;
  }
  return `\`${name}\` returned ${lines} lines`;
}

const NEXT_STEPS = [
  "make the change in the smallest place that fixes it, then re-run the same check",
  "write a focused test for this case first, then fix the code until it passes",
  "keep the public API as it is and change only the internals shown above",
  "split the work into two commits: the fix, then the cleanup",
];

/**
 * The line of a search_history answer's best excerpt that has most of the
 * query's words, with its ref; null when nothing matched.
 */
function firstExcerpt(text, query) {
  const m = /\n1\. ref (h\d+\.\d+-[0-9a-z]{4}) \([^)]*\)\n([\s\S]*?)(?:\n\n|$)/.exec(text);
  if (!m) return null;
  const words = String(query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const score = (line) => words.filter((w) => line.toLowerCase().includes(w)).length;
  const lines = m[2].split("\n").map((l) => l.replace(/^…|…$/g, "").trim()).filter(Boolean);
  const best = lines.reduce((a, b) => (score(b) > score(a) ? b : a), lines[0] ?? "");
  return { ref: m[1], excerpt: best };
}

/** The final answer of a turn, after the tool results came back. */
function finalAnswer(request, results, h) {
  if (results.length > 0 && results.every((r) => r.name === "search_history")) {
    const found = firstExcerpt(results[0].text, results[0].args?.query);
    return found
      ? `From earlier in our conversation (${found.ref}): “${found.excerpt}”`
      : "I looked through the earlier part of our conversation and found nothing about that.";
  }
  const out = [`Here is what I found for “${oneLine(request, 100)}”:`, ""];
  for (const r of results) out.push(`- ${describeResult(r.name, r.args, r.text)}`);
  const failing = results.some((r) => /exited with code [1-9]|failed:/.test(describeResult(r.name, r.args, r.text)));
  out.push(
    "",
    failing
      ? "**Diagnosis:** the failure above is the thing to fix first; the rest of the output looks healthy."
      : "**Diagnosis:** nothing in this output is broken; the change you asked for fits in the code above.",
    "",
    `**Next step:** I suggest we ${NEXT_STEPS[h % NEXT_STEPS.length]}.`,
  );
  return out.join("\n");
}

/** A greeting or thanks on its own: answered with text, no tools. */
const GREETING = /^\s*(hi|hello|hey|thanks|thank you|good (morning|afternoon|evening))\b[\s\w,!.?']{0,30}$/i;

/** A text-only answer (no tools declared, tool_choice "none", or a greeting). */
function textAnswer(request, h) {
  if (!request.trim() || GREETING.test(request)) {
    return "Hello! Tell me what you would like to change in the project (a file, a failing test, a command to run) and I will take a look.";
  }
  const { files, commands, keyword } = readRequest(request);
  const subject = files[0] ? `\`${files[0]}\`` : `the \`${keyword}\` code`;
  return [
    `You asked: “${oneLine(request, 120)}”.`,
    "",
    `I have no tools in this conversation, so here is a plan for ${subject}:`,
    "",
    `1. Read ${subject} and note where \`${keyword}\` is handled.`,
    `2. ${commands[0] ? `Run \`${commands[0]}\` to see the current state.` : "Reproduce the behaviour with a small test."}`,
    `3. Then ${NEXT_STEPS[h % NEXT_STEPS.length]}.`,
  ].join("\n");
}

/** The user's current request: the last user message (a summary's Goal when that is the last one). */
function currentRequest(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role !== "user") continue;
    const text = textOf(messages[i].content);
    if (text.startsWith(SUMMARY_PREAMBLE) || text.startsWith(BRANCH_PREAMBLE)) {
      const goal = /## Goal\n([\s\S]*?)(?:\n\n|\n#|$)/.exec(text);
      const line = goal ? goal[1].split("\n")[0].replace(/^[-*\d.\s]+/, "").replace(/^“|”$/g, "") : "";
      return { index: i, text: line || "continue the work described in the summary" };
    }
    return { index: i, text };
  }
  return { index: -1, text: "" };
}

/** The chat answer: { text, toolCalls: [{ id, name, arguments }], finishReason }. */
function chatAnswer(body, bodyHash) {
  const messages = body.messages;
  const declared = new Map();
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    const fn = t?.function;
    if (fn && typeof fn.name === "string") declared.set(fn.name, fn.parameters ?? {});
  }
  const { index, text: request } = currentRequest(messages);
  const h = hashText(request);
  if (declared.size === 0 || body.tool_choice === "none" || GREETING.test(request)) {
    return { text: textAnswer(request, h), toolCalls: [], finishReason: "stop" };
  }
  // Tool calls already made in this turn, and their results.
  const calls = new Map();
  const results = [];
  let issued = 0;
  for (const m of messages.slice(index + 1)) {
    if (m?.role === "assistant" && Array.isArray(m.tool_calls)) {
      for (const tc of m.tool_calls) {
        issued++;
        let args = {};
        try {
          args = JSON.parse(tc?.function?.arguments ?? "{}") ?? {};
        } catch {
          // arguments the client sent back unparsed: described by name only
        }
        calls.set(tc?.id, { name: tc?.function?.name ?? "tool", args });
      }
    } else if (m?.role === "tool") {
      const call = calls.get(m.tool_call_id) ?? { name: "tool", args: {} };
      results.push({ ...call, text: textOf(m.content) });
    }
  }
  const plan = planCalls(request, declared);
  if (issued < plan.calls.length && issued < 4) {
    const next = plan.together && issued === 0 ? plan.calls : [plan.calls[issued]];
    const toolCalls = next.map(([name, args], k) => ({
      id: `call_${hashHex(`${bodyHash}:${issued + k}`).slice(0, 20)}`,
      name,
      arguments: JSON.stringify(args),
    }));
    return { text: preamble(next[0][0], next[0][1], h), toolCalls, finishReason: "tool_calls" };
  }
  if (results.length === 0) return { text: textAnswer(request, h), toolCalls: [], finishReason: "stop" };
  return { text: finalAnswer(request, results, h), toolCalls: [], finishReason: "stop" };
}

// ------------------------------------------------------------ summaries

function between(text, open, close) {
  const a = text.indexOf(open);
  if (a < 0) return null;
  const b = text.indexOf(close, a + open.length);
  return b < 0 ? text.slice(a + open.length) : text.slice(a + open.length, b);
}

/** The blocks of a serialized conversation: [{ tag, text }]. */
function conversationBlocks(conversation) {
  const blocks = [];
  const re = /(?:^|\n\n)\[(User|Assistant|Assistant thinking|Assistant tool calls|Tool result)\]: /g;
  let last = null;
  for (const m of conversation.matchAll(re)) {
    if (last) last.text = conversation.slice(last.start, m.index);
    last = { tag: m[1], start: m.index + m[0].length, text: "" };
    blocks.push(last);
  }
  if (last) last.text = conversation.slice(last.start);
  return blocks.map(({ tag, text }) => ({ tag, text }));
}

/** The structured summary answering a summarization prompt (< 1,500 characters). */
function summaryAnswer(prompt) {
  const conversation = between(prompt, "<conversation>\n", "\n</conversation>") ?? "";
  const previous = between(prompt, "<previous-summary>\n", "\n</previous-summary>");
  const focusMatch = /\n\nAdditional focus: ([\s\S]*)$/.exec(prompt);
  const focus = focusMatch ? focusMatch[1] : null;
  const blocks = conversationBlocks(conversation);
  const requests = blocks.filter((b) => b.tag === "User").map((b) => b.text);
  const touched = []; // [tool, target]
  const commands = [];
  for (const b of blocks.filter((b) => b.tag === "Assistant tool calls")) {
    for (const m of b.text.matchAll(/\b(\w+)\(((?:[^()"]|"(?:[^"\\]|\\.)*")*)\)/g)) {
      const arg = /\b(path|command)="((?:[^"\\]|\\.)*)"/.exec(m[2]);
      if (!arg) continue;
      let value = arg[2];
      try {
        value = JSON.parse(`"${arg[2]}"`);
      } catch {
        // kept escaped
      }
      if (arg[1] === "command" && !commands.includes(value)) commands.push(value);
      if (!touched.some(([t, v]) => t === m[1] && v === value)) touched.push([m[1], value]);
    }
  }
  const failures = blocks
    .filter((b) => b.tag === "Tool result")
    .map((b) => /test result: FAILED[^\n]*|# fail [1-9]\d*|\[exit code: [1-9]\d*\]/.exec(b.text)?.[0])
    .filter(Boolean);
  const previousGoals = (previous ? between(previous, "## Goal\n", "\n\n") ?? "" : "")
    .split("\n")
    .map((l) => l.replace(/^[-*]\s*/, "").trim())
    .filter(Boolean)
    .slice(0, 2);
  const previousDone = (previous ?? "")
    .split("\n")
    .filter((l) => /^- \[x\] /.test(l))
    .map((l) => l.slice(6))
    .slice(0, 3);
  const first = requests[0] ?? null;
  const last = requests[requests.length - 1] ?? null;
  const constraints = requests.filter((r) => /\b(must|don't|do not|never|always|without|keep|prefer|only)\b/i.test(r)).slice(0, 2);
  const after = prompt.slice(prompt.lastIndexOf("</conversation>"));
  const turnPrefix = /## Original Request/.test(after) && !/## Goal/.test(after);

  // Rendered with line budgets scaled by `k`, shrunk until it fits: every
  // section (and the focus line) stays, only the lines get shorter.
  const render = (k) => {
    const cut = (text, max) => oneLine(text, Math.max(24, Math.round(max * k)));
    const used = (n) => touched.slice(0, n).map(([t, v]) => `${t} \`${cut(v, 60)}\``);
    if (turnPrefix) {
      return [
        "## Original Request",
        first ? cut(first, 300) : "(the request is in the kept part of the turn)",
        "",
        "## Early Progress",
        ...(touched.length ? used(4).map((t) => `- Used ${t}`) : ["- (no tool calls yet)"]),
        "",
        "## Context for the Remaining Turn",
        `- ${blocks.length} transcript blocks summarized; ${failures.length ? `failures seen: ${cut(failures[0], 80)}` : "no failures seen"}`,
        ...(focus ? [`- **Focus**: ${cut(focus, 160)}`] : []),
      ].join("\n");
    }
    const goals = previousGoals.map((g) => `- ${cut(g, 180)}`);
    if (first && !previousGoals.some((g) => g.includes(oneLine(first, 40).replace(/…$/, "")))) goals.push(`- ${cut(first, 200)}`);
    if (goals.length === 0) goals.push("- (not stated in the transcript)");
    const done = previousDone.map((d) => `- [x] ${cut(d, 100)}`);
    for (const t of used(6 - done.length)) done.push(`- [x] Used ${t}`);
    if (done.length === 0) done.push("- [x] Discussed the request");
    return [
      "## Goal",
      ...goals,
      "",
      "## Constraints & Preferences",
      ...(constraints.length ? constraints.map((c) => `- ${cut(c, 120)}`) : ["- (none)"]),
      "",
      "## Progress",
      "### Done",
      ...done,
      "",
      "### In Progress",
      `- [ ] ${last ? cut(last, 140) : "Continue the work above"}`,
      "",
      "### Blocked",
      failures.length ? `- ${cut(failures[0], 100)}` : "- (none)",
      "",
      "## Key Decisions",
      "- **Read before changing**: every change is based on the tool output above",
      ...(focus ? [`- **Focus**: ${cut(focus, 160)}`] : []),
      "",
      "## Next Steps",
      `1. ${last ? `Finish: ${cut(last, 120)}` : "Pick up the last request"}`,
      `2. ${commands[0] ? `Re-run \`${cut(commands[0], 60)}\`` : "Verify the result with a test"}`,
      "",
      "## Critical Context",
      `- ${requests.length} user request${requests.length === 1 ? "" : "s"} and ${touched.length} tool target${touched.length === 1 ? "" : "s"} in this part of the conversation`,
    ].join("\n");
  };
  for (const k of [1, 0.7, 0.5, 0.35]) {
    const text = render(k);
    if (text.length <= 1_450) return text;
  }
  return `${render(0.2).slice(0, 1_440).trimEnd()}\n…`;
}

// ------------------------------------------------------------ responses

function usageOf(promptTokens, answer, cachedTokens) {
  const chars = answer.text.length + answer.toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  const completion = Math.ceil(chars / 4);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
    prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function toolCallJson(c) {
  return { id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } };
}

function completionJson(id, model, answer, usage) {
  const message = { role: "assistant", content: answer.text === "" ? null : answer.text, refusal: null, annotations: [] };
  if (answer.toolCalls.length > 0) message.tool_calls = answer.toolCalls.map(toolCallJson);
  return {
    id,
    object: "chat.completion",
    created: CREATED,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
    usage,
    service_tier: "default",
    system_fingerprint: "fp_local",
  };
}

/** Splits text into stream deltas of about `size` characters, at spaces where possible. */
function pieces(text, size) {
  const out = [];
  let i = 0;
  while (i < text.length) {
    let end = Math.min(text.length, i + size);
    if (end < text.length) {
      const space = text.lastIndexOf(" ", end);
      if (space > i + size / 2) end = space + 1;
    }
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

/** The SSE events of a streamed answer, as `data:` payloads. */
function streamEvents(id, model, answer, usage, includeUsage, chunkChars) {
  const chunk = (delta, finish_reason = null) => ({
    id,
    object: "chat.completion.chunk",
    created: CREATED,
    model,
    system_fingerprint: "fp_local",
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
  });
  const events = [chunk({ role: "assistant", content: "", refusal: null })];
  for (const p of pieces(answer.text, Math.max(1, chunkChars))) events.push(chunk({ content: p }));
  answer.toolCalls.forEach((c, index) => {
    events.push(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
    for (const p of pieces(c.arguments, Math.max(8, Math.ceil(c.arguments.length / 3)))) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
    }
  });
  events.push(chunk({}, answer.finishReason));
  if (includeUsage) {
    events.push({ id, object: "chat.completion.chunk", created: CREATED, model, system_fingerprint: "fp_local", choices: [], usage });
  }
  return events;
}

/** Cuts a text answer to `max_completion_tokens` / `max_tokens` (finish_reason "length"). */
function applyMaxTokens(answer, body) {
  const limit = body.max_completion_tokens ?? body.max_tokens;
  if (typeof limit !== "number" || limit <= 0 || answer.toolCalls.length > 0) return answer;
  if (Math.ceil(answer.text.length / 4) <= limit) return answer;
  return { ...answer, text: answer.text.slice(0, limit * 4), finishReason: "length" };
}

function checkConfig(partial) {
  if (!partial || typeof partial !== "object" || Array.isArray(partial)) throw new TypeError("config must be a JSON object");
  const out = {};
  for (const [key, value] of Object.entries(partial)) {
    const type = CONFIG_TYPES[key];
    if (!type) throw new TypeError(`unknown config key "${key}" (known: ${Object.keys(CONFIG_TYPES).join(", ")})`);
    const ok =
      type === "count"
        ? Number.isInteger(value) && value >= 0
        : type === "duration"
          ? Number.isFinite(value) && value >= 0
          : type === "string"
            ? typeof value === "string" && value !== ""
            : typeof value === type;
    const expected = { count: "an integer ≥ 0", duration: "a number ≥ 0", string: "a non-empty string" }[type] ?? `a ${type}`;
    if (!ok) throw new TypeError(`config "${key}" must be ${expected}`);
    out[key] = value;
  }
  return out;
}

// ------------------------------------------------------------ Anthropic Messages

/** The text of Anthropic content: a string, or its text blocks. */
function anthropicText(content) {
  if (typeof content === "string") return content;
  return (Array.isArray(content) ? content : []).map((b) => (b?.type === "text" ? b.text : "")).join("\n");
}

/**
 * An Anthropic Messages request as the Chat Completions body the model
 * answers (system first; a user message's tool_result blocks become tool
 * messages; tool_use blocks become tool calls).
 */
function chatBodyOfAnthropic(body) {
  const messages = [];
  const system = anthropicText(body.system ?? "");
  if (system) messages.push({ role: "system", content: system });
  for (const m of body.messages) {
    const blocks = typeof m?.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m?.content) ? m.content : [];
    if (m?.role === "assistant") {
      const calls = blocks.filter((b) => b?.type === "tool_use");
      const out = { role: "assistant", content: anthropicText(blocks) };
      if (calls.length) out.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) } }));
      messages.push(out);
      continue;
    }
    for (const b of blocks) {
      if (b?.type === "tool_result") messages.push({ role: "tool", tool_call_id: b.tool_use_id, content: anthropicText(b.content) });
    }
    const text = anthropicText(blocks.filter((b) => b?.type !== "tool_result"));
    if (text || !blocks.some((b) => b?.type === "tool_result")) messages.push({ role: "user", content: text });
  }
  const tools = (Array.isArray(body.tools) ? body.tools : []).map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.input_schema } }));
  return { messages, tools, tool_choice: body.tool_choice?.type === "none" ? "none" : undefined, max_tokens: body.max_tokens };
}

const ANTHROPIC_STOP = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens" };

/** The answer as Anthropic content blocks. */
function anthropicContent(answer) {
  const content = [];
  if (answer.text !== "") content.push({ type: "text", text: answer.text });
  for (const c of answer.toolCalls) content.push({ type: "tool_use", id: c.id, name: c.name, input: JSON.parse(c.arguments) });
  return content;
}

/** The SSE events of a streamed Anthropic answer: [event, data] pairs. */
function anthropicEvents(id, model, answer, usage, chunkChars) {
  const events = [["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }]];
  anthropicContent(answer).forEach((block, index) => {
    if (block.type === "text") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
      for (const p of pieces(block.text, Math.max(1, chunkChars))) events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: p } }]);
    } else {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } }]);
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push(["message_delta", { type: "message_delta", delta: { stop_reason: ANTHROPIC_STOP[answer.finishReason], stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events;
}

/** A request's JSON body: `{ raw, body }`, `body` null when it does not parse. */
async function readJson(req) {
  const raw = await readBody(req);
  try {
    return { raw, body: JSON.parse(raw) };
  } catch {
    return { raw, body: null };
  }
}

/** The provider's time for a request: the prompt read before the first token, then the answer. */
function providerTime(cfg, promptTokens, cachedTokens, outputTokens) {
  return {
    readMs: (promptTokens - cachedTokens) * cfg.inputMsPerToken + cachedTokens * cfg.cachedInputMsPerToken,
    writeMs: outputTokens * cfg.outputMsPerToken,
  };
}

function anthropicError(res, status, message, type = "invalid_request_error") {
  sendJson(res, status, { type: "error", error: { type, message } });
}

// ------------------------------------------------------------ the handler

/**
 * The local model as a request handler for scripts/serve.mjs's `handlers`.
 * Options: `prefix` (default "/local/v1") and any config field
 * (DEFAULT_CONFIG; e.g. `{ delayMs: 0, contextWindow: 8000 }`).
 *
 * Returns `{ handle(req, res, url) → Promise<boolean>, requests, config,
 * setConfig(partial) → config, reset({ keepConfig? }), waitForRequests(count) }`.
 */
export function createLocalModel({ prefix = "/local/v1", ...options } = {}) {
  const initial = Object.freeze({ ...DEFAULT_CONFIG, ...checkConfig(options) });
  let config = { ...initial };
  const requests = [];
  const waiters = [];
  const cache = createPromptCache();
  const anthropicCache = createAnthropicCache();
  let seq = 0;

  function notify() {
    for (const w of [...waiters]) {
      if (requests.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(requests.slice());
      }
    }
  }

  function record(fields) {
    const r = { seq: ++seq, time: Date.now(), ...fields };
    requests.push(r);
    notify();
    return r;
  }

  /** Whether a request of this kind is forced to overflow (`overflowNext` counts down). */
  function forcedOverflow(kind, cfg) {
    if (kind !== "chat" || !(cfg.overflowAlways || cfg.overflowNext > 0)) return false;
    if (cfg.overflowNext > 0) config.overflowNext = Math.max(0, config.overflowNext - 1);
    return true;
  }

  /** The answer to a Chat Completions body: a summary, or the coding agent's turn. */
  function answerTo(chat, summaryPrompt, bodyHash) {
    const answer = summaryPrompt === null ? chatAnswer(chat, bodyHash) : { text: summaryAnswer(summaryPrompt), toolCalls: [], finishReason: "stop" };
    return applyMaxTokens(answer, chat);
  }

  /**
   * Sends an answer after the provider's time: `whole()` as JSON, or, when
   * the request streams, the SSE `frames()` spread over the answer's time,
   * then `last`.
   */
  async function deliver(res, cfg, { readMs, writeMs }, stream, whole, frames, last) {
    let closed = false;
    res.on("close", () => {
      closed = true;
    });
    if (!stream) {
      if (cfg.delayMs + readMs + writeMs > 0) await sleep(cfg.delayMs + readMs + writeMs);
      if (!closed) sendJson(res, 200, whole());
      return;
    }
    const events = frames();
    res.writeHead(200, { ...CORS, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders?.();
    if (readMs > 0) await sleep(readMs);
    const perEvent = cfg.delayMs + writeMs / events.length;
    for (const frame of events) {
      if (perEvent > 0) await sleep(perEvent);
      if (closed) return;
      res.write(frame);
    }
    if (!closed) res.end(last);
  }

  async function completions(req, res, url) {
    if (req.method !== "POST") {
      openAiError(res, 405, `Method ${req.method} not allowed`);
      return;
    }
    const { raw, body } = await readJson(req);
    if (!body || typeof body !== "object" || !Array.isArray(body.messages)) {
      const message = body === null ? "We could not parse the JSON body of your request." : "'messages' is a required property";
      record({ method: req.method, path: url.pathname, kind: "invalid", status: 400, body, promptTokens: 0, cachedTokens: 0, completionTokens: 0, overflow: null, reply: null });
      openAiError(res, 400, message);
      return;
    }
    const cfg = { ...config };
    const promptTokens = estimatePromptTokens(body);
    const summaryPrompt = summarizationPrompt(body.messages);
    const kind = summaryPrompt === null ? "chat" : "summary";
    const overflowing = forcedOverflow(kind, cfg) || promptTokens > cfg.contextWindow;
    const model = typeof body.model === "string" && body.model ? body.model : cfg.modelId;
    const base = { method: req.method, path: url.pathname, body };

    if (overflowing && !cfg.silentOverflow) {
      const reported = Math.max(promptTokens, cfg.contextWindow + 1);
      record({ ...base, kind: "overflow", status: 400, promptTokens: reported, cachedTokens: 0, completionTokens: 0, overflow: "error", reply: null });
      if (cfg.delayMs > 0) await sleep(cfg.delayMs);
      sendJson(res, 400, {
        error: {
          message: `This model's maximum context length is ${cfg.contextWindow} tokens. However, your messages resulted in ${reported} tokens. Please reduce the length of the messages.`,
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      });
      return;
    }

    const bodyHash = hashHex(raw);
    const answer = answerTo(body, summaryPrompt, bodyHash);
    const reportedPrompt = overflowing ? Math.max(promptTokens, cfg.contextWindow + 1) : promptTokens;
    const cachedTokens = cfg.promptCache ? cache.lookup(body, reportedPrompt) : 0;
    const usage = usageOf(reportedPrompt, answer, cachedTokens);
    record({
      ...base,
      kind,
      status: 200,
      promptTokens: reportedPrompt,
      cachedTokens,
      completionTokens: usage.completion_tokens,
      overflow: overflowing ? "silent" : null,
      reply: { text: answer.text, toolCalls: answer.toolCalls.map((c) => ({ ...c })), finishReason: answer.finishReason },
    });
    const id = `chatcmpl-local${bodyHash}`;
    await deliver(
      res,
      cfg,
      providerTime(cfg, reportedPrompt, cachedTokens, usage.completion_tokens),
      body.stream === true,
      () => completionJson(id, model, answer, usage),
      () => streamEvents(id, model, answer, usage, body.stream_options?.include_usage === true, cfg.chunkChars).map((e) => `data: ${JSON.stringify(e)}\n\n`),
      "data: [DONE]\n\n",
    );
  }

  /** POST {prefix}/messages: Anthropic's Messages API over the same model. */
  async function messagesApi(req, res, url) {
    if (req.method !== "POST") {
      anthropicError(res, 405, `Method ${req.method} not allowed`);
      return;
    }
    const { raw, body } = await readJson(req);
    const base = { method: req.method, path: url.pathname, body, api: "anthropic-messages" };
    if (!body || typeof body !== "object" || !Array.isArray(body.messages)) {
      record({ ...base, kind: "invalid", status: 400, promptTokens: 0, cachedTokens: 0, completionTokens: 0, overflow: null, reply: null });
      anthropicError(res, 400, body === null ? "There was an error parsing the body of your request." : "messages: Field required");
      return;
    }
    const cfg = { ...config };
    const chat = chatBodyOfAnthropic(body);
    const summaryPrompt = summarizationPrompt(chat.messages);
    const kind = summaryPrompt === null ? "chat" : "summary";
    const forced = forcedOverflow(kind, cfg);
    const tokens = cfg.promptCache ? anthropicCache.lookup(body) : { input: Math.ceil(anthropicBlocks(body).reduce((n, b) => n + b.chars, 0) / 4), read: 0, written: 0 };
    const promptTokens = tokens.input + tokens.read + tokens.written;
    if ((forced || promptTokens > cfg.contextWindow) && !cfg.silentOverflow) {
      const reported = Math.max(promptTokens, cfg.contextWindow + 1);
      record({ ...base, kind: "overflow", status: 400, promptTokens: reported, cachedTokens: 0, completionTokens: 0, overflow: "error", reply: null });
      if (cfg.delayMs > 0) await sleep(cfg.delayMs);
      anthropicError(res, 400, `prompt is too long: ${reported} tokens > ${cfg.contextWindow} maximum`);
      return;
    }
    const bodyHash = hashHex(raw);
    const answer = answerTo(chat, summaryPrompt, bodyHash);
    const outputTokens = usageOf(0, answer, 0).completion_tokens;
    const usage = { input_tokens: tokens.input, cache_creation_input_tokens: tokens.written, cache_read_input_tokens: tokens.read, output_tokens: outputTokens };
    record({
      ...base,
      kind,
      status: 200,
      promptTokens,
      cachedTokens: tokens.read,
      cacheWriteTokens: tokens.written,
      completionTokens: outputTokens,
      overflow: promptTokens > cfg.contextWindow ? "silent" : null,
      reply: { text: answer.text, toolCalls: answer.toolCalls.map((c) => ({ ...c })), finishReason: answer.finishReason },
    });
    const id = `msg_local${bodyHash}`;
    const model = typeof body.model === "string" && body.model ? body.model : cfg.modelId;
    await deliver(
      res,
      cfg,
      providerTime(cfg, promptTokens, tokens.read, outputTokens),
      body.stream === true,
      () => ({ id, type: "message", role: "assistant", model, content: anthropicContent(answer), stop_reason: ANTHROPIC_STOP[answer.finishReason], stop_sequence: null, usage }),
      () => anthropicEvents(id, model, answer, usage, cfg.chunkChars).map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
      undefined,
    );
  }

  async function handle(req, res, url) {
    const path = url.pathname;
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return false;
    const route = path.slice(prefix.length);
    if (req.method === "OPTIONS") {
      const allow = {
        ...CORS,
        "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": req.headers["access-control-request-headers"] || "*",
        "access-control-max-age": "600",
      };
      if (req.headers["access-control-request-private-network"]) allow["access-control-allow-private-network"] = "true";
      res.writeHead(204, allow);
      res.end();
      return true;
    }
    try {
      switch (route) {
        case "/chat/completions":
          await completions(req, res, url);
          return true;
        case "/messages":
          await messagesApi(req, res, url);
          return true;
        case "/models":
          if (req.method !== "GET") openAiError(res, 405, `Method ${req.method} not allowed`);
          else sendJson(res, 200, { object: "list", data: [{ id: config.modelId, object: "model", created: CREATED, owned_by: "local" }] });
          return true;
        case "/config":
          if (req.method === "GET") sendJson(res, 200, { ...config });
          else if (req.method === "POST") {
            let partial;
            try {
              partial = JSON.parse((await readBody(req)) || "{}");
              sendJson(res, 200, api.setConfig(partial));
            } catch (err) {
              openAiError(res, 400, `config: ${err.message}`);
            }
          } else openAiError(res, 405, `Method ${req.method} not allowed`);
          return true;
        case "/requests": {
          if (req.method !== "GET") {
            openAiError(res, 405, `Method ${req.method} not allowed`);
            return true;
          }
          const kind = url.searchParams.get("kind");
          sendJson(res, 200, kind ? requests.filter((r) => r.kind === kind) : requests);
          return true;
        }
        case "/reset": {
          if (req.method !== "POST") {
            openAiError(res, 405, `Method ${req.method} not allowed`);
            return true;
          }
          let keepConfig = false;
          try {
            keepConfig = JSON.parse((await readBody(req)) || "{}")?.keepConfig === true;
          } catch {
            // an unparsable body resets everything
          }
          api.reset({ keepConfig });
          sendJson(res, 200, { ok: true, config: { ...config } });
          return true;
        }
        default:
          openAiError(res, 404, `Unknown path ${path}`, "invalid_request_error", { code: "unknown_url" });
          return true;
      }
    } catch (err) {
      if (!res.headersSent) openAiError(res, err.status ?? 500, `local model: ${err.message}`, "server_error");
      else res.destroy(err);
      return true;
    }
  }

  const api = {
    handle,
    prefix,
    /** Every chat-completions request, in arrival order (see the file header for a record's fields). */
    requests,
    /** A copy of the current config. */
    get config() {
      return { ...config };
    },
    /** Merges known fields (checked) into the config; returns the new config. */
    setConfig(partial) {
      config = { ...config, ...checkConfig(partial) };
      return { ...config };
    },
    /** Clears the request log and, unless `keepConfig`, restores the initial config. */
    reset({ keepConfig = false } = {}) {
      requests.length = 0;
      cache.clear();
      anthropicCache.clear();
      if (!keepConfig) config = { ...initial };
    },
    /** Resolves with the log once at least `count` requests have arrived. */
    waitForRequests(count = requests.length + 1) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
  };
  return api;
}
