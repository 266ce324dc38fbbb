//! What the pipeline hands to the agent through `controller` actions, and how the agent tells
//! one case from another: the action's userdata names a [`PacketInOperation`] (the connection
//! receives packet-ins as `NXT_PACKET_IN2`, which carries it), and [`PACKET_IN_MAX_LEN`] bounds
//! the copy of the packet. Where the switch has packet-rate meters, each operation's packet-ins
//! pass its meter first, so a flood costs the switch and the agent a bounded amount of work
//! ([`PacketInOperation::meter`]); the agent bounds its answers at the same rate.

use openflow::action::{Action, Controller};
use openflow::msg::meter_mod::{BandAction, MeterBand, MeterDesc, meter_flags};

/// Bytes of the packet copied to the agent: enough for Ethernet, an IPv4 header with options
/// and the transport header an answer needs (TCP's with options, or the 8 bytes an ICMP error
/// quotes); lengths come from the IPv4 header, not from the copy.
pub const PACKET_IN_MAX_LEN: u16 = 128;

/// Packet-ins of one operation per second, sustained, that its meter lets through.
pub const PACKET_INS_PER_SECOND: u32 = 200;
/// Packet-ins of one operation its meter lets through at once after a quiet spell.
pub const PACKET_IN_BURST: u32 = 400;

/// Why the pipeline sent a packet to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketInOperation {
    /// A new connection to a Service port without usable endpoints: the agent answers with a
    /// TCP reset or an ICMP port unreachable.
    ServiceReject,
}

impl PacketInOperation {
    /// Every operation.
    pub const ALL: [PacketInOperation; 1] = [PacketInOperation::ServiceReject];

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

    /// The id of the operation's meter.
    pub const fn meter_id(self) -> u32 {
        match self {
            PacketInOperation::ServiceReject => 1,
        }
    }

    /// The meter the operation's packet-ins pass: [`PACKET_INS_PER_SECOND`] in bursts of
    /// [`PACKET_IN_BURST`], the rest dropped in the switch.
    pub fn meter(self) -> MeterDesc {
        MeterDesc {
            meter_id: self.meter_id(),
            flags: meter_flags::PKTPS | meter_flags::BURST | meter_flags::STATS,
            bands: vec![MeterBand {
                action: BandAction::Drop,
                rate: PACKET_INS_PER_SECOND,
                burst_size: PACKET_IN_BURST,
            }],
        }
    }

    /// Every operation's meter, for a switch with packet-rate meters.
    pub fn meters() -> Vec<MeterDesc> {
        PacketInOperation::ALL.iter().map(|op| op.meter()).collect()
    }

    /// The actions that send a packet to the agent for the operation, through its meter when
    /// `metered`.
    pub fn actions(self, metered: bool) -> Vec<Action> {
        let controller = Action::controller(Controller {
            max_len: PACKET_IN_MAX_LEN,
            userdata: self.userdata().to_vec(),
            ..Controller::default()
        });
        if metered {
            vec![Action::Meter(self.meter_id()), controller]
        } else {
            vec![controller]
        }
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

    #[test]
    fn metered_packet_ins_pass_the_operation_meter_first() {
        let op = PacketInOperation::ServiceReject;
        assert_eq!(
            op.meter().to_string(),
            "meter=1 pktps burst stats bands=type=drop rate=200 burst_size=400"
        );
        let text = |actions: Vec<Action>| -> Vec<String> {
            actions.iter().map(ToString::to_string).collect()
        };
        assert_eq!(
            text(op.actions(true)),
            ["meter:1", "controller(max_len=128,userdata=01)"]
        );
        assert_eq!(
            text(op.actions(false)),
            ["controller(max_len=128,userdata=01)"]
        );
        let ids: std::collections::BTreeSet<u32> = PacketInOperation::ALL
            .iter()
            .map(|o| o.meter_id())
            .collect();
        assert_eq!(ids.len(), PacketInOperation::ALL.len(), "one meter each");
    }
}
