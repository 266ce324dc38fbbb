//! Register and mark layout shared by the flows.
//!
//! | field | bits | meaning |
//! |---|---|---|
//! | `reg0` | 0..3 | packet source: 1 tunnel, 2 gateway, 3 local Pod, 4 uplink |
//! | `reg1` | 0..31 | output port, chosen by `L2ForwardingCalc`, used by `Output` |
//! | `reg3` | 0..31 | a Service connection's chosen endpoint IP (Antrea's `EndpointIPField`) |
//! | `reg4` | 0..15 | the chosen endpoint's port (`EndpointPortField`) |
//! | `reg4` | 16..18 | Service endpoint state: 1 to select, 2 selected, 3 to learn (`ServiceEPStateField`) |
//! | `reg4` | 19 | a Service connection from outside whose source is NATed (`externalTrafficPolicy: Cluster`) |
//! | `reg4` | 20 | a Service connection through the gateway to an endpoint on the host network (back to the host) |

use openflow::action::Action;
use openflow::oxm::{Field, Match, Subfield};

/// A value in some bits of a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegMark {
    pub reg: u8,
    pub value: u32,
    pub mask: u32,
}

impl RegMark {
    /// `set_field:VALUE/MASK->regN`.
    pub fn set(self) -> Action {
        Action::set_field_masked(
            Field::Reg(self.reg),
            u128::from(self.value),
            u128::from(self.mask),
        )
    }

    /// Adds `regN=VALUE/MASK` to `m`.
    pub fn match_on(self, m: Match) -> Match {
        m.with_masked(
            Field::Reg(self.reg),
            u128::from(self.value),
            u128::from(self.mask),
        )
    }
}

const SOURCE_MASK: u32 = 0xf;

/// Arrived through the tunnel.
pub const FROM_TUNNEL: RegMark = RegMark {
    reg: 0,
    value: 1,
    mask: SOURCE_MASK,
};
/// Arrived from the host through `antrea-gw0`.
pub const FROM_GATEWAY: RegMark = RegMark {
    reg: 0,
    value: 2,
    mask: SOURCE_MASK,
};
/// Sent by a local Pod.
pub const FROM_POD: RegMark = RegMark {
    reg: 0,
    value: 3,
    mask: SOURCE_MASK,
};
/// Pod traffic from a direct peer, received on the uplink.
pub const FROM_UPLINK: RegMark = RegMark {
    reg: 0,
    value: 4,
    mask: SOURCE_MASK,
};

/// The register holding the output port.
pub const TARGET_OFPORT_REG: u8 = 1;

/// `set_field:PORT->reg1`.
pub fn set_target_ofport(port: u32) -> Action {
    Action::set_field(Field::Reg(TARGET_OFPORT_REG), u128::from(port))
}

/// `output:NXM_NX_REG1[]`.
pub fn output_to_target() -> Action {
    Action::OutputReg {
        src: Subfield::whole(Field::Reg(TARGET_OFPORT_REG)),
        max_len: 0xffff,
    }
}

/// The register holding a Service connection's chosen endpoint IP.
pub const ENDPOINT_IP_REG: u8 = 3;
/// The register holding the chosen endpoint's port (bits 0..15) and the endpoint state (bits
/// 16..18).
pub const ENDPOINT_REG: u8 = 4;
/// The endpoint port's bits in [`ENDPOINT_REG`].
pub const ENDPOINT_PORT_MASK: u32 = 0xffff;

const EP_STATE_MASK: u32 = 0x7 << 16;

/// The packet still needs an endpoint (no affinity flow chose one).
pub const EP_TO_SELECT: RegMark = RegMark {
    reg: ENDPOINT_REG,
    value: 1 << 16,
    mask: EP_STATE_MASK,
};
/// An endpoint is chosen: `reg3` and `reg4[0..15]` hold it.
pub const EP_SELECTED: RegMark = RegMark {
    reg: ENDPOINT_REG,
    value: 2 << 16,
    mask: EP_STATE_MASK,
};
/// The group chose an endpoint that ClientIP affinity must remember.
pub const EP_TO_LEARN: RegMark = RegMark {
    reg: ENDPOINT_REG,
    value: 3 << 16,
    mask: EP_STATE_MASK,
};

/// A Service connection from outside (a NodePort, an external or load-balancer IP through the
/// gateway) under `externalTrafficPolicy: Cluster`: its source is NATed to the gateway IP, as
/// kube-proxy masquerades it, so the endpoint's reply comes back through this Node.
pub const NEEDS_SNAT: RegMark = RegMark {
    reg: ENDPOINT_REG,
    value: 1 << 19,
    mask: 1 << 19,
};

/// A Service connection that came through the gateway (the Node's own, proxyAll) to an
/// endpoint on the host network (a Node's address, e.g. the `kubernetes` Service's): it goes
/// back to the host through the gateway, its source NATed to the virtual Service IP.
pub const TO_HOST_NETWORK: RegMark = RegMark {
    reg: ENDPOINT_REG,
    value: 1 << 20,
    mask: 1 << 20,
};
