//! Operations on one Node of a running lab, for restart experiments: stop and start its
//! `antrea-agent` (the same command line, configuration and files as `up`), restart its
//! `ovs-vswitchd`, timing how long the agent takes to put every flow back, and kill and restart
//! its `ovsdb-server`, checking that no flow or port is lost.

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{LabError, Result};
use crate::host::ovs::NodeOvs;
use crate::host::process::{alive, kill_now, stop_all};
use crate::layout::Layout;
use crate::plan::{BRIDGE, NodePlan, Wiring};
use crate::state::State;
use crate::wiring::agent::{self, AgentBinaries};
use crate::wiring::cluster::Cluster;

/// How long the agent may take to put the flows back after `ovs-vswitchd` restarts.
const FLOWS_BACK_TIMEOUT: Duration = Duration::from_secs(30);

/// The Node named `node` in the lab's topology.
fn node_plan(state: &State, node: &str) -> Result<NodePlan> {
    state
        .topology
        .nodes()
        .find(|n| n.name() == node)
        .ok_or_else(|| LabError::Node {
            node: node.to_owned(),
            message: "no such Node in this lab".to_owned(),
        })
}

/// The agent binaries `up` used; an error for a lab wired without an agent.
fn binaries(state: &State, node: &str, ready_timeout: Duration) -> Result<AgentBinaries> {
    match (state.topology.wiring, &state.agent_bin, &state.cni_bin) {
        (Wiring::Agent, Some(agent), Some(cni)) => Ok(AgentBinaries {
            agent: agent.clone(),
            cni: cni.clone(),
            ready_timeout,
        }),
        _ => Err(LabError::Node {
            node: node.to_owned(),
            message: "this lab has no agents (wiring normal)".to_owned(),
        }),
    }
}

/// Stops `node`'s agent (SIGTERM to its group, SIGKILL after the grace period) and waits
/// until it is gone. Returns its PID.
pub fn stop_agent(layout: &Layout, state: &State, node: &str) -> Result<i32> {
    node_plan(state, node)?;
    let marker = format!("{}/", layout.root().display());
    let pid = alive(&layout.agent_pidfile(node), &marker).ok_or_else(|| LabError::Node {
        node: node.to_owned(),
        message: "its antrea-agent is not running".to_owned(),
    })?;
    stop_all(&[pid], &marker);
    Ok(pid)
}

/// Starts `node`'s agent again as `up` did and waits until it is ready (its CNI socket
/// appears; a socket left by the previous run is removed first). Returns the time from the
/// start to readiness.
pub fn start_agent(
    layout: &Layout,
    state: &State,
    node: &str,
    ready_timeout: Duration,
) -> Result<Duration> {
    let plan = node_plan(state, node)?;
    let bins = binaries(state, node, ready_timeout)?;
    let marker = format!("{}/", layout.root().display());
    if let Some(pid) = alive(&layout.agent_pidfile(node), &marker) {
        return Err(LabError::Node {
            node: node.to_owned(),
            message: format!("its antrea-agent is already running (pid {pid})"),
        });
    }
    let socket = layout.cni_socket(node);
    if socket.exists() {
        fs::remove_file(&socket).map_err(|source| LabError::File {
            what: "stale CNI socket",
            path: socket.clone(),
            source,
        })?;
    }
    let started = Instant::now();
    let cluster = Cluster::new(layout, state.api);
    let controller = state.controller_bin.is_some();
    let mut child = agent::start_agent(
        layout,
        plan,
        state.topology.encap,
        &bins,
        &cluster,
        controller,
    )?;
    agent::wait_ready(layout, plan, &mut child, bins.ready_timeout)?;
    Ok(started.elapsed())
}

/// What an `ovs-vswitchd` restart showed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OvsRestart {
    /// The Node.
    pub node: String,
    /// Flows on br-int before the restart.
    pub flows: usize,
    /// Seconds from starting the new `ovs-vswitchd` until its control socket answered.
    pub vswitchd_start_seconds: f64,
    /// Seconds from starting the new `ovs-vswitchd` until br-int held exactly the flows it
    /// held before.
    pub flows_back_seconds: f64,
}

