//! The lab's Node n1 (see the lab notes): two local Pods and the peer n2, in any traffic mode.
#![allow(dead_code)] // each test binary uses a different part

#[cfg(target_os = "linux")]
pub mod pod_netns;
#[cfg(target_os = "linux")]
pub mod raw_group;
#[cfg(target_os = "linux")]
pub mod scenarios;
#[cfg(target_os = "linux")]
pub mod switch;

use std::net::Ipv4Addr;

use model::{
    Endpoint, EndpointConditions, LocalPod, NodeNetwork, PeerNode, PodKey, Protocol, Service,
    ServiceKey, ServicePort, SessionAffinity, TrafficMode, TrafficPolicy,
};
use openflow::msg::flow_mod::FlowMod;
use pipeline::layout::TableGraph;
use pipeline::render::{node_flows, peer_flows, pod_flows};

pub fn node(mode: TrafficMode) -> NodeNetwork {
    NodeNetwork {
        node_ip: "10.10.0.11/24".parse().unwrap(),
        node_mac: "02:00:0a:0a:00:0b".parse().unwrap(),
        pod_cidr: "10.244.1.0/24".parse().unwrap(),
        gateway_ip: Ipv4Addr::new(10, 244, 1, 1),
        gateway_mac: "02:00:0a:f4:01:01".parse().unwrap(),
        mode,
    }
}

/// A local Pod and the OpenFlow port of its interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodOnPort {
    pub pod: LocalPod,
    pub ofport: u32,
}

impl std::ops::Deref for PodOnPort {
    type Target = LocalPod;

    fn deref(&self) -> &LocalPod {
        &self.pod
    }
}

impl std::ops::DerefMut for PodOnPort {
    fn deref_mut(&mut self) -> &mut LocalPod {
        &mut self.pod
    }
}

pub fn pods() -> Vec<PodOnPort> {
    vec![
        PodOnPort {
            pod: LocalPod {
                key: PodKey::new("default", "p1"),
                ip: Ipv4Addr::new(10, 244, 1, 10),
                mac: "02:00:0a:f4:01:0a".parse().unwrap(),
            },
            ofport: 10,
        },
        PodOnPort {
            pod: LocalPod {
                key: PodKey::new("default", "p3"),
                ip: Ipv4Addr::new(10, 244, 1, 11),
                mac: "02:00:0a:f4:01:0b".parse().unwrap(),
            },
            ofport: 11,
        },
    ]
}

/// The cluster IP of [`web_service`].
pub const WEB_VIP: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 10);

/// `default/web` on [`WEB_VIP`] TCP/80 → port 8080 of `endpoints` (ready; local when in n1's
/// Pod CIDR).
pub fn web_service(endpoints: &[Ipv4Addr]) -> Service {
    Service {
        key: ServiceKey::new("default", "web"),
        cluster_ips: vec![WEB_VIP],
        external_ips: Vec::new(),
        load_balancer_ips: Vec::new(),
        ports: vec![ServicePort {
            name: "http".into(),
            protocol: Protocol::Tcp,
            port: 80,
            node_port: None,
            endpoints: endpoints
                .iter()
                .map(|&ip| Endpoint {
                    ip,
                    port: 8080,
                    conditions: EndpointConditions::READY,
                    node: None,
                    is_local: ip.octets()[2] == 1,
                })
                .collect(),
        }],
        session_affinity: SessionAffinity::None,
        external_traffic_policy: TrafficPolicy::Cluster,
        internal_traffic_policy: TrafficPolicy::Cluster,
        health_check_node_port: None,
    }
}

pub fn peer() -> PeerNode {
    PeerNode {
        name: "n2".into(),
        node_ip: Ipv4Addr::new(10, 10, 0, 12),
        pod_cidr: "10.244.2.0/24".parse().unwrap(),
        gateway_ip: Ipv4Addr::new(10, 244, 2, 1),
        mac: Some("02:00:0a:0a:00:0c".parse().unwrap()),
    }
}

/// A peer outside n1's subnet (hybrid mode tunnels to it).
pub fn far_peer() -> PeerNode {
    PeerNode {
        name: "n3".into(),
        node_ip: Ipv4Addr::new(10, 20, 0, 13),
        pod_cidr: "10.244.3.0/24".parse().unwrap(),
        gateway_ip: Ipv4Addr::new(10, 244, 3, 1),
        mac: Some("02:00:0a:14:00:0d".parse().unwrap()),
    }
}

/// Every flow of n1 (node, Pods, peer n2), without cookies.
pub fn all_flows(mode: TrafficMode) -> Vec<FlowMod> {
    flows_with_peers(mode, &[peer()])
}

/// Every flow of n1 with `peers`, without cookies.
pub fn flows_with_peers(mode: TrafficMode, peers: &[PeerNode]) -> Vec<FlowMod> {
    let node = node(mode);
    let mut flows = node_flows(&node);
    for pod in pods() {
        flows.extend(pod_flows(&node, &pod, pod.ofport));
    }
    for peer in peers {
        flows.extend(peer_flows(&node, peer));
    }
    flows
}

/// Flows as text, one per line, ordered by table, then descending priority, then text; each
/// table introduced by a `# N Name` comment.
pub fn listing(flows: &[FlowMod]) -> String {
    let mut sorted: Vec<(u8, std::cmp::Reverse<u16>, String)> = flows
        .iter()
        .map(|f| (f.table_id, std::cmp::Reverse(f.priority), f.to_string()))
        .collect();
    sorted.sort();
    let mut out = String::new();
    let mut table = None;
    for (t, _, text) in sorted {
        if table != Some(t) {
            let name = TableGraph::standard()
                .table(t)
                .map(|t| t.name())
                .unwrap_or("?");
            out.push_str(&format!("# {t} {name}\n"));
            table = Some(t);
        }
        out.push_str(&text);
        out.push('\n');
    }
    out
}

/// The NetworkPolicy flows of every truth-table scenario, each a `## <scenario>` line and its
/// [`listing`].
#[cfg(target_os = "linux")]
pub fn policy_listing() -> String {
    scenarios::policy_flows()
        .iter()
        .map(|(name, flows)| format!("## {name}\n{}", listing(flows)))
        .collect()
}
