//! What the EndpointSlices of one selecting Service should be, computed from the Service and the
//! Pods its selector matches: each Pod with an IPv4 address becomes one endpoint (conditions,
//! Node, target reference), the endpoints are grouped by the ports their Pod resolves (a named
//! `targetPort` may resolve differently per Pod) and each group is cut into slices of at most
//! [`MAX_ENDPOINTS_PER_SLICE`] with stable names. Pure: no store access, no logging.

use k8s_openapi::api::core::v1::{ObjectReference, Pod, Service, ServicePort};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Label naming the Service a slice belongs to.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// Label naming the controller that manages a slice.
pub const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// The value of [`MANAGED_BY_LABEL`] on the slices this controller manages.
pub const MANAGED_BY: &str = "endpointslice-controller.k8s.io";
/// Upstream's default `--max-endpoints-per-slice`.
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;

/// The selector of a Service the controller keeps slices for; `Ok(None)` for a Service it
/// leaves alone (no selector: its slices are the user's; type ExternalName), `Err` for a
/// selector that is not a valid label map.
pub fn selector(service: &Service) -> Result<Option<&BTreeMap<String, String>>, String> {
    let Some(spec) = &service.spec else {
        return Ok(None);
    };
    if spec.type_.as_deref() == Some("ExternalName") {
        return Ok(None);
    }
    let Some(selector) = &spec.selector else {
        return Ok(None);
    };
    for (key, value) in selector {
        check_label_key(key).map_err(|reason| format!("selector key {key:?}: {reason}"))?;
        check_label_value(value)
            .map_err(|reason| format!("selector value {value:?} of {key:?}: {reason}"))?;
    }
    Ok(Some(selector))
}

/// Whether the raw object's `metadata.labels` contain every pair of `selector`.
pub fn labels_match(selector: &BTreeMap<String, String>, object: &Value) -> bool {
    let labels = object
        .pointer("/metadata/labels")
        .and_then(Value::as_object);
    selector.iter().all(|(key, value)| {
        labels
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .is_some_and(|v| v == value)
    })
}

/// One Pod's contribution: its endpoint and the slice ports it resolves.
#[derive(Debug)]
pub struct PodEndpoint {
    /// The Pod's name (slices list endpoints in name order).
    pub pod: String,
    /// The endpoint.
    pub endpoint: Endpoint,
    /// The Service's ports as this Pod resolves them (unresolvable named ports left out).
    pub ports: Vec<EndpointPort>,
}

/// The endpoint of `pod` for `service`: `Ok(None)` when the Pod takes no part (terminal phase,
/// no IPv4 address), `Err` when it is malformed (an address that is not an IP).
pub fn endpoint(service: &Service, pod: &Pod) -> Result<Option<PodEndpoint>, String> {
    let status = pod.status.as_ref();
    if matches!(
        status.and_then(|s| s.phase.as_deref()),
        Some("Failed" | "Succeeded")
    ) {
        return Ok(None);
    }
    let Some(address) = ipv4_address(pod)? else {
        return Ok(None);
    };
    let spec = service.spec.as_ref();
    let publish_not_ready = spec
        .and_then(|s| s.publish_not_ready_addresses)
        .unwrap_or(false);
    let ready_condition = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        });
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let serving = publish_not_ready || ready_condition;
    let ready = publish_not_ready || (serving && !terminating);
    let pod_spec = pod.spec.as_ref();
    let hostname = pod_spec
        .and_then(|s| s.hostname.clone())
        .filter(|h| !h.is_empty())
        .filter(|_| {
            pod_spec.and_then(|s| s.subdomain.as_deref()) == service.metadata.name.as_deref()
        });
    let endpoint = Endpoint {
        addresses: vec![address],
        conditions: Some(EndpointConditions {
            ready: Some(ready),
            serving: Some(serving),
            terminating: Some(terminating),
        }),
        hostname,
        node_name: pod_spec
            .and_then(|s| s.node_name.clone())
            .filter(|n| !n.is_empty()),
        target_ref: Some(ObjectReference {
            kind: Some("Pod".into()),
            namespace: pod.metadata.namespace.clone(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            ..ObjectReference::default()
        }),
        ..Endpoint::default()
    };
    let ports = spec
        .and_then(|s| s.ports.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|port| {
            resolve(pod, port).map(|number| EndpointPort {
                name: Some(port.name.clone().unwrap_or_default()),
                protocol: Some(protocol(port.protocol.as_deref()).to_owned()),
                port: Some(number),
                app_protocol: port.app_protocol.clone(),
            })
        })
        .collect();
    Ok(Some(PodEndpoint {
        pod: pod.metadata.name.clone().unwrap_or_default(),
        endpoint,
        ports,
    }))
}

