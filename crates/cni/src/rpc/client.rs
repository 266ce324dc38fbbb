//! Plugin side: one CNI command sent to the agent over a local endpoint, with a bounded time.

use std::time::Duration;

use hyper_util::rt::TokioIo;
use localipc::Endpoint;
use tonic::Code;
use tonic::transport::Channel;

use super::lifecycle::cni_lifecycle_client::CniLifecycleClient;
use super::pb::cni_client::CniClient;
use super::{ANTREA_CNI_API_VERSION, pb};
use crate::spec::{CniError, code};

/// How long one command may take, connection included, unless configured otherwise. The agent
/// may wait up to 30 s for the Pod network before answering ADD.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a call waits for the agent to start listening, unless configured otherwise: the
/// agent opens its endpoint only once the Node is ready, as long as Antrea's
/// `networkReadyTimeout`.
pub const DEFAULT_READY_WAIT: Duration = Duration::from_secs(30);

/// How often the endpoint is dialed again while nothing listens on it.
const READY_POLL: Duration = Duration::from_millis(100);

/// The CNI command sent to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `Cni.CmdAdd`.
    Add,
    /// `Cni.CmdCheck`.
    Check,
    /// `Cni.CmdDel`.
    Del,
    /// `CniLifecycle.CmdStatus`.
    Status,
    /// `CniLifecycle.CmdGc`.
    Gc,
}

/// Why a call did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The agent could not be reached or did not answer in time.
    #[error("Antrea agent at {endpoint} is unavailable: {reason}")]
    Unavailable {
        /// The endpoint dialed.
        endpoint: Endpoint,
        /// What went wrong.
        reason: String,
    },
    /// The call failed at the gRPC level.
    #[error("gRPC call to the Antrea agent failed: {0}")]
    Rpc(tonic::Status),
    /// The agent answered with a CNI error.
    #[error(transparent)]
    Agent(CniError),
}

impl CallError {
    /// Whether the agent does not implement the called RPC.
    pub fn is_unimplemented(&self) -> bool {
        matches!(self, CallError::Rpc(s) if s.code() == Code::Unimplemented)
    }

    /// The CNI error a plugin prints: unreachable/Unavailable/DeadlineExceeded → 11, a
    /// connection that broke during the call (a status made from a transport error, not sent by
    /// the agent) → 11, Unimplemented → 202, other gRPC failures → 201, agent errors unchanged.
    pub fn into_cni_error(self) -> CniError {
        match self {
            CallError::Agent(e) => e,
            CallError::Unavailable { .. } => CniError::new(code::TRY_AGAIN_LATER, self.to_string()),
            CallError::Rpc(s) => match s.code() {
                Code::Unavailable | Code::DeadlineExceeded => {
                    CniError::new(code::TRY_AGAIN_LATER, format!("Antrea agent is unavailable: {}", s.message()))
                }
                Code::Unimplemented => CniError::new(
                    code::INCOMPATIBLE_API_VERSION,
                    format!(
                        "incompatible CNI API version between client (antrea plugin) and server (Antrea agent), client is using version {ANTREA_CNI_API_VERSION}"
                    ),
                )
                .with_details(s.message().to_owned()),
                Code::Unknown if std::error::Error::source(&s).is_some() => {
                    CniError::new(code::TRY_AGAIN_LATER, format!("the connection to the Antrea agent broke: {s}"))
                }
                _ => CniError::new(code::UNKNOWN_RPC_ERROR, format!("gRPC call failed: {s}")),
            },
        }
    }
}

/// A client for the agent's CNI server.
#[derive(Debug, Clone)]
pub struct AgentClient {
    endpoint: Endpoint,
    timeout: Duration,
    ready_wait: Duration,
}

impl AgentClient {
    /// A client for `endpoint` whose calls (connection included) end after `timeout`. A call
    /// made while nothing listens on the endpoint dials again until [`DEFAULT_READY_WAIT`] has
    /// passed.
    pub fn new(endpoint: Endpoint, timeout: Duration) -> AgentClient {
        AgentClient {
            endpoint,
            timeout,
            ready_wait: DEFAULT_READY_WAIT,
        }
    }

