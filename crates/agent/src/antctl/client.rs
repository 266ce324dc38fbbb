//! The agent API client: one HTTP/1.0 GET per call over a TCP connection (the API answers
//! small documents and closes), with bounded connect and read times.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long a call may take to connect, and each read or write.
const TIMEOUT: Duration = Duration::from_secs(15);

/// Why a call gave no document.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("agent API at {server}: {source}")]
    Io {
        server: String,
        #[source]
        source: std::io::Error,
    },
    #[error("agent API at {server}: not an HTTP response")]
    Malformed { server: String },
    #[error("agent API at {server}{path}: HTTP {status}: {body}")]
    Status {
        server: String,
        path: String,
        status: u16,
        body: String,
    },
}

/// GETs `path` from the agent API at `server` (`host:port`); the body of a 200 response.
pub fn get(server: &str, path: &str) -> Result<String, ClientError> {
    let io = |source| ClientError::Io {
        server: server.to_owned(),
        source,
    };
    let address: SocketAddr = server
        .to_socket_addrs()
        .map_err(io)?
        .next()
        .ok_or_else(|| io(std::io::Error::other("no address")))?;
    let mut stream = TcpStream::connect_timeout(&address, TIMEOUT).map_err(io)?;
    stream.set_read_timeout(Some(TIMEOUT)).map_err(io)?;
    stream.set_write_timeout(Some(TIMEOUT)).map_err(io)?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: {server}\r\nConnection: close\r\n\r\n"
    )
    .map_err(io)?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).map_err(io)?;
    let response = String::from_utf8_lossy(&response);
    let malformed = || ClientError::Malformed {
        server: server.to_owned(),
    };
    let (head, body) = response.split_once("\r\n\r\n").ok_or_else(malformed)?;
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(malformed)?;
    if status == 200 {
        Ok(body.to_owned())
    } else {
        Err(ClientError::Status {
            server: server.to_owned(),
            path: path.to_owned(),
            status,
            body: body.trim_end().to_owned(),
        })
    }
}
