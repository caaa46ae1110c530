// pi session files ↔ the flat message array (SPEC.md §1, §2, §4):
// `piSessionToMessages` and `messagesToPiSession`, checked against pi
// 0.73.1's own loader. pi reads every file through `SessionManager.open`
// (its header check, migrations and leaf) and `buildSessionContext`; the
// invariant is that `transformContext` of our flat array is pi's context
// for the same file: a summary's text as `convertToLlm` shows it is pi's
// text (less the branch preamble our wrapper stands for), and the text
// export writes for it is pi's byte for byte; everything else deep-equal.

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Compactor,
  convertToLlm,
  messagesToPiSession,
  piSessionToMessages,
  transformContext,
} from "agent-compaction";

const { SessionManager } = await import(
  new URL(
    "../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js",
    import.meta.url,
  ).href
);

const FIXTURES = new URL("../../fixtures/", import.meta.url);
const fixture = (name) => readFileSync(new URL(name, FIXTURES), "utf8");

const BRANCH_PREAMBLE =
  "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

// ---------------------------------------------------------------------------
// pi's side
// ---------------------------------------------------------------------------

const workDir = mkdtempSync(join(tmpdir(), "agent-compaction-pi-"));
after(() => rmSync(workDir, { recursive: true, force: true }));
let fileCount = 0;

/** Loads `text` the way pi does (SessionManager.open may rewrite the file: a copy). */
function piLoad(text) {
  const file = join(workDir, `s${fileCount++}.jsonl`);
  writeFileSync(file, text);
  const manager = SessionManager.open(file, workDir);
  return { manager, context: manager.buildSessionContext() };
}

/** pi's `formatFileOperations` for a summary's details: each list that is an array of strings. */
function fileTags(details) {
  const list = (l) => (Array.isArray(l) && l.every((f) => typeof f === "string") ? l : []);
  const [read, modified] = details !== null && typeof details === "object" ? [list(details.readFiles), list(details.modifiedFiles)] : [[], []];
  const sections = [];
  if (read.length > 0) sections.push(`<read-files>\n${read.join("\n")}\n</read-files>`);
  if (modified.length > 0) sections.push(`<modified-files>\n${modified.join("\n")}\n</modified-files>`);
  return sections.length === 0 ? "" : `\n\n${sections.join("\n\n")}`;
}

/** Whether pi's preamble stands before our summary's text in pi's file. */
const hasPreamble = (ours) => ours.role === "branchSummary" && ours.fromHook !== true && ours.verbatim !== true;

/** The text pi stores for our summary: ours, with pi's preamble and file tags unless it is verbatim. */
function piText(ours) {
  if (ours.verbatim === true) return ours.summary;
  return (hasPreamble(ours) ? BRANCH_PREAMBLE : "") + ours.summary + fileTags(ours.details);
}

/** The summary text inside the wrapper our `convertToLlm` shows the model. */
function shownText(ours) {
  const tag = ours.role === "compactionSummary" ? "compaction_summary" : "branch_summary";
  const [{ content }] = convertToLlm([ours]);
  const text = content[0].text;
  const open = `<${tag}>\n`;
  return text
    .slice(text.indexOf(open) + open.length, text.length - `\n</${tag}>`.length)
    .replaceAll(`&lt;/${tag}&gt;`, `</${tag}>`);
}

/** What the model is shown of pi's summary, less the preamble our wrapper stands for. */
function piShownText(pi, ours) {
  return hasPreamble(ours) && pi.summary.startsWith(BRANCH_PREAMBLE) ? pi.summary.slice(BRANCH_PREAMBLE.length) : pi.summary;
}

const plain = (value) => JSON.parse(JSON.stringify(value));

