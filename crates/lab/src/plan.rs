//! The lab's topology and addressing plan: which Nodes and Pods exist, their names, addresses and
//! MACs. Pure data, derived from the `up` options only, so every command can recompute it.

use std::fmt;
use std::net::Ipv4Addr;

use model::MacAddr;
use serde::{Deserialize, Serialize};

/// Every network namespace the lab creates starts with this.
pub const NETNS_PREFIX: &str = "lab-";
/// The namespace holding the LAN bridge.
pub const UNDERLAY_NETNS: &str = "lab-underlay";
/// The Linux bridge standing for the LAN.
pub const LAN_BRIDGE: &str = "lan0";
/// The namespace standing for the internet.
pub const EXT_NETNS: &str = "lab-ext";
/// The external host's address on the LAN.
pub const EXT_IP: Ipv4Addr = Ipv4Addr::new(10, 10, 0, 100);
/// The namespace of the fake Kubernetes API server (`--api fake`).
pub const API_NETNS: &str = "lab-api";
/// The fake API server's address on the LAN, below every Node IP.
pub const API_IP: Ipv4Addr = Ipv4Addr::new(10, 10, 0, 2);
/// The fake API server's TCP port (plain HTTP).
pub const API_PORT: u16 = 6443;
/// The namespace of antrea-controller (`--controller`).
pub const CONTROLLER_NETNS: &str = "lab-ctl";
/// antrea-controller's address on the LAN, below every Node IP.
pub const CONTROLLER_IP: Ipv4Addr = Ipv4Addr::new(10, 10, 0, 3);
/// antrea-controller's port (its default `--bind-address` port).
pub const CONTROLLER_PORT: u16 = 10349;
/// The LAN's prefix length (10.10.0.0/24).
pub const LAN_PREFIX_LEN: u8 = 24;
/// The TCP port of every `serve` answerer (Pods, Nodes, external host).
pub const SERVE_PORT: u16 = 8080;
/// The Pod interface MTU in `normal` wiring (the same as the encap MTU, so both wirings compare).
pub const POD_MTU: u32 = 1450;
/// The interface name inside every Pod.
pub const POD_IFNAME: &str = "eth0";
/// The Node's NIC (its uplink) inside the Node namespace.
pub const NODE_NIC: &str = "eth0";
/// The OVS bridge of every Node.
pub const BRIDGE: &str = "br-int";
/// The agent's gateway interface name.
pub const HOST_GATEWAY: &str = "antrea-gw0";
/// Node IPs are 10.10.0.(10+K), so at most 80 Nodes stay below the external host's .100.
pub const MAX_NODES: u8 = 80;
/// `normal` wiring gives Pod J the address 10.244.K.(10+J), so at most 200 Pods per Node.
pub const MAX_PODS_PER_NODE: u8 = 200;
/// The flat Pod network of `normal` wiring; each Node's br-int also holds 10.244.K.1 in it.
pub const FLAT_POD_PREFIX_LEN: u8 = 16;
/// The name of every lab Pod's container port [`SERVE_PORT`].
pub const SERVE_PORT_NAME: &str = "serve";
/// How Pod traffic crosses Nodes (the agent's `trafficEncapMode` and `tunnelType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Encap {
    /// Encap mode with a Geneve tunnel.
    Geneve,
    /// Encap mode with a VXLAN tunnel.
    Vxlan,
    /// Routed over the LAN without a tunnel.
    Noencap,
}

impl Encap {
    /// The agent configuration's `trafficEncapMode`.
    pub fn traffic_encap_mode(self) -> &'static str {
        match self {
            Encap::Geneve | Encap::Vxlan => "encap",
            Encap::Noencap => "noEncap",
        }
    }

    /// The agent configuration's `tunnelType` (Antrea's default, Geneve, for noEncap).
    pub fn tunnel_type(self) -> &'static str {
        match self {
            Encap::Geneve | Encap::Noencap => "geneve",
            Encap::Vxlan => "vxlan",
        }
    }
}

