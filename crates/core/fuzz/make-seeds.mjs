// Writes the seed corpora of the text fuzz targets from pi session files:
//
//   node crates/core/fuzz/make-seeds.mjs [fixtures dir]   (default: the repository's fixtures/)
//
// - fuzz/seeds/session_import/: small session files, each the header of a
//   fixture and a run of its consecutive lines, plus a few hand-written
//   version-3 files (ids, a fork, a compaction with firstKeptEntryId,
//   branch summaries, custom messages);
// - fuzz/seeds/json_messages/: JSON arrays of one to four consecutive
//   messages taken from the fixtures' entries, and the version-3 entries'
//   messages.
//
// Lines longer than MAX_LINE characters are left out so that seeds stay
// small (libFuzzer runs with -max_len 8192). Deterministic: the same
// fixtures give the same files.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = process.argv[2] ?? join(here, "../../../fixtures");
const MAX_LINE = 2500;
const MAX_SEED = 8000;

const out = (target) => {
  const dir = join(here, "seeds", target);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
};
const sessionDir = out("session_import");
const messagesDir = out("json_messages");

let sessions = 0;
let messageSeeds = 0;
const writeSession = (name, text) => {
  writeFileSync(join(sessionDir, `${name}.jsonl`), text);
  sessions++;
};
const writeMessages = (name, messages) => {
  const text = JSON.stringify(messages);
  if (text.length > MAX_SEED) return;
  writeFileSync(join(messagesDir, `${name}.json`), text);
  messageSeeds++;
};

for (const file of readdirSync(fixtures).filter((f) => f.endsWith(".jsonl")).sort()) {
  const base = file.replace(/\.jsonl$/, "");
  const lines = readFileSync(join(fixtures, file), "utf8").split("\n").filter((l) => l.trim() !== "");
  const [header, ...rest] = lines;
  const short = rest.map((line, i) => ({ line, i })).filter(({ line }) => line.length <= MAX_LINE);

  // Session files: the header and runs of 3, 6 or 10 consecutive short
  // lines, spread over the file; compaction entries and the lines before
  // them always make a seed.
  const runs = [];
  for (let k = 0; k < 24; k++) {
    const at = Math.floor((k * short.length) / 24);
    runs.push(short.slice(at, at + [3, 6, 10][k % 3]));
  }
  rest.forEach((line, i) => {
    if (line.includes('"type":"compaction"')) {
      const before = short.filter((s) => s.i < i).slice(-4);
      const summary = JSON.parse(line);
      summary.summary = String(summary.summary).slice(0, 600);
      runs.push([...before, { line: JSON.stringify(summary), i }]);
    }
  });
  runs.forEach((run, k) => {
    const text = [header, ...run.map((r) => r.line)].join("\n") + "\n";
    if (text.length <= MAX_SEED) writeSession(`${base}-${String(k).padStart(2, "0")}`, text);
  });

  // Messages: runs of 1 to 4 consecutive messages.
  const messages = short
    .map(({ line }) => JSON.parse(line))
    .filter((e) => e.type === "message" && e.message)
    .map((e) => e.message);
  for (let k = 0; k < 40; k++) {
    const at = Math.floor((k * messages.length) / 40);
    writeMessages(`${base}-${String(k).padStart(2, "0")}`, messages.slice(at, at + 1 + (k % 4)));
  }
}

