// The package's declarations (package/*.d.ts, written by hand) against what
// the built package exports at run time, in both directions: for each entry
// of the `exports` map that has types, every runtime export is declared and
// every declared value exists; each function takes as many parameters as
// its declaration allows; each class has the members, static members and
// method parameter counts it declares. The runtime's shape is written out
// as a TypeScript file of assertions that tsc checks against the
// declarations, so the comparison is TypeScript's own reading of them.
// tests/types checks the types themselves (tsc --strict on uses of them).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = join(root, "node_modules/agent-compaction");
const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));

// `.` and the subpaths with declarations (the .wasm files have none).
const entries = Object.entries(manifest.exports)
  .filter(([, target]) => typeof target === "object" && target.types)
  .map(([subpath]) => (subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`));

const isClass = (value) => typeof value === "function" && /^class\b/.test(Function.prototype.toString.call(value));
// wasm-bindgen's own members (`__wrap`, `__destroy_into_raw`) are not API.
const isApi = (name) => !name.startsWith("__");

/**
 * The members of `proto` (own, string-keyed, but `constructor`): methods
 * with their parameter count, accessors without.
 */
function members(proto) {
  return Object.getOwnPropertyNames(proto)
    .filter((name) => name !== "constructor" && isApi(name))
    .sort()
    .map((name) => {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      return { name, arity: typeof d.value === "function" ? d.value.length : undefined };
    });
}

/** The static members of class `cls`, as `members` gives them. */
function statics(cls) {
  const own = { ...Object.getOwnPropertyDescriptors(cls) };
  for (const name of ["length", "name", "prototype"]) delete own[name];
  return members(Object.defineProperties(Object.create(null), own));
}

const key = (name) => JSON.stringify(name);
const keys = (names) => `{ ${names.map((n) => `${key(n)}: true`).join(", ")} }`;

/** The TypeScript assertions for one entry, imported as `ns`. */
async function assertionsFor(specifier, ns) {
  const module = await import(specifier);
  const lines = [
    `import * as ${ns} from ${key(specifier)};`,
    `// ${specifier}: its runtime exports, exactly the values it declares.`,
    `export const ${ns}_exports: Exact<typeof ${ns}> = ${keys(Object.keys(module).sort())};`,
  ];
  for (const [name, value] of Object.entries(module)) {
    const declared = `typeof ${ns}[${key(name)}]`;
    const id = `${ns}_${name.replace(/\W/g, "_")}`;
    if (isClass(value)) {
      lines.push(`// class ${name}`);
      // Not callable, with a prototype (a private constructor is no construct signature).
      lines.push(
        `export const ${id}_is_class: [${declared}] extends [(...args: never) => unknown] ? never : ${declared} extends { prototype: object } ? true : never = true;`,
      );
      // An error class's declared statics include the engine's Error ones
      // (Node's `captureStackTrace` when its types are in the program).
      const inherited = value.prototype instanceof Error ? " | keyof ErrorConstructor" : "";
      lines.push(`export const ${id}_statics: Exact<Omit<${declared}, "prototype"${inherited}>> = ${keys(statics(value).map((m) => m.name))};`);
      for (const m of statics(value).filter((m) => m.arity !== undefined)) {
        lines.push(`export const ${id}_static_${m.name}_arity: Parameters<${declared}[${key(m.name)}]>["length"] = ${m.arity};`);
      }
      if (Object.getPrototypeOf(value.prototype) === Object.prototype) {
        const own = members(value.prototype);
        const instance = `${declared}["prototype"]`;
        lines.push(`export const ${id}_members: Exact<${instance}> = ${keys(own.map((m) => m.name))};`);
        for (const m of own.filter((m) => m.arity !== undefined)) {
          lines.push(`export const ${id}_${m.name}_arity: Parameters<${instance}[${key(m.name)}]>["length"] = ${m.arity};`);
        }
      } else if (value.prototype instanceof Error) {
        lines.push(`export const ${id}_is_error: ${declared}["prototype"] extends Error ? true : never = true;`);
      } else {
        throw new Error(`${specifier}: class ${name} extends a class this test does not compare`);
      }
    } else if (typeof value === "function") {
      lines.push(`export const ${id}_is_function: ${declared} extends (...args: never) => unknown ? true : never = true;`);
      lines.push(`export const ${id}_arity: Parameters<${declared}>["length"] = ${value.length};`);
    } else {
      lines.push(`export const ${id}_type: ${declared} extends ${typeof value} ? true : never = true;`);
    }
  }
  return lines;
}

test("the declarations of each entry match what the built package exports", async () => {
  assert.ok(entries.includes("agent-compaction") && entries.length >= 2, `entries: ${entries}`);
  const lines = [
    "// Written by tests/node/declarations.test.mjs from the built package's runtime exports.",
    "/** An object with exactly the keys of `T`: a missing one or an extra one does not compile. */",
    "type Exact<T> = { [K in keyof T]-?: true };",
  ];
  for (const [i, specifier] of entries.entries()) lines.push("", ...(await assertionsFor(specifier, `entry${i}`)));

  // Inside the repository, so that tsc resolves the package by name.
  mkdirSync(join(root, "target"), { recursive: true });
  const dir = mkdtempSync(join(root, "target", "declarations-"));
  try {
    writeFileSync(join(dir, "runtime.ts"), lines.join("\n") + "\n");
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          // tests/types checks the declaration files themselves.
          skipLibCheck: true,
          types: [],
        },
        files: ["runtime.ts"],
      }),
    );
    let output = "";
    try {
      execFileSync(join(root, "node_modules/.bin/tsc"), ["-p", dir], { encoding: "utf8", stdio: "pipe" });
    } catch (e) {
      output = `${e.stdout ?? ""}${e.stderr ?? ""}` || String(e);
    }
    if (output) {
      const numbered = lines.map((line, i) => `${String(i + 1).padStart(4)}  ${line}`).join("\n");
      assert.fail(`the declarations do not match the runtime exports:\n${output}\nruntime.ts:\n${numbered}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
