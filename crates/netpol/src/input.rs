//! What the computation reads from Kubernetes objects, compiled once per object change:
//! [`PodInfo`] from a Pod, labels from a Namespace, [`CompiledPolicy`] from a NetworkPolicy.
//! Where the objects come from (a directory, the API server) is the caller's business.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};

use crate::error::PolicyError;
use crate::selector::{Labels, Selector};
use model::policy::{Direction, PodKey, PolicyKey, PortMatch, Protocol};

/// A container port with a name, which named NetworkPolicy ports resolve to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NamedPort {
    pub name: String,
    pub protocol: Protocol,
    pub port: u16,
}

/// What policies need of a Pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodInfo {
    pub key: PodKey,
    pub labels: Labels,
    /// The Pod's IPv4 address; `None` while it has none, and for Pods that take no part in
    /// policy (host-network Pods, which use the Node's address, and finished Pods).
    pub ip: Option<Ipv4Addr>,
    /// The Node the Pod runs on.
    pub node: Option<String>,
    pub named_ports: BTreeSet<NamedPort>,
}

impl PodInfo {
    /// Reads a Pod. Container ports with an invalid number or protocol are left out (the API
    /// server refuses them, so only a broken source produces them).
    pub fn from_k8s(pod: &Pod) -> Result<PodInfo, PolicyError> {
        let name = pod
            .metadata
            .name
            .clone()
            .ok_or(PolicyError::Unnamed { kind: "Pod" })?;
        let namespace = pod
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let spec = pod.spec.as_ref();
        let status = pod.status.as_ref();
        let finished = matches!(
            status.and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        );
        let host_network = spec.and_then(|s| s.host_network).unwrap_or(false);
        let ip = (!finished && !host_network)
            .then(|| {
                let primary = status.and_then(|s| s.pod_ip.iter().next().cloned());
                let all = status.and_then(|s| s.pod_ips.clone()).unwrap_or_default();
                primary
                    .into_iter()
                    .chain(all.into_iter().map(|p| p.ip))
                    .find_map(|text| text.parse::<Ipv4Addr>().ok())
            })
            .flatten();
        let containers = spec.into_iter().flat_map(|s| {
            s.containers
                .iter()
                .chain(s.init_containers.iter().flatten())
        });
        let named_ports = containers
            .flat_map(|c| c.ports.iter().flatten())
            .filter_map(|p| {
                Some(NamedPort {
                    name: p.name.clone()?,
                    protocol: Protocol::parse(p.protocol.as_deref().unwrap_or("TCP"))?,
                    port: u16::try_from(p.container_port).ok().filter(|p| *p != 0)?,
                })
            })
            .collect();
        Ok(PodInfo {
            key: PodKey::new(namespace, name),
            labels: pod.metadata.labels.clone().unwrap_or_default(),
            ip,
            node: spec.and_then(|s| s.node_name.clone()),
            named_ports,
        })
    }

    /// The ports `name` of `protocol` resolves to on this Pod.
    pub fn resolve<'a>(
        &'a self,
        protocol: Protocol,
        name: &'a str,
    ) -> impl Iterator<Item = u16> + 'a {
        self.named_ports
            .iter()
            .filter(move |p| p.protocol == protocol && p.name == name)
            .map(|p| p.port)
    }
}

/// A Namespace's name and labels.
pub fn namespace_labels(ns: &Namespace) -> Result<(String, Labels), PolicyError> {
    let name = ns
        .metadata
        .name
        .clone()
        .ok_or(PolicyError::Unnamed { kind: "Namespace" })?;
    Ok((name, ns.metadata.labels.clone().unwrap_or_default()))
}

/// Which Namespaces a Pod group looks in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Scope {
    /// One Namespace (a peer with only a podSelector, and every policy's applied-to).
    Namespace(String),
    /// The Namespaces whose labels match.
    Namespaces(Selector),
}

/// A set of Pods given by selectors: the unit the engine indexes and keeps up to date.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupKey {
    pub scope: Scope,
    pub pods: Selector,
}

impl GroupKey {
    /// Every Pod of the cluster.
    pub fn all_pods() -> GroupKey {
        GroupKey {
            scope: Scope::Namespaces(Selector::everything()),
            pods: Selector::everything(),
        }
    }
}

/// A peer of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Peer {
    Pods(GroupKey),
    /// An ipBlock as disjoint CIDRs (the `except`s cut out).
    Block(Vec<Ipv4Net>),
}

/// A port entry of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PortSpec {
    Numbers(PortMatch),
    Named { protocol: Protocol, name: String },
}

/// One ingress or egress rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompiledRule {
    /// `None`: any peer.
    pub peers: Option<Vec<Peer>>,
    /// `None`: any port.
    pub ports: Option<Vec<PortSpec>>,
}

