//! From the Kubernetes API's `Service` and `EndpointSlice` objects to [`model::Service`], the
//! value the datapath load-balances: frontends (IPv4 cluster IPs, external IPs, load-balancer
//! ingress IPs the proxy handles), ports, and per port the endpoints with the target port the
//! slices resolved (a slice's port carries the Service port's name and the target port's
//! number, named or numeric), several slices merged and their endpoints deduplicated.
//!
//! A Service this proxy does not handle — headless, `ExternalName`, labelled for another proxy
//! (`service.kubernetes.io/service-proxy-name`), without an IPv4 cluster IP — is
//! [`Translated::Skipped`]. Bad input is a [`Problem`] naming the object; it never panics.
//! [`super::incremental::Translations`] keeps the translations of the stores' objects.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

use k8s_openapi::api::core::v1::Service as ApiService;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use model::{
    Endpoint, EndpointConditions, Protocol, Service, ServiceKey, ServicePort, SessionAffinity,
    TrafficPolicy,
};

/// The label linking an EndpointSlice to its Service.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// The label handing a Service to another proxy.
pub const SERVICE_PROXY_NAME_LABEL: &str = "service.kubernetes.io/service-proxy-name";
/// ClientIP affinity's timeout when the Service gives none (Kubernetes' default, 3 hours).
pub const DEFAULT_AFFINITY_TIMEOUT: u32 = 10_800;

/// An object that cannot be translated, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// `Service` or `EndpointSlice`.
    pub kind: &'static str,
    /// `namespace/name`.
    pub object: String,
    pub reason: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.kind, self.object, self.reason)
    }
}

/// Why a valid Service is not load-balanced here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// `clusterIP: None`.
    Headless,
    /// `type: ExternalName` (DNS only).
    ExternalName,
    /// Labelled for another proxy.
    OtherProxy,
    /// Only IPv6 cluster IPs (this datapath is IPv4).
    NoIpv4,
}

/// What a Service translates to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Translated {
    Service(Service),
    Skipped(Skip),
}

/// What one EndpointSlice contributes to its Service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceEndpoints {
    /// The slice's `namespace/name`.
    pub slice: String,
    pub service: ServiceKey,
    /// Each port: the Service port's name (empty when unnamed), protocol, target port number.
    pub ports: Vec<(String, Protocol, u16)>,
    /// Each address with its conditions and Node.
    pub endpoints: Vec<(Ipv4Addr, EndpointConditions, Option<String>)>,
}

