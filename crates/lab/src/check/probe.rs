//! The probe matrix: from every Pod to every other Pod (same Node and across Nodes), from every
//! Node to every Pod, from every Pod to every Node and to the external host, each over TCP (the
//! `serve` answerer) and ICMP, and what a TCP answer must show to pass: who answered and the
//! source address it saw. The Services' probes ([`super::service_probe`]) are probes of the same
//! kind, whose target is a Service and whose answerer is the endpoint it must reach.

use std::net::Ipv4Addr;

use serde::Serialize;

use crate::plan::{EXT_IP, EXT_NETNS, NodePlan, SERVE_PORT, Wiring};
use crate::serve::Answer;
use crate::services::Transport;
use crate::state::State;

/// An endpoint of the lab: a namespace with one address and a `serve` answerer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The name (also the namespace).
    pub name: String,
    /// Its address.
    pub ip: Ipv4Addr,
    /// What it is.
    pub role: Role,
}

/// What an endpoint is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A Pod on the Node of that name, whose Node IP is given.
    Pod {
        /// Node name.
        node: String,
        /// Node IP (the SNAT address of the Pod's egress).
        node_ip: Ipv4Addr,
    },
    /// A Node.
    Node,
    /// The external host.
    External,
}

/// The endpoints of a lab, in matrix order: its Pods (those with an address), its Nodes, then
/// the external host.
pub fn endpoints(state: &State) -> Vec<Endpoint> {
    let node_ip = |name: &str| {
        state
            .topology
            .nodes()
            .find(|n| n.name() == name)
            .map(NodePlan::ip)
    };
    let pods = state.pods.iter().filter_map(|p| {
        Some(Endpoint {
            name: p.name.clone(),
            ip: p.ip?,
            role: Role::Pod {
                node: p.node.clone(),
                node_ip: node_ip(&p.node)?,
            },
        })
    });
    let nodes = state.topology.nodes().map(|n| Endpoint {
        name: n.name(),
        ip: n.ip(),
        role: Role::Node,
    });
    let ext = Endpoint {
        name: EXT_NETNS.to_owned(),
        ip: EXT_IP,
        role: Role::External,
    };
    pods.chain(nodes).chain(std::iter::once(ext)).collect()
}

/// Which path a probe exercises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathKind {
    /// Pod to Pod on one Node.
    PodPodSameNode,
    /// Pod to Pod across Nodes.
    PodPodCrossNode,
    /// Node to Pod (its own and others).
    NodePod,
    /// Pod to Node (its own and others).
    PodNode,
    /// Pod to the external host.
    PodExternal,
    /// Pod to a cluster IP whose endpoint is on the Pod's Node.
    PodClusterIpSameNode,
    /// Pod to a cluster IP whose endpoint is on another Node.
    PodClusterIpCrossNode,
    /// Pod to a cluster IP whose endpoint is the Pod itself (hairpin).
    PodClusterIpHairpin,
    /// Node to a cluster IP (proxyAll), its endpoint on any Node.
    NodeClusterIp,
    /// The external host to a NodePort (`externalTrafficPolicy: Cluster`) of each Node.
    ExternalNodePort,
    /// The external host to a NodePort with `externalTrafficPolicy: Local` of each Node.
    ExternalNodePortLocal,
    /// The external host to a load-balancer IP.
    ExternalLoadBalancer,
    /// Pod resolves a Service name through the cluster DNS Service and connects to the answer.
    PodDns,
}

impl PathKind {
    /// Whether the path goes through a Service (the report's Services section).
    pub fn is_service(self) -> bool {
        !matches!(
            self,
            PathKind::PodPodSameNode
                | PathKind::PodPodCrossNode
                | PathKind::NodePod
                | PathKind::PodNode
                | PathKind::PodExternal
        )
    }
}

/// How a probe is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    /// A TCP connection to `serve` on port 8080.
    Tcp,
    /// One ICMP echo.
    Icmp,
    /// A DNS lookup over UDP through the Pod's resolv.conf, then TCP to the address found.
    DnsUdp,
    /// The same lookup over TCP (`options use-vc`), then TCP to the address found.
    DnsTcp,
}

impl Proto {
    /// The probe's name in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Proto::Tcp => "tcp",
            Proto::Icmp => "icmp",
            Proto::DnsUdp => "dnsudp",
            Proto::DnsTcp => "dnstcp",
        }
    }

    /// The letter of the matrix cell.
    pub fn letter(self) -> char {
        match self {
            Proto::Tcp => 'T',
            Proto::Icmp => 'I',
            Proto::DnsUdp => 'U',
            Proto::DnsTcp => 'V',
        }
    }
}

/// What the source address seen by the target must be (TCP only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "expect", content = "ip")]
pub enum PeerCheck {
    /// Not checked (the Node picks its source address for the path).
    Any,
    /// The source's own address: no translation on this path.
    Unchanged(Ipv4Addr),
    /// The source Pod's Node IP: egress SNAT.
    Snat(Ipv4Addr),
    /// A Node's gateway address: the Node's own traffic to a Service, a Pod reaching itself
    /// through a Service (hairpin), or traffic from outside NATed by `externalTrafficPolicy:
    /// Cluster`.
    Gateway(Ipv4Addr),
}

