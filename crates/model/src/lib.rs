//! The datapath-neutral model of the agent: the values controllers hand to a datapath and a
//! control plane may ship to agents, free of OVS and OpenFlow notions, all (de)serializable with
//! serde.
//!
//! - [`node`]: this Node's network ([`NodeNetwork`]) and how it carries traffic to others.
//! - [`peer`]: the other Nodes ([`PeerNode`]) and the route to each ([`PeerRoute`]).
//! - [`pod`]: a Pod on this Node ([`LocalPod`]).
//! - [`policy`]: NetworkPolicy as rules over address and port sets ([`Snapshot`]), computed by
//!   the `netpol` crate.
//! - [`service`]: Services as a datapath load-balances them ([`Service`], [`ServicePort`],
//!   [`Endpoint`]), target ports resolved.
//! - [`virtual_addresses`]: the addresses the datapath answers for itself
//!   ([`GLOBAL_VIRTUAL_MAC`], [`VIRTUAL_SERVICE_IP`]).
//!
//! The project's address types live here too, the only ones any crate may use:
//!
//! - [`MacAddr`]: an Ethernet address. It prints `02:00:0a:f4:01:0a`; Windows' upper-case dash
//!   form (`00-15-5D-01-02-03`, as HNS and IP Helper write it) is [`MacAddr::windows`], a
//!   formatting choice on the same type. [`mac`] states the one text rule every parser follows.
//! - [`Ipv4Net`] (re-exported from `ipnet`): an IPv4 address with a prefix length, both a subnet
//!   (`10.244.1.0/24`) and an interface address with its subnet (`10.10.0.11/24`): it keeps host
//!   bits ([`Ipv4Net::addr`]); [`Ipv4Net::network`] and [`Ipv4Net::trunc`] clear them. It
//!   (de)serializes as its text form. Where both families are allowed (CNI results and IPAM
//!   ranges), crates use the same crate's `ipnet::IpNet`.
//!
//! `tests/one_address_type.rs` fails when any other crate defines its own MAC or CIDR type.

pub mod mac;
pub mod node;
pub mod peer;
pub mod pod;
pub mod policy;
pub mod service;
pub mod virtual_addresses;

pub use ipnet::Ipv4Net;
pub use mac::{MacAddr, MacParseError};
pub use node::{NodeNetwork, TrafficMode, TunnelType};
pub use peer::{PeerNode, PeerRoute};
pub use pod::LocalPod;
pub use policy::{
    AddressSet, Direction, Isolation, Peers, PodKey, PolicyKey, PortMatch, Ports, Protocol, Rule,
    RuleId, RulePart, Snapshot,
};
pub use service::{
    Endpoint, EndpointConditions, Service, ServiceKey, ServicePort, SessionAffinity, TrafficPolicy,
};
pub use virtual_addresses::{GLOBAL_VIRTUAL_MAC, VIRTUAL_NODE_PORT_IP, VIRTUAL_SERVICE_IP};
