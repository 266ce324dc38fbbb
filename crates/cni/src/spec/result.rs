//! The ADD result in one model (the 1.1.0 superset) and its JSON form for each spec version.
//!
//! Conversion rules: 1.1.0 prints everything; 1.0.0 drops the 1.1-only interface fields
//! (`mtu`, `socketPath`, `pciID`) and route fields (`mtu`, `advmss`, `priority`, `table`,
//! `scope`); 0.3.0/0.3.1/0.4.0 additionally add `"version": "4"|"6"` to every IP and keep only
//! `name`/`mac`/`sandbox` on interfaces and `dst`/`gw` on routes. `dns` is always present, as in
//! libcni's output.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{CniError, CniVersion, Dns, code};

/// A plugin's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CniResult {
    /// Interfaces created (host side first, then the container side, by Antrea's convention).
    pub interfaces: Vec<Interface>,
    /// Addresses assigned.
    pub ips: Vec<IpConfig>,
    /// Routes to install in the container.
    pub routes: Vec<Route>,
    /// DNS settings for the container.
    pub dns: Dns,
}

/// An interface in a result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interface {
    /// Interface name.
    pub name: String,
    /// MAC address, `aa:bb:…`.
    #[serde(default)]
    pub mac: String,
    /// MTU (1.1.0).
    #[serde(default)]
    pub mtu: Option<u32>,
    /// The container's netns (empty for host-side interfaces).
    #[serde(default)]
    pub sandbox: String,
    /// vhost-user socket path (1.1.0).
    #[serde(default)]
    pub socket_path: String,
    /// PCI ID of a device (1.1.0).
    #[serde(default, rename = "pciID")]
    pub pci_id: String,
}

/// An address in a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct IpConfig {
    /// Address with the subnet's prefix length (host bits kept: `10.1.0.5/24`).
    #[serde(deserialize_with = "super::cidr::deserialize")]
    pub address: IpNet,
    /// The subnet's gateway.
    #[serde(default)]
    pub gateway: Option<IpAddr>,
    /// Index into `interfaces` of the interface holding the address.
    #[serde(default)]
    pub interface: Option<u32>,
}

/// A route in a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Route {
    /// Destination.
    #[serde(deserialize_with = "super::cidr::deserialize")]
    pub dst: IpNet,
    /// Next hop; the default gateway when absent.
    #[serde(default)]
    pub gw: Option<IpAddr>,
    /// Route MTU (1.1.0).
    #[serde(default)]
    pub mtu: Option<u32>,
    /// Advertised MSS (1.1.0).
    #[serde(default)]
    pub advmss: Option<u32>,
    /// Route priority (1.1.0).
    #[serde(default)]
    pub priority: Option<u32>,
    /// Routing table (1.1.0).
    #[serde(default)]
    pub table: Option<u32>,
    /// Route scope (1.1.0).
    #[serde(default)]
    pub scope: Option<u32>,
}

impl Route {
    /// A route to `dst` via `gw` with no 1.1 attributes.
    pub fn new(dst: IpNet, gw: Option<IpAddr>) -> Route {
        Route {
            dst,
            gw,
            mtu: None,
            advmss: None,
            priority: None,
            table: None,
            scope: None,
        }
    }
}

/// The JSON layout of a result in any supported version; used for decoding.
#[derive(Deserialize)]
struct Wire {
    #[serde(default)]
    interfaces: Vec<Interface>,
    #[serde(default)]
    ips: Vec<IpConfig>,
    #[serde(default)]
    routes: Vec<Route>,
    #[serde(default)]
    dns: Dns,
}