/// A Service frontend a Node must have installed (a `ServiceLB` flow to a group; for traffic the
/// Node's host hands to the datapath also the host's part) before a probe through it means
/// anything.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Frontend {
    /// The Node whose datapath load-balances the probe.
    pub node: String,
    /// The Service, `namespace/name`.
    pub service: String,
    /// The protocol.
    #[serde(serialize_with = "transport_name")]
    pub transport: Transport,
    /// The frontend address: a cluster IP, the virtual NodePort IP or a load-balancer IP.
    pub ip: Ipv4Addr,
    /// The frontend port.
    pub port: u16,
    /// The traffic comes from the Node's host (its own, a NodePort, a load-balancer IP), so the
    /// host must route the address to the gateway, and DNAT a NodePort to the virtual NodePort
    /// IP (proxyAll).
    pub from_host: bool,
}

fn transport_name<S: serde::Serializer>(t: &Transport, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t.as_str())
}

/// One probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// Source endpoint (namespace) name.
    pub from: String,
    /// Target endpoint name.
    pub to: String,
    /// Target address.
    pub to_ip: Ipv4Addr,
    /// Target port (TCP: `serve`'s, a Service port or a node port; none for ICMP).
    pub to_port: Option<u16>,
    /// The path.
    pub path: PathKind,
    /// The protocol.
    pub proto: Proto,
    /// Who must answer (TCP): the target itself, or the endpoint a Service must reach.
    pub answerer: String,
    /// What the answerer must see as source (TCP).
    pub peer: PeerCheck,
    /// The name to resolve first (DNS probes); it must resolve to `to_ip`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolve: Option<String>,
    /// The Service frontends the probe goes through, which must be installed before it runs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frontends: Vec<Frontend>,
}

impl Probe {
    /// Judges a TCP answer: it must come from the expected answerer and show the expected
    /// source.
    pub fn judge(&self, answer: &Answer) -> Result<(), String> {
        if answer.name != self.answerer {
            return Err(format!(
                "answered by {} instead of {}",
                answer.name, self.answerer
            ));
        }
        let seen = answer.peer.ip();
        match self.peer {
            PeerCheck::Any => Ok(()),
            PeerCheck::Unchanged(ip) if seen == ip => Ok(()),
            PeerCheck::Unchanged(ip) => Err(format!(
                "{} saw source {seen}, expected the untranslated {ip}",
                self.answerer
            )),
            PeerCheck::Snat(ip) if seen == ip => Ok(()),
            PeerCheck::Snat(ip) => Err(format!(
                "{} saw source {seen}, expected the Node IP {ip} (SNAT)",
                self.answerer
            )),
            PeerCheck::Gateway(ip) if seen == ip => Ok(()),
            PeerCheck::Gateway(ip) => Err(format!(
                "{} saw source {seen}, expected the gateway address {ip}",
                self.answerer
            )),
        }
    }
}

/// The probes for a lab's endpoints, in a stable order: sources in the order given, then
/// targets in the order given, TCP before ICMP. Pod egress to the external host expects SNAT to
/// the Node IP with the agent, and the untranslated Pod IP with `normal` wiring (no SNAT there).
pub fn plan(endpoints: &[Endpoint], wiring: Wiring) -> Vec<Probe> {
    let mut probes = Vec::new();
    for from in endpoints {
        for to in endpoints {
            let Some((path, peer)) = classify(from, to, wiring) else {
                continue;
            };
            for proto in [Proto::Tcp, Proto::Icmp] {
                probes.push(Probe {
                    from: from.name.clone(),
                    to: to.name.clone(),
                    to_ip: to.ip,
                    to_port: (proto == Proto::Tcp).then_some(SERVE_PORT),
                    path,
                    proto,
                    answerer: to.name.clone(),
                    peer,
                    resolve: None,
                    frontends: Vec::new(),
                });
            }
        }
    }
    probes
}

