//! [`PolicyStateFile`]: the last NetworkPolicy view received from antrea-controller, kept on
//! disk (`policyStateFile`) so that an agent restarted while the controller is unreachable
//! enforces it from its first flow. Written whole after each change (JSON, to a temporary file
//! synced to disk, then renamed over the old one, so a crash leaves the old view or the new
//! one, never half of one); read back with `NodeView`'s checked decoding. A file that does not
//! decode is renamed aside (`<file>.corrupt`) and logged, and the agent waits for the
//! controller.

use std::io::Write;
use std::path::{Path, PathBuf};

use controlplane::NodeView;

/// Why the view could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the NetworkPolicy state file {path}: {source}")]
pub struct StateWriteError {
    /// The file.
    pub path: PathBuf,
    /// The operating system's error.
    pub source: std::io::Error,
}

/// Where the view is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyStateFile {
    path: PathBuf,
}

impl PolicyStateFile {
    /// The view kept at `path`.
    pub fn new(path: impl Into<PathBuf>) -> PolicyStateFile {
        PolicyStateFile { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where a file that does not decode is moved.
    pub fn corrupt_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".corrupt");
        PathBuf::from(name)
    }

    /// The view kept, if there is one that decodes. A missing file is no view; a file that
    /// cannot be read or decoded is logged and set aside.
    pub fn load(&self) -> Option<NodeView> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                tracing::info!(
                    "no NetworkPolicy state in {}: none received yet",
                    self.path.display()
                );
                return None;
            }
            Err(error) => {
                tracing::error!(
                    "cannot read the NetworkPolicy state {}: {error}; waiting for the controller",
                    self.path.display()
                );
                return None;
            }
        };
        match serde_json::from_slice::<NodeView>(&text) {
            Ok(view) => {
                tracing::info!(
                    "NetworkPolicy state {} read: {} policies, {} groups",
                    self.path.display(),
                    view.policies.len(),
                    view.groups.len()
                );
                Some(view)
            }
            Err(error) => {
                let aside = self.corrupt_path();
                match std::fs::rename(&self.path, &aside) {
                    Ok(()) => tracing::error!(
                        "NetworkPolicy state {} is corrupt ({error}): moved to {}; waiting for \
                         the controller",
                        self.path.display(),
                        aside.display()
                    ),
                    Err(rename) => tracing::error!(
                        "NetworkPolicy state {} is corrupt ({error}) and could not be moved to \
                         {} ({rename}); waiting for the controller",
                        self.path.display(),
                        aside.display()
                    ),
                }
                None
            }
        }
    }

    /// Replaces the kept view by `view`: written to `<file>.tmp`, synced, renamed over the
    /// file, and the directory synced. The writing runs on the runtime's blocking threads
    /// (`spawn_blocking`), not on its workers; it is over when this returns, so a caller that
    /// awaits each save before the next keeps the writes in order and never has an older view
    /// renamed over a newer one.
    pub async fn save(&self, view: &NodeView) -> Result<(), StateWriteError> {
        let text = serde_json::to_vec(view).map_err(|e| StateWriteError {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || write_atomically(&path, &text))
            .await
            .unwrap_or_else(|join| {
                Err(StateWriteError {
                    path: self.path.clone(),
                    source: std::io::Error::other(format!("the writing task failed: {join}")),
                })
            })
    }
}

/// Writes `text` to `<path>.tmp`, syncs it, renames it over `path` and syncs the directory.
fn write_atomically(path: &Path, text: &[u8]) -> Result<(), StateWriteError> {
    let error = |source| StateWriteError {
        path: path.to_owned(),
        source,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(error)?;
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let mut file = std::fs::File::create(&temporary).map_err(error)?;
    file.write_all(text).map_err(error)?;
    file.sync_all().map_err(error)?;
    drop(file);
    std::fs::rename(&temporary, path).map_err(error)?;
    // The rename itself is durable once the directory is (Unix; Windows cannot open a
    // directory as a file, and NTFS journals the rename).
    #[cfg(unix)]
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::net::Ipv4Addr;

    use controlplane::Member;
    use model::policy::PodKey;
    use netpol::input::{GroupKey, Scope};
    use netpol::selector::Selector;

    use super::*;

    /// A view of one group with `members` members.
    fn view(members: u8) -> NodeView {
        let group = GroupKey {
            scope: Scope::Namespace("ns".into()),
            pods: Selector::with_labels([("app", "web")]),
        };
        let members: BTreeMap<PodKey, Member> = (0..members)
            .map(|i| {
                let pod = PodKey::new("ns", format!("p{i}"));
                let member = Member {
                    pod: pod.clone(),
                    ip: Ipv4Addr::new(10, 0, 0, i),
                    node: Some("n1".into()),
                    named_ports: Default::default(),
                };
                (pod, member)
            })
            .collect();
        let mut view = NodeView::default();
        view.groups.insert(group, members);
        view
    }

    #[tokio::test]
    async fn each_view_saved_is_on_disk_when_save_returns() {
        let dir = tempfile::tempdir().unwrap();
        let state = PolicyStateFile::new(dir.path().join("state").join("policy-state.json"));
        for members in 0..20 {
            let saved = view(members);
            state.save(&saved).await.unwrap();
            assert_eq!(
                state.load(),
                Some(saved),
                "after the save of {members} members"
            );
        }
        let left: Vec<_> = std::fs::read_dir(dir.path().join("state"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(left, ["policy-state.json"]);
    }
}
