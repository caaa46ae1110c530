// Gathers the facts the Rust core needs about messages in one call per
// message (or per array), so the per-turn path does not cross the wasm
// boundary once per field. No decisions are made here.

// Role codes: must match `Role` in crates/core/src/message/role.rs.
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
// decided in Rust (crates/core/src/tokens/estimate.rs); the layout must match
// crates/wasm/src/js/message_facts.rs.
export const FACTS_STRIDE = 20;
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

function contentFacts(content, out, o, skipArguments) {
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
        if (skipArguments) {
          // Measured later, only if the estimate is ever needed (slot 19: 1,
          // and toolCalls counts an upper bound instead; 2, no bound known).
          const bound = block.arguments === undefined ? 0 : argumentsBound(block.arguments);
          if (bound < 0) out[o + 19] = 2;
          else {
            toolCalls += bound;
            if (out[o + 19] !== 2) out[o + 19] = 1;
          }
        } else if (block.arguments !== undefined) {
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

function gatherOne(message, out, o, lazy) {
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
      contentFacts(message.content, out, o, false);
      break;
    case 1: { // assistant
      // With `lazy`, a message that reports usage does not have its tool-call
      // arguments stringified now (only bounded): its own estimate is rarely
      // needed.
      contentFacts(message.content, out, o, lazy && !!message.usage);
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
export function gatherFacts(messages, from, to, lazy) {
  const out = new Float64Array((to - from) * FACTS_STRIDE);
  for (let i = from; i < to; i++) {
    const o = (i - from) * FACTS_STRIDE;
    try {
      gatherOne(messages[i], out, o, lazy);
    } catch (e) {
      lastThrown = e;
      out[o + 17] = THREW;
    }
  }
  return out;
}

// An upper bound of JSON.stringify(args).length found from sizes alone,
// without building the text (a string counts 6 units per code unit, every one
// escaped as \uXXXX, plus its quotes; a number 25, the longest a finite one
// prints); -1 when there is no cheap bound: a toJSON method, a BigInt, an
// object that is neither a plain object nor an array, nesting deeper than 64
// or more than 10,000 objects, or a getter that throws. Then the estimate is
// measured if it is ever needed (and meets any error JSON.stringify raises).
function argumentsBound(args) {
  const type = typeof args;
  if (type !== "object") return type === "function" || type === "symbol" || type === "bigint" ? -1 : valueBound(args, 0);
  boundObjects = 0;
  try {
    return args === null ? 4 : objectBound(args, 0);
  } catch {
    return -1;
  }
}

let boundObjects = 0;

// Inside an object or array, undefined, functions and symbols are dropped or
// written "null": 4 covers both. Keys inherited or not enumerable by
// Object.keys may be counted too (for...in): the bound only grows.
function valueBound(v, depth) {
  switch (typeof v) {
    case "string":
      return 6 * v.length + 2;
    case "number":
      return 25;
    case "boolean":
      return 5;
    case "object":
      return v === null ? 4 : objectBound(v, depth + 1);
    case "bigint":
      return -1;
    default:
      return 4;
  }
}

function objectBound(value, depth) {
  if (++boundObjects > 10000 || depth > 64) return -1;
  if (typeof value.toJSON === "function") return -1;
  let total = 2;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const n = valueBound(value[i], depth);
      if (n < 0) return -1;
      total += n + 1;
    }
    return total;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return -1;
  for (const key in value) {
    const n = valueBound(value[key], depth);
    if (n < 0) return -1;
    total += 6 * key.length + 4 + n;
  }
  return total;
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
// names count is decided in Rust (crates/core/src/compaction/file_ops.rs). May throw on
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

// Whether messages[from .. to) are known[from .. to), object for object.
function sameRun(known, messages, from, to) {
  for (let i = from; i < to; i++) if (messages[i] !== known[i]) return false;
  return true;
}

// Brings `known` (the compactor's own copy of the messages it has indexed)
// in line with `messages`. The common case — the same messages plus new ones
// at the end — is checked on the first and last known messages, the context
// start, and every known message from `scanFrom` on (the caller scans the LLM
// context, whose size the context window bounds, so that a message replaced
// there by a new object is seen; or nothing, when it knows the array is the
// one it checked), and returns the index from which `messages` is new. Otherwise the
// first difference is found by a scan (from the context start when the array
// agrees there, as the common case trusts what lies before), and one inserted message (a
// compaction's summary) or one removed message (a failed attempt, an undone
// summary) is recognised: then it returns [1, at, from] (inserted at `at`)
// or [2, at, from] (removed at `at`), `from` being where new messages begin.
// Anything else cuts `known` back to where they agree and returns that
// index. May throw on hostile input; imported with `catch`.
export function syncKnown(known, messages, contextStart, scanFrom) {
  const n = messages.length;
  const m = known.length;
  const unchanged =
    n >= m &&
    (m === 0 ||
      (messages[m - 1] === known[m - 1] &&
        messages[0] === known[0] &&
        (contextStart >= m || messages[contextStart] === known[contextStart]) &&
        sameRun(known, messages, Math.min(scanFrom, m), m - 1)));
  if (unchanged) {
    for (let i = m; i < n; i++) known.push(messages[i]);
    return m;
  }
  const upto = Math.min(n, m);
  // The first difference is looked for from the context start when the array
  // still agrees there and on its first message (what the common case checks
  // before the context: a compaction inserts its summary in the context), else
  // from the beginning.
  let d =
    contextStart > 0 && contextStart < upto && messages[0] === known[0] && messages[contextStart] === known[contextStart]
      ? contextStart
      : 0;
  while (d < upto && messages[d] === known[d]) d++;
  // One message inserted at d: messages[d+1 .. m+1) is known[d .. m).
  if (n >= m + 1) {
    let k = d;
    while (k < m && messages[k + 1] === known[k]) k++;
    if (k === m) {
      known.splice(d, 0, messages[d]);
      for (let i = m + 1; i < n; i++) known.push(messages[i]);
      return [1, d, m + 1];
    }
  }
  // One message removed at d: messages[d .. m-1) is known[d+1 .. m).
  if (m >= 1 && n >= m - 1 && d < m) {
    let k = d;
    while (k < m - 1 && messages[k] === known[k + 1]) k++;
    if (k === m - 1) {
      known.splice(d, 1);
      for (let i = m - 1; i < n; i++) known.push(messages[i]);
      return [2, d, m - 1];
    }
  }
  known.length = d;
  for (let i = d; i < n; i++) known.push(messages[i]);
  return d;
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
  const settled = new Promise((resolve, reject) => {
    let timer;
    const finish = (settle, v) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      settle(v);
    };
    const onAbort = () => finish(reject, signal.reason);
    // Handled first, so that the app's promise never rejects unhandled.
    Promise.resolve(value).then((v) => finish(resolve, v), (e) => finish(reject, e));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (ms > 0 && Number.isFinite(ms)) {
      timer = setTimeout(() => controller.abort(new SummarizerTimeout(ms)), ms);
    }
  });
  // The compactor may await it later (a turn prefix is summarized while the
  // history is): a failure before then is not an unhandled rejection.
  settled.catch(() => {});
  return settled;
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

// ---------------------------------------------------------------------------
// serializeConversation: what pi's serializer reads from every message, read
// and converted by the engine (`${v}`, Object.entries, JSON.stringify) in one
// call. A read or conversion that throws is recorded and gathering goes on:
// the Rust core reports the failure pi meets first. Strings go into `pieces`
// (indices and lengths in the words); the codes must match
// crates/wasm/src/js/message_source.rs.
const M_NULLISH = 0, M_THREW = 1, M_ROLE_THREW = 2, M_SKIPPED = 3, M_USER = 4, M_ASSISTANT = 5,
  M_TOOL_RESULT = 6, C_THREW = 0, C_STRING = 1, C_BLOCKS = 2, C_OTHER = 3, B_HOLE = 0,
  B_NULLISH = 1, B_THREW = 2, B_TYPE_THREW = 3, B_OTHER = 4, B_TEXT = 5, B_THINKING = 6,
  B_TOOL_CALL = 7, V_READ_THREW = 0, V_NONE = 1, V_TEXT = 2, V_NOT_TEXT = 3, A_READ_THREW = 0,
  A_NULLISH = 1, A_ENTRIES_THREW = 2, A_ENTRIES = 3, J_TEXT = 0, J_THREW = 1;

const isNullish = (v) => v === undefined || v === null;
const put = (w, pieces, code, s) => w.push(code, pieces.push(s) - 1);
const putText = (w, pieces, code, s) => w.push(code, pieces.push(s) - 1, s.length);
const threw = (w, pieces, code, e) => put(w, pieces, code, thrownMessage(e));
const notText = (v, e) => `${describeValue(v)} (converting it threw: ${thrownMessage(e)})`;

// `${object[key]}`; for `join`, null and undefined are nothing.
function gatherValue(w, pieces, object, key, join) {
  let v, s;
  try {
    v = object[key];
  } catch (e) {
    return threw(w, pieces, V_READ_THREW, e);
  }
  if (join && isNullish(v)) return w.push(V_NONE);
  try {
    s = `${v}`;
  } catch (e) {
    return put(w, pieces, V_NOT_TEXT, notText(v, e));
  }
  putText(w, pieces, V_TEXT, s);
}

// Object.entries(block.arguments) with `${JSON.stringify(v)}` of each value,
// then the name (which pi reads only when all that worked).
function gatherToolCall(w, pieces, block) {
  let args, entries, ok = true;
  try {
    args = block.arguments;
    if (isNullish(args)) put(w, pieces, A_NULLISH, describeValue(args));
    else entries = Object.entries(args);
  } catch (e) {
    // `args` is still undefined if reading it threw.
    threw(w, pieces, args === undefined ? A_READ_THREW : A_ENTRIES_THREW, e);
  }
  if (entries) {
    w.push(A_ENTRIES, entries.length);
    for (const [key, v] of entries) {
      w.push(pieces.push(key) - 1, key.length);
      try {
        putText(w, pieces, J_TEXT, `${JSON.stringify(v)}`);
      } catch (e) {
        ok = false;
        put(w, pieces, J_THREW, `${describeValue(v)} at ${JSON.stringify(key)} (${thrownMessage(e)})`);
      }
    }
  }
  if (entries && ok) gatherValue(w, pieces, block, "name", false);
  else w.push(V_NONE);
}

function gatherBlock(w, pieces, block, assistant) {
  let type;
  if (isNullish(block)) return put(w, pieces, B_NULLISH, describeValue(block));
  try {
    type = block.type;
  } catch (e) {
    return threw(w, pieces, B_TYPE_THREW, e);
  }
  if (type === "text") {
    w.push(B_TEXT);
    gatherValue(w, pieces, block, "text", true);
  } else if (assistant && type === "thinking") {
    w.push(B_THINKING);
    gatherValue(w, pieces, block, "thinking", true);
  } else if (assistant && type === "toolCall") {
    w.push(B_TOOL_CALL);
    gatherToolCall(w, pieces, block);
  } else {
    w.push(B_OTHER);
  }
}

// `content` visited as pi visits it: `for…of` in an assistant message (any
// iterable), `filter` otherwise (an array; the holes it skips are recorded so
// that indices stay right).
function gatherContent(w, pieces, message, assistant) {
  let content, iterable, n = 0;
  try {
    content = message.content;
    if (typeof content === "string" && !assistant) return putText(w, pieces, C_STRING, content);
    iterable = assistant
      ? !isNullish(content) && typeof content[Symbol.iterator] === "function"
      : Array.isArray(content);
  } catch (e) {
    return threw(w, pieces, C_THREW, e);
  }
  if (!iterable) return put(w, pieces, C_OTHER, describeValue(content));
  const at = w.push(C_BLOCKS, 0) - 1;
  try {
    if (assistant) {
      for (const block of content) gatherBlock(w, pieces, block, true), n++;
    } else {
      Array.prototype.forEach.call(content, (block, j) => {
        for (; n < j; n++) w.push(B_HOLE);
        gatherBlock(w, pieces, block, false);
        n++;
      });
    }
  } catch (e) {
    // Iterating threw (a proxy's trap, an iterator): at the next element.
    threw(w, pieces, B_THREW, e);
    n++;
  }
  w[at] = n;
}

// The words for messages[0..length).
export function gatherConversation(messages, length, pieces) {
  const w = [];
  for (let i = 0; i < length; i++) {
    let message, role;
    try {
      message = messages[i];
      if (isNullish(message)) {
        put(w, pieces, M_NULLISH, describeValue(message));
        continue;
      }
    } catch (e) {
      threw(w, pieces, M_THREW, e);
      continue;
    }
    try {
      role = message.role;
    } catch (e) {
      threw(w, pieces, M_ROLE_THREW, e);
      continue;
    }
    const code = role === "user" ? M_USER : role === "assistant" ? M_ASSISTANT : role === "toolResult" ? M_TOOL_RESULT : M_SKIPPED;
    w.push(code);
    if (code !== M_SKIPPED) gatherContent(w, pieces, message, code === M_ASSISTANT);
  }
  return new Uint32Array(w);
}

// The text the Rust core composed: [0, piece], [1, piece, n] (its first n
// code units, as `slice` cuts), [2, start, end] (a range of `literals`).
// May throw (a string too long); imported with `catch`.
export function assembleText(pieces, ops, literals) {
  let text = "";
  for (let i = 0; i < ops.length; i += ops[i] === 0 ? 2 : 3) {
    const op = ops[i];
    text += op === 0 ? pieces[ops[i + 1]] : op === 1 ? pieces[ops[i + 1]].slice(0, ops[i + 2]) : literals.slice(ops[i + 1], ops[i + 2]);
  }
  return text;
}

// What the extractive summarizer reads of messages[0..n), as JSON text:
// [{ r: role, t: text, n: toolName, e: isError, c: [[tool, path or command], ...] }].
// Texts are cut to their first 8,192 code units (the summarizer quotes far
// less). May throw on hostile input; imported with `catch`.
export function extractFacts(messages) {
  const texts = (content) => {
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    const parts = [];
    for (const b of content) {
      if (b && b.type === "text" && typeof b.text === "string") parts.push(b.text);
    }
    return parts.join("\n");
  };
  const out = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (typeof m !== "object" || m === null) continue;
    const calls = [];
    if (m.role === "assistant" && Array.isArray(m.content)) {
      for (const b of m.content) {
        if (!b || b.type !== "toolCall" || typeof b.name !== "string") continue;
        const a = b.arguments && typeof b.arguments === "object" ? b.arguments : {};
        const arg = typeof a.path === "string" ? a.path : typeof a.command === "string" ? a.command : "";
        calls.push([b.name, arg.slice(0, 300)]);
      }
    }
    out.push({
      r: typeof m.role === "string" ? m.role : "",
      t: texts(m.role === "bashExecution" ? m.output : m.content).slice(0, 8192),
      n: typeof m.toolName === "string" ? m.toolName : m.role === "bashExecution" ? "bash" : null,
      e: m.isError === true || (m.role === "bashExecution" && typeof m.exitCode === "number" && m.exitCode !== 0),
      c: calls,
    });
  }
  return JSON.stringify(out);
}

// When `messages` starts with a message `known` lacks and goes on with
// known[p..] (a context that moved forward to a new summary), makes `known`
// [messages[0], ...known[p..]] and returns p; otherwise returns -1 and
// leaves `known` alone. May throw on hostile input; imported with `catch`.
export function rebaseKnown(known, messages) {
  const n = messages.length;
  const m = known.length;
  if (n < 2 || m < 2 || messages[0] === known[0]) return -1;
  const p = known.indexOf(messages[1]);
  if (p < 1) return -1;
  const upto = Math.min(n - 1, m - p);
  for (let k = 1; k < upto; k++) if (messages[1 + k] !== known[p + k]) return -1;
  known.splice(0, p, messages[0]);
  return p;
}

// Drops the first `dropped` outputs and puts `first` (when defined) in front.
export function rebaseOut(out, dropped, first) {
  if (first === undefined) out.splice(0, dropped);
  else out.splice(0, dropped, first);
}

// ---------------------------------------------------------------------------
// The SessionStore's JavaScript side (crates/wasm/src/store/): the ConflictError
// class, one-pass comparisons over the caller's array, and a promise around
// an IndexedDB request. Decisions (what may be dropped, the keys) are made in
// Rust. It lives in this file rather than in a snippet of its own: with one
// more snippet module, wasm-bindgen-test-runner's pages intermittently never
// finished loading under chromedriver (renderer timeout); one module avoids it.

export class ConflictError extends Error {
  constructor(message) {
    super(message);
    this.name = "ConflictError";
  }
}

export function conflictError(message) {
  return new ConflictError(message);
}

export function conflictErrorClass() {
  return ConflictError;
}

// How `messages` differs from `known` (the array this store last loaded or
// saved), by object identity: [inserted indices of messages, removed
// indices of known]. A mismatch looks ahead for the message among the known
// ones not yet passed, so a removal in the middle costs only that message.
export function diffKnown(known, messages) {
  const n = messages.length;
  const m = known.length;
  // The common save — the same messages plus new ones at the end: every
  // known one checked (a message replaced anywhere must be written; a few
  // microseconds for thousands of messages, next to the write).
  if (n >= m && sameRun(known, messages, 0, m)) {
    const appended = new Uint32Array(n - m);
    for (let j = m; j < n; j++) appended[j - m] = j;
    return [appended, new Uint32Array(0)];
  }
  const inserted = [];
  const removed = [];
  let i = 0;
  let ahead = null;
  for (let j = 0; j < n; j++) {
    const message = messages[j];
    if (i < m && message === known[i]) {
      i++;
      continue;
    }
    if (ahead === null) {
      ahead = new Map();
      for (let k = i; k < m; k++) if (!ahead.has(known[k])) ahead.set(known[k], k);
    }
    const k = ahead.get(message);
    if (k !== undefined && k > i) {
      for (let r = i; r < k; r++) removed.push(r);
      i = k + 1;
    } else {
      inserted.push(j);
    }
  }
  for (let r = i; r < m; r++) removed.push(r);
  return [Uint32Array.from(inserted), Uint32Array.from(removed)];
}

// Stored records that equal the caller's messages, replaced by the caller's
// objects (a save of an array this store never loaded): a greedy walk with
// a deep comparison, so the identity diff then sees what really changed.
export function adoptEqual(stored, messages) {
  const adopted = stored.slice();
  let i = 0;
  for (let j = 0; j < messages.length && i < stored.length; j++) {
    if (equalOrUnreadable(messages[j], stored[i])) adopted[i++] = messages[j];
  }
  return adopted;
}

// A message whose reading throws (a hostile getter or Proxy) equals
// nothing; it is reported as unstorable later. Nothing here may throw: an
// exception would unwind through the wasm module mid-save.
function equalOrUnreadable(a, b) {
  try {
    return deepEqual(a, b);
  } catch {
    return false;
  }
}

function deepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !deepEqual(a[k], b[k])) return false;
  }
  return true;
}

