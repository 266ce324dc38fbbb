//! The controller's gRPC server: [`SpanService`] answers `Watch` calls from the [`Hub`] after
//! authenticating the caller, and [`serve`] runs it over TLS on a TCP listener.
//!
//! A call is refused, and only that call ends, when its request does not decode
//! (`INVALID_ARGUMENT`), it carries no bearer token or one the [`Authenticator`] refuses
//! (`UNAUTHENTICATED`), the token cannot be checked now (`UNAVAILABLE`), or the token is bound to
//! another Node or to none (`PERMISSION_DENIED`). Each refusal is logged with the peer and the
//! Node.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::BoxFuture;
use tonic::metadata::MetadataMap;
use tonic::server::NamedService;
use tonic::transport::Server;
use tonic::transport::server::{Connected, TcpConnectInfo};

use crate::auth::{AuthError, Authenticator};
use crate::hub::{Hub, Subscription};
use crate::wire::{
    self, DecodeError, MAX_EVENT_BYTES, MAX_REQUEST_BYTES, ServerCodec, WatchRequest,
};

/// How long a client has to finish its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How often an idle connection is pinged, and how long the answer may take, so that a peer
/// that vanished is noticed and its watchers removed.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(30);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// The `NetworkPolicySpan` service.
#[derive(Clone)]
pub struct SpanService {
    hub: Hub,
    authenticator: Arc<dyn Authenticator>,
}

impl std::fmt::Debug for SpanService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpanService")
            .field("epoch", &self.hub.epoch())
            .finish_non_exhaustive()
    }
}

impl NamedService for SpanService {
    const NAME: &'static str = wire::SERVICE;
}

impl SpanService {
    pub fn new(hub: Hub, authenticator: Arc<dyn Authenticator>) -> SpanService {
        SpanService { hub, authenticator }
    }

    /// One `Watch` call.
    async fn watch(
        &self,
        request: tonic::Request<Result<WatchRequest, DecodeError>>,
    ) -> Result<tonic::Response<Subscription>, Status> {
        let peer = request
            .extensions()
            .get::<TcpConnectInfo>()
            .and_then(|info| info.remote_addr)
            .map_or_else(|| "an unknown peer".to_owned(), |a| a.to_string());
        let token = bearer(request.metadata()).map(str::to_owned);
        let watch = match request.into_inner() {
            Ok(watch) => watch,
            Err(error) => {
                tracing::warn!("watch from {peer} refused: {error}");
                return Err(Status::invalid_argument(error.to_string()));
            }
        };
        let node = &watch.node;
        let refuse = |status: Status| {
            tracing::warn!(
                "watch of Node {node} from {peer} refused: {:?}: {}",
                status.code(),
                status.message()
            );
            status
        };
        let Some(token) = token else {
            return Err(refuse(Status::unauthenticated(
                "no bearer token in the authorization metadata",
            )));
        };
        let watcher = match self.authenticator.authenticate(&token).await {
            Ok(watcher) => watcher,
            Err(AuthError::Unauthenticated(why)) => {
                return Err(refuse(Status::unauthenticated(why)));
            }
            Err(AuthError::Unavailable(why)) => return Err(refuse(Status::unavailable(why))),
        };
        if watcher.node.as_deref() != Some(node.as_str()) {
            let bound = match &watcher.node {
                Some(other) => format!("Node {other}"),
                None => "no Node".to_owned(),
            };
            return Err(refuse(Status::permission_denied(format!(
                "{} is bound to {bound}: it may not watch Node {node}",
                watcher.user
            ))));
        }
        let resume = watch.resume.filter(|r| r.epoch == self.hub.epoch());
        tracing::info!(
            "{peer} ({}) watches Node {node}{}",
            watcher.user,
            match resume {
                Some(r) => format!(", resuming at version {}", r.version),
                None => String::new(),
            }
        );
        Ok(tonic::Response::new(self.hub.subscribe(
            node,
            watch.resume,
            &peer,
        )))
    }
}

