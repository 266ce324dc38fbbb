//! [`VswitchClient`]: bridge, port and interface operations on the `Open_vSwitch` database,
//! each one transaction (plus a lookup where a UUID must be found first).

use std::collections::BTreeMap;
use std::time::Duration;

use super::{
    BridgeRow, BridgeSpec, CreatedPort, DATABASE, InterfaceRow, OfportWatch, PortRow, PortSpec,
};
use crate::data::{Atom, Row, Uuid, Value};
use crate::txn::{Condition, Function, Mutation, Mutator, OpIndex, Transaction, WaitUntil};
use crate::{Client, Error};

/// Open_vSwitch operations over a [`Client`].
#[derive(Debug, Clone)]
pub struct VswitchClient {
    client: Client,
}

impl VswitchClient {
    /// Wraps a connected client.
    pub fn new(client: Client) -> VswitchClient {
        VswitchClient { client }
    }

    /// The underlying client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Creates a bridge with its internal local port (as `ovs-vsctl add-br` does) and adds it
    /// to `Open_vSwitch.bridges`. If a bridge with that name exists, returns its UUID unchanged.
    pub async fn create_bridge(&self, spec: &BridgeSpec) -> Result<Uuid, Error> {
        if let Some(existing) = self.get_bridge(&spec.name).await? {
            return Ok(existing.uuid);
        }
        let mut t = Transaction::new(DATABASE);
        let local = PortSpec::internal(&spec.name);
        let (_, iface) = t.insert_named("Interface", local.interface_row());
        let (_, port) = t.insert_named("Port", local.port_row(iface));
        let (bridge_op, bridge) = t.insert_named("Bridge", spec.to_row(port));
        t.mutate(
            "Open_vSwitch",
            vec![],
            vec![Mutation::new(
                "bridges",
                Mutator::Insert,
                Value::Set(vec![bridge]),
            )],
        );
        match self.client.transact(&t).await {
            Ok(out) => out
                .inserted(bridge_op)
                .ok_or_else(|| Error::bad_reply("transact", "bridge insert without uuid")),
            // Created concurrently by someone else between our lookup and insert.
            Err(Error::Transaction(e)) if e.is_constraint_violation() => {
                match self.get_bridge(&spec.name).await? {
                    Some(b) => Ok(b.uuid),
                    None => Err(Error::Transaction(e)),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Removes a bridge (its ports and interfaces go with it). Returns false if it did not exist.
    pub async fn delete_bridge(&self, name: &str) -> Result<bool, Error> {
        let Some(bridge) = self.get_bridge(name).await? else {
            return Ok(false);
        };
        let mut t = Transaction::new(DATABASE);
        t.mutate(
            "Open_vSwitch",
            vec![],
            vec![Mutation::new(
                "bridges",
                Mutator::Delete,
                Value::set([bridge.uuid]),
            )],
        );
        self.client.transact(&t).await?;
        Ok(true)
    }

    /// Creates one port with its interface on `bridge`.
    pub async fn create_port(&self, bridge: &str, spec: &PortSpec) -> Result<CreatedPort, Error> {
        let created = self
            .create_ports(bridge, std::slice::from_ref(spec))
            .await?;
        created
            .into_iter()
            .next()
            .ok_or_else(|| Error::bad_reply("transact", "no port created"))
    }

    /// Creates many ports (each with one interface) on `bridge` in one transaction; fails as a
    /// whole with [`Error::BridgeNotFound`] or the server's error (e.g. a duplicate name).
    pub async fn create_ports(
        &self,
        bridge: &str,
        specs: &[PortSpec],
    ) -> Result<Vec<CreatedPort>, Error> {
        let mut t = Transaction::new(DATABASE);
        let exists = bridge_exists_wait(&mut t, bridge);
        let mut indexes = Vec::with_capacity(specs.len());
        let mut ports = Vec::with_capacity(specs.len());
        for spec in specs {
            let (iface_op, iface) = t.insert_named("Interface", spec.interface_row());
            let (port_op, port) = t.insert_named("Port", spec.port_row(iface));
            indexes.push((port_op, iface_op));
            ports.push(port);
        }
        t.mutate(
            "Bridge",
            vec![Condition::eq("name", bridge)],
            vec![Mutation::new("ports", Mutator::Insert, Value::Set(ports))],
        );
        let out = self
            .client
            .transact(&t)
            .await
            .map_err(|e| bridge_missing(e, exists, bridge))?;
        indexes
            .into_iter()
            .map(|(p, i)| match (out.inserted(p), out.inserted(i)) {
                (Some(port), Some(interface)) => Ok(CreatedPort { port, interface }),
                _ => Err(Error::bad_reply("transact", "port insert without uuid")),
            })
            .collect()
    }

    /// Removes a port (and its interfaces) from `bridge`. Returns false if no such port.
    pub async fn delete_port(&self, bridge: &str, port: &str) -> Result<bool, Error> {
        Ok(self.delete_ports(bridge, &[port]).await? == 1)
    }

    /// Removes ports by name from `bridge` in one transaction; returns how many existed.
    pub async fn delete_ports(&self, bridge: &str, ports: &[&str]) -> Result<usize, Error> {
        let mut lookup = Transaction::new(DATABASE);
        let selects: Vec<OpIndex> = ports
            .iter()
            .map(|p| lookup.select("Port", vec![Condition::eq("name", *p)], Some(&["_uuid"])))
            .collect();
        let found = self.client.transact(&lookup).await?;
        let uuids: Vec<Atom> = selects
            .iter()
            .flat_map(|i| found.rows(*i).unwrap_or_default())
            .filter_map(Row::uuid)
            .map(Atom::Uuid)
            .collect();
        if uuids.is_empty() {
            return Ok(0);
        }
        let count = uuids.len();
        let mut t = Transaction::new(DATABASE);
        let exists = bridge_exists_wait(&mut t, bridge);
        t.mutate(
            "Bridge",
            vec![Condition::eq("name", bridge)],
            vec![Mutation::new("ports", Mutator::Delete, Value::Set(uuids))],
        );
        self.client
            .transact(&t)
            .await
            .map_err(|e| bridge_missing(e, exists, bridge))?;
        Ok(count)
    }

    /// Sets an interface's `type`.
    pub async fn set_interface_type(
        &self,
        interface: &str,
        interface_type: &str,
    ) -> Result<(), Error> {
        self.update_interface(interface, Row::new().with("type", interface_type))
            .await
    }

    /// Replaces an interface's `options`.
    pub async fn set_interface_options(
        &self,
        interface: &str,
        options: &BTreeMap<String, String>,
    ) -> Result<(), Error> {
        self.update_interface(
            interface,
            Row::new().with("options", Value::string_map(options)),
        )
        .await
    }

    /// Replaces an interface's `external_ids`.
    pub async fn set_interface_external_ids(
        &self,
        interface: &str,
        ids: &BTreeMap<String, String>,
    ) -> Result<(), Error> {
        self.update_interface(
            interface,
            Row::new().with("external_ids", Value::string_map(ids)),
        )
        .await
    }

    /// Replaces a port's `external_ids`.
    pub async fn set_port_external_ids(
        &self,
        port: &str,
        ids: &BTreeMap<String, String>,
    ) -> Result<(), Error> {
        let mut t = Transaction::new(DATABASE);
        let op = t.update(
            "Port",
            vec![Condition::eq("name", port)],
            Row::new().with("external_ids", Value::string_map(ids)),
        );
        match self.client.transact(&t).await?.count(op) {
            Some(0) => Err(Error::bad_reply(
                "transact",
                format!("port {port:?} does not exist"),
            )),
            _ => Ok(()),
        }
    }

    async fn update_interface(&self, interface: &str, row: Row) -> Result<(), Error> {
        let mut t = Transaction::new(DATABASE);
        let op = t.update("Interface", vec![Condition::eq("name", interface)], row);
        match self.client.transact(&t).await?.count(op) {
            Some(0) => Err(Error::InterfaceNotFound(interface.to_owned())),
            _ => Ok(()),
        }
    }

    /// The interface's current OpenFlow port: `None` until ovs-vswitchd assigned one.
    pub async fn ofport(&self, interface: &str) -> Result<Option<i64>, Error> {
        let row = self
            .get_interface(interface)
            .await?
            .ok_or_else(|| Error::InterfaceNotFound(interface.to_owned()))?;
        Ok(row.ofport)
    }

    /// Starts watching the interface named `interface` for its OpenFlow port (see
    /// [`OfportWatch`]); start it before creating the interface to save the round trip after.
    pub async fn watch_ofport(&self, interface: &str) -> Result<OfportWatch, Error> {
        OfportWatch::start(&self.client, interface).await
    }

    /// Waits until ovs-vswitchd assigns the interface an OpenFlow port (a [`OfportWatch`]); no
    /// port within `timeout`, the monitor's start included, gives [`Error::Timeout`].
    pub async fn wait_for_ofport(&self, interface: &str, timeout: Duration) -> Result<u32, Error> {
        let started = tokio::time::Instant::now();
        let watch = tokio::time::timeout(timeout, self.watch_ofport(interface))
            .await
            .map_err(|_| Error::Timeout {
                what: format!("an OpenFlow port for interface {interface:?}"),
                after: timeout,
            })??;
        watch.wait(timeout.saturating_sub(started.elapsed())).await
    }

    /// Ports whose `external_ids` contain `key=value` (e.g. `antrea-type=container`).
    pub async fn ports_with_external_id(
        &self,
        key: &str,
        value: &str,
    ) -> Result<Vec<PortRow>, Error> {
        let map = Value::Map(vec![(Atom::from(key), Atom::from(value))]);
        let rows = self
            .select(
                "Port",
                vec![Condition::new("external_ids", Function::Includes, map)],
            )
            .await?;
        rows.iter().map(PortRow::from_row).collect()
    }

    /// The bridge named `name`.
    pub async fn get_bridge(&self, name: &str) -> Result<Option<BridgeRow>, Error> {
        self.select_one("Bridge", name)
            .await?
            .as_ref()
            .map(BridgeRow::from_row)
            .transpose()
    }

    /// The port named `name`.
    pub async fn get_port(&self, name: &str) -> Result<Option<PortRow>, Error> {
        self.select_one("Port", name)
            .await?
            .as_ref()
            .map(PortRow::from_row)
            .transpose()
    }

    /// The interface named `name`.
    pub async fn get_interface(&self, name: &str) -> Result<Option<InterfaceRow>, Error> {
        self.select_one("Interface", name)
            .await?
            .as_ref()
            .map(InterfaceRow::from_row)
            .transpose()
    }

    async fn select_one(&self, table: &str, name: &str) -> Result<Option<Row>, Error> {
        Ok(self
            .select(table, vec![Condition::eq("name", name)])
            .await?
            .into_iter()
            .next())
    }

    async fn select(&self, table: &str, conditions: Vec<Condition>) -> Result<Vec<Row>, Error> {
        let mut t = Transaction::new(DATABASE);
        let op = t.select(table, conditions, None);
        let mut out = self.client.transact(&t).await?;
        match out.results.get_mut(op.0) {
            Some(crate::txn::OperationResult::Select(rows)) => Ok(std::mem::take(rows)),
            _ => Err(Error::bad_reply("transact", "select without rows")),
        }
    }
}

/// Adds a `wait` that fails the transaction at once unless bridge `name` exists.
fn bridge_exists_wait(t: &mut Transaction, name: &str) -> OpIndex {
    t.wait(
        "Bridge",
        vec![Condition::eq("name", name)],
        &["name"],
        WaitUntil::Equal,
        vec![Row::new().with("name", name)],
        Some(0),
    )
}

/// Turns the failure of the existence `wait` into [`Error::BridgeNotFound`].
fn bridge_missing(e: Error, wait: OpIndex, bridge: &str) -> Error {
    match e {
        Error::Transaction(failure) if failure.index == Some(wait.0) => {
            Error::BridgeNotFound(bridge.to_owned())
        }
        other => other,
    }
}
