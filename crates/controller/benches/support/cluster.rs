//! The cluster of issue 12's controller benchmarks, shared by `scale.rs`, `label_change.rs` and
//! the agent's `controller_mode.rs` (which includes this file by path): 100,000 Pods in 1,000
//! Namespaces on 1,000 Nodes, 50,000 NetworkPolicies.
//!
//! Namespace `ns<n>` has team label `t<n % 10>`; its Pod `p<i>` runs on Node
//! `node<(n*100 + i) % 1000>` with labels `app<i % 50>` and tier `fe` (even `i`) or `be`; policy
//! `np<j>` applies to `app<j>` and admits the front-ends of the Namespaces of team `t<j % 10>` on
//! TCP 80 and 8000–8100 (the pattern of `pipeline`'s netpol benchmark, ten times larger). So
//! every Node runs 100 Pods, and the front-end group of team `t<k>` is read on the 100 Nodes
//! `node<m>` with `m % 10 == k`.

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use serde_json::json;

pub const NAMESPACES: usize = 1_000;
pub const PODS_PER_NAMESPACE: usize = 100;
pub const POLICIES_PER_NAMESPACE: usize = 50;
pub const NODES: usize = 1_000;

pub fn namespace(n: usize) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": format!("ns{n}"),
                                               "labels": {"team": format!("t{}", n % 10)}}}))
    .unwrap()
}

pub fn pod(n: usize, i: usize) -> Pod {
    let k = n * PODS_PER_NAMESPACE + i;
    let ip = format!("10.{}.{}.{}", k >> 16, (k >> 8) & 255, k & 255);
    serde_json::from_value(json!({
        "metadata": {"namespace": format!("ns{n}"), "name": format!("p{i}"),
                     "labels": {"app": format!("app{}", i % POLICIES_PER_NAMESPACE),
                                "tier": if i.is_multiple_of(2) { "fe" } else { "be" }}},
        "spec": {"nodeName": format!("node{}", k % NODES), "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "podIP": ip},
    }))
    .unwrap()
}

pub fn policy(n: usize, j: usize) -> NetworkPolicy {
    serde_json::from_value(json!({
        "metadata": {"namespace": format!("ns{n}"), "name": format!("np{j}")},
        "spec": {
            "podSelector": {"matchLabels": {"app": format!("app{j}")}},
            "ingress": [{
                "from": [{"namespaceSelector": {"matchLabels": {"team": format!("t{}", j % 10)}},
                          "podSelector": {"matchLabels": {"tier": "fe"}}}],
                "ports": [{"port": 80}, {"port": 8000, "endPort": 8100}],
            }],
        },
    }))
    .unwrap()
}

/// This process's resident memory, KiB.
pub fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// One object of the cluster.
pub enum Object {
    Namespace(Namespace),
    Pod(Box<Pod>),
    Policy(NetworkPolicy),
}

/// Hands the cluster to `take`: Namespaces, Pods, then policies.
pub fn load(mut take: impl FnMut(Object)) {
    for n in 0..NAMESPACES {
        take(Object::Namespace(namespace(n)));
    }
    for n in 0..NAMESPACES {
        for i in 0..PODS_PER_NAMESPACE {
            take(Object::Pod(Box::new(pod(n, i))));
        }
    }
    for n in 0..NAMESPACES {
        for j in 0..POLICIES_PER_NAMESPACE {
            take(Object::Policy(policy(n, j)));
        }
    }
}
