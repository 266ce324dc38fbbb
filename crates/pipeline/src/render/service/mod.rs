//! Services in the pipeline (AntreaProxy's design): Pod traffic to a Service's cluster IP is
//! load-balanced to its endpoints between `ConntrackState` and the NetworkPolicy egress tables.
//!
//! - [`tables`]: the fixed flows of the Service tables, installed with the Node's.
//! - [`frontend`]: `ServiceLB`, one flow per (frontend IP, protocol, port) into the port's
//!   endpoint group; [`group`]: that `select` group, one bucket per endpoint.
//! - [`dnat`]: `EndpointDNAT`, `ct(commit,nat(dst=ENDPOINT))` per endpoint.
//! - [`affinity`]: ClientIP affinity by `learn` into `SessionAffinity`.
//! - [`hairpin`]: a Pod reaching itself through its Service (`SNATMark` per local endpoint,
//!   the Node's `UnSNAT`/`SNAT` flows).
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
pub mod stale_udp;
pub(crate) mod tables;
#[cfg(test)]
mod tests;

pub use error::ServiceError;
pub use stale_udp::StaleUdp;

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use openflow::oxm::{Field, Match};

use crate::cache::{Change, Objects, Owner, Update};
use crate::layout::TableGraph;
use crate::owners::SERVICE;
use crate::render::ip;
use frontend::Dispatch;
use group_ids::GroupIds;
use model::{Endpoint, Protocol, Service, ServiceKey, SessionAffinity};
use stale_udp::UdpBackends;

/// A Service port as the renderer knows it: protocol and frontend port.
type PortId = (Protocol, u16);

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
    groups: Option<BTreeMap<PortId, u32>>,
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
    groups: BTreeMap<ServiceKey, BTreeMap<PortId, u32>>,
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
            groups: BTreeMap::new(),
            udp: BTreeMap::new(),
            ids: GroupIds::default(),
        }
    }

    /// The change that makes the switch load-balance `service` as it is now (new, or
    /// replacing what it was). Nothing is recorded until [`ServiceRenderer::commit`]; a refused
    /// Service changes nothing.
    pub fn upsert(&self, service: &Service) -> Result<ServiceUpdate, ServiceError> {
        validate(service)?;
        let held = self.groups.get(&service.key);
        let ports: BTreeSet<PortId> = service.ports.iter().map(|p| (p.protocol, p.port)).collect();
        let new: Vec<PortId> = ports
            .iter()
            .filter(|p| !held.is_some_and(|h| h.contains_key(p)))
            .copied()
            .collect();
        let mut groups: BTreeMap<PortId, u32> = held
            .into_iter()
            .flatten()
            .filter(|(p, _)| ports.contains(p))
            .map(|(p, id)| (*p, *id))
            .collect();
        groups.extend(
            new.into_iter()
                .zip(self.ids.free(ports.len() - groups.len())),
        );
        let objects = render(self.graph, service, &groups);
        let udp = UdpBackends::of(service);
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
/// load balancers publish, is one frontend). Pod traffic to any of them is cluster traffic, as
/// kube-proxy short-circuits it: the internal traffic policy's endpoints, no SNAT.
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

/// `service`'s objects, its ports' groups numbered by `groups`. Traffic to every frontend
/// address uses the endpoints its internal traffic policy allows; each endpoint appears once
/// per port (several EndpointSlices may list it), its DNAT flow once per Service, and a local
/// endpoint's hairpin mark once per Service.
fn render(g: &TableGraph, service: &Service, groups: &BTreeMap<PortId, u32>) -> Objects {
    let mut objects = Objects::default();
    let mut dnat: BTreeSet<(Protocol, Ipv4Addr, u16)> = BTreeSet::new();
    let mut hairpin: BTreeSet<Ipv4Addr> = BTreeSet::new();
    let frontends = frontend_ips(service);
    for port in &service.ports {
        let id = (port.protocol, port.port);
        let mut endpoints: Vec<&Endpoint> = port.usable_endpoints(service.internal_traffic_policy);
        endpoints.sort_by_key(|e| (e.ip, e.port));
        endpoints.dedup_by_key(|e| (e.ip, e.port));
        let dispatch = match groups.get(&id) {
            Some(&group) if !endpoints.is_empty() => {
                objects.groups.push(group::endpoint_group(
                    g,
                    group,
                    &endpoints,
                    service.session_affinity,
                ));
                Dispatch::Group(group)
            }
            _ => Dispatch::NoEndpoints,
        };
        for ip in &frontends {
            objects.flows.extend(frontend::frontend_flows(
                g,
                *ip,
                port.protocol,
                port.port,
                &dispatch,
                service.session_affinity,
            ));
        }
        for ep in endpoints {
            if dnat.insert((port.protocol, ep.ip, ep.port)) {
                objects.flows.push(dnat::dnat_flow(g, port.protocol, ep));
            }
            if ep.is_local && hairpin.insert(ep.ip) {
                objects.flows.push(hairpin::hairpin_mark_flow(g, ep.ip));
            }
        }
    }
    objects
}
