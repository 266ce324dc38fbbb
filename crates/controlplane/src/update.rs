//! [`NodeUpdate`]: what a Node is told so that its view of the policies applied to its Pods,
//! and of the groups they read, stays the cluster's; [`Member`]: a group member as a Node
//! needs it.
//!
//! The order is part of the contract: a policy comes after every group it reads, a group's
//! removal after the removal (or the new version) of every policy that read it.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use model::policy::{PodKey, PolicyKey};
use netpol::input::{CompiledPolicy, GroupKey, NamedPort, PodInfo};
use serde::{Deserialize, Serialize};

/// A member Pod of a group: what rules read of it (its address, its named ports) and its Node
/// (a policy applies to the members of its applied-to group on the Node).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub pod: PodKey,
    pub ip: Ipv4Addr,
    pub node: Option<String>,
    pub named_ports: BTreeSet<NamedPort>,
}

impl Member {
    /// The member `pod` is, if it has an address (group members always do).
    pub fn of(pod: &PodInfo) -> Option<Member> {
        Some(Member {
            pod: pod.key.clone(),
            ip: pod.ip?,
            node: pod.node.clone(),
            named_ports: pod.named_ports.clone(),
        })
    }
}

/// One change to a Node's view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NodeUpdate {
    /// A group enters the Node's span, with all its members.
    GroupAdded {
        group: GroupKey,
        members: Vec<Member>,
    },
    /// A group in the Node's span gains a member, or a member's Node or named ports change.
    MemberUpserted { group: GroupKey, member: Member },
    /// A group in the Node's span loses a member.
    MemberRemoved { group: GroupKey, pod: PodKey },
    /// A group leaves the Node's span.
    GroupRemoved { group: GroupKey },
    /// A policy enters the Node's span, or changes while in it.
    PolicyUpserted(CompiledPolicy),
    /// A policy leaves the Node's span (or the cluster).
    PolicyRemoved(PolicyKey),
}
