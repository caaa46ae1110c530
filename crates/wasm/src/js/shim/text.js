// Strings across the boundary: UTF-16 code units both ways, lone surrogates
// removed as pi-ai removes them from what it sends, and what pi's
// serializeConversation reads from every message gathered in one call (the
// Rust core decodes it and composes the text,
// crates/core/src/compaction/serialize/words.rs), then
// the composed text assembled from pieces. Imported by strings.rs,
// message_source.rs, providers.rs and (through summarizer.js) compaction.rs.

import { describeValue, thrownMessage } from "./values.js";

// A string's UTF-16 code units, and back (exact, lone surrogates included).
export function codeUnits(text) {
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return units;
}

export function fromCodeUnits(units) {
  let text = "";
  for (let i = 0; i < units.length; i += 8192) {
    text += String.fromCharCode.apply(null, units.subarray(i, i + 8192));
  }
  return text;
}

// The text without unpaired surrogates, as pi-ai's sanitizeSurrogates
// leaves what it sends (for the ready summarizers' requests).
export function sanitizeSurrogates(text) {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "");
}

// serializeConversation: what pi's serializer reads from every message, read
// and converted by the engine (`${v}`, Object.entries, JSON.stringify), a
// chunk of messages per call (the binding asks for the next chunk only when
// the core reads on). A read or conversion that throws is recorded and
// gathering goes on: the Rust core reports the failure pi meets first.
// Strings go into `pieces` (indices and lengths in the words); the codes must
// match crates/core/src/compaction/serialize/words.rs.
const M_NULLISH = 0, M_THREW = 1, M_ROLE_THREW = 2, M_SKIPPED = 3, M_USER = 4, M_ASSISTANT = 5,
  M_TOOL_RESULT = 6, C_THREW = 0, C_STRING = 1, C_BLOCKS = 2, C_OTHER = 3, B_HOLE = 0,
  B_NULLISH = 1, B_THREW = 2, B_TYPE_THREW = 3, B_OTHER = 4, B_TEXT = 5, B_THINKING = 6,
  B_TOOL_CALL = 7, V_READ_THREW = 0, V_NONE = 1, V_TEXT = 2, V_NOT_TEXT = 3, A_READ_THREW = 0,
  A_NULLISH = 1, A_ENTRIES_THREW = 2, A_ENTRIES = 3, J_TEXT = 0, J_THREW = 1;

const isNullish = (v) => v === undefined || v === null;
const put = (w, pieces, code, s) => w.push(code, pieces.push(s) - 1);
const putText = (w, pieces, code, s) => w.push(code, pieces.push(s) - 1, s.length);
const threw = (w, pieces, code, e) => put(w, pieces, code, thrownMessage(e));
const notText = (v, e) => `${describeValue(v)} (converting it threw: ${thrownMessage(e)})`;

// `${object[key]}`; for `join`, null and undefined are nothing.
function gatherValue(w, pieces, object, key, join) {
  let v, s;
  try {
    v = object[key];
  } catch (e) {
    return threw(w, pieces, V_READ_THREW, e);
  }
  if (join && isNullish(v)) return w.push(V_NONE);
  try {
    s = `${v}`;
  } catch (e) {
    return put(w, pieces, V_NOT_TEXT, notText(v, e));
  }
  putText(w, pieces, V_TEXT, s);
}

// Object.entries(block.arguments) with `${JSON.stringify(v)}` of each value,
// then the name (which pi reads only when all that worked).
function gatherToolCall(w, pieces, block) {
  let args, entries, ok = true;
  try {
    args = block.arguments;
    if (isNullish(args)) put(w, pieces, A_NULLISH, describeValue(args));
    else entries = Object.entries(args);
  } catch (e) {
    // `args` is still undefined if reading it threw.
    threw(w, pieces, args === undefined ? A_READ_THREW : A_ENTRIES_THREW, e);
  }
  if (entries) {
    w.push(A_ENTRIES, entries.length);
    for (const [key, v] of entries) {
      w.push(pieces.push(key) - 1, key.length);
      try {
        putText(w, pieces, J_TEXT, `${JSON.stringify(v)}`);
      } catch (e) {
        ok = false;
        put(w, pieces, J_THREW, `${describeValue(v)} at ${JSON.stringify(key)} (${thrownMessage(e)})`);
      }
    }
  }
  if (entries && ok) gatherValue(w, pieces, block, "name", false);
  else w.push(V_NONE);
}

