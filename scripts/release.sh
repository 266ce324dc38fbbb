#!/usr/bin/env bash
# Builds the release artifacts into dist/ (see docs/release.md), replacing what was there:
#
#   dist/linux-amd64/    antrea-agent antctl antrea antrea-controller
#   dist/windows-amd64/  the same four as .exe (x86_64-pc-windows-gnu)
#   dist/manifests/      build/yamls/*.yml, their images pinned to this version
#   dist/cni/            linux/10-antrea.conflist, windows/10-antrea.conflist
#   dist/images/         antrea-agent-linux-amd64.tar and antrea-controller-linux-amd64.tar
#                        (image archives for ctr/nerdctl/docker load), antrea-agent-windows/
#                        (the Windows image's Dockerfile: it cannot be built on this machine)
#   dist/release.txt     version, commit, profile, toolchain
#   dist/SHA256SUMS      every other file, for `sha256sum -c`
#
# Every binary's --version prints `<name> <version> (commit <git commit>)`: the commit is
# ANTREA_GIT_COMMIT if set, else `git rev-parse HEAD`, passed to the build (crates/buildinfo).
#
# Usage: scripts/release.sh [--profile release|dev] [--check | --check-only]
#   --profile     cargo profile (default: release, or ANTREA_RELEASE_PROFILE); `dev` reuses the
#                 debug builds the test legs left in CARGO_TARGET_DIR
#   --check       then verify dist/: every artifact present, `sha256sum -c SHA256SUMS`, every
#                 Linux binary's and (under Wine) every Windows binary's --version naming this
#                 version and HEAD's commit, and each Linux image imported into a private
#                 containerd and run (needs root); exit status 1 if anything fails
#   --check-only  verify dist/ as it is, without building
# Honours CARGO_TARGET_DIR (default /var/cache/antrea-rs/target, as scripts/test.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

BINARIES=(antrea-agent antctl antrea antrea-controller)
CARGO_SELECTION=(-p agent -p cni -p controller --bin antrea-agent --bin antctl --bin antrea --bin antrea-controller)
# What the agent image carries from the Debian packages openvswitch-switch and
# openvswitch-common (the binaries' shared libraries come along, see scripts/oci-image.py).
OVS_FILES=(/usr/sbin/ovs-vswitchd /usr/sbin/ovsdb-server /usr/bin/ovs-vsctl /usr/bin/ovs-ofctl
  /usr/bin/ovs-appctl /usr/bin/ovs-dpctl /usr/bin/ovsdb-tool /usr/bin/ovsdb-client
  /usr/share/openvswitch/vswitch.ovsschema)
IMAGE_PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin
dist=$repo/dist

say() { echo "release: $*"; }
die() { echo "release: $*" >&2; exit 1; }
usage() { sed -n '/^# Usage:/,/^# Honours/p' "$0" | sed 's/^# \{0,1\}//'; }

parse_args() {
  profile=${ANTREA_RELEASE_PROFILE:-release}
  check=0
  build=1
  while [ $# -gt 0 ]; do
    case $1 in
      --profile) [ $# -ge 2 ] || die "--profile needs a value"; profile=$2; shift 2 ;;
      --profile=*) profile=${1#--profile=}; shift ;;
      --check) check=1; shift ;;
      --check-only) check=1; build=0; shift ;;
      -h | --help) usage; exit 0 ;;
      *) usage >&2; die "unknown argument: $1" ;;
    esac
  done
  case $profile in
    release) profile_dir=release ;;
    dev) profile_dir=debug ;;
    *) die "--profile must be release or dev, not $profile" ;;
  esac
}

setup_build() {
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/var/cache/antrea-rs/target}
  export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
  version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)
  [ -n "$version" ] || die "no version in Cargo.toml's [workspace.package]"
  head=$(git rev-parse HEAD)
  export ANTREA_GIT_COMMIT=${ANTREA_GIT_COMMIT:-$head}
  [ "$build" -eq 1 ] || return 0
  [ -z "$(git status --porcelain --untracked-files=no)" ] \
    || say "warning: the working tree has uncommitted changes; the binaries say commit $ANTREA_GIT_COMMIT"
  say "version $version, commit $ANTREA_GIT_COMMIT, profile $profile, target dir $CARGO_TARGET_DIR"
}

