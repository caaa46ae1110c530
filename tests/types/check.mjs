// Type-checks TypeScript files as apps using the package would compile them:
// each `.ts` file is its own program (one app: a declaration merge in one
// file does not reach another), under the settings of tests/types/tsconfig.json
// (strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess, nodenext),
// with the libraries' own declarations skipped (skipLibCheck) as an app's
// build does. `// @ts-expect-error` lines are part of the check: one that
// no longer meets an error fails it.
//
//   node tests/types/check.mjs [file-or-folder ...]
//
// A folder stands for every `.ts` file under it (node_modules left out);
// without arguments, tests/types. A folder with its own `tsconfig.json`
// (extending ../tests/types/tsconfig.json, say, to add `"types": ["node"]`)
// checks its files under that instead. The package is imported by name
// (`agent-compaction`, its subpaths), through node_modules/agent-compaction,
// which `node scripts/build.mjs` links to pkg/.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const tsc = join(root, "node_modules/typescript/bin/tsc");

/** The `.ts` files under `dir` (not `.d.ts`), sorted. */
function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return e.name === "node_modules" ? [] : tsFiles(p);
      return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [p] : [];
    })
    .sort();
}

/** The tsconfig a file is checked under: its folder's (or an ancestor's up to the argument), else tests/types'. */
function configFor(file, top) {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const own = join(dir, "tsconfig.json");
    if (existsSync(own)) return own;
    if (dir === top || dir === dirname(dir)) return join(here, "tsconfig.json");
  }
}

const args = process.argv.slice(2);
const targets = (args.length ? args : [here]).map((a) => resolve(a));
const jobs = targets.flatMap((target) => {
  if (!existsSync(target)) throw new Error(`check.mjs: no such file or folder: ${target}`);
  const files = statSync(target).isDirectory() ? tsFiles(target) : [target];
  if (files.length === 0) throw new Error(`check.mjs: no .ts file under ${target}`);
  const top = statSync(target).isDirectory() ? target : dirname(target);
  return files.map((file) => ({ file, config: configFor(file, top) }));
});

// The generated configs sit inside the repository, so that `"types": [...]`
// finds node_modules/@types as it would from the file's own folder.
const cache = join(root, "node_modules/.cache");
mkdirSync(cache, { recursive: true });
const work = mkdtempSync(join(cache, "type-check-"));
let failed = 0;
try {
  for (const [i, { file, config }] of jobs.entries()) {
    const project = join(work, `tsconfig.${i}.json`);
    const options = { skipLibCheck: true, noEmit: true };
    writeFileSync(project, JSON.stringify({ extends: config, compilerOptions: options, files: [file], include: [] }));
    const name = relative(process.cwd(), file);
    const started = Date.now();
    try {
      execFileSync(process.execPath, [tsc, "-p", project, "--pretty", "false"], { cwd: root, encoding: "utf8", stdio: "pipe" });
      console.log(`ok   ${name} (${Date.now() - started} ms, ${relative(process.cwd(), config)})`);
    } catch (error) {
      failed++;
      console.log(`FAIL ${name} (${relative(process.cwd(), config)})`);
      process.stdout.write(`${error.stdout ?? ""}${error.stderr ?? ""}`);
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (failed) {
  console.log(`${failed} of ${jobs.length} files failed the type check`);
  process.exit(1);
}
