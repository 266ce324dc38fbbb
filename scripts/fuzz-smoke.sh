#!/usr/bin/env bash
# A short, bounded libFuzzer run of every decoder target (fuzz/fuzz_targets/*.rs), with debug
# assertions and overflow checks on: a --dev build, quick to build and fast enough for a smoke run.
# A crash fails. FUZZ_SECONDS sets the time per target (default 15).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${FUZZ_SECONDS:-15}
export RUSTC_BOOTSTRAP=1   # cargo-fuzz needs -Z flags; the stable toolchain allows them this way
cargo fuzz build --dev
targets=$(cargo fuzz list)
log=$(mktemp)
for t in $targets; do
  mkdir -p "corpus/$t"
  if ! cargo fuzz run --dev "$t" "corpus/$t" -- -max_total_time="$seconds" -max_len=4096 >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "fuzz: $t crashed" >&2
    exit 1
  fi
  echo "fuzz: $t: $(grep -E '^Done [0-9]+ runs' "$log" || echo 'ran')"
done
rm -f "$log"
echo "fuzz: $(echo $targets | wc -w) targets ran without a crash"
