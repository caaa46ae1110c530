// Sessions the benchmark replays: the two pi fixtures, and a synthetic
// 10,000-message session built by repeating their messages, with a
// compaction summary inserted every N messages. A replay is a list of turns;
// each turn appends one message, and some first insert a summary (a new
// array, as a compaction makes it). Nothing here is timed, except by
// `timedHooks`, the per-turn path the measurement tools share, whose
// statistics (`perTurn`, `tenths`) are here too.
import { readFileSync } from "node:fs";

const FIXTURES = new URL("../../fixtures/", import.meta.url);

/** Parsed lines of a pi session file (the header included, as pi indexes them). */
function readEntries(name) {
  return readFileSync(new URL(name, FIXTURES), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/**
 * A fixture as
 *  - `turns`: one per `message` entry in file order; a v1 `compaction` entry
 *    becomes a `compactionSummary` inserted before its first kept message
 *    (`firstKeptEntryIndex` indexes the file's entries, header = 0, as pi's
 *    v1→v2 migration reads it), on the turn after the entry;
 *  - `messages`: the flat array at the end of the replay;
 *  - `piEntries`: pi session entries (`message` and `compaction`, with ids
 *    and a parent chain) for pi's `prepareCompaction`.
 */
export function loadFixture(name) {
  const entries = readEntries(name);
  const turns = [];
  const piEntries = [];
  const firstMessageAtOrAfter = (fileIndex) => {
    for (let i = fileIndex; i < entries.length; i++) if (entries[i].type === "message") return i;
    return -1;
  };
  // file index of a message entry -> its message object (for locating kept messages)
  const messageOfEntry = new Map();
  let pendingInsert;
  // the flat array, simulated, to know where a summary goes
  const flat = [];
  let parentId = null;
  entries.forEach((e, i) => {
    if (e.type === "message") {
      const turn = { message: e.message };
      if (pendingInsert) {
        turn.insert = pendingInsert;
        flat.splice(pendingInsert.at, 0, pendingInsert.summary);
        pendingInsert = undefined;
      }
      turns.push(turn);
      flat.push(e.message);
      messageOfEntry.set(i, e.message);
      const id = `e${i}`;
      piEntries.push({ type: "message", id, parentId, timestamp: e.timestamp, message: e.message });
      parentId = id;
    } else if (e.type === "compaction") {
      const keptEntry = firstMessageAtOrAfter(e.firstKeptEntryIndex);
      const keptMessage = messageOfEntry.get(keptEntry);
      const at = keptMessage ? flat.indexOf(keptMessage) : flat.length;
      const summary = {
        role: "compactionSummary",
        summary: e.summary,
        tokensBefore: e.tokensBefore,
        timestamp: Date.parse(e.timestamp),
      };
      pendingInsert = { at, summary };
      const id = `e${i}`;
      piEntries.push({
        type: "compaction",
        id,
        parentId,
        timestamp: e.timestamp,
        summary: e.summary,
        firstKeptEntryId: keptEntry >= 0 ? `e${keptEntry}` : undefined,
        tokensBefore: e.tokensBefore,
      });
      parentId = id;
    }
  });
  return { name, turns, messages: flat, piEntries };
}

/** The first compaction summary text of the before-compaction fixture (a real one). */
export function realSummaryText() {
  const e = readEntries("pi-before-compaction.jsonl").find((x) => x.type === "compaction");
  return e.summary;
}

/**
 * The fixtures' messages repeated to `total`, each a shallow copy with a
 * fresh, increasing timestamp (one second apart).
 */
export function repeatedMessages(fixtures, total) {
  const base = fixtures.flatMap((f) => f.turns.map((t) => t.message));
  const start = Date.UTC(2026, 0, 1);
  const out = new Array(total);
  for (let i = 0; i < total; i++) out[i] = { ...base[i % base.length], timestamp: start + i * 1000 };
  return out;
}

/**
 * Turns of a synthetic replay: `messages` appended one per turn; after every
 * `every` messages a `compactionSummary` is inserted at `cutAt(flat)` (where
 * a compaction would cut) before the next message is appended. `cuts`, when
 * given, replaces `cutAt` with recorded positions (so that another process
 * can rebuild the same replay without calling into wasm).
 */
export function syntheticTurns(messages, every, { cutAt, cuts, summaryText }) {
  const turns = [];
  const flat = [];
  const used = [];
  let k = 0;
  for (let i = 0; i < messages.length; i++) {
    const turn = { message: messages[i] };
    if (i > 0 && i % every === 0) {
      const at = cuts ? cuts[k++] : cutAt(flat);
      used.push(at);
      const summary = {
        role: "compactionSummary",
        summary: summaryText,
        tokensBefore: 180000,
        // a compaction happens now: after every message so far
        timestamp: messages[i - 1].timestamp + 500,
      };
      turn.insert = { at, summary };
      flat.splice(at, 0, summary);
    }
    turns.push(turn);
    flat.push(messages[i]);
  }
  return { turns, cuts: used, messages: flat };
}

/**
 * Replays `turns`, calling `visit(messages, summaryIndex, turnIndex)` with
 * a new array each turn, built the way an agent builds it (`concat`, and a
 * copy with the summary spliced in when one is inserted). `summaryIndex` is
 * the index of the last summary, tracked as an app that inserts summaries
 * itself would track it (-1 when there is none). Async so that the visitor
 * can await.
 */
export async function replay(turns, visit) {
  let messages = [];
  let summaryIndex = -1;
  for (let t = 0; t < turns.length; t++) {
    const { insert, message } = turns[t];
    if (insert) {
      messages = [...messages.slice(0, insert.at), insert.summary, ...messages.slice(insert.at)];
      summaryIndex = insert.at <= summaryIndex ? summaryIndex + 1 : insert.at;
    }
    messages = messages.concat([message]);
    await visit(messages, summaryIndex, t);
  }
  return messages;
}

/**
 * One replay through a package's compactor (`mod`, a loaded build), timing
 * each turn's per-turn path as the bench does: the hooks' transformContext
 * and convertToLlm, then needsCompaction. Returns the per-turn nanoseconds,
 * with `.cpu` the replay's CPU time (user + system, µs). `estimator`
 * undefined leaves the option out (builds that predate it).
 */
export async function timedHooks(mod, turns, window, estimator) {
  const cpu0 = process.cpuUsage();
  const c = new mod.Compactor({ contextWindow: window, ...(estimator ? { estimator } : {}) });
  const hooks = c.agentHooks();
  const times = new Float64Array(turns.length);
  let sink = 0;
  await replay(turns, async (messages, _s, t) => {
    const t0 = process.hrtime.bigint();
    const ctx = await hooks.transformContext(messages);
    const llm = await hooks.convertToLlm(ctx);
    const need = c.needsCompaction(messages);
    times[t] = Number(process.hrtime.bigint() - t0);
    sink += llm.length + (need ? 1 : 0);
  });
  c.free();
  const used = process.cpuUsage(cpu0);
  times.cpu = used.user + used.system;
  times.sink = sink;
  return times;
}

/** The median of `xs` (NaN when empty). */
export const median = (xs) => {
  const s = Float64Array.from(xs).sort();
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

/** Per turn, the median over rounds (each round a replay's per-turn times). */
export const perTurn = (rounds) => Float64Array.from(rounds[0], (_, t) => median(rounds.map((r) => r[t])));

/** The median turn of the first tenth of the turns and of the last tenth. */
export const tenths = (xs) => {
  const k = Math.max(1, Math.floor(xs.length / 10));
  return { first: median(xs.subarray(0, k)), last: median(xs.subarray(xs.length - k)) };
};
