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

# Real Open vSwitch peers for the named-pipe transport tests: the Windows tests relay a pipe to
# these TCP listeners (Winsock under Wine uses the host's sockets). They run in a network
# namespace of their own, and so do the tests, so nothing touches the host's network.
netns=antrea-wintest-$$
ovs=$work/ovs
# Wine creates Winsock sockets in the wineserver, so the wineserver must run in the tests'
# namespace: stop one left by an earlier run (it lives in another namespace), and ours at the end.
stop_wineserver() { WINEPREFIX="$ANTREA_RS_WINE_CACHE/prefix" wineserver -k >/dev/null 2>&1 || true; }
stop_ovs() {
  stop_wineserver
  for d in ovs-vswitchd ovsdb-server; do
    [ -f "$ovs/$d.pid" ] && kill "$(cat "$ovs/$d.pid")" 2>/dev/null || true
  done
  ip netns del "$netns" 2>/dev/null || true
  rm -rf "$work"
}
trap stop_ovs EXIT
mkdir -p "$ovs"
ip netns add "$netns"
ip -n "$netns" link set lo up
# A link with an address and a gateway route, so that the winos tests can compare what Wine's IP
# Helper reports with the Linux routing table (documentation prefixes, in the tests' own namespace).
ip -n "$netns" link add wt0 type veth peer name wt1
ip -n "$netns" link set wt0 up
ip -n "$netns" link set wt1 up
ip -n "$netns" addr add 192.0.2.1/24 dev wt0
ip -n "$netns" route add 198.51.100.0/24 via 192.0.2.2 metric 7
inns() { ip netns exec "$netns" env OVS_RUNDIR="$ovs" OVS_DBDIR="$ovs" OVS_LOGDIR="$ovs" "$@"; }
# The namespace is new, so the well-known ports are free in it.
ovsdb_port=6640
of_port=6653
ovsdb-tool create "$ovs/conf.db" /usr/share/openvswitch/vswitch.ovsschema
inns ovsdb-server "$ovs/conf.db" --remote="punix:$ovs/db.sock" --remote="ptcp:$ovsdb_port:127.0.0.1" \
  --pidfile="$ovs/ovsdb-server.pid" --unixctl="$ovs/ovsdb-server.ctl" --log-file="$ovs/ovsdb-server.log" -vconsole:off --detach
inns ovs-vsctl --db="unix:$ovs/db.sock" --no-wait init
inns ovs-vswitchd "unix:$ovs/db.sock" --pidfile="$ovs/ovs-vswitchd.pid" --unixctl="$ovs/ovs-vswitchd.ctl" \
  --log-file="$ovs/ovs-vswitchd.log" -vconsole:off --detach
inns ovs-vsctl --db="unix:$ovs/db.sock" --timeout=20 add-br br0 -- set bridge br0 datapath_type=netdev \
  fail_mode=secure protocols=OpenFlow10,OpenFlow15 -- set-controller br0 "ptcp:$of_port:127.0.0.1"
export OVSDB_TCP_ADDR=127.0.0.1:$ovsdb_port OPENFLOW_TCP_ADDR=127.0.0.1:$of_port
stop_wineserver

start=$(seconds)
echo "== windows: run tests under Wine (OVS peers: ovsdb $OVSDB_TCP_ADDR, OpenFlow $OPENFLOW_TCP_ADDR)"
set +e
# --include-ignored: the tests that need those peers are ignored in a plain `cargo test`.
ip netns exec "$netns" "$cargo" test --workspace --target "$target" --locked --no-fail-fast -- --include-ignored 2>&1 \
  | tee "$work/test.log"
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
