//! The Services section of the check (labs with the fake API server): which probes go through
//! the lab's Services, who must answer each and which source address it must see, and which
//! Service frontends each needs installed on which Node.
//!
//! - every Pod → each Node's `lab-local-nK` (same Node, other Node, or itself: hairpin);
//! - every Node → each `lab-local-nK` (proxyAll: the Node's own traffic);
//! - `lab-ext` → `lab-nodeport` on each Node IP (`externalTrafficPolicy: Cluster`: the
//!   endpoint sees the gateway address of the Node that took the connection);
//! - `lab-ext` → `lab-etp-local` on each Node IP (`Local`: answered by that Node's own endpoint,
//!   which sees `lab-ext`'s address);
//! - `lab-ext` → the load-balancer IP of `lab-lb` (routed to Node 1);
//! - every Pod resolves `lab-local-n1` through `kube-dns` over UDP and over TCP, and connects
//!   to the address it got.

use std::net::Ipv4Addr;

use model::VIRTUAL_NODE_PORT_IP;

use super::probe::{Frontend, PathKind, PeerCheck, Probe, Proto};
use crate::plan::{ClusterApi, EXT_IP, EXT_NETNS, NodePlan, PodPlan, Wiring};
use crate::services::{
    DNS_IP, DNS_PORT, DNS_SERVICE, LB_IP, LB_NODE, LB_SERVICE, LOCAL_NODE_PORT,
    LOCAL_NODE_PORT_SERVICE, LabService, NODE_PORT, NODE_PORT_SERVICE, Transport, WEB_PORT,
    first_pod, node_local_service,
};
use crate::state::State;

/// The Node whose `lab-local-nK` every Pod resolves (by its short name, through its search
/// list) in the DNS probes.
pub const DNS_PROBE_NODE: NodePlan = NodePlan { index: 1 };

/// A frontend on `node` of traffic from a Pod.
fn frontend(
    node: NodePlan,
    service: &str,
    transport: Transport,
    ip: Ipv4Addr,
    port: u16,
) -> Frontend {
    Frontend {
        node: node.name(),
        service: service.to_owned(),
        transport,
        ip,
        port,
        from_host: false,
    }
}

/// A frontend on `node` of traffic the Node's host hands to the datapath.
fn host_frontend(
    node: NodePlan,
    service: &str,
    transport: Transport,
    ip: Ipv4Addr,
    port: u16,
) -> Frontend {
    Frontend {
        from_host: true,
        ..frontend(node, service, transport, ip, port)
    }
}

fn key(service: &LabService) -> String {
    format!("{}/{}", service.namespace, service.name)
}

/// One TCP probe through a Service.
struct Through {
    from: String,
    to: String,
    to_ip: Ipv4Addr,
    to_port: u16,
    path: PathKind,
    answerer: PodPlan,
    peer: PeerCheck,
    frontends: Vec<Frontend>,
}

impl Through {
    fn probe(self, proto: Proto, resolve: Option<String>) -> Probe {
        Probe {
            from: self.from,
            to: self.to,
            to_ip: self.to_ip,
            to_port: Some(self.to_port),
            path: self.path,
            proto,
            answerer: self.answerer.name(),
            peer: self.peer,
            resolve,
            frontends: self.frontends,
        }
    }
}

