//! NetworkPolicy as a datapath enforces it: allow rules as applied-to Pods × peer addresses ×
//! ports, and the Pods each direction isolates (computed by the `netpol` crate). A datapath
//! (OpenFlow conjunctions, HNS ACLs, or anything else) turns a [`Snapshot`] into its own state;
//! nothing here knows about a datapath.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::Ipv4Addr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::Ipv4Net;

/// A Pod's identity: `namespace/name`. Its names are shared, so that the many maps keyed by
/// Pod (a policy engine's members, its groups, the controller's view) clone it without
/// allocating.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PodKey {
    pub namespace: Arc<str>,
    pub name: Arc<str>,
}

impl PodKey {
    pub fn new(namespace: impl AsRef<str>, name: impl AsRef<str>) -> PodKey {
        PodKey {
            namespace: namespace.as_ref().into(),
            name: name.as_ref().into(),
        }
    }
}

impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A NetworkPolicy's identity: `namespace/name`.
pub type PolicyKey = PodKey;

/// Which traffic a rule is about, seen from the applied-to Pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// Traffic to the Pod; peers are sources.
    Ingress,
    /// Traffic from the Pod; peers are destinations.
    Egress,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Ingress => "ingress",
            Direction::Egress => "egress",
        })
    }
}

/// An L4 protocol a NetworkPolicy port can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Protocol {
    Tcp,
    Udp,
    Sctp,
}

impl Protocol {
    /// The IP protocol number.
    pub fn number(self) -> u8 {
        match self {
            Protocol::Tcp => 6,
            Protocol::Udp => 17,
            Protocol::Sctp => 132,
        }
    }

    /// Parses the Kubernetes spelling (`TCP`, `UDP`, `SCTP`).
    pub fn parse(text: &str) -> Option<Protocol> {
        match text {
            "TCP" => Some(Protocol::Tcp),
            "UDP" => Some(Protocol::Udp),
            "SCTP" => Some(Protocol::Sctp),
            _ => None,
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
            Protocol::Sctp => "SCTP",
        })
    }
}

/// Destination ports `start..=end` of one protocol; `0..=65535` is every port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PortMatch {
    pub protocol: Protocol,
    pub start: u16,
    pub end: u16,
}

impl PortMatch {
    /// Every port of `protocol`.
    pub fn all(protocol: Protocol) -> PortMatch {
        PortMatch {
            protocol,
            start: 0,
            end: u16::MAX,
        }
    }

    /// One port.
    pub fn single(protocol: Protocol, port: u16) -> PortMatch {
        PortMatch {
            protocol,
            start: port,
            end: port,
        }
    }

    /// Whether this is every port of its protocol.
    pub fn is_all(&self) -> bool {
        self.start == 0 && self.end == u16::MAX
    }

    /// Whether `port` of `protocol` is in the match.
    pub fn contains(&self, protocol: Protocol, port: u16) -> bool {
        self.protocol == protocol && (self.start..=self.end).contains(&port)
    }
}

impl fmt::Display for PortMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_all() {
            write!(f, "{}", self.protocol)
        } else if self.start == self.end {
            write!(f, "{}/{}", self.protocol, self.start)
        } else {
            write!(f, "{}/{}-{}", self.protocol, self.start, self.end)
        }
    }
}

/// Peer addresses: Pod IPs and CIDRs (an ipBlock's `except`s already cut out, so the CIDRs
/// need no exceptions of their own).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AddressSet {
    pub ips: BTreeSet<Ipv4Addr>,
    pub cidrs: BTreeSet<Ipv4Net>,
}

impl AddressSet {
    pub fn is_empty(&self) -> bool {
        self.ips.is_empty() && self.cidrs.is_empty()
    }

    /// Whether `ip` is in the set.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        self.ips.contains(&ip) || self.cidrs.iter().any(|c| c.contains(&ip))
    }

    /// Number of entries (each a flow match for a renderer).
    pub fn len(&self) -> usize {
        self.ips.len() + self.cidrs.len()
    }
}

/// The peers of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Peers {
    /// Any address (an empty or absent `from`/`to`).
    Any,
    Set(AddressSet),
}

impl Peers {
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        match self {
            Peers::Any => true,
            Peers::Set(set) => set.contains(ip),
        }
    }
}

/// The destination ports of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ports {
    /// Any protocol and port (an empty or absent `ports`).
    Any,
    Set(BTreeSet<PortMatch>),
}

