//! Meters in OpenFlow 1.5: `OFPT_METER_MOD` (drop and DSCP-remark bands; the kbps / pktps /
//! burst / stats flags), the `OFPMP_METER_DESC` multipart request and reply, and the
//! `ovs-ofctl add-meter` / `dump-meters` text. A flow uses a meter through the `meter:N` action
//! (in OpenFlow 1.5 an action, no longer an instruction).
//!
//! Open vSwitch refuses meter mods inside bundles (`OFPBFC_MSG_UNSUP`), and deleting a meter
//! deletes every flow that uses it.

use std::fmt;
use std::str::FromStr;

use super::multipart::{self, mp_type};
use crate::header::{msg_type, u16_at, u32_at};
use crate::message::Message;
use crate::text::{key_value, parse_num};
use crate::{DecodeError, TextError};

/// `OFPM_ALL`: every meter (delete, desc request).
pub const METER_ALL: u32 = 0xffff_ffff;
/// `OFPM_MAX`: the highest meter id a flow can use.
pub const METER_MAX: u32 = 0xffff_0000;

/// `ofp_meter_flags`.
pub mod meter_flags {
    /// Rates are in kilobits per second.
    pub const KBPS: u16 = 1;
    /// Rates are in packets per second.
    pub const PKTPS: u16 = 2;
    /// Bands have a burst size.
    pub const BURST: u16 = 4;
    /// The switch collects statistics.
    pub const STATS: u16 = 8;
}

/// Flag names as `ovs-ofctl` writes them, in bit order.
const FLAG_NAMES: [(u16, &str); 4] = [
    (meter_flags::KBPS, "kbps"),
    (meter_flags::PKTPS, "pktps"),
    (meter_flags::BURST, "burst"),
    (meter_flags::STATS, "stats"),
];

const BAND_DROP: u16 = 1;
const BAND_DSCP_REMARK: u16 = 2;
/// Every band this codec knows is `ofp_meter_band_header` plus 4 bytes.
const BAND_LEN: usize = 16;
/// `ofp_meter_mod` after the header: command, flags, meter id.
const FIXED_LEN: usize = 8;

/// `ofp_meter_mod_command`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeterModCommand {
    Add = 0,
    Modify = 1,
    Delete = 2,
}

/// What a band does to packets above its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandAction {
    /// `OFPMBT_DROP`.
    Drop,
    /// `OFPMBT_DSCP_REMARK`: raise the drop precedence of the DSCP by `prec_level`.
    DscpRemark { prec_level: u8 },
}

/// A meter band (`ofp_meter_band_drop` / `ofp_meter_band_dscp_remark`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeterBand {
    pub action: BandAction,
    /// In kbps or packets per second, as the meter's flags say.
    pub rate: u32,
    /// Used when the meter has [`meter_flags::BURST`].
    pub burst_size: u32,
}

/// A meter's configuration, shared by meter mods and meter-desc replies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterDesc {
    pub meter_id: u32,
    /// [`meter_flags`] bits.
    pub flags: u16,
    pub bands: Vec<MeterBand>,
}

/// `OFPT_METER_MOD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterMod {
    pub command: MeterModCommand,
    pub meter: MeterDesc,
}

impl MeterBand {
    fn emit(&self, out: &mut Vec<u8>) {
        let (band_type, prec_level) = match self.action {
            BandAction::Drop => (BAND_DROP, 0),
            BandAction::DscpRemark { prec_level } => (BAND_DSCP_REMARK, prec_level),
        };
        out.extend_from_slice(&band_type.to_be_bytes());
        out.extend_from_slice(&(BAND_LEN as u16).to_be_bytes());
        out.extend_from_slice(&self.rate.to_be_bytes());
        out.extend_from_slice(&self.burst_size.to_be_bytes());
        out.extend_from_slice(&[prec_level, 0, 0, 0]);
    }

    fn parse(buf: &[u8]) -> Result<MeterBand, DecodeError> {
        DecodeError::need("ofp_meter_band", buf, BAND_LEN)?;
        let len = usize::from(u16_at(buf, 2));
        if len != BAND_LEN {
            return Err(DecodeError::BadLength {
                what: "ofp_meter_band",
                len,
            });
        }
        let action = match u16_at(buf, 0) {
            BAND_DROP => BandAction::Drop,
            BAND_DSCP_REMARK => BandAction::DscpRemark {
                prec_level: buf[12],
            },
            other => {
                return Err(DecodeError::Unsupported {
                    what: "meter band type",
                    value: u64::from(other),
                });
            }
        };
        Ok(MeterBand {
            action,
            rate: u32_at(buf, 4),
            burst_size: u32_at(buf, 8),
        })
    }
}

