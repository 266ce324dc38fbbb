//! Accepting connections: TLS first, then HTTP/1.1, each step bounded so that a client that
//! stalls (a handshake never finished, headers sent a byte at a time), sends too much (huge
//! headers, a body on a GET) or opens too many connections costs the agent one connection and
//! never the others.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::AgentApi;
use super::auth::ApiAuth;
use crate::error::AgentError;

/// The bounds of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeLimits {
    /// The TLS handshake must finish within this (default 10 s), else the connection is closed.
    pub handshake_timeout: Duration,
    /// Each request's headers must arrive within this (default 10 s), else the connection is
    /// closed (slowloris).
    pub header_read_timeout: Duration,
    /// The most header bytes buffered (default 16 KiB; at least 8 KiB): more gets 431.
    pub max_header_bytes: usize,
    /// The largest request body announced (default 64 KiB): more gets 413. The API reads no
    /// body; this bounds what a client may make it skip.
    pub max_body_bytes: u64,
    /// Connections served at once (default 256); more are closed at accept.
    pub max_connections: usize,
}

impl Default for ServeLimits {
    fn default() -> ServeLimits {
        ServeLimits {
            handshake_timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            max_header_bytes: 16 * 1024,
            max_body_bytes: 64 * 1024,
            max_connections: 256,
        }
    }
}

/// Binds the API's port on `address` (`0.0.0.0` or `::` for every address).
pub async fn listen(address: IpAddr, port: u16) -> Result<TcpListener, AgentError> {
    let address = SocketAddr::new(address, port);
    TcpListener::bind(address)
        .await
        .map_err(|source| AgentError::ApiListen { address, source })
}

/// Serves `api` over TLS with `tls` on `listener`, every request checked by `auth`, until
/// `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    api: Arc<AgentApi>,
    auth: Arc<ApiAuth>,
    limits: ServeLimits,
    shutdown: CancellationToken,
) {
    let acceptor = TlsAcceptor::from(tls);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!("agent API: accept failed: {error}");
                    continue;
                }
            },
            () = shutdown.cancelled() => return,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tracing::warn!(
                "agent API: {peer} refused, {} connections already open",
                limits.max_connections
            );
            continue;
        };
        let (acceptor, api, auth) = (acceptor.clone(), api.clone(), auth.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let stream =
                match tokio::time::timeout(limits.handshake_timeout, acceptor.accept(stream)).await
                {
                    Ok(Ok(stream)) => stream,
                    Ok(Err(error)) => {
                        tracing::debug!("agent API: TLS handshake with {peer} failed: {error}");
                        return;
                    }
                    Err(_) => {
                        tracing::debug!(
                            "agent API: {peer} did not finish the TLS handshake within {:?}",
                            limits.handshake_timeout
                        );
                        return;
                    }
                };
            let service = hyper::service::service_fn(move |request| {
                let (api, auth) = (api.clone(), auth.clone());
                async move { Ok::<_, Infallible>(api.handle(&auth, &limits, request).await) }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .max_buf_size(limits.max_header_bytes.max(8192))
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!("agent API connection from {peer}: {error}");
            }
        });
    }
}
