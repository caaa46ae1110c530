// The core's layout rules, checked on every test run:
// - no circle of imports between modules: at every level of the module
//   tree, the sibling modules (the children of one parent) import each
//   other without a cycle, so each can be read (and moved) knowing only
//   what it imports;
// - no core file names the binding or its JavaScript (a decision written
//   against the binding's files would drift from them unseen).
// Test code (`tests.rs`, `tests/` folders, a trailing `#[cfg(test)] mod
// tests { … }`) may import anything and is not read.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "crates/core/src");

function rustFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === "tests" ? [] : rustFiles(p);
    return e.name.endsWith(".rs") && e.name !== "tests.rs" ? [p] : [];
  });
}

/** The module path of a file: src/a/b.rs and src/a/b/mod.rs are [a, b]; lib.rs is []. */
function modulePath(file) {
  const parts = relative(src, file).split(sep);
  const last = parts.pop().replace(/\.rs$/, "");
  if (last !== "mod" && last !== "lib") parts.push(last);
  return parts;
}

/** The file's code without comments, string contents and its trailing test module. */
function code(text) {
  const tests = text.search(/^\s*#\[cfg\((all\()?test[^\n]*\n\s*(pub )?mod tests\s*\{/m);
  if (tests >= 0) text = text.slice(0, tests);
  return text
    .replace(/r#"[\s\S]*?"#/g, '""')
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "");
}

/** Every path a `use` tree names, braces expanded: `a::{b, c::d}` gives a::b and a::c::d. */
function expandUse(tree) {
  tree = tree.replace(/\s+/g, "");
  const open = tree.indexOf("{");
  if (open < 0) return [tree.replace(/::(\*|self)$/, "").replace(/\bas\w+$/, "")];
  const prefix = tree.slice(0, open);
  const inner = tree.slice(open + 1, tree.lastIndexOf("}"));
  const items = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === "{") depth++;
    else if (inner[i] === "}") depth--;
    else if (inner[i] === "," && depth === 0) {
      items.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  items.push(inner.slice(start));
  return items.filter(Boolean).flatMap((item) => expandUse(prefix + item));
}

/** A path relative to module `from` -> an absolute module path (the item at its end included). */
function resolve(path, from) {
  const segs = path.split("::").filter(Boolean);
  let base;
  if (segs[0] === "crate") base = [];
  else if (segs[0] === "self") base = [...from];
  else if (segs[0] === "super") base = from.slice(0, -1);
  else return null; // an external crate or a name in scope
  let i = 1;
  while (segs[i] === "super") {
    base = base.slice(0, -1);
    i++;
  }
  return [...base, ...segs.slice(i)];
}

const problems = [];
const files = rustFiles(src);
// edges[parentKey] = Map(child -> Set(child))
const edges = new Map();
for (const file of files) {
  const raw = readFileSync(file, "utf8");
  const name = relative(root, file);
  if (/crates\/wasm|shim\/|\bshim\.js|wasm::|agent_compaction::/.test(raw.replace(/^\s*#!\[.*$/gm, ""))) {
    const line = raw.split("\n").findIndex((l) => /crates\/wasm|shim\/|\bshim\.js|wasm::|agent_compaction::/.test(l)) + 1;
    problems.push(`${name}:${line}: names the binding or its JavaScript`);
  }
  const from = modulePath(file);
  const text = code(raw);
  const paths = [];
  for (const m of text.matchAll(/\buse\s+([^;]+);/g)) paths.push(...expandUse(m[1]));
  const withoutUses = text.replace(/\buse\s+[^;]+;/g, "");
  for (const m of withoutUses.matchAll(/\b(?:crate|super|self)(?:::\w+)+/g)) paths.push(m[0]);
  for (const p of paths) {
    const to = resolve(p, from);
    if (!to) continue;
    // The first level where the two paths part: siblings under a common parent.
    let k = 0;
    while (k < from.length && k < to.length && from[k] === to[k]) k++;
    if (k >= from.length || k >= to.length - 1) continue; // within itself, or a name of an ancestor
    const parent = from.slice(0, k).join("::") || "crate";
    if (!edges.has(parent)) edges.set(parent, new Map());
    const children = edges.get(parent);
    if (!children.has(from[k])) children.set(from[k], new Map());
    const targets = children.get(from[k]);
    if (!targets.has(to[k])) targets.set(to[k], `${name} (${p})`);
  }
}

for (const [parent, children] of edges) {
  // Tarjan's strongly connected components: any component of more than one module is a circle.
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of children.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) {
        const set = new Set(component);
        const why = component.flatMap((a) =>
          [...(children.get(a) ?? new Map())].filter(([b]) => set.has(b)).map(([b, where]) => `    ${a} -> ${b}: ${where}`),
        );
        problems.push(`a circle of imports in ${parent}: ${component.sort().join(", ")}\n${why.join("\n")}`);
      }
    }
  };
  for (const v of children.keys()) if (!idx.has(v)) strong(v);
}

if (problems.length) {
  console.error(`crates/core's layout:\n${problems.join("\n")}`);
  process.exit(1);
}
console.log(`crates/core's layout: ${files.length} files, no circle of imports, nothing names the binding`);
