//! Field values in text: the two ways `ovs-ofctl` prints a value (the match style of flow dumps,
//! and the meta-flow style of `set_field` and `learn`), and parsing `value[/mask]` for any field.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::field::{Field, Kind};
use super::port::PortNo;
use crate::TextError;
use crate::text::{alt_hex, format_mac, parse_ipv4, parse_ipv6, parse_mac, parse_u128, parse_uint};

/// `ct_state` bit names, lowest bit first.
pub const CT_STATE_FLAGS: [&str; 8] = ["new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"];
/// `tcp_flags` bit names, lowest bit first.
pub const TCP_FLAGS: [&str; 9] = ["fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr", "ns"];

/// A port field's value as a port number (16-bit fields use the OpenFlow 1.0 numbering).
fn port(field: Field, v: u128) -> PortNo {
    if field.def().bytes == 2 {
        PortNo::from_u16(v as u16)
    } else {
        PortNo(v as u32)
    }
}

fn mac(v: u128) -> String {
    let b = v.to_be_bytes();
    let mut m = [0u8; 6];
    m.copy_from_slice(&b[10..]);
    format_mac(m)
}

fn prefix_len(mask: u128, bits: u32) -> Option<u32> {
    let ones = mask.count_ones();
    let expect = if ones == 0 {
        0
    } else {
        (u128::MAX >> (128 - ones)) << (bits - ones)
    };
    (mask == expect).then_some(ones)
}

fn ip_masked(field: Field, v: u128, m: u128) -> String {
    let v6 = field.def().kind == Kind::Ipv6;
    let bits = if v6 { 128 } else { 32 };
    let addr = |x: u128| {
        if v6 {
            Ipv6Addr::from(x).to_string()
        } else {
            Ipv4Addr::from(x as u32).to_string()
        }
    };
    if m == field.full_mask() {
        addr(v)
    } else if let Some(len) = prefix_len(m, bits) {
        format!("{}/{len}", addr(v))
    } else {
        format!("{}/{}", addr(v), addr(m))
    }
}

/// Formats flags as `ovs-ofctl` does: with a full mask as names joined by `|` (or `0`), with a
/// partial mask as `+name-name` for each masked bit, lowest first.
fn flags(names: &[&str], v: u128, m: u128, full: u128) -> String {
    let name = |bit: usize| {
        names
            .get(bit)
            .map(|n| n.to_string())
            .unwrap_or_else(|| format!("{:#x}", 1u128 << bit))
    };
    if m == full {
        if v == 0 {
            return "0".to_string();
        }
        return (0..128)
            .filter(|b| v >> b & 1 == 1)
            .map(name)
            .collect::<Vec<_>>()
            .join("|");
    }
    (0..128)
        .filter(|b| m >> b & 1 == 1)
        .map(|b| format!("{}{}", if v >> b & 1 == 1 { '+' } else { '-' }, name(b)))
        .collect()
}

/// The value as `ovs-ofctl` prints it in a flow's match (`reg0=0x1/0xf`, `tp_dst=80`,
/// `nw_src=10.0.0.0/24`, …), without the name.
pub fn format_match_value(field: Field, v: u128, m: u128) -> String {
    let exact = m == field.full_mask();
    match field.def().kind {
        Kind::Port => port(field, v).to_string(),
        Kind::Hex if exact => alt_hex(v),
        Kind::Hex => format!("{}/{}", alt_hex(v), alt_hex(m)),
        Kind::Dec if exact => v.to_string(),
        Kind::Dec => format!("{v:#x}/{m:#x}"),
        Kind::EthType => format!("0x{v:04x}"),
        Kind::FlowLabel if exact => format!("0x{v:05x}"),
        Kind::FlowLabel => format!("0x{v:05x}/0x{m:05x}"),
        Kind::Dscp => (v << 2).to_string(),
        Kind::Mac if exact => mac(v),
        Kind::Mac => format!("{}/{}", mac(v), mac(m)),
        Kind::Ipv4 | Kind::Ipv6 => ip_masked(field, v, m),
        Kind::CtState => flags(&CT_STATE_FLAGS, v, m, field.full_mask()),
        Kind::TcpFlags => flags(&TCP_FLAGS, v, m, field.full_mask()),
        Kind::VlanVid => format!("0x{v:04x}/0x{m:04x}"),
    }
}

