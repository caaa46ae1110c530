// The links between the documentation's Markdown files resolve: every
// relative link names a file of the repository, and every `#anchor` a
// heading of its target (GitHub's anchors: lower case, punctuation out,
// spaces as hyphens, repeats numbered). And so they do in the package as
// `npm pack` ships it (the built pkg/): a reader of
// node_modules/agent-compaction/README.md can follow every link.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { test } from "node:test";
import { ROOT, docFiles } from "../support/doc-examples.mjs";

const FILES = [...docFiles(), "BENCHMARKS.md", "ARCHITECTURE.md", "CHANGELOG.md", "CONTRIBUTING.md"];

/** The text outside code blocks and inline code. */
const prose = (text) => text.replace(/^(\s*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\2\s*$/gm, "").replace(/`[^`\n]*`/g, "");

/** GitHub's anchors of a Markdown file's headings. */
function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const [, heading] of prose(text.replace(/`/g, "")).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

/**
 * The links of `files` (paths relative to `dir`) whose target is not one of
 * them, or names no heading of its target: `exists(path)` says whether a
 * path relative to `dir` is there.
 */
function brokenLinks(dir, files, exists) {
  const broken = [];
  for (const file of files) {
    const text = readFileSync(join(dir, file), "utf8");
    for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split("#");
      const resolved = path ? normalize(join(dirname(file), path)) : file;
      if (!exists(resolved)) {
        broken.push(`${file}: ${target} (no ${resolved})`);
        continue;
      }
      if (anchor && resolved.endsWith(".md") && !anchors(readFileSync(join(dir, resolved), "utf8")).has(anchor)) {
        broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
  }
  return broken;
}

test("every link between the documentation's files resolves", () => {
  assert.deepEqual(brokenLinks(ROOT, FILES, (path) => existsSync(join(ROOT, path))), []);
});

test("every link of the Markdown the package ships resolves to a file it ships", () => {
  const pkg = join(ROOT, "pkg");
  const [packed] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: pkg, encoding: "utf8" }));
  const shipped = new Set(packed.files.map((f) => normalize(f.path)));
  const markdown = [...shipped].filter((path) => path.endsWith(".md")).sort();
  assert.ok(markdown.includes("README.md"), "the README ships");
  assert.deepEqual(brokenLinks(pkg, markdown, (path) => shipped.has(path)), []);
  // What ships is the repository's text, not a copy of another version.
  for (const path of markdown) assert.equal(readFileSync(join(pkg, path), "utf8"), readFileSync(join(ROOT, path), "utf8"), path);
});

test("the demo page links to the guides, and the demo's server serves them", async () => {
  const { startServer } = await import("../../scripts/serve.mjs");
  const page = readFileSync(join(ROOT, "www/index.html"), "utf8");
  const href = /<a id="docs-link"[^>]* href="([^"]+)"/.exec(page)?.[1];
  assert.equal(href, "/docs/README.md");
  const server = await startServer({ port: 0 });
  try {
    const response = await fetch(new URL(href, server.url));
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type"), /^text\/plain/, "shown in the browser, not downloaded");
    assert.equal(await response.text(), readFileSync(join(ROOT, "docs/README.md"), "utf8"));
  } finally {
    await server.close();
  }
});
