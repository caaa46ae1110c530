// The links between the documentation's Markdown files resolve: every
// relative link names a file of the repository, and every `#anchor` a
// heading of its target (GitHub's anchors: lower case, punctuation out,
// spaces as hyphens, repeats numbered).
import assert from "node:assert/strict";
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

test("every link between the documentation's files resolves", () => {
  const broken = [];
  for (const file of FILES) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split("#");
      const resolved = path ? normalize(join(dirname(file), path)) : file;
      if (!existsSync(join(ROOT, resolved))) {
        broken.push(`${file}: ${target} (no ${resolved})`);
        continue;
      }
      if (anchor && resolved.endsWith(".md") && !anchors(readFileSync(join(ROOT, resolved), "utf8")).has(anchor)) {
        broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
  }
  assert.deepEqual(broken, []);
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
