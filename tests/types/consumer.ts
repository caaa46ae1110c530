// Compiled with `tsc --strict --noEmit` (and skipLibCheck off, so the
// package's own declarations are checked too) in `npm test`: the
// declarations describe real types, not `any`.
import {
  agentMessagesToChatMessages,
  convertToLlm,
  initSync,
  transformContext,
  type AgentMessage,
  type AssistantMessage,
  type CompactionDivider,
  type CompactionSummaryMessage,
  type Message,
  type UserMessage,
} from "agent-compaction";

const user: UserMessage = { role: "user", content: "hello", timestamp: 1 };
// A standing rule, sent to the model after every summary.
const rule: UserMessage = { role: "user", content: "never touch vendor/", timestamp: 2, pinned: true };
void rule;
const summary: CompactionSummaryMessage = {
  role: "compactionSummary",
  summary: "## Goal\nship",
  tokensBefore: 120_000,
  timestamp: 2,
  details: { readFiles: ["a.ts"], modifiedFiles: [] },
};
const assistant: AssistantMessage = {
  role: "assistant",
  content: [{ type: "toolCall", id: "t1", name: "read", arguments: { path: "a.ts" } }],
  api: "openai-completions",
  provider: "openai",
  model: "gpt-4o",
  usage: {
    input: 1,
    output: 2,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 3,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  },
  stopReason: "toolUse",
  timestamp: 3,
};
const messages: AgentMessage[] = [user, summary, assistant];

// transformContext keeps the element type.
const context: AgentMessage[] = transformContext(messages);
const onlyUsers: UserMessage[] = transformContext([user]);

// convertToLlm gives pi-ai's Message type.
const llm: Message[] = convertToLlm(context);

// Display: summaries are gone from the type too, unless a divider is asked for.
const shown = agentMessagesToChatMessages(messages);
for (const m of shown) {
  // @ts-expect-error a compactionSummary can no longer be in the display list
  const s: CompactionSummaryMessage = m;
  void s;
}
const withDividers = agentMessagesToChatMessages(messages, { divider: true });
const dividers: CompactionDivider[] = withDividers.filter(
  (m): m is CompactionDivider => m.role === "compactionDivider",
);
// A divider setting the user toggles (a boolean, not the literal `true`):
// the rows may be dividers, as they are at run time when it is on.
declare const showDividers: boolean;
const toggled = agentMessagesToChatMessages(messages, { divider: showDividers });
const toggledDividers: CompactionDivider[] = toggled.filter((m): m is CompactionDivider => m.role === "compactionDivider");
const options = { divider: true };
const fromOptions: number[] = agentMessagesToChatMessages(messages, options).map((m) =>
  m.role === "compactionDivider" ? m.tokensBefore : m.timestamp,
);
// @ts-expect-error still no summary among the rows
const toggledSummary: CompactionSummaryMessage[] = toggled.filter((m) => m.role === "compactionSummary");
// With `divider: false` there are no dividers to look for.
const noDividers = agentMessagesToChatMessages(messages, { divider: false });
// @ts-expect-error no divider among these rows
void noDividers.filter((m): m is CompactionDivider => m.role === "compactionDivider");
void [toggledDividers, fromOptions, toggledSummary];

// App-defined roles are welcome.
interface Note {
  role: "note";
  text: string;
  timestamp: number;
}
const notes: (AgentMessage | Note)[] = [user, { role: "note", text: "x", timestamp: 4 }];
const noteContext: (AgentMessage | Note)[] = transformContext(notes);

// Not `any`: wrong arguments do not compile.
// @ts-expect-error not an array
transformContext(5);
// @ts-expect-error elements must be messages
convertToLlm([1, 2]);
// @ts-expect-error divider is a boolean
agentMessagesToChatMessages(messages, { divider: "yes" });
// @ts-expect-error a summary needs its text
const broken: CompactionSummaryMessage = { role: "compactionSummary", tokensBefore: 1, timestamp: 1 };

// Manual loading stays available.
const bytes: BufferSource = new Uint8Array();
void (() => initSync({ module: bytes }));

void [onlyUsers, llm, dividers, noteContext, broken];