// Whether messages[indices] can be stored: null, or [index, path, what].
// Functions and symbols cannot be cloned; a cycle is refused too (a message
// must stay JSON-like for export), and so is a message that is an array
// (a stored array is a pack of messages). Getters that throw are reported.
export function checkStorable(messages, indices) {
  for (const index of indices) {
    let problem;
    try {
      const message = messages[index];
      problem = Array.isArray(message) ? ["", "is an array, not a message object"] : check(message, "", []);
    } catch (e) {
      problem = ["", `reading it threw: ${e && e.message ? e.message : String(e)}`];
    }
    if (problem) return [index, problem[0], problem[1]];
  }
  return null;
}

function check(value, path, ancestors) {
  const t = typeof value;
  if (t === "function") return [path, "is a function"];
  if (t === "symbol") return [path, "is a symbol"];
  if (t !== "object" || value === null) return null;
  if (ancestors.includes(value)) return [path, "refers back to an enclosing object (a cycle)"];
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const p = check(value[i], `${path}[${i}]`, ancestors);
        if (p) return p;
      }
    } else {
      for (const k of Object.keys(value)) {
        const p = check(value[k], `${path}.${k}`, ancestors);
        if (p) return p;
      }
    }
  } finally {
    ancestors.pop();
  }
  return null;
}

