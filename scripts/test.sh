#!/usr/bin/env bash
# Every test, in order of speed. Run through `npm test`, which sets up first.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s ===\n' "$*"; }

step "native core (cargo test, property tests included)"
node scripts/check-self-contained.mjs
cargo test --quiet

step "fuzzing, a short pass (scripts/fuzz.sh: ${FUZZ_SECONDS:-15} s per target)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-15}"

step "build pkg/"
node scripts/build.mjs

step "boundary in headless Chromium (wasm-bindgen-test)"
CHROMEDRIVER=/usr/bin/chromedriver \
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test -p agent-compaction --target wasm32-unknown-unknown

step "TypeScript consumer (tsc --strict --noEmit)"
node_modules/.bin/tsc -p tests/types
node_modules/.bin/tsc -p tests/types/tsconfig.pi.json

step "package in Node, against pi (node --test)"
node --test tests/node/

step "shim modules in Node (node --test tests/shim/)"
node --test tests/shim/

step "browser, bundlers and demo (Playwright + Chromium)"
node --test --test-concurrency=1 tests/e2e/
