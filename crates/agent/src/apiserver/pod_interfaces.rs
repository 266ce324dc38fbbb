//! [`PodInterfaceReport`], the document of `/v1/podinterfaces`: each Pod on this Node as the
//! CNI server recorded it on its container port (the port's `external_ids`, written at ADD and
//! read back by the agent, the same records a restarted agent learns its Pods from), with the
//! OpenFlow port ovs-vswitchd gave it.

use std::net::Ipv4Addr;

use model::MacAddr;
use serde::{Deserialize, Serialize};

use crate::ovs::{ContainerPort, OvsBridge};

/// One Pod's interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodInterfaceReport {
    /// The Pod's namespace (empty when the port does not name it).
    pub namespace: String,
    /// The Pod's name (empty when the port does not name it).
    pub name: String,
    /// The container the CNI ADD was for.
    pub container_id: String,
    /// The host interface, also the OVS port's name.
    pub interface: String,
    /// The interface name inside the Pod.
    pub pod_interface: String,
    /// The OpenFlow port, once ovs-vswitchd gave one.
    pub ofport: Option<u32>,
    /// The Pod's addresses.
    pub ips: Vec<Ipv4Addr>,
    /// The MAC of the Pod's interface, when recorded.
    pub mac: Option<MacAddr>,
}

impl PodInterfaceReport {
    fn of_port(port: ContainerPort) -> PodInterfaceReport {
        let (namespace, name) = port
            .key
            .map(|key| (key.namespace.to_string(), key.name.to_string()))
            .unwrap_or_default();
        PodInterfaceReport {
            namespace,
            name,
            container_id: port.container_id,
            interface: port.port,
            pod_interface: port.ifname,
            ofport: port.ofport,
            ips: port.ip.into_iter().collect(),
            mac: port.pod.map(|pod| pod.mac),
        }
    }

    /// `namespace/name`.
    pub fn pod(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Pod x/a at 10.244.1.3 on port 3, for tests.
    #[cfg(test)]
    pub(crate) fn example() -> PodInterfaceReport {
        PodInterfaceReport {
            namespace: "x".into(),
            name: "a".into(),
            container_id: "c".into(),
            interface: "a-1234".into(),
            pod_interface: "eth0".into(),
            ofport: Some(3),
            ips: vec![Ipv4Addr::new(10, 244, 1, 3)],
            mac: Some(MacAddr([2, 0, 0x0a, 0xf4, 1, 3])),
        }
    }
}

/// Every Pod interface on `bridge`, in Pod order.
pub async fn read(bridge: &OvsBridge) -> Result<Vec<PodInterfaceReport>, String> {
    let ports = bridge
        .container_ports()
        .await
        .map_err(|error| format!("the Pods' ports not read: {error}"))?;
    let mut reports: Vec<PodInterfaceReport> =
        ports.into_iter().map(PodInterfaceReport::of_port).collect();
    reports.sort_by(|a, b| {
        (&a.namespace, &a.name, &a.interface).cmp(&(&b.namespace, &b.name, &b.interface))
    });
    Ok(reports)
}

/// The interface of Pod `namespace/name` among `interfaces`, or the error naming the Pods
/// there are.
pub fn find<'a>(
    interfaces: &'a [PodInterfaceReport],
    namespace: &str,
    name: &str,
) -> Result<&'a PodInterfaceReport, String> {
    interfaces
        .iter()
        .find(|i| i.namespace == namespace && i.name == name)
        .ok_or_else(|| {
            let known: Vec<String> = interfaces.iter().map(PodInterfaceReport::pod).collect();
            format!(
                "no Pod {namespace}/{name} on this Node (its Pods: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )
        })
}
