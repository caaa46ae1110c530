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
  onStateChange: (state: CompactorState) => void [state.isCompacting, state.isCompactingInBackground, state.contextTokens.toFixed()],
});
detach();
// The history tools, beside the app's own.
import { historyTools } from "agent-compaction/pi-agent-core";
hooked.state.tools = [...hooked.state.tools, ...historyTools(compactor, hooked)];
const byFunction: string[] = historyTools(compactor, () => hooked.state.messages).map((t) => t.label);
void byFunction;

// A whole app on pi-agent-core: tools with their own TypeBox schemas, the
// app's own message type registered through pi-agent-core's
// `CustomAgentMessages` (beside the package's), the agent's options with
// `agentHooks()` spread in, its events and the compactor's.
import { Type } from "typebox";
import type { AgentEvent, AgentTool } from "@mariozechner/pi-agent-core";
import type { Model } from "@mariozechner/pi-ai";
import type { CompactorEvent } from "agent-compaction";

interface ArtifactMessage {
  role: "artifact";
  title: string;
  body: string;
  timestamp: number;
}
declare module "@mariozechner/pi-agent-core" {
  interface CustomAgentMessages {
    artifact: ArtifactMessage;
  }
}

const readParameters = Type.Object({ path: Type.String(), maxLines: Type.Optional(Type.Number()) });
const readFile: AgentTool<typeof readParameters, { lines: number }> = {
  name: "read_file",
  label: "Read file",
  description: "Read a file of the project.",
  parameters: readParameters,
  execute: async (_toolCallId, { path, maxLines }) => ({
    content: [{ type: "text", text: `contents of ${path}` }],
    details: { lines: maxLines ?? 0 },
  }),
};
const searchParameters = Type.Object({ query: Type.String() });
const search: AgentTool<typeof searchParameters> = {
  name: "search",
  label: "Search",
  description: "Search the project.",
  parameters: searchParameters,
  execute: async (_toolCallId, { query }) => ({ content: [{ type: "text", text: query }], details: undefined }),
};

declare const model: Model<"openai-completions">;
const appCompactor = new Compactor({
  model,
  settings: { reserveTokens: 16_384, keepRecentTokens: 20_000 },
  onEvent: (event: CompactorEvent) => {
    if (event.type === "compaction_end" && event.result?.tier === "summarize") void event.result.summary.summary;
  },
});
const app = new Agent({
  initialState: { systemPrompt: "You are a coding assistant.", model, messages: [], tools: [readFile, search] },
  getApiKey: (provider) => (provider === "openai" ? "key" : undefined),
  ...appCompactor.agentHooks(),
});
const artifact: ArtifactMessage = { role: "artifact", title: "plan", body: "…", timestamp: 5 };
app.state.messages = [...app.state.messages, artifact, summary];
// The hooks keep the app's messages, its own role included.
const viewed: AugmentedAgentMessage[] = await appCompactor.agentHooks().transformContext(app.state.messages);
const stopSaving = appCompactor.attach(app, { store, sessionId: "s2" });
const unsubscribe = app.subscribe((event: AgentEvent) => {
  switch (event.type) {
    case "message_end":
      if (event.message.role === "artifact") void event.message.title;
      else if (event.message.role === "compactionSummary") void event.message.tokensBefore;
      break;
    case "tool_execution_end":
      void event.toolName;
      break;
  }
});
void [viewed, stopSaving, unsubscribe];

// What the declarations reject.
// @ts-expect-error a store needs the session id it saves to
appCompactor.attach(app, { store });
// @ts-expect-error attach takes an Agent
appCompactor.attach({ state: { messages: [] } });
// @ts-expect-error a tool's arguments are its schema's
const wrongArgs: AgentTool<typeof readParameters> = { ...readFile, execute: async (_id, { file }: { file: string }) => ({ content: [], details: file }) };
void wrongArgs;

// A summary request's context is pi-ai's Context, and pi-agent-core's tools
// fit its tools.
import type { SummarizeRequest } from "agent-compaction";
import type { Context as PiContext } from "@mariozechner/pi-ai";
declare const piRequestContext: PiContext;
declare const agentTools: AgentTool[];
const fromPi: SummarizeRequest["context"] = piRequestContext;
const fromAgent: SummarizeRequest["context"] = { systemPrompt: "s", messages: piLlm, tools: agentTools };
// @ts-expect-error the messages are required
const noMessages: SummarizeRequest["context"] = { systemPrompt: "s" };
// A compaction by hand given what the agent's requests carry, as attach does.
const byHand = appCompactor.compact(app.state.messages, { conversation: { systemPrompt: app.state.systemPrompt, tools: app.state.tools } });
// @ts-expect-error the tools are pi-ai tools or an AI SDK tool set
void appCompactor.compact(app.state.messages, { conversation: { tools: "read_file" } });
void byHand;
void [fromPi, fromAgent, noMessages];