impl MeterDesc {
    /// The meter with what means nothing cleared: burst sizes of a meter without the `burst`
    /// flag (Open vSwitch reports each band's rate there). Two meters behave the same exactly
    /// when their normalised forms are equal.
    pub fn normalized(&self) -> MeterDesc {
        let mut meter = self.clone();
        if meter.flags & meter_flags::BURST == 0 {
            meter.bands.iter_mut().for_each(|b| b.burst_size = 0);
        }
        meter
    }

    fn emit_bands(&self, out: &mut Vec<u8>) {
        for band in &self.bands {
            band.emit(out);
        }
    }

    fn parse_bands(mut buf: &[u8]) -> Result<Vec<MeterBand>, DecodeError> {
        let mut bands = Vec::new();
        while !buf.is_empty() {
            bands.push(MeterBand::parse(buf)?);
            buf = &buf[BAND_LEN..];
        }
        Ok(bands)
    }

    /// Parses `meter=ID,FLAGS…,bands=type=drop,rate=R[,burst_size=B][,type=…]`, with commas or
    /// whitespace between items (the `add-meter` and `dump-meters` forms both parse). Like
    /// `ovs-ofctl`, it wants `kbps` or `pktps`, and `burst_size` on every band exactly when the
    /// meter has `burst`.
    pub fn from_text(s: &str) -> Result<MeterDesc, TextError> {
        let mut meter = MeterDesc {
            meter_id: 0,
            flags: 0,
            bands: Vec::new(),
        };
        let mut saw_id = false;
        let mut in_bands = false;
        // Which bands were given a rate and a burst size.
        let mut given: Vec<(bool, bool)> = Vec::new();
        for item in s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|i| !i.is_empty())
        {
            let (key, value) = key_value(item);
            if !in_bands {
                match (key, value) {
                    ("meter", Some("all")) => {
                        meter.meter_id = METER_ALL;
                        saw_id = true;
                    }
                    ("meter", Some(v)) => {
                        meter.meter_id = parse_num(v)?;
                        saw_id = true;
                    }
                    ("bands", Some(first)) => {
                        in_bands = true;
                        if !first.is_empty() {
                            apply_band_item(&mut meter.bands, &mut given, first)?;
                        }
                    }
                    (word, None) => {
                        let (bit, _) = FLAG_NAMES
                            .iter()
                            .find(|(_, name)| *name == word)
                            .ok_or_else(|| TextError::new(item, "unknown meter keyword"))?;
                        meter.flags |= bit;
                    }
                    _ => return Err(TextError::new(item, "unknown meter keyword")),
                }
                continue;
            }
            apply_band_item(&mut meter.bands, &mut given, item)?;
        }
        if !saw_id {
            return Err(TextError::new(s, "missing meter=ID"));
        }
        if meter.flags & (meter_flags::KBPS | meter_flags::PKTPS) == 0 {
            return Err(TextError::new(s, "a meter needs kbps or pktps"));
        }
        let burst = meter.flags & meter_flags::BURST != 0;
        for (rate, burst_size) in given {
            if !rate {
                return Err(TextError::new(s, "every band needs a rate"));
            }
            if burst_size != burst {
                return Err(TextError::new(
                    s,
                    "a band has burst_size exactly when the meter has the burst flag",
                ));
            }
        }
        Ok(meter)
    }
}

/// Applies one `type=`/`rate=`/`burst_size=`/`prec_level=` item to the bands.
fn apply_band_item(
    bands: &mut Vec<MeterBand>,
    given: &mut Vec<(bool, bool)>,
    item: &str,
) -> Result<(), TextError> {
    let (key, value) = key_value(item);
    let Some(value) = value else {
        return Err(TextError::new(item, "a band item needs a value"));
    };
    if key == "type" {
        let action = match value {
            "drop" => BandAction::Drop,
            "dscp_remark" => BandAction::DscpRemark { prec_level: 0 },
            _ => return Err(TextError::new(item, "unknown band type")),
        };
        bands.push(MeterBand {
            action,
            rate: 0,
            burst_size: 0,
        });
        given.push((false, false));
        return Ok(());
    }
    let (Some(band), Some(given)) = (bands.last_mut(), given.last_mut()) else {
        return Err(TextError::new(item, "a band starts with type="));
    };
    match (key, &mut band.action) {
        ("rate", _) => {
            band.rate = parse_num(value)?;
            given.0 = true;
        }
        ("burst_size", _) => {
            band.burst_size = parse_num(value)?;
            given.1 = true;
        }
        ("prec_level", BandAction::DscpRemark { prec_level }) => *prec_level = parse_num(value)?,
        _ => return Err(TextError::new(item, "unknown band keyword")),
    }
    Ok(())
}

