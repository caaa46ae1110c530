// The code examples of the documentation (README.md and docs/*.md): each is
// a ```ts block right after an `<!-- example: NAME -->` line. Each is
// compiled by tsc in strict mode, as a program of its own, against the
// package's declarations (pkg/, as an app's node_modules would hold it), and the
// JavaScript tsc emits is what the tests run: in Node
// (tests/node/doc-examples.test.mjs) and in browsers (tests/e2e, through
// tests/support/readme.mjs).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

/** The documentation files whose examples are run: README.md and every docs/*.md. */
export function docFiles() {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join("docs", name));
  return ["README.md", ...docs];
}

const MARKER = /^<!-- example: ([a-z0-9-]+)(?: [^>]*)? -->$/;
const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/**
 * Every fenced code block of `file` (relative to the repository), with the
 * example name of the marker line right before it, if any:
 * `{ file, line, lang, code, name? }`.
 */
export function codeBlocks(file) {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const end = lines.findIndex((l, j) => j > i && l.startsWith(indent + fence) && l.trim() === fence);
    assert.ok(end > i, `${file}:${i + 1}: a code block that is never closed`);
    const before = i > 0 ? MARKER.exec(lines[i - 1].trim()) : null;
    blocks.push({
      file,
      line: i + 1,
      lang: info.trim().split(/\s+/)[0] ?? "",
      code: lines.slice(i + 1, end).map((l) => l.slice(indent.length)).join("\n") + "\n",
      ...(before ? { name: before[1] } : {}),
    });
    i = end;
  }
  return blocks;
}

/** Languages a reader copies into an app: each such block must be a runnable example. */
export const CODE_LANGS = new Set(["ts", "typescript", "js", "javascript", "mjs", "tsx", "jsx"]);

/** The examples of every documentation file, by name (names are unique). */
export function examples() {
  const byName = new Map();
  for (const file of docFiles()) {
    for (const block of codeBlocks(file)) {
      if (!block.name) continue;
      assert.equal(block.lang, "ts", `${file}:${block.line}: example "${block.name}" is a \`\`\`ts block`);
      assert.ok(!byName.has(block.name), `${file}:${block.line}: example name "${block.name}" is used twice`);
      byName.set(block.name, block);
    }
  }
  return byName;
}

// Each example is its own program, as in an app of its own (a declaration
// merge such as `import "agent-compaction/pi-agent-core"` reaches only the
// example that makes it), under the strict settings of the type tests
// (tests/types/tsconfig.json), with the DOM's types (the examples run in
// pages), emitting the JavaScript the tests run.
const tsconfig = (name) => ({
  extends: join(ROOT, "tests/types/tsconfig.json"),
  compilerOptions: {
    noEmit: false,
    noEmitOnError: true,
    skipLibCheck: true,
    lib: ["es2023", "dom", "dom.iterable"],
    outDir: "out",
  },
  files: [`${name}.ts`],
});

/**
 * Writes each example to `target/doc-examples-XXXXXX/NAME/NAME.ts`,
 * type-checks and compiles it with tsc (throwing tsc's report, with each
 * error's file and line in the documentation, when one does not compile)
 * and returns `{ js(name) }`, the path of an example's JavaScript.
 */
export async function compileExamples() {
  const all = examples();
  // A folder of this process's own inside the repository (so that the
  // examples resolve the package and its peers from its node_modules).
  mkdirSync(join(ROOT, "target"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, "target/doc-examples-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  const failures = [];
  for (const [name, block] of all) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, "tsconfig.json"), JSON.stringify(tsconfig(name), null, 2));
    writeFileSync(join(dir, name, `${name}.ts`), block.code);
    try {
      await run(join(ROOT, "node_modules/.bin/tsc"), ["-p", join(dir, name), "--pretty", "false"]);
    } catch (error) {
      // Point each error at the documentation: `NAME.ts(3,5)` → `README.md:42:5`.
      const report = `${error.stdout ?? ""}${error.stderr ?? ""}`.replace(/^\S*?\.ts\((\d+),(\d+)\)/gm, (_, line, col) => {
        return `${block.file}:${block.line + Number(line)}:${col} (example "${name}")`;
      });
      failures.push(report);
    }
  }
  if (failures.length) throw new Error(`the documentation's examples do not compile (tsc --strict):\n${failures.join("\n")}`);
  return {
    js(name) {
      assert.ok(all.has(name), `the documentation still has the example "${name}"`);
      return join(dir, name, "out", `${name}.js`);
    },
  };
}
