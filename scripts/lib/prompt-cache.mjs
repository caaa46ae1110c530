// Prompt caching as the providers document it, for the local model
// (scripts/local-model.mjs) and the session-cost benchmark: a request whose
// beginning repeats the beginning of a recent request has that shared prefix
// served from the cache.
//
// OpenAI Chat Completions (`createPromptCache`), by OpenAI's prompt-caching
// guide and its "Prompt Caching 201" cookbook
// (https://developers.openai.com/api/docs/guides/prompt-caching):
//   - caching is automatic; only an exact prefix matches, in the order the
//     request is processed: tool definitions, then the messages in order;
//   - a prompt of fewer than 1,024 tokens is never served from the cache;
//   - a hit counts in increments of 128 tokens (1,024, 1,152, 1,280, …);
//   - what a request computed is cached for the next ones (kept here for
//     `ttlMs` after its last use: the guide speaks of 5–10 minutes of
//     inactivity);
//   - `usage.prompt_tokens_details.cached_tokens` reports the hit.
//
// Anthropic Messages (`createAnthropicCache`), by Anthropic's prompt-caching
// guide (https://docs.claude.com/en/docs/build-with-claude/prompt-caching):
//   - the prompt is read in the order tools, system, messages, block by
//     block; only a block marked `cache_control` is a breakpoint;
//   - a request writes the prefix up to each of its breakpoints to the
//     cache (`cache_creation_input_tokens`), unless that prefix is shorter
//     than the model's minimum (1,024 tokens for Claude Sonnet 4.5);
//   - it reads the longest cached prefix that ends at one of its
//     breakpoints or at one of the 20 blocks before it
//     (`cache_read_input_tokens`); what follows the last breakpoint is
//     plain input (`input_tokens`);
//   - an entry lives 5 minutes from its last use.
//
// Tokens are counted the way the local model counts them (a quarter of the
// characters), so a prefix of `c` characters is `floor(c / 4)` tokens.
import { hashText } from "../../www/local-tools.js";

export const MIN_CACHED_TOKENS = 1024;
export const CACHE_INCREMENT = 128;

/**
 * The request as the pieces a provider processes in order: the tools'
 * JSON, then one piece per message (its role, text, tool calls and tool
 * call id). Two requests share a prefix exactly when their pieces agree up
 * to a point.
 */
export function promptPieces(body) {
  const pieces = [];
  if (Array.isArray(body?.tools) && body.tools.length > 0) pieces.push(`tools:${JSON.stringify(body.tools)}`);
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    const content = typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? null);
    const calls = Array.isArray(m?.tool_calls) ? JSON.stringify(m.tool_calls) : "";
    pieces.push(`${m?.role}:${m?.tool_call_id ?? ""}:${content}:${calls}`);
  }
  return pieces;
}

/** Characters two piece lists share from their start. */
function sharedChars(a, b) {
  let chars = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) {
      chars += a[i].length;
      continue;
    }
    const x = a[i];
    const y = b[i];
    let k = 0;
    while (k < x.length && k < y.length && x.charCodeAt(k) === y.charCodeAt(k)) k++;
    return chars + k;
  }
  return chars;
}

/** The cached tokens of a prefix of `chars` characters, in a prompt of `promptTokens`. */
export function cachedTokensOf(chars, promptTokens) {
  const tokens = Math.min(Math.floor(chars / 4), promptTokens);
  if (promptTokens < MIN_CACHED_TOKENS || tokens < MIN_CACHED_TOKENS) return 0;
  return tokens - (tokens % CACHE_INCREMENT);
}

/**
 * A provider's prompt cache: `lookup(body, promptTokens, now)` answers how
 * many of the request's prompt tokens are served from the cache, and
 * remembers the request for the next ones.
 */
export function createPromptCache({ ttlMs = 10 * 60_000, entries: capacity = 64 } = {}) {
  /** Recent requests: { pieces, usedAt }, most recent last. */
  const entries = [];
  return {
    lookup(body, promptTokens, now = Date.now()) {
      for (let i = entries.length - 1; i >= 0; i--) if (now - entries[i].usedAt > ttlMs) entries.splice(i, 1);
      const pieces = promptPieces(body);
      let best = 0;
      let bestEntry;
      for (const e of entries) {
        const chars = sharedChars(pieces, e.pieces);
        if (chars > best) {
          best = chars;
          bestEntry = e;
        }
      }
      const cached = cachedTokensOf(best, promptTokens);
      if (cached > 0) bestEntry.usedAt = now;
      entries.push({ pieces, usedAt: now });
      if (entries.length > capacity) entries.shift();
      return cached;
    },
    clear() {
      entries.length = 0;
    },
  };
}

