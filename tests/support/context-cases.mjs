// What the model is sent of a flat array, as a table of cases shared by the
// tests of every adapter (the Compactor's hooks, attach with a real Agent,
// the AI SDK conversation): pinned messages, clearing markers, failed
// attempts, split turns. Each message carries a label (`L:...`) in its
// text; `expected` lists the labels of what the model must receive, in
// order, with "CLEARED" for a tool output sent as its placeholder.

const T = 1_000;
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const meta = { api: "openai-completions", provider: "local", model: "m", usage };

export const user = (label, extra = {}) => ({ role: "user", content: `L:${label}`, timestamp: T, ...extra });
export const assistant = (label, extra = {}) => ({ role: "assistant", content: [{ type: "text", text: `L:${label}` }], ...meta, stopReason: "stop", timestamp: T, ...extra });
export const call = (label, id) => ({
  role: "assistant",
  content: [{ type: "text", text: `L:${label}` }, { type: "toolCall", id, name: "read", arguments: { path: "a.rs" } }],
  ...meta,
  stopReason: "toolUse",
  timestamp: T,
});
export const result = (label, id) => ({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: `L:${label}` }], isError: false, timestamp: T });
export const failed = (label, stopReason = "error") => ({ role: "assistant", content: [{ type: "text", text: `L:${label}` }], ...meta, stopReason, errorMessage: "boom", timestamp: T });
export const summary = (label) => ({ role: "compactionSummary", summary: `L:${label}`, tokensBefore: 50_000, timestamp: T });
export const marker = (ids) => ({ role: "toolOutputCleared", toolCallIds: ids, tokensFreed: 10, timestamp: T });

export const CASES = [
  {
    name: "a pinned rule before the summary is sent right after it; summarized messages are not",
    messages: [user("rule", { pinned: true }), assistant("a1"), user("u2"), assistant("a3"), summary("sum"), user("u5")],
    expected: ["sum", "rule", "u5"],
  },
  {
    name: "a pinned message after the summary stays where it is",
    messages: [user("u1"), assistant("a1"), summary("sum"), user("u2", { pinned: true }), assistant("a3"), user("u4")],
    expected: ["sum", "u2", "a3", "u4"],
  },
  {
    name: "several summaries: only the last is sent, the pins before it in order",
    messages: [user("rule", { pinned: true }), assistant("a1"), summary("sum1"), user("pin2", { pinned: true }), assistant("a2"), summary("sum2"), user("u3")],
    expected: ["sum2", "rule", "pin2", "u3"],
  },
  {
    name: "a tool output cleared by a later marker goes as the placeholder",
    messages: [user("u0"), assistant("a0"), summary("sum"), user("u1"), call("a1", "c1"), result("r1", "c1"), assistant("a2"), marker(["c1"]), user("u3")],
    expected: ["sum", "u1", "a1", "CLEARED", "a2", "u3"],
  },
  {
    name: "a marker whose result is before the summary clears nothing that is sent",
    messages: [user("u0"), call("a0", "c0"), result("r0", "c0"), assistant("a1"), summary("sum"), marker(["c0"]), user("u1")],
    expected: ["sum", "u1"],
  },
  {
    name: "a marker before the summary clears nothing after it",
    messages: [user("u0"), call("a0", "c0"), result("r0", "c0"), marker(["c0", "c1"]), summary("sum"), user("u1"), call("a1", "c1"), result("r1", "c1"), assistant("a2")],
    expected: ["sum", "u1", "a1", "r1", "a2"],
  },
  {
    name: "failed attempts are never sent",
    messages: [user("u1"), assistant("a1"), user("u2"), failed("f1"), failed("f2", "aborted"), user("u3")],
    expected: ["u1", "a1", "u2", "u3"],
    failed: ["f1", "f2"],
  },
  {
    name: "a split turn: the summary in the middle of a turn, its kept suffix after it",
    messages: [user("u1"), call("a1", "c1"), result("r1", "c1"), summary("sum"), call("a2", "c2"), result("r2", "c2"), assistant("a3"), user("u4")],
    expected: ["sum", "a2", "r2", "a3", "u4"],
  },
];

/** The label of a message as some adapter sent it (any shape): its `L:` text, "CLEARED" for a placeholder. */
export function labelOf(message) {
  const text = JSON.stringify(message);
  const m = /L:([A-Za-z0-9]+)/.exec(text);
  if (m) return m[1];
  if (text.includes("[Output of")) return "CLEARED";
  return "?";
}
