// agent-compaction/pi-agent-core: types for @mariozechner/pi-agent-core
// apps (pi-agent-core.d.ts), and the history tools as pi-agent-core
// `AgentTool`s.

/**
 * `search_history` and `read_history` as pi-agent-core `AgentTool`s over
 * the conversation `source` holds (an `Agent`, whose `state.messages` is
 * read at each call, or a function returning the messages). What they
 * answer is the compactor's `historyTool` text; a bad argument or a stale
 * ref throws, which the agent reports to the model as the tool's error.
 */
export function historyTools(compactor, source) {
  if (typeof compactor?.historyTool !== "function") {
    throw new TypeError("historyTools: compactor must be a Compactor");
  }
  if (typeof source !== "function" && (typeof source !== "object" || source === null || !("state" in source))) {
    throw new TypeError("historyTools: source must be an Agent or a function returning the messages");
  }
  const messages = typeof source === "function" ? source : () => source.state.messages;
  const labels = { search_history: "Search history", read_history: "Read history" };
  return compactor.historyTools().map(({ name, description, parameters }) => ({
    name,
    label: labels[name],
    description,
    parameters,
    execute: async (_toolCallId, params) => ({
      content: [{ type: "text", text: compactor.historyTool(messages(), name, params) }],
      details: undefined,
    }),
  }));
}
