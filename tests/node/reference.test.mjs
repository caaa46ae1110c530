// docs/reference.md against the package's declarations (package/*.d.ts):
// every export of every entry has a `### ` heading in its entry's section
// and every such heading names a declared export; every member of the
// classes, of the conversation object and of each options interface is in
// its export's section, the options with a default column; every event
// `type`, store error `name` and summarizer `kind` is named in its
// export's section. So the reference cannot fall behind the declarations.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../support/doc-examples.mjs";

const read = (file) => readFileSync(join(ROOT, file), "utf8");
const REFERENCE = read("docs/reference.md");

/** The declaration files of each entry of the package's `exports` map that declares values or types. */
const ENTRIES = {
  "agent-compaction": ["index.d.ts", ...[...read("package/index.d.ts").matchAll(/^export \* from "\.\/(.+)\.js";/gm)].map((m) => `${m[1]}.d.ts`)],
  "agent-compaction/ai-sdk": ["ai-sdk.d.ts"],
};

/** A declaration file's text without its comments. */
function code(file) {
  return read(join("package", file))
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "");
}

/** `{ name, kind, body }` of each `export` declaration of `text`; `body` is the text of its `{ … }` or its type. */
function declarations(text) {
  const out = [];
  const re = /^export (?:declare )?(function|class|interface|type|const) (\w+)/gm;
  for (const m of text.matchAll(re)) {
    const [, kind, name] = m;
    let body = "";
    if (kind === "class" || kind === "interface") {
      const open = text.indexOf("{", m.index);
      body = text.slice(open + 1, matching(text, open));
    } else if (kind === "type") {
      body = text.slice(m.index, typeEnd(text, m.index));
    }
    out.push({ name, kind, body });
  }
  return out;
}

/** The index of the `;` ending the type alias that starts at `start`. */
function typeEnd(text, start) {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if ("{([".includes(text[i])) depth++;
    else if ("})]".includes(text[i])) depth--;
    else if (text[i] === ";" && depth === 0) return i;
  }
  throw new Error("unterminated type alias");
}

/** The index of the bracket closing the one at `open`. */
function matching(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if ("{([".includes(text[i])) depth++;
    else if ("})]".includes(text[i]) && --depth === 0) return i;
  }
  throw new Error("unbalanced declaration");
}

/**
 * The member names of a class or interface body (top level only; private
 * ones and the constructor left out), or of the object types of a type
 * alias.
 */
function members(decl) {
  const { kind, body } = decl;
  if (kind === "type") return [...new Set([...body.matchAll(/[{;]\s*(\w+)\??:/g)].map((m) => m[1]))];
  const names = new Set();
  let depth = 0;
  for (const line of body.split("\n")) {
    const m = depth === 0 && /^\s*(?:(?:static|readonly|private)\s+)*(\w+)\??\s*[:(<]/.exec(line);
    if (m && !/^\s*private\b/.test(line) && m[1] !== "constructor") names.add(m[1]);
    for (const ch of line) {
      if ("{([".includes(ch)) depth++;
      else if ("})]".includes(ch)) depth--;
    }
  }
  return [...names];
}

/** The reference's section for `title` (a heading's text): up to the next heading of the same or a higher level. */
function section(text, level, predicate) {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith("#".repeat(level) + " ") && predicate(l));
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && /^#{1,6} /.test(l) && l.match(/^#+/)[0].length <= level);
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}
const names = (heading) => [...heading.matchAll(/`([\w]+)`/g)].map((m) => m[1]);

const OPTIONS = (name) => /Options$/.test(name) || ["CompactionSettingsInput", "ToolOutputClearingSettings"].includes(name);
const WITH_MEMBERS = (d) => d.kind === "class" || d.name === "AiSdkConversation" || OPTIONS(d.name);

for (const [entry, files] of Object.entries(ENTRIES)) {
  const decls = files.flatMap((file) => declarations(code(file)));
  const entrySection = section(REFERENCE, 2, (l) => l === `## \`${entry}\``);

  test(`reference: ${entry}`, () => {
    assert.ok(entrySection, `docs/reference.md has a section "## \`${entry}\`"`);
    const headings = entrySection.split("\n").filter((l) => l.startsWith("### "));
    const documented = new Set(headings.flatMap(names));
    const declared = new Set(decls.map((d) => d.name));
    assert.deepEqual([...declared].filter((n) => !documented.has(n)), [], `exports of ${entry} without a heading in docs/reference.md`);
    assert.deepEqual([...documented].filter((n) => !declared.has(n)), [], `headings of ${entry}'s section that name no declared export`);

    for (const decl of decls) {
      const own = section(entrySection, 3, (l) => names(l).includes(decl.name));
      if (WITH_MEMBERS(decl)) {
        for (const member of members(decl)) {
          assert.match(own, new RegExp(`^\\| \`${member}\``, "m"), `${decl.name}.${member}: a table row in its section of docs/reference.md`);
        }
      }
      if (OPTIONS(decl.name)) {
        for (const row of own.split("\n").filter((l) => /^\| `/.test(l))) {
          const cells = row.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
          assert.equal(cells.length, 4, `${decl.name}: "| option | type | default | meaning |" rows: ${row}`);
          assert.ok(cells[2], `${decl.name}: the default of ${cells[0]} (write "—" for a required one)`);
        }
      }
      // Events, error names, kinds, reasons: every string literal of a union type.
      if (decl.kind === "type" && /Event|ErrorName|Kind|Reason/.test(decl.name)) {
        for (const [, literal] of decl.body.matchAll(/"([\w-]+)"/g)) {
          assert.ok(own.includes(`\`${literal}\``) || own.includes(`"${literal}"`), `${decl.name}: "${literal}" named in its section of docs/reference.md`);
        }
      }
    }
  });
}

test("reference: the declaration-only entries", () => {
  assert.match(REFERENCE, /^## `agent-compaction\/manual-init`$/m);
  assert.match(REFERENCE, /^## `agent-compaction\/pi-agent-core`$/m);
  // manual-init re-exports the main entry (and `init` as its default): nothing of its own to list.
  assert.deepEqual(declarations(code("manual-init.d.ts")), []);
});
