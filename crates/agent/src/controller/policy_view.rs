//! [`PolicyView`]: in controller mode, the view of its span antrea-controller gave this Node
//! (a `controlplane::NodeView`), and how each [`Delivery`] reaches the policy engine (a
//! [`PolicyEngine::given`]): a snapshot replaces the view by the updates that take the held
//! view to it, so the engine's next sync says only what differs; updates are checked in order
//! against a copy of the view first, so a delivery out of order changes nothing.

use std::collections::BTreeSet;

use controlplane::{Delivery, Member, NodeUpdate, NodeView, OutOfOrder};
use netpol::PolicyEngine;
use netpol::input::{GroupKey, PodInfo};

/// The view the engine holds, and whether any view was ever received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyView {
    view: NodeView,
    received: bool,
}

impl PolicyView {
    /// Nothing received yet: the engine enforces no policy.
    pub fn new() -> PolicyView {
        PolicyView::default()
    }

    /// The view held.
    pub fn view(&self) -> &NodeView {
        &self.view
    }

    /// Whether a view was received (from the controller, or the persisted one).
    pub fn received(&self) -> bool {
        self.received
    }

    /// Takes `delivery` into the view and `engine` (nothing is synced). Updates out of order
    /// are refused whole: the view and the engine stay as they were.
    pub fn receive(
        &mut self,
        engine: &mut PolicyEngine,
        delivery: &Delivery,
    ) -> Result<(), OutOfOrder> {
        match delivery {
            Delivery::Snapshot(view) => {
                for update in updates_between(&self.view, view) {
                    give(engine, &update);
                }
                self.view = view.clone();
            }
            Delivery::Updates(updates) => {
                let mut next = self.view.clone();
                for update in updates {
                    next.apply(update)?;
                }
                for update in updates {
                    give(engine, update);
                }
                self.view = next;
            }
        }
        self.received = true;
        Ok(())
    }
}

/// A group member as the engine takes it: no labels (the controller evaluated them).
pub fn member_info(member: &Member) -> PodInfo {
    PodInfo {
        key: member.pod.clone(),
        labels: Default::default(),
        ip: Some(member.ip),
        node: member.node.clone(),
        named_ports: member.named_ports.clone(),
    }
}

/// Passes one update (already accepted by a [`NodeView`]) to the engine.
fn give(engine: &mut PolicyEngine, update: &NodeUpdate) {
    match update {
        NodeUpdate::GroupAdded { group, members } => {
            engine.give_group(group, members.iter().map(member_info));
        }
        NodeUpdate::MemberUpserted { group, member } => {
            engine.give_member(group, member_info(member));
        }
        NodeUpdate::MemberRemoved { group, pod } => engine.take_member(group, pod),
        NodeUpdate::GroupRemoved { group } => engine.take_back_group(group),
        NodeUpdate::PolicyUpserted(policy) => engine.set_policy(policy.clone()),
        NodeUpdate::PolicyRemoved(key) => engine.remove_policy(key),
    }
}

/// Updates that take `old` to `new`, in the order a [`NodeView`] accepts: groups added and
/// members changed, policies upserted, policies removed, groups removed.
pub fn updates_between(old: &NodeView, new: &NodeView) -> Vec<NodeUpdate> {
    let mut updates = Vec::new();
    for (group, members) in &new.groups {
        let Some(before) = old.groups.get(group) else {
            updates.push(NodeUpdate::GroupAdded {
                group: group.clone(),
                members: members.values().cloned().collect(),
            });
            continue;
        };
        for (pod, member) in members {
            if before.get(pod) != Some(member) {
                updates.push(NodeUpdate::MemberUpserted {
                    group: group.clone(),
                    member: member.clone(),
                });
            }
        }
        for pod in before.keys().filter(|pod| !members.contains_key(*pod)) {
            updates.push(NodeUpdate::MemberRemoved {
                group: group.clone(),
                pod: pod.clone(),
            });
        }
    }
    for (key, policy) in &new.policies {
        if old.policies.get(key) != Some(policy) {
            updates.push(NodeUpdate::PolicyUpserted(policy.clone()));
        }
    }
    for key in old
        .policies
        .keys()
        .filter(|k| !new.policies.contains_key(*k))
    {
        updates.push(NodeUpdate::PolicyRemoved(key.clone()));
    }
    let kept: BTreeSet<&GroupKey> = new.groups.keys().collect();
    for group in old.groups.keys().filter(|g| !kept.contains(g)) {
        updates.push(NodeUpdate::GroupRemoved {
            group: group.clone(),
        });
    }
    updates
}

