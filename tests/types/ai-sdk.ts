// agent-compaction/ai-sdk against the real `ai` 7 types, as an app uses it
// (strict, exactOptionalPropertyTypes): its own tools (zod and jsonSchema)
// through generateText, streamText and ToolLoopAgent, with and without
// `run`; useChat's messages; and what the declarations reject.
import {
  ToolLoopAgent,
  convertToModelMessages,
  generateText,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
  validateUIMessages,
  type ChatInit,
  type InferUITools,
  type LanguageModel,
  type ModelMessage,
  type SystemModelMessage,
  type UIMessage,
} from "ai";
import { z } from "zod";
import { Compactor, SessionStore, type AnyMessage } from "agent-compaction";
import {
  CLEARED_DIVIDER_PART_TYPE,
  DIVIDER_PART_TYPE,
  OVERFLOW_RECOVERY_FAILED,
  aiSdkConversation,
  aiSdkSummarizer,
  fromModelMessages,
  fromUIMessages,
  isOverflowError,
  toModelMessages,
  toUIMessages,
  usageFromAiSdk,
  type AiSdkFlatMessage,
  type AiSdkStepOverride,
  type AiSdkUIMessage,
} from "agent-compaction/ai-sdk";

declare const model: LanguageModel;
declare function readText(path: string): Promise<string>;

// A tool set with zod schemas, and one with JSON schemas.
const codeTools = {
  read_file: tool({
    description: "Read a file of the project.",
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => readText(path),
  }),
  list_files: tool({
    description: "List the files under a folder.",
    inputSchema: z.object({ dir: z.string(), depth: z.number().int().optional() }),
    execute: async ({ dir, depth }) => [`${dir}/${depth ?? 1}`],
  }),
};
const searchTools = {
  search: tool({
    description: "Search the web.",
    inputSchema: jsonSchema<{ query: string; limit?: number }>({
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "number" } },
      required: ["query"],
    }),
    execute: async ({ query, limit }) => ({ hits: [query], limit: limit ?? 10 }),
  }),
};

const compactor = new Compactor({
  contextWindow: 128_000,
  settings: { reserveTokens: 16_000 },
  summarize: aiSdkSummarizer(model, { maxOutputTokens: 2000, temperature: 0 }),
});
declare const store: SessionStore;
const saved = aiSdkConversation({ compactor, store, sessionId: "s1", messages: await store.load("s1"), onSaveError: (e) => console.warn(e) });
const conversation = aiSdkConversation({ compactor, messages: [] });

export async function withStreamText(text: string): Promise<string> {
  await saved.append({ role: "user", content: text });
  // The README's pattern: `...call` last, with the app's tools.
  const result = await saved.run((call) =>
    streamText({
      model,
      tools: codeTools,
      stopWhen: stepCountIs(8),
      onChunk: ({ chunk }) => void (chunk.type === "text-delta" && chunk.text),
      ...call,
    }),
  );
  // run resolves to streamText's own result, typed by the app's tools.
  for (const c of await result.toolCalls) {
    if (c.dynamic) continue;
    if (c.toolName === "read_file") void c.input.path.length;
    // @ts-expect-error the app has no tool "write_file"
    if (c.toolName === "write_file") void c;
  }
  return result.text;
}

export async function withGenerateText(text: string): Promise<string> {
  await conversation.append([{ role: "system", content: "Be brief." }, { role: "user", content: text }]);
  const result = await conversation.run((call) =>
    generateText({ model, tools: { ...searchTools, ...conversation.historyTools() }, stopWhen: stepCountIs(5), ...call }),
  );
  const hits: number[] = result.toolResults.map((r) =>
    r.dynamic ? 0 : typeof r.output === "string" ? r.output.length : r.output.hits.length,
  );
  return result.text + hits.join();
}

export async function withToolLoopAgent(text: string): Promise<string> {
  // prepareStep given at construction; run passes only the messages.
  const agent = new ToolLoopAgent({ model, tools: codeTools, stopWhen: stepCountIs(20), prepareStep: conversation.prepareStep });
  await conversation.append({ role: "user", content: text });
  const generated = await conversation.run(({ messages }) => agent.generate({ messages }));
  const streamed = await conversation.run(({ messages }) => agent.stream({ messages }));
  return generated.text + (await streamed.text);
}

export async function withoutRun(text: string): Promise<number> {
  await conversation.append({ role: "user", content: text });
  const instructions = conversation.instructions();
  const result = await generateText({
    model,
    tools: codeTools,
    messages: conversation.modelMessages(),
    ...(instructions ? { instructions } : {}),
    prepareStep: conversation.prepareStep,
  });
  const flat: AnyMessage[] = await conversation.appendSteps(result.steps);
  const streamed = streamText({ model, tools: searchTools, messages: conversation.modelMessages(), prepareStep: conversation.prepareStep });
  await conversation.appendSteps(await streamed.steps);
  // What prepareStep really returns: messages, and instructions when the flat array has system messages.
  const override: AiSdkStepOverride = await conversation.prepareStep({ stepNumber: 0, steps: [] });
  const sent: ModelMessage[] = override.messages;
  const system: SystemModelMessage[] | undefined = override.instructions;
  // @ts-expect-error prepareStep never chooses the app's tools
  void override.toolChoice;
  return flat.length + sent.length + (system?.length ?? 0) + conversation.contextTokens;
}