build_linux() {
  say "building the Linux binaries"
  cargo build --locked --profile "$profile" "${CARGO_SELECTION[@]}"
}

build_windows() {
  say "building the Windows binaries (x86_64-pc-windows-gnu)"
  bash scripts/windows-toolchain.sh
  (
    # shellcheck source=scripts/windows-env.sh
    . scripts/windows-env.sh
    "$WINDOWS_CARGO" build --locked --profile "$profile" --target "$WINDOWS_TARGET" "${CARGO_SELECTION[@]}"
  )
}

copy_files() {
  rm -rf "$dist"
  mkdir -p "$dist"/{linux-amd64,windows-amd64,manifests,cni/linux,cni/windows,images}
  for bin in "${BINARIES[@]}"; do
    install -m 0755 "$CARGO_TARGET_DIR/$profile_dir/$bin" "$dist/linux-amd64/$bin"
    install -m 0755 "$CARGO_TARGET_DIR/x86_64-pc-windows-gnu/$profile_dir/$bin.exe" "$dist/windows-amd64/$bin.exe"
  done
  # The manifests name the images this release builds: antrea-rs/<image>:<version>.
  for manifest in build/yamls/*.yml; do
    sed -E "s#(image: antrea-rs/[a-z-]+):latest\$#\1:$version#" "$manifest" >"$dist/manifests/$(basename "$manifest")"
  done
  install -m 0644 build/cni/10-antrea.conflist "$dist/cni/linux/10-antrea.conflist"
  install -m 0644 build/cni/windows/10-antrea.conflist "$dist/cni/windows/10-antrea.conflist"
  mkdir -p "$dist/images/antrea-agent-windows"
  install -m 0644 build/images/antrea-agent-windows/Dockerfile "$dist/images/antrea-agent-windows/Dockerfile"
  {
    echo "version $version"
    echo "commit $ANTREA_GIT_COMMIT"
    echo "profile $profile"
    echo "toolchain $(rustc --version)"
  } >"$dist/release.txt"
}

# oci_image NAME ARGS...: dist/images/NAME-linux-amd64.tar, tagged antrea-rs/NAME:latest and
# :<version>, made by scripts/oci-image.py from ARGS (--file SRC=DEST, --dir PATH).
oci_image() {
  local name=$1
  shift
  python3 scripts/oci-image.py --out "$dist/images/$name-linux-amd64.tar" \
    --name "docker.io/antrea-rs/$name:latest" --name "docker.io/antrea-rs/$name:$version" \
    --label "org.opencontainers.image.version=$version" \
    --label "org.opencontainers.image.revision=$ANTREA_GIT_COMMIT" \
    --env "PATH=$IMAGE_PATH" --cmd "$name --version" --mtime "$(git log -1 --format=%ct)" "$@"
}

build_images() {
  say "building the Linux images"
  local bin=$dist/linux-amd64 ovs=() file
  for file in "${OVS_FILES[@]}"; do ovs+=(--file "$file=$file"); done
  oci_image antrea-agent --file "$bin/antrea-agent=/usr/local/bin/antrea-agent" \
    --file "$bin/antctl=/usr/local/bin/antctl" --file "$bin/antrea=/usr/local/bin/antrea" "${ovs[@]}" \
    --dir /tmp --dir /var/run/openvswitch --dir /var/log/openvswitch --dir /etc/openvswitch
  oci_image antrea-controller --file "$bin/antrea-controller=/usr/local/bin/antrea-controller" \
    --file "$bin/antctl=/usr/local/bin/antctl"
}

write_checksums() {
  (cd "$dist" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort \
    | xargs -d '\n' sha256sum >SHA256SUMS)
  say "dist/SHA256SUMS: $(wc -l <"$dist/SHA256SUMS") files"
}

# ---- checks: each prints one line and counts a failure instead of stopping ----

failures=0
check_log=
pass() { echo "check: ok   $*"; }
fail() { echo "check: FAIL $*"; failures=$((failures + 1)); }

expected_files() {
  for bin in "${BINARIES[@]}"; do echo "linux-amd64/$bin"; echo "windows-amd64/$bin.exe"; done
  for manifest in build/yamls/*.yml; do echo "manifests/$(basename "$manifest")"; done
  echo cni/linux/10-antrea.conflist
  echo cni/windows/10-antrea.conflist
  echo images/antrea-agent-linux-amd64.tar
  echo images/antrea-controller-linux-amd64.tar
  echo images/antrea-agent-windows/Dockerfile
  echo release.txt
}

# The file names SHA256SUMS lists.
listed_files() { sed 's/^[0-9a-f]\{64\}  //' "$dist/SHA256SUMS" 2>/dev/null; }

check_artifacts() {
  local missing=0 file
  while read -r file; do
    if [ ! -s "$dist/$file" ]; then
      fail "artifact dist/$file is missing or empty"
      missing=1
    elif ! listed_files | grep -qxF "$file"; then
      fail "artifact dist/$file is not in SHA256SUMS"
      missing=1
    fi
  done < <(expected_files)
  [ "$missing" -eq 1 ] || pass "every artifact present and listed ($(expected_files | wc -l) files)"
  local unlisted
  unlisted=$(cd "$dist" && find . -type f ! -name SHA256SUMS -printf '%P\n' | grep -vxF -f <(listed_files) || true)
  [ -z "$unlisted" ] || fail "files in dist/ that SHA256SUMS does not list: $unlisted"
  if grep -q 'image: .*:latest$' "$dist"/manifests/*.yml; then
    fail "a manifest in dist/manifests still names a :latest image"
  else
    pass "the manifests name the images of version $version"
  fi
}

check_checksums() {
  local out
  if out=$(cd "$dist" && sha256sum --strict -c SHA256SUMS 2>&1); then
    pass "sha256sum -c SHA256SUMS: $(grep -c ': OK$' <<<"$out") files verified"
  else
    fail "sha256sum -c SHA256SUMS:"
    grep -v ': OK$' <<<"$out" | sed 's/^/       /'
  fi
}

# check_equal LABEL GOT WANT
check_equal() {
  if [ "$2" = "$3" ]; then
    pass "$1: $2"
  else
    fail "$1: got '$2', want '$3'"
  fi
}

# check_version LABEL NAME OUTPUT: OUTPUT must be exactly `NAME <version> (commit <HEAD>)`.
check_version() { check_equal "$1" "$3" "$2 $version (commit $head)"; }

# stdout CMD...: the command's standard output; its standard error goes to the check log, shown
# when a check fails.
stdout() { "$@" 2>>"$check_log" </dev/null || true; }

check_linux_versions() {
  for bin in "${BINARIES[@]}"; do
    check_version "linux-amd64/$bin --version" "$bin" "$(stdout "$dist/linux-amd64/$bin" --version)"
  done
}

check_windows_versions() {
  # shellcheck source=scripts/windows-env.sh
  . scripts/windows-env.sh
  for bin in "${BINARIES[@]}"; do
    check_version "windows-amd64/$bin.exe --version (Wine)" "$bin" \
      "$(stdout tools/wine/run.sh "$dist/windows-amd64/$bin.exe" --version | tr -d '\r')"
  done
}

# A containerd of our own (config version 2, everything under one temporary directory, CRI off),
# as the lab starts one per Node (docs/lab.md), stopped and removed on exit.
start_containerd() {
  ctrd=$(mktemp -d /tmp/antrea-release-containerd.XXXXXX)
  cat >"$ctrd/config.toml" <<EOF
version = 2
root = "$ctrd/root"
state = "$ctrd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.internal.v1.tracing",
  "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$ctrd/containerd.sock"
[ttrpc]
  address = "$ctrd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$ctrd/opt"
EOF
  containerd --config "$ctrd/config.toml" >"$ctrd/containerd.log" 2>&1 &
  ctrd_pid=$!
  trap stop_containerd EXIT
  for _ in $(seq 60); do
    ctr_ version >/dev/null 2>&1 && return 0
    kill -0 "$ctrd_pid" 2>/dev/null || break
    sleep 0.5
  done
  echo "release: containerd did not start; its log:" >&2
  cat "$ctrd/containerd.log" >&2
  return 1
}

ctr_() { ctr --address "$ctrd/containerd.sock" --namespace antrea-release "$@"; }

stop_containerd() {
  [ -n "${ctrd:-}" ] || return 0
  if [ -n "${ctrd_pid:-}" ]; then
    kill "$ctrd_pid" 2>/dev/null || true
    wait "$ctrd_pid" 2>/dev/null || true
  fi
  # Mounts left by a container that did not end (none when every run ended).
  { findmnt -rn -o TARGET | grep "^$ctrd/" || true; } | sort -r | xargs -r -d '\n' umount -l
  rm -rf "$ctrd"
  # The runc shim puts its sockets in s/ and ctr its I/O pipes in fifo/ whatever the
  # configuration says; removed when nothing else uses them.
  rmdir /run/containerd/s /run/containerd/fifo /run/containerd 2>/dev/null || true
  ctrd=
}

# run_image IMAGE ARGS...: the command's output in a new container of IMAGE, removed after.
run_image() {
  local image=$1
  shift
  containers=$((containers + 1))
  stdout ctr_ run --rm --cgroup "" --runc-root "$ctrd/runc" "docker.io/antrea-rs/$image:$version" \
    "antrea-release-$$-$containers" "$@"
}

check_images() {
  if [ "$(id -u)" -ne 0 ]; then
    fail "images: importing and running them needs root"
    return
  fi
  start_containerd || { fail "images: containerd did not start"; return; }
  containers=0
  local image
  for image in antrea-agent antrea-controller; do
    if ctr_ images import "$dist/images/$image-linux-amd64.tar" >/dev/null 2>"$ctrd/import.log"; then
      pass "images: ctr images import $image-linux-amd64.tar: $(ctr_ images ls -q | grep -c "/$image:") names"
    else
      fail "images: ctr images import $image-linux-amd64.tar: $(cat "$ctrd/import.log")"
    fi
  done
  check_version "image antrea-agent: antrea-agent --version" antrea-agent "$(run_image antrea-agent antrea-agent --version)"
  check_version "image antrea-agent: antctl --version" antctl "$(run_image antrea-agent antctl --version)"
  check_version "image antrea-agent: antrea --version" antrea "$(run_image antrea-agent antrea --version)"
  check_version "image antrea-controller: antrea-controller --version" antrea-controller \
    "$(run_image antrea-controller antrea-controller --version)"
  # Open vSwitch as the host's Debian packages built it, and the schema it serves.
  local tool schema=/usr/share/openvswitch/vswitch.ovsschema
  for tool in ovs-vswitchd ovsdb-server ovs-vsctl ovs-ofctl ovsdb-tool; do
    check_equal "image antrea-agent: $tool --version" \
      "$(run_image antrea-agent "$tool" --version | head -1)" "$("$tool" --version | head -1)"
  done
  check_equal "image antrea-agent: ovsdb-tool schema-version $schema" \
    "$(run_image antrea-agent ovsdb-tool schema-version "$schema")" "$(ovsdb-tool schema-version "$schema")"
  stop_containerd
  trap - EXIT
}

run_checks() {
  say "checking dist/ for version $version, commit $head"
  check_log=$(mktemp)
  check_artifacts
  check_checksums
  check_linux_versions
  check_windows_versions
  check_images
  if [ "$failures" -gt 0 ] && [ -s "$check_log" ]; then
    say "standard error of the commands checked:"
    sed 's/^/  /' "$check_log"
  fi
  rm -f "$check_log"
  if [ "$failures" -eq 0 ]; then
    say "check passed: every artifact present, checksums verified, versions name commit $head, images run"
  else
    say "check FAILED: $failures failure(s)"
    return 1
  fi
}

main() {
  parse_args "$@"
  setup_build
  if [ "$build" -eq 1 ]; then
    local start=$SECONDS
    build_linux
    build_windows
    copy_files
    build_images
    write_checksums
    say "dist/ built in $((SECONDS - start)) s"
  fi
  if [ "$check" -eq 1 ]; then
    run_checks
  fi
}

main "$@"