/// The updates that build `view` from nothing (its groups, then its policies).
pub fn updates_of(view: &NodeView) -> Vec<NodeUpdate> {
    updates_between(&NodeView::default(), view)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::net::Ipv4Addr;

    use model::policy::{PodKey, PolicyKey};
    use netpol::input::{CompiledPolicy, Scope};
    use netpol::selector::Selector;

    use super::*;

    fn group(app: &str) -> GroupKey {
        GroupKey {
            scope: Scope::Namespace("ns".into()),
            pods: Selector::with_labels([("app", app)]),
        }
    }

    fn member(name: &str, last: u8, node: &str) -> Member {
        Member {
            pod: PodKey::new("ns", name),
            ip: Ipv4Addr::new(10, 0, 0, last),
            node: Some(node.into()),
            named_ports: Default::default(),
        }
    }

    fn view(groups: &[(&GroupKey, Vec<Member>)], policies: &[(&str, &GroupKey)]) -> NodeView {
        let mut view = NodeView::default();
        for (g, members) in groups {
            let members: BTreeMap<PodKey, Member> =
                members.iter().map(|m| (m.pod.clone(), m.clone())).collect();
            view.groups.insert((*g).clone(), members);
        }
        for (name, applied) in policies {
            let policy = CompiledPolicy {
                key: PolicyKey::new("ns", *name),
                applied_to: (*applied).clone(),
                ingress: Some(vec![]),
                egress: None,
            };
            view.policies.insert(policy.key.clone(), policy);
        }
        view
    }

    #[test]
    fn the_updates_between_two_views_take_one_to_the_other_in_order() {
        let (web, db) = (group("web"), group("db"));
        let old = view(
            &[
                (&web, vec![member("a", 1, "n1"), member("b", 2, "n1")]),
                (&db, vec![member("c", 3, "n2")]),
            ],
            &[("p", &web), ("q", &db)],
        );
        let new = view(
            &[(&web, vec![member("a", 1, "n2"), member("d", 4, "n1")])],
            &[("p", &web)],
        );
        let mut built = old.clone();
        for update in updates_between(&old, &new) {
            built.apply(&update).unwrap();
        }
        assert_eq!(built, new);
        assert!(updates_between(&new, &new).is_empty());
        let mut from_nothing = NodeView::default();
        for update in updates_of(&new) {
            from_nothing.apply(&update).unwrap();
        }
        assert_eq!(from_nothing, new);
    }

    #[test]
    fn updates_out_of_order_change_nothing() {
        let web = group("web");
        let mut engine = PolicyEngine::given("n1");
        let mut held = PolicyView::new();
        assert!(!held.received());
        let first = view(&[(&web, vec![member("a", 1, "n1")])], &[("p", &web)]);
        held.receive(&mut engine, &Delivery::Snapshot(first.clone()))
            .unwrap();
        assert!(held.received());
        engine.sync();
        let before = engine.snapshot().clone();
        assert_eq!(before.isolation.ingress.len(), 1);
        // A member added, then a group removed while the policy reads it: refused whole.
        let bad = Delivery::Updates(vec![
            NodeUpdate::MemberUpserted {
                group: web.clone(),
                member: member("b", 2, "n1"),
            },
            NodeUpdate::GroupRemoved { group: web.clone() },
        ]);
        let error = held.receive(&mut engine, &bad).unwrap_err();
        assert!(error.to_string().contains("a policy still reads the group"));
        assert_eq!(held.view(), &first);
        assert!(engine.sync().delta.is_empty());
        assert_eq!(engine.snapshot(), &before);
    }
}
