//! Unix socket listeners whose socket file is never reachable with wider permissions than asked
//! for, that replace a stale file but never a live one, and that remove their file on drop.
//!
//! The socket is bound inside a fresh directory only the running user can enter, given its
//! final mode there, and then hard-linked to its real path. `link` fails when the path exists,
//! so a process that started listening in the meantime is never displaced. The process umask is
//! not touched (it is shared by every thread).

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::net::UnixListener;

use crate::{Access, Stream};

/// A listening Unix socket and the file it owns.
#[derive(Debug)]
pub(super) struct SocketFileListener {
    listener: UnixListener,
    path: PathBuf,
    /// Device and inode of the socket file, to remove only our own file on drop.
    file_id: (u64, u64),
}

impl SocketFileListener {
    pub(super) fn bind(path: &Path, access: Access) -> io::Result<Self> {
        remove_if_stale(path)?;
        let staging = StagingDir::create(path)?;
        let staged = staging.path.join("s");
        let listener = std::os::unix::net::UnixListener::bind(&staged)?;
        fs::set_permissions(&staged, fs::Permissions::from_mode(access.unix_mode()))?;
        let meta = fs::symlink_metadata(&staged)?;
        fs::hard_link(&staged, path).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => in_use(),
            _ => e,
        })?;
        listener.set_nonblocking(true)?;
        Ok(SocketFileListener {
            listener: UnixListener::from_std(listener)?,
            path: path.to_owned(),
            file_id: (meta.dev(), meta.ino()),
        })
    }

    pub(super) async fn accept(&self) -> io::Result<Stream> {
        let (stream, _peer) = self.listener.accept().await?;
        Ok(Box::pin(stream))
    }
}

impl Drop for SocketFileListener {
    fn drop(&mut self) {
        let ours =
            fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.file_id);
        if ours {
            // Best effort: a failure leaves a stale file, which the next listener replaces.
            let _ = fs::remove_file(&self.path);
        }
    }
}

fn in_use() -> io::Error {
    io::Error::new(
        io::ErrorKind::AddrInUse,
        "already in use: another process is listening on this socket",
    )
}

/// Removes the socket file at `path` if no process listens on it any more. Fails if a process
/// still listens, or if the path is something other than a socket (never deleted).
fn remove_if_stale(path: &Path) -> io::Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "the path exists and is not a socket; refusing to replace it",
        ));
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(in_use()),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("cannot tell whether the existing socket is live: {e}"),
        )),
    }
}

/// A private (mode 0700) directory beside the socket path where the socket is bound; removed
/// with its content when dropped.
struct StagingDir {
    path: PathBuf,
}

impl StagingDir {
    /// Named `.localipc-PID-N` beside the socket; the socket inside is `s`, keeping the bound
    /// path short (socket paths are limited to about 100 bytes).
    fn create(socket: &Path) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let parent = match socket.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!(".localipc-{}-{n}", std::process::id()));
        fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(StagingDir { path })
    }
}

impl Drop for StagingDir {
    fn drop(&mut self) {
        // Best effort: what is left is an empty private directory or an unlinked socket name.
        let _ = fs::remove_dir_all(&self.path);
    }
}
