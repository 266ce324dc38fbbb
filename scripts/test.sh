#!/usr/bin/env bash
# The whole test suite: installs what it needs, checks formatting and lints, then runs the Linux
# tests (real OVS, network namespaces, real packets), the Windows tests under Wine, the release
# artifacts (scripts/release.sh --profile dev --check: dist/ built from the test legs' debug
# builds, its checksums, every binary's --version, the Linux images run by containerd), and a
# short fuzz run of every decoder.
# Run as root. Build outputs go to CARGO_TARGET_DIR, by default a cache outside the clone
# (/var/cache/antrea-rs/target); everything also passes with that directory empty.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "test: run as root (the tests make network namespaces and run Open vSwitch)" >&2
  exit 1
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/var/cache/antrea-rs/target}
# No incremental compilation: a fresh clone's files are all newer than the cache, so the
# workspace crates are compiled again anyway, and their incremental data had piled up to 23 GB
# in the cache.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
# Every build names the commit it was built from (crates/buildinfo); the test legs and the
# release leg build with the same value, so the release leg reuses their debug builds.
ANTREA_GIT_COMMIT=${ANTREA_GIT_COMMIT:-$(git rev-parse HEAD)}
export ANTREA_GIT_COMMIT
mkdir -p "$CARGO_TARGET_DIR"
bash scripts/setup.sh

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# Strict mode: a test that would skip itself fails instead (crates/testskip); a skip outside
# strict mode is appended to the skip log and counted in the summary.
export ANTREA_TEST_STRICT=${ANTREA_TEST_STRICT:-1}
export ANTREA_TEST_SKIP_LOG="$log/skipped"
: >"$ANTREA_TEST_SKIP_LOG"
count() { awk '/^test result: /{p+=$4; f+=$6} END {print p+0, f+0}' "$1"; }

echo "== linux: cargo fmt --check, clippy -D warnings (workspace, all targets)"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== linux: cargo test (workspace)"
set +e
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$log/linux.log"
linux_status=${PIPESTATUS[0]}
set -e
read -r linux_passed linux_failed < <(count "$log/linux.log")
echo "linux: $linux_passed passed, $linux_failed failed"

echo "== windows: build x86_64-pc-windows-gnu and run the tests under Wine"
set +e
bash scripts/windows-test.sh 2>&1 | tee "$log/windows.log"
windows_status=${PIPESTATUS[0]}
set -e
read -r windows_passed windows_failed < <(sed -n 's/^windows: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log/windows.log" | tail -1 | grep . || echo "0 1")

echo "== release: scripts/release.sh --profile dev --check"
set +e
bash scripts/release.sh --profile dev --check 2>&1 | tee "$log/release.log"
release_status=${PIPESTATUS[0]}
set -e
release_checks=$(grep -c '^check: ok ' "$log/release.log" || true)
release_failed=$(grep -c '^check: FAIL ' "$log/release.log" || true)

echo "== fuzz: short run of every decoder target"
set +e
bash scripts/fuzz-smoke.sh
fuzz_status=$?
set -e

skipped=$(wc -l <"$ANTREA_TEST_SKIP_LOG")
[ "$skipped" -eq 0 ] || { echo "skipped tests:"; cat "$ANTREA_TEST_SKIP_LOG"; }
echo "== summary: linux $linux_passed passed, $linux_failed failed; windows (Wine) $windows_passed passed, $windows_failed failed; $skipped skipped (strict mode: ANTREA_TEST_STRICT=$ANTREA_TEST_STRICT); fuzz exit $fuzz_status; release $release_checks checks passed, $release_failed failed, exit $release_status"
echo "total: $((linux_passed + windows_passed)) passed, $((linux_failed + windows_failed)) failed"
[ "$linux_status" -eq 0 ] && [ "$windows_status" -eq 0 ] && [ "$fuzz_status" -eq 0 ] && [ "$release_status" -eq 0 ]
