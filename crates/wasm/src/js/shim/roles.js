// Role codes of messages, one call per message or per array, and the object
// literals of the messages the core decides to create. No decisions here.
// Imported by crates/wasm/src/js/message_access.rs.

// Role codes: must match `Role` in crates/core/src/message/role.rs.
const ROLE_CODES = new Map([
  ["user", 0],
  ["assistant", 1],
  ["toolResult", 2],
  ["bashExecution", 3],
  ["custom", 4],
  ["branchSummary", 5],
  ["compactionSummary", 6],
  ["toolOutputCleared", 7],
]);
export const OTHER_ROLE = 8;
export const NOT_AN_OBJECT = 9;
export const ROLE_NOT_A_STRING = 10;
export const UNREADABLE = 11;

export function roleCode(message) {
  if (typeof message !== "object" || message === null) return NOT_AN_OBJECT;
  let role;
  try {
    role = message.role;
  } catch {
    return UNREADABLE;
  }
  if (typeof role !== "string") return ROLE_NOT_A_STRING;
  const code = ROLE_CODES.get(role);
  return code === undefined ? OTHER_ROLE : code;
}

// Role codes of messages[from..to), one byte each.
export function roleCodes(messages, from, to) {
  const codes = new Uint8Array(to - from);
  for (let i = from; i < to; i++) {
    let message;
    try {
      message = messages[i];
    } catch {
      codes[i - from] = UNREADABLE;
      continue;
    }
    codes[i - from] = roleCode(message);
  }
  return codes;
}

// Object literals for the messages the core decides to create; a literal
// keeps the key order JSON.stringify shows and is cheaper than Reflect.set.
export function textUserMessage(text, timestamp) {
  return { role: "user", content: [{ type: "text", text }], timestamp };
}

export function userMessage(content, timestamp) {
  return { role: "user", content, timestamp };
}

export function compactionDivider(tokensBefore, timestamp) {
  return { role: "compactionDivider", tokensBefore, timestamp };
}


// A compaction summary as the model is sent it when the history tools are
// offered: a copy whose summary ends with `note` (the core's blank line and
// note saying that earlier details can be looked up). Anything else comes
// back as it is.
export function notedSummary(message, note) {
  if (message?.role !== "compactionSummary" || typeof message.summary !== "string") return message;
  return { ...message, summary: message.summary + note };
}
