// The Compactor: its options and events, what a compaction resolves to,
// and `attach` (automatic compaction in a pi-agent-core `Agent`).
import type {
  AgentMessage,
  AnyMessage,
  BranchSummaryMessage,
  CompactionSummaryMessage,
  Message,
  SummaryFileDetails,
  ToolOutputClearedMessage,
  Usage,
} from "./messages.js";
import type { CompactionPreparation, ContextTokenEstimate } from "./flat-array.js";
import type { CompactionSettingsInput, ModelLike } from "./settings.js";
import type { CompactionReason, Summarizer, Tool } from "./summarizers.js";

/** What the compactor reports (pi 0.73's compaction event names). */
export type CompactorEvent =
  | { type: "compaction_start"; reason: CompactionReason; /** A compaction started in the background (`compactInBackground`). */ background?: true }
  | {
      type: "compaction_end";
      reason: CompactionReason;
      /** What `compact` resolved to; undefined when it failed, was cancelled or had nothing to do. */
      result: CompactionResult | ToolOutputClearingResult | undefined;
      aborted: boolean;
      willRetry: boolean;
      /** Prefixed "Compaction failed: ", "Auto-compaction failed: " or "Context overflow recovery failed: ". */
      errorMessage?: string;
      /** Which tier ran (with a result): old tool output cleared, or a summary. */
      tier?: "clear" | "summarize";
      /**
       * A threshold compaction that freed under 5 % of the context (or
       * failed, or had nothing to do): the threshold is quiet until the
       * context exceeds this many tokens (5 % past what it left), the
       * window or model changes, or the messages are replaced by something
       * other than the same conversation grown (an undo).
       */
      quietUntil?: number;
    }
  | { type: "hook_error"; hook: "transformContext" | "convertToLlm"; error: Error }
  /** With `attach` and a store: a save failed; the messages in memory are untouched. */
  | { type: "save_error"; error: Error };
export interface CompactorOptions {
  /** The model's context window in tokens (default: `model.contextWindow`). */
  contextWindow?: number;
  /** A `"provider/modelId"` key (for `settings.modelOverrides`) or a pi-ai Model. */
  model?: string | ModelLike;
  settings?: CompactionSettingsInput;
  /** The app's summarizer (its own fetch); without it, the extractive summary is used. */
  summarize?: Summarizer;
  /** The summarizer's own window in tokens: bigger histories are summarized in chunks. */
  summarizerContextWindow?: number;
  /**
   * The token estimate the compactor decides with (threshold, overflow, cut
   * point, what is kept). `"calibrated"` counts by kind of text —
   * words, code, digits, punctuation, CJK, other scripts, emoji, base64/hex
   * runs — within ±15 % of o200k on prose, code, JSON, CJK, emoji, base64 and
   * mixed text, and corrects itself by the usage the provider reports: when
   * it compacts (the context's estimates measured then), it learns the ratio
   * between the growth of the reported usage and the estimate of the same
   * messages (so the system prompt and tools in the reported numbers cancel
   * out), clamped to [0.5, 2.5], and scales the estimates after the last
   * reported usage and the kept part by it until the next compaction. A
   * message's text is read only when a decision needs it (bounds from
   * lengths settle most turns). The default. `"pi"` is pi's characters / 4,
   * for numbers identical to a pi app's. The pi-compatible functions
   * (`estimateTokens`, `findCutPoint`, `prepareCompaction`, …) always use
   * pi's.
   */
  estimator?: "calibrated" | "pi";
  /**
   * A summarizer that has not answered after this many milliseconds failed
   * (default 120,000; at most 2,147,483,647, the longest a timer waits;
   * 0: no timeout).
   */
  summarizeTimeoutMs?: number;
  /**
   * Summary requests that repeat the conversation as the model last saw it
   * (default `true`): when `compact` is given the conversation's system
   * prompt and tools (`attach` and `aiSdkConversation` give them), each
   * `SummarizeRequest` also carries `context` and `instruction`, so that the
   * provider's prompt cache serves the repeated prefix. `false` keeps the
   * serialized prompt only.
   */
  cacheFriendly?: boolean;
  /** On a failed summarizer: "extractive" (default when there is no `summarize`) or "none". */
  fallback?: "extractive" | "none";
  /** Called before summarizing: cancel, or supply the summary yourself. */
  beforeCompact?: (event: BeforeCompactEvent) => BeforeCompactResult | Promise<BeforeCompactResult>;
  onEvent?: (event: CompactorEvent) => void;
}
/**
 * The hooks pi-agent-core's `Agent` takes: `new Agent({ ...compactor.agentHooks() })`.
 * `transformContext` returns the model's view: the last summary, the pinned
 * messages before it (known from what the compactor gathered when it first
 * saw them: no pass over the array per turn), then everything after it.
 */
