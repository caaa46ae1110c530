// Function-by-function comparison of agent-compaction with pi 0.73.1 on one
// flat array (SPEC.md §2, "pi-compatible on the flat array").
//
// `compareSession(lib, pi, flat, seed)` runs every pair of functions on the
// array and returns the first mismatch as `{ fn, seed, detail }` (detail:
// the inputs, both outputs and, where it applies, the first differing
// message), or null. Shared by tests/node/conformance.test.mjs and
// scripts/conformance.mjs.

import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { toPiEntries } from "./generator.mjs";

/** pi's functions, imported by file path (the packages' exports maps block subpaths). */
export async function loadPi() {
  const root = new URL("../../node_modules/@mariozechner/", import.meta.url);
  const load = (path) => import(new URL(path, root).href);
  const compaction = await load("pi-coding-agent/dist/core/compaction/compaction.js");
  const utils = await load("pi-coding-agent/dist/core/compaction/utils.js");
  const session = await load("pi-coding-agent/dist/core/session-manager.js");
  const messages = await load("pi-coding-agent/dist/core/messages.js");
  const overflow = await load("pi-ai/dist/utils/overflow.js");
  return {
    estimateTokens: compaction.estimateTokens,
    estimateContextTokens: compaction.estimateContextTokens,
    calculateContextTokens: compaction.calculateContextTokens,
    shouldCompact: compaction.shouldCompact,
    findCutPoint: compaction.findCutPoint,
    prepareCompaction: compaction.prepareCompaction,
    serializeConversation: utils.serializeConversation,
    buildSessionContext: session.buildSessionContext,
    parseSessionEntries: session.parseSessionEntries,
    migrateSessionEntries: session.migrateSessionEntries,
    convertToLlm: messages.convertToLlm,
    isContextOverflow: overflow.isContextOverflow,
    getOverflowPatterns: overflow.getOverflowPatterns,
  };
}

// ---------------------------------------------------------------------------
// The fixtures (fixtures/ in the repository)
// ---------------------------------------------------------------------------

export const FIXTURES = new URL("../../fixtures/", import.meta.url);

/**
 * A pi session file as pi reads it: parsed lines, then pi's own migration
 * (v1 → v3: ids, parentIds, `firstKeptEntryIndex` → `firstKeptEntryId`).
 * The flat arrays are built from the same parsed objects, so that pi's
 * results can be checked for identity with ours.
 */
export function loadFixture(pi, name) {
  const text = readFileSync(new URL(name, FIXTURES), "utf8");
  const fileEntries = pi.parseSessionEntries(text);
  // A v1 compaction's firstKeptEntryIndex is an index into the file's
  // entries, the session header being entry 0 (pi's migrateV1ToV2 reads
  // `entries[comp.firstKeptEntryIndex]` over all entries, header included).
  const firstKeptFileIndex = new Map(
    fileEntries.filter((e) => e.type === "compaction").map((e) => [e, e.firstKeptEntryIndex]),
  );

  // The messages of the `message` entries, in file order.
  const messages = fileEntries.filter((e) => e.type === "message").map((e) => e.message);

  // The same, with each compaction as a compactionSummary placed before its
  // first kept message (the first message entry at or after that index).
  const anchored = new Map(); // file index of a message entry → summaries before it
  const trailing = [];
  for (const [entry, index] of firstKeptFileIndex) {
    const summary = {
      role: "compactionSummary",
      summary: entry.summary,
      timestamp: Date.parse(entry.timestamp),
      tokensBefore: entry.tokensBefore,
    };
    if (entry.details !== undefined) summary.details = entry.details;
    if (entry.fromHook !== undefined) summary.fromHook = entry.fromHook;
    let at = index;
    while (at < fileEntries.length && fileEntries[at].type !== "message") at++;
    if (at < fileEntries.length) {
      if (!anchored.has(at)) anchored.set(at, []);
      anchored.get(at).push(summary);
    } else trailing.push(summary);
  }
  const withSummaries = [];
  fileEntries.forEach((e, i) => {
    for (const s of anchored.get(i) ?? []) withSummaries.push(s);
    if (e.type === "message") withSummaries.push(e.message);
  });
  withSummaries.push(...trailing);

  pi.migrateSessionEntries(fileEntries);
  // pi's path entries (what prepareCompaction receives): no session header.
  const path = fileEntries.filter((e) => e.type !== "session");
  return { path, messages, withSummaries, summaries: [...firstKeptFileIndex.keys()] };
}

/**
 * Maps a path index of pi's result to an index into `flat`: the first
 * message of `flat` at or after that entry (pi's cut moves back over
 * thinking-level and model changes, which the flat array does not have).
 */
export function pathToFlat(path, flat) {
  const position = new Map(flat.map((m, i) => [m, i]));
  const map = new Array(path.length + 1).fill(flat.length);
  for (let j = path.length - 1; j >= 0; j--) {
    const e = path[j];
    map[j] = e.type === "message" && position.has(e.message) ? position.get(e.message) : map[j + 1];
  }
  return (j) => (j < 0 ? j : map[j]);
}

