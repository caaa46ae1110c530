// A Node app's settings: es2022 and Node's own types, no DOM (tsconfig.json
// here). The declarations name no global that only the DOM declares, so
// `init` and `initSync` keep their types there rather than turn into `any`.
import { readFileSync } from "node:fs";
import { Compactor, init, initSync, type InitInput, type InitOutput, type SyncInitInput } from "agent-compaction/manual-init";

// Only compiled, never run: where an app keeps its copy of the module.
const wasm = new URL("./agent_compaction_bg.wasm", import.meta.url);
const bytes: SyncInitInput = readFileSync(wasm);
const out: InitOutput = initSync({ module: bytes });
const size: number = out.memory.buffer.byteLength;
// @ts-expect-error the module's memory has no such field
void out.memory.pages;
const input: InitInput = wasm;
await init({ module_or_path: input });
await init({ module_or_path: Promise.resolve(new Response(readFileSync(wasm))) });
// @ts-expect-error a URL, a request, a response, the bytes or a compiled module
await init({ module_or_path: 42 });
// @ts-expect-error the bytes or a compiled module
initSync(42);
const compactor = new Compactor({ contextWindow: 128_000 });
const signal: AbortSignal = AbortSignal.timeout(1_000);
void [size, compactor.compact([], { signal })];
