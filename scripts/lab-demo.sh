#!/usr/bin/env bash
# The main job, on a fresh Debian machine as root: install what the lab needs, build
# antrea-lab, antrea-agent, the antrea CNI plugin and the fake API server, bring up a 2-Node x
# 2-Pod lab wired by the agent (Geneve) with Services and a cluster DNS, check every path
# (Pod<->Pod on one Node and across Nodes, Node->Pod, Pod->Node, Pod->external with SNAT; TCP
# and ICMP; then the Services: Pod and Node to cluster IPs, lab-ext to NodePorts and a
# load-balancer IP, ETP Local, DNS over UDP and TCP), print the matrices, and leave the lab up
# for exploring (the last lines say how to remove it).
#
#   LAB_DEMO_ENCAP=geneve|vxlan|noencap   traffic mode (default geneve)
#   LAB_DEMO_API=fake|directory           where the agents read Nodes and Pods: a fake
#                                         Kubernetes API server (default, as antrea-lab up's
#                                         own with agent wiring; the lab's Services need it)
#                                         or the cluster directory (no Services)
#   LAB_DEMO_DOWN=1                       remove the lab at the end instead of leaving it up
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "lab-demo: run as root (the lab makes network namespaces and runs Open vSwitch)" >&2
  exit 1
fi
encap=${LAB_DEMO_ENCAP:-geneve}
api=${LAB_DEMO_API:-fake}
state=/run/antrea-lab

# Rust (edition 2024 needs a current toolchain: rustup, not Debian's cargo).
if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null; then
  echo "lab-demo: installing Rust with rustup"
  export DEBIAN_FRONTEND=noninteractive
  command -v curl >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends curl ca-certificates >/dev/null; }
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >/dev/null
  export PATH="$HOME/.cargo/bin:$PATH"
fi

bash scripts/setup.sh

echo "lab-demo: building antrea-lab, antrea-agent, antrea and antrea-fake-apiserver (release)"
cargo build --release -q -p lab -p agent -p cni -p fakeapi --bins
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
lab="$target_dir/release/antrea-lab"

if [ -e "$state" ]; then
  echo "lab-demo: a lab is already up ($state); removing it first"
  "$lab" down
fi
echo "lab-demo: antrea-lab up --encap $encap --api $api (2 Nodes x 2 Pods, wiring agent)"
"$lab" up --nodes 2 --pods-per-node 2 --encap "$encap" --wiring agent --api "$api"
"$lab" status || true
echo "lab-demo: antrea-lab check"
rc=0
"$lab" check || rc=$?

if [ "${LAB_DEMO_DOWN:-0}" = 1 ]; then
  "$lab" down
  echo "lab-demo: the lab was removed (LAB_DEMO_DOWN=1)"
else
  cat <<HINT
lab-demo: the lab is still up. Explore it, e.g.:
  ip netns exec lab-n1-p1 ping 10.244.2.2
  $lab iperf --from lab-n1-p1 --to lab-n2-p1
  tail $state/lab-n1/log/antrea-agent.log
Remove it with:
  $lab down
HINT
fi
exit "$rc"
