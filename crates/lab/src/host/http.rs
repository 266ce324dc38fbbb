//! The lab's client of its fake Kubernetes API server: plain HTTP over the server's Unix socket
//! (reachable from the lab's own namespace, unlike the server's TCP address on the LAN). One
//! request per connection, sent as HTTP/1.0 so the answer is never chunked and ends when the
//! server closes the connection.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use crate::error::{LabError, Result};

/// How long connecting, sending and reading one answer may take.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// An answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The body as text, for messages.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).trim().to_owned()
    }
}

/// Sends `method path` with an optional JSON `body` to the server at `socket`.
pub fn request(socket: &Path, method: &str, path: &str, body: Option<&[u8]>) -> Result<Response> {
    send(socket, method, path, "application/json", body)
}

/// Sends a JSON merge patch (RFC 7386) of the object at `path` to the server at `socket`.
pub fn merge_patch(socket: &Path, path: &str, patch: &[u8]) -> Result<Response> {
    send(
        socket,
        "PATCH",
        path,
        "application/merge-patch+json",
        Some(patch),
    )
}

fn send(
    socket: &Path,
    method: &str,
    path: &str,
    content_type: &str,
    body: Option<&[u8]>,
) -> Result<Response> {
    let what = format!("{method} {path} on {}", socket.display());
    let failed = |message: String| LabError::Api {
        request: what.clone(),
        message,
    };
    let mut stream = UnixStream::connect(socket).map_err(|e| failed(e.to_string()))?;
    stream
        .set_read_timeout(Some(IO_TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(IO_TIMEOUT)))
        .map_err(|e| failed(e.to_string()))?;
    let body = body.unwrap_or_default();
    let mut message = format!(
        "{method} {path} HTTP/1.0\r\nHost: lab-api\r\nAccept: application/json\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    message.extend_from_slice(body);
    stream
        .write_all(&message)
        .map_err(|e| failed(e.to_string()))?;
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .map_err(|e| failed(e.to_string()))?;
    parse_response(&answer).map_err(failed)
}

/// Splits an HTTP/1.x answer into its status code and body.
pub fn parse_response(answer: &[u8]) -> std::result::Result<Response, String> {
    let head_end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no complete HTTP header in {} bytes", answer.len()))?;
    let head = String::from_utf8_lossy(&answer[..head_end]);
    let status_line = head.lines().next().unwrap_or_default();
    let mut words = status_line.split_whitespace();
    let status = match (words.next(), words.next()) {
        (Some(version), Some(code)) if version.starts_with("HTTP/1.") => code.parse().ok(),
        _ => None,
    }
    .ok_or_else(|| format!("not an HTTP status line: {status_line:?}"))?;
    Ok(Response {
        status,
        body: answer[head_end + 4..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_gives_its_status_and_body() {
        let r = parse_response(
            b"HTTP/1.0 201 Created\r\nContent-Type: application/json\r\n\r\n{\"a\":1}",
        )
        .unwrap();
        assert_eq!(r.status, 201);
        assert_eq!(r.body, b"{\"a\":1}");
        let r = parse_response(b"HTTP/1.1 409 Conflict\r\n\r\n").unwrap();
        assert_eq!((r.status, r.text().as_str()), (409, ""));
    }

    #[test]
    fn a_merge_patch_is_sent_as_one() {
        let dir = std::env::temp_dir().join(format!("lab-http-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("api.sock");
        let _ = std::fs::remove_file(&socket);
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let patch = br#"{"metadata":{"labels":{"team":"t0"}}}"#;
        let server = std::thread::spawn(move || {
            let (mut peer, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            let mut chunk = [0u8; 512];
            while !got.ends_with(patch) {
                let n = peer.read(&mut chunk).unwrap();
                assert!(n > 0, "the client closed before its body");
                got.extend_from_slice(&chunk[..n]);
            }
            peer.write_all(b"HTTP/1.0 200 OK\r\n\r\n{}").unwrap();
            String::from_utf8(got).unwrap()
        });
        let answer = merge_patch(&socket, "/api/v1/namespaces/default", patch).unwrap();
        let sent = server.join().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((answer.status, answer.text().as_str()), (200, "{}"));
        assert!(
            sent.starts_with("PATCH /api/v1/namespaces/default HTTP/1.0\r\n"),
            "{sent}"
        );
        assert!(
            sent.contains("\r\nContent-Type: application/merge-patch+json\r\n"),
            "{sent}"
        );
        assert!(sent.contains(&format!("\r\nContent-Length: {}\r\n", patch.len())));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for answer in [
            &b""[..],
            b"HTTP/1.0 200 OK\r\n",
            b"SSH-2.0-x\r\n\r\n",
            b"HTTP/1.0 abc\r\n\r\n",
            b"HTTP/1.0\r\n\r\n",
            b"\xff\xfe\r\n\r\n",
        ] {
            assert!(parse_response(answer).is_err(), "{answer:?}");
        }
    }
}