/** The functions compared, in the order they run (for counters). */
export const FUNCTIONS = [
  "estimateTokens",
  "estimateContextTokens",
  "transformContext/buildSessionContext",
  "calculateContextTokens",
  "shouldCompact",
  "isContextOverflow",
  "convertToLlm",
  "findCutPoint",
  "prepareCompaction",
  "serializeConversation",
];

export function hasSerializeConversation(lib) {
  return typeof lib.serializeConversation === "function";
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** Runs `f`, capturing a throw as a value so that both sides can be compared. */
function attempt(f) {
  try {
    return { value: f() };
  } catch (error) {
    return { threw: `${error?.name ?? "Error"}: ${error?.message ?? String(error)}` };
  }
}

/** A short, printable copy of a value (long strings and arrays cut). */
export function shorten(value, depth = 0) {
  if (typeof value === "string") {
    return value.length > 160 ? `${value.slice(0, 100)}…[${value.length} chars]` : value;
  }
  if (typeof value === "number" && Object.is(value, -0)) return "-0";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (value instanceof Set) return shorten([...value].sort(), depth);
  if (Array.isArray(value)) {
    if (depth > 4) return `[array of ${value.length}]`;
    const head = value.slice(0, 12).map((v) => shorten(v, depth + 1));
    if (value.length > 12) head.push(`…[${value.length} items]`);
    return head;
  }
  if (value !== null && typeof value === "object") {
    if (depth > 4) return "{…}";
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = shorten(v, depth + 1);
    return out;
  }
  return value;
}

/** One line per message: index and role (to see where in a session a cut falls). */
function roleMap(flat) {
  return flat.map((m, i) => `${i}:${m?.role}`).join(" ");
}

function messageAt(flat, i) {
  return i >= 0 && i < flat.length ? { index: i, message: shorten(flat[i]) } : { index: i };
}

const SUMMARY_ROLES = new Set(["compactionSummary", "branchSummary"]);
const PASS_THROUGH = new Set(["user", "assistant", "toolResult"]);

/** Whether pi's convertToLlm keeps message `m` (and ours must too). */
function convertKeeps(m) {
  switch (m.role) {
    case "bashExecution":
      return !m.excludeFromContext;
    case "user":
    case "assistant":
    case "toolResult":
    case "custom":
    case "branchSummary":
    case "compactionSummary":
      return true;
    default:
      return false;
  }
}

const pick = (o, keys) => (o == null ? o : Object.fromEntries(keys.map((k) => [k, o[k]])));

/**
 * pi rebuilds `custom_message`, `branch_summary` and `compaction` entries as
 * new message objects: compare the fields pi keeps; any other message must
 * be the very same object.
 */
function sameAsPiMessage(ours, theirs) {
  if (theirs === ours) return true;
  if (!theirs || !ours || theirs.role !== ours.role) return false;
  switch (theirs.role) {
    case "custom":
      return isDeepStrictEqual(
        pick(ours, ["customType", "content", "display", "details", "timestamp"]),
        pick(theirs, ["customType", "content", "display", "details", "timestamp"]),
      );
    case "branchSummary":
      return isDeepStrictEqual(pick(ours, ["summary", "fromId", "timestamp"]), pick(theirs, ["summary", "fromId", "timestamp"]));
    case "compactionSummary":
      return isDeepStrictEqual(
        pick(ours, ["summary", "tokensBefore", "timestamp"]),
        pick(theirs, ["summary", "tokensBefore", "timestamp"]),
      );
    default:
      return false; // a message entry: pi returns the entry's own object
  }
}

/** Compares two message lists; returns the first differing position or -1. */
function firstListDifference(ours, theirs) {
  const n = Math.max(ours.length, theirs.length);
  for (let i = 0; i < n; i++) if (!sameAsPiMessage(ours[i], theirs[i])) return i;
  return -1;
}

/**
 * Token budgets that make cuts land everywhere: the sums of the estimates
 * of the message entries from index i to the end (exactly, one less, one
 * more) within [from, to).
 */
function budgets(rng, flat, estimates, from, to, count) {
  const suffix = new Array(to + 1).fill(0);
  for (let i = to - 1; i >= from; i--) {
    const counts = !["custom", "branchSummary", "compactionSummary"].includes(flat[i].role);
    suffix[i] = suffix[i + 1] + (counts ? estimates[i] : 0);
  }
  const out = [];
  for (let k = 0; k < count && to > from; k++) {
    const i = from + Math.floor(rng() * (to - from));
    out.push(suffix[i] + [-1, 0, 0, 1][Math.floor(rng() * 4)]);
  }
  return out.filter((b) => b >= 0);
}

/** A small deterministic PRNG for the parameters of one session's comparisons. */
function paramRng(seed) {
  let s = 0;
  for (const ch of String(seed)) s = (Math.imul(s, 31) + ch.charCodeAt(0)) >>> 0;
  s ^= 0x5bd1e995;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

// ---------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------

/**
 * Compares every function pair on `flat`. `options.stats` (an object)
 * receives comparison counts per function; `options.entries` may pass
 * pi's entries for `flat` (default: `toPiEntries(flat)`).
 * Returns `{ fn, seed, detail }` for the first mismatch, or null.
 */
export function compareSession(lib, pi, flat, seed, options = {}) {
  const stats = options.stats ?? {};
  const count = (fn, n = 1) => (stats[fn] = (stats[fn] ?? 0) + n);
  // Milliseconds per section, into options.timings when given.
  const timings = options.timings ?? {};
  let clock = performance.now();
  const lap = (section) => {
    const now = performance.now();
    timings[section] = (timings[section] ?? 0) + (now - clock);
    clock = now;
  };
  const mismatch = (fn, detail) => ({ fn, seed, detail: { messages: flat.length, roles: roleMap(flat), ...detail } });
  const entries = options.entries ?? toPiEntries(flat);
  const rng = paramRng(seed);
  const n = flat.length;

  // -- estimateTokens, per message -----------------------------------------
  const estimates = [];
  for (let i = 0; i < n; i++) {
    const ours = attempt(() => lib.estimateTokens(flat[i]));
    const theirs = attempt(() => pi.estimateTokens(flat[i]));
    count("estimateTokens");
    if (!isDeepStrictEqual(ours, theirs)) {
      return mismatch("estimateTokens", { firstDifferingIndex: i, input: messageAt(flat, i), ours, pi: theirs });
    }
    estimates.push(theirs.value);
  }

  lap("estimateTokens");

  // -- estimateContextTokens on the array and on its LLM context -------------
  const contextKeys = ["tokens", "usageTokens", "trailingTokens", "lastUsageIndex"];
  const context = attempt(() => lib.transformContext(flat));
  if (context.threw) return mismatch("transformContext/buildSessionContext", { ours: context, pi: "an array" });
  for (const [what, arr] of [
    ["messages", flat],
    ["transformContext(messages)", context.value],
  ]) {
    const ours = attempt(() => pick(lib.estimateContextTokens(arr), contextKeys));
    const theirs = attempt(() => pick(pi.estimateContextTokens(arr), contextKeys));
    count("estimateContextTokens");
    if (!isDeepStrictEqual(ours, theirs)) {
      return mismatch("estimateContextTokens", { input: what, ours, pi: theirs });
    }
  }

  lap("estimateContextTokens");

  // -- transformContext vs pi's buildSessionContext on the entries ----------
  {
    const piContext = attempt(() => pi.buildSessionContext(entries).messages);
    count("transformContext/buildSessionContext");
    if (piContext.threw) return mismatch("transformContext/buildSessionContext", { pi: piContext });
    // pi leaves out a branch summary with an empty text (its entry is falsy).
    const ours = context.value.filter((m) => !(m.role === "branchSummary" && !m.summary));
    const i = firstListDifference(ours, piContext.value);
    if (i >= 0) {
      return mismatch("transformContext/buildSessionContext", {
        firstDifferingIndex: i,
        firstDifferingMessage: messageAt(flat, flat.indexOf(ours[i])),
        ours: { length: ours.length, at: shorten(ours[i]) },
        pi: { length: piContext.value.length, at: shorten(piContext.value[i]) },
      });
    }
    const oursTokens = attempt(() => pick(lib.estimateContextTokens(context.value), ["tokens", "usageTokens", "trailingTokens"]));
    const piTokens = attempt(() => pick(pi.estimateContextTokens(piContext.value), ["tokens", "usageTokens", "trailingTokens"]));
    count("estimateContextTokens");
    if (!isDeepStrictEqual(oursTokens, piTokens)) {
      return mismatch("estimateContextTokens", { input: "transformContext vs pi's buildSessionContext", ours: oursTokens, pi: piTokens });
    }
  }

  lap("transformContext/buildSessionContext");

  // -- calculateContextTokens, shouldCompact, isContextOverflow -------------
  for (let i = 0; i < n; i++) {
    const m = flat[i];
    if (m.role !== "assistant") continue;
    const ours = attempt(() => lib.calculateContextTokens(m.usage));
    const theirs = attempt(() => pi.calculateContextTokens(m.usage));
    count("calculateContextTokens");
    if (!isDeepStrictEqual(ours, theirs)) {
      return mismatch("calculateContextTokens", { firstDifferingIndex: i, input: shorten(m.usage), ours, pi: theirs });
    }
    const filled = (m.usage?.input ?? 0) + (m.usage?.cacheRead ?? 0);
    const windows = [undefined, 0, 1, 32_768, 128_000, 131_072, 200_000, 1_000_000, filled, filled - 1, filled + 1, Math.ceil(filled / 0.99), Math.floor(filled / 0.99), Math.floor(filled / 0.99) + 1];
    for (const w of windows) {
      if (w !== undefined && w < 0) continue;
      const o = attempt(() => lib.isContextOverflow(m, w));
      const t = attempt(() => pi.isContextOverflow(m, w));
      count("isContextOverflow");
      if (!isDeepStrictEqual(o, t)) {
        return mismatch("isContextOverflow", {
          firstDifferingIndex: i,
          input: { contextWindow: w, stopReason: m.stopReason, errorMessage: m.errorMessage, usage: shorten(m.usage) },
          ours: o,
          pi: t,
        });
      }
    }
  }
  {
    const tokens = pi.estimateContextTokens(flat).tokens;
    const settingsList = [
      { enabled: true, reserveTokens: 16_384 },
      { enabled: false, reserveTokens: 16_384 },
      { enabled: true, reserveTokens: 0 },
      { enabled: true, reserveTokens: 100_000 },
    ];
    for (const settings of settingsList) {
      for (const w of [0, 32_768, 128_000, 200_000, tokens + settings.reserveTokens, tokens + settings.reserveTokens - 1, tokens + settings.reserveTokens + 1]) {
        for (const t of [tokens, 0, w - settings.reserveTokens]) {
          const o = attempt(() => lib.shouldCompact(t, w, settings));
          const p = attempt(() => pi.shouldCompact(t, w, settings));
          count("shouldCompact");
          if (!isDeepStrictEqual(o, p)) {
            return mismatch("shouldCompact", { input: { tokens: t, contextWindow: w, settings }, ours: o, pi: p });
          }
        }
      }
    }
  }

  lap("calculateContextTokens, isContextOverflow, shouldCompact");

  // -- convertToLlm (non-summary roles compared with pi's) ------------------
  {
    const ours = attempt(() => lib.convertToLlm(flat));
    const theirs = attempt(() => pi.convertToLlm(flat));
    count("convertToLlm");
    if (ours.threw || theirs.threw || ours.value.length !== theirs.value.length) {
      return mismatch("convertToLlm", {
        ours: ours.threw ? ours : { length: ours.value.length },
        pi: theirs.threw ? theirs : { length: theirs.value.length },
      });
    }
    const kept = [];
    flat.forEach((m, i) => {
      if (convertKeeps(m)) kept.push(i);
    });
    for (let k = 0; k < kept.length; k++) {
      const i = kept[k];
      const m = flat[i];
      const o = ours.value[k];
      const t = theirs.value[k];
      let same;
      if (SUMMARY_ROLES.has(m.role)) {
        // Deliberately different text (SPEC §2); everything else as pi's.
        same =
          o?.role === "user" &&
          Array.isArray(o.content) &&
          o.content.length === 1 &&
          o.content[0].type === "text" &&
          typeof o.content[0].text === "string" &&
          o.timestamp === t.timestamp;
      } else {
        same = isDeepStrictEqual(o, t) && (!PASS_THROUGH.has(m.role) || o === m);
      }
      if (!same) {
        return mismatch("convertToLlm", {
          firstDifferingIndex: i,
          input: messageAt(flat, i),
          ours: shorten(o),
          pi: shorten(t),
          sameObject: o === m,
        });
      }
    }
  }

  lap("convertToLlm");

  const serialize = hasSerializeConversation(lib);
  const compareSerialization = (what, llmMessages) => {
    const o = attempt(() => lib.serializeConversation(llmMessages));
    const t = attempt(() => pi.serializeConversation(llmMessages));
    count("serializeConversation");
    if (isDeepStrictEqual(o, t)) return null;
    let at = -1;
    if (o.value !== undefined && t.value !== undefined) {
      at = 0;
      while (at < o.value.length && o.value[at] === t.value[at]) at++;
    }
    // The first message whose own serialization differs.
    let firstMessage = -1;
    for (let k = 0; k < llmMessages.length; k++) {
      if (!isDeepStrictEqual(attempt(() => lib.serializeConversation([llmMessages[k]])), attempt(() => pi.serializeConversation([llmMessages[k]])))) {
        firstMessage = k;
        break;
      }
    }
    return mismatch("serializeConversation", {
      input: what,
      firstDifferingCharacter: at,
      firstDifferingLlmMessage: firstMessage >= 0 ? { index: firstMessage, message: shorten(llmMessages[firstMessage]) } : -1,
      ours: o.threw ? o : JSON.stringify(o.value.slice(Math.max(0, at - 80), at + 80)),
      pi: t.threw ? t : JSON.stringify(t.value.slice(Math.max(0, at - 80), at + 80)),
    });
  };
  if (serialize) {
    const bad = compareSerialization("pi's convertToLlm(messages)", pi.convertToLlm(flat));
    if (bad) return bad;
  }

  lap("serializeConversation");

  // -- findCutPoint ---------------------------------------------------------
  {
    let lastSummary = -1;
    flat.forEach((m, i) => {
      if (m.role === "compactionSummary") lastSummary = i;
    });
    const r = () => Math.floor(rng() * (n + 1));
    const ranges = [[0, n], [n, n], [lastSummary + 1, n]];
    for (let k = 0; k < 3; k++) {
      const a = r();
      const b = r();
      ranges.push([Math.min(a, b), Math.max(a, b)]);
    }
    ranges.push([0, r()], [r(), n].sort((x, y) => x - y));
    const fixed = [0, 1, 100, 20_000, 1_000_000_000];
    for (const [start, end] of ranges) {
      for (const keep of [...fixed, ...budgets(rng, flat, estimates, start, end, 3)]) {
        const o = attempt(() => pick(lib.findCutPoint(flat, start, end, keep), ["firstKeptIndex", "turnStartIndex", "isSplitTurn"]));
        const t = attempt(() => {
          const c = pi.findCutPoint(entries, start, end, keep);
          return { firstKeptIndex: c.firstKeptEntryIndex, turnStartIndex: c.turnStartIndex, isSplitTurn: c.isSplitTurn };
        });
        count("findCutPoint");
        if (!isDeepStrictEqual(o, t)) {
          const oi = o.value?.firstKeptIndex ?? -1;
          const ti = t.value?.firstKeptIndex ?? -1;
          return mismatch("findCutPoint", {
            input: { start, end, keepRecentTokens: keep },
            ours: o,
            pi: t,
            firstDifferingIndex: Math.min(oi, ti),
            oursCutMessage: messageAt(flat, oi),
            piCutMessage: messageAt(flat, ti),
          });
        }
      }
    }
  }

  lap("findCutPoint");

  // -- prepareCompaction ----------------------------------------------------
  {
    const indexOfId = new Map(entries.map((e, i) => [e.id, i]));
    const flatObjects = new Set(flat);
    let lastSummary = -1;
    flat.forEach((m, i) => {
      if (m.role === "compactionSummary") lastSummary = i;
    });
    const keeps = [0, 1, 1000, 20_000, 1_000_000_000, ...budgets(rng, flat, estimates, lastSummary + 1, n, 3)];
    for (const keep of keeps) {
      const settings = { enabled: true, reserveTokens: 16_384, keepRecentTokens: keep };
      const o = attempt(() => lib.prepareCompaction(flat, { ...settings }));
      const t = attempt(() => pi.prepareCompaction(entries, { ...settings }));
      count("prepareCompaction");
      const input = { keepRecentTokens: keep };
      if (o.threw || t.threw) {
        if (isDeepStrictEqual(o, t)) continue;
        return mismatch("prepareCompaction", { input, ours: o, pi: t });
      }
      const ours = o.value;
      const theirs = t.value;
      const piEmpty = theirs === undefined || (theirs.messagesToSummarize.length === 0 && theirs.turnPrefixMessages.length === 0);
      if ((ours === undefined) !== piEmpty) {
        return mismatch("prepareCompaction", {
          input,
          problem: "ours is undefined exactly when pi's is undefined or has both lists empty",
          ours:
            ours === undefined
              ? undefined
              : {
                  firstKeptIndex: ours.firstKeptIndex,
                  isSplitTurn: ours.isSplitTurn,
                  messagesToSummarize: ours.messagesToSummarize?.length,
                  turnPrefixMessages: ours.turnPrefixMessages?.length,
                },
          pi:
            theirs === undefined
              ? undefined
              : {
                  firstKeptIndex: indexOfId.get(theirs.firstKeptEntryId),
                  isSplitTurn: theirs.isSplitTurn,
                  messagesToSummarize: theirs.messagesToSummarize.length,
                  turnPrefixMessages: theirs.turnPrefixMessages.length,
                },
        });
      }
      if (ours === undefined) continue;
      const expected = {
        firstKeptIndex: indexOfId.get(theirs.firstKeptEntryId),
        isSplitTurn: theirs.isSplitTurn,
        tokensBefore: theirs.tokensBefore,
        previousSummary: theirs.previousSummary,
        fileOps: {
          read: [...theirs.fileOps.read].sort(),
          written: [...theirs.fileOps.written].sort(),
          edited: [...theirs.fileOps.edited].sort(),
        },
      };
      const actual = pick(ours, ["firstKeptIndex", "isSplitTurn", "tokensBefore", "previousSummary"]);
      actual.fileOps = pick(ours.fileOps, ["read", "written", "edited"]);
      if (!isDeepStrictEqual(actual, expected)) {
        const diff = Object.keys(expected).filter((k) => !isDeepStrictEqual(actual[k], expected[k]));
        return mismatch("prepareCompaction", {
          input,
          differingFields: diff,
          ours: shorten(actual),
          pi: shorten(expected),
          firstDifferingIndex: diff.includes("firstKeptIndex") ? Math.min(actual.firstKeptIndex, expected.firstKeptIndex) : undefined,
        });
      }
      for (const list of ["messagesToSummarize", "turnPrefixMessages"]) {
        const a = ours[list];
        const b = theirs[list];
        const i = Array.isArray(a) ? firstListDifference(a, b) : 0;
        const foreign = Array.isArray(a) ? a.findIndex((m) => !flatObjects.has(m)) : -1;
        if (i >= 0 || foreign >= 0) {
          const at = i >= 0 ? i : foreign;
          return mismatch("prepareCompaction", {
            input,
            list,
            problem: i >= 0 ? "differs from pi's" : "not the caller's own message object",
            firstDifferingListIndex: at,
            firstDifferingIndex: flat.indexOf(a?.[at] ?? b[at]),
            ours: { length: a?.length, at: shorten(a?.[at]) },
            pi: { length: b.length, at: shorten(b[at]) },
          });
        }
      }
      if (serialize) {
        for (const list of ["messagesToSummarize", "turnPrefixMessages"]) {
          const bad = compareSerialization(`convertToLlm(${list}) for keepRecentTokens ${keep}`, lib.convertToLlm(ours[list]));
          if (bad) return bad;
          // The whole pipeline, as pi's generateSummary runs it, when no
          // summary (shown differently on purpose) is in the list.
          if (!ours[list].some((m) => SUMMARY_ROLES.has(m.role))) {
            const o2 = attempt(() => lib.serializeConversation(lib.convertToLlm(ours[list])));
            const t2 = attempt(() => pi.serializeConversation(pi.convertToLlm(theirs[list])));
            count("serializeConversation");
            if (!isDeepStrictEqual(o2, t2)) {
              return mismatch("serializeConversation", {
                input: `serializeConversation(convertToLlm(${list})) for keepRecentTokens ${keep}`,
                ours: shorten(o2),
                pi: shorten(t2),
              });
            }
          }
        }
      }
    }
  }
  lap("prepareCompaction (and its serializations)");
  return null;
}

/** A mismatch as printable text (JSON with lone surrogates escaped). */
export function formatMismatch(m) {
  return `${m.fn} differs from pi for seed ${JSON.stringify(m.seed)}:\n${JSON.stringify(m.detail, null, 2)}`;
}

// ---------------------------------------------------------------------------
// isContextOverflow on real provider error strings
// ---------------------------------------------------------------------------

/**
 * Error texts as providers send them, by what they exercise: every pattern
 * of pi-ai's overflow.js, the non-overflow exclusions, near misses, case
 * variants, multi-line texts and Unicode lookalikes. Each is checked as an
 * `error` stop and against pi's own function.
 */
export const OVERFLOW_ERROR_TEXTS = [
  // Every overflow pattern, as its provider words it.
  ["pattern", "prompt is too long: 213462 tokens > 200000 maximum"],
  ["pattern", '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208611 tokens > 200000 maximum"},"request_id":"req_011CUd7"}'],
  ["pattern", '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}'],
  ["pattern", "ValidationException: Input is too long for requested model."],
  ["pattern", "Your input exceeds the context window of this model. Please adjust your input and try again."],
  ["pattern", "400 This model's maximum context length is 128000 tokens. However, your messages resulted in 130520 tokens. Please reduce the length of the messages."],
  ["pattern", "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."],
  ["pattern", '{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}'],
  ["pattern", "This model's maximum prompt length is 131072 but the request contains 537812 tokens."],
  ["pattern", "Please reduce the length of the messages or completion."],
  ["pattern", "This endpoint's maximum context length is 128000 tokens. However, you requested about 200000 tokens (190000 of text input, 10000 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically."],
  ["pattern", "prompt token count of 140000 exceeds the limit of 128000"],
  ["pattern", "the request exceeds the available context size, try increasing it"],
  ["pattern", "Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens: tokens to keep from the initial prompt is greater than the context length"],
  ["pattern", "invalid params, context window exceeds limit (2013)"],
  ["pattern", "Your request exceeded model token limit: 262144 (requested: 300123)"],
  ["pattern", "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length"],
  ["pattern", "model_context_window_exceeded"],
  ["pattern", "prompt too long; exceeded max context length by 1200 tokens"],
  ["pattern", "prompt too long; exceeded context length by 15 tokens"],
  ["pattern", "context_length_exceeded"],
  ["pattern", "Error code: 400 - {'error': {'message': 'context length exceeded', 'code': 'context_length_exceeded'}}"],
  ["pattern", "context length_exceeded"],
  ["pattern", "Request has too many tokens in its input"],
  ["pattern", "token limit exceeded for this request"],
  ["pattern", "400 status code (no body)"],
  ["pattern", "413 status code (no body)"],
  ["pattern", "413 (no body)"],
  ["pattern", "400(no body)"],
  ["pattern", "413   status code   (no body) while streaming"],
  // Non-overflow exclusions (they win over an overflow pattern), and texts
  // that only look like one (not at the start, other spelling).
  ["exclusion", "Throttling error: Too many tokens, please wait before trying again."],
  ["exclusion", "Service unavailable: prompt is too long"],
  ["exclusion", "throttling ERROR: token limit exceeded"],
  ["exclusion", "SERVICE UNAVAILABLE: context_length_exceeded"],
  ["exclusion", "Rate limit reached for requests: prompt is too long"],
  ["exclusion", "429 Too Many Requests: too many tokens"],
  ["exclusion", "You exceeded the RATE LIMIT; token limit exceeded"],
  ["exclusion", "429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"This request would exceed the rate limit for your organization\"}}"],
  ["exclusion near miss", "x Throttling error: too many tokens"],
  ["exclusion near miss", "ThrottlingException: Too many tokens, please wait before trying again."],
  ["exclusion near miss", " Service unavailable: prompt is too long"],
  ["exclusion near miss", "rate_limit_exceeded: too many tokens"],
  ["exclusion near miss", "Too  many requests: prompt is too long"],
  // Near misses of the overflow patterns.
  ["near miss", "prompt is too  long"],
  ["near miss", "prompt was too long"],
  ["near miss", "prompt is to long"],
  ["near miss", "exceeds the context-window"],
  ["near miss", "maximum prompt length is unknown"],
  ["near miss", "maximum prompt length is  131072"],
  ["near miss", "maximum context length is 128k tokens"],
  ["near miss", "maximum context length is 128000  tokens"],
  ["near miss", "prompt token count of 140000 exceeds the limit of"],
  ["near miss", "exceeds the limit of -5"],
  ["near miss", " 400 status code (no body)"],
  ["near miss", "4000 status code (no body)"],
  ["near miss", "401 status code (no body)"],
  ["near miss", "413 status code (no body"],
  ["near miss", "413 status code (empty body)"],
  ["near miss", "contextlengthexceeded"],
  ["near miss", "context-length-exceeded"],
  ["near miss", "context__length_exceeded"],
  ["near miss", "too-many-tokens"],
  ["near miss", "tokenlimit exceeded"],
  ["near miss", "token limit exceed"],
  ["near miss", "prompt too long; exceeded maximum context length"],
  ["near miss", "too large for model with many maximum context length"],
  ["near miss", "input token count exceeds the maximum"],
  ["near miss", "input token count exceeds the max"],
  ["near miss", "Input is too long for the requested model"],
  ["near miss", "request too large"],
  ["near miss", "request-too-large"],
  ["near miss", "Internal server error"],
  ["near miss", "overloaded_error"],
  ["near miss", "Connection error."],
  ["near miss", ""],
  // Case variants.
  ["case", "PROMPT IS TOO LONG: 213462 TOKENS > 200000 MAXIMUM"],
  ["case", "Prompt Is Too Long"],
  ["case", "CONTEXT_LENGTH_EXCEEDED"],
  ["case", "Context Length Exceeded"],
  ["case", "REQUEST_TOO_LARGE"],
  ["case", "Exceeds The Context Window"],
  ["case", "MAXIMUM CONTEXT LENGTH IS 8192 TOKENS"],
  ["case", "Too Many Tokens"],
  ["case", "413 STATUS CODE (NO BODY)"],
  ["case", "pRoMpT tOo LoNg; ExCeEdEd MaX cOnTeXt LeNgTh"],
  ["case", "RATE LIMIT: PROMPT IS TOO LONG"],
  // Multi-line texts.
  ["multi-line", "Error: 400\nprompt is too long: 213462 tokens > 200000 maximum"],
  ["multi-line", "Request failed\n400 status code (no body)"],
  ["multi-line", "400 status code (no body)\nretrying"],
  ["multi-line", "Service unavailable: upstream\nprompt is too long"],
  ["multi-line", "upstream error\nThrottling error: too many tokens"],
  ["multi-line", "the input token count (5)\nexceeds the maximum"],
  ["multi-line", "the input token count (5)\r\nexceeds the maximum"],
  ["multi-line", "the input token count (5)\u2028exceeds the maximum"],
  ["multi-line", "the input token count (5)\u2029exceeds the maximum"],
  ["multi-line", "the input token count (5)\u0085exceeds the maximum"],
  ["multi-line", "the input token count (5)\texceeds the maximum"],
  ["multi-line", "prompt is too\nlong"],
  ["multi-line", "413\n(no body)"],
  ["multi-line", "413\r\n\t(no body)"],
  ["multi-line", "rate\nlimit: prompt is too long"],
  ["multi-line", "line one\r\nline two\r\ncontext_length_exceeded\r\n"],
  // Unicode lookalikes and Unicode whitespace/digits.
  ["unicode", "prompt iſ too long"],
  ["unicode", "PROMPT Iſ TOO LONG"],
  ["unicode", "too many to\u212aens"],
  ["unicode", "TOO MANY TO\u212aENS"],
  ["unicode", "prompt \u0131s too long"],
  ["unicode", "PROMPT \u0130S TOO LONG"],
  ["unicode", "ｐrompt is too long"],
  ["unicode", "prompt is too lοng"],
  ["unicode", "prompt\u00a0is too long"],
  ["unicode", "context\u00a0length exceeded"],
  ["unicode", "400\u00a0status code\u00a0(no body)"],
  ["unicode", "413\ufeff(no body)"],
  ["unicode", "413\u200b(no body)"],
  ["unicode", "413\u3000(no body)"],
  ["unicode", "413\u2003status code\u2003(no body)"],
  ["unicode", "４１３ (no body)"],
  ["unicode", "maximum prompt length is ١٣١٠٧٢"],
  ["unicode", "maximum context length is ８１９２ tokens"],
  ["unicode", "exceeds the limit of ٥"],
  ["unicode", "rate lim\u0131t: prompt is too long"],
  ["unicode", "ſervice unavailable: prompt is too long"],
  ["unicode", "Throttling error\uff1a too many tokens"],
  ["unicode", "too many requeſts: prompt is too long"],
  ["unicode", "😀 prompt is too long 😀"],
  ["unicode", "\ud800prompt is too long\udfff"],
  ["unicode", "prompt is too long\u0301"],
  ["unicode", "e\u0301 context_length_exceeded"],
  ["unicode", "Ｒate limit: prompt is too long"],
  ["unicode", "\u212alimit token limit exceeded"],
];

function overflowMessage(stopReason, errorMessage, usage) {
  const m = {
    role: "assistant",
    content: [],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 }, ...usage },
    stopReason,
    timestamp: 1_700_000_000_000,
  };
  if (errorMessage !== undefined) m.errorMessage = errorMessage;
  return m;
}

