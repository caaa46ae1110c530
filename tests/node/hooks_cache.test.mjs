// The agent hooks' per-turn caches against a fresh computation, turn by turn.
// The compactor keeps its own copy of the array and of the LLM messages it
// converted (crates/wasm/src/compactor.rs: Tracked, LlmCache; the shim's
// syncKnown/syncLlm in js/shim/known.js) so that a turn costs only what is
// new. Here a random session is edited the ways an app edits it — appends of
// every role, a summary inserted inside the context (the LLM cache follows
// the moved context), a message removed, the array cut back, a message
// replaced by a new object inside the context, clearing markers inserted
// and taken out again, pinned messages before a summary — and after every
// edit the cached hooks must give exactly what the stateless functions and a
// fresh compactor give: the same context, the same LLM messages, the same
// threshold answer and token count. One thing only the compactor that saw
// the edits knows: a summary or marker taken out (or replaced) takes the
// usage reported after it with it (it was reported for the context the
// summary or marker made); the fresh compactor is given that usage as the
// other knows it, none.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Compactor, convertToLlm, transformContext } from "agent-compaction";
import { rng } from "./estimator-corpus.mjs";
import { usage } from "../support/pi-usage.mjs";

/**
 * `taken(array, i)`: an edit takes `array[i]` out or replaces it (the
 * messages after it stay).
 */
function session(seed, taken = () => {}) {
  const rand = rng(seed);
  const pick = (n) => Math.floor(rand() * n);
  let clock = 1_000;
  let ids = 0;
  const text = () => "word ".repeat(1 + pick(400));
  const make = {
    user: () => ({ role: "user", content: text(), timestamp: clock++, ...(rand() < 0.1 ? { pinned: true } : {}) }),
    call: () => {
      const id = `t${ids++}`;
      return {
        role: "assistant",
        content: [{ type: "toolCall", id, name: "read", arguments: { path: `/src/${id}.ts` } }],
        api: "openai-completions",
        provider: "local",
        model: "m",
        stopReason: "toolUse",
        timestamp: clock++,
        ...(rand() < 0.5 ? { usage: usage(1_000 + pick(50_000)) } : {}),
      };
    },
    result: () => ({
      role: "toolResult",
      toolCallId: `t${Math.max(0, ids - 1)}`,
      toolName: "read",
      content: [{ type: "text", text: text() }],
      isError: false,
      timestamp: clock++,
    }),
    answer: () => ({
      role: "assistant",
      content: [{ type: "text", text: text() }],
      api: "openai-completions",
      provider: "local",
      model: "m",
      stopReason: "stop",
      timestamp: clock++,
      ...(rand() < 0.7 ? { usage: usage(1_000 + pick(50_000)) } : {}),
    }),
    bash: () => ({ role: "bashExecution", command: "ls", output: text(), exitCode: 0, cancelled: false, truncated: false, timestamp: clock++ }),
    custom: () => ({ role: "custom", customType: "note", content: text(), display: true, timestamp: clock++ }),
    summary: () => ({ role: "compactionSummary", summary: `summary ${clock}\n${text()}`, tokensBefore: 50_000, timestamp: clock++ }),
    branch: () => ({ role: "branchSummary", summary: text(), fromId: "x", timestamp: clock++ }),
  };
  const lastSummary = (a) => a.findLastIndex((m) => m.role === "compactionSummary");
  const edits = [
    // appends, the common turn (weighted)
    ...Array(12).fill((a) => [...a, make[["user", "call", "result", "answer", "answer", "bash", "custom", "branch"][pick(8)]]()]),
    // a summary inserted inside the context, as a compaction inserts it
    (a) => {
      const from = Math.max(0, lastSummary(a) + 1);
      const at = from + pick(a.length - from + 1);
      return [...a.slice(0, at), make.summary(), ...a.slice(at)];
    },
    // a summary appended at the end
    (a) => [...a, make.summary()],
    // one message taken out (a failed attempt, an undone summary)
    (a) => {
      if (!a.length) return a;
      const i = pick(a.length);
      taken(a, i);
      return a.toSpliced(i, 1);
    },
    // cut back (a branch)
    (a) => a.slice(0, Math.max(0, a.length - 1 - pick(5))),
    // a message inside the context replaced by an edited copy
    (a) => {
      if (!a.length) return a;
      const from = Math.max(0, lastSummary(a));
      const i = from + pick(a.length - from);
      taken(a, i);
      return a.with(i, { ...a[i], timestamp: a[i].timestamp });
    },
    // a clearing marker for the results so far (inserted after them)
    (a) => {
      const ids = a.filter((m) => m.role === "toolResult").map((m) => m.toolCallId).slice(0, 3);
      if (!ids.length) return a;
      const marker = { role: "toolOutputCleared", toolCallIds: ids, tokensFreed: 100, timestamp: clock++ };
      return [...a, marker];
    },
    // a clearing marker taken out again
    (a) => {
      const i = a.findLastIndex((m) => m.role === "toolOutputCleared");
      if (i < 0) return a;
      taken(a, i);
      return a.toSpliced(i, 1);
    },
    // the same array again (a second call in the same turn)
    (a) => a,
  ];
  return { next: (a) => edits[pick(edits.length)](a) };
}

