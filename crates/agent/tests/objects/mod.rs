//! Kubernetes objects for the tests that run against the fake API server.
#![allow(dead_code)] // each test binary uses a different part

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
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

/// The slice of `dns` with endpoints `10.244.1.<last>` on UDP port 5353.
pub fn dns_slice(lasts: &[u8]) -> EndpointSlice {
    slice_on_n1("dns", ("dns", 5353, "UDP"), lasts)
}

/// The slice of `web` with endpoints `10.244.1.<last>` on port 8080.
pub fn web_slice(lasts: &[u8]) -> EndpointSlice {
    slice_on_n1("web", ("http", 8080, "TCP"), lasts)
}

/// The one slice of Service `default/SERVICE`: endpoints `10.244.1.<last>` on Node n1, one
/// port (name, number, protocol).
fn slice_on_n1(
    service: &str,
    (name, port, protocol): (&str, u16, &str),
    lasts: &[u8],
) -> EndpointSlice {
    let endpoints: Vec<_> = lasts
        .iter()
        .map(|last| json!({"addresses": [format!("10.244.1.{last}")], "nodeName": "n1"}))
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {
            "namespace": "default", "name": format!("{service}-abcde"),
            "labels": {"kubernetes.io/service-name": service},
        },
        "addressType": "IPv4",
        "ports": [{"name": name, "port": port, "protocol": protocol}],
        "endpoints": endpoints,
    }))
    .expect("a valid EndpointSlice")
}
