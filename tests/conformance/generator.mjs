// Random but valid flat message arrays (SPEC.md §1) for the conformance
// comparison against pi 0.73.1, and the mapping of a flat array to the pi
// session entries it stands for (SPEC.md §2, "pi-compatible on the flat
// array").
//
// Everything is a pure function of the seed: `generateSession(seed)` returns
// the same array on every run and every machine (own PRNG, no Math.random,
// no Date.now), so a mismatch is reproduced from its seed alone.

// ---------------------------------------------------------------------------
// PRNG: mulberry32, seeded through a splitmix32 step so that neighbouring
// seeds give unrelated streams.
// ---------------------------------------------------------------------------

export function createRng(seed) {
  let s = (Number(seed) >>> 0) ^ 0x9e3779b9;
  s = Math.imul(s ^ (s >>> 16), 0x85ebca6b);
  s = Math.imul(s ^ (s >>> 13), 0xc2b2ae35);
  s = (s ^ (s >>> 16)) >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng = {
    next,
    /** Integer in [lo, hi]. */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    /** Picks a key of `{ key: weight }`. */
    weighted: (table) => {
      const entries = Object.entries(table);
      let total = 0;
      for (const [, w] of entries) total += w;
      let r = next() * total;
      for (const [k, w] of entries) {
        r -= w;
        if (r < 0) return k;
      }
      return entries[entries.length - 1][0];
    },
    /** Roughly log-uniform integer in [lo, hi] (lo ≥ 1). */
    logInt: (lo, hi) => Math.min(hi, Math.floor(Math.exp(Math.log(lo) + next() * (Math.log(hi + 1) - Math.log(lo))))),
  };
  return rng;
}

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

const ASCII_WORDS = (
  "the a an of to in is it that this for on with as be by at from or and not are was " +
  "function const let var return if else while for match impl struct enum trait pub fn use mod " +
  "file path error warning test value result option src lib main cargo build npm run node fix bug " +
  "TODO FIXME OK done read write edit bash grep find ls cat echo git commit diff 0 1 2 42 100 3.14 " +
  "-1 1e21 null undefined true false NaN Infinity {} [] () => == === != < > <= >= && || ! ? : ; , ."
).split(" ");

const UNICODE_TOKENS = [
  "é", "ü", "ß", "naïve", "café", "Ωmega", "≈", "€", "£", "©", "—", "…", "“quoted”", "‘x’",
  "中文", "日本語のテキスト", "한국어", "汉字", "繁體字", "ｆｕｌｌｗｉｄｔｈ", "ｆ",
  "😀", "👍🏽", "🧑‍💻", "🇯🇵", "🎉", "💩", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𠜎",
  "e\u0301", "a\u0308", "مرحبا", "שלום", "Привет", "Ελληνικά",
  "\u00a0", "\u2028", "\u2029", "\u200b", "\u200d", "\ufeff", "\uffff", "\ufffd",
  "\u0000", "\u0001", "\u001f", "\u007f", "\u0080", "\b", "\f", "\v",
  "\ud800", "\udfff", "\udbff", "\udc00", "\udbff\udfff", "\ud83d",
  "ſ", "\u212a", "İ", "ı", "ﬀ",
];

const PUNCT = [" ", " ", " ", " ", " ", "\n", "\n\n", "\t", ", ", ". ", "; ", ": ", "\r\n", '"', "'", "\\", "/", "`", "<", ">", "&", "#", "$", "%", "{", "}", "[", "]"];

/** Text helpers bound to one RNG and one session's flavour. */
function textFactory(rng, unicodeShare) {
  const token = () => (rng.chance(unicodeShare) ? rng.pick(UNICODE_TOKENS) : rng.pick(ASCII_WORDS));
  const short = (len) => {
    let s = "";
    while (s.length < len) s += token() + rng.pick(PUNCT);
    // Cutting may split a surrogate pair: a lone surrogate, as real
    // truncated output has.
    return rng.chance(0.8) ? s.slice(0, len) : s;
  };
  // A per-session pool of text to slice long strings from (fast).
  const pool = short(6000 + rng.int(0, 6000));
  const text = (len) => {
    if (len <= 0) return "";
    if (len <= 96) return short(len);
    const parts = [];
    let remaining = len;
    while (remaining > 0) {
      const off = rng.int(0, pool.length - 1);
      const take = Math.min(remaining, pool.length - off, rng.int(1, 4000));
      parts.push(pool.slice(off, off + take));
      remaining -= take;
    }
    return parts.join("");
  };
  return { token, short, text };
}

