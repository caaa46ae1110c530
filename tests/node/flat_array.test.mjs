// The flat-array functions (SPEC.md §1, §2, §5): transformContext,
// convertToLlm and agentMessagesToChatMessages, checked on real pi sessions,
// on hand-built arrays covering every role, and on bad input.
//
// pi's own convertToLlm (@mariozechner/pi-coding-agent 0.73.1) is the
// reference for every role except the two summaries.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  agentMessagesToChatMessages,
  convertToLlm,
  transformContext,
} from "agent-compaction";

const pi = await import(
  new URL(
    "../../node_modules/@mariozechner/pi-coding-agent/dist/core/messages.js",
    import.meta.url,
  ).href
);
const piConvertToLlm = pi.convertToLlm;

const FIXTURES = new URL("../../fixtures/", import.meta.url);

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const COMPACTION_PREAMBLE =
  "The conversation history before this point was compacted into the following summary:\n\n";
const BRANCH_PREAMBLE =
  "The following is a summary of a branch that this conversation came back from:\n\n";

/** The file tags of SPEC.md §2, from a summary's `details`. */
function fileTags(details) {
  const read = details?.readFiles ?? [];
  const modified = details?.modifiedFiles ?? [];
  let tags = "";
  if (read.length > 0) tags += "\n\n<read-files>\n" + read.join("\n") + "\n</read-files>";
  if (modified.length > 0) {
    tags += "\n\n<modified-files>\n" + modified.join("\n") + "\n</modified-files>";
  }
  return tags;
}

/** The text SPEC.md §2 says convertToLlm shows for a compaction summary. */
function compactionText(summary, details) {
  return (
    COMPACTION_PREAMBLE +
    "<compaction_summary>\n" +
    summary +
    fileTags(details) +
    "\n</compaction_summary>"
  );
}

/** The same for a branch summary. */
function branchText(summary, details) {
  return (
    BRANCH_PREAMBLE + "<branch_summary>\n" + summary + fileTags(details) + "\n</branch_summary>"
  );
}

function asUser(text, timestamp) {
  return { role: "user", content: [{ type: "text", text }], timestamp };
}

function deepFreeze(value) {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze(value[key]);
  }
  return value;
}

function countOccurrences(haystack, needle) {
  return haystack.split(needle).length - 1;
}

/** Asserts `actual` holds exactly the objects of `expected`, in order. */
function assertSameObjects(actual, expected, what = "result") {
  assert.ok(Array.isArray(actual), `${what} is an array`);
  assert.equal(actual.length, expected.length, `${what} length`);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(actual[i] === expected[i], `${what}[${i}] is the very same object as expected`);
  }
}

/** Identity and content snapshot of an input array, to prove it is not mutated. */
function snapshot(messages, sampleIndices) {
  return {
    length: messages.length,
    items: messages.slice(),
    json: sampleIndices.map((i) => JSON.stringify(messages[i])),
    sampleIndices,
  };
}

function assertUnchanged(messages, snap) {
  assert.equal(messages.length, snap.length, "input length unchanged");
  for (let i = 0; i < snap.length; i++) {
    assert.ok(messages[i] === snap.items[i], `input[${i}] is still the same object`);
  }
  snap.sampleIndices.forEach((idx, k) => {
    assert.equal(JSON.stringify(messages[idx]), snap.json[k], `input[${idx}] contents unchanged`);
  });
}

