//! Actions and instructions: the [`Action`] type (OpenFlow 1.5 actions plus the Nicira
//! extensions Antrea's pipeline uses), the [`Instructions`] of a flow, their wire forms and their
//! `ovs-ofctl` text syntax.

pub mod controller;
pub mod ct;
pub mod instructions;
pub mod learn;
pub mod text;
pub mod wire;

pub use controller::Controller;
pub use ct::{Ct, CtZone, Nat, NatKind};
pub use instructions::Instructions;
pub use learn::{Learn, LearnSpec};
pub use wire::{emit_actions, parse_actions};

use crate::oxm::{Field, PortNo, Subfield};

/// One action. Actions with large or variable contents are boxed, so that an action takes 24
/// bytes: a switch's desired flows hold hundreds of thousands of them (a clause flow shared by
/// several NetworkPolicy rules carries one `conjunction` each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `output:PORT` (`OFPAT_OUTPUT`); `max_len` matters only for the controller port.
    Output { port: PortNo, max_len: u16 },
    /// `output:NXM_NX_REG1[]` (`NXAST_OUTPUT_REG2`): output to the port held in a field.
    OutputReg { src: Subfield, max_len: u16 },
    /// `group:ID`.
    Group(u32),
    /// `meter:ID` (`OFPAT_METER`, an action since OpenFlow 1.5). Open vSwitch's text parser
    /// wants it first in the apply actions; the switch takes it anywhere.
    Meter(u32),
    /// `set_field:VALUE[/MASK]->FIELD` (`OFPAT_SET_FIELD`, masked OXM when masked).
    SetField(Box<SetField>),
    /// `move:SRC->DST` (`OFPAT_COPY_FIELD`).
    Move { src: Subfield, dst: Subfield },
    /// `resubmit(PORT,TABLE[,ct])`: `port` is `IN_PORT` for "the packet's input port" and must
    /// have a 16-bit form (below `0xff00`, or reserved; others are sent as `IN_PORT`); `table`
    /// is never `Some(255)` (the wire's "no table").
    Resubmit {
        port: PortNo,
        table: Option<u8>,
        ct: bool,
    },
    /// `dec_ttl` (`OFPAT_DEC_NW_TTL`).
    DecTtl,
    /// `push_vlan:ETHERTYPE`.
    PushVlan(u16),
    /// `pop_vlan`.
    PopVlan,
    /// `ct(...)` (`NXAST_CT`).
    Ct(Box<Ct>),
    /// `ct_clear`.
    CtClear,
    /// `conjunction(ID,CLAUSE/N_CLAUSES)`, `clause` counted from 1.
    Conjunction { id: u32, clause: u8, n_clauses: u8 },
    /// `learn(...)` (`NXAST_LEARN`).
    Learn(Box<Learn>),
    /// `controller(...)` (`NXAST_CONTROLLER2`).
    Controller(Box<Controller>),
    /// `note:BYTES`. On decode the note keeps the zero padding the wire form adds, as OVS does.
    Note(Box<[u8]>),
}

/// What `set_field` writes: `value` under `mask` into `field`. `mask` is the field's full mask
/// when unmasked; `value` has no bits outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetField {
    pub field: Field,
    pub value: u128,
    pub mask: u128,
}

impl Action {
    /// `output:PORT`.
    pub fn output(port: u32) -> Action {
        Action::Output {
            port: PortNo(port),
            max_len: 0xffff,
        }
    }

    /// `set_field:VALUE->FIELD` (whole field).
    pub fn set_field(field: Field, value: u128) -> Action {
        Action::SetField(Box::new(SetField {
            field,
            value,
            mask: field.full_mask(),
        }))
    }

    /// `set_field:VALUE/MASK->FIELD`, with `value` normalised under `mask`.
    pub fn set_field_masked(field: Field, value: u128, mask: u128) -> Action {
        let mask = mask & field.full_mask();
        Action::SetField(Box::new(SetField {
            field,
            value: value & mask,
            mask,
        }))
    }

    /// `ct(...)`.
    pub fn ct(ct: Ct) -> Action {
        Action::Ct(Box::new(ct))
    }

    /// `learn(...)`.
    pub fn learn(learn: Learn) -> Action {
        Action::Learn(Box::new(learn))
    }

    /// `controller(...)`.
    pub fn controller(controller: Controller) -> Action {
        Action::Controller(Box::new(controller))
    }

    /// `note:BYTES`.
    pub fn note(bytes: impl Into<Box<[u8]>>) -> Action {
        Action::Note(bytes.into())
    }

    /// `resubmit(,TABLE)`.
    pub fn resubmit_table(table: u8) -> Action {
        Action::Resubmit {
            port: PortNo::IN_PORT,
            table: Some(table),
            ct: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_takes_24_bytes_and_boxed_ones_keep_their_contents() {
        assert!(std::mem::size_of::<Action>() <= 24);
        let set = Action::set_field_masked(Field::Reg(0), 0x1234, 0xff);
        assert_eq!(
            set,
            Action::SetField(Box::new(SetField {
                field: Field::Reg(0),
                value: 0x34,
                mask: 0xff,
            }))
        );
        assert_eq!(set.to_string(), "set_field:0x34/0xff->reg0");
        let note = Action::note(vec![1, 2, 3, 0, 0, 0]);
        assert_eq!(note.to_string(), "note:01.02.03.00.00.00");
    }
}
