//! The fake over plain HTTP/1.1 on a loopback TCP port, for clients in other processes.

use super::service::FakeService;
use crate::server::FakeApiServer;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::path::Path;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};
use tower::ServiceExt;

/// A running TCP listener; dropping it stops the listener and closes its connections.
#[derive(Debug)]
pub struct TcpServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl FakeApiServer {
    /// Serves the fake on `127.0.0.1` at a free port (plain HTTP). Must run inside a Tokio runtime.
    pub async fn serve_tcp(&self) -> std::io::Result<TcpServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let service = self.service();
        tracing::info!(%addr, "fakeapi listening");
        let task = tokio::spawn(accept_loop(listener, service));
        Ok(TcpServer { addr, task })
    }
}

async fn accept_loop(listener: TcpListener, service: FakeService) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let service = service.clone();
                    connections.spawn(async move {
                        let hyper_service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
                            service.clone().oneshot(request)
                        });
                        if let Err(e) = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), hyper_service)
                            .await
                        {
                            tracing::debug!(%peer, error = %e, "fakeapi connection ended with an error");
                        }
                    });
                }
                Err(e) => tracing::warn!(error = %e, "fakeapi accept failed"),
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

impl TcpServer {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>`.
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

impl Drop for TcpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
