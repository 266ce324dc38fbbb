//! A rule's entries — its applied-to Pod addresses, peer addresses and port ranges — each in its
//! dimension (conjunction clause), the flow matches an entry becomes, and the entries two
//! versions of a rule differ in: from a delta's [`RuleEdit`] (costing the edit) or, without
//! one, by comparing the versions. Clauses are in packet-field order: source, destination,
//! ports.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use netpol::{Direction, Peers, PortMatch, Ports, Rule, RuleEdit};
use openflow::oxm::{Field, Match};

use super::ports::port_matches;
use crate::render::{ip, ipv4};

/// Which dimensions a rule has. Two versions of a rule of the same shape have the same clauses
/// and differ only in their entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    direction: Direction,
    /// Whether the peers are a set (`Any`: no peer dimension).
    peers: bool,
    /// Whether the ports are a set (`Any`: no port dimension).
    ports: bool,
}

impl Shape {
    pub(super) fn of(rule: &Rule) -> Shape {
        Shape {
            direction: rule.direction(),
            peers: matches!(rule.peers, Peers::Set(_)),
            ports: matches!(rule.ports, Ports::Set(_)),
        }
    }

    /// The number of dimensions (clauses of the conjunction).
    pub(super) fn dimensions(self) -> u8 {
        1 + u8::from(self.peers) + u8::from(self.ports)
    }

    /// The clause (1-based) an entry belongs to.
    pub(super) fn clause(self, entry: &Entry) -> u8 {
        let peers = u8::from(self.peers);
        match (self.direction, entry) {
            (_, Entry::Port(_)) => self.dimensions(),
            (Direction::Ingress, Entry::Local(_)) => 1 + peers,
            (Direction::Ingress, Entry::PeerIp(_) | Entry::PeerCidr(_)) => 1,
            (Direction::Egress, Entry::Local(_)) => 1,
            (Direction::Egress, Entry::PeerIp(_) | Entry::PeerCidr(_)) => 2,
        }
    }
}

/// One entry of one of a rule's dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// An applied-to Pod.
    Local(Ipv4Addr),
    PeerIp(Ipv4Addr),
    PeerCidr(Ipv4Net),
    Port(PortMatch),
}

impl Entry {
    /// The flow matches of the entry in a rule of `direction`: one for an address, one per
    /// aligned block of a port range.
    pub(super) fn matches(&self, direction: Direction) -> Vec<Match> {
        let (local_field, peer_field) = match direction {
            Direction::Ingress => (Field::Ipv4Dst, Field::Ipv4Src),
            Direction::Egress => (Field::Ipv4Src, Field::Ipv4Dst),
        };
        match self {
            Entry::Local(a) => vec![ipv4(local_field, ip(), *a)],
            Entry::PeerIp(a) => vec![ipv4(peer_field, ip(), *a)],
            Entry::PeerCidr(c) => vec![ip().with_masked(
                peer_field,
                u128::from(u32::from(c.network())),
                u128::from(u32::from(c.netmask())),
            )],
            Entry::Port(p) => port_matches(p),
        }
    }
}

/// Every entry of `rule`.
pub(super) fn entries(rule: &Rule) -> Vec<Entry> {
    let mut out: Vec<Entry> = rule.applied_to.iter().copied().map(Entry::Local).collect();
    if let Peers::Set(set) = &rule.peers {
        out.extend(set.ips.iter().copied().map(Entry::PeerIp));
        out.extend(set.cidrs.iter().copied().map(Entry::PeerCidr));
    }
    if let Ports::Set(set) = &rule.ports {
        out.extend(set.iter().copied().map(Entry::Port));
    }
    out
}

/// Whether every dimension of `rule` has an entry; a rule with an empty one matches nothing
/// and has no flows.
pub(super) fn complete(rule: &Rule) -> bool {
    let peers = match &rule.peers {
        Peers::Set(set) => !set.is_empty(),
        Peers::Any => true,
    };
    let ports = match &rule.ports {
        Ports::Set(set) => !set.is_empty(),
        Ports::Any => true,
    };
    !rule.applied_to.is_empty() && peers && ports
}