// Version 3, written by hand: a straight branch with a compaction, a fork
// whose other branch has a branch summary, a custom message, model and
// thinking-level changes and a session name.
const v3 = [
  { type: "session", version: 3, id: "s1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" },
  { type: "message", id: "a", parentId: null, timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: "read src/main.rs", timestamp: 1735689601000 } },
  { type: "message", id: "b", parentId: "a", timestamp: "2025-01-01T00:00:02.000Z", message: { role: "assistant", content: [{ type: "thinking", thinking: "look" }, { type: "toolCall", id: "t1", name: "read", arguments: { path: "src/main.rs" } }], provider: "anthropic", model: "m", usage: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 110 }, stopReason: "toolUse", timestamp: 1735689602000 } },
  { type: "message", id: "c", parentId: "b", timestamp: "2025-01-01T00:00:03.000Z", message: { role: "toolResult", toolCallId: "t1", toolName: "read", content: [{ type: "text", text: "fn main() {}" }], isError: false, timestamp: 1735689603000 } },
  { type: "model_change", id: "d", parentId: "c", timestamp: "2025-01-01T00:00:04.000Z", provider: "openai", modelId: "gpt" },
  { type: "thinking_level_change", id: "e", parentId: "d", timestamp: "2025-01-01T00:00:05.000Z", thinkingLevel: "high" },
  { type: "custom_message", id: "f", parentId: "e", timestamp: "2025-01-01T00:00:06.000Z", customType: "note", content: "remember", display: true },
  { type: "message", id: "g", parentId: "f", timestamp: "2025-01-01T00:00:07.000Z", message: { role: "bashExecution", command: "ls", output: "a\nb", exitCode: 0, cancelled: false, truncated: false, timestamp: 1735689607000 } },
  { type: "compaction", id: "h", parentId: "g", timestamp: "2025-01-01T00:00:08.000Z", summary: "Read main.\n\n<read-files>\nsrc/main.rs\n</read-files>", firstKeptEntryId: "f", tokensBefore: 5000, details: { readFiles: ["src/main.rs"], modifiedFiles: [] } },
  { type: "message", id: "i", parentId: "h", timestamp: "2025-01-01T00:00:09.000Z", message: { role: "user", content: [{ type: "text", text: "now edit it" }], timestamp: 1735689609000 } },
  { type: "branch_summary", id: "j", parentId: "c", timestamp: "2025-01-01T00:00:10.000Z", fromId: "i", summary: "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\nTried an edit." },
  { type: "message", id: "k", parentId: "j", timestamp: "2025-01-01T00:00:11.000Z", message: { role: "assistant", content: [{ type: "text", text: "ok" }], provider: "openai", model: "gpt", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, stopReason: "error", errorMessage: "prompt is too long: 213462 tokens > 200000 maximum", timestamp: 1735689611000 } },
  { type: "session_info", id: "l", parentId: "k", timestamp: "2025-01-01T00:00:12.000Z", name: " A session " },
];
const jsonl = (entries) => entries.map((e) => JSON.stringify(e)).join("\n") + "\n";
writeSession("v3-fork-leaf-on-branch", jsonl(v3));
writeSession("v3-main-branch", jsonl(v3.slice(0, 10)));
writeSession("v3-two-compactions", jsonl([
  ...v3.slice(0, 10),
  { type: "compaction", id: "m", parentId: "i", timestamp: "2025-01-01T00:00:13.000Z", summary: "Again.", firstKeptEntryId: "i", tokensBefore: 7000, fromHook: true },
  { type: "message", id: "n", parentId: "m", timestamp: "2025-01-01T00:00:14.000Z", message: { role: "user", content: "more", timestamp: 1735689614000 } },
]));
writeSession("v2-hook-message", jsonl([
  { type: "session", version: 2, id: "s2", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" },
  { type: "message", id: "a", parentId: null, timestamp: "2025-01-01T00:00:01.000Z", message: { role: "hookMessage", customType: "legacy", content: "h", display: true, timestamp: 1 } },
  { type: "compaction", id: "b", parentId: "a", timestamp: "2025-01-01T00:00:02.000Z", summary: "s", firstKeptEntryIndex: 1, tokensBefore: 1 },
]));
writeMessages("v3-messages", v3.filter((e) => e.type === "message").map((e) => e.message));
writeMessages("flat-array-with-summaries", [
  { role: "compactionSummary", summary: "Earlier work.", tokensBefore: 12345, timestamp: 1735689600000, details: { readFiles: ["a.ts"], modifiedFiles: ["b.ts"] } },
  { role: "branchSummary", summary: "Other branch.", fromId: "x", timestamp: 1735689600001 },
  { role: "custom", customType: "note", content: [{ type: "text", text: "n" }], display: false, timestamp: 1735689600002 },
  { role: "user", content: "go", timestamp: 1735689600003 },
]);

console.log(`${sessions} session files in ${sessionDir}`);
console.log(`${messageSeeds} message arrays in ${messagesDir}`);
