//! The network configuration a runtime passes on stdin (one plugin's entry of a conflist, with
//! `name`, `cniVersion`, runtime-injected `runtimeConfig` and `prevResult`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{CniError, CniVersion, code};

/// The keys of a network configuration that Antrea uses; unknown keys are ignored.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetConf {
    /// `cniVersion`, as written.
    #[serde(default)]
    pub cni_version: String,
    /// The network name (`antrea`).
    #[serde(default)]
    pub name: String,
    /// The plugin type (`antrea`).
    #[serde(default, rename = "type")]
    pub plugin_type: String,
    /// `deviceID`, for SR-IOV.
    #[serde(default, rename = "deviceID")]
    pub device_id: String,
    /// The Pod interface MTU; the agent's default when absent.
    #[serde(default)]
    pub mtu: Option<u32>,
    /// DNS settings from the conflist.
    #[serde(default)]
    pub dns: Dns,
    /// The IPAM section, kept as JSON for the IPAM implementation to parse.
    #[serde(default)]
    pub ipam: Option<Value>,
    /// Capabilities the conflist enables (`{"dns": true}`).
    #[serde(default)]
    pub capabilities: Option<serde_json::Map<String, Value>>,
    /// Values the runtime injects for enabled capabilities.
    #[serde(default)]
    pub runtime_config: RuntimeConfig,
    /// The previous plugin's result (CHECK, DEL), in the configuration's version.
    #[serde(default)]
    pub prev_result: Option<Value>,
    /// GC: the attachments the runtime still uses.
    #[serde(default, rename = "cni.dev/valid-attachments")]
    pub valid_attachments: Option<Vec<Attachment>>,
}

/// DNS settings, as in a conflist `dns` and a result `dns`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dns {
    /// Name server addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nameservers: Vec<String>,
    /// The local domain.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// Search domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
    /// Resolver options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

impl Dns {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self == &Dns::default()
    }
}

/// `runtimeConfig`: capability arguments from the runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RuntimeConfig {
    /// The `dns` capability (kubelet's cluster DNS for the Pod).
    #[serde(default)]
    pub dns: RuntimeDns,
}

/// The `dns` capability's value. containerd 1.6 writes the keys capitalised (`Servers`,
/// `Searches`, `Options`: its Go struct's field names, docs/cni.md), which Go plugins accept
/// as their JSON decoding ignores case; both spellings are read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RuntimeDns {
    /// Name servers.
    #[serde(default, alias = "Servers")]
    pub servers: Vec<String>,
    /// Search domains.
    #[serde(default, alias = "Searches")]
    pub searches: Vec<String>,
    /// Resolver options.
    #[serde(default, alias = "Options")]
    pub options: Vec<String>,
}

/// One attachment in GC's `cni.dev/valid-attachments`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Attachment {
    /// The container ID.
    #[serde(rename = "containerID")]
    pub container_id: String,
    /// The interface name.
    pub ifname: String,
}

impl NetConf {
    /// Decodes stdin. Anything but a well-formed JSON object of the right shape is a decoding
    /// failure (code 6).
    pub fn parse(bytes: &[u8]) -> Result<NetConf, CniError> {
        let failure = |details: String| {
            CniError::new(code::DECODING_FAILURE, "Failed to decode network config")
                .with_details(details)
        };
        let value: Value = serde_json::from_slice(bytes).map_err(|e| failure(e.to_string()))?;
        if !value.is_object() {
            return Err(failure("not a JSON object".to_owned()));
        }
        NetConf::deserialize(value).map_err(|e| failure(e.to_string()))
    }

    /// The configuration's version, or the incompatible-version error (code 1).
    pub fn version(&self) -> Result<CniVersion, CniError> {
        CniVersion::negotiate(&self.cni_version)
    }

    /// The `ipam.type`, empty when absent.
    pub fn ipam_type(&self) -> &str {
        self.ipam
            .as_ref()
            .and_then(|i| i.get("type"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The DNS settings to give the Pod: the conflist's `dns`, with name servers, search domains
    /// and options replaced by the runtime's `dns` capability where that is non-empty.
    pub fn effective_dns(&self) -> Dns {
        let mut dns = self.dns.clone();
        let rt = &self.runtime_config.dns;
        if !rt.servers.is_empty() {
            dns.nameservers = rt.servers.clone();
        }
        if !rt.searches.is_empty() {
            dns.search = rt.searches.clone();
        }
        if !rt.options.is_empty() {
            dns.options = rt.options.clone();
        }
        dns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = r#"{
        "cniVersion": "0.3.0", "name": "antrea", "type": "antrea", "mtu": 1450, "unknownKey": [1],
        "dns": {"nameservers": ["1.1.1.1"], "search": ["conf.local"], "domain": "d"},
        "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.1.0.0/24"}]]},
        "capabilities": {"dns": true},
        "runtimeConfig": {"dns": {"servers": ["10.96.0.10"], "searches": ["ns.svc.cluster.local"]}},
        "prevResult": {"cniVersion": "0.3.0", "ips": []}
    }"#;

    #[test]
    fn decodes_the_fields_antrea_uses() {
        let c = NetConf::parse(CONF.as_bytes()).unwrap();
        assert_eq!(c.version(), Ok(CniVersion::V0_3_0));
        assert_eq!(
            (c.name.as_str(), c.plugin_type.as_str(), c.mtu),
            ("antrea", "antrea", Some(1450))
        );
        assert_eq!(c.ipam_type(), "host-local");
        assert_eq!(c.capabilities.as_ref().unwrap()["dns"], true);
        assert!(c.prev_result.is_some());
        let dns = c.effective_dns();
        assert_eq!(dns.nameservers, ["10.96.0.10"]);
        assert_eq!(dns.search, ["ns.svc.cluster.local"]);
        assert_eq!(dns.domain, "d");
    }

    #[test]
    fn runtime_dns_as_containerd_writes_it() {
        let c = NetConf::parse(
            br#"{"cniVersion":"1.0.0","runtimeConfig":{"dns":{"Servers":["10.96.0.10"],"Searches":["default.svc.cluster.local"],"Options":["ndots:5"]}}}"#,
        )
        .unwrap();
        let dns = c.effective_dns();
        assert_eq!(dns.nameservers, ["10.96.0.10"]);
        assert_eq!(dns.search, ["default.svc.cluster.local"]);
        assert_eq!(dns.options, ["ndots:5"]);
    }

    #[test]
    fn conflist_dns_is_kept_without_runtime_dns() {
        let c =
            NetConf::parse(br#"{"cniVersion":"1.0.0","dns":{"nameservers":["1.1.1.1"]}}"#).unwrap();
        assert_eq!(c.effective_dns().nameservers, ["1.1.1.1"]);
        assert!(c.prev_result.is_none() && c.ipam.is_none() && c.mtu.is_none());
    }

    #[test]
    fn gc_attachments_decode() {
        let c = NetConf::parse(
            br#"{"cniVersion":"1.1.0","cni.dev/valid-attachments":[{"containerID":"c1","ifname":"eth0"}]}"#,
        )
        .unwrap();
        assert_eq!(
            c.valid_attachments.unwrap(),
            [Attachment {
                container_id: "c1".into(),
                ifname: "eth0".into()
            }]
        );
    }

    #[test]
    fn malformed_json_is_code_6() {
        for bad in [&b"{"[..], b"[]", b"", b"{\"mtu\": -1}"] {
            assert_eq!(
                NetConf::parse(bad).unwrap_err().code,
                code::DECODING_FAILURE
            );
        }
    }
}