function gatherBlock(w, pieces, block, assistant) {
  let type;
  if (isNullish(block)) return put(w, pieces, B_NULLISH, describeValue(block));
  try {
    type = block.type;
  } catch (e) {
    return threw(w, pieces, B_TYPE_THREW, e);
  }
  if (type === "text") {
    w.push(B_TEXT);
    gatherValue(w, pieces, block, "text", true);
  } else if (assistant && type === "thinking") {
    w.push(B_THINKING);
    gatherValue(w, pieces, block, "thinking", true);
  } else if (assistant && type === "toolCall") {
    w.push(B_TOOL_CALL);
    gatherToolCall(w, pieces, block);
  } else {
    w.push(B_OTHER);
  }
}

// `content` visited as pi visits it: `for…of` in an assistant message (any
// iterable), `filter` otherwise (an array; the holes it skips are recorded so
// that indices stay right).
function gatherContent(w, pieces, message, assistant) {
  let content, iterable, n = 0;
  try {
    content = message.content;
    if (typeof content === "string" && !assistant) return putText(w, pieces, C_STRING, content);
    iterable = assistant
      ? !isNullish(content) && typeof content[Symbol.iterator] === "function"
      : Array.isArray(content);
  } catch (e) {
    return threw(w, pieces, C_THREW, e);
  }
  if (!iterable) return put(w, pieces, C_OTHER, describeValue(content));
  const at = w.push(C_BLOCKS, 0) - 1;
  try {
    if (assistant) {
      for (const block of content) gatherBlock(w, pieces, block, true), n++;
    } else {
      Array.prototype.forEach.call(content, (block, j) => {
        for (; n < j; n++) w.push(B_HOLE);
        gatherBlock(w, pieces, block, false);
        n++;
      });
    }
  } catch (e) {
    // Iterating threw (a proxy's trap, an iterator): at the next element.
    threw(w, pieces, B_THREW, e);
    n++;
  }
  w[at] = n;
}

// The words for messages[from..to), their strings added to `pieces`.
export function gatherConversation(messages, from, to, pieces) {
  const w = [];
  for (let i = from; i < to; i++) {
    let message, role;
    try {
      message = messages[i];
      if (isNullish(message)) {
        put(w, pieces, M_NULLISH, describeValue(message));
        continue;
      }
    } catch (e) {
      threw(w, pieces, M_THREW, e);
      continue;
    }
    try {
      role = message.role;
    } catch (e) {
      threw(w, pieces, M_ROLE_THREW, e);
      continue;
    }
    const code = role === "user" ? M_USER : role === "assistant" ? M_ASSISTANT : role === "toolResult" ? M_TOOL_RESULT : M_SKIPPED;
    w.push(code);
    if (code !== M_SKIPPED) gatherContent(w, pieces, message, code === M_ASSISTANT);
  }
  return new Uint32Array(w);
}

// The text the Rust core composed: [0, piece], [1, piece, n] (its first n
// code units, as `slice` cuts), [2, start, end] (a range of `literals`).
// May throw (a string too long); imported with `catch`.
export function assembleText(pieces, ops, literals) {
  let text = "";
  for (let i = 0; i < ops.length; i += ops[i] === 0 ? 2 : 3) {
    const op = ops[i];
    text += op === 0 ? pieces[ops[i + 1]] : op === 1 ? pieces[ops[i + 1]].slice(0, ops[i + 2]) : literals.slice(ops[i + 1], ops[i + 2]);
  }
  return text;
}

// The text of a user request as a summary quotes it verbatim: a string
// content as it is, else its `text` parts joined by newlines (images and
// other parts left out); "" when it has none. May throw on hostile input;
// imported with `catch`.
export function requestText(message) {
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts = [];
  for (const b of content) {
    if (typeof b === "object" && b !== null && b.type === "text" && typeof b.text === "string") parts.push(b.text);
  }
  return parts.join("\n");
}
