//! What to create: [`BridgeSpec`] and [`PortSpec`], and the rows they become.

use std::collections::BTreeMap;

use crate::data::{Row, Uuid, Value};

/// What a bridge does when it has no controller connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailMode {
    /// Drop everything not matched by installed flows.
    Secure,
    /// Behave as a learning switch.
    Standalone,
}

impl FailMode {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            FailMode::Secure => "secure",
            FailMode::Standalone => "standalone",
        }
    }
}

/// A bridge to create.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BridgeSpec {
    /// Bridge name (also the name of its internal local port).
    pub name: String,
    /// `system`, `netdev` (userspace) or `None` for the default.
    pub datapath_type: Option<String>,
    /// OpenFlow versions (`OpenFlow10`, `OpenFlow13`, `OpenFlow15`, ...).
    pub protocols: Vec<String>,
    /// Fail mode.
    pub fail_mode: Option<FailMode>,
    /// Datapath id, written to `other_config:datapath-id` as 16 hex digits.
    pub datapath_id: Option<u64>,
    /// Further `other_config` entries.
    pub other_config: BTreeMap<String, String>,
    /// `external_ids`.
    pub external_ids: BTreeMap<String, String>,
}

impl BridgeSpec {
    /// A bridge with defaults for everything but its name.
    pub fn new(name: &str) -> BridgeSpec {
        BridgeSpec {
            name: name.to_owned(),
            ..Default::default()
        }
    }

    pub(crate) fn to_row(&self, local_port: crate::data::Atom) -> Row {
        let mut other_config = self.other_config.clone();
        if let Some(dpid) = self.datapath_id {
            other_config.insert("datapath-id".to_owned(), format!("{dpid:016x}"));
        }
        let mut row = Row::new()
            .with("name", self.name.as_str())
            .with(
                "protocols",
                Value::set(self.protocols.iter().map(String::as_str)),
            )
            .with("other_config", Value::string_map(&other_config))
            .with("external_ids", Value::string_map(&self.external_ids))
            .with("ports", Value::Set(vec![local_port]));
        if let Some(dp) = &self.datapath_type {
            row.set("datapath_type", dp.as_str());
        }
        if let Some(mode) = self.fail_mode {
            row.set("fail_mode", mode.as_str());
        }
        row
    }
}

/// A port with one interface to create.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PortSpec {
    /// Port and interface name.
    pub name: String,
    /// Interface type (`internal`, `patch`, `geneve`, ...); `None` for a system interface.
    pub interface_type: Option<String>,
    /// Interface `options`.
    pub options: BTreeMap<String, String>,
    /// Requested OpenFlow port number.
    pub ofport_request: Option<u16>,
    /// Requested MTU.
    pub mtu_request: Option<u32>,
    /// Interface `external_ids`.
    pub interface_external_ids: BTreeMap<String, String>,
    /// Port `external_ids`.
    pub port_external_ids: BTreeMap<String, String>,
}

impl PortSpec {
    /// A port with a system interface of the same name.
    pub fn new(name: &str) -> PortSpec {
        PortSpec {
            name: name.to_owned(),
            ..Default::default()
        }
    }

    /// An internal port.
    pub fn internal(name: &str) -> PortSpec {
        PortSpec {
            interface_type: Some("internal".to_owned()),
            ..PortSpec::new(name)
        }
    }

    pub(crate) fn interface_row(&self) -> Row {
        let mut row = Row::new()
            .with("name", self.name.as_str())
            .with("options", Value::string_map(&self.options))
            .with(
                "external_ids",
                Value::string_map(&self.interface_external_ids),
            );
        if let Some(t) = &self.interface_type {
            row.set("type", t.as_str());
        }
        if let Some(ofport) = self.ofport_request {
            row.set("ofport_request", i64::from(ofport));
        }
        if let Some(mtu) = self.mtu_request {
            row.set("mtu_request", i64::from(mtu));
        }
        row
    }

    pub(crate) fn port_row(&self, interface: crate::data::Atom) -> Row {
        Row::new()
            .with("name", self.name.as_str())
            .with("interfaces", Value::Set(vec![interface]))
            .with("external_ids", Value::string_map(&self.port_external_ids))
    }
}

/// The rows created for one [`PortSpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedPort {
    /// The Port row.
    pub port: Uuid,
    /// The Interface row.
    pub interface: Uuid,
}
