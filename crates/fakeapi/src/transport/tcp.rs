//! The fake over plain HTTP/1.1 on a TCP port, for clients in other processes (and other network
//! namespaces).

use super::listener::{Listening, serve};
use crate::server::FakeApiServer;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use tokio::net::TcpListener;

/// A running TCP listener; dropping it stops the listener and closes its connections.
#[derive(Debug)]
pub struct TcpServer {
    addr: SocketAddr,
    _listening: Listening,
}

impl FakeApiServer {
    /// Serves the fake on `127.0.0.1` at a free port (plain HTTP). Must run inside a Tokio runtime.
    pub async fn serve_tcp(&self) -> std::io::Result<TcpServer> {
        self.serve_tcp_on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
    }

    /// Serves the fake on `addr` (plain HTTP; port 0 picks a free one). Must run inside a Tokio
    /// runtime.
    pub async fn serve_tcp_on(&self, addr: SocketAddr) -> std::io::Result<TcpServer> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        tracing::info!(%addr, "fakeapi listening on TCP");
        Ok(TcpServer {
            addr,
            _listening: serve(listener, self.service()),
        })
    }
}

impl TcpServer {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<address>:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig document pointing at this server (context `fakeapi`, namespace `default`).
    pub fn kubeconfig(&self) -> String {
        super::kubeconfig::render(&self.url())
    }

    /// Writes [`TcpServer::kubeconfig`] to `path`.
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig())
    }
}
