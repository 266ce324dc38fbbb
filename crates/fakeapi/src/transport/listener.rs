//! The accept loop every socket transport shares: each accepted connection is served over
//! HTTP/1.1 by the fake's [`FakeService`], inside a `connection` span naming the peer, so the
//! server's request log says who asked.

use super::service::FakeService;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::future::Future;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::{JoinHandle, JoinSet};
use tower::ServiceExt;
use tracing::Instrument;

/// A socket listener the accept loop can take connections from.
pub(crate) trait Listener: Send + 'static {
    /// One accepted connection.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    /// The next connection and a description of its peer.
    fn accept(&self) -> impl Future<Output = std::io::Result<(Self::Stream, String)>> + Send;
}

impl Listener for tokio::net::TcpListener {
    type Stream = tokio::net::TcpStream;

    async fn accept(&self) -> std::io::Result<(Self::Stream, String)> {
        let (stream, peer) = tokio::net::TcpListener::accept(self).await?;
        Ok((stream, peer.to_string()))
    }
}

#[cfg(unix)]
impl Listener for tokio::net::UnixListener {
    type Stream = tokio::net::UnixStream;

    async fn accept(&self) -> std::io::Result<(Self::Stream, String)> {
        let (stream, _) = tokio::net::UnixListener::accept(self).await?;
        let peer = stream
            .peer_cred()
            .ok()
            .and_then(|cred| cred.pid())
            .map_or_else(|| "unix".to_owned(), |pid| format!("unix pid {pid}"));
        Ok((stream, peer))
    }
}

/// A running accept loop; dropping it stops accepting and closes its connections.
#[derive(Debug)]
pub(crate) struct Listening {
    task: JoinHandle<()>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `service` on every connection `listener` accepts, until the result is dropped.
pub(crate) fn serve<L: Listener>(listener: L, service: FakeService) -> Listening {
    Listening {
        task: tokio::spawn(accept_loop(listener, service)),
    }
}

async fn accept_loop<L: Listener>(listener: L, service: FakeService) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let service = service.clone();
                    let span = tracing::debug_span!("connection", %peer);
                    connections.spawn(async move {
                        let hyper_service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
                            service.clone().oneshot(request)
                        });
                        if let Err(e) = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), hyper_service)
                            .await
                        {
                            // Includes connections closed because the server is unavailable.
                            tracing::debug!(error = %e, "fakeapi connection ended with an error");
                        }
                    }.instrument(span));
                }
                Err(e) => tracing::warn!(error = %e, "fakeapi accept failed"),
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}
