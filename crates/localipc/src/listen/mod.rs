//! Serving an endpoint: [`listen`] opens a [`Listener`] whose access control matches an
//! [`Access`]; [`Listener::accept`] yields the same boxed [`Stream`] that [`dial`](crate::dial)
//! returns.

#[cfg(windows)]
mod pipe;
mod tcp;
#[cfg(unix)]
mod unix;

use std::io;

use crate::{Access, Endpoint, Stream};

/// A listening endpoint. Dropping it stops listening; a Unix socket file it created is removed.
#[derive(Debug)]
pub struct Listener {
    endpoint: Endpoint,
    transport: Transport,
}

#[derive(Debug)]
enum Transport {
    Tcp(tokio::net::TcpListener),
    #[cfg(unix)]
    Unix(unix::SocketFileListener),
    #[cfg(windows)]
    Pipe(pipe::PipeListener),
}

/// Starts listening on `endpoint`, letting in only the callers `access` names.
///
/// * `unix:` creates the socket file with the permissions of `access` (it is never reachable
///   with wider ones), replaces a stale file left by a dead process, and fails with
///   [`io::ErrorKind::AddrInUse`] when another process still listens there.
/// * `tcp:` binds loopback addresses only (TCP cannot restrict callers); port 0 picks a free
///   port, see [`Listener::endpoint`].
/// * `npipe:` creates the first instance of the pipe with the DACL of `access`, rejects remote
///   clients, and fails with [`io::ErrorKind::AddrInUse`] when the pipe already exists.
///
/// Must be called within a Tokio runtime. Errors name the endpoint.
pub async fn listen(endpoint: &Endpoint, access: Access) -> io::Result<Listener> {
    let with_context =
        |e: io::Error| io::Error::new(e.kind(), format!("listen on {endpoint}: {e}"));
    let (endpoint, transport) = match endpoint {
        Endpoint::Tcp(addr) => {
            let listener = tcp::listen(addr).await.map_err(with_context)?;
            let bound = listener.local_addr().map_err(with_context)?;
            (Endpoint::Tcp(bound.to_string()), Transport::Tcp(listener))
        }
        Endpoint::Unix(path) => (
            endpoint.clone(),
            listen_unix(path, access).map_err(with_context)?,
        ),
        Endpoint::NamedPipe(name) => (
            endpoint.clone(),
            listen_pipe(name, access).map_err(with_context)?,
        ),
    };
    Ok(Listener {
        endpoint,
        transport,
    })
}

#[cfg(unix)]
fn listen_unix(path: &std::path::Path, access: Access) -> io::Result<Transport> {
    Ok(Transport::Unix(unix::SocketFileListener::bind(
        path, access,
    )?))
}

#[cfg(not(unix))]
fn listen_unix(_path: &std::path::Path, _access: Access) -> io::Result<Transport> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "Unix sockets are not available on this platform",
    ))
}

#[cfg(windows)]
fn listen_pipe(name: &str, access: Access) -> io::Result<Transport> {
    Ok(Transport::Pipe(pipe::PipeListener::create(name, access)?))
}

#[cfg(not(windows))]
fn listen_pipe(_name: &str, _access: Access) -> io::Result<Transport> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "named pipes are only available on Windows",
    ))
}

impl Listener {
    /// The endpoint being served; for `tcp:` with port 0 it carries the port actually bound.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Waits for the next client. Errors name the endpoint.
    pub async fn accept(&mut self) -> io::Result<Stream> {
        let accepted = match &mut self.transport {
            Transport::Tcp(listener) => tcp::accept(listener).await,
            #[cfg(unix)]
            Transport::Unix(listener) => listener.accept().await,
            #[cfg(windows)]
            Transport::Pipe(listener) => listener.accept().await,
        };
        accepted.map_err(|e| io::Error::new(e.kind(), format!("accept on {}: {e}", self.endpoint)))
    }

    /// The DACL of the named pipe being served, as SDDL (`D:P(A;;GA;;;SY)...`), read back from
    /// the pipe instance waiting for the next client. For tests and diagnostics.
    #[cfg(windows)]
    pub fn pipe_dacl_sddl(&self) -> io::Result<String> {
        match &self.transport {
            Transport::Pipe(listener) => listener.dacl_sddl(),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a named pipe", self.endpoint),
            )),
        }
    }
}
