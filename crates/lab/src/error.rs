//! The lab's errors, each saying what it was doing and with which value.

use std::io;
use std::path::PathBuf;

use crate::cni::CniError;
use crate::plan::PlanError;
use crate::state::StateError;

/// Anything that stops a lab command.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A command ran and failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// Its standard error (trimmed).
        stderr: String,
    },
    /// A program could not be started.
    #[error("cannot run `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        source: io::Error,
    },
    /// A file or directory operation failed.
    #[error("{what} {path}: {source}")]
    File {
        /// What the file is.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// Something did not happen in time.
    #[error("timed out after {seconds:.1} s waiting for {what}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long.
        seconds: f64,
    },
    /// `up` found a lab (or its leftovers).
    #[error("a lab already exists ({what}); run `antrea-lab down` first")]
    Exists {
        /// What was found.
        what: String,
    },
    /// No state file.
    #[error("no lab is up (no state file {0}); run `antrea-lab up` first")]
    NotUp(PathBuf),
    /// The state file is unusable.
    #[error(transparent)]
    State(#[from] StateError),
    /// The requested size cannot be addressed.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A needed binary is missing.
    #[error("{what} not found at {path} ({hint})")]
    MissingBinary {
        /// Which binary.
        what: &'static str,
        /// Where it was looked for.
        path: PathBuf,
        /// Which option sets it.
        hint: &'static str,
    },
    /// The agent of a Node exited before it was ready.
    #[error(
        "antrea-agent of {node} exited before it was ready ({status}); its log ends with:\n{log_tail}"
    )]
    AgentExited {
        /// The Node.
        node: String,
        /// Its exit status, as far as known.
        status: String,
        /// The last lines of its log.
        log_tail: String,
    },
    /// The CNI plugin failed or returned no usable result.
    #[error("CNI ADD of Pod {pod}: {source}{}", if stderr.is_empty() { String::new() } else { format!("; plugin stderr: {stderr}") })]
    Cni {
        /// The Pod.
        pod: String,
        /// What was wrong with the result.
        source: CniError,
        /// The plugin's standard error.
        stderr: String,
    },
    /// A name that is not an endpoint of the lab.
    #[error("{0}: not an endpoint of this lab (a Pod, a Node or lab-ext)")]
    UnknownEndpoint(String),
    /// An operation on one Node of a running lab cannot be done.
    #[error("{node}: {message}")]
    Node {
        /// The Node.
        node: String,
        /// Why.
        message: String,
    },
    /// A request to the fake API server failed or was refused.
    #[error("fake API server, {request}: {message}")]
    Api {
        /// The request.
        request: String,
        /// What went wrong (the server's Status message when it answered).
        message: String,
    },
    /// The sandbox image cannot be built.
    #[error("sandbox image: {0}")]
    Image(String),
    /// A Node's containerd failed, or refused a CRI call.
    #[error("containerd of {node}: {message}")]
    Containerd {
        /// The Node.
        node: String,
        /// What went wrong.
        message: String,
    },
    /// Options that do not go together.
    #[error("{0}")]
    Options(String),
    /// A lab Service cannot be given its endpoints.
    #[error("Service {service}: {message}")]
    ServiceEndpoints {
        /// `namespace/name`.
        service: String,
        /// Why.
        message: String,
    },
    /// A tool's output could not be read.
    #[error("{tool} output: {message}")]
    Output {
        /// The tool.
        tool: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The check ran and some probes failed (the report was printed).
    #[error("{failed} of {total} probes failed")]
    CheckFailed {
        /// Failed probes.
        failed: usize,
        /// All probes.
        total: usize,
    },
}

/// Results of lab operations.
pub type Result<T> = std::result::Result<T, LabError>;
