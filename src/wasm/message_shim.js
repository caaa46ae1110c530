// Gathers the facts the Rust core needs about messages in one call per
// message (or per array), so the per-turn path does not cross the wasm
// boundary once per field. No decisions are made here.

// Role codes: must match `Role` in src/core/role.rs.
const ROLE_CODES = new Map([
  ["user", 0],
  ["assistant", 1],
  ["toolResult", 2],
  ["bashExecution", 3],
  ["custom", 4],
  ["branchSummary", 5],
  ["compactionSummary", 6],
]);
const OTHER_ROLE = 7;
export const NOT_AN_OBJECT = 8;
export const ROLE_NOT_A_STRING = 9;
export const UNREADABLE = 10;

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

// Role codes of messages[0..length), one byte each.
export function roleCodes(messages, length) {
  const codes = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    let message;
    try {
      message = messages[i];
    } catch {
      codes[i] = UNREADABLE;
      continue;
    }
    codes[i] = roleCode(message);
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

// Readers for values the caller handed in, which may be hostile (throwing
// getters, revoked proxies). An exception must never unwind through wasm
// frames, so each of these either cannot throw or is imported with `catch`.

// Length of an array argument: -1 when it is not an array. May throw (a
// proxy's trap); imported with `catch`.
export function arrayLength(value) {
  if (!Array.isArray(value)) return -1;
  const length = value.length;
  return typeof length === "number" && length >= 0 && length <= 0xffffffff ? length : -2;
}

export function sliceArray(array, start, end) {
  return Array.prototype.slice.call(array, start, end);
}

// A short description of a value's type for error messages; never throws.
export function describeValue(value) {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  try {
    if (Array.isArray(value)) return "an array";
  } catch {
    return "a revoked proxy";
  }
  switch (typeof value) {
    case "object": return "an object";
    case "string": return "a string";
    case "number": return "a number";
    case "boolean": return "a boolean";
    case "bigint": return "a bigint";
    case "symbol": return "a symbol";
    case "function": return "a function";
    default: return typeof value;
  }
}

// The message of whatever was thrown; never throws.
export function thrownMessage(thrown) {
  try {
    if (thrown instanceof Error) return String(thrown.message);
    if (typeof thrown === "string") return thrown;
  } catch {
    // fall through
  }
  return `${describeValue(thrown)} was thrown`;
}