impl CniResult {
    /// The result as printed for `version`.
    pub fn to_json(&self, version: CniVersion) -> Value {
        let v11 = version >= CniVersion::V1_1_0;
        let legacy = version.has_legacy_result();
        let mut out = Map::new();
        out.insert("cniVersion".into(), json!(version.as_str()));
        if !self.interfaces.is_empty() {
            let list = self.interfaces.iter().map(|i| {
                let mut o = Map::new();
                o.insert("name".into(), json!(i.name));
                put_str(&mut o, "mac", &i.mac);
                if v11 {
                    put_num(&mut o, "mtu", i.mtu);
                }
                put_str(&mut o, "sandbox", &i.sandbox);
                if v11 {
                    put_str(&mut o, "socketPath", &i.socket_path);
                    put_str(&mut o, "pciID", &i.pci_id);
                }
                Value::Object(o)
            });
            out.insert("interfaces".into(), Value::Array(list.collect()));
        }
        if !self.ips.is_empty() {
            let list = self.ips.iter().map(|ip| {
                let mut o = Map::new();
                if legacy {
                    o.insert(
                        "version".into(),
                        json!(if ip.address.addr().is_ipv4() {
                            "4"
                        } else {
                            "6"
                        }),
                    );
                }
                put_num(&mut o, "interface", ip.interface);
                o.insert("address".into(), json!(ip.address.to_string()));
                if let Some(gw) = ip.gateway {
                    o.insert("gateway".into(), json!(gw.to_string()));
                }
                Value::Object(o)
            });
            out.insert("ips".into(), Value::Array(list.collect()));
        }
        if !self.routes.is_empty() {
            let list = self.routes.iter().map(|r| {
                let mut o = Map::new();
                o.insert("dst".into(), json!(r.dst.to_string()));
                if let Some(gw) = r.gw {
                    o.insert("gw".into(), json!(gw.to_string()));
                }
                if v11 {
                    put_num(&mut o, "mtu", r.mtu);
                    put_num(&mut o, "advmss", r.advmss);
                    put_num(&mut o, "priority", r.priority);
                    put_num(&mut o, "table", r.table);
                    put_num(&mut o, "scope", r.scope);
                }
                Value::Object(o)
            });
            out.insert("routes".into(), Value::Array(list.collect()));
        }
        out.insert(
            "dns".into(),
            serde_json::to_value(&self.dns).unwrap_or_else(|_| json!({})),
        );
        Value::Object(out)
    }

    /// The result printed as bytes for `version`.
    pub fn to_bytes(&self, version: CniVersion) -> Vec<u8> {
        self.to_json(version).to_string().into_bytes()
    }

    /// Decodes a result (e.g. `prevResult`) of any supported version. The 0.3.x/0.4.0 `version`
    /// field is ignored (the address says the family). Failures are code 6.
    pub fn from_json(value: &Value) -> Result<CniResult, CniError> {
        if let Some(v) = value.get("cniVersion").and_then(Value::as_str) {
            CniVersion::negotiate(v)?;
        }
        let wire = Wire::deserialize(value).map_err(|e| {
            CniError::new(code::DECODING_FAILURE, "Failed to decode prevResult")
                .with_details(e.to_string())
        })?;
        Ok(CniResult {
            interfaces: wire.interfaces,
            ips: wire.ips,
            routes: wire.routes,
            dns: wire.dns,
        })
    }
}

fn put_str(o: &mut Map<String, Value>, key: &str, value: &str) {
    if !value.is_empty() {
        o.insert(key.into(), json!(value));
    }
}