/// Who wires the Nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Wiring {
    /// `antrea-agent` per Node, Pods through the `antrea` CNI plugin.
    Agent,
    /// No agent: the lab builds br-int as a plain NORMAL switch over one flat Pod subnet.
    Normal,
}

/// Where the agents read the cluster's Nodes and Pods from (`agent` wiring). The `Default`, the
/// directory, is what a state file without `api` means; `up`'s default is [`ClusterApi::for_up`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ClusterApi {
    /// The cluster directory: one YAML file per object (`--cluster-dir`).
    #[default]
    Directory,
    /// A fake Kubernetes API server in namespace `lab-api` (`--kubeconfig`).
    Fake,
}

impl ClusterApi {
    /// The cluster `up` builds: `api` when it was given, otherwise the fake API server with
    /// `agent` wiring (a cluster with Services) and the directory with `normal` wiring (no
    /// agent reads an API server there).
    pub fn for_up(api: Option<ClusterApi>, wiring: Wiring) -> ClusterApi {
        api.unwrap_or(match wiring {
            Wiring::Agent => ClusterApi::Fake,
            Wiring::Normal => ClusterApi::Directory,
        })
    }
}

/// Who creates the Pods of `agent` wiring (`up --runtime`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    /// The lab acts as the runtime: it makes the namespace and runs the plugin itself.
    #[default]
    Direct,
    /// One containerd per Node creates Pod sandboxes through CRI `RunPodSandbox` and calls the
    /// plugin with its own CNI library.
    Containerd,
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Runtime::Direct => "direct",
            Runtime::Containerd => "containerd",
        })
    }
}

impl fmt::Display for ClusterApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClusterApi::Directory => "directory",
            ClusterApi::Fake => "fake",
        })
    }
}

impl fmt::Display for Wiring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Wiring::Agent => "agent",
            Wiring::Normal => "normal",
        })
    }
}

impl fmt::Display for Encap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Encap::Geneve => "geneve",
            Encap::Vxlan => "vxlan",
            Encap::Noencap => "noencap",
        })
    }
}

/// A size the plan cannot address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Node count outside 1..=[`MAX_NODES`].
    #[error("--nodes {0}: must be between 1 and {MAX_NODES}")]
    Nodes(u8),
    /// Pods per Node outside 1..=[`MAX_PODS_PER_NODE`].
    #[error("--pods-per-node {0}: must be between 1 and {MAX_PODS_PER_NODE}")]
    PodsPerNode(u8),
}

/// The shape of a lab: everything `up` was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// Number of Nodes.
    pub nodes: u8,
    /// Pods on each Node.
    pub pods_per_node: u8,
    /// Cross-Node mode (used by `agent` wiring).
    pub encap: Encap,
    /// Who wires the Nodes.
    pub wiring: Wiring,
}

impl Topology {
    /// A checked topology.
    pub fn new(
        nodes: u8,
        pods_per_node: u8,
        encap: Encap,
        wiring: Wiring,
    ) -> Result<Topology, PlanError> {
        if !(1..=MAX_NODES).contains(&nodes) {
            return Err(PlanError::Nodes(nodes));
        }
        if !(1..=MAX_PODS_PER_NODE).contains(&pods_per_node) {
            return Err(PlanError::PodsPerNode(pods_per_node));
        }
        Ok(Topology {
            nodes,
            pods_per_node,
            encap,
            wiring,
        })
    }

    /// The Nodes, n1 first.
    pub fn nodes(&self) -> impl Iterator<Item = NodePlan> + use<> {
        (1..=self.nodes).map(|index| NodePlan { index })
    }

    /// The Pods of one Node.
    pub fn pods_of(&self, node: NodePlan) -> impl Iterator<Item = PodPlan> + use<> {
        (1..=self.pods_per_node).map(move |index| PodPlan {
            node: node.index,
            index,
        })
    }

