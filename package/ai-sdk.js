// agent-compaction/ai-sdk: the binding between the AI SDK (the npm package
// `ai`, v7) and the flat array. It only converts and calls the Compactor:
// every compaction decision (threshold, cut point, summary, overflow text
// detection) stays in the core, reached through the package's public API.
//
// - fromModelMessages / toModelMessages: ModelMessage[] <-> pi-shaped
//   messages. What pi's shapes cannot hold rides in an `aiSdk` field pi
//   ignores; what pi code reads (text, tool calls, tool results as text)
//   is in pi's own fields. Each conversion is cached per message object
//   (messages are immutable once appended), so a step converts only what
//   is new.
// - aiSdkConversation: owns the flat array for generateText / streamText /
//   ToolLoopAgent (`prepareStep`, `run` with one retry on overflow, saves).
// - aiSdkSummarizer: a Compactor summarizer calling the app's AI SDK model.
// - toUIMessages / fromUIMessages: what a useChat app shows and stores.
//
// `ai` is an optional peer dependency: it is imported (dynamically) only by
// aiSdkSummarizer, by run() when an error needs classifying, and by
// fromUIMessages.
import { agentMessagesToChatMessages, Compactor, convertToLlm, estimateTokens, isContextOverflow, rebaseCompaction } from "agent-compaction";

/** pi 0.73's text when an overflow follows a compact-and-retry (the core's agent_flow::RECOVERY_FAILED). */
export const OVERFLOW_RECOVERY_FAILED =
  "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

/** The providerOptions key under which a pi-only message rides through the SDK. */
export const PROVIDER_OPTIONS_KEY = "agentCompaction";

const ZERO_USAGE = Object.freeze({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 }),
});
const zeroUsage = () => ({ ...ZERO_USAGE, cost: { ...ZERO_USAGE.cost } });

// ---------------------------------------------------------------------------
// Storable data: the SDK accepts bytes and URL objects; the flat array must
// be JSON (the store, pi session files). Encoded with a marker, decoded back.
// An object of the app's whose single key is a marker is wrapped in ESCAPE,
// so that every JSON value comes back as it was.

const BYTES = "$aiSdkBytes";
const BUFFER = "$aiSdkArrayBuffer";
const URL_KEY = "$aiSdkUrl";
const ESCAPE = "$aiSdkObject";
const MARKERS = [BYTES, BUFFER, URL_KEY, ESCAPE];

