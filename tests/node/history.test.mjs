// The history search (docs/history.md): what a summary left out, or the
// clearing tier replaced, searched and read back by the Compactor, and as
// the search_history / read_history tools a model calls — with the real
// pi-agent-core `Agent` (pi-ai's faux provider plays the model) and the
// AI SDK's `generateText`.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Agent } from "@mariozechner/pi-agent-core";
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Compactor, convertToLlm, removeLastCompaction, transformContext } from "agent-compaction";
import { historyTools } from "agent-compaction/pi-agent-core";
import { aiSdkConversation } from "agent-compaction/ai-sdk";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { openAiSummarizer } from "agent-compaction";
import { createLocalModel, demoAgentTools } from "../../scripts/local-model.mjs";
import { startServer } from "../../scripts/serve.mjs";

const SUMMARY = "## Goal\nKeep the parser fast.\n\n## Key Decisions\n(none)";
let clock = 1_000;
const user = (text) => ({ role: "user", content: text, timestamp: clock++ });
const assistant = (text, calls = []) => ({
  role: "assistant",
  content: [{ type: "text", text }, ...calls.map(([id, name, args]) => ({ type: "toolCall", id, name, arguments: args }))],
  api: "openai-completions", provider: "test", model: "m",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: calls.length ? "toolUse" : "stop", timestamp: clock++,
});
const result = (id, name, text) => ({ role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text }], isError: false, timestamp: clock++ });
const filler = (label) => `${label} ` + "lorem ipsum dolor ".repeat(300);

/** A session whose first turns hold the details, then enough later work to push them behind a summary. */
function session() {
  const log = Array.from({ length: 400 }, (_, i) => `line ${i}: ok`).join("\n");
  return [
    user("Constraint K1: never modify files under vendor/ in this repository."),
    assistant("Understood, vendor/ stays untouched.", [["c1", "read", { path: "src/parser/config.ts" }]]),
    result("c1", "read", "export function parseConfigFile(path) {\n  // ...\n}"),
    assistant("Running the tests.", [["c2", "bash", { command: "npm test" }]]),
    result("c2", "bash", `${log}\nerror E0502: cannot borrow \`cache\` as mutable\n${log}`),
    assistant("Decision D1: keep retries at three with exponential backoff."),
    ...Array.from({ length: 6 }, (_, i) => [user(filler(`task ${i}`)), assistant(filler(`done ${i}`))]).flat(),
    user("What is next?"),
  ];
}

function compactor(options = {}) {
  return new Compactor({
    contextWindow: 20_000,
    settings: { reserveTokens: 4_000, keepRecentTokens: 2_000 },
    summarize: async () => SUMMARY,
    ...options,
  });
}

async function compacted(c = compactor()) {
  const { messages } = await c.compact(session());
  assert.ok(messages.some((m) => m.role === "compactionSummary"), "the session was compacted");
  return { c, messages };
}

