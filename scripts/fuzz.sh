#!/usr/bin/env bash
# Runs every cargo-fuzz target (crates/core/fuzz/fuzz_targets/) for a while each.
#
#   scripts/fuzz.sh [seconds per target] [target ...]
#
# Default: 15 seconds for each of the four targets (about a minute, plus
# the first build). FUZZ_SECONDS sets the default too. Uses the nightly
# toolchain when rustup has one, else stable with RUSTC_BOOTSTRAP=1;
# installs cargo-fuzz when it is missing.
#
# For each target it prints one machine-readable line:
#
#   FUZZ target=<name> runs=<executions> seconds=<time> crashes=<0|1>
#
# The working corpus is crates/core/fuzz/corpus/<target> (kept between runs, not
# committed); the committed seeds in fuzz/seeds/<target> are read too. A
# crashing input is written to fuzz/artifacts/<target>/ and the script exits
# with status 1 after running the other targets.
set -euo pipefail
# cargo-fuzz works from the fuzzed crate's folder: crates/core/fuzz.
cd "$(dirname "$0")/../crates/core"

SECONDS_EACH="${1:-${FUZZ_SECONDS:-15}}"
shift || true
if [ "$#" -gt 0 ]; then
  TARGETS=("$@")
else
  TARGETS=(session_import json_messages cut_point serialize)
fi
case "$SECONDS_EACH" in
  '' | *[!0-9]*) echo "fuzz.sh: seconds must be a whole number, got '$SECONDS_EACH'" >&2; exit 2 ;;
esac

# A compiler that takes -Z flags.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  CARGO=(cargo +nightly)
  echo "fuzz.sh: nightly toolchain ($(rustc +nightly --version))"
else
  CARGO=(cargo)
  export RUSTC_BOOTSTRAP=1
  echo "fuzz.sh: no nightly toolchain; stable with RUSTC_BOOTSTRAP=1 ($(rustc --version))"
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz.sh: installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

# Build once, so that each target's time is spent fuzzing.
"${CARGO[@]}" fuzz build >/dev/null

LOGS="$(mktemp -d)"
trap 'rm -rf "$LOGS"' EXIT
failed=0
for target in "${TARGETS[@]}"; do
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus"
  dirs=("$corpus")
  [ -d "fuzz/seeds/$target" ] && dirs+=("fuzz/seeds/$target")
  log="$LOGS/$target.log"
  start=$(date +%s)
  status=0
  "${CARGO[@]}" fuzz run "$target" "${dirs[@]}" -- \
    -max_total_time="$SECONDS_EACH" -max_len=8192 -timeout=20 \
    -dict=fuzz/session.dict -print_final_stats=1 >"$log" 2>&1 || status=$?
  elapsed=$(($(date +%s) - start))

  # libFuzzer's final statistics, or its "Done N runs in S second(s)".
  runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
  seconds=$(sed -n 's/^Done [0-9][0-9]* runs in \([0-9][0-9]*\) second.*/\1/p' "$log" | tail -n 1)
  if [ -z "$runs" ]; then
    runs=$(sed -n 's/^Done \([0-9][0-9]*\) runs in .*/\1/p' "$log" | tail -n 1)
  fi
  [ -n "$runs" ] || runs=0
  [ -n "$seconds" ] || seconds=$elapsed

  crashes=0
  if [ "$status" -ne 0 ]; then
    crashes=1
    failed=1
    echo "fuzz.sh: $target failed (exit status $status); the end of its log:" >&2
    tail -n 60 "$log" >&2
  fi
  echo "FUZZ target=$target runs=$runs seconds=$seconds crashes=$crashes"
done
exit "$failed"