/// The value as OVS's meta-flow formatter prints it (`set_field:VALUE->field`, learn
/// immediates): integers in hex (`0x1`) or decimal by field, masks in hex.
pub fn format_mf_value(field: Field, v: u128, m: u128) -> String {
    let exact = m == field.full_mask();
    let mask_suffix = if exact {
        String::new()
    } else {
        format!("/{}", alt_hex(m))
    };
    match field.def().kind {
        Kind::Port => port(field, v).to_string(),
        Kind::Hex | Kind::EthType | Kind::FlowLabel => format!("{}{mask_suffix}", alt_hex(v)),
        Kind::Dec | Kind::Dscp => format!("{v}{mask_suffix}"),
        // The OXM value as it is on the wire: VID | OFPVID_PRESENT (0x1000), e.g. 4097.
        Kind::VlanVid => format!("{v}{mask_suffix}"),
        Kind::Mac | Kind::Ipv4 | Kind::Ipv6 | Kind::CtState | Kind::TcpFlags => {
            format_match_value(field, v, m)
        }
    }
}

fn parse_flags(names: &[&str], s: &str, full: u128) -> Result<(u128, u128), TextError> {
    // A flag is a name, or a single unnamed bit written in hex as the formatter prints it.
    let bit = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .map(|b| 1u128 << b)
            .or_else(|| {
                name.starts_with("0x")
                    .then(|| parse_u128(name).ok())
                    .flatten()
                    .filter(|v| v.is_power_of_two() && v & full != 0)
            })
            .ok_or_else(|| TextError::new(s, format!("unknown flag {name:?}")))
    };
    if s.starts_with('+') || s.starts_with('-') {
        let (mut v, mut m) = (0, 0);
        let mut rest = s;
        while let Some(sign) = rest.chars().next() {
            let body = &rest[1..];
            let end = body.find(['+', '-']).unwrap_or(body.len());
            let b = bit(&body[..end])?;
            m |= b;
            if sign == '+' {
                v |= b;
            } else if sign != '-' {
                return Err(TextError::new(s, "flags must be written +flag or -flag"));
            }
            rest = &body[end..];
        }
        return Ok((v, m));
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        return parse_int_masked(s, full);
    }
    let mut v = 0;
    for name in s.split('|') {
        v |= bit(name)?;
    }
    Ok((v, full))
}

fn parse_int_masked(s: &str, full: u128) -> Result<(u128, u128), TextError> {
    let bits = 128 - full.leading_zeros();
    match s.split_once('/') {
        Some((v, m)) => Ok((parse_uint(v, bits)?, parse_uint(m, bits)?)),
        None => Ok((parse_uint(s, bits)?, full)),
    }
}

fn parse_ip_masked(field: Field, s: &str) -> Result<(u128, u128), TextError> {
    let v6 = field.def().kind == Kind::Ipv6;
    let addr = |t: &str| -> Result<u128, TextError> {
        if v6 {
            Ok(u128::from(parse_ipv6(t)?))
        } else {
            Ok(u128::from(u32::from(parse_ipv4(t)?)))
        }
    };
    let bits: u32 = if v6 { 128 } else { 32 };
    match s.split_once('/') {
        None => Ok((addr(s)?, field.full_mask())),
        Some((a, m)) => {
            let mask = if let Ok(len) = m.parse::<u32>() {
                if len > bits {
                    return Err(TextError::new(
                        s,
                        format!("prefix length longer than {bits}"),
                    ));
                }
                if len == 0 {
                    0
                } else {
                    (field.full_mask() >> (bits - len)) << (bits - len)
                }
            } else {
                addr(m)?
            };
            Ok((addr(a)?, mask))
        }
    }
}

/// Parses `value[/mask]` for `field`. Returns (value, mask) with the full mask when none is
/// written.
pub fn parse_value(field: Field, s: &str) -> Result<(u128, u128), TextError> {
    let full = field.full_mask();
    let (v, m) = match field.def().kind {
        Kind::Port => {
            let p = s.parse::<PortNo>()?;
            let v = if field.def().bytes == 2 {
                p.to_u16().map(u128::from)
            } else {
                Some(u128::from(p.0))
            };
            (
                v.ok_or_else(|| TextError::new(s, "port does not fit in 16 bits"))?,
                full,
            )
        }
        Kind::Hex | Kind::Dec | Kind::EthType | Kind::FlowLabel | Kind::Dscp => {
            parse_int_masked(s, full)?
        }
        // `vlan_vid` is the 13-bit OXM value, OFPVID_PRESENT included (`set_field:4097->vlan_vid`
        // is VID 1); `dl_vlan` in matches is the 12-bit VID, handled by the match parser.
        Kind::VlanVid => parse_int_masked(s, full)?,
        Kind::Mac => match s.split_once('/') {
            Some((v, m)) => (tlv_mac(parse_mac(v)?), tlv_mac(parse_mac(m)?)),
            None => (tlv_mac(parse_mac(s)?), full),
        },
        Kind::Ipv4 | Kind::Ipv6 => parse_ip_masked(field, s)?,
        Kind::CtState => parse_flags(&CT_STATE_FLAGS, s, full)?,
        Kind::TcpFlags => parse_flags(&TCP_FLAGS, s, full)?,
    };
    if m != full && !field.def().maskable {
        return Err(TextError::new(
            s,
            format!("{} cannot be masked", field.def().name),
        ));
    }
    Ok((v & m, m))
}

