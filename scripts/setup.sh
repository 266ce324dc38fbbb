#!/usr/bin/env bash
# Installs everything the tests and the lab need on a Debian machine. Idempotent: a second run
# only checks. Run as root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

packages=(
  openvswitch-switch openvswitch-common   # ovsdb-server, ovs-vswitchd, ovs-vsctl, ovs-ofctl
  iproute2 ethtool nftables iptables iputils-ping iperf3 tcpdump
  containernetworking-plugins             # reference host-local / bridge / loopback plugins (/usr/lib/cni)
  containerd busybox-static               # the lab's --runtime containerd (runc comes with containerd)
  util-linux                              # nsenter
  protobuf-compiler                       # protoc for the k8s-cri crate's build script
  wine wine64 gcc-mingw-w64-x86-64        # the Windows leg: cross linker and the test runner
  clang                                   # libFuzzer's runtime for cargo fuzz
  python3-venv                            # kubernetes-validate's environment (below)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Debian's openvswitch-switch tries to start the system daemons; they are not used by the tests.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# kubernetes-validate checks build/yamls against the Kubernetes schemas it bundles (no network when
# it runs; crates/agent/tests/manifests.rs). Pinned, in its own environment (Debian's Python is
# externally managed), on the PATH as /usr/local/bin/kubernetes-validate.
validator_version=1.37.0
validator_env=/opt/antrea-rs/kubernetes-validate
if [ "$("$validator_env/bin/kubernetes-validate" --version 2>/dev/null)" != "$validator_version" ]; then
  echo "setup: installing kubernetes-validate $validator_version"
  /usr/bin/python3 -m venv --clear "$validator_env"
  "$validator_env/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$validator_version"
fi
ln -sf "$validator_env/bin/kubernetes-validate" /usr/local/bin/kubernetes-validate

# The system OVS instance (if the package started one) is not ours: the tests start their own.
bash "$here/windows-toolchain.sh"
bash "$here/fuzz-toolchain.sh"
echo "setup: done"
