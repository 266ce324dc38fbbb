//! [`AgentError`]: why the agent could not start or keep a Node up, one variant per step, each
//! naming the objects involved so an operator can act on the message alone.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::ConfigError;
use crate::node::NodeInfoError;
use crate::tasks::TaskFailure;

/// A failure of the agent's start-up, or of one of its tasks once it runs.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("policyComputation: controller: {reason}")]
    ControllerMode { reason: String },
    #[error(
        "Node {node:?} did not appear with a Pod CIDR and an InternalIP in {dir} within {waited:?}: {reason}"
    )]
    NodeNotReady {
        node: String,
        dir: PathBuf,
        waited: Duration,
        reason: String,
    },
    #[error("Node {node:?}: {source}")]
    NodeInfo {
        node: String,
        #[source]
        source: NodeInfoError,
    },
    #[error("host network: {0}")]
    Host(#[from] hostnet::Error),
    #[error("OVSDB {what}: {source}")]
    Ovsdb {
        what: String,
        #[source]
        source: ovsdb::Error,
    },
    #[error("OpenFlow connection to {endpoint}: {source}")]
    OpenFlow {
        endpoint: String,
        #[source]
        source: openflow::conn::ConnError,
    },
    #[error(
        "port {name}: OVSDB refused to create it (name taken), but holds no Port with an Interface of that name (a Port found: {port}, an Interface found: {interface})"
    )]
    PortNameTaken {
        name: String,
        port: bool,
        interface: bool,
    },
    #[error("OVSDB gives {name} OpenFlow port {ofport}, but the switch's port list lacks it")]
    PortNotOnSwitch { name: String, ofport: u32 },
    #[error("setting no-flood on the uplink {nic}: {source}")]
    NoFlood {
        nic: String,
        #[source]
        source: openflow::of10::Of10Error,
    },
    #[error("flows: {0}")]
    Flows(#[from] pipeline::ApplyError),
    #[error("flows: {0}")]
    Cache(#[from] pipeline::CacheError),
    #[error("refused: {0}")]
    ServiceRefused(#[from] pipeline::render::ServiceError),
    #[error("the bridge's recorded round: {0}")]
    Round(#[from] pipeline::ModelError),
    #[error(
        "the Node IP is on bridge {bridge} but no uplink NIC is recorded for it; restore the NIC's configuration by hand"
    )]
    UplinkUnknown { bridge: String },
    #[error("transport interface {nic} has no IPv4 address")]
    NoTransportAddress { nic: String },
    #[error("no free OpenFlow port number for another Pod (numbers 1-32767 are all in use)")]
    NoFreeOfport,
    #[error("interface {name:?} did not appear within {waited:?}")]
    InterfaceMissing { name: String, waited: Duration },
    #[error("Node bring-up failed ({error}); the NIC's configuration was restored: {restored}")]
    RolledBack {
        error: Box<AgentError>,
        restored: String,
    },
    #[error("CNI server on {endpoint}: {source}")]
    CniSocket {
        endpoint: String,
        #[source]
        source: std::io::Error,
    },
    #[error("agent API on {address}: {source}")]
    ApiListen {
        address: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("health check servers cannot listen on ports {ports:?} (logged with their Services)")]
    HealthCheckListen { ports: Vec<u16> },
    #[error("agent API: {0}")]
    ApiSetup(#[from] crate::apiserver::ApiSetupError),
    #[error("Kubernetes API: {0}")]
    Kubernetes(#[from] crate::kubernetes::KubernetesError),
    #[error(
        "after the NIC takeover of {nic} neither the default gateway ({gateway}) nor the API server ({api_server}) answered {rounds} probe rounds in a row, so the takeover was undone ({outcome}); the Pod datapath is gone and the agent stops"
    )]
    TakeoverRolledBack {
        nic: String,
        gateway: String,
        api_server: String,
        rounds: u32,
        outcome: String,
    },
    #[error("the {task} task {failure}")]
    Task {
        /// The task, as [`crate::tasks::Tasks`] names it.
        task: &'static str,
        failure: TaskFailure,
    },
    #[error("no host network backend for this operating system yet")]
    UnsupportedPlatform,
}

impl AgentError {
    /// Wraps an OVSDB error with what the agent was doing.
    pub fn ovsdb(what: impl Into<String>) -> impl FnOnce(ovsdb::Error) -> AgentError {
        let what = what.into();
        move |source| AgentError::Ovsdb { what, source }
    }
}