/// The key of the Service named by `meta`.
pub fn object_key(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> ServiceKey {
    ServiceKey::new(
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// What `slice` gives its Service: `None` for a slice of another address type (IPv6, FQDN) or
/// without the Service-name label.
pub fn slice_endpoints(slice: &EndpointSlice) -> Result<Option<SliceEndpoints>, Problem> {
    let meta = &slice.metadata;
    let namespace = meta.namespace.clone().unwrap_or_default();
    let name = format!("{namespace}/{}", meta.name.as_deref().unwrap_or_default());
    let Some(service) = meta
        .labels
        .as_ref()
        .and_then(|labels| labels.get(SERVICE_NAME_LABEL))
    else {
        return Ok(None);
    };
    if slice.address_type != "IPv4" {
        return Ok(None);
    }
    let problem = |reason: String| Problem {
        kind: "EndpointSlice",
        object: name.clone(),
        reason,
    };
    let mut ports = Vec::new();
    for port in slice.ports.iter().flatten() {
        let port_name = port.name.clone().unwrap_or_default();
        let protocol = protocol_of(port.protocol.as_deref())
            .map_err(|p| problem(format!("port {port_name:?}: unknown protocol {p:?}")))?;
        // A port without a number serves no traffic of the Service port.
        let Some(number) = port.port else { continue };
        let number = port_number(number)
            .ok_or_else(|| problem(format!("port {port_name:?}: bad port number {number}")))?;
        ports.push((port_name, protocol, number));
    }
    let mut endpoints = Vec::new();
    for endpoint in &slice.endpoints {
        let conditions = conditions_of(endpoint.conditions.as_ref());
        for address in &endpoint.addresses {
            let ip: Ipv4Addr = address
                .parse()
                .map_err(|_| problem(format!("endpoint address {address:?} is not IPv4")))?;
            endpoints.push((ip, conditions, endpoint.node_name.clone()));
        }
    }
    Ok(Some(SliceEndpoints {
        slice: name.clone(),
        service: ServiceKey::new(namespace, service.clone()),
        ports,
        endpoints,
    }))
}

/// An endpoint's conditions as the API defines absent ones: `ready` absent is ready, `serving`
/// absent is `ready`'s value, `terminating` absent is not terminating.
fn conditions_of(
    conditions: Option<&k8s_openapi::api::discovery::v1::EndpointConditions>,
) -> EndpointConditions {
    let ready = conditions.and_then(|c| c.ready).unwrap_or(true);
    EndpointConditions {
        ready,
        serving: conditions.and_then(|c| c.serving).unwrap_or(ready),
        terminating: conditions.and_then(|c| c.terminating).unwrap_or(false),
    }
}

/// `TCP` when absent; the unknown spelling as the error.
fn protocol_of(text: Option<&str>) -> Result<Protocol, String> {
    let text = text.unwrap_or("TCP");
    Protocol::parse(text).ok_or_else(|| text.to_owned())
}

/// A port number 1..=65535.
fn port_number(number: i32) -> Option<u16> {
    u16::try_from(number).ok().filter(|n| *n != 0)
}

/// `service` with the endpoints of its `slices`, for Node `node_name`.
pub fn service_of(
    service: &ApiService,
    slices: &[&SliceEndpoints],
    node_name: &str,
) -> Result<Translated, Problem> {
    let key = object_key(&service.metadata);
    let problem = |reason: String| Problem {
        kind: "Service",
        object: key.to_string(),
        reason,
    };
    if service
        .metadata
        .name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        return Err(problem("no name".to_owned()));
    }
    if service
        .metadata
        .labels
        .as_ref()
        .is_some_and(|labels| labels.contains_key(SERVICE_PROXY_NAME_LABEL))
    {
        return Ok(Translated::Skipped(Skip::OtherProxy));
    }
    let Some(spec) = &service.spec else {
        return Err(problem("no spec".to_owned()));
    };
    if spec.type_.as_deref() == Some("ExternalName") {
        return Ok(Translated::Skipped(Skip::ExternalName));
    }
    let cluster_ips: Vec<&String> = match &spec.cluster_ips {
        Some(ips) if !ips.is_empty() => ips.iter().collect(),
        _ => spec.cluster_ip.iter().collect(),
    };
    if cluster_ips.iter().any(|ip| ip.as_str() == "None") {
        return Ok(Translated::Skipped(Skip::Headless));
    }
    let cluster_ips =
        ipv4s(cluster_ips.into_iter()).map_err(|ip| problem(format!("bad cluster IP {ip:?}")))?;
    if cluster_ips.is_empty() {
        return Ok(Translated::Skipped(Skip::NoIpv4));
    }
    let external_ips = ipv4s(spec.external_ips.iter().flatten())
        .map_err(|ip| problem(format!("bad external IP {ip:?}")))?;
    let ingress = service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref());
    let load_balancer_ips = ipv4s(
        ingress
            .into_iter()
            .flatten()
            .filter(|i| i.ip_mode.as_deref() != Some("Proxy"))
            .filter_map(|i| i.ip.as_ref()),
    )
    .map_err(|ip| problem(format!("bad load-balancer ingress IP {ip:?}")))?;

    let api_ports = spec.ports.as_deref().unwrap_or_default();
    if api_ports.is_empty() {
        return Err(problem("no ports".to_owned()));
    }
    let mut ports = Vec::with_capacity(api_ports.len());
    for api_port in api_ports {
        let name = api_port.name.clone().unwrap_or_default();
        let protocol = protocol_of(api_port.protocol.as_deref())
            .map_err(|p| problem(format!("port {name:?}: unknown protocol {p:?}")))?;
        let port = port_number(api_port.port)
            .ok_or_else(|| problem(format!("port {name:?}: bad port number {}", api_port.port)))?;
        let node_port = match api_port.node_port {
            None | Some(0) => None,
            Some(n) => Some(
                port_number(n)
                    .ok_or_else(|| problem(format!("port {name:?}: bad node port {n}")))?,
            ),
        };
        ports.push(ServicePort {
            endpoints: endpoints_of(slices, &name, protocol, node_name),
            name,
            protocol,
            port,
            node_port,
        });
    }
    let session_affinity = match spec.session_affinity.as_deref() {
        Some("ClientIP") => {
            let timeout = spec
                .session_affinity_config
                .as_ref()
                .and_then(|c| c.client_ip.as_ref())
                .and_then(|c| c.timeout_seconds);
            let timeout_seconds = match timeout {
                None => DEFAULT_AFFINITY_TIMEOUT,
                Some(t) => u32::try_from(t)
                    .ok()
                    .filter(|t| *t != 0)
                    .ok_or_else(|| problem(format!("bad ClientIP affinity timeout {t} seconds")))?,
            };
            SessionAffinity::ClientIp { timeout_seconds }
        }
        _ => SessionAffinity::None,
    };
    let external_traffic_policy = traffic_policy(spec.external_traffic_policy.as_deref());
    let health_check_node_port = match spec.health_check_node_port {
        None => None,
        Some(_) if external_traffic_policy != TrafficPolicy::Local => None,
        Some(port) => Some(
            u16::try_from(port)
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| problem(format!("bad healthCheckNodePort {port}")))?,
        ),
    };
    Ok(Translated::Service(Service {
        key,
        cluster_ips,
        external_ips,
        load_balancer_ips,
        ports,
        session_affinity,
        external_traffic_policy,
        internal_traffic_policy: traffic_policy(spec.internal_traffic_policy.as_deref()),
        health_check_node_port,
    }))
}

