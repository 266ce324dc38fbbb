//! Helpers shared by the integration tests: temporary directories, an echo server step and a
//! client ping, and (Linux) running a closure as another user.
#![allow(dead_code)] // each test binary uses a different subset

#[cfg(target_os = "linux")]
pub mod as_other_user;

use std::path::{Path, PathBuf};

use localipc::{Endpoint, Listener, dial};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("localipc-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Accepts one client and echoes one length-prefixed message back to it.
pub async fn echo_once(listener: &mut Listener) {
    let mut stream = listener.accept().await.unwrap();
    let len = stream.read_u32().await.unwrap();
    let mut buf = vec![0; len as usize];
    stream.read_exact(&mut buf).await.unwrap();
    stream.write_u32(len).await.unwrap();
    stream.write_all(&buf).await.unwrap();
    stream.flush().await.unwrap();
}

/// Sends one length-prefixed message to `endpoint` and returns the echoed reply.
pub async fn ping(endpoint: &Endpoint, msg: &[u8]) -> Vec<u8> {
    let mut stream = dial(endpoint).await.unwrap();
    stream.write_u32(msg.len() as u32).await.unwrap();
    stream.write_all(msg).await.unwrap();
    stream.flush().await.unwrap();
    let len = stream.read_u32().await.unwrap();
    let mut buf = vec![0; len as usize];
    stream.read_exact(&mut buf).await.unwrap();
    buf
}