fn classify(from: &Endpoint, to: &Endpoint, wiring: Wiring) -> Option<(PathKind, PeerCheck)> {
    match (&from.role, &to.role) {
        _ if from.name == to.name => None,
        (Role::Pod { node: a, .. }, Role::Pod { node: b, .. }) => {
            let path = if a == b {
                PathKind::PodPodSameNode
            } else {
                PathKind::PodPodCrossNode
            };
            Some((path, PeerCheck::Unchanged(from.ip)))
        }
        (Role::Node, Role::Pod { .. }) => Some((PathKind::NodePod, PeerCheck::Any)),
        (Role::Pod { .. }, Role::Node) => Some((PathKind::PodNode, PeerCheck::Any)),
        (Role::Pod { node_ip, .. }, Role::External) => Some((
            PathKind::PodExternal,
            match wiring {
                Wiring::Agent => PeerCheck::Snat(*node_ip),
                Wiring::Normal => PeerCheck::Unchanged(from.ip),
            },
        )),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample_endpoints() -> Vec<Endpoint> {
        let pod = |n: u8, p: u8| Endpoint {
            name: format!("lab-n{n}-p{p}"),
            ip: Ipv4Addr::new(10, 244, n, 10 + p),
            role: Role::Pod {
                node: format!("lab-n{n}"),
                node_ip: Ipv4Addr::new(10, 10, 0, 10 + n),
            },
        };
        let node = |n: u8| Endpoint {
            name: format!("lab-n{n}"),
            ip: Ipv4Addr::new(10, 10, 0, 10 + n),
            role: Role::Node,
        };
        vec![
            pod(1, 1),
            pod(1, 2),
            pod(2, 1),
            pod(2, 2),
            node(1),
            node(2),
            Endpoint {
                name: "lab-ext".into(),
                ip: Ipv4Addr::new(10, 10, 0, 100),
                role: Role::External,
            },
        ]
    }

    fn count(probes: &[Probe], path: PathKind) -> usize {
        probes.iter().filter(|p| p.path == path).count()
    }

    #[test]
    fn two_by_two_lab_has_the_full_matrix() {
        let probes = plan(&sample_endpoints(), Wiring::Agent);
        // Ordered Pod pairs: 4 same-Node, 8 cross-Node; 8 Node->Pod, 8 Pod->Node, 4 Pod->ext; x2 protocols.
        assert_eq!(count(&probes, PathKind::PodPodSameNode), 4 * 2);
        assert_eq!(count(&probes, PathKind::PodPodCrossNode), 8 * 2);
        assert_eq!(count(&probes, PathKind::NodePod), 8 * 2);
        assert_eq!(count(&probes, PathKind::PodNode), 8 * 2);
        assert_eq!(count(&probes, PathKind::PodExternal), 4 * 2);
        assert_eq!(probes.len(), 64);
        assert!(probes.iter().all(|p| p.from != p.to));
        assert!(
            !probes
                .iter()
                .any(|p| p.from == "lab-ext" || (p.from == "lab-n1" && p.to == "lab-ext"))
        );
        assert_eq!(
            (
                probes[0].from.as_str(),
                probes[0].to.as_str(),
                probes[0].proto
            ),
            ("lab-n1-p1", "lab-n1-p2", Proto::Tcp)
        );
        assert_eq!(probes[1].proto, Proto::Icmp);
    }

    #[test]
    fn endpoints_come_from_the_state() {
        use crate::plan::{Encap, Topology};
        use crate::state::PodRecord;
        let mut state = State::building(
            Topology::new(2, 2, Encap::Geneve, Wiring::Normal).unwrap(),
            None,
            None,
        );
        for p in state.topology.pods() {
            state.pods.push(PodRecord {
                name: p.name(),
                node: p.node().name(),
                ip: Some(p.normal_ip()),
            });
        }
        state.pods[3].ip = None;
        assert_eq!(super::endpoints(&state), endpoints_without_last_pod());
    }

    fn endpoints_without_last_pod() -> Vec<Endpoint> {
        let mut all = sample_endpoints();
        all.remove(3);
        all
    }

    #[test]
    fn egress_expects_snat_only_with_the_agent() {
        let ext = |w| {
            plan(&sample_endpoints(), w)
                .into_iter()
                .find(|p| p.from == "lab-n2-p1" && p.to == "lab-ext")
                .unwrap()
        };
        assert_eq!(
            ext(Wiring::Agent).peer,
            PeerCheck::Snat(Ipv4Addr::new(10, 10, 0, 12))
        );
        assert_eq!(
            ext(Wiring::Normal).peer,
            PeerCheck::Unchanged(Ipv4Addr::new(10, 244, 2, 11))
        );
    }

    #[test]
    fn judge_checks_name_and_source() {
        let probes = plan(&sample_endpoints(), Wiring::Agent);
        let pick = |from: &str, to: &str| {
            probes
                .iter()
                .find(|p| p.from == from && p.to == to)
                .unwrap()
                .clone()
        };
        let answer = |name: &str, peer: &str| Answer {
            name: name.into(),
            peer: peer.parse().unwrap(),
        };
        let pp = pick("lab-n1-p1", "lab-n2-p1");
        assert_eq!(pp.judge(&answer("lab-n2-p1", "10.244.1.11:1234")), Ok(()));
        assert!(
            pp.judge(&answer("lab-n2", "10.244.1.11:1234"))
                .unwrap_err()
                .contains("instead of lab-n2-p1")
        );
        assert!(
            pp.judge(&answer("lab-n2-p1", "10.10.0.11:1234"))
                .unwrap_err()
                .contains("untranslated")
        );
        let egress = pick("lab-n1-p2", "lab-ext");
        assert_eq!(egress.judge(&answer("lab-ext", "10.10.0.11:5")), Ok(()));
        assert!(
            egress
                .judge(&answer("lab-ext", "10.244.1.12:5"))
                .unwrap_err()
                .contains("SNAT")
        );
        let node_pod = pick("lab-n1", "lab-n2-p2");
        assert_eq!(node_pod.judge(&answer("lab-n2-p2", "10.244.1.1:9")), Ok(()));
    }
}
