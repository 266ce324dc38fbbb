//! Selector groups as values: a [`Group`] is the set of Pods one [`GroupKey`] (a Namespace
//! scope and a Pod selector) selects, each member with its IP, and the policies that reference
//! it; [`Groups`] holds every group in use, indexed so a Pod change reaches only the groups
//! that could select it (those of its Namespace and the cluster-wide ones). A member entering
//! or leaving a group is a [`MemberChange`], which users apply to what they built from the
//! group (a rule's peers, a policy's applied-to Pods) instead of rereading its members.
//!
//! Equal selectors share one group whoever uses them, which is what a central controller's
//! address and applied-to groups are: named sets of members, changed member by member. A group
//! has a [`GroupId`] while it is in use, so its users hold a number, not its selectors.
//!
//! A group is in use while a policy reads it, or while it is *given*: an agent fed by a
//! controller holds each group it was sent, with the members it was sent, from its arrival
//! (which precedes the policies reading it) to its removal.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::Ipv4Addr;

use crate::input::{GroupKey, Scope};
use model::policy::{PodKey, PolicyKey};

/// A group's number while it is in use (a group dropped and made again gets a new one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupId(u32);

/// The Pods one selector pair selects, and the policies that use it.
#[derive(Debug)]
pub struct Group {
    pub key: GroupKey,
    /// Member Pods (only Pods with an IP), with their IP.
    pub members: BTreeMap<PodKey, Ipv4Addr>,
    /// Policies reading this group.
    pub users: BTreeSet<PolicyKey>,
    /// Whether the group was given (with its members) rather than only used: it stays until
    /// it is taken back, whether a policy reads it or not.
    pub given: bool,
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
    ids: HashMap<GroupKey, GroupId>,
    groups: HashMap<GroupId, Group>,
    next: u32,
    /// Groups of one Namespace, by Namespace.
    by_namespace: HashMap<String, BTreeSet<GroupId>>,
    /// Groups with a Namespace selector.
    cluster_wide: BTreeSet<GroupId>,
}

impl Groups {
    pub fn get(&self, id: GroupId) -> Option<&Group> {
        self.groups.get(&id)
    }

    /// The group of `key`, if it is in use.
    pub fn of(&self, key: &GroupKey) -> Option<&Group> {
        self.groups.get(self.ids.get(key)?)
    }

    /// The id of `key`'s group, if it is in use.
    pub fn id(&self, key: &GroupKey) -> Option<GroupId> {
        self.ids.get(key).copied()
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The groups that may select a Pod of `namespace`.
    pub fn candidates(&self, namespace: &str) -> Vec<GroupId> {
        self.by_namespace
            .get(namespace)
            .into_iter()
            .flatten()
            .chain(&self.cluster_wide)
            .copied()
            .collect()
    }

    /// The groups with a Namespace selector (those a Namespace's labels matter to).
    pub fn cluster_wide(&self) -> impl Iterator<Item = GroupId> + '_ {
        self.cluster_wide.iter().copied()
    }

    /// Makes `user` a user of group `key` and returns the group's id; a group not in use yet
    /// starts with `members`.
    pub fn use_group(
        &mut self,
        key: &GroupKey,
        user: &PolicyKey,
        members: impl FnOnce() -> BTreeMap<PodKey, Ipv4Addr>,
    ) -> GroupId {
        let id = self.entry(key, members);
        if let Some(group) = self.groups.get_mut(&id) {
            group.users.insert(user.clone());
        }
        id
    }

    /// Marks group `key` given (made empty if it is not in use yet) and returns its id.
    pub fn give(&mut self, key: &GroupKey) -> GroupId {
        let id = self.entry(key, BTreeMap::new);
        if let Some(group) = self.groups.get_mut(&id) {
            group.given = true;
        }
        id
    }

    /// Group `key` is no longer given; it goes unless a policy still reads it.
    pub fn take_back(&mut self, key: &GroupKey) {
        let Some(id) = self.ids.get(key).copied() else {
            return;
        };
        if let Some(group) = self.groups.get_mut(&id) {
            group.given = false;
            if group.users.is_empty() {
                self.remove(id);
            }
        }
    }

    /// `user` stops using group `key`; the group goes when nobody uses it and it is not given.
    pub fn release(&mut self, key: &GroupKey, user: &PolicyKey) {
        let Some(id) = self.ids.get(key).copied() else {
            return;
        };
        let Some(group) = self.groups.get_mut(&id) else {
            return;
        };
        group.users.remove(user);
        if group.users.is_empty() && !group.given {
            self.remove(id);
        }
    }

    /// The id of group `key`, made with `members` if it is not in use.
    fn entry(
        &mut self,
        key: &GroupKey,
        members: impl FnOnce() -> BTreeMap<PodKey, Ipv4Addr>,
    ) -> GroupId {
        if let Some(id) = self.ids.get(key) {
            return *id;
        }
        let id = GroupId(self.next);
        self.next = self.next.wrapping_add(1);
        match &key.scope {
            Scope::Namespace(ns) => {
                self.by_namespace.entry(ns.clone()).or_default().insert(id);
            }
            Scope::Namespaces(_) => {
                self.cluster_wide.insert(id);
            }
        }
        self.ids.insert(key.clone(), id);
        self.groups.insert(
            id,
            Group {
                key: key.clone(),
                members: members(),
                users: BTreeSet::new(),
                given: false,
            },
        );
        id
    }

    /// Drops group `id` and its index entries.
    fn remove(&mut self, id: GroupId) {
        let Some(group) = self.groups.remove(&id) else {
            return;
        };
        self.ids.remove(&group.key);
        match &group.key.scope {
            Scope::Namespace(ns) => {
                if let Some(set) = self.by_namespace.get_mut(ns) {
                    set.remove(&id);
                    if set.is_empty() {
                        self.by_namespace.remove(ns);
                    }
                }
            }
            Scope::Namespaces(_) => {
                self.cluster_wide.remove(&id);
            }
        }
    }

    /// Sets `pod`'s membership of group `id` (`Some(ip)`: a member with that IP) and returns
    /// the change, with the group, or `None` if the group is not in use.
    pub fn set_member(
        &mut self,
        id: GroupId,
        pod: &PodKey,
        after: Option<Ipv4Addr>,
    ) -> Option<(MemberChange, &Group)> {
        let group = self.groups.get_mut(&id)?;
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