/// Kills `node`'s `ovs-vswitchd`, starts it again, and waits until br-int holds the same
/// flows as before (the agent replays them when it reconnects).
pub fn restart_ovs(layout: &Layout, state: &State, node: &str) -> Result<OvsRestart> {
    node_plan(state, node)?;
    let ovs = NodeOvs::new(layout, node);
    let before = ovs.flows(BRIDGE)?;
    let marker = format!("{}/", layout.root().display());
    let pid = alive(&ovs.vswitchd_pidfile(), &marker).ok_or_else(|| LabError::Node {
        node: node.to_owned(),
        message: "its ovs-vswitchd is not running".to_owned(),
    })?;
    stop_all(&[pid], &marker);
    let started = Instant::now();
    ovs.start_vswitchd()?;
    let vswitchd_start_seconds = started.elapsed().as_secs_f64();
    loop {
        if ovs.flows(BRIDGE).is_ok_and(|now| now == before) {
            break;
        }
        if started.elapsed() > FLOWS_BACK_TIMEOUT {
            return Err(LabError::Node {
                node: node.to_owned(),
                message: format!(
                    "br-int did not get its {} flows back within {} s of the ovs-vswitchd restart",
                    before.len(),
                    FLOWS_BACK_TIMEOUT.as_secs()
                ),
            });
        }
        thread::sleep(Duration::from_millis(5));
    }
    Ok(OvsRestart {
        node: node.to_owned(),
        flows: before.len(),
        vswitchd_start_seconds,
        flows_back_seconds: started.elapsed().as_secs_f64(),
    })
}

/// What an `ovsdb-server` crash and restart showed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OvsdbRestart {
    /// The Node.
    pub node: String,
    /// Flows on br-int before the crash; the same flows were there after.
    pub flows: usize,
    /// Interfaces (name and OpenFlow port) before the crash; the same were there after.
    pub interfaces: usize,
    /// Seconds from starting the new `ovsdb-server` until `ovs-vswitchd` had reconnected and
    /// applied a write to the database.
    pub vswitchd_synced_seconds: f64,
}

/// Kills `node`'s `ovsdb-server` with SIGKILL (a crash), starts it again on the same database,
/// waits until `ovs-vswitchd` has reconnected, and checks that br-int's flows and every
/// interface's OpenFlow port are what they were before. While `ovsdb-server` is down the
/// lab's userspace datapath does not forward (docs/lab.md); a kernel datapath would.
pub fn restart_ovsdb(layout: &Layout, state: &State, node: &str) -> Result<OvsdbRestart> {
    node_plan(state, node)?;
    let ovs = NodeOvs::new(layout, node);
    let flows = ovs.flows(BRIDGE)?;
    let interfaces = ovs.interfaces()?;
    let marker = format!("{}/", layout.root().display());
    let fail = |message: String| LabError::Node {
        node: node.to_owned(),
        message,
    };
    let pid = alive(&ovs.db_pidfile(), &marker)
        .ok_or_else(|| fail("its ovsdb-server is not running".to_owned()))?;
    kill_now(pid, &marker);
    if alive(&ovs.db_pidfile(), &marker) == Some(pid) {
        return Err(fail(format!("ovsdb-server (pid {pid}) survived SIGKILL")));
    }
    let started = Instant::now();
    ovs.start_db()?;
    // A write waits until ovs-vswitchd has applied it (ovs-vsctl's default): it has reconnected.
    ovs.vsctl(&[
        "set",
        "Open_vSwitch",
        ".",
        "external_ids:antrea-lab-ovsdb-restarted=true",
    ])?;
    let vswitchd_synced_seconds = started.elapsed().as_secs_f64();
    let (flows_after, interfaces_after) = (ovs.flows(BRIDGE)?, ovs.interfaces()?);
    if flows_after != flows {
        return Err(fail(format!(
            "br-int's flows changed across the ovsdb-server restart: {} before, {} after",
            flows.len(),
            flows_after.len()
        )));
    }
    if interfaces_after != interfaces {
        return Err(fail(format!(
            "interfaces changed across the ovsdb-server restart: {interfaces:?} before, \
             {interfaces_after:?} after"
        )));
    }
    Ok(OvsdbRestart {
        node: node.to_owned(),
        flows: flows.len(),
        interfaces: interfaces.len(),
        vswitchd_synced_seconds,
    })
}