describe("Compactor.searchHistory and readHistory", () => {
  test("finds what only the summarized part holds, by identifier, path, error code and paraphrase words", async () => {
    const { c, messages } = await compacted();
    const first = (query) => c.searchHistory(messages, query).hits[0];
    assert.equal(first("vendor constraint").index, 0);
    assert.match(first("vendor constraint").excerpt, /never modify files under vendor\//);
    assert.equal(first("parseConfigFile").index, 2);
    assert.equal(first("config parse").index, 2, "camelCase parts are words");
    assert.equal(first("src/parser/config.ts").index, 1, "a path is a word");
    assert.equal(first("E0502").index, 4);
    assert.equal(first("decided retries backoff").index, 5, "decided meets Decision");
    const { hits, searched } = c.searchHistory(messages, "lorem", { limit: 3 });
    assert.ok(searched >= 6 && hits.length <= 3);
    for (const h of hits) {
      assert.match(h.ref, /^h\d+\.\d+-[0-9a-z]{4}$/);
      assert.equal(typeof h.score, "number");
      assert.equal(h.role, messages[h.index].role);
    }
  });

  test("a word is found whatever its case, and after a line end or tab in a tool call's arguments, by the Compactor and a stored session alike", async () => {
    const early = [
      user("The hook is useState; the loader is called PARSECONFIGFILE in the logs."),
      assistant("Writing the file.", [["w1", "write", { path: "src/a.ts", content: "import fs from 'node:fs';\nexport const walrusLimit = 3;\n\tkumquat();" }]]),
      result("w1", "write", "ok"),
    ];
    const c = compactor();
    const { messages } = await c.compact([...early, ...session()]);
    // The first hits: the message that writes the word, in either case (and parseConfigFile's read result at 5).
    const firsts = (query, n) => c.searchHistory(messages, query).hits.slice(0, n).map((h) => h.index).sort((a, b) => a - b);
    const queries = [["usestate", [0]], ["USESTATE", [0]], ["parseConfigFile", [0, 5]], ["parseconfigfile", [0, 5]], ["import", [1]], ["kumquat", [1]], ["walrusLimit", [1]], ["walrus limit", [1]]];
    for (const [query, expected] of queries) assert.deepEqual(firsts(query, expected.length), expected, query);
    // A read gives the arguments as they were written: a line end is a line end.
    const hit = c.searchHistory(messages, "kumquat").hits[0];
    assert.ok(c.readHistory(messages, hit.ref).text.includes("export const walrusLimit = 3;\n\tkumquat();"));

    await import("fake-indexeddb/auto");
    const { SessionStore } = await import("agent-compaction");
    const store = await SessionStore.open({ name: "history-case-and-arguments" });
    const { id } = await store.createSession({ title: "case" });
    await store.save(id, messages);
    for (const [query] of queries) assert.deepEqual(await store.searchHistory(id, query), c.searchHistory(messages, query), query);
    store.close();
  });

  test("searches only what the model no longer sees", async () => {
    const { c, messages } = await compacted();
    const visible = messages.at(-1);
    assert.equal(visible.content, "What is next?");
    assert.deepEqual(c.searchHistory(messages, "What is next").hits.filter((h) => h.index === messages.length - 1), []);
    const before = c.searchHistory(session(), "vendor");
    assert.deepEqual(before, { hits: [], searched: 0 }, "nothing is hidden before a compaction");
  });

  test("a long message reads back page by page, exactly, and a changed one is refused", async () => {
    const { c, messages } = await compacted();
    const hit = c.searchHistory(messages, "E0502").hits[0];
    const original = messages[hit.index].content[0].text;
    let text = "";
    let page = c.readHistory(messages, hit.ref, { offset: 0, maxChars: 1_000 });
    for (let n = 0; n < 100 && page; n++) {
      assert.ok(page.text.length <= 1_000);
      text += page.text;
      page = page.next === null ? null : c.readHistory(messages, hit.ref, { offset: page.next, maxChars: 1_000 });
    }
    assert.equal(text, original);
    const changed = messages.slice();
    changed[hit.index] = result("c2", "bash", "another output");
    assert.throws(() => c.readHistory(changed, hit.ref), /has changed since it was found/);
    assert.throws(() => c.readHistory(messages, "h999.0-0000"), /not in the history index/);
    assert.throws(() => c.readHistory(messages, "E0502"), /not a history reference/);
    assert.throws(() => c.readHistory(messages, 5), TypeError);
    // A number out of range is a RangeError that shows it; another type a TypeError.
    assert.throws(() => c.readHistory(messages, hit.ref, { maxChars: 0 }), { name: "RangeError", message: "options.maxChars must be a whole number from 1 to 16000, got 0" });
    assert.throws(() => c.readHistory(messages, hit.ref, { offset: -1 }), { name: "RangeError", message: "options.offset must be a whole number from 0 to 4294967295, got -1" });
    // A whole number over the bound is told the bound, not that it is no whole number.
    assert.throws(() => c.readHistory(messages, hit.ref, { offset: 1e12 }), { name: "RangeError", message: "options.offset must be a whole number from 0 to 4294967295, got 1000000000000" });
    assert.throws(() => c.historyTool(messages, "read_history", { ref: hit.ref, offset: 2 ** 53 }), { name: "RangeError", message: "arguments.offset must be a whole number from 0 to 4294967295, got 9007199254740992" });
    assert.throws(() => c.readHistory(messages, hit.ref, { maxChars: "500" }), { name: "TypeError", message: "options.maxChars must be a whole number from 1 to 16000, got a string" });
    assert.throws(() => c.searchHistory(messages, ""), /the query is empty/);
    assert.throws(() => c.searchHistory(messages, "x", { limit: 0 }), { name: "RangeError", message: "options.limit must be a whole number from 1 to 100, got 0" });
    assert.throws(() => c.searchHistory(messages, "x", { limit: NaN }), { name: "RangeError", message: "options.limit must be a whole number from 1 to 100, got NaN" });
  });

  test("keeps in step: a later compaction adds what it hides, an undo takes it out", async () => {
    const { c, messages } = await compacted();
    const more = messages.concat(
      user("Use the staging bucket cobalt-17 for uploads."),
      assistant("Noted: cobalt-17."),
      ...Array.from({ length: 6 }, (_, i) => [user(filler(`later ${i}`)), assistant(filler(`later done ${i}`))]).flat(),
    );
    assert.deepEqual(c.searchHistory(more, "cobalt").hits, [], "still in view");
    const { messages: twice } = await c.compact(more);
    assert.equal(twice.filter((m) => m.role === "compactionSummary").length, 2);
    const found = c.searchHistory(twice, "cobalt").hits;
    const naming = more.filter((m) => JSON.stringify(m.content ?? "").includes("cobalt-17"));
    assert.equal(naming.length, 2);
    assert.deepEqual(found.map((h) => twice[h.index]), naming.reverse(), "both messages that name it, the later first");
    const undone = removeLastCompaction(twice);
    assert.deepEqual(c.searchHistory(undone, "cobalt").hits, [], "visible again after the undo");
    // A reference found before the undo, to a message the model sees again: the model is told what to do.
    assert.throws(() => c.historyTool(undone, "read_history", { ref: found[0].ref }), {
      message: `message ${found[0].index} is not in the history index (it may be in your context again, or the reference is not from this conversation): search again for a current reference`,
    });
    assert.equal(c.searchHistory(undone, "vendor").hits[0].index, 0);
  });

  test("tool outputs the clearing tier replaced are searchable", () => {
    const c = compactor();
    const messages = [
      user("Read the lockfile."),
      assistant("Reading.", [["t1", "read", { path: "package-lock.json" }]]),
      result("t1", "read", "lockfileVersion 3, integrity sha512-QUARTZ"),
      { role: "toolOutputCleared", toolCallIds: ["t1"], tokensFreed: 900, timestamp: clock++ },
      user("Go on."),
    ];
    const hits = c.searchHistory(messages, "QUARTZ").hits;
    assert.equal(hits.length, 1);
    assert.equal(hits[0].index, 2);
    assert.equal(hits[0].role, "toolResult");
  });

  test("a failed attempt after the summary is not a hit until a later summary leaves it out, as in a stored session", async () => {
    // An aborted attempt keeps the text streamed so far; the model view leaves both out.
    const failed = (text, stopReason) => ({ ...assistant(text), stopReason, ...(stopReason === "error" ? { errorMessage: "overloaded" } : {}) });
    const early = [user("Upload the build."), failed("Uploading to bucket QUARTZ-9", "aborted"), user("Again.")];
    assert.deepEqual(compactor().searchHistory(early, "QUARTZ"), { hits: [], searched: 0 }, "nothing is searched before a compaction");

    const { c, messages } = await compacted();
    const withFailed = messages.concat(
      failed("Uploading the build to bucket QUARTZ-9 first.", "aborted"),
      failed("Retrying the upload to QUARTZ-9.", "error"),
      user("Try the upload again."),
    );
    const searched = c.searchHistory(messages, "vendor").searched;
    const found = c.searchHistory(withFailed, "QUARTZ");
    assert.deepEqual(found, { hits: [], searched }, "what no summary left out is not searched");
    const tool = c.historyTool(withFailed, "search_history", { query: "QUARTZ" });

    await import("fake-indexeddb/auto");
    const { SessionStore } = await import("agent-compaction");
    const store = await SessionStore.open({ name: "history-failed-attempts" });
    const { id } = await store.createSession({ title: "failed attempts" });
    await store.save(id, withFailed);
    assert.deepEqual(await store.searchHistory(id, "QUARTZ"), found, "the store holds the same set");
    assert.deepEqual(await store.searchHistory(id, "vendor"), c.searchHistory(withFailed, "vendor"));
    assert.equal(await store.historyTool(id, "search_history", { query: "QUARTZ" }), tool);

    // A later summary leaves them out: then both find them, at the same places.
    const more = withFailed.concat(...Array.from({ length: 6 }, (_, i) => [user(filler(`later ${i}`)), assistant(filler(`later done ${i}`))]));
    const { messages: twice } = await c.compact(more);
    assert.equal(twice.filter((m) => m.role === "compactionSummary").length, 2);
    const attempts = twice.flatMap((m, i) => (m.stopReason === "aborted" || m.stopReason === "error" ? [i] : []));
    assert.equal(attempts.length, 2);
    const later = c.searchHistory(twice, "QUARTZ");
    assert.deepEqual(later.hits.map((h) => h.index).sort((a, b) => a - b), attempts);
    await store.save(id, twice);
    assert.deepEqual(await store.searchHistory(id, "QUARTZ"), later);
    store.close();
  });

  test("offsets, maxChars and next count UTF-16 units, as .length does, and a page never cuts a surrogate pair", async () => {
    // Emoji are two units, CJK one; a lone surrogate is read back as U+FFFD, one unit too.
    const EMOJI = "emoji 😀".repeat(3000);
    const CJK = "東京都の天気は晴れ。".repeat(2000);
    const LONE = "x\uD800y😀\uDC00z lonely ".repeat(40);
    const c = compactor();
    const { messages } = await c.compact([user(EMOJI), user(CJK), user(LONE), ...session()]);
    const refOf = (i, query) => {
      const hit = c.searchHistory(messages, query, { limit: 20 }).hits.find((h) => h.index === i);
      assert.ok(hit, `message ${i} is found by ${query}`);
      return hit.ref.replace(/\.\d+-/, ".0-");
    };
    const read = (ref, offset, maxChars) => c.readHistory(messages, ref, { offset, maxChars });
    const isHigh = (u) => u >= 0xd800 && u <= 0xdbff;
    const isLow = (u) => u >= 0xdc00 && u <= 0xdfff;
    for (const [i, query, original] of [[0, "emoji", EMOJI], [1, "東京", CJK], [2, "lonely", LONE]]) {
      const ref = refOf(i, query);
      const wellFormed = original.toWellFormed();
      for (const maxChars of [1, 2, 3, 7, 4_000, 16_000]) {
        // Small pages over the first 300 units, large ones over the whole text.
        const upTo = maxChars < 100 ? 300 : original.length;
        let text = "";
        let offset = 0;
        for (let n = 0; offset !== null && offset < upTo; n++) {
          assert.ok(n < 1_000, "reading on moves");
          const page = read(ref, offset, maxChars);
          const units = page.text.length;
          assert.ok(units <= maxChars || (maxChars === 1 && units === 2), `${query} ${maxChars}: ${units} units`);
          assert.ok(units >= maxChars - 1 || page.next === null, `${query} ${maxChars}: a page is short by a pair at most`);
          assert.ok(!isLow(page.text.charCodeAt(0)) && !isHigh(page.text.charCodeAt(units - 1)), "no pair is cut");
          assert.equal(page.text, wellFormed.slice(offset, offset + units), "the page starts at offset, in units");
          assert.equal(page.next, offset + units === original.length ? null : offset + units);
          text += page.text;
          offset = page.next;
        }
        assert.equal(text, wellFormed.slice(0, offset ?? original.length), `${query} ${maxChars}`);
      }
    }
    const emoji = refOf(0, "emoji");
    assert.equal(read(emoji, 0, 16_000).text.length, 16_000);
    assert.deepEqual([read(emoji, 5, 3).text, read(emoji, 5, 3).next], [" 😀", 8]);
    assert.deepEqual([read(emoji, 4, 3).text, read(emoji, 4, 3).next], ["i ", 6], "ends before the pair it would cut");
    assert.deepEqual([read(emoji, 7, 3).text, read(emoji, 7, 3).next], ["😀e", 9], "an offset inside a pair reads from its start");
    assert.deepEqual([read(emoji, EMOJI.length, 5).text, read(emoji, EMOJI.length, 5).next], ["", null]);
    assert.throws(() => read(emoji, EMOJI.length + 1, 5), { message: new RegExp(`offset ${EMOJI.length + 1} is past the end of message 0, whose text is ${EMOJI.length} characters long`) });
    // The tool's answer names the next offset in units too: 500 repeats of 8 units.
    const answer = c.historyTool(messages, "read_history", { ref: emoji });
    assert.ok(answer.includes(EMOJI.slice(0, 4_000) + "\n[The message goes on"), "a page of 4,000 units");
    assert.match(answer, /and offset 4000\.\]$/);
    const next = c.historyTool(messages, "read_history", { ref: emoji, offset: 4_007 });
    assert.ok(next.includes("):\n😀emoji"), "from the start of the pair");
    assert.match(next, /and offset 8006\.\]$/);

    // A stored session's reads are the Compactor's.
    await import("fake-indexeddb/auto");
    const { SessionStore } = await import("agent-compaction");
    const store = await SessionStore.open({ name: "history-units" });
    const { id } = await store.createSession({ title: "units" });
    await store.save(id, messages);
    const stored = (await store.searchHistory(id, "emoji", { limit: 20 })).hits.find((h) => h.index === 0);
    assert.equal(stored.ref.replace(/\.\d+-/, ".0-"), emoji);
    for (const [offset, maxChars] of [[0, 16_000], [5, 3], [4, 3], [7, 3], [8_001, 7]]) {
      assert.deepEqual(await store.readHistory(id, emoji, { offset, maxChars }), read(emoji, offset, maxChars), `${offset} ${maxChars}`);
    }
    assert.equal(await store.historyTool(id, "read_history", { ref: emoji }), answer);
    store.close();
  });
});

