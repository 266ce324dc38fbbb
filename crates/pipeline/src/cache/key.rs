//! [`FlowKey`]: what identifies a flow in a switch — table, priority and match. An `add` with
//! an existing key replaces that flow; `modify_strict`/`delete_strict` address exactly one key.

use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::Field;

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
        FlowKey {
            table_id: fm.table_id,
            priority: fm.priority,
            fields: fm
                .flow_match
                .entries()
                .iter()
                .map(|e| (e.field, e.value, e.mask))
                .collect(),
        }
    }
}