/** Asserts our LLM context (transformContext) is pi's context. */
function assertSameContext(ours, pis, what) {
  assert.equal(ours.length, pis.length, `${what}: context length`);
  for (let i = 0; i < pis.length; i++) {
    const [o, p] = [ours[i], pis[i]];
    if (p.role === "compactionSummary" || p.role === "branchSummary") {
      assert.equal(o.role, p.role, `${what}[${i}].role`);
      assert.equal(piText(o), p.summary, `${what}[${i}].summary: the text pi stores`);
      assert.equal(shownText(o), piShownText(p, o), `${what}[${i}].summary: the text the model is shown`);
      assert.deepStrictEqual(plain(o.timestamp), plain(p.timestamp), `${what}[${i}].timestamp`);
      if (p.role === "compactionSummary") {
        assert.deepStrictEqual(plain(o.tokensBefore), plain(p.tokensBefore), `${what}[${i}].tokensBefore`);
      } else {
        assert.deepStrictEqual(plain(o.fromId), plain(p.fromId), `${what}[${i}].fromId`);
      }
    } else {
      assert.deepStrictEqual(plain(o), plain(p), `${what}[${i}]`);
    }
  }
}

/** Imports `text`, checks it against pi, and returns the import. */
function importAndCompare(text, what) {
  const imported = piSessionToMessages(text);
  const { manager, context } = piLoad(text);
  assertSameContext(transformContext(imported.messages), context.messages, what);
  assert.equal(imported.session.id, manager.getSessionId(), `${what}: session id`);
  assert.equal(imported.session.title, manager.getSessionName(), `${what}: title`);
  assert.deepStrictEqual(imported.session.model ?? null, plain(context.model), `${what}: model`);
  assert.equal(imported.session.thinkingLevel, context.thinkingLevel, `${what}: thinking level`);
  return imported;
}

/** Exports `messages`, loads the file with pi and with us, and checks both. */
function exportAndCompare(messages, what, options) {
  const text = messagesToPiSession(messages, options);
  const { context } = piLoad(text);
  assertSameContext(transformContext(messages), context.messages, `${what} (exported, in pi)`);
  const back = piSessionToMessages(text);
  assert.deepStrictEqual(back.messages, messages, `${what}: import(export(messages))`);
  return text;
}

// ---------------------------------------------------------------------------
// Real sessions
// ---------------------------------------------------------------------------

