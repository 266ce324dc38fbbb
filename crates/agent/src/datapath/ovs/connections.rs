//! [`ConnectionMetrics`]: whether the agent's two connections to Open vSwitch are up — OVSDB
//! to ovsdb-server (the bridge's rows) and OpenFlow to ovs-vswitchd (the flows) — and how often
//! they came back after a loss. Both clients reconnect by themselves; this only watches them.
//!
//! | name | kind | meaning |
//! |---|---|---|
//! | `antrea_agent_ovs_connected{connection}` | gauge | 1 while the connection is up, else 0 |
//! | `antrea_agent_ovs_reconnects_total{connection}` | counter | times the connection came back after it was lost |
//!
//! `connection` is `ovsdb` or `openflow`.

use openflow::conn::{ConnEvent, OfConnection};
use ovsdb::ConnectionState;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio::sync::{broadcast, watch};

use super::OvsDatapath;

/// The series' label: which connection.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ConnectionLabel {
    connection: &'static str,
}

/// The connection metrics of both connections. Clones share the same values.
#[derive(Debug, Clone, Default)]
pub struct ConnectionMetrics {
    connected: Family<ConnectionLabel, Gauge>,
    reconnects: Family<ConnectionLabel, Counter>,
}

/// One connection's series.
#[derive(Debug, Clone)]
struct ConnectionSeries {
    connected: Gauge,
    reconnects: Counter,
}

impl ConnectionMetrics {
    /// New metrics, registered in `registry` (the counter gets the `_total` suffix).
    pub fn register(registry: &mut Registry) -> ConnectionMetrics {
        let metrics = ConnectionMetrics::default();
        registry.register(
            "antrea_agent_ovs_connected",
            "1 while the agent's connection to Open vSwitch (ovsdb, openflow) is up, else 0",
            metrics.connected.clone(),
        );
        registry.register(
            "antrea_agent_ovs_reconnects",
            "Times the agent's connection to Open vSwitch (ovsdb, openflow) came back after a loss",
            metrics.reconnects.clone(),
        );
        metrics
    }

    fn of(&self, connection: &'static str) -> ConnectionSeries {
        let label = ConnectionLabel { connection };
        ConnectionSeries {
            connected: self.connected.get_or_create(&label).clone(),
            reconnects: self.reconnects.get_or_create(&label).clone(),
        }
    }

    /// Follows both connections of `datapath` until they are gone for good (the clients are
    /// dropped at shutdown).
    pub async fn follow<H>(self, datapath: &OvsDatapath<H>) {
        let ovsdb = follow_ovsdb(datapath.bridge().connection_state(), self.of("ovsdb"));
        let openflow = follow_openflow(datapath.flows().connection(), self.of("openflow"));
        tokio::join!(ovsdb, openflow);
    }
}

/// The OVSDB client's state: its connection number says how many reconnects there were.
async fn follow_ovsdb(mut state: watch::Receiver<ConnectionState>, series: ConnectionSeries) {
    let mut counted = 0;
    loop {
        match &*state.borrow_and_update() {
            ConnectionState::Connected { generation } => {
                series.connected.set(1);
                let reconnects = generation.saturating_sub(1);
                series.reconnects.inc_by(reconnects.saturating_sub(counted));
                counted = counted.max(reconnects);
            }
            ConnectionState::Connecting
            | ConnectionState::Reconnecting(_)
            | ConnectionState::Closed(_) => {
                series.connected.set(0);
            }
        }
        if state.changed().await.is_err() {
            series.connected.set(0);
            return;
        }
    }
}

/// The OpenFlow connection's events. It is up when this starts: bring-up has just installed
/// the first round through it.
async fn follow_openflow(conn: &OfConnection, series: ConnectionSeries) {
    let mut events = conn.events();
    series.connected.set(1);
    loop {
        match events.recv().await {
            Ok(ConnEvent::Connected { .. }) => {
                series.connected.set(1);
                series.reconnects.inc();
            }
            Ok(ConnEvent::Disconnected { .. } | ConnEvent::ConnectFailed { .. }) => {
                series.connected.set(0);
            }
            // Missed events: the next one says where the connection stands.
            Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => {
                series.connected.set(0);
                return;
            }
        }
    }
}
