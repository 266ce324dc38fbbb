//! Network namespaces as open handles, and running code inside one.
//!
//! `setns` changes the namespace of the calling *thread* only, so code that must run in another
//! namespace (opening a netlink socket there, ioctls, `/proc/sys/net` writes, spawning `nft`)
//! runs on a fresh OS thread that enters the namespace and ends afterwards. Tokio worker threads
//! never change namespace.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::sched::{CloneFlags, setns};

use crate::error::{Error, Result};

/// An open network namespace.
#[derive(Debug, Clone)]
pub struct Netns {
    file: Arc<File>,
    path: PathBuf,
}

impl Netns {
    /// The namespace of the calling thread.
    pub fn current() -> Result<Netns> {
        Netns::open(Path::new("/proc/thread-self/ns/net"))
    }

    /// The namespace at `path` (`/var/run/netns/NAME`, `/proc/PID/ns/net`).
    pub fn open(path: &Path) -> Result<Netns> {
        let file = File::open(path)
            .map_err(|e| Error::os(format!("open network namespace {}", path.display()), e))?;
        Ok(Netns {
            file: Arc::new(file),
            path: path.to_owned(),
        })
    }

    /// Where the namespace was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open namespace file (for moving a link into it).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Runs `work` on a new OS thread inside this namespace and returns its result without
    /// blocking the async caller.
    pub async fn run<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let file = Arc::clone(&self.file);
        let path = self.path.clone();
        std::thread::Builder::new()
            .name("netns".into())
            .spawn(move || {
                let result = setns(&*file, CloneFlags::CLONE_NEWNET)
                    .map_err(|e| {
                        Error::os(format!("enter network namespace {}", path.display()), e)
                    })
                    .and_then(|()| work());
                let _ = tx.send(result);
            })
            .map_err(|e| Error::os("spawn a thread for a network namespace", e))?;
        rx.await.map_err(|_| {
            Error::os(
                "work inside a network namespace",
                std::io::Error::other("the thread panicked"),
            )
        })?
    }

    /// Like [`Netns::run`] for async work: the thread runs its own current-thread runtime, so
    /// netlink sockets opened there belong to this namespace.
    pub async fn run_async<T, F, Fut>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<T>>,
    {
        self.run(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Error::os("start a runtime inside a network namespace", e))?;
            runtime.block_on(work())
        })
        .await
    }
}
