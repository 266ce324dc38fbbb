//! The [`Datapath`] boundary: the only way the controllers and the CNI server change how packets
//! move on this Node. They hand it model values — a Pod to attach, the peer Nodes, the
//! NetworkPolicy rules — and never see a switch, a port number or a flow.
//!
//! [`ovs::OvsDatapath`] implements it with Open vSwitch: OVSDB ports, the OpenFlow pipeline and
//! the Node OS's networking (`hostnet`). An HNS-native implementation (HNS endpoints, ACL and
//! load-balancer policies; `docs/architecture.md` says how each call maps) would implement the
//! same trait without a change to its callers.
//!
//! Every call is idempotent: repeating it with the same input changes nothing, and a call made
//! after a crash at any point brings the datapath to the input.

pub mod ovs;
pub mod step_clock;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::net::Ipv4Addr;
use std::time::Duration;

use hostnet::{PodInterface, PodInterfaceSpec, RouteChanges};
use ipnet::Ipv4Net;
use model::{NodeNetwork, PeerNode, PodKey, Protocol, Service, ServiceKey};
use netpol::{PolicyDelta, RuleId};

use crate::error::AgentError;
use step_clock::StepClock;

/// A Pod to attach: its identity and records, and the interface to create in its namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodAttach {
    pub key: PodKey,
    /// The container the CNI ADD is for.
    pub container_id: String,
    /// The interface in the Pod's namespace and its host side, with the address.
    pub interface: PodInterfaceSpec,
    /// Where the Pod's address is allocated (`<dataDir>/<network>` of the IPAM store), recorded
    /// with the attachment so a restarted agent can check the allocation still exists.
    pub ipam_store: String,
}

/// A Pod the datapath has attached, read back from the datapath itself (how a restarted agent
/// knows its Pods).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachedPod {
    /// The attachment's name: the host interface, the OVS port or the HNS endpoint.
    pub name: String,
    pub container_id: String,
    /// The interface name inside the Pod.
    pub ifname: String,
    /// The Pod, when the attachment names it.
    pub key: Option<PodKey>,
    /// The Pod's IPv4 address, when recorded.
    pub ip: Option<Ipv4Addr>,
    /// The IPAM store holding the address (see [`PodAttach::ipam_store`]).
    pub ipam_store: Option<String>,
}

/// What setting the peer Nodes changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerChanges {
    /// Peers whose forwarding was added or changed.
    pub set: Vec<String>,
    /// Peers whose forwarding was removed.
    pub removed: Vec<String>,
    /// The host routes to peers' Pod CIDRs.
    pub routes: RouteChanges,
    /// Whether the Pod egress SNAT rule changed.
    pub snat_changed: bool,
}

impl PeerChanges {
    /// Whether nothing was changed.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
            && self.removed.is_empty()
            && self.routes.is_empty()
            && !self.snat_changed
    }
}

/// What installing NetworkPolicy changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PolicyChanges {
    /// Rules in force.
    pub rules: usize,
    /// Rules whose datapath entries were worked out again (those the delta changed).
    pub rendered: usize,
    /// Datapath objects changed (flow mods for OVS).
    pub changed: usize,
}

/// What installing or removing one Service changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServiceChanges {
    /// Endpoints the Service has now, over all its ports (0 after a removal).
    pub endpoints: usize,
    /// Datapath objects changed (flow and group mods for OVS).
    pub changed: usize,
}

/// How the datapath enforces one rule, and what it counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleEnforcement {
    /// The rule's conjunction id in OVS (0 when it needs none, or for a datapath without).
    pub conj_id: u32,
    /// Datapath entries carrying the rule (flows for OVS).
    pub entries: usize,
    /// Entries the rule would need expanded pair by pair.
    pub entries_expanded: usize,
    /// The entries behind the rule, in the datapath's own text (`ovs-ofctl` syntax for OVS).
    pub texts: Vec<String>,
    /// Packets the rule let through.
    pub packets: u64,
    /// Bytes the rule let through.
    pub bytes: u64,
}

