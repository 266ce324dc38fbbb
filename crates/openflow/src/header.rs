//! The 8-byte OpenFlow header (`ofp_header`): a thin view over bytes plus the owned form, and the
//! message type numbers.

use crate::DecodeError;

/// OpenFlow 1.3 wire version.
pub const OFP_VERSION_1_3: u8 = 0x04;
/// OpenFlow 1.5 wire version, the one this crate speaks.
pub const OFP_VERSION_1_5: u8 = 0x06;

/// Length of `ofp_header`.
pub const HEADER_LEN: usize = 8;

/// `ofp_type` values (OpenFlow 1.5 numbering).
pub mod msg_type {
    pub const HELLO: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const ECHO_REQUEST: u8 = 2;
    pub const ECHO_REPLY: u8 = 3;
    pub const EXPERIMENTER: u8 = 4;
    pub const FEATURES_REQUEST: u8 = 5;
    pub const FEATURES_REPLY: u8 = 6;
    pub const GET_CONFIG_REQUEST: u8 = 7;
    pub const GET_CONFIG_REPLY: u8 = 8;
    pub const SET_CONFIG: u8 = 9;
    pub const PACKET_IN: u8 = 10;
    pub const FLOW_REMOVED: u8 = 11;
    pub const PORT_STATUS: u8 = 12;
    pub const PACKET_OUT: u8 = 13;
    pub const FLOW_MOD: u8 = 14;
    pub const GROUP_MOD: u8 = 15;
    pub const PORT_MOD: u8 = 16;
    pub const TABLE_MOD: u8 = 17;
    pub const MULTIPART_REQUEST: u8 = 18;
    pub const MULTIPART_REPLY: u8 = 19;
    pub const BARRIER_REQUEST: u8 = 20;
    pub const BARRIER_REPLY: u8 = 21;
    pub const ROLE_REQUEST: u8 = 24;
    pub const ROLE_REPLY: u8 = 25;
    pub const METER_MOD: u8 = 29;
    pub const BUNDLE_CONTROL: u8 = 33;
    pub const BUNDLE_ADD_MESSAGE: u8 = 34;
}

/// Experimenter ids (`ofp_experimenter_header.experimenter`) of the extensions this crate uses.
pub mod experimenter {
    /// Nicira: Open vSwitch's actions, messages and errors.
    pub const NICIRA: u32 = 0x0000_2320;
    /// The ONF: OpenFlow 1.3 extension errors (bundles, properties).
    pub const ONF: u32 = 0x4f4e_4600;
    /// Netronome: the group `selection_method` property.
    pub const NETRONOME: u32 = 0x0000_154d;
}

/// Reads a big-endian `u16` at offset `i` of a slice whose length the caller has checked.
pub(crate) fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

/// Reads a big-endian `u32` at offset `i` of a slice whose length the caller has checked.
pub(crate) fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// The owned form of an OpenFlow header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub msg_type: u8,
    /// Total message length, header included.
    pub length: u16,
    pub xid: u32,
}

impl Header {
    /// Decodes the header at the start of `buf` and checks that its length is at least 8.
    pub fn parse(buf: &[u8]) -> Result<Header, DecodeError> {
        DecodeError::need("ofp_header", buf, HEADER_LEN)?;
        let h = Header {
            version: buf[0],
            msg_type: buf[1],
            length: u16::from_be_bytes([buf[2], buf[3]]),
            xid: u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]),
        };
        if (h.length as usize) < HEADER_LEN {
            return Err(DecodeError::BadLength {
                what: "ofp_header",
                len: h.length as usize,
            });
        }
        Ok(h)
    }

    /// Appends the header to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.push(self.version);
        out.push(self.msg_type);
        out.extend_from_slice(&self.length.to_be_bytes());
        out.extend_from_slice(&self.xid.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let h = Header {
            version: OFP_VERSION_1_5,
            msg_type: msg_type::ECHO_REQUEST,
            length: 8,
            xid: 0x01020304,
        };
        let mut b = Vec::new();
        h.emit(&mut b);
        assert_eq!(b, [6, 2, 0, 8, 1, 2, 3, 4]);
        assert_eq!(Header::parse(&b), Ok(h));
    }

    #[test]
    fn header_rejects_short_and_bad_length() {
        assert!(matches!(
            Header::parse(&[6, 2, 0]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            Header::parse(&[6, 2, 0, 7, 0, 0, 0, 0]),
            Err(DecodeError::BadLength { .. })
        ));
    }
}