// The Compactor's compaction API.
import {
  Compactor,
  openAiSummarizer,
  rebaseCompaction,
  type CompactionResult,
  type ToolOutputClearingResult,
  type BranchSummaryMessage,
  type CompactorEvent,
  type HistoryPage,
  type HistorySearch,
  type HistoryToolDefinition,
} from "agent-compaction";
const compactor = new Compactor({
  contextWindow: 200_000,
  summarize: openAiSummarizer({ baseUrl: "/proxy/v1", model: "m" }),
  fallback: "extractive",
  beforeCompact: (event) => (event.reason === "overflow" ? { cancel: true } : undefined),
  onEvent: (event: CompactorEvent) => {
    if (event.type === "compaction_end" && event.errorMessage) console.warn(event.errorMessage);
  },
});
async function useCompactor(): Promise<void> {
  const manual: CompactionResult = await compactor.compact(messages, { customInstructions: "x" });
  const kept: number = manual.firstKeptIndex;
  // A threshold compaction may clear old tool output instead of summarizing:
  // `tier` tells the two results apart.
  const auto: CompactionResult | ToolOutputClearingResult | undefined = await compactor.compact(messages, { reason: "threshold" });
  const freed: number = auto?.tier === "clear" ? auto.tokensFreed : (auto?.firstKeptIndex ?? 0);
  // @ts-expect-error an automatic compaction may have cleared instead of summarizing
  const summarized: CompactionResult | undefined = await compactor.compact(messages, { reason: "threshold" });
  const branch: BranchSummaryMessage = await compactor.summarizeBranch(messages, { fromId: "e1" });
  const busy: boolean = compactor.isCompacting;
  const quietly: boolean = compactor.isCompactingInBackground;
  // A loop of its own: one checkpoint after each answer and before each request.
  const needed: CompactionResult | ToolOutputClearingResult | undefined = await compactor.compactIfNeeded(messages, {
    backgroundAt: 0.8,
    onBackgroundEnd: () => void compactor.takeBackground(messages),
  });
  const next: readonly AgentMessage[] = needed ? needed.messages : messages;
  // A compaction of `messages` while the loop kept appending: put into the grown array.
  const grown: AgentMessage[] = [...messages, { role: "user", content: "more", timestamp: 3 }];
  const rebased = needed ? rebaseCompaction(needed, messages, grown) : undefined;
  const latest: readonly AgentMessage[] = rebased?.messages ?? grown;
  // @ts-expect-error the array the compaction started from is required
  rebaseCompaction(auto!, grown);
  // @ts-expect-error the fraction is a number
  await compactor.compactIfNeeded(messages, { backgroundAt: "80%" });
  // After an overflow: the failed attempt out, then the compaction the retry needs.
  await compactor.compactIfNeeded(messages.slice(0, -1), { reason: "overflow", willRetry: true });
  // @ts-expect-error a manual compaction is compact()'s
  await compactor.compactIfNeeded(messages, { reason: "manual" });
  compactor.abort();
  // Another model, or the same with another window: later checks use it.
  compactor.setModel({ provider: "openai", id: "gpt-4o-mini", contextWindow: 128_000 });
  compactor.setContextWindow(32_000);
  // @ts-expect-error the window is a number
  compactor.setContextWindow("32k");
  // @ts-expect-error an automatic compaction may resolve to undefined
  const notGuaranteed: CompactionResult = await compactor.compact(messages, { reason: "overflow" });
  // What a summary left out.
  const found: HistorySearch = compactor.searchHistory(messages, "E0502", { limit: 5 });
  const first = found.hits[0];
  const page: HistoryPage | undefined = first && compactor.readHistory(messages, first.ref, { maxChars: 2_000 });
  const more: number | null = page ? page.next : null;
  const tools: HistoryToolDefinition[] = compactor.historyTools();
  const answer: string = compactor.historyTool(messages, "search_history", { query: "E0502" });
  // @ts-expect-error only the two history tools
  compactor.historyTool(messages, "forget", {});
  void [kept, auto, freed, summarized, branch, busy, notGuaranteed, more, tools, answer];
}
void useCompactor;

// The IndexedDB session store.
import { SessionStore, ConflictError, type SessionMeta, type SessionStoreError, type SessionStoreErrorName } from "agent-compaction";
async function useStore(): Promise<void> {
  const store: SessionStore = await SessionStore.open({ name: "app" });
  const meta: SessionMeta = await store.createSession({ title: "Chat", model: "anthropic/claude-sonnet-4-5" });
  const saved: SessionMeta = await store.save(meta.id, messages);
  const revision: number = saved.revision;
  try {
    await store.save(meta.id, messages, { replace: true });
  } catch (e) {
    if (e instanceof ConflictError) {
      const again: AgentMessage[] = await store.load(meta.id);
      void again;
    }
    // Store errors are told apart by their stable name.
    const name: SessionStoreErrorName = (e as SessionStoreError).name;
    if (name === "QuotaExceededError" || name === "SessionNotFoundError") void name;
    // @ts-expect-error not one of the store's error names
    const wrong: SessionStoreErrorName = "QuotaError";
    void wrong;
  }
  const context: AgentMessage[] = await store.loadContext(meta.id);
  const newestFirst: SessionMeta[] = await store.list();
  await store.rename(meta.id, "Renamed");
  await store.delete(meta.id);
  const same: typeof ConflictError = SessionStore.ConflictError;
  // @ts-expect-error a session id is a string
  await store.load(42);
  store.close();
  void [revision, context, newestFirst, same];
}
void useStore;