/// The datapath of one Node.
pub trait Datapath: Send + Sync + 'static {
    /// The Node's network as the datapath realises it.
    fn node(&self) -> &NodeNetwork;

    /// Creates the Pod's interface in its namespace and connects it, and returns only once
    /// traffic to and from the Pod's address flows; each step's time goes to `clock`. A
    /// repeated call for the same container returns the same interface and changes nothing.
    fn attach_pod(
        &self,
        pod: &PodAttach,
        clock: &mut StepClock,
    ) -> impl Future<Output = Result<PodInterface, AgentError>> + Send;

    /// Removes what [`Datapath::attach_pod`] made for the Pod `key` with attachment `name`,
    /// from any partial state; either may be unknown. Removing what is gone succeeds.
    fn detach_pod(
        &self,
        key: Option<&PodKey>,
        name: Option<&str>,
    ) -> impl Future<Output = Result<(), AgentError>> + Send;

    /// Every Pod attached, as the datapath records them.
    fn attached_pods(&self) -> impl Future<Output = Result<Vec<AttachedPod>, AgentError>> + Send;

    /// Host interfaces of Pods the datapath created (its own marker), with or without an
    /// attachment: those without one are leftovers of an attach cut short.
    fn pod_interfaces(&self) -> impl Future<Output = Result<Vec<String>, AgentError>> + Send;

    /// Checks that the Pod's interface is as `created` describes.
    fn check_pod(
        &self,
        spec: &PodInterfaceSpec,
        created: &PodInterface,
    ) -> impl Future<Output = Result<(), AgentError>> + Send;

    /// A value the agent keeps with the datapath across restarts (`None` when never set).
    fn record(&self, key: &str) -> impl Future<Output = Result<Option<String>, AgentError>> + Send;

    /// Sets a value kept with the datapath across restarts.
    fn set_record(
        &self,
        key: &str,
        value: &str,
    ) -> impl Future<Output = Result<(), AgentError>> + Send;

    /// Makes the peer Nodes exactly `peers`: forwarding to their Pods, the host's routes to
    /// them, and the Pod egress SNAT's exceptions.
    fn set_peers(
        &self,
        peers: &[PeerNode],
    ) -> impl Future<Output = Result<PeerChanges, AgentError>> + Send;

    /// Changes the NetworkPolicy enforced for this Node's Pods by `delta` (rules added, changed
    /// and removed, Pods isolated and released), touching only what the delta names: the
    /// datapath already holds the result the delta starts from (bring-up's first round or the
    /// previous update). On error nothing changed, and the same delta (or it followed by newer
    /// ones, [`PolicyDelta::then`]) can be sent again.
    fn update_policy(
        &self,
        delta: &PolicyDelta,
    ) -> impl Future<Output = Result<PolicyChanges, AgentError>> + Send;

    /// How each enforced rule is realised, with the datapath's counters.
    fn policy_enforcement(
        &self,
    ) -> impl Future<Output = Result<BTreeMap<RuleId, RuleEnforcement>, AgentError>> + Send;

    /// Makes the datapath load-balance `service` as it is now: its frontends (cluster IPs) to
    /// the usable endpoints of each port, replacing what an earlier call installed for the same
    /// key; the other Services are not touched. A Service the datapath cannot realise (port 0,
    /// a port or frontend listed twice, an affinity timeout of 0) is refused with
    /// [`AgentError::ServiceRefused`]: resending it refuses it again. On any error nothing
    /// changed, and the same Service can be sent again. It returns once the datapath holds
    /// the change; new connections are sure to take the new way once
    /// [`Datapath::settle_services`] returns.
    fn update_service(
        &self,
        service: &Service,
    ) -> impl Future<Output = Result<ServiceChanges, AgentError>> + Send;

    /// Makes the Node's own traffic to `destinations` (the Service CIDR) enter the datapath's
    /// Service load balancing (proxyAll), and only that: destinations sent before and not now
    /// stop being routed; with none, nothing is. Repeating the call changes nothing.
    fn set_service_routes(
        &self,
        destinations: &[Ipv4Net],
    ) -> impl Future<Output = Result<RouteChanges, AgentError>> + Send;

    /// Makes Service traffic from outside and from the Node to the Node's addresses on
    /// `node_ports` (on the addresses within `addresses`; empty: every Node address) enter the
    /// datapath's NodePort frontends (proxyAll), and only those ports: with none, nothing does.
    /// Returns whether anything changed; repeating the call changes nothing.
    fn set_node_ports(
        &self,
        node_ports: &BTreeSet<(Protocol, u16)>,
        addresses: &[Ipv4Net],
    ) -> impl Future<Output = Result<bool, AgentError>> + Send;

    /// Stops load-balancing Service `key`: its frontends and endpoints go. Removing a Service
    /// the datapath does not have succeeds and changes nothing; on error nothing changed. As
    /// for an update, [`Datapath::settle_services`] completes it.
    fn remove_service(
        &self,
        key: &ServiceKey,
    ) -> impl Future<Output = Result<ServiceChanges, AgentError>> + Send;

    /// Returns once new connections take the way the Service updates and removals since the
    /// last call set (no cached path leads to a removed endpoint or frontend) and the UDP
    /// conntrack entries those changes left to an endpoint or frontend a Service no longer has
    /// are flushed; returns how long that took. It costs the same after one change as after
    /// many, so call it once after a batch. A failure to settle is logged, not returned: the
    /// datapath's own upkeep brings it there later.
    fn settle_services(&self) -> impl Future<Output = Duration> + Send;
}