// The keys array after an edit: `known` keys without `removed`, with
// `added` keys at the `inserted` indices of the new array.
export function applyKeys(keys, inserted, removed, added) {
  // Appended only (a turn): the keys with the new ones after them.
  if (removed.length === 0 && (inserted.length === 0 || inserted[0] === keys.length)) {
    return keys.concat(added);
  }
  const out = [];
  let r = 0;
  let a = 0;
  let k = 0;
  const total = keys.length - removed.length + inserted.length;
  for (let j = 0; j < total; j++) {
    if (a < inserted.length && inserted[a] === j) {
      out.push(added[a++]);
      continue;
    }
    while (r < removed.length && removed[r] === k) {
      r++;
      k++;
    }
    out.push(keys[k++]);
  }
  return out;
}

// The first user message's text among messages[0..limit), or undefined.
export function firstUserText(messages, limit) {
  const n = Math.min(messages.length, limit);
  for (let i = 0; i < n; i++) {
    try {
      const m = messages[i];
      if (!m || m.role !== "user") continue;
      if (typeof m.content === "string") return m.content;
      if (Array.isArray(m.content)) {
        for (const block of m.content) {
          if (block && block.type === "text" && typeof block.text === "string") return block.text;
        }
      }
      return "";
    } catch {
      // An unreadable message (a hostile getter) has no preview.
    }
  }
  return undefined;
}

