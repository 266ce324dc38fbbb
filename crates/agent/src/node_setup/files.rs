//! [`HostFiles`]: the files node setup writes, named by Windows path text (`C:\etc\...`) and
//! kept either where they say (a Node) or under a root directory (tests: `C:\etc\x` is
//! `<root>/etc/x`, on any OS).

use std::io;
use std::path::{Path, PathBuf};

/// Reads and writes files named by Windows path text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFiles {
    root: Option<PathBuf>,
}

impl HostFiles {
    /// The files where their paths say (Windows).
    pub fn native() -> HostFiles {
        HostFiles { root: None }
    }

    /// The files under `root`: the drive is dropped and the rest is taken below `root`.
    pub fn under(root: impl Into<PathBuf>) -> HostFiles {
        HostFiles {
            root: Some(root.into()),
        }
    }

    /// Where `path` is on the disk.
    pub fn locate(&self, path: &str) -> PathBuf {
        match &self.root {
            None => PathBuf::from(path),
            Some(root) => {
                let relative = match path.split_once(':') {
                    Some((drive, rest)) if drive.len() == 1 => rest,
                    _ => path,
                };
                relative
                    .split(['\\', '/'])
                    .filter(|part| !part.is_empty())
                    .fold(root.clone(), |dir, part| dir.join(part))
            }
        }
    }

    /// The file's content, `None` when there is no such file.
    pub fn read(&self, path: &str) -> io::Result<Option<Vec<u8>>> {
        match std::fs::read(self.locate(path)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(with_path(error, path, "read")),
        }
    }

    /// Makes the file hold `bytes` (its directory created as needed); returns whether it
    /// changed.
    pub fn ensure(&self, path: &str, bytes: &[u8]) -> io::Result<bool> {
        if self.read(path)?.as_deref() == Some(bytes) {
            return Ok(false);
        }
        let file = self.locate(path);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| with_path(e, path, "create the directory of"))?;
        }
        std::fs::write(&file, bytes).map_err(|e| with_path(e, path, "write"))?;
        Ok(true)
    }

    /// Makes the directory exist (with its parents); returns whether it was created.
    pub fn ensure_dir(&self, path: &str) -> io::Result<bool> {
        let dir = self.locate(path);
        if dir.is_dir() {
            return Ok(false);
        }
        std::fs::create_dir_all(&dir).map_err(|e| with_path(e, path, "create the directory"))?;
        Ok(true)
    }

    /// Removes the directory if it is empty, then the directories that leaves empty (never the
    /// drive or the root); returns whether it was removed.
    pub fn remove_empty_dir(&self, path: &str) -> io::Result<bool> {
        let dir = self.locate(path);
        if !dir.is_dir() || !is_empty_dir(&dir)? {
            return Ok(false);
        }
        std::fs::remove_dir(&dir).map_err(|e| with_path(e, path, "remove the directory"))?;
        self.tidy(dir.parent(), path)?;
        Ok(true)
    }

    /// Removes the file, then the directories it leaves empty (never the drive or the root);
    /// returns whether there was a file.
    pub fn remove(&self, path: &str) -> io::Result<bool> {
        let file = self.locate(path);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(with_path(error, path, "remove")),
        }
        self.tidy(file.parent(), path)?;
        Ok(true)
    }

    /// Removes `dir` and its parents while they are empty, up to the drive or the root.
    fn tidy(&self, mut dir: Option<&Path>, path: &str) -> io::Result<()> {
        while let Some(current) = dir {
            if self.is_top(current) || !is_empty_dir(current)? {
                break;
            }
            std::fs::remove_dir(current)
                .map_err(|e| with_path(e, path, "remove the directory of"))?;
            dir = current.parent();
        }
        Ok(())
    }

    fn is_top(&self, dir: &Path) -> bool {
        match &self.root {
            Some(root) => dir == root.as_path() || !dir.starts_with(root),
            None => dir.parent().is_none_or(|parent| parent.parent().is_none()),
        }
    }
}

fn is_empty_dir(dir: &Path) -> io::Result<bool> {
    Ok(std::fs::read_dir(dir)?.next().is_none())
}

fn with_path(error: io::Error, path: &str, what: &str) -> io::Error {
    io::Error::new(error.kind(), format!("cannot {what} {path}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_paths_map_under_the_root_and_removal_tidies_empty_directories() {
        let root = tempfile::tempdir().unwrap();
        let files = HostFiles::under(root.path());
        assert_eq!(
            files.locate(r"C:\etc\cni\net.d\10-antrea.conflist"),
            root.path()
                .join("etc")
                .join("cni")
                .join("net.d")
                .join("10-antrea.conflist")
        );
        std::fs::create_dir(root.path().join("etc")).unwrap();
        std::fs::write(root.path().join("etc").join("keep"), b"k").unwrap();
        assert!(files.ensure(r"C:\etc\cni\net.d\a", b"1").unwrap());
        assert!(!files.ensure(r"C:\etc\cni\net.d\a", b"1").unwrap());
        assert!(files.ensure(r"C:\etc\cni\net.d\a", b"2").unwrap());
        assert_eq!(files.read(r"C:\etc\cni\net.d\a").unwrap().unwrap(), b"2");
        assert!(files.remove(r"C:\etc\cni\net.d\a").unwrap());
        assert!(!files.remove(r"C:\etc\cni\net.d\a").unwrap());
        assert!(!root.path().join("etc").join("cni").exists());
        assert!(root.path().join("etc").join("keep").exists());
        assert_eq!(files.read(r"C:\etc\cni\net.d\a").unwrap(), None);

        assert!(files.ensure_dir(r"C:\etc\run\x").unwrap());
        assert!(!files.ensure_dir(r"C:\etc\run\x").unwrap());
        assert!(files.remove_empty_dir(r"C:\etc\run\x").unwrap());
        assert!(!root.path().join("etc").join("run").exists());
        assert!(!files.remove_empty_dir(r"C:\etc\run\x").unwrap());
        assert!(!files.remove_empty_dir(r"C:\etc").unwrap(), "not empty");
    }
}