/**
 * The cases of the table: each error text as an `error` stop (with and
 * without a window), and as other stop reasons; plus the silent overflow
 * and the zero-output `length` stop around their thresholds.
 */
export function overflowCases() {
  const cases = [];
  for (const [kind, text] of OVERFLOW_ERROR_TEXTS) {
    cases.push({ kind, message: overflowMessage("error", text), contextWindow: undefined });
    cases.push({ kind, message: overflowMessage("error", text, { input: 250_000 }), contextWindow: 200_000 });
  }
  for (const stop of ["stop", "length", "aborted", "toolUse"]) {
    cases.push({ kind: "not an error stop", message: overflowMessage(stop, "prompt is too long"), contextWindow: undefined });
  }
  cases.push({ kind: "no errorMessage", message: overflowMessage("error", undefined), contextWindow: 200_000 });
  for (const w of [undefined, 0, 1, 128_000, 131_072, 200_000, 1_000_000]) {
    for (const input of [0, 100, 127_999, 128_000, 128_001, 129_761, 129_762, 197_999, 198_000, 198_001, 199_999, 200_000, 200_001, 1_000_001]) {
      for (const cacheRead of [0, 1, 50_000]) {
        for (const [stop, output] of [["stop", 100], ["stop", 0], ["length", 0], ["length", 1], ["toolUse", 0], ["error", 0], ["aborted", 0]]) {
          cases.push({ kind: "usage", message: overflowMessage(stop, stop === "error" ? "Connection error." : undefined, { input, output, cacheRead }), contextWindow: w });
        }
      }
    }
  }
  return cases;
}