/// A NetworkPolicy ready for evaluation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompiledPolicy {
    pub key: PolicyKey,
    /// The Pods the policy applies to (in its own Namespace).
    pub applied_to: GroupKey,
    /// The ingress rules if the policy covers ingress (an empty list denies all ingress).
    pub ingress: Option<Vec<CompiledRule>>,
    /// The egress rules if the policy covers egress.
    pub egress: Option<Vec<CompiledRule>>,
}

impl CompiledPolicy {
    /// Compiles a NetworkPolicy. `policyTypes` when given says which directions the policy
    /// covers; otherwise ingress always, and egress when the policy has egress rules.
    pub fn from_k8s(policy: &NetworkPolicy) -> Result<CompiledPolicy, PolicyError> {
        let name = policy.metadata.name.clone().ok_or(PolicyError::Unnamed {
            kind: "NetworkPolicy",
        })?;
        let namespace = policy
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let key = PolicyKey::new(namespace.clone(), name);
        let object = format!("NetworkPolicy {key}");
        let spec = policy.spec.clone().unwrap_or_default();
        let pod_selector = match &spec.pod_selector {
            Some(s) => Selector::from_k8s(s, &object)?,
            None => Selector::everything(),
        };
        let ingress_rules = spec.ingress.unwrap_or_default();
        let egress_rules = spec.egress.unwrap_or_default();
        let (covers_ingress, covers_egress) = match &spec.policy_types {
            Some(types) => {
                let mut covers = (false, false);
                for t in types {
                    match t.as_str() {
                        "Ingress" => covers.0 = true,
                        "Egress" => covers.1 = true,
                        other => {
                            return Err(PolicyError::BadPolicyType {
                                object,
                                value: other.to_owned(),
                            });
                        }
                    }
                }
                covers
            }
            None => (true, !egress_rules.is_empty()),
        };
        let compile = |peers: Option<&Vec<NetworkPolicyPeer>>,
                       ports: Option<&Vec<NetworkPolicyPort>>| {
            Ok::<_, PolicyError>(CompiledRule {
                peers: non_empty(peers)
                    .map(|list| {
                        list.iter()
                            .map(|p| compile_peer(p, &namespace, &object))
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .transpose()?,
                ports: non_empty(ports)
                    .map(|list| {
                        list.iter()
                            .map(|p| compile_port(p, &object))
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .transpose()?,
            })
        };
        let ingress = covers_ingress
            .then(|| {
                ingress_rules
                    .iter()
                    .map(|r| compile(r.from.as_ref(), r.ports.as_ref()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        let egress = covers_egress
            .then(|| {
                egress_rules
                    .iter()
                    .map(|r| compile(r.to.as_ref(), r.ports.as_ref()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?;
        Ok(CompiledPolicy {
            applied_to: GroupKey {
                scope: Scope::Namespace(namespace),
                pods: pod_selector,
            },
            key,
            ingress,
            egress,
        })
    }

    /// The rules of `direction`, if the policy covers it.
    pub fn rules(&self, direction: Direction) -> Option<&[CompiledRule]> {
        match direction {
            Direction::Ingress => self.ingress.as_deref(),
            Direction::Egress => self.egress.as_deref(),
        }
    }

    /// Every Pod group the policy reads.
    pub fn groups(&self) -> BTreeSet<GroupKey> {
        let mut groups = BTreeSet::from([self.applied_to.clone()]);
        for direction in [Direction::Ingress, Direction::Egress] {
            for rule in self.rules(direction).into_iter().flatten() {
                let named = rule
                    .ports
                    .iter()
                    .flatten()
                    .any(|p| matches!(p, PortSpec::Named { .. }));
                match &rule.peers {
                    Some(peers) => groups.extend(peers.iter().filter_map(|p| match p {
                        Peer::Pods(g) => Some(g.clone()),
                        Peer::Block(_) => None,
                    })),
                    // Egress to any peer on a named port: the named port resolves on every Pod.
                    None if named && direction == Direction::Egress => {
                        groups.insert(GroupKey::all_pods());
                    }
                    None => {}
                }
            }
        }
        groups
    }
}

fn non_empty<T>(list: Option<&Vec<T>>) -> Option<&Vec<T>> {
    list.filter(|l| !l.is_empty())
}

fn compile_peer(
    peer: &NetworkPolicyPeer,
    namespace: &str,
    object: &str,
) -> Result<Peer, PolicyError> {
    if let Some(block) = &peer.ip_block {
        return Ok(Peer::Block(compile_block(block, object)?));
    }
    let pods = match &peer.pod_selector {
        Some(s) => Selector::from_k8s(s, object)?,
        None => Selector::everything(),
    };
    let scope = match (&peer.namespace_selector, &peer.pod_selector) {
        (Some(ns), _) => Scope::Namespaces(Selector::from_k8s(ns, object)?),
        (None, Some(_)) => Scope::Namespace(namespace.to_owned()),
        (None, None) => {
            return Err(PolicyError::EmptyPeer {
                object: object.to_owned(),
            });
        }
    };
    Ok(Peer::Pods(GroupKey { scope, pods }))
}

fn parse_net(text: &str, object: &str) -> Result<Option<Ipv4Net>, PolicyError> {
    let bad = || PolicyError::BadCidr {
        object: object.to_owned(),
        text: text.to_owned(),
    };
    match text.parse::<ipnet::IpNet>().map_err(|_| bad())? {
        ipnet::IpNet::V4(net) => Ok(Some(net.trunc())),
        // The pipeline is IPv4-only: IPv6 blocks select nothing on this Node.
        ipnet::IpNet::V6(_) => Ok(None),
    }
}

fn compile_block(block: &IPBlock, object: &str) -> Result<Vec<Ipv4Net>, PolicyError> {
    let Some(cidr) = parse_net(&block.cidr, object)? else {
        return Ok(Vec::new());
    };
    let mut pieces = vec![cidr];
    for text in block.except.iter().flatten() {
        if let Some(except) = parse_net(text, object)? {
            pieces = pieces
                .into_iter()
                .flat_map(|p| subtract(p, except))
                .collect();
        }
    }
    Ok(pieces)
}

/// `net` without `hole`, as disjoint CIDRs.
pub fn subtract(net: Ipv4Net, hole: Ipv4Net) -> Vec<Ipv4Net> {
    if hole.contains(&net) {
        return Vec::new();
    }
    if !net.contains(&hole) {
        return vec![net];
    }
    // Split `net` in halves until the hole is one of them; keep the siblings on the way.
    let mut out = Vec::new();
    let mut current = net;
    while current.prefix_len() < hole.prefix_len() {
        let Ok(mut halves) = current.subnets(current.prefix_len() + 1) else {
            break;
        };
        let (Some(low), Some(high)) = (halves.next(), halves.next()) else {
            break;
        };
        let (inside, outside) = if low.contains(&hole) {
            (low, high)
        } else {
            (high, low)
        };
        out.push(outside);
        current = inside;
    }
    out
}

fn compile_port(port: &NetworkPolicyPort, object: &str) -> Result<PortSpec, PolicyError> {
    let text = port.protocol.as_deref().unwrap_or("TCP");
    let protocol = Protocol::parse(text).ok_or_else(|| PolicyError::BadProtocol {
        object: object.to_owned(),
        protocol: text.to_owned(),
    })?;
    let number = |n: i32| {
        u16::try_from(n)
            .ok()
            .filter(|n| *n != 0)
            .ok_or(PolicyError::BadPort {
                object: object.to_owned(),
                port: n,
            })
    };
    let bad_end = |start: i32, end: i32| PolicyError::BadEndPort {
        object: object.to_owned(),
        start,
        end,
    };
    match (&port.port, port.end_port) {
        (None, None) => Ok(PortSpec::Numbers(PortMatch::all(protocol))),
        (None, Some(end)) => Err(bad_end(0, end)),
        (Some(IntOrString::String(name)), None) => Ok(PortSpec::Named {
            protocol,
            name: name.clone(),
        }),
        (Some(IntOrString::String(_)), Some(end)) => Err(bad_end(0, end)),
        (Some(IntOrString::Int(start)), end) => {
            let first = number(*start)?;
            let last = match end {
                None => first,
                Some(end) => number(end)
                    .ok()
                    .filter(|e| *e >= first)
                    .ok_or(bad_end(*start, end))?,
            };
            Ok(PortSpec::Numbers(PortMatch {
                protocol,
                start: first,
                end: last,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(s: &str) -> Ipv4Net {
        s.parse().unwrap()
    }

    #[test]
    fn subtract_cuts_the_hole_out() {
        let pieces = subtract(net("10.0.0.0/24"), net("10.0.0.128/26"));
        let set: BTreeSet<Ipv4Net> = pieces.iter().copied().collect();
        assert_eq!(
            set,
            BTreeSet::from([net("10.0.0.0/25"), net("10.0.0.192/26")])
        );
        for i in 0..=255u8 {
            let ip = Ipv4Addr::new(10, 0, 0, i);
            let inside = pieces.iter().filter(|p| p.contains(&ip)).count();
            assert_eq!(inside, usize::from(!(128..192).contains(&i)), "{ip}");
        }
        assert_eq!(subtract(net("10.0.0.0/24"), net("10.0.0.0/16")), vec![]);
        assert_eq!(
            subtract(net("10.0.0.0/24"), net("10.1.0.0/24")),
            vec![net("10.0.0.0/24")]
        );
        assert_eq!(subtract(net("10.0.0.5/32"), net("10.0.0.5/32")), vec![]);
        assert_eq!(subtract(net("0.0.0.0/0"), net("1.2.3.4/32")).len(), 32);
    }
}