    /// Every Pod, Node by Node.
    pub fn pods(&self) -> impl Iterator<Item = PodPlan> + use<> {
        let per_node = self.pods_per_node;
        (1..=self.nodes)
            .flat_map(move |node| (1..=per_node).map(move |index| PodPlan { node, index }))
    }
}

/// Node number K (from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodePlan {
    /// K.
    pub index: u8,
}

impl NodePlan {
    /// The Node's name, also its namespace and its Kubernetes Node name: `lab-nK`.
    pub fn name(self) -> String {
        format!("{NETNS_PREFIX}n{}", self.index)
    }

    /// The Node IP, 10.10.0.(10+K).
    pub fn ip(self) -> Ipv4Addr {
        Ipv4Addr::new(10, 10, 0, 10 + self.index)
    }

    /// The NIC's fixed MAC (also br-int's): 02:00:0a:0a:00:(10+K).
    pub fn mac(self) -> MacAddr {
        MacAddr([0x02, 0x00, 0x0a, 0x0a, 0x00, 10 + self.index])
    }

    /// br-int's OVS datapath ID, derived from the NIC's MAC: `0000` followed by its 12 hex
    /// digits.
    pub fn datapath_id(self) -> String {
        format!("0000{:012x}", self.mac().to_u64())
    }

    /// The underlay-side end of the NIC's veth, attached to the LAN bridge.
    pub fn underlay_veth(self) -> String {
        format!("u-n{}", self.index)
    }

    /// The Node's Pod CIDR in `agent` wiring: 10.244.K.0/24.
    pub fn pod_cidr(self) -> String {
        format!("10.244.{}.0/24", self.index)
    }

    /// The Pods' gateway: 10.244.K.1 (antrea-gw0 in `agent` wiring, a br-int address in `normal`).
    pub fn pod_gateway(self) -> Ipv4Addr {
        Ipv4Addr::new(10, 244, self.index, 1)
    }
}

/// Pod number J (from 1) of Node K.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodPlan {
    /// K.
    pub node: u8,
    /// J.
    pub index: u8,
}

impl PodPlan {
    /// The Pod's name, also its namespace and Kubernetes Pod name: `lab-nK-pJ`.
    pub fn name(self) -> String {
        format!("{NETNS_PREFIX}n{}-p{}", self.node, self.index)
    }

    /// Its Node.
    pub fn node(self) -> NodePlan {
        NodePlan { index: self.node }
    }

    /// The Pod's UID (CRI `PodSandboxMetadata.uid`, `K8S_POD_UID`): fixed per Pod, in UUID form.
    pub fn uid(self) -> String {
        format!("1ab00000-0000-4000-8000-{:06}{:06}", self.node, self.index)
    }

    /// The container ID the lab, acting as the runtime, gives the Pod's sandbox.
    pub fn container_id(self) -> String {
        format!("antrea-lab-{:03}-{:03}", self.node, self.index)
    }

    /// The host-side veth in `normal` wiring (at most 7 characters, well under IFNAMSIZ).
    pub fn host_veth(self) -> String {
        format!("n{}p{}", self.node, self.index)
    }

    /// The Pod IP in `normal` wiring: 10.244.K.(10+J) in the flat /16.
    pub fn normal_ip(self) -> Ipv4Addr {
        Ipv4Addr::new(10, 244, self.node, 10 + self.index)
    }

