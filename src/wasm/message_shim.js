// Gathers the facts the Rust core needs about messages in one call per
// message (or per array), so the per-turn path does not cross the wasm
// boundary once per field. No decisions are made here.

// Role codes: must match `Role` in src/core/role.rs.
const ROLE_CODES = new Map([
  ["user", 0],
  ["assistant", 1],
  ["toolResult", 2],
  ["bashExecution", 3],
  ["custom", 4],
  ["branchSummary", 5],
  ["compactionSummary", 6],
]);
const OTHER_ROLE = 7;
export const NOT_AN_OBJECT = 8;
export const ROLE_NOT_A_STRING = 9;
export const UNREADABLE = 10;

export function roleCode(message) {
  if (typeof message !== "object" || message === null) return NOT_AN_OBJECT;
  let role;
  try {
    role = message.role;
  } catch {
    return UNREADABLE;
  }
  if (typeof role !== "string") return ROLE_NOT_A_STRING;
  const code = ROLE_CODES.get(role);
  return code === undefined ? OTHER_ROLE : code;
}

// Role codes of messages[0..length), one byte each.
export function roleCodes(messages, length) {
  const codes = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    let message;
    try {
      message = messages[i];
    } catch {
      codes[i] = UNREADABLE;
      continue;
    }
    codes[i] = roleCode(message);
  }
  return codes;
}

// Object literals for the messages the core decides to create; a literal
// keeps the key order JSON.stringify shows and is cheaper than Reflect.set.
export function textUserMessage(text, timestamp) {
  return { role: "user", content: [{ type: "text", text }], timestamp };
}

export function userMessage(content, timestamp) {
  return { role: "user", content, timestamp };
}

export function compactionDivider(tokensBefore, timestamp) {
  return { role: "compactionDivider", tokensBefore, timestamp };
}

// Readers for values the caller handed in, which may be hostile (throwing
// getters, revoked proxies). An exception must never unwind through wasm
// frames, so each of these either cannot throw or is imported with `catch`.

// Length of an array argument: -1 when it is not an array. May throw (a
// proxy's trap); imported with `catch`.
export function arrayLength(value) {
  if (!Array.isArray(value)) return -1;
  const length = value.length;
  return typeof length === "number" && length >= 0 && length <= 0xffffffff ? length : -2;
}

export function sliceArray(array, start, end) {
  return Array.prototype.slice.call(array, start, end);
}

// A short description of a value's type for error messages; never throws.
export function describeValue(value) {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  try {
    if (Array.isArray(value)) return "an array";
  } catch {
    return "a revoked proxy";
  }
  switch (typeof value) {
    case "object": return "an object";
    case "string": return "a string";
    case "number": return "a number";
    case "boolean": return "a boolean";
    case "bigint": return "a bigint";
    case "symbol": return "a symbol";
    case "function": return "a function";
    default: return typeof value;
  }
}

// The message of whatever was thrown; never throws.
export function thrownMessage(thrown) {
  try {
    if (thrown instanceof Error) return String(thrown.message);
    if (typeof thrown === "string") return thrown;
  } catch {
    // fall through
  }
  return `${describeValue(thrown)} was thrown`;
}

// ---------------------------------------------------------------------------
// Facts for token estimates and usage: every length a message has, by block
// type, written as numbers into one Float64Array for a whole range of
// messages (one boundary crossing). Which lengths count for which role is
// decided in Rust (src/core/estimate.rs); the layout must match
// src/wasm/message_facts.rs.
export const FACTS_STRIDE = 19;
const STOP_REASONS = new Map([["stop", 0], ["length", 1], ["toolUse", 2], ["error", 3], ["aborted", 4]]);
let lastThrown;
let lastBad;

// Problem codes (slot 17); slot 18 holds the block index where it applies.
const CONTENT_TYPE = 1, BLOCK_NOT_OBJECT = 2, TEXT_TYPE = 3, THINKING_TYPE = 4,
  NAME_TYPE = 5, ARGUMENTS_UNSERIALIZABLE = 6, SUMMARY_TYPE = 7, COMMAND_TYPE = 8,
  OUTPUT_TYPE = 9, THREW = 10;

