// Compaction settings, and the model they are resolved for.

/** A pi-ai `Model` as far as the compactor reads it. */
export interface ModelLike {
  provider: string;
  id: string;
  contextWindow?: number;
}
/** Compaction settings as given (see `resolveSettings`). */
export interface CompactionSettingsInput {
  enabled?: boolean;
  reserveTokens?: number;
  keepRecentTokens?: number;
  modelOverrides?: Record<string, { enabled?: boolean; reserveTokens?: number; keepRecentTokens?: number }>;
  /** The Compactor's cheap first tier (`false` switches it off); see `ToolOutputClearingSettings`. */
  toolOutputClearing?: boolean | ToolOutputClearingSettings;
}
/**
 * Clearing old tool output before summarizing (automatic `threshold`
 * compactions only): the last `protectTurns` user turns are never cleared,
 * the newest `protectTokens` of tool output before them are kept, every older
 * tool result is cleared (except pinned ones and tools in `neverClear`), if
 * that frees at least `minFreedTokens`. When the context is then at or under
 * the threshold no summarizer is called.
 */
export interface ToolOutputClearingSettings {
  /** Default true. */
  enabled?: boolean;
  /** Default 40,000. */
  protectTokens?: number;
  /** Default 20,000. */
  minFreedTokens?: number;
  /** Default 2. */
  protectTurns?: number;
  /** Tool names whose output is never cleared. Default none. */
  neverClear?: string[];
}
/** Resolved compaction settings. */
export interface CompactionSettings {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
}
/**
 * Compaction settings with defaults (`enabled: true`, `reserveTokens: 16384`,
 * `keepRecentTokens: 20000`) and `modelOverrides["provider/modelId"]`
 * falling back field by field. Invalid values are a `TypeError`/`RangeError`
 * naming the field; with a `contextWindow`, settings that cannot work with it
 * (`reserveTokens >= contextWindow`, or `reserveTokens + keepRecentTokens >=
 * contextWindow`) are a `RangeError` naming the three numbers.
 */
export function resolveSettings(
  settings?: CompactionSettingsInput,
  options?: { model?: string | ModelLike; contextWindow?: number },
): CompactionSettings;