describe("fixtures", () => {
  test("pi-large-session.jsonl: 914 messages, all in pi's context", () => {
    const { messages, session } = importAndCompare(fixture("pi-large-session.jsonl"), "large");
    assert.equal(messages.length, 914);
    assert.equal(transformContext(messages).length, 914);
    assert.equal(session.version, 1);
    assert.equal(session.cwd, "/Users/badlogic/workspaces/pi-mono");
    assert.deepStrictEqual(session.skippedLines, []);
    exportAndCompare(messages, "large");
  });

  test("pi-before-compaction.jsonl: 990 messages + 2 summaries, 446 in pi's context", () => {
    const text = fixture("pi-before-compaction.jsonl");
    const { messages } = importAndCompare(text, "before-compaction");
    assert.equal(messages.length, 992);
    assert.equal(messages.filter((m) => m.role === "compactionSummary").length, 2);
    const context = transformContext(messages);
    assert.equal(context.length, 446);
    assert.equal(context[0].role, "compactionSummary");
    assert.equal(context[0].tokensBefore, 185014);
    exportAndCompare(messages, "before-compaction");
  });

  test("exported files carry the session's metadata to pi", () => {
    const { messages, session } = piSessionToMessages(fixture("pi-before-compaction.jsonl"));
    const text = exportAndCompare(messages, "metadata", {
      ...session,
      title: "Refactoring",
      thinkingLevel: "high",
    });
    const { manager, context } = piLoad(text);
    assert.equal(manager.getSessionId(), session.id);
    assert.equal(manager.getHeader().cwd, session.cwd);
    assert.equal(manager.getHeader().version, 3);
    assert.equal(manager.getSessionName(), "Refactoring");
    assert.deepStrictEqual(context.model, session.model);
    assert.equal(context.thinkingLevel, "high");
    assert.equal(typeof messagesToPiSession([]).split("\n")[0], "string");
    const fresh = JSON.parse(messagesToPiSession([]).split("\n")[0]);
    assert.match(fresh.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

// ---------------------------------------------------------------------------
// Hand-written files
// ---------------------------------------------------------------------------

const HEADER = { type: "session", version: 3, id: "hand", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/w" };
const jsonl = (...entries) => entries.map((e) => (typeof e === "string" ? e : JSON.stringify(e))).join("\n") + "\n";
let clock = Date.parse("2025-01-01T00:00:00.000Z");
const iso = () => new Date((clock += 1000)).toISOString();
const msg = (id, parentId, role, text, extra = {}) => ({
  type: "message",
  id,
  parentId,
  timestamp: iso(),
  message: { role, content: [{ type: "text", text }], timestamp: clock, ...extra },
});
const texts = (messages) =>
  messages.map((m) => m.summary ?? (typeof m.content === "string" ? m.content : m.content?.[0]?.text));

describe("hand-written files", () => {
  test("version 3 with branches: the last line's branch is the active one", () => {
    // a ← b ← c is abandoned; pi appended d under a. pi's leaf is always the
    // last entry it loads (navigating without appending is not saved), so a
    // file cannot make an earlier line the leaf.
    const text = jsonl(
      HEADER,
      msg("a", null, "user", "A"),
      msg("b", "a", "assistant", "B", { provider: "p", model: "m1" }),
      msg("c", "b", "user", "C"),
      msg("d", "a", "user", "D"),
    );
    const { messages } = importAndCompare(text, "branches");
    assert.deepStrictEqual(texts(messages), ["A", "D"]);
    // The last line may also continue an older branch.
    const back = jsonl(
      HEADER,
      msg("a", null, "user", "A"),
      msg("d", "a", "user", "D"),
      msg("b", "a", "assistant", "B", { provider: "p", model: "m1" }),
      { type: "label", id: "l", parentId: "b", timestamp: iso(), targetId: "a", label: "here" },
    );
    const second = importAndCompare(back, "older branch");
    assert.deepStrictEqual(texts(second.messages), ["A", "B"]);
    assert.deepStrictEqual(second.session.model, { provider: "p", modelId: "m1" });
    exportAndCompare(second.messages, "older branch");
  });

  test("version 2 with custom_message, branch_summary and hookMessage", () => {
    const details = { readFiles: ["src/a.ts"], modifiedFiles: ["src/b.ts"] };
    const branchSummary = {
      type: "branch_summary",
      id: "s",
      parentId: "a",
      timestamp: iso(),
      fromId: "x",
      summary: BRANCH_PREAMBLE + "Tried X." + fileTags(details),
      details,
      fromHook: false,
    };
    const text = jsonl(
      { ...HEADER, version: 2 },
      msg("a", null, "user", "A"),
      msg("x", "a", "user", "abandoned"),
      branchSummary,
      {
        type: "custom_message",
        customType: "note",
        content: "remember",
        display: false,
        details: { k: 1 },
        id: "c",
        parentId: "s",
        timestamp: iso(),
      },
      {
        type: "message",
        id: "h",
        parentId: "c",
        timestamp: iso(),
        message: { role: "hookMessage", customType: "hook", content: "H", display: true, timestamp: clock },
      },
      { type: "branch_summary", id: "e", parentId: "h", timestamp: iso(), fromId: "h", summary: "" },
    );
    const { messages } = importAndCompare(text, "v2");
    assert.deepStrictEqual(messages, [
      messages[0],
      {
        role: "branchSummary",
        summary: "Tried X.",
        fromId: "x",
        timestamp: Date.parse(branchSummary.timestamp),
        details,
        fromHook: false,
      },
      {
        role: "custom",
        customType: "note",
        content: "remember",
        display: false,
        details: { k: 1 },
        timestamp: messages[2].timestamp,
      },
      { role: "custom", customType: "hook", content: "H", display: true, timestamp: messages[3].timestamp },
    ]);
    const out = exportAndCompare(messages, "v2");
    assert.ok(out.includes(JSON.stringify(BRANCH_PREAMBLE + "Tried X." + fileTags(details))));
  });

  test("version 1: ids assigned, firstKeptEntryIndex and hookMessage migrated", () => {
    const v1 = (type, fields) => ({ type, timestamp: iso(), ...fields });
    const text = jsonl(
      { type: "session", id: "v1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/w" },
      v1("message", { message: { role: "user", content: "A", timestamp: 1 } }),
      v1("message", { message: { role: "hookMessage", customType: "h", content: "H", display: true, timestamp: 2 } }),
      v1("model_change", { provider: "openai", modelId: "gpt" }),
      v1("message", { message: { role: "user", content: "B", timestamp: 3 } }),
      v1("compaction", { summary: "S1", firstKeptEntryIndex: 2, tokensBefore: 10 }),
      v1("message", { message: { role: "user", content: "C", timestamp: 4 } }),
      v1("compaction", { summary: "S2", firstKeptEntryIndex: 99, tokensBefore: 20 }),
      v1("message", { message: { role: "user", content: "D", timestamp: 5 } }),
    );
    const { messages, session } = importAndCompare(text, "v1");
    assert.deepStrictEqual(texts(messages), ["A", "S1", "H", "B", "C", "S2", "D"]);
    assert.equal(messages[2].role, "custom");
    assert.equal(session.version, 1);
    assert.deepStrictEqual(session.model, { provider: "openai", modelId: "gpt" });
    exportAndCompare(messages, "v1");
  });

  test("a compaction whose tags match its details loses them; other text is kept", () => {
    const details = { readFiles: ["a.ts"], modifiedFiles: [] };
    const text = jsonl(
      HEADER,
      msg("a", null, "user", "A"),
      msg("b", "a", "user", "B"),
      {
        type: "compaction",
        id: "c",
        parentId: "b",
        timestamp: iso(),
        summary: "Sum." + fileTags(details),
        firstKeptEntryId: "b",
        tokensBefore: 99,
        details,
      },
      msg("d", "c", "user", "D"),
      {
        type: "compaction",
        id: "c2",
        parentId: "d",
        timestamp: iso(),
        summary: "Other.\n\n<read-files>\nnot-in-details.ts\n</read-files>",
        firstKeptEntryId: "d",
        tokensBefore: 100,
        details,
      },
      msg("e", "c2", "user", "E"),
    );
    const { messages } = importAndCompare(text, "tags");
    assert.deepStrictEqual(texts(messages), [
      "A",
      "Sum.",
      "B",
      "Other.\n\n<read-files>\nnot-in-details.ts\n</read-files>",
      "D",
      "E",
    ]);
    exportAndCompare(messages, "tags");
  });

  test("a malformed line in the middle is skipped, as pi skips it", () => {
    const text =
      jsonl(HEADER, msg("a", null, "user", "A")) +
      '{"type":"message","id":"broken",\n' +
      jsonl(msg("b", "a", "user", "B"));
    const { messages, session } = importAndCompare(text, "malformed");
    assert.deepStrictEqual(texts(messages), ["A", "B"]);
    assert.deepStrictEqual(session.skippedLines, [3]);
  });

  test("a \\ud800 escape comes through as a lone surrogate", () => {
    const line =
      '{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",' +
      '"message":{"role":"user","content":"x\\ud800y","timestamp":1}}';
    const { messages } = importAndCompare(jsonl(HEADER, line), "surrogate");
    assert.equal(messages[0].content, "x\ud800y");
    const out = exportAndCompare(messages, "surrogate");
    assert.ok(out.includes("x\\ud800y"));
  });

  test("a file with no session header is an error; so is an empty one", () => {
    assert.throws(() => piSessionToMessages(jsonl(msg("a", null, "user", "A"))), {
      name: "Error",
      message: /^line 1: the first entry must be the session header.*its type is "message"$/,
    });
    assert.throws(() => piSessionToMessages(""), { name: "Error", message: /session file is empty/ });
    assert.throws(() => piSessionToMessages("not json\n"), /none of the 1 non-blank lines/);
    // pi itself would start a new, empty session for such a file.
    assert.equal(piLoad(jsonl(msg("a", null, "user", "A"))).context.messages.length, 0);
  });

  test("unknown roles and messages an entry of their own cannot carry go as message entries", () => {
    const messages = [
      { role: "user", content: "u", timestamp: 1_700_000_000_000 },
      { role: "appNote", text: "shown, never sent", timestamp: 1_700_000_000_001 },
      { role: "custom", customType: "n", content: "odd time", display: true, timestamp: 1.5 },
      { role: "custom", customType: "n", content: "no time", display: false },
      { role: "branchSummary", summary: "", fromHook: true, timestamp: 1_700_000_000_002 },
      { role: "branchSummary", summary: "", timestamp: 1_700_000_000_003, details: { readFiles: ["a"], modifiedFiles: [] } },
      { role: "compactionSummary", summary: "S", tokensBefore: 3, timestamp: 1_700_000_000_004, appField: { x: 1 } },
      { role: "custom", customType: "n", content: "c", display: true, timestamp: 1_700_000_000_005, mine: true },
    ];
    const text = exportAndCompare(messages, "fallbacks");
    const types = text.trim().split("\n").slice(1).map((l) => JSON.parse(l).type);
    assert.deepStrictEqual(types, [
      "message",
      "message",
      "message",
      "message",
      "message",
      "branch_summary",
      "compaction",
      "message", // pi's custom_message entry has no place for `mine`
    ]);
  });

  test("a parentId cycle is an error (pi would never finish loading it)", () => {
    const text = jsonl(HEADER, msg("a", "b", "user", "A"), msg("b", "a", "user", "B"));
    assert.throws(() => piSessionToMessages(text), /^Error: line 3: the parentId chain/);
  });
});

// ---------------------------------------------------------------------------
// Bad arguments
// ---------------------------------------------------------------------------

describe("arguments", () => {
  test("TypeErrors name the argument and the field", () => {
    assert.throws(() => piSessionToMessages(5), { name: "TypeError", message: "jsonl must be a string, got a number" });
    assert.throws(() => messagesToPiSession("x"), {
      name: "TypeError",
      message: "messages must be an array of messages, got a string",
    });
    assert.throws(() => messagesToPiSession([{ role: "user" }, 7]), {
      name: "TypeError",
      message: "messages[1] must be a message object, got a number",
    });
    // Described as passed, not as JSON.stringify writes it (null).
    for (const [bad, got] of [[undefined, "undefined"], [() => 1, "a function"], [Symbol("s"), "a symbol"], [null, "null"]]) {
      assert.throws(() => messagesToPiSession([{ role: "user", timestamp: 1 }, bad]), {
        name: "TypeError",
        message: `messages[1] must be a message object, got ${got}`,
      });
    }
    assert.throws(() => messagesToPiSession([{ role: "user", timestamp: 1 }, , { role: "user", timestamp: 2 }]), { // eslint-disable-line no-sparse-arrays
      name: "TypeError",
      message: "messages[1] must be a message object, got undefined",
    });
    // A pin is a boolean, as for every other function.
    assert.throws(() => messagesToPiSession([{ role: "user", content: "a", timestamp: 1, pinned: "yes" }]), {
      name: "TypeError",
      message: "messages[0].pinned must be a boolean, got a string",
    });
    const cyclic = { role: "user", content: "x", timestamp: 1 };
    cyclic.self = cyclic;
    // The message JSON.stringify refuses is named.
    const ok = { role: "user", content: "fine", timestamp: 1 };
    assert.throws(() => messagesToPiSession([ok, cyclic]), {
      name: "TypeError",
      message: /^messages\[1\] could not be read: JSON\.stringify failed: .*circular/i,
    });
    assert.throws(() => messagesToPiSession([ok, ok, { role: "user", timestamp: 1n }]), {
      name: "TypeError",
      message: /^messages\[2\] could not be read: JSON\.stringify failed: .*BigInt/,
    });
    assert.throws(() => messagesToPiSession([], 5), {
      name: "TypeError",
      message: "options must be an object or undefined, got a number",
    });
    assert.throws(() => messagesToPiSession([], { cwd: 1 }), {
      name: "TypeError",
      message: "options.cwd must be a string or undefined, got a number",
    });
    assert.throws(
      () => messagesToPiSession([{ role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 0.5 }]),
      { name: "TypeError", message: /^messages\[0\]\.timestamp must be a whole number of milliseconds/ },
    );
  });

  test("the caller's messages are not touched", () => {
    const messages = [
      { role: "user", content: "u", timestamp: 1 },
      { role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 2, details: { readFiles: ["a"], modifiedFiles: [] } },
    ];
    const before = JSON.stringify(messages);
    Object.freeze(messages);
    messages.forEach(Object.freeze);
    exportAndCompare(messages, "frozen");
    assert.equal(JSON.stringify(messages), before);
  });
});

// ---------------------------------------------------------------------------
// Random files against pi
// ---------------------------------------------------------------------------

/** A small deterministic generator, so a failure names a seed that reproduces. */
function rng(seed) {
  let s = Math.imul(seed, 0x9e3779b1) >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
  for (let i = 0; i < 8; i++) next(); // small seeds start with small numbers
  return {
    below: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

/** A random session file: a tree with branches, compactions, summaries. */
function randomFile(seed) {
  const r = rng(seed);
  const version = r.pick([1, 2, 3, 3]);
  let t = Date.parse("2025-06-01T00:00:00.000Z") + r.below(1e6) * 1000;
  const stamp = () => new Date((t += 1000 + r.below(5000))).toISOString();
  const lines = [{ type: "session", version: version === 1 ? undefined : version, id: `rand-${seed}`, timestamp: stamp(), cwd: "/r" }];
  const ids = [];
  let leaf = null;
  const files = ["a.ts", "b.ts", "c/d.ts"];
  const details = () =>
    r.chance(0.3) ? undefined : { readFiles: files.filter(() => r.chance(0.5)), modifiedFiles: files.filter(() => r.chance(0.3)) };
  const count = 3 + r.below(25);
  for (let n = 0; n < count; n++) {
    const id = `e${n}`;
    // Now and then continue from an earlier entry: a new branch.
    const parent = version > 1 && ids.length > 0 && r.chance(0.15) ? r.pick(ids) : leaf;
    const base = version === 1 ? { timestamp: stamp() } : { id, parentId: parent, timestamp: stamp() };
    let entry;
    const kind = r.below(20);
    if (kind < 9) {
      const role = r.pick(["user", "assistant", "toolResult", "user", "assistant", "bashExecution"]);
      const message =
        role === "assistant"
          ? { role, content: [{ type: "text", text: `answer ${n}` }], provider: r.pick(["p1", "p2"]), model: `m${r.below(3)}`, usage: { input: n }, stopReason: "stop", timestamp: t }
          : role === "bashExecution"
            ? { role, command: "ls", output: `out ${n}`, exitCode: 0, cancelled: false, truncated: false, timestamp: t }
            : { role, content: [{ type: "text", text: `${role} ${n}` }], timestamp: t };
      entry = { type: "message", ...base, message };
    } else if (kind < 11) {
      const fromHook = r.chance(0.2);
      const d = details();
      const text = r.pick(["", "Branch work.", "x"]);
      const summary = (fromHook ? "" : BRANCH_PREAMBLE) + text + fileTags(d);
      entry = { type: "branch_summary", ...base, fromId: r.pick(["root", ...ids, "gone"]), summary, details: d, fromHook };
    } else if (kind < 13) {
      const d = details();
      const target = ids.length > 0 && r.chance(0.8) ? r.pick(ids) : "missing";
      const fields =
        version === 1
          ? { firstKeptEntryIndex: r.below(lines.length + 2) }
          : { firstKeptEntryId: target };
      entry = { type: "compaction", ...base, summary: `Summary ${n}.` + (r.chance(0.8) ? fileTags(d) : ""), ...fields, tokensBefore: 1000 + n, details: d, fromHook: r.chance(0.1) ? true : undefined };
    } else if (kind < 15) {
      entry = { type: "custom_message", customType: "ext", content: r.chance(0.5) ? `custom ${n}` : [{ type: "text", text: `custom ${n}` }], display: r.chance(0.5), details: r.chance(0.5) ? { n } : undefined, ...base };
    } else if (kind < 16 && version < 3) {
      entry = { type: "message", ...base, message: { role: "hookMessage", customType: "hook", content: `hook ${n}`, display: true, timestamp: t } };
    } else if (kind < 17) {
      entry = { type: "model_change", ...base, provider: "p3", modelId: `m${n}` };
    } else if (kind < 18) {
      entry = { type: "thinking_level_change", ...base, thinkingLevel: r.pick(["low", "high"]) };
    } else if (kind < 19) {
      entry = { type: "session_info", ...base, name: r.pick(["", " Named ", "x"]) };
    } else {
      entry = { type: "label", ...base, targetId: r.pick(ids.length > 0 ? ids : ["none"]), label: "l" };
    }
    lines.push(entry);
    if (version > 1) {
      ids.push(id);
      leaf = id;
    }
    if (r.chance(0.03)) lines.push('{"broken": ');
  }
  return jsonl(...lines);
}

// ---------------------------------------------------------------------------
// Summaries as pi's SessionManager writes them
// ---------------------------------------------------------------------------

const { convertToLlm: piConvertToLlm } = await import(
  new URL("../../node_modules/@mariozechner/pi-coding-agent/dist/core/messages.js", import.meta.url).href
);

let piClock = Date.parse("2025-03-01T00:00:00.000Z");
const piUser = (text) => ({ role: "user", content: text, timestamp: (piClock += 1000) });
const piAssistant = (text) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-x",
  usage: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 110, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp: (piClock += 1000),
});

/** A session pi's SessionManager writes: `build(manager, firstUserId, firstAssistantId)`, then a user message. */
function piSession(build) {
  const manager = SessionManager.inMemory("/p");
  const u = manager.appendMessage(piUser("q1"));
  const a = manager.appendMessage(piAssistant("a1"));
  build(manager, u, a);
  manager.appendMessage(piUser("q2"));
  return [manager.getHeader(), ...manager.getEntries()].map((e) => JSON.stringify(e)).join("\n") + "\n";
}

/** The summary texts of pi's context for `text`. */
const piSummaries = (text) =>
  piLoad(text).context.messages.filter((m) => m.role.endsWith("Summary")).map((m) => m.summary);

/** pi → ours → pi: pi's context keeps its summary texts; ours → pi → ours is the identity. */
function piRoundTrip(text, what) {
  const { messages } = importAndCompare(text, what);
  const exported = exportAndCompare(messages, what);
  assert.deepStrictEqual(piSummaries(exported), piSummaries(text), `${what}: pi's summary texts after the round trip`);
  return messages;
}

describe("summaries as pi's SessionManager writes them", () => {
  test("an extension's compaction whose details are its own (readFiles a string): the conversation works as in pi", async () => {
    const text = piSession((m, _u, a) =>
      m.appendCompaction("extension summary", a, 5, { readFiles: "src/a.ts,src/b.ts", version: 2 }, true),
    );
    const messages = piRoundTrip(text, "extension details");
    const summary = messages.find((m) => m.role === "compactionSummary");
    assert.deepStrictEqual(summary.details, { readFiles: "src/a.ts,src/b.ts", version: 2 });
    const llm = convertToLlm(transformContext(messages));
    assert.equal(llm.length, piConvertToLlm(piLoad(text).context.messages).length);
    assert.equal(llm[0].role, "user");
    assert.ok(llm[0].content[0].text.includes("<compaction_summary>\nextension summary\n</compaction_summary>"));
    // The Compactor's per-turn hooks: no hook error, the summary converted.
    const events = [];
    const compactor = new Compactor({ contextWindow: 100_000, onEvent: (e) => events.push(e.type) });
    const hooks = compactor.agentHooks();
    const sent = await hooks.convertToLlm(await hooks.transformContext(messages));
    assert.deepStrictEqual(sent, llm);
    assert.deepStrictEqual(events.filter((t) => t === "hook_error"), []);
    assert.equal(compactor.modelContext(messages).length, 3);
  });

  test("a branch summary without pi's preamble (branchWithSummary) keeps its text through the round trip", () => {
    const messages = piRoundTrip(
      piSession((m, u) => m.branchWithSummary(u, "BS")),
      "branch summary without preamble",
    );
    const summary = messages.find((m) => m.role === "branchSummary");
    assert.equal(summary.summary, "BS");
    assert.equal(summary.verbatim, true);
    // An extension's summary (fromHook) has none to keep.
    const hook = piRoundTrip(piSession((m, u) => m.branchWithSummary(u, "hook summary", undefined, true)), "hook branch summary");
    assert.equal(hook.find((m) => m.role === "branchSummary").verbatim, undefined);
  });

  test("a branch summary whose preamble has CRLF line ends is not given a second one", () => {
    const crlf = BRANCH_PREAMBLE.replaceAll("\n", "\r\n") + "X";
    const messages = piRoundTrip(piSession((m, u) => m.branchWithSummary(u, crlf)), "CRLF preamble");
    assert.equal(messages.find((m) => m.role === "branchSummary").summary, crlf);
  });

  test("an extension's compaction with file lists in details and none in its text: no tags added, for pi or the model", () => {
    const details = { readFiles: ["r.ts"], modifiedFiles: ["m.ts"] };
    const messages = piRoundTrip(
      piSession((m, _u, a) => m.appendCompaction("hook compaction", a, 5, details, true)),
      "hook compaction with lists",
    );
    const summary = messages.find((m) => m.role === "compactionSummary");
    assert.equal(summary.summary, "hook compaction");
    assert.deepStrictEqual(summary.details, details);
    assert.equal(shownText(summary), "hook compaction");
  });

  test("file tags in the middle of the text, or tags that are not the details': the text is pi's, the lists are not repeated", () => {
    const middle = "intro\n\n<read-files>\nr.ts\n</read-files>\n\nmore text after";
    const other = "text\n\n<read-files>\nr.ts\n</read-files>";
    for (const [what, summaryText, details] of [
      ["tags in the middle", middle, { readFiles: ["r.ts"], modifiedFiles: [] }],
      ["tags that differ from details", other, { readFiles: ["other.ts"], modifiedFiles: [] }],
    ]) {
      const messages = piRoundTrip(piSession((m, _u, a) => m.appendCompaction(summaryText, a, 5, details)), what);
      const summary = messages.find((m) => m.role === "compactionSummary");
      assert.equal(summary.summary, summaryText, what);
      assert.equal(shownText(summary), summaryText, what);
    }
  });

  test("pi's own summaries still lose their tags and preamble on import", () => {
    const details = { readFiles: ["r.ts"], modifiedFiles: [] };
    const messages = piRoundTrip(
      piSession((m, _u, a) => {
        m.branchWithSummary(a, BRANCH_PREAMBLE + "Explored." + fileTags(details), details);
        m.appendCompaction("Summary." + fileTags(details), a, 5, details);
      }),
      "pi's own summaries",
    );
    const summaries = messages.filter((m) => m.role.endsWith("Summary"));
    assert.deepStrictEqual(summaries.map((m) => [m.role, m.summary, m.verbatim]), [
      ["compactionSummary", "Summary.", undefined],
      ["branchSummary", "Explored.", undefined],
    ]);
  });
});

describe("random session files against pi", () => {
  test("300 files: transformContext(import) is pi's context, and export round-trips through pi", () => {
    let compactions = 0;
    let branched = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const text = randomFile(seed);
      const what = `seed ${seed}`;
      const { messages } = importAndCompare(text, what);
      compactions += messages.filter((m) => m.role === "compactionSummary").length;
      const { manager } = piLoad(text);
      if (manager.getBranch().length < manager.getEntries().length) branched++;
      exportAndCompare(messages, what);
    }
    // The generator must reach the cases it exists for.
    assert.ok(compactions > 100, `${compactions} compactions`);
    assert.ok(branched > 20, `${branched} files lost entries to other branches`);
  });
});
