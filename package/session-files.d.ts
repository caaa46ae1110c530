// pi's session files (JSONL) in and out of the flat message array.
import type { AgentMessage, AnyMessage } from "./messages.js";

/** What a pi session file says about the session besides its messages. */
export interface PiSessionInfo {
  /** The header's session id. */
  id: string;
  /** The format version of the file (1, 2 or 3), before pi's migrations. */
  version: number;
  /** The header's creation time (ISO 8601). */
  timestamp?: string;
  cwd?: string;
  /** The file this session was forked from. */
  parentSession?: string;
  /** A version-1 header's model. */
  provider?: string;
  modelId?: string;
  /** pi's session name (its latest `session_info` entry). */
  title?: string;
  /** The model pi would resume with: the last model change or assistant message on the branch. */
  model?: { provider: string; modelId: string };
  /** pi's thinking level on the branch ("off" unless changed). */
  thinkingLevel?: string;
  /** Line numbers (1-based) of lines that are not valid JSON; pi skips them too. */
  skippedLines: number[];
}

/** Options of `messagesToPiSession`. A `PiSessionInfo` is accepted as it is. */
export interface PiSessionOptions {
  /** The session id; a fresh UUIDv7 by default. */
  id?: string;
  /** The working directory pi records; left out by default. */
  cwd?: string;
  /** The header's creation time; by default the first message's timestamp. */
  timestamp?: number | string;
  parentSession?: string;
  /** Written as pi's session name. */
  title?: string;
  /** Written as a final model change: "provider/modelId", `{ provider, modelId }` or a pi-ai `Model`. */
  model?: string | { provider: string; modelId: string } | { provider: string; id: string };
  /** Written as a final thinking-level change. */
  thinkingLevel?: string;
}

/**
 * Reads a pi session file (JSONL, format version 1, 2 or 3, as pi 0.73
 * loads it: malformed lines skipped, older versions migrated, the active
 * branch followed) into the flat message array. Each compaction becomes a
 * `compactionSummary` just before the first message it kept, so
 * `transformContext(messages)` is the context pi builds for the file.
 * Summaries come without the file-list tags and branch preamble pi stores
 * in their text (they are in `details`) when those are exactly what pi
 * adds; any other text is kept whole and marked `verbatim: true`, so that
 * `messagesToPiSession` gives pi its text back. The file's other branches,
 * `custom` and `label` entries, entry ids, and all but the last model and
 * thinking-level change are not kept.
 * @throws TypeError when `jsonl` is not a string.
 * @throws Error when the file has no session header or an entry on the
 * active branch cannot be read (the message names the line).
 */
export function piSessionToMessages(jsonl: string): {
  messages: AgentMessage[];
  session: PiSessionInfo;
};

/**
 * Writes the flat message array as a version-3 pi session file that pi
 * loads into the same LLM context, and that `piSessionToMessages` reads
 * back into an equal array.
 * @throws TypeError when `messages` is not an array of message objects, a
 * `compactionSummary` has no whole-millisecond `timestamp`, a summary is
 * not a string, an option has the wrong type, or the messages cannot be
 * serialized (cycles, BigInt).
 */
export function messagesToPiSession(
  messages: readonly AnyMessage[],
  options?: PiSessionOptions,
): string;