// The message shapes, settings and events reject what the package does not
// accept.
import { resolveSettings, type AnyMessage, type SessionChangeEvent } from "agent-compaction";
// @ts-expect-error "system" is not a role of the flat array's known messages
const systemPrompt: AgentMessage = { role: "system", content: "be brief", timestamp: 1 };
// @ts-expect-error a tool result's role is "toolResult"
const toolResult: Message = { role: "tool", toolCallId: "t1", toolName: "read", content: [], isError: false, timestamp: 1 };
// An app's own role is welcome where any message is, but not with a known role's wrong shape.
const appRole: AnyMessage = { role: "note", timestamp: 1 };
// @ts-expect-error reserveTokens is a number
resolveSettings({ reserveTokens: "16k" });
// @ts-expect-error neverClear is a list of tool names
new Compactor({ contextWindow: 1000, settings: { toolOutputClearing: { neverClear: "read" } } });
// @ts-expect-error the estimator is "calibrated" or "pi"
new Compactor({ contextWindow: 1000, estimator: "o200k" });
const onEvent = (event: CompactorEvent): void => {
  // @ts-expect-error the compactor's events are compaction_start, compaction_end, hook_error and save_error
  if (event.type === "compaction_finished") void event;
  if (event.type === "hook_error") {
    // @ts-expect-error hook_error names one of the two hooks
    const hook: "beforeCompact" = event.hook;
    void hook;
  }
};
// @ts-expect-error a compaction_start event says why
const started: CompactorEvent = { type: "compaction_start", reason: "automatic" };
const onChange = (event: SessionChangeEvent): void => {
  // @ts-expect-error a session that changed elsewhere was "saved", not "updated"
  if (event.type === "updated") void event;
  // @ts-expect-error only a fork has a source
  if (event.type === "saved") void event.sourceId;
};
void [systemPrompt, toolResult, appRole, onEvent, started, onChange];

// Every event, narrowed by a `switch` on its `type` (exhaustive: a new event
// type the switch does not handle fails the `never` line).
import type { ConflictError as ConflictErrorClass } from "agent-compaction";
export function describeCompactorEvent(event: CompactorEvent): string {
  switch (event.type) {
    case "compaction_start":
      return `compacting (${event.reason})`;
    case "compaction_end": {
      if (event.errorMessage !== undefined) return event.errorMessage;
      // A threshold compaction that freed too little: no other until the context passes this.
      const quiet: number | undefined = event.quietUntil;
      if (quiet !== undefined) return `freed too little; quiet until ${quiet} tokens`;
      const result = event.result;
      if (result === undefined) return event.aborted ? "cancelled" : "nothing to compact";
      // `tier` tells the two results apart.
      if (result.tier === "clear") return `cleared ${result.toolCallIds.length} outputs (${event.tier})`;
      return `summarized by ${result.summarizedBy}: ${result.tokensBefore} -> ${result.tokensAfter}${event.willRetry ? ", retrying" : ""}`;
    }
    case "hook_error":
      return `${event.hook}: ${event.error.message}`;
    case "save_error":
      return `not saved: ${event.error.name}: ${event.error.message}`;
    default: {
      const unhandled: never = event;
      return unhandled;
    }
  }
}
export function describeSessionChange(event: SessionChangeEvent): string {
  switch (event.type) {
    case "created":
    case "saved":
    case "renamed":
    case "imported":
      return `${event.sessionId} at revision ${event.revision}`;
    case "forked":
      return `${event.sessionId} forked from ${event.sourceId}`;
    case "deleted":
      // @ts-expect-error a deleted session has no revision
      return `${event.sessionId} deleted at ${event.revision}`;
    default: {
      const unhandled: never = event;
      return unhandled;
    }
  }
}

// The store's errors, told apart by their `name`.
export function describeStoreError(error: SessionStoreError): string {
  switch (error.name) {
    case "ConflictError":
      return "reload, reapply, save";
    case "QuotaExceededError":
      return "free some space";
    case "SessionNotFoundError":
    case "SessionExistsError":
    case "RefusedDropError":
    case "UpgradeBlockedError":
    case "OpenFailedError":
    case "StoreClosedError":
    case "StorageError":
    case "LockTimeoutError":
    case "ConnectionLostError":
      return error.message;
    default: {
      const unhandled: never = error.name;
      return unhandled;
    }
  }
}
declare const conflict: ConflictErrorClass;
const conflictName: "ConflictError" = conflict.name;
const asStoreError: SessionStoreError = conflict;
// @ts-expect-error a ConflictError is named "ConflictError"
const misnamed: "QuotaExceededError" = conflict.name;
void [conflictName, asStoreError, misnamed];