/// The IPv4 addresses of `texts`, IPv6 ones left out; the first text that is no address is the
/// error.
fn ipv4s<'a>(texts: impl Iterator<Item = &'a String>) -> Result<Vec<Ipv4Addr>, String> {
    let mut ips = Vec::new();
    for text in texts {
        match text.parse::<IpAddr>() {
            Ok(IpAddr::V4(ip)) => ips.push(ip),
            Ok(IpAddr::V6(_)) => {}
            Err(_) => return Err(text.clone()),
        }
    }
    Ok(ips)
}

fn traffic_policy(text: Option<&str>) -> TrafficPolicy {
    match text {
        Some("Local") => TrafficPolicy::Local,
        _ => TrafficPolicy::Cluster,
    }
}

/// The endpoints of Service port `name`/`protocol` over every slice, each (address, target
/// port) once, in address order. Of two copies the one ranking higher in [`copy_rank`] wins, so
/// the result does not depend on the order of the slices.
fn endpoints_of(
    slices: &[&SliceEndpoints],
    name: &str,
    protocol: Protocol,
    node_name: &str,
) -> Vec<Endpoint> {
    let mut found: BTreeMap<(Ipv4Addr, u16), Endpoint> = BTreeMap::new();
    for slice in slices {
        let Some(&(_, _, target)) = slice
            .ports
            .iter()
            .find(|(n, p, _)| n == name && *p == protocol)
        else {
            continue;
        };
        for (ip, conditions, node) in &slice.endpoints {
            let endpoint = Endpoint {
                ip: *ip,
                port: target,
                conditions: *conditions,
                node: node.clone(),
                is_local: node.as_deref() == Some(node_name),
            };
            found
                .entry((*ip, target))
                .and_modify(|kept| {
                    if copy_rank(&endpoint) > copy_rank(kept) {
                        *kept = endpoint.clone();
                    }
                })
                .or_insert(endpoint);
        }
    }
    found.into_values().collect()
}

/// How two copies of one endpoint compare: ready first, then serving, then not terminating,
/// then naming a Node (the greater name of two). A total order over what copies can differ in.
fn copy_rank(endpoint: &Endpoint) -> (bool, bool, bool, Option<&str>) {
    let c = endpoint.conditions;
    (c.ready, c.serving, !c.terminating, endpoint.node.as_deref())
}
