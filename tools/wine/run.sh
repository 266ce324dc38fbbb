#!/usr/bin/env bash
# Cargo's runner for x86_64-pc-windows-gnu executables (set by scripts/windows-env.sh): runs the
# .exe under Wine in a prefix prepared once, with the shim DLLs installed in its system32
# (bcryptprimitives.dll, see bcryptprimitives.c; computenetwork.dll, see crates/hcnshim) and a
# wineserver kept warm so that each test binary starts in well under a second instead of
# booting Wine again.
#
# The wineserver and Wine's own background processes (services.exe, winedevice.exe, ...) are
# started here with their standard streams on /dev/null and without the lock's descriptor.
# Were they started by the test executable instead, they would inherit its stdout and keep a
# `cargo test | tee` pipeline open until they exit; holding the lock descriptor, they would
# block the next runner.
#
# Environment (set by scripts/windows-env.sh):
#   ANTREA_RS_WINE_CACHE  directory holding the shim DLLs and the prefix/
#   WINESERVER_LINGER     seconds the wineserver stays up after the last Wine process exits
#                         (default 300)
set -euo pipefail

cache=${ANTREA_RS_WINE_CACHE:?source scripts/windows-env.sh first}
shims=(bcryptprimitives.dll computenetwork.dll)
export WINEPREFIX=$cache/prefix
export WINEDEBUG=-all
# No Mono/Gecko installer dialogs while the prefix is created; the tests need neither.
export WINEDLLOVERRIDES="mscoree=;mshtml="
export WINEARCH=win64

for shim in "${shims[@]}"; do
  [ -f "$cache/$shim" ] || { echo "wine runner: $cache/$shim missing; run scripts/windows-toolchain.sh" >&2; exit 127; }
done

# Under a lock: several runners may start at once (parallel cargo invocations).
(
  flock 9
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "wine runner: creating prefix $WINEPREFIX (once, ~15 s)" >&2
    mkdir -p "$WINEPREFIX"
    wineboot --init </dev/null >/dev/null 2>&1 9>&-
    wineserver --wait
  fi
  system32=$WINEPREFIX/drive_c/windows/system32
  # A new copy is renamed into place: a process still running from an earlier runner keeps the
  # file it mapped.
  for shim in "${shims[@]}"; do
    if ! cmp -s "$cache/$shim" "$system32/$shim"; then
      cp "$cache/$shim" "$system32/$shim.tmp"
      mv "$system32/$shim.tmp" "$system32/$shim"
    fi
  done
  # Exit status 0: a new server started, so boot Wine's services on it; 2: one is running.
  server=0
  wineserver -p"${WINESERVER_LINGER:-300}" </dev/null >/dev/null 2>&1 9>&- || server=$?
  case $server in
    0) wineboot </dev/null >/dev/null 2>&1 9>&- ;;
    2) ;;
    *) echo "wine runner: wineserver failed to start (exit status $server)" >&2; exit 1 ;;
  esac
) 9>"$cache/prefix.lock"

exec wine "$@"
