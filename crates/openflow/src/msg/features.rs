//! `OFPT_FEATURES_REQUEST` and `OFPT_FEATURES_REPLY`: the datapath id and switch limits.

use bytes::Buf;

use crate::DecodeError;
use crate::header::msg_type;
use crate::message::Message;

/// `ofp_capabilities` bits.
pub mod capability {
    pub const FLOW_STATS: u32 = 1 << 0;
    pub const TABLE_STATS: u32 = 1 << 1;
    pub const PORT_STATS: u32 = 1 << 2;
    pub const GROUP_STATS: u32 = 1 << 3;
    pub const IP_REASM: u32 = 1 << 5;
    pub const QUEUE_STATS: u32 = 1 << 6;
    pub const PORT_BLOCKED: u32 = 1 << 8;
    pub const BUNDLES: u32 = 1 << 9;
    pub const FLOW_MONITORING: u32 = 1 << 10;
}

/// `OFPT_FEATURES_REQUEST` (empty body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeaturesRequest;

/// `OFPT_FEATURES_REPLY` (`ofp_switch_features`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeaturesReply {
    /// The datapath id (what `ovs-vsctl get bridge BR datapath_id` shows, in hex).
    pub datapath_id: u64,
    /// Packets the switch can buffer for packet-in.
    pub n_buffers: u32,
    /// Number of flow tables.
    pub n_tables: u8,
    /// Auxiliary connection id (0 for the main connection).
    pub auxiliary_id: u8,
    /// [`capability`] bits.
    pub capabilities: u32,
}

/// Body length of `ofp_switch_features` after the header.
const FEATURES_REPLY_LEN: usize = 24;

impl Message for FeaturesRequest {
    const TYPE: u8 = msg_type::FEATURES_REQUEST;

    fn emit_body(&self, _out: &mut Vec<u8>) {}

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        if body.is_empty() {
            Ok(FeaturesRequest)
        } else {
            Err(DecodeError::BadLength {
                what: "features request",
                len: body.len() + 8,
            })
        }
    }
}

impl Message for FeaturesReply {
    const TYPE: u8 = msg_type::FEATURES_REPLY;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.datapath_id.to_be_bytes());
        out.extend_from_slice(&self.n_buffers.to_be_bytes());
        out.push(self.n_tables);
        out.push(self.auxiliary_id);
        out.extend_from_slice(&[0; 2]);
        out.extend_from_slice(&self.capabilities.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        DecodeError::need("features reply", body, FEATURES_REPLY_LEN)?;
        let mut b = body;
        let datapath_id = b.get_u64();
        let n_buffers = b.get_u32();
        let n_tables = b.get_u8();
        let auxiliary_id = b.get_u8();
        b.advance(2);
        let capabilities = b.get_u32();
        Ok(FeaturesReply {
            datapath_id,
            n_buffers,
            n_tables,
            auxiliary_id,
            capabilities,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn request_bytes() {
        assert_eq!(
            FeaturesRequest.to_bytes(3).unwrap(),
            [6, 5, 0, 8, 0, 0, 0, 3]
        );
    }

    #[test]
    fn reply_fields() {
        let reply = FeaturesReply {
            datapath_id: 0x0102030405060708,
            n_buffers: 0x0a0b0c0d,
            n_tables: 254,
            auxiliary_id: 1,
            capabilities: capability::FLOW_STATS | capability::BUNDLES,
        };
        let bytes = reply.to_bytes(4).unwrap();
        assert_eq!(&bytes[..8], [6, 6, 0, 32, 0, 0, 0, 4]);
        assert_eq!(&bytes[8..16], [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&bytes[16..20], [0x0a, 0x0b, 0x0c, 0x0d]);
        assert_eq!(bytes[20], 254);
        assert_eq!(bytes[21], 1);
        assert_eq!(&bytes[22..24], [0, 0]);
        assert_eq!(&bytes[24..28], [0, 0, 2, 1]);
        assert_eq!(&bytes[28..32], [0, 0, 0, 0]);
        assert_eq!(FeaturesReply::parse(&bytes), Ok((reply, 4)));
    }

    #[test]
    fn reply_truncated() {
        assert!(matches!(
            FeaturesReply::parse_body(&[0; 23]),
            Err(DecodeError::Truncated {
                need: 24,
                have: 23,
                ..
            })
        ));
    }

    proptest! {
        #[test]
        fn round_trip(datapath_id: u64, n_buffers: u32, n_tables: u8, auxiliary_id: u8, capabilities: u32, xid: u32) {
            let reply = FeaturesReply { datapath_id, n_buffers, n_tables, auxiliary_id, capabilities };
            prop_assert_eq!(FeaturesReply::parse(&reply.to_bytes(xid).unwrap()), Ok((reply, xid)));
        }
    }
}
