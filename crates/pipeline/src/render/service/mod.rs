//! Services in the pipeline (AntreaProxy's design): Pod traffic to a Service's cluster IP is
//! load-balanced to its endpoints between `ConntrackState` and the NetworkPolicy egress tables.
//!
//! - [`tables`]: the fixed flows of the Service tables, installed with the Node's.
//! - [`frontend`]: `ServiceLB`, one flow per (frontend IP, protocol, port) into the port's
//!   endpoint group; [`group`]: that `select` group, one bucket per endpoint.
//! - [`dnat`]: `EndpointDNAT`, `ct(commit,nat(dst=ENDPOINT))` per endpoint.
//! - [`affinity`]: ClientIP affinity by `learn` into `SessionAffinity`.
//! - [`hairpin`]: a Pod reaching itself through its Service (`SNATMark` per local endpoint,
//!   the Node's `UnSNAT` flows); [`snat`]: the source NAT to the gateway IP of hairpin
//!   connections and of connections from outside under `externalTrafficPolicy: Cluster`;
//!   [`host_network`]: the Node's own Service traffic to host-network endpoints.
//! - [`group_ids`]: stable group ids per Service port.
//! - [`stale_udp`]: the UDP conntrack entries an update leaves pointing at an endpoint the
//!   Service no longer uses, and the flush that deletes them.
//!
//! [`ServiceRenderer`] turns one [`Service`] into one owner's objects
//! (`service:NAMESPACE/NAME`): a change of a Service replaces only that owner's set, so its cost
//! is the Service's size, and its diff sends only what differs (an endpoint change: the group
//! modified in place, the DNAT flows of endpoints that came or went). The desired-state cache
//! installs groups before the flows that use them and deletes them after. `docs/services.md`
//! describes the flows and what is not built yet.

mod affinity;
mod dnat;
pub mod error;
mod frontend;
mod group;
mod group_ids;
pub(crate) mod hairpin;
pub(crate) mod host_network;
pub(crate) mod snat;
pub mod stale_udp;
pub(crate) mod tables;
#[cfg(test)]
mod tests;

pub use error::ServiceError;
pub use stale_udp::StaleUdp;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{Ipv4Addr, SocketAddrV4};

use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

use crate::cache::{Change, Objects, Owner, Update};
use crate::layout::priority::NORMAL;
use crate::layout::tables::CLASSIFIER;
use crate::layout::{NodePorts, TableGraph};
use crate::owners::SERVICE;
use crate::render::{flow, in_port, ip, ipv4, output};
use frontend::{Dispatch, Frontend};
use group_ids::GroupIds;
use ipnet::Ipv4Net;
use model::{
    Endpoint, Protocol, Service, ServiceKey, ServicePort, SessionAffinity, TrafficPolicy,
    VIRTUAL_NODE_PORT_IP,
};
use stale_udp::UdpBackends;

/// Whose traffic a Service port's endpoint group serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Scope {
    /// Pods' and the Node's: the internal traffic policy's endpoints.
    Internal,
    /// Traffic from outside, when the external traffic policy chooses other endpoints than
    /// the internal one (`Local`: the local ones).
    External,
    /// Every usable endpoint, when neither group above holds them all (`internalTrafficPolicy:
    /// Local` with `externalTrafficPolicy: Local`): kube-proxy's cluster chain, which Pod
    /// traffic to external and load-balancer IPs and short-circuited local traffic take,
    /// whatever the traffic policies.
    Cluster,
}

/// One endpoint group of a Service: its port and the traffic it serves.
type GroupKey = (Protocol, u16, Scope);

/// `ip,nw_proto=N` and the protocol's destination-port field.
fn l4(protocol: Protocol) -> (Match, Field) {
    let dst_port = match protocol {
        Protocol::Tcp => Field::TcpDst,
        Protocol::Udp => Field::UdpDst,
        Protocol::Sctp => Field::SctpDst,
    };
    (
        ip().with(Field::IpProto, u128::from(protocol.number())),
        dst_port,
    )
}

/// The owner of `key`'s objects.
pub fn service_owner(key: &ServiceKey) -> Owner {
    Owner::new(SERVICE, key)
}

/// What the renderer records of one Service once an update is installed: the group ids its
/// ports hold (`None`: the Service is gone) and the endpoints its UDP frontends send to. Give it
/// to [`ServiceRenderer::commit`] once the update's change is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRecord {
    key: ServiceKey,
    groups: Option<BTreeMap<GroupKey, u32>>,
    udp: UdpBackends,
}

