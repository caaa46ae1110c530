// The summarizer a Compactor calls, and the two it can make for an
// OpenAI-compatible or Anthropic endpoint.
import type { AgentMessage, Message, ProviderCompaction, Usage } from "./messages.js";

export type SummarizeKind = "history" | "turnPrefix" | "branch";
export type CompactionReason = "manual" | "threshold" | "overflow";
/** What the compactor asks the summarizer callback for. */
export interface SummarizeRequest {
  kind: SummarizeKind;
  systemPrompt: string;
  prompt: string;
  /** The summary's token budget. */
  maxTokens: number;
  /** Aborted when the compaction is cancelled or times out: pass it to `fetch`. */
  signal: AbortSignal;
  reason: CompactionReason;
  /**
   * The conversation as the model last saw it (pi-ai's Context: the last
   * summary, pinned messages, cleared outputs as placeholders, no failed
   * attempt): present when a summary request can repeat its prefix. `tools`
   * is `compact`'s `conversation.tools` as given: pi-ai tools from `attach`
   * (the agent's), the app's tool set, an object, from `aiSdkConversation`
   * (check with `Array.isArray`). `systemPrompt` is a string, except from
   * `aiSdkConversation` when its system messages are several or carry
   * `providerOptions`: then those messages, as its steps send them
   * (`instructions`; check with `typeof`).
   */
  context?: { systemPrompt?: string | Record<string, unknown> | Record<string, unknown>[]; messages: Message[]; tools?: Tool[] | Record<string, unknown> };
  /** The final user message asking for the summary, to send after context.messages. */
  instruction?: string;
  /**
   * For a summarizer asked once (`oneRequest: true`): the flat array's
   * messages the summary covers, the previous summary first when there is
   * one, then every message the compaction hides (a split turn's start
   * included). Absent from a branch summary's request.
   */
  covered?: AgentMessage[];
}
/**
 * A tool as pi-ai describes it to a model. pi-agent-core's `AgentTool`
 * objects fit; their other fields are ignored.
 */
export interface Tool {
  name: string;
  description: string;
  /** The parameters' JSON Schema. */
  parameters: object;
}
/**
 * The summary text, with what the call cost when the provider says, and
 * `provider` when the text is a provider's compaction (`anthropicCompaction`):
 * the summary message keeps it, so that the AI SDK adapter sends that
 * provider its own block (kept only when the summary is this one call's
 * text as given).
 */
export type SummarizeResult = string | { text: string; usage?: Usage; provider?: ProviderCompaction };
/**
 * The app's summarizer callback: `Compactor`'s `summarize` option. One with
 * `oneRequest: true` (a provider's compaction: `anthropicCompaction`,
 * `openAiResponsesCompaction`) is asked once for everything a compaction
 * hides, with no separate request for a split turn's start, and is given
 * `request.covered`.
 */
export type Summarizer = ((request: SummarizeRequest) => SummarizeResult | Promise<SummarizeResult>) & { oneRequest?: boolean };
/**
 * A summarizer made by `openAiSummarizer` or `anthropicSummarizer`. It
 * rejects with an `Error` carrying the provider's message and the HTTP
 * `status` (e.g. `"OpenAI-compatible summarizer: HTTP 429: Rate limit
 * reached…"`), with an `Error` whose `cause` is fetch's error on a network
 * failure, with an `Error` when the reply has no text or was refused or
 * ended in an error (the stop reason named), and with fetch's own
 * `AbortError` (never wrapped) when `request.signal` aborts.
 */
