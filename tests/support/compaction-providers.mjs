// Local servers for the providers' own compaction, following their
// documented wire formats, for tests with the real @ai-sdk/anthropic and
// @ai-sdk/openai providers:
//
// - Anthropic's Messages API (POST /v1/messages), threshold compaction:
//   `context_management.edits: [{ type: "compact_20260112", trigger }]`
//   with the beta `compact-2026-01-12` ("Compaction at a token threshold",
//   platform.claude.com/docs/en/build-with-claude/compaction-threshold).
//   Once the input reaches the trigger (at least 50,000 tokens, 150,000 by
//   default), the answer starts with a `compaction` block `{ type, content }`
//   (the readable summary), then the reply; `usage.iterations` lists the
//   compaction and the message. Streamed: the block's `content_block_start`
//   with `content: null`, one `compaction_delta` with the whole summary,
//   `content_block_stop`, then the reply's blocks. A later request must send
//   the block back unchanged (400 `compaction_content_mismatch` otherwise),
//   one block with content at most (400 `compaction_block_ambiguous`), and
//   the server reads nothing before it.
//   On-demand compaction ("Compaction on demand",
//   platform.claude.com/docs/en/build-with-claude/compaction-on-demand):
//   `compaction: { type: "summarize" }` with the beta `compact-2026-09-04`
//   answers with one signed block `{ type, content, signature }` and
//   `stop_reason: "compaction"`, its cost in `usage.iterations` (top-level
//   counts 0); `stop_sequences` or a forced `tool_choice` are refused. A
//   later request carrying a signed block must send it first, content and
//   signature unchanged (400 `compaction_block_misplaced`,
//   `compaction_signature_invalid`). `state.refuseCompaction` makes the
//   next on-demand request answer `max_tokens` with no block, and
//   `state.failThreshold` the next threshold compaction fail: a block with
//   `content: null` (the summarizer wrote none), then the reply over the
//   whole context.
// - OpenAI's Responses API (POST /v1/responses), server-side compaction:
//   `context_management: [{ type: "compaction", compact_threshold }]`
//   ("Compaction", developers.openai.com/api/docs/guides/compaction). Past
//   the threshold the output holds, after the reply, an opaque item
//   `{ type: "compaction", id, encrypted_content }`; a later input sends it
//   back (or an `item_reference` to it when responses are stored) and the
//   server reads nothing before it.
//   POST /v1/responses/compact (`responses.compact` in OpenAI's API
//   reference) takes `{ model, input }` and answers `{ id, object:
//   "response.compaction", output, usage }`: every user message of the
//   input, as it came, then one compaction item. Input items are checked as
//   the API does: known types, a `function_call_output` only after its
//   `function_call`, a compaction item only as issued. `state.compacted`
//   records what each compaction covered; `state.refuseCompact` makes the
//   next one answer HTTP 500.
//
// Tokens are counted as characters / 4. The reply says what the model
// read: `saw summary: yes|no; context tokens: N; last: <the user's last text>`.

const SUMMARY_PREFIX = "<summary>Provider summary #";

/** Tokens of a JSON-able value, roughly as a model would count its text. */
function tokensOf(value) {
  return Math.ceil(JSON.stringify(value ?? "").length / 4);
}

async function readJson(req) {
  let body = "";
  for await (const chunk of req) body += chunk;
  return JSON.parse(body);
}

