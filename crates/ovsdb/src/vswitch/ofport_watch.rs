//! [`OfportWatch`]: a `monitor_cond` on one Interface row, registered before the interface is
//! created so that its OpenFlow port is seen in the first update that carries it, with no
//! round trip after the creation.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::data::{Row, Uuid, Value};
use crate::monitor::{MonitorEvent, MonitorRequest, RowUpdate2, Updates};
use crate::{Client, Error, Monitor};

use super::DATABASE;

/// Watches the Interface rows named `interface` for the OpenFlow port ovs-vswitchd assigns.
#[derive(Debug)]
pub struct OfportWatch {
    interface: String,
    peer: String,
    monitor: Monitor,
}

impl OfportWatch {
    /// Registers the monitor (one round trip). Rows that exist already are in its snapshot, so
    /// the interface may be created before or after this returns.
    pub(super) async fn start(client: &Client, interface: &str) -> Result<OfportWatch, Error> {
        let request = MonitorRequest::columns(&["ofport", "error"])
            .matching(vec![crate::txn::Condition::eq("name", interface)]);
        let monitor = client
            .monitor_cond(DATABASE, [("Interface", request)])
            .await?;
        Ok(OfportWatch {
            interface: interface.to_owned(),
            peer: client.peer().to_owned(),
            monitor,
        })
    }

    /// Waits until the interface has an OpenFlow port and returns it. An ofport of -1 gives
    /// [`Error::InterfaceFailed`] with the row's `error`; none within `timeout` gives
    /// [`Error::Timeout`].
    pub async fn wait(mut self, timeout: Duration) -> Result<u32, Error> {
        let interface = self.interface.clone();
        match tokio::time::timeout(timeout, self.assigned()).await {
            Ok(result) => result,
            Err(_) => Err(Error::Timeout {
                what: format!("an OpenFlow port for interface {interface:?}"),
                after: timeout,
            }),
        }
    }

    async fn assigned(&mut self) -> Result<u32, Error> {
        // The rows named `interface` (one, unless it is replaced), with the two columns.
        let mut rows = BTreeMap::new();
        loop {
            match self.monitor.next().await {
                Some(MonitorEvent::Snapshot(updates)) => {
                    rows.clear();
                    apply_interface_updates(&mut rows, updates)?;
                }
                Some(MonitorEvent::Update(updates)) => apply_interface_updates(&mut rows, updates)?,
                // A snapshot follows the reconnect; a refused monitor ends the stream.
                Some(MonitorEvent::Disconnected(_) | MonitorEvent::Failed(_)) => continue,
                None => {
                    return Err(Error::NotConnected {
                        endpoint: self.peer.clone(),
                    });
                }
            }
            for row in rows.values() {
                if let Some(port) = assigned_ofport(&self.interface, row)? {
                    return Ok(port);
                }
            }
        }
    }
}

/// Applies `monitor_cond` updates of the Interface table to `rows`. The monitored columns
/// (`ofport`, `error`) hold at most one value, so a `modify` carries their new values
/// (ovsdb-server(7)) and they replace the old ones as they are.
fn apply_interface_updates(rows: &mut BTreeMap<Uuid, Row>, updates: Updates) -> Result<(), Error> {
    let Updates::V2(mut tables) = updates else {
        return Err(Error::bad_reply(
            "monitor_cond",
            "table updates without update2 rows",
        ));
    };
    for (uuid, update) in tables.remove("Interface").unwrap_or_default() {
        match update {
            RowUpdate2::Initial(row) | RowUpdate2::Insert(row) => drop(rows.insert(uuid, row)),
            RowUpdate2::Modify(diff) => rows.entry(uuid).or_default().0.extend(diff.0),
            RowUpdate2::Delete => drop(rows.remove(&uuid)),
        }
    }
    Ok(())
}

/// The interface's OpenFlow port once assigned; [`Error::InterfaceFailed`] for ofport -1.
fn assigned_ofport(interface: &str, row: &Row) -> Result<Option<u32>, Error> {
    match row.get("ofport").and_then(Value::as_integer) {
        Some(-1) => {
            let error = row
                .get("error")
                .and_then(Value::as_str)
                .map_or_else(|| "ofport is -1".to_owned(), str::to_owned);
            Err(Error::InterfaceFailed {
                name: interface.to_owned(),
                error,
            })
        }
        Some(port) if port > 0 => u32::try_from(port)
            .map(Some)
            .map_err(|_| Error::bad_reply("monitor_cond", format!("ofport {port} out of range"))),
        _ => Ok(None),
    }
}