impl Ports {
    pub fn contains(&self, protocol: Protocol, port: u16) -> bool {
        match self {
            Ports::Any => true,
            Ports::Set(set) => set.iter().any(|m| m.contains(protocol, port)),
        }
    }
}

/// Which part of a NetworkPolicy rule a [`Rule`] carries. Named ports resolve per Pod, so one
/// rule of the policy becomes one [`Rule`] for its numeric ports and one per distinct set of
/// resolved named ports.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RulePart {
    /// The numeric ports (or every port).
    Numeric,
    /// The named ports, resolved to these ports for the Pods of this part.
    Named(BTreeSet<PortMatch>),
}

/// A rule's stable identity: the policy, the direction, the rule's index in the policy's list,
/// and the part.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RuleId {
    pub policy: PolicyKey,
    pub direction: Direction,
    pub index: usize,
    pub part: RulePart,
}

impl fmt::Display for RuleId {
    /// `ns/name/ingress/0` or, for a named-port part, `ns/name/ingress/0[TCP/8080,...]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.policy, self.direction, self.index)?;
        if let RulePart::Named(ports) = &self.part {
            let list: Vec<String> = ports.iter().map(ToString::to_string).collect();
            write!(f, "[{}]", list.join(","))?;
        }
        Ok(())
    }
}

/// An allow rule: traffic in `direction` between a Pod of `applied_to` (by IP; always local
/// Pods) and a peer of `peers`, to a destination port of `ports`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rule {
    pub id: RuleId,
    pub applied_to: BTreeSet<Ipv4Addr>,
    pub peers: Peers,
    pub ports: Ports,
}

impl Rule {
    pub fn direction(&self) -> Direction {
        self.id.direction
    }

    /// Whether this rule allows a packet from `src` to `dst` with destination `port` of
    /// `protocol` (the reference meaning for renderers and tests).
    pub fn allows(&self, src: Ipv4Addr, dst: Ipv4Addr, protocol: Protocol, port: u16) -> bool {
        let (local, peer) = match self.direction() {
            Direction::Ingress => (dst, src),
            Direction::Egress => (src, dst),
        };
        self.applied_to.contains(&local)
            && self.peers.contains(peer)
            && self.ports.contains(protocol, port)
    }
}

/// The local Pods a direction isolates: any policy selecting the Pod that covers the direction
/// makes all traffic in that direction denied unless a rule allows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Isolation {
    pub ingress: BTreeSet<Ipv4Addr>,
    pub egress: BTreeSet<Ipv4Addr>,
}

impl Isolation {
    pub fn of(&self, direction: Direction) -> &BTreeSet<Ipv4Addr> {
        match direction {
            Direction::Ingress => &self.ingress,
            Direction::Egress => &self.egress,
        }
    }
}

/// The complete result for the Node at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Each rule by its id; (de)serialized as the list of rules (ids are not text keys).
    #[serde(with = "rules_as_list")]
    pub rules: BTreeMap<RuleId, Rule>,
    pub isolation: Isolation,
}

impl Snapshot {
    /// Whether a new connection from `src` to `dst` (`protocol`/`port`) is allowed, as far as
    /// this Node decides: egress at `src` if it is a local isolated Pod, ingress at `dst` if it
    /// is one. Connections between a Pod and its own Node's host are the renderer's business.
    pub fn allows(&self, src: Ipv4Addr, dst: Ipv4Addr, protocol: Protocol, port: u16) -> bool {
        [Direction::Egress, Direction::Ingress]
            .into_iter()
            .all(|direction| {
                let local = match direction {
                    Direction::Ingress => dst,
                    Direction::Egress => src,
                };
                !self.isolation.of(direction).contains(&local)
                    || self
                        .rules
                        .values()
                        .any(|r| r.direction() == direction && r.allows(src, dst, protocol, port))
            })
    }
}

/// A rule map as the list of its rules: each rule carries its id.
mod rules_as_list {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serializer};

    use super::{Rule, RuleId};

    pub fn serialize<S: Serializer>(
        rules: &BTreeMap<RuleId, Rule>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(rules.values())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<RuleId, Rule>, D::Error> {
        let rules = Vec::<Rule>::deserialize(d)?;
        Ok(rules.into_iter().map(|r| (r.id.clone(), r)).collect())
    }
}