function sendJson(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

function sendEvents(res, events) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

const lastUserText = (texts) => texts.at(-1)?.slice(0, 80) ?? "";

/** The Anthropic Messages API with threshold compaction. */
export function anthropicServer() {
  const state = { requests: [], issued: [], compactions: 0, refuseCompaction: false, failThreshold: false };
  const error = (res, code, message) => (
    sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message, ...(code ? { details: { error_code: code } } : {}) } }), true
  );
  const handler = async (req, res, url) => {
    if (req.method !== "POST" || url.pathname !== "/v1/messages") return false;
    const body = await readJson(req);
    const betas = String(req.headers["anthropic-beta"] ?? "").split(",").map((s) => s.trim());
    state.requests.push({ body, betas });
    // Where the conversation starts for the model: the last compaction block.
    let startAt = null;
    const blocks = [];
    body.messages.forEach((m, i) => {
      if (!Array.isArray(m.content)) return;
      m.content.forEach((b, j) => {
        if (b.type === "compaction") blocks.push({ b, i, j });
      });
    });
    if (blocks.length > 0) {
      if (!betas.includes("compact-2026-01-12") && !betas.includes("compact-2026-09-04")) {
        return error(res, undefined, "messages: Input tag 'compaction' found using 'type' does not match any of the expected tags");
      }
      if (blocks.filter(({ b }) => b.content != null).length > 1) {
        return error(res, "compaction_block_ambiguous", "messages holds more than one compaction block with content; send only the block the conversation returned last");
      }
      const { b, i, j } = blocks.at(-1);
      const issued = state.issued.find((x) => x.content === b.content);
      const extra = Object.keys(b).filter((k) => !["type", "content", "signature", "cache_control"].includes(k));
      if (!issued || extra.length > 0) return error(res, "compaction_content_mismatch", "the compaction block was altered");
      if (issued.signature !== undefined || b.signature !== undefined) {
        if (b.signature !== issued.signature) return error(res, "compaction_signature_invalid", "the compaction block's signature does not match its content");
        if (!betas.includes("compact-2026-09-04")) return error(res, undefined, "messages: Input tag 'compaction' found using 'type' does not match any of the expected tags");
        if (i !== 0 || j !== 0) return error(res, "compaction_block_misplaced", "the compaction block must be the first content block of the first message");
      }
      startAt = { i, j };
    }
    const read = startAt ? body.messages.slice(startAt.i) : body.messages;
    const inputTokens = tokensOf(body.system) + tokensOf(read) + tokensOf(body.tools);
    // Each user text block (the SDK joins consecutive user messages into one).
    const userTexts = read
      .filter((m) => m.role === "user")
      .flatMap((m) => (typeof m.content === "string" ? [m.content] : m.content.filter((c) => c.type === "text").map((c) => c.text)));
    if (body.compaction !== undefined) {
      if (!betas.includes("compact-2026-09-04")) return error(res, undefined, "compaction: this parameter requires the anthropic-beta header compact-2026-09-04");
      if (body.compaction?.type !== "summarize") return error(res, undefined, "compaction.type: must be \"summarize\"");
      if (body.context_management) return error(res, undefined, "compaction and context_management cannot be used together");
      if (body.stop_sequences || ["any", "tool"].includes(body.tool_choice?.type)) return error(res, undefined, "compaction: stop_sequences and a forced tool_choice are not supported");
      const last = body.messages.at(-1);
      if (last?.role === "assistant" && Array.isArray(last.content) && last.content.some((c) => c.type === "tool_use")) {
        return error(res, "compaction_incomplete_turn", "the last assistant turn ends with a tool_use block that has no result");
      }
      const iterations = [{ type: "compaction", input_tokens: inputTokens, output_tokens: 0 }];
      if (state.refuseCompaction) {
        state.refuseCompaction = false;
        sendJson(res, 200, { id: `msg_${state.requests.length}`, type: "message", role: "assistant", model: body.model, content: [], stop_reason: "max_tokens", stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0, iterations } });
        return true;
      }
      const summary = `${SUMMARY_PREFIX}${++state.compactions} (on demand): the user asked about ${userTexts.slice(0, 3).join(" / ").slice(0, 200)}</summary>`;
      const signature = `sig-${state.compactions}-${summary.length}`;
      state.issued.push({ content: summary, signature });
      iterations[0].output_tokens = tokensOf(summary);
      sendJson(res, 200, {
        id: `msg_${state.requests.length}`, type: "message", role: "assistant", model: body.model,
        content: [{ type: "compaction", content: summary, signature }],
        stop_reason: "compaction", stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, iterations },
      });
      return true;
    }
    const edit = body.context_management?.edits?.find((e) => e.type === "compact_20260112");
    if (edit && !betas.includes("compact-2026-01-12")) return error(res, undefined, "context_management: compact_20260112 requires the beta compact-2026-01-12");
    const trigger = edit?.trigger?.value ?? 150_000;
    if (edit && trigger < 50_000) return error(res, undefined, "context_management.edits[0].trigger.value: must be at least 50000");
    const compacting = edit && inputTokens >= trigger;
    const content = [];
    const iterations = [];
    let contextTokens = inputTokens;
    if (compacting && state.failThreshold) {
      state.failThreshold = false;
      content.push({ type: "compaction", content: null });
      iterations.push({ type: "compaction", input_tokens: inputTokens, output_tokens: 0 });
    } else if (compacting) {
      const summary = `${SUMMARY_PREFIX}${++state.compactions}: the user asked about ${userTexts.slice(0, 3).join(" / ").slice(0, 200)}</summary>`;
      state.issued.push({ content: summary });
      content.push({ type: "compaction", content: summary });
      iterations.push({ type: "compaction", input_tokens: inputTokens, output_tokens: tokensOf(summary) });
      contextTokens = tokensOf(summary) + tokensOf(userTexts.at(-1));
    }
    const summarized = content.some((b) => b.type === "compaction" && b.content !== null);
    const reply = `saw summary: ${startAt || summarized ? "yes" : "no"}; context tokens: ${contextTokens}; last: ${lastUserText(userTexts)}`;
    content.push({ type: "text", text: reply });
    iterations.push({ type: "message", input_tokens: contextTokens, output_tokens: tokensOf(reply) });
    const usage = { input_tokens: contextTokens, output_tokens: tokensOf(reply), iterations };
    const message = {
      id: `msg_${state.requests.length}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: "end_turn",
      stop_sequence: null,
      usage,
      context_management: { applied_edits: [] },
    };
    if (!body.stream) return sendJson(res, 200, message), true;
    const events = [["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { input_tokens: compacting ? inputTokens : contextTokens, output_tokens: 1 } } }]];
    content.forEach((block, index) => {
      if (block.type === "compaction") {
        events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "compaction", content: null } }]);
        events.push(["ping", { type: "ping" }]);
        events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "compaction_delta", content: block.content } }]);
      } else {
        events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
        events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }]);
      }
      events.push(["content_block_stop", { type: "content_block_stop", index }]);
    });
    events.push(["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage, context_management: { applied_edits: [] } }]);
    events.push(["message_stop", { type: "message_stop" }]);
    sendEvents(res, events);
    return true;
  };
  return { state, handler };
}

/** The OpenAI Responses API with server-side compaction. */
export function openAiResponsesServer() {
  const state = { requests: [], issued: new Map(), compactions: 0, responses: 0, compacted: [], refuseCompact: false };
  const error = (res, message) => (sendJson(res, 400, { error: { message, type: "invalid_request_error", param: "input", code: null } }), true);
  const textOf = (m) => (typeof m.content === "string" ? m.content : (m.content ?? []).map((c) => c.text ?? "").join(""));
  /** What is wrong with an input list, as the API would say; undefined when it is fine. */
  const invalid = (input) => {
    const calls = new Set();
    for (const [k, item] of input.entries()) {
      const type = item.type ?? (item.role ? "message" : undefined);
      if (type === "message") {
        if (!["user", "assistant", "system", "developer"].includes(item.role)) return `input[${k}].role: unknown role`;
        const parts = typeof item.content === "string" ? [] : item.content;
        if (!Array.isArray(parts)) return `input[${k}].content: a string or an array`;
        for (const p of parts) if (!["input_text", "input_image", "output_text"].includes(p?.type)) return `input[${k}].content: unknown part ${p?.type}`;
      } else if (type === "function_call") {
        if (typeof item.call_id !== "string" || typeof item.name !== "string" || typeof item.arguments !== "string") return `input[${k}]: a function_call needs call_id, name and arguments (a string)`;
        calls.add(item.call_id);
      } else if (type === "function_call_output") {
        if (!calls.has(item.call_id)) return `No tool call found for function call output with call_id ${item.call_id}.`;
      } else if (type === "compaction") {
        if (state.issued.get(item.id) !== item.encrypted_content) return "Invalid compaction item: its encrypted content was not issued for this id";
      } else if (type !== "item_reference" && type !== "reasoning") return `input[${k}].type: unknown item type ${type}`;
    }
    return undefined;
  };
  const compact = async (req, res) => {
    const body = await readJson(req);
    state.requests.push({ body, compact: true });
    if (typeof body.model !== "string") return error(res, "Missing required parameter: 'model'.");
    if (!Array.isArray(body.input) || body.input.length === 0) return error(res, "input: a non-empty array of items");
    const wrong = invalid(body.input);
    if (wrong) return error(res, wrong);
    if (state.refuseCompact) {
      state.refuseCompact = false;
      return sendJson(res, 500, { error: { message: "The server had an error while processing your request.", type: "server_error", param: null, code: null } }), true;
    }
    const users = body.input.filter((i) => (i.type ?? "message") === "message" && i.role === "user");
    const id = `cmp_${++state.compactions}`;
    const previous = body.input.filter((i) => i.type === "compaction").map((i) => i.id);
    const encrypted = `enc-${state.compactions}-${Buffer.from(JSON.stringify(body.input)).toString("base64").slice(0, 160)}`;
    state.issued.set(id, encrypted);
    state.compacted.push({ id, input: body.input, previous });
    const inputTokens = tokensOf(body.input);
    const output = [...users, { id, type: "compaction", encrypted_content: encrypted }];
    const usage = { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: 120, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + 120 };
    return sendJson(res, 200, { id: `resp_cmp_${state.compactions}`, object: "response.compaction", created_at: 1_750_000_000, output, usage }), true;
  };
  const handler = async (req, res, url) => {
    if (req.method === "POST" && url.pathname === "/v1/responses/compact") return compact(req, res);
    if (req.method !== "POST" || url.pathname !== "/v1/responses") return false;
    const body = await readJson(req);
    state.requests.push({ body });
    const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
    // The last compaction item (or a reference to one): nothing before it is read.
    let start = 0;
    let found = false;
    for (let k = 0; k < input.length; k++) {
      const item = input[k];
      if (item.type === "compaction") {
        if (state.issued.get(item.id) !== item.encrypted_content) return error(res, "Invalid compaction item: its encrypted content was not issued for this id");
        start = k;
        found = true;
      } else if (item.type === "item_reference" && state.issued.has(item.id)) {
        start = k;
        found = true;
      }
    }
    const wrong = invalid(input);
    if (wrong) return error(res, wrong);
    const read = input.slice(start);
    const inputTokens = tokensOf(body.instructions) + tokensOf(read) + tokensOf(body.tools);
    const userTexts = read.filter((m) => m.role === "user").map(textOf);
    const threshold = body.context_management?.find((c) => c.type === "compaction")?.compact_threshold;
    const compacting = threshold !== undefined && inputTokens >= threshold;
    const n = ++state.responses;
    const reply = `saw summary: ${found || compacting ? "yes" : "no"}; context tokens: ${inputTokens}; last: ${lastUserText(userTexts)}`;
    const output = [
      { id: `msg_${n}`, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: reply, annotations: [] }] },
    ];
    if (compacting) {
      const id = `cmp_${++state.compactions}`;
      const encrypted = `enc-${state.compactions}-${Buffer.from(userTexts.slice(0, 3).join("|")).toString("base64").slice(0, 120)}`;
      state.issued.set(id, encrypted);
      output.push({ id, type: "compaction", encrypted_content: encrypted });
    }
    const usage = { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: tokensOf(reply), output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + tokensOf(reply) };
    const response = { id: `resp_${n}`, object: "response", created_at: 1_750_000_000 + n, status: "completed", model: body.model, output, usage, error: null, incomplete_details: null };
    if (!body.stream) return sendJson(res, 200, response), true;
    let seq = 0;
    const events = [
      ["response.created", { type: "response.created", sequence_number: seq++, response: { ...response, status: "in_progress", output: [] } }],
      ["response.in_progress", { type: "response.in_progress", sequence_number: seq++, response: { ...response, status: "in_progress", output: [] } }],
    ];
    output.forEach((item, output_index) => {
      if (item.type === "message") {
        events.push(["response.output_item.added", { type: "response.output_item.added", sequence_number: seq++, output_index, item: { ...item, status: "in_progress", content: [] } }]);
        events.push(["response.content_part.added", { type: "response.content_part.added", sequence_number: seq++, item_id: item.id, output_index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }]);
        events.push(["response.output_text.delta", { type: "response.output_text.delta", sequence_number: seq++, item_id: item.id, output_index, content_index: 0, delta: reply }]);
        events.push(["response.output_text.done", { type: "response.output_text.done", sequence_number: seq++, item_id: item.id, output_index, content_index: 0, text: reply }]);
        events.push(["response.content_part.done", { type: "response.content_part.done", sequence_number: seq++, item_id: item.id, output_index, content_index: 0, part: item.content[0] }]);
      } else {
        events.push(["response.output_item.added", { type: "response.output_item.added", sequence_number: seq++, output_index, item: { ...item, encrypted_content: item.encrypted_content.slice(0, 12) } }]);
      }
      events.push(["response.output_item.done", { type: "response.output_item.done", sequence_number: seq++, output_index, item }]);
    });
    events.push(["response.completed", { type: "response.completed", sequence_number: seq++, response }]);
    sendEvents(res, events);
    return true;
  };
  return { state, handler };
}