/// The token of `authorization: Bearer <token>`.
fn bearer(metadata: &MetadataMap) -> Option<&str> {
    let value = metadata.get("authorization")?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The one method, as tonic's server drives it.
struct WatchMethod(SpanService);

impl tonic::server::ServerStreamingService<Result<WatchRequest, DecodeError>> for WatchMethod {
    type Response = Arc<wire::WatchEvent>;
    type ResponseStream = Subscription;
    type Future = BoxFuture<tonic::Response<Subscription>, Status>;

    fn call(&mut self, request: tonic::Request<Result<WatchRequest, DecodeError>>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move { service.watch(request).await })
    }
}

impl<B> tower::Service<http::Request<B>> for SpanService
where
    B: http_body::Body + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Infallible>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if request.uri().path() != wire::WATCH_PATH {
            let path = request.uri().path().to_owned();
            return Box::pin(async move {
                Ok(Status::unimplemented(format!("no method {path}")).into_http())
            });
        }
        let method = WatchMethod(self.clone());
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(ServerCodec)
                .max_decoding_message_size(MAX_REQUEST_BYTES)
                .max_encoding_message_size(MAX_EVENT_BYTES);
            Ok(grpc.server_streaming(method, request).await)
        })
    }
}

/// Why serving stopped.
#[derive(Debug, thiserror::Error)]
#[error("the gRPC server failed: {0}")]
pub struct ServeError(#[from] tonic::transport::Error);

/// Serves `service` over TLS (`tls` must offer ALPN `h2`, see
/// [`crate::tls::server_config`]) on every connection `listener` accepts, until `shutdown`
/// completes. A connection whose handshake fails or takes too long is dropped and logged.
pub async fn serve(
    service: SpanService,
    tls: Arc<rustls::ServerConfig>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    let (connections, incoming) = mpsc::channel(16);
    let accept = AbortOnDrop(tokio::spawn(accept(
        listener,
        TlsAcceptor::from(tls),
        connections,
    )));
    let incoming = futures_util::stream::unfold(incoming, |mut incoming| async move {
        let connection = incoming.recv().await?;
        Some((Ok::<_, io::Error>(connection), incoming))
    });
    let served = Server::builder()
        .http2_keepalive_interval(Some(KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(KEEPALIVE_TIMEOUT))
        .add_service(service)
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await;
    drop(accept);
    Ok(served?)
}

/// Accepts TCP connections and hands each on once its TLS handshake is done.
async fn accept(listener: TcpListener, acceptor: TlsAcceptor, connections: mpsc::Sender<Conn>) {
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!("accepting a connection failed: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if connections.is_closed() {
            return;
        }
        let acceptor = acceptor.clone();
        let connections = connections.clone();
        tokio::spawn(async move {
            let local = tcp.local_addr().ok();
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                Ok(Ok(tls)) => {
                    let _ = connections
                        .send(Conn {
                            tls,
                            info: TcpConnectInfo {
                                local_addr: local,
                                remote_addr: Some(peer),
                            },
                        })
                        .await;
                }
                Ok(Err(error)) => tracing::warn!("TLS handshake with {peer} failed: {error}"),
                Err(_) => {
                    tracing::warn!("TLS handshake with {peer}: no end in {HANDSHAKE_TIMEOUT:?}")
                }
            }
        });
    }
}

/// Aborts its task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A TLS connection with its addresses.
struct Conn {
    tls: TlsStream<TcpStream>,
    info: TcpConnectInfo,
}

impl Connected for Conn {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.info.clone()
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tls).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tls).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tls).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tls).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tls).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tls.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_token_is_read_from_the_authorization_metadata() {
        let mut metadata = MetadataMap::new();
        assert_eq!(bearer(&metadata), None);
        metadata.insert("authorization", "Bearer abc.def".parse().unwrap());
        assert_eq!(bearer(&metadata), Some("abc.def"));
        metadata.insert("authorization", "bearer  xyz ".parse().unwrap());
        assert_eq!(bearer(&metadata), Some("xyz"));
        for other in ["Basic abc", "Bearer", "Bearer  ", "abc"] {
            metadata.insert("authorization", other.parse().unwrap());
            assert_eq!(bearer(&metadata), None, "{other}");
        }
    }
}