// ---------------------------------------------------------------------------
// JSON values for tool-call arguments
// ---------------------------------------------------------------------------

const NUMBERS = [
  0, -0, 1, -1, 2, 7, 42, 100, 255, 1024, 65536, 0.1, 0.2, 0.1 + 0.2, 0.5, 1.5, -2.5, 1 / 3, 2 / 3,
  3.141592653589793, 2.718281828459045, 12345.678, 1e21, 1e20, 123456789012345680000, 1e22, 1e-6,
  1e-7, 1.234e-7, 0.000001234, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
  2 ** 53, 2 ** 53 + 2, -(2 ** 53), 2 ** 31, -(2 ** 31), 2 ** 32, 4294967295, 1e100, -1e-100,
  9007199254740993, 0.30000000000000004, 1e300 * 10, 123e-20,
];

const KEYS = [
  "path", "content", "oldText", "newText", "command", "timeout", "offset", "limit", "pattern",
  "0", "1", "2", "10", "01", "-1", "1.5", "-0", "4294967294", "4294967295", "9007199254740993",
  "", " ", "a", "b", "z", "A", "Z", "_", "$", "key with spaces", "émoji😀", "中文", "\ud800", "\u2028",
  "constructor", "toString", "hasOwnProperty", "length",
];

function jsonValueFactory(rng, txt) {
  const number = () => {
    switch (rng.int(0, 4)) {
      case 0:
      case 1:
        return rng.pick(NUMBERS);
      case 2:
        return rng.int(-1000000, 1000000);
      case 3:
        return (rng.next() - 0.5) * 10 ** rng.int(-30, 30);
      default:
        return rng.next();
    }
  };
  const string = () => (rng.chance(0.7) ? txt.short(rng.int(0, 40)) : txt.text(rng.logInt(1, 3000)));
  const object = (depth) => {
    const o = {};
    const n = rng.int(0, 5);
    for (let i = 0; i < n; i++) {
      const k = rng.chance(0.85) ? rng.pick(KEYS) : txt.short(rng.int(0, 12));
      if (k === "__proto__") continue;
      o[k] = value(depth + 1);
    }
    if (rng.chance(0.02)) {
      // An own "__proto__" property, as JSON.parse creates one.
      Object.defineProperty(o, "__proto__", { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return o;
  };
  const value = (depth = 0) => {
    const kind = rng.weighted(
      depth >= 3
        ? { string: 5, number: 4, bool: 1, null: 1 }
        : { string: 5, number: 4, bool: 1, null: 1, array: 2, object: 2 },
    );
    switch (kind) {
      case "string":
        return string();
      case "number":
        return number();
      case "bool":
        return rng.chance(0.5);
      case "null":
        return null;
      case "array": {
        const n = rng.int(0, 5);
        const a = [];
        for (let i = 0; i < n; i++) a.push(value(depth + 1));
        return a;
      }
      default:
        return object(depth);
    }
  };
  return { value, object, number, string };
}

// ---------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------

const PATHS = [
  "src/main.rs", "src/lib.rs", "README.md", "package.json", "/tmp/x.txt", "/Users/me/project/src/index.ts",
  "docs/日本語.md", "src/ü.rs", "😀.txt", "ｆull.txt", "Zeta.md", "alpha.md", "_under.md", "~/home.txt",
  "a b/c d.txt", "src/\ud800.rs", "src/\uffff.rs", "src/é.rs", "src/e\u0301.rs", "10.txt", "9.txt",
  "B.md", "b.md", "src/\ud83d\ude00/x.ts", "src/\uff46.ts", "Ω/omega.txt", "./rel/../path.txt", // path-check: data
];

const OTHER_TOOLS = ["grep", "find", "ls", "Read", "WRITE", "web_fetch", "todo", "task", "mcp__server__tool", ""];

/** Error texts for `stopReason: "error"`: provider overflow errors and others. */
export const ERROR_MESSAGES = [
  'prompt is too long: 213462 tokens > 200000 maximum',
  '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208611 tokens > 200000 maximum"}}',
  '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
  "Your input exceeds the context window of this model. Please adjust your input and try again.",
  "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
  "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
  "Please reduce the length of the messages or completion.",
  "This endpoint's maximum context length is 128000 tokens. However, you requested about 200000 tokens.",
  "prompt token count of 140000 exceeds the limit of 128000",
  "the request exceeds the available context size, try increasing it",
  "context_length_exceeded",
  "400 status code (no body)",
  "413 (no body)",
  "Throttling error: Too many tokens, please wait before trying again.",
  "ThrottlingException: Too many tokens, please wait before trying again.",
  "429 Too Many Requests",
  "Rate limit reached: prompt is too long",
  "Service unavailable: The service is temporarily unavailable.",
  "Connection error.",
  "terminated",
  "Request was aborted",
  "500 Internal Server Error",
  "overloaded_error: Overloaded",
  "prompt iſ too long",
  "",
];

/**
 * A random valid flat array for `seed`.
 *
 * options:
 * - `minMessages` / `maxMessages`: bounds on the number of conversation
 *   messages before summaries are inserted (default: a size class drawn
 *   from the seed, from 0–3 messages to a few hundred);
 * - `maxTextScale`: caps the density class ("light" | "normal" | "heavy").
 */
export function generateSession(seed, options = {}) {
  const rng = createRng(seed);
  const sizeClass = rng.weighted({ tiny: 15, small: 30, medium: 35, large: 20 });
  const [lo, hi] = { tiny: [0, 3], small: [4, 25], medium: [26, 120], large: [121, 400] }[sizeClass];
  let target = rng.int(lo, hi);
  if (options.maxMessages !== undefined) target = Math.min(target, options.maxMessages);
  if (options.minMessages !== undefined) target = Math.max(target, options.minMessages);
  const densities = ["light", "normal", "heavy"];
  let density = rng.weighted({ light: 30, normal: 50, heavy: 20 });
  if (options.maxTextScale && densities.indexOf(density) > densities.indexOf(options.maxTextScale)) {
    density = options.maxTextScale;
  }
  const unicodeShare = rng.pick([0, 0.02, 0.05, 0.1, 0.3]);
  const txt = textFactory(rng, unicodeShare);
  const json = jsonValueFactory(rng, txt);
  const scale = { light: 0.15, normal: 1, heavy: 4 }[density];
  // A text length: log-uniform up to a few times `typical`, now and then ten
  // times more, never over `max` (both scaled by the session's density).
  const size = (typical, max) => {
    const cap = Math.max(1, Math.round(max * scale));
    let n = rng.logInt(1, Math.max(1, Math.round(typical * scale * 4)));
    if (rng.chance(0.05)) n *= 10;
    return Math.min(n, cap);
  };

  let clock = 1_700_000_000_000 + rng.int(0, 100_000_000) * 1000;
  const tick = () => (clock += rng.int(2, 90_000));
  let idCounter = 0;
  const toolCallId = () => `toolu_${(seed >>> 0).toString(36)}_${(idCounter++).toString(36)}`;
  const hex8 = () => rng.int(0, 0xffffffff).toString(16).padStart(8, "0");
  const path = () => (rng.chance(0.9) ? rng.pick(PATHS) : txt.short(rng.int(1, 20)));
  const sessionPaths = Array.from({ length: rng.int(1, 8) }, path);
  const filePath = () => (rng.chance(0.85) ? rng.pick(sessionPaths) : path());
  const image = () => ({ type: "image", data: "iVBORw0KGgo" + txt.short(rng.int(0, 30)).replace(/[^A-Za-z0-9+/]/g, "A"), mimeType: rng.pick(["image/png", "image/jpeg", "image/webp"]) });

  const usage = (kind) => {
    const zero = kind === "zero";
    const input = zero ? 0 : rng.chance(0.1) ? rng.int(0, 50) : rng.int(100, 220_000);
    const output = zero || rng.chance(0.08) ? 0 : rng.int(1, 16_000);
    const cacheRead = zero || rng.chance(0.4) ? 0 : rng.int(0, 180_000);
    const cacheWrite = zero || rng.chance(0.5) ? 0 : rng.int(0, 30_000);
    const sum = input + output + cacheRead + cacheWrite;
    const totalTokens = rng.chance(0.12) ? 0 : rng.chance(0.03) ? sum + rng.int(1, 100) : sum;
    const price = (n, per) => (n * per) / 1e6;
    const cost = {
      input: price(input, 3),
      output: price(output, 15),
      cacheRead: price(cacheRead, 0.3),
      cacheWrite: price(cacheWrite, 3.75),
      total: 0,
    };
    cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
    // Sessions written by older pi versions have no totalTokens.
    if (rng.chance(0.05)) return { input, output, cacheRead, cacheWrite, cost };
    return { input, output, cacheRead, cacheWrite, totalTokens, cost };
  };

  const toolArguments = (name) => {
    const args = {};
    const withPath = () => {
      const r = rng.next();
      if (r < 0.85) args.path = filePath();
      else if (r < 0.9) args.path = "";
      else if (r < 0.94) args.path = rng.pick([42, null, ["a.txt"], { p: "x" }, true]);
      // else: no path at all
    };
    switch (name) {
      case "read":
        withPath();
        if (rng.chance(0.3)) args.offset = rng.int(1, 2000);
        if (rng.chance(0.3)) args.limit = rng.pick([100, 2000, 1e21, 0.5]);
        break;
      case "write":
        withPath();
        args.content = txt.text(size(600, 20_000));
        break;
      case "edit":
        withPath();
        if (rng.chance(0.5)) {
          args.oldText = txt.text(size(80, 3000));
          args.newText = txt.text(size(80, 3000));
        } else {
          args.edits = Array.from({ length: rng.int(1, 3) }, () => ({ oldText: txt.short(rng.int(0, 60)), newText: txt.short(rng.int(0, 60)) }));
        }
        break;
      case "bash":
        args.command = txt.short(rng.int(2, 120));
        if (rng.chance(0.3)) args.timeout = rng.pick([30, 120, 600, 1e21, -0, 0.1]);
        break;
      default:
        Object.assign(args, json.object(0));
        if (rng.chance(0.2)) args.path = filePath();
        if (rng.chance(0.01)) {
          // Deep nesting (JSON.parse accepts any depth; serde_json stops at 128).
          let deep = rng.chance(0.5) ? [] : {};
          for (let d = rng.int(100, 300); d > 0; d--) deep = rng.chance(0.5) ? [deep] : { [rng.pick(KEYS)]: deep };
          args.nested = deep;
        }
    }
    // Extra nested arguments, with numeric-looking keys and odd numbers.
    if (rng.chance(0.25)) {
      const extra = json.object(1);
      for (const k of Object.keys(extra)) if (!(k in args)) args[k] = extra[k];
    }
    return args;
  };

  const messages = [];
  const push = (m) => {
    if (messages.length < target) messages.push(m);
  };
  const full = () => messages.length >= target;

  const userMessage = () => {
    const content = rng.chance(0.6)
      ? rng.chance(0.03)
        ? ""
        : txt.text(size(200, 8000))
      : Array.from({ length: rng.int(0, 4) }, () =>
          rng.chance(0.75) ? { type: "text", text: txt.text(size(150, 6000)) } : image(),
        );
    return { role: "user", content, timestamp: tick() };
  };

  const bashExecution = () => {
    const m = {
      role: "bashExecution",
      command: txt.short(rng.int(1, 100)),
      output: rng.chance(0.1) ? "" : txt.text(size(600, 30_000)),
      exitCode: rng.pick([0, 0, 0, 1, 2, 127, 130, undefined, null]),
      cancelled: rng.chance(0.08),
      truncated: rng.chance(0.1),
      timestamp: tick(),
    };
    if (m.truncated && rng.chance(0.7)) m.fullOutputPath = "/tmp/pi-bash-" + hex8() + ".log";
    if (rng.chance(0.2)) m.excludeFromContext = rng.chance(0.8);
    return m;
  };

  const customMessage = () => {
    const m = {
      role: "custom",
      customType: rng.pick(["note", "artifact", "reminder", "plan-mode", "ext:todo", "中文"]),
      content: rng.chance(0.5)
        ? txt.text(size(200, 8000))
        : Array.from({ length: rng.int(0, 3) }, () => (rng.chance(0.8) ? { type: "text", text: txt.text(size(150, 5000)) } : image())),
      display: rng.chance(0.6),
      timestamp: tick(),
    };
    if (rng.chance(0.4)) m.details = json.object(1);
    return m;
  };

  const fileLists = () => ({
    readFiles: Array.from({ length: rng.int(0, 4) }, filePath),
    modifiedFiles: Array.from({ length: rng.int(0, 3) }, filePath),
  });

  const branchSummary = () => {
    const m = {
      role: "branchSummary",
      summary: rng.chance(0.05) ? "" : txt.text(size(800, 12_000)),
      fromId: hex8(),
      timestamp: tick(),
    };
    if (rng.chance(0.6)) m.details = fileLists();
    if (rng.chance(0.2)) m.fromHook = rng.chance(0.5);
    return m;
  };

  const unknownMessage = () => {
    const role = rng.pick(["note", "hookMessage", "system", "debug", "compactionDivider"]);
    const m = { role, timestamp: tick() };
    if (rng.chance(0.5)) m.content = txt.text(size(100, 2000));
    if (rng.chance(0.3)) m.summary = txt.short(rng.int(0, 50));
    if (role === "hookMessage") {
      m.customType = "legacy";
      m.display = true;
    }
    return m;
  };

  const assistant = (stopReason, calls) => {
    const content = [];
    if (rng.chance(0.3)) {
      const b = { type: "thinking", thinking: txt.text(size(300, 10_000)) };
      if (rng.chance(0.5)) b.thinkingSignature = "sig" + hex8();
      if (rng.chance(0.05)) {
        b.thinking = "";
        b.redacted = true;
      }
      content.push(b);
    }
    if (rng.chance(calls.length > 0 ? 0.5 : 0.92)) content.push({ type: "text", text: txt.text(size(250, 12_000)) });
    if (rng.chance(0.05)) content.push({ type: "text", text: txt.short(rng.int(0, 20)) });
    for (const c of calls) content.push(c);
    if (rng.chance(0.03)) content.reverse();
    const kind = stopReason === "error" || stopReason === "aborted" ? (rng.chance(0.6) ? "zero" : "some") : "some";
    const m = {
      role: "assistant",
      content,
      api: rng.pick(["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]),
      provider: rng.pick(["anthropic", "openai", "google", "openrouter", "zai"]),
      model: rng.pick(["claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro", "glm-4.6"]),
      usage: usage(kind),
      stopReason,
      timestamp: tick(),
    };
    if (stopReason === "error") m.errorMessage = rng.chance(0.95) ? rng.pick(ERROR_MESSAGES) : txt.short(rng.int(0, 80));
    if (stopReason === "aborted" && rng.chance(0.5)) m.errorMessage = "Request was aborted";
    if (rng.chance(0.1)) m.responseId = "msg_" + hex8();
    return m;
  };

  const toolCall = () => {
    const name = rng.weighted({ read: 30, write: 10, edit: 15, bash: 25, other: 20 });
    const toolName = name === "other" ? rng.pick(OTHER_TOOLS) : name;
    const b = { type: "toolCall", id: toolCallId(), name: toolName, arguments: toolArguments(toolName) };
    if (rng.chance(0.05)) b.thoughtSignature = "ts" + hex8();
    return b;
  };

  const toolResult = (call) => {
    const content = [];
    const n = rng.weighted({ 1: 80, 0: 5, 2: 10, 3: 5 });
    for (let i = 0; i < Number(n); i++) {
      content.push(rng.chance(0.88) ? { type: "text", text: txt.text(size(900, 60_000)) } : image());
    }
    const m = {
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content,
      isError: rng.chance(0.1),
      timestamp: tick(),
    };
    if (rng.chance(0.3)) m.details = rng.chance(0.5) ? { diff: txt.short(rng.int(0, 200)) } : json.object(1);
    return m;
  };

  // Turns until the target count is reached.
  while (!full()) {
    const starter = rng.weighted({ user: 74, bash: 7, custom: 8, branch: 4, unknown: 2, none: 5 });
    if (starter === "user") push(userMessage());
    else if (starter === "bash") push(bashExecution());
    else if (starter === "custom") {
      push(customMessage());
      if (rng.chance(0.5)) push(userMessage());
    } else if (starter === "branch") {
      push(branchSummary());
      if (rng.chance(0.6)) push(userMessage());
    } else if (starter === "unknown") push(unknownMessage());

    const steps = rng.weighted({ 0: 4, 1: 35, 2: 20, 3: 15, 5: 12, 8: 8, 15: 6 });
    for (let s = 0; s < Number(steps) && !full(); s++) {
      const last = s === Number(steps) - 1;
      const calls = !last || rng.chance(0.1) ? Array.from({ length: rng.weighted({ 1: 70, 2: 18, 3: 8, 0: 4 }) }, toolCall) : [];
      let stop;
      if (calls.length > 0 && !last) stop = rng.weighted({ toolUse: 90, aborted: 4, error: 3, length: 3 });
      else stop = rng.weighted({ stop: 72, length: 8, error: 12, aborted: 8 });
      push(assistant(stop, calls));
      if (stop === "toolUse" || (calls.length > 0 && rng.chance(0.3))) {
        for (const c of calls) if (rng.chance(0.95)) push(toolResult(c));
        if (rng.chance(0.02)) push(toolResult({ id: toolCallId(), name: "orphan" }));
      }
      // Mid-turn injections.
      if (rng.chance(0.04)) push(customMessage());
      if (rng.chance(0.02)) push(bashExecution());
      if (rng.chance(0.01)) push(unknownMessage());
      if (stop === "error" || stop === "aborted") break;
    }
  }

  // Compaction summaries where a real compaction leaves one: before a valid
  // cut point (never before a tool result), in order, plus rare odd places
  // (at the very start, at the end, two in a row).
  const summaries = Number(rng.weighted({ 0: 45, 1: 30, 2: 15, 3: 10 }));
  const cutRoles = new Set(["user", "assistant", "bashExecution", "custom", "branchSummary"]);
  const candidates = [];
  messages.forEach((m, i) => {
    if (cutRoles.has(m.role)) candidates.push(i);
  });
  const positions = new Set();
  for (let k = 0; k < summaries; k++) {
    const r = rng.next();
    if (r < 0.04) positions.add(messages.length);
    else if (r < 0.07) positions.add(0);
    else if (candidates.length > 0) positions.add(rng.pick(candidates));
  }
  const realisticTimes = rng.chance(0.5);
  const summaryAt = (insertAt) => {
    // A compaction happens later than the messages it keeps: with
    // realistic times the summary's timestamp is that of a later message.
    const later = messages[Math.min(messages.length - 1, insertAt + rng.int(0, 20))];
    const before = messages[insertAt - 1];
    const ts = realisticTimes && later ? later.timestamp + 1 : (before ? before.timestamp : clock) + 1;
    const s = {
      role: "compactionSummary",
      summary: rng.chance(0.03) ? "" : txt.text(size(1500, 16_000)),
      timestamp: ts,
      tokensBefore: rng.int(0, 250_000),
    };
    if (rng.chance(0.75)) s.details = fileLists();
    if (rng.chance(0.2)) s.fromHook = rng.chance(0.6);
    if (rng.chance(0.3)) s.usage = usage("some");
    return s;
  };
  const sorted = [...positions].sort((a, b) => b - a);
  for (const p of sorted) {
    const copies = rng.chance(0.05) ? 2 : 1;
    for (let c = 0; c < copies; c++) messages.splice(p, 0, summaryAt(p));
  }
  return messages;
}

// ---------------------------------------------------------------------------
// Flat array → pi session entries
// ---------------------------------------------------------------------------

/** The id of the entry standing for `flat[i]`. */
export function entryId(i) {
  return (i + 1).toString(16).padStart(8, "0");
}

/**
 * Maps each flat-array message to the pi session entry it stands for
 * (SPEC.md §2): `custom` → `custom_message`, `branchSummary` →
 * `branch_summary`, `compactionSummary` → `compaction` (its
 * `firstKeptEntryId` is the entry right after it), anything else → a
 * `message` entry holding the very same message object. One entry per
 * message, in order, chained by `parentId`; no session header (pi's
 * `prepareCompaction` receives the path entries, which have none).
 */
export function toPiEntries(flat) {
  const entries = [];
  for (let i = 0; i < flat.length; i++) {
    const m = flat[i];
    const base = {
      id: entryId(i),
      parentId: i === 0 ? null : entryId(i - 1),
      timestamp: new Date(m.timestamp).toISOString(),
    };
    switch (m.role) {
      case "custom":
        entries.push({
          type: "custom_message",
          ...base,
          customType: m.customType,
          content: m.content,
          display: m.display,
          details: m.details,
        });
        break;
      case "branchSummary": {
        const e = { type: "branch_summary", ...base, fromId: m.fromId, summary: m.summary };
        if (m.details !== undefined) e.details = m.details;
        if (m.fromHook !== undefined) e.fromHook = m.fromHook;
        entries.push(e);
        break;
      }
      case "compactionSummary": {
        const e = {
          type: "compaction",
          ...base,
          summary: m.summary,
          firstKeptEntryId: i + 1 < flat.length ? entryId(i + 1) : undefined,
          tokensBefore: m.tokensBefore,
        };
        if (m.details !== undefined) e.details = m.details;
        if (m.fromHook !== undefined) e.fromHook = m.fromHook;
        entries.push(e);
        break;
      }
      default:
        entries.push({ type: "message", ...base, message: m });
    }
  }
  return entries;
}

// ---------------------------------------------------------------------------
// Odd but possible fields
// ---------------------------------------------------------------------------

const ODD_USAGE_NUMBERS = [NaN, Infinity, -Infinity, -0, 1e308, 2 ** 53 + 2, -5, 0.5, undefined, null];

/**
 * A copy of `generateSession(seed)` with fields a real array may hold and the
 * generator does not write: usage absent, all zero, or with a field that is
 * NaN, infinite, negative or `null` (a NaN saved to a session file); empty
 * assistant and tool-result content; odd tool-call arguments; a custom
 * message's `display` missing or not a boolean; `excludeFromContext` not a
 * boolean; an image-only user message. Deterministic in `seed`.
 */
export function generateOddSession(seed) {
  const rng = createRng(Math.imul(Number(seed) >>> 0, 7919) + 13);
  return generateSession(seed).map((original) => {
    const m = structuredClone(original);
    if (m.role === "assistant") {
      const r = rng.next();
      if (r < 0.1) delete m.usage;
      else if (r < 0.15) m.usage = undefined;
      else if (r < 0.3) m.usage[rng.pick(["input", "output", "cacheRead", "cacheWrite", "totalTokens"])] = rng.pick(ODD_USAGE_NUMBERS);
      else if (r < 0.35) m.usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: m.usage.cost };
      if (rng.chance(0.05)) m.content = [];
      if (rng.chance(0.05)) m.stopReason = rng.pick(["stop", "length", "toolUse", "error", "aborted"]);
      for (const b of m.content) {
        if (b.type === "toolCall" && rng.chance(0.1)) {
          b.arguments = rng.pick([{}, { a: {} }, { "\ud800": "\udfff" }, { n: [1e21, -0, 5e-324, 2 ** 64] }, { 2: 1, 1: 2, b: 3, a: 4 }, { s: "\u2028\u2029\u0000" }]);
        }
        if (b.type === "text" && rng.chance(0.05)) b.text = "";
        if (b.type === "thinking" && rng.chance(0.1)) {
          b.thinking = "";
          b.redacted = true;
        }
      }
    }
    if (m.role === "custom") {
      const r = rng.next();
      if (r < 0.3) delete m.display;
      else if (r < 0.5) m.display = rng.pick([1, 0, "", "yes", null]);
      if (rng.chance(0.1)) m.content = "";
    }
    if (m.role === "bashExecution" && rng.chance(0.3)) m.excludeFromContext = rng.pick([true, false, undefined, 1, 0, "x"]);
    if (m.role === "toolResult") {
      if (rng.chance(0.05)) m.content = [];
      if (rng.chance(0.1)) m.isError = rng.pick([true, false, undefined]);
    }
    if (m.role === "user" && Array.isArray(m.content) && rng.chance(0.1)) {
      m.content = [{ type: "image", data: "AAAA", mimeType: "image/png" }];
    }
    return m;
  });
}
