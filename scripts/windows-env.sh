# Sourced (`. scripts/windows-env.sh`): sets up cargo for the x86_64-pc-windows-gnu target with
# the mingw-w64 linker and the Wine runner (tools/wine/run.sh), so that `cargo test --target
# x86_64-pc-windows-gnu` builds Windows executables and runs them under Wine.
#
# Toolchain: rustup's x86_64-pc-windows-gnu target when installed (prebuilt std); otherwise
# Debian's rustc-web/cargo-web with rust-web-src, building std from source (-Zbuild-std, which
# needs RUSTC_BOOTSTRAP=1). scripts/windows-toolchain.sh installs one or the other.
#
# Exports:
#   WINDOWS_TARGET     x86_64-pc-windows-gnu
#   WINDOWS_TOOLCHAIN  rustup or debian-build-std
#   WINDOWS_CARGO      the cargo to run for the Windows target ("cargo" or /usr/bin/cargo)
#   ANTREA_RS_WINE_CACHE  the shim DLLs and the Wine prefix live here
# Cargo shares CARGO_TARGET_DIR across targets (outputs go to <dir>/x86_64-pc-windows-gnu/), so
# no separate target directory is needed.

windows_env_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

export WINDOWS_TARGET=x86_64-pc-windows-gnu
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$windows_env_repo/tools/wine/run.sh
# C code in build scripts (e.g. ring) compiles with the same mingw toolchain.
export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc
export AR_x86_64_pc_windows_gnu=x86_64-w64-mingw32-ar

# The shim and the prefix persist across runs and clones; root uses /var/cache, others ~/.cache.
if [ -z "${ANTREA_RS_WINE_CACHE:-}" ]; then
  if [ -w /var/cache ] || [ -w /var/cache/antrea-rs ]; then
    ANTREA_RS_WINE_CACHE=/var/cache/antrea-rs/wine
  else
    ANTREA_RS_WINE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/antrea-rs/wine
  fi
fi
export ANTREA_RS_WINE_CACHE

# ANTREA_RS_WINDOWS_TOOLCHAIN=rustup|debian forces one (e.g. to test the fallback); default: the
# rustup target when it is installed, else the Debian toolchain.
windows_env_choice=${ANTREA_RS_WINDOWS_TOOLCHAIN:-auto}
if [ "$windows_env_choice" != debian ] && command -v rustup >/dev/null 2>&1 \
  && rustup target list --installed 2>/dev/null | grep -qx "$WINDOWS_TARGET"; then
  export WINDOWS_TOOLCHAIN=rustup
  export WINDOWS_CARGO=cargo
elif [ "$windows_env_choice" != rustup ] && [ -x /usr/bin/cargo ] && [ -x /usr/bin/cargo-clippy ] \
  && [ -d /usr/lib/rustlib/src/rust/library ]; then
  export WINDOWS_TOOLCHAIN=debian-build-std
  export WINDOWS_CARGO=/usr/bin/cargo
  # Debian's cargo, rustc, cargo-clippy and clippy-driver ahead of rustup's proxies.
  export PATH=/usr/bin:$PATH
  export RUSTC=/usr/bin/rustc
  export RUSTDOC=/usr/bin/rustdoc
  # -Z flags on a stable toolchain.
  export RUSTC_BOOTSTRAP=1
  # Same as passing -Zbuild-std=std: cargo builds core/alloc/std (and test, for test targets)
  # for the Windows target from rust-web-src; the host keeps Debian's prebuilt std.
  export CARGO_UNSTABLE_BUILD_STD=std
else
  echo "windows-env: no $windows_env_choice toolchain for $WINDOWS_TARGET; run scripts/windows-toolchain.sh" >&2
  unset windows_env_repo windows_env_choice
  return 1 2>/dev/null || exit 1
fi
unset windows_env_repo windows_env_choice
