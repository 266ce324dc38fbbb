//! [`NodeView`]: a Node's view built from its [`NodeUpdate`]s, which refuses an update that
//! breaks their order (a policy before a group it reads, a group removed while a policy reads
//! it, a member change of a group the Node does not have).

use std::collections::BTreeMap;
use std::fmt;

use model::policy::{PodKey, PolicyKey};
use netpol::input::{CompiledPolicy, GroupKey};

use super::update::{Member, NodeUpdate};

/// The policies applied to a Node's Pods and the groups they read, with their members.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
