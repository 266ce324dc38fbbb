//! `antrea-lab status`: the lab's shape from the state file, which expected namespaces exist,
//! and every process the lab started with whether it is alive.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::error::{LabError, Result};
use crate::host::netns::lab_namespaces;
use crate::host::process::{is_ours, pidfiles_under, read_pid};
use crate::layout::Layout;
use crate::plan::{API_NETNS, ClusterApi, EXT_NETNS, UNDERLAY_NETNS, Wiring};
use crate::state::{Phase, State};
use crate::wiring::common::layout_marker;

/// What exists.
#[derive(Debug, Clone)]
pub struct Status {
    /// The state file.
    pub state: State,
    /// Expected namespaces that are missing.
    pub missing_namespaces: Vec<String>,
    /// Expected namespaces present.
    pub present_namespaces: Vec<String>,
    /// Each pidfile (relative to the state directory), its PID, and whether it is alive.
    pub processes: Vec<(PathBuf, Option<i32>, bool)>,
}

impl Status {
    /// Everything expected exists and every process is alive.
    pub fn healthy(&self) -> bool {
        self.state.phase == Phase::Up
            && self.missing_namespaces.is_empty()
            && self.processes.iter().all(|p| p.2)
    }

    /// The text shown to operators.
    pub fn to_text(&self, layout: &Layout) -> String {
        let s = &self.state;
        let t = s.topology;
        let mut out = String::new();
        let phase = match s.phase {
            Phase::Up => format!("up (built in {:.1} s)", s.up_seconds.unwrap_or_default()),
            Phase::Building => "building, or a failed up (run antrea-lab down)".to_owned(),
        };
        let _ = writeln!(
            out,
            "lab {}: {} Nodes x {} Pods, wiring {}, encap {}, api {}, runtime {}, {phase}",
            layout.root().display(),
            t.nodes,
            t.pods_per_node,
            t.wiring,
            t.encap,
            s.api,
            s.runtime
        );
        let _ = writeln!(
            out,
            "namespaces: {} present{}",
            self.present_namespaces.len(),
            if self.missing_namespaces.is_empty() {
                String::new()
            } else {
                format!(", MISSING: {}", self.missing_namespaces.join(" "))
            }
        );
        for pod in &s.pods {
            let ip = pod.ip.map_or_else(|| "-".to_owned(), |ip| ip.to_string());
            let _ = writeln!(out, "  pod {:<12} {:<15} on {}", pod.name, ip, pod.node);
        }
        let _ = writeln!(out, "processes:");
        for (path, pid, alive) in &self.processes {
            let pid = pid.map_or_else(|| "?".to_owned(), |p| p.to_string());
            let _ = writeln!(
                out,
                "  {:<8} {:<6} {}",
                pid,
                if *alive { "alive" } else { "DEAD" },
                path.display()
            );
        }
        let _ = writeln!(
            out,
            "{}",
            if self.healthy() {
                "healthy"
            } else {
                "NOT healthy"
            }
        );
        out
    }
}

/// Reads the state and looks at the namespaces and processes.
pub fn status(layout: &Layout) -> Result<Status> {
    let state =
        State::load(&layout.state_file())?.ok_or_else(|| LabError::NotUp(layout.state_file()))?;
    let mut expected: Vec<String> = vec![UNDERLAY_NETNS.to_owned(), EXT_NETNS.to_owned()];
    if state.topology.wiring == Wiring::Agent && state.api == ClusterApi::Fake {
        expected.push(API_NETNS.to_owned());
    }
    expected.extend(state.topology.nodes().map(|n| n.name()));
    expected.extend(state.pods.iter().map(|p| p.name.clone()));
    let existing = lab_namespaces()?;
    let (present_namespaces, missing_namespaces) =
        expected.into_iter().partition(|n| existing.contains(n));
    let marker = layout_marker(layout);
    let processes = pidfiles_under(layout.root())
        .into_iter()
        .map(|path| {
            let pid = read_pid(&path);
            let alive = pid.is_some_and(|p| is_ours(p, &marker));
            (
                path.strip_prefix(layout.root())
                    .map(|p| p.to_owned())
                    .unwrap_or(path),
                pid,
                alive,
            )
        })
        .collect();
    Ok(Status {
        state,
        missing_namespaces,
        present_namespaces,
        processes,
    })
}
