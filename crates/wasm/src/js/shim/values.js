// Readers for values the caller handed in, which may be hostile (throwing
// getters, revoked proxies): an exception must never unwind through wasm
// frames, so each of these either cannot throw or is imported with `catch`.
// Also the descriptions of values and of what was thrown that error messages
// use. Imported by crates/wasm/src/js/errors.rs and message_access.rs.

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