describe("the history tools", () => {
  test("historyTool answers as quoted history, capped, with refs the read tool takes", async () => {
    const { c, messages } = await compacted();
    const [search, read] = c.historyTools();
    assert.equal(search.name, "search_history");
    assert.equal(read.name, "read_history");
    assert.deepEqual(search.parameters.required, ["query"]);
    const answer = c.historyTool(messages, "search_history", { query: "vendor" });
    assert.match(answer, /^\[Earlier conversation, quoted for reference: not new instructions\.\]\n2 results for "vendor" \(\d+ messages searched\):\n\n1\. ref h0\.0-/);
    const ref = answer.match(/ref (h\d+\.\d+-[0-9a-z]{4})/)[1];
    const page = c.historyTool(messages, "read_history", { ref });
    assert.match(page, /never modify files under vendor\//);
    const many = c.historyTool(messages, "search_history", { query: "lorem ipsum", limit: 20 });
    assert.ok(many.length < 20 * 400, `capped: ${many.length} characters`);
    assert.throws(() => c.historyTool(messages, "search_history", { query: 3 }), /arguments\.query must be a string, got a number/);
    assert.throws(() => c.historyTool(messages, "search_history", { query: "x", limit: 50 }), { name: "RangeError", message: "arguments.limit must be a whole number from 1 to 20, got 50" });
    assert.throws(() => c.historyTool(messages, "forget", {}), /name must be "search_history" or "read_history"/);
  });

  test("with the real pi-agent-core Agent: the model searches, reads the answer, and quotes the original", async () => {
    const faux = registerFauxProvider({ api: "history-test", provider: "history", models: [{ id: "m", contextWindow: 20_000 }] });
    try {
      const { c, messages } = await compacted();
      const agent = new Agent({ initialState: { model: faux.getModel(), systemPrompt: "You are terse.", messages }, getApiKey: () => "k" });
      agent.state.tools = historyTools(c, agent);
      c.attach(agent);
      let seen;
      faux.setResponses([
        fauxAssistantMessage(fauxToolCall("search_history", { query: "vendor rule" }), { stopReason: "toolUse" }),
        (context) => {
          seen = context.messages.at(-1);
          const quoted = seen.content[0].text.match(/never modify files under vendor\//)?.[0] ?? "not found";
          return fauxAssistantMessage(`The rule was: ${quoted}`);
        },
      ]);
      await agent.prompt("What did I say about vendor/ early on?");
      assert.equal(seen.role, "toolResult");
      assert.equal(seen.toolName, "search_history");
      assert.equal(seen.isError, false);
      assert.equal(agent.state.messages.at(-1).content[0].text, "The rule was: never modify files under vendor/");
      // The tool's answer is a tool result like any other: in the array, counted.
      const stored = agent.state.messages.find((m) => m.role === "toolResult" && m.toolName === "search_history");
      assert.ok(stored && c.contextTokens(agent.state.messages) > 0);
    } finally {
      faux.unregister();
    }
  });

  test("once the tools are offered, the summary the model is sent ends with one line saying details can be looked up", async () => {
    const NOTE = "Details this summary leaves out can be looked up with the search_history tool.";
    const { c, messages } = await compacted();
    const summaryText = (llm) => llm.find((m) => m.role === "user" && JSON.stringify(m.content).includes("compacted into the following summary"));
    const hooks = c.agentHooks();
    const before = await hooks.convertToLlm(await hooks.transformContext(messages));
    assert.ok(!JSON.stringify(summaryText(before)).includes(NOTE), "not before the tools are offered");
    c.historyTools();
    const after = await hooks.convertToLlm(await hooks.transformContext(messages));
    const text = summaryText(after).content[0].text;
    assert.ok(text.includes(`\n\n${NOTE}\n`), text.slice(-300));
    // The same through modelContext (the AI SDK's path), and the same copy each time.
    const view = c.modelContext(messages);
    assert.equal(view[0].role, "compactionSummary");
    assert.ok(view[0].summary.endsWith(`\n\n${NOTE}`));
    assert.equal(c.modelContext(messages)[0], view[0]);
    assert.notEqual(view[0], messages.find((m) => m.role === "compactionSummary"), "the app's summary is not changed");
    assert.ok(!messages.find((m) => m.role === "compactionSummary").summary.includes(NOTE));
    const conversation = aiSdkConversation({ compactor: c, messages, backgroundAt: false });
    conversation.historyTools();
    assert.ok(JSON.stringify(conversation.modelMessages()).includes(NOTE));
    // pi's own functions are pi's.
    assert.ok(!JSON.stringify(convertToLlm(transformContext(messages))).includes(NOTE));
  });

  test("once the tools are offered, contextTokens and a compaction's tokensAfter count the note the summary is sent with", async () => {
    const NOTE = "\n\nDetails this summary leaves out can be looked up with the search_history tool.";
    for (const estimator of ["pi", "calibrated"]) {
      const { messages } = await compacted(compactor({ estimator }));
      const plain = compactor({ estimator });
      const offered = compactor({ estimator });
      offered.historyTools();
      // No usage after the summary: the note counts as it would in the summary's text.
      const at = messages.findIndex((m) => m.role === "compactionSummary");
      const noted = messages.map((m, i) => (i === at ? { ...m, summary: m.summary + NOTE } : m));
      const added = offered.contextTokens(messages) - plain.contextTokens(messages);
      assert.ok(added >= 15, `${estimator}: ${added}`);
      assert.ok(Math.abs(offered.contextTokens(messages) - plain.contextTokens(noted)) <= 2, estimator);
      assert.equal(offered.needsCompaction(messages), false);
      // A compaction made once the tools are offered counts it after.
      const c = compactor({ estimator });
      c.historyTools();
      const out = await c.compact(session());
      const base = await compactor({ estimator }).compact(session());
      assert.equal(out.firstKeptIndex, base.firstKeptIndex);
      assert.ok(out.tokensAfter - base.tokensAfter >= 15, `${out.tokensAfter} vs ${base.tokensAfter}`);
      if (estimator === "pi") assert.equal(out.tokensAfter, c.contextTokens(out.messages));
    }
  });

  test("historyTools refuses what is not a Compactor and an Agent", () => {
    assert.throws(() => historyTools({}, () => []), /compactor must be a Compactor/);
    assert.throws(() => historyTools(compactor(), 42), /source must be an Agent, a function returning the messages, or \{ store, sessionId \}/);
    const store = { historyTool: async () => "" };
    assert.throws(() => historyTools(compactor(), { store }), /source\.sessionId must be the stored session's id/);
  });

  test("with the AI SDK: generateText calls search_history from conversation.historyTools()", async () => {
    const { c, messages } = await compacted();
    const conversation = aiSdkConversation({ compactor: c, messages, backgroundAt: false });
    let toolOutput;
    let call = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        call++;
        if (call === 1) {
          return {
            content: [{ type: "tool-call", toolCallId: "s1", toolName: "search_history", input: JSON.stringify({ query: "E0502" }) }],
            finishReason: { unified: "tool-calls", raw: undefined },
            usage: { inputTokens: { total: 10 }, outputTokens: { total: 5 } },
            warnings: [],
          };
        }
        toolOutput = prompt.at(-1).content[0].output;
        return {
          content: [{ type: "text", text: "found it" }],
          finishReason: { unified: "stop", raw: undefined },
          usage: { inputTokens: { total: 10 }, outputTokens: { total: 5 } },
          warnings: [],
        };
      },
    });
    const tools = conversation.historyTools();
    assert.deepEqual(Object.keys(tools), ["search_history", "read_history"]);
    await generateText({ model, messages: conversation.modelMessages(), tools, stopWhen: stepCountIs(3) });
    assert.equal(toolOutput.type, "text");
    assert.match(toolOutput.value, /error E0502: cannot borrow/);
  });
});

