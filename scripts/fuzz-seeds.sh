#!/usr/bin/env bash
# Builds the seed corpus of every fuzz target in the directory given as $1 (one subdirectory per
# target): the small seeds committed under fuzz/seeds/<target>/, plus, at run time, the
# repository's own fixtures that are already files (CNI conflists, agent configuration files,
# cluster-directory YAML, HCN captures, flow dumps), wrapped in the input layout the target
# expects. scripts/fuzz-smoke.sh passes these directories to libFuzzer as read-only corpora.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: fuzz-seeds.sh OUTPUT_DIR}
mkdir -p "$out"

# Committed seeds.
for dir in "$root"/fuzz/seeds/*/; do
  target=$(basename "$dir")
  mkdir -p "$out/$target"
  cp "$dir"* "$out/$target/"
done

# seed TARGET NAME: stdin becomes seed NAME of TARGET.
seed() {
  mkdir -p "$out/$1"
  cat >"$out/$1/$2"
}

# A protobuf varint.
varint() {
  local n=$1
  while ((n >= 128)); do
    printf "\\x$(printf %02x $(((n & 127) | 128)))"
    n=$((n >> 7))
  done
  printf "\\x$(printf %02x "$n")"
}

# A length-delimited protobuf field: tag byte (hex) and the bytes of file $2.
field() {
  printf "\\x$1"
  varint "$(stat -c %s "$2")"
  cat "$2"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CNI network configurations: the shipped conflists (their top level is a valid configuration;
# the plugin entries are inside), for the stdin decoder, IPAM, and inside a CniCmdRequest (the
# gRPC request the CNI server decodes: CniCmdArgs fields 1-6 in field 1).
for conflist in "$root"/build/cni/10-antrea.conflist "$root"/build/cni/windows/10-antrea.conflist; do
  name=$(echo "${conflist#"$root"/build/cni/}" | tr / -)
  seed cni_netconf "$name" <"$conflist"
  seed ipam_config "$name" <"$conflist"
  printf 'c1' >"$tmp/id"
  printf '/var/run/netns/cni-1' >"$tmp/netns"
  printf 'eth0' >"$tmp/ifname"
  printf 'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=c1' >"$tmp/args"
  printf '/opt/cni/bin' >"$tmp/path"
  {
    field 0a "$tmp/id"
    field 12 "$tmp/netns"
    field 1a "$tmp/ifname"
    field 22 "$tmp/args"
    field 2a "$tmp/path"
    field 32 "$conflist"
  } >"$tmp/args-message"
  field 0a "$tmp/args-message" | seed cniserver_request "$name"
done

# Agent configuration files: the first byte picks the platform (even: Linux, odd: Windows).
for conf in "$root"/crates/agent/tests/data/*.conf; do
  name=$(basename "$conf")
  case $name in
    *windows*) platform='\1' ;;
    *) platform='\0' ;;
  esac
  { printf "$platform"; cat "$conf"; } | seed agent_config "$name"
done

# Cluster-directory files and the shipped manifests (documents of other kinds are skipped).
for yaml in "$root"/crates/agent/tests/data/cluster/*.yaml "$root"/build/yamls/*.yml; do
  seed cluster_documents "$(basename "$yaml")" <"$yaml"
done

# HCN captures from real hosts: the first byte picks the document type.
for capture in "$root"/crates/hcn/tests/captures/*.json; do
  name=$(basename "$capture")
  case $name in
    *network*) kind='\0' ;;
    *endpoint*) kind='\1' ;;
    *namespace*) kind='\2' ;;
    *) continue ;;
  esac
  { printf "$kind"; cat "$capture"; } | seed hcn_documents "$name"
done

# Flow dumps of the pipeline's golden files, one flow per seed, for the ovs-ofctl text parser.
for golden in "$root"/crates/pipeline/tests/golden/*.txt; do
  base=$(basename "$golden" .txt)
  n=0
  grep -v '^#' "$golden" | while IFS= read -r line; do
    n=$((n + 1))
    printf '%s' "$line" | seed openflow_flow_text "$base-$n"
  done
done