/// Whether `rule` has `entry`.
fn has(rule: &Rule, entry: &Entry) -> bool {
    match (entry, &rule.peers, &rule.ports) {
        (Entry::Local(a), _, _) => rule.applied_to.contains(a),
        (Entry::PeerIp(a), Peers::Set(set), _) => set.ips.contains(a),
        (Entry::PeerCidr(c), Peers::Set(set), _) => set.cidrs.contains(c),
        (Entry::Port(p), _, Ports::Set(set)) => set.contains(p),
        _ => false,
    }
}

/// Puts `added` into `rule` and takes `removed` out (entries of a dimension the rule does not
/// have are ignored).
pub(super) fn put(rule: &mut Rule, added: &[Entry], removed: &[Entry]) {
    for (entry, add) in removed
        .iter()
        .map(|e| (e, false))
        .chain(added.iter().map(|e| (e, true)))
    {
        fn set<T: Ord>(set: &mut BTreeSet<T>, x: T, add: bool) {
            if add {
                set.insert(x);
            } else {
                set.remove(&x);
            }
        }
        match (entry, &mut rule.peers, &mut rule.ports) {
            (Entry::Local(a), _, _) => set(&mut rule.applied_to, *a, add),
            (Entry::PeerIp(a), Peers::Set(s), _) => set(&mut s.ips, *a, add),
            (Entry::PeerCidr(c), Peers::Set(s), _) => set(&mut s.cidrs, *c, add),
            (Entry::Port(p), _, Ports::Set(s)) => set(s, *p, add),
            _ => {}
        }
    }
}

/// The entries `edit` adds that `old` has not, and those it removes that `old` has: what a
/// rule in state `old` gains and loses by the edit, in the edit's size (an edit `old` already
/// reflects yields nothing).
pub(super) fn edited_entries(old: &Rule, edit: &RuleEdit) -> (Vec<Entry>, Vec<Entry>) {
    let mut added: Vec<Entry> = edit
        .applied_to
        .added
        .iter()
        .copied()
        .map(Entry::Local)
        .collect();
    let mut removed: Vec<Entry> = edit
        .applied_to
        .removed
        .iter()
        .copied()
        .map(Entry::Local)
        .collect();
    added.extend(edit.peer_ips.added.iter().copied().map(Entry::PeerIp));
    removed.extend(edit.peer_ips.removed.iter().copied().map(Entry::PeerIp));
    added.extend(edit.peer_cidrs.added.iter().copied().map(Entry::PeerCidr));
    removed.extend(edit.peer_cidrs.removed.iter().copied().map(Entry::PeerCidr));
    added.extend(edit.ports.added.iter().copied().map(Entry::Port));
    removed.extend(edit.ports.removed.iter().copied().map(Entry::Port));
    added.retain(|e| !has(old, e) && dimension_of(old, e));
    removed.retain(|e| has(old, e));
    (added, removed)
}

/// Whether `rule` with `added` put in and `removed` taken out (entries it lacks, entries it
/// has) still has an entry in every dimension.
pub(super) fn complete_after(rule: &Rule, added: &[Entry], removed: &[Entry]) -> bool {
    let count = |list: &[Entry], dimension: fn(&Entry) -> bool| {
        list.iter().filter(|e| dimension(e)).count()
    };
    let left = |now: usize, dimension: fn(&Entry) -> bool| {
        now + count(added, dimension) > count(removed, dimension)
    };
    let applied = left(rule.applied_to.len(), |e| matches!(e, Entry::Local(_)));
    let peers = match &rule.peers {
        Peers::Set(set) => left(set.len(), |e| {
            matches!(e, Entry::PeerIp(_) | Entry::PeerCidr(_))
        }),
        Peers::Any => true,
    };
    let ports = match &rule.ports {
        Ports::Set(set) => left(set.len(), |e| matches!(e, Entry::Port(_))),
        Ports::Any => true,
    };
    applied && peers && ports
}

