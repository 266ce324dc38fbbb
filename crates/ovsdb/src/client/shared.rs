//! State shared by the client handles, the supervisor and the connection reader: the current
//! connection, the registered monitors (routed by monitor id, re-sent after a reconnection) and
//! the event channels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use localipc::Endpoint;
use serde_json::Value as Json;
use tokio::sync::{broadcast, mpsc, watch};

use super::connection::{Conn, Pending};
use super::{ClientConfig, ConnectionState, LockEvent, MonitorEvent};
use crate::error::{DisconnectReason, Error};

/// Locks a mutex, ignoring poisoning (every critical section leaves the data consistent).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A monitor the client keeps alive across reconnections.
#[derive(Debug)]
struct MonitorEntry {
    database: String,
    v2: bool,
    requests: Json,
    events: mpsc::UnboundedSender<MonitorEvent>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    /// Where to (re)connect; `None` for a client over a caller-supplied stream.
    pub(crate) endpoint: Option<Endpoint>,
    /// The peer's name in messages.
    pub(crate) peer: String,
    pub(crate) config: ClientConfig,
    current: Mutex<Option<Arc<Conn>>>,
    monitors: Mutex<HashMap<String, MonitorEntry>>,
    next_monitor: AtomicU64,
    pub(crate) lock_events: broadcast::Sender<LockEvent>,
    pub(crate) state: watch::Sender<ConnectionState>,
}

impl Shared {
    pub(crate) fn new(endpoint: Option<Endpoint>, peer: String, config: ClientConfig) -> Shared {
        Shared {
            endpoint,
            peer,
            config,
            current: Mutex::new(None),
            monitors: Mutex::default(),
            next_monitor: AtomicU64::new(1),
            lock_events: broadcast::channel(64).0,
            state: watch::channel(ConnectionState::Connecting).0,
        }
    }

    /// The live connection, or `NotConnected`.
    pub(crate) fn conn(&self) -> Result<Arc<Conn>, Error> {
        lock(&self.current)
            .clone()
            .ok_or_else(|| Error::NotConnected {
                endpoint: self.peer.clone(),
            })
    }

    pub(crate) fn set_conn(&self, conn: Option<Arc<Conn>>) {
        *lock(&self.current) = conn;
    }

    /// Registers a monitor and returns its id and event receiver.
    pub(crate) fn register_monitor(
        &self,
        database: &str,
        v2: bool,
        requests: Json,
    ) -> (String, mpsc::UnboundedReceiver<MonitorEvent>) {
        let id = format!("m{}", self.next_monitor.fetch_add(1, Ordering::Relaxed));
        let (events, rx) = mpsc::unbounded_channel();
        lock(&self.monitors).insert(
            id.clone(),
            MonitorEntry {
                database: database.to_owned(),
                v2,
                requests,
                events,
            },
        );
        (id, rx)
    }

    /// The `monitor`/`monitor_cond` request that (re-)creates monitor `id`.
    pub(crate) fn monitor_request(&self, id: &str) -> Option<(&'static str, Vec<Json>, bool)> {
        let monitors = lock(&self.monitors);
        let m = monitors.get(id)?;
        let method = if m.v2 { "monitor_cond" } else { "monitor" };
        Some((
            method,
            vec![
                Json::from(m.database.as_str()),
                Json::from(id),
                m.requests.clone(),
            ],
            m.v2,
        ))
    }

    /// Forgets monitor `id`; true if it was registered.
    pub(crate) fn unregister_monitor(&self, id: &str) -> bool {
        lock(&self.monitors).remove(id).is_some()
    }

    /// Forgets every monitor, ending their streams.
    pub(crate) fn clear_monitors(&self) {
        lock(&self.monitors).clear();
    }

    /// Sends `event` to monitor `id`'s stream (dropped if the monitor is gone).
    pub(crate) fn deliver(&self, id: &str, event: MonitorEvent) {
        if let Some(m) = lock(&self.monitors).get(id) {
            let _ = m.events.send(event);
        }
    }

    /// Ends monitor `id`'s stream with a failure.
    pub(crate) fn fail_monitor(&self, id: &str, reason: String) {
        if let Some(m) = lock(&self.monitors).remove(id) {
            let _ = m.events.send(MonitorEvent::Failed(reason));
        }
    }

    /// Tells every monitor the connection is gone.
    pub(crate) fn announce_disconnect(&self, reason: &DisconnectReason) {
        for m in lock(&self.monitors).values() {
            let _ = m
                .events
                .send(MonitorEvent::Disconnected(reason.to_string()));
        }
    }

    /// Re-sends every registered monitor on a new connection; each reply becomes a `Snapshot`.
    pub(crate) fn reestablish_monitors(&self, conn: &Conn) {
        let ids: Vec<String> = lock(&self.monitors).keys().cloned().collect();
        for id in ids {
            let Some((method, params, v2)) = self.monitor_request(&id) else {
                continue;
            };
            if let Err(e) = conn.request(
                method,
                params,
                Pending::Monitor {
                    monitor_id: id.clone(),
                    v2,
                    ack: None,
                },
            ) {
                tracing::warn!(monitor = %id, error = %e, "cannot re-establish OVSDB monitor");
            }
        }
    }
}
