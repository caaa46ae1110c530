// Opt-in: `import "agent-compaction/pi-agent-core";` once in an app that
// uses @mariozechner/pi-agent-core. It registers the messages this package
// inserts (and pi's coding agent defines) as pi-agent-core custom messages,
// so that `agent.state.messages` may hold them and
// `new Agent({ ...compactor.agentHooks() })` type-checks under --strict.
import type {
  BashExecutionMessage,
  BranchSummaryMessage,
  CompactionSummaryMessage,
  CustomMessage,
  ToolOutputClearedMessage,
} from "./index.js";

declare module "@mariozechner/pi-agent-core" {
  interface CustomAgentMessages {
    compactionSummary: CompactionSummaryMessage;
    branchSummary: BranchSummaryMessage;
    bashExecution: BashExecutionMessage;
    custom: CustomMessage;
    toolOutputCleared: ToolOutputClearedMessage;
  }
}
