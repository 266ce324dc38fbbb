#!/usr/bin/env bash
# Runs every benchmark in the repository, each of which prints its own results next to a
# baseline measured in the same run (see docs/benchmarks.md). Needs root and the tools
# scripts/setup.sh installs (Open vSwitch). Benchmarks are release builds; run them on a quiet
# machine, they compare wall times.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "bench: run as root (the benchmarks start their own Open vSwitch)" >&2
  exit 1
fi
benches=(
  "openflow codec"     # encode/decode/text rates on the Antrea-like flow mix
  "openflow install"   # 100,000 flows into ovs-vswitchd: ours vs ovs-ofctl --bundle add-flows
  "ovsdb ports"        # 1,000 ports in one transaction: ours vs ovs-vsctl
  "pipeline netpol"    # 10k Pods, 5k NetworkPolicies: compute, flows vs per-pair, memory, install + label change vs ovs-ofctl
  "pipeline services"  # 10k Services x 10 endpoints: memory, first install vs ovs-ofctl, one endpoint change
  "pipeline connections" # new TCP connections through a cluster IP vs direct, 1 and 10k Services
  "agent cni_add"      # CNI ADD latency p50/p99: antrea plugin + agent vs bridge + host-local
  "agent kube_sync"    # 100k Pods, 10k Services, 50k NetworkPolicies: reflectors' sync time and RSS
  "agent proxy_change" # 10k Services: one endpoint change from the API write through the agent's proxy to the switch, p50/p99
  "controller scale"   # 100k Pods, 50k NetworkPolicies, 1k Nodes: the controller's spans vs one standalone agent engine
  "controller label_change" # one Pod label change to 1,000 agents over TLS: p50/p99 vs the computation alone
  "agent controller_mode" # what the agent holds for policy in controller mode vs local mode, same scale
  "lab agent_scale"    # the whole antrea-agent's RSS in a lab at that scale: controller mode vs local mode
  "lab lab"            # antrea-lab: Pod<->Pod throughput agent vs NORMAL, agent memory/start with 100 Pods, OVS restart
)
for b in "${benches[@]}"; do
  read -r crate bench <<<"$b"
  echo "== cargo bench -p $crate --bench $bench"
  cargo bench -q -p "$crate" --bench "$bench"
  echo
done