    /// The same client waiting up to `ready_wait` (still within the call's timeout) for the
    /// agent to listen; zero dials once.
    pub fn with_ready_wait(self, ready_wait: Duration) -> AgentClient {
        AgentClient { ready_wait, ..self }
    }

    /// Sends `command` and returns the agent's result bytes (empty for DEL/CHECK/STATUS/GC).
    pub async fn call(&self, command: Command, args: pb::CniCmdArgs) -> Result<Vec<u8>, CallError> {
        let unavailable = |reason: String| CallError::Unavailable {
            endpoint: self.endpoint.clone(),
            reason,
        };
        let attempt = async {
            let channel = self
                .connect()
                .await
                .map_err(|e| unavailable(source_chain(&e)))?;
            let request = pb::CniCmdRequest {
                cni_args: Some(args),
            };
            let response = match command {
                Command::Add => CniClient::new(channel).cmd_add(request).await,
                Command::Check => CniClient::new(channel).cmd_check(request).await,
                Command::Del => CniClient::new(channel).cmd_del(request).await,
                Command::Status => CniLifecycleClient::new(channel).cmd_status(request).await,
                Command::Gc => CniLifecycleClient::new(channel).cmd_gc(request).await,
            };
            let response = response.map_err(CallError::Rpc)?.into_inner();
            match response.error {
                Some(e) => Err(CallError::Agent(CniError::new(
                    u32::try_from(e.code).unwrap_or(0),
                    e.message,
                ))),
                None => Ok(response.cni_result),
            }
        };
        tokio::time::timeout(self.timeout, attempt)
            .await
            .unwrap_or_else(|_| Err(unavailable(format!("no answer within {:?}", self.timeout))))
    }

    async fn connect(&self) -> Result<Channel, tonic::transport::Error> {
        let endpoint = self.endpoint.clone();
        let ready_wait = self.ready_wait;
        tonic::transport::Endpoint::from_static("http://antrea-agent.invalid")
            .connect_with_connector(tower::service_fn(move |_| {
                let endpoint = endpoint.clone();
                async move {
                    dial_when_ready(&endpoint, ready_wait)
                        .await
                        .map(TokioIo::new)
                }
            }))
            .await
    }
}

/// Dials `endpoint`, dialing again every [`READY_POLL`] while nothing listens there yet (the
/// agent is still starting) until `ready_wait` has passed. Other failures end at once.
async fn dial_when_ready(
    endpoint: &Endpoint,
    ready_wait: Duration,
) -> std::io::Result<localipc::Stream> {
    let deadline = tokio::time::Instant::now() + ready_wait;
    loop {
        match localipc::dial(endpoint).await {
            Err(e) if not_listening_yet(&e) => {
                if tokio::time::Instant::now() + READY_POLL > deadline {
                    return Err(if ready_wait.is_zero() {
                        e
                    } else {
                        std::io::Error::new(
                            e.kind(),
                            format!(
                                "the Antrea agent did not become ready within {ready_wait:?}: {e}"
                            ),
                        )
                    });
                }
                tokio::time::sleep(READY_POLL).await;
            }
            result => return result,
        }
    }
}

/// Whether a dial failed because no server has opened the endpoint yet: the socket file or pipe
/// does not exist, or a stale socket file refuses connections.
fn not_listening_yet(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
    )
}

/// An error with its sources, `a: b: c`.
fn source_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_broken_during_the_call_means_try_again_later() {
        let broken = tonic::Status::from_error(Box::new(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "broken pipe",
        )));
        assert_eq!(
            CallError::Rpc(broken).into_cni_error().code,
            code::TRY_AGAIN_LATER
        );
    }

    #[test]
    fn an_unknown_status_sent_by_the_agent_stays_an_rpc_error() {
        let sent = tonic::Status::unknown("agent said so");
        assert_eq!(
            CallError::Rpc(sent).into_cni_error().code,
            code::UNKNOWN_RPC_ERROR
        );
    }
}
