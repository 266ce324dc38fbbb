//! Builders for the Kubernetes objects the tests feed the engine, and the lab's small cluster:
//! Namespaces x, y, z (label `ns=<name>`) with Pods a, b, c each (label `pod=<name>`); x and y
//! run on this Node `n1`, z on `n2`.
#![allow(dead_code)]

use std::net::Ipv4Addr;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use netpol::{PolicyEngine, Protocol, Snapshot};
use serde_json::{Value, json};

pub const NODE: &str = "n1";
pub const NAMESPACES: [&str; 3] = ["x", "y", "z"];
pub const PODS: [&str; 3] = ["a", "b", "c"];

pub fn namespace(name: &str, labels: Value) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap()
}

/// A running Pod with `ports` as `[(name, protocol, port)]`.
pub fn pod(
    ns: &str,
    name: &str,
    node: &str,
    ip: &str,
    labels: Value,
    ports: &[(&str, &str, u16)],
) -> Pod {
    let ports: Vec<Value> = ports
        .iter()
        .map(|(n, p, port)| json!({"name": n, "protocol": p, "containerPort": port}))
        .collect();
    serde_json::from_value(json!({
        "metadata": {"namespace": ns, "name": name, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c", "ports": ports}]},
        "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]},
    }))
    .unwrap()
}

/// A NetworkPolicy `ns/name` with `spec`.
pub fn policy(ns: &str, name: &str, spec: Value) -> NetworkPolicy {
    serde_json::from_value(json!({"metadata": {"namespace": ns, "name": name}, "spec": spec}))
        .unwrap()
}

/// The IP of Pod `pod` in Namespace `ns` of the lab cluster.
pub fn ip(ns: &str, pod: &str) -> Ipv4Addr {
    let n = NAMESPACES.iter().position(|x| *x == ns).unwrap() as u8;
    let p = PODS.iter().position(|x| *x == pod).unwrap() as u8;
    Ipv4Addr::new(10, 244, n + 1, p + 10)
}

/// The Node of Namespace `ns`'s Pods.
pub fn node_of(ns: &str) -> &'static str {
    if ns == "z" { "n2" } else { NODE }
}

/// An engine holding the lab cluster. Every Pod serves `serve-80` (TCP 80) and `serve-81`
/// (TCP 81), `serve-80-udp` (UDP 80), `serve-81-udp` (UDP 81); Pod b's `http` is 81, the others' 80.
pub fn lab() -> PolicyEngine {
    let mut engine = PolicyEngine::new(NODE);
    for ns in NAMESPACES {
        engine
            .upsert_namespace(&namespace(ns, json!({"ns": ns})))
            .unwrap();
        for p in PODS {
            let pod = lab_pod(ns, p, json!({"pod": p}));
            engine.upsert_pod(&pod).unwrap();
        }
    }
    engine
}

/// Every lab Pod as `ns/pod`.
pub fn lab_pods() -> Vec<(&'static str, &'static str)> {
    NAMESPACES
        .iter()
        .flat_map(|ns| PODS.iter().map(move |p| (*ns, *p)))
        .collect()
}

/// The reachability matrix of `protocol`/`port` as text: one line per source, `.` allowed,
/// `X` denied.
pub fn matrix(snapshot: &Snapshot, protocol: Protocol, port: u16) -> String {
    let pods = lab_pods();
    let mut out = String::from("    ");
    for (ns, p) in &pods {
        out.push_str(&format!("{ns}/{p} "));
    }
    out.push('\n');
    for (sns, sp) in &pods {
        out.push_str(&format!("{sns}/{sp}"));
        for (dns, dp) in &pods {
            let allowed = snapshot.allows(ip(sns, sp), ip(dns, dp), protocol, port);
            out.push_str(if allowed { "   ." } else { "   X" });
        }
        out.push('\n');
    }
    out
}

/// A matrix where `allowed(src, dst)` decides each cell, in [`matrix`]'s format.
pub fn expected(
    allowed: impl Fn((&'static str, &'static str), (&'static str, &'static str)) -> bool,
) -> String {
    let pods = lab_pods();
    let mut out = String::from("    ");
    for (ns, p) in &pods {
        out.push_str(&format!("{ns}/{p} "));
    }
    out.push('\n');
    for s in &pods {
        out.push_str(&format!("{}/{}", s.0, s.1));
        for d in &pods {
            out.push_str(if allowed(*s, *d) { "   ." } else { "   X" });
        }
        out.push('\n');
    }
    out
}

/// Lab Pod `ns/p` with `labels` (its usual Node, IP and ports).
pub fn lab_pod(ns: &str, p: &str, labels: Value) -> Pod {
    let http = if p == "b" { 81 } else { 80 };
    let ports = [
        ("serve-80", "TCP", 80),
        ("serve-81", "TCP", 81),
        ("serve-80-udp", "UDP", 80),
        ("serve-81-udp", "UDP", 81),
        ("http", "TCP", http),
    ];
    pod(ns, p, node_of(ns), &ip(ns, p).to_string(), labels, &ports)
}
