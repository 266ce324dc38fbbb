//! Kubernetes Services as a datapath load-balances them: a [`Service`]'s frontends (cluster,
//! external and load-balancer IPs), its ports, and for each port the [`Endpoint`]s with the
//! target port already resolved (named `targetPort`s looked up in the EndpointSlices' ports,
//! several slices merged). Which endpoints a datapath may use — ready ones, else serving and
//! terminating ones, the local ones under a `Local` traffic policy — is
//! [`ServicePort::usable_endpoints`]. Nothing here knows about a datapath.

use std::collections::BTreeSet;
use std::fmt;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::policy::Protocol;

/// A Service's identity: `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ServiceKey {
    pub namespace: String,
    pub name: String,
}

impl ServiceKey {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> ServiceKey {
        ServiceKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ServiceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Whether a client keeps reaching the endpoint it reached first (`sessionAffinity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum SessionAffinity {
    /// Each new connection picks an endpoint.
    #[default]
    None,
    /// New connections from one client IP go to the same endpoint until the client has opened
    /// none for `timeout_seconds` (Kubernetes: 1..=86400, default 10800).
    ClientIp { timeout_seconds: u32 },
}

/// Which endpoints traffic of one origin may use (`externalTrafficPolicy`,
/// `internalTrafficPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum TrafficPolicy {
    /// Every usable endpoint of the cluster.
    #[default]
    Cluster,
    /// Only the endpoints on this Node (none: the traffic is dropped).
    Local,
}

/// An endpoint's conditions, as an EndpointSlice states them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EndpointConditions {
    /// Ready for new connections (false while terminating).
    pub ready: bool,
    /// Would be ready but for terminating.
    pub serving: bool,
    /// Being deleted.
    pub terminating: bool,
}

impl EndpointConditions {
    /// A ready, serving, not terminating endpoint.
    pub const READY: EndpointConditions = EndpointConditions {
        ready: true,
        serving: true,
        terminating: false,
    };
}

/// One backend of a Service port: an address and the port the Service port's `targetPort`
/// resolved to there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Endpoint {
    pub ip: Ipv4Addr,
    pub port: u16,
    pub conditions: EndpointConditions,
    /// The Node the endpoint runs on, if the slice says.
    pub node: Option<String>,
    /// Whether it runs on this Node (what `Local` traffic policies keep).
    pub is_local: bool,
}

/// One port of a Service and its endpoints.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ServicePort {
    /// The port's name (empty for a Service's single unnamed port).
    pub name: String,
    pub protocol: Protocol,
    /// The port on the frontend IPs.
    pub port: u16,
    /// The port on every Node address (NodePort and LoadBalancer Services).
    pub node_port: Option<u16>,
    pub endpoints: Vec<Endpoint>,
}

impl ServicePort {
    /// The endpoints new connections may go to under `policy`: the ready ones, or, when none is
    /// ready, the serving and terminating ones (Kubernetes' terminating-endpoint fallback); of
    /// those only the local ones under [`TrafficPolicy::Local`]. The fallback is decided among
    /// the endpoints the policy keeps.
    pub fn usable_endpoints(&self, policy: TrafficPolicy) -> Vec<&Endpoint> {
        let kept: Vec<&Endpoint> = self
            .endpoints
            .iter()
            .filter(|e| policy == TrafficPolicy::Cluster || e.is_local)
            .collect();
        let ready: Vec<&Endpoint> = kept
            .iter()
            .copied()
            .filter(|e| e.conditions.ready)
            .collect();
        if !ready.is_empty() {
            return ready;
        }
        kept.into_iter()
            .filter(|e| e.conditions.serving && e.conditions.terminating)
            .collect()
    }
}

/// A Service as a datapath load-balances it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Service {
    pub key: ServiceKey,
    /// `spec.clusterIPs` (IPv4 ones).
    pub cluster_ips: Vec<Ipv4Addr>,
    /// `spec.externalIPs`.
    pub external_ips: Vec<Ipv4Addr>,
    /// `status.loadBalancer.ingress` IPs the proxy handles (not `ipMode: Proxy`).
    pub load_balancer_ips: Vec<Ipv4Addr>,
    pub ports: Vec<ServicePort>,
    pub session_affinity: SessionAffinity,
    /// For traffic from outside the cluster (NodePort, external and load-balancer IPs).
    pub external_traffic_policy: TrafficPolicy,
    /// For traffic from inside the cluster to the cluster IPs.
    pub internal_traffic_policy: TrafficPolicy,
    /// `spec.healthCheckNodePort` of a Service with `externalTrafficPolicy: Local`: the port
    /// where the Node answers how many local endpoints it has (200 with some, 503 without).
    #[serde(default)]
    pub health_check_node_port: Option<u16>,
}

impl Service {
    /// The addresses traffic from outside the cluster reaches the Service at, besides its
    /// NodePorts: its external and load-balancer IPs, each once (one that is also a cluster IP
    /// counts as a cluster IP).
    pub fn outside_ips(&self) -> BTreeSet<Ipv4Addr> {
        self.external_ips
            .iter()
            .chain(&self.load_balancer_ips)
            .filter(|ip| !self.cluster_ips.contains(ip))
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(last: u8, ready: bool, terminating: bool, is_local: bool) -> Endpoint {
        Endpoint {
            ip: Ipv4Addr::new(10, 244, 1, last),
            port: 8080,
            conditions: EndpointConditions {
                ready,
                serving: ready || terminating,
                terminating,
            },
            node: None,
            is_local,
        }
    }

    fn port(endpoints: Vec<Endpoint>) -> ServicePort {
        ServicePort {
            name: "http".into(),
            protocol: Protocol::Tcp,
            port: 80,
            node_port: None,
            endpoints,
        }
    }

    fn last_octets(endpoints: Vec<&Endpoint>) -> Vec<u8> {
        endpoints.iter().map(|e| e.ip.octets()[3]).collect()
    }

    #[test]
    fn ready_endpoints_else_the_serving_terminating_ones() {
        let p = port(vec![
            endpoint(1, true, false, false),
            endpoint(2, false, true, true),
            endpoint(3, false, false, true),
        ]);
        assert_eq!(last_octets(p.usable_endpoints(TrafficPolicy::Cluster)), [1]);
        // The only local ready endpoint is missing: the local terminating one serves.
        assert_eq!(last_octets(p.usable_endpoints(TrafficPolicy::Local)), [2]);
        let none_serving = port(vec![endpoint(3, false, false, true)]);
        assert!(
            none_serving
                .usable_endpoints(TrafficPolicy::Cluster)
                .is_empty()
        );
    }

    #[test]
    fn keys_print_as_namespace_slash_name() {
        assert_eq!(
            ServiceKey::new("kube-system", "dns").to_string(),
            "kube-system/dns"
        );
    }
}
