// Child process of scripts/bench.mjs (run with --expose-gc): the wasm heap's
// growth while `compactors` Compactors follow a 10,000-message replay
// through the per-turn path. A fresh process, so that nothing else has
// grown the wasm memory first. Prints one JSON object.
import * as ours from "agent-compaction";
import { loadFixture, realSummaryText, repeatedMessages, replay, syntheticTurns } from "./sessions.mjs";

const { every, window, cuts, total, compactors: k } = JSON.parse(process.argv[2]);
// Already initialized by the package's Node entry: returns the instance's
// exports, whose `memory` is the wasm linear memory.
const wasm = ours.initSync();
const wasmBytes = () => wasm.memory.buffer.byteLength;
const externrefs = () => wasm.__wbindgen_externrefs?.length ?? 0;

const gc = async () => {
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
};

// Built without calling into wasm: the cut positions come from the parent.
const fixtures = [loadFixture("pi-large-session.jsonl"), loadFixture("pi-before-compaction.jsonl")];
const { turns } = syntheticTurns(repeatedMessages(fixtures, total), every, { cuts, summaryText: realSummaryText() });

await gc();
const wasmBefore = wasmBytes();
const refsBefore = externrefs();
const mem0 = process.memoryUsage();

let list = Array.from({ length: k }, () => new ours.Compactor({ contextWindow: window }));
let hooks = list.map((c) => c.agentHooks());
let sink = 0;
const final = await replay(turns, async (messages) => {
  for (let i = 0; i < k; i++) {
    const ctx = await hooks[i].transformContext(messages);
    const llm = await hooks[i].convertToLlm(ctx);
    sink += llm.length + (list[i].needsCompaction(messages) ? 1 : 0);
  }
});
await gc();
const wasmAfter = wasmBytes();
const refsAfter = externrefs();
const mem1 = process.memoryUsage();
for (const c of list) c.free();
list = hooks = undefined;
await gc();
const mem2 = process.memoryUsage();

console.log(
  JSON.stringify({
    compactors: k,
    messages: final.length,
    wasmBefore,
    wasmAfter,
    wasmGrowth: wasmAfter - wasmBefore,
    externrefGrowth: refsAfter - refsBefore,
    // JS heap the compactors keep (their copies of the arrays): with them
    // alive minus after they are freed, the messages themselves alive in both.
    jsRetained: mem1.heapUsed - mem2.heapUsed,
    rssGrowth: mem1.rss - mem0.rss,
    sink,
  }),
);
