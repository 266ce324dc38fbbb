//! `OFPT_PACKET_OUT` (OpenFlow 1.5): send a packet through a list of actions, with its pipeline
//! fields (`in_port`, metadata, registers) carried in a match.

use crate::DecodeError;
use crate::action::{Action, emit_actions, parse_actions};
use crate::header::msg_type;
use crate::message::Message;
use crate::oxm::Match;

/// `OFPT_PACKET_OUT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketOut {
    /// `NO_BUFFER` when the packet is in `data`.
    pub buffer_id: u32,
    /// Pipeline fields; OpenFlow 1.5 requires `in_port` (use `CONTROLLER` for none).
    pub flow_match: Match,
    pub actions: Vec<Action>,
    pub data: Vec<u8>,
}

impl PacketOut {
    /// Decodes a whole `OFPT_PACKET_OUT` message (header included): the fuzzing entry point.
    pub fn decode(buf: &[u8]) -> Result<(PacketOut, u32), DecodeError> {
        <PacketOut as Message>::parse(buf)
    }
}

impl Message for PacketOut {
    const TYPE: u8 = msg_type::PACKET_OUT;

    fn emit_body(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&self.buffer_id.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
        self.flow_match.emit(out);
        let actions_start = out.len();
        emit_actions(&self.actions, out);
        let actions_len = (out.len() - actions_start) as u16;
        out[start + 4..start + 6].copy_from_slice(&actions_len.to_be_bytes());
        out.extend_from_slice(&self.data);
    }

    fn parse_body(body: &[u8]) -> Result<PacketOut, DecodeError> {
        DecodeError::need("ofp_packet_out", body, 8)?;
        let actions_len = usize::from(u16::from_be_bytes([body[4], body[5]]));
        let (flow_match, used) = Match::parse(&body[8..])?;
        let rest = &body[8 + used..];
        DecodeError::need("packet_out actions", rest, actions_len)?;
        Ok(PacketOut {
            buffer_id: u32::from_be_bytes([body[0], body[1], body[2], body[3]]),
            flow_match,
            actions: parse_actions(&rest[..actions_len])?,
            data: rest[actions_len..].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::flow_mod::NO_BUFFER;
    use crate::oxm::Field;

    #[test]
    fn packet_out_bytes() {
        let p = PacketOut {
            buffer_id: NO_BUFFER,
            flow_match: Match::new().with(Field::InPort, 1),
            actions: vec![Action::output(2)],
            data: vec![7, 8],
        };
        let b = p.to_bytes(1).unwrap();
        let expected: Vec<u8> = [
            &[6, 13, 0, 50, 0, 0, 0, 1][..],
            &[0xff, 0xff, 0xff, 0xff, 0, 16, 0, 0],
            &[0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0],
            &[0, 0, 0, 16, 0, 0, 0, 2, 0xff, 0xff, 0, 0, 0, 0, 0, 0],
            &[7, 8],
        ]
        .concat();
        assert_eq!(b, expected);
        assert_eq!(PacketOut::decode(&b), Ok((p, 1)));
        let mut bad = b.clone();
        bad[13] = 200; // actions_len beyond the message
        assert!(PacketOut::decode(&bad).is_err());
    }
}