export const ANTHROPIC_MIN_CACHED_TOKENS = 1024;
export const ANTHROPIC_LOOKBACK_BLOCKS = 20;

/** A block's characters as the local model counts them (an image as 4,800). */
function blockChars(block) {
  switch (block?.type) {
    case "text":
      return String(block.text ?? "").length;
    case "thinking":
      return String(block.thinking ?? "").length;
    case "tool_use":
      return String(block.name ?? "").length + JSON.stringify(block.input ?? {}).length;
    case "tool_result":
      return typeof block.content === "string" ? block.content.length : (block.content ?? []).reduce((n, b) => n + blockChars(b), 0);
    case "image":
      return 4800;
    default:
      return JSON.stringify(block ?? null).length;
  }
}

/**
 * An Anthropic request as the blocks the API reads in order (tools, system,
 * messages): `{ key, chars, breakpoint }`, where `key` is the block without
 * its `cache_control` (plus its message's role), so that moving a
 * breakpoint does not change what is cached.
 */
export function anthropicBlocks(body) {
  const blocks = [];
  const add = (where, block, chars) => {
    const { cache_control, ...rest } = block ?? {};
    blocks.push({ key: `${where}:${JSON.stringify(rest)}`, chars, breakpoint: cache_control != null });
  };
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) add("tool", tool, JSON.stringify(tool).length);
  const system = typeof body?.system === "string" ? [{ type: "text", text: body.system }] : Array.isArray(body?.system) ? body.system : [];
  for (const block of system) add("system", block, blockChars(block));
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    const content = typeof m?.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m?.content) ? m.content : [];
    for (const block of content) add(m?.role, block, blockChars(block));
  }
  return blocks;
}

/**
 * Anthropic's prompt cache: `lookup(body, now)` answers
 * `{ input, read, written }` tokens for the request (`input` after the last
 * breakpoint or not cacheable) and remembers what it wrote.
 */
export function createAnthropicCache({ ttlMs = 5 * 60_000, minTokens = ANTHROPIC_MIN_CACHED_TOKENS } = {}) {
  /** Prefix hash -> last use. */
  const entries = new Map();
  return {
    lookup(body, now = Date.now()) {
      for (const [key, usedAt] of entries) if (now - usedAt > ttlMs) entries.delete(key);
      const blocks = anthropicBlocks(body);
      // Each prefix's identity (two chained hashes) and its characters.
      const ids = [];
      const chars = [];
      let a = 0x811c9dc5;
      let b = 0x9e3779b9;
      let total = 0;
      for (const block of blocks) {
        a = hashText(block.key, a);
        b = hashText(block.key, b);
        ids.push(`${a}:${b}`);
        total += block.chars;
        chars.push(total);
      }
      const tokens = (i) => (i < 0 ? 0 : Math.floor(chars[i] / 4));
      const breakpoints = blocks.map((block, i) => (block.breakpoint ? i : -1)).filter((i) => i >= 0);
      let hit = -1;
      for (const bp of breakpoints) {
        for (let i = bp; i >= Math.max(0, bp - ANTHROPIC_LOOKBACK_BLOCKS); i--) {
          if (i <= hit) break;
          if (entries.has(ids[i])) {
            hit = i;
            break;
          }
        }
      }
      if (hit >= 0) entries.set(ids[hit], now);
      const last = breakpoints.at(-1) ?? -1;
      let written = 0;
      if (last > hit && tokens(last) >= minTokens) {
        written = tokens(last) - tokens(hit);
        for (const bp of breakpoints) if (bp > hit && tokens(bp) >= minTokens) entries.set(ids[bp], now);
      }
      const read = tokens(hit);
      const all = Math.ceil(total / 4);
      return { input: all - read - written, read, written };
    },
    clear() {
      entries.clear();
    },
  };
}