export interface AgentHooks {
  transformContext: <M extends AnyMessage>(messages: M[], signal?: AbortSignal) => Promise<M[]>;
  convertToLlm: (messages: AnyMessage[]) => Promise<Message[]>;
}
export class Compactor {
  constructor(options: CompactorOptions);
  free(): void;
  /** The resolved settings now in force. */
  readonly settings: Required<Omit<CompactionSettingsInput, "modelOverrides" | "toolOutputClearing">>;
  readonly contextWindow: number;
  /**
   * Estimated tokens of the LLM context of `messages`: the last fresh usage
   * plus estimates after it; usage from at or before the last summary is
   * ignored (stale). The pinned messages re-sent after the last summary
   * count until a fresh usage (which includes them). Costs only the
   * messages new since the last call.
   */
  contextTokens(messages: readonly AnyMessage[]): number;
  /** The same, with pi's breakdown. */
  contextTokenEstimate(messages: readonly AnyMessage[]): ContextTokenEstimate;
  /**
   * The messages the model is sent, as the same objects: the last summary,
   * the pinned messages before it (in order), everything after it; a tool
   * output a later `toolOutputCleared` marker lists as its placeholder; a
   * failed attempt (an assistant message with stopReason `error` or
   * `aborted`) left out; once the history tools are offered, the summary
   * as a copy ending with the history note. What an adapter without pi's
   * agent sends.
   */
  modelContext(messages: readonly AnyMessage[]): AnyMessage[];
  /**
   * The same context, as a change to what the caller holds of an earlier
   * answer, for an adapter that converts each message once. `since`: the
   * earlier answer's `view` and how many messages of that view the caller
   * holds (none: everything is new). While the array only grew, by
   * messages that are no clearing marker and no summary, `kept` is that
   * number and the context is those messages followed by `added`;
   * otherwise `kept` is 0 and `added` is the whole context. Costs only the
   * messages new since the last call; `added` is a new array.
   */
  modelContextChange(
    messages: readonly AnyMessage[],
    since?: { view: number; length: number },
  ): { view: number; kept: number; added: AnyMessage[] };
  /**
   * What to do after a call made without pi's agent (the after-run rule
   * `attach` follows): an overflow is compacted and retried once
   * (`"overflowRetry"`), a second one stops (`"recoveryFailed"`, pi's
   * text); an overflow whose reply, the last of `messages`, answered (a
   * `stop` with its input over the window) keeps the answer and is
   * compacted with no retry (`"silentOverflow"`); otherwise `"threshold"`
   * when the context is over it.
   */
  afterRun(
    messages: readonly AnyMessage[],
    facts: { overflow: boolean; retried: boolean },
  ): "nothing" | "overflowRetry" | "recoveryFailed" | "silentOverflow" | "threshold";
  /**
   * `enabled && contextTokens > contextWindow - reserveTokens`, unless the
   * threshold is quiet after a compaction that freed too little
   * (`compaction_end`'s `quietUntil`).
   */
  needsCompaction(messages: readonly AnyMessage[]): boolean;
  /** True between `compaction_start` and `compaction_end` (in the background too: a second `compact` is refused meanwhile). */
  readonly isCompacting: boolean;
  /**
   * True while the running compaction is one in the background
   * (`compactInBackground`, `backgroundAt`) that nobody waits for, so keep
   * the input enabled and show at most a quiet indicator. False while a
   * request (or an overflow's retry) waits for its summary
   * (`compactIfNeeded`, `attach`): then the conversation is held up by it.
   */
  readonly isCompactingInBackground: boolean;
  /** Cancels the running compaction: it ends with `aborted: true` and changes nothing. */
  abort(): void;
  /**
   * Summarizes the older part of `messages` and resolves to a new array with
   * one `compactionSummary` inserted; rejects (changing nothing) when the
   * summarizer fails without fallback, on abort, or when there is nothing
   * to summarize. Automatic reasons resolve to `undefined` instead.
   *
   * The latest request survives verbatim: when the newest `user` message is
   * in the summarized part (a split turn), the summary's text ends with a
   * section `## Latest user request (verbatim)` quoting its text (its text
   * parts, images left out), whoever wrote the summary (`summarize`,
   * `beforeCompact`, the extractive summary). The quote is whole up to
   * `keepRecentTokens` characters (a quarter of `keepRecentTokens` in
   * tokens: 20,000 characters by default); a longer request keeps that many,
   * then a marker saying how many characters were left out. When that
   * message is kept, nothing is added. The previous summary is passed to
   * the summarizers without its quote, so a stale one never accumulates.
   * Pinned messages (`pinned: true`) are never summarized away: the model is
   * sent them after the summary, and `tokensAfter` counts them.
   */
  compact<M extends AnyMessage>(messages: readonly M[], options?: CompactOptions & { reason?: "manual" }): Promise<CompactionResult<M>>;
  /**
   * Automatic reasons resolve to `undefined` when there is nothing to do. A
   * `threshold` compaction first tries clearing old tool output
   * (`settings.toolOutputClearing`): when that alone brings the context to the
   * threshold it resolves to a `ToolOutputClearingResult` and no summarizer is
   * called (nor `beforeCompact`, which is about summaries).
   */
  compact<M extends AnyMessage>(messages: readonly M[], options: CompactOptions): Promise<CompactionResult<M> | ToolOutputClearingResult<M> | undefined>;
  /**
   * For an agent loop of your own (`attach` and `aiSdkConversation` do the
   * same), after each answer and before each request: what the context
   * needs, in one call. A background summary that is ready goes in (over
   * the threshold, one under way is awaited first); past `backgroundAt` of
   * the threshold a compaction starts in the background and the call
   * resolves at once; over the threshold with none, a `threshold`
   * compaction runs now. Resolves to the result that changed the messages
   * (use its `messages`), else `undefined`: a compaction that failed was
   * reported by `compaction_end`, and the request goes out as it is. After
   * a background summary that failed, the threshold is quiet (the stall
   * rule): the summarizer is not asked again at once. After an overflow,
   * `{ reason: "overflow", willRetry: true }` (the failed attempt taken out
   * first). Bad options reject with a `TypeError` or `RangeError`.
   */
  compactIfNeeded<M extends AnyMessage>(
    messages: readonly M[],
    options?: CompactIfNeededOptions,
  ): Promise<CompactionResult<M> | ToolOutputClearingResult<M> | undefined>;
  /**
   * The steps of `compactIfNeeded`, one at a time: after each turn and before
   * a request, ask what comes next for the messages, with the background
   * start at `fraction` of the threshold (none: never):
   * `"start"`: `compactInBackground(messages)` and go on with the full
   * context; `"insert"`: a summary is ready, `takeBackground(messages)`;
   * `"wait"`: the context reached the threshold before it arrived,
   * `await waitForBackground()` then `takeBackground`; `"compact"`: over the
   * threshold with none under way, a `threshold` compaction now;
   * `"nothing"`. The stall rule applies to the start as to the threshold.
   */
  backgroundNext(messages: readonly AnyMessage[], fraction?: number): "nothing" | "start" | "insert" | "wait" | "compact";
  /**
   * Starts a `threshold` compaction of a copy of `messages` and returns at
   * once with its promise (`compaction_start` says `background: true`). It
   * keeps `keepRecentTokens` less the room left under the threshold (at
   * least half). Its result waits in the compactor for `takeBackground`; a
   * failure is reported by `compaction_end` and leaves nothing behind.
   */
  compactInBackground<M extends AnyMessage>(
    messages: readonly M[],
    options?: Omit<CompactOptions, "reason" | "willRetry">,
  ): Promise<CompactionResult<M> | ToolOutputClearingResult<M> | undefined>;
  /**
   * The background compaction's result for `messages` now, as
   * `rebaseCompaction` puts it in: the summary at its cut, or the clearing
   * marker after every message. `undefined` while none is ready, or when
   * `messages` are no longer the compacted ones grown (an undo, an edit:
   * the result is dropped).
   */
  takeBackground<M extends AnyMessage>(messages: readonly M[]): CompactionResult<M> | ToolOutputClearingResult<M> | undefined;
  /** Resolves when the background compaction has ended (at once when none runs); never rejects. */
  waitForBackground(): Promise<void>;
  /** `{ transformContext, convertToLlm }` for pi-agent-core's `Agent`. Never reject. */
  agentHooks(): AgentHooks;
  /**
   * A `branchSummary` message for messages the conversation leaves behind,
   * as pi summarizes a branch: newest first within `contextWindow -
   * reserveTokens`, tool results skipped, file lists carried.
   */
  summarizeBranch(abandoned: readonly AnyMessage[], options?: SummarizeBranchOptions): Promise<BranchSummaryMessage>;
  /**
   * Switch model (and window: the one given, else the model's, else the
   * current one) for later checks; the next `needsCompaction` is against
   * the new window.
   */
  setModel(model: string | ModelLike, contextWindow?: number): void;
  /** The same model with another window in tokens, for later checks. */
  setContextWindow(contextWindow: number): void;
  /**
   * Runs automatic compaction in a pi-agent-core `Agent` (SPEC §3): installs
   * `agentHooks()` on it, and after each run compacts on overflow (taking
   * the failed attempt out and retrying once), silent overflow or the
   * threshold; before a run's first request (and the first after the
   * agent's model changed: its provider, id or `contextWindow`, applied
   * with `setModel`) when the session is already over the threshold. With `store`, every change is saved. While it
   * compacts, the agent stays busy: queue the user's messages with
   * `agent.followUp()`; they are delivered after it. `agent.abort()`
   * cancels the compaction the run waits for (a background one goes on).
   * Returns `detach`, which aborts the compactions `attach` started:
   * nothing reaches the agent, the store or `onStateChange` after it.
   */
  attach(agent: AttachableAgent, options?: AttachOptions): () => void;
  /**
   * Searches the messages the model no longer sees: everything before the
   * last summary (pinned messages re-sent after it aside) and tool outputs
   * the clearing tier replaced. Words, identifiers (and their camelCase or
   * snake_case parts), paths, numbers and error codes are searched; CJK
   * text by character pairs. Ranked by BM25, best first, the later message
   * first on a tie. The index is built at the first search and kept in
   * step at each one after: only messages hidden since, or replaced,
   * are read.
   */
  searchHistory(messages: readonly AnyMessage[], query: string, options?: { /** 1 to 100; 10 if not given. */ limit?: number }): HistorySearch;
  /**
   * The original text a hit's `ref` points at, a page at a time, from its
   * passage (or from `offset`, a page's `next`). `offset` and `maxChars`
   * count UTF-16 code units, as `.length` does; an `offset` inside a
   * surrogate pair reads from the pair's start. A ref to a message that
   * has changed since it was found is refused: search again.
   */
  readHistory(
    messages: readonly AnyMessage[],
    ref: string,
    options?: { offset?: number; /** 1 to 16,000; 4,000 if not given. */ maxChars?: number },
  ): HistoryPage;
  /**
   * The `search_history` and `read_history` tools: what to hand a model.
   * From the first call on, the model is sent the last summary ending with
   * one line saying that earlier details can be looked up (the hooks,
   * `attach`, `modelContext` and the AI SDK conversation send a copy of the
   * summary with it; the array's own summary is not changed).
   */
  historyTools(): HistoryToolDefinition[];
  /**
   * What the tool `name` answers the model for `args` (the model's
   * arguments, checked here): the text of its result, marked as quoted
   * history. Throws on bad arguments or a stale ref (a TypeError or an
   * Error whose message tells the model what to do).
   */
  historyTool(messages: readonly AnyMessage[], name: "search_history" | "read_history", args: unknown): string;
}