    /// The Pod's MAC in `normal` wiring: 02:00:0a:f4:K:J.
    pub fn mac(self) -> MacAddr {
        MacAddr([0x02, 0x00, 0x0a, 0xf4, self.node, self.index])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_addresses_follow_the_index() {
        let n2 = NodePlan { index: 2 };
        assert_eq!(n2.name(), "lab-n2");
        assert_eq!(n2.ip(), Ipv4Addr::new(10, 10, 0, 12));
        assert_eq!(n2.mac().to_string(), "02:00:0a:0a:00:0c");
        assert_eq!(n2.datapath_id(), "000002000a0a000c");
        assert_eq!(n2.pod_cidr(), "10.244.2.0/24");
        assert_eq!(n2.pod_gateway(), Ipv4Addr::new(10, 244, 2, 1));
        assert_eq!(n2.underlay_veth(), "u-n2");
    }

    #[test]
    fn pod_addresses_follow_node_and_index() {
        let p = PodPlan { node: 3, index: 2 };
        assert_eq!(p.name(), "lab-n3-p2");
        assert_eq!(p.host_veth(), "n3p2");
        assert_eq!(p.normal_ip(), Ipv4Addr::new(10, 244, 3, 12));
        assert_eq!(p.mac().to_string(), "02:00:0a:f4:03:02");
        assert_eq!(p.container_id(), "antrea-lab-003-002");
        assert_eq!(p.uid(), "1ab00000-0000-4000-8000-000003000002");
    }

    #[test]
    fn topology_lists_nodes_then_pods_in_order() {
        let t = Topology::new(2, 3, Encap::Geneve, Wiring::Normal).unwrap();
        let nodes: Vec<String> = t.nodes().map(NodePlan::name).collect();
        assert_eq!(nodes, ["lab-n1", "lab-n2"]);
        let pods: Vec<String> = t.pods().map(PodPlan::name).collect();
        assert_eq!(
            pods,
            [
                "lab-n1-p1",
                "lab-n1-p2",
                "lab-n1-p3",
                "lab-n2-p1",
                "lab-n2-p2",
                "lab-n2-p3"
            ]
        );
        let of_n2: Vec<String> = t
            .pods_of(NodePlan { index: 2 })
            .map(PodPlan::name)
            .collect();
        assert_eq!(of_n2, ["lab-n2-p1", "lab-n2-p2", "lab-n2-p3"]);
    }

    #[test]
    fn topology_rejects_unaddressable_sizes() {
        assert_eq!(
            Topology::new(0, 1, Encap::Geneve, Wiring::Agent),
            Err(PlanError::Nodes(0))
        );
        assert_eq!(
            Topology::new(81, 1, Encap::Geneve, Wiring::Agent),
            Err(PlanError::Nodes(81))
        );
        assert_eq!(
            Topology::new(1, 0, Encap::Geneve, Wiring::Agent),
            Err(PlanError::PodsPerNode(0))
        );
        assert_eq!(
            Topology::new(1, 201, Encap::Geneve, Wiring::Agent),
            Err(PlanError::PodsPerNode(201))
        );
        let max =
            Topology::new(MAX_NODES, MAX_PODS_PER_NODE, Encap::Vxlan, Wiring::Normal).unwrap();
        let last = max.pods().last().unwrap();
        assert_eq!(last.normal_ip(), Ipv4Addr::new(10, 244, 80, 210));
        assert!(max.nodes().last().unwrap().ip() < EXT_IP);
        assert!(last.host_veth().len() <= 15);
    }

    #[test]
    fn up_defaults_to_the_fake_api_with_agents_and_keeps_an_explicit_choice() {
        use ClusterApi::{Directory, Fake};
        assert_eq!(ClusterApi::for_up(None, Wiring::Agent), Fake);
        assert_eq!(ClusterApi::for_up(None, Wiring::Normal), Directory);
        assert_eq!(
            ClusterApi::for_up(Some(Directory), Wiring::Agent),
            Directory
        );
        // Kept, so that `up` refuses it with its reason.
        assert_eq!(ClusterApi::for_up(Some(Fake), Wiring::Normal), Fake);
    }

    #[test]
    fn encap_maps_to_agent_keys() {
        assert_eq!(Encap::Geneve.traffic_encap_mode(), "encap");
        assert_eq!(Encap::Vxlan.tunnel_type(), "vxlan");
        assert_eq!(Encap::Noencap.traffic_encap_mode(), "noEncap");
    }
}
