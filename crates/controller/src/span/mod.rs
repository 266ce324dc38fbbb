//! [`SpanComputation`]: the cluster's NetworkPolicies with each one's span, and the updates
//! that keep every Node's [`NodeView`] equal to what the cluster says it needs.
//!
//! - A policy's span is the Nodes running a member of its applied-to group, counted per Node
//!   ([`NodeCounts`]): a member entering on a Node with none brings the policy there, the last
//!   one leaving takes it away.
//! - A group's span is the Nodes of the policies that read it (applied-to and peers alike), also
//!   counted: a group reaches a Node with the first of its policies there, whole
//!   ([`NodeUpdate::GroupAdded`]), and leaves after the last.
//! - A member change ([`netpol::Membership`], the same membership code as an agent's engine)
//!   is sent to the Nodes in its group's span and nowhere else; a change that moves a policy's
//!   span then adds or removes the policy and its groups at the Nodes concerned.
//!
//! Span increases are applied before decreases, so a group shared by two policies never
//! leaves and comes back within one change. Updates are kept only for the Nodes being watched
//! ([`SpanComputation::watch`], which gives the Node its snapshot); the others get theirs when
//! they come.

mod node_counts;

pub use controlplane::{Member, NodeUpdate, NodeView, OutOfOrder};
pub use node_counts::NodeCounts;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use model::policy::{PodKey, PolicyKey};
use netpol::group::{Group, MemberChange};
use netpol::input::{CompiledPolicy, GroupKey, PodInfo, namespace_labels};
use netpol::selector::Labels;
use netpol::{Membership, OnMemberChange, Placement, PolicyError};

/// How much the computation holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub policies: usize,
    pub groups: usize,
    /// Nodes with at least one policy in their span.
    pub nodes: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} policies, {} groups, {} Nodes with a policy",
            self.policies, self.groups, self.nodes
        )
    }
}

/// A policy with the groups it reads and its span.
#[derive(Debug)]
struct Spanned {
    policy: CompiledPolicy,
    groups: BTreeSet<GroupKey>,
    nodes: NodeCounts,
}

/// A member change waiting for its Pod's details, with the Nodes it goes to.
#[derive(Debug)]
struct Moved {
    group: GroupKey,
    pod: PodKey,
    member: bool,
    nodes: Vec<String>,
}

/// Policies, groups and spans for the whole cluster, with the updates owed to each Node.
#[derive(Debug, Default)]
pub struct SpanComputation {
    membership: Membership,
    policies: BTreeMap<PolicyKey, Spanned>,
    /// The policies applied to each group.
    applied_to: HashMap<GroupKey, BTreeSet<PolicyKey>>,
    /// Each group's span: per Node, how many of the Node's policies read it.
    group_nodes: HashMap<GroupKey, NodeCounts>,
    /// The policies in each Node's span.
    node_policies: BTreeMap<String, BTreeSet<PolicyKey>>,
    /// The Nodes whose updates are kept (a Node that is not watched gets a snapshot when it
    /// comes).
    watched: BTreeSet<String>,
    outbox: BTreeMap<String, Vec<NodeUpdate>>,
}

impl SpanComputation {
    /// Adds or updates a Pod.
    pub fn upsert_pod(&mut self, pod: &Pod) -> Result<(), PolicyError> {
        self.set_pod(PodInfo::from_k8s(pod)?);
        Ok(())
    }

    /// Adds or updates a Pod given as [`PodInfo`].
    pub fn set_pod(&mut self, info: PodInfo) {
        self.membership_change(|m, note| m.set_pod(info, note));
    }

    /// Removes a Pod.
    pub fn remove_pod(&mut self, key: &PodKey) {
        self.membership_change(|m, note| m.remove_pod(key, note));
    }

    /// Adds or updates a Namespace.
    pub fn upsert_namespace(&mut self, ns: &Namespace) -> Result<(), PolicyError> {
        let (name, labels) = namespace_labels(ns)?;
        self.set_namespace(&name, Some(labels));
        Ok(())
    }

    /// Sets (`Some`) or removes (`None`) a Namespace's labels.
    pub fn set_namespace(&mut self, name: &str, labels: Option<Labels>) {
        self.membership_change(|m, note| m.set_namespace(name, labels, note));
    }

    /// Adds or updates a NetworkPolicy. On error the previous version (if any) stays in force.
    pub fn upsert_policy(&mut self, policy: &NetworkPolicy) -> Result<(), PolicyError> {
        self.set_policy(CompiledPolicy::from_k8s(policy)?);
        Ok(())
    }

