#!/usr/bin/env bash
# The Windows leg: lints the whole workspace for x86_64-pc-windows-gnu, builds every test binary
# for it and runs them under Wine (tools/wine/run.sh), then prints one summary line per test
# binary and a total (`windows: N passed, N failed`). Tests that need Linux-only facilities are
# cfg'd out by their crates, so the run is workspace-wide.
#
# Needs scripts/setup.sh (mingw-w64, Wine, the toolchain); re-runs scripts/windows-toolchain.sh,
# which is idempotent. Honours CARGO_TARGET_DIR (shared with the Linux build: cargo keeps the
# Windows outputs under <dir>/x86_64-pc-windows-gnu/).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

bash scripts/windows-toolchain.sh
# shellcheck source=scripts/windows-env.sh
. scripts/windows-env.sh
cargo=$WINDOWS_CARGO
target=$WINDOWS_TARGET

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds() { date +%s; }

start=$(seconds)
echo "== windows: clippy --workspace --all-targets --target $target ($WINDOWS_TOOLCHAIN toolchain)"
"$cargo" clippy --workspace --all-targets --target "$target" --locked -- -D warnings
clippy_s=$(($(seconds) - start))

start=$(seconds)
echo "== windows: build test binaries"
# The JSON artefact messages map each test executable to its source file, which names the
# binary in the summary (integration test binaries of different crates may share a name).
"$cargo" test --workspace --target "$target" --locked --no-run --message-format=json-render-diagnostics \
  >"$work/artifacts.json"
sed -n -E 's/.*"src_path":"([^"]*)".*"executable":"([^"]+)".*/\2\t\1/p' "$work/artifacts.json" \
  | sed "s|\t$repo/|\t|" >"$work/binaries.tsv"
build_s=$(($(seconds) - start))

start=$(seconds)
echo "== windows: run tests under Wine"
set +e
"$cargo" test --workspace --target "$target" --locked --no-fail-fast 2>&1 | tee "$work/test.log"
status=${PIPESTATUS[0]}
set -e
run_s=$(($(seconds) - start))

# One line per binary: "Running <src> (<exe>)" or "Doc-tests <crate>" opens it, the first
# "test result:" closes it; a binary that ends without one (crashed, failed to load) is counted
# as one failure.
echo "== windows: summary (clippy ${clippy_s}s, build ${build_s}s, run ${run_s}s)"
awk -F'\t' -v target="$target" '
  NR == FNR { src[$1] = $2; next }
  function close_open() {
    if (open != "") { printf "  %-52s no result: crashed or failed to start\n", open; failed++; crashed++; binaries++ }
    open = ""
  }
  /^ +Running / {
    close_open()
    exe = $0; sub(/.*\(/, "", exe); sub(/\)$/, "", exe)
    open = (exe in src) ? src[exe] : exe
    next
  }
  /^ +Doc-tests / { close_open(); open = $0; sub(/^ +Doc-tests /, "", open); open = open " (doc-tests)"; next }
  /^test result: / && open != "" {
    p = f = ig = 0
    if (match($0, /[0-9]+ passed/)) p = substr($0, RSTART, RLENGTH) + 0
    if (match($0, /[0-9]+ failed/)) f = substr($0, RSTART, RLENGTH) + 0
    if (match($0, /[0-9]+ ignored/)) ig = substr($0, RSTART, RLENGTH) + 0
    printf "  %-52s %d passed, %d failed, %d ignored\n", open, p, f, ig
    passed += p; failed += f; ignored += ig; binaries++
    open = ""
  }
  END {
    close_open()
    printf "windows (%s under Wine): %d test binaries, %d ignored%s\n", target, binaries, ignored + 0,
      crashed ? sprintf(", %d crashed", crashed) : ""
    printf "windows: %d passed, %d failed\n", passed + 0, failed + 0
    exit (failed > 0)
  }
' "$work/binaries.tsv" "$work/test.log" || status=1
exit "$status"
