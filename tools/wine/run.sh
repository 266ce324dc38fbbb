#!/usr/bin/env bash
# Cargo's runner for x86_64-pc-windows-gnu executables (set by scripts/windows-env.sh): runs the
# .exe under Wine in a prefix prepared once, with the bcryptprimitives.dll shim installed (see
# bcryptprimitives.c) and a wineserver kept warm so that each test binary starts in well under
# a second instead of booting Wine again.
#
# Environment (all set by scripts/windows-env.sh):
#   ANTREA_RS_WINE_CACHE  directory holding bcryptprimitives.dll and the prefix/
#   WINESERVER_LINGER     seconds the wineserver stays up after the last Wine process exits
set -euo pipefail

cache=${ANTREA_RS_WINE_CACHE:?source scripts/windows-env.sh first}
shim=$cache/bcryptprimitives.dll
export WINEPREFIX=$cache/prefix
export WINEDEBUG=-all
# No Mono/Gecko installer dialogs while the prefix is created; the tests need neither.
export WINEDLLOVERRIDES="mscoree=;mshtml="
export WINEARCH=win64

[ -f "$shim" ] || { echo "wine runner: $shim missing; run scripts/windows-toolchain.sh" >&2; exit 127; }

# Prefix creation and shim installation happen once, under a lock: cargo may start several
# runners at once (one per test binary when tests run in parallel jobs).
(
  flock 9
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "wine runner: creating prefix $WINEPREFIX (once, ~15 s)" >&2
    mkdir -p "$WINEPREFIX"
    wineboot --init >/dev/null 2>&1
    wineserver --wait
  fi
  system32=$WINEPREFIX/drive_c/windows/system32
  cmp -s "$shim" "$system32/bcryptprimitives.dll" || cp "$shim" "$system32/bcryptprimitives.dll"
) 9>"$cache/prefix.lock"

# Keep a server warm for this prefix. Exits non-zero when one is already running, which is fine;
# if it cannot start at all, wine starts its own below.
wineserver -p"${WINESERVER_LINGER:-300}" 2>/dev/null || true

exec wine "$@"