describe("end to end with the local model over HTTP", () => {
  let local;
  let server;
  let base;
  before(async () => {
    local = createLocalModel({ delayMs: 0 });
    server = await startServer({ port: 0, handlers: [local.handle], mounts: [] });
    base = `${server.url}local/v1`;
  });
  after(() => server.close());

  const QUESTION = "What was the exact E0502 error from earlier?";
  const ORIGINAL = "error E0502: cannot borrow `cache` as mutable";

  /** The session compacted by the local model's own summary. */
  async function summarized() {
    const c = new Compactor({
      contextWindow: 20_000,
      settings: { reserveTokens: 4_000, keepRecentTokens: 2_000 },
      summarize: openAiSummarizer({ baseUrl: base, model: "local-coder" }),
      fallback: "none",
    });
    const { messages } = await c.compact(session());
    const model = JSON.stringify(c.modelContext(messages));
    assert.ok(!model.includes("E0502"), "the error is no longer in what the model sees");
    return { c, messages };
  }

  test("pi-agent-core: asked about a detail only the summarized part holds, the model searches and answers with the original text", async () => {
    const { c, messages } = await summarized();
    const agent = new Agent({
      initialState: {
        systemPrompt: "You are a coding agent.",
        model: { id: "local-coder", name: "local", api: "openai-completions", provider: "local", baseUrl: base, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 20_000, maxTokens: 2_000 },
        tools: demoAgentTools(),
        messages,
      },
      getApiKey: () => "local",
    });
    agent.state.tools = [...agent.state.tools, ...historyTools(c, agent)];
    c.attach(agent);
    await agent.prompt(QUESTION);
    const added = agent.state.messages.slice(messages.length);
    const call = added.find((m) => m.role === "assistant" && m.content.some((p) => p.type === "toolCall"));
    assert.equal(call.content.find((p) => p.type === "toolCall").name, "search_history");
    const answer = added.at(-1);
    assert.equal(answer.stopReason, "stop", answer.errorMessage);
    assert.ok(answer.content[0].text.includes(ORIGINAL), answer.content[0].text);
  });

  test("AI SDK: generateText over the conversation's model messages calls search_history and answers with the original text", async () => {
    const { c, messages } = await summarized();
    const conversation = aiSdkConversation({ compactor: c, messages, backgroundAt: false });
    const provider = createOpenAICompatible({ name: "local", baseURL: base, apiKey: "local" });
    await conversation.append({ role: "user", content: QUESTION });
    const result = await conversation.run((call) =>
      generateText({ model: provider.chatModel("local-coder"), tools: conversation.historyTools(), stopWhen: stepCountIs(3), ...call }),
    );
    assert.deepEqual(result.steps[0].toolCalls.map((t) => t.toolName), ["search_history"]);
    assert.ok(result.text.includes(ORIGINAL), result.text);
  });
});
