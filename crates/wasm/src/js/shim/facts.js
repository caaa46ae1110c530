// Facts for token estimates and usage: every length a message has, by block
// type, written as numbers into one Float64Array for a whole range of
// messages (one boundary crossing); and the facts file operations and the
// extractive summarizer read. Which lengths count for which role is decided
// in Rust (crates/core/src/tokens/estimate.rs); the layout must match
// crates/core/src/tokens/record.rs, which reads it. Imported by message_facts.rs,
// prepare.rs and (through summarizer.js) compaction.rs.

import { OTHER_ROLE, roleCode } from "./roles.js";
import { thrownMessage } from "./values.js";

export const FACTS_STRIDE = 22;
const STOP_REASONS = new Map([["stop", 0], ["length", 1], ["toolUse", 2], ["error", 3], ["aborted", 4]]);
// What the first problem of a gathering threw or found wrong (NONE: none
// yet): the binding reports the first message with a problem, and this is
// its value, whatever later messages hold.
const NONE = Symbol();
let lastThrown = NONE;
let lastBad = NONE;
const badFirst = (value) => {
  if (lastBad === NONE) lastBad = value;
};
const thrownFirst = (e) => {
  if (lastThrown === NONE) lastThrown = e;
};

// Problem codes (slot 17); slot 18 holds the block index where it applies.
const CONTENT_TYPE = 1, BLOCK_NOT_OBJECT = 2, TEXT_TYPE = 3, THINKING_TYPE = 4,
  NAME_TYPE = 5, ARGUMENTS_UNSERIALIZABLE = 6, SUMMARY_TYPE = 7, COMMAND_TYPE = 8,
  OUTPUT_TYPE = 9, THREW = 10, PINNED_TYPE = 11, FREED_TYPE = 12, KEPT_TYPE = 13,
  IDS_TYPE = 14, ID_TYPE = 15, SIZES_TYPE = 16, SIZE_TYPE = 17;

function num(value) {
  return typeof value === "number" ? value : NaN;
}

// A usage field as pi's arithmetic takes it: `null` (a NaN written to a
// session file comes back as one) adds as 0.
function usageNum(value) {
  return value === null ? 0 : num(value);
}

function lengthOf(value, out, o, problem, block) {
  if (value === undefined || value === null) return 0;
  if (typeof value === "string") return value.length;
  badFirst(value);
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
    badFirst(content);
    out[o + 17] = CONTENT_TYPE;
    return;
  }
  let text = 0, thinking = 0, toolCalls = 0, images = 0;
  for (let b = 0; b < content.length; b++) {
    const block = content[b];
    if (typeof block !== "object" || block === null) {
      badFirst(block);
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
          // and toolCalls counts an upper bound instead, slot 21 the part of
          // it that is the arguments'; 2, no bound known).
          const bound = block.arguments === undefined ? 0 : argumentsBound(block.arguments);
          if (bound < 0) out[o + 19] = 2;
          else {
            toolCalls += bound;
            out[o + 21] += bound;
            if (out[o + 19] !== 2) out[o + 19] = 1;
          }
        } else if (block.arguments !== undefined) {
          let json;
          try {
            json = JSON.stringify(block.arguments);
          } catch (e) {
            thrownFirst(e);
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
  // Slot 20: `pinned === true` (a standing rule the model is sent after
  // every summary; read here once, when the compactor first sees it).
  const pinned = message.pinned;
  if (pinned === true) out[o + 20] = 1;
  else if (pinned !== undefined && pinned !== false) {
    badFirst(pinned);
    out[o + 17] = PINNED_TYPE;
    return;
  }
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
        out[o + 11] = usageNum(usage.input);
        out[o + 12] = usageNum(usage.output);
        out[o + 13] = usageNum(usage.cacheRead);
        out[o + 14] = usageNum(usage.cacheWrite);
        out[o + 15] = usageNum(usage.totalTokens);
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
        badFirst(summary);
        out[o + 17] = SUMMARY_TYPE;
        break;
      }
      // A compaction summary's keptMessages, plus one, in the command's
      // slot (0: it has none).
      const kept = code === 6 ? message.keptMessages : undefined;
      if (kept === undefined) break;
      if (typeof kept === "number" && Number.isSafeInteger(kept) && kept >= 0) out[o + 7] = kept + 1;
      else {
        badFirst(kept);
        out[o + 17] = KEPT_TYPE;
      }
      break;
    }
    case 7: { // toolOutputCleared: its tokensFreed, in the summary's slot
      const freed = message.tokensFreed;
      if (isCount(freed)) out[o + 6] = freed;
      else {
        badFirst(freed);
        out[o + 17] = FREED_TYPE;
        break;
      }
      // Its lists are checked here too, as the model's view checks them
      // (crates/wasm/src/clearing.rs, read_marker): the token count and the
      // view refuse the same marker, with the same error.
      markerLists(message, out, o);
      break;
    }
  }
}

