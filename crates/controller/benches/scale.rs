//! The controller at scale (issue 12, benchmark (a)): 100,000 Pods in 1,000 Namespaces on
//! 1,000 Nodes, 50,000 NetworkPolicies. Prints, in one run:
//!
//! - **controller**: the time to load every object into [`SpanComputation`] (JSON decode
//!   included) and compute every policy's and group's span, and the growth of this process's
//!   resident memory (`VmRSS`) while it holds the result; then the time to build the snapshot
//!   of one Node, and its size;
//! - **controller, compute only**: the same computation over objects decoded beforehand (as a
//!   running controller gets them from its watches, decoded one by one as they arrive), timed
//!   apart from their decoding, whose time is printed too;
//! - **baseline, same run**: the same objects into one standalone agent engine
//!   (`netpol::PolicyEngine`) for one Node, what every agent computes today in standalone mode
//!   (each of the 1,000), with its time and memory growth.
//!
//! The cluster is `support/cluster.rs`'s.
//!
//! Each part runs in its own process (the benchmark runs itself). Run with `cargo bench -p
//! controller --bench scale` (no root needed; Linux, for `VmRSS`).

#[path = "support/cluster.rs"]
mod cluster;

use std::time::Instant;

use cluster::{
    NAMESPACES, NODES, Object, PODS_PER_NAMESPACE, POLICIES_PER_NAMESPACE, load, mib, rss_kib,
};
use controller::SpanComputation;
use netpol::PolicyEngine;

/// Which part this process measures (each runs in its own process, so that one part's freed
/// memory kept by the allocator does not hide the other's growth).
const PART: &str = "ANTREA_SCALE_PART";

fn main() {
    match std::env::var(PART).as_deref() {
        Ok("baseline") => baseline(),
        Ok("controller") => controller(),
        Ok("compute") => compute_only(),
        _ => {
            println!(
                "cluster: {} Pods in {NAMESPACES} Namespaces on {NODES} Nodes, {} NetworkPolicies",
                NAMESPACES * PODS_PER_NAMESPACE,
                NAMESPACES * POLICIES_PER_NAMESPACE
            );
            let me = std::env::current_exe().expect("the benchmark's own path");
            for part in ["controller", "compute", "baseline"] {
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

/// The computation alone: every object decoded first, then taken in the same order.
fn compute_only() {
    let start = Instant::now();
    let mut objects =
        Vec::with_capacity(NAMESPACES * (1 + PODS_PER_NAMESPACE + POLICIES_PER_NAMESPACE));
    load(|object| objects.push(object));
    let decoded = start.elapsed();
    let start = Instant::now();
    let mut computation = SpanComputation::default();
    for object in &objects {
        match object {
            Object::Namespace(n) => computation.upsert_namespace(n).unwrap(),
            Object::Pod(p) => computation.upsert_pod(p).unwrap(),
            Object::Policy(p) => computation.upsert_policy(p).unwrap(),
        }
    }
    let took = start.elapsed();
    println!(
        "controller, compute only: {:.2} s ({}); decoding the {} objects before it: {:.2} s",
        took.as_secs_f64(),
        computation.summary(),
        objects.len(),
        decoded.as_secs_f64()
    );
}
