//! `antrea-lab down`: stops every process the lab started (the PIDs in its pidfiles, plus any
//! process inside a `lab-*` namespace whose command line names the state directory), each
//! only after checking its command line; deletes every `lab-*` namespace; removes the state
//! directory. Idempotent, and needs no state file, so it also cleans up after a failed `up`.
//! A Node running containerd first has its Pod sandboxes removed through CRI; after the stop,
//! containers left behind are deleted with runc, and every mount under the state directory
//! (network namespaces, root file systems) is unmounted before the directory goes.

use std::collections::BTreeSet;
use std::fs;
use std::time::{Duration, Instant};

use crate::error::{LabError, Result};
use crate::host::command::wait_until;
use crate::host::mount::unmount_all_under;
use crate::host::netns::{self, lab_namespaces};
use crate::host::process::{cmdline, is_ours, pidfiles_under, read_pid, stop_all};
use crate::layout::Layout;
use crate::runtime::teardown::{
    containerd_nodes, force_remove_containers, remove_cgroups, remove_empty_shim_dirs, remove_pods,
};
use crate::wiring::common::layout_marker;

/// What `down` did.
#[derive(Debug, Clone, Default)]
pub struct DownReport {
    /// The processes stopped (PID and command line).
    pub stopped: Vec<String>,
    /// The namespaces deleted.
    pub namespaces: Vec<String>,
    /// The Pod sandboxes removed through a Node's containerd (`node id`).
    pub sandboxes: Vec<String>,
    /// The containers deleted with runc because containerd had not removed them (`node id`).
    pub forced_containers: Vec<String>,
    /// How many mounts under the state directory were unmounted.
    pub unmounted: usize,
    /// Why a Node's Pods were not removed through CRI (they are removed by force).
    pub notes: Vec<String>,
    /// Whether the state directory was removed.
    pub removed_state_dir: bool,
    /// What could not be cleaned.
    pub warnings: Vec<String>,
    /// Wall time.
    pub seconds: f64,
}

/// Removes the lab rooted at `layout`.
pub fn down(layout: &Layout) -> Result<DownReport> {
    let started = Instant::now();
    let marker = layout_marker(layout);
    let mut report = DownReport::default();
    let containerd_nodes = containerd_nodes(layout);
    for node in &containerd_nodes {
        match remove_pods(layout, node, &marker) {
            Ok(ids) => report
                .sandboxes
                .extend(ids.into_iter().map(|id| format!("{node} {id}"))),
            Err(why) => report.notes.push(why),
        }
    }
    let namespaces = lab_namespaces()?;
    let mut candidates: BTreeSet<i32> = pidfiles_under(layout.root())
        .iter()
        .filter_map(|p| read_pid(p))
        .collect();
    candidates.extend(namespaces.iter().flat_map(|ns| netns::pids(ns)));
    let ours: Vec<i32> = candidates
        .into_iter()
        .filter(|p| is_ours(*p, &marker))
        .collect();
    let described: Vec<String> = ours
        .iter()
        .map(|p| format!("{p} {}", cmdline(*p)))
        .collect();
    let stopped = stop_all(&ours, &marker);
    report.stopped = described
        .into_iter()
        .zip(&ours)
        .filter(|(_, p)| stopped.contains(p))
        .map(|(d, _)| d)
        .collect();
    for pid in ours.iter().filter(|p| is_ours(**p, &marker)) {
        report.warnings.push(format!("process {pid} did not exit"));
    }
    for node in &containerd_nodes {
        match force_remove_containers(layout, node) {
            Ok(ids) => report
                .forced_containers
                .extend(ids.into_iter().map(|id| format!("{node} {id}"))),
            Err(why) => report.warnings.push(why),
        }
    }
    for ns in namespaces {
        // Children of stopped processes may take a moment to go.
        let _ = wait_until("", Duration::from_secs(1), || netns::pids(&ns).is_empty());
        let foreign = netns::pids(&ns);
        if !foreign.is_empty() {
            report.warnings.push(format!("namespace {ns} still holds processes the lab did not start: {foreign:?} (left running)"));
        }
        match netns::delete(&ns) {
            Ok(()) => report.namespaces.push(ns),
            Err(e) => report.warnings.push(e.to_string()),
        }
    }
    if !containerd_nodes.is_empty() {
        if let Err(why) = remove_cgroups(layout) {
            report.warnings.push(why);
        }
        remove_empty_shim_dirs();
    }
    match unmount_all_under(layout.root()) {
        Ok(points) => report.unmounted = points.len(),
        Err(e) => report.warnings.push(e.to_string()),
    }
    if layout.root().exists() {
        fs::remove_dir_all(layout.root()).map_err(|source| LabError::File {
            what: "state directory",
            path: layout.root().to_owned(),
            source,
        })?;
        report.removed_state_dir = true;
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