/// The Services' probes of the lab described by `state`: none without the fake API server
/// (only it makes EndpointSlices).
pub fn service_plan(state: &State) -> Vec<Probe> {
    let topology = &state.topology;
    if state.api != ClusterApi::Fake || topology.wiring != Wiring::Agent {
        return Vec::new();
    }
    let pods: Vec<(PodPlan, Ipv4Addr)> = topology
        .pods()
        .filter_map(|p| Some((p, state.pod(&p.name())?.ip?)))
        .collect();
    let mut probes = Vec::new();
    for &(pod, ip) in &pods {
        for node in topology.nodes() {
            let service = node_local_service(node);
            let endpoint = first_pod(node);
            let (path, peer) = if endpoint == pod {
                (
                    PathKind::PodClusterIpHairpin,
                    PeerCheck::Gateway(pod.node().pod_gateway()),
                )
            } else if node == pod.node() {
                (PathKind::PodClusterIpSameNode, PeerCheck::Unchanged(ip))
            } else {
                (PathKind::PodClusterIpCrossNode, PeerCheck::Unchanged(ip))
            };
            probes.push(
                Through {
                    from: pod.name(),
                    to: service.name.clone(),
                    to_ip: service.cluster_ip,
                    to_port: WEB_PORT,
                    path,
                    answerer: endpoint,
                    peer,
                    frontends: vec![frontend(
                        pod.node(),
                        &key(&service),
                        Transport::Tcp,
                        service.cluster_ip,
                        WEB_PORT,
                    )],
                }
                .probe(Proto::Tcp, None),
            );
        }
    }
    for from in topology.nodes() {
        for node in topology.nodes() {
            let service = node_local_service(node);
            probes.push(
                Through {
                    from: from.name(),
                    to: service.name.clone(),
                    to_ip: service.cluster_ip,
                    to_port: WEB_PORT,
                    path: PathKind::NodeClusterIp,
                    answerer: first_pod(node),
                    peer: PeerCheck::Gateway(from.pod_gateway()),
                    frontends: vec![host_frontend(
                        from,
                        &key(&service),
                        Transport::Tcp,
                        service.cluster_ip,
                        WEB_PORT,
                    )],
                }
                .probe(Proto::Tcp, None),
            );
        }
    }
    let last_node = NodePlan {
        index: topology.nodes,
    };
    for node in topology.nodes() {
        probes.push(
            Through {
                from: EXT_NETNS.to_owned(),
                to: format!("{NODE_PORT_SERVICE}@{}", node.name()),
                to_ip: node.ip(),
                to_port: NODE_PORT,
                path: PathKind::ExternalNodePort,
                answerer: first_pod(NodePlan { index: 1 }),
                peer: PeerCheck::Gateway(node.pod_gateway()),
                frontends: vec![host_frontend(
                    node,
                    &format!("default/{NODE_PORT_SERVICE}"),
                    Transport::Tcp,
                    VIRTUAL_NODE_PORT_IP,
                    NODE_PORT,
                )],
            }
            .probe(Proto::Tcp, None),
        );
    }
    for node in topology.nodes() {
        probes.push(
            Through {
                from: EXT_NETNS.to_owned(),
                to: format!("{LOCAL_NODE_PORT_SERVICE}@{}", node.name()),
                to_ip: node.ip(),
                to_port: LOCAL_NODE_PORT,
                path: PathKind::ExternalNodePortLocal,
                answerer: first_pod(node),
                peer: PeerCheck::Unchanged(EXT_IP),
                frontends: vec![host_frontend(
                    node,
                    &format!("default/{LOCAL_NODE_PORT_SERVICE}"),
                    Transport::Tcp,
                    VIRTUAL_NODE_PORT_IP,
                    LOCAL_NODE_PORT,
                )],
            }
            .probe(Proto::Tcp, None),
        );
    }
    probes.push(
        Through {
            from: EXT_NETNS.to_owned(),
            to: LB_SERVICE.to_owned(),
            to_ip: LB_IP,
            to_port: WEB_PORT,
            path: PathKind::ExternalLoadBalancer,
            answerer: first_pod(last_node),
            peer: PeerCheck::Gateway(LB_NODE.pod_gateway()),
            frontends: vec![host_frontend(
                LB_NODE,
                &format!("default/{LB_SERVICE}"),
                Transport::Tcp,
                LB_IP,
                WEB_PORT,
            )],
        }
        .probe(Proto::Tcp, None),
    );
    let resolved = node_local_service(DNS_PROBE_NODE);
    let dns_key = format!("{}/{}", DNS_SERVICE.0, DNS_SERVICE.1);
    for &(pod, ip) in &pods {
        let endpoint = first_pod(DNS_PROBE_NODE);
        let peer = if endpoint == pod {
            PeerCheck::Gateway(pod.node().pod_gateway())
        } else {
            PeerCheck::Unchanged(ip)
        };
        for (proto, transport) in [
            (Proto::DnsUdp, Transport::Udp),
            (Proto::DnsTcp, Transport::Tcp),
        ] {
            probes.push(
                Through {
                    from: pod.name(),
                    to: resolved.name.clone(),
                    to_ip: resolved.cluster_ip,
                    to_port: WEB_PORT,
                    path: PathKind::PodDns,
                    answerer: endpoint,
                    peer,
                    frontends: vec![
                        frontend(pod.node(), &dns_key, transport, DNS_IP, DNS_PORT),
                        frontend(
                            pod.node(),
                            &key(&resolved),
                            Transport::Tcp,
                            resolved.cluster_ip,
                            WEB_PORT,
                        ),
                    ],
                }
                .probe(proto, Some(resolved.name.clone())),
            );
        }
    }
    probes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Encap, Topology};
    use crate::state::PodRecord;

    fn fake_api_state() -> State {
        let mut state = State::building(
            Topology::new(2, 2, Encap::Geneve, Wiring::Agent).unwrap(),
            None,
            None,
        );
        state.api = ClusterApi::Fake;
        for (i, p) in state.topology.pods().enumerate() {
            state.pods.push(PodRecord {
                name: p.name(),
                node: p.node().name(),
                ip: Some(Ipv4Addr::new(10, 244, p.node, 2 + (i as u8 % 2))),
            });
        }
        state
    }

    fn find<'a>(probes: &'a [Probe], from: &str, to: &str, proto: Proto) -> &'a Probe {
        probes
            .iter()
            .find(|p| p.from == from && p.to == to && p.proto == proto)
            .unwrap_or_else(|| panic!("no probe {from} -> {to} {proto:?}"))
    }

    #[test]
    fn a_two_by_two_lab_probes_every_service_path() {
        let probes = service_plan(&fake_api_state());
        let count = |path| probes.iter().filter(|p| p.path == path).count();
        assert_eq!(count(PathKind::PodClusterIpSameNode), 2);
        assert_eq!(count(PathKind::PodClusterIpCrossNode), 4);
        assert_eq!(count(PathKind::PodClusterIpHairpin), 2);
        assert_eq!(count(PathKind::NodeClusterIp), 4);
        assert_eq!(count(PathKind::ExternalNodePort), 2);
        assert_eq!(count(PathKind::ExternalNodePortLocal), 2);
        assert_eq!(count(PathKind::ExternalLoadBalancer), 1);
        assert_eq!(count(PathKind::PodDns), 8);
        assert_eq!(probes.len(), 25);
        assert!(
            probes
                .iter()
                .all(|p| p.path.is_service() && !p.frontends.is_empty())
        );

        let cross = find(&probes, "lab-n1-p2", "lab-local-n2", Proto::Tcp);
        assert_eq!(
            (cross.to_ip, cross.to_port, cross.answerer.as_str()),
            (Ipv4Addr::new(10, 96, 1, 2), Some(80), "lab-n2-p1")
        );
        assert_eq!(
            cross.peer,
            PeerCheck::Unchanged(Ipv4Addr::new(10, 244, 1, 3))
        );
        assert_eq!(cross.frontends[0].node, "lab-n1");
        assert!(!cross.frontends[0].from_host);
        let hairpin = find(&probes, "lab-n2-p1", "lab-local-n2", Proto::Tcp);
        assert_eq!(
            hairpin.peer,
            PeerCheck::Gateway(Ipv4Addr::new(10, 244, 2, 1))
        );
        let node = find(&probes, "lab-n2", "lab-local-n1", Proto::Tcp);
        assert_eq!(node.peer, PeerCheck::Gateway(Ipv4Addr::new(10, 244, 2, 1)));
        assert!(node.frontends[0].from_host);
        let node_port = find(&probes, "lab-ext", "lab-nodeport@lab-n2", Proto::Tcp);
        assert_eq!(
            (
                node_port.to_ip,
                node_port.to_port,
                node_port.answerer.as_str()
            ),
            (Ipv4Addr::new(10, 10, 0, 12), Some(30080), "lab-n1-p1")
        );
        assert_eq!(node_port.frontends[0].ip, VIRTUAL_NODE_PORT_IP);
        assert!(node_port.frontends[0].from_host);
        let local = find(&probes, "lab-ext", "lab-etp-local@lab-n2", Proto::Tcp);
        assert_eq!(local.answerer, "lab-n2-p1");
        assert_eq!(local.peer, PeerCheck::Unchanged(EXT_IP));
        let lb = find(&probes, "lab-ext", "lab-lb", Proto::Tcp);
        assert_eq!((lb.to_ip, lb.answerer.as_str()), (LB_IP, "lab-n2-p1"));
        assert_eq!(lb.frontends[0].node, "lab-n1");
        let dns = find(&probes, "lab-n2-p2", "lab-local-n1", Proto::DnsTcp);
        assert_eq!(dns.resolve.as_deref(), Some("lab-local-n1"));
        assert_eq!(dns.frontends[0].transport, Transport::Tcp);
        assert_eq!(dns.frontends[0].ip, DNS_IP);
        assert!(!dns.frontends[0].from_host);
        let dns_udp = find(&probes, "lab-n1-p1", "lab-local-n1", Proto::DnsUdp);
        assert_eq!(dns_udp.frontends[0].transport, Transport::Udp);
        assert_eq!(
            dns_udp.peer,
            PeerCheck::Gateway(Ipv4Addr::new(10, 244, 1, 1))
        );
    }

    #[test]
    fn without_the_fake_api_server_there_are_no_service_probes() {
        let mut state = fake_api_state();
        state.api = ClusterApi::Directory;
        assert!(service_plan(&state).is_empty());
    }
}
