// agent-compaction/pi-agent-core: types for @mariozechner/pi-agent-core
// apps (pi-agent-core.d.ts), and the history tools as pi-agent-core
// `AgentTool`s.

/**
 * `search_history` and `read_history` as pi-agent-core `AgentTool`s over
 * the conversation `source` holds: an `Agent` (its `state.messages` is read
 * at each call), a function returning the messages, or `{ store, sessionId }`
 * (the stored session, searched from its history index without loading it).
 * What they answer is the compactor's (or the store's) `historyTool` text;
 * a bad argument or a stale ref throws, which the agent reports to the
 * model as the tool's error.
 */
export function historyTools(compactor, source) {
  if (typeof compactor?.historyTool !== "function") {
    throw new TypeError("historyTools: compactor must be a Compactor");
  }
  const stored = typeof source?.store?.historyTool === "function";
  if (stored && typeof source.sessionId !== "string") {
    throw new TypeError("historyTools: source.sessionId must be the stored session's id");
  }
  if (!stored && typeof source !== "function" && (typeof source !== "object" || source === null || !("state" in source))) {
    throw new TypeError("historyTools: source must be an Agent, a function returning the messages, or { store, sessionId }");
  }
  const answer = stored
    ? (name, params) => source.store.historyTool(source.sessionId, name, params)
    : (name, params) => compactor.historyTool(typeof source === "function" ? source() : source.state.messages, name, params);
  const labels = { search_history: "Search history", read_history: "Read history" };
  return compactor.historyTools().map(({ name, description, parameters }) => ({
    name,
    label: labels[name],
    description,
    parameters,
    execute: async (_toolCallId, params) => ({
      content: [{ type: "text", text: await answer(name, params) }],
      details: undefined,
    }),
  }));
}
