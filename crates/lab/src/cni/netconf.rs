//! The network configuration a runtime writes to the plugin's stdin: the `antrea` entry of
//! Antrea's conflist with the list's `cniVersion` and `name` copied in (what libcni does for
//! each plugin of a list). The lab runs only this first plugin of the list; `ipam.dataDir` is
//! set per Node, and `dns` is the cluster DNS kubelet gives a Pod of namespace `default`.

use std::path::Path;

use serde::Serialize;

use super::dns::Dns;

/// The CNI version the lab speaks.
pub const CNI_VERSION: &str = "1.0.0";

/// The configuration passed on stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetConf {
    /// The spec version of this configuration and of the expected result.
    pub cni_version: String,
    /// The network name (Antrea's conflist calls it `antrea`).
    pub name: String,
    /// The plugin type: `antrea`.
    #[serde(rename = "type")]
    pub plugin_type: String,
    /// IPAM: Antrea's agent allocates from the Node's podCIDR with host-local semantics.
    pub ipam: Ipam,
    /// The Pod's DNS settings, which the plugin returns in its result.
    pub dns: Dns,
}

/// The `ipam` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ipam {
    /// `host-local`.
    #[serde(rename = "type")]
    pub ipam_type: String,
    /// host-local's store directory. Each lab Node has its own: the Nodes share one file
    /// system, and a shared store would let one Node's GC release another Node's addresses.
    pub data_dir: String,
}

impl NetConf {
    /// Antrea's configuration, as derived from its conflist, with the Node's IPAM store.
    pub fn antrea(ipam_data_dir: &Path) -> NetConf {
        NetConf {
            cni_version: CNI_VERSION.to_owned(),
            name: "antrea".to_owned(),
            plugin_type: "antrea".to_owned(),
            ipam: Ipam {
                ipam_type: "host-local".to_owned(),
                data_dir: ipam_data_dir.display().to_string(),
            },
            dns: Dns::cluster_first("default"),
        }
    }

    /// The JSON bytes for stdin.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn antrea_config_has_the_spec_keys() {
        let v: serde_json::Value = serde_json::from_slice(
            &NetConf::antrea(Path::new("/run/antrea-lab/lab-n1/ipam")).to_json(),
        )
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"cniVersion": "1.0.0", "name": "antrea", "type": "antrea",
                "ipam": {"type": "host-local", "dataDir": "/run/antrea-lab/lab-n1/ipam"},
                "dns": {"nameservers": ["10.96.0.10"],
                        "search": ["default.svc.cluster.local", "svc.cluster.local", "cluster.local"],
                        "options": ["ndots:5"]}})
        );
    }
}
