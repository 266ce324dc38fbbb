//! Agent side: serving the `Cni` (and optionally `CniLifecycle`) service on a `localipc`
//! listener (Unix socket, named pipe) or any stream of accepted connections.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::{Stream, TryStreamExt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::Server;
use tonic::transport::server::Connected;

use super::lifecycle::cni_lifecycle_server::{CniLifecycle, CniLifecycleServer};
use super::pb::cni_server::{Cni, CniServer};

/// Serves `cni` (and `lifecycle` when given; without it STATUS/GC calls get Unimplemented, as
/// from Antrea's agent) on every connection `incoming` yields, until `shutdown` completes.
pub async fn serve<C, L, S, IO, F>(
    cni: C,
    lifecycle: Option<L>,
    incoming: S,
    shutdown: F,
) -> Result<(), tonic::transport::Error>
where
    C: Cni,
    L: CniLifecycle,
    S: Stream<Item = io::Result<IO>> + Send + 'static,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    F: Future<Output = ()> + Send,
{
    Server::builder()
        .add_service(CniServer::new(cni))
        .add_optional_service(lifecycle.map(CniLifecycleServer::new))
        .serve_with_incoming_shutdown(incoming.map_ok(Conn), shutdown)
        .await
}

/// Serves `cni` (and `lifecycle`) on a [`localipc::Listener`] — the agent's CNI socket
/// (`/var/run/antrea/cni.sock`, or `\\.\pipe\cnisock` on Windows) — until `shutdown` completes.
pub async fn serve_on<C, L, F>(
    cni: C,
    lifecycle: Option<L>,
    listener: localipc::Listener,
    shutdown: F,
) -> Result<(), tonic::transport::Error>
where
    C: Cni,
    L: CniLifecycle,
    F: Future<Output = ()> + Send,
{
    let incoming = futures_util::stream::unfold(listener, |mut listener| async move {
        let accepted = listener.accept().await;
        Some((accepted, listener))
    });
    serve(cni, lifecycle, incoming, shutdown).await
}

/// An accepted connection, with no peer information.
struct Conn<IO>(IO);

impl<IO> Connected for Conn<IO> {
    type ConnectInfo = ();

    fn connect_info(&self) {}
}

impl<IO: AsyncRead + Unpin> AsyncRead for Conn<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Conn<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
