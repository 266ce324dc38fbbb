//! [`Store`]: where the shim's HNS state lives. HNS is a service: its state outlives the client
//! process. With [`STATE_ENV`] set, the state is the file it names, a [`Snapshot`] in JSON: each
//! call takes an exclusive lock (`<file>.lock`), reads the file (a missing file is a host with no
//! adapter and only the OVS extension), runs on a fake built from it, and, when the state
//! changed, writes it to `<file>.tmp-<pid>` and renames that over the file, so a reader never
//! sees half a state. Several processes can use one file, as several clients use one HNS.
//! Without the variable, the state belongs to the process.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use hcn::fake::{FakeHcn, Snapshot};

/// The environment variable naming the state file.
pub const STATE_ENV: &str = "ANTREA_HCN_SHIM_STATE";

/// The shim's HNS state.
#[derive(Debug)]
pub enum Store {
    /// Kept in this process.
    Process(FakeHcn),
    /// Kept in this file.
    File(PathBuf),
}

impl Store {
    /// The file named by [`STATE_ENV`], else a process-local fake with the default host.
    pub fn from_env() -> Self {
        match std::env::var_os(STATE_ENV) {
            Some(path) if !path.is_empty() => Store::File(PathBuf::from(path)),
            _ => Store::Process(FakeHcn::default()),
        }
    }

    /// Runs `call` on the current state and keeps what it changed.
    pub fn with<R>(&self, call: impl FnOnce(&FakeHcn) -> R) -> io::Result<R> {
        match self {
            Store::Process(fake) => Ok(call(fake)),
            Store::File(path) => {
                let lock = lock_file(path)?;
                lock.lock()?;
                let before = read(path)?;
                let fake = match &before {
                    Some(snapshot) => FakeHcn::from_snapshot(snapshot.clone()),
                    None => FakeHcn::default(),
                };
                let result = call(&fake);
                let after = fake.snapshot();
                if before.as_ref() != Some(&after) {
                    write(path, &after)?;
                }
                // Closing the lock file releases the lock (Wine's UnlockFile refuses the range
                // std's File::unlock names, with ERROR_LOCK_VIOLATION).
                drop(lock);
                Ok(result)
            }
        }
    }
}

/// The state in `path`, `None` when there is no such file.
pub fn read(path: &Path) -> io::Result<Option<Snapshot>> {
    match fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Replaces the state in `path` by `snapshot` atomically (a new file renamed over the old).
pub fn write(path: &Path, snapshot: &Snapshot) -> io::Result<()> {
    let text = serde_json::to_string_pretty(snapshot).map_err(io::Error::other)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    fs::write(&tmp, text)?;
    fs::rename(&tmp, path)
}

fn lock_file(path: &Path) -> io::Result<File> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(name)
}

#[cfg(test)]
mod tests {
    use hcn::HcnApi;
    use hcn::schema::{HostComputeNamespace, NamespaceType};

    use super::*;

    #[test]
    fn a_file_store_keeps_changes_across_stores_and_a_failed_call_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hns.json");
        let created = Store::File(path.clone())
            .with(|hns| hns.create_namespace(&HostComputeNamespace::default()))
            .unwrap()
            .unwrap();
        let written = fs::read_to_string(&path).unwrap();
        assert!(written.contains(&created.id.to_string()), "{written}");

        // A second store (another process) sees it; a failing call leaves the file alone.
        let again = Store::File(path.clone());
        assert_eq!(
            again
                .with(|hns| hns.query_namespace(created.id))
                .unwrap()
                .unwrap(),
            created
        );
        let refused = again.with(|hns| {
            hns.create_namespace(&HostComputeNamespace {
                id: created.id,
                ..HostComputeNamespace::default()
            })
        });
        assert!(refused.unwrap().unwrap_err().is_already_exists());
        assert_eq!(fs::read_to_string(&path).unwrap(), written);

        let next = again
            .with(|hns| {
                hns.create_namespace(&HostComputeNamespace {
                    kind: NamespaceType::Host,
                    ..HostComputeNamespace::default()
                })
            })
            .unwrap()
            .unwrap();
        assert_eq!(
            next.namespace_id,
            created.namespace_id + 1,
            "the counters persist"
        );
        assert_ne!(next.id, created.id);
    }

    #[test]
    fn an_unreadable_state_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hns.json");
        fs::write(&path, "{not json").unwrap();
        let error = Store::File(path.clone()).with(|_| ()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("hns.json"), "{error}");
    }
}
