#!/usr/bin/env bash
# Prepares the Windows leg: the x86_64-pc-windows-gnu Rust toolchain and the Wine shim DLLs.
# Idempotent: a second run only checks (and lets cargo rebuild the HCN shim if its sources
# changed).
#
# Toolchain: the rustup target when rustup can install it; otherwise Debian's rustc-web,
# cargo-web, rust-web-src (std source for -Zbuild-std) and rust-web-clippy, which
# scripts/windows-env.sh then selects. The mingw-w64 linker and Wine come from scripts/setup.sh.
#
# Shims, built into $ANTREA_RS_WINE_CACHE (see scripts/windows-env.sh) and installed into the
# Wine prefix by tools/wine/run.sh:
# - bcryptprimitives.dll: tools/wine/bcryptprimitives.c built with mingw;
# - computenetwork.dll: the crate crates/hcnshim (package hcn-shim), built by cargo for the
#   target in CARGO_TARGET_DIR like the tests; it serves HCN calls with hcn's HNS fake.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
target=x86_64-pc-windows-gnu

# ANTREA_RS_WINDOWS_TOOLCHAIN=debian skips rustup (see scripts/windows-env.sh).
if [ "${ANTREA_RS_WINDOWS_TOOLCHAIN:-auto}" != debian ] && command -v rustup >/dev/null \
  && rustup target add "$target" >/dev/null 2>&1; then
  echo "windows-toolchain: rustup target $target ready"
else
  echo "windows-toolchain: rustup target unavailable, using Debian rustc-web + rust-web-src (-Zbuild-std)"
  export DEBIAN_FRONTEND=noninteractive
  packages=(rustc-web cargo-web rust-web-src rust-web-clippy)
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# shellcheck source=scripts/windows-env.sh
. "$repo/scripts/windows-env.sh"

src=$repo/tools/wine/bcryptprimitives.c
dll=$ANTREA_RS_WINE_CACHE/bcryptprimitives.dll
mkdir -p "$ANTREA_RS_WINE_CACHE"
if [ ! -f "$dll" ] || [ "$src" -nt "$dll" ]; then
  # No C runtime: the DLL imports only advapi32 (RtlGenRandom) and has DllMain as its entry.
  x86_64-w64-mingw32-gcc -shared -O2 -Wall -Wextra -Werror -nostartfiles -Wl,--entry,DllMain \
    -o "$dll.tmp" "$src" -ladvapi32
  mv "$dll.tmp" "$dll"
  echo "windows-toolchain: built $dll"
fi

# Cargo decides whether the HCN shim is stale; its JSON messages name the DLL it built.
hcn_dll=$ANTREA_RS_WINE_CACHE/computenetwork.dll
built=$("$WINDOWS_CARGO" build --manifest-path "$repo/Cargo.toml" -p hcn-shim --lib --target "$WINDOWS_TARGET" \
  --locked --message-format=json-render-diagnostics \
  | sed -n 's/.*"filenames":\[[^]]*"\([^"]*[\/]computenetwork\.dll\)".*/\1/p' | tail -1)
[ -n "$built" ] && [ -f "$built" ] || { echo "windows-toolchain: cargo built no computenetwork.dll" >&2; exit 1; }
if ! cmp -s "$built" "$hcn_dll"; then
  cp "$built" "$hcn_dll.tmp"
  mv "$hcn_dll.tmp" "$hcn_dll"
  echo "windows-toolchain: installed $hcn_dll (from $built)"
fi
echo "windows-toolchain: $WINDOWS_TOOLCHAIN toolchain, Wine shims $dll $hcn_dll"