function num(value) {
  return typeof value === "number" ? value : NaN;
}

function lengthOf(value, out, o, problem, block) {
  if (value === undefined || value === null) return 0;
  if (typeof value === "string") return value.length;
  lastBad = value;
  out[o + 17] = problem;
  out[o + 18] = block;
  return 0;
}

function contentFacts(content, out, o) {
  if (typeof content === "string") {
    out[o + 1] = content.length;
    return;
  }
  if (content === undefined || content === null) return;
  if (!Array.isArray(content)) {
    lastBad = content;
    out[o + 17] = CONTENT_TYPE;
    return;
  }
  let text = 0, thinking = 0, toolCalls = 0, images = 0;
  for (let b = 0; b < content.length; b++) {
    const block = content[b];
    if (typeof block !== "object" || block === null) {
      lastBad = block;
      out[o + 17] = BLOCK_NOT_OBJECT;
      out[o + 18] = b;
      return;
    }
    switch (block.type) {
      case "text":
        text += lengthOf(block.text, out, o, TEXT_TYPE, b);
        break;
      case "thinking":
        thinking += lengthOf(block.thinking, out, o, THINKING_TYPE, b);
        break;
      case "toolCall": {
        toolCalls += lengthOf(block.name, out, o, NAME_TYPE, b);
        if (block.arguments !== undefined) {
          let json;
          try {
            json = JSON.stringify(block.arguments);
          } catch (e) {
            lastThrown = e;
          }
          if (typeof json !== "string") {
            out[o + 17] = ARGUMENTS_UNSERIALIZABLE;
            out[o + 18] = b;
            return;
          }
          toolCalls += json.length;
        }
        break;
      }
      case "image":
        images++;
        break;
    }
    if (out[o + 17] !== 0) return;
  }
  out[o + 2] = text;
  out[o + 3] = thinking;
  out[o + 4] = toolCalls;
  out[o + 5] = images;
}

function gatherOne(message, out, o) {
  const code = roleCode(message);
  out[o] = code;
  out[o + 1] = -1;
  out[o + 9] = -1;
  out[o + 18] = -1;
  if (code > OTHER_ROLE) return;
  out[o + 16] = num(message.timestamp);
  switch (code) {
    case 0: // user
    case 2: // toolResult
    case 4: // custom
      contentFacts(message.content, out, o);
      break;
    case 1: { // assistant
      contentFacts(message.content, out, o);
      const stop = STOP_REASONS.get(message.stopReason);
      out[o + 9] = stop === undefined ? (message.stopReason === undefined ? -1 : 5) : stop;
      const usage = message.usage;
      if (usage) {
        out[o + 10] = 1;
        out[o + 11] = num(usage.input);
        out[o + 12] = num(usage.output);
        out[o + 13] = num(usage.cacheRead);
        out[o + 14] = num(usage.cacheWrite);
        out[o + 15] = num(usage.totalTokens);
      }
      break;
    }
    case 3: // bashExecution
      out[o + 7] = lengthOf(message.command, out, o, COMMAND_TYPE, -1);
      out[o + 8] = lengthOf(message.output, out, o, OUTPUT_TYPE, -1);
      break;
    case 5: // branchSummary
    case 6: { // compactionSummary
      const summary = message.summary;
      if (typeof summary === "string") out[o + 6] = summary.length;
      else {
        lastBad = summary;
        out[o + 17] = SUMMARY_TYPE;
      }
      break;
    }
  }
}

// Facts of messages[from..to).
export function gatherFacts(messages, from, to) {
  const out = new Float64Array((to - from) * FACTS_STRIDE);
  for (let i = from; i < to; i++) {
    const o = (i - from) * FACTS_STRIDE;
    try {
      gatherOne(messages[i], out, o);
    } catch (e) {
      lastThrown = e;
      out[o + 17] = THREW;
    }
  }
  return out;
}

// What the last getter or JSON.stringify threw while gathering, as text.
export function takeThrown() {
  const thrown = lastThrown;
  lastThrown = undefined;
  return thrown === undefined ? "" : thrownMessage(thrown);
}

