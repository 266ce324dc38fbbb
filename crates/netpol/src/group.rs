//! Selector groups as values: a [`Group`] is the set of Pods one [`GroupKey`] (a Namespace
//! scope and a Pod selector) selects, each member with its IP, and the policies that reference
//! it; [`Groups`] holds every group in use, indexed so a Pod change reaches only the groups
//! that could select it (those of its Namespace and the cluster-wide ones). A member entering
//! or leaving a group is a [`MemberChange`], which users apply to what they built from the
//! group (a rule's peers, a policy's applied-to Pods) instead of rereading its members.
//!
//! Equal selectors share one group whoever uses them, which is what a central controller's
//! address and applied-to groups are: named sets of members, changed member by member.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::Ipv4Addr;

use crate::input::{GroupKey, Scope};
use model::policy::{PodKey, PolicyKey};

/// The Pods one selector pair selects, and the policies that use it.
#[derive(Debug, Default)]
pub struct Group {
    /// Member Pods (only Pods with an IP), with their IP.
    pub members: BTreeMap<PodKey, Ipv4Addr>,
    /// Policies reading this group.
    pub users: BTreeSet<PolicyKey>,
}

/// One Pod's membership of one group before and after a change: `None` where it is not a
/// member, its IP where it is. Equal sides mean the member stayed and only its details
/// (Node, named ports) changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberChange {
    pub pod: PodKey,
    pub before: Option<Ipv4Addr>,
    pub after: Option<Ipv4Addr>,
}

/// Every group in use, by key, with the index from a Namespace to the groups that may select
/// its Pods.
#[derive(Debug, Default)]
pub struct Groups {
    groups: HashMap<GroupKey, Group>,
    /// Groups of one Namespace, by Namespace.
    by_namespace: HashMap<String, BTreeSet<GroupKey>>,
    /// Groups with a Namespace selector.
    cluster_wide: BTreeSet<GroupKey>,
}

impl Groups {
    pub fn get(&self, key: &GroupKey) -> Option<&Group> {
        self.groups.get(key)
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The groups that may select a Pod of `namespace`.
    pub fn candidates(&self, namespace: &str) -> Vec<GroupKey> {
        self.by_namespace
            .get(namespace)
            .into_iter()
            .flatten()
            .chain(&self.cluster_wide)
            .cloned()
            .collect()
    }

    /// The groups with a Namespace selector (those a Namespace's labels matter to).
    pub fn cluster_wide(&self) -> impl Iterator<Item = &GroupKey> {
        self.cluster_wide.iter()
    }

    /// Whether `key` is in use.
    pub fn contains(&self, key: &GroupKey) -> bool {
        self.groups.contains_key(key)
    }

    /// Makes `user` a user of group `key`; a group not in use yet starts with `members`.
    pub fn use_group(
        &mut self,
        key: &GroupKey,
        user: &PolicyKey,
        members: impl FnOnce() -> BTreeMap<PodKey, Ipv4Addr>,
    ) {
        if !self.groups.contains_key(key) {
            match &key.scope {
                Scope::Namespace(ns) => {
                    self.by_namespace
                        .entry(ns.clone())
                        .or_default()
                        .insert(key.clone());
                }
                Scope::Namespaces(_) => {
                    self.cluster_wide.insert(key.clone());
                }
            }
            self.groups.insert(
                key.clone(),
                Group {
                    members: members(),
                    users: BTreeSet::new(),
                },
            );
        }
        if let Some(group) = self.groups.get_mut(key) {
            group.users.insert(user.clone());
        }
    }

    /// `user` stops using group `key`; the group goes when nobody uses it.
    pub fn release(&mut self, key: &GroupKey, user: &PolicyKey) {
        let Some(group) = self.groups.get_mut(key) else {
            return;
        };
        group.users.remove(user);
        if !group.users.is_empty() {
            return;
        }
        self.groups.remove(key);
        match &key.scope {
            Scope::Namespace(ns) => {
                if let Some(set) = self.by_namespace.get_mut(ns) {
                    set.remove(key);
                    if set.is_empty() {
                        self.by_namespace.remove(ns);
                    }
                }
            }
            Scope::Namespaces(_) => {
                self.cluster_wide.remove(key);
            }
        }
    }

    /// Sets `pod`'s membership of group `key` (`Some(ip)`: a member with that IP) and returns
    /// the change, with the group, or `None` if the group is not in use.
    pub fn set_member(
        &mut self,
        key: &GroupKey,
        pod: &PodKey,
        after: Option<Ipv4Addr>,
    ) -> Option<(MemberChange, &Group)> {
        let group = self.groups.get_mut(key)?;
        let before = match after {
            Some(ip) => group.members.insert(pod.clone(), ip),
            None => group.members.remove(pod),
        };
        Some((
            MemberChange {
                pod: pod.clone(),
                before,
                after,
            },
            group,
        ))
    }
}
