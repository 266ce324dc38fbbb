//! [`PolicyDelta`]: how the result changed between two moments — the rules added, changed,
//! edited and removed, and the local Pod IPs that became or stopped being isolated per
//! direction. A datapath that holds the earlier result applies the delta to hold the later one,
//! without being handed (or diffing) the whole [`Snapshot`].
//!
//! A rule that changed with its shape kept (the same dimensions `Any` or not) is *edited*: the
//! delta carries its [`RuleEdit`], the entries it gained and lost, not its content, so a peer
//! joining a rule of 500 peers costs one entry to say and to apply. A rule whose shape changed
//! is *changed*, with its new content.
//!
//! Deltas compose ([`PolicyDelta::then`]): a delta not yet applied followed by a newer one is
//! one delta from the older state to the newest, so a caller whose apply failed keeps the delta
//! and sends it with whatever comes next.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use crate::edit::RuleEdit;
use model::policy::{Direction, Isolation, Rule, RuleId, Snapshot};

/// The change from one result to another. A rule is in at most one of `added`, `changed`,
/// `edited` and `removed`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyDelta {
    /// Rules that did not exist before, with their content.
    pub added: BTreeMap<RuleId, Rule>,
    /// Rules that existed before with another shape (or another content the delta does not
    /// know the edit of), with their new content.
    pub changed: BTreeMap<RuleId, Rule>,
    /// Rules that existed before, of the same shape, with the entries they gained and lost.
    pub edited: BTreeMap<RuleId, RuleEdit>,
    /// Rules that no longer exist.
    pub removed: BTreeSet<RuleId>,
    /// Local Pod IPs that became isolated, per direction.
    pub isolated: Isolation,
    /// Local Pod IPs that stopped being isolated, per direction.
    pub released: Isolation,
}

fn of_mut(isolation: &mut Isolation, direction: Direction) -> &mut BTreeSet<Ipv4Addr> {
    match direction {
        Direction::Ingress => &mut isolation.ingress,
        Direction::Egress => &mut isolation.egress,
    }
}

impl PolicyDelta {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.changed.is_empty()
            && self.edited.is_empty()
            && self.removed.is_empty()
            && self.isolated.ingress.is_empty()
            && self.isolated.egress.is_empty()
            && self.released.ingress.is_empty()
            && self.released.egress.is_empty()
    }

    /// Rules added or changed, with their new content (not the edited ones).
    pub fn upserted(&self) -> impl Iterator<Item = &Rule> {
        self.added.values().chain(self.changed.values())
    }

    /// Rules the delta touches (added, changed, edited or removed).
    pub fn rules(&self) -> usize {
        self.added.len() + self.changed.len() + self.edited.len() + self.removed.len()
    }

    /// Records that `rule` is new (after this delta).
    pub fn add_rule(&mut self, rule: Rule) {
        let there = self.removed.remove(&rule.id)
            | self.changed.contains_key(&rule.id)
            | self.edited.remove(&rule.id).is_some();
        if there {
            // It was there before this delta: to the datapath it changed, by what is unknown.
            self.changed.insert(rule.id.clone(), rule);
        } else {
            self.added.insert(rule.id.clone(), rule);
        }
    }

    /// Records that `rule` has new content (after this delta).
    pub fn change_rule(&mut self, rule: Rule) {
        if let Some(added) = self.added.get_mut(&rule.id) {
            *added = rule;
            return;
        }
        self.edited.remove(&rule.id);
        self.changed.insert(rule.id.clone(), rule);
    }

    /// Records that rule `id`, there before and after with the same shape, gained and lost
    /// the entries of `edit` (after this delta).
    pub fn edit_rule(&mut self, id: RuleId, edit: RuleEdit) {
        if let Some(rule) = self.added.get_mut(&id) {
            edit.apply(rule);
            return;
        }
        if let Some(rule) = self.changed.get_mut(&id) {
            edit.apply(rule);
            return;
        }
        if self.removed.contains(&id) {
            return;
        }
        let earlier = self.edited.entry(id.clone()).or_default();
        earlier.then(&edit);
        if earlier.is_empty() {
            // Edited back: no change since before this delta.
            self.edited.remove(&id);
        }
    }

    /// Records that rule `id` is gone (after this delta).
    pub fn remove_rule(&mut self, id: RuleId) {
        if self.added.remove(&id).is_some() {
            // Added and removed again: the state before this delta never had it.
            return;
        }
        self.changed.remove(&id);
        self.edited.remove(&id);
        self.removed.insert(id);
    }

    /// Records that `ip` became isolated in `direction`.
    pub fn isolate(&mut self, direction: Direction, ip: Ipv4Addr) {
        if !of_mut(&mut self.released, direction).remove(&ip) {
            of_mut(&mut self.isolated, direction).insert(ip);
        }
    }

    /// Records that `ip` stopped being isolated in `direction`.
    pub fn release(&mut self, direction: Direction, ip: Ipv4Addr) {
        if !of_mut(&mut self.isolated, direction).remove(&ip) {
            of_mut(&mut self.released, direction).insert(ip);
        }
    }

    /// This delta followed by `later`, as one delta.
    pub fn then(&mut self, later: PolicyDelta) {
        for id in later.removed {
            self.remove_rule(id);
        }
        for rule in later.added.into_values() {
            self.add_rule(rule);
        }
        for rule in later.changed.into_values() {
            self.change_rule(rule);
        }
        for (id, edit) in later.edited {
            self.edit_rule(id, edit);
        }
        for direction in [Direction::Ingress, Direction::Egress] {
            for ip in later.released.of(direction) {
                self.release(direction, *ip);
            }
            for ip in later.isolated.of(direction) {
                self.isolate(direction, *ip);
            }
        }
    }
}

