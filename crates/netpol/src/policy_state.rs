//! [`PolicyState`]: what the engine keeps of one policy between syncs so that a member
//! entering or leaving one of its groups patches its rules instead of recomputing them: the
//! local applied-to Pod IPs (counted), and per rule of a covered direction a [`RuleSlot`] —
//! the rule's peer IPs (counted) for a rule without named ports, or a mark that the rule must
//! be recomputed for one with named ports (they resolve per Pod, so its parts are recomputed
//! whole, still only that rule). Each also keeps the edit since the last sync.
//!
//! Rules exist only while the policy applies to a local Pod; until then ([`PolicyState::active`]
//! false) only the applied-to IPs are kept, and peer changes cost nothing.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use crate::counted::Counted;
use crate::edit::SetEdit;
use crate::group::GroupId;
use crate::input::{CompiledPolicy, GroupKey, Peer, PortSpec};
use model::policy::Direction;

/// One rule of a covered direction.
#[derive(Debug)]
pub(crate) struct RuleSlot {
    pub(crate) direction: Direction,
    pub(crate) index: usize,
    /// The rule has named ports: it is recomputed whole when its groups change.
    pub(crate) resolved: bool,
    /// Peer IPs from its Pod peers (a rule without named ports, while the policy is active).
    pub(crate) peers: Counted,
    /// Peer IPs that entered or left `peers` since the last sync.
    pub(crate) edit: SetEdit<Ipv4Addr>,
    /// A rule with named ports to recompute at the next sync.
    pub(crate) stale: bool,
}

#[derive(Debug)]
pub(crate) struct PolicyState {
    pub(crate) applied_to: GroupId,
    /// IPs of the applied-to members on this Node.
    pub(crate) applied: Counted,
    /// IPs that entered or left `applied` since the last sync.
    pub(crate) applied_edit: SetEdit<Ipv4Addr>,
    /// Whether the rules were computed with local applied-to Pods (the policy has output).
    pub(crate) active: bool,
    pub(crate) slots: Vec<RuleSlot>,
    /// The groups the slots read as peers (or as every Pod, for egress to any peer on a named
    /// port), with the slot: a group twice in one rule is there twice.
    pub(crate) readers: Vec<(GroupId, usize)>,
    /// Whether some change since the last sync awaits patching.
    pub(crate) touched: bool,
}

impl PolicyState {
    /// The state of `policy` before anything is computed (inactive), given the id of its
    /// applied-to group and of each group it uses.
    pub(crate) fn new(
        policy: &CompiledPolicy,
        applied_to: GroupId,
        ids: &BTreeMap<GroupKey, GroupId>,
    ) -> PolicyState {
        let mut slots = Vec::new();
        let mut readers = Vec::new();
        for direction in [Direction::Ingress, Direction::Egress] {
            for (index, rule) in policy.rules(direction).into_iter().flatten().enumerate() {
                let resolved = rule
                    .ports
                    .iter()
                    .flatten()
                    .any(|p| matches!(p, PortSpec::Named { .. }));
                let slot = slots.len();
                match &rule.peers {
                    Some(peers) => {
                        for peer in peers {
                            if let Peer::Pods(g) = peer
                                && let Some(id) = ids.get(g)
                            {
                                readers.push((*id, slot));
                            }
                        }
                    }
                    None if resolved && direction == Direction::Egress => {
                        readers.extend(ids.get(&GroupKey::all_pods()).map(|id| (*id, slot)));
                    }
                    None => {}
                }
                slots.push(RuleSlot {
                    direction,
                    index,
                    resolved,
                    peers: Counted::default(),
                    edit: SetEdit::default(),
                    stale: false,
                });
            }
        }
        PolicyState {
            applied_to,
            applied: Counted::default(),
            applied_edit: SetEdit::default(),
            active: false,
            slots,
            readers,
            touched: false,
        }
    }
}