// Resolves with an IDBRequest's result; rejects with its error.
export function requestPromise(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

// A transaction over the SessionStore's session records, and its message
// records too with `both`.
export function storeTransaction(db, write, both) {
  return db.transaction(both ? ["sessions", "messages"] : "sessions", write ? "readwrite" : "readonly");
}

// Commits `tx` (at once, not when its last request is done): resolves when
// it completes, rejects with its error (or a text) when it aborts instead.
export function commitTransaction(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error ?? "The transaction was aborted");
    if (typeof tx.commit === "function") tx.commit();
  });
}

// The records of `range` as [values, keys]: getAll and getAllKeys, sent
// together (in Chromium 156 faster than one getAllRecords, whose record
// objects cost more than the second request). Rejects rather than throws:
// an exception would unwind through the wasm module.
export function readRecords(store, range) {
  let values;
  let keys;
  try {
    values = store.getAll(range);
    keys = store.getAllKeys(range);
  } catch (e) {
    return Promise.reject(e);
  }
  return Promise.all([requestPromise(values), requestPromise(keys)]);
}

// Records as read ([values, keys]) to messages: a pack record (an array of
// messages, see core::packing) gives each of its messages, all under the
// pack's key; `skip` messages of the first record are left out when it is a
// pack (where loadContext's summary sits inside one). Returns [messages,
// each message's record key, the packs as (first index, count) pairs].
export function flattenRecords(values, keys, skip) {
  const packs = [];
  let messages = values;
  let perMessage = keys;
  for (let r = 0; r < values.length; r++) {
    const value = values[r];
    if (!Array.isArray(value)) {
      if (messages !== values) {
        messages.push(value);
        perMessage.push(keys[r]);
      }
      continue;
    }
    if (messages === values) {
      messages = values.slice(0, r);
      perMessage = keys.slice(0, r);
    }
    const from = r === 0 ? Math.min(skip, value.length) : 0;
    if (value.length > from) packs.push(messages.length, value.length - from);
    for (let i = from; i < value.length; i++) {
      messages.push(value[i]);
      perMessage.push(keys[r]);
    }
  }
  return [messages, perMessage, Uint32Array.from(packs)];
}

