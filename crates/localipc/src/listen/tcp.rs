//! TCP listeners, bound to loopback addresses only: TCP cannot tell who is calling, so it is
//! kept off the network (tests, and Open vSwitch's `ptcp:` remotes on Windows).

use std::io;

use tokio::net::TcpListener;

use crate::Stream;

/// Binds `addr` (`HOST:PORT`) after checking that every address it resolves to is loopback.
pub(super) async fn listen(addr: &str) -> io::Result<TcpListener> {
    let addrs: Vec<_> = tokio::net::lookup_host(addr).await?.collect();
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::AddrNotAvailable,
            format!("{addr} resolves to no address"),
        ));
    }
    if let Some(remote) = addrs.iter().find(|a| !a.ip().is_loopback()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "TCP listeners are loopback-only, but {addr} resolves to {}",
                remote.ip()
            ),
        ));
    }
    TcpListener::bind(addrs.as_slice()).await
}

pub(super) async fn accept(listener: &TcpListener) -> io::Result<Stream> {
    let (stream, _peer) = listener.accept().await?;
    stream.set_nodelay(true)?;
    Ok(Box::pin(stream))
}
