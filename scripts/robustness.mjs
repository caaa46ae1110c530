// `npm run robustness`: the robustness report, one table.
//
//   property cases   the native property tests (crates/core/tests/properties/): each
//                    property's cases as its ProptestConfig sets them, and
//                    whether they all passed
//   fuzzing          scripts/fuzz.sh (FUZZ_SECONDS per target, default 60
//                    here): executions, time and crashes per target
//   store            the packing property (crates/core/src/storage/packing/tests.rs) and the
//                    randomized store test in Chromium (crates/wasm/tests/store.rs)
//   bad inputs       tests/e2e/bad-input.test.mjs: calls made, failures
//   fault trials     tests/e2e/faults.test.mjs (tabs closed or crashed
//                    mid-save and mid-compaction) and the summarizer faults
//                    of tests/node/attach.test.mjs
//
// A program that prints numbers; it exits non-zero when anything failed.
// Needs a built pkg/ (`npm run build`) and the tools `npm test` installs.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const fuzzSeconds = process.env.FUZZ_SECONDS ?? "60";

function run(cmd, args, env = {}) {
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, encoding: "utf8", env: { ...process.env, ...env }, maxBuffer: 1 << 28 });
  const out = `${r.stdout}\n${r.stderr}`;
  return { ok: r.status === 0, out, seconds: (Date.now() - started) / 1000 };
}
const rows = [];
const row = (what, measured, failures) => rows.push({ what, measured, failures });

// Property tests: cases per property from the source, pass/fail from cargo.
{
  const source = readFileSync(new URL("../crates/core/tests/properties/main.rs", import.meta.url), "utf8");
  let cases = 0;
  let properties = 0;
  for (const block of source.split("proptest! {").slice(1)) {
    const n = Number(/with_cases\((\d+)\)/.exec(block)?.[1] ?? 256);
    const tests = (block.match(/#\[test\]/g) ?? []).length;
    properties += tests;
    cases += n * tests;
  }
  const r = run("cargo", ["test", "--quiet", "-p", "agent-compaction-core", "--test", "properties", "--test", "fuzz_regressions"]);
  const failed = r.ok ? 0 : Number(/(\d+) failed/.exec(r.out)?.[1] ?? 1);
  row(`property tests (${properties} properties on random sessions and settings)`, `${cases.toLocaleString("en-US")} cases`, failed);
}

// The store's record layout: the packing property (random saves applied to
// a model object store), cases from its ProptestConfig.
{
  const source = readFileSync(new URL("../crates/core/src/storage/packing/tests.rs", import.meta.url), "utf8");
  const cases = Number(/cases: (\d+)/.exec(source)?.[1] ?? 256);
  const r = run("cargo", ["test", "--quiet", "-p", "agent-compaction-core", "--lib", "storage::packing"]);
  const failed = r.ok ? 0 : Number(/(\d+) failed/.exec(r.out)?.[1] ?? 1);
  row("store record layouts (random series of saves applied to a model object store)", `${cases.toLocaleString("en-US")} series`, failed);
}

// The store in Chromium: random edits through two stores, read back by a
// third after each save (crates/wasm/tests/store.rs), seeds × steps from the source.
{
  const source = readFileSync(new URL("../crates/wasm/tests/store.rs", import.meta.url), "utf8");
  const seeds = (/for \(k, seed\) in \[([^\]]*)\]/.exec(source)?.[1] ?? "").split(",").filter((x) => x.trim()).length;
  const steps = Number(/for step in 0\.\.(\d+)/.exec(source)?.[1] ?? 0);
  const r = run("cargo", ["test", "-p", "agent-compaction", "--target", "wasm32-unknown-unknown", "--test", "store", "random_edits"], {
    CHROMEDRIVER: "/usr/bin/chromedriver",
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER: "wasm-bindgen-test-runner",
  });
  const ran = /test result: ok\. 1 passed/.test(r.out);
  row("store in Chromium: random edits through two stores, each save read back (load, loadContext)", `${(seeds * steps).toLocaleString("en-US")} saves`, ran && r.ok ? 0 : 1);
}

// Fuzzing.
{
  const r = run("bash", ["scripts/fuzz.sh", fuzzSeconds]);
  const lines = [...r.out.matchAll(/^FUZZ target=(\S+) runs=(\d+) seconds=(\d+) crashes=(\d+)/gm)];
  if (lines.length === 0) row("fuzzing (scripts/fuzz.sh)", "did not run: " + r.out.trim().split("\n").slice(-3).join(" / "), 1);
  for (const [, target, runs, seconds, crashes] of lines) {
    row(`fuzz target \`${target}\``, `${Number(runs).toLocaleString("en-US")} executions in ${seconds} s`, Number(crashes));
  }
}

// The boundary from JavaScript, and the fault trials, in Chromium.
for (const [file, label, pattern] of [
  ["tests/e2e/bad-input.test.mjs", "bad inputs from JavaScript (every export and method × 41 inputs)", /ROBUSTNESS bad-inputs=(\d+) failures=(\d+)/],
  ["tests/e2e/faults.test.mjs", "tab closed or crashed mid-save and mid-compaction", /ROBUSTNESS fault-trials=(\d+) lost=(\d+)/],
]) {
  const r = run("node", ["--test", "--test-concurrency=1", file]);
  const m = pattern.exec(r.out);
  if (!m) row(label, "did not run", 1);
  else row(label, `${m[1]} ${label.startsWith("bad") ? "calls" : "trials"}`, Number(m[2]) + (r.ok ? 0 : 1));
}
{
  const r = run("node", ["--test", "--test-name-pattern", "faulty summarizer", "tests/node/attach.test.mjs"]);
  const pass = Number(/# pass (\d+)/.exec(r.out)?.[1] ?? 0);
  const fail = Number(/# fail (\d+)/.exec(r.out)?.[1] ?? 1);
  row("summarizer faults in the agent flow (throws, rejects, hangs, garbage, 1 MB, empty × fallback)", `${pass + fail} trials`, fail);
}

const total = rows.reduce((n, r) => n + r.failures, 0);
console.log("\n| check | run | failures (panics, lost messages, wrong results) |\n| --- | ---: | ---: |");
for (const r of rows) console.log(`| ${r.what} | ${r.measured} | ${r.failures} |`);
console.log(`\n${total === 0 ? "No failures." : `${total} FAILURE(S).`} (${new Date().toISOString().slice(0, 10)}, fuzzing ${fuzzSeconds} s per target)`);
process.exit(total === 0 ? 0 : 1);
