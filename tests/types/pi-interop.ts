// The package's types against pi's own (`@mariozechner/pi-ai`,
// `@mariozechner/pi-agent-core` 0.73.1). Checked with skipLibCheck, since
// pi's dependencies' declarations do not all resolve here.
import { convertToLlm, transformContext, type Message } from "agent-compaction";
import type { AgentMessage as PiAgentMessage } from "@mariozechner/pi-agent-core";
import type { Message as PiMessage } from "@mariozechner/pi-ai";

// pi-agent-core's own message arrays are accepted as they are.
declare const piMessages: PiAgentMessage[];
const piContext: PiAgentMessage[] = transformContext(piMessages);
// What convertToLlm returns is pi-ai's Message.
const piLlm: PiMessage[] = convertToLlm(piMessages);
// And pi-ai's messages are ours.
const ours: Message[] = piLlm;

void [piContext, ours];

// The README's example: the flat-array functions as an Agent's hooks.
import { Agent } from "@mariozechner/pi-agent-core";
const agent = new Agent({
  transformContext: async (messages) => transformContext(messages),
  convertToLlm,
});
void agent;

// The Compactor wired into a real Agent: with the opt-in augmentation, the
// hooks are the Agent's own option types, the agent's messages may hold
// summaries, and attach() takes the Agent as it is.
import "agent-compaction/pi-agent-core";
import { Compactor, SessionStore, type CompactionSummaryMessage, type CompactorState } from "agent-compaction";
import type { AgentMessage as AugmentedAgentMessage } from "@mariozechner/pi-agent-core";
const compactor = new Compactor({ contextWindow: 16_000 });
const hooked = new Agent({ ...compactor.agentHooks() });
declare const summary: CompactionSummaryMessage;
const withSummary: AugmentedAgentMessage[] = [...hooked.state.messages, summary];
hooked.state.messages = withSummary;
declare const store: SessionStore;
const detach: () => void = compactor.attach(hooked, {
  store,
  sessionId: "s",
  onStateChange: (state: CompactorState) => void [state.isCompacting, state.contextTokens.toFixed()],
});
detach();
