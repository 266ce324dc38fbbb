//! [`Reachability`]: one way to tell whether a target answers, and [`TcpProbe`], the one that
//! works on every platform.

use std::future::Future;
use std::io;
use std::time::Duration;

use tokio::net::TcpStream;

/// Why a probe found its target unreachable.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// Nothing answered in time.
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
    /// The target's name resolved to no address.
    #[error("{target} resolves to no address")]
    Unresolved {
        /// The name probed.
        target: String,
    },
    /// The OS reported a failure (unreachable network, refused connection...).
    #[error("{target}: {source}")]
    Io {
        /// What was probed.
        target: String,
        /// The OS's error.
        #[source]
        source: io::Error,
    },
    /// There is no such target to probe (an absent `Option` probe).
    #[error("no target to probe")]
    NoTarget,
    /// An ICMP echo came back with a status other than success.
    #[error("{target}: ICMP echo status {status}")]
    IcmpStatus {
        /// The address probed.
        target: String,
        /// The `IP_STATUS` code (e.g. 11010 `IP_REQ_TIMED_OUT`, 11003 `IP_DEST_HOST_UNREACHABLE`).
        status: u32,
    },
}

/// Tells whether one target (the default gateway, the API server) can be reached.
pub trait Reachability: Send + Sync {
    /// What is probed, for logs (e.g. `tcp 10.96.0.1:443`).
    fn target(&self) -> String;

    /// One probe. It should give up after `timeout`; the watchdog also stops waiting then.
    fn probe(&self, timeout: Duration) -> impl Future<Output = Result<(), ProbeError>> + Send;
}

/// A target that may be absent (an agent without an API server has only the gateway to
/// watch): `None` never answers, with [`ProbeError::NoTarget`].
impl<P: Reachability> Reachability for Option<P> {
    fn target(&self) -> String {
        match self {
            Some(probe) => probe.target(),
            None => "none".to_owned(),
        }
    }

    async fn probe(&self, timeout: Duration) -> Result<(), ProbeError> {
        match self {
            Some(probe) => probe.probe(timeout).await,
            None => Err(ProbeError::NoTarget),
        }
    }
}

/// What a [`TcpProbe`] accepts as an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpAnswer {
    /// Only an accepted connection: a service must listen there (the API server).
    Accepted,
    /// An accepted or a refused connection: a refusal (TCP RST) also proves that the host
    /// answered, which is all a reachability check of a router needs.
    AcceptedOrRefused,
}

/// Connects to `host:port` over TCP, then closes the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpProbe {
    target: String,
    answer: TcpAnswer,
}

impl TcpProbe {
    /// A probe of `target` (`host:port`; the host may be a name or an IP) that counts `answer`
    /// as reachable.
    pub fn new(target: impl Into<String>, answer: TcpAnswer) -> Self {
        TcpProbe {
            target: target.into(),
            answer,
        }
    }
}

impl Reachability for TcpProbe {
    fn target(&self) -> String {
        format!("tcp {}", self.target)
    }

    async fn probe(&self, timeout: Duration) -> Result<(), ProbeError> {
        let io_error = |source| ProbeError::Io {
            target: self.target.clone(),
            source,
        };
        let connect = async {
            let addresses = tokio::net::lookup_host(&self.target)
                .await
                .map_err(io_error)?;
            let mut last = None;
            for address in addresses {
                match TcpStream::connect(address).await {
                    Ok(_) => return Ok(()),
                    Err(e)
                        if e.kind() == io::ErrorKind::ConnectionRefused
                            && self.answer == TcpAnswer::AcceptedOrRefused =>
                    {
                        return Ok(());
                    }
                    Err(e) => last = Some(e),
                }
            }
            Err(match last {
                Some(e) => io_error(e),
                None => ProbeError::Unresolved {
                    target: self.target.clone(),
                },
            })
        };
        tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| ProbeError::TimedOut(timeout))?
    }
}
