//! The multipart envelope (`ofp_multipart_request` / `ofp_multipart_reply` headers) shared by
//! every statistics and description message.

use crate::DecodeError;

/// `ofp_multipart_type` values used by this crate.
pub mod mp_type {
    pub const DESC: u16 = 0;
    pub const FLOW_DESC: u16 = 1;
    pub const AGGREGATE_STATS: u16 = 2;
    pub const TABLE_STATS: u16 = 3;
    pub const PORT_STATS: u16 = 4;
    pub const GROUP_STATS: u16 = 6;
    pub const GROUP_DESC: u16 = 7;
    pub const METER_DESC: u16 = 10;
    pub const METER_FEATURES: u16 = 11;
    pub const PORT_DESC: u16 = 13;
    pub const FLOW_STATS: u16 = 17;
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// `OFPMPF_REQ_MORE` / `OFPMPF_REPLY_MORE`: more parts follow.
pub const MORE: u16 = 1;

/// Length of the multipart header inside the body (type, flags, 4 bytes pad).
pub const MULTIPART_HEADER_LEN: usize = 8;

/// Appends a multipart header (type, flags, padding).
pub fn emit_header(out: &mut Vec<u8>, mp_type: u16, flags: u16) {
    out.extend_from_slice(&mp_type.to_be_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
}

/// Splits a multipart body into (type, flags, the rest).
pub fn parse_header(body: &[u8]) -> Result<(u16, u16, &[u8]), DecodeError> {
    DecodeError::need("ofp_multipart header", body, MULTIPART_HEADER_LEN)?;
    let mp_type = u16::from_be_bytes([body[0], body[1]]);
    let flags = u16::from_be_bytes([body[2], body[3]]);
    Ok((mp_type, flags, &body[MULTIPART_HEADER_LEN..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let mut b = Vec::new();
        emit_header(&mut b, mp_type::FLOW_DESC, MORE);
        b.extend_from_slice(b"xy");
        assert_eq!(parse_header(&b), Ok((mp_type::FLOW_DESC, MORE, &b"xy"[..])));
        assert!(parse_header(&b[..7]).is_err());
    }
}
