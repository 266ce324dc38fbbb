//! [`NodeInfo`]: the fields of a Kubernetes Node object the agent acts on.

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use k8s_openapi::api::core::v1::Node;
use model::MacAddr;

/// The annotation carrying a Node's transport NIC MAC (Antrea's key), used by peers to send
/// Pod traffic to it directly in noEncap and hybrid modes.
pub const MAC_ANNOTATION: &str = "node.antrea.io/mac-address";

/// Why a Node object cannot be used yet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeInfoError {
    #[error("spec.podCIDR is not set")]
    NoPodCidr,
    #[error("spec.podCIDR {0:?} is not an IPv4 CIDR")]
    BadPodCidr(String),
    #[error("status.addresses has no IPv4 InternalIP")]
    NoInternalIp,
    #[error("annotation {MAC_ANNOTATION} {0:?} is not a MAC address")]
    BadMac(String),
}

/// A Node as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    pub name: String,
    /// The first IPv4 `InternalIP`.
    pub ip: Ipv4Addr,
    /// `spec.podCIDR` (IPv4), host bits cleared.
    pub pod_cidr: Ipv4Net,
    /// The [`MAC_ANNOTATION`], when present.
    pub mac: Option<MacAddr>,
}

impl NodeInfo {
    /// Reads `node`; fails when a field the agent needs is missing or malformed.
    pub fn from_node(node: &Node) -> Result<NodeInfo, NodeInfoError> {
        let name = node.metadata.name.clone().unwrap_or_default();
        let spec = node.spec.as_ref();
        let cidr_text = spec
            .and_then(|s| s.pod_cidr.clone())
            .filter(|c| !c.is_empty())
            .ok_or(NodeInfoError::NoPodCidr)?;
        let pod_cidr: Ipv4Net = cidr_text
            .parse()
            .map_err(|_| NodeInfoError::BadPodCidr(cidr_text.clone()))?;
        let ip = node
            .status
            .as_ref()
            .and_then(|s| s.addresses.as_ref())
            .into_iter()
            .flatten()
            .filter(|a| a.type_ == "InternalIP")
            .find_map(|a| a.address.parse::<Ipv4Addr>().ok())
            .ok_or(NodeInfoError::NoInternalIp)?;
        let mac = match node
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(MAC_ANNOTATION))
        {
            Some(text) => Some(
                text.parse()
                    .map_err(|_| NodeInfoError::BadMac(text.clone()))?,
            ),
            None => None,
        };
        Ok(NodeInfo {
            name,
            ip,
            pod_cidr: pod_cidr.trunc(),
            mac,
        })
    }

    /// The gateway IP: the first address of the Pod CIDR.
    pub fn gateway_ip(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.pod_cidr.network()).wrapping_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(yaml: &str) -> Node {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn reads_the_fields() {
        let n = node(
            "metadata: {name: n1, annotations: {node.antrea.io/mac-address: '02:00:0a:0a:00:0b'}}\n\
             spec: {podCIDR: 10.244.1.7/24}\n\
             status: {addresses: [{type: Hostname, address: n1}, {type: InternalIP, address: 10.10.0.11}]}\n",
        );
        let info = NodeInfo::from_node(&n).unwrap();
        assert_eq!(info.name, "n1");
        assert_eq!(info.ip, Ipv4Addr::new(10, 10, 0, 11));
        assert_eq!(info.pod_cidr.to_string(), "10.244.1.0/24");
        assert_eq!(info.gateway_ip(), Ipv4Addr::new(10, 244, 1, 1));
        assert_eq!(info.mac, Some(MacAddr([2, 0, 0x0a, 0x0a, 0, 0x0b])));
    }

    #[test]
    fn says_what_is_missing() {
        let no_cidr = node(
            "metadata: {name: n1}\nstatus: {addresses: [{type: InternalIP, address: 10.10.0.11}]}\n",
        );
        assert_eq!(NodeInfo::from_node(&no_cidr), Err(NodeInfoError::NoPodCidr));
        let bad_cidr = node("metadata: {name: n1}\nspec: {podCIDR: fd00::/64}\n");
        assert_eq!(
            NodeInfo::from_node(&bad_cidr),
            Err(NodeInfoError::BadPodCidr("fd00::/64".into()))
        );
        let no_ip = node(
            "metadata: {name: n1}\nspec: {podCIDR: 10.244.1.0/24}\nstatus: {addresses: [{type: InternalIP, address: 'fd00::1'}]}\n",
        );
        assert_eq!(
            NodeInfo::from_node(&no_ip),
            Err(NodeInfoError::NoInternalIp)
        );
        let bad_mac = node(
            "metadata: {name: n1, annotations: {node.antrea.io/mac-address: '02:00'}}\nspec: {podCIDR: 10.244.1.0/24}\n\
             status: {addresses: [{type: InternalIP, address: 10.10.0.11}]}\n",
        );
        assert_eq!(
            NodeInfo::from_node(&bad_mac),
            Err(NodeInfoError::BadMac("02:00".into()))
        );
    }
}
