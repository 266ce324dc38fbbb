//! The controller at scale (issue 12, benchmark (a)): 100,000 Pods in 1,000 Namespaces on
//! 1,000 Nodes, 50,000 NetworkPolicies. Prints, in one run:
//!
//! - **controller**: the time to load every object into [`SpanComputation`] (JSON decode
//!   included) and compute every policy's and group's span, and the growth of this process's
//!   resident memory (`VmRSS`) while it holds the result; then the time to build the snapshot
//!   of one Node, and its size;
//! - **baseline, same run**: the same objects into one standalone agent engine
//!   (`netpol::PolicyEngine`) for one Node, what every agent computes today in standalone mode
//!   (each of the 1,000), with its time and memory growth.
//!
//! The cluster: Namespace `ns<n>` has team label `t<n % 10>`; its Pod `p<i>` runs on Node
//! `node<(n*100 + i) % 1000>` with labels `app<i % 50>` and tier `fe` or `be`; policy `np<j>`
//! applies to `app<j>` and admits the front-ends of the Namespaces of team `t<j % 10>` on TCP
//! 80 and 8000–8100 (the pattern of `pipeline`'s netpol benchmark, ten times larger).
//!
//! Each part runs in its own process (the benchmark runs itself). Run with `cargo bench -p
//! controller --bench scale` (no root needed; Linux, for `VmRSS`).

use std::time::Instant;

use controller::SpanComputation;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use netpol::PolicyEngine;
use serde_json::json;

const NAMESPACES: usize = 1_000;
const PODS_PER_NAMESPACE: usize = 100;
const POLICIES_PER_NAMESPACE: usize = 50;
const NODES: usize = 1_000;

fn namespace(n: usize) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": format!("ns{n}"),
                                               "labels": {"team": format!("t{}", n % 10)}}}))
    .unwrap()
}

fn pod(n: usize, i: usize) -> Pod {
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

fn policy(n: usize, j: usize) -> NetworkPolicy {
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
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// One object of the cluster.
enum Object {
    Namespace(Namespace),
    Pod(Box<Pod>),
    Policy(NetworkPolicy),
}

/// Hands the cluster to `take`: Namespaces, Pods, then policies.
fn load(mut take: impl FnMut(Object)) {
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

/// Which part this process measures (each runs in its own process, so that one part's freed
/// memory kept by the allocator does not hide the other's growth).
const PART: &str = "ANTREA_SCALE_PART";

fn main() {
    match std::env::var(PART).as_deref() {
        Ok("baseline") => baseline(),
        Ok("controller") => controller(),
        _ => {
            println!(
                "cluster: {} Pods in {NAMESPACES} Namespaces on {NODES} Nodes, {} NetworkPolicies",
                NAMESPACES * PODS_PER_NAMESPACE,
                NAMESPACES * POLICIES_PER_NAMESPACE
            );
            let me = std::env::current_exe().expect("the benchmark's own path");
            for part in ["controller", "baseline"] {
                let status = std::process::Command::new(&me)
                    .env(PART, part)
                    .status()
                    .expect("the benchmark runs itself");
                assert!(status.success(), "{part}: {status}");
            }
        }
    }
}

fn baseline() {
    let before = rss_kib();
    let start = Instant::now();
    let mut engine = PolicyEngine::new("node0");
    load(|object| match object {
        Object::Namespace(n) => engine.upsert_namespace(&n).unwrap(),
        Object::Pod(p) => engine.upsert_pod(&p).unwrap(),
        Object::Policy(p) => engine.upsert_policy(&p).unwrap(),
    });
    let report = engine.sync();
    let took = start.elapsed();
    let grew = rss_kib().saturating_sub(before);
    println!(
        "baseline, one agent's standalone engine for node0: {:.2} s, +{:.1} MiB RSS, {} rules",
        took.as_secs_f64(),
        mib(grew),
        report.delta.rules()
    );
}

fn controller() {
    let before = rss_kib();
    let start = Instant::now();
    let mut computation = SpanComputation::default();
    load(|object| match object {
        Object::Namespace(n) => computation.upsert_namespace(&n).unwrap(),
        Object::Pod(p) => computation.upsert_pod(&p).unwrap(),
        Object::Policy(p) => computation.upsert_policy(&p).unwrap(),
    });
    let took = start.elapsed();
    let grew = rss_kib().saturating_sub(before);
    println!(
        "controller, whole cluster: {:.2} s, +{:.1} MiB RSS ({})",
        took.as_secs_f64(),
        mib(grew),
        computation.summary()
    );
    let start = Instant::now();
    let snapshot = computation.watch("node0");
    let members: usize = snapshot
        .iter()
        .map(|u| match u {
            controller::NodeUpdate::GroupAdded { members, .. } => members.len(),
            _ => 0,
        })
        .sum();
    println!(
        "snapshot of node0: {} updates ({members} group members) in {:.1} ms",
        snapshot.len(),
        start.elapsed().as_secs_f64() * 1000.0
    );
}