/** What `searchHistory` returns. */
export interface HistorySearch {
  /** Best first. */
  hits: HistoryHit[];
  /** How many hidden messages with text were searched. */
  searched: number;
}
export interface HistoryHit {
  /** What `readHistory` takes, e.g. `h12.0-0k7f`: message 12, passage 0, and a fingerprint of its text. */
  ref: string;
  /** The message's index in the array. */
  index: number;
  /** The message's role. */
  role: string;
  /** About 300 characters of the passage around the query's words, `…` where it was cut. */
  excerpt: string;
  /** Its BM25 score. */
  score: number;
}
/** What `readHistory` returns. */
export interface HistoryPage {
  ref: string;
  index: number;
  role: string;
  /**
   * At most `maxChars` characters (UTF-16 code units) of the message's
   * text, ending at a line end when one is near; never inside a surrogate
   * pair, so a unit short where an emoji would be cut.
   */
  text: string;
  /** The offset of the next page, in UTF-16 code units; null at the end. */
  next: number | null;
}
/** One of the history tools: a pi-ai `Tool`, or a JSON Schema for any loop. */
export interface HistoryToolDefinition {
  name: "search_history" | "read_history";
  description: string;
  /** A JSON Schema of the arguments. */
  parameters: { type: "object"; properties: Record<string, unknown>; required: string[]; additionalProperties: false };
}
/** What `compact` resolves to. */
export interface CompactionResult<M extends AnyMessage = AgentMessage> {
  /** A new array: the caller's messages with the summary inserted. */
  messages: (M | CompactionSummaryMessage)[];
  /** The inserted summary. */
  summary: CompactionSummaryMessage;
  tokensBefore: number;
  /**
   * The estimated context right after (stale usage ignored): what
   * `contextTokens` gives right after, on the scale of `tokensBefore`.
   */
  tokensAfter: number;
  /** Where the summary was inserted; the kept messages follow it. */
  firstKeptIndex: number;
  /** Who wrote the summary. */
  summarizedBy: "summarizer" | "extractive" | "hook";
  /** Why the extractive fallback was used, when it was. */
  fallbackReason?: string;
  /** The tier that ran: a summary. */
  tier: "summarize";
}
/**
 * What an automatic (`threshold`) compaction resolves to when clearing old
 * tool output was enough (no summarizer call): one `toolOutputCleared`
 * marker appended at the end of the messages (`markerIndex`).
 */
