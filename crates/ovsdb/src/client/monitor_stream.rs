//! [`Monitor`]: the receiving end of one monitor, which cancels the monitor on the server when
//! cancelled explicitly or dropped.

use std::sync::Arc;

use serde_json::Value as Json;
use tokio::sync::{mpsc, oneshot};

use super::MonitorEvent;
use super::connection::Pending;
use super::shared::Shared;
use crate::error::Error;

/// A running monitor. Events: a `Snapshot` first, then `Update`s; after a reconnection a
/// `Disconnected` then a new `Snapshot`.
#[derive(Debug)]
pub struct Monitor {
    id: String,
    events: mpsc::UnboundedReceiver<MonitorEvent>,
    shared: Arc<Shared>,
    active: bool,
}

impl Monitor {
    pub(crate) fn new(
        id: String,
        events: mpsc::UnboundedReceiver<MonitorEvent>,
        shared: Arc<Shared>,
    ) -> Monitor {
        Monitor {
            id,
            events,
            shared,
            active: true,
        }
    }

    /// The monitor id used on the wire.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The next event; `None` once the client is gone or the monitor failed.
    pub async fn next(&mut self) -> Option<MonitorEvent> {
        self.events.recv().await
    }

    /// `monitor_cancel`: stops the monitor and waits for the server's confirmation.
    pub async fn cancel(mut self) -> Result<(), Error> {
        self.active = false;
        self.shared.unregister_monitor(&self.id);
        let (reply, rx) = oneshot::channel();
        self.shared.conn()?.request(
            "monitor_cancel",
            vec![Json::from(self.id.as_str())],
            Pending::Call {
                method: "monitor_cancel",
                reply,
            },
        )?;
        rx.await
            .unwrap_or_else(|_| {
                Err(Error::NotConnected {
                    endpoint: self.shared.peer.clone(),
                })
            })
            .map(drop)
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        if self.active
            && self.shared.unregister_monitor(&self.id)
            && let Ok(conn) = self.shared.conn()
        {
            let _ = conn.request(
                "monitor_cancel",
                vec![Json::from(self.id.as_str())],
                Pending::Discard,
            );
        }
    }
}
