//! `OFPMP_METER_FEATURES`: what meters a switch offers — how many, which band types, which
//! flags. A switch without meters (Open vSwitch's Windows datapath as Antrea treats it, or a
//! datapath that lacks them) answers with no meters or with an error; the agent then installs
//! no meter.

use super::meter_mod::meter_flags;
use super::multipart::{self, mp_type};
use crate::DecodeError;
use crate::header::{msg_type, u32_at};
use crate::message::Message;

/// `ofp_meter_features` after the multipart header.
const FEATURES_LEN: usize = 16;
/// `OFPMBT_DROP` as a bit of `band_types`.
const DROP_BAND_BIT: u32 = 1 << 1;

fn expect_type(what: &'static str, ty: u16) -> Result<(), DecodeError> {
    if ty == mp_type::METER_FEATURES {
        Ok(())
    } else {
        Err(DecodeError::Invalid {
            what,
            reason: format!("type {ty} where METER_FEATURES was expected"),
        })
    }
}

/// The `OFPMP_METER_FEATURES` request (no body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeterFeaturesRequest;

impl Message for MeterFeaturesRequest {
    const TYPE: u8 = msg_type::MULTIPART_REQUEST;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(out, mp_type::METER_FEATURES, 0);
    }

    fn parse_body(body: &[u8]) -> Result<MeterFeaturesRequest, DecodeError> {
        let (ty, _, _) = multipart::parse_header(body)?;
        expect_type("multipart request", ty)?;
        Ok(MeterFeaturesRequest)
    }
}

/// The `OFPMP_METER_FEATURES` reply: `ofp_meter_features`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeterFeatures {
    /// The most meters the switch holds (0: none).
    pub max_meter: u32,
    /// The band types it offers, one bit per `OFPMBT_*` value.
    pub band_types: u32,
    /// The `ofp_meter_flags` it offers.
    pub capabilities: u32,
    /// The most bands a meter can have.
    pub max_bands: u8,
    /// The most color values.
    pub max_color: u8,
}

impl MeterFeatures {
    /// Whether the switch can drop packets above a rate in packets per second with a burst: the
    /// meter that bounds packet-ins.
    pub fn drops_packets_per_second(&self) -> bool {
        let needed = u32::from(meter_flags::PKTPS | meter_flags::BURST);
        self.max_meter > 0
            && self.max_bands > 0
            && self.band_types & DROP_BAND_BIT != 0
            && self.capabilities & needed == needed
    }
}

impl Message for MeterFeatures {
    const TYPE: u8 = msg_type::MULTIPART_REPLY;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(out, mp_type::METER_FEATURES, 0);
        out.extend_from_slice(&self.max_meter.to_be_bytes());
        out.extend_from_slice(&self.band_types.to_be_bytes());
        out.extend_from_slice(&self.capabilities.to_be_bytes());
        out.extend_from_slice(&[self.max_bands, self.max_color, 0, 0]);
    }

    fn parse_body(body: &[u8]) -> Result<MeterFeatures, DecodeError> {
        let (ty, _, b) = multipart::parse_header(body)?;
        expect_type("multipart reply", ty)?;
        DecodeError::need("ofp_meter_features", b, FEATURES_LEN)?;
        Ok(MeterFeatures {
            max_meter: u32_at(b, 0),
            band_types: u32_at(b, 4),
            capabilities: u32_at(b, 8),
            max_bands: b[12],
            max_color: b[13],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Open vSwitch's userspace datapath answers (`ovs-ofctl meter-features`: max_meter
    /// 200000, band types drop, capabilities kbps pktps burst stats, max_bands 1, max_color 0).
    const USERSPACE: MeterFeatures = MeterFeatures {
        max_meter: 200_000,
        band_types: DROP_BAND_BIT,
        capabilities: 0xf,
        max_bands: 1,
        max_color: 0,
    };

    #[test]
    fn request_and_reply_round_trip_in_the_wire_layout() {
        let bytes = MeterFeaturesRequest.to_bytes(7).unwrap();
        assert_eq!(&bytes[8..], &[0, 11, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            <MeterFeaturesRequest as Message>::parse(&bytes),
            Ok((MeterFeaturesRequest, 7))
        );
        let bytes = USERSPACE.to_bytes(8).unwrap();
        assert_eq!(bytes.len(), 8 + 8 + FEATURES_LEN);
        assert_eq!(
            &bytes[16..],
            &[0, 3, 0x0d, 0x40, 0, 0, 0, 2, 0, 0, 0, 0xf, 1, 0, 0, 0]
        );
        assert_eq!(
            <MeterFeatures as Message>::parse(&bytes),
            Ok((USERSPACE, 8))
        );
    }

    #[test]
    fn packet_rate_drops_need_meters_a_drop_band_and_both_flags() {
        assert!(USERSPACE.drops_packets_per_second());
        for lacking in [
            MeterFeatures {
                max_meter: 0,
                ..USERSPACE
            },
            MeterFeatures {
                max_bands: 0,
                ..USERSPACE
            },
            MeterFeatures {
                band_types: 1 << 2,
                ..USERSPACE
            },
            MeterFeatures {
                capabilities: u32::from(meter_flags::KBPS | meter_flags::BURST),
                ..USERSPACE
            },
            MeterFeatures {
                capabilities: u32::from(meter_flags::PKTPS),
                ..USERSPACE
            },
            MeterFeatures::default(),
        ] {
            assert!(!lacking.drops_packets_per_second(), "{lacking:?}");
        }
    }

    #[test]
    fn short_or_other_replies_are_errors() {
        let bytes = USERSPACE.to_bytes(1).unwrap();
        for cut in 0..bytes.len() {
            assert!(
                <MeterFeatures as Message>::parse(&bytes[..cut]).is_err(),
                "{cut}"
            );
        }
        let mut other = bytes.clone();
        other[9] = mp_type::METER_DESC as u8;
        assert!(<MeterFeatures as Message>::parse(&other).is_err());
    }
}
