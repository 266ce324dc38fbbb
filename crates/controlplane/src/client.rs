//! The agent's client: [`SpanWatch`] watches its Node's span at the controller and hands each
//! [`Delivery`] on through a channel.
//!
//! It connects over TLS to the controller addresses in turn (the server checked against a CA
//! bundle and a server name), presents a bearer token fetched at each connect (so a rotated
//! ServiceAccount token is used as soon as it changes), and asks to resume where the last
//! stream left off. A failure — unreachable, refused, cut off as too slow, a message out of
//! order — is logged and retried after a backoff that doubles up to its maximum and starts
//! again once a stream delivered something. Its state is published for logs and tests
//! ([`SpanWatch::state`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http::uri::PathAndQuery;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::{Notify, mpsc, watch};
use tokio_rustls::TlsConnector;
use tonic::Code;
use tonic::transport::Endpoint;

use crate::Delivery;
use crate::tls::{TlsError, client_config};
use crate::wire::{
    ClientCodec, MAX_EVENT_BYTES, Resume, WATCH_PATH, WatchEvent, WatchRequest, check_node_name,
};

/// Gives the bearer token to present, read at each connect.
pub type TokenProvider = Arc<dyn Fn() -> Result<String, String> + Send + Sync>;

/// A token read from a file at each connect (a projected ServiceAccount token is rotated in
/// place).
pub fn token_file(path: PathBuf) -> TokenProvider {
    Arc::new(move || {
        std::fs::read_to_string(&path)
            .map(|token| token.trim().to_owned())
            .map_err(|e| format!("cannot read the token {}: {e}", path.display()))
    })
}

/// How long to wait after a failure: `initial`, doubled after each failure up to `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(30),
        }
    }
}

/// What a [`SpanWatch`] needs.
#[derive(Clone)]
pub struct ClientConfig {
    /// The Node whose span is watched.
    pub node: String,
    /// The controller's addresses (`host:port`), tried in turn.
    pub addresses: Vec<String>,
    /// The name the controller's certificate must hold (`antrea.kube-system.svc`).
    pub server_name: String,
    /// The CAs the controller's certificate must chain to, PEM.
    pub ca_pem: String,
    pub token: TokenProvider,
    pub backoff: Backoff,
    /// How many deliveries may wait in the channel; a consumer slower than that stops the
    /// reading of the stream (and the controller then cuts it off).
    pub deliveries: usize,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("node", &self.node)
            .field("addresses", &self.addresses)
            .field("server_name", &self.server_name)
            .field("backoff", &self.backoff)
            .field("deliveries", &self.deliveries)
            .finish_non_exhaustive()
    }
}

/// Why a [`SpanWatch`] cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("no controller address")]
    NoAddress,
    #[error("{0}")]
    NodeName(String),
    #[error("the server name {0:?} is not a DNS name or an IP address")]
    ServerName(String),
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// Where the watch stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionState {
    /// Connecting to `address` (attempt `attempt` since the last stream that delivered).
    Connecting { address: String, attempt: u32 },
    /// The controller at `address` accepted the watch.
    Watching { address: String },
    /// The controller at `address` refused the watch (e.g. `Unauthenticated`,
    /// `PermissionDenied`).
    Refused {
        address: String,
        code: Code,
        message: String,
    },
    /// The connection to `address` failed or its stream ended.
    Disconnected { address: String, reason: String },
}

/// A running watch; dropping it stops the watch and closes the deliveries' channel.
#[derive(Debug)]
pub struct SpanWatch {
    state: watch::Receiver<ConnectionState>,
    resync: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl SpanWatch {
    /// Starts watching; the deliveries arrive on the returned receiver (a snapshot first).
    pub fn spawn(
        config: ClientConfig,
    ) -> Result<(SpanWatch, mpsc::Receiver<Delivery>), ClientError> {
        if config.addresses.is_empty() {
            return Err(ClientError::NoAddress);
        }
        check_node_name(&config.node).map_err(ClientError::NodeName)?;
        let server_name = rustls_pki_types::ServerName::try_from(config.server_name.clone())
            .map_err(|_| ClientError::ServerName(config.server_name.clone()))?;
        let connector = TlsConnector::from(client_config(&config.ca_pem)?);
        let (deliveries, receiver) = mpsc::channel(config.deliveries.max(1));
        let (state_sender, state) = watch::channel(ConnectionState::Connecting {
            address: config.addresses[0].clone(),
            attempt: 0,
        });
        let resync = Arc::new(Notify::new());
        let client = Client {
            config,
            server_name,
            connector,
            deliveries,
            state: state_sender,
            resync: resync.clone(),
            position: None,
        };
        let task = tokio::spawn(client.run());
        Ok((
            SpanWatch {
                state,
                resync,
                task,
            },
            receiver,
        ))
    }

    /// The watch's state, updated as it changes.
    pub fn state(&self) -> watch::Receiver<ConnectionState> {
        self.state.clone()
    }

    /// Asks for a fresh snapshot: the current stream ends and the next one does not resume
    /// (for a consumer that found the updates inconsistent with what it holds).
    pub fn resync(&self) {
        self.resync.notify_one();
    }
}

impl Drop for SpanWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How one stream ended.
enum Ended {
    /// The consumer dropped the deliveries' receiver.
    Stop,
    /// Try again; `delivered`: the stream delivered something (the backoff starts again).
    Retry { delivered: bool },
}

struct Client {
    config: ClientConfig,
    server_name: rustls_pki_types::ServerName<'static>,
    connector: TlsConnector,
    deliveries: mpsc::Sender<Delivery>,
    state: watch::Sender<ConnectionState>,
    resync: Arc<Notify>,
    /// The last event received: where a new stream resumes.
    position: Option<Resume>,
}

impl Client {
    async fn run(mut self) {
        let mut attempt: u32 = 0;
        let mut next = 0;
        let mut delay = self.config.backoff.initial;
        loop {
            let address = self.config.addresses[next % self.config.addresses.len()].clone();
            next += 1;
            attempt += 1;
            self.state.send_replace(ConnectionState::Connecting {
                address: address.clone(),
                attempt,
            });
            match self.stream(&address).await {
                Ended::Stop => return,
                Ended::Retry { delivered: true } => {
                    attempt = 0;
                    delay = self.config.backoff.initial;
                }
                Ended::Retry { delivered: false } => {}
            }
            tracing::info!(
                "watch of Node {}'s span: next attempt in {delay:?}",
                self.config.node
            );
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.deliveries.closed() => return,
            }
            delay = (delay * 2).min(self.config.backoff.max);
        }
    }