// Whether two record keys (or nulls) are the same.
export function sameKey(a, b) {
  if (a === null || a === undefined || b === null || b === undefined) {
    return (a === null || a === undefined) && (b === null || b === undefined);
  }
  try {
    return indexedDB.cmp(a, b) === 0;
  } catch {
    return false;
  }
}

// A save's session record: the stored one with `fields` over it, keeping a
// later `lastModified` (another clock). Null when it is `queued` (the record
// the save queued already) property for property.
export function nextMeta(stored, fields, queued) {
  const meta = Object.assign({}, stored, fields);
  const before = stored.lastModified;
  if (typeof before === "number" && before > fields.lastModified) meta.lastModified = before;
  if (queued === undefined) return meta;
  const keys = Object.keys(meta);
  if (keys.length !== Object.keys(queued).length) return meta;
  for (const k of keys) if (!Object.hasOwn(queued, k) || !Object.is(meta[k], queued[k])) return meta;
  return null;
}

// A session record as the app sees it: the internal fields left out.
export function publicMeta(record) {
  const { contextKey, contextSlot, ...meta } = record;
  return meta;
}

// --- SessionStore: schema upgrades, locks and change notices -------------

// Runs `step(db, transaction, oldVersion)` on an open request's
// `upgradeneeded`; if it throws, the upgrade is aborted (the open fails).
export function onUpgradeNeeded(request, step) {
  request.addEventListener("upgradeneeded", (e) => {
    try {
      step(request.result, request.transaction, e.oldVersion);
    } catch {
      request.transaction.abort();
    }
  });
}