fn tlv_mac(m: [u8; 6]) -> u128 {
    m.iter().fold(0u128, |acc, b| (acc << 8) | u128::from(*b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_style() {
        let f = |field: Field, v, m| format_match_value(field, v, m);
        assert_eq!(f(Field::Reg(0), 0, 1), "0/0x1");
        assert_eq!(f(Field::Reg(0), 0x1, 0xffff_ffff), "0x1");
        assert_eq!(f(Field::TcpDst, 80, 0xffff), "80");
        assert_eq!(f(Field::TcpDst, 0x50, 0xfff0), "0x50/0xfff0");
        assert_eq!(f(Field::Ipv4Src, 0x0a000000, 0xffffff00), "10.0.0.0/24");
        assert_eq!(
            f(Field::Ipv4Src, 0x0a000000, 0xff00ff00),
            "10.0.0.0/255.0.255.0"
        );
        assert_eq!(
            f(Field::Ipv6Src, 0xfe80 << 112, u128::MAX << 64),
            "fe80::/64"
        );
        assert_eq!(f(Field::EthType, 0x800, 0xffff), "0x0800");
        assert_eq!(f(Field::Ipv6Label, 5, 0xfffff), "0x00005");
        assert_eq!(f(Field::IpDscp, 2, 0x3f), "8");
        assert_eq!(f(Field::CtState, 0x21, 0x23), "+new-est+trk");
        assert_eq!(f(Field::CtState, 0, 0x20), "-trk");
        assert_eq!(f(Field::TcpFlags, 0x2, 0x12), "+syn-ack");
        assert_eq!(
            f(Field::EthSrc, 1 << 40, 1 << 40),
            "01:00:00:00:00:00/01:00:00:00:00:00"
        );
        assert_eq!(f(Field::InPort, 0xffff_fffe, 0xffff_ffff), "LOCAL");
    }

    #[test]
    fn mf_style() {
        assert_eq!(format_mf_value(Field::Reg(0), 1, 0xf), "0x1/0xf");
        assert_eq!(
            format_mf_value(Field::CtLabel, 0xa_0000_0000, 0xffff_ffff_0000_0000),
            "0xa00000000/0xffffffff00000000"
        );
        assert_eq!(format_mf_value(Field::TcpDst, 80, 0xffff), "80");
        assert_eq!(format_mf_value(Field::EthType, 0x800, 0xffff), "0x800");
        assert_eq!(
            format_mf_value(Field::Ipv4Dst, 0x0a000001, 0xffff_ffff),
            "10.0.0.1"
        );
    }

    #[test]
    fn parsing() {
        assert_eq!(parse_value(Field::Reg(0), "0x1/0xf"), Ok((1, 0xf)));
        assert_eq!(parse_value(Field::Reg(0), "0x11/0xf"), Ok((1, 0xf)));
        assert_eq!(
            parse_value(Field::Ipv4Src, "10.0.0.1/24"),
            Ok((0x0a000000, 0xffffff00))
        );
        assert_eq!(
            parse_value(Field::Ipv4Src, "10.0.0.1/255.0.255.0"),
            Ok((0x0a000000 & 0xff00ff00, 0xff00ff00))
        );
        assert_eq!(
            parse_value(Field::Ipv6Src, "fe80::1/64"),
            Ok((0xfe80 << 112, u128::MAX << 64))
        );
        assert_eq!(
            parse_value(Field::CtState, "+trk+new-est"),
            Ok((0x21, 0x23))
        );
        assert_eq!(
            parse_value(Field::CtState, "trk|new"),
            Ok((0x21, 0xffff_ffff))
        );
        assert_eq!(parse_value(Field::TcpFlags, "+syn-ack"), Ok((0x2, 0x12)));
        assert_eq!(
            parse_value(Field::InPort, "LOCAL"),
            Ok((0xffff_fffe, 0xffff_ffff))
        );
        assert_eq!(
            parse_value(Field::EthSrc, "00:00:00:00:00:01"),
            Ok((1, 0xffff_ffff_ffff))
        );
        assert!(parse_value(Field::EthType, "0x800/0xff").is_err());
        assert!(parse_value(Field::CtState, "+bogus").is_err());
        assert!(parse_value(Field::Ipv4Src, "10.0.0.1/33").is_err());
        assert!(parse_value(Field::IpProto, "256").is_err());
    }
}
