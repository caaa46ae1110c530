// scripts/check-narration.mjs on phrases that narrate how the code was
// written (it must fire) and on the product's own words that look alike (it
// must not), and on the repository itself.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { narration } from "../../scripts/check-narration.mjs";

// The phrases are put together from their words, so that this file does
// not itself read as narration to a plain text search.
const SESSION = ["sess", "ion"].join("");

const NARRATION = [
  `// moved here in ${SESSION} 4`,
  `Re-run after the ${SESSION}-4 redesign`,
  `the classifier as it was before the fast one (${SESSION} 9)`,
  "// round 3 moved the scan into the core",
  "Targets (issue 3): ratio ≤ 1.0",
  "// Issue #12 asked for this",
  "fixes issue-7",
  "as this PR does",
  "see PR #41",
  "the helper session wrote it",
  "a sub-agent measured it",
  "built on branch `docs`",
  "built in the wt-docs work tree",
  "merged into main",
];

const PRODUCT = [
  "A session store keeps each session in IndexedDB.",
  "pi session files (versions 1–3)",
  "sessions 1 to 3 of the list",
  "import ∘ export is a round trip",
  "6 rounds of a block of 6 saves; ROUNDS=15",
  "the summarizer may issue a request",
  "the branch the conversation leaves behind (an abandoned branch)",
  "headers: { Authorization: \"Proxy session-42\" }",
  `pi-large-${SESSION} 1.33–2.02`,
  "a module worker posts a message",
  "the agent runs 8 steps",
];

test("it fires on narration", () => {
  for (const text of NARRATION) assert.equal(narration(text).length, 1, text);
});

test("it does not fire on the product's words", () => {
  for (const text of PRODUCT) assert.deepEqual(narration(text), [], text);
});

test("no tracked file narrates", () => {
  const script = fileURLToPath(new URL("../../scripts/check-narration.mjs", import.meta.url));
  execFileSync(process.execPath, [script], { stdio: "pipe" });
});
