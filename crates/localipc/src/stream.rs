//! Dialing an endpoint: one boxed byte stream type for every transport.

use std::io;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::Endpoint;

/// A connected byte stream to or from a local endpoint.
pub type Stream = Pin<Box<dyn AsyncReadWrite + Send>>;

/// Anything that reads and writes bytes asynchronously.
pub trait AsyncReadWrite: AsyncRead + AsyncWrite {}
impl<T: AsyncRead + AsyncWrite + ?Sized> AsyncReadWrite for T {}

/// How long a client waits for a busy named pipe to offer a free instance.
#[cfg(windows)]
const PIPE_BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Connects to `endpoint`. Errors carry the endpoint in their message; a Unix socket or pipe
/// that does not exist gives [`io::ErrorKind::NotFound`] saying that nothing listens there.
pub async fn dial(endpoint: &Endpoint) -> io::Result<Stream> {
    let with_context = |e: io::Error| {
        let hint = if e.kind() == io::ErrorKind::NotFound {
            "nothing is listening there: "
        } else {
            ""
        };
        io::Error::new(e.kind(), format!("connect to {endpoint}: {hint}{e}"))
    };
    match endpoint {
        Endpoint::Tcp(addr) => {
            let s = tokio::net::TcpStream::connect(addr.as_str())
                .await
                .map_err(with_context)?;
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
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "Unix sockets are not available on this platform",
    ))
}

/// Opens a client end of the pipe. While every instance is taken (`ERROR_PIPE_BUSY`) the open is
/// retried until [`PIPE_BUSY_WAIT`] has passed: a server creates its next instance right after
/// it accepted a client, so a busy pipe is normally free again within moments.
#[cfg(windows)]
async fn dial_pipe(name: &str) -> io::Result<Stream> {
    use tokio::net::windows::named_pipe::ClientOptions;
    use windows_sys::Win32::Foundation::ERROR_PIPE_BUSY;
    let deadline = tokio::time::Instant::now() + PIPE_BUSY_WAIT;
    loop {
        match ClientOptions::new().open(name) {
            Ok(client) => return Ok(Box::pin(client)),
            Err(e)
                if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32)
                    && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(not(windows))]
async fn dial_pipe(_name: &str) -> io::Result<Stream> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "named pipes are only available on Windows",
    ))
}