fn put_num(o: &mut Map<String, Value>, key: &str, value: Option<u32>) {
    if let Some(v) = value {
        o.insert(key.into(), json!(v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::parse_cidr;

    fn sample() -> CniResult {
        CniResult {
            interfaces: vec![
                Interface {
                    name: "web-7975-274540".into(),
                    mac: "00:15:5d:01:02:03".into(),
                    mtu: Some(1450),
                    ..Default::default()
                },
                Interface {
                    name: "eth0".into(),
                    mac: "00:15:5d:01:02:03".into(),
                    mtu: Some(1450),
                    sandbox: "ns-guid".into(),
                    socket_path: "/s".into(),
                    pci_id: "0000:00:01.0".into(),
                },
            ],
            ips: vec![
                IpConfig {
                    address: parse_cidr("10.1.0.5/24").unwrap(),
                    gateway: "10.1.0.1".parse().ok(),
                    interface: Some(1),
                },
                IpConfig {
                    address: parse_cidr("fd00::5/64").unwrap(),
                    gateway: None,
                    interface: Some(1),
                },
            ],
            routes: vec![Route {
                mtu: Some(1400),
                advmss: Some(1360),
                priority: Some(5),
                table: Some(100),
                scope: Some(0),
                ..Route::new(parse_cidr("0.0.0.0/0").unwrap(), "10.1.0.1".parse().ok())
            }],
            dns: Dns {
                nameservers: vec!["10.96.0.10".into()],
                search: vec!["svc.cluster.local".into()],
                ..Default::default()
            },
        }
    }

    #[test]
    fn v1_1_prints_every_field() {
        let j = sample().to_json(CniVersion::V1_1_0);
        assert_eq!(j["cniVersion"], "1.1.0");
        assert_eq!(
            j["interfaces"][1],
            json!({"name":"eth0","mac":"00:15:5d:01:02:03","mtu":1450,"sandbox":"ns-guid","socketPath":"/s","pciID":"0000:00:01.0"})
        );
        assert_eq!(
            j["interfaces"][0],
            json!({"name":"web-7975-274540","mac":"00:15:5d:01:02:03","mtu":1450})
        );
        assert_eq!(
            j["ips"][0],
            json!({"interface":1,"address":"10.1.0.5/24","gateway":"10.1.0.1"})
        );
        assert_eq!(j["ips"][1], json!({"interface":1,"address":"fd00::5/64"}));
        assert_eq!(
            j["routes"][0],
            json!({"dst":"0.0.0.0/0","gw":"10.1.0.1","mtu":1400,"advmss":1360,"priority":5,"table":100,"scope":0})
        );
        assert_eq!(
            j["dns"],
            json!({"nameservers":["10.96.0.10"],"search":["svc.cluster.local"]})
        );
    }

    #[test]
    fn v1_0_drops_1_1_fields() {
        let j = sample().to_json(CniVersion::V1_0_0);
        assert_eq!(
            j["interfaces"][1],
            json!({"name":"eth0","mac":"00:15:5d:01:02:03","sandbox":"ns-guid"})
        );
        assert_eq!(
            j["ips"][0],
            json!({"interface":1,"address":"10.1.0.5/24","gateway":"10.1.0.1"})
        );
        assert_eq!(j["routes"][0], json!({"dst":"0.0.0.0/0","gw":"10.1.0.1"}));
    }

    #[test]
    fn legacy_versions_add_ip_version() {
        for v in [CniVersion::V0_3_0, CniVersion::V0_3_1, CniVersion::V0_4_0] {
            let j = sample().to_json(v);
            assert_eq!(j["cniVersion"], v.as_str());
            assert_eq!(
                j["ips"][0],
                json!({"version":"4","interface":1,"address":"10.1.0.5/24","gateway":"10.1.0.1"})
            );
            assert_eq!(
                j["ips"][1],
                json!({"version":"6","interface":1,"address":"fd00::5/64"})
            );
            assert_eq!(
                j["interfaces"][1],
                json!({"name":"eth0","mac":"00:15:5d:01:02:03","sandbox":"ns-guid"})
            );
            assert_eq!(j["routes"][0], json!({"dst":"0.0.0.0/0","gw":"10.1.0.1"}));
        }
    }

    #[test]
    fn empty_result_has_only_version_and_dns() {
        assert_eq!(
            CniResult::default().to_json(CniVersion::V1_0_0),
            json!({"cniVersion":"1.0.0","dns":{}})
        );
    }

    #[test]
    fn round_trips_through_every_version_minus_dropped_fields() {
        let full = sample();
        assert_eq!(
            CniResult::from_json(&full.to_json(CniVersion::V1_1_0)).unwrap(),
            full
        );
        let legacy = CniResult::from_json(&full.to_json(CniVersion::V0_3_0)).unwrap();
        assert_eq!(legacy.ips, full.ips);
        assert_eq!(legacy.interfaces[1].mtu, None);
        assert_eq!(
            legacy.routes[0],
            Route::new(full.routes[0].dst, full.routes[0].gw)
        );
    }

    #[test]
    fn bad_prev_results_are_rejected() {
        assert_eq!(
            CniResult::from_json(&json!({"ips":[{"address":"10.0.0.1"}]}))
                .unwrap_err()
                .code,
            code::DECODING_FAILURE
        );
        assert_eq!(
            CniResult::from_json(&json!({"ips": 5})).unwrap_err().code,
            code::DECODING_FAILURE
        );
        assert_eq!(
            CniResult::from_json(&json!({"cniVersion":"0.2.0"}))
                .unwrap_err()
                .code,
            code::INCOMPATIBLE_CNI_VERSION
        );
    }
}
