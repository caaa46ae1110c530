// Types of agent-compaction/ai-sdk (ai-sdk.js): the AI SDK binding, typed
// against the `ai` package's own types (an optional peer dependency:
// `import type` only, so nothing of `ai` is needed unless it is used).
import type {
  LanguageModel,
  LanguageModelUsage,
  ModelMessage,
  SystemModelMessage,
  Tool,
  UIMessage,
  UITools,
} from "ai";
import type {
  AgentMessage,
  AnyMessage,
  BashExecutionMessage,
  BranchSummaryMessage,
  CompactionResult,
  Compactor,
  ImageContent,
  SessionStore,
  Summarizer,
  TextContent,
  Usage,
} from "./index.js";

/** pi 0.73's text when an overflow follows a compact-and-retry. */
export declare const OVERFLOW_RECOVERY_FAILED: string;
/** `"agentCompaction"`: the providerOptions key a summary (or other pi-only message) rides under. */
export declare const PROVIDER_OPTIONS_KEY: "agentCompaction";
/** `"data-compaction"`: the type of a divider's part in `toUIMessages(…, { divider: true })`. */
export declare const DIVIDER_PART_TYPE: "data-compaction";
/** `"data-tool-output-cleared"`: the type of a cleared-tool-output divider's part in `toUIMessages(…, { divider: true })`. */
export declare const CLEARED_DIVIDER_PART_TYPE: "data-tool-output-cleared";

/**
 * What the AI SDK has and pi's shapes do not, kept on a flat-array message
 * (pi code ignores it): part-level and message-level providerOptions, parts
 * pi cannot hold (files, URLs and bytes stored as JSON), tool-output forms,
 * a tool message's grouping, the UI message id.
 */
export interface AiSdkExtra {
  [key: string]: unknown;
}
/** A system message in the flat array (kept, never cut away: always sent as `instructions`). */
export interface AiSdkSystemMessage {
  role: "system";
  content: string;
  timestamp: number;
  aiSdk?: AiSdkExtra;
}
/** A tool-message part that is not a tool result (an approval response). */
export interface AiSdkToolPartMessage {
  role: "aiSdkToolPart";
  part: unknown;
  timestamp: number;
  aiSdk?: AiSdkExtra;
}
/** A flat-array message made from the AI SDK's messages. */
export type AiSdkFlatMessage = (AgentMessage & { aiSdk?: AiSdkExtra }) | AiSdkSystemMessage | AiSdkToolPartMessage;

export interface FromModelMessagesOptions {
  /** The timestamp of the new messages (default `Date.now()`). */
  timestamp?: number;
  /** For assistant messages: pi's usage, provider and model of the step. */
  usage?: Usage;
  provider?: string;
  model?: string;
}
/**
 * ModelMessages -> flat-array messages (a tool message gives one
 * `toolResult` per result part). A ModelMessage that `toModelMessages`
 * made gives back the very message it came from.
 */
export declare function fromModelMessages(messages: readonly ModelMessage[], options?: FromModelMessagesOptions): AiSdkFlatMessage[];
/**
 * Flat-array messages -> ModelMessages: lossless for what the AI SDK
 * defines; a summary (and any pi-only message) becomes the user message pi
 * sends, with itself under `providerOptions.agentCompaction` (a provider's
 * compaction: its original part, for that provider); roles the model never
 * sees are left out. Failed attempts (an assistant message that stopped
 * with `error` or `aborted`) are converted like any other: what is sent is
 * the compactor's model view (`modelContext`, the conversation's
 * `modelMessages()`), which leaves them out as pi-ai does. Each message is
 * converted once (cached).
 */
export declare function toModelMessages(messages: readonly AnyMessage[], options?: ToModelMessagesOptions): ModelMessage[];
export interface ToModelMessagesOptions {
  /**
   * The provider id of the model the messages go to (`model.provider`,
   * e.g. `"anthropic.messages"`): a provider's own compaction (a summary
   * with `provider`) that this provider made is sent as its original part,
   * in place of what it covers; to any other model (or without this
   * option), as its readable text.
   */
  provider?: string;
}
/** The SDK's usage as pi's `Usage` (costs 0). */
export declare function usageFromAiSdk(usage: LanguageModelUsage | undefined): Usage;
/** True when `error` is or wraps an `APICallError` whose text `isContextOverflow` recognizes. */
export declare function isOverflowError(error: unknown, contextWindow?: number): Promise<boolean>;

