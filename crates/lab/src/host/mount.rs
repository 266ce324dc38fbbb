//! Mounts under the state directory: the shared bind mount that lets Pod network namespaces
//! containerd mounts later reach the agents' mount namespaces, and the removal of every mount
//! under the state directory (containerd's network namespaces, sandbox `/dev/shm`, overlay root
//! file systems), deepest first, before `down` removes the directory.

use std::fs;
use std::path::{Path, PathBuf};

use nix::mount::{MntFlags, MsFlags, mount, umount2};

use crate::error::{LabError, Result};

/// Makes `dir` a mount point of its own with shared propagation (as `ip netns` does for
/// `/run/netns`): a mount made under it later in this mount namespace also appears in the
/// mount namespaces `ip netns exec` gave processes started before (their copies are slaves).
pub fn bind_shared(dir: &Path) -> Result<()> {
    let fail = |e: nix::Error| LabError::File {
        what: "shared bind mount",
        path: dir.to_owned(),
        source: e.into(),
    };
    fs::create_dir_all(dir).map_err(|source| LabError::File {
        what: "directory",
        path: dir.to_owned(),
        source,
    })?;
    mount(Some(dir), dir, None::<&str>, MsFlags::MS_BIND, None::<&str>).map_err(fail)?;
    mount(
        None::<&str>,
        dir,
        None::<&str>,
        MsFlags::MS_SHARED,
        None::<&str>,
    )
    .map_err(fail)
}

/// The mount points at or under `root` in `mountinfo` text (`/proc/self/mountinfo`), deepest
/// first. Octal escapes in mount points (`\040` for a space) are decoded.
pub fn mounts_under(mountinfo: &str, root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape(field)))
        .filter(|point| point.starts_with(root))
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    found
}

fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            std::str::from_utf8(d)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Unmounts every mount at or under `root` (lazily, so a busy one goes once unused), deepest
/// first, until none is left. Returns the mount points removed.
pub fn unmount_all_under(root: &Path) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    // Stacked mounts on one point need one pass each; 64 passes is a hang guard.
    for _ in 0..64 {
        let text = fs::read_to_string("/proc/self/mountinfo").map_err(|source| LabError::File {
            what: "mount table",
            path: "/proc/self/mountinfo".into(),
            source,
        })?;
        let points = mounts_under(&text, root);
        if points.is_empty() {
            return Ok(removed);
        }
        for point in points {
            umount2(&point, MntFlags::MNT_DETACH).map_err(|e| LabError::File {
                what: "unmount",
                path: point.clone(),
                source: e.into(),
            })?;
            removed.push(point);
        }
    }
    Err(LabError::Output {
        tool: "umount",
        message: format!("mounts under {} keep coming back", root.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_under_the_root_come_deepest_first() {
        let info = "\
22 1 8:0 / / rw - ext4 /dev/vda rw
30 22 0:4 / /run/lab/n1/containerd/state/cri/netns rw shared:5 - ext4 /dev/vda rw
31 30 0:4 net:[4026532] /run/lab/n1/containerd/state/cri/netns/cni-1 rw shared:5 - nsfs nsfs rw
32 22 0:50 / /run/lab/n1/containerd/state/task/abc/rootfs rw - overlay overlay rw
33 22 0:51 / /run/lab\\040x/other rw - tmpfs tmpfs rw
34 22 0:52 / /run/lab-other/x rw - tmpfs tmpfs rw
";
        assert_eq!(
            mounts_under(info, Path::new("/run/lab")),
            [
                PathBuf::from("/run/lab/n1/containerd/state/cri/netns/cni-1"),
                PathBuf::from("/run/lab/n1/containerd/state/task/abc/rootfs"),
                PathBuf::from("/run/lab/n1/containerd/state/cri/netns"),
            ]
        );
        assert_eq!(
            mounts_under(info, Path::new("/run/lab x")),
            [PathBuf::from("/run/lab x/other")]
        );
    }
}
