//! [`OvsDatapath`]: the [`Datapath`] on Open vSwitch. It owns the bridge's OVSDB rows
//! ([`crate::ovs`]), the OpenFlow pipeline and its desired-flow cache ([`crate::flows`],
//! `pipeline`), and the Node OS's side of each change (`hostnet`): a Pod is a host interface, a
//! container port and the Pod's flows; a peer is its flows, a host route and an SNAT exception;
//! NetworkPolicy is the policy tables' conjunctive flows; a Service is its select groups and
//! load-balancing flows.
//!
//! [`bring_up`] makes one: bridge, uplink, gateway, tunnel and the flows of a new round.

mod bringup;
mod connections;
mod conntrack_dump;
mod ofports;
mod peers;
mod pods;
mod policy;
mod port_added;
mod revalidation;
mod services;

pub use bringup::{
    RunningNode, TUNNEL_PORT, bring_up, traffic_mode, transport_selector, tunnel_options,
};
pub use connections::ConnectionMetrics;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use hostnet::{HostNetwork, PodInterface, PodInterfaceSpec, RouteChanges};
use ipnet::Ipv4Net;
use model::{NodeNetwork, PeerNode, PodKey, Protocol, Service, ServiceKey};
use netpol::{PolicyDelta, RuleId, Snapshot};
use pipeline::layout::packet_in::PacketInOperation;
use pipeline::owners::{NETWORK_POLICY, NODE, PEER, POD};
use pipeline::render::{node_flows, peer_flows, pod_flows};
use pipeline::{Objects, Owner};

use super::step_clock::StepClock;
use super::{
    AttachedPod, Datapath, PeerChanges, PodAttach, PolicyChanges, RuleEnforcement, ServiceChanges,
};
use crate::error::AgentError;
use crate::flows::Flows;
use crate::ovs::OvsBridge;
use crate::ovs::unixctl::VswitchdControl;
use ofports::PodOfports;
use policy::PolicyState;
use services::ServiceState;

/// The Node's datapath on one OVS bridge.
#[derive(Debug)]
pub struct OvsDatapath<H> {
    network: NodeNetwork,
    bridge: OvsBridge,
    flows: Arc<Flows>,
    host: Arc<H>,
    /// See [`OvsOptions`].
    netdev: bool,
    gateway_if: String,
    snat: bool,
    vswitchd: VswitchdControl,
    ofports: PodOfports,
    policy: tokio::sync::Mutex<PolicyState>,
    services: tokio::sync::Mutex<ServiceState>,
}

/// How the OVS datapath treats the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OvsOptions {
    /// Userspace datapath (`netdev`): the kernel must be kept off OVS-owned host ends.
    pub netdev: bool,
    /// The gateway interface (`antrea-gw0`): next hop of tunnelled peers' routes.
    pub gateway_if: String,
    /// Pod egress masquerade (off with `noSNAT`).
    pub snat: bool,
    /// ovs-vswitchd's control socket (revalidation after Service changes).
    pub vswitchd: VswitchdControl,
}

impl<H> OvsDatapath<H> {
    /// The datapath of `network` on `bridge`, switched through `flows`, with no peer, Pod or
    /// NetworkPolicy or Service yet; [`bring_up`] makes the bridge and its fixed ports first.
    pub fn new(
        network: NodeNetwork,
        bridge: OvsBridge,
        flows: Arc<Flows>,
        host: Arc<H>,
        options: OvsOptions,
    ) -> OvsDatapath<H> {
        OvsDatapath {
            network,
            bridge,
            flows,
            host,
            netdev: options.netdev,
            gateway_if: options.gateway_if,
            snat: options.snat,
            vswitchd: options.vswitchd,
            ofports: PodOfports::default(),
            policy: tokio::sync::Mutex::default(),
            services: tokio::sync::Mutex::default(),
        }
    }

