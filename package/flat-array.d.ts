// The stateless functions over the flat message array: what the model and
// the user see, pi-compatible token estimates, cut points and compaction
// preparation, the conversation as a summarizer reads it, undo.
import type {
  AgentMessage,
  AnyMessage,
  AssistantMessage,
  CompactionDivider,
  CompactionSummaryMessage,
  Message,
  ToolOutputClearedDivider,
  ToolOutputClearedMessage,
  Usage,
} from "./messages.js";
import type { CompactionSettingsInput } from "./settings.js";

/**
 * What the model sees: the last `compactionSummary`, then the messages
 * before it marked `pinned: true` (the same objects, in their order), then
 * everything after it; or `messages` itself when there is no summary. Finds
 * the summary walking back from the end, then reads `pinned` of each message
 * before it (the Compactor's hooks know them without that pass).
 * @throws TypeError when `messages` is not an array, or a message it reads is
 * not a message object (the error names the index and field).
 */
export function transformContext<M extends AnyMessage>(messages: readonly M[]): M[];

/**
 * pi-compatible `convertToLlm`: user, assistant and tool-result messages come
 * back as the same objects; summaries, bash executions and custom messages
 * become user messages; unknown roles are dropped. A tool result that a later
 * `toolOutputCleared` marker lists becomes a short placeholder tool result
 * (same `toolCallId` and `toolName`); the marker itself is dropped.
 */
export function convertToLlm(messages: readonly AnyMessage[]): Message[];

/**
 * What the user sees: every message but summaries, `toolOutputCleared`
 * markers and custom messages whose `display` is falsy. With `divider: true`,
 * each summary becomes a `compactionDivider` and each marker a
 * `toolOutputClearedDivider` in its place. A `divider` that is a `boolean`
 * (a setting the user toggles) may give dividers; only `false` or none
 * gives none.
 */
export function agentMessagesToChatMessages<M extends AnyMessage>(
  messages: readonly M[],
  options: { divider: true },
): (Exclude<M, CompactionSummaryMessage | ToolOutputClearedMessage> | CompactionDivider | ToolOutputClearedDivider)[];
export function agentMessagesToChatMessages<M extends AnyMessage>(
  messages: readonly M[],
  options?: { divider?: false | undefined },
): Exclude<M, CompactionSummaryMessage | ToolOutputClearedMessage>[];
export function agentMessagesToChatMessages<M extends AnyMessage>(
  messages: readonly M[],
  options?: { divider?: boolean | undefined },
): (Exclude<M, CompactionSummaryMessage | ToolOutputClearedMessage> | CompactionDivider | ToolOutputClearedDivider)[];

/**
 * Undo the last compaction: a new array without the last
 * `compactionSummary` or `toolOutputCleared` marker, whichever is later (the
 * same objects otherwise), or `messages` itself when there is none. Costs
 * only the distance from the end to it.
 */
export function removeLastCompaction<M extends AnyMessage>(messages: readonly M[]): Exclude<M, CompactionSummaryMessage>[] | M[];

/** pi's chars/4 token estimate of one message (lengths in UTF-16 code units). */
export function estimateTokens(message: AnyMessage): number;

/** pi's `estimateContextTokens` result. */
export interface ContextTokenEstimate {
  /** usageTokens + trailingTokens */
  tokens: number;
  /** What the last valid assistant usage reported (0 without one). */
  usageTokens: number;
  /** Estimates of the messages after that assistant message. */
  trailingTokens: number;
  /** Index of that assistant message, or null. */
  lastUsageIndex: number | null;
}
/** pi-compatible: last valid assistant usage plus estimates of what follows. */
export function estimateContextTokens(messages: readonly AnyMessage[]): ContextTokenEstimate;

/** pi-compatible: `totalTokens`, or the sum of the parts when it is 0. */
export function calculateContextTokens(usage: Usage): number;

/** pi-compatible: `enabled && contextTokens > contextWindow - reserveTokens`. */
export function shouldCompact(
  contextTokens: number,
  contextWindow: number,
  settings: { enabled: boolean; reserveTokens: number },
): boolean;

/**
 * pi-compatible: whether an assistant message is a context overflow — a
 * provider's overflow error (rate limits excluded), a `stop` whose input
 * exceeded `contextWindow` (silent overflow), or a `length` stop with no
 * output at a full window.
 */
export function isContextOverflow(message: AssistantMessage, contextWindow?: number): boolean;

/** pi's `CutPointResult`, with indices into the flat array. */
export interface CutPoint {
  /** The first message kept; a summary would be inserted here. */
  firstKeptIndex: number;
  /** The message starting the turn the cut falls in, or -1. */
  turnStartIndex: number;
  /** The cut falls inside a turn (its start is summarized separately). */
  isSplitTurn: boolean;
}
/**
 * pi-compatible `findCutPoint` on the flat array, within `[start, end)`:
 * keeps about `keepRecentTokens` of the newest messages, never cutting at a
 * tool result.
 * @throws RangeError when `end` is not a whole number from 0 to
 * `messages.length`, or `start` not one from 0 to `end`.
 * @throws TypeError when `start` or `end` is not a number, or a message
 * cannot be read (names its index and field).
 */
export function findCutPoint(
  messages: readonly AnyMessage[],
  start: number,
  end: number,
  keepRecentTokens: number,
): CutPoint;

/** Paths read, written and edited by `read` / `write` / `edit` tool calls, sorted. */
export interface FileOperations {
  read: string[];
  written: string[];
  edited: string[];
}
/** pi's `CompactionPreparation`, with the flat array's index of the cut. */
export interface CompactionPreparation<M extends AnyMessage = AgentMessage> {
  firstKeptIndex: number;
  /** The caller's own message objects to summarize as history. */
  messagesToSummarize: M[];
  /** The start of a split turn, summarized on its own (empty when not split). */
  turnPrefixMessages: M[];
  isSplitTurn: boolean;
  /** pi's estimate of the current context (last summary and after). */
  tokensBefore: number;
  /** The last summary's text, folded into the next summary. */
  previousSummary: string | undefined;
  fileOps: FileOperations;
  settings: CompactionSettingsInput;
}
/**
 * The flat-array equivalent of pi's `prepareCompaction`: what a compaction
 * would summarize. `undefined` when there is nothing to summarize (pi
 * returns empty lists there).
 */
export function prepareCompaction<M extends AnyMessage>(
  messages: readonly M[],
  settings: CompactionSettingsInput,
): CompactionPreparation<M> | undefined;

/**
 * pi-compatible: the conversation as text for a summarizer (`[User]:`,
 * `[Assistant thinking]:`, `[Assistant]:`, `[Assistant tool calls]:`,
 * `[Tool result]:` cut to 2000 characters). Give it `convertToLlm` output.
 */
export function serializeConversation(messages: readonly Message[]): string;