/// A rendered update of one Service: the change to install, the record to commit after, and
/// the UDP conntrack entries the change leaves stale (to flush once it is installed: before,
/// a new datagram could still be sent to, and tracked to, a removed endpoint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceUpdate {
    pub change: Change,
    pub record: ServiceRecord,
    pub stale_udp: Vec<StaleUdp>,
}

impl ServiceUpdate {
    /// The Service's objects after the update (none after a removal): what a new round that
    /// installs every owner at once holds for it.
    pub fn objects(&self) -> Objects {
        self.change
            .updates
            .iter()
            .find_map(|(_, update)| match update {
                Update::Replace(objects) => Some(objects.clone()),
                Update::Patch(_) => None,
            })
            .unwrap_or_default()
    }
}

/// Renders Services and keeps their ports' group ids.
#[derive(Debug, Clone)]
pub struct ServiceRenderer {
    graph: &'static TableGraph,
    /// Whether refusals pass their meter (see [`ServiceRenderer::set_packet_in_meters`]).
    packet_in_meters: bool,
    /// The sources of the Node's own and its Pods' traffic (see
    /// [`ServiceRenderer::set_local_sources`]).
    local_sources: Vec<Ipv4Net>,
    groups: BTreeMap<ServiceKey, BTreeMap<GroupKey, u32>>,
    /// The installed Services with UDP frontends, and where those send.
    udp: BTreeMap<ServiceKey, UdpBackends>,
    ids: GroupIds,
}

impl Default for ServiceRenderer {
    fn default() -> ServiceRenderer {
        ServiceRenderer::new()
    }
}

impl ServiceRenderer {
    /// A renderer for the agent's pipeline.
    pub fn new() -> ServiceRenderer {
        ServiceRenderer::with_graph(TableGraph::standard())
    }

    /// A renderer for the tables of `graph`.
    pub fn with_graph(graph: &'static TableGraph) -> ServiceRenderer {
        ServiceRenderer {
            graph,
            packet_in_meters: false,
            local_sources: Vec::new(),
            groups: BTreeMap::new(),
            udp: BTreeMap::new(),
            ids: GroupIds::default(),
        }
    }

    /// Whether the packets of frontends without endpoints go to the agent through the refusals'
    /// meter ([`crate::layout::packet_in::PacketInOperation::meter`], which the caller installs with the Node's objects):
    /// for a switch with packet-rate meters. Set it before rendering any Service, or render
    /// every Service again.
    pub fn set_packet_in_meters(&mut self, metered: bool) {
        self.packet_in_meters = metered;
    }

    /// The sources of the traffic of the Node itself and of its Pods when it comes through the
    /// gateway (the Node IP, and the Node's Pod CIDR, which holds the gateway IP and the
    /// addresses of the Pods whose NodePort connections the host hands back): under
    /// `externalTrafficPolicy: Local` that traffic to a NodePort or an external or
    /// load-balancer IP is short-circuited to every usable endpoint, source-NATed, as
    /// kube-proxy short-circuits local traffic, instead of being held to the local endpoints
    /// (or dropped without). None: no short-circuit. Set it before rendering any Service, or
    /// render every Service again.
    pub fn set_local_sources(&mut self, sources: &[Ipv4Net]) {
        self.local_sources = sources.to_vec();
    }

    /// The change that makes the switch load-balance `service` as it is now (new, or
    /// replacing what it was). Nothing is recorded until [`ServiceRenderer::commit`]; a refused
    /// Service changes nothing.
    pub fn upsert(&self, service: &Service) -> Result<ServiceUpdate, ServiceError> {
        validate(service)?;
        let held = self.groups.get(&service.key);
        let wanted = group_keys(service, !self.local_sources.is_empty());
        let new: Vec<GroupKey> = wanted
            .iter()
            .filter(|k| !held.is_some_and(|h| h.contains_key(k)))
            .copied()
            .collect();
        let mut groups: BTreeMap<GroupKey, u32> = held
            .into_iter()
            .flatten()
            .filter(|(k, _)| wanted.contains(k))
            .map(|(k, id)| (*k, *id))
            .collect();
        groups.extend(
            new.into_iter()
                .zip(self.ids.free(wanted.len() - groups.len())),
        );
        let objects = render(
            self.graph,
            service,
            &groups,
            self.packet_in_meters,
            &self.local_sources,
        );
        let udp = UdpBackends::of(service, !self.local_sources.is_empty());
        Ok(ServiceUpdate {
            change: Change::new().replace(service_owner(&service.key), objects),
            stale_udp: self.stale_udp(&service.key, &udp),
            record: ServiceRecord {
                key: service.key.clone(),
                groups: Some(groups),
                udp,
            },
        })
    }