export function createIndex(store, name, keyPath) {
  store.createIndex(name, keyPath);
}

// Schema version 2's record step, inside the upgrade transaction (its
// requests finish before the database opens): every session record gets
// the fields version 2 relies on. A numeric `lastModified` is what puts it
// in the `byLastModified` index that `list()` reads.
export function fillSessionDefaults(sessions, messages) {
  const num = (v) => typeof v === "number" && Number.isFinite(v);
  const cursor = sessions.openCursor();
  cursor.onsuccess = () => {
    const c = cursor.result;
    if (!c) return;
    const s = { ...c.value };
    const before = JSON.stringify(s);
    if (!num(s.createdAt)) s.createdAt = num(s.lastModified) ? s.lastModified : 0;
    if (!num(s.lastModified)) s.lastModified = s.createdAt;
    if (typeof s.title !== "string") s.title = "New session";
    if (typeof s.preview !== "string") s.preview = "";
    if (!num(s.contextTokens)) s.contextTokens = 0;
    if (!num(s.revision)) s.revision = 0;
    if (s.contextKey === undefined) s.contextKey = null;
    if (!num(s.messageCount)) {
      const range = IDBKeyRange.bound([s.id], [s.id, []], true, true);
      const count = messages.count(range);
      count.onsuccess = () => {
        s.messageCount = count.result;
        sessions.put(s);
      };
    } else if (JSON.stringify(s) !== before) {
      c.update(s);
    }
    c.continue();
  };
}

