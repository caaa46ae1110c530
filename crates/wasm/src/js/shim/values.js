// Readers for values the caller handed in, which may be hostile (throwing
// getters, revoked proxies): an exception must never unwind through wasm
// frames, so each of these either cannot throw or is imported with `catch`.
// Also the descriptions of values and of what was thrown that error messages
// use, the engine's number and case conversions, undo's copy, and
// modelContextChange's argument and answer. Imported by
// crates/wasm/src/js/errors.rs, message_access.rs, engine.rs, undo.rs and
// conversation.rs.

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

// Whether a value is an AbortSignal (of this realm or another: a frame's);
// never throws (a revoked proxy is not one).
export function isAbortSignal(value) {
  try {
    if (typeof AbortSignal === "function" && value instanceof AbortSignal) return true;
    return Object.prototype.toString.call(value) === "[object AbortSignal]" && typeof value.addEventListener === "function";
  } catch {
    return false;
  }
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

// The engine's own number text, number parsing and lowercasing, which the
// core is linked with in the wasm build (crates/wasm/src/js/engine.rs):
// exact by definition, and Rust's float formatting, float parsing and case
// tables stay out of the .wasm. Called with numbers and strings only: they
// cannot throw.
export function numberText(x) {
  return String(x);
}

export function textNumber(text) {
  return Number(text);
}

export function lowerCase(text) {
  return text.toLowerCase();
}

// `messages` without element `i` (removeLastCompaction, undo.rs): the same
// objects otherwise. May throw (a proxy); imported with `catch`.
export function withoutIndex(messages, i) {
  const out = Array.prototype.slice.call(messages, 0, i);
  for (let k = i + 1; k < messages.length; k++) out.push(messages[k]);
  return out;
}

// `since` of modelContextChange as [view, length] (read once each, so that
// no string key is made in Rust per call). May throw (a getter); imported
// with `catch`.
export function viewHeld(since) {
  return [since.view, since.length];
}

// modelContextChange's answer, made here for the same reason.
export function viewChange(view, kept, added) {
  return { view, kept, added };
}

// afterRun's facts as bits: 1 overflow, 2 retried (truthy). Throws a
// TypeError when they are not an object; imported with `catch`.
export function runFacts(facts) {
  if (facts === null || typeof facts !== "object") throw new TypeError("afterRun: facts must be an object { overflow, retried }");
  return (facts.overflow ? 1 : 0) | (facts.retried ? 2 : 0);
}
