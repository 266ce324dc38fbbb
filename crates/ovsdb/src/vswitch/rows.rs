//! Typed views of Bridge, Port and Interface rows as read back from the server.

use std::collections::BTreeMap;

use crate::Error;
use crate::data::{Row, Uuid, Value};

/// A Bridge row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeRow {
    /// Row UUID.
    pub uuid: Uuid,
    /// Name.
    pub name: String,
    /// `datapath_type` (empty for the default).
    pub datapath_type: String,
    /// `datapath_id` as reported by ovs-vswitchd (hex digits), if any.
    pub datapath_id: Option<String>,
    /// `fail_mode`, if set.
    pub fail_mode: Option<String>,
    /// `protocols`.
    pub protocols: Vec<String>,
    /// Port rows.
    pub ports: Vec<Uuid>,
    /// `other_config`.
    pub other_config: BTreeMap<String, String>,
    /// `external_ids`.
    pub external_ids: BTreeMap<String, String>,
}

/// A Port row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortRow {
    /// Row UUID.
    pub uuid: Uuid,
    /// Name.
    pub name: String,
    /// Interface rows.
    pub interfaces: Vec<Uuid>,
    /// `external_ids`.
    pub external_ids: BTreeMap<String, String>,
}

/// An Interface row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceRow {
    /// Row UUID.
    pub uuid: Uuid,
    /// Name.
    pub name: String,
    /// `type` (empty for a system interface).
    pub interface_type: String,
    /// `options`.
    pub options: BTreeMap<String, String>,
    /// Assigned OpenFlow port (`-1` when creation failed), once ovs-vswitchd set it.
    pub ofport: Option<i64>,
    /// Requested OpenFlow port.
    pub ofport_request: Option<i64>,
    /// Requested MTU.
    pub mtu_request: Option<i64>,
    /// `external_ids`.
    pub external_ids: BTreeMap<String, String>,
    /// Why ovs-vswitchd could not create the interface.
    pub error: Option<String>,
}

struct Columns<'a> {
    table: &'static str,
    row: &'a Row,
}

impl<'a> Columns<'a> {
    fn value(&self, column: &str) -> Option<&'a Value> {
        self.row.get(column)
    }
    fn uuid(&self) -> Result<Uuid, Error> {
        self.row.uuid().ok_or_else(|| {
            Error::bad_reply("transact", format!("{} row without _uuid", self.table))
        })
    }
    fn name(&self) -> Result<String, Error> {
        self.string("name")
            .ok_or_else(|| Error::bad_reply("transact", format!("{} row without name", self.table)))
    }
    fn string(&self, column: &str) -> Option<String> {
        self.value(column)
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
    fn integer(&self, column: &str) -> Option<i64> {
        self.value(column).and_then(Value::as_integer)
    }
    fn strings(&self, column: &str) -> Vec<String> {
        self.value(column).map(Value::strings).unwrap_or_default()
    }
    fn uuids(&self, column: &str) -> Vec<Uuid> {
        self.value(column).map(Value::uuids).unwrap_or_default()
    }
    fn map(&self, column: &str) -> BTreeMap<String, String> {
        self.value(column)
            .map(Value::to_string_map)
            .unwrap_or_default()
    }
}

impl BridgeRow {
    /// Reads a selected Bridge row (`_uuid` and `name` are required).
    pub fn from_row(row: &Row) -> Result<BridgeRow, Error> {
        let c = Columns {
            table: "Bridge",
            row,
        };
        Ok(BridgeRow {
            uuid: c.uuid()?,
            name: c.name()?,
            datapath_type: c.string("datapath_type").unwrap_or_default(),
            datapath_id: c.string("datapath_id"),
            fail_mode: c.string("fail_mode"),
            protocols: c.strings("protocols"),
            ports: c.uuids("ports"),
            other_config: c.map("other_config"),
            external_ids: c.map("external_ids"),
        })
    }
}

impl PortRow {
    /// Reads a selected Port row.
    pub fn from_row(row: &Row) -> Result<PortRow, Error> {
        let c = Columns { table: "Port", row };
        Ok(PortRow {
            uuid: c.uuid()?,
            name: c.name()?,
            interfaces: c.uuids("interfaces"),
            external_ids: c.map("external_ids"),
        })
    }
}

impl InterfaceRow {
    /// Reads a selected Interface row.
    pub fn from_row(row: &Row) -> Result<InterfaceRow, Error> {
        let c = Columns {
            table: "Interface",
            row,
        };
        Ok(InterfaceRow {
            uuid: c.uuid()?,
            name: c.name()?,
            interface_type: c.string("type").unwrap_or_default(),
            options: c.map("options"),
            ofport: c.integer("ofport"),
            ofport_request: c.integer("ofport_request"),
            mtu_request: c.integer("mtu_request"),
            external_ids: c.map("external_ids"),
            error: c.string("error"),
        })
    }
}