    /// Adds or updates a compiled policy: the Nodes of its new span get its groups and then
    /// it; the Nodes it leaves lose it, then the groups no other policy of theirs reads.
    pub fn set_policy(&mut self, policy: CompiledPolicy) {
        let key = policy.key.clone();
        if self.policies.get(&key).is_some_and(|s| s.policy == policy) {
            return;
        }
        let groups = policy.groups();
        for g in &groups {
            self.membership.use_group(g, &key);
        }
        let old = self.unplace(&key);
        self.applied_to
            .entry(policy.applied_to.clone())
            .or_default()
            .insert(key.clone());
        let mut nodes = NodeCounts::default();
        for member in self.membership.members(&policy.applied_to) {
            if let Some(node) = &member.node {
                nodes.add(node);
            }
        }
        let spanned = Spanned {
            policy,
            groups,
            nodes,
        };
        let new_nodes: Vec<String> = spanned.nodes.nodes().map(str::to_owned).collect();
        for node in &new_nodes {
            self.enter(&spanned, node);
        }
        if let Some(old) = old {
            for node in old.nodes.nodes() {
                self.leave(&old, node, !spanned.nodes.contains(node));
            }
            for g in old.groups.difference(&spanned.groups) {
                self.membership.release(g, &key);
            }
        }
        self.policies.insert(key, spanned);
    }

    /// Removes a NetworkPolicy from the cluster and from every Node of its span.
    pub fn remove_policy(&mut self, key: &PolicyKey) {
        let Some(old) = self.unplace(key) else {
            return;
        };
        for node in old.nodes.nodes() {
            self.leave(&old, node, true);
        }
        for g in &old.groups {
            self.membership.release(g, key);
        }
    }

    /// Keeps Node `node`'s updates from now on, and returns its snapshot: what the updates
    /// that follow apply to.
    pub fn watch(&mut self, node: &str) -> Vec<NodeUpdate> {
        self.watched.insert(node.to_owned());
        self.outbox.remove(node);
        self.snapshot(node)
    }

    /// Stops keeping Node `node`'s updates, and drops those not taken.
    pub fn unwatch(&mut self, node: &str) {
        self.watched.remove(node);
        self.outbox.remove(node);
    }

    /// The updates owed to each watched Node since the last call, in order.
    pub fn take_updates(&mut self) -> BTreeMap<String, Vec<NodeUpdate>> {
        std::mem::take(&mut self.outbox)
    }

    /// How many policies, groups and Nodes with a policy there are.
    pub fn summary(&self) -> Summary {
        Summary {
            policies: self.policies.len(),
            groups: self.membership.groups().len(),
            nodes: self.node_policies.len(),
        }
    }

    /// Everything Node `node` needs, from nothing: its groups, then its policies.
    pub fn snapshot(&self, node: &str) -> Vec<NodeUpdate> {
        let keys = self.node_policies.get(node).into_iter().flatten();
        let spanned: Vec<&Spanned> = keys.filter_map(|k| self.policies.get(k)).collect();
        let groups: BTreeSet<&GroupKey> = spanned.iter().flat_map(|s| &s.groups).collect();
        let mut updates: Vec<NodeUpdate> = groups.into_iter().map(|g| self.whole(g)).collect();
        updates.extend(
            spanned
                .into_iter()
                .map(|s| NodeUpdate::PolicyUpserted(s.policy.clone())),
        );
        updates
    }

    /// The Nodes of a policy's span.
    pub fn policy_span(&self, key: &PolicyKey) -> Vec<&str> {
        self.policies
            .get(key)
            .map(|s| s.nodes.nodes().collect())
            .unwrap_or_default()
    }

    /// The Nodes of a group's span.
    pub fn group_span(&self, group: &GroupKey) -> Vec<&str> {
        self.group_nodes
            .get(group)
            .map(|c| c.nodes().collect())
            .unwrap_or_default()
    }

