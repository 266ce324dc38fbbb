//! `antrea-lab up`: the LAN and external host, the fake API server (`--api fake`) and
//! antrea-controller (`--controller`), the Nodes (in parallel), their wiring, the Pods
//! (Nodes in parallel, Pods of one Node in order; made by the lab itself or, with `--runtime
//! containerd`, by each Node's containerd through CRI), a `serve` answerer in every namespace,
//! and with `--api fake` the lab's Services and its DNS answerer.
//! The state file is written first (phase `building`) and updated as Pods appear, so a lab
//! that fails half-way is still fully known to `down`; unless asked to keep it, `up` runs
//! `down` itself on failure.

use std::fs;
use std::path::PathBuf;
use std::thread;
use std::time::Instant;

use super::down;
use crate::error::{LabError, Result};
use crate::host::netns::lab_namespaces;
use crate::layout::Layout;
use crate::plan::{ClusterApi, EXT_NETNS, Runtime, Topology, Wiring};
use crate::runtime::{containerd, image, pod};
use crate::state::{Phase, PodRecord, State};
use crate::wiring::agent::{self, AgentBinaries};
use crate::wiring::cluster::Cluster;
use crate::wiring::{apiserver, common, controller, normal, services};

/// What `up` was asked for.
#[derive(Debug, Clone)]
pub struct UpOptions {
    /// The shape.
    pub topology: Topology,
    /// The binaries (`agent` wiring only).
    pub agent: Option<AgentBinaries>,
    /// Where the agents read the cluster (`agent` wiring only).
    pub api: ClusterApi,
    /// The fake API server binary (`api` fake only).
    pub apiserver_bin: Option<PathBuf>,
    /// antrea-controller's binary (`--controller`, with `api` fake only): the agents then take
    /// their NetworkPolicy from it.
    pub controller_bin: Option<PathBuf>,
    /// Who creates the Pods (`agent` wiring only).
    pub runtime: Runtime,
    /// Leave a half-built lab in place when building fails (for inspection; `down` removes it).
    pub keep_on_failure: bool,
}

/// Builds the lab; on failure everything made so far is removed (unless `keep_on_failure`).
pub fn up(layout: &Layout, options: &UpOptions) -> Result<State> {
    if layout.root().exists() {
        return Err(LabError::Exists {
            what: format!("state directory {}", layout.root().display()),
        });
    }
    let existing = lab_namespaces()?;
    if !existing.is_empty() {
        return Err(LabError::Exists {
            what: format!("namespaces {}", existing.join(" ")),
        });
    }
    let bins = match (options.topology.wiring, &options.agent) {
        (Wiring::Agent, Some(bins)) => {
            bins.verify()?;
            Some(bins)
        }
        (Wiring::Agent, None) => {
            return Err(LabError::MissingBinary {
                what: "antrea-agent",
                path: "".into(),
                hint: "set --agent-bin and --cni-bin",
            });
        }
        (Wiring::Normal, _) => None,
    };
    match (options.api, options.topology.wiring, &options.apiserver_bin) {
        (ClusterApi::Directory, _, _) => {}
        (ClusterApi::Fake, Wiring::Normal, _) => {
            return Err(LabError::Options(
                "--api fake needs --wiring agent: without agents nothing reads the API".into(),
            ));
        }
        (ClusterApi::Fake, Wiring::Agent, Some(bin)) => apiserver::verify(bin)?,
        (ClusterApi::Fake, Wiring::Agent, None) => {
            return Err(LabError::MissingBinary {
                what: "antrea-fake-apiserver",
                path: "".into(),
                hint: "set --apiserver-bin, or use --api directory",
            });
        }
    }
    if let Some(bin) = &options.controller_bin {
        if options.api != ClusterApi::Fake {
            return Err(LabError::Options(
                "--controller needs --api fake: antrea-controller reads the cluster from the API server"
                    .into(),
            ));
        }
        controller::verify(bin)?;
    }
    match (options.runtime, options.topology.wiring) {
        (Runtime::Direct, _) => {}
        (Runtime::Containerd, Wiring::Normal) => {
            return Err(LabError::Options(
                "--runtime containerd needs --wiring agent: containerd runs the antrea CNI plugin"
                    .into(),
            ));
        }
        (Runtime::Containerd, Wiring::Agent) => containerd::verify_programs()?,
    }
    fs::create_dir_all(layout.root()).map_err(|source| LabError::File {
        what: "state directory",
        path: layout.root().to_owned(),
        source,
    })?;
    let started = Instant::now();
    let mut state = State::building(
        options.topology,
        bins.map(|b| b.agent.clone()),
        bins.map(|b| b.cni.clone()),
    );
    state.api = options.api;
    state.apiserver_bin = options.apiserver_bin.clone();
    state.controller_bin = options.controller_bin.clone();
    state.runtime = options.runtime;
    let built = state
        .save(&layout.state_file())
        .map_err(LabError::from)
        .and_then(|()| build(layout, &mut state, bins));
    match built {
        Ok(()) => {
            state.phase = Phase::Up;
            state.up_seconds = Some(started.elapsed().as_secs_f64());
            state.save(&layout.state_file())?;
            Ok(state)
        }
        Err(e) if options.keep_on_failure => Err(e),
        Err(e) => {
            if let Ok(report) = down::down(layout) {
                for warning in report.warnings {
                    eprintln!("antrea-lab up: cleanup: {warning}");
                }
            }
            Err(e)
        }
    }
}

