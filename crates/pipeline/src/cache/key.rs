//! [`FlowKey`]: what identifies a flow in a switch — table, priority and match. An `add` with
//! an existing key replaces that flow; `modify_strict`/`delete_strict` address exactly one key.

use std::fmt;

use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
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

    /// `delete_strict` of this key, whatever the flow's cookie.
    pub fn delete_strict(&self) -> FlowMod {
        let mut del = FlowMod::new(FlowModCommand::DeleteStrict);
        del.table_id = self.table_id;
        del.priority = self.priority;
        for &(field, value, mask) in &self.fields {
            del.flow_match.set_masked(field, value, mask);
        }
        del
    }
}

impl fmt::Display for FlowKey {
    /// `table=1,priority=5,ip,nw_dst=10.0.0.1`, as `ovs-ofctl del-flows --strict` takes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.delete_strict())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_strict_addresses_the_key() {
        let fm: FlowMod =
            "table=3,cookie=0x5,priority=7,ip,reg0=0x1/0xf,nw_dst=10.0.0.0/24 actions=drop"
                .parse()
                .unwrap();
        let key = FlowKey::of(&fm);
        let del = key.delete_strict();
        assert_eq!(del.command, FlowModCommand::DeleteStrict);
        assert_eq!(FlowKey::of(&del), key);
        assert_eq!(
            key.to_string(),
            "table=3,priority=7,ip,reg0=0x1/0xf,nw_dst=10.0.0.0/24"
        );
    }
}
