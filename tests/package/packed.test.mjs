// The package as npm publishes it: pkg/ packed with `npm pack`, then
//   - publint (strict) and @arethetypeswrong/cli (ESM-only profile) on the
//     tarball: `exports`, `types` and the files shipped stay right;
//   - installed from the tarball (npm install, like a user's app) into a
//     fresh Vite + TypeScript app (tests/package/vite-ts-app): `tsc` strict,
//     `vite build`, and the built page run in headless Chromium;
//   - and into a Node script in TypeScript (tests/package/node-ts-script,
//     with `ai` for the ai-sdk entry): `tsc` strict, then run with node.
// The apps get the repository's versions of vite, typescript and ai;
// `--prefer-offline` takes them from npm's cache when it has them.
// Needs a built pkg/ (`node scripts/build.mjs`) and /usr/bin/chromium.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM } from "../support/chromium.mjs";
import { startServer } from "../../scripts/serve.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const here = fileURLToPath(new URL(".", import.meta.url));
const bin = (name) => join(repo, "node_modules/.bin", name);
const versionOf = (name) => createRequire(join(repo, "package.json"))(`${name}/package.json`).version;

let tmp;
let tarball;

before(() => {
  tmp = mkdtempSync(join(tmpdir(), "agent-compaction-packed-"));
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", tmp], { cwd: join(repo, "pkg"), encoding: "utf8" }),
  );
  tarball = join(tmp, packed.filename);
});

after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Runs a command; on failure, the assertion shows what it printed. */
function run(command, args, cwd) {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: "pipe" });
  } catch (error) {
    assert.fail(`${command} ${args.join(" ")} failed (${error.status}):\n${error.stdout}${error.stderr}`);
  }
}

/** A copy of the app `name` in the temp folder, with the tarball and `devDependencies` installed. */
function install(name, devDependencies) {
  const dir = join(tmp, name);
  cpSync(join(here, name), dir, { recursive: true });
  const manifest = {
    name,
    private: true,
    type: "module",
    dependencies: { "agent-compaction": `file:${tarball}` },
    devDependencies: Object.fromEntries(devDependencies.map((d) => [d, versionOf(d)])),
  };
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], dir);
  return dir;
}

test("publint (strict): the packed package's exports, types and files", () => {
  const out = run(bin("publint"), ["run", tarball, "--strict"], repo);
  assert.match(out, /All good!/);
});

test("are the types wrong (ESM-only profile): every entry resolves to its declarations", () => {
  // The .wasm subpath is an asset, not a module: it has no declarations.
  const out = run(bin("attw"), [tarball, "--profile", "esm-only", "--exclude-entrypoints", "./agent_compaction_bg.wasm", "--format", "json"], repo);
  // attw exits non-zero on a problem the profile counts (run asserts it did
  // not); the JSON lists all, those of the resolutions ESM-only ignores too.
  const { analysis } = JSON.parse(out);
  const ignored = new Set(["node10", "node16-cjs"]);
  assert.deepEqual(analysis.problems.filter((p) => !ignored.has(p.resolutionKind)), []);
  assert.deepEqual(Object.keys(analysis.entrypoints).sort(), [".", "./ai-sdk", "./manual-init", "./package.json", "./pi-agent-core"]);
});

test("a fresh Vite + TypeScript app installs the tarball, type-checks (strict), builds and runs in Chromium", async () => {
  const app = install("vite-ts-app", ["typescript", "vite"]);
  run(join(app, "node_modules/.bin/tsc"), ["-p", "."], app);
  run(join(app, "node_modules/.bin/vite"), ["build", "--logLevel", "error"], app);
  const server = await startServer({ port: 0, mounts: [{ prefix: "/", dir: join(app, "dist") }] });
  const browser = await chromium.launch(CHROMIUM);
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on("pageerror", (error) => problems.push(error.message));
    await page.goto(server.url);
    await page.waitForFunction(() => document.querySelector("#result")?.textContent?.startsWith("{"), null, { timeout: 30_000 });
    const result = JSON.parse(await page.textContent("#result"));
    assert.deepEqual(problems, []);
    assert.deepEqual(result, {
      ok: true,
      summarizedBy: "extractive",
      firstSent: "user",
      events: ["compaction_start", "compaction_end"],
      savedCount: result.savedCount,
    });
    assert.ok(result.savedCount > 1 && result.savedCount <= 41, `saved the compacted array (${result.savedCount})`);
  } finally {
    await browser.close();
    await server.close();
  }
});

test("a Node script in TypeScript installs the tarball (and ai), compiles (strict) and runs", () => {
  const script = install("node-ts-script", ["typescript", "ai"]);
  run(join(script, "node_modules/.bin/tsc"), ["-p", "."], script);
  const printed = JSON.parse(run(process.execPath, ["dist/main.js"], script));
  assert.deepEqual(printed, {
    roundTrip: true,
    summarizedBy: "extractive",
    firstSent: "user",
    smaller: true,
    context: printed.context,
  });
  assert.ok(printed.context < 60, `the model sees the summary and what follows (${printed.context} messages)`);
  // What ran is the installed copy, not the repository's pkg/.
  const installed = JSON.parse(readFileSync(join(script, "node_modules/agent-compaction/package.json"), "utf8"));
  assert.equal(installed.name, "agent-compaction");
});