for (const estimator of ["pi", "calibrated"]) {
  test(`the hooks' caches give what a fresh computation gives, through every kind of edit (${estimator})`, async () => {
    for (const seed of [1, 2, 3, 4]) {
      // The messages whose usage counts no more, and the array with their
      // usage left out.
      const forgotten = new Set();
      const { next } = session(seed, (a, i) => {
        const gone = a[i];
        // After a summary: the usage it did not make stale (it says no
        // keptMessages: reported after its timestamp); after a marker: all.
        const after = gone.role === "compactionSummary" ? (m) => m.timestamp > gone.timestamp : gone.role === "toolOutputCleared" ? () => true : () => false;
        for (const m of a.slice(i + 1)) if (m.usage && after(m)) forgotten.add(m);
      });
      const known = (a) => a.map((m) => (forgotten.has(m) ? (({ usage: _, ...rest }) => rest)(m) : m));
      const options = { contextWindow: 60_000, estimator };
      const cached = new Compactor(options);
      const hooks = cached.agentHooks();
      let messages = [];
      for (let turn = 0; turn < 400; turn++) {
        messages = next(messages);
        const where = `seed ${seed}, turn ${turn}`;
        const ctx = await hooks.transformContext(messages);
        assert.deepEqual(ctx, transformContext(messages), `context, ${where}`);
        const llm = await hooks.convertToLlm(ctx);
        assert.deepEqual(llm, convertToLlm(ctx), `LLM messages, ${where}`);
        // The kept messages are passed through, not copied.
        const fresh = convertToLlm(ctx);
        llm.forEach((m, i) => {
          if (ctx.includes(fresh[i])) assert.equal(m, fresh[i], `message ${i} passed through, ${where}`);
        });
        const cold = new Compactor(options);
        assert.equal(cached.needsCompaction(messages), cold.needsCompaction(known(messages)), `needsCompaction, ${where}`);
        assert.equal(cached.contextTokens(messages), cold.contextTokens(known(messages)), `contextTokens, ${where}`);
        cold.free();
      }
      cached.free();
    }
  });
}

test("the LLM messages are a new array every turn, and the caller's edits to one do not reach the next", async () => {
  const c = new Compactor({ contextWindow: 200_000 });
  const hooks = c.agentHooks();
  const a = [{ role: "user", content: "one", timestamp: 1 }];
  const first = await hooks.convertToLlm(await hooks.transformContext(a));
  first.push({ role: "user", content: "injected", timestamp: 2 });
  first[0] = null;
  const b = [...a, { role: "user", content: "two", timestamp: 3 }];
  const second = await hooks.convertToLlm(await hooks.transformContext(b));
  assert.notEqual(second, first);
  assert.deepEqual(second, convertToLlm(b));
  c.free();
});

