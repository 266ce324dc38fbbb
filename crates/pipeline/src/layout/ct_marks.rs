//! Conntrack mark bits (`ct_mark`) the flows share: a connection's kind, stored in its
//! conntrack entry so that every later packet of it, replies included, carries it.
//!
//! | bits | meaning |
//! |---|---|
//! | 5 | Service connection from outside, source NATed to the gateway IP (Antrea's `ConnSNATCTMark`) |
//! | 6 | hairpin: a Pod's connection to itself through a Service (Antrea's `HairpinCTMark`) |

use openflow::action::Action;
use openflow::oxm::{Field, Match};

/// A value in some bits of `ct_mark`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtMark {
    pub value: u32,
    pub mask: u32,
}

impl CtMark {
    /// `set_field:VALUE/MASK->ct_mark`, for a `ct(commit, exec(…))`.
    pub fn set(self) -> Action {
        Action::set_field_masked(Field::CtMark, u128::from(self.value), u128::from(self.mask))
    }

    /// Adds `ct_mark=VALUE/MASK` to `m`.
    pub fn match_on(self, m: Match) -> Match {
        m.with_masked(Field::CtMark, u128::from(self.value), u128::from(self.mask))
    }
}

/// A Pod's connection to itself through one of its Services: its source is NATed to the
/// gateway IP and both directions leave through the port they came in on.
pub const HAIRPIN: CtMark = CtMark {
    value: 0x40,
    mask: 0x40,
};

/// A Service connection from outside whose source is NATed to the gateway IP
/// (`regs::NEEDS_SNAT`); its replies return to the client through the gateway.
pub const SERVICE_SNAT: CtMark = CtMark {
    value: 0x20,
    mask: 0x20,
};