    /// Runs one membership change, noting what it moves, then delivers it.
    fn membership_change(&mut self, change: impl FnOnce(&mut Membership, &mut OnMemberChange<'_>)) {
        let mut changes = Changes::default();
        let SpanComputation {
            membership,
            applied_to,
            group_nodes,
            watched,
            ..
        } = self;
        change(membership, &mut |_, group, change, placement| {
            changes.note(applied_to, group_nodes, watched, group, change, placement)
        });
        self.deliver(changes);
    }

    /// Takes a policy out of the indexes (not out of its Nodes' views) and returns it.
    fn unplace(&mut self, key: &PolicyKey) -> Option<Spanned> {
        let old = self.policies.remove(key)?;
        if let Some(users) = self.applied_to.get_mut(&old.policy.applied_to) {
            users.remove(key);
            if users.is_empty() {
                self.applied_to.remove(&old.policy.applied_to);
            }
        }
        Some(old)
    }

    /// A group whole, as a Node gets it when it enters the Node's span.
    fn whole(&self, group: &GroupKey) -> NodeUpdate {
        NodeUpdate::GroupAdded {
            group: group.clone(),
            members: self
                .membership
                .members(group)
                .filter_map(Member::of)
                .collect(),
        }
    }

    /// `policy` is in `node`'s span (now, or in a new version): the groups it reads that the
    /// Node lacks, then the policy.
    fn enter(&mut self, spanned: &Spanned, node: &str) {
        let watched = self.watched.contains(node);
        let mut updates = Vec::new();
        for g in &spanned.groups {
            if self.group_nodes.entry(g.clone()).or_default().add(node) && watched {
                updates.push(self.whole(g));
            }
        }
        self.node_policies
            .entry(node.to_owned())
            .or_default()
            .insert(spanned.policy.key.clone());
        if watched {
            updates.push(NodeUpdate::PolicyUpserted(spanned.policy.clone()));
            self.send(node, updates);
        }
    }

    /// Queues `updates` for `node` if it is watched.
    fn send(&mut self, node: &str, updates: Vec<NodeUpdate>) {
        if self.watched.contains(node) {
            self.outbox
                .entry(node.to_owned())
                .or_default()
                .extend(updates);
        }
    }

    /// `old`'s groups no longer count for `node`; with `gone`, the policy itself leaves the
    /// Node first. Groups no policy of the Node reads any more leave after it.
    fn leave(&mut self, old: &Spanned, node: &str, gone: bool) {
        let mut updates = Vec::new();
        if gone {
            updates.push(NodeUpdate::PolicyRemoved(old.policy.key.clone()));
            if let Some(keys) = self.node_policies.get_mut(node) {
                keys.remove(&old.policy.key);
                if keys.is_empty() {
                    self.node_policies.remove(node);
                }
            }
        }
        for g in &old.groups {
            let Some(counts) = self.group_nodes.get_mut(g) else {
                continue;
            };
            if counts.remove(node) {
                updates.push(NodeUpdate::GroupRemoved { group: g.clone() });
            }
            if counts.is_empty() {
                self.group_nodes.remove(g);
            }
        }
        self.send(node, updates);
    }

    /// Sends the member changes to their Nodes, then moves the spans they changed: increases
    /// first, then decreases.
    fn deliver(&mut self, changes: Changes) {
        for moved in changes.moved {
            let update = match self.membership.pod(&moved.pod).and_then(Member::of) {
                Some(member) if moved.member => NodeUpdate::MemberUpserted {
                    group: moved.group,
                    member,
                },
                _ => NodeUpdate::MemberRemoved {
                    group: moved.group,
                    pod: moved.pod,
                },
            };
            for node in moved.nodes {
                self.outbox.entry(node).or_default().push(update.clone());
            }
        }
        let (up, down): (Vec<_>, Vec<_>) = changes
            .placed
            .into_iter()
            .filter(|(_, n)| *n != 0)
            .partition(|(_, n)| *n > 0);
        for ((key, node), n) in up.into_iter().chain(down) {
            let Some(mut spanned) = self.policies.remove(&key) else {
                continue;
            };
            for _ in 0..n.unsigned_abs() {
                if n > 0 && spanned.nodes.add(&node) {
                    self.enter(&spanned, &node);
                } else if n < 0 && spanned.nodes.remove(&node) {
                    self.leave(&spanned, &node, true);
                }
            }
            self.policies.insert(key, spanned);
        }
    }
}

/// What one Pod or Namespace change did, noted while the membership changes and delivered
/// after.
#[derive(Debug, Default)]
struct Changes {
    moved: Vec<Moved>,
    /// Per policy and Node, how many applied-to members came (positive) or went (negative).
    placed: BTreeMap<(PolicyKey, String), isize>,
}

impl Changes {
    fn note(
        &mut self,
        applied_to: &HashMap<GroupKey, BTreeSet<PolicyKey>>,
        group_nodes: &HashMap<GroupKey, NodeCounts>,
        watched: &BTreeSet<String>,
        group: &Group,
        change: &MemberChange,
        placement: Placement<'_>,
    ) {
        if let Some(counts) = group_nodes.get(&group.key) {
            let nodes: Vec<String> = counts
                .nodes()
                .filter(|n| watched.contains(*n))
                .map(str::to_owned)
                .collect();
            if !nodes.is_empty() {
                self.moved.push(Moved {
                    group: group.key.clone(),
                    pod: change.pod.clone(),
                    member: change.after.is_some(),
                    nodes,
                });
            }
        }
        for key in applied_to.get(&group.key).into_iter().flatten() {
            if let Some(node) = placement.before.filter(|_| change.before.is_some()) {
                *self
                    .placed
                    .entry((key.clone(), node.to_owned()))
                    .or_default() -= 1;
            }
            if let Some(node) = placement.after.filter(|_| change.after.is_some()) {
                *self
                    .placed
                    .entry((key.clone(), node.to_owned()))
                    .or_default() += 1;
            }
        }
    }
}
