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

/// One action.
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
    /// `set_field:VALUE[/MASK]->FIELD` (`OFPAT_SET_FIELD`, masked OXM when masked). `mask` is the
    /// field's full mask when unmasked.
    SetField {
        field: Field,
        value: u128,
        mask: u128,
    },
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
    Ct(Ct),
    /// `ct_clear`.
    CtClear,
    /// `conjunction(ID,CLAUSE/N_CLAUSES)`, `clause` counted from 1.
    Conjunction { id: u32, clause: u8, n_clauses: u8 },
    /// `learn(...)` (`NXAST_LEARN`).
    Learn(Learn),
    /// `controller(...)` (`NXAST_CONTROLLER2`).
    Controller(Controller),
    /// `note:BYTES`. On decode the note keeps the zero padding the wire form adds, as OVS does.
    Note(Vec<u8>),
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
        Action::SetField {
            field,
            value,
            mask: field.full_mask(),
        }
    }

    /// `set_field:VALUE/MASK->FIELD`, with `value` normalised under `mask`.
    pub fn set_field_masked(field: Field, value: u128, mask: u128) -> Action {
        let mask = mask & field.full_mask();
        Action::SetField {
            field,
            value: value & mask,
            mask,
        }
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