export type FetchSummarizer = (request: SummarizeRequest) => Promise<{ text: string; usage?: Usage }>;
export interface OpenAiSummarizerOptions {
  /**
   * The API root, without `/chat/completions`: `"https://api.openai.com/v1"`,
   * a local server's `"http://127.0.0.1:8080/v1"`, or the app's own proxy
   * (`"/llm/v1"` in a page), which keeps the API key out of the page.
   */
  baseUrl: string;
  /** Sent as `authorization: Bearer <apiKey>`; omit it behind a proxy. */
  apiKey?: string;
  model: string;
  /** Extra request headers; they replace the defaults of the same name. */
  headers?: Record<string, string> | Headers | [string, string][];
  /**
   * The body field for `maxTokens`. By default `max_completion_tokens` for
   * api.openai.com and Azure OpenAI (their reasoning models refuse
   * `max_tokens`) and `max_tokens` for any other server (what local
   * OpenAI-compatible servers understand). Set it when a proxy hides which.
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
}
/**
 * `apiKey` is sent as `x-api-key`. `baseUrl` (default
 * `"https://api.anthropic.com"`, without `/v1/messages`) may point at the
 * app's own proxy, which adds the key: then `apiKey` may be left out, so that
 * no key sits in the page. `headers` (e.g. `anthropic-beta`) replace the
 * defaults of the same name.
 */
export type AnthropicSummarizerOptions = {
  model: string;
  headers?: Record<string, string> | Headers | [string, string][];
} & ({ apiKey: string; baseUrl?: string } | { apiKey?: string; baseUrl: string });
/**
 * A summarizer that POSTs to `${baseUrl}/chat/completions` (OpenAI Chat
 * Completions, `stream: false`): the system prompt as a system message, the
 * prompt as a user message. The text is `choices[0].message.content`.
 *
 * With `request.context` and `request.instruction` it sends the prefix
 * form instead: `context`'s system prompt, messages and tools exactly as
 * pi-ai's `openai-completions` provider sends them (so the provider serves
 * them from its prompt cache), then the instruction as a user message
 * (`systemPrompt` and `prompt` are not sent), and no `tool_choice`. A
 * reply to it without text, calling a tool, or cut, refused or ended in an
 * error (`finish_reason` `length`, `content_filter`, `error`), is asked
 * again once in the serialized form. `context` is sent as pi-ai sends it
 * for a plain compatible server or api.openai.com with a non-reasoning
 * model; an assistant message counts as the summarizer's model's own when
 * its `api` is `"openai-completions"` and its `model` is `options.model`.
 * A context it cannot read, or `tools` that are not an array, gives the
 * serialized form.
 * @throws TypeError on bad options, naming the field.
 */
export function openAiSummarizer(options: OpenAiSummarizerOptions): FetchSummarizer;
/**
 * A summarizer that POSTs to `${baseUrl ?? "https://api.anthropic.com"}/v1/messages`
 * with `anthropic-version: 2023-06-01` and
 * `anthropic-dangerous-direct-browser-access: true` (Anthropic requires it
 * from a browser). The text is the reply's `text` blocks, joined by "\n".
 *
 * With `request.context` and `request.instruction` it sends the prefix
 * form instead: `system`, `tools` and `messages` exactly as pi-ai's
 * `anthropic` provider sends them, with its `cache_control` breakpoints
 * (the system prompt, the last tool, the last block of the last user-role
 * message), then the instruction as a user message with one more
 * breakpoint (`systemPrompt` and `prompt` are not sent), and no
 * `tool_choice`: the conversation's cached prefix is
 * read, not paid again. A reply to it without text, calling a tool, or cut
 * or refused (`stop_reason` `max_tokens`, `model_context_window_exceeded`,
 * `refusal`, `sensitive`), is asked again once in the serialized form. An assistant message counts as
 * the summarizer's model's own when its `api` is `"anthropic-messages"` and
 * its `model` is `options.model`. A context it cannot read, or `tools` that
 * are not an array, gives the serialized form.
 * @throws TypeError on bad options, naming the field.
 */
export function anthropicSummarizer(options: AnthropicSummarizerOptions): FetchSummarizer;
/**
 * A summarizer that asks Anthropic's on-demand compaction for the summary
 * ("Compaction on demand", platform.claude.com/docs/en/build-with-claude/compaction-on-demand):
 * a POST to `/v1/messages` as `anthropicSummarizer`'s, with `anthropic-beta:
 * compact-2026-09-04` and `compaction: { type: "summarize" }`. With
 * `request.context` it sends the conversation as pi-ai sent it (the
 * provider's prompt cache serves it) and no instruction, so the provider
 * summarizes the whole conversation (the messages the compaction keeps
 * are sent again after the summary); without, the serialized transcript as
 * one user message. The answer is the `compaction` block (`stop_reason:
 * "compaction"`): its text is the summary, and the block itself comes back
 * as `provider`, which the AI SDK adapter sends to Anthropic models in
 * place of what it covers. Any other stop reason, or a block without text,
 * is a failure (the compaction changes nothing). The usage is the sum of
 * `usage.iterations`. Options as `anthropicSummarizer`'s; a `headers`
 * entry `anthropic-beta` replaces the beta (list it there too).
 * @throws TypeError on bad options, naming the field.
 */
export function anthropicCompaction(
  options: AnthropicSummarizerOptions,
): ((request: SummarizeRequest) => Promise<{ text: string; usage?: Usage; provider: ProviderCompaction }>) & { readonly oneRequest: true };
/**
 * `apiKey` is sent as `authorization: Bearer <apiKey>`. `baseUrl` (default
 * `"https://api.openai.com/v1"`, without `/responses/compact`) may point at
 * the app's own proxy, which adds the key: then `apiKey` may be left out.
 */
export type OpenAiResponsesCompactionOptions = {
  model: string;
  headers?: Record<string, string> | Headers | [string, string][];
  /**
   * The summarizer for requests that need readable text, which OpenAI's
   * compaction never gives: a branch summary (`summarizeBranch`, and the
   * AI SDK conversation's summary for another model of what the item
   * covers). Without it those requests reject.
   */
  readable?: Summarizer;
} & ({ apiKey: string; baseUrl?: string } | { apiKey?: string; baseUrl: string });
/**
 * A summarizer that asks OpenAI's compaction endpoint (`POST
 * /responses/compact`, "Compaction" in OpenAI's API guide,
 * developers.openai.com/api/docs/guides/compaction) to compact what the
 * compaction hides: `{ model, input }`, the input being `request.covered`
 * as Responses input items (user messages with `input_text` and
 * `input_image` parts, an assistant's texts, `function_call` and
 * `function_call_output` items; thinking is not sent; a previous summary
 * that is OpenAI's compaction as its user messages and item). OpenAI
 * answers with those user messages, word for word, and one encrypted
 * compaction item. The item comes back as `provider` (the part
 * `@ai-sdk/openai` carries, `{ type: "custom", kind: "openai.compaction" }`,
 * with the user messages as `input`), which the AI SDK adapter sends to
 * OpenAI's Responses models in place of what it covers; the text is a note
 * that only OpenAI can read the summary (pi-ai cannot send the item: use it
 * with the AI SDK). A reply without a compaction item, or an HTTP error,
 * fails the compaction, which changes nothing. Usage as pi-ai maps the
 * Responses API's.
 * @throws TypeError on bad options, naming the field.
 */
export function openAiResponsesCompaction(
  options: OpenAiResponsesCompactionOptions,
): ((request: SummarizeRequest) => Promise<SummarizeResult>) & { readonly oneRequest: true };
