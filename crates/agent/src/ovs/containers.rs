//! The Pods attached to the bridge, read back from their ports' `external_ids` (what the CNI
//! server wrote) and their interfaces' OpenFlow ports: how a restarted agent knows its Pods.

use std::net::Ipv4Addr;

use model::MacAddr;
use model::{LocalPod, PodKey};
use ovsdb::vswitch::{InterfaceRow, PortRow};

use super::OvsBridge;
use super::want::antrea_type;
use crate::error::AgentError;

/// The `external_ids` keys of a container port, as Antrea writes them.
pub mod container_id {
    pub const CONTAINER_ID: &str = "container-id";
    pub const POD_NAME: &str = "pod-name";
    pub const POD_NAMESPACE: &str = "pod-namespace";
    pub const IP_ADDRESS: &str = "ip-address";
    pub const ATTACHED_MAC: &str = "attached-mac";
    /// The interface name in the Pod, when it is not `eth0`.
    pub const IF_DEV: &str = "if-dev";
    /// antrea-rs: the IPAM store directory (`<dataDir>/<network>`) holding the Pod's address,
    /// so a restarted agent can tell whether the allocation still exists.
    pub const IPAM_STORE: &str = "ipam-store";
}

/// A container port and the Pod it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerPort {
    /// The port (and host interface) name.
    pub port: String,
    /// The container ID the CNI ADD was for.
    pub container_id: String,
    /// The interface name inside the Pod.
    pub ifname: String,
    /// The Pod, when the port names it.
    pub key: Option<PodKey>,
    /// The Pod's IPv4 address, when the port records one.
    pub ip: Option<Ipv4Addr>,
    /// Where its address is recorded (see [`container_id::IPAM_STORE`]).
    pub ipam_store: Option<String>,
    /// Its OpenFlow port, once OVS gave it one.
    pub ofport: Option<u32>,
    /// The Pod, when the port's records are complete.
    pub pod: Option<LocalPod>,
}

impl OvsBridge {
    /// Every port marked `antrea-type=container`.
    pub async fn container_ports(&self) -> Result<Vec<ContainerPort>, AgentError> {
        let rows = self.ports_of_type(antrea_type::CONTAINER).await?;
        Ok(rows
            .iter()
            .map(|(port, iface)| container_port(port, iface))
            .collect())
    }
}

fn container_port(port: &PortRow, iface: &InterfaceRow) -> ContainerPort {
    let id = |k: &str| port.external_ids.get(k).cloned();
    let key = id(container_id::POD_NAMESPACE)
        .zip(id(container_id::POD_NAME))
        .map(|(ns, name)| PodKey::new(ns, name));
    let ip = id(container_id::IP_ADDRESS).and_then(|list| {
        list.split(',')
            .find_map(|a| a.trim().parse::<Ipv4Addr>().ok())
    });
    let ofport = iface
        .ofport
        .and_then(|p| u32::try_from(p).ok())
        .filter(|p| *p > 0);
    let pod = (|| {
        let key = key.clone()?;
        let ip = ip?;
        let mac: MacAddr = id(container_id::ATTACHED_MAC)?.parse().ok()?;
        Some(LocalPod { key, ip, mac })
    })();
    ContainerPort {
        port: port.name.clone(),
        container_id: id(container_id::CONTAINER_ID).unwrap_or_default(),
        ifname: id(container_id::IF_DEV).unwrap_or_else(|| "eth0".to_owned()),
        key,
        ip,
        ipam_store: id(container_id::IPAM_STORE),
        ofport,
        pod,
    }
}
