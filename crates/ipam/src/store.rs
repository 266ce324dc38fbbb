//! The host-local disk store: one directory per network holding a file per allocated address
//! (named by the address, `:` written as `_` on Windows; content `<container id>\r\n<ifname>`),
//! `last_reserved_ip.<range set index>` (the address, no newline) and `lock`, an empty file
//! taken with an exclusive advisory lock (flock on Unix, LockFileEx on Windows) around every
//! operation, as host-local does.
//!
//! Unlike host-local, files are never seen half-written: an address file is written under a
//! temporary name and hard-linked to its final name (which fails if the address is taken), and
//! `last_reserved_ip` is replaced by a rename. Temporary files start with `.tmp.` and are
//! removed by the next operation that takes the lock.
//!
//! Nothing is fsynced (host-local does not either): a write is visible to every process, ours
//! after a kill -9 included, as soon as it is made, which is what the store's users rely on.
//! Only a power loss or kernel crash could lose a recent write or leave an address file
//! empty, and that also ends every Pod on the Node: their namespaces and interfaces do not
//! outlive it, the runtime adds them again, and the agent's start-up releases the addresses of
//! containers without a port (an empty file counts as held by no one and is released by GC).

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use crate::IpamError;
use crate::address_bits;

const LAST_RESERVED_PREFIX: &str = "last_reserved_ip.";
const LOCK_FILE: &str = "lock";
const TEMP_PREFIX: &str = ".tmp.";
const LINE_BREAK: &str = "\r\n";

/// Who holds an address, as written in its file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner {
    /// The container ID.
    pub container_id: String,
    /// The interface name; `None` in files written by old host-local versions (ID only).
    pub ifname: Option<String>,
}

impl Owner {
    fn parse(content: &str) -> Option<Owner> {
        let content = content.trim();
        if content.is_empty() {
            return None;
        }
        Some(match content.split_once(LINE_BREAK) {
            Some((id, ifname)) => Owner {
                container_id: id.to_owned(),
                ifname: Some(ifname.to_owned()),
            },
            None => Owner {
                container_id: content.to_owned(),
                ifname: None,
            },
        })
    }

    /// Whether this file content belongs to `container_id`/`ifname`: an exact match, or an
    /// ID-only (legacy) file of that container.
    pub fn is(&self, container_id: &str, ifname: &str) -> bool {
        self.container_id == container_id.trim()
            && self.ifname.as_deref().is_none_or(|i| i == ifname)
    }
}

/// The store directory of one network.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// The store while its lock is held; dropping it releases the lock.
#[derive(Debug)]
pub struct Locked<'a> {
    store: &'a Store,
    _lock: File,
}

impl Store {
    /// Opens (creating if needed) `<data_dir>/<network>`.
    pub fn open(data_dir: &Path, network: &str) -> Result<Store, IpamError> {
        let dir = data_dir.join(network);
        fs::create_dir_all(&dir).map_err(IpamError::io("create store directory", &dir))?;
        Ok(Store { dir })
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Takes the store's lock, waiting for other holders (host-local included).
    pub fn lock(&self) -> Result<Locked<'_>, IpamError> {
        let path = self.dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(IpamError::io("open lock", &path))?;
        file.lock().map_err(IpamError::io("lock", &path))?;
        let locked = Locked {
            store: self,
            _lock: file,
        };
        locked.remove_temporaries()?;
        Ok(locked)
    }
}

