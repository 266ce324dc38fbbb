//! Stale UDP conntrack: a Service's UDP "connections" (a client's datagrams from one source
//! port) keep the endpoint `EndpointDNAT` committed for them in zone 65520 for as long as they
//! are active, so once an endpoint leaves the Service its clients would keep sending to it (a
//! DNS client to a deleted Pod) until the entry idles out. kube-proxy deletes those entries;
//! this module says which ones, and the `NXT_CT_FLUSH` (Open vSwitch 3.1) that deletes them:
//!
//! - [`UdpBackends`]: the endpoints each UDP frontend (frontend IP, Service port) of one Service
//!   sends to, as rendered (the usable endpoints under the internal traffic policy; the
//!   NodePort frontend's under the external one; an external or load-balancer IP's all).
//! - [`StaleUdp`]: what an update leaves stale, from the installed backends and the new ones:
//!   each endpoint a frontend no longer sends to, and each frontend that is gone.
//! - [`StaleUdp::ct_flush`]: zone 65520, UDP, original destination = the frontend and, for a
//!   removed endpoint, reply source = the endpoint. The reply tuple is what names the endpoint:
//!   the original tuple of a DNATed connection is the Service's address. Connections to the
//!   endpoints that stay, to other Services and straight to the endpoint are left alone.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::SocketAddrV4;

use model::{Protocol, Service, ServicePort, TrafficPolicy, VIRTUAL_NODE_PORT_IP};
use openflow::msg::ct_flush::{CtFlush, CtTuple};

use super::frontend_ips;
use crate::layout::CT_ZONE;

/// The endpoints each UDP frontend of one Service sends to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct UdpBackends(BTreeMap<SocketAddrV4, BTreeSet<SocketAddrV4>>);

impl UdpBackends {
    /// `service`'s UDP frontends and the endpoints the renderer gives each (none: the port has
    /// no usable endpoint and its packets go to the agent): its cluster IPs the internal traffic
    /// policy's, its NodePort frontend (`169.254.0.252:nodePort`) the external one's, and an
    /// external or load-balancer IP every usable endpoint (Pods reach all of them there, and
    /// outside the external policy's). With `short_circuit` (the renderer knows the local
    /// sources), the NodePort frontend of a Service under `externalTrafficPolicy: Local` sends
    /// local traffic to every usable endpoint too.
    pub(super) fn of(service: &Service, short_circuit: bool) -> UdpBackends {
        let frontends = frontend_ips(service);
        let outside = service.outside_ips();
        let mut backends = BTreeMap::new();
        let addresses = |port: &ServicePort, policy| -> BTreeSet<SocketAddrV4> {
            port.usable_endpoints(policy)
                .into_iter()
                .map(|e| SocketAddrV4::new(e.ip, e.port))
                .collect()
        };
        for port in service.ports.iter().filter(|p| p.protocol == Protocol::Udp) {
            let internal = addresses(port, service.internal_traffic_policy);
            let external = addresses(port, service.external_traffic_policy);
            let cluster = addresses(port, TrafficPolicy::Cluster);
            for ip in &frontends {
                let endpoints = if outside.contains(ip) {
                    cluster.clone()
                } else {
                    internal.clone()
                };
                backends.insert(SocketAddrV4::new(*ip, port.port), endpoints);
            }
            if let Some(node_port) = port.node_port {
                let mut endpoints = external.clone();
                if short_circuit && service.external_traffic_policy == TrafficPolicy::Local {
                    endpoints.extend(cluster.iter().copied());
                }
                backends.insert(
                    SocketAddrV4::new(VIRTUAL_NODE_PORT_IP, node_port),
                    endpoints,
                );
            }
        }
        UdpBackends(backends)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Of conntrack entries `entries` (original destination, reply source), those through one
    /// of these frontends to an endpoint it no longer sends to.
    pub(super) fn stale_among(&self, entries: &[(SocketAddrV4, SocketAddrV4)]) -> Vec<StaleUdp> {
        let stale: BTreeSet<StaleUdp> = entries
            .iter()
            .filter(|(frontend, endpoint)| {
                self.0
                    .get(frontend)
                    .is_some_and(|endpoints| !endpoints.contains(endpoint))
            })
            .map(|(frontend, endpoint)| StaleUdp {
                frontend: *frontend,
                endpoint: Some(*endpoint),
            })
            .collect();
        stale.into_iter().collect()
    }

    /// What installing `new` over `self` leaves stale: a frontend gone whole, or each endpoint
    /// a remaining frontend no longer sends to.
    pub(super) fn stale_after(&self, new: &UdpBackends) -> Vec<StaleUdp> {
        let mut stale = Vec::new();
        for (frontend, endpoints) in &self.0 {
            match new.0.get(frontend) {
                None => stale.push(StaleUdp {
                    frontend: *frontend,
                    endpoint: None,
                }),
                Some(kept) => stale.extend(endpoints.difference(kept).map(|endpoint| StaleUdp {
                    frontend: *frontend,
                    endpoint: Some(*endpoint),
                })),
            }
        }
        stale
    }
}

/// UDP conntrack entries a Service update leaves pointing where the Service no longer sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct StaleUdp {
    /// The Service address and port the clients send to.
    pub frontend: SocketAddrV4,
    /// The endpoint those connections were DNATed to; `None`: the frontend is gone, so every
    /// connection to it is stale.
    pub endpoint: Option<SocketAddrV4>,
}

impl StaleUdp {
    /// The flush that deletes these entries, and only these.
    pub fn ct_flush(&self) -> CtFlush {
        CtFlush {
            ip_proto: Protocol::Udp.number(),
            orig: CtTuple {
                dst: Some((*self.frontend.ip()).into()),
                dst_port: Some(self.frontend.port()),
                ..CtTuple::default()
            },
            reply: self
                .endpoint
                .map(|endpoint| CtTuple {
                    src: Some((*endpoint.ip()).into()),
                    src_port: Some(endpoint.port()),
                    ..CtTuple::default()
                })
                .unwrap_or_default(),
            zone: Some(CT_ZONE),
        }
    }
}

/// `10.244.1.11:53 (via 10.96.0.10:53)`, or `10.96.0.10:53` for a frontend that is gone.
impl fmt::Display for StaleUdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.endpoint {
            Some(endpoint) => write!(f, "{endpoint} (via {})", self.frontend),
            None => write!(f, "{}", self.frontend),
        }
    }
}
