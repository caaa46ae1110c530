// Prompt caching as OpenAI documents it for Chat Completions, for the local
// model (scripts/local-model.mjs) and the session-cost benchmark: a request
// whose beginning repeats the beginning of a recent request has that shared
// prefix served from the cache.
//
// The rules followed (OpenAI's prompt-caching guide and its "Prompt Caching
// 201" cookbook, https://developers.openai.com/api/docs/guides/prompt-caching):
//   - caching is automatic; only an exact prefix matches, in the order the
//     request is processed: tool definitions, then the messages in order;
//   - a prompt of fewer than 1,024 tokens is never served from the cache;
//   - a hit counts in increments of 128 tokens (1,024, 1,152, 1,280, …);
//   - what a request computed is cached for the next ones (kept here for
//     `ttlMs` after its last use: the guide speaks of 5–10 minutes of
//     inactivity);
//   - `usage.prompt_tokens_details.cached_tokens` reports the hit.
//
// Tokens are counted the way the local model counts them (a quarter of the
// characters), so a prefix of `c` characters is `floor(c / 4)` tokens.

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
