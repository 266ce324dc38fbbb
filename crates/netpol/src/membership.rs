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
//!
//! In *given* mode ([`Membership::given`], an agent fed by a controller) no selector is
//! evaluated: groups arrive with their members ([`Membership::give_group`]) and change member
//! by member ([`Membership::give_member`], [`Membership::take_member`]), and the same member
//! changes are reported. A Pod member of several groups is one [`PodInfo`] (the details of
//! its last arrival: address, Node, named ports; no labels), kept while it is a member of one
//! of them; new details for it are a change in every group it is in, as a Pod update is.

use std::collections::{BTreeMap, BTreeSet};
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

/// Where the groups' members come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Source {
    /// Evaluated from the Pods' and Namespaces' labels.
    #[default]
    Selectors,
    /// Given member by member; Pods and Namespaces are not read.
    Given,
}

/// Pods, Namespaces and the groups in use over them.
#[derive(Debug, Default)]
pub struct Membership {
    source: Source,
    pods: BTreeMap<PodKey, PodInfo>,
    namespaces: BTreeMap<String, Labels>,
    groups: Groups,
    /// Given mode: the groups each Pod is a given member of.
    given_in: BTreeMap<PodKey, BTreeSet<GroupId>>,
}

impl Membership {
    /// A membership in given mode: groups and their members are given, never evaluated; the
    /// Pod and Namespace changes ([`Self::set_pod`], [`Self::remove_pod`],
    /// [`Self::set_namespace`]) are not read.
    pub fn given() -> Membership {
        Membership {
            source: Source::Given,
            ..Membership::default()
        }
    }

    /// Whether this membership is in given mode.
    pub fn is_given(&self) -> bool {
        self.source == Source::Given
    }

    /// Adds or updates a Pod; `changed` hears of every group membership this moves.
    pub fn set_pod(
        &mut self,
        info: PodInfo,
        mut changed: impl FnMut(GroupId, &Group, &MemberChange, Placement<'_>),
    ) {
        if self.is_given() {
            return;
        }
        let key = info.key.clone();
        let old = self.pods.insert(key.clone(), info);
        let Membership {
            pods,
            namespaces,
            groups,
            ..
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
        if self.is_given() {
            return;
        }
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
        if self.is_given() {
            return;
        }
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
            ..
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
    /// In given mode a group not given yet starts empty.
    pub fn use_group(&mut self, key: &GroupKey, user: &PolicyKey) -> GroupId {
        if self.groups.id(key).is_some() || self.is_given() {
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

    /// Given mode: group `key` is given with exactly `members` (those with no address are no
    /// members); a group already given keeps the members listed again and loses the others.
    /// The group stays until [`Self::take_back_group`], whether a policy reads it or not.
    pub fn give_group(
        &mut self,
        key: &GroupKey,
        members: impl IntoIterator<Item = PodInfo>,
        changed: &mut OnMemberChange<'_>,
    ) {
        if !self.is_given() {
            return;
        }
        let g = self.groups.give(key);
        let members: Vec<PodInfo> = members.into_iter().collect();
        let listed: BTreeSet<&PodKey> = members.iter().map(|m| &m.key).collect();
        let gone: Vec<PodKey> = self
            .groups
            .get(g)
            .into_iter()
            .flat_map(|group| group.members.keys())
            .filter(|k| !listed.contains(k))
            .cloned()
            .collect();
        for pod in gone {
            self.take_member(key, &pod, changed);
        }
        for member in members {
            self.give_member(key, member, changed);
        }
    }

    /// Given mode: `member` is a member of group `key` (a given group), with these details. A
    /// Pod's details are one for all its groups: new details (an address, a Node, named ports)
    /// change it in each group it is in; with no address it leaves them all.
    pub fn give_member(
        &mut self,
        key: &GroupKey,
        member: PodInfo,
        changed: &mut OnMemberChange<'_>,
    ) {
        let Some(g) = self.groups.id(key).filter(|_| self.is_given()) else {
            return;
        };
        let pod = member.key.clone();
        let old = self.pods.insert(pod.clone(), member);
        let Membership {
            pods,
            groups,
            given_in,
            ..
        } = self;
        let new = &pods[&pod];
        let placement = Placement {
            before: old.as_ref().and_then(|o| o.node.as_deref()),
            after: new.node.as_deref(),
        };
        let details_changed = old
            .as_ref()
            .is_none_or(|o| o.node != new.node || o.named_ports != new.named_ports);
        let of_pod = given_in.entry(pod.clone()).or_default();
        of_pod.insert(g);
        for &id in of_pod.iter() {
            let was = groups
                .get(id)
                .and_then(|group| group.members.get(&pod).copied());
            if was == new.ip && !(new.ip.is_some() && details_changed) {
                continue;
            }
            if let Some((change, group)) = groups.set_member(id, &pod, new.ip) {
                changed(id, group, &change, placement);
            }
        }
        if new.ip.is_none() {
            given_in.remove(&pod);
            pods.remove(&pod);
        }
    }

    /// Given mode: Pod `pod` is no longer a member of group `key`; once it is a member of no
    /// group it is forgotten.
    pub fn take_member(&mut self, key: &GroupKey, pod: &PodKey, changed: &mut OnMemberChange<'_>) {
        let Some(g) = self.groups.id(key) else {
            return;
        };
        let Some(of_pod) = self.given_in.get_mut(pod) else {
            return;
        };
        if !of_pod.remove(&g) {
            return;
        }
        let last = of_pod.is_empty();
        if last {
            self.given_in.remove(pod);
        }
        let node = self.pods.get(pod).and_then(|info| info.node.as_deref());
        let placement = Placement {
            before: node,
            after: node,
        };
        if let Some((change, group)) = self.groups.set_member(g, pod, None) {
            changed(g, group, &change, placement);
        }
        if last {
            self.pods.remove(pod);
        }
    }

    /// Given mode: group `key` is taken back: its members leave it, and it goes unless a
    /// policy still reads it.
    pub fn take_back_group(&mut self, key: &GroupKey, changed: &mut OnMemberChange<'_>) {
        let members: Vec<PodKey> = self
            .groups
            .of(key)
            .filter(|group| group.given)
            .into_iter()
            .flat_map(|group| group.members.keys().cloned())
            .collect();
        for pod in &members {
            self.take_member(key, pod, changed);
        }
        self.groups.take_back(key);
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
        .take_while(move |(k, _)| *k.namespace == *namespace)
}

/// Whether group `group` selects Pod `pod` (which needs an IP to be a member).
fn selects(
    namespaces: &BTreeMap<String, Labels>,
    group: &GroupKey,
    key: &PodKey,
    pod: &PodInfo,
) -> bool {
    let in_scope = match &group.scope {
        Scope::Namespace(ns) => **ns == *key.namespace,
        Scope::Namespaces(sel) => namespaces
            .get(&*key.namespace)
            .is_some_and(|labels| sel.matches(labels)),
    };
    pod.ip.is_some() && in_scope && group.pods.matches(&pod.labels)
}