export interface ToolOutputClearingResult<M extends AnyMessage = AgentMessage> {
  tier: "clear";
  /** A new array: the caller's messages, then the marker (then any message added while it ran, for a result taken from the background). */
  messages: (M | ToolOutputClearedMessage)[];
  marker: ToolOutputClearedMessage;
  /** Where the marker is in `messages`: after every message the clearing saw. */
  markerIndex: number;
  tokensBefore: number;
  /** The estimated context right after (what the marker freed taken off). */
  tokensAfter: number;
  tokensFreed: number;
  /** The cleared tool results, oldest first. */
  toolCallIds: string[];
}
/**
 * A compaction's result for `messages`, when the array it compacted
 * (`before`) has grown meanwhile (a loop that kept appending while the
 * summary was written): the summary at its cut, with the messages added
 * meanwhile after the kept ones and counted among them (`keptMessages`:
 * they were answered with the old, larger context, so their usage is
 * stale), or the clearing marker after every message. A copy of `result`
 * (the summary copied too when it changes), or `result` itself when
 * nothing was added; `undefined` when `messages` is not `before` grown (an
 * undo or an edit meanwhile: drop the result, the array wins).
 */
export declare function rebaseCompaction<M extends AnyMessage, R extends CompactionResult<M> | ToolOutputClearingResult<M>>(
  result: R,
  before: readonly M[],
  messages: readonly M[],
): R | undefined;
export interface CompactOptions {
  reason?: CompactionReason;
  customInstructions?: string;
  signal?: AbortSignal;
  willRetry?: boolean;
  /**
   * What the conversation's own requests carry besides the messages. Given
   * (and with `cacheFriendly` on), the summary requests repeat the
   * conversation: `SummarizeRequest.context` is this system prompt, these
   * tools (passed on as they are) and the messages `convertToLlm` gives for
   * the model's view, and `instruction` the last user message to send
   * after them. Not for an overflow, nor when the context, the instruction
   * (≈1,000 tokens) and at least 4,096 tokens for the summary (or its whole
   * budget, when smaller) would not fit the window (`summarizerContextWindow`,
   * else the model's); `maxTokens` is then capped at the room left.
   */
  conversation?: {
    /** pi-ai's system prompt, or (as the AI SDK's `instructions` take them) the system messages the requests carry. */
    systemPrompt?: string | Record<string, unknown> | Record<string, unknown>[];
    /** pi-ai tools (an `Agent`'s), or an AI SDK tool set. */
    tools?: Tool[] | Record<string, unknown>;
  };
}
/** `compactIfNeeded`'s options. */
export interface CompactIfNeededOptions {
  /**
   * `"overflow"` after a request the provider refused as too long (or
   * answered over its window): a compaction is needed, and a summary being
   * written in the background, awaited, is it; with none, an `overflow`
   * compaction runs now. Default `"threshold"`.
   */
  reason?: "threshold" | "overflow";
  /** With `reason: "overflow"`: the request will be sent again (reported in `compaction_end`). */
  willRetry?: boolean;
  /** A compaction starts in the background past this fraction of the threshold, in (0, 1]; none: never (it blocks at the threshold, as pi does). */
  backgroundAt?: number;
  /** As `CompactOptions.conversation`. */
  conversation?: CompactOptions["conversation"];
  /** Called when a compaction this call started in the background has ended: `takeBackground(messages)` then puts its summary in before the next call does. */
  onBackgroundEnd?: () => void;
}
/** `beforeCompact`'s event. */
export interface BeforeCompactEvent<M extends AnyMessage = AgentMessage> {
  preparation: CompactionPreparation<M>;
  messages: readonly M[];
  reason: CompactionReason;
  customInstructions: string | undefined;
  willRetry: boolean;
  signal: AbortSignal;
}
export type BeforeCompactResult =
  | undefined
  | void
  | { cancel: true }
  | { summary: string; details?: SummaryFileDetails; usage?: Usage };