function loadEntries(name) {
  return readFileSync(new URL(name, FIXTURES), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

function roleCounts(messages) {
  const counts = {};
  for (const m of messages) counts[m.role] = (counts[m.role] ?? 0) + 1;
  return counts;
}

const PASSES_THROUGH = new Set(["user", "assistant", "toolResult"]);

/**
 * convertToLlm against pi's, for arrays without summaries: deep-equal, and
 * user/assistant/toolResult messages are the very same objects.
 */
function assertConvertMatchesPi(messages) {
  const ours = convertToLlm(messages);
  const theirs = piConvertToLlm(messages);
  assert.deepStrictEqual(ours, theirs);
  const kept = messages.filter((m) => PASSES_THROUGH.has(m?.role));
  const oursKept = ours.filter((m) => kept.includes(m));
  assert.equal(oursKept.length, kept.length, "every user/assistant/toolResult comes back as itself");
  return ours;
}

// ---------------------------------------------------------------------------
// 1. Real pi sessions
// ---------------------------------------------------------------------------

describe("fixture pi-large-session.jsonl (no compaction)", () => {
  const entries = loadEntries("pi-large-session.jsonl");
  const msgs = entries.filter((e) => e.type === "message").map((e) => e.message);
  const samples = [0, 1, 2, 457, msgs.length - 1];

  test("has 914 messages: 88 user, 453 assistant, 373 toolResult", () => {
    assert.equal(msgs.length, 914);
    assert.deepStrictEqual(roleCounts(msgs), { user: 88, assistant: 453, toolResult: 373 });
  });

  test("transformContext returns the very same array when there is no compactionSummary", () => {
    const snap = snapshot(msgs, samples);
    assert.ok(transformContext(msgs) === msgs);
    assertUnchanged(msgs, snap);
  });

  test("convertToLlm deep-equals pi's convertToLlm and returns every message as the same object", () => {
    const snap = snapshot(msgs, samples);
    const ours = convertToLlm(msgs);
    assert.deepStrictEqual(ours, piConvertToLlm(msgs));
    assertSameObjects(ours, msgs, "convertToLlm(msgs)");
    assert.ok(ours !== msgs, "a new array, not the input");
    assertUnchanged(msgs, snap);
  });

  test("agentMessagesToChatMessages shows all messages, same objects, same order, input untouched", () => {
    const snap = snapshot(msgs, samples);
    const shown = agentMessagesToChatMessages(msgs);
    assertSameObjects(shown, msgs, "display");
    assert.ok(shown !== msgs, "a new array, not the input");
    assertSameObjects(agentMessagesToChatMessages(msgs, { divider: true }), msgs, "display with divider");
    assertUnchanged(msgs, snap);
  });
});

describe("fixture pi-before-compaction.jsonl", () => {
  const entries = loadEntries("pi-before-compaction.jsonl");
  const msgs = entries.filter((e) => e.type === "message").map((e) => e.message);

  // The naive flat array: each compaction entry becomes a compactionSummary
  // at its own position in file order.
  const flat = [];
  const summaries = [];
  let lastCompactionEntry = -1;
  entries.forEach((entry, i) => {
    if (entry.type === "message") flat.push(entry.message);
    if (entry.type === "compaction") {
      const summary = {
        role: "compactionSummary",
        summary: entry.summary,
        tokensBefore: entry.tokensBefore,
        timestamp: Date.parse(entry.timestamp),
      };
      if (entry.details !== undefined) summary.details = entry.details;
      flat.push(summary);
      summaries.push(summary);
      lastCompactionEntry = i;
    }
  });
  const messagesAfterLastSummary = entries
    .slice(lastCompactionEntry + 1)
    .filter((e) => e.type === "message")
    .map((e) => e.message);
  const lastSummary = summaries[summaries.length - 1];
  const samples = [0, flat.indexOf(summaries[0]), flat.indexOf(lastSummary), flat.length - 1];

  test("has 990 messages and two compaction entries", () => {
    assert.equal(msgs.length, 990);
    assert.equal(summaries.length, 2);
    assert.equal(flat.length, 992);
    assert.ok(messagesAfterLastSummary.length > 0);
  });

  describe("messages alone", () => {
    test("transformContext returns the very same array", () => {
      assert.ok(transformContext(msgs) === msgs);
    });

    test("convertToLlm deep-equals pi's and keeps user/assistant/toolResult as the same objects", () => {
      const snap = snapshot(msgs, [0, 500, msgs.length - 1]);
      const ours = assertConvertMatchesPi(msgs);
      // bashExecution messages become user messages, the rest pass through.
      const bash = msgs.filter((m) => m.role === "bashExecution");
      assert.equal(bash.length, 3);
      assert.equal(ours.length, msgs.length);
      msgs.forEach((m, i) => {
        if (PASSES_THROUGH.has(m.role)) assert.ok(ours[i] === m, `convertToLlm[${i}] is the input object`);
        else assert.equal(ours[i].role, "user");
      });
      assertUnchanged(msgs, snap);
    });

    test("agentMessagesToChatMessages returns all messages as the same objects", () => {
      assertSameObjects(agentMessagesToChatMessages(msgs), msgs);
    });
  });

  describe("flat array with the compactions as compactionSummary messages", () => {
    test("transformContext starts at the last summary and holds exactly the messages after it", () => {
      const snap = snapshot(flat, samples);
      const context = transformContext(flat);
      assert.ok(context !== flat, "a new array");
      assert.ok(context[0] === lastSummary, "starts with the last summary object itself");
      assertSameObjects(context.slice(1), messagesAfterLastSummary, "context after the summary");
      assertUnchanged(flat, snap);
    });

    test("agentMessagesToChatMessages hides the summaries and equals the messages alone", () => {
      const snap = snapshot(flat, samples);
      const shown = agentMessagesToChatMessages(flat);
      assertSameObjects(shown, msgs, "display");
      assert.ok(!shown.some((m) => m.role === "compactionSummary"));
      assertUnchanged(flat, snap);
    });

    test("agentMessagesToChatMessages with { divider: true } puts a compactionDivider in each summary's place", () => {
      const snap = snapshot(flat, samples);
      const shown = agentMessagesToChatMessages(flat, { divider: true });
      assert.equal(shown.length, flat.length);
      flat.forEach((m, i) => {
        if (m.role === "compactionSummary") {
          assert.deepStrictEqual(shown[i], {
            role: "compactionDivider",
            tokensBefore: m.tokensBefore,
            timestamp: m.timestamp,
          });
        } else {
          assert.ok(shown[i] === m, `display[${i}] is the input object`);
        }
      });
      assertUnchanged(flat, snap);
    });

    test("convertToLlm equals pi's except at the summaries, which use <compaction_summary> tags", () => {
      const snap = snapshot(flat, samples);
      const ours = convertToLlm(flat);
      const theirs = piConvertToLlm(flat);
      assert.equal(ours.length, theirs.length);
      assert.equal(ours.length, flat.length);
      flat.forEach((m, i) => {
        if (m.role === "compactionSummary") {
          const text = compactionText(m.summary, m.details);
          assert.deepStrictEqual(ours[i], asUser(text, m.timestamp));
          // The deliberate difference from pi: pi wraps the summary in <summary>.
          const piText = theirs[i].content[0].text;
          assert.notEqual(ours[i].content[0].text, piText);
          assert.ok(piText.includes("<summary>\n" + m.summary));
          assert.ok(!ours[i].content[0].text.includes("<summary>"));
          assert.deepStrictEqual(theirs[i], asUser(piText, m.timestamp), "only the text differs");
        } else {
          assert.deepStrictEqual(ours[i], theirs[i], `convertToLlm[${i}] equals pi's`);
          if (PASSES_THROUGH.has(m.role)) assert.ok(ours[i] === m, `convertToLlm[${i}] is the input object`);
        }
      });
      assertUnchanged(flat, snap);
    });
  });
});

// ---------------------------------------------------------------------------
// 2. Hand-built arrays, every role of SPEC.md §1
// ---------------------------------------------------------------------------

const usage = {
  input: 120,
  output: 45,
  cacheRead: 10,
  cacheWrite: 0,
  totalTokens: 175,
  cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
};

function makeConversation() {
  return {
    userString: { role: "user", content: "Please list the files", timestamp: 1000 },
    userBlocks: {
      role: "user",
      content: [
        { type: "text", text: "Look at this" },
        { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
      ],
      timestamp: 1001,
    },
    assistant: {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should run ls." },
        { type: "text", text: "Listing the files." },
        { type: "toolCall", id: "call_1", name: "bash", arguments: { command: "ls" } },
      ],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      usage,
      stopReason: "toolUse",
      timestamp: 1002,
    },
    toolResult: {
      role: "toolResult",
      toolCallId: "call_1",
      toolName: "bash",
      content: [{ type: "text", text: "a.txt\nb.txt" }],
      isError: false,
      timestamp: 1003,
    },
    assistantError: {
      role: "assistant",
      content: [],
      api: "openai-responses",
      provider: "openai",
      model: "gpt-5",
      usage,
      stopReason: "error",
      errorMessage: "rate limited",
      timestamp: 1004,
    },
  };
}

function bashMessage(overrides) {
  return {
    role: "bashExecution",
    command: "ls -la",
    output: "a\nb\n",
    exitCode: 0,
    cancelled: false,
    truncated: false,
    timestamp: 2000,
    ...overrides,
  };
}

describe("hand-built arrays: non-summary roles match pi", () => {
  test("user (string and block content), assistant (thinking/text/toolCall/usage/stopReason), toolResult pass through as the same objects", () => {
    const c = makeConversation();
    const msgs = [c.userString, c.userBlocks, c.assistant, c.toolResult, c.assistantError];
    const ours = assertConvertMatchesPi(msgs);
    assertSameObjects(ours, msgs, "convertToLlm");
    assertSameObjects(agentMessagesToChatMessages(msgs), msgs, "display");
    assert.ok(transformContext(msgs) === msgs);
  });

  const bashCases = {
    "with output and exit code 0": bashMessage({}),
    "with empty output (shows (no output))": bashMessage({ output: "" }),
    "with exit code 2": bashMessage({ exitCode: 2 }),
    "with exit code undefined": bashMessage({ exitCode: undefined }),
    "with exit code null": bashMessage({ exitCode: null }),
    "with a negative exit code": bashMessage({ exitCode: -1 }),
    "cancelled": bashMessage({ cancelled: true, exitCode: undefined }),
    "cancelled with a non-zero exit code (cancel wins)": bashMessage({ cancelled: true, exitCode: 130 }),
    "truncated with fullOutputPath": bashMessage({ truncated: true, fullOutputPath: "/tmp/out-123.txt" }),
    "truncated without fullOutputPath": bashMessage({ truncated: true }),
    "fullOutputPath but not truncated": bashMessage({ fullOutputPath: "/tmp/out.txt" }),
    "everything at once": bashMessage({
      output: "",
      exitCode: 1,
      truncated: true,
      fullOutputPath: "/tmp/x",
    }),
    "excludeFromContext: false": bashMessage({ excludeFromContext: false }),
    "with backticks, unicode and a lone surrogate": bashMessage({
      command: "echo `date` 😀 \uD800",
      output: "漢字\uDC00",
    }),
  };
  for (const [name, message] of Object.entries(bashCases)) {
    test(`bashExecution ${name}: convertToLlm equals pi's exactly`, () => {
      const ours = assertConvertMatchesPi([message]);
      assert.equal(ours.length, 1);
      assert.equal(ours[0].role, "user");
      assert.equal(ours[0].timestamp, message.timestamp);
      assert.equal(ours[0].content[0].text, pi.bashExecutionToText(message));
    });
  }

  test("bashExecution text for the common cases reads as expected", () => {
    assert.deepStrictEqual(convertToLlm([bashMessage({})]), [asUser("Ran `ls -la`\n```\na\nb\n\n```", 2000)]);
    assert.deepStrictEqual(convertToLlm([bashMessage({ output: "" })]), [asUser("Ran `ls -la`\n(no output)", 2000)]);
    assert.deepStrictEqual(convertToLlm([bashMessage({ exitCode: 2 })]), [
      asUser("Ran `ls -la`\n```\na\nb\n\n```\n\nCommand exited with code 2", 2000),
    ]);
  });

  test("bashExecution with excludeFromContext: true is dropped by convertToLlm but still displayed", () => {
    const c = makeConversation();
    const excluded = bashMessage({ excludeFromContext: true });
    const msgs = [c.userString, excluded, c.assistant];
    const ours = assertConvertMatchesPi(msgs);
    assertSameObjects(ours, [c.userString, c.assistant], "convertToLlm");
    assertSameObjects(agentMessagesToChatMessages(msgs), msgs, "display");
  });

  test("custom with string content becomes a user message with one text block", () => {
    const custom = {
      role: "custom",
      customType: "reminder",
      content: "Remember the tests",
      display: true,
      timestamp: 3000,
    };
    const ours = assertConvertMatchesPi([custom]);
    assert.deepStrictEqual(ours, [asUser("Remember the tests", 3000)]);
  });

  test("custom with array content becomes a user message carrying the same content array", () => {
    const content = [
      { type: "text", text: "see image" },
      { type: "image", data: "aGk=", mimeType: "image/png" },
    ];
    const custom = { role: "custom", customType: "attach", content, display: false, timestamp: 3001 };
    const ours = assertConvertMatchesPi([custom]);
    assert.equal(ours.length, 1);
    assert.ok(ours[0].content === content, "the content array is the same object");
    assert.deepStrictEqual(ours[0], { role: "user", content, timestamp: 3001 });
  });

  test("custom messages: display: false is hidden from display, display: true is shown; both go to the model", () => {
    const hidden = { role: "custom", customType: "ctx", content: "hidden", display: false, timestamp: 1 };
    const shown = { role: "custom", customType: "ctx", content: "shown", display: true, timestamp: 2 };
    const c = makeConversation();
    const msgs = [c.userString, hidden, shown, c.assistant];
    assertSameObjects(agentMessagesToChatMessages(msgs), [c.userString, shown, c.assistant], "display");
    assertSameObjects(
      agentMessagesToChatMessages(msgs, { divider: true }),
      [c.userString, shown, c.assistant],
      "display with divider",
    );
    const llm = assertConvertMatchesPi(msgs);
    assert.equal(llm.length, 4);
    assert.ok(transformContext(msgs) === msgs);
  });

  test("an unknown role is kept by transformContext and display as the same object, dropped by convertToLlm, never an error", () => {
    const note = { role: "note", text: "x", timestamp: 1 };
    const c = makeConversation();
    const msgs = [c.userString, note, c.assistant];
    assert.ok(transformContext(msgs) === msgs);
    assertSameObjects(agentMessagesToChatMessages(msgs), msgs, "display");
    assertSameObjects(agentMessagesToChatMessages(msgs, { divider: true }), msgs, "display with divider");
    const llm = assertConvertMatchesPi(msgs);
    assertSameObjects(llm, [c.userString, c.assistant], "convertToLlm");

    const summary = { role: "compactionSummary", summary: "S", tokensBefore: 5, timestamp: 0 };
    const withSummary = [summary, note];
    assertSameObjects(transformContext(withSummary), withSummary, "context after a summary keeps the note");
    assert.deepStrictEqual(convertToLlm(withSummary), [asUser(compactionText("S"), 0)]);
  });

  test("empty array: transformContext returns it, the others return empty arrays", () => {
    const empty = [];
    assert.ok(transformContext(empty) === empty);
    assert.deepStrictEqual(convertToLlm(empty), []);
    assert.deepStrictEqual(agentMessagesToChatMessages(empty), []);
    assert.deepStrictEqual(agentMessagesToChatMessages(empty, { divider: true }), []);
  });

  test("all non-summary roles together equal pi's convertToLlm", () => {
    const c = makeConversation();
    const msgs = [
      c.userString,
      c.userBlocks,
      c.assistant,
      c.toolResult,
      ...Object.values(bashCases),
      bashMessage({ excludeFromContext: true }),
      { role: "custom", customType: "t", content: "s", display: true, timestamp: 5 },
      { role: "custom", customType: "t", content: [{ type: "text", text: "a" }], display: false, timestamp: 6 },
      { role: "note", text: "x", timestamp: 1 },
      c.assistantError,
    ];
    assertConvertMatchesPi(msgs);
  });
});

describe("hand-built arrays: compaction and branch summaries", () => {
  const summaryCases = {
    "without details": {
      details: undefined,
      tags: "",
    },
    "with empty file lists": {
      details: { readFiles: [], modifiedFiles: [] },
      tags: "",
    },
    "with only readFiles": {
      details: { readFiles: ["src/a.rs", "src/b.rs"], modifiedFiles: [] },
      tags: "\n\n<read-files>\nsrc/a.rs\nsrc/b.rs\n</read-files>",
    },
    "with only modifiedFiles": {
      details: { readFiles: [], modifiedFiles: ["README.md"] },
      tags: "\n\n<modified-files>\nREADME.md\n</modified-files>",
    },
    "with both lists": {
      details: { readFiles: ["a.ts"], modifiedFiles: ["b.ts", "c.ts"] },
      tags: "\n\n<read-files>\na.ts\n</read-files>\n\n<modified-files>\nb.ts\nc.ts\n</modified-files>",
    },
    "with readFiles and no modifiedFiles key": {
      details: { readFiles: ["only.txt"] },
      tags: "\n\n<read-files>\nonly.txt\n</read-files>",
    },
  };

  for (const [name, { details, tags }] of Object.entries(summaryCases)) {
    test(`compactionSummary ${name}: shown to the model as SPEC §2 says`, () => {
      const summary = {
        role: "compactionSummary",
        summary: "## Goal\nShip it",
        tokensBefore: 150000,
        timestamp: 42,
        ...(details === undefined ? {} : { details }),
      };
      const expected =
        COMPACTION_PREAMBLE + "<compaction_summary>\n## Goal\nShip it" + tags + "\n</compaction_summary>";
      assert.equal(compactionText(summary.summary, details), expected, "test oracle agrees with the literal");
      assert.deepStrictEqual(convertToLlm([summary]), [asUser(expected, 42)]);
    });

    test(`branchSummary ${name}: shown with the branch preamble and <branch_summary> tags`, () => {
      const branch = {
        role: "branchSummary",
        summary: "Tried approach B",
        fromId: "abc123",
        timestamp: 43,
        ...(details === undefined ? {} : { details }),
      };
      const expected = BRANCH_PREAMBLE + "<branch_summary>\nTried approach B" + tags + "\n</branch_summary>";
      assert.deepStrictEqual(convertToLlm([branch]), [asUser(expected, 43)]);
    });
  }

  test("the exact compaction text for a summary with both file lists", () => {
    const summary = {
      role: "compactionSummary",
      summary: "S",
      tokensBefore: 1,
      timestamp: 7,
      details: { readFiles: ["a.rs", "b.rs"], modifiedFiles: ["c.rs"] },
    };
    assert.equal(
      convertToLlm([summary])[0].content[0].text,
      "The conversation history before this point was compacted into the following summary:\n\n" +
        "<compaction_summary>\nS\n\n<read-files>\na.rs\nb.rs\n</read-files>\n\n" +
        "<modified-files>\nc.rs\n</modified-files>\n</compaction_summary>",
    );
  });

  test("a summary message keeps its extra fields out of the model message (usage, fromHook, details)", () => {
    const summary = {
      role: "compactionSummary",
      summary: "S",
      tokensBefore: 9,
      timestamp: 8,
      usage,
      fromHook: true,
      details: { readFiles: [], modifiedFiles: [] },
    };
    assert.deepStrictEqual(convertToLlm([summary]), [asUser(compactionText("S"), 8)]);
  });

  test("branchSummary is displayed as the same object, is not a context boundary, and is not a divider", () => {
    const c = makeConversation();
    const branch = { role: "branchSummary", summary: "B", fromId: "x", timestamp: 5 };
    const msgs = [c.userString, branch, c.assistant];
    assert.ok(transformContext(msgs) === msgs);
    assertSameObjects(agentMessagesToChatMessages(msgs), msgs, "display");
    assertSameObjects(agentMessagesToChatMessages(msgs, { divider: true }), msgs, "display with divider");
    const llm = convertToLlm(msgs);
    assert.ok(llm[0] === c.userString && llm[2] === c.assistant);
    assert.deepStrictEqual(llm[1], asUser(branchText("B"), 5));
  });

  test("multiple summaries: transformContext starts at the last one; display hides all; convertToLlm shows all", () => {
    const c = makeConversation();
    const s1 = { role: "compactionSummary", summary: "first", tokensBefore: 100, timestamp: 10 };
    const s2 = { role: "compactionSummary", summary: "second", tokensBefore: 200, timestamp: 20 };
    const msgs = [c.userString, c.assistant, s1, c.userBlocks, c.toolResult, s2, c.assistant, c.toolResult];
    assertSameObjects(transformContext(msgs), [s2, c.assistant, c.toolResult], "context");
    assertSameObjects(
      agentMessagesToChatMessages(msgs),
      [c.userString, c.assistant, c.userBlocks, c.toolResult, c.assistant, c.toolResult],
      "display",
    );
    const withDividers = agentMessagesToChatMessages(msgs, { divider: true });
    assert.equal(withDividers.length, msgs.length);
    assert.deepStrictEqual(withDividers[2], { role: "compactionDivider", tokensBefore: 100, timestamp: 10 });
    assert.deepStrictEqual(withDividers[5], { role: "compactionDivider", tokensBefore: 200, timestamp: 20 });
    assert.ok(!JSON.stringify(withDividers).includes("first"), "a divider never carries the summary text");
    const llm = convertToLlm(msgs);
    assert.equal(llm.length, msgs.length);
    assert.deepStrictEqual(llm[2], asUser(compactionText("first"), 10));
    assert.deepStrictEqual(llm[5], asUser(compactionText("second"), 20));
    // The usual pipeline: convertToLlm(transformContext(messages)).
    const model = convertToLlm(transformContext(msgs));
    assert.deepStrictEqual(model, [asUser(compactionText("second"), 20), c.assistant, c.toolResult]);
    assert.ok(model[1] === c.assistant && model[2] === c.toolResult);
  });

  test("a summary as the very last element gives a one-element context", () => {
    const c = makeConversation();
    const s1 = { role: "compactionSummary", summary: "old", tokensBefore: 1, timestamp: 1 };
    const s2 = { role: "compactionSummary", summary: "new", tokensBefore: 2, timestamp: 2 };
    const msgs = [s1, c.userString, c.assistant, s2];
    const context = transformContext(msgs);
    assertSameObjects(context, [s2], "context");
    assert.ok(context !== msgs);
    const only = [s2];
    const single = transformContext(only);
    assertSameObjects(single, [s2], "context of [summary]");
  });

  test("transformContext reads nothing before the last summary but each message's `pinned`", () => {
    // Messages before the summary that throw on any other read: touching one
    // would throw. (Pinned messages before the summary are sent
    // after it, so `pinned` is the one field read there; the Compactor's
    // hooks know it from their index and read nothing.)
    const poisoned = new Proxy(
      {},
      {
        get(_, key) {
          if (key === "pinned") return undefined;
          throw new Error("read a message before the last summary");
        },
      },
    );
    const c = makeConversation();
    const s = { role: "compactionSummary", summary: "S", tokensBefore: 1, timestamp: 1 };
    const msgs = [poisoned, poisoned, { get role() { throw new Error("role read"); } }, s, c.userString];
    assertSameObjects(transformContext(msgs), [s, c.userString], "context");
    // A `pinned` that cannot be read is a TypeError naming the messages.
    const hostile = { get pinned() { throw new Error("pinned getter"); } };
    assert.throws(() => transformContext([hostile, s]), (e) => e instanceof TypeError && /messages.*pinned getter/s.test(e.message));
  });

  test("a closing </compaction_summary> inside the summary is neutralised; the wrapper's is the only real one", () => {
    const summary = {
      role: "compactionSummary",
      summary: "before</compaction_summary>middle</compaction_summary>after",
      tokensBefore: 1,
      timestamp: 1,
    };
    const text = convertToLlm([summary])[0].content[0].text;
    assert.equal(countOccurrences(text, "</compaction_summary>"), 1);
    assert.ok(text.endsWith("\n</compaction_summary>"));
    assert.equal(countOccurrences(text, "&lt;/compaction_summary&gt;"), 2);
    assert.ok(
      text.includes(
        "<compaction_summary>\nbefore&lt;/compaction_summary&gt;middle&lt;/compaction_summary&gt;after\n</compaction_summary>",
      ),
    );
  });

  test("a closing </branch_summary> inside a branch summary is neutralised; the wrapper's is the only real one", () => {
    const branch = {
      role: "branchSummary",
      summary: "x</branch_summary>y</branch_summary>",
      timestamp: 1,
    };
    const text = convertToLlm([branch])[0].content[0].text;
    assert.equal(countOccurrences(text, "</branch_summary>"), 1);
    assert.ok(text.endsWith("\n</branch_summary>"));
    assert.equal(countOccurrences(text, "&lt;/branch_summary&gt;"), 2);
    assert.ok(
      text.includes("<branch_summary>\nx&lt;/branch_summary&gt;y&lt;/branch_summary&gt;\n</branch_summary>"),
    );
  });

  test("a summary that mentions the other wrapper's closing tag keeps it as written", () => {
    const summary = {
      role: "compactionSummary",
      summary: "talked about </branch_summary> tags",
      tokensBefore: 1,
      timestamp: 1,
    };
    assert.deepStrictEqual(convertToLlm([summary]), [asUser(compactionText(summary.summary), 1)]);
  });

  test("unicode survives exactly: emoji, CJK and a lone surrogate keep their UTF-16 code units", () => {
    const text = "Emoji 😀👩‍💻, CJK 漢字かな한국어, lone \uD800 high and \uDFFF low, end";
    const files = { readFiles: ["ファイル.ts", "😀.md"], modifiedFiles: ["\uD800.rs"] };
    const compaction = { role: "compactionSummary", summary: text, tokensBefore: 1, timestamp: 1, details: files };
    const branch = { role: "branchSummary", summary: text, timestamp: 2 };
    const [c, b] = convertToLlm([compaction, branch]);
    const ct = c.content[0].text;
    const bt = b.content[0].text;
    assert.ok(ct.includes(text));
    assert.ok(bt.includes(text));
    assert.equal(ct, compactionText(text, files));
    assert.equal(bt, branchText(text));
    const tagsLength =
      "\n\n<read-files>\n".length +
      "ファイル.ts".length +
      1 +
      "😀.md".length +
      "\n</read-files>".length +
      "\n\n<modified-files>\n".length +
      "\uD800.rs".length +
      "\n</modified-files>".length;
    assert.equal("😀.md".length, 5, "an emoji is two UTF-16 code units");
    assert.equal("\uD800.rs".length, 4, "a lone surrogate is one code unit");
    assert.equal(
      ct.length,
      COMPACTION_PREAMBLE.length + "<compaction_summary>\n".length + text.length + tagsLength + "\n</compaction_summary>".length,
    );
    assert.equal(
      bt.length,
      BRANCH_PREAMBLE.length + "<branch_summary>\n".length + text.length + "\n</branch_summary>".length,
    );
    assert.ok(ct.includes("\n\uD800.rs\n"), "lone surrogate in a file name kept");
  });

  test("the divider carries the summary's tokensBefore and timestamp and nothing else", () => {
    const s = {
      role: "compactionSummary",
      summary: "secret summary text",
      tokensBefore: 123456,
      timestamp: 1700000000000,
      details: { readFiles: ["a"], modifiedFiles: [] },
      usage,
      fromHook: false,
    };
    const c = makeConversation();
    const shown = agentMessagesToChatMessages([c.userString, s, c.assistant], { divider: true });
    assert.equal(shown.length, 3);
    assert.ok(shown[0] === c.userString && shown[2] === c.assistant);
    assert.deepStrictEqual(shown[1], { role: "compactionDivider", tokensBefore: 123456, timestamp: 1700000000000 });
    assert.deepStrictEqual(Object.keys(shown[1]), ["role", "tokensBefore", "timestamp"]);
  });

  test("divider option: undefined, {}, null and { divider: false } all hide summaries", () => {
    const c = makeConversation();
    const s = { role: "compactionSummary", summary: "S", tokensBefore: 1, timestamp: 1 };
    const msgs = [c.userString, s, c.assistant];
    for (const options of [undefined, {}, null, { divider: false }, { divider: undefined }]) {
      assertSameObjects(
        agentMessagesToChatMessages(msgs, options),
        [c.userString, c.assistant],
        `display with options ${JSON.stringify(options)}`,
      );
    }
  });
});

describe("no input is mutated", () => {
  function buildAllRoles() {
    const c = makeConversation();
    return [
      c.userString,
      c.userBlocks,
      c.assistant,
      c.toolResult,
      { role: "compactionSummary", summary: "old", tokensBefore: 10, timestamp: 10 },
      bashMessage({ exitCode: 2 }),
      bashMessage({ excludeFromContext: true }),
      { role: "custom", customType: "t", content: "s", display: true, timestamp: 11 },
      { role: "custom", customType: "t", content: [{ type: "text", text: "a" }], display: false, timestamp: 12 },
      { role: "branchSummary", summary: "B", fromId: "f", timestamp: 13, details: { readFiles: ["r"], modifiedFiles: [] } },
      { role: "note", text: "x", timestamp: 14 },
      {
        role: "compactionSummary",
        summary: "new",
        tokensBefore: 20,
        timestamp: 20,
        details: { readFiles: ["a.ts"], modifiedFiles: ["b.ts"] },
      },
      c.userString,
      c.assistant,
    ];
  }

  test("deep-frozen messages and array: all three functions work without throwing and give correct results", () => {
    const frozen = deepFreeze(buildAllRoles());
    const reference = buildAllRoles(); // unfrozen twin, for the expected values
    const json = JSON.stringify(frozen);

    const context = transformContext(frozen);
    assertSameObjects(context, frozen.slice(11), "context");

    const llm = convertToLlm(frozen);
    const piLlm = piConvertToLlm(reference);
    assert.equal(llm.length, piLlm.length);
    // Positions in the model output (the excluded bash run and the note are
    // dropped): 4 and 9 are the compaction summaries, 8 the branch summary.
    const summaryAt = new Set([4, 8, 9]);
    llm.forEach((m, i) => {
      if (!summaryAt.has(i)) assert.deepStrictEqual(m, piLlm[i], `convertToLlm[${i}]`);
    });
    assert.deepStrictEqual(llm[4], asUser(compactionText("old"), 10));
    assert.deepStrictEqual(llm[8], asUser(branchText("B", { readFiles: ["r"], modifiedFiles: [] }), 13));
    assert.deepStrictEqual(llm[9], asUser(compactionText("new", { readFiles: ["a.ts"], modifiedFiles: ["b.ts"] }), 20));
    assert.equal(llm.length, 12);
    assert.ok(llm[0] === frozen[0] && llm[2] === frozen[2] && llm[3] === frozen[3] && llm[11] === frozen[13]);

    const shown = agentMessagesToChatMessages(frozen);
    assertSameObjects(shown, frozen.filter((_, i) => ![4, 8, 11].includes(i)), "display");

    const withDividers = agentMessagesToChatMessages(frozen, deepFreeze({ divider: true }));
    assert.equal(withDividers.length, frozen.length - 1);
    assert.deepStrictEqual(withDividers[4], { role: "compactionDivider", tokensBefore: 10, timestamp: 10 });
    assert.deepStrictEqual(withDividers[10], { role: "compactionDivider", tokensBefore: 20, timestamp: 20 });

    assert.equal(JSON.stringify(frozen), json, "frozen input still serialises the same");
  });

  test("results are new arrays: changing them does not change the input", () => {
    const msgs = buildAllRoles();
    const before = msgs.slice();
    const context = transformContext(msgs);
    const llm = convertToLlm(msgs);
    const shown = agentMessagesToChatMessages(msgs, { divider: true });
    for (const result of [context, llm, shown]) {
      assert.ok(result !== msgs);
      result.push({ role: "user", content: "added", timestamp: 0 });
      result.reverse();
    }
    assertSameObjects(msgs, before, "input after editing the results");
  });
});

// ---------------------------------------------------------------------------
// 3. Bad input (SPEC §5): a TypeError naming the index and the field
// ---------------------------------------------------------------------------

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * `fn` throws a TypeError whose message names exactly `path` (not a longer
 * path that merely starts with it).
 */
function assertTypeErrorNaming(fn, path) {
  let thrown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  assert.ok(thrown !== undefined, `expected a TypeError naming ${path}, nothing was thrown`);
  assert.ok(
    thrown instanceof TypeError,
    `expected a TypeError naming ${path}, got ${thrown?.constructor?.name}: ${thrown?.message}`,
  );
  const exact = new RegExp(`(^|[^\\w.\\]])${escapeRegExp(path)}(?![\\w.\\[])`);
  assert.match(thrown.message, exact, `the message names ${path}`);
}

/** After an error, the module still gives the right answers. */
function assertStillWorks() {
  const c = makeConversation();
  const s = { role: "compactionSummary", summary: "ok", tokensBefore: 3, timestamp: 4 };
  const msgs = [c.userString, s, c.assistant, c.toolResult];
  assertSameObjects(transformContext(msgs), [s, c.assistant, c.toolResult], "context after an error");
  const llm = convertToLlm(msgs);
  assert.deepStrictEqual(llm, [c.userString, asUser(compactionText("ok"), 4), c.assistant, c.toolResult]);
  assert.ok(llm[0] === c.userString && llm[2] === c.assistant);
  assertSameObjects(agentMessagesToChatMessages(msgs), [c.userString, c.assistant, c.toolResult], "display after an error");
}

const FUNCTIONS = {
  transformContext: (m) => transformContext(m),
  convertToLlm: (m) => convertToLlm(m),
  agentMessagesToChatMessages: (m) => agentMessagesToChatMessages(m),
  "agentMessagesToChatMessages (divider)": (m) => agentMessagesToChatMessages(m, { divider: true }),
};

const user = { role: "user", content: "hi", timestamp: 1 };
const assistantMsg = makeConversation().assistant;

const throwingRole = () => ({
  get role() {
    throw new Error("boom");
  },
});
const throwingProxy = () =>
  new Proxy(
    {},
    {
      get() {
        throw new Error("trap");
      },
    },
  );

// [name, input, path]; every function reads every element of these arrays
// (transformContext reads back to the last summary, and there is none, or
// the bad element comes after it).
const BAD_INPUTS = [
  ["null", null, "messages"],
  ["undefined", undefined, "messages"],
  ["a number", 42, "messages"],
  ["a string", "user", "messages"],
  ["an object that is not an array", { length: 1, 0: user }, "messages"],
  ["[1]", [1], "messages[0]"],
  ["[null]", [null], "messages[0]"],
  ["a number at index 2", [user, assistantMsg, 1], "messages[2]"],
  ["undefined at index 1", [user, undefined], "messages[1]"],
  ["[{}] (no role)", [{}], "messages[0].role"],
  ["no role at index 1", [user, { content: "x", timestamp: 1 }], "messages[1].role"],
  ["[{ role: 5 }]", [{ role: 5 }], "messages[0].role"],
  ["role 5 at index 3", [user, user, user, { role: 5 }], "messages[3].role"],
  ["role null at index 1", [user, { role: null }], "messages[1].role"],
  [
    "a compactionSummary without a summary",
    [{ role: "compactionSummary", tokensBefore: 1, timestamp: 1 }],
    "messages[0].summary",
  ],
  [
    "a compactionSummary with summary: 7 at index 2",
    [user, assistantMsg, { role: "compactionSummary", summary: 7, tokensBefore: 1, timestamp: 1 }],
    "messages[2].summary",
  ],
  [
    "a bad role after a valid summary",
    [user, { role: "compactionSummary", summary: "S", tokensBefore: 1, timestamp: 1 }, user, { role: 5 }],
    "messages[3].role",
  ],
  ["a role getter that throws", [throwingRole()], "messages[0].role"],
  ["a role getter that throws at index 2", [user, user, throwingRole()], "messages[2].role"],
  ["a Proxy whose get trap throws at index 1", [user, throwingProxy()], "messages[1].role"],
];

describe("bad input: TypeError naming the index and field, then the module keeps working", () => {
  for (const [fnName, fn] of Object.entries(FUNCTIONS)) {
    for (const [name, input, path] of BAD_INPUTS) {
      test(`${fnName}: ${name} → TypeError naming ${path}`, () => {
        assertTypeErrorNaming(() => fn(input), path);
        assertStillWorks();
      });
    }
  }

  test("convertToLlm: details that are not lists of strings are the writer's own data (as pi reads them): no tags, no error", () => {
    const summary = (details) => ({ role: "compactionSummary", summary: "S", tokensBefore: 1, timestamp: 1, details });
    for (const details of [
      { readFiles: [5], modifiedFiles: [] },
      { readFiles: "src/a.ts,src/b.ts", version: 2 },
      { artifactIndex: [1, 2] },
      "text",
      ["a.ts"],
      7,
    ]) {
      assert.deepStrictEqual(convertToLlm([user, summary(details)])[1], asUser(compactionText("S"), 1), JSON.stringify(details));
    }
    // Each list on its own: the one that is a list of strings is shown.
    assert.deepStrictEqual(
      convertToLlm([user, summary({ readFiles: ["a"], modifiedFiles: ["b", 7] })])[1],
      asUser(compactionText("S", { readFiles: ["a"] }), 1),
    );
    assertStillWorks();
  });

  test("convertToLlm: a branchSummary with a non-string summary → TypeError naming messages[1].summary", () => {
    assertTypeErrorNaming(
      () => convertToLlm([user, { role: "branchSummary", summary: null, timestamp: 1 }]),
      "messages[1].summary",
    );
    assertStillWorks();
  });

  test('agentMessagesToChatMessages(msgs, { divider: "yes" }) → TypeError naming options.divider', () => {
    assertTypeErrorNaming(() => agentMessagesToChatMessages([user], { divider: "yes" }), "options.divider");
    assertTypeErrorNaming(() => agentMessagesToChatMessages([user], { divider: 1 }), "options.divider");
    assertStillWorks();
  });

  test("agentMessagesToChatMessages with options that are not an object → TypeError naming options", () => {
    assertTypeErrorNaming(() => agentMessagesToChatMessages([user], "divider"), "options");
    assertTypeErrorNaming(() => agentMessagesToChatMessages([user], true), "options");
    assertStillWorks();
  });
});

// Last in the file on purpose: if the module does not survive these calls,
// the tests after it would fail for that reason alone.
describe("hostile containers: a TypeError, never a broken module", () => {
  test("a Proxy array whose traps throw, a revoked Proxy, and hostile file lists / content: TypeError naming the field, and the module survives 10,000 such calls", () => {
    const revoked = () => {
      const r = Proxy.revocable([], {});
      r.revoke();
      return r.proxy;
    };
    const lengthTrap = new Proxy(["a.ts"], {
      get(target, key) {
        if (key === "length") throw new Error("length trap");
        return Reflect.get(target, key);
      },
    });
    const cases = [
      ["all three", "a Proxy array whose get trap throws", new Proxy([user], { get() { throw new Error("trap"); } }), "messages"],
      ["all three", "a revoked Proxy as the array", revoked(), "messages"],
      [
        "convertToLlm",
        "details.readFiles whose length getter throws",
        [user, { role: "compactionSummary", summary: "S", tokensBefore: 1, timestamp: 1, details: { readFiles: lengthTrap } }],
        "messages[1].details.readFiles",
      ],
      [
        "convertToLlm",
        "custom content that is a revoked Proxy",
        [user, { role: "custom", customType: "x", content: revoked(), display: true, timestamp: 1 }],
        "messages[1].content",
      ],
    ];
    const calls = [];
    for (const [which, name, input, path] of cases) {
      const fns = which === "all three" ? Object.entries(FUNCTIONS) : [["convertToLlm", FUNCTIONS.convertToLlm]];
      for (const [fnName, fn] of fns) calls.push([`${fnName}: ${name}`, () => fn(input), path]);
    }
    // Survival first: each failed call must leave the wasm module intact.
    for (let i = 0; i < 10_000; i++) {
      const [, call] = calls[i % calls.length];
      try {
        call();
      } catch {
        // the kind of error is checked below
      }
    }
    assertStillWorks();
    for (const [label, call, path] of calls) {
      assert.doesNotThrow(() => assertTypeErrorNaming(call, path), label);
      assertStillWorks();
    }
  });
});
