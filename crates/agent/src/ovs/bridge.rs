//! [`OvsBridge`]: reads the bridge's rows, writes only what differs from what the agent wants,
//! and counts the write transactions.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hostnet::Outcome;
use localipc::Endpoint;
use ovsdb::data::{Atom, Value};
use ovsdb::txn::{Condition, Mutation, Mutator, Transaction};
use ovsdb::vswitch::{
    BridgeSpec, DATABASE, FailMode, InterfaceRow, OfportWatch, PortRow, PortSpec, VswitchClient,
};
use ovsdb::{Client, ClientConfig};

use super::want::{BridgeWant, PROTOCOLS, PortWant};
use crate::error::AgentError;

type Result<T> = std::result::Result<T, AgentError>;

/// One bridge in one OVS database.
#[derive(Debug, Clone)]
pub struct OvsBridge {
    vs: VswitchClient,
    name: String,
    writes: Arc<AtomicU64>,
}

impl OvsBridge {
    /// Connects to the database at `endpoint` for bridge `name`.
    pub async fn connect(endpoint: Endpoint, name: &str) -> Result<OvsBridge> {
        let what = format!("connection to {endpoint}");
        let client = Client::connect(endpoint, ClientConfig::default())
            .await
            .map_err(AgentError::ovsdb(what))?;
        Ok(OvsBridge {
            vs: VswitchClient::new(client),
            name: name.to_owned(),
            writes: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The bridge's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The state of the connection to the database, from now on.
    pub fn connection_state(&self) -> tokio::sync::watch::Receiver<ovsdb::ConnectionState> {
        self.vs.client().connection_state()
    }

    /// Write transactions sent so far.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    async fn write(
        &self,
        t: &Transaction,
        what: impl Into<String>,
    ) -> Result<ovsdb::txn::TransactOutcome> {
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.vs
            .client()
            .transact(t)
            .await
            .map_err(AgentError::ovsdb(what))
    }

    /// Creates the bridge, or corrects the columns the agent owns.
    pub async fn ensure_bridge(&self, want: &BridgeWant) -> Result<Outcome> {
        let what = format!("bridge {}", want.name);
        match self
            .vs
            .get_bridge(&want.name)
            .await
            .map_err(AgentError::ovsdb(what.clone()))?
        {
            Some(row) if want.matches(&row) => Ok(Outcome::Unchanged),
            Some(_) => {
                let mut t = Transaction::new(DATABASE);
                let keys: Vec<String> = want.other_config().into_keys().collect();
                t.update(
                    "Bridge",
                    vec![Condition::eq("name", want.name.as_str())],
                    ovsdb::data::Row::new()
                        .with("datapath_type", want.datapath_type.as_str())
                        .with("protocols", Value::set(PROTOCOLS))
                        .with("fail_mode", FailMode::Secure.as_str()),
                );
                t.mutate(
                    "Bridge",
                    vec![Condition::eq("name", want.name.as_str())],
                    vec![
                        Mutation::new(
                            "other_config",
                            Mutator::Delete,
                            Value::set(keys.iter().map(String::as_str)),
                        ),
                        Mutation::new(
                            "other_config",
                            Mutator::Insert,
                            Value::string_map(&want.other_config()),
                        ),
                    ],
                );
                self.write(&t, format!("update of {what}")).await?;
                Ok(Outcome::Changed)
            }
            None => {
                let spec = BridgeSpec {
                    datapath_type: Some(want.datapath_type.clone()),
                    protocols: PROTOCOLS.iter().map(|p| p.to_string()).collect(),
                    fail_mode: Some(FailMode::Secure),
                    other_config: want.other_config(),
                    ..BridgeSpec::new(&want.name)
                };
                self.writes.fetch_add(1, Ordering::Relaxed);
                self.vs
                    .create_bridge(&spec)
                    .await
                    .map_err(AgentError::ovsdb(format!("creation of {what}")))?;
                Ok(Outcome::Changed)
            }
        }
    }

    /// The bridge's `external_ids` value under `key`.
    pub async fn external_id(&self, key: &str) -> Result<Option<String>> {
        let row = self
            .vs
            .get_bridge(&self.name)
            .await
            .map_err(AgentError::ovsdb(format!("bridge {}", self.name)))?;
        Ok(row.and_then(|r| r.external_ids.get(key).cloned()))
    }

    /// Sets the bridge's `external_ids` `key` to `value`.
    pub async fn set_external_id(&self, key: &str, value: &str) -> Result<Outcome> {
        if self.external_id(key).await?.as_deref() == Some(value) {
            return Ok(Outcome::Unchanged);
        }
        let mut t = Transaction::new(DATABASE);
        t.mutate(
            "Bridge",
            vec![Condition::eq("name", self.name.as_str())],
            vec![
                Mutation::new("external_ids", Mutator::Delete, Value::set([key])),
                Mutation::new(
                    "external_ids",
                    Mutator::Insert,
                    Value::Map(vec![(Atom::from(key), Atom::from(value))]),
                ),
            ],
        );
        self.write(&t, format!("external_ids:{key} of bridge {}", self.name))
            .await?;
        Ok(Outcome::Changed)
    }

    /// Creates the port, or corrects its interface columns and `external_ids`. The creation is
    /// tried first (one transaction, what a new Pod needs); only when the name is taken are the
    /// existing rows read and corrected.
    pub async fn ensure_port(&self, want: &PortWant) -> Result<Outcome> {
        let what = format!("port {}", want.name);
        let spec = PortSpec {
            interface_type: (!want.interface_type.is_empty()).then(|| want.interface_type.clone()),
            options: want.options.clone(),
            ofport_request: want.ofport_request,
            mtu_request: want.mtu_request,
            port_external_ids: want.external_ids.clone(),
            ..PortSpec::new(&want.name)
        };
        match self.vs.create_port(&self.name, &spec).await {
            Ok(_) => {
                self.writes.fetch_add(1, Ordering::Relaxed);
                if let Some(mac) = &want.mac {
                    self.update_interface(
                        &want.name,
                        ovsdb::data::Row::new().with("mac", mac.as_str()),
                    )
                    .await?;
                }
                return Ok(Outcome::Changed);
            }
            Err(ovsdb::Error::Transaction(taken)) if taken.is_constraint_violation() => {}
            Err(e) => return Err(AgentError::ovsdb(format!("creation of {what}"))(e)),
        }
        let (port, iface) = self.port_and_interface(&want.name).await?;
        let (port, iface) = match (port, iface) {
            (Some(port), Some(iface)) => (port, iface),
            (port, iface) => {
                return Err(AgentError::PortNameTaken {
                    name: want.name.clone(),
                    port: port.is_some(),
                    interface: iface.is_some(),
                });
            }
        };
        let (iface, mac) = iface;
        let mut outcome = Outcome::Unchanged;
        if !want.interface_matches(&iface, mac.as_deref()) {
            let mut row = ovsdb::data::Row::new()
                .with("type", want.interface_type.as_str())
                .with("options", Value::string_map(&want.options))
                .with(
                    "ofport_request",
                    optional(want.ofport_request.map(i64::from)),
                )
                .with("mtu_request", optional(want.mtu_request.map(i64::from)));
            if let Some(mac) = &want.mac {
                row.set("mac", mac.as_str());
            }
            self.update_interface(&want.name, row).await?;
            outcome = Outcome::Changed;
        }
        if !want.port_matches(&port) {
            let keys: Vec<&str> = want.external_ids.keys().map(String::as_str).collect();
            let mut t = Transaction::new(DATABASE);
            t.mutate(
                "Port",
                vec![Condition::eq("name", want.name.as_str())],
                vec![
                    Mutation::new("external_ids", Mutator::Delete, Value::set(keys)),
                    Mutation::new(
                        "external_ids",
                        Mutator::Insert,
                        Value::string_map(&want.external_ids),
                    ),
                ],
            );
            self.write(&t, format!("external_ids of {what}")).await?;
            outcome = Outcome::Changed;
        }
        Ok(outcome)
    }

    /// Sets the `mtu_request` of an interface (the bridge's LOCAL one, whose MTU OVS would
    /// otherwise lower to the smallest port's).
    pub async fn ensure_mtu_request(&self, interface: &str, mtu: u32) -> Result<Outcome> {
        let row = self.interface(interface).await?;
        if row.mtu_request == Some(i64::from(mtu)) {
            return Ok(Outcome::Unchanged);
        }
        self.update_interface(
            interface,
            ovsdb::data::Row::new().with("mtu_request", i64::from(mtu)),
        )
        .await?;
        Ok(Outcome::Changed)
    }

    /// Removes a port; false when it did not exist.
    pub async fn delete_port(&self, name: &str) -> Result<bool> {
        if self
            .vs
            .get_port(name)
            .await
            .map_err(AgentError::ovsdb(format!("port {name}")))?
            .is_none()
        {
            return Ok(false);
        }
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.vs
            .delete_port(&self.name, name)
            .await
            .map_err(AgentError::ovsdb(format!("deletion of port {name}")))
    }

    /// Starts watching the interface for its OpenFlow port; start it before creating the
    /// interface, then [`OfportWatch::wait`].
    pub async fn watch_ofport(&self, interface: &str) -> Result<OfportWatch> {
        self.vs
            .watch_ofport(interface)
            .await
            .map_err(AgentError::ovsdb(format!(
                "watch on the OpenFlow port of {interface}"
            )))
    }

    /// Waits until OVS gives the interface an OpenFlow port.
    pub async fn wait_for_ofport(&self, interface: &str, timeout: Duration) -> Result<u32> {
        self.vs
            .wait_for_ofport(interface, timeout)
            .await
            .map_err(AgentError::ovsdb(format!("OpenFlow port of {interface}")))
    }

    /// The ports marked `antrea-type=<kind>`, each with its interface.
    pub async fn ports_of_type(&self, kind: &str) -> Result<Vec<(PortRow, InterfaceRow)>> {
        let what = format!("ports of type {kind}");
        let ports = self
            .vs
            .ports_with_external_id(super::antrea_type::KEY, kind)
            .await
            .map_err(AgentError::ovsdb(what))?;
        let mut out = Vec::with_capacity(ports.len());
        for port in ports {
            let iface = self.interface(&port.name).await?;
            out.push((port, iface));
        }
        Ok(out)
    }

    async fn interface(&self, name: &str) -> Result<InterfaceRow> {
        let what = format!("interface {name}");
        self.vs
            .get_interface(name)
            .await
            .map_err(AgentError::ovsdb(what.clone()))?
            .ok_or_else(|| AgentError::Ovsdb {
                what,
                source: ovsdb::Error::InterfaceNotFound(name.to_owned()),
            })
    }

    /// The port and the interface named `name` (with the interface's `mac` column), read in
    /// one transaction.
    async fn port_and_interface(
        &self,
        name: &str,
    ) -> Result<(Option<PortRow>, Option<(InterfaceRow, Option<String>)>)> {
        let what = format!("port {name}");
        let mut t = Transaction::new(DATABASE);
        let port_op = t.select("Port", vec![Condition::eq("name", name)], None);
        let iface_op = t.select("Interface", vec![Condition::eq("name", name)], None);
        let out = self
            .vs
            .client()
            .transact(&t)
            .await
            .map_err(AgentError::ovsdb(what.clone()))?;
        let first = |op| out.rows(op).and_then(|rows| rows.first());
        let port = first(port_op)
            .map(PortRow::from_row)
            .transpose()
            .map_err(AgentError::ovsdb(what.clone()))?;
        let iface = first(iface_op)
            .map(|row| {
                let mac = row
                    .get("mac")
                    .and_then(Value::optional)
                    .and_then(|a| a.as_str().map(str::to_owned));
                InterfaceRow::from_row(row).map(|iface| (iface, mac))
            })
            .transpose()
            .map_err(AgentError::ovsdb(what))?;
        Ok((port, iface))
    }

    async fn update_interface(&self, name: &str, row: ovsdb::data::Row) -> Result<()> {
        let mut t = Transaction::new(DATABASE);
        t.update("Interface", vec![Condition::eq("name", name)], row);
        self.write(&t, format!("update of interface {name}"))
            .await?;
        Ok(())
    }
}

/// An optional integer column: the value, or the empty set.
fn optional(v: Option<i64>) -> Value {
    match v {
        Some(v) => Value::from(v),
        None => Value::empty(),
    }
}