impl fmt::Display for MeterDesc {
    /// `meter=1 kbps burst stats bands=type=drop rate=1000 burst_size=100`: the entry
    /// `ovs-ofctl -O OpenFlow15 dump-meters` prints, on one line (its header line followed
    /// directly by the band lines, separated by spaces). Flag bits without a name are not
    /// printed; `burst_size` is printed only with the `burst` flag, as `ovs-ofctl` does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.meter_id == METER_ALL {
            f.write_str("meter=all")?;
        } else {
            write!(f, "meter={}", self.meter_id)?;
        }
        for (bit, name) in FLAG_NAMES {
            if self.flags & bit != 0 {
                write!(f, " {name}")?;
            }
        }
        f.write_str(" bands=")?;
        for (i, band) in self.bands.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match band.action {
                BandAction::Drop => write!(f, "type=drop rate={}", band.rate)?,
                BandAction::DscpRemark { .. } => write!(f, "type=dscp_remark rate={}", band.rate)?,
            }
            if self.flags & meter_flags::BURST != 0 {
                write!(f, " burst_size={}", band.burst_size)?;
            }
            if let BandAction::DscpRemark { prec_level } = band.action {
                write!(f, " prec_level={prec_level}")?;
            }
        }
        Ok(())
    }
}

impl MeterMod {
    /// Adds `meter`.
    pub fn add(meter: MeterDesc) -> MeterMod {
        MeterMod {
            command: MeterModCommand::Add,
            meter,
        }
    }

    /// Replaces the configuration of the meter with the same id by `meter`.
    pub fn modify(meter: MeterDesc) -> MeterMod {
        MeterMod {
            command: MeterModCommand::Modify,
            meter,
        }
    }

    /// Deletes meter `meter_id` ([`METER_ALL`] for every meter), and with it every flow that
    /// uses it.
    pub fn delete(meter_id: u32) -> MeterMod {
        MeterMod {
            command: MeterModCommand::Delete,
            meter: MeterDesc {
                meter_id,
                flags: 0,
                bands: Vec::new(),
            },
        }
    }

    /// Decodes a whole `OFPT_METER_MOD` message (header included).
    pub fn decode(buf: &[u8]) -> Result<(MeterMod, u32), DecodeError> {
        <MeterMod as Message>::parse(buf)
    }
}

impl Message for MeterMod {
    const TYPE: u8 = msg_type::METER_MOD;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.command as u16).to_be_bytes());
        out.extend_from_slice(&self.meter.flags.to_be_bytes());
        out.extend_from_slice(&self.meter.meter_id.to_be_bytes());
        self.meter.emit_bands(out);
    }

    fn parse_body(body: &[u8]) -> Result<MeterMod, DecodeError> {
        DecodeError::need("ofp_meter_mod", body, FIXED_LEN)?;
        let command = match u16_at(body, 0) {
            0 => MeterModCommand::Add,
            1 => MeterModCommand::Modify,
            2 => MeterModCommand::Delete,
            other => {
                return Err(DecodeError::Unsupported {
                    what: "meter_mod command",
                    value: u64::from(other),
                });
            }
        };
        Ok(MeterMod {
            command,
            meter: MeterDesc {
                meter_id: u32_at(body, 4),
                flags: u16_at(body, 2),
                bands: MeterDesc::parse_bands(&body[FIXED_LEN..])?,
            },
        })
    }
}

impl fmt::Display for MeterMod {
    /// The `add-meter` text of the meter (the command is not part of the text).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.meter)
    }
}

impl FromStr for MeterMod {
    type Err = TextError;

    /// Parses `add-meter` text as an add.
    fn from_str(s: &str) -> Result<MeterMod, TextError> {
        Ok(MeterMod::add(MeterDesc::from_text(s)?))
    }
}