    /// The change that removes Service `key` from the switch.
    pub fn remove(&self, key: &ServiceKey) -> ServiceUpdate {
        let udp = UdpBackends::default();
        ServiceUpdate {
            change: Change::new().remove(service_owner(key)),
            stale_udp: self.stale_udp(key, &udp),
            record: ServiceRecord {
                key: key.clone(),
                groups: None,
                udp,
            },
        }
    }

    /// What installing `udp` for Service `key` leaves stale of what is installed.
    fn stale_udp(&self, key: &ServiceKey, udp: &UdpBackends) -> Vec<StaleUdp> {
        self.udp
            .get(key)
            .map(|installed| installed.stale_after(udp))
            .unwrap_or_default()
    }

    /// Whether an installed Service has a UDP frontend (only those leave conntrack entries to
    /// flush).
    pub fn installs_udp(&self) -> bool {
        !self.udp.is_empty()
    }

    /// Of UDP conntrack entries `entries` (original destination, reply source), per Service,
    /// those through one of its frontends to an endpoint it no longer sends to: what an
    /// endpoint removed before this renderer knew the Service (while the agent was down)
    /// leaves behind.
    pub fn stale_udp_among(
        &self,
        entries: &[(SocketAddrV4, SocketAddrV4)],
    ) -> Vec<(ServiceKey, Vec<StaleUdp>)> {
        self.udp
            .iter()
            .map(|(key, backends)| (key.clone(), backends.stale_among(entries)))
            .filter(|(_, stale)| !stale.is_empty())
            .collect()
    }

    /// Records the group ids and UDP endpoints of an installed update.
    pub fn commit(&mut self, record: ServiceRecord) {
        let ServiceRecord { key, groups, udp } = record;
        if udp.is_empty() {
            self.udp.remove(&key);
        } else {
            self.udp.insert(key.clone(), udp);
        }
        let before = match groups {
            Some(groups) => {
                for id in groups.values() {
                    self.ids.take(*id);
                }
                let kept: BTreeSet<u32> = groups.values().copied().collect();
                self.groups
                    .insert(key, groups)
                    .map(|old| old.into_values().filter(|id| !kept.contains(id)).collect())
            }
            None => self
                .groups
                .remove(&key)
                .map(|old| old.into_values().collect::<Vec<u32>>()),
        };
        for id in before.into_iter().flatten() {
            self.ids.release(id);
        }
    }
}

fn validate(service: &Service) -> Result<(), ServiceError> {
    let key = || service.key.clone();
    let mut seen = BTreeSet::new();
    for port in &service.ports {
        if port.port == 0 {
            return Err(ServiceError::ZeroPort {
                service: key(),
                name: port.name.clone(),
            });
        }
        if !seen.insert((port.protocol, port.port)) {
            return Err(ServiceError::DuplicatePort {
                service: key(),
                protocol: port.protocol,
                port: port.port,
            });
        }
        if let Some(ep) = port.endpoints.iter().find(|e| e.port == 0) {
            return Err(ServiceError::ZeroTargetPort {
                service: key(),
                name: port.name.clone(),
                ip: ep.ip,
            });
        }
    }
    let mut frontends = BTreeSet::new();
    if let Some(ip) = service
        .cluster_ips
        .iter()
        .find(|ip| !frontends.insert(**ip))
    {
        return Err(ServiceError::DuplicateFrontend {
            service: key(),
            ip: *ip,
        });
    }
    if service.session_affinity == (SessionAffinity::ClientIp { timeout_seconds: 0 }) {
        return Err(ServiceError::ZeroAffinityTimeout { service: key() });
    }
    Ok(())
}

/// The addresses `service` is reached at from Pods: its cluster IPs, then its external IPs and
/// load-balancer ingress IPs, each once (an address both external and load-balancer, as some
/// load balancers publish, is one frontend). Pod traffic to a cluster IP takes the internal
/// traffic policy's endpoints; to an external or load-balancer IP every usable endpoint, as
/// kube-proxy sends it to the cluster chain whatever the traffic policies; no SNAT.
fn frontend_ips(service: &Service) -> Vec<Ipv4Addr> {
    let mut seen = BTreeSet::new();
    service
        .cluster_ips
        .iter()
        .chain(&service.external_ips)
        .chain(&service.load_balancer_ips)
        .copied()
        .filter(|ip| seen.insert(*ip))
        .collect()
}