export type AiSdkConversationOptions = {
  compactor: Compactor;
  /** The flat array to start from (e.g. `await store.load(id)`). Checked at once: a message the steps could not read is a TypeError naming it. */
  messages?: AnyMessage[];
  /** A failed save (the messages in memory are kept); without it, the call that saved rejects. */
  onSaveError?: (error: unknown) => void;
  /**
   * The tool set given to generateText / streamText. Passed to compactions
   * with the flat array's system text, so that `aiSdkSummarizer` repeats the
   * conversation's prompt and tool definitions and the provider's prompt
   * cache serves them.
   */
  tools?: Record<string, unknown>;
  /**
   * The system prompt given to generateText / streamText as a string, when
   * it is not a system message of the flat array: passed to compactions
   * with `tools`, for the same reason.
   */
  instructions?: string;
  /**
   * Threshold compactions start in the background when the context passes
   * this fraction of the threshold (default `0.8`; `false`: never): the
   * steps go on with the full context, and the summary goes into the flat
   * array at its cut when it arrives (saved). A step over the threshold
   * before it arrives waits for it.
   */
  backgroundAt?: number | false;
  /**
   * True when the provider compacts the conversation itself (Anthropic's
   * `compact_20260112` edit in `contextManagement`, OpenAI's
   * `contextManagement` compaction, in your provider options): the
   * conversation's threshold compaction stays off, overflow recovery and
   * `compact()` remain. Without it, the threshold also stays off once the
   * last summary is a compaction of the provider the steps go to.
   */
  providerCompaction?: boolean;
} & (
  | {
      /** With `sessionId`: every change is saved (`store.save`). */
      store: SessionStore;
      sessionId: string;
    }
  | { store?: undefined; sessionId?: undefined }
);
/**
 * What `prepareStep` resolves to: the model's view as ModelMessages, and the
 * flat array's system messages as `instructions` when it has any. It sets
 * nothing that depends on the app's tools, so it fits `prepareStep` of
 * generateText, streamText and ToolLoopAgent whatever their tool set.
 */
export interface AiSdkStepOverride {
  messages: ModelMessage[];
  instructions?: SystemModelMessage[];
}
/** What `run` passes to its callback: spread it into generateText / streamText. */
export interface AiSdkCallArgs {
  messages: ModelMessage[];
  instructions?: SystemModelMessage[];
  prepareStep: (options: AiSdkPrepareStepOptions) => Promise<AiSdkStepOverride>;
  onError: (event: { error: unknown }) => void;
}
/** What the conversation reads of a step (ai's `StepResult`). */
export interface AiSdkStepLike {
  readonly usage?: LanguageModelUsage;
  readonly model?: { readonly provider: string; readonly modelId: string };
  readonly response: { readonly messages: readonly ModelMessage[] };
}
/** The part of prepareStep's argument the conversation reads. */
export interface AiSdkPrepareStepOptions {
  stepNumber: number;
  steps: readonly AiSdkStepLike[];
}
export interface AiSdkConversation {
  readonly compactor: Compactor;
  /** The flat array (summaries included): a new array after each change. */
  readonly messages: AnyMessage[];
  /** Estimated tokens of what the model sees. */
  readonly contextTokens: number;
  /** The system messages of the flat array, for `instructions` (undefined when none). */
  instructions(): SystemModelMessage[] | undefined;
  /** The last summary and what follows, as ModelMessages. */
  modelMessages(): ModelMessage[];
  /**
   * Replaces the flat array (undo with removeLastCompaction, another tab's
   * version) and saves it with `{ replace: true }`. A message the steps
   * could not read rejects with a TypeError naming it; the array stays.
   */
  setMessages(messages: AnyMessage[]): Promise<AnyMessage[]>;
  /**
   * A manual compaction (reason "manual"): the summary is kept and saved.
   * A compaction under way (in the background, or one a step or a retry
   * runs) ends first.
   */
  compact(options?: { customInstructions?: string; signal?: AbortSignal }): Promise<CompactionResult<AnyMessage>>;
  /**
   * `search_history` and `read_history` as AI SDK tools, to spread into
   * `tools`: they search and read this conversation's messages the model
   * no longer sees (`compactor.historyTool`).
   */
  historyTools(): { search_history: Tool<{ query: string; limit?: number }, string>; read_history: Tool<{ ref: string; offset?: number }, string> };
  /** Appends ModelMessages (the user's message) and saves. */
  append(messages: ModelMessage | readonly ModelMessage[]): Promise<AnyMessage[]>;
  /** prepareStep for generateText / streamText / ToolLoopAgent. */
  prepareStep(options: AiSdkPrepareStepOptions): Promise<AiSdkStepOverride>;
  /** After a call made without `run`: records the steps prepareStep has not seen (`await result.steps`). */
  appendSteps(steps: readonly AiSdkStepLike[]): Promise<AnyMessage[]>;
  /** One call with overflow recovery (compact, retry once; then `OVERFLOW_RECOVERY_FAILED`). */
  run<R extends { steps: PromiseLike<readonly AiSdkStepLike[]> | readonly AiSdkStepLike[] }>(call: (args: AiSdkCallArgs) => R | Promise<R>): Promise<R>;
}
export declare function aiSdkConversation(options: AiSdkConversationOptions): AiSdkConversation;

