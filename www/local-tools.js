// The demo's tools: what the local "coding agent" model (scripts/local-model.mjs)
// can call, and a deterministic stand-in for running them. Browser-safe: no
// imports, no Node APIs; the demo page loads it as `/local-tools.js` and the
// Node server imports it too.
//
//   DEMO_TOOLS              [{ name, label, description, parameters }] (JSON Schema)
//   runDemoTool(name, args) → string, 6–20 KB of plausible file content, a
//                           directory listing or command output; the same
//                           arguments always give the same text. Throws on an
//                           unknown tool or a missing argument.
//   demoAgentTools(opts?)   the same tools as pi-agent-core AgentTools
//                           ({ ...tool, execute }) for `new Agent({ initialState: { tools } })`
//
// Small deterministic helpers (hashText, hashHex, createRng) are exported for
// the model server, which must answer the same request with the same bytes.

/** The three tools, in the shape pi-ai's `Tool` has (plus pi-agent-core's `label`). */
export const DEMO_TOOLS = [
  {
    name: "read_file",
    label: "Read file",
    description: "Read a text file of the project and return its whole content.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path of the file, relative to the project root (e.g. src/parser.rs)." },
      },
      required: ["path"],
      additionalProperties: false,
    },
  },
  {
    name: "list_files",
    label: "List files",
    description: "List the files and directories under a directory of the project, recursively, with their sizes.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Directory, relative to the project root; \".\" for the root." },
      },
      required: ["path"],
      additionalProperties: false,
    },
  },
  {
    name: "run_command",
    label: "Run command",
    description: "Run a shell command in the project directory and return its output and exit code.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command line, e.g. \"cargo test\" or \"npm run build\"." },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
];

// ------------------------------------------------------------ determinism

