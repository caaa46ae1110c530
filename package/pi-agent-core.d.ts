// Opt-in: `import "agent-compaction/pi-agent-core";` once in an app that
// uses @mariozechner/pi-agent-core. It registers the messages this package
// inserts (and pi's coding agent defines) as pi-agent-core custom messages,
// so that `agent.state.messages` may hold them and
// `new Agent({ ...compactor.agentHooks() })` type-checks under --strict.
import type { AgentMessage as PiAgentMessage, AgentTool } from "@mariozechner/pi-agent-core";
import type {
  BashExecutionMessage,
  BranchSummaryMessage,
  CompactionSummaryMessage,
  Compactor,
  CustomMessage,
  SessionStore,
  ToolOutputClearedMessage,
} from "./index.js";

/**
 * `search_history` and `read_history` as pi-agent-core `AgentTool`s over
 * the messages `source` holds: an `Agent`, whose `state.messages` is read at
 * each call, a function returning the messages, or `{ store, sessionId }`,
 * a stored session searched from its history index without loading it:
 * `agent.state.tools = [...agent.state.tools, ...historyTools(compactor, agent)]`.
 */
export declare function historyTools(
  compactor: Compactor,
  source:
    | { state: { messages: readonly PiAgentMessage[] } }
    | (() => readonly unknown[])
    | { store: SessionStore; sessionId: string },
): AgentTool[];

declare module "@mariozechner/pi-agent-core" {
  interface CustomAgentMessages {
    compactionSummary: CompactionSummaryMessage;
    branchSummary: BranchSummaryMessage;
    bashExecution: BashExecutionMessage;
    custom: CustomMessage;
    toolOutputCleared: ToolOutputClearedMessage;
  }
}