// The values of an object store's index by descending key, through one cursor.
export function valuesDescending(store, indexName) {
  return new Promise((resolve, reject) => {
    const out = [];
    const request = store.index(indexName).openCursor(null, "prev");
    request.onsuccess = () => {
      const cursor = request.result;
      if (!cursor) return resolve(out);
      out.push(cursor.value);
      cursor.continue();
    };
    request.onerror = () => reject(request.error);
  });
}

// Runs `callback` holding the exclusive lock `name`: a Web Lock, shared by
// the origin's tabs and workers, or where `navigator.locks` is missing
// (Node, insecure contexts) or refused (opaque origins) a queue in this
// realm. Resolves or rejects as `callback`'s promise does.
const realmLocks = new Map();
function realmLock(name, callback) {
  const run = (realmLocks.get(name) || Promise.resolve()).then(() => callback());
  const tail = run.then(
    () => {},
    () => {},
  );
  realmLocks.set(name, tail);
  tail.then(() => {
    if (realmLocks.get(name) === tail) realmLocks.delete(name);
  });
  return run;
}

// A Web Lock this realm holds across calls (a lease): asking the browser for
// a lock is a round trip to its lock manager (~0.3–0.5 ms), as long as a
// one-turn save's own work, so after a call the lock is kept for LINGER_MS
// and the calls made meanwhile (the next messages of a turn) run under it
// without asking again. Exclusion is unchanged: the lock is held the whole
// time and the calls under it run one at a time, in the order they were
// made. Others are not kept waiting: a context that finds the lock taken
// says so on the channel LOCK_CHANNEL before queueing for it, and a lease
// told so (or whose page is hidden, where timers are throttled) takes no
// new calls and lets the lock go as soon as its current ones end.
const LINGER_MS = 100;
const LOCK_CHANNEL = "agent-compaction-locks";
const leases = new Map();
let lockChannel;

function lockNotices() {
  if (lockChannel !== undefined) return lockChannel;
  lockChannel = null;
  try {
    lockChannel = new BroadcastChannel(LOCK_CHANNEL);
    lockChannel.onmessage = (e) => {
      const lease = typeof e.data?.want === "string" ? leases.get(e.data.want) : undefined;
      if (lease) giveUp(lease);
    };
    if (typeof lockChannel.unref === "function") lockChannel.unref();
  } catch {
    // No BroadcastChannel: a lease ends after LINGER_MS whoever waits.
    lockChannel = null;
  }
  if (typeof document === "object" && typeof document?.addEventListener === "function") {
    const hidden = () => {
      if (document.visibilityState === "hidden") for (const lease of [...leases.values()]) giveUp(lease);
    };
    document.addEventListener("visibilitychange", hidden);
    globalThis.addEventListener?.("pagehide", () => {
      for (const lease of [...leases.values()]) giveUp(lease);
    });
  }
  return lockChannel;
}

// No new calls; the lock goes once the current ones end.
function giveUp(lease) {
  lease.done = true;
  if (leases.get(lease.name) === lease) leases.delete(lease.name);
  if (lease.calls === 0) end(lease);
}

function end(lease) {
  clearTimeout(lease.timer);
  if (leases.get(lease.name) === lease) leases.delete(lease.name);
  if (lease.release) lease.release();
}

function openLease(locks, name) {
  const lease = { name, calls: 0, timer: undefined, release: null, done: false, failed: null, tail: null };
  leases.set(name, lease);
  const channel = lockNotices();
  lease.tail = new Promise((granted) => {
    const hold = () =>
      new Promise((release) => {
        lease.release = release;
        granted();
      });
    locks
      .request(name, { ifAvailable: true }, (lock) => (lock ? hold() : null))
      .then(() => {
        if (lease.release) return;
        // Taken: tell its holder (a lease of another tab lets it go), then queue.
        if (channel) {
          try {
            channel.postMessage({ want: name });
          } catch {
            // A closed channel: the holder's lease ends on its own.
          }
        }
        return locks.request(name, hold);
      })
      .catch((e) => {
        lease.failed = e;
        end(lease);
        granted();
      });
  });
  return lease;
}