/// `OFPMP_METER_DESC` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeterDescRequest {
    /// [`METER_ALL`] for every meter.
    pub meter_id: u32,
}

impl Message for MeterDescRequest {
    const TYPE: u8 = msg_type::MULTIPART_REQUEST;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(out, mp_type::METER_DESC, 0);
        out.extend_from_slice(&self.meter_id.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
    }

    fn parse_body(body: &[u8]) -> Result<MeterDescRequest, DecodeError> {
        let (ty, _, b) = multipart::parse_header(body)?;
        if ty != mp_type::METER_DESC {
            return Err(DecodeError::Invalid {
                what: "multipart request",
                reason: format!("type {ty} where METER_DESC was expected"),
            });
        }
        DecodeError::need("meter desc request", b, 4)?;
        Ok(MeterDescRequest {
            meter_id: u32_at(b, 0),
        })
    }
}

/// One `OFPMP_METER_DESC` reply message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MeterDescReply {
    pub more: bool,
    pub meters: Vec<MeterDesc>,
}

impl MeterDescReply {
    /// Decodes a whole reply message (header included).
    pub fn decode(buf: &[u8]) -> Result<(MeterDescReply, u32), DecodeError> {
        <MeterDescReply as Message>::parse(buf)
    }
}

impl Message for MeterDescReply {
    const TYPE: u8 = msg_type::MULTIPART_REPLY;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(
            out,
            mp_type::METER_DESC,
            if self.more { multipart::MORE } else { 0 },
        );
        for m in &self.meters {
            let len = (FIXED_LEN + BAND_LEN * m.bands.len()) as u16;
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(&m.flags.to_be_bytes());
            out.extend_from_slice(&m.meter_id.to_be_bytes());
            m.emit_bands(out);
        }
    }

    fn parse_body(body: &[u8]) -> Result<MeterDescReply, DecodeError> {
        let (ty, flags, mut rest) = multipart::parse_header(body)?;
        if ty != mp_type::METER_DESC {
            return Err(DecodeError::Invalid {
                what: "multipart reply",
                reason: format!("type {ty} where METER_DESC was expected"),
            });
        }
        let mut meters = Vec::new();
        while !rest.is_empty() {
            DecodeError::need("ofp_meter_desc", rest, FIXED_LEN)?;
            let len = usize::from(u16_at(rest, 0));
            if len < FIXED_LEN {
                return Err(DecodeError::BadLength {
                    what: "ofp_meter_desc",
                    len,
                });
            }
            DecodeError::need("ofp_meter_desc", rest, len)?;
            meters.push(MeterDesc {
                meter_id: u32_at(rest, 4),
                flags: u16_at(rest, 2),
                bands: MeterDesc::parse_bands(&rest[FIXED_LEN..len])?,
            });
            rest = &rest[len..];
        }
        Ok(MeterDescReply {
            more: flags & multipart::MORE != 0,
            meters,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BURST: &str = "meter=1 kbps burst stats bands=type=drop rate=1000 burst_size=100";

    #[test]
    fn text_round_trip() {
        let m: MeterMod = BURST.parse().unwrap();
        assert_eq!(m.to_string(), BURST);
        assert_eq!(
            m.meter.flags,
            meter_flags::KBPS | meter_flags::BURST | meter_flags::STATS
        );
        // The add-meter input form parses to the same meter.
        let input: MeterMod = "meter=1,kbps,burst,stats,bands=type=drop,rate=1000,burst_size=100"
            .parse()
            .unwrap();
        assert_eq!(input, m);
        // The dump-meters form, with its newlines and `bands=` alone on the first line.
        let dumped: MeterMod =
            "meter=1 kbps burst stats bands=\ntype=drop rate=1000 burst_size=100"
                .parse()
                .unwrap();
        assert_eq!(dumped, m);
        let two = "meter=7 pktps bands=type=drop rate=10 type=dscp_remark rate=5 prec_level=2";
        let m: MeterMod = two.parse().unwrap();
        assert_eq!(m.to_string(), two);
        assert_eq!(
            m.meter.bands[1].action,
            BandAction::DscpRemark { prec_level: 2 }
        );
        assert_eq!(MeterMod::delete(METER_ALL).to_string(), "meter=all bands=");
    }

    #[test]
    fn normalized_clears_unused_burst_sizes() {
        let mut m: MeterMod = "meter=1 kbps bands=type=drop rate=10".parse().unwrap();
        m.meter.bands[0].burst_size = 10;
        assert_eq!(m.meter.normalized().bands[0].burst_size, 0);
        let b: MeterMod = "meter=1 kbps burst bands=type=drop rate=10 burst_size=3"
            .parse()
            .unwrap();
        assert_eq!(b.meter.normalized(), b.meter);
    }

    #[test]
    fn text_errors_name_the_fragment() {
        for (input, fragment) in [
            ("meter=1,kbps,bands=type=frob,rate=1", "type=frob"),
            ("meter=1,kbps,fast,bands=type=drop,rate=1", "fast"),
            ("meter=1,kbps,bands=rate=1", "rate=1"),
            ("meter=1,kbps,bands=type=drop,prec_level=1", "prec_level=1"),
            ("meter=x,kbps,bands=type=drop,rate=1", "x"),
        ] {
            let e = input.parse::<MeterMod>().unwrap_err();
            assert_eq!(e.input, fragment, "{input}: {e}");
        }
        for input in [
            "kbps,bands=type=drop,rate=1",
            "meter=1,bands=type=drop,rate=1",
            "meter=1,kbps,bands=type=drop",
            "meter=1,kbps,burst,bands=type=drop,rate=1",
            "meter=1,kbps,bands=type=drop,rate=1,burst_size=2",
        ] {
            assert!(input.parse::<MeterMod>().is_err(), "{input}");
        }
    }

    #[test]
    fn wire_round_trip() {
        let m: MeterMod = "meter=5,pktps,burst,bands=type=drop,rate=10,burst_size=3,type=dscp_remark,rate=20,burst_size=4,prec_level=1"
            .parse()
            .unwrap();
        let b = m.to_bytes(3).unwrap();
        assert_eq!(b.len(), 8 + FIXED_LEN + 2 * BAND_LEN);
        assert_eq!(&b[..8], &[6, 29, 0, 48, 0, 0, 0, 3]);
        assert_eq!(&b[8..16], &[0, 0, 0, 6, 0, 0, 0, 5]);
        assert_eq!(
            &b[16..32],
            &[0, 1, 0, 16, 0, 0, 0, 10, 0, 0, 0, 3, 0, 0, 0, 0]
        );
        assert_eq!(
            &b[32..48],
            &[0, 2, 0, 16, 0, 0, 0, 20, 0, 0, 0, 4, 1, 0, 0, 0]
        );
        assert_eq!(MeterMod::decode(&b), Ok((m.clone(), 3)));
        let del = MeterMod::delete(9);
        assert_eq!(MeterMod::decode(&del.to_bytes(1).unwrap()), Ok((del, 1)));
        let reply = MeterDescReply {
            more: true,
            meters: vec![m.meter.clone(), MeterMod::delete(2).meter],
        };
        assert_eq!(
            MeterDescReply::decode(&reply.to_bytes(4).unwrap()),
            Ok((reply, 4))
        );
        let req = MeterDescRequest {
            meter_id: METER_ALL,
        };
        let bytes = req.to_bytes(5).unwrap();
        assert_eq!(
            &bytes[8..],
            &[0, 10, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 0]
        );
        assert_eq!(<MeterDescRequest as Message>::parse(&bytes), Ok((req, 5)));
    }

    #[test]
    fn rejects_malformed() {
        let m: MeterMod = BURST.parse().unwrap();
        let b = m.to_bytes(1).unwrap();
        let mut bad_len = b.clone();
        bad_len[19] = 24; // a band claiming 24 bytes
        assert!(matches!(
            MeterMod::decode(&bad_len),
            Err(DecodeError::BadLength { .. })
        ));
        let mut bad_type = b.clone();
        bad_type[17] = 0xff; // band type 0x00ff
        assert!(matches!(
            MeterMod::decode(&bad_type),
            Err(DecodeError::Unsupported {
                what: "meter band type",
                ..
            })
        ));
        let mut bad_command = b.clone();
        bad_command[9] = 3;
        assert!(MeterMod::decode(&bad_command).is_err());
        assert!(MeterMod::parse_body(&b[8..b.len() - 1]).is_err());
        assert!(MeterMod::parse_body(&[0; 7]).is_err());
        let reply = MeterDescReply {
            more: false,
            meters: vec![m.meter],
        };
        let mut b = reply.to_bytes(1).unwrap();
        b[17] = 4; // an ofp_meter_desc shorter than its fixed part
        assert!(MeterDescReply::decode(&b).is_err());
    }
}