// The type of the last value gathering found wrong, for the error message.
export function takeBadDescription() {
  const bad = lastBad;
  lastBad = undefined;
  return describeValue(bad);
}

// [name, path, name, path, ...] of the toolCall blocks in assistant messages
// of messages[from..to) that have a non-empty string `arguments.path`: the
// conditions pi's extractFileOpsFromMessage reads a call under. Which tool
// names count is decided in Rust (src/core/file_ops.rs). May throw on
// hostile input; imported with `catch`.
export function toolCallPaths(messages, from, to) {
  const out = [];
  for (let i = from; i < to; i++) {
    const m = messages[i];
    if (typeof m !== "object" || m === null || m.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const block of m.content) {
      if (typeof block !== "object" || block === null || block.type !== "toolCall") continue;
      if (!("arguments" in block) || !("name" in block)) continue;
      const args = block.arguments;
      if (!args) continue;
      const path = typeof args.path === "string" ? args.path : "";
      if (path && typeof block.name === "string") out.push(block.name, path);
    }
  }
  return out;
}

// A string's UTF-16 code units, and back (exact, lone surrogates included).
export function codeUnits(text) {
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return units;
}

export function fromCodeUnits(units) {
  let text = "";
  for (let i = 0; i < units.length; i += 8192) {
    text += String.fromCharCode.apply(null, units.subarray(i, i + 8192));
  }
  return text;
}

// Brings `known` (the compactor's own copy of the messages it has indexed)
// in line with `messages`, and returns the index from which `messages` is
// new to it. The common case — the same messages plus new ones at the end —
// is checked in constant time (first, last known and context start) and
// costs only the new messages; anything else (a summary inserted, a failed
// attempt removed, another session) is found by a scan, and `known` is cut
// back to where they agree. May throw on hostile input; imported with `catch`.
export function syncKnown(known, messages, contextStart) {
  const n = messages.length;
  const m = known.length;
  let from = m;
  const unchanged =
    n >= m &&
    (m === 0 ||
      (messages[m - 1] === known[m - 1] &&
        messages[0] === known[0] &&
        (contextStart >= m || messages[contextStart] === known[contextStart])));
  if (!unchanged) {
    const upto = Math.min(n, m);
    from = 0;
    while (from < upto && messages[from] === known[from]) from++;
    known.length = from;
  }
  for (let i = from; i < n; i++) known.push(messages[i]);
  return from;
}

// ---------------------------------------------------------------------------
// Plumbing for the summarizer call: a deadline and cancellation around a
// promise the app's callback returned. No decisions here: Rust decides what
// a timeout or an abort means.

export class SummarizerTimeout extends Error {
  constructor(ms) {
    super(`the summarizer did not answer within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

// Settles with `value` (a value or a promise), or rejects when `controller`
// aborts, or after `ms` (then it aborts `controller` with a TimeoutError,
// so the app's fetch is cancelled too).
export function settleWithin(value, ms, controller) {
  const signal = controller.signal;
  return new Promise((resolve, reject) => {
    let timer;
    const finish = (settle, v) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      settle(v);
    };
    const onAbort = () => finish(reject, signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (ms > 0 && Number.isFinite(ms)) {
      timer = setTimeout(() => controller.abort(new SummarizerTimeout(ms)), ms);
    }
    Promise.resolve(value).then((v) => finish(resolve, v), (e) => finish(reject, e));
  });
}

// Aborts `controller` when `signal` (the caller's) aborts; returns a
// function that undoes the link.
export function linkAbort(signal, controller) {
  if (!signal) return () => {};
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => {};
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

export function isTimeout(error) {
  return error instanceof SummarizerTimeout;
}

export function isAbortError(error) {
  return typeof error === "object" && error !== null && error.name === "AbortError";
}

export function newAbortController() {
  return new AbortController();
}

// messages[0..at) + [item] + messages[at..), as a new array.
export function insertAt(messages, at, item) {
  const out = Array.prototype.slice.call(messages, 0, at);
  out.push(item);
  for (let i = at; i < messages.length; i++) out.push(messages[i]);
  return out;
}

export function joinTexts(texts, separator) {
  return texts.join(separator);
}