/** Compares every case with pi's; returns the list of differences. */
export function compareOverflowTable(lib, pi) {
  const differences = [];
  const cases = overflowCases();
  for (const c of cases) {
    const ours = attempt(() => lib.isContextOverflow(c.message, c.contextWindow));
    const theirs = attempt(() => pi.isContextOverflow(c.message, c.contextWindow));
    if (!isDeepStrictEqual(ours, theirs)) {
      differences.push({
        fn: "isContextOverflow",
        seed: "overflow table",
        detail: {
          kind: c.kind,
          errorMessage: c.message.errorMessage,
          stopReason: c.message.stopReason,
          usage: pick(c.message.usage, ["input", "output", "cacheRead"]),
          contextWindow: c.contextWindow,
          ours,
          pi: theirs,
        },
      });
    }
  }
  return { cases: cases.length, differences };
}

// ---------------------------------------------------------------------------
// JavaScript values that JSON cannot hold
// ---------------------------------------------------------------------------

/**
 * Messages as a JavaScript app can hold them (built in code, or read back
 * from IndexedDB, whose structured clone keeps `undefined`, cycles and
 * BigInts): tool-call arguments with `undefined`, functions or symbols as
 * values, and fields pi never reads (`details`, extra properties) holding
 * cycles or BigInts. pi's functions take them as JavaScript does.
 */
