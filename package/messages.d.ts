// The messages of the flat array: structurally compatible with pi-ai's
// `Message` and pi-agent-core's `AgentMessage`, so the package needs neither
// at run time.

export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  thinkingSignature?: string;
  redacted?: boolean;
}
export interface ImageContent {
  type: "image";
  /** base64 data */
  data: string;
  mimeType: string;
}
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  thoughtSignature?: string;
}
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}
export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
  /**
   * A standing rule or constraint: the model is sent this message after
   * every summary (right after the last `compactionSummary`, with the other
   * pinned messages before it, in their order), so it is never summarized
   * away. Any role may be pinned but a `compactionSummary` (pin user or
   * custom messages: a pinned tool result would be re-sent without its tool
   * call). Read when the Compactor first sees the message: set it when you
   * add the message, or replace the object (messages are immutable) to
   * change it. Stored with the message (SessionStore, pi session files).
   */
  pinned?: boolean;
}
export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: string;
  provider: string;
  model: string;
  responseModel?: string;
  responseId?: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  timestamp: number;
}
export interface ToolResultMessage<TDetails = unknown> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isError: boolean;
  timestamp: number;
}
/** What a model is sent: pi-ai's `Message`. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** The files a summarized stretch of conversation read and modified. */
export interface SummaryFileDetails {
  readFiles: string[];
  modifiedFiles: string[];
}
/**
 * The summary compaction inserts into the flat array. `summary` is the text
 * alone; the file lists are shown to the model as tags from `details`.
 * `details` whose `readFiles` / `modifiedFiles` are not arrays of strings
 * (an extension's own data, which pi files may hold) are kept and show no
 * list, as in pi.
 */
export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  timestamp: number;
  /** The estimated context tokens before this compaction. */
  tokensBefore: number;
  /**
   * How many messages followed the summary when it was inserted (the ones
   * the compaction kept). Their usage reports the old, larger context and
   * is ignored; the first reply after them counts again. Without it (a
   * summary written by hand), timestamps decide.
   */
  keptMessages?: number;
  details?: SummaryFileDetails;
  /** What the summarizer call cost. */
  usage?: Usage;
  /** True when a `beforeCompact` hook supplied the summary. */
  fromHook?: boolean;
  /**
   * The text is a pi session file's, kept whole as pi stored it (its file
   * tags or branch preamble are not the ones pi would add for `details`):
   * no tags are added to it, for the model or in a pi file. Set by
   * `piSessionToMessages`.
   */
  verbatim?: true;
  /**
   * A provider's own compaction (Anthropic's `compaction` block, OpenAI's
   * compaction item), as `aiSdkConversation` and `fromModelMessages` keep
   * it: `summary` is its readable text (for an encrypted one, a note that
   * only that provider can read it), and `part` the AI SDK part exactly as
   * received, sent again to that provider in place of what it covers.
   */
  provider?: ProviderCompaction;
}
/** Where a provider's compaction came from, and its part as received. */
export interface ProviderCompaction {
  /** The provider options key of its part (`"anthropic"`, `"openai"`). */
  name: string;
  /** The model's provider id (`"anthropic.messages"`) and id. */
  provider: string;
  model: string;
  /** The AI SDK content part, as stored (JSON: bytes and URLs encoded). */
  part: unknown;
  /**
   * OpenAI's `/responses/compact` (`openAiResponsesCompaction`): the user
   * messages it returned before its item, as Responses input items, sent
   * before the item.
   */
  input?: unknown[];
  /**
   * Made by a summarizer that asked the provider (`anthropicCompaction`,
   * `openAiResponsesCompaction`), not by the provider's own threshold: the
   * AI SDK conversation's threshold stays on after it.
   */
  onDemand?: boolean;
}
/** A summary of a branch the conversation came back from. */
export interface BranchSummaryMessage {
  role: "branchSummary";
  summary: string;
  fromId?: string;
  timestamp: number;
  details?: SummaryFileDetails;
  usage?: Usage;
  fromHook?: boolean;
  /**
   * The text is a pi session file's, kept whole as pi stored it (its file
   * tags or branch preamble are not the ones pi would add for `details`):
   * no tags are added to it, for the model or in a pi file. Set by
   * `piSessionToMessages`.
   */
  verbatim?: true;
}
/** pi's `!` shell command message. */
export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
  timestamp: number;
  /** Kept out of the model's context when true (pi's `!!`). */
  excludeFromContext?: boolean;
}
/** An app- or extension-injected message (pi's `CustomMessage`). */
export interface CustomMessage<T = unknown> {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  /** Shown to the user only when true. */
  display: boolean;
  details?: T;
  timestamp: number;
  /** Sent to the model after every summary (see `UserMessage.pinned`). */
  pinned?: boolean;
}
/** Every message role this library knows. */
export type AgentMessage =
  | Message
  | CompactionSummaryMessage
  | BranchSummaryMessage
  | BashExecutionMessage
  | CustomMessage
  | ToolOutputClearedMessage;
/**
 * Any message of the flat array: the known roles, or an app's own role,
 * which is kept and shown but never sent to the model.
 */
export type AnyMessage = AgentMessage | { role: string; timestamp?: number };
/** Stands in a display list where a summary was, with `divider: true`. */
export interface CompactionDivider {
  role: "compactionDivider";
  tokensBefore: number;
  timestamp: number;
}
/**
 * Appended by an automatic (`threshold`) compaction that cleared old tool
 * output instead of summarizing: nothing is deleted. Until a reply after it
 * reports usage, what it freed comes off the context tokens. `convertToLlm` sends each
 * tool result before it whose `toolCallId` is listed as a short placeholder
 * tool result (same `toolCallId` and `toolName`):
 * `[Output of read cleared to save context: ~12,400 tokens]`. The marker
 * itself is never sent to the model; `removeLastCompaction` undoes it.
 */
export interface ToolOutputClearedMessage {
  role: "toolOutputCleared";
  /** The cleared tool results, oldest first. */
  toolCallIds: string[];
  /** Each one's estimated tokens, in the order of `toolCallIds` (the placeholder's size). */
  outputTokens?: number[];
  /** What clearing freed: the outputs' estimates less their placeholders'. */
  tokensFreed: number;
  timestamp: number;
}
/** A `toolOutputCleared` marker as `agentMessagesToChatMessages(…, { divider: true })` shows it. */
export interface ToolOutputClearedDivider {
  role: "toolOutputClearedDivider";
  tokensFreed: number;
  /** How many tool outputs were cleared. */
  toolCount: number;
  timestamp: number;
}