// useChat: the flat array shown as UIMessages typed by the app's tools and
// the package's data parts, and the user's new messages back.
type ChatMessage = AiSdkUIMessage<InferUITools<typeof codeTools>>;
export async function withUseChat(incoming: ChatMessage[]): Promise<string[]> {
  const shown: ChatMessage[] = toUIMessages<InferUITools<typeof codeTools>>(conversation.messages, { divider: true });
  const init: ChatInit<ChatMessage> = { messages: shown };
  const labels: string[] = [];
  for (const m of init.messages ?? []) {
    for (const part of m.parts) {
      switch (part.type) {
        case "text":
          labels.push(part.text);
          break;
        case "data-compaction":
          labels.push(`summarized ${part.data.tokensBefore.toFixed()} tokens`);
          break;
        case "data-tool-output-cleared":
          labels.push(`cleared ${part.data.toolCount} outputs, ${part.data.tokensFreed} tokens`);
          break;
        case "data-custom":
          labels.push(part.data.customType);
          break;
        case "tool-read_file":
          if (part.state === "output-available") labels.push(part.input.path, part.output);
          break;
        // @ts-expect-error toUIMessages writes no such data part
        case "data-summary":
          break;
      }
    }
  }
  const validated: ChatMessage[] = await validateUIMessages<ChatMessage>({ messages: incoming, tools: codeTools });
  await conversation.append(await convertToModelMessages(validated));
  const stored: AiSdkFlatMessage[] = await fromUIMessages(validated);
  const plain: UIMessage[] = toUIMessages(stored);
  // An app whose messages carry metadata of its own.
  type TimedMessage = AiSdkUIMessage<InferUITools<typeof codeTools>, { createdAt: number }>;
  const timed: TimedMessage[] = toUIMessages<InferUITools<typeof codeTools>, { createdAt: number }>(stored);
  // @ts-expect-error the metadata is the app's type
  void timed.map((m) => m.metadata?.createdAt.toFixed() ?? m.metadata?.author);
  const dividers = [DIVIDER_PART_TYPE, CLEARED_DIVIDER_PART_TYPE] as const;
  return [...labels, ...plain.map((m) => m.id), ...dividers];
}

// Conversions and helpers.
export async function conversions(error: unknown): Promise<string> {
  const back: ModelMessage[] = toModelMessages(conversation.messages);
  const again: AiSdkFlatMessage[] = fromModelMessages(back, { timestamp: 1, provider: "openai", model: "gpt-4o" });
  const usage = usageFromAiSdk(undefined);
  const overflow: boolean = await isOverflowError(error, 128_000);
  return `${again.length} ${usage.totalTokens} ${overflow} ${OVERFLOW_RECOVERY_FAILED}`;
}

// A summarizer of the app's own beside the conversation: the tools of its
// request's context are what the conversation passed, the app's tool set
// (an object), not pi-ai's array of tools.
import type { Summarizer, SummarizeRequest } from "agent-compaction";
const toolNames = (request: SummarizeRequest): string[] => {
  const tools = request.context?.tools;
  // @ts-expect-error an AI SDK tool set is no array: check with Array.isArray first
  void tools?.map((t) => t.name);
  return Array.isArray(tools) ? tools.map((t) => t.name) : Object.keys(tools ?? {});
};
// Its system prompt may be the conversation's system messages: check with typeof.
const systemText = (request: SummarizeRequest): string => {
  const system = request.context?.systemPrompt;
  // @ts-expect-error AI SDK system messages are no string
  const text: string | undefined = system;
  void text;
  return typeof system === "string" ? system : JSON.stringify(system ?? "");
};
const ownSummarizer: Summarizer = (request) => `${toolNames(request).join()} ${systemText(request)}: ${request.prompt}`;
const withOwnSummarizer = aiSdkConversation({ compactor: new Compactor({ contextWindow: 128_000, summarize: ownSummarizer }), tools: codeTools });
const codeToolsContext: SummarizeRequest["context"] = { messages: [], tools: codeTools };
void [withOwnSummarizer, codeToolsContext];

// What the declarations reject.
// @ts-expect-error store and sessionId go together
aiSdkConversation({ compactor, store });
// @ts-expect-error the callback must return an SDK result (its steps)
void conversation.run(() => "text");
// @ts-expect-error a user message's content is text or parts
void conversation.append({ role: "user", content: 42 });
// @ts-expect-error toModelMessages takes the flat array, not ModelMessages' content
toModelMessages("hello");
// @ts-expect-error maxOutputTokens is a number
aiSdkSummarizer(model, { maxOutputTokens: "2k" });
// @ts-expect-error appendSteps takes the steps, not the result's promise of them
void conversation.appendSteps(streamText({ model, messages: [] }));
