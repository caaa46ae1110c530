// The optional size build (SIZE_BUILD=1, scripts/lib/wasm-steps.mjs) uses
// unstable compiler flags; a compiler that refuses them must still give the
// stable build, with a one-line message. Simulated with a stand-in for
// cargo that refuses any -Z flag, as a compiler without RUSTC_BOOTSTRAP
// support, an older one or one that renamed a flag would. A flag is a word
// of its own: the temporary directory's random name may contain "-Z".
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cargoBuild } from "../../scripts/lib/wasm-steps.mjs";

function fakeCargo(dir, { refuse }) {
  const path = join(dir, "cargo");
  writeFileSync(
    path,
    `#!/bin/sh
echo "$@" >> "${join(dir, "calls")}"
case " $* " in *" -Z"*) if [ ${refuse ? 1 : 0} = 1 ]; then echo "error: the -Z flag is only accepted on the nightly channel" >&2; exit 101; fi;; esac
while [ "$1" != "--target-dir" ]; do shift; done
mkdir -p "$2/wasm32-unknown-unknown/release" && : > "$2/wasm32-unknown-unknown/release/agent_compaction.wasm"
`,
  );
  chmodSync(path, 0o755);
  return path;
}

function withLog(fn) {
  const lines = [];
  const log = console.log;
  console.log = (...a) => lines.push(a.join(" "));
  try {
    return { result: fn(), lines };
  } finally {
    console.log = log;
  }
}

test("a compiler that refuses the size build's flags gets the stable build, with one line saying so", () => {
  const dir = mkdtempSync(join(tmpdir(), "size-build-"));
  try {
    const cargo = fakeCargo(dir, { refuse: true });
    const { result, lines } = withLog(() => cargoBuild(dir, { size: true, cargo }));
    assert.equal(result, join(dir, "target/pkg/wasm32-unknown-unknown/release/agent_compaction.wasm"));
    assert.deepEqual(lines, ["SIZE_BUILD: the compiler refused the size build's unstable flags; building with stable flags instead."]);
    const calls = readFileSync(join(dir, "calls"), "utf8").trim().split("\n");
    assert.equal(calls.length, 2);
    assert.match(calls[0], /-Zbuild-std/);
    assert.doesNotMatch(calls[1], /(^| )-Z/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the default build passes no unstable flag; the size build, when accepted, is used", () => {
  const dir = mkdtempSync(join(tmpdir(), "size-build-"));
  try {
    const cargo = fakeCargo(dir, { refuse: false });
    const stable = withLog(() => cargoBuild(dir, { size: false, cargo }));
    assert.equal(stable.result, join(dir, "target/pkg/wasm32-unknown-unknown/release/agent_compaction.wasm"));
    const size = withLog(() => cargoBuild(dir, { size: true, cargo }));
    assert.equal(size.result, join(dir, "target/pkg-size/wasm32-unknown-unknown/release/agent_compaction.wasm"));
    assert.deepEqual(size.lines, []);
    const calls = readFileSync(join(dir, "calls"), "utf8").trim().split("\n");
    assert.doesNotMatch(calls[0], /(^| )-Z/);
    assert.match(calls[1], /-Zbuild-std/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