export function jsValueCases() {
  const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const call = (args) => ({
    role: "assistant",
    content: [{ type: "text", text: "Reading." }, { type: "toolCall", id: "toolu_1", name: "read", arguments: args }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage,
    stopReason: "toolUse",
    timestamp: 2,
  });
  const result = (details) => ({
    role: "toolResult",
    toolCallId: "toolu_1",
    toolName: "read",
    content: [{ type: "text", text: "file contents" }],
    details,
    isError: false,
    timestamp: 3,
  });
  const cycle = () => {
    const o = { name: "node" };
    o.parent = o;
    return o;
  };
  const user = { role: "user", content: "Read a.txt", timestamp: 1 };
  return [
    ["an argument whose value is undefined (an unset optional)", [user, call({ path: "a.txt", offset: undefined, limit: 100 })]],
    ["an argument whose value is a function", [user, call({ path: "a.txt", callback() {} })]],
    ["an argument whose value is a symbol", [user, call({ path: "a.txt", tag: Symbol("t") })]],
    ["a nested undefined (dropped by JSON.stringify in both)", [user, call({ path: "a.txt", options: { a: undefined, b: [undefined] } })]],
    ["NaN, Infinity, a Date, toJSON, a sparse array", [user, call({ a: NaN, b: -Infinity, c: new Date(0), d: { toJSON: () => "J" }, e: [1, , 3] })]],
    ["tool result details with a cycle", [user, call({ path: "a.txt" }), result({ tree: cycle() })]],
    ["tool result details with a BigInt", [user, call({ path: "a.txt" }), result({ size: 10n })]],
    ["a user message with an extra property holding a cycle", [{ ...user, meta: cycle() }]],
    ["an assistant usage with a BigInt cost", [user, { ...call({ path: "a.txt" }), usage: { ...usage, cost: { ...usage.cost, total: 0n } } }]],
  ];
}

/** serializeConversation and estimateTokens on those cases, vs pi's. */
export function compareJsValueTable(lib, pi, stats = {}) {
  const differences = [];
  const cases = jsValueCases();
  let comparisons = 0;
  for (const [what, messages] of cases) {
    const pairs = [["estimateTokens", () => messages.map((m) => lib.estimateTokens(m)), () => messages.map((m) => pi.estimateTokens(m))]];
    if (hasSerializeConversation(lib)) {
      pairs.push(["serializeConversation", () => lib.serializeConversation(messages), () => pi.serializeConversation(messages)]);
    }
    for (const [fn, ours, theirs] of pairs) {
      comparisons++;
      stats[fn] = (stats[fn] ?? 0) + 1;
      const o = attempt(ours);
      const t = attempt(theirs);
      // Both throwing is agreement (the messages differ in wording).
      if (o.threw && t.threw) continue;
      if (!isDeepStrictEqual(o, t)) {
        differences.push({ fn, seed: "JavaScript values table", detail: { input: what, ours: o, pi: t } });
      }
    }
  }
  return { cases: comparisons, differences };
}
