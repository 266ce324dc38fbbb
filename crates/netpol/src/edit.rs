//! [`RuleEdit`]: the entries a rule gained and lost between two versions of the same shape —
//! applied-to Pod IPs, peer IPs, peer CIDRs, port matches — each a [`SetEdit`]. A
//! [`crate::PolicyDelta`] says a rule that changed with its shape kept by its edit, so a
//! datapath patches the rule by what moved instead of comparing two versions entry by entry.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use model::policy::{Peers, PortMatch, Ports, Rule};

/// Elements a set gained (`added`, not in it before) and lost (`removed`, in it before).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetEdit<T: Ord> {
    pub added: BTreeSet<T>,
    pub removed: BTreeSet<T>,
}

impl<T: Ord> Default for SetEdit<T> {
    fn default() -> Self {
        SetEdit {
            added: BTreeSet::new(),
            removed: BTreeSet::new(),
        }
    }
}

impl<T: Ord + Clone> SetEdit<T> {
    /// The edit from `old` to `new` (a walk of both).
    pub fn between(old: &BTreeSet<T>, new: &BTreeSet<T>) -> SetEdit<T> {
        SetEdit {
            added: new.difference(old).cloned().collect(),
            removed: old.difference(new).cloned().collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }

    /// Number of elements gained or lost.
    pub fn len(&self) -> usize {
        self.added.len() + self.removed.len()
    }

    /// Records that `x` entered the set.
    pub fn add(&mut self, x: T) {
        if !self.removed.remove(&x) {
            self.added.insert(x);
        }
    }

    /// Records that `x` left the set.
    pub fn remove(&mut self, x: T) {
        if !self.added.remove(&x) {
            self.removed.insert(x);
        }
    }

    /// This edit followed by `later`, as one edit.
    pub fn then(&mut self, later: &SetEdit<T>) {
        for x in &later.removed {
            self.remove(x.clone());
        }
        for x in &later.added {
            self.add(x.clone());
        }
    }

    /// Applies the edit to `set`.
    pub fn apply(&self, set: &mut BTreeSet<T>) {
        for x in &self.removed {
            set.remove(x);
        }
        set.extend(self.added.iter().cloned());
    }
}

/// How a rule's entries changed, dimension by dimension, its shape (which dimensions are
/// `Any`) unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleEdit {
    pub applied_to: SetEdit<Ipv4Addr>,
    pub peer_ips: SetEdit<Ipv4Addr>,
    pub peer_cidrs: SetEdit<Ipv4Net>,
    pub ports: SetEdit<PortMatch>,
}

impl RuleEdit {
    /// The edit from `old` to `new`, if both have the same shape.
    pub fn between(old: &Rule, new: &Rule) -> Option<RuleEdit> {
        let mut edit = RuleEdit {
            applied_to: SetEdit::between(&old.applied_to, &new.applied_to),
            ..RuleEdit::default()
        };
        match (&old.peers, &new.peers) {
            (Peers::Any, Peers::Any) => {}
            (Peers::Set(o), Peers::Set(n)) => {
                edit.peer_ips = SetEdit::between(&o.ips, &n.ips);
                edit.peer_cidrs = SetEdit::between(&o.cidrs, &n.cidrs);
            }
            _ => return None,
        }
        match (&old.ports, &new.ports) {
            (Ports::Any, Ports::Any) => {}
            (Ports::Set(o), Ports::Set(n)) => edit.ports = SetEdit::between(o, n),
            _ => return None,
        }
        Some(edit)
    }

    pub fn is_empty(&self) -> bool {
        self.applied_to.is_empty()
            && self.peer_ips.is_empty()
            && self.peer_cidrs.is_empty()
            && self.ports.is_empty()
    }

    /// Number of entries gained or lost.
    pub fn len(&self) -> usize {
        self.applied_to.len() + self.peer_ips.len() + self.peer_cidrs.len() + self.ports.len()
    }

    /// This edit followed by `later`, as one edit.
    pub fn then(&mut self, later: &RuleEdit) {
        self.applied_to.then(&later.applied_to);
        self.peer_ips.then(&later.peer_ips);
        self.peer_cidrs.then(&later.peer_cidrs);
        self.ports.then(&later.ports);
    }

    /// Applies the edit to `rule` (a dimension that is `Any` takes no entries).
    pub fn apply(&self, rule: &mut Rule) {
        self.applied_to.apply(&mut rule.applied_to);
        if let Peers::Set(set) = &mut rule.peers {
            self.peer_ips.apply(&mut set.ips);
            self.peer_cidrs.apply(&mut set.cidrs);
        }
        if let Ports::Set(set) = &mut rule.ports {
            self.ports.apply(set);
        }
    }
}
