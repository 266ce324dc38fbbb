//! Kubernetes objects for the tests that run against the fake API server.
#![allow(dead_code)] // each test binary uses a different part

use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;

/// A Node with an InternalIP and, when given, a Pod CIDR.
pub fn node(name: &str, ip: &str, cidr: Option<&str>) -> Node {
    let spec = match cidr {
        Some(cidr) => json!({"podCIDR": cidr}),
        None => json!({}),
    };
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name},
        "spec": spec,
        "status": {"addresses": [{"type": "InternalIP", "address": ip}]},
    }))
    .expect("a valid Node")
}

/// A Pod in namespace `default` scheduled on `node`.
pub fn pod(name: &str, node: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "pause"}]},
    }))
    .expect("a valid Pod")
}
