//! The desired bridge and ports, and how they compare to the database's rows.

use std::collections::BTreeMap;

use model::MacAddr;
use ovsdb::vswitch::{BridgeRow, InterfaceRow, PortRow};

/// The `antrea-type` values of the Port `external_ids`, as Antrea writes them.
pub mod antrea_type {
    /// The key.
    pub const KEY: &str = "antrea-type";
    pub const UPLINK: &str = "uplink";
    pub const GATEWAY: &str = "gateway";
    pub const TUNNEL: &str = "tunnel";
    pub const CONTAINER: &str = "container";
}

/// The OpenFlow versions the bridge speaks: 1.5 for the agent, 1.0 for `ovs-ofctl`'s port
/// config (no-flood), as Antrea sets them.
pub const PROTOCOLS: [&str; 2] = ["OpenFlow10", "OpenFlow15"];

/// The bridge as the agent wants it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeWant {
    pub name: String,
    /// `system` or `netdev`.
    pub datapath_type: String,
    /// The NIC's MAC: the datapath id is `0000` followed by it (so attaching the NIC does not
    /// change the id) and the LOCAL port carries it (`other_config:hwaddr`).
    pub mac: MacAddr,
}

impl BridgeWant {
    /// The `other_config` entries the agent owns.
    pub fn other_config(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (
                "datapath-id".to_owned(),
                format!("{:016x}", self.datapath_id()),
            ),
            ("hwaddr".to_owned(), self.mac.to_string()),
        ])
    }

    /// The datapath id as a number.
    pub fn datapath_id(&self) -> u64 {
        self.mac.to_u64()
    }

    /// Whether `row` already is what the agent wants.
    pub fn matches(&self, row: &BridgeRow) -> bool {
        let mut protocols = row.protocols.clone();
        protocols.sort();
        row.datapath_type == self.datapath_type
            && protocols == PROTOCOLS
            && row.fail_mode.as_deref() == Some("secure")
            && self
                .other_config()
                .iter()
                .all(|(k, v)| row.other_config.get(k) == Some(v))
    }
}

/// A port with one interface as the agent wants it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PortWant {
    pub name: String,
    /// Interface type; `""` for a system interface.
    pub interface_type: String,
    pub options: BTreeMap<String, String>,
    pub ofport_request: Option<u16>,
    pub mtu_request: Option<u32>,
    /// The interface's `mac` column.
    pub mac: Option<String>,
    /// Port `external_ids` (with `antrea-type`).
    pub external_ids: BTreeMap<String, String>,
}

impl PortWant {
    /// A port named `name` marked `antrea-type=<kind>`.
    pub fn new(name: &str, kind: &str) -> PortWant {
        PortWant {
            name: name.to_owned(),
            external_ids: BTreeMap::from([(antrea_type::KEY.to_owned(), kind.to_owned())]),
            ..PortWant::default()
        }
    }

    /// Whether the interface row has the wanted type, options, requests and MAC.
    pub fn interface_matches(&self, row: &InterfaceRow, mac: Option<&str>) -> bool {
        row.interface_type == self.interface_type
            && row.options == self.options
            && row.ofport_request == self.ofport_request.map(i64::from)
            && row.mtu_request == self.mtu_request.map(i64::from)
            && (self.mac.is_none() || self.mac.as_deref() == mac)
    }

    /// Whether the port row has the wanted `external_ids` (others may be present too).
    pub fn port_matches(&self, row: &PortRow) -> bool {
        self.external_ids
            .iter()
            .all(|(k, v)| row.external_ids.get(k) == Some(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datapath_id_and_hwaddr_come_from_the_mac() {
        let want = BridgeWant {
            name: "br-int".into(),
            datapath_type: "netdev".into(),
            mac: MacAddr([2, 0, 0x0a, 0x0a, 0, 0x0b]),
        };
        let oc = want.other_config();
        assert_eq!(oc["datapath-id"], "000002000a0a000b");
        assert_eq!(oc["hwaddr"], "02:00:0a:0a:00:0b");
        assert_eq!(want.datapath_id(), 0x0000_0200_0a0a_000b);
    }
}
