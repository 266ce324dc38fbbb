//! What `down` does for a Node that runs containerd, around the lab's usual process stop:
//! first, while containerd and the Node's agent still run, every Pod sandbox is stopped and
//! removed through CRI (so containerd runs the CNI DEL and removes its network namespace and
//! mounts); afterwards, containers a killed containerd left behind are killed and deleted with
//! `runc` from the runc root in the Node's tree; last, the lab's cgroups and the empty
//! directories containerd's shims make outside the tree. The mounts are removed by `down`
//! itself.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::containerd::CRI_NAMESPACE;
use super::pod::{connect, lab_cgroup, remove_sandbox};
use crate::host::command::run;
use crate::host::process::alive;
use crate::layout::{CONTAINERD_DIR, Layout};

/// The Nodes under the state directory that have a containerd tree.
pub fn containerd_nodes(layout: &Layout) -> Vec<String> {
    let mut nodes: Vec<String> = fs::read_dir(layout.root())
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().join(CONTAINERD_DIR).is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    nodes.sort();
    nodes
}

/// Stops and removes every sandbox of `node` through CRI, when its containerd and its agent are
/// both running (without the agent the CNI DEL could not be served). Returns the sandboxes
/// removed, or why none could be.
pub fn remove_pods(layout: &Layout, node: &str, marker: &str) -> Result<Vec<String>, String> {
    if alive(&layout.containerd_pidfile(node), marker).is_none() {
        return Ok(Vec::new());
    }
    if alive(&layout.agent_pidfile(node), marker).is_none() {
        return Err(format!(
            "{node}: its antrea-agent is not running, so its Pods are removed without a CNI DEL"
        ));
    }
    let mut cri = connect(layout, node).map_err(|e| e.to_string())?;
    let sandboxes = cri.list_pod_sandboxes().map_err(|e| e.to_string())?;
    let mut removed = Vec::new();
    for sandbox in sandboxes {
        remove_sandbox(&mut cri, node, &sandbox.id).map_err(|e| e.to_string())?;
        removed.push(sandbox.id);
    }
    Ok(removed)
}

/// Kills and deletes (`runc delete --force`) every container left in `node`'s runc root, once
/// containerd and its shims are gone, with the results containerd's CNI library cached for them
/// (no DEL ran for them, so nothing else removes those). Returns the container IDs.
pub fn force_remove_containers(layout: &Layout, node: &str) -> Result<Vec<String>, String> {
    let root = layout.runc_root(node).join(CRI_NAMESPACE);
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    let runc = || {
        let mut cmd = Command::new("runc");
        cmd.arg("--root").arg(&root);
        cmd
    };
    let listed = run(runc().args(["list", "--quiet"])).map_err(|e| e.to_string())?;
    let ids: Vec<String> = listed.split_whitespace().map(str::to_owned).collect();
    for id in &ids {
        run(runc().args(["delete", "--force", id])).map_err(|e| e.to_string())?;
        remove_cni_cache(Path::new(CNI_CACHE), id).map_err(|e| format!("{CNI_CACHE}: {e}"))?;
    }
    Ok(ids)
}

/// libcni's result cache, which containerd 1.6 does not let the configuration move.
const CNI_CACHE: &str = "/var/lib/cni/results";

/// Removes the cached results of container `id` (`<network>-<id>-<ifname>`) from `cache`.
fn remove_cni_cache(cache: &Path, id: &str) -> std::io::Result<()> {
    let entries = match fs::read_dir(cache) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let infix = format!("-{id}-");
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().contains(&infix) {
            fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Where cgroup hierarchies are mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// The directory the runc shim puts its sockets in whatever the configuration says
/// (`/run/containerd/s`), and its parent; `down` removes them when they are empty.
const SHIM_SOCKET_DIRS: [&str; 2] = ["/run/containerd/s", "/run/containerd"];

/// Removes the lab's cgroup ([`lab_cgroup`]) from every hierarchy, children first; a cgroup
/// can only go once its processes have. Returns the cgroup directories removed.
pub fn remove_cgroups(layout: &Layout) -> Result<Vec<PathBuf>, String> {
    let name = lab_cgroup(layout);
    let mut removed = Vec::new();
    let hierarchies = fs::read_dir(CGROUP_ROOT).map_err(|e| format!("{CGROUP_ROOT}: {e}"))?;
    for hierarchy in hierarchies.flatten() {
        let top = hierarchy.path().join(&name);
        if top.is_dir() {
            remove_cgroup_tree(&top, &mut removed)?;
        }
    }
    Ok(removed)
}

fn remove_cgroup_tree(dir: &Path, removed: &mut Vec<PathBuf>) -> Result<(), String> {
    let children = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for child in children.flatten() {
        if child.file_type().is_ok_and(|t| t.is_dir()) {
            remove_cgroup_tree(&child.path(), removed)?;
        }
    }
    fs::remove_dir(dir).map_err(|e| format!("cgroup {}: {e}", dir.display()))?;
    removed.push(dir.to_owned());
    Ok(())
}

/// Removes the shims' socket directories when they are empty (another containerd's sockets,
/// or a system containerd's, keep them).
pub fn remove_empty_shim_dirs() {
    for dir in SHIM_SOCKET_DIRS {
        let _ = fs::remove_dir(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_containers_cache_entries_go() {
        let dir = std::env::temp_dir().join(format!("antrea-lab-cni-cache-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        for name in [
            "antrea-abc-eth0",
            "cni-loopback-abc-lo",
            "antrea-abcd-eth0",
            "antrea-xabc-eth0",
        ] {
            fs::write(dir.join(name), "{}").unwrap();
        }
        remove_cni_cache(&dir, "abc").unwrap();
        let mut left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["antrea-abcd-eth0", "antrea-xabc-eth0"]);
        remove_cni_cache(&dir.join("missing"), "abc").unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }
}