const isCount = (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

// A marker's toolCallIds (an array of strings) and outputTokens (absent,
// or an array of counts): the first problem, with the item's index in
// slot 18.
function markerLists(message, out, o) {
  const ids = message.toolCallIds;
  if (!Array.isArray(ids)) {
    badFirst(ids);
    out[o + 17] = IDS_TYPE;
    return;
  }
  for (let k = 0; k < ids.length; k++) {
    if (typeof ids[k] === "string") continue;
    badFirst(ids[k]);
    out[o + 17] = ID_TYPE;
    out[o + 18] = k;
    return;
  }
  const sizes = message.outputTokens;
  if (sizes === undefined) return;
  if (!Array.isArray(sizes)) {
    badFirst(sizes);
    out[o + 17] = SIZES_TYPE;
    return;
  }
  for (let k = 0; k < sizes.length; k++) {
    if (isCount(sizes[k])) continue;
    badFirst(sizes[k]);
    out[o + 17] = SIZE_TYPE;
    out[o + 18] = k;
    return;
  }
}

// Facts of messages[from..to). For one message (every turn's case) the
// array is reused: read it before the next call (the binding copies it at
// once). A new Float64Array of this size costs more than gathering a
// message's facts. A call made while one is filling it (a getter that calls
// into the package) gets an array of its own.
const one = new Float64Array(FACTS_STRIDE);
let filling = false;

export function gatherFacts(messages, from, to, lazy) {
  const reuse = to - from === 1 && !filling;
  const out = reuse ? one.fill(0) : new Float64Array((to - from) * FACTS_STRIDE);
  // A gathering's problems are its own (one made from a getter during
  // another keeps the outer one's).
  if (!filling) lastThrown = lastBad = NONE;
  filling ||= reuse;
  try {
    for (let i = from; i < to; i++) {
      const o = (i - from) * FACTS_STRIDE;
      try {
        gatherOne(messages[i], out, o, lazy);
      } catch (e) {
        thrownFirst(e);
        out[o + 17] = THREW;
      }
    }
  } finally {
    if (reuse) filling = false;
  }
  return out;
}

// An upper bound of JSON.stringify(args).length found from sizes alone,
// without building the text (a string counts 6 units per code unit, every one
// escaped as \uXXXX, plus its quotes; a number 25, the longest a finite one
// prints), and so of its UTF-8 length too (no character or escape takes more
// than 6 bytes per code unit, and the rest is ASCII); -1 when there is no
// cheap bound: a toJSON method, a BigInt, an object that is neither a plain
// object nor an array, nesting deeper than 64 or more than 10,000 objects, or
// a getter that throws. Then the estimate is measured if it is ever needed
// (and meets any error JSON.stringify raises).
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

// What the first getter or JSON.stringify that threw in the last gathering threw, as text.
export function takeThrown() {
  const thrown = lastThrown;
  lastThrown = NONE;
  return thrown === NONE ? "" : thrownMessage(thrown);
}

// The first value the last gathering found wrong, for the error message.
export function takeBad() {
  const value = lastBad;
  lastBad = NONE;
  return value === NONE ? undefined : value;
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


// The texts the calibrated estimate reads, of messages[from..to), in bulk:
// every text's UTF-8 (TextEncoder.encodeInto: native, many times cheaper
// than copying UTF-16 code units one charCodeAt at a time, which cost more
// than classifying them) one after another in one Uint8Array (one copy into
// wasm per chunk of messages, not one per string), and a layout of numbers
// saying which text is which: per message roleCode, image count, content
// string byte length (-1 when content is not a string), then three lists
// (text blocks, thinking blocks, toolCall blocks: name + JSON.stringify of
// the arguments), each its count and the byte lengths, then the summary,
// command and output byte lengths. Which of them count for which role is
// decided in Rust (crates/core/src/tokens/estimate.rs, calibrated_tokens).
// Read after gatherFacts has checked the same messages: a field of the wrong
// type reads as empty here. The bytes are a view of a buffer reused by the
// next call: read them before calling again.
const encoder = new TextEncoder();
let scratch = new Uint8Array(1 << 16);

// The texts of messages[from..to) and the layout gatherTexts describes them
// with (byte lengths still 0), each text with the layout slot its byte
// length is added to (a tool call's name and arguments share one).
function collectTexts(messages, from, to, at) {
  const str = (v) => (typeof v === "string" ? v : "");
  const texts = [];
  const slots = [];
  const layout = [];
  let total = 0;
  const add = (t, slot = layout.push(0) - 1) => {
    texts.push(t);
    slots.push(slot);
    total += t.length;
    return slot;
  };
  for (let i = from; i < to; i++) {
    const m = messages[at ? at[i] : i];
    const code = roleCode(m);
    if (code > OTHER_ROLE) {
      layout.push(code, 0, -1, 0, 0, 0, 0, 0, 0);
      continue;
    }
    const text = [];
    const thinking = [];
    const calls = [];
    let images = 0;
    let contentString = null;
    const content = m.content;
    if (typeof content === "string") contentString = content;
    else if (Array.isArray(content)) {
      for (const b of content) {
        if (typeof b !== "object" || b === null) continue;
        if (b.type === "text") text.push(str(b.text));
        else if (b.type === "thinking") thinking.push(str(b.thinking));
        else if (b.type === "toolCall") {
          let json = "";
          try {
            json = b.arguments === undefined ? "" : str(JSON.stringify(b.arguments));
          } catch {
            // gatherFacts reports it
          }
          calls.push(str(b.name), json);
        } else if (b.type === "image") images++;
      }
    }
    layout.push(code, images);
    if (contentString === null) layout.push(-1);
    else add(contentString);
    layout.push(text.length);
    for (const t of text) add(t);
    layout.push(thinking.length);
    for (const t of thinking) add(t);
    layout.push(calls.length / 2);
    for (let k = 0; k < calls.length; k += 2) add(calls[k + 1], add(calls[k]));
    add(str(m.summary));
    add(str(m.command));
    add(str(m.output));
  }
  return { texts, slots, layout, total };
}

// Room for `units` UTF-16 code units encoded: three bytes at most per unit
// (a surrogate pair: four for two).
function scratchFor(units) {
  if (scratch.length < 3 * units) scratch = new Uint8Array(Math.max(3 * units, 2 * scratch.length));
  return scratch;
}

export function gatherTexts(messages, from, to) {
  const { texts, slots, layout, total } = collectTexts(messages, from, to);
  const out = scratchFor(total);
  let written = 0;
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k];
    if (t.length === 0) continue;
    const n = encoder.encodeInto(t, out.subarray(written)).written;
    layout[slots[k]] += n;
    written += n;
  }
  return [out.subarray(0, written), Float64Array.from(layout)];
}

// gatherTexts' layout alone: the byte lengths of the texts, found by encoding
// each into the scratch buffer and keeping nothing (some 30 times cheaper
// than classifying them). The calibrated estimate's tighter bound
// (crates/core/src/tokens/estimate.rs, calibrated_byte_bound) is made of them.
// Of the messages at the indices `at` (a Uint32Array), in their order: the
// threshold check tightens a batch of bounds per crossing.
export function gatherTextBytes(messages, at) {
  const { texts, slots, layout } = collectTexts(messages, 0, at.length, at);
  for (let k = 0; k < texts.length; k++) {
    const t = texts[k];
    if (t.length === 0) continue;
    layout[slots[k]] += encoder.encodeInto(t, scratchFor(t.length)).written;
  }
  return Float64Array.from(layout);
}