export interface AiSdkSummarizerOptions {
  /** A cap below the compactor's budget (`request.maxTokens`). */
  maxOutputTokens?: number;
  providerOptions?: Record<string, Record<string, unknown>>;
  headers?: Record<string, string>;
  maxRetries?: number;
  temperature?: number;
}
/**
 * A Compactor summarizer calling `generateText` with the app's model. When
 * the request carries the conversation (`context`, `instruction`), it sends
 * the conversation's system prompt or system messages (as its steps send
 * them), tool definitions (without `execute`: never run) and messages (`toModelMessages`), then the instruction; a reply
 * without text, with a tool call, or refused or ended in an error
 * (`finishReason` `"content-filter"`, `"error"`) is asked once more with
 * the serialized prompt. Otherwise it sends the serialized prompt
 * (`systemPrompt` as `instructions`, `prompt`). A serialized reply refused
 * or ended in an error rejects, naming its `finishReason`; text cut at the
 * token limit is the summary, as pi takes it.
 */
export declare function aiSdkSummarizer(model: LanguageModel, options?: AiSdkSummarizerOptions): Summarizer;

export interface ToUIMessagesOptions {
  /** A `data-compaction` divider message where each summary was, a `data-tool-output-cleared` one where each clearing marker was. */
  divider?: boolean;
}
/**
 * The data parts `toUIMessages` writes, by name (`data-compaction`, …): a
 * divider where a summary or a clearing marker was (with `{ divider: true }`),
 * a custom message shown to the user (`display: true`), a branch summary, a
 * shell command, and a message of an app's own role (the message itself).
 */
export type AiSdkDataParts = {
  compaction: { tokensBefore: number; timestamp: number };
  "tool-output-cleared": { tokensFreed: number; toolCount: number; timestamp: number };
  custom: { customType: string; content: string | (TextContent | ImageContent)[] };
  "branch-summary": Omit<BranchSummaryMessage, "role">;
  "bash-execution": Omit<BashExecutionMessage, "role">;
  message: { role: string; timestamp?: number; [key: string]: unknown };
};
/**
 * A UIMessage as `toUIMessages` makes it: the package's data parts, and tool
 * parts of the app's tools (`InferUITools<typeof tools>`); the app's message
 * metadata type, if it has one (`toUIMessages` sets none). The type for
 * `useChat<…>()` in an app that shows the flat array.
 */
export type AiSdkUIMessage<TOOLS extends UITools = UITools, METADATA = unknown> = UIMessage<METADATA, AiSdkDataParts, TOOLS>;
/**
 * The flat array as useChat's UIMessages: every message the core's display
 * rule shows (summaries out), in the parts the AI SDK's own UI conversions
 * build — images and files as file parts (bytes as data: URLs), a tool
 * call's part in the state its approval and result give it, a system
 * message as a system message, pi-only messages as `AiSdkDataParts`. A
 * tool result that holds images has as `output` its text and file parts.
 * Ids are unique and stay the same as the array grows. `TOOLS` is the
 * app's tool set as UI tools (`InferUITools<typeof tools>`): the tool calls
 * of the flat array are taken to be calls of those tools.
 */
export declare function toUIMessages<TOOLS extends UITools = UITools, METADATA = unknown>(
  messages: readonly AnyMessage[],
  options?: ToUIMessagesOptions,
): AiSdkUIMessage<TOOLS, METADATA>[];
/**
 * UIMessages -> flat-array messages (through the SDK's convertToModelMessages);
 * rows that stand for pi-only messages (dividers, the other `AiSdkDataParts`)
 * skipped. What the UI showed that the SDK's messages cannot hold (the id,
 * dynamic tools, a referenced file's URL) is kept, so `toUIMessages` gives
 * the same UI messages back.
 */
export declare function fromUIMessages(uiMessages: readonly UIMessage[], options?: FromModelMessagesOptions): Promise<AiSdkFlatMessage[]>;
