//! [`NodeView`]: a Node's view built from its [`NodeUpdate`]s, which refuses an update that
//! breaks their order (a policy before a group it reads, a group removed while a policy reads
//! it, a member change of a group the Node does not have).
//!
//! Serialized, a view is its groups (each with its members) and then its policies, as lists;
//! reading one back checks what [`NodeView::apply`] checks, so a decoded view is never one the
//! updates could not have built.

use std::collections::BTreeMap;
use std::fmt;

use model::policy::{PodKey, PolicyKey};
use netpol::input::{CompiledPolicy, GroupKey};
use serde::{Deserialize, Serialize};

use crate::update::{Member, NodeUpdate};

/// The policies applied to a Node's Pods and the groups they read, with their members.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "SerializedView", try_from = "SerializedView")]
pub struct NodeView {
    pub policies: BTreeMap<PolicyKey, CompiledPolicy>,
    pub groups: BTreeMap<GroupKey, BTreeMap<PodKey, Member>>,
}

/// An update the view cannot take in the order it came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfOrder {
    pub update: String,
    pub reason: &'static str,
}

impl fmt::Display for OutOfOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.update, self.reason)
    }
}

impl std::error::Error for OutOfOrder {}

impl NodeView {
    /// Applies one update; on error the view is unchanged.
    pub fn apply(&mut self, update: &NodeUpdate) -> Result<(), OutOfOrder> {
        let refuse = |reason| {
            Err(OutOfOrder {
                update: format!("{update:?}"),
                reason,
            })
        };
        match update {
            NodeUpdate::GroupAdded { group, members } => {
                if self.groups.contains_key(group) {
                    return refuse("the group is already there");
                }
                let members = members.iter().map(|m| (m.pod.clone(), m.clone())).collect();
                self.groups.insert(group.clone(), members);
            }
            NodeUpdate::MemberUpserted { group, member } => match self.groups.get_mut(group) {
                Some(members) => {
                    members.insert(member.pod.clone(), member.clone());
                }
                None => return refuse("a member of a group the Node does not have"),
            },
            NodeUpdate::MemberRemoved { group, pod } => match self.groups.get_mut(group) {
                Some(members) => {
                    if members.remove(pod).is_none() {
                        return refuse("no such member");
                    }
                }
                None => return refuse("a member of a group the Node does not have"),
            },
            NodeUpdate::GroupRemoved { group } => {
                if self.policies.values().any(|p| p.groups().contains(group)) {
                    return refuse("a policy still reads the group");
                }
                if self.groups.remove(group).is_none() {
                    return refuse("no such group");
                }
            }
            NodeUpdate::PolicyUpserted(policy) => {
                if policy.groups().iter().any(|g| !self.groups.contains_key(g)) {
                    return refuse("a group the policy reads is missing");
                }
                self.policies.insert(policy.key.clone(), policy.clone());
            }
            NodeUpdate::PolicyRemoved(key) => {
                if self.policies.remove(key).is_none() {
                    return refuse("no such policy");
                }
            }
        }
        Ok(())
    }
}

/// A view as it is written: groups, then policies.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SerializedView {
    groups: Vec<SerializedGroup>,
    policies: Vec<CompiledPolicy>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SerializedGroup {
    group: GroupKey,
    members: Vec<Member>,
}

impl From<NodeView> for SerializedView {
    fn from(view: NodeView) -> SerializedView {
        SerializedView {
            groups: view
                .groups
                .into_iter()
                .map(|(group, members)| SerializedGroup {
                    group,
                    members: members.into_values().collect(),
                })
                .collect(),
            policies: view.policies.into_values().collect(),
        }
    }
}

impl TryFrom<SerializedView> for NodeView {
    type Error = OutOfOrder;

    /// Rebuilds the view through [`NodeView::apply`]: a repeated group or member, or a policy
    /// reading a group the view lacks, is refused.
    fn try_from(written: SerializedView) -> Result<NodeView, OutOfOrder> {
        let mut view = NodeView::default();
        for SerializedGroup { group, members } in written.groups {
            let distinct: std::collections::BTreeSet<&PodKey> =
                members.iter().map(|m| &m.pod).collect();
            if distinct.len() != members.len() {
                return Err(OutOfOrder {
                    update: format!("group {group:?}"),
                    reason: "a member is listed twice",
                });
            }
            view.apply(&NodeUpdate::GroupAdded { group, members })?;
        }
        for policy in written.policies {
            if view.policies.contains_key(&policy.key) {
                return Err(OutOfOrder {
                    update: format!("policy {}", policy.key),
                    reason: "the policy is listed twice",
                });
            }
            view.apply(&NodeUpdate::PolicyUpserted(policy))?;
        }
        Ok(view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netpol::input::Scope;
    use netpol::selector::Selector;

    fn group(app: &str) -> GroupKey {
        GroupKey {
            scope: Scope::Namespace("ns".into()),
            pods: Selector::with_labels([("app", app)]),
        }
    }

    fn member(name: &str, last: u8) -> Member {
        Member {
            pod: PodKey::new("ns", name),
            ip: std::net::Ipv4Addr::new(10, 0, 0, last),
            node: Some("n1".into()),
            named_ports: Default::default(),
        }
    }

    fn policy(reads: &GroupKey) -> CompiledPolicy {
        CompiledPolicy {
            key: PolicyKey::new("ns", "p"),
            applied_to: reads.clone(),
            ingress: Some(vec![]),
            egress: None,
        }
    }

    #[test]
    fn a_view_reads_back_equal_to_what_was_written() {
        let mut view = NodeView::default();
        let g = group("web");
        view.apply(&NodeUpdate::GroupAdded {
            group: g.clone(),
            members: vec![member("a", 1), member("b", 2)],
        })
        .unwrap();
        view.apply(&NodeUpdate::PolicyUpserted(policy(&g))).unwrap();
        let text = serde_json::to_string(&view).unwrap();
        let back: NodeView = serde_json::from_str(&text).unwrap();
        assert_eq!(back, view);
    }

    #[test]
    fn a_written_view_breaking_the_order_is_refused() {
        let g = group("web");
        let orphan = serde_json::to_value(SerializedView {
            groups: vec![],
            policies: vec![policy(&g)],
        })
        .unwrap();
        let error = serde_json::from_value::<NodeView>(orphan).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("a group the policy reads is missing")
        );
        let twice = serde_json::to_value(SerializedView {
            groups: vec![SerializedGroup {
                group: g,
                members: vec![member("a", 1), member("a", 1)],
            }],
            policies: vec![],
        })
        .unwrap();
        let error = serde_json::from_value::<NodeView>(twice).unwrap_err();
        assert!(error.to_string().contains("listed twice"));
    }
}