/** FNV-1a over the UTF-16 code units of `text`, as an unsigned 32-bit integer. */
export function hashText(text, seed = 0x811c9dc5) {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** 16 hex digits from two differently seeded hashes of `text`. */
export function hashHex(text) {
  const a = hashText(text).toString(16).padStart(8, "0");
  const b = hashText(text, 0x9e3779b9).toString(16).padStart(8, "0");
  return a + b;
}

/** A small seeded generator (xorshift32): `next()` in [0, 1), `int(n)`, `pick(list)`, `chance(p)`. */
export function createRng(seed) {
  let s = (typeof seed === "string" ? hashText(seed) : seed >>> 0) || 0x2545f491;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
  for (let i = 0; i < 4; i++) next(); // spread nearby seeds apart
  const int = (n) => Math.floor(next() * n);
  return {
    next,
    int,
    range: (lo, hi) => lo + int(hi - lo + 1),
    pick: (list) => list[int(list.length)],
    chance: (p) => next() < p,
  };
}

// ------------------------------------------------------------ vocabulary

const NOUNS = [
  "session", "message", "summary", "token", "budget", "parser", "cursor", "buffer", "record", "window",
  "context", "entry", "batch", "queue", "store", "index", "chunk", "schema", "handler", "request",
  "response", "config", "cache", "event", "model", "tool", "result", "turn", "branch", "layout",
  "header", "payload", "segment", "digest", "ledger", "snapshot", "cutoff", "marker", "span", "frame",
];
const VERBS = [
  "load", "save", "parse", "build", "merge", "split", "apply", "check", "count", "render",
  "encode", "decode", "resolve", "collect", "flush", "estimate", "trim", "select", "compact", "update",
  "validate", "normalize", "append", "restore", "scan",
];
const ADJECTIVES = ["pending", "stale", "current", "previous", "active", "raw", "cached", "visible", "total", "last"];
const SENTENCES = [
  "Keeps the invariants documented at the top of the module.",
  "Callers must hold the lock while this runs.",
  "The order of entries is preserved; duplicates are dropped.",
  "Returns early when there is nothing to do.",
  "This is on the hot path: avoid allocating per item.",
  "Errors carry the index of the offending entry.",
  "A zero budget means no limit.",
  "Kept for compatibility with version 1 files.",
  "The result is cached until the next write.",
  "Only whole UTF-8 characters are ever cut.",
  "See the design notes for why this is not recursive.",
  "The caller owns the returned buffer.",
];
const CRATES = ["core", "store", "engine", "codec", "runtime", "util"];
const RUST_TYPES = ["u64", "usize", "String", "Vec<u8>", "Option<u32>", "bool", "f64", "HashMap<String, u64>"];
const JS_VALUES = ["0", "null", "[]", "{}", "\"\"", "false", "new Map()", "1024"];

const cap = (w) => w[0].toUpperCase() + w.slice(1);
const camel = (a, b) => a + cap(b);

function ident(rng) {
  return `${rng.pick(VERBS)}_${rng.pick(NOUNS)}`;
}
function typeName(rng) {
  return cap(rng.pick(NOUNS)) + cap(rng.pick(NOUNS));
}

/** Appends blocks from `make()` until `out` reaches `target` characters. */
function fill(lines, target, make) {
  let size = lines.reduce((n, l) => n + l.length + 1, 0);
  while (size < target) {
    const block = make();
    for (const l of block) {
      lines.push(l);
      size += l.length + 1;
    }
  }
  return lines.join("\n");
}

const targetSize = (rng) => 6 * 1024 + rng.int(13 * 1024); // 6–19 KB before the last block

// ------------------------------------------------------------ read_file

function extensionOf(path) {
  const base = path.split("/").pop() ?? "";
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : "";
}

function rustFile(path, rng, target) {
  const lines = [
    `//! ${path}: ${rng.pick(NOUNS)} handling for the \`${rng.pick(CRATES)}\` crate.`,
    "//!",
    `//! ${rng.pick(SENTENCES)}`,
    "",
    "use std::collections::HashMap;",
    `use crate::${rng.pick(CRATES)}::{${typeName(rng)}, ${typeName(rng)}};`,
    "",
  ];
  return fill(lines, target, () => {
    const ty = typeName(rng);
    const fields = Array.from({ length: rng.range(2, 5) }, () => `    pub ${rng.pick(ADJECTIVES)}_${rng.pick(NOUNS)}: ${rng.pick(RUST_TYPES)},`);
    const block = [`/// ${rng.pick(SENTENCES)}`, "#[derive(Debug, Clone, PartialEq)]", `pub struct ${ty} {`, "    pub id: u64,", ...fields, "}", "", `impl ${ty} {`];
    for (let m = rng.range(1, 3); m > 0; m--) {
      const fn = ident(rng);
      const arg = rng.pick(NOUNS);
      const acc = rng.pick(ADJECTIVES);
      block.push(
        `    /// ${rng.pick(SENTENCES)}`,
        `    pub fn ${fn}(&self, ${arg}s: &[${typeName(rng)}]) -> Result<usize, ${ty}Error> {`,
        `        let mut ${acc} = Vec::with_capacity(${arg}s.len());`,
        `        for (i, ${arg}) in ${arg}s.iter().enumerate() {`,
        `            if ${arg}.id == self.id {`,
        `                return Err(${ty}Error::Duplicate { index: i });`,
        "            }",
        rng.chance(0.3) ? `            // TODO: ${rng.pick(VERBS)} the ${rng.pick(NOUNS)} before comparing` : `            ${acc}.push(${arg}.id);`,
        "        }",
        `        Ok(${acc}.len() + ${rng.range(0, 64)})`,
        "    }",
        "",
      );
    }
    block.push("}", "");
    return block;
  });
}

function jsFile(path, rng, target, typed) {
  const lines = [
    `// ${path}: ${rng.pick(NOUNS)} helpers.`,
    `// ${rng.pick(SENTENCES)}`,
    `import { ${camel(rng.pick(VERBS), cap(rng.pick(NOUNS)))} } from "./${rng.pick(NOUNS)}.js";`,
    "",
  ];
  return fill(lines, target, () => {
    const name = camel(rng.pick(VERBS), cap(rng.pick(NOUNS)));
    const arg = rng.pick(NOUNS);
    const t = typed ? `: ${typeName(rng)}[]` : "";
    const ret = typed ? `: number` : "";
    const block = [
      "/**",
      ` * ${rng.pick(SENTENCES)}`,
      ` * @param ${arg}s the ${rng.pick(ADJECTIVES)} ${arg}s`,
      " */",
      `export function ${name}(${arg}s${t}, options = {})${ret} {`,
      `  const ${rng.pick(ADJECTIVES)} = ${rng.pick(JS_VALUES)};`,
      `  let count = 0;`,
      `  for (const ${arg} of ${arg}s) {`,
      `    if (!${arg} || ${arg}.${rng.pick(NOUNS)} === undefined) {`,
      `      throw new TypeError(\`${name}: bad ${arg} at \${count}\`);`,
      "    }",
      rng.chance(0.3) ? `    // TODO: ${rng.pick(VERBS)} the ${rng.pick(NOUNS)} first` : `    count += ${arg}.size ?? 1;`,
      "  }",
      `  return options.limit ? Math.min(count, options.limit) : count;`,
      "}",
      "",
    ];
    if (rng.chance(0.25)) {
      const cls = typeName(rng);
      block.push(
        `export class ${cls} {`,
        `  #${rng.pick(NOUNS)} = ${rng.pick(JS_VALUES)};`,
        `  ${camel(rng.pick(VERBS), cap(rng.pick(NOUNS)))}() {`,
        `    return ${name}([this]);`,
        "  }",
        "}",
        "",
      );
    }
    return block;
  });
}

function markdownFile(path, rng, target) {
  const lines = [`# ${cap(rng.pick(NOUNS))} ${rng.pick(NOUNS)}s`, "", `Notes for \`${path}\`. ${rng.pick(SENTENCES)}`, ""];
  return fill(lines, target, () => [
    `## ${cap(rng.pick(VERBS))} the ${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)}`,
    "",
    `${rng.pick(SENTENCES)} ${rng.pick(SENTENCES)} The \`${ident(rng)}\` function ${rng.pick(VERBS)}s each ${rng.pick(NOUNS)} once.`,
    "",
    ...Array.from({ length: rng.range(2, 5) }, () => `- \`${ident(rng)}\`: ${rng.pick(SENTENCES).toLowerCase()}`),
    "",
  ]);
}

function jsonFile(path, rng, target) {
  const entries = [];
  const head = `{\n  "file": ${JSON.stringify(path)},\n  "version": ${rng.range(1, 9)},\n  "entries": [`;
  let size = head.length;
  while (size < target) {
    const e = `    { "id": ${entries.length + 1}, "name": "${ident(rng)}", "kind": "${rng.pick(NOUNS)}", "size": ${rng.range(10, 90000)}, "tags": ["${rng.pick(ADJECTIVES)}", "${rng.pick(NOUNS)}"] }`;
    entries.push(e);
    size += e.length + 2;
  }
  return `${head}\n${entries.join(",\n")}\n  ]\n}`;
}

function configFile(path, rng, target) {
  const lines = [`# ${path}`, `# ${rng.pick(SENTENCES)}`, ""];
  return fill(lines, target, () => [
    `[${rng.pick(NOUNS)}.${rng.pick(NOUNS)}]`,
    ...Array.from({ length: rng.range(3, 7) }, () => {
      const v = rng.chance(0.5) ? rng.range(1, 65536) : rng.chance(0.5) ? `"${rng.pick(ADJECTIVES)}-${rng.pick(NOUNS)}"` : rng.pick(["true", "false"]);
      return `${rng.pick(ADJECTIVES)}_${rng.pick(NOUNS)} = ${v}`;
    }),
    "",
  ]);
}

function readFile(path) {
  const rng = createRng(`read_file\u0000${path}`);
  const target = targetSize(rng);
  switch (extensionOf(path)) {
    case "rs":
      return rustFile(path, rng, target);
    case "js":
    case "mjs":
    case "cjs":
    case "jsx":
      return jsFile(path, rng, target, false);
    case "ts":
    case "tsx":
      return jsFile(path, rng, target, true);
    case "md":
    case "txt":
      return markdownFile(path, rng, target);
    case "json":
      return jsonFile(path, rng, target);
    default:
      return configFile(path, rng, target);
  }
}

// ------------------------------------------------------------ list_files

const FILE_EXTENSIONS = ["rs", "rs", "js", "ts", "json", "md", "toml", "mjs"];

function listFiles(path) {
  const root = path.replace(/\/+$/, "").replace(/^\.\/?/, "");
  const rng = createRng(`list_files\u0000${root}`);
  const target = targetSize(rng);
  const lines = [`${root || "."}/`];
  let size = lines[0].length + 1;
  let files = 0;
  let dirs = 0;
  let bytes = 0;
  const date = (r) => `2025-${String(r.range(1, 12)).padStart(2, "0")}-${String(r.range(1, 28)).padStart(2, "0")} ${String(r.range(8, 19)).padStart(2, "0")}:${String(r.range(0, 59)).padStart(2, "0")}`;
  const push = (l) => {
    lines.push(l);
    size += l.length + 1;
  };
  while (size < target) {
    const dir = `${root ? `${root}/` : ""}${rng.pick(NOUNS)}${rng.chance(0.4) ? `/${rng.pick(NOUNS)}` : ""}`;
    push(`drwxr-xr-x        -  ${date(rng)}  ${dir}/`);
    dirs++;
    for (let n = rng.range(3, 12); n > 0; n--) {
      const b = rng.range(120, 48000);
      bytes += b;
      files++;
      push(`-rw-r--r--  ${String(b).padStart(7)}  ${date(rng)}  ${dir}/${ident(rng)}.${rng.pick(FILE_EXTENSIONS)}`);
    }
  }
  push("");
  push(`${dirs} directories, ${files} files, ${bytes} bytes`);
  return lines.join("\n");
}

// ------------------------------------------------------------ run_command

function runCommand(command) {
  const rng = createRng(`run_command\u0000${command}`);
  const target = targetSize(rng);
  const lines = [`$ ${command}`];
  let exit = 0;
  if (/\b(test|tests|jest|vitest|pytest)\b/.test(command)) {
    const node = /\b(npm|node|npx|pnpm|yarn|vitest|jest)\b/.test(command);
    let passed = 0;
    const failed = [];
    if (node) lines.push("TAP version 13");
    else lines.push(`   Compiling ${rng.pick(CRATES)} v0.${rng.range(1, 9)}.${rng.range(0, 20)}`, "    Finished test [unoptimized + debuginfo] target(s)", "running tests");
    fill(lines, target - 600, () => {
      const name = `${rng.pick(NOUNS)}::${ident(rng)}`;
      const ok = !rng.chance(0.04);
      if (ok) passed++;
      else failed.push(name);
      return node ? [`${ok ? "✔" : "✖"} ${name.replace("::", " > ")} (${(rng.next() * 40).toFixed(3)}ms)`] : [`test ${name} ... ${ok ? "ok" : "FAILED"}`];
    });
    if (failed.length > 0) {
      exit = 1;
      lines.push("", "failures:", "");
      for (const name of failed.slice(0, 3)) {
        lines.push(`---- ${name} ----`, `assertion failed: left == right`, `  left: ${rng.range(1, 500)}`, ` right: ${rng.range(1, 500)}`, "");
      }
    }
    lines.push(node ? `# tests ${passed + failed.length}\n# pass ${passed}\n# fail ${failed.length}` : `test result: ${failed.length ? "FAILED" : "ok"}. ${passed} passed; ${failed.length} failed; 0 ignored`);
  } else if (/\b(build|compile|tsc|clippy|lint|check|make)\b/.test(command)) {
    let warnings = 0;
    fill(lines, target - 200, () => {
      if (rng.chance(0.2)) {
        warnings++;
        const file = `src/${rng.pick(NOUNS)}.rs`;
        const line = rng.range(10, 900);
        return [
          `warning: unused variable: \`${rng.pick(ADJECTIVES)}_${rng.pick(NOUNS)}\``,
          `  --> ${file}:${line}:${rng.range(5, 40)}`,
          "   |",
          `${String(line).padStart(3)} |     let ${rng.pick(ADJECTIVES)} = ${ident(rng)}(&${rng.pick(NOUNS)});`,
          "   |",
          "",
        ];
      }
      return [`   Compiling ${rng.pick(NOUNS)}-${rng.pick(NOUNS)} v${rng.range(0, 3)}.${rng.range(0, 30)}.${rng.range(0, 9)}`];
    });
    lines.push(`warning: ${warnings} warnings emitted`, `    Finished release [optimized] target(s) in ${(rng.next() * 60 + 5).toFixed(2)}s`);
  } else if (/\bgit\b/.test(command)) {
    fill(lines, target, () => [
      `commit ${hashHex(String(rng.next()))}${hashHex(String(rng.next()))}`.slice(0, 47),
      `Author: ${cap(rng.pick(NOUNS))} Dev <dev@example.com>`,
      `Date:   ${rng.pick(["Mon", "Tue", "Wed", "Thu", "Fri"])} Mar ${rng.range(1, 28)} ${rng.range(8, 19)}:${String(rng.range(0, 59)).padStart(2, "0")} 2025`,
      "",
      `    ${cap(rng.pick(VERBS))} the ${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)} in ${rng.pick(NOUNS)}.rs`,
      "",
    ]);
  } else if (/\b(grep|rg|find|ag)\b/.test(command)) {
    fill(lines, target, () => [`src/${rng.pick(NOUNS)}/${rng.pick(NOUNS)}.rs:${rng.range(1, 900)}:    let ${rng.pick(ADJECTIVES)} = ${ident(rng)}(&${rng.pick(NOUNS)});`]);
  } else {
    let t = rng.range(0, 3000);
    fill(lines, target, () => {
      t += rng.range(1, 900);
      return [`[${(t / 1000).toFixed(3)}s] ${rng.pick(["INFO", "INFO", "INFO", "DEBUG", "WARN"])} ${ident(rng)}: ${rng.pick(VERBS)}ed ${rng.range(1, 5000)} ${rng.pick(NOUNS)}s`];
    });
    if (rng.chance(0.2)) exit = 2;
  }
  lines.push("", `[exit code: ${exit}]`);
  return lines.join("\n");
}

// ------------------------------------------------------------ entry points

function requireString(name, args, key) {
  const value = args?.[key];
  if (typeof value !== "string" || value.trim() === "") {
    throw new Error(`${name}: "${key}" must be a non-empty string`);
  }
  return value.trim();
}

/** Runs a demo tool: a deterministic, large text result for the arguments. */
export function runDemoTool(name, args) {
  switch (name) {
    case "read_file":
      return readFile(requireString(name, args, "path"));
    case "list_files":
      return listFiles(requireString(name, args, "path"));
    case "run_command":
      return runCommand(requireString(name, args, "command"));
    default:
      throw new Error(`Unknown tool: ${name}`);
  }
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("Tool execution aborted"));
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(new Error("Tool execution aborted"));
      },
      { once: true },
    );
  });
}

/**
 * DEMO_TOOLS as pi-agent-core AgentTools: `execute(toolCallId, params, signal)`
 * resolves to `{ content: [{ type: "text", text }], details: { tool, bytes, lines } }`
 * after `delayMs` (default 0); a bad argument rejects, which the agent loop
 * turns into an error tool result.
 */
export function demoAgentTools({ delayMs = 0 } = {}) {
  return DEMO_TOOLS.map((tool) => ({
    ...tool,
    async execute(_toolCallId, params, signal) {
      if (delayMs > 0) await sleep(delayMs, signal);
      const text = runDemoTool(tool.name, params);
      return {
        content: [{ type: "text", text }],
        details: { tool: tool.name, bytes: text.length, lines: text.split("\n").length },
      };
    },
  }));
}