impl Locked<'_> {
    fn path(&self, name: &str) -> PathBuf {
        self.store.dir.join(escape(name))
    }

    /// Records `ip` for the owner unless it is already taken. Returns whether it was recorded.
    pub fn reserve(
        &self,
        ip: IpAddr,
        container_id: &str,
        ifname: &str,
        range_set: usize,
    ) -> Result<bool, IpamError> {
        let target = self.path(&ip.to_string());
        let content = format!("{}{LINE_BREAK}{ifname}", container_id.trim());
        let tmp = self.write_temp(&ip.to_string(), content.as_bytes())?;
        let linked = fs::hard_link(&tmp, &target);
        let _ = fs::remove_file(&tmp);
        match linked {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => return Err(IpamError::io("reserve", &target)(e)),
        }
        let last = self.path(&format!("{LAST_RESERVED_PREFIX}{range_set}"));
        let tmp = self.write_temp(
            &format!("{LAST_RESERVED_PREFIX}{range_set}"),
            ip.to_string().as_bytes(),
        )?;
        fs::rename(&tmp, &last).map_err(IpamError::io("record last reserved address", &last))?;
        Ok(true)
    }

    /// The last address reserved in range set `range_set`, if recorded and readable.
    pub fn last_reserved(&self, range_set: usize) -> Option<IpAddr> {
        fs::read_to_string(self.path(&format!("{LAST_RESERVED_PREFIX}{range_set}")))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Every address file and its owner (`None` when the file is empty or unreadable, e.g. left
    /// by a host-local that crashed between creating and writing it), sorted by address. Only
    /// a file whose name is the one [`reserve`](Self::reserve) would write for its address
    /// counts (see [`address_of_file_name`]).
    pub fn entries(&self) -> Result<Vec<(IpAddr, Option<Owner>)>, IpamError> {
        let mut out = Vec::new();
        for entry in
            fs::read_dir(&self.store.dir).map_err(IpamError::io("list store", &self.store.dir))?
        {
            let entry = entry.map_err(IpamError::io("list store", &self.store.dir))?;
            let Some(ip) = entry.file_name().to_str().and_then(address_of_file_name) else {
                continue;
            };
            let owner = fs::read(entry.path())
                .ok()
                .and_then(|b| Owner::parse(&String::from_utf8_lossy(&b)));
            out.push((ip, owner));
        }
        out.sort_by_key(|(ip, _)| (ip.is_ipv6(), address_bits::to_bits(*ip)));
        Ok(out)
    }

    /// Releases every address whose holder is not in `valid` (pairs of container ID and
    /// interface name; an ID-only file is kept if its container appears with any interface),
    /// and every empty or unreadable address file. Returns the released addresses.
    pub fn gc(&self, valid: &HashSet<(String, String)>) -> Result<Vec<IpAddr>, IpamError> {
        let keep = |owner: &Owner| match &owner.ifname {
            Some(ifname) => valid.contains(&(owner.container_id.clone(), ifname.clone())),
            None => valid.iter().any(|(id, _)| *id == owner.container_id),
        };
        let mut released = Vec::new();
        for (ip, owner) in self.entries()? {
            if !owner.as_ref().is_some_and(keep) {
                self.remove(ip)?;
                released.push(ip);
            }
        }
        Ok(released)
    }

    /// Removes the file of `ip`.
    pub fn remove(&self, ip: IpAddr) -> Result<(), IpamError> {
        let path = self.path(&ip.to_string());
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(IpamError::io("release", &path)(e))
            }
            _ => Ok(()),
        }
    }

    fn write_temp(&self, name: &str, content: &[u8]) -> Result<PathBuf, IpamError> {
        let tmp = self.path(&format!("{TEMP_PREFIX}{name}.{}", std::process::id()));
        create_private(&tmp)
            .and_then(|mut f| f.write_all(content))
            .map_err(|e| {
                let _ = fs::remove_file(&tmp);
                IpamError::io("write", &tmp)(e)
            })?;
        Ok(tmp)
    }

    fn remove_temporaries(&self) -> Result<(), IpamError> {
        for entry in fs::read_dir(&self.store.dir)
            .map_err(IpamError::io("list store", &self.store.dir))?
            .flatten()
        {
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(())
    }
}

