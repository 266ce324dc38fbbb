#!/usr/bin/env bash
# Prepares the x86_64-pc-windows-gnu toolchain and the Wine runner. Idempotent.
# Prefers the rustup target; falls back to Debian's rustc-web + rust-web-src (-Zbuild-std), which
# scripts/windows-env.sh then selects.
set -euo pipefail
if command -v rustup >/dev/null && rustup target add x86_64-pc-windows-gnu >/dev/null 2>&1; then
  echo "windows-toolchain: rustup target x86_64-pc-windows-gnu ready"
else
  echo "windows-toolchain: rustup target unavailable, using Debian rustc-web + rust-web-src"
  export DEBIAN_FRONTEND=noninteractive
  dpkg-query -W -f='${Status}' rust-web-src 2>/dev/null | grep -q "install ok installed" || {
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends rustc-web cargo-web rust-web-src >/dev/null
  }
fi
