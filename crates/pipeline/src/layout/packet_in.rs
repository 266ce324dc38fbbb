//! What the pipeline hands to the agent through `controller` actions, and how the agent tells
//! one case from another: the action's userdata names a [`PacketInOperation`] (the connection
//! receives packet-ins as `NXT_PACKET_IN2`, which carries it), and [`PACKET_IN_MAX_LEN`] bounds
//! the copy of the packet.

use openflow::action::{Action, Controller};

/// Bytes of the packet copied to the agent: enough for Ethernet, an IPv4 header with options
/// and the transport header an answer needs (TCP's with options, or the 8 bytes an ICMP error
/// quotes); lengths come from the IPv4 header, not from the copy.
pub const PACKET_IN_MAX_LEN: u16 = 128;

/// Why the pipeline sent a packet to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketInOperation {
    /// A new connection to a Service port without usable endpoints: the agent answers with a
    /// TCP reset or an ICMP port unreachable.
    ServiceReject,
}

impl PacketInOperation {
    /// The controller action's userdata for the operation.
    pub const fn userdata(self) -> [u8; 1] {
        match self {
            PacketInOperation::ServiceReject => [1],
        }
    }

    /// The operation a packet-in's userdata names, if any.
    pub fn from_userdata(userdata: &[u8]) -> Option<PacketInOperation> {
        match userdata {
            [1] => Some(PacketInOperation::ServiceReject),
            _ => None,
        }
    }

    /// The action that sends a packet to the agent for the operation.
    pub fn controller_action(self) -> Action {
        Action::Controller(Controller {
            max_len: PACKET_IN_MAX_LEN,
            userdata: self.userdata().to_vec(),
            ..Controller::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_is_read_back_from_its_userdata_and_nothing_else_is() {
        let op = PacketInOperation::ServiceReject;
        assert_eq!(PacketInOperation::from_userdata(&op.userdata()), Some(op));
        assert_eq!(PacketInOperation::from_userdata(&[]), None);
        assert_eq!(PacketInOperation::from_userdata(&[1, 0]), None);
        assert_eq!(PacketInOperation::from_userdata(&[2]), None);
    }
}
