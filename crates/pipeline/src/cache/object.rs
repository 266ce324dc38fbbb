//! [`Object`]: what the cache holds — flows, groups and meters — with each kind's key, how two
//! versions are compared, and the groups and meters ([`Target`]s) an object uses.

use std::fmt;
use std::hash::Hash;

use openflow::action::Action;
use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::msg::group_mod::GroupDesc;
use openflow::msg::meter_mod::MeterDesc;
use openflow::oxm::Match;

use super::key::FlowKey;

/// A group or meter that a flow or group uses. The switch refuses an object whose target does
/// not exist, and deleting a target deletes the flows that use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    Group(u32),
    Meter(u32),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Group(id) => write!(f, "group {id}"),
            Target::Meter(id) => write!(f, "meter {id}"),
        }
    }
}

/// A kind of object the cache holds.
pub trait Object: Clone + fmt::Debug {
    /// What identifies the object in the switch.
    type Key: Clone + Eq + Hash + Ord + fmt::Debug;

    fn key(&self) -> Self::Key;

    /// The object as the cache stores it: in the form the switch reports it (a flow as an
    /// `add` with cookie 0 until the cache stamps one; a meter normalised).
    fn normalized(self) -> Self;

    /// Whether two versions of one key install the same thing (what the key says is not
    /// compared, nor a flow's cookie; either may be a [`Object::stored`] one).
    fn same(&self, other: &Self) -> bool;

    /// The object as the cache stores it under its key, without what the key already says (a
    /// flow's match: most of a policy flow's memory). Default: the object as it is.
    fn stored(self) -> Self {
        self
    }

    /// A stored object whole again, under `key`.
    fn unstored(&self, _key: &Self::Key) -> Self {
        self.clone()
    }

    /// The cookie on the object (flows only).
    fn cookie(&self) -> u64 {
        0
    }

    /// Sets the cookie on the object (flows only).
    fn stamp(&mut self, _cookie: u64) {}

    /// The object for error messages: `flow table=… actions=…`, `group 5`, `meter 3`.
    fn describe(&self) -> String;

    /// A key for error messages: `flow table=…,priority=…,MATCH`, `group 5`, `meter 3`.
    fn describe_key(key: &Self::Key) -> String;

    /// Appends the groups and meters the object uses.
    fn targets(&self, out: &mut Vec<Target>);
}

fn action_targets<'a>(actions: impl IntoIterator<Item = &'a Action>, out: &mut Vec<Target>) {
    for action in actions {
        match action {
            Action::Group(id) => out.push(Target::Group(*id)),
            Action::Meter(id) => out.push(Target::Meter(*id)),
            _ => {}
        }
    }
}

impl Object for FlowMod {
    type Key = FlowKey;

    fn key(&self) -> FlowKey {
        FlowKey::of(self)
    }

    fn normalized(mut self) -> FlowMod {
        self.command = FlowModCommand::Add;
        self.cookie = 0;
        self.cookie_mask = 0;
        self
    }

    fn same(&self, other: &FlowMod) -> bool {
        let FlowMod {
            command,
            cookie: _,
            cookie_mask,
            table_id: _,
            idle_timeout,
            hard_timeout,
            priority: _,
            buffer_id,
            out_port,
            out_group,
            flags,
            importance,
            flow_match: _,
            instructions,
        } = self;
        *command == other.command
            && *cookie_mask == other.cookie_mask
            && *idle_timeout == other.idle_timeout
            && *hard_timeout == other.hard_timeout
            && *buffer_id == other.buffer_id
            && *out_port == other.out_port
            && *out_group == other.out_group
            && *flags == other.flags
            && *importance == other.importance
            && *instructions == other.instructions
    }

    fn stored(mut self) -> FlowMod {
        self.flow_match = Match::default();
        self
    }

    fn unstored(&self, key: &FlowKey) -> FlowMod {
        FlowMod {
            flow_match: key.flow_match(),
            ..self.clone()
        }
    }

    fn cookie(&self) -> u64 {
        self.cookie
    }

    fn stamp(&mut self, cookie: u64) {
        self.cookie = cookie;
    }

    fn describe(&self) -> String {
        let unstamped = FlowMod {
            cookie: 0,
            ..self.clone()
        };
        format!("flow {unstamped}")
    }

    fn describe_key(key: &FlowKey) -> String {
        format!("flow {key}")
    }

    fn targets(&self, out: &mut Vec<Target>) {
        let ins = &self.instructions;
        action_targets(
            ins.apply.iter().chain(ins.write_actions.iter().flatten()),
            out,
        );
    }
}

impl Object for GroupDesc {
    type Key = u32;

    fn key(&self) -> u32 {
        self.group_id
    }

    fn normalized(self) -> GroupDesc {
        self
    }

    fn same(&self, other: &GroupDesc) -> bool {
        self == other
    }

    fn describe(&self) -> String {
        GroupDesc::describe_key(&self.group_id)
    }

    fn describe_key(id: &u32) -> String {
        format!("group {id}")
    }

    fn targets(&self, out: &mut Vec<Target>) {
        action_targets(self.buckets.iter().flat_map(|b| &b.actions), out);
    }
}

impl Object for MeterDesc {
    type Key = u32;

    fn key(&self) -> u32 {
        self.meter_id
    }

    fn normalized(self) -> MeterDesc {
        MeterDesc::normalized(&self)
    }

    fn same(&self, other: &MeterDesc) -> bool {
        self == other
    }

    fn describe(&self) -> String {
        MeterDesc::describe_key(&self.meter_id)
    }

    fn describe_key(id: &u32) -> String {
        format!("meter {id}")
    }

    fn targets(&self, _out: &mut Vec<Target>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_compare_without_their_cookie_and_name_their_targets() {
        let a: FlowMod = "table=1,priority=5,ip actions=meter:2,group:7"
            .parse::<FlowMod>()
            .unwrap()
            .normalized();
        let mut b = a.clone();
        b.stamp(0x55);
        assert!(a.same(&b));
        assert_eq!(b.cookie(), 0x55);
        b.idle_timeout = 1;
        assert!(!a.same(&b));
        let mut targets = Vec::new();
        a.targets(&mut targets);
        assert_eq!(targets, [Target::Meter(2), Target::Group(7)]);
        let g =
            GroupDesc::from_text("group_id=3,type=all,bucket=actions=group:1,output:2").unwrap();
        let mut targets = Vec::new();
        g.targets(&mut targets);
        assert_eq!(targets, [Target::Group(1)]);
        assert_eq!(g.describe(), "group 3");
        assert_eq!(Target::Meter(4).to_string(), "meter 4");
    }
}
