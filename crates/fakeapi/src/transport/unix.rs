//! The fake over plain HTTP/1.1 on a Unix socket: reachable from every network namespace of the
//! host through the file system (the lab creates its objects this way).

use super::listener::{Listening, serve};
use crate::server::FakeApiServer;
use std::path::{Path, PathBuf};
use tokio::net::UnixListener;

/// A running Unix-socket listener; dropping it stops the listener, closes its connections and
/// removes the socket file.
#[derive(Debug)]
pub struct UnixServer {
    path: PathBuf,
    _listening: Listening,
}

impl FakeApiServer {
    /// Serves the fake on a Unix socket created at `path` (which must not exist). Must run inside
    /// a Tokio runtime.
    pub async fn serve_unix(&self, path: &Path) -> std::io::Result<UnixServer> {
        let listener = UnixListener::bind(path)?;
        tracing::info!(path = %path.display(), "fakeapi listening on a Unix socket");
        Ok(UnixServer {
            path: path.to_owned(),
            _listening: serve(listener, self.service()),
        })
    }
}

impl UnixServer {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for UnixServer {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::debug!(path = %self.path.display(), error = %e, "fakeapi could not remove its socket");
        }
    }
}
