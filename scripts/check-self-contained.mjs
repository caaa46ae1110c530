// Fails when a tracked file refers to a path outside the repository: users
// clone the project alone, so a test, benchmark or script that reads
// `../shared/…` or a machine's absolute path works on one machine and fails on theirs.
//
//   node scripts/check-self-contained.mjs
//
// For every tracked text file it finds relative paths that climb (`../`)
// and resolves each against the file's own folder and against the
// repository root (scripts resolve against the working directory,
// `CARGO_MANIFEST_DIR` joins against a crate's folder): a path that escapes
// the repository from every one of those places is reported. Absolute
// paths into this workplace's folder are reported too. System paths such
// as `/usr/bin/chromium` are installed by scripts/setup.sh and are fine.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" })
  .split("\0")
  .filter(Boolean);

// Data, not code: session files, seeds and lock files hold other projects' text.
const skip = (path) =>
  path.startsWith("fixtures/") ||
  path.startsWith("fuzz/seeds/") ||
  path.startsWith("fuzz/regressions/") ||
  path.endsWith(".lock") ||
  path.endsWith("package-lock.json");

const inside = (path) => {
  const rel = relative(root, path);
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !rel.startsWith(sep);
};

// The crate folders a CARGO_MANIFEST_DIR path may start from.
const crateDirs = [root, ...tracked.filter((p) => p.endsWith("Cargo.toml")).map((p) => join(root, dirname(p)))];

// Built from parts so that this file does not match itself.
const workplace = new RegExp(["", "work", "[\\w./-]*"].join("\\/"), "g");

const problems = [];
for (const path of tracked) {
  if (skip(path)) continue;
  let text;
  try {
    text = readFileSync(join(root, path), "utf8");
  } catch {
    continue;
  }
  if (text.includes("\0")) continue; // binary
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    for (const match of line.matchAll(/(?:\.\.\/)+[\w.-]+/g)) {
      const bases = [join(root, dirname(path)), ...crateDirs];
      if (bases.every((base) => !inside(resolve(base, match[0])))) {
        problems.push(`${path}:${i + 1}: ${match[0]} leaves the repository`);
      }
    }
    for (const match of line.matchAll(workplace)) {
      problems.push(`${path}:${i + 1}: ${match[0]} is a path on one machine`);
    }
  });
}

if (problems.length > 0) {
  console.error(`${problems.length} reference(s) to paths outside the repository:`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`check-self-contained: ${tracked.length} tracked files, no path outside the repository`);