#[cfg(unix)]
fn create_private(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// File names cannot hold `:` on Windows; host-local writes `_` instead.
fn escape(name: &str) -> String {
    if cfg!(windows) {
        name.replace(':', "_")
    } else {
        name.to_owned()
    }
}

/// The address whose file `name` is: the file [`Locked::reserve`] creates for it, so that
/// a listed address is one that `reserve` sees as taken. Another spelling of an address
/// (`FD00::2` or `fd00:0::2` for `fd00::2`) is a different file on a case-sensitive file
/// system and holds nothing; on Windows, whose file names ignore case, only the case may differ.
fn address_of_file_name(name: &str) -> Option<IpAddr> {
    let ip: IpAddr = if cfg!(windows) {
        name.replace('_', ":").parse().ok()?
    } else {
        name.parse().ok()?
    };
    let own_name = escape(&ip.to_string());
    let same = if cfg!(windows) {
        own_name.eq_ignore_ascii_case(name)
    } else {
        own_name == name
    };
    same.then_some(ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_parsing_matches_host_local_formats() {
        let o = Owner::parse("ctr-1\r\neth0").unwrap();
        assert_eq!(
            o,
            Owner {
                container_id: "ctr-1".into(),
                ifname: Some("eth0".into())
            }
        );
        assert!(o.is("ctr-1", "eth0") && !o.is("ctr-1", "eth1") && !o.is("ctr-2", "eth0"));
        let legacy = Owner::parse("ctr-1\n").unwrap();
        assert!(legacy.is("ctr-1", "anything"));
        assert_eq!(Owner::parse("  \r\n"), None);
    }

    #[test]
    fn ipv6_file_names_are_escaped_on_windows_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), "net").unwrap();
        let locked = store.lock().unwrap();
        let ip: IpAddr = "fd00::2".parse().unwrap();
        assert!(locked.reserve(ip, "c1", "eth0", 1).unwrap());
        let name = if cfg!(windows) { "fd00__2" } else { "fd00::2" };
        assert_eq!(fs::read(store.dir().join(name)).unwrap(), b"c1\r\neth0");
        let owner = Owner {
            container_id: "c1".into(),
            ifname: Some("eth0".into()),
        };
        assert_eq!(locked.entries().unwrap(), [(ip, Some(owner))]);
        assert_eq!(locked.last_reserved(1), Some(ip));
    }

    #[test]
    fn reserve_is_exclusive_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), "net").unwrap();
        let locked = store.lock().unwrap();
        let ip: IpAddr = "10.1.0.2".parse().unwrap();
        assert!(locked.reserve(ip, " c1 ", "eth0", 0).unwrap());
        assert!(!locked.reserve(ip, "c2", "eth0", 0).unwrap());
        assert_eq!(
            fs::read(store.dir().join("10.1.0.2")).unwrap(),
            b"c1\r\neth0"
        );
        assert_eq!(
            fs::read(store.dir().join("last_reserved_ip.0")).unwrap(),
            b"10.1.0.2"
        );
        assert_eq!(locked.last_reserved(0), Some(ip));
        let mut names: Vec<String> = fs::read_dir(store.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["10.1.0.2", "last_reserved_ip.0", "lock"]);
        fs::write(store.dir().join(".tmp.10.1.0.3.999"), b"c3\r\neth0").unwrap();
        fs::write(store.dir().join("10.1.0.9"), b"").unwrap();
        drop(locked);
        let locked = store.lock().unwrap();
        assert!(
            !store.dir().join(".tmp.10.1.0.3.999").exists(),
            "temporaries are cleaned"
        );
        let entries = locked.entries().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1], ("10.1.0.9".parse().unwrap(), None));
    }

    #[test]
    fn only_the_file_reserve_writes_names_an_address() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), "net").unwrap();
        let locked = store.lock().unwrap();
        fs::write(store.dir().join("fd00:0::2"), b"other\r\neth0").unwrap();
        if cfg!(windows) {
            assert!(entries_of(&locked).is_empty());
        } else {
            fs::write(store.dir().join("FD00::2"), b"other\r\neth0").unwrap();
            assert!(
                entries_of(&locked).is_empty(),
                "no other spelling is listed"
            );
        }
        assert!(
            locked
                .reserve("fd00::2".parse().unwrap(), "c1", "eth0", 1)
                .unwrap(),
            "another spelling does not hold the address"
        );
        assert_eq!(entries_of(&locked), ["fd00::2".parse::<IpAddr>().unwrap()]);
        assert_eq!(
            address_of_file_name(&escape("fd00::2").to_uppercase()).is_some(),
            cfg!(windows),
            "only Windows file names ignore case"
        );
    }

    fn entries_of(locked: &Locked<'_>) -> Vec<IpAddr> {
        locked
            .entries()
            .unwrap()
            .into_iter()
            .map(|(ip, _)| ip)
            .collect()
    }
}