function idle(lease) {
  if (lease.done || lease.failed || (typeof document === "object" && document?.visibilityState === "hidden")) {
    giveUp(lease);
    return;
  }
  lease.timer = setTimeout(() => end(lease), LINGER_MS);
  if (typeof lease.timer?.unref === "function") lease.timer.unref();
}

export function withLock(name, callback) {
  const locks = globalThis.navigator?.locks;
  if (!locks || typeof locks.request !== "function") return realmLock(name, callback);
  const lease = leases.get(name) ?? openLease(locks, name);
  lease.calls++;
  clearTimeout(lease.timer);
  const run = lease.tail.then(() => {
    if (!lease.failed) return callback();
    // Refused (opaque origins): a queue in this realm instead.
    if (lease.failed?.name === "SecurityError") return realmLock(name, callback);
    throw lease.failed;
  });
  const settled = () => {
    if (--lease.calls === 0) idle(lease);
  };
  lease.tail = run.then(settled, settled);
  return run;
}

// The lease of `name` when it is granted, idle and taking calls: taken for
// one call made without a callback (null otherwise), which `returnLease`
// ends; calls made meanwhile queue behind it. Skips withLock's promise hops
// on a turn's next save.
export function takeLease(name) {
  if (typeof globalThis.navigator?.locks?.request !== "function") return null;
  const lease = leases.get(name);
  if (!lease || lease.calls > 0 || !lease.release || lease.done || lease.failed) return null;
  lease.calls++;
  clearTimeout(lease.timer);
  lease.tail = new Promise((handBack) => {
    lease.handBack = handBack;
  });
  return lease;
}

export function returnLease(lease) {
  lease.handBack();
  if (--lease.calls === 0) idle(lease);
}

// Lets go at once of the locks this realm keeps whose names start with
// `prefix` (a closed store's), once their current calls end.
export function releaseLocks(prefix) {
  for (const lease of [...leases.values()]) if (lease.name.startsWith(prefix)) giveUp(lease);
}

// The store's BroadcastChannel, or null where there is none. It must not
// keep a Node process alive.
export function openChannel(name, onMessage) {
  if (typeof BroadcastChannel !== "function") return null;
  const channel = new BroadcastChannel(name);
  channel.onmessage = (e) => onMessage(e.data);
  if (typeof channel.unref === "function") channel.unref();
  return channel;
}

// Notices go out in the task after the change's call settled: a post is a
// round trip to the browser (~0.1 ms) that the caller's promise need not
// wait for. In order, and all of them before the channel closes.
const outbox = new Map();
let outboxTask;

function flushSoon() {
  if (typeof MessageChannel !== "function") {
    setTimeout(flushChanges, 0);
    return;
  }
  // A message rather than a timer: a hidden page's timers are throttled.
  if (!outboxTask) {
    outboxTask = new MessageChannel();
    outboxTask.port1.onmessage = flushChanges;
    if (typeof outboxTask.port1.unref === "function") outboxTask.port1.unref();
  }
  outboxTask.port2.postMessage(null);
}

function flushChanges() {
  const channels = [...outbox];
  outbox.clear();
  for (const [channel, events] of channels) {
    for (const event of events) {
      try {
        channel.postMessage(event);
      } catch {
        // A closed channel: nobody left to tell.
      }
    }
  }
}

export function postChange(channel, event) {
  if (outbox.size === 0) flushSoon();
  const events = outbox.get(channel);
  if (events) events.push(event);
  else outbox.set(channel, [event]);
}

export function closeChannel(channel) {
  const events = outbox.get(channel);
  outbox.delete(channel);
  for (const event of events ?? []) {
    try {
      channel.postMessage(event);
    } catch {
      // Closed already.
    }
  }
  channel.close();
}

// Adds `listener` to the Set `listeners`; returns the function removing it.
export function subscribe(listeners, listener) {
  const entry = (event) => listener(event);
  listeners.add(entry);
  return () => {
    listeners.delete(entry);
  };
}

// Calls every listener; one that throws does not stop the others (its
// error is reported as uncaught, as an event listener's would be).
export function deliver(listeners, event) {
  for (const listener of [...listeners]) {
    try {
      listener(event);
    } catch (e) {
      setTimeout(() => {
        throw e;
      });
    }
  }
}
