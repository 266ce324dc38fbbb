//! [`FlowKey`]: what identifies a flow in a switch — table, priority and match. An `add` with
//! an existing key replaces that flow; `modify_strict`/`delete_strict` address exactly one key.

use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

/// Table, priority and match of a flow, in a form that can be sorted and hashed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    pub table_id: u8,
    pub priority: u16,
    /// The match entries as (field, value, mask), in the match's order.
    pub fields: Vec<(Field, u128, u128)>,
}

impl FlowKey {
    /// The key of `fm`.
    pub fn of(fm: &FlowMod) -> FlowKey {
        FlowKey::new(fm.table_id, fm.priority, &fm.flow_match)
    }

    /// The key of a flow in table `table_id` at `priority` with `flow_match` (e.g. a flow of a
    /// dump).
    pub fn new(table_id: u8, priority: u16, flow_match: &Match) -> FlowKey {
        FlowKey {
            table_id,
            priority,
            fields: flow_match
                .entries()
                .iter()
                .map(|e| (e.field, e.value, e.mask))
                .collect(),
        }
    }
}