fn build(layout: &Layout, state: &mut State, bins: Option<&AgentBinaries>) -> Result<()> {
    let topology = state.topology;
    common::underlay()?;
    common::external(topology.wiring)?;
    let nodes: Vec<_> = topology.nodes().collect();
    in_parallel(&nodes, |&node| {
        common::node(layout, node)?;
        match topology.wiring {
            Wiring::Normal => normal::bridge(layout, node),
            Wiring::Agent => Ok(()),
        }
    })?;
    let cluster = Cluster::new(layout, state.api);
    if let Some(bins) = bins {
        if let Some(bin) = &state.apiserver_bin {
            apiserver::start(layout, bin)?;
        }
        if state.runtime == Runtime::Containerd {
            image::build(
                std::path::Path::new(image::BUSYBOX),
                &layout.sandbox_image(),
            )?;
            // Before the agents start: their mount namespaces must hold the shared netns mount.
            in_parallel(&nodes, |&node| {
                containerd::prepare(layout, node, &bins.cni)?;
                let mut child = containerd::start(layout, node)?;
                containerd::wait_ready(layout, node, &mut child)?;
                containerd::import_image(layout, node)
            })?;
        }
        agent::publish_nodes(&cluster, &topology)?;
        if let Some(bin) = &state.controller_bin {
            controller::start(layout, bin)?;
            controller::create_agent_service_account(&layout.api_socket())?;
            for &node in &nodes {
                controller::issue_agent_token(layout, &layout.api_socket(), &node.name())?;
            }
        }
        let with_controller = state.controller_bin.is_some();
        let mut agents = Vec::new();
        for &node in &nodes {
            agents.push((
                node,
                agent::start_agent(
                    layout,
                    node,
                    topology.encap,
                    bins,
                    &cluster,
                    with_controller,
                )?,
            ));
        }
        for (node, child) in &mut agents {
            agent::wait_ready(layout, *node, child, bins.ready_timeout)?;
        }
    }
    let per_node: Vec<Vec<PodRecord>> = in_parallel(&nodes, |&node| {
        topology
            .pods_of(node)
            .map(|plan| match (bins, state.runtime) {
                (Some(_), Runtime::Containerd) => pod::add_pod(layout, plan, &cluster),
                (Some(bins), Runtime::Direct) => agent::add_pod(layout, plan, bins, &cluster),
                (None, _) => normal::pod(layout, plan),
            })
            .collect()
    })?;
    state.pods = per_node.into_iter().flatten().collect();
    state.save(&layout.state_file())?;
    let mut answerers: Vec<String> = state.pods.iter().map(|p| p.name.clone()).collect();
    answerers.extend(nodes.iter().map(|n| n.name()));
    answerers.push(EXT_NETNS.to_owned());
    in_parallel(&answerers, |netns| common::start_serve(layout, netns))?;
    if state.api == ClusterApi::Fake {
        services::set_up(layout, &cluster, state)?;
    }
    Ok(())
}

/// Runs `f` on every item on its own thread; the results in item order, or the first error.
fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let f = &f;
    thread::scope(|scope| {
        let handles: Vec<_> = items
            .iter()
            .map(|item| scope.spawn(move || f(item)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(LabError::Output {
                        tool: "antrea-lab",
                        message: "a build thread panicked".into(),
                    })
                })
            })
            .collect()
    })
}