    /// Every owner's objects for a new round: the Node's (with the packet-in meters when the
    /// switch has packet-rate meters), `peers`', `policy`'s, `services`' and those of the Pods
    /// already attached (their ports' records), without installing anything. The Pods' OpenFlow port numbers are noted, so new Pods get other ones. `policy`
    /// is rendered whole and becomes what [`Datapath::update_policy`]'s deltas change; the
    /// Services' group ids are recorded, as after [`Datapath::update_service`] (a Service that
    /// cannot be rendered is logged and left out).
    pub async fn first_round(
        &self,
        peers: &[PeerNode],
        policy: &Snapshot,
        services: &[Service],
    ) -> Result<Vec<(Owner, Objects)>, AgentError> {
        let network = &self.network;
        let metered = self.flows.has_packet_rate_meters().await?;
        let mut node = Objects::from(node_flows(network));
        if metered {
            node.meters = PacketInOperation::meters();
        }
        let mut desired = vec![(Owner::from(NODE), node)];
        for peer in peers {
            desired.push((
                Owner::new(PEER, &peer.name),
                peer_flows(network, peer).into(),
            ));
        }
        desired.push((
            Owner::from(NETWORK_POLICY),
            self.policy.lock().await.render(policy).into(),
        ));
        desired.extend(
            self.services
                .lock()
                .await
                .render_round(services, metered, network),
        );
        for port in self.bridge.container_ports().await? {
            if let Some(ofport) = port.ofport {
                self.ofports.record(&port.port, ofport);
            }
            match (&port.pod, port.ofport) {
                (Some(pod), Some(ofport)) => desired.push((
                    Owner::new(POD, &pod.key),
                    pod_flows(network, pod, ofport).into(),
                )),
                _ => tracing::warn!(
                    "container port {} has incomplete records or no OpenFlow port; its flows wait for the CNI server",
                    port.port
                ),
            }
        }
        Ok(desired)
    }

    /// The bridge (OVSDB side).
    pub fn bridge(&self) -> &OvsBridge {
        &self.bridge
    }

    /// The bridge's flows (OpenFlow side).
    pub fn flows(&self) -> &Flows {
        &self.flows
    }
}

impl<H: HostNetwork + 'static> Datapath for OvsDatapath<H> {
    fn node(&self) -> &NodeNetwork {
        &self.network
    }

    async fn attach_pod(
        &self,
        pod: &PodAttach,
        clock: &mut StepClock,
    ) -> Result<PodInterface, AgentError> {
        self.attach(pod, clock).await
    }

    async fn detach_pod(&self, key: Option<&PodKey>, name: Option<&str>) -> Result<(), AgentError> {
        self.detach(key, name).await
    }

    async fn attached_pods(&self) -> Result<Vec<AttachedPod>, AgentError> {
        Ok(self
            .bridge
            .container_ports()
            .await?
            .into_iter()
            .map(|port| AttachedPod {
                name: port.port,
                container_id: port.container_id,
                ifname: port.ifname,
                key: port.key,
                ip: port.ip,
                ipam_store: port.ipam_store,
            })
            .collect())
    }

    async fn pod_interfaces(&self) -> Result<Vec<String>, AgentError> {
        Ok(self.host.pod_interfaces().await?)
    }

    async fn check_pod(
        &self,
        spec: &PodInterfaceSpec,
        created: &PodInterface,
    ) -> Result<(), AgentError> {
        self.check(spec, created).await
    }

    async fn record(&self, key: &str) -> Result<Option<String>, AgentError> {
        self.bridge.external_id(key).await
    }

    async fn set_record(&self, key: &str, value: &str) -> Result<(), AgentError> {
        self.bridge.set_external_id(key, value).await.map(drop)
    }

    async fn set_peers(&self, peers: &[PeerNode]) -> Result<PeerChanges, AgentError> {
        self.reconcile_peers(peers).await
    }

    async fn update_policy(&self, delta: &PolicyDelta) -> Result<PolicyChanges, AgentError> {
        self.install_policy(delta).await
    }

    async fn policy_enforcement(&self) -> Result<BTreeMap<RuleId, RuleEnforcement>, AgentError> {
        self.enforcement().await
    }

    async fn update_service(&self, service: &Service) -> Result<ServiceChanges, AgentError> {
        self.install_service(service).await
    }

    async fn remove_service(&self, key: &ServiceKey) -> Result<ServiceChanges, AgentError> {
        self.uninstall_service(key).await
    }

    async fn settle_services(&self) -> std::time::Duration {
        self.settle().await
    }

    async fn set_service_routes(
        &self,
        destinations: &[Ipv4Net],
    ) -> Result<RouteChanges, AgentError> {
        let routes = hostnet::ServiceRoutes {
            interface: self.gateway_if.clone(),
            destinations: destinations.to_vec(),
        };
        Ok(self.host.reconcile_service_routes(&routes).await?)
    }

    async fn set_node_ports(
        &self,
        node_ports: &BTreeSet<(Protocol, u16)>,
        addresses: &[Ipv4Net],
    ) -> Result<bool, AgentError> {
        let rules = hostnet::NodePortRules {
            ports: node_ports.clone(),
            addresses: addresses.to_vec(),
        };
        let outcome = self.host.reconcile_node_ports(&rules).await?;
        Ok(outcome == hostnet::Outcome::Changed)
    }
}
