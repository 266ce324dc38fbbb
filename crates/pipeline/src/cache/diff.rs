//! [`FlowDiff`]: the flow mods that turn one desired flow set into another.

use openflow::msg::flow_mod::FlowMod;

/// What changes in the switch for an update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowDiff {
    /// `add` of flows whose key is new.
    pub adds: Vec<FlowMod>,
    /// Flows whose key exists with something else: `modify_strict` when only the instructions
    /// differ (keeps the flow's counters), otherwise an `add` that replaces the flow.
    pub modifies: Vec<FlowMod>,
    /// `delete_strict` of keys no longer desired.
    pub deletes: Vec<FlowMod>,
}

impl FlowDiff {
    /// Whether the update changes nothing.
    pub fn is_empty(&self) -> bool {
        self.adds.is_empty() && self.modifies.is_empty() && self.deletes.is_empty()
    }

    /// Number of flow mods.
    pub fn len(&self) -> usize {
        self.adds.len() + self.modifies.len() + self.deletes.len()
    }

    /// All flow mods in the order to send them: deletes, modifies, adds. No two of them address
    /// the same key, so the order only matters for readability of traces.
    pub fn messages(&self) -> impl Iterator<Item = &FlowMod> {
        self.deletes.iter().chain(&self.modifies).chain(&self.adds)
    }
}
