//! Dialing an endpoint: one boxed byte stream type for every transport.

use std::io;
use std::pin::Pin;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::Endpoint;

/// A connected byte stream to a local endpoint.
pub type Stream = Pin<Box<dyn AsyncReadWrite + Send>>;

/// Anything that reads and writes bytes asynchronously.
pub trait AsyncReadWrite: AsyncRead + AsyncWrite {}
impl<T: AsyncRead + AsyncWrite + ?Sized> AsyncReadWrite for T {}

/// How long a client waits for a busy named pipe to offer a free instance.
#[cfg(windows)]
const PIPE_BUSY_WAIT: Duration = Duration::from_secs(2);

/// Connects to `endpoint`. Errors carry the endpoint in their message.
pub async fn dial(endpoint: &Endpoint) -> io::Result<Stream> {
    let with_context = |e: io::Error| io::Error::new(e.kind(), format!("connect to {endpoint}: {e}"));
    match endpoint {
        Endpoint::Tcp(addr) => {
            let s = tokio::net::TcpStream::connect(addr.as_str()).await.map_err(with_context)?;
            s.set_nodelay(true).map_err(with_context)?;
            Ok(Box::pin(s))
        }
        Endpoint::Unix(path) => dial_unix(path).await.map_err(with_context),
        Endpoint::NamedPipe(name) => dial_pipe(name).await.map_err(with_context),
    }
}

#[cfg(unix)]
async fn dial_unix(path: &std::path::Path) -> io::Result<Stream> {
    Ok(Box::pin(tokio::net::UnixStream::connect(path).await?))
}

#[cfg(not(unix))]
async fn dial_unix(_path: &std::path::Path) -> io::Result<Stream> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "Unix sockets are not available on this platform"))
}

#[cfg(windows)]
async fn dial_pipe(name: &str) -> io::Result<Stream> {
    use tokio::net::windows::named_pipe::ClientOptions;
    /// `ERROR_PIPE_BUSY`: every instance of the pipe is in use.
    const ERROR_PIPE_BUSY: i32 = 231;
    let deadline = tokio::time::Instant::now() + PIPE_BUSY_WAIT;
    loop {
        match ClientOptions::new().open(name) {
            Ok(client) => return Ok(Box::pin(client)),
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY) && tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(not(windows))]
async fn dial_pipe(_name: &str) -> io::Result<Stream> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "named pipes are only available on Windows"))
}
