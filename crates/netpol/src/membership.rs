//! [`Membership`]: the Pods and Namespaces the policy computation reads, and the selector
//! groups ([`crate::group`]) kept up to date from them.
//!
//! A Pod change evaluates only the groups that may select it (those of its Namespace and the
//! cluster-wide ones), a Namespace label change only the cluster-wide groups, for that
//! Namespace's Pods. Every member that enters or leaves a group, or stays in it with another
//! Node or other named ports, is reported to the caller with the group (and so its users) and
//! the Nodes the Pod ran on before and after. A Node's [`crate::PolicyEngine`] turns the
//! reports into rule patches for its own Pods; a cluster's controller into the Nodes each
//! group and policy must reach.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use crate::group::{Group, GroupId, Groups, MemberChange};
use crate::input::{GroupKey, PodInfo, Scope};
use crate::selector::Labels;
use model::policy::{PodKey, PolicyKey};

/// The Nodes a changed member's Pod ran on before and after the change (`None`: not
/// scheduled, or no Pod).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement<'a> {
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
}

/// What a caller hands a membership change to hear of each member change it makes, as a trait
/// object (the change's methods take any such closure).
pub type OnMemberChange<'a> = dyn FnMut(GroupId, &Group, &MemberChange, Placement<'_>) + 'a;

/// Pods, Namespaces and the groups in use over them.
#[derive(Debug, Default)]
pub struct Membership {
    pods: BTreeMap<PodKey, PodInfo>,
    namespaces: BTreeMap<String, Labels>,
    groups: Groups,
}

impl Membership {
    /// Adds or updates a Pod; `changed` hears of every group membership this moves.
    pub fn set_pod(
        &mut self,
        info: PodInfo,
        mut changed: impl FnMut(GroupId, &Group, &MemberChange, Placement<'_>),
    ) {
        let key = info.key.clone();
        let old = self.pods.insert(key.clone(), info);
        let Membership {
            pods,
            namespaces,
            groups,
        } = self;
        let new = &pods[&key];
        if old.as_ref() == Some(new) {
            return;
        }
        let placement = Placement {
            before: old.as_ref().and_then(|o| o.node.as_deref()),
            after: new.node.as_deref(),
        };
        // A member whose Node or named ports change is a change for its groups' users.
        let details_changed = old
            .as_ref()
            .is_none_or(|o| o.node != new.node || o.named_ports != new.named_ports);
        for g in groups.candidates(&key.namespace) {
            let Some(group) = groups.get(g) else {
                continue;
            };
            let now = new
                .ip
                .filter(|_| selects(namespaces, &group.key, &key, new));
            let was = group.members.get(&key).copied();
            if was == now && !(now.is_some() && details_changed) {
                continue;
            }
            if let Some((change, group)) = groups.set_member(g, &key, now) {
                changed(g, group, &change, placement);
            }
        }
    }

    /// Removes a Pod; `changed` hears of every group it leaves.
    pub fn remove_pod(
        &mut self,
        key: &PodKey,
        mut changed: impl FnMut(GroupId, &Group, &MemberChange, Placement<'_>),
    ) {
        let Some(old) = self.pods.remove(key) else {
            return;
        };
        let placement = Placement {
            before: old.node.as_deref(),
            after: None,
        };
        for g in self.groups.candidates(&key.namespace) {
            let member = self
                .groups
                .get(g)
                .is_some_and(|group| group.members.contains_key(key));
            if member && let Some((change, group)) = self.groups.set_member(g, key, None) {
                changed(g, group, &change, placement);
            }
        }
    }

    /// Sets (`Some`) or removes (`None`) a Namespace's labels; only the groups with a Namespace
    /// selector are evaluated again, for that Namespace's Pods.
    pub fn set_namespace(
        &mut self,
        name: &str,
        labels: Option<Labels>,
        mut changed: impl FnMut(GroupId, &Group, &MemberChange, Placement<'_>),
    ) {
        let old = match &labels {
            Some(l) => self.namespaces.insert(name.to_owned(), l.clone()),
            None => self.namespaces.remove(name),
        };
        if old == labels {
            return;
        }
        let Membership {
            pods,
            namespaces,
            groups,
        } = self;
        let cluster_wide: Vec<GroupId> = groups.cluster_wide().collect();
        for g in cluster_wide {
            for (key, pod) in pods_of(pods, name) {
                let Some(group) = groups.get(g) else {
                    continue;
                };
                let now = pod.ip.filter(|_| selects(namespaces, &group.key, key, pod));
                if group.members.get(key).copied() == now {
                    continue;
                }
                let node = pod.node.as_deref();
                let placement = Placement {
                    before: node,
                    after: node,
                };
                if let Some((change, group)) = groups.set_member(g, key, now) {
                    changed(g, group, &change, placement);
                }
            }
        }
    }

    /// Makes `user` a user of group `key`, evaluating its members if it is new; returns its id.
    pub fn use_group(&mut self, key: &GroupKey, user: &PolicyKey) -> GroupId {
        if self.groups.id(key).is_some() {
            return self.groups.use_group(key, user, BTreeMap::new);
        }
        let members: BTreeMap<PodKey, Ipv4Addr> = {
            let candidates: Box<dyn Iterator<Item = (&PodKey, &PodInfo)>> = match &key.scope {
                Scope::Namespace(ns) => Box::new(pods_of(&self.pods, ns)),
                Scope::Namespaces(_) => Box::new(self.pods.iter()),
            };
            candidates
                .filter(|(k, pod)| selects(&self.namespaces, key, k, pod))
                .filter_map(|(k, pod)| Some((k.clone(), pod.ip?)))
                .collect()
        };
        self.groups.use_group(key, user, || members)
    }

    /// `user` stops using group `key`; the group goes when nobody uses it.
    pub fn release(&mut self, key: &GroupKey, user: &PolicyKey) {
        self.groups.release(key, user);
    }

    /// What is known of a Pod.
    pub fn pod(&self, key: &PodKey) -> Option<&PodInfo> {
        self.pods.get(key)
    }

    /// The groups in use.
    pub fn groups(&self) -> &Groups {
        &self.groups
    }

    /// The member Pods of group `key` (none if it is not in use).
    pub fn members<'a>(&'a self, key: &GroupKey) -> impl Iterator<Item = &'a PodInfo> + 'a {
        self.groups
            .of(key)
            .into_iter()
            .flat_map(|group| group.members.keys())
            .filter_map(|k| self.pods.get(k))
    }
}

/// The Pods of one Namespace.
fn pods_of<'a>(
    pods: &'a BTreeMap<PodKey, PodInfo>,
    namespace: &'a str,
) -> impl Iterator<Item = (&'a PodKey, &'a PodInfo)> + 'a {
    pods.range(PodKey::new(namespace, "")..)
        .take_while(move |(k, _)| k.namespace == namespace)
}

/// Whether group `group` selects Pod `pod` (which needs an IP to be a member).
fn selects(
    namespaces: &BTreeMap<String, Labels>,
    group: &GroupKey,
    key: &PodKey,
    pod: &PodInfo,
) -> bool {
    let in_scope = match &group.scope {
        Scope::Namespace(ns) => *ns == key.namespace,
        Scope::Namespaces(sel) => namespaces
            .get(&key.namespace)
            .is_some_and(|labels| sel.matches(labels)),
    };
    pod.ip.is_some() && in_scope && group.pods.matches(&pod.labels)
}
