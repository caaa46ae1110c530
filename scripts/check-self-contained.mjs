// Fails when a tracked file refers to a path outside the repository: users
// clone the project alone, so a test, benchmark or script that reads a
// folder beside the clone, or a machine's absolute path, works on one
// machine and fails on theirs.
//
//   node scripts/check-self-contained.mjs
//
// For every tracked text file it finds relative paths that climb (`../`)
// and resolves each against the file's own folder and against the
// repository root (scripts resolve against the working directory,
// `CARGO_MANIFEST_DIR` joins against a crate's folder): a path is fine when,
// from one of those places, its climb lands inside the repository and the
// name after the climb exists there (or, at the top, is one the build makes:
// the `/name` lines of .gitignore, pkg/, target/, node_modules/…).
// Otherwise — it escapes, or it names a folder no clone has, like a
// `shared/` beside the scripts — it is reported, unless the line carries
// the mark `path-check: data` (the path is test data, not a reference). Absolute
// paths into this workplace's folder are reported too. System paths such
// as `/usr/bin/chromium` are installed by scripts/setup.sh and are fine.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" })
  .split("\0")
  .filter(Boolean);

// Data, not code: session files, seeds and lock files hold other projects' text.
const skip = (path) =>
  path.startsWith("fixtures/") ||
  path.startsWith("crates/core/fuzz/seeds/") ||
  path.startsWith("crates/core/fuzz/regressions/") ||
  path.endsWith(".lock") ||
  path.endsWith("package-lock.json");

// Top-level entries the build or setup creates (ignored by git).
const made = new Set(
  readFileSync(join(root, ".gitignore"), "utf8")
    .split("\n")
    .filter((line) => /^\/[\w.-]+$/.test(line.trim()))
    .map((line) => line.trim().slice(1)),
);

// `climb` is the `../../` part, `name` the first name after it: fine when,
// from `base`, that lands inside the repository on an entry that exists
// (or, at the top, one the build makes).
const lands = (base, climb, name) => {
  const at = resolve(base, climb);
  const rel = relative(root, at);
  if (rel === ".." || rel.startsWith(`..${sep}`) || rel.startsWith(sep)) return false;
  return existsSync(join(at, name)) || (rel === "" && made.has(name));
};

const crateDirs = [root, ...tracked.filter((p) => p.endsWith("Cargo.toml")).map((p) => join(root, dirname(p)))];

// A line that holds such a path as test data, not as a reference (a
// path-traversal probe, a generated file name), says so with this mark.
const DATA_MARK = "path-check: data";

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
    if (line.includes(DATA_MARK)) return;
    for (const match of line.matchAll(/((?:\.\.\/)+)([\w.-]+)/g)) {
      const bases = [join(root, dirname(path)), ...crateDirs];
      if (!bases.some((base) => lands(base, match[1], match[2]))) {
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
