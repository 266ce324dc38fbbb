//! A Node's `antrea-agent.conf`: Antrea's configuration keys for a Node of the lab, with
//! AntreaProxy serving the Node's own traffic and NodePorts (`antreaProxy.proxyAll`) for the
//! lab's Service CIDR, and with `up --controller` the keys that have the agent take its
//! NetworkPolicy from the lab's antrea-controller.

use std::path::{Path, PathBuf};

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
    /// With `up --controller`: where NetworkPolicy comes from and how to reach it.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerMode>,
}

/// The controller-mode keys (antrea-rs): the lab's antrea-controller, this Node's agent token
/// and where the agent keeps the last view it received. The controller's certificate is
/// checked with the CA it publishes (`controllerCAConfigMap`'s default) for its default name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ControllerMode {
    /// `controller`.
    pub policy_computation: String,
    /// The controller's `host:port` on the LAN.
    pub controller_addresses: Vec<String>,
    /// The Node's agent token, bound to its agent Pod.
    pub controller_token_file: PathBuf,
    /// Under the Node's directory.
    pub policy_state_file: PathBuf,
}

impl ControllerMode {
    /// The keys for an agent reaching the controller at `address` with the token in
    /// `token_file`, keeping its view in `state_file`.
    pub fn new(address: std::net::SocketAddr, token_file: &Path, state_file: &Path) -> Self {
        ControllerMode {
            policy_computation: "controller".to_owned(),
            controller_addresses: vec![address.to_string()],
            controller_token_file: token_file.to_owned(),
            policy_state_file: state_file.to_owned(),
        }
    }
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
            controller: None,
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

    #[test]
    fn controller_mode_adds_its_keys_at_the_top_level() {
        let mut c = AgentConfig::for_node(
            Encap::Geneve,
            Path::new("/r"),
            Path::new("/s"),
            Path::new("/a"),
        );
        c.controller = Some(ControllerMode::new(
            "10.10.0.3:10349".parse().unwrap(),
            Path::new("/run/antrea-lab/lab-n1/agent-token"),
            Path::new("/run/antrea-lab/lab-n1/policy-state.json"),
        ));
        let v: serde_json::Value = serde_saphyr::from_str(&c.to_yaml().unwrap()).unwrap();
        assert_eq!(v["policyComputation"], "controller");
        assert_eq!(
            v["controllerAddresses"],
            serde_json::json!(["10.10.0.3:10349"])
        );
        assert_eq!(
            v["controllerTokenFile"],
            "/run/antrea-lab/lab-n1/agent-token"
        );
        assert_eq!(
            v["policyStateFile"],
            "/run/antrea-lab/lab-n1/policy-state.json"
        );
    }
}
