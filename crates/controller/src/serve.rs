//! What the leader serves: the computation, fed by the cluster, drives the protocol's [`Hub`]
//! (it publishes each batch's updates and takes snapshots between batches), and the gRPC server
//! answers the agents' watches over TLS.
//!
//! [`SpanComputation`] is the hub's [`SpanSource`]. [`lead`] runs both for as long as the
//! replica leads; [`compute`] only computes.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use controlplane::Authenticator;
use controlplane::hub::{Hub, HubLimits, SpanSource};
use controlplane::server::{SpanService, serve};
use kube::Client;
use tokio::net::TcpListener;

use crate::error::ControllerError;
use crate::feed::Feed;
use crate::span::{NodeUpdate, SpanComputation};
use crate::tls::{TlsSource, serving_tls};

impl SpanSource for SpanComputation {
    fn watch(&mut self, node: &str) -> Vec<NodeUpdate> {
        SpanComputation::watch(self, node)
    }

    fn unwatch(&mut self, node: &str) {
        SpanComputation::unwatch(self, node);
    }

    fn take_updates(&mut self) -> BTreeMap<String, Vec<NodeUpdate>> {
        SpanComputation::take_updates(self)
    }
}

/// How the leader serves.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where the gRPC server listens (`--bind-address`).
    pub bind_address: SocketAddr,
    pub tls: TlsSource,
    /// More names and addresses for a self-signed serving certificate (`--tls-san`).
    pub sans: Vec<String>,
    pub limits: HubLimits,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            bind_address: SocketAddr::from(([0, 0, 0, 0], 10349)),
            tls: TlsSource::default(),
            sans: Vec::new(),
            limits: HubLimits::default(),
        }
    }
}

/// Watches the cluster, computes the spans and serves them on `listener` until the server
/// fails (the caller stops it when the Lease is lost by dropping this future).
pub async fn lead(
    client: Client,
    listener: TcpListener,
    options: &ServeOptions,
    authenticator: Arc<dyn Authenticator>,
) -> Result<(), ControllerError> {
    let tls = serving_tls(&client, &options.tls, &options.sans).await?;
    let (hub, driver) = Hub::new(options.limits);
    let feed = tokio::spawn(async move {
        Feed::default().run(client, &driver).await;
    });
    let _feed = AbortOnDrop(feed);
    let address = listener
        .local_addr()
        .map_or_else(|_| "?".to_owned(), |a| a.to_string());
    tracing::info!(
        "serving NetworkPolicy spans on {address} (epoch {})",
        hub.epoch()
    );
    serve(
        SpanService::new(hub, authenticator),
        tls.config,
        listener,
        std::future::pending(),
    )
    .await
    .map_err(ControllerError::Serve)
}

/// Watches the cluster and computes the spans, serving nobody (no Node is watched, so no
/// update is kept).
pub async fn compute(client: Client) {
    let (_hub, driver) = Hub::new(HubLimits::default());
    Feed::default().run(client, &driver).await;
}

/// Aborts its task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