function toBase64(bytes) {
  if (typeof bytes.toBase64 === "function") return bytes.toBase64();
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}
function fromBase64(text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/**
 * `v` as JSON data. `where` names it in errors: a cycle cannot be stored
 * (nor walked), so it is a TypeError naming the key that closes it.
 */
function storable(v, where) {
  const path = [];
  const open = new Map(); // the objects being copied -> the path's length where each is
  const pathOf = (n) => path.slice(0, n).map((k) => (typeof k === "number" ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`)).join("");
  const walk = (v) => {
    if (v === null || typeof v !== "object") return v;
    if (v instanceof Uint8Array) return { [BYTES]: toBase64(v) };
    if (v instanceof ArrayBuffer) return { [BUFFER]: toBase64(new Uint8Array(v)) };
    if (typeof URL !== "undefined" && v instanceof URL) return { [URL_KEY]: v.href };
    if (open.has(v)) {
      // The object it refers back to is named without `where`'s "caller: ".
      const within = where.slice(where.indexOf(": ") + 2);
      throw new TypeError(`${where}${pathOf(path.length)} refers back to ${within}${pathOf(open.get(v))} (a cycle): a part must be JSON data`);
    }
    open.set(v, path.length);
    let out;
    if (Array.isArray(v)) {
      out = v.map((x, i) => {
        path.push(i);
        const y = walk(x);
        path.pop();
        return y;
      });
    } else {
      out = {};
      for (const k of Object.keys(v)) {
        if (v[k] === undefined) continue;
        path.push(k);
        own(out, k, walk(v[k]));
        path.pop();
      }
      const keys = Object.keys(out);
      if (keys.length === 1 && MARKERS.includes(keys[0])) out = { [ESCAPE]: out };
    }
    open.delete(v);
    return out;
  };
  return walk(v);
}
function revived(v) {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(revived);
  const keys = Object.keys(v);
  if (keys.length === 1) {
    if (keys[0] === BYTES) return fromBase64(v[BYTES]);
    if (keys[0] === BUFFER) {
      const b = fromBase64(v[BUFFER]);
      return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    }
    if (keys[0] === URL_KEY) return new URL(v[URL_KEY]);
    if (keys[0] === ESCAPE && v[ESCAPE] !== null && typeof v[ESCAPE] === "object" && !Array.isArray(v[ESCAPE])) {
      return revivedFields(v[ESCAPE]);
    }
  }
  return revivedFields(v);
}
function revivedFields(v) {
  const out = {};
  for (const k of Object.keys(v)) own(out, k, revived(v[k]));
  return out;
}
// Sets an own property, "__proto__" included (an assignment would set the
// object's prototype instead, and the key would be lost).
function own(o, k, value) {
  if (k === "__proto__") Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });
  else o[k] = value;
}

const isPlainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

/**
 * What pi code sees for a part pi cannot hold (estimates, cut points,
 * serializeConversation, the history search): its kind, and the text the
 * model reads in it when it has one. A tool call whose input is not an
 * object (an OpenAI custom tool's patch, an input that did not parse) and
 * a file given as text are counted and summarized by that text.
 */
function placeholder(part) {
  const what = [part.type, part.mediaType, part.filename ?? part.toolName].filter((x) => typeof x === "string").join(" ");
  return `[${what}]${readableText(part)}`;
}
function readableText(part) {
  let text;
  if (part.type === "tool-call") text = typeof part.input === "string" ? part.input : jsonText(part.input);
  else if (part.type === "file" && part.data?.type === "text") text = part.data.text;
  return typeof text === "string" && text !== "" ? `\n${text}` : "";
}
/** JSON text of a value already checked storable (no cycle), or undefined (a BigInt, undefined). */
function jsonText(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Tool outputs <-> pi tool-result content.

/** A tool output as pi's text; `where` names the part it is in (for JSON that cannot be written). */
function outputText(output, where) {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      try {
        return JSON.stringify(output.value) ?? "null";
      } catch (error) {
        // A cycle or a BigInt: the engine's own words say which.
        throw new TypeError(`${where}.output.value must be JSON data: ${String(error?.message).split("\n")[0]}`);
      }
    case "execution-denied":
      return output.reason ?? "Tool execution denied.";
    default:
      return placeholder(output);
  }
}

/** A tool-result part (checked: checkPart) at `where` -> the fields of a pi toolResult. */
function toolResultFromPart(part, where) {
  const output = part.output;
  const extra = {};
  let content;
  let isError = false;
  switch (output.type) {
    case "text":
    case "json":
    case "error-text":
    case "error-json":
      content = [{ type: "text", text: outputText(output, where) }];
      isError = output.type.startsWith("error");
      if (output.type !== "text") extra.output = output.type;
      break;
    case "execution-denied":
      content = [{ type: "text", text: outputText(output, where) }];
      isError = true;
      extra.output = output.type;
      if (output.reason === undefined) extra.noReason = true;
      break;
    case "content": {
      const parts = [];
      content = output.value.map((p, k) => {
        if (p.type === "text" && p.providerOptions === undefined) return parts.push(null), { type: "text", text: p.text };
        if (p.type === "text") return parts.push({ providerOptions: p.providerOptions }), { type: "text", text: p.text };
        // An image as pi holds it: base64 data with a full image media type.
        if (
          p.type === "file" && p.data?.type === "data" && typeof p.data.data === "string" &&
          typeof p.mediaType === "string" && p.mediaType.startsWith("image/") &&
          Object.keys(p).every((k) => k === "type" || k === "data" || k === "mediaType") &&
          Object.keys(p.data).length === 2
        ) {
          parts.push(null);
          return { type: "image", data: p.data.data, mimeType: p.mediaType };
        }
        parts.push({ part: storable(p, `${where}.output.value[${k}]`) });
        return { type: "text", text: placeholder(p) };
      });
      extra.output = "content";
      if (parts.some((p) => p !== null)) extra.parts = parts;
      break;
    }
    default:
      // A form this version does not know: kept whole, shown as text.
      content = [{ type: "text", text: placeholder(output) }];
      extra.outputWhole = storable(output, `${where}.output`);
  }
  if (output.providerOptions !== undefined) extra.outputProviderOptions = output.providerOptions;
  if (part.providerOptions !== undefined) extra.providerOptions = part.providerOptions;
  return { toolCallId: part.toolCallId, toolName: part.toolName, content, isError, extra };
}

function partFromToolResult(m) {
  const x = m.aiSdk ?? {};
  let output;
  if (x.outputWhole !== undefined) output = revived(x.outputWhole);
  else {
    const text = m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    switch (x.output) {
      case undefined:
        output = m.isError ? { type: "error-text", value: text } : { type: "text", value: text };
        break;
      case "json":
      case "error-json":
        output = { type: x.output, value: JSON.parse(text) };
        break;
      case "error-text":
        output = { type: "error-text", value: text };
        break;
      case "execution-denied":
        output = x.noReason ? { type: "execution-denied" } : { type: "execution-denied", reason: text };
        break;
      case "content":
        output = {
          type: "content",
          value: m.content.map((c, i) => {
            const e = x.parts?.[i];
            if (e?.part) return revived(e.part);
            const base = c.type === "image" ? { type: "file", data: { type: "data", data: c.data }, mediaType: c.mimeType } : { type: "text", text: c.text };
            return e?.providerOptions !== undefined ? { ...base, providerOptions: e.providerOptions } : base;
          }),
        };
        break;
      default:
        throw new TypeError(`messages: unknown aiSdk.output ${JSON.stringify(x.output)}`);
    }
    if (x.outputProviderOptions !== undefined) output.providerOptions = x.outputProviderOptions;
  }
  const part = { type: "tool-result", toolCallId: m.toolCallId, toolName: m.toolName, output };
  if (x.providerOptions !== undefined) part.providerOptions = x.providerOptions;
  return part;
}

// ---------------------------------------------------------------------------
// ModelMessage -> pi messages (one ModelMessage may give several: a tool
// message gives one toolResult per part).

// What a value is, for an error that says what it got: "a number", "null", "an array".
function kindOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  const t = typeof v;
  if (t === "undefined") return "undefined";
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const MODEL_ROLES = ["system", "user", "assistant", "tool"];

/**
 * Checks a ModelMessage's shape at `where` ("fromModelMessages: messages[1]")
 * before it is converted: its role, its content, each part an object with a
 * string type, and the fields of a part that become pi's own fields. What is
 * kept whole (an unknown part) is checked as it is copied (storable).
 */
function checkModelMessage(m, where) {
  if (!isObject(m)) throw new TypeError(`${where} must be a ModelMessage object, got ${kindOf(m)}`);
  if (!MODEL_ROLES.includes(m.role)) {
    const got = typeof m.role === "string" ? JSON.stringify(m.role) : kindOf(m.role);
    throw new TypeError(`${where}.role must be "system", "user", "assistant" or "tool", got ${got}`);
  }
  const content = m.content;
  if (m.role === "system") {
    if (typeof content !== "string") throw new TypeError(`${where}.content must be a string (a system message's text), got ${kindOf(content)}`);
    return;
  }
  if (m.role === "tool") {
    if (!Array.isArray(content)) throw new TypeError(`${where}.content must be an array of parts, got ${kindOf(content)}`);
  } else if (typeof content !== "string" && !Array.isArray(content)) {
    throw new TypeError(`${where}.content must be a string or an array of parts, got ${kindOf(content)}`);
  }
  if (Array.isArray(content)) for (let i = 0; i < content.length; i++) checkPart(content[i], `${where}.content[${i}]`, m.role);
}

function checkPart(p, where, role) {
  if (!isObject(p)) throw new TypeError(`${where} must be an object, got ${kindOf(p)}`);
  if (typeof p.type !== "string") throw new TypeError(`${where}.type must be a string, got ${kindOf(p.type)}`);
  const string = (k) => {
    if (typeof p[k] !== "string") throw new TypeError(`${where}.${k} must be a string, got ${kindOf(p[k])}`);
  };
  if (p.type === "text" && role !== "tool") string("text");
  else if (p.type === "reasoning" && role === "assistant") string("text");
  else if (p.type === "tool-call" && role === "assistant") string("toolCallId"), string("toolName");
  else if (p.type === "tool-result" && role !== "user") {
    string("toolCallId");
    string("toolName");
    checkOutput(p.output, `${where}.output`);
  }
}

/** A tool-result part's output: the forms whose value becomes pi's text or content. */
function checkOutput(o, where) {
  if (!isObject(o)) throw new TypeError(`${where} must be an object (a tool output), got ${kindOf(o)}`);
  if (typeof o.type !== "string") throw new TypeError(`${where}.type must be a string, got ${kindOf(o.type)}`);
  if ((o.type === "text" || o.type === "error-text") && typeof o.value !== "string") {
    throw new TypeError(`${where}.value must be a string, got ${kindOf(o.value)}`);
  }
  if (o.type === "execution-denied" && o.reason !== undefined && typeof o.reason !== "string") {
    throw new TypeError(`${where}.reason must be a string, got ${kindOf(o.reason)}`);
  }
  if (o.type === "content") {
    if (!Array.isArray(o.value)) throw new TypeError(`${where}.value must be an array of parts, got ${kindOf(o.value)}`);
    for (let k = 0; k < o.value.length; k++) {
      const p = o.value[k];
      if (!isObject(p)) throw new TypeError(`${where}.value[${k}] must be an object, got ${kindOf(p)}`);
      if (typeof p.type !== "string") throw new TypeError(`${where}.value[${k}].type must be a string, got ${kindOf(p.type)}`);
      if (p.type === "text" && typeof p.text !== "string") throw new TypeError(`${where}.value[${k}].text must be a string, got ${kindOf(p.text)}`);
    }
  }
}

// The converters take checked messages; `at(i)` names content[i] for what
// can only be found as it is copied (a cycle, JSON that cannot be written).

function userContentFromModel(content, at) {
  if (typeof content === "string") return { content, parts: undefined };
  const parts = [];
  const out = content.map((p, i) => {
    if (p.type === "text") {
      parts.push(p.providerOptions === undefined ? null : { providerOptions: p.providerOptions });
      return { type: "text", text: p.text };
    }
    if (
      p.type === "image" && typeof p.image === "string" && typeof p.mediaType === "string" &&
      p.providerOptions === undefined && Object.keys(p).length === 3
    ) {
      parts.push(null);
      return { type: "image", data: p.image, mimeType: p.mediaType };
    }
    parts.push({ part: storable(p, at(i)) });
    return { type: "text", text: placeholder(p) };
  });
  return { content: out, parts: parts.some((p) => p !== null) ? parts : undefined };
}

function assistantContentFromModel(content, at) {
  if (typeof content === "string") return { content: [{ type: "text", text: content }], parts: undefined, stringContent: true };
  const parts = [];
  const out = content.map((p, i) => {
    const po = p.providerOptions === undefined ? null : { providerOptions: p.providerOptions };
    if (p.type === "text") return parts.push(po), { type: "text", text: p.text };
    if (p.type === "reasoning") return parts.push(po), { type: "thinking", thinking: p.text };
    if (p.type === "tool-call" && isPlainObject(p.input)) {
      const e = po ?? {};
      if (p.providerExecuted !== undefined) e.providerExecuted = p.providerExecuted;
      parts.push(Object.keys(e).length ? e : null);
      return { type: "toolCall", id: p.toolCallId, name: p.toolName, arguments: p.input };
    }
    parts.push({ part: storable(p, at(i)) });
    if (p.type === "tool-result") return { type: "text", text: outputText(p.output, at(i)) };
    return { type: "text", text: placeholder(p) };
  });
  return { content: out, parts: parts.some((p) => p !== null) ? parts : undefined, stringContent: false };
}

function withExtra(message, extra) {
  for (const k of Object.keys(extra)) if (extra[k] === undefined) delete extra[k];
  if (Object.keys(extra).length) message.aiSdk = extra;
  return message;
}

/**
 * Converts one checked ModelMessage; `meta` supplies pi fields the SDK has
 * no place for, and `where` (the message's name in errors) with `offset`
 * (where `m.content` starts in the message given: a split message's rest).
 */
function fromModel(m, meta) {
  const carried = m.providerOptions?.[PROVIDER_OPTIONS_KEY];
  if (carried?.message && typeof carried.message === "object") return [carried.message];
  const timestamp = meta.timestamp;
  const at = (i) => `${meta.where}.content[${(meta.offset ?? 0) + i}]`;
  switch (m.role) {
    case "system":
      return [withExtra({ role: "system", content: m.content, timestamp }, { providerOptions: m.providerOptions })];
    case "user": {
      const { content, parts } = userContentFromModel(m.content, at);
      return [withExtra({ role: "user", content, timestamp }, { parts, providerOptions: m.providerOptions })];
    }
    case "assistant": {
      const found = Array.isArray(m.content) ? m.content.findIndex((p) => providerCompactionOf(p)) : -1;
      if (found >= 0) return splitAtProviderCompaction(m, found, meta);
      const { content, parts, stringContent } = assistantContentFromModel(m.content, at);
      const msg = {
        role: "assistant",
        content,
        api: meta.api ?? "ai-sdk",
        provider: meta.provider ?? "ai-sdk",
        model: meta.model ?? "unknown",
        stopReason: content.some((c) => c.type === "toolCall") ? "toolUse" : "stop",
        timestamp,
      };
      // Usage only when the step reported it: without it the compactor
      // estimates the message, where a zero usage would read as an empty context.
      if (meta.usage) msg.usage = meta.usage;
      return [withExtra(msg, { stringContent: stringContent || undefined, parts, providerOptions: m.providerOptions })];
    }
    default: {
      // "tool" (checkModelMessage allows no other role).
      const out = m.content.map((p, i) => {
        const extra = {};
        if (i > 0) extra.sameMessage = true;
        if (i === 0 && m.providerOptions !== undefined) extra.messageProviderOptions = m.providerOptions;
        if (p.type === "tool-result") {
          const r = toolResultFromPart(p, at(i));
          Object.assign(extra, r.extra);
          return withExtra({ role: "toolResult", toolCallId: r.toolCallId, toolName: r.toolName, content: r.content, isError: r.isError, timestamp }, extra);
        }
        // An approval response (or a part this version does not know): a
        // message of its own role, which pi code keeps and never sends.
        return withExtra({ role: "aiSdkToolPart", part: storable(p, at(i)), timestamp }, extra);
      });
      if (out.length === 0) return [withExtra({ role: "aiSdkToolPart", part: null, timestamp }, { messageProviderOptions: m.providerOptions })];
      return out;
    }
  }
}

// ---------------------------------------------------------------------------
// The providers' own compaction: a part that stands for the conversation
// before it (Anthropic's `compaction` block, a text part whose provider
// options say `type: "compaction"`; OpenAI's compaction item, a custom part
// `openai.compaction`). In the flat array it is a compactionSummary of its
// own, with the part kept exactly as received under `provider`: a boundary
// for the compactor like its own summaries. Sent to the provider that made
// it, it is the part again, in place of what it covers; to another model,
// its readable text (OpenAI's is encrypted: a note says so).

/**
 * `{ name, text }` when `part` is a provider's compaction (name: its
 * provider options key). A block without text is a compaction that failed
 * (Anthropic sends `content: null`, a no-op): no boundary.
 */
function providerCompactionOf(part) {
  if (!isPlainObject(part) || !isPlainObject(part.providerOptions)) return undefined;
  for (const name of Object.keys(part.providerOptions)) {
    if (part.providerOptions[name]?.type !== "compaction") continue;
    if (part.type === "text" && typeof part.text === "string" && part.text.trim() !== "") return { name, text: part.text };
    if (part.type === "custom") return { name, text: undefined };
  }
  return undefined;
}

/** What another model is sent for a compaction whose summary only its provider can read. */
const sealedSummary = (provider) =>
  `[The conversation before this point was compacted by ${provider}; its summary is encrypted and only ${provider} can read it.]`;

/**
 * An assistant ModelMessage holding a provider's compaction part at `at`:
 * the message's parts before it, the compaction as a compactionSummary,
 * the parts after it (each an assistant message when there are any).
 */
function splitAtProviderCompaction(m, at, meta) {
  const part = m.content[at];
  const { name, text } = providerCompactionOf(part);
  const before = m.content.slice(0, at);
  const after = m.content.slice(at + 1);
  const source = meta.provider ?? name;
  const summary = {
    role: "compactionSummary",
    summary: text ?? sealedSummary(source),
    tokensBefore: meta.compactedTokens ?? 0,
    timestamp: meta.timestamp,
    provider: { name, provider: source, model: meta.model ?? "unknown", part: storable(part, `${meta.where}.content[${(meta.offset ?? 0) + at}]`) },
  };
  const out = [];
  if (before.length) out.push(fromModel({ ...m, content: before }, meta)[0]);
  out.push(withExtra(summary, { joinPrev: before.length ? true : undefined, joinNext: after.length ? true : undefined }));
  if (after.length) out.push(...fromModel({ ...m, content: after }, { ...meta, offset: (meta.offset ?? 0) + at + 1 }));
  return out;
}

/** A user message as OpenAI's Responses API returned it, as a ModelMessage. */
function userFromResponses(item) {
  const parts = typeof item?.content === "string" ? [{ type: "input_text", text: item.content }] : Array.isArray(item?.content) ? item.content : [];
  const content = [];
  for (const p of parts) {
    if (p?.type === "input_text" && typeof p.text === "string") content.push({ type: "text", text: p.text });
    else if (p?.type === "input_image" && typeof p.image_url === "string") content.push({ type: "image", image: p.image_url });
  }
  return { role: "user", content };
}

/** The texts of a user message, pi's or a ModelMessage (images left out): what tells two copies of one apart. */
const userTexts = (m) => JSON.stringify(typeof m.content === "string" ? [m.content] : m.content.filter((c) => c?.type === "text").map((c) => c.text));

/**
 * How many times each pinned user message of `messages` from `from` on
 * (the pinned messages sent after a summary) is there, by its texts.
 */
function pinnedUserTexts(messages, from) {
  const counts = new Map();
  for (let k = from; k < messages.length; k++) {
    const m = messages[k];
    if (m?.role !== "user" || m.pinned !== true || !(typeof m.content === "string" || Array.isArray(m.content))) continue;
    const key = userTexts(m);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Whether a compactionSummary is a provider's compaction that `target` (a model's provider id, "anthropic.messages") can be sent as it is. */
function sendsPart(m, target) {
  const name = m.provider?.name;
  if (typeof name !== "string" || typeof target !== "string") return false;
  // An encrypted item (a custom part) only the Responses API sends: the
  // provider's Chat Completions model (`openai.chat`) would drop it unseen.
  if (m.provider.part?.type === "custom") return target === name || target === `${name}.responses`;
  // The very provider that made it (Vertex's Anthropic, "vertex.anthropic.messages", keys it "anthropic").
  return target === name || target.startsWith(`${name}.`) || target === m.provider.provider;
}

// The caches: ModelMessage -> its pi messages, pi message -> its ModelMessage.
const fromCache = new WeakMap();
const toCache = new WeakMap();

/**
 * ModelMessages -> flat-array messages. A ModelMessage this module made
 * from a pi message gives that pi message back (the same object), so pi
 * fields the SDK has no place for (timestamps, usage, model) survive a
 * round trip; others get `options.timestamp` (default now).
 */
export function fromModelMessages(messages, options = {}) {
  if (!Array.isArray(messages)) throw new TypeError("fromModelMessages: messages must be an array of ModelMessages");
  checkFromOptions(options, "fromModelMessages");
  return flatFromModel(messages, { ...options, timestamp: options.timestamp ?? Date.now() }, (i) => `fromModelMessages: messages[${i}]`);
}

/** `fromModelMessages`' options (FromModelMessagesOptions), for `caller`. */
function checkFromOptions(options, caller) {
  if (!isObject(options)) throw new TypeError(`${caller}: options must be an object, got ${kindOf(options)}`);
  const { timestamp, usage, provider, model } = options;
  if (timestamp !== undefined && !Number.isFinite(timestamp)) {
    throw new TypeError(`${caller}: options.timestamp must be a number (milliseconds since the epoch), got ${typeof timestamp === "number" ? timestamp : kindOf(timestamp)}`);
  }
  if (usage !== undefined && !isObject(usage)) throw new TypeError(`${caller}: options.usage must be an object (pi's Usage), got ${kindOf(usage)}`);
  if (provider !== undefined && typeof provider !== "string") throw new TypeError(`${caller}: options.provider must be a string, got ${kindOf(provider)}`);
  if (model !== undefined && typeof model !== "string") throw new TypeError(`${caller}: options.model must be a string, got ${kindOf(model)}`);
}

/**
 * ModelMessages -> flat messages, each message checked and converted once
 * (the caches); `where(i)` names messages[i] in an error. Nothing is kept
 * until every message has converted.
 */
function flatFromModel(messages, meta, where) {
  const out = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const back = m !== null && typeof m === "object" ? toCache.get(m) : undefined;
    if (back) {
      out.push(...back);
      continue;
    }
    let got = fromCache.get(m);
    if (!got) {
      const at = where(i);
      checkModelMessage(m, at);
      got = fromModel(m, { ...meta, where: at, offset: 0 });
      fromCache.set(m, got);
    }
    out.push(...got);
  }
  return out;
}

// ---------------------------------------------------------------------------
// pi messages -> ModelMessages.

function userContentToModel(m) {
  if (typeof m.content === "string") return m.content;
  const parts = m.aiSdk?.parts;
  return m.content.map((c, i) => {
    const e = parts?.[i];
    if (e?.part) return revived(e.part);
    const base = c.type === "image" ? { type: "image", image: c.data, mediaType: c.mimeType } : { type: "text", text: c.text };
    return e?.providerOptions !== undefined ? { ...base, providerOptions: e.providerOptions } : base;
  });
}

function assistantContentToModel(m) {
  const x = m.aiSdk;
  if (x?.stringContent) return m.content.map((c) => c.text ?? "").join("");
  return m.content.map((c, i) => {
    const e = x?.parts?.[i];
    if (e?.part) return revived(e.part);
    let base;
    if (c.type === "text") base = { type: "text", text: c.text };
    else if (c.type === "thinking") base = { type: "reasoning", text: c.thinking };
    else if (c.type === "toolCall") base = { type: "tool-call", toolCallId: c.id, toolName: c.name, input: c.arguments };
    else base = { type: "text", text: "" };
    if (e?.providerOptions !== undefined) base.providerOptions = e.providerOptions;
    if (e?.providerExecuted !== undefined) base.providerExecuted = e.providerExecuted;
    return base;
  });
}

/**
 * A pi-only message (summary, custom, bash): the user text pi sends,
 * carrying the message itself. `where()` names it in errors (the core's
 * name it as the only message of the list it was given).
 */
function carried(m, where) {
  let llm;
  try {
    llm = convertToLlm([m]);
  } catch (error) {
    throw renamed(error, "messages[0]", where);
  }
  if (llm.length === 0) return undefined;
  const u = llm[0];
  const content = typeof u.content === "string" ? u.content : u.content.map((c) => (c.type === "image" ? { type: "image", image: c.data, mediaType: c.mimeType } : { type: "text", text: c.text }));
  return { role: "user", content, providerOptions: { [PROVIDER_OPTIONS_KEY]: { message: m } } };
}

function withOptions(out, providerOptions) {
  if (providerOptions !== undefined) out.providerOptions = providerOptions;
  return out;
}

/**
 * Flat-array messages -> ModelMessages, for the SDK. Consecutive
 * toolResults that came from one tool message become one again; summaries
 * and other pi-only messages become the user message pi sends, with the
 * message itself under `providerOptions.agentCompaction`; roles the model
 * never sees (an app's own) are left out. Each message is converted once.
 */
export function toModelMessages(messages, options = {}) {
  if (!Array.isArray(messages)) throw new TypeError("toModelMessages: messages must be an array");
  if (options === null || typeof options !== "object") throw new TypeError("toModelMessages: options must be an object");
  const target = options.provider;
  if (target !== undefined && typeof target !== "string") throw new TypeError("toModelMessages: options.provider must be a model's provider id (a string)");
  return modelFromFlat(messages, options, (i) => `toModelMessages: messages[${i}]`);
}

/**
 * The fields of a flat message this module reads to convert or show it: a
 * message object, its content as pi's shapes have it, each content block
 * an object. `where()` names the message in an error (called only then).
 */
function checkFlatMessage(m, where) {
  if (!isObject(m)) throw new TypeError(`${where()} must be a message object, got ${kindOf(m)}`);
  let blocks;
  switch (m.role) {
    case "user":
    case "custom":
      if (typeof m.content === "string") return;
      blocks = "a string or an array of content blocks";
      break;
    case "assistant":
    case "toolResult":
      blocks = "an array of content blocks";
      break;
    default:
      return;
  }
  if (!Array.isArray(m.content)) throw new TypeError(`${where()}.content must be ${blocks}, got ${kindOf(m.content)}`);
  for (let k = 0; k < m.content.length; k++) {
    if (!isObject(m.content[k])) throw new TypeError(`${where()}.content[${k}] must be a content block object, got ${kindOf(m.content[k])}`);
  }
}

/**
 * `error`, a TypeError or RangeError of the core's naming the value it was
 * given `name` ("message", "messages[0]"), naming it `where()` instead; any
 * other error as it is.
 */
function renamed(error, name, where) {
  if (!(error instanceof TypeError || error instanceof RangeError)) return error;
  const rest = error.message.slice(name.length);
  if (!error.message.startsWith(name) || !/^[.[ ]/.test(rest)) return error;
  return new error.constructor(`${where()}${rest}`);
}

/**
 * Checks flat messages before they go into the conversation's array, as
 * its later steps read them: each through the engine's reading
 * (`estimateTokens`: the facts the compactor gathers, tool-call arguments
 * included) and the fields toModelMessages converts (checkFlatMessage). A
 * bad one is refused by the call that brings it, named `${name}[${from +
 * i}]`, and nothing is changed; not at a later step, after that step's
 * messages went in.
 */
function checkFlatArray(messages, name, from = 0, only = () => true) {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!only(m)) continue;
    const where = () => `${name}[${from + i}]`;
    try {
      estimateTokens(m);
    } catch (error) {
      throw renamed(error, "message", where);
    }
    checkFlatMessage(m, where);
  }
}

/** Whether flat message `m` holds a tool call. */
function hasToolCall(m) {
  return m.role === "assistant" && Array.isArray(m.content) && m.content.some((b) => b?.type === "toolCall");
}

/** toModelMessages for checked options; `where(i)` names messages[i] in errors. */
function modelFromFlat(messages, options, where) {
  const target = options.provider;
  const out = [];
  let tool = null; // the tool message being gathered: the pi messages it comes from
  const flush = () => {
    if (!tool) return;
    const sources = tool;
    tool = null;
    const hit = groupCache.get(sources[0]);
    if (hit && hit.sources.length === sources.length && hit.sources.every((s, k) => s === sources[k])) {
      out.push(hit.msg);
      return;
    }
    const parts = [];
    for (const s of sources) {
      if (s.role === "toolResult") parts.push(partFrom(s));
      else if (s.part !== null) parts.push(revived(s.part));
    }
    const msg = withOptions({ role: "tool", content: parts }, sources[0].aiSdk?.messageProviderOptions);
    groupCache.set(sources[0], { sources, msg });
    toCache.set(msg, sources);
    out.push(msg);
  };
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    // A message converted before was checked then.
    if (!(isObject(m) && (modelCache.has(m) || partCache.has(m)))) checkFlatMessage(m, () => where(i));
    if (m.role === "toolResult" || m.role === "aiSdkToolPart") {
      if (!m.aiSdk?.sameMessage) flush();
      if (!tool) tool = [];
      tool.push(m);
      continue;
    }
    flush();
    if (m.role === "compactionSummary" && sendsPart(m, target)) {
      const part = revived(m.provider.part);
      // OpenAI's /responses/compact keeps the user messages before its item;
      // a pinned one among them is sent after the summary, as pinned messages
      // are: not twice.
      if (Array.isArray(m.provider.input)) {
        const pinned = pinnedUserTexts(messages, i + 1);
        for (const item of m.provider.input) {
          const user = userFromResponses(item);
          const key = userTexts(user);
          const left = pinned.get(key);
          if (left) pinned.set(key, left - 1);
          else out.push(user);
        }
      }
      const prev = out.at(-1);
      const next = messages[i + 1];
      if (m.aiSdk?.joinPrev && prev?.role === "assistant" && Array.isArray(prev.content) && toCache.get(prev)?.[0] === messages[i - 1]) {
        // Back into the message it came from (a copy: the cached one stays),
        // with the parts after it when it stood between others.
        const content = [...prev.content, part];
        if (m.aiSdk?.joinNext && next?.role === "assistant") {
          const rest = modelFromFlat([next], options, () => where(i + 1))[0];
          content.push(...(Array.isArray(rest.content) ? rest.content : [{ type: "text", text: rest.content }]));
          i++;
        }
        out[out.length - 1] = { ...prev, content };
      } else if (m.aiSdk?.joinNext && next?.role === "assistant") {
        const rest = modelFromFlat([next], options, () => where(i + 1))[0];
        const msg = { ...rest, content: [part, ...(Array.isArray(rest.content) ? rest.content : [{ type: "text", text: rest.content }])] };
        toCache.set(msg, [m, next]);
        out.push(msg);
        i++;
      } else {
        const msg = { role: "assistant", content: [part] };
        toCache.set(msg, [m]);
        out.push(msg);
      }
      continue;
    }
    const cached = modelOf(m);
    if (cached !== undefined) {
      if (cached) out.push(cached);
      continue;
    }
    let msg;
    switch (m.role) {
      case "system":
        msg = withOptions({ role: "system", content: m.content }, m.aiSdk?.providerOptions);
        break;
      case "user":
        msg = withOptions({ role: "user", content: userContentToModel(m) }, m.aiSdk?.providerOptions);
        break;
      case "assistant":
        msg = withOptions({ role: "assistant", content: assistantContentToModel(m) }, m.aiSdk?.providerOptions);
        break;
      default:
        msg = carried(m, () => where(i)) ?? null;
    }
    remember(m, msg);
    if (msg) out.push(msg);
  }
  flush();
  return out;
}

// pi message -> its ModelMessage (null: not sent), and back.
const modelCache = new WeakMap();
const partCache = new WeakMap();
const groupCache = new WeakMap();
function modelOf(m) {
  return modelCache.get(m);
}
function remember(m, msg) {
  modelCache.set(m, msg);
  if (msg) toCache.set(msg, [m]);
}
function partFrom(m) {
  let p = partCache.get(m);
  if (!p) {
    p = partFromToolResult(m);
    partCache.set(m, p);
  }
  return p;
}

// ---------------------------------------------------------------------------
// Usage and errors.

/** The SDK's LanguageModelUsage -> pi's Usage (cost unknown: zeros). */
export function usageFromAiSdk(usage) {
  if (!usage) return zeroUsage();
  const num = (x) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  let cacheRead = num(usage.inputTokenDetails?.cacheReadTokens);
  const cacheWrite = num(usage.inputTokenDetails?.cacheWriteTokens);
  const noCache = usage.inputTokenDetails?.noCacheTokens;
  let input = typeof noCache === "number" && Number.isFinite(noCache) ? noCache : Math.max(0, num(usage.inputTokens) - cacheRead - cacheWrite);
  if (input < 0 && cacheWrite > 0) {
    // The provider's cached count included this request's cache writes (as
    // OpenRouter's does), so the SDK's uncached count came out below zero:
    // read as pi-ai reads such a usage, the writes taken out of the cached.
    cacheRead = Math.max(0, cacheRead - cacheWrite);
    input = Math.max(0, num(usage.inputTokens) - cacheRead - cacheWrite);
  }
  const output = num(usage.outputTokens);
  const sum = num(input) + output + cacheRead + cacheWrite;
  return {
    input: num(input),
    output,
    cacheRead,
    cacheWrite,
    totalTokens: typeof usage.totalTokens === "number" && Number.isFinite(usage.totalTokens) ? usage.totalTokens : sum,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/**
 * A step whose response holds a provider's compaction: what the context
 * was before it (the summary's `tokensBefore`), and as the reply's usage
 * what the model read after it. Anthropic bills a compacting request as
 * the sum of its `usage.iterations`, which the SDK reports as the usage:
 * the context the model read is the last `message` iteration's input.
 */
function compactedStep(step, meta) {
  const compacted = (step.response?.messages ?? []).some((m) => Array.isArray(m?.content) && m.content.some((p) => providerCompactionOf(p)));
  if (!compacted) return;
  const iterations = Object.values(step.providerMetadata ?? {}).find((x) => Array.isArray(x?.iterations))?.iterations ?? [];
  const num = (x) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  const compaction = iterations.find((x) => x?.type === "compaction");
  meta.compactedTokens = compaction ? num(compaction.inputTokens) : num(step.usage?.inputTokens);
  const read = iterations.findLast((x) => x?.type === "message");
  if (read && meta.usage) {
    const usage = { ...meta.usage, input: num(read.inputTokens), output: num(read.outputTokens), cacheRead: num(read.cacheReadInputTokens), cacheWrite: num(read.cacheCreationInputTokens) };
    usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
    meta.usage = usage;
  }
}

/** The errors an SDK call may carry an APICallError in (retries wrap it). */
function* errorChain(e, depth = 0) {
  if (!e || typeof e !== "object" || depth > 5) return;
  yield e;
  if (e.lastError) yield* errorChain(e.lastError, depth + 1);
  if (Array.isArray(e.errors)) for (const x of e.errors) yield* errorChain(x, depth + 1);
  if (e.cause) yield* errorChain(e.cause, depth + 1);
}

/**
 * True when `error` is (or wraps) an APICallError whose text pi's
 * `isContextOverflow` recognizes as a context overflow.
 */
export async function isOverflowError(error, contextWindow) {
  const { APICallError } = await import("ai");
  for (const e of errorChain(error)) {
    if (!APICallError.isInstance(e)) continue;
    const texts = [e.message, typeof e.responseBody === "string" ? e.responseBody : ""];
    for (const text of texts) {
      if (!text) continue;
      const errorMessage = e.statusCode ? `${e.statusCode} ${text}` : text;
      const probe = {
        role: "assistant",
        content: [],
        api: "ai-sdk",
        provider: "ai-sdk",
        model: "unknown",
        usage: zeroUsage(),
        stopReason: "error",
        errorMessage,
        timestamp: 0,
      };
      if (isContextOverflow(probe, contextWindow)) return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------
// The conversation: the flat array behind generateText / streamText / ToolLoopAgent.


/** The default `backgroundAt`: threshold compactions start in the background at this fraction of the threshold. */
const BACKGROUND_AT = 0.8;

const isToolPart = (m) => m?.role === "toolResult" || m?.role === "aiSdkToolPart";

/**
 * A JSON Schema as a Standard Schema (https://standardschema.dev) with its
 * JSON Schema, which the AI SDK takes as a tool's `inputSchema` without
 * this package importing `ai`. It accepts every value: the tool's own call
 * checks the arguments and says what is wrong.
 */
function jsonSchemaOf(schema) {
  return {
    "~standard": {
      version: 1,
      vendor: "agent-compaction",
      validate: (value) => ({ value }),
      jsonSchema: { input: () => schema, output: () => schema },
    },
  };
}

/**
 * The flat array after a compaction of `before` with result `out`, when it
 * is `now` meanwhile (the core's rule, `rebaseCompaction`): messages
 * appended since (a running tool loop's steps, a user's message) stay, the
 * summary at its cut; an array replaced otherwise (setMessages) wins, and
 * the compaction is not applied.
 */
const rebased = (out, before, now) => rebaseCompaction(out, before, now)?.messages ?? now;

class AiSdkConversation {
  #compactor;
  #flat;
  #systems;
  #tools;
  #instructions;
  #backgroundAt;
  #store;
  #sessionId;
  #onSaveError;
  /** The provider id of the model the next step goes to ("anthropic.messages"), from prepareStep. */
  #target;
  /** Whether the provider compacts this conversation (options.providerCompaction). */
  #providerCompacts;
  #saving = Promise.resolve();
  /** Settles when the compaction a step or a retry runs has ended (`compact()` waits for it). */
  #compacting = Promise.resolve();
  /** Of the running call: how many steps are already in the flat array. */
  #taken = 0;
  /** The last summary in the context last sent to the model (prepareStep, run). */
  #sentSummary;
  /**
   * A step's request is out (from prepareStep until the next one, or the
   * call's end): a background result that ends meanwhile waits for the next
   * checkpoint, so that the answer, whose usage counts the context as it
   * was sent, comes before it (as the core's rebase puts a result after
   * the messages added while it was made).
   */
  #stepOut = false;
  /** modelMessages' memo (see there). */
  #converted = { since: undefined, context: [], end: 0, out: [] };
  constructor(options) {
    if (!options || typeof options !== "object") throw new TypeError("aiSdkConversation: options must be an object");
    if (!(options.compactor instanceof Compactor)) throw new TypeError("aiSdkConversation: options.compactor must be a Compactor");
    const messages = options.messages ?? [];
    if (!Array.isArray(messages)) throw new TypeError("aiSdkConversation: options.messages must be an array (the flat array)");
    checkFlatArray(messages, "aiSdkConversation: options.messages");
    if ((options.store === undefined) !== (options.sessionId === undefined)) {
      throw new TypeError("aiSdkConversation: options.store and options.sessionId go together");
    }
    if (options.tools !== undefined && (options.tools === null || typeof options.tools !== "object" || Array.isArray(options.tools))) {
      throw new TypeError("aiSdkConversation: options.tools must be the tool set given to generateText / streamText (an object)");
    }
    if (options.instructions !== undefined && typeof options.instructions !== "string") {
      throw new TypeError("aiSdkConversation: options.instructions must be the system prompt given to generateText / streamText (a string)");
    }
    this.#tools = options.tools;
    this.#instructions = options.instructions;
    const at = options.backgroundAt;
    if (!(at === undefined || at === false || (typeof at === "number" && at > 0 && at <= 1))) {
      const what = "aiSdkConversation: options.backgroundAt must be a number in (0, 1] (a fraction of the threshold) or false";
      // A number out of range is a RangeError showing it, as the core's options are.
      if (typeof at === "number") throw new RangeError(`${what}, got ${at}`);
      throw new TypeError(what);
    }
    this.#backgroundAt = at === undefined ? BACKGROUND_AT : at === false ? undefined : at;
    this.#compactor = options.compactor;
    this.#flat = messages;
    this.#systems = messages.filter((m) => m?.role === "system");
    this.#store = options.store;
    this.#sessionId = options.sessionId;
    this.#onSaveError = options.onSaveError;
    if (options.providerCompaction !== undefined && typeof options.providerCompaction !== "boolean") {
      throw new TypeError("aiSdkConversation: options.providerCompaction must be a boolean (true: the provider compacts, the conversation's threshold stays off)");
    }
    this.#providerCompacts = options.providerCompaction === true;
    this.prepareStep = this.prepareStep.bind(this);
  }

  /** The compactor this conversation uses. */
  get compactor() {
    return this.#compactor;
  }
  /** The flat array (pi-shaped, summaries included): store it, show it. A new array after each change. */
  get messages() {
    return this.#flat;
  }
  /** Estimated tokens of what the model sees (for a stats bar). */
  get contextTokens() {
    return this.#compactor.contextTokens(this.#flat);
  }

  /** The system messages of the flat array, for `instructions` (undefined when none). */
  instructions() {
    if (this.#systems.length === 0) return undefined;
    return toModelMessages(this.#systems);
  }
  /**
   * What the model is sent, as ModelMessages (system messages go in
   * `instructions()`): the compactor's model context (the last summary,
   * the pinned messages before it, what follows; cleared outputs as
   * placeholders; failed attempts left out), converted.
   */
  modelMessages() {
    // A memo, so that a step converts what is new: the context converted
    // last, and the ModelMessages of its prefix up to `end` (just after a
    // message that is not a tool part: a tool group may still grow). The
    // compactor answers with the messages added to that context while its
    // view only grew, with the whole context otherwise.
    // The model the messages go to decides how a provider's compaction is
    // sent (sendsPart): another model, another conversion.
    const fresh = () => ({ since: undefined, context: [], end: 0, out: [], target: this.#target });
    if (this.#converted.target !== this.#target) this.#converted = fresh();
    let memo = this.#converted;
    const change = this.#compactor.modelContextChange(this.#flat, memo.since);
    if (change.kept !== memo.context.length) memo = this.#converted = fresh();
    const context = memo.context;
    for (const m of change.added) context.push(m);
    memo.since = { view: change.view, length: context.length };
    const keep = (list) => (this.#systems.length ? list.filter((m) => m.role !== "system") : list);
    const options = { provider: this.#target };
    // A message that does not convert is named by its place in the flat array, as the compactor names it.
    const convert = (from, to) => {
      const slice = context.slice(from, to);
      return keep(modelFromFlat(slice, options, (i) => `messages[${this.#flat.indexOf(slice[i])}]`));
    };
    let stable = context.length;
    while (stable > memo.end && (isToolPart(context[stable - 1]) || context[stable - 1].aiSdk?.joinNext)) stable--;
    if (stable > memo.end) {
      for (const m of convert(memo.end, stable)) memo.out.push(m);
      memo.end = stable;
    }
    // A new array each time: what a caller does with it leaves the memo as it is.
    return stable < context.length ? memo.out.concat(convert(stable, context.length)) : memo.out.slice();
  }

  /**
   * `search_history` and `read_history` as AI SDK tools, to spread into
   * `tools`: they search and read this conversation's messages that the
   * model no longer sees (the compactor's `historyTool`).
   */
  historyTools() {
    const tools = {};
    for (const { name, description, parameters } of this.#compactor.historyTools()) {
      tools[name] = {
        description,
        inputSchema: jsonSchemaOf(parameters),
        execute: async (input) => this.#compactor.historyTool(this.#flat, name, input),
      };
    }
    return tools;
  }

  /**
   * Replaces the flat array (an undo with removeLastCompaction, a manual
   * compaction's result, another tab's version) and saves it with
   * `{ replace: true }` (it may drop messages: that is what it is for).
   */
  async setMessages(messages) {
    if (!Array.isArray(messages)) throw new TypeError("setMessages: messages must be an array (the flat array)");
    // Checked and read before anything is replaced: a bad message, or a
    // getter that throws, changes nothing.
    checkFlatArray(messages, "setMessages: messages");
    const systems = messages.filter((m) => m.role === "system");
    this.#flat = messages;
    this.#systems = systems;
    await this.#save({ replace: true });
    return this.#flat;
  }

  /** A manual compaction (`/compact`): `compactor.compact(messages, { reason: "manual", ... })`, kept and saved. */
  async compact(options = {}) {
    if (!isObject(options)) throw new TypeError(`compact: options must be an object, got ${kindOf(options)}`);
    // A compaction a step or a retry is running ends first, as one in the background does.
    await this.#compacting;
    await this.#settleBackground();
    // A summary of ours on an encrypted one would have only its note to build on.
    await this.#readableStandIn(true);
    const before = this.#flat;
    const out = await this.#compactor.compact(before, { conversation: this.#conversation(), ...options, reason: "manual" });
    this.#flat = rebased(out, before, this.#flat);
    await this.#save();
    return out;
  }

  /** Appends ModelMessages (a user's message, say) and saves. */
  async append(messages) {
    const list = Array.isArray(messages) ? messages : [messages];
    const where = Array.isArray(messages) ? (i) => `append: messages[${i}]` : () => "append: message";
    this.#push(flatFromModel(list, { timestamp: Date.now() }, where));
    await this.#save();
    return this.#flat;
  }

  /**
   * Appends flat messages (flatFromModel's), checked first: one the engine
   * would refuse changes nothing. Of what flatFromModel builds, only a tool
   * call's input is the app's value as it is (a BigInt, a getter that
   * throws): the messages with tool calls are the ones checked, so that a
   * step's tool results cost no second reading.
   */
  #push(pi) {
    if (pi.length === 0) return;
    checkFlatArray(pi, "messages", this.#flat.length, hasToolCall);
    this.#flat = this.#flat.concat(pi);
    for (const m of pi) if (m.role === "system") this.#systems.push(m);
  }

  /**
   * Takes the steps of the running call not yet in the flat array: each
   * step's own response messages (ai 7: `step.response.messages` holds that
   * step's assistant message and tool results), its usage and model on its
   * assistant message. `name` is the steps' name in errors ("appendSteps:
   * steps"); a step that does not convert takes nothing.
   */
  #take(steps, name) {
    if (!Array.isArray(steps)) return;
    const timestamp = Date.now();
    const out = [];
    for (let n = this.#taken; n < steps.length; n++) {
      const step = steps[n];
      const where = `${name}[${n}]`;
      if (!isObject(step)) throw new TypeError(`${where} must be a step object (one of the call's steps), got ${kindOf(step)}`);
      const response = step.response;
      if (response !== undefined && !isObject(response)) throw new TypeError(`${where}.response must be an object, got ${kindOf(response)}`);
      const messages = response?.messages;
      if (messages === undefined) continue;
      if (!Array.isArray(messages)) throw new TypeError(`${where}.response.messages must be an array, got ${kindOf(messages)}`);
      for (let j = 0; j < messages.length; j++) {
        const m = messages[j];
        const meta = { timestamp };
        if (m?.role === "assistant") {
          meta.usage = step.usage ? usageFromAiSdk(step.usage) : undefined;
          meta.provider = step.model?.provider;
          meta.model = step.model?.modelId;
          compactedStep(step, meta);
        }
        out.push(...flatFromModel([m], meta, () => `${where}.response.messages[${j}]`));
      }
    }
    this.#push(out);
    this.#taken = steps.length;
  }

  /** Takes ModelMessages the SDK gave outside its steps (`name`: theirs, in errors) into the flat array. */
  #takeMessages(messages, name) {
    if (Array.isArray(messages) && messages.length > 0) this.#push(flatFromModel(messages, { timestamp: Date.now() }, (i) => `${name}[${i}]`));
  }

  /**
   * What the model's requests carry besides the messages, for summary
   * requests that repeat them: the tools, and the system prompt as the
   * steps send it (`instructions`): a string, or, when the array's system
   * messages are several or carry more than their text (providerOptions: a
   * cache breakpoint), those messages, which a string would not repeat.
   */
  #conversation() {
    let systemPrompt = this.#instructions;
    const sent = systemPrompt === undefined ? this.instructions() : undefined;
    if (sent) {
      const [only] = sent;
      const plain = sent.length === 1 && typeof only.content === "string" && Object.keys(only).every((k) => k === "role" || k === "content");
      systemPrompt = plain ? only.content : sent;
    }
    return { systemPrompt, tools: this.#tools };
  }

  /**
   * When the last summary is a provider's compaction only that provider can
   * read (OpenAI's encrypted item) and the steps go to another model, or a
   * compaction of ours is about to build on it (`beforeCompaction`): our
   * own summary of what it covers (`compactor.summarizeBranch` of the
   * messages since the summary before it) takes the place of its note, once,
   * and is saved. The part stays: that provider is still sent its item.
   * A failure leaves the note.
   */
  async #readableStandIn(beforeCompaction = false) {
    const at = this.#flat.findLastIndex((m) => m?.role === "compactionSummary");
    const last = this.#flat[at];
    if (!last?.provider) return;
    if (!beforeCompaction && (sendsPart(last, this.#target) || this.#target === undefined)) return;
    if (typeof last.summary !== "string" || !last.summary.startsWith(sealedSummary(last.provider.provider))) return;
    const from = this.#flat.findLastIndex((m, i) => i < at && m?.role === "compactionSummary");
    const covered = this.#flat.slice(Math.max(from, 0), at).filter((m) => m?.role !== "system");
    if (covered.length === 0) return;
    let ours;
    try {
      ours = await this.#compactor.summarizeBranch(covered);
    } catch {
      return;
    }
    if (this.#flat[at] !== last || typeof ours?.summary !== "string" || ours.summary.trim() === "") return;
    const summary = { ...last, summary: ours.summary };
    if (ours.usage) summary.usage = ours.usage;
    this.#flat = [...this.#flat.slice(0, at), summary, ...this.#flat.slice(at + 1)];
    // One message replaced in place: a save with replace.
    await this.#save({ replace: true });
  }

  /**
   * Whether the provider compacts this conversation: the app said so, or
   * the last summary is the compaction of the provider the steps go to.
   * Then the threshold is the provider's: ours never compacts on top.
   */
  #providerCompacting() {
    if (this.#providerCompacts) return true;
    const last = this.#flat.findLast((m) => m?.role === "compactionSummary");
    // A compaction the summarizer asked for says nothing of the provider's own threshold.
    return last !== undefined && !last.provider?.onDemand && sendsPart(last, this.#target);
  }

  async #thresholdCheck() {
    if (this.#providerCompacting()) return;
    // The compactor's checkpoint: a background summary goes in (awaited
    // over the threshold), one starts past backgroundAt, or a threshold
    // compaction runs now. One that starts goes in when it arrives.
    const before = this.#flat;
    const out = await this.#foreground(this.#compactor.compactIfNeeded(before, {
      backgroundAt: this.#backgroundAt,
      conversation: this.#conversation(),
      onBackgroundEnd: () => {
        if (!this.#stepOut) this.#settleBackground().catch(() => undefined);
      },
    }));
    if (out) this.#flat = rebased(out, before, this.#flat);
  }

  /** `promise`, a compaction the conversation runs, as the one `compact()` waits for. */
  #foreground(promise) {
    this.#compacting = promise.then(
      () => undefined,
      () => undefined,
    );
    return promise;
  }

  /** Waits for a background compaction, puts its result in (saved); whether it did. */
  async #settleBackground() {
    await this.#compactor.waitForBackground();
    const out = this.#compactor.takeBackground(this.#flat);
    if (!out) return false;
    this.#flat = out.messages;
    await this.#save().catch(() => undefined);
    return true;
  }

  #save(options) {
    if (!this.#store) return Promise.resolve();
    const messages = this.#flat;
    this.#saving = this.#saving.then(() =>
      this.#store.save(this.#sessionId, messages, options).then(
        () => undefined,
        (error) => {
          if (this.#onSaveError) this.#onSaveError(error);
          else throw error;
        },
      ),
    );
    const done = this.#saving;
    this.#saving = done.catch(() => undefined);
    return done;
  }

  /**
   * `prepareStep` for generateText / streamText / ToolLoopAgent: takes the
   * previous steps' new messages into the flat array, compacts when the
   * context is over the threshold, saves, and sends the last summary and
   * what follows. The compaction stays: later steps build on the flat array.
   */
  async prepareStep(options) {
    this.#stepOut = false;
    if (options?.stepNumber === 0) {
      this.#taken = 0;
      // What the SDK added before the first step: the results of tools the
      // user approved or denied (a tool-approval-response in the messages),
      // which are in no step's messages.
      this.#takeMessages(options.responseMessages, "prepareStep: responseMessages");
    }
    if (typeof options?.model?.provider === "string") this.#target = options.model.provider;
    this.#take(options?.steps, "prepareStep: steps");
    // Messages steered into the running call, after the previous steps'.
    this.#takeMessages(options?.experimental_steeringMessages, "prepareStep: experimental_steeringMessages");
    await this.#readableStandIn();
    await this.#thresholdCheck();
    await this.#save();
    const result = { messages: this.#send() };
    const instructions = this.instructions();
    if (instructions) result.instructions = instructions;
    this.#stepOut = true;
    return result;
  }

  /** The model messages of a request about to go out; remembers the summary they start from. */
  #send() {
    this.#sentSummary = this.#flat.findLast((m) => m?.role === "compactionSummary");
    return this.modelMessages();
  }

  /**
   * After a call made without `run`: takes the steps prepareStep has not
   * seen (the last one's) from the result's `steps`, compacts past the
   * threshold, saves.
   */
  async appendSteps(steps) {
    if (!Array.isArray(steps)) throw new TypeError("appendSteps: steps must be the call's steps array (await result.steps)");
    return this.#appendSteps(steps, "appendSteps: steps");
  }

  async #appendSteps(steps, name) {
    this.#stepOut = false;
    this.#take(steps, name);
    this.#taken = 0;
    await this.#thresholdCheck();
    await this.#save();
    return this.#flat;
  }

  /**
   * Runs one SDK call, `call({ messages, instructions?, prepareStep,
   * onError })` returning generateText's or streamText's result (spread
   * the argument into the call's options), and records its
   * response. On a context-overflow APICallError: compacts (reason
   * `overflow`) and calls once more; a second overflow rejects with pi's
   * "recovery failed" text (the provider's error as `cause`). Resolves to
   * the call's result.
   */
  async run(call) {
    if (typeof call !== "function") throw new TypeError("run: call must be a function");
    let retried = false;
    for (;;) {
      this.#taken = 0;
      // streamText reports a provider's error through onError and rejects
      // its promises with a NoOutputGeneratedError: keep the real one.
      let streamError;
      const args = {
        messages: this.#send(),
        prepareStep: this.prepareStep,
        onError: ({ error }) => {
          streamError ??= error;
        },
      };
      const instructions = this.instructions();
      if (instructions) args.instructions = instructions;
      try {
        let result;
        let steps;
        try {
          result = await call(args);
          if (!isObject(result)) throw new TypeError(`run: call must return the result of generateText or streamText, got ${kindOf(result)}`);
          steps = await result.steps;
        } catch (error) {
          throw streamError ?? error;
        }
        if (streamError) throw streamError;
        if (!Array.isArray(steps)) throw new TypeError(`run: the result's steps must be an array (generateText's or streamText's result.steps), got ${kindOf(steps)}`);
        await this.#appendSteps(steps, "run: result.steps");
        return result;
      } catch (error) {
        // Steps that succeeded before the failure are already in the flat array.
        this.#taken = 0;
        this.#stepOut = false;
        // The core's after-run rule: compact and retry once, then pi's text.
        const overflow = await isOverflowError(error, this.#compactor.contextWindow);
        const flow = overflow ? this.#compactor.afterRun(this.#flat, { overflow, retried }) : "nothing";
        if (flow === "recoveryFailed") throw new Error(OVERFLOW_RECOVERY_FAILED, { cause: error });
        if (flow !== "overflowRetry") throw error;
        retried = true;
        // A summary that went in after the failed request was sent (a
        // background compaction that finished meanwhile, or finishes now)
        // is the compaction this retry needs, as with attach.
        await this.#settleBackground();
        if (this.#flat.findLast((m) => m?.role === "compactionSummary") !== this.#sentSummary) continue;
        await this.#readableStandIn(true);
        const before = this.#flat;
        const out = await this.#foreground(this.#compactor.compactIfNeeded(before, { reason: "overflow", willRetry: true, conversation: this.#conversation() }));
        if (out) this.#flat = rebased(out, before, this.#flat);
        await this.#save();
        if (!out) throw new Error(`Context overflow recovery failed: nothing to compact. ${error.message}`, { cause: error });
      }
    }
  }
}

/**
 * The flat array behind an AI SDK agent: `{ prepareStep, run, append,
 * modelMessages, messages, ... }`. See README "With the AI SDK".
 */
export function aiSdkConversation(options) {
  return new AiSdkConversation(options);
}

// ---------------------------------------------------------------------------
// The summarizer.

/** A reply that is no summary: no text, or a tool call (the prefix form's tools are never run). */
const noSummary = (result) => typeof result.text !== "string" || result.text.trim() === "" || result.toolCalls?.length > 0;

/**
 * Why a reply's text is no summary (refused, ended in an error), or
 * undefined. Text cut at the token limit is one, as pi takes it.
 */
function unfinished(result) {
  if (result.finishReason === "content-filter") return "the model refused to summarize";
  if (result.finishReason === "error") return "the reply ended in an error";
  return undefined;
}

/**
 * A Compactor summarizer that calls the app's own AI SDK model through
 * `generateText` (same provider, proxy and keys as the app). `options`:
 * `maxOutputTokens` (a cap below the compactor's budget), `providerOptions`,
 * `headers`, `maxRetries`, `temperature`.
 */
export function aiSdkSummarizer(model, options = {}) {
  if (model === undefined || model === null) throw new TypeError("aiSdkSummarizer: model is required (an AI SDK LanguageModel or model id)");
  if (options === null || typeof options !== "object") throw new TypeError("aiSdkSummarizer: options must be an object");
  // The cap is read here, not by the SDK: a value it cannot use would be dropped unseen.
  const cap = options.maxOutputTokens;
  if (cap !== undefined && typeof cap !== "number") throw new TypeError(`aiSdkSummarizer: options.maxOutputTokens must be a number (a cap on the summary's tokens), got ${kindOf(cap)}`);
  if (cap !== undefined && !(Number.isSafeInteger(cap) && cap >= 1)) throw new RangeError(`aiSdkSummarizer: options.maxOutputTokens must be a whole number of tokens, at least 1, got ${cap}`);
  return async (request) => {
    const { generateText } = await import("ai");
    const maxOutputTokens = cap === undefined ? request.maxTokens : Math.min(cap, request.maxTokens);
    const base = { model, maxOutputTokens, abortSignal: request.signal };
    for (const k of ["providerOptions", "headers", "maxRetries", "temperature"]) if (options[k] !== undefined) base[k] = options[k];
    const serialized = () => generateText({ ...base, instructions: request.systemPrompt, prompt: request.prompt });
    let result;
    if (request.context && typeof request.instruction === "string") {
      // The prefix form: the conversation as its own requests sent it, then
      // the instruction, so that the provider's prompt cache serves the prefix.
      // The messages the conversation's own requests sent (the compactor's
      // model view: failed attempts left out, cleared outputs as placeholders).
      const { systemPrompt, messages, tools } = request.context;
      const call = { ...base, messages: [...toModelMessages(messages), { role: "user", content: request.instruction }] };
      if (systemPrompt) call.instructions = systemPrompt;
      // The same tool definitions, never run: a call the model makes anyway ends the step.
      if (tools && typeof tools === "object" && !Array.isArray(tools)) {
        call.tools = Object.fromEntries(Object.entries(tools).map(([name, t]) => [name, { ...t, execute: undefined }]));
      }
      result = await generateText(call);
      if (noSummary(result) || unfinished(result)) result = await serialized();
    } else {
      result = await serialized();
    }
    if (noSummary(result)) throw new Error("aiSdkSummarizer: the model answered with no text");
    const why = unfinished(result);
    if (why) throw new Error(`aiSdkSummarizer: ${why} (finishReason: "${result.finishReason}")`);
    return { text: result.text, usage: usageFromAiSdk(result.usage) };
  };
}

// ---------------------------------------------------------------------------
// useChat: what the user sees, and what is stored.

/** The data part a divider row holds (`type: "data-compaction"`). */
export const DIVIDER_PART_TYPE = "data-compaction";
/** The part type of a cleared-tool-output divider in `toUIMessages(…, { divider: true })`. */
export const CLEARED_DIVIDER_PART_TYPE = "data-tool-output-cleared";

/** The part types of the rows that stand for pi-only messages: no new message when read back. */
const ROW_PART_TYPES = new Set([DIVIDER_PART_TYPE, CLEARED_DIVIDER_PART_TYPE, "data-custom", "data-branch-summary", "data-bash-execution", "data-message"]);

/**
 * Row ids: a UI message's own id (kept by fromUIMessages), else role and
 * timestamp with a counter. An id depends only on the messages before it,
 * so it stays the same across calls and as the array grows; one already
 * given is never given again (React keys).
 */
function uiIds() {
  const used = new Set();
  const counts = new Map();
  const next = (key) => {
    let id;
    do {
      const n = counts.get(key) ?? 0;
      counts.set(key, n + 1);
      id = `${key}-${n}`;
    } while (used.has(id));
    used.add(id);
    return id;
  };
  const of = (m) => {
    const own = m.aiSdk?.uiId;
    if (typeof own === "string" && !used.has(own)) {
      used.add(own);
      return own;
    }
    return next(`${m.role}-${m.timestamp}`);
  };
  return { of, next };
}

// The SDK's UI shapes, built as its own conversions build them: a file is a
// URL (bytes and base64 as a data: URL), a tool call one part whose state
// follows its approval and result. pi's placeholder texts (what its
// estimates read for a part it cannot hold) are never shown.

/** A base64 string has no ":", a URL always has one. */
const isUrlString = (s) => /^[a-z][a-z0-9+.-]*:/i.test(s);
const dataUrlMediaType = (url) => /^data:([^;,]+)/i.exec(url)?.[1];
const withMetadata = (part, providerOptions, key = "providerMetadata") => (providerOptions === undefined ? part : { ...part, [key]: providerOptions });

/** A part's data -> where a UI file part points (`url`), or the provider's file (`providerReference`, which the SDK sends instead). */
function uiFileSource(data, mediaType) {
  const inline = (base64) => ({ url: `data:${mediaType};base64,${base64}` });
  if (typeof data === "string") return isUrlString(data) ? { url: data } : inline(data);
  if (data instanceof URL) return { url: data.href };
  if (data instanceof Uint8Array) return inline(toBase64(data));
  if (data instanceof ArrayBuffer) return inline(toBase64(new Uint8Array(data)));
  if (data === null || typeof data !== "object") return { url: "" };
  switch (data.type) {
    case "data":
      return typeof data.data === "string" ? inline(data.data) : uiFileSource(data.data, mediaType);
    case "url":
      return { url: String(data.url) };
    case "text":
      return inline(toBase64(new TextEncoder().encode(data.text)));
    case "reference":
      return { url: "", providerReference: data.reference };
    default:
      // An untagged object is a provider reference (the SDK's older form).
      return hasOwn(data, "type") ? { url: "" } : { url: "", providerReference: data };
  }
}

/**
 * An image or file part (of a ModelMessage, or of a tool's `content`
 * output) as a UI file part. `uiUrl`: the URL the UI showed for a file it
 * sent by reference, which the ModelMessage does not hold.
 */
function uiFilePart(p, uiUrl) {
  const data = p.type === "image" ? p.image : p.type.endsWith("-url") ? p.url : p.data;
  // Without a media type, the top-level segment, as the SDK writes it.
  const declared = p.mediaType ?? (p.type.startsWith("image") ? "image" : "application/octet-stream");
  const src = uiFileSource(data, declared);
  const part = { type: "file", mediaType: dataUrlMediaType(src.url) ?? declared, url: src.url || (uiUrl ?? "") };
  if (typeof p.filename === "string") part.filename = p.filename;
  if (src.providerReference !== undefined) part.providerReference = src.providerReference;
  return withMetadata(part, p.providerOptions);
}

/** A tool's `content` output: its text alone when it is all text, else text and file parts in order. */
function uiToolContent(items) {
  const out = [];
  for (const p of items) {
    if (p?.type === "text") out.push({ type: "text", text: p.text });
    else if (typeof p?.type === "string" && (p.type === "file" || /^(file|image)-(data|url)$/.test(p.type))) out.push(uiFilePart(p));
  }
  return out.every((p) => p.type === "text") ? out.map((p) => p.text).join("") : out;
}

/** A tool result (the SDK's ToolResultOutput) as the fields of its UI tool part. */
function uiToolOutcome(output) {
  switch (output?.type) {
    case "text":
    case "json":
      return { state: "output-available", output: output.value };
    case "error-text":
    case "error-json":
      return { state: "output-error", errorText: typeof output.value === "string" ? output.value : JSON.stringify(output.value) ?? "null" };
    case "execution-denied":
      return { state: "output-denied", reason: output.reason };
    case "content":
      return { state: "output-available", output: uiToolContent(output.value) };
    default:
      return { state: "output-available", output: output?.value ?? output };
  }
}

/** A toolResult message as the fields of its UI tool part: pi's text and images, or the output form it came in. */
function uiToolResult(m) {
  const x = m.aiSdk ?? {};
  if (x.outputWhole !== undefined || (x.output !== undefined && x.output !== "content")) {
    // A stored form this message no longer matches (edited text that is not
    // JSON, say) is shown as pi holds it: displaying never throws for it.
    let output;
    try {
      output = partFromToolResult(m).output;
    } catch {
      output = undefined;
    }
    if (output) return uiToolOutcome(output);
  }
  if (m.isError) return { state: "output-error", errorText: m.content.map((c) => (c.type === "text" ? c.text : "")).join("") };
  const items = m.content.map((c, i) => {
    const e = x.parts?.[i];
    if (e?.part) return revived(e.part);
    return c.type === "image" ? { type: "image-data", data: c.data, mediaType: c.mimeType } : c;
  });
  return { state: "output-available", output: uiToolContent(items) };
}

/**
 * A tool call's UI part, once its approval and result are known: the
 * state readUIMessageStream leaves it in (a denied call is `output-denied`,
 * as useChat shows it once the server has answered).
 */
function uiToolPart(call, dynamic) {
  const part = dynamic ? { type: "dynamic-tool", toolName: call.name, toolCallId: call.id } : { type: `tool-${call.name}`, toolCallId: call.id };
  const { result, approval } = call;
  let fields;
  let shownApproval;
  if (result && (result.state === "output-denied" || approval?.approved === false)) {
    if (approval) {
      fields = { state: "output-denied" };
      shownApproval = { ...approval, approved: false };
      if (shownApproval.reason === undefined && result.reason !== undefined) shownApproval.reason = result.reason;
    } else {
      // Denied with no approval in the array (the UI's output-denied needs one): an error.
      fields = { state: "output-error", errorText: result.reason ?? "Tool execution denied." };
    }
  } else if (result) {
    fields = result.state === "output-error" ? { state: "output-error", errorText: result.errorText } : { state: "output-available", output: result.output };
    if (approval?.approved === true) shownApproval = approval;
  } else if (approval) {
    fields = { state: approval.approved === undefined ? "approval-requested" : "approval-responded" };
    shownApproval = approval;
  } else {
    fields = { state: "input-available" };
  }
  Object.assign(part, { state: fields.state, input: call.input });
  if (fields.state === "output-available") part.output = fields.output;
  if (fields.state === "output-error") part.errorText = fields.errorText;
  if (call.providerExecuted !== undefined) part.providerExecuted = call.providerExecuted;
  if (call.providerOptions !== undefined) part.callProviderMetadata = call.providerOptions;
  if (shownApproval) part.approval = shownApproval;
  return part;
}

/** An approval request part -> the UI part's `approval`, as readUIMessageStream writes it. */
function uiApproval(p) {
  const a = { id: p.approvalId };
  if (p.reason != null) a.requestReason = p.reason;
  if (p.isAutomatic === true) a.isAutomatic = true;
  if (p.signature != null) a.signature = p.signature;
  if (hasOwn(p, "inputSchemaInput")) a.inputSchemaInput = p.inputSchemaInput;
  return a;
}

/** A user message's parts: text, and every image or file as a file part. */
function uiUserParts(m) {
  const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
  const parts = [];
  content.forEach((c, i) => {
    const e = m.aiSdk?.parts?.[i];
    if (e?.part) {
      const p = revived(e.part);
      if (p.type === "image" || p.type === "file") parts.push(uiFilePart(p, e.uiUrl));
      else if (p.type === "text") parts.push(withMetadata({ type: "text", text: p.text }, p.providerOptions));
    } else if (c.type === "image") {
      parts.push(uiFilePart({ type: "image", image: c.data, mediaType: c.mimeType, providerOptions: e?.providerOptions }));
    } else {
      parts.push(withMetadata({ type: "text", text: c.text }, e?.providerOptions));
    }
  });
  return parts;
}

/**
 * The flat array as useChat's UIMessages, shown as the core's display rule
 * says (agentMessagesToChatMessages), in the parts the AI SDK's own UI
 * conversions build: summaries and clearing markers left out (with
 * `{ divider: true }` a message with one `data-compaction` or
 * `data-tool-output-cleared` part stands in each one's place); an
 * assistant's steps, tool results and approvals merged into one message
 * as useChat does; images and files as file parts; system messages as
 * system messages; a pi-only message shown as one data part
 * (`data-custom`, `data-branch-summary`, `data-bash-execution`, and
 * `data-message` for an app's own role).
 */
export function toUIMessages(messages, options = {}) {
  if (!Array.isArray(messages)) throw new TypeError("toUIMessages: messages must be an array");
  if (!isObject(options)) throw new TypeError(`toUIMessages: options must be an object, got ${kindOf(options)}`);
  for (let i = 0; i < messages.length; i++) {
    if (!isObject(messages[i])) throw new TypeError(`toUIMessages: messages[${i}] must be a message object, got ${kindOf(messages[i])}`);
  }
  const ids = uiIds();
  const out = [];
  let assistant = null;
  // Tool calls by id and by approval id: a call's part is built once its approval and result are known.
  const calls = new Map();
  const approvals = new Map();
  const records = new Set();
  const dynamic = new Set();
  const row = (m, role, parts) => {
    assistant = null;
    out.push({ id: ids.of(m), role, parts });
  };
  const addCall = (call) => {
    calls.set(call.id, call);
    records.add(call);
    assistant.parts.push(call);
  };
  // What is shown, hidden or becomes a divider is the core's display rule.
  // (asked for dividers always: a summary ends an assistant's row either way).
  const divider = options.divider === true;
  for (const m of agentMessagesToChatMessages(messages, { divider: true })) {
    if (m.role === "user" || m.role === "assistant" || m.role === "toolResult") checkFlatMessage(m, () => `toUIMessages: messages[${messages.indexOf(m)}]`);
    if (Array.isArray(m.aiSdk?.uiDynamic)) for (const id of m.aiSdk.uiDynamic) dynamic.add(id);
    switch (m.role) {
      case "system": {
        const text = typeof m.content === "string" ? m.content : (m.content ?? []).map((c) => c?.text ?? "").join("");
        row(m, "system", [withMetadata({ type: "text", text }, m.aiSdk?.providerOptions)]);
        break;
      }
      case "user":
        row(m, "user", uiUserParts(m));
        break;
      case "assistant": {
        if (!assistant) {
          assistant = { id: ids.of(m), role: "assistant", parts: [] };
          out.push(assistant);
        }
        assistant.parts.push({ type: "step-start" });
        m.content.forEach((c, i) => {
          const e = m.aiSdk?.parts?.[i];
          if (e?.part) {
            const p = revived(e.part);
            switch (p.type) {
              case "tool-call":
                addCall({ id: p.toolCallId, name: p.toolName, input: p.input, providerExecuted: p.providerExecuted, providerOptions: p.providerOptions });
                break;
              case "tool-result": {
                // A provider-executed tool's result, in the assistant's own message.
                const call = calls.get(p.toolCallId);
                if (call) call.result = uiToolOutcome(p.output);
                break;
              }
              case "tool-approval-request": {
                const call = calls.get(p.toolCallId);
                if (call) {
                  call.approval = uiApproval(p);
                  approvals.set(p.approvalId, call);
                }
                break;
              }
              case "file":
                assistant.parts.push(uiFilePart(p, e.uiUrl));
                break;
              case "reasoning-file": {
                const { mediaType, url } = uiFilePart(p);
                assistant.parts.push(withMetadata({ type: "reasoning-file", mediaType, url }, p.providerOptions));
                break;
              }
              case "custom":
                assistant.parts.push(withMetadata({ type: "custom", kind: p.kind }, p.providerOptions));
                break;
              default:
                break;
            }
          } else if (c.type === "text") {
            if (c.text) assistant.parts.push(withMetadata({ type: "text", text: c.text, state: "done" }, e?.providerOptions));
          } else if (c.type === "thinking") {
            assistant.parts.push(withMetadata({ type: "reasoning", text: c.thinking, state: "done" }, e?.providerOptions));
          } else if (c.type === "toolCall") {
            addCall({ id: c.id, name: c.name, input: c.arguments, providerExecuted: e?.providerExecuted, providerOptions: e?.providerOptions });
          }
        });
        if (m.stopReason === "error" && m.errorMessage) assistant.parts.push({ type: "text", text: m.errorMessage, state: "done" });
        break;
      }
      case "toolResult": {
        const call = calls.get(m.toolCallId);
        if (call) call.result = uiToolResult(m);
        break;
      }
      case "aiSdkToolPart": {
        // A tool message's other part: an approval response updates its call.
        const p = m.part;
        const call = p?.type === "tool-approval-response" ? approvals.get(p.approvalId) : undefined;
        if (!call) break;
        call.approval = { ...call.approval, id: p.approvalId, approved: p.approved };
        if (p.reason != null) call.approval.reason = p.reason;
        if (p.providerExecuted != null) call.providerExecuted = p.providerExecuted;
        break;
      }
      case "compactionDivider": {
        // A streamed reply the provider compacted before answering is split
        // at its compaction part, and what came before it holds nothing to
        // show (the stream's `custom` metadata): the divider goes before
        // that row, which goes on with the reply after the summary.
        const open = assistant !== null && assistant.parts.every((p) => p.type === "step-start" || p.type === "custom");
        const row = { id: ids.next(`compaction-${m.timestamp}`), role: "assistant", parts: [{ type: DIVIDER_PART_TYPE, data: { tokensBefore: m.tokensBefore, timestamp: m.timestamp } }] };
        if (divider) out.splice(open ? out.indexOf(assistant) : out.length, 0, row);
        if (!open) assistant = null;
        break;
      }
      case "toolOutputClearedDivider":
        if (!divider) break;
        assistant = null;
        out.push({
          id: ids.next(`cleared-${m.timestamp}`),
          role: "assistant",
          parts: [{ type: CLEARED_DIVIDER_PART_TYPE, data: { tokensFreed: m.tokensFreed, toolCount: m.toolCount, timestamp: m.timestamp } }],
        });
        break;
      case "custom":
        row(m, "assistant", [{ type: "data-custom", data: { customType: m.customType, content: m.content } }]);
        break;
      case "branchSummary":
      case "bashExecution": {
        const { role, ...data } = m;
        row(m, "assistant", [{ type: role === "branchSummary" ? "data-branch-summary" : "data-bash-execution", data }]);
        break;
      }
      default:
        // An app's own role: shown as the core shows it, the message itself.
        row(m, "assistant", [{ type: "data-message", data: m }]);
    }
  }
  for (const r of out) {
    if (r.role === "assistant") r.parts = r.parts.map((p) => (records.has(p) ? uiToolPart(p, dynamic.has(p.id)) : p));
  }
  return out;
}

/**
 * What a UI message says that its ModelMessages cannot, kept on its flat
 * messages for toUIMessages: its id (`uiId`), the tool calls it showed as
 * `dynamic-tool` parts (`uiDynamic`), and the URL it showed for a file sent
 * by provider reference (`uiUrl` on the part).
 */
function keptFromUI(ui, pi) {
  if (pi.length === 0) return pi;
  const out = pi.slice();
  const parts = Array.isArray(ui?.parts) ? ui.parts : [];
  const urls = parts.filter((p) => p?.type === "file" && p.providerReference != null && typeof p.url === "string" && p.url !== "");
  for (let k = 0; k < out.length && urls.length; k++) {
    const entries = out[k].aiSdk?.parts;
    if (!Array.isArray(entries)) continue;
    let changed = false;
    const next = entries.map((e) => {
      const data = e?.part?.type === "file" ? e.part.data : undefined;
      if (data?.type !== "reference") return e;
      const at = urls.findIndex((p) => JSON.stringify(p.providerReference) === JSON.stringify(data.reference));
      if (at < 0) return e;
      changed = true;
      return { ...e, uiUrl: urls.splice(at, 1)[0].url };
    });
    if (changed) out[k] = { ...out[k], aiSdk: { ...out[k].aiSdk, parts: next } };
  }
  const first = {};
  if (typeof ui?.id === "string") first.uiId = ui.id;
  const dynamic = parts.filter((p) => p?.type === "dynamic-tool" && typeof p.toolCallId === "string").map((p) => p.toolCallId);
  if (dynamic.length) first.uiDynamic = dynamic;
  if (Object.keys(first).length) out[0] = { ...out[0], aiSdk: { ...out[0].aiSdk, ...first } };
  return out;
}

/** A UIMessage's shape at `where`: its role, its parts, each an object with a string type (the SDK's conversion reads them). */
function checkUIMessage(ui, where) {
  if (!isObject(ui)) throw new TypeError(`${where} must be a UIMessage object, got ${kindOf(ui)}`);
  if (ui.role !== "system" && ui.role !== "user" && ui.role !== "assistant") {
    const got = typeof ui.role === "string" ? JSON.stringify(ui.role) : kindOf(ui.role);
    throw new TypeError(`${where}.role must be "system", "user" or "assistant", got ${got}`);
  }
  if (!Array.isArray(ui.parts)) throw new TypeError(`${where}.parts must be an array of parts, got ${kindOf(ui.parts)}`);
  for (let k = 0; k < ui.parts.length; k++) {
    const p = ui.parts[k];
    if (!isObject(p)) throw new TypeError(`${where}.parts[${k}] must be an object, got ${kindOf(p)}`);
    if (typeof p.type !== "string") throw new TypeError(`${where}.parts[${k}].type must be a string, got ${kindOf(p.type)}`);
  }
}

/**
 * UIMessages (useChat's, e.g. the new user message of a request) -> flat
 * messages, through the SDK's own convertToModelMessages. Rows that stand
 * for pi-only messages (dividers, `data-custom`, `data-branch-summary`,
 * `data-bash-execution`, `data-message`) are skipped. Each pi message keeps
 * what the UI showed that the SDK's messages cannot hold (the UI message's
 * id, dynamic tools, a referenced file's URL), so toUIMessages gives the
 * same UI messages back.
 */
export async function fromUIMessages(uiMessages, options = {}) {
  if (!Array.isArray(uiMessages)) throw new TypeError("fromUIMessages: uiMessages must be an array");
  checkFromOptions(options, "fromUIMessages");
  // By index: a hole is a message too (forEach would skip it).
  for (let i = 0; i < uiMessages.length; i++) checkUIMessage(uiMessages[i], `fromUIMessages: uiMessages[${i}]`);
  const { convertToModelMessages } = await import("ai");
  const out = [];
  for (let i = 0; i < uiMessages.length; i++) {
    const ui = uiMessages[i];
    if (ui.parts.length && ui.parts.every((p) => ROW_PART_TYPES.has(p.type))) continue;
    const model = await convertToModelMessages([ui], options);
    const meta = { ...options, timestamp: options.timestamp ?? Date.now() };
    out.push(...keptFromUI(ui, flatFromModel(model, meta, (j) => `fromUIMessages: convertToModelMessages(uiMessages[${i}])[${j}]`)));
  }
  return out;
}
