// Plumbing for the summarizer call: a deadline and cancellation around a
// promise the app's callback returned. No decisions here: Rust decides what
// a timeout or an abort means. Used by crates/wasm/src/compaction.rs.

export class SummarizerTimeout extends Error {
  constructor(ms) {
    super(`the summarizer did not answer within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

// Settles with `value` (a value or a promise), or rejects when `controller`
// aborts, or after `ms` (then it aborts `controller` with a TimeoutError,
// so the app's fetch is cancelled too).
export function settleWithin(value, ms, controller) {
  const signal = controller.signal;
  const settled = new Promise((resolve, reject) => {
    let timer;
    const finish = (settle, v) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      settle(v);
    };
    const onAbort = () => finish(reject, signal.reason);
    // Handled first, so that the app's promise never rejects unhandled.
    Promise.resolve(value).then((v) => finish(resolve, v), (e) => finish(reject, e));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (ms > 0 && Number.isFinite(ms)) {
      timer = setTimeout(() => controller.abort(new SummarizerTimeout(ms)), ms);
    }
  });
  // The compactor may await it later (a turn prefix is summarized while the
  // history is): a failure before then is not an unhandled rejection.
  settled.catch(() => {});
  return settled;
}

// Aborts `controller` when `signal` (the caller's) aborts; returns a
// function that undoes the link.
export function linkAbort(signal, controller) {
  if (!signal) return () => {};
  // The options reader let only an AbortSignal through; one of another
  // realm or a subclass may still throw here, and an exception must not
  // unwind through wasm frames: it is then not linked.
  try {
    if (signal.aborted) {
      controller.abort(signal.reason);
      return () => {};
    }
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    return () => {
      try {
        signal.removeEventListener("abort", onAbort);
      } catch {}
    };
  } catch {
    return () => {};
  }
}

// What a summarizer rejected with may be hostile (a revoked proxy, a
// throwing getter): these never throw.
export function isTimeout(error) {
  try {
    return error instanceof SummarizerTimeout;
  } catch {
    return false;
  }
}

export function isAbortError(error) {
  try {
    return typeof error === "object" && error !== null && error.name === "AbortError";
  } catch {
    return false;
  }
}

// Resolves with true when `promise` settles (either way), or with false
// as soon as `signal` (an AbortSignal, or none) aborts, or at once when it
// already has: a wait its caller may give up on.
export function settledUnless(promise, signal) {
  return new Promise((resolve) => {
    const finish = (ended) => {
      try {
        signal?.removeEventListener("abort", onAbort);
      } catch {}
      resolve(ended);
    };
    const onAbort = () => finish(false);
    Promise.resolve(promise).then(() => finish(true), () => finish(true));
    try {
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
    } catch {}
  });
}

export function newAbortController() {
  return new AbortController();
}

