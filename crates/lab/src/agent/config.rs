//! A Node's `antrea-agent.conf`: Antrea's configuration keys for a Node of the lab, with
//! AntreaProxy serving the Node's own traffic and NodePorts (`antreaProxy.proxyAll`) for the
//! lab's Service CIDR.

use std::path::Path;

use serde::Serialize;

use crate::plan::{BRIDGE, Encap, HOST_GATEWAY, NODE_NIC};
use crate::services::SERVICE_CIDR;

/// The keys the lab sets (Antrea names, camelCase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentConfig {
    /// `br-int`.
    pub ovs_bridge: String,
    /// `netdev`: the userspace datapath.
    pub ovs_datapath_type: String,
    /// The Node's private OVS run directory (`db.sock`, `br-int.mgmt`).
    pub ovs_run_dir: String,
    /// `antrea-gw0`.
    pub host_gateway: String,
    /// `encap` or `noEncap`.
    pub traffic_encap_mode: String,
    /// `geneve` or `vxlan`.
    pub tunnel_type: String,
    /// The Node's NIC, `eth0`.
    pub transport_interface: String,
    /// Where the agent serves the CNI plugin.
    pub cni_socket: String,
    /// Where the agent leaves its API's CA and loopback token (one directory per Node).
    pub api_local_access_dir: String,
    /// Pod egress is masqueraded to the Node IP.
    #[serde(rename = "noSNAT")]
    pub no_snat: bool,
    /// The cluster's Service CIDR, which the Node routes into the datapath.
    #[serde(rename = "serviceCIDR")]
    pub service_cidr: String,
    /// `antreaProxy`.
    pub antrea_proxy: AntreaProxy,
}

/// The `antreaProxy` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AntreaProxy {
    /// The Node's own traffic to Services, NodePorts and load-balancer IPs through the
    /// datapath (no kube-proxy in the lab).
    pub proxy_all: bool,
}

impl AgentConfig {
    /// The configuration of one lab Node.
    pub fn for_node(
        encap: Encap,
        ovs_run_dir: &Path,
        cni_socket: &Path,
        api_local_access_dir: &Path,
    ) -> AgentConfig {
        AgentConfig {
            ovs_bridge: BRIDGE.to_owned(),
            ovs_datapath_type: "netdev".to_owned(),
            ovs_run_dir: ovs_run_dir.display().to_string(),
            host_gateway: HOST_GATEWAY.to_owned(),
            traffic_encap_mode: encap.traffic_encap_mode().to_owned(),
            tunnel_type: encap.tunnel_type().to_owned(),
            transport_interface: NODE_NIC.to_owned(),
            cni_socket: cni_socket.display().to_string(),
            api_local_access_dir: api_local_access_dir.display().to_string(),
            no_snat: false,
            service_cidr: SERVICE_CIDR.to_string(),
            antrea_proxy: AntreaProxy { proxy_all: true },
        }
    }

    /// The YAML text, with a header comment.
    pub fn to_yaml(&self) -> Result<String, String> {
        let body = serde_saphyr::to_string(self).map_err(|e| e.to_string())?;
        Ok(format!(
            "# Written by antrea-lab up for one lab Node.\n{body}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_has_antrea_keys_and_values() {
        let c = AgentConfig::for_node(
            Encap::Noencap,
            Path::new("/run/antrea-lab/lab-n1/run"),
            Path::new("/run/antrea-lab/lab-n1/cni.sock"),
            Path::new("/run/antrea-lab/lab-n1/agent-api"),
        );
        let yaml = c.to_yaml().unwrap();
        let v: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "ovsBridge": "br-int", "ovsDatapathType": "netdev", "ovsRunDir": "/run/antrea-lab/lab-n1/run",
                "hostGateway": "antrea-gw0", "trafficEncapMode": "noEncap", "tunnelType": "geneve",
                "transportInterface": "eth0", "cniSocket": "/run/antrea-lab/lab-n1/cni.sock",
                "apiLocalAccessDir": "/run/antrea-lab/lab-n1/agent-api", "noSNAT": false,
                "serviceCIDR": "10.96.0.0/12", "antreaProxy": {"proxyAll": true}
            })
        );
        assert!(yaml.starts_with("# Written by antrea-lab"));
        let vx = AgentConfig::for_node(
            Encap::Vxlan,
            Path::new("/r"),
            Path::new("/s"),
            Path::new("/a"),
        );
        assert_eq!(
            (vx.traffic_encap_mode.as_str(), vx.tunnel_type.as_str()),
            ("encap", "vxlan")
        );
    }
}