/// A port's endpoints under `policy`, each (IP, port) once, in order (several EndpointSlices
/// may list one).
fn endpoints_of(port: &ServicePort, policy: TrafficPolicy) -> Vec<&Endpoint> {
    let mut endpoints = port.usable_endpoints(policy);
    endpoints.sort_by_key(|e| (e.ip, e.port));
    endpoints.dedup_by_key(|e| (e.ip, e.port));
    endpoints
}

/// Whether traffic from outside reaches `port`: it has a NodePort, or the Service external
/// or load-balancer IPs.
fn reached_from_outside(service: &Service, port: &ServicePort) -> bool {
    port.node_port.is_some()
        || !service.external_ips.is_empty()
        || !service.load_balancer_ips.is_empty()
}

/// The endpoint groups `service` needs: one per port; a second for a port reached from
/// outside whose external traffic policy chooses other (and some) endpoints; and one of every
/// usable endpoint when neither holds them all and something takes them: Pod traffic to the
/// Service's external and load-balancer IPs, or local traffic short-circuited under
/// `externalTrafficPolicy: Local` (`short_circuit`: the renderer knows the local sources).
fn group_keys(service: &Service, short_circuit: bool) -> BTreeSet<GroupKey> {
    let mut keys = BTreeSet::new();
    for port in &service.ports {
        keys.insert((port.protocol, port.port, Scope::Internal));
        if !reached_from_outside(service, port) {
            continue;
        }
        let internal = endpoints_of(port, service.internal_traffic_policy);
        let external = endpoints_of(port, service.external_traffic_policy);
        if !external.is_empty() && external != internal {
            keys.insert((port.protocol, port.port, Scope::External));
        }
        let cluster = endpoints_of(port, TrafficPolicy::Cluster);
        if !cluster.is_empty()
            && cluster != internal
            && cluster != external
            && (short_circuit || !service.outside_ips().is_empty())
        {
            keys.insert((port.protocol, port.port, Scope::Cluster));
        }
    }
    keys
}

