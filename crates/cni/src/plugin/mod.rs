//! The `antrea` CNI plugin process: reads the `CNI_*` environment and stdin, forwards the command
//! to the agent and says what to print and which exit code to return.
//!
//! ADD/CHECK/DEL go to Antrea's `Cni` service; STATUS and GC go to the `CniLifecycle` extension
//! service. An agent without that service (Antrea's own) answers Unimplemented, which STATUS
//! takes as "available" (the agent answered) and GC as "nothing to collect" (the agent collects
//! its own leftovers when it starts). VERSION is answered locally.

mod invocation;

use std::time::Duration;

use localipc::Endpoint;
use serde_json::json;

pub use invocation::{Invocation, Operation};

use crate::rpc::{AgentClient, Command, DEFAULT_READY_WAIT, DEFAULT_TIMEOUT, pb};
use crate::spec::{CniError, CniVersion, NetConf, code};

/// Environment variable overriding the agent endpoint (`unix:/path`, `npipe:\\.\pipe\name`).
pub const SOCKET_ENV: &str = "ANTREA_CNI_SOCKET";

/// Environment variable overriding the call timeout, in seconds (fractions allowed).
pub const TIMEOUT_ENV: &str = "ANTREA_CNI_TIMEOUT";

/// Environment variable overriding how long a command waits for the agent to listen, in seconds
/// (fractions allowed, 0 for no wait).
pub const READY_WAIT_ENV: &str = "ANTREA_CNI_READY_WAIT";

/// The agent's CNI endpoint on this platform.
pub fn default_endpoint() -> Endpoint {
    if cfg!(windows) {
        Endpoint::NamedPipe(r"\\.\pipe\cnisock".to_owned())
    } else {
        Endpoint::Unix("/var/run/antrea/cni.sock".into())
    }
}

/// What the process prints on stdout and the code it exits with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Bytes for stdout: a result, VERSION info, an error object, or nothing.
    pub stdout: Vec<u8>,
    /// 0 on success, 1 on error (as libcni's skeleton).
    pub exit_code: i32,
}

impl Outcome {
    fn success(stdout: Vec<u8>) -> Outcome {
        Outcome {
            stdout,
            exit_code: 0,
        }
    }

    fn failure(error: &CniError, version: CniVersion) -> Outcome {
        let mut stdout = error.to_json(version).to_string().into_bytes();
        stdout.push(b'\n');
        Outcome {
            stdout,
            exit_code: 1,
        }
    }
}

/// Runs one plugin invocation with `env` as the environment and `stdin` as standard input.
pub fn run(env: &dyn Fn(&str) -> Option<String>, stdin: &[u8]) -> Outcome {
    let invocation = match Invocation::from_env(env) {
        Ok(i) => i,
        Err(e) => return Outcome::failure(&e, version_hint(stdin)),
    };
    if invocation.operation == Operation::Version {
        return Outcome::success(version_info(stdin));
    }
    let conf = match NetConf::parse(stdin) {
        Ok(c) => c,
        Err(e) => return Outcome::failure(&e, CniVersion::LATEST),
    };
    let version = match conf.version() {
        Ok(v) => v,
        Err(e) => return Outcome::failure(&e, CniVersion::LATEST),
    };
    match forward(&invocation, version, env, stdin) {
        Ok(out) => Outcome::success(out),
        Err(e) => Outcome::failure(&e, version),
    }
}

/// VERSION: the supported versions, labelled with the requested version when it is supported.
fn version_info(stdin: &[u8]) -> Vec<u8> {
    let supported: Vec<&str> = CniVersion::ALL.iter().map(|v| v.as_str()).collect();
    json!({ "cniVersion": version_hint(stdin).as_str(), "supportedVersions": supported })
        .to_string()
        .into_bytes()
}

/// The configuration's version if stdin names a supported one, else the latest.
fn version_hint(stdin: &[u8]) -> CniVersion {
    NetConf::parse(stdin)
        .ok()
        .and_then(|c| c.version().ok())
        .unwrap_or(CniVersion::LATEST)
}

fn forward(
    invocation: &Invocation,
    version: CniVersion,
    env: &dyn Fn(&str) -> Option<String>,
    stdin: &[u8],
) -> Result<Vec<u8>, CniError> {
    let command = match invocation.operation {
        Operation::Add => Command::Add,
        Operation::Del => Command::Del,
        Operation::Check if version.supports_check() => Command::Check,
        Operation::Status if version.supports_status_and_gc() => Command::Status,
        Operation::Gc if version.supports_status_and_gc() => Command::Gc,
        Operation::Check | Operation::Status | Operation::Gc => {
            return Err(CniError::new(
                code::INCOMPATIBLE_CNI_VERSION,
                format!(
                    "config version {version} does not allow {}",
                    invocation.operation.env_name()
                ),
            ));
        }
        Operation::Version => return Ok(version_info(stdin)),
    };
    // STATUS is a probe: it reports an agent that is not listening at once.
    let ready_wait = match command {
        Command::Status => Duration::ZERO,
        _ => seconds(env, READY_WAIT_ENV, DEFAULT_READY_WAIT, true)?,
    };
    let client = AgentClient::new(
        endpoint(env)?,
        seconds(env, TIMEOUT_ENV, DEFAULT_TIMEOUT, false)?,
    )
    .with_ready_wait(ready_wait);
    let args = pb::CniCmdArgs {
        container_id: invocation.container_id.clone(),
        netns: invocation.netns.clone(),
        ifname: invocation.ifname.clone(),
        args: invocation.args.clone(),
        path: invocation.path.clone(),
        network_configuration: stdin.to_vec(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            CniError::new(
                code::IO_FAILURE,
                format!("cannot start the async runtime: {e}"),
            )
        })?;
    match runtime.block_on(client.call(command, args)) {
        Ok(out) => Ok(out),
        Err(e) if e.is_unimplemented() && matches!(command, Command::Status | Command::Gc) => {
            Ok(Vec::new())
        }
        Err(e) => {
            let error = e.into_cni_error();
            if command == Command::Status && error.code == code::TRY_AGAIN_LATER {
                Err(CniError {
                    code: code::PLUGIN_NOT_AVAILABLE,
                    ..error
                })
            } else {
                Err(error)
            }
        }
    }
}

fn endpoint(env: &dyn Fn(&str) -> Option<String>) -> Result<Endpoint, CniError> {
    match env(SOCKET_ENV) {
        None => Ok(default_endpoint()),
        Some(text) => text.parse().map_err(|e| {
            CniError::new(
                code::INVALID_ENVIRONMENT_VARIABLES,
                format!("{SOCKET_ENV}: {e}"),
            )
        }),
    }
}

/// A duration in seconds from the variable `name`, `default` when it is unset.
fn seconds(
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
    default: Duration,
    zero_allowed: bool,
) -> Result<Duration, CniError> {
    match env(name) {
        None => Ok(default),
        Some(text) => text
            .parse::<f64>()
            .ok()
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .filter(|d| zero_allowed || !d.is_zero())
            .ok_or_else(|| {
                let what = if zero_allowed {
                    "non-negative"
                } else {
                    "positive"
                };
                CniError::new(
                    code::INVALID_ENVIRONMENT_VARIABLES,
                    format!("{name}: {text:?} is not a {what} number of seconds"),
                )
            }),
    }
}