    /// One connection and its stream, until it ends.
    async fn stream(&mut self, address: &str) -> Ended {
        let node = self.config.node.clone();
        let failed = |state: &watch::Sender<ConnectionState>, reason: String| {
            tracing::warn!("watch of Node {node}'s span at {address}: {reason}");
            state.send_replace(ConnectionState::Disconnected {
                address: address.to_owned(),
                reason,
            });
            Ended::Retry { delivered: false }
        };
        let token = match (self.config.token)() {
            Ok(token) => token,
            Err(error) => return failed(&self.state, format!("no token: {error}")),
        };
        let channel = match self.connect(address).await {
            Ok(channel) => channel,
            Err(error) => return failed(&self.state, format!("cannot connect: {error}")),
        };
        let mut grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(MAX_EVENT_BYTES);
        let mut request = tonic::Request::new(WatchRequest {
            node: node.clone(),
            resume: self.position,
        });
        match format!("Bearer {token}").parse() {
            Ok(value) => {
                request.metadata_mut().insert("authorization", value);
            }
            Err(_) => return failed(&self.state, "the token is not a valid header value".into()),
        }
        if let Err(error) = grpc.ready().await {
            return failed(&self.state, format!("cannot connect: {error}"));
        }
        let response = grpc
            .server_streaming(request, PathAndQuery::from_static(WATCH_PATH), ClientCodec)
            .await;
        let mut events = match response {
            Ok(response) => response.into_inner(),
            Err(status) => {
                tracing::warn!(
                    "the controller at {address} refused the watch of Node {node}'s span: {:?}: {}",
                    status.code(),
                    status.message()
                );
                self.state.send_replace(ConnectionState::Refused {
                    address: address.to_owned(),
                    code: status.code(),
                    message: status.message().to_owned(),
                });
                return Ended::Retry { delivered: false };
            }
        };
        tracing::info!("watching Node {node}'s span at {address}");
        self.state.send_replace(ConnectionState::Watching {
            address: address.to_owned(),
        });
        let mut delivered = false;
        loop {
            let event = tokio::select! {
                event = events.message() => event,
                () = self.resync.notified() => {
                    self.position = None;
                    failed(&self.state, "a fresh snapshot was asked for".into());
                    return Ended::Retry { delivered: true };
                }
            };
            let reason = match event {
                Ok(Some(event)) => match self.accept(event) {
                    Ok(delivery) => {
                        if self.deliveries.send(delivery).await.is_err() {
                            return Ended::Stop;
                        }
                        delivered = true;
                        continue;
                    }
                    Err(reason) => {
                        self.position = None;
                        reason
                    }
                },
                Ok(None) => "the controller ended the stream".to_owned(),
                Err(status) => format!("stream ended: {:?}: {}", status.code(), status.message()),
            };
            failed(&self.state, reason);
            return Ended::Retry { delivered };
        }
    }

    /// The event's delivery, if it follows what was received: a snapshot always does, updates
    /// must be of the same epoch and a later version.
    fn accept(&mut self, event: WatchEvent) -> Result<Delivery, String> {
        let WatchEvent {
            epoch,
            version,
            delivery,
        } = event;
        if let Delivery::Updates(_) = &delivery {
            match self.position {
                Some(p) if p.epoch == epoch && p.version < version => {}
                other => {
                    return Err(format!(
                        "updates of epoch {epoch} version {version} do not follow {other:?}"
                    ));
                }
            }
        }
        self.position = Some(Resume { epoch, version });
        Ok(delivery)
    }

    async fn connect(&self, address: &str) -> Result<tonic::transport::Channel, String> {
        // TLS is the connector's; the URI only names the authority.
        let endpoint = Endpoint::from_shared(format!("http://{address}"))
            .map_err(|e| format!("bad address {address:?}: {e}"))?
            .connect_timeout(Duration::from_secs(10))
            .http2_keep_alive_interval(Duration::from_secs(30))
            .keep_alive_timeout(Duration::from_secs(10))
            .keep_alive_while_idle(true);
        let connector = self.connector.clone();
        let server_name = self.server_name.clone();
        let address = address.to_owned();
        endpoint
            .connect_with_connector(tower::service_fn(move |_| {
                let connector = connector.clone();
                let server_name = server_name.clone();
                let address = address.clone();
                async move {
                    let tcp = TcpStream::connect(&address).await?;
                    let tls = connector.connect(server_name, tcp).await?;
                    Ok::<_, std::io::Error>(TokioIo::new(tls))
                }
            }))
            .await
            .map_err(|e| error_chain(&e))
    }
}

/// An error with its sources, for logs.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