test("an array cut back past a clearing marker sends the outputs it cleared again", async () => {
  // (The LLM cache used to keep the marker's cleared outputs after a cut of
  // more than one message: the model was sent placeholders for outputs no
  // marker cleared any more.)
  const call = (id) => ({
    role: "assistant",
    content: [{ type: "toolCall", id, name: "read", arguments: { path: "a" } }],
    stopReason: "toolUse",
    timestamp: 1,
  });
  const result = (id) => ({
    role: "toolResult",
    toolCallId: id,
    toolName: "read",
    content: [{ type: "text", text: `output ${id}` }],
    isError: false,
    timestamp: 2,
  });
  const user = (text) => ({ role: "user", content: text, timestamp: 3 });
  const c = new Compactor({ contextWindow: 200_000 });
  const hooks = c.agentHooks();
  const turn = async (a) => hooks.convertToLlm(await hooks.transformContext(a));
  let a = [user("hi"), call("t1"), result("t1"), user("more")];
  await turn(a);
  a = [...a, { role: "toolOutputCleared", toolCallIds: ["t1"], tokensFreed: 10, timestamp: 4 }];
  assert.match((await turn(a))[2].content[0].text, /cleared/);
  a = [...a, user("x"), user("y")];
  await turn(a);
  a = a.slice(0, 4);
  const llm = await turn(a);
  assert.equal(llm[2], a[2]);
  assert.deepEqual(llm, convertToLlm(a));
  c.free();
});

test("a message replaced inside the context after a summary, and then put back, is seen both times", async () => {
  // (The identity scan, shim/known.js sameRun, compares with the
  // compactor's own copy of the array: that copy must follow every change,
  // or putting the old object back would look like no change at all.)
  const user = (text, timestamp) => ({ role: "user", content: text, timestamp });
  const summary = { role: "compactionSummary", summary: "what happened", tokensBefore: 1_000, timestamp: 10 };
  const original = user("the original words ".repeat(40), 12);
  const edited = user("edited", 12);
  for (const estimator of ["pi", "calibrated"]) {
    const options = { contextWindow: 200_000, estimator };
    const c = new Compactor(options);
    const hooks = c.agentHooks();
    const check = async (a, what) => {
      const ctx = await hooks.transformContext(a);
      assert.deepEqual(ctx, transformContext(a), `context, ${what} (${estimator})`);
      assert.deepEqual(await hooks.convertToLlm(ctx), convertToLlm(ctx), `LLM messages, ${what} (${estimator})`);
      const cold = new Compactor(options);
      assert.equal(c.contextTokens(a), cold.contextTokens(a), `contextTokens, ${what} (${estimator})`);
      cold.free();
    };
    let a = [user("before", 1), summary, user("a", 11), original, user("b", 13)];
    await check(a, "first turn");
    a = [...a, user("c", 14)];
    await check(a, "an append");
    a = a.with(3, edited);
    await check(a, "replaced");
    a = a.with(3, original);
    await check(a, "put back");
    a = [...a.with(3, edited), user("d", 15)];
    await check(a, "replaced with an append");
    a = a.with(3, original);
    await check(a, "put back again");
    // Far from the end (the scan's newest-first part covers 32): with and
    // without a summary before it.
    for (let i = 0; i < 60; i++) a = [...a, user(`more ${i}`, 20 + i)];
    await check(a, "sixty appends");
    a = a.with(3, edited);
    await check(a, "replaced, 60 messages from the end");
    a = a.with(3, original);
    await check(a, "put back, 60 messages from the end");
    const flat = a.filter((m) => m !== summary);
    await check(flat, "the summary taken out");
    await check(flat.with(5, edited), "replaced without a summary, far from the end");
    c.free();
  }
});
