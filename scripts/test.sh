#!/usr/bin/env bash
# The whole test suite: installs what it needs, then runs the Linux tests (real OVS, namespaces),
# the Windows tests under Wine, and a short fuzz run of every decoder. Run as root.
# CARGO_TARGET_DIR may point at a cache outside the clone; everything also passes without one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== linux: cargo test (workspace)"
cargo test --workspace --locked 2>&1

echo "== windows: build x86_64-pc-windows-gnu and run the tests under Wine"
bash scripts/windows-test.sh

echo "== fuzz: short run of every decoder target"
bash scripts/fuzz-smoke.sh
