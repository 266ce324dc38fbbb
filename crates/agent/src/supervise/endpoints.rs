//! [`PodEndpoints`]: where the healing loop takes its intent from, the Pod endpoints the agent
//! owns; for the agent, the container ports of its bridge, which CNI ADD writes.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};

use hostnet::HostNetwork;
use hostnet::windows::heal::EndpointIntent;

use crate::cniserver::PodConfigurator;
use crate::error::AgentError;

/// A snapshot of the Pod endpoints the agent owns: each endpoint's name and the Pod's IP.
pub trait PodEndpoints: Send + Sync {
    /// The snapshot. An error means no snapshot: the pass is skipped, never run against an
    /// empty intent.
    fn pod_endpoints(&self) -> impl Future<Output = Result<EndpointIntent, AgentError>> + Send;
}

impl<H: HostNetwork> PodEndpoints for PodConfigurator<H> {
    /// Every container port of the bridge: its name is the endpoint's, and its recorded IP the
    /// Pod's. A port whose IP record is unreadable is owned all the same, with `0.0.0.0`, an
    /// address no endpoint holds (so it makes no other endpoint a duplicate).
    async fn pod_endpoints(&self) -> Result<EndpointIntent, AgentError> {
        Ok(self
            .container_ports()
            .await?
            .into_iter()
            .map(|port| {
                let ip = port.ip.unwrap_or(Ipv4Addr::UNSPECIFIED);
                (port.port, IpAddr::V4(ip))
            })
            .collect())
    }
}