/// The slices `service` should have for `endpoints`: one group per distinct port list (in a
/// stable order), each cut into slices of at most [`MAX_ENDPOINTS_PER_SLICE`] endpoints in Pod
/// name order; with no endpoints, one empty slice (as upstream keeps a placeholder).
pub fn slices(service: &Service, endpoints: Vec<PodEndpoint>) -> Vec<EndpointSlice> {
    let mut groups: BTreeMap<String, (Vec<EndpointPort>, Vec<PodEndpoint>)> = BTreeMap::new();
    for endpoint in endpoints {
        let key = serde_json::to_string(&endpoint.ports).unwrap_or_default();
        groups
            .entry(key)
            .or_insert_with(|| (endpoint.ports.clone(), Vec::new()))
            .1
            .push(endpoint);
    }
    if groups.is_empty() {
        return vec![slice(service, "placeholder", Vec::new(), Vec::new())];
    }
    let mut slices = Vec::new();
    for (key, (ports, mut members)) in groups {
        members.sort_by(|a, b| a.pod.cmp(&b.pod));
        for (index, chunk) in members.chunks(MAX_ENDPOINTS_PER_SLICE).enumerate() {
            let endpoints = chunk.iter().map(|m| m.endpoint.clone()).collect();
            slices.push(slice(
                service,
                &format!("{key}#{index}"),
                ports.clone(),
                endpoints,
            ));
        }
    }
    slices
}

/// One slice of `service`, named after the service and a hash of `identity`.
fn slice(
    service: &Service,
    identity: &str,
    ports: Vec<EndpointPort>,
    endpoints: Vec<Endpoint>,
) -> EndpointSlice {
    let service_name = service.metadata.name.clone().unwrap_or_default();
    let labels = BTreeMap::from([
        (SERVICE_NAME_LABEL.to_owned(), service_name.clone()),
        (MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned()),
    ]);
    EndpointSlice {
        metadata: ObjectMeta {
            name: Some(format!("{service_name}-{:08x}", short_hash(identity))),
            namespace: service.metadata.namespace.clone(),
            labels: Some(labels),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Service".into(),
                name: service_name,
                uid: service.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        address_type: "IPv4".into(),
        endpoints,
        ports: Some(ports),
    }
}

/// The Pod's IPv4 address: the first IPv4 entry of `status.podIPs`, or `status.podIP` when
/// `podIPs` is empty; `Err` for an entry that is not an IP address at all.
fn ipv4_address(pod: &Pod) -> Result<Option<String>, String> {
    let Some(status) = &pod.status else {
        return Ok(None);
    };
    let listed: Vec<&str> = status
        .pod_ips
        .iter()
        .flatten()
        .map(|p| p.ip.as_str())
        .collect();
    let candidates = if listed.is_empty() {
        status.pod_ip.as_deref().into_iter().collect()
    } else {
        listed
    };
    let mut found = None;
    for text in candidates.into_iter().filter(|t| !t.is_empty()) {
        match text.parse::<IpAddr>() {
            Ok(IpAddr::V4(ip)) => {
                found.get_or_insert(ip.to_string());
            }
            Ok(IpAddr::V6(_)) => {}
            Err(e) => return Err(format!("pod IP {text:?} is not an IP address: {e}")),
        }
    }
    Ok(found)
}

/// The port number `port` reaches on `pod`: a numeric `targetPort` as is (the `port` when it is
/// unset, which the apiserver would have defaulted), a named one through the Pod's container
/// port of that name and protocol; `None` if the name does not resolve.
fn resolve(pod: &Pod, port: &ServicePort) -> Option<i32> {
    match &port.target_port {
        None => Some(port.port),
        Some(IntOrString::Int(number)) => Some(*number),
        Some(IntOrString::String(name)) => {
            let wanted = protocol(port.protocol.as_deref());
            pod.spec
                .iter()
                .flat_map(|s| &s.containers)
                .flat_map(|c| c.ports.iter().flatten())
                .find(|p| {
                    p.name.as_deref() == Some(name.as_str())
                        && protocol(p.protocol.as_deref()) == wanted
                })
                .map(|p| p.container_port)
        }
    }
}

/// A port's protocol, TCP when unset (the apiserver's default).
fn protocol(given: Option<&str>) -> &str {
    given.filter(|p| !p.is_empty()).unwrap_or("TCP")
}

/// 32 bits of FNV-1a over `text`: short, stable slice name suffixes.
fn short_hash(text: &str) -> u32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash ^ (hash >> 32)) as u32
}

/// A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters.
fn check_label_key(key: &str) -> Result<(), String> {
    let name = match key.split_once('/') {
        Some((prefix, name)) => {
            let valid_prefix = !prefix.is_empty()
                && prefix.len() <= 253
                && prefix.split('.').all(|part| {
                    !part.is_empty()
                        && part.len() <= 63
                        && part
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                        && !part.starts_with('-')
                        && !part.ends_with('-')
                });
            if !valid_prefix {
                return Err("the prefix is not a DNS subdomain".into());
            }
            name
        }
        None => key,
    };
    if name.is_empty() {
        return Err("the name part is empty".into());
    }
    check_label_value(name)
}

/// A label value (or key name): at most 63 characters, alphanumerics with `-`, `_`, `.` inside.
fn check_label_value(value: &str) -> Result<(), String> {
    let bytes = value.as_bytes();
    if bytes.len() > 63 {
        return Err("longer than 63 characters".into());
    }
    let edge_ok = |b: Option<&u8>| b.is_none_or(u8::is_ascii_alphanumeric);
    let inner_ok = bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if inner_ok && edge_ok(bytes.first()) && edge_ok(bytes.last()) {
        Ok(())
    } else {
        Err("must be alphanumerics, '-', '_' or '.', starting and ending alphanumeric".into())
    }
}