/// Whether `rule` has the dimension `entry` belongs to.
fn dimension_of(rule: &Rule, entry: &Entry) -> bool {
    match entry {
        Entry::Local(_) => true,
        Entry::PeerIp(_) | Entry::PeerCidr(_) => matches!(rule.peers, Peers::Set(_)),
        Entry::Port(_) => matches!(rule.ports, Ports::Set(_)),
    }
}

/// The entries `new` has and `old` has not, and those `old` has and `new` has not, for two
/// versions of a rule of the same [`Shape`]. Costs a walk of both versions' sets, and
/// allocates only for the differences.
pub(super) fn changed_entries(old: &Rule, new: &Rule) -> (Vec<Entry>, Vec<Entry>) {
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    let mut diff = |old: &BTreeSet<_>, new: &BTreeSet<_>, entry: fn(_) -> Entry| {
        added.extend(new.difference(old).copied().map(entry));
        removed.extend(old.difference(new).copied().map(entry));
    };
    diff(&old.applied_to, &new.applied_to, Entry::Local);
    if let (Peers::Set(old), Peers::Set(new)) = (&old.peers, &new.peers) {
        diff(&old.ips, &new.ips, Entry::PeerIp);
        added.extend(
            new.cidrs
                .difference(&old.cidrs)
                .copied()
                .map(Entry::PeerCidr),
        );
        removed.extend(
            old.cidrs
                .difference(&new.cidrs)
                .copied()
                .map(Entry::PeerCidr),
        );
    }
    if let (Ports::Set(old), Ports::Set(new)) = (&old.ports, &new.ports) {
        added.extend(new.difference(old).copied().map(Entry::Port));
        removed.extend(old.difference(new).copied().map(Entry::Port));
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    use netpol::{AddressSet, PolicyKey, Protocol, RuleId, RulePart};

    use super::*;

    fn rule(direction: Direction, peers: &[&str], ports: Option<&[u16]>) -> Rule {
        Rule {
            id: RuleId {
                policy: PolicyKey::new("x", "p"),
                direction,
                index: 0,
                part: RulePart::Numeric,
            },
            applied_to: ["10.0.0.1".parse().unwrap()].into(),
            peers: Peers::Set(AddressSet {
                ips: peers.iter().map(|p| p.parse().unwrap()).collect(),
                cidrs: BTreeSet::new(),
            }),
            ports: match ports {
                None => Ports::Any,
                Some(list) => Ports::Set(
                    list.iter()
                        .map(|p| PortMatch::single(Protocol::Tcp, *p))
                        .collect(),
                ),
            },
        }
    }

    #[test]
    fn clauses_follow_packet_fields() {
        let ingress = Shape::of(&rule(Direction::Ingress, &["10.0.0.2"], Some(&[80])));
        let egress = Shape::of(&rule(Direction::Egress, &["10.0.0.2"], None));
        let (local, peer) = (
            Entry::Local("10.0.0.1".parse().unwrap()),
            Entry::PeerIp("10.0.0.2".parse().unwrap()),
        );
        let port = Entry::Port(PortMatch::single(Protocol::Tcp, 80));
        assert_eq!(
            (
                ingress.clause(&peer),
                ingress.clause(&local),
                ingress.clause(&port)
            ),
            (1, 2, 3)
        );
        assert_eq!((egress.clause(&local), egress.clause(&peer)), (1, 2));
        assert_eq!(egress.dimensions(), 2);
    }

    #[test]
    fn only_differences_are_entries_of_the_change() {
        let old = rule(Direction::Ingress, &["10.0.0.2", "10.0.0.3"], Some(&[80]));
        let new = rule(
            Direction::Ingress,
            &["10.0.0.3", "10.0.0.4"],
            Some(&[80, 81]),
        );
        let (added, removed) = changed_entries(&old, &new);
        assert_eq!(
            added,
            [
                Entry::PeerIp("10.0.0.4".parse().unwrap()),
                Entry::Port(PortMatch::single(Protocol::Tcp, 81))
            ]
        );
        assert_eq!(removed, [Entry::PeerIp("10.0.0.2".parse().unwrap())]);
        assert!(changed_entries(&new, &new) == (vec![], vec![]));
    }
}