export interface SummarizeBranchOptions {
  /** Added as "Additional focus: …", or the whole instructions with `replaceInstructions`. */
  customInstructions?: string;
  replaceInstructions?: boolean;
  signal?: AbortSignal;
  /** Stored as the message's `fromId` (where the branch was left). */
  fromId?: string;
}
/**
 * The parts of pi-agent-core 0.73's `Agent` that `attach` uses. Its events
 * and its hooks' messages are the agent's own types: `attach` reads the
 * events it knows and replaces the two hooks with `agentHooks()`.
 */
export interface AttachableAgent {
  subscribe(listener: (event: unknown, signal: AbortSignal) => Promise<void> | void): () => void;
  readonly state: { messages: AnyMessage[]; model: { provider: string; id: string } };
  transformContext?: ((messages: never[], signal?: AbortSignal) => Promise<unknown[]>) | undefined;
  convertToLlm: (messages: never[]) => unknown;
  continue(): Promise<void>;
  waitForIdle(): Promise<void>;
  hasQueuedMessages(): boolean;
}
/** A store `attach` saves to: a `SessionStore`, or anything with its `save`. */
export interface AttachStore {
  save(sessionId: string, messages: readonly AnyMessage[]): Promise<unknown>;
}
export interface CompactorState {
  /**
   * True while a compaction the conversation waits for runs (at the
   * threshold without `backgroundAt`, an overflow, a manual one, or one in
   * the background once a request or a retry waits for its summary):
   * disable the input, show an indicator.
   */
  isCompacting: boolean;
  /**
   * True while a compaction runs in the background and nothing waits for
   * it: the agent goes on and the input stays enabled; its summary goes in
   * when it arrives.
   */
  isCompactingInBackground: boolean;
  /** Estimated tokens of what the model sees now (for a stats bar). */
  contextTokens: number;
  /**
   * Which tier the last compaction that changed the messages ran: old tool
   * output cleared (no LLM call), or a summary. Absent until one has.
   */
  lastTier?: "clear" | "summarize";
}
export type AttachOptions = {
  onStateChange?: (state: CompactorState) => void;
  /**
   * Threshold compactions start in the background when the context passes
   * this fraction of the threshold (default `0.8`; `false`: never, each
   * compaction blocks the next request as in pi): the agent goes on with
   * the full context, and the summary goes in at its cut when it arrives
   * (at once when the agent is idle, else before the run's next request).
   * A request over the threshold before it arrives waits for it. It keeps
   * `keepRecentTokens` less the room left under the threshold (at least
   * half): what is added meanwhile stays after the summary too.
   */
  backgroundAt?: number | false;
} & (
  | {
      /** Saves every change of the agent's messages (one transaction per change). */
      store: AttachStore;
      /** The session the changes are saved to. */
      sessionId: string;
    }
  | { store?: undefined; sessionId?: undefined }
);