impl PolicyDelta {
    /// Applies this delta to `snapshot`, which holds the state before it. Applying what is
    /// already there changes nothing.
    pub fn apply_to(&self, snapshot: &mut Snapshot) {
        for id in &self.removed {
            snapshot.rules.remove(id);
        }
        for rule in self.upserted() {
            snapshot.rules.insert(rule.id.clone(), rule.clone());
        }
        for (id, edit) in &self.edited {
            if let Some(rule) = snapshot.rules.get_mut(id) {
                edit.apply(rule);
            }
        }
        for direction in [Direction::Ingress, Direction::Egress] {
            let set = of_mut(&mut snapshot.isolation, direction);
            for ip in self.released.of(direction) {
                set.remove(ip);
            }
            set.extend(self.isolated.of(direction));
        }
    }
}

#[cfg(test)]
mod tests {
    use model::policy::{Peers, PolicyKey, Ports, RulePart};

    use super::*;

    fn rule(index: usize, applied: &str) -> Rule {
        Rule {
            id: RuleId {
                policy: PolicyKey::new("ns", "p"),
                direction: Direction::Ingress,
                index,
                part: RulePart::Numeric,
            },
            applied_to: [applied.parse().unwrap()].into(),
            peers: Peers::Any,
            ports: Ports::Any,
        }
    }

    fn ip(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    #[test]
    fn composition_keeps_what_the_older_state_needs() {
        let mut first = PolicyDelta::default();
        first.add_rule(rule(0, "10.0.0.1"));
        first.remove_rule(rule(1, "10.0.0.1").id);
        first.change_rule(rule(2, "10.0.0.2"));
        first.isolate(Direction::Ingress, ip("10.0.0.1"));
        first.release(Direction::Egress, ip("10.0.0.2"));

        let mut later = PolicyDelta::default();
        // Rule 0, added and not yet applied, changes: still an addition, with the new content.
        later.change_rule(rule(0, "10.0.0.9"));
        // Rule 1, removed, comes back: a change.
        later.add_rule(rule(1, "10.0.0.3"));
        // Rule 2, changed, goes: a removal.
        later.remove_rule(rule(2, "10.0.0.2").id);
        // Isolation undone: nothing left for that IP.
        later.release(Direction::Ingress, ip("10.0.0.1"));
        later.isolate(Direction::Egress, ip("10.0.0.2"));
        first.then(later);

        assert_eq!(
            first.added.values().cloned().collect::<Vec<_>>(),
            [rule(0, "10.0.0.9")]
        );
        assert_eq!(
            first.changed.values().cloned().collect::<Vec<_>>(),
            [rule(1, "10.0.0.3")]
        );
        assert_eq!(first.removed, [rule(2, "10.0.0.2").id].into());
        assert!(first.isolated.ingress.is_empty() && first.released.egress.is_empty());
        assert!(first.isolated.egress.is_empty() && first.released.ingress.is_empty());

        // Added then removed before any apply: nothing at all.
        let mut gone = PolicyDelta::default();
        gone.add_rule(rule(5, "10.0.0.5"));
        gone.remove_rule(rule(5, "10.0.0.5").id);
        assert!(gone.is_empty());
    }

    #[test]
    fn edits_compose_and_cancel() {
        let peer = |a: &str| RuleEdit {
            peer_ips: crate::SetEdit {
                added: [ip(a)].into(),
                removed: BTreeSet::new(),
            },
            ..RuleEdit::default()
        };
        let no_peer = |a: &str| RuleEdit {
            peer_ips: crate::SetEdit {
                added: BTreeSet::new(),
                removed: [ip(a)].into(),
            },
            ..RuleEdit::default()
        };
        let mut delta = PolicyDelta::default();
        delta.edit_rule(rule(0, "10.0.0.1").id, peer("10.0.0.7"));
        delta.then({
            let mut later = PolicyDelta::default();
            later.edit_rule(rule(0, "10.0.0.1").id, no_peer("10.0.0.7"));
            later
        });
        assert!(delta.is_empty(), "an edit and its inverse: no change");
        // An edit of a rule the delta adds edits what it adds.
        let mut r = rule(1, "10.0.0.1");
        r.peers = Peers::Set(Default::default());
        delta.add_rule(r.clone());
        delta.edit_rule(r.id.clone(), peer("10.0.0.7"));
        assert!(delta.added[&r.id].peers.contains(ip("10.0.0.7")));
        // Removed, then added: a change with its content, no edit.
        let mut delta = PolicyDelta::default();
        delta.edit_rule(r.id.clone(), peer("10.0.0.8"));
        delta.remove_rule(r.id.clone());
        delta.add_rule(r.clone());
        assert_eq!((delta.changed.len(), delta.edited.len()), (1, 0));
    }

    #[test]
    fn apply_is_idempotent() {
        let mut delta = PolicyDelta::default();
        delta.add_rule(rule(0, "10.0.0.1"));
        delta.isolate(Direction::Egress, ip("10.0.0.1"));
        let mut snapshot = Snapshot::default();
        delta.apply_to(&mut snapshot);
        let once = snapshot.clone();
        delta.apply_to(&mut snapshot);
        assert_eq!(snapshot, once);
        assert_eq!(snapshot.rules.len(), 1);
        assert_eq!(snapshot.isolation.egress, [ip("10.0.0.1")].into());
    }
}
