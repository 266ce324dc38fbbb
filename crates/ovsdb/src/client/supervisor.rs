//! The connection supervisor: dials with per-attempt timeouts, runs each connection, and after a
//! loss fails outstanding requests, tells monitors, waits `backoff` and reconnects, re-sending
//! every monitor on the new connection.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::connection::{self, Conn};
use super::shared::Shared;
use super::{ClientConfig, ConnectionState};
use crate::error::{DisconnectReason, Error};

/// The first connection: up to `connect_attempts` tries, the per-attempt timeout doubling from
/// `connect_timeout` to `connect_timeout_max`, `backoff` between tries.
pub(crate) async fn connect_first(shared: &Shared) -> Result<localipc::Stream, Error> {
    let config = &shared.config;
    let mut timeout = config.connect_timeout;
    let mut last = io::Error::other("no connection attempt made");
    for attempt in 1..=config.connect_attempts.max(1) {
        match dial(shared, timeout).await {
            Ok(stream) => return Ok(stream),
            Err(e) => {
                tracing::debug!(endpoint = %shared.peer, attempt, error = %e, "OVSDB connect attempt failed");
                last = e;
            }
        }
        timeout = (timeout * 2).min(config.connect_timeout_max);
        if attempt < config.connect_attempts {
            tokio::time::sleep(config.backoff).await;
        }
    }
    Err(Error::Connect {
        endpoint: shared.peer.clone(),
        attempts: config.connect_attempts.max(1),
        source: last,
    })
}

async fn dial(shared: &Shared, timeout: Duration) -> io::Result<localipc::Stream> {
    let Some(endpoint) = &shared.endpoint else {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no endpoint to connect to",
        ));
    };
    match tokio::time::timeout(timeout, localipc::dial(endpoint)).await {
        Ok(result) => result,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("connect to {endpoint} timed out after {timeout:?}"),
        )),
    }
}

/// Runs connections until shutdown (or the first loss, without `reconnect`).
pub(crate) async fn supervise(
    shared: Arc<Shared>,
    mut stream: localipc::Stream,
    mut shutdown: watch::Receiver<()>,
) {
    let ClientConfig {
        reconnect,
        backoff,
        connect_timeout_max,
        ..
    } = shared.config.clone();
    let mut generation = 1u64;
    loop {
        let (conn, out_rx) = Conn::new();
        shared.set_conn(Some(conn.clone()));
        if generation > 1 {
            shared.reestablish_monitors(&conn);
        }
        shared
            .state
            .send_replace(ConnectionState::Connected { generation });
        let reason = connection::run(&conn, out_rx, stream, &shared, shutdown.clone()).await;
        shared.set_conn(None);
        conn.close(&reason);
        tracing::info!(endpoint = %shared.peer, %reason, "OVSDB connection ended");
        if matches!(reason, DisconnectReason::Shutdown) || !reconnect || shared.endpoint.is_none() {
            shared.clear_monitors();
            shared.state.send_replace(ConnectionState::Closed(reason));
            return;
        }
        shared.announce_disconnect(&reason);
        shared
            .state
            .send_replace(ConnectionState::Reconnecting(reason));
        stream = loop {
            tokio::select! {
                _ = shutdown.changed() => {
                    shared.clear_monitors();
                    shared.state.send_replace(ConnectionState::Closed(DisconnectReason::Shutdown));
                    return;
                }
                () = tokio::time::sleep(backoff) => {}
            }
            match dial(&shared, connect_timeout_max).await {
                Ok(s) => break s,
                Err(e) => {
                    tracing::debug!(endpoint = %shared.peer, error = %e, "OVSDB reconnect attempt failed")
                }
            }
        };
        generation += 1;
    }
}
