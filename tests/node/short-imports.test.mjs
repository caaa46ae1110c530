// The build's short import names (scripts/lib/wasm-steps.mjs, shortImports):
// the .wasm and wasm-bindgen's glue are rewritten together, and a glue laid
// out otherwise than expected (another wasm-bindgen version) stops the build
// instead of shipping a module whose imports nothing provides.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shortImports } from "../../scripts/lib/wasm-steps.mjs";

const GLUE = "./agent_compaction_bg.js";
const SHIM = "./snippets/agent-compaction-0123/src/js/shim.js";

/** A module importing `imports` ([module, name]) as functions of type () → (), exporting one that calls the first. */
function module(imports) {
  const enc = new TextEncoder();
  const str = (s) => [enc.encode(s).length, ...enc.encode(s)];
  const leb = (n) => (n < 128 ? [n] : [(n & 0x7f) | 0x80, ...leb(n >> 7)]);
  const section = (id, body) => [id, ...leb(body.length), ...body];
  const importBody = [imports.length, ...imports.flatMap(([m, n]) => [...str(m), ...str(n), 0, 0])];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 0, 0]),
    ...section(2, importBody),
    ...section(3, [1, 0]),
    ...section(7, [1, ...str("run"), 0, imports.length]),
    ...section(10, [1, 4, 0, 0x10, 0, 0x0b]),
  ]);
}

const glue = (keys) => `function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
${keys.map((k) => `        ${k}: function() {\n            calls.push("${k}");\n        },`).join("\n")}
    };
    return {
        __proto__: null,
        "${GLUE}": import0,
        "${SHIM}": import1,
        "${SHIM}": import2,
    };
}
`;

function withFiles(wasm, js, fn) {
  const dir = mkdtempSync(join(tmpdir(), "short-imports-"));
  try {
    writeFileSync(join(dir, "m.wasm"), wasm);
    writeFileSync(join(dir, "glue.js"), js);
    return fn(join(dir, "m.wasm"), join(dir, "glue.js"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the glue's imports get short names in the module and in the glue alike; the shim's keep theirs", async () => {
  const names = ["__wbg_first_0123456789abcdef", "__wbg_second_fedcba9876543210"];
  const wasm = module([[GLUE, names[0]], [SHIM, "readThing"], [GLUE, names[1]]]);
  await withFiles(wasm, glue(names), async (wasmFile, glueFile) => {
    shortImports(wasmFile, glueFile);
    const rewritten = readFileSync(wasmFile);
    const imports = WebAssembly.Module.imports(new WebAssembly.Module(rewritten));
    assert.deepEqual(imports.map((i) => [i.module, i.name]), [["a", "a0"], ["b", "readThing"], ["a", "a1"]]);
    const js = readFileSync(glueFile, "utf8");
    assert.doesNotMatch(js, /__wbg_\w+: |snippets/);
    // The rewritten glue provides exactly what the rewritten module imports.
    const calls = [];
    const getImports = new Function("calls", "import1", `${js}\nreturn __wbg_get_imports();`);
    const shim = { readThing: () => calls.push("shim") };
    const { instance } = await WebAssembly.instantiate(rewritten, getImports(calls, shim));
    instance.exports.run();
    assert.deepEqual(calls, [names[0]]);
  });
});

test("a glue laid out otherwise stops the build with a message", () => {
  const wasm = module([[GLUE, "__wbg_first_0123456789abcdef"]]);
  const other = glue(["__wbg_first_0123456789abcdef"]).replace("__proto__: null,\n        \"./agent", "\"./agent");
  withFiles(wasm, other, (wasmFile, glueFile) => {
    assert.throws(() => shortImports(wasmFile, glueFile), /the glue's import object is not laid out as expected/);
  });
  const missing = glue(["__wbg_other_0123456789abcdef"]);
  withFiles(wasm, missing, (wasmFile, glueFile) => {
    assert.throws(() => shortImports(wasmFile, glueFile), /does not define __wbg_first_0123456789abcdef exactly once/);
  });
});

test("the shipped module imports only the glue's short names and the shim", () => {
  const wasm = readFileSync(new URL("../../pkg/agent_compaction_bg.wasm", import.meta.url));
  const imports = WebAssembly.Module.imports(new WebAssembly.Module(wasm));
  assert.ok(imports.length > 0);
  for (const { module, name } of imports) {
    assert.ok(module === "a" || module === "b", `module ${module}`);
    if (module === "a") assert.match(name, /^a[0-9a-z]+$/);
  }
});