/// `service`'s objects, its ports' groups numbered by `groups`.
///
/// - Traffic from Pods and the Node to a cluster IP uses the endpoints its internal traffic
///   policy allows (dropped under `Local` without a local endpoint, as kube-proxy drops it);
///   Pod traffic to an external or load-balancer IP every usable endpoint.
/// - Traffic from outside (the NodePort frontend `169.254.0.252:nodePort`, which the host
///   DNATs NodePort connections to, and the external and load-balancer IPs through the
///   gateway) uses the external traffic policy's endpoints (the internal group when they are
///   the same), source-NATed under `Cluster`, dropped under `Local` without a local endpoint.
///   Under `Local`, the local traffic to them (from one of `local_sources`: the Node's own,
///   its Pods' through the host) is short-circuited to every usable endpoint and
///   source-NATed, as kube-proxy short-circuits it to its cluster chain.
///   The uplink hands traffic to the external and load-balancer IPs to the host, which routes
///   it to the gateway.
/// - Each endpoint appears once per group, its DNAT flow once per Service, a local endpoint's
///   hairpin mark once per Service.
fn render(
    g: &TableGraph,
    service: &Service,
    groups: &BTreeMap<GroupKey, u32>,
    metered: bool,
    local_sources: &[Ipv4Net],
) -> Objects {
    let mut objects = Objects::default();
    let mut dnat: BTreeSet<(Protocol, Ipv4Addr, u16)> = BTreeSet::new();
    let mut hairpin: BTreeSet<Ipv4Addr> = BTreeSet::new();
    let frontends = frontend_ips(service);
    let outside = service.outside_ips();
    for port in &service.ports {
        let internal = endpoints_of(port, service.internal_traffic_policy);
        let mut dispatch_to = |scope: Scope, endpoints: &[&Endpoint], snat: bool| match groups
            .get(&(port.protocol, port.port, scope))
        {
            Some(&group) if !endpoints.is_empty() => {
                objects.groups.push(group::endpoint_group(
                    g,
                    group,
                    port.protocol,
                    endpoints,
                    service.session_affinity,
                ));
                Dispatch::Group {
                    group,
                    snat,
                    endpoints: endpoints
                        .iter()
                        .map(|e| SocketAddrV4::new(e.ip, e.port))
                        .collect(),
                }
            }
            _ => Dispatch::NoEndpoints { metered },
        };
        let cluster = endpoints_of(port, TrafficPolicy::Cluster);
        // `internalTrafficPolicy: Local` on a Node without a local endpoint drops, as
        // kube-proxy does; only a Service without any endpoint refuses.
        let internal_dispatch = if internal.is_empty() && !cluster.is_empty() {
            Dispatch::Drop
        } else {
            dispatch_to(Scope::Internal, &internal, false)
        };
        let external = reached_from_outside(service, port)
            .then(|| endpoints_of(port, service.external_traffic_policy));
        let external_dispatch = external.as_ref().map(|external| {
            let snat = service.external_traffic_policy == TrafficPolicy::Cluster;
            match &internal_dispatch {
                _ if external.is_empty() && !cluster.is_empty() => Dispatch::Drop,
                group @ Dispatch::Group { .. } if *external == internal => group.with_snat(snat),
                _ => dispatch_to(Scope::External, external, snat),
            }
        });
        // Every usable endpoint (kube-proxy's cluster chain), without source NAT.
        let cluster_dispatch = if cluster == internal {
            internal_dispatch.with_snat(false)
        } else if groups.contains_key(&(port.protocol, port.port, Scope::Cluster)) {
            dispatch_to(Scope::Cluster, &cluster, false)
        } else {
            match &external_dispatch {
                Some(group @ Dispatch::Group { .. }) if external.as_ref() == Some(&cluster) => {
                    group.with_snat(false)
                }
                _ => Dispatch::NoEndpoints { metered },
            }
        };
        let mut flows = Vec::new();
        for ip in &frontends {
            let frontend = Frontend {
                ip: *ip,
                protocol: port.protocol,
                port: port.port,
                from_gateway: false,
                source: None,
            };
            let dispatch = if outside.contains(ip) {
                &cluster_dispatch
            } else {
                &internal_dispatch
            };
            flows.extend(frontend::frontend_flows(
                g,
                frontend,
                dispatch,
                service.session_affinity,
            ));
        }
        let mut used = internal.clone();
        if let (Some(external), Some(external_dispatch)) = (external, external_dispatch) {
            let nodeport = port.node_port.map(|node_port| Frontend {
                ip: VIRTUAL_NODE_PORT_IP,
                protocol: port.protocol,
                port: node_port,
                from_gateway: false,
                source: None,
            });
            let through_gateway = outside.iter().map(|ip| Frontend {
                ip: *ip,
                protocol: port.protocol,
                port: port.port,
                from_gateway: true,
                source: None,
            });
            // Local traffic under `Local`: every usable endpoint, source-NATed.
            let local_dispatch = (service.external_traffic_policy == TrafficPolicy::Local
                && !local_sources.is_empty())
            .then(|| cluster_dispatch.with_snat(true));
            for frontend in nodeport.into_iter().chain(through_gateway) {
                flows.extend(frontend::frontend_flows(
                    g,
                    frontend,
                    &external_dispatch,
                    service.session_affinity,
                ));
                if let Some(local_dispatch) = &local_dispatch {
                    for source in local_sources {
                        flows.extend(frontend::frontend_flows(
                            g,
                            Frontend {
                                source: Some(*source),
                                ..frontend
                            },
                            local_dispatch,
                            service.session_affinity,
                        ));
                    }
                }
            }
            used.extend(external);
            if local_dispatch.is_some() || !outside.is_empty() {
                used.extend(cluster);
            }
        }
        objects.flows.extend(flows);
        for ep in used {
            if dnat.insert((port.protocol, ep.ip, ep.port)) {
                objects.flows.push(dnat::dnat_flow(g, port.protocol, ep));
            }
            if ep.is_local && hairpin.insert(ep.ip) {
                objects.flows.push(hairpin::hairpin_mark_flow(g, ep.ip));
            }
        }
    }
    objects
        .flows
        .extend(outside.iter().map(|ip| uplink_to_host_flow(g, *ip)));
    objects
}

/// Traffic from the uplink to external or load-balancer IP `address` goes to the host (as the Node
/// IP's does), which routes it to the gateway (the Service routes hold `ip/32`).
fn uplink_to_host_flow(g: &TableGraph, address: Ipv4Addr) -> FlowMod {
    flow(
        g,
        CLASSIFIER,
        NORMAL,
        ipv4(Field::Ipv4Dst, in_port(ip(), NodePorts::UPLINK), address),
        vec![output(NodePorts::LOCAL)],
        None,
    )
}
