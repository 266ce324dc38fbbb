//! [`PodEndpoints`]: where the healing loop takes its intent from, the Pod endpoints the agent
//! owns; for the agent, the Pods its datapath has attached, which CNI ADD writes.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};

use hostnet::windows::heal::EndpointIntent;

use crate::cniserver::PodConfigurator;
use crate::datapath::Datapath;
use crate::error::AgentError;

/// A snapshot of the Pod endpoints the agent owns: each endpoint's name and the Pod's IP.
pub trait PodEndpoints: Send + Sync {
    /// The snapshot. An error means no snapshot: the pass is skipped, never run against an
    /// empty intent.
    fn pod_endpoints(&self) -> impl Future<Output = Result<EndpointIntent, AgentError>> + Send;
}

impl<D: Datapath> PodEndpoints for PodConfigurator<D> {
    /// Every attached Pod: its attachment's name is the endpoint's, and its recorded IP the
    /// Pod's. An attachment whose IP record is unreadable is owned all the same, with `0.0.0.0`,
    /// an address no endpoint holds (so it makes no other endpoint a duplicate).
    async fn pod_endpoints(&self) -> Result<EndpointIntent, AgentError> {
        Ok(self
            .attached_pods()
            .await?
            .into_iter()
            .map(|port| {
                let ip = port.ip.unwrap_or(Ipv4Addr::UNSPECIFIED);
                (port.name, IpAddr::V4(ip))
            })
            .collect())
    }
}
