//! The host-local IPAM configuration, read from a network configuration's `name` and `ipam`.

use std::path::PathBuf;

use cni::spec::Route;
use serde::Deserialize;
use serde_json::Value;

use crate::IpamError;
use crate::range::{RangeConf, RangeSet};

/// Where host-local keeps its store when `dataDir` is not set.
pub const DEFAULT_DATA_DIR: &str = if cfg!(windows) {
    r"C:\var\lib\cni\networks"
} else {
    "/var/lib/cni/networks"
};

/// A checked IPAM configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpamConfig {
    /// The network name; the store lives in `<data_dir>/<network>`.
    pub network: String,
    /// Range sets; an allocation takes one address from each.
    pub range_sets: Vec<RangeSet>,
    /// Routes returned with every allocation.
    pub routes: Vec<Route>,
    /// The store's parent directory.
    pub data_dir: PathBuf,
}

#[derive(Deserialize)]
struct NetConfWire {
    #[serde(default)]
    name: String,
    ipam: Option<IpamWire>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct IpamWire {
    #[serde(flatten)]
    legacy: RangeConf,
    #[serde(default)]
    ranges: Vec<Vec<RangeConf>>,
    #[serde(default)]
    routes: Vec<Route>,
    #[serde(default)]
    data_dir: String,
}

impl IpamConfig {
    /// Reads a whole network configuration (stdin of a CNI plugin).
    pub fn parse(netconf: &[u8]) -> Result<IpamConfig, IpamError> {
        let value: Value =
            serde_json::from_slice(netconf).map_err(|e| IpamError::config(e.to_string()))?;
        IpamConfig::from_netconf(&value)
    }

    /// Reads a network configuration already decoded as JSON (e.g. after the agent added its
    /// Pod CIDR range).
    pub fn from_netconf(netconf: &Value) -> Result<IpamConfig, IpamError> {
        let wire =
            NetConfWire::deserialize(netconf).map_err(|e| IpamError::config(e.to_string()))?;
        let ipam = wire
            .ipam
            .ok_or_else(|| IpamError::config("IPAM config missing 'ipam' key"))?;
        let mut confs = ipam.ranges;
        if ipam.legacy.subnet.is_some() {
            confs.insert(0, vec![ipam.legacy]);
        }
        if confs.is_empty() {
            return Err(IpamError::config("no IP ranges specified"));
        }
        let range_sets = confs
            .iter()
            .enumerate()
            .map(|(i, c)| {
                RangeSet::canonicalize(c)
                    .map_err(|e| IpamError::config(format!("invalid range set {i}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (i, a) in range_sets.iter().enumerate() {
            if let Some(j) = range_sets[i + 1..].iter().position(|b| a.overlaps(b)) {
                return Err(IpamError::config(format!(
                    "range set {i} overlaps with {}",
                    i + j + 1
                )));
            }
        }
        let data_dir = if ipam.data_dir.is_empty() {
            DEFAULT_DATA_DIR.into()
        } else {
            PathBuf::from(ipam.data_dir)
        };
        Ok(IpamConfig {
            network: wire.name,
            range_sets,
            routes: ipam.routes,
            data_dir,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<IpamConfig, String> {
        IpamConfig::parse(s.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn legacy_subnet_comes_first_then_ranges() {
        let c = parse(
            r#"{"name":"n","ipam":{"type":"host-local","subnet":"10.1.0.0/24","gateway":"10.1.0.254",
                "ranges":[[{"subnet":"fd00::/64"}]],"routes":[{"dst":"0.0.0.0/0"},{"dst":"10.9.0.0/16","gw":"10.1.0.9"}],
                "dataDir":"/tmp/x"}}"#,
        )
        .unwrap();
        assert_eq!(c.network, "n");
        assert_eq!(c.range_sets.len(), 2);
        assert_eq!(
            c.range_sets[0].ranges()[0].gateway.to_string(),
            "10.1.0.254"
        );
        assert!(!c.range_sets[1].is_ipv4());
        assert_eq!(c.routes[1].gw.unwrap().to_string(), "10.1.0.9");
        assert_eq!(c.data_dir, PathBuf::from("/tmp/x"));
        let defaults =
            parse(r#"{"name":"n","ipam":{"ranges":[[{"subnet":"10.1.0.0/24"}]]}}"#).unwrap();
        assert_eq!(defaults.data_dir, PathBuf::from(DEFAULT_DATA_DIR));
    }

    #[test]
    fn errors_use_host_local_wording() {
        assert_eq!(
            parse(r#"{"name":"n"}"#).unwrap_err(),
            "IPAM config missing 'ipam' key"
        );
        assert_eq!(
            parse(r#"{"name":"n","ipam":{"type":"host-local"}}"#).unwrap_err(),
            "no IP ranges specified"
        );
        assert_eq!(
            parse(r#"{"name":"n","ipam":{"ranges":[[{"subnet":"10.1.0.0/24"}],[{"subnet":"10.1.0.128/25"}]]}}"#).unwrap_err(),
            "range set 0 overlaps with 1"
        );
        assert_eq!(
            parse(r#"{"name":"n","ipam":{"ranges":[[{"subnet":"10.1.0.0/32"}]]}}"#).unwrap_err(),
            "invalid range set 0: Network 10.1.0.0/32 too small to allocate from"
        );
        assert!(parse(r#"{"name":"n","ipam":{"ranges":[[{"subnet":"bogus"}]]}}"#).is_err());
        assert!(parse("{").is_err());
    }
}
