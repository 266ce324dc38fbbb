#!/usr/bin/env bash
# A bounded libFuzzer run of every decoder target (fuzz/fuzz_targets/*.rs), with debug
# assertions and overflow checks on: a --dev build, quick to build and fast enough for a smoke run.
# A crash (a panic or a failed property) fails.
#
# Each target runs FUZZ_SECONDS (default 12) on two corpus directories: its working corpus,
# ${FUZZ_CORPUS_DIR:-/var/cache/antrea-rs/fuzz-corpus}/<target>, outside the clone so that it
# grows from one CI run to the next (libFuzzer adds new inputs there), and a read-only seed
# directory built by scripts/fuzz-seeds.sh from the repository's fixtures. The build goes to
# $CARGO_TARGET_DIR/<host triple>/debug (build scripts and proc macros to $CARGO_TARGET_DIR/debug).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../fuzz"
seconds=${FUZZ_SECONDS:-12}
corpus_root=${FUZZ_CORPUS_DIR:-/var/cache/antrea-rs/fuzz-corpus}
export RUSTC_BOOTSTRAP=1   # cargo-fuzz needs -Z flags; the stable toolchain allows them this way
start=$SECONDS
cargo fuzz build --dev
echo "fuzz: build took $((SECONDS - start)) s"
seeds=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$seeds" "$log"' EXIT
bash "$here/fuzz-seeds.sh" "$seeds"
targets=$(cargo fuzz list)
for t in $targets; do
  mkdir -p "$corpus_root/$t" "$seeds/$t"
  if ! cargo fuzz run --dev "$t" "$corpus_root/$t" "$seeds/$t" -- \
      -max_total_time="$seconds" -max_len=4096 -timeout=10 >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "fuzz: $t crashed (input in fuzz/artifacts/$t/)" >&2
    exit 1
  fi
  echo "fuzz: $t: $(grep -E '^Done [0-9]+ runs' "$log" || echo 'ran'), corpus $(ls "$corpus_root/$t" | wc -l) inputs"
done
echo "fuzz: $(echo $targets | wc -w) targets ran without a crash in $((SECONDS - start)) s"
