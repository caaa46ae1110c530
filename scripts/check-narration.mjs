// Fails when a tracked file narrates how the code was written instead of
// describing the product: numbered sessions, rounds or issues of the work,
// pull requests, the names of branches and work trees, who did it. That
// story belongs in commit messages; a reader of the code, the docs or the
// tests needs what is true now.
//
//   node scripts/check-narration.mjs
//
// The patterns are narrow on purpose: product words stay free ("a session
// store", "pi session files", "a round trip", "6 rounds of saves", "issue a
// request", "the abandoned branch"). tests/node/check-narration.test.mjs
// holds them to examples both ways. Data files (fixtures, fuzz seeds, lock
// files) hold other projects' text and are not read.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** What narrates, each with what to write instead. */
export const PATTERNS = [
  { re: /\bissues?[ -]?#?\d+/i, why: "an issue number: say what the code does" },
  { re: /\b(?:this|the|a|my|our|that) (?:PR|pull request)\b|\bPR ?#\d+|\bpull request #?\d+/i, why: "a pull request" },
  { re: /(?<![\w-])(?:session|round|sprint|iteration)[ -]\d+\b(?!["'`])/i, why: "a numbered session or round of the work" },
  { re: /\b(?:helper|worker) (?:session|agent)s?\b|\bsub-?agents?\b|\b(?:agent|helper)-\d+\b|\bthe CEO\b/i, why: "who did the work" },
  { re: /\bwt-[a-z][\w-]*|\bbranch [`'"][\w./-]+[`'"]|\b(?:merged?|rebased?) (?:in)?to (?:main|master)\b/i, why: "a branch or work tree" },
];

/** The narrating phrases of `text`: `[{ line, match, why }]`. */
export function narration(text) {
  const found = [];
  text.split("\n").forEach((line, i) => {
    for (const { re, why } of PATTERNS) {
      const m = re.exec(line);
      if (m) found.push({ line: i + 1, match: m[0], why });
    }
  });
  return found;
}

// Data, not prose of this project; and this check's own examples.
const skip = (path) =>
  path.startsWith("fixtures/") ||
  path.startsWith("crates/core/fuzz/seeds/") ||
  path.startsWith("crates/core/fuzz/regressions/") ||
  path.endsWith(".lock") ||
  path.endsWith("package-lock.json") ||
  path === "scripts/check-narration.mjs" ||
  path === "tests/node/check-narration.test.mjs";

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
  const problems = [];
  for (const path of tracked.filter((p) => !skip(p))) {
    let text;
    try {
      text = readFileSync(join(root, path), "utf8");
    } catch {
      continue; // listed but absent (a deletion not yet committed)
    }
    if (text.includes("\0")) continue; // binary
    for (const { line, match, why } of narration(text)) problems.push(`${path}:${line}: "${match}" (${why})`);
  }
  if (problems.length) {
    console.error(`Tracked files narrate how the code was written; describe the product instead:\n${problems.join("\n")}`);
    process.exit(1);
  }
}
