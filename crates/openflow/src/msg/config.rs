//! Switch configuration: `OFPT_GET_CONFIG_REQUEST`, `OFPT_GET_CONFIG_REPLY` and
//! `OFPT_SET_CONFIG` (`ofp_switch_config`: fragment handling flags and `miss_send_len`).

use bytes::Buf;

use crate::DecodeError;
use crate::header::msg_type;
use crate::message::Message;

/// `ofp_config_flags` values.
pub mod config_flags {
    /// No special handling of IP fragments.
    pub const FRAG_NORMAL: u16 = 0;
    /// Drop IP fragments.
    pub const FRAG_DROP: u16 = 1;
    /// Reassemble IP fragments.
    pub const FRAG_REASM: u16 = 2;
}

/// `OFPCML_NO_BUFFER`: send whole packets to the controller, unbuffered.
pub const MISS_SEND_LEN_NO_BUFFER: u16 = 0xffff;

/// `ofp_switch_config`, the body of the get-config reply and of set-config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchConfig {
    /// [`config_flags`] value.
    pub flags: u16,
    /// Bytes of a packet sent to the controller when the packet-in is not otherwise limited.
    pub miss_send_len: u16,
}

impl SwitchConfig {
    fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.flags.to_be_bytes());
        out.extend_from_slice(&self.miss_send_len.to_be_bytes());
    }

    fn parse(body: &[u8]) -> Result<SwitchConfig, DecodeError> {
        DecodeError::need("ofp_switch_config", body, 4)?;
        let mut b = body;
        Ok(SwitchConfig {
            flags: b.get_u16(),
            miss_send_len: b.get_u16(),
        })
    }
}

/// `OFPT_GET_CONFIG_REQUEST` (empty body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetConfigRequest;

/// `OFPT_GET_CONFIG_REPLY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetConfigReply(pub SwitchConfig);

/// `OFPT_SET_CONFIG`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetConfig(pub SwitchConfig);

impl Message for GetConfigRequest {
    const TYPE: u8 = msg_type::GET_CONFIG_REQUEST;

    fn emit_body(&self, _out: &mut Vec<u8>) {}

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        if body.is_empty() {
            Ok(GetConfigRequest)
        } else {
            Err(DecodeError::BadLength {
                what: "get-config request",
                len: body.len() + 8,
            })
        }
    }
}

impl Message for GetConfigReply {
    const TYPE: u8 = msg_type::GET_CONFIG_REPLY;

    fn emit_body(&self, out: &mut Vec<u8>) {
        self.0.emit(out);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        SwitchConfig::parse(body).map(GetConfigReply)
    }
}

impl Message for SetConfig {
    const TYPE: u8 = msg_type::SET_CONFIG;

    fn emit_body(&self, out: &mut Vec<u8>) {
        self.0.emit(out);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        SwitchConfig::parse(body).map(SetConfig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bytes() {
        assert_eq!(
            GetConfigRequest.to_bytes(1).unwrap(),
            [6, 7, 0, 8, 0, 0, 0, 1]
        );
        let set = SetConfig(SwitchConfig {
            flags: config_flags::FRAG_REASM,
            miss_send_len: MISS_SEND_LEN_NO_BUFFER,
        });
        assert_eq!(
            set.to_bytes(2).unwrap(),
            [6, 9, 0, 12, 0, 0, 0, 2, 0, 2, 0xff, 0xff]
        );
        let reply = GetConfigReply(SwitchConfig {
            flags: config_flags::FRAG_DROP,
            miss_send_len: 128,
        });
        assert_eq!(
            reply.to_bytes(3).unwrap(),
            [6, 8, 0, 12, 0, 0, 0, 3, 0, 1, 0, 128]
        );
    }

    #[test]
    fn truncated() {
        assert!(matches!(
            SetConfig::parse_body(&[0, 0, 0]),
            Err(DecodeError::Truncated { .. })
        ));
    }

    proptest! {
        #[test]
        fn round_trip(flags: u16, miss_send_len: u16, xid: u32) {
            let config = SwitchConfig { flags, miss_send_len };
            prop_assert_eq!(SetConfig::parse(&SetConfig(config).to_bytes(xid).unwrap()), Ok((SetConfig(config), xid)));
            prop_assert_eq!(GetConfigReply::parse(&GetConfigReply(config).to_bytes(xid).unwrap()), Ok((GetConfigReply(config), xid)));
        }
    }
}
