//! `Display` and `FromStr` for [`Match`] in `ovs-ofctl` syntax: shorthands (`ip`, `tcp`, `arp`,
//! …), protocol-dependent names (`nw_src`, `tp_dst`, `icmp_type`), VLAN forms and field order as
//! `ovs-ofctl -O OpenFlow15 dump-flows` prints them.

use std::fmt;
use std::str::FromStr;

use super::field::Field;
use super::flow_match::Match;
use super::value::{format_match_value, parse_value};
use crate::TextError;
use crate::text::{key_value, parse_uint, split_top};

const ETH_IP: u128 = 0x0800;
const ETH_IPV6: u128 = 0x86dd;
const ETH_ARP: u128 = 0x0806;
const ETH_RARP: u128 = 0x8035;

/// Shorthand names: (name, ethertype, ip protocol).
const SHORTHANDS: [(&str, u128, Option<u128>); 14] = [
    ("ip", ETH_IP, None),
    ("icmp", ETH_IP, Some(1)),
    ("igmp", ETH_IP, Some(2)),
    ("tcp", ETH_IP, Some(6)),
    ("udp", ETH_IP, Some(17)),
    ("sctp", ETH_IP, Some(132)),
    ("ipv6", ETH_IPV6, None),
    ("icmp6", ETH_IPV6, Some(58)),
    ("tcp6", ETH_IPV6, Some(6)),
    ("udp6", ETH_IPV6, Some(17)),
    ("sctp6", ETH_IPV6, Some(132)),
    ("arp", ETH_ARP, None),
    ("rarp", ETH_RARP, None),
    ("ip4", ETH_IP, None),
];

impl Match {
    /// The shorthand `ovs-ofctl` prints for this match and whether it covers `nw_proto` too.
    fn shorthand(&self) -> Option<(&'static str, bool)> {
        let eth = self.exact(Field::EthType)?;
        let proto = self.exact(Field::IpProto);
        if let Some((name, ..)) = SHORTHANDS
            .iter()
            .find(|(_, e, sp)| *e == eth && sp.is_some() && *sp == proto)
        {
            return Some((name, true));
        }
        SHORTHANDS
            .iter()
            .find(|(_, e, p)| *e == eth && p.is_none())
            .map(|(name, ..)| (*name, false))
    }
}

impl fmt::Display for Match {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shorthand = self.shorthand();
        let mut parts: Vec<String> = Vec::new();
        let mut shorthand_done = shorthand.is_none();
        let is_arp = matches!(self.exact(Field::EthType), Some(ETH_ARP | ETH_RARP));
        let vid = self.get(Field::VlanVid);
        for e in self.entries() {
            if !shorthand_done && e.field >= Field::Reg(0) {
                parts.push(shorthand.map(|(n, _)| n.to_string()).unwrap_or_default());
                shorthand_done = true;
            }
            let name = e.field.def().match_name;
            match e.field {
                Field::EthType if shorthand.is_some() => continue,
                Field::IpProto if shorthand.is_some_and(|(_, covers)| covers) => continue,
                Field::IpProto if is_arp => parts.push(format!("arp_op={}", e.value)),
                Field::VlanVid => {
                    if e.value & 0x1000 != 0 && e.mask == 0x1fff {
                        parts.push(format!("dl_vlan={}", e.value & 0xfff));
                    } else {
                        parts.push(format!("vlan_tci=0x{:04x}/0x{:04x}", e.value, e.mask));
                    }
                }
                Field::VlanPcp if vid.is_some_and(|v| v.value & 0x1000 != 0) => {
                    parts.push(format!("dl_vlan_pcp={}", e.value))
                }
                Field::VlanPcp => parts.push(format!("vlan_pcp={}", e.value)),
                _ => parts.push(format!(
                    "{name}={}",
                    format_match_value(e.field, e.value, e.mask)
                )),
            }
        }
        if !shorthand_done {
            parts.push(shorthand.map(|(n, _)| n.to_string()).unwrap_or_default());
        }
        f.write_str(&parts.join(","))
    }
}

/// A field written with a protocol-dependent name, resolved once the whole match is read.
pub(crate) enum Pending<'a> {
    NwSrc(&'a str),
    NwDst(&'a str),
    NwProto(&'a str),
    TpSrc(&'a str),
    TpDst(&'a str),
    IcmpType(&'a str),
    IcmpCode(&'a str),
}

impl Match {
    /// Applies one `key[=value]` item of match text. Returns `Ok(false)` if `key` is not a match
    /// field (so flow-level parsers can handle it).
    pub(crate) fn apply_text_item<'a>(
        &mut self,
        item: &'a str,
        pending: &mut Vec<(&'a str, Pending<'a>)>,
    ) -> Result<bool, TextError> {
        let (key, value) = key_value(item);
        let Some(value) = value else {
            let Some((_, eth, proto)) = SHORTHANDS.iter().find(|(n, ..)| *n == key) else {
                return Ok(false);
            };
            self.set(Field::EthType, *eth);
            if let Some(p) = proto {
                self.set(Field::IpProto, *p);
            }
            return Ok(true);
        };
        let p = match key {
            "nw_src" => Pending::NwSrc(value),
            "nw_dst" => Pending::NwDst(value),
            "nw_proto" | "ip_proto" => Pending::NwProto(value),
            "tp_src" => Pending::TpSrc(value),
            "tp_dst" => Pending::TpDst(value),
            "icmp_type" => Pending::IcmpType(value),
            "icmp_code" => Pending::IcmpCode(value),
            "in_port" => {
                let (v, m) = parse_value(Field::InPort, value)
                    .map_err(|e| TextError::new(item, e.reason))?;
                self.set_masked(Field::InPort, v, m);
                return Ok(true);
            }
            "nw_tos" => {
                let tos = parse_uint(value, 8)?;
                self.set(Field::IpDscp, tos >> 2);
                return Ok(true);
            }
            "dl_vlan" => {
                let vid = parse_uint(value, 12)?;
                self.set_masked(Field::VlanVid, vid | 0x1000, 0x1fff);
                return Ok(true);
            }
            "dl_vlan_pcp" | "vlan_pcp" => {
                self.set(Field::VlanPcp, parse_uint(value, 3)?);
                return Ok(true);
            }
            "vlan_tci" => {
                let (tci, mask) = match value.split_once('/') {
                    Some((v, m)) => (parse_uint(v, 16)?, parse_uint(m, 16)?),
                    None => (parse_uint(value, 16)?, 0xffff),
                };
                self.set_masked(Field::VlanVid, tci & 0x1fff, mask & 0x1fff);
                if tci & 0x1000 != 0 && mask & 0xe000 == 0xe000 {
                    self.set(Field::VlanPcp, tci >> 13);
                }
                return Ok(true);
            }
            _ => {
                let Some(field) = Field::from_name(key) else {
                    return Ok(false);
                };
                let (v, m) =
                    parse_value(field, value).map_err(|e| TextError::new(item, e.reason))?;
                self.set_masked(field, v, m);
                return Ok(true);
            }
        };
        pending.push((item, p));
        Ok(true)
    }

    /// Resolves protocol-dependent names and checks prerequisites.
    pub(crate) fn finish_text(
        &mut self,
        pending: Vec<(&str, Pending<'_>)>,
    ) -> Result<(), TextError> {
        let eth = self.exact(Field::EthType);
        let arp = matches!(eth, Some(ETH_ARP | ETH_RARP));
        let v6 = eth == Some(ETH_IPV6);
        for (item, p) in &pending {
            if let Pending::NwProto(v) = p {
                let field = if arp { Field::ArpOp } else { Field::IpProto };
                let (v, m) = parse_value(field, v).map_err(|e| TextError::new(*item, e.reason))?;
                self.set_masked(field, v, m);
            }
        }
        let proto = self.exact(Field::IpProto);
        for (item, p) in pending {
            let (field, v) = match p {
                Pending::NwProto(_) => continue,
                Pending::NwSrc(v) => (
                    if arp {
                        Field::ArpSpa
                    } else if v6 {
                        Field::Ipv6Src
                    } else {
                        Field::Ipv4Src
                    },
                    v,
                ),
                Pending::NwDst(v) => (
                    if arp {
                        Field::ArpTpa
                    } else if v6 {
                        Field::Ipv6Dst
                    } else {
                        Field::Ipv4Dst
                    },
                    v,
                ),
                Pending::IcmpType(v) => (
                    if v6 {
                        Field::Icmpv6Type
                    } else {
                        Field::Icmpv4Type
                    },
                    v,
                ),
                Pending::IcmpCode(v) => (
                    if v6 {
                        Field::Icmpv6Code
                    } else {
                        Field::Icmpv4Code
                    },
                    v,
                ),
                Pending::TpSrc(v) | Pending::TpDst(v) => {
                    let src = matches!(p, Pending::TpSrc(_));
                    let field = match (proto, src) {
                        (Some(17), true) => Field::UdpSrc,
                        (Some(17), false) => Field::UdpDst,
                        (Some(132), true) => Field::SctpSrc,
                        (Some(132), false) => Field::SctpDst,
                        (Some(6), true) => Field::TcpSrc,
                        (Some(6), false) => Field::TcpDst,
                        _ => {
                            return Err(TextError::new(
                                item,
                                "tp_src/tp_dst need tcp, udp or sctp in the match",
                            ));
                        }
                    };
                    (field, v)
                }
            };
            let (value, mask) =
                parse_value(field, v).map_err(|e| TextError::new(item, e.reason))?;
            self.set_masked(field, value, mask);
        }
        self.check_prerequisites()
            .map_err(|reason| TextError::new(self.to_string(), reason))
    }
}

impl FromStr for Match {
    type Err = TextError;

    /// Parses a comma-separated match such as `tcp,nw_src=10.0.0.0/24,tp_dst=80,reg0=0x1/0xf`.
    fn from_str(s: &str) -> Result<Match, TextError> {
        let mut m = Match::new();
        let mut pending = Vec::new();
        for item in split_top(s, ',') {
            if !m.apply_text_item(item, &mut pending)? {
                return Err(TextError::new(item, "unknown match field"));
            }
        }
        m.finish_text(pending)?;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Input → what `ovs-ofctl -O OpenFlow15 parse-flow` (OVS 3.1) prints for it.
    const CASES: &[(&str, &str)] = &[
        ("xreg0=0x100000002", "reg0=0x1,reg1=0x2"),
        (
            "ip,nw_tos=8,nw_ecn=1,ct_zone=65520,reg0=0/0x1,ct_state=+trk+new-est-inv,ct_mark=0x1/0x3,ct_nw_src=1.1.1.1,ct_nw_proto=6,ct_tp_dst=80,pkt_mark=3,conj_id=5",
            "pkt_mark=0x3,conj_id=5,ct_state=+new-est-inv+trk,ct_zone=65520,ct_mark=0x1/0x3,ct_nw_src=1.1.1.1,ct_nw_proto=6,ct_tp_dst=80,ip,reg0=0/0x1,nw_tos=8,nw_ecn=1",
        ),
        (
            "tcp,tp_dst=0x50/0xfff0,ct_label=0x1/0xf,tcp_flags=+syn-ack,metadata=0x5,ct_state=+trk",
            "ct_state=+trk,ct_label=0x1/0xf,tcp,metadata=0x5,tp_dst=0x50/0xfff0,tcp_flags=+syn-ack",
        ),
        (
            "tun_dst=1.2.3.4,tun_src=2.2.2.2,tun_id=0x5,arp,arp_spa=1.2.3.0/24,arp_op=1,in_port=1,vlan_tci=0x1005/0x1fff,arp_sha=00:11:22:33:44:55",
            "arp,tun_id=0x5,tun_src=2.2.2.2,tun_dst=1.2.3.4,in_port=1,dl_vlan=5,arp_spa=1.2.3.0/24,arp_op=1,arp_sha=00:11:22:33:44:55",
        ),
        (
            "ipv6,ipv6_src=fe80::/64,ipv6_label=5,icmp6,icmp_type=135,nd_target=fe80::1,dl_vlan=5",
            "icmp6,dl_vlan=5,ipv6_src=fe80::/64,ipv6_label=0x00005,icmp_type=135,nd_target=fe80::1",
        ),
        (
            "ip,nw_src=10.0.0.0/255.0.255.0,udp,dl_src=01:00:00:00:00:00/01:00:00:00:00:00,xxreg1=0x5",
            "udp,reg4=0,reg5=0,reg6=0,reg7=0x5,dl_src=01:00:00:00:00:00/01:00:00:00:00:00,nw_src=10.0.0.0/255.0.255.0",
        ),
        (
            "ct_state=-trk,sctp,sctp_src=5,dl_type=0x0800",
            "ct_state=-trk,sctp,tp_src=5",
        ),
        (
            "icmp,icmp_type=8,icmp_code=0",
            "icmp,icmp_type=8,icmp_code=0",
        ),
        ("eth_type=0x1234", "dl_type=0x1234"),
        ("udp6,udp_dst=53", "udp6,tp_dst=53"),
        (
            "in_port=LOCAL,vlan_tci=0",
            "in_port=LOCAL,vlan_tci=0x0000/0x1fff",
        ),
        ("", ""),
    ];

    #[test]
    fn text_matches_ovs_ofctl() {
        for (input, expected) in CASES {
            let m: Match = input.parse().unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(m.to_string(), *expected, "{input}");
            let again: Match = expected.parse().unwrap();
            assert_eq!(again, m, "{expected}");
        }
    }

    #[test]
    fn text_errors_name_the_fragment() {
        let e = "ip,bogus=1".parse::<Match>().unwrap_err();
        assert_eq!(e.input, "bogus=1");
        let e = "ip,tp_dst=80".parse::<Match>().unwrap_err();
        assert_eq!(e.input, "tp_dst=80");
        assert!("nw_src=1.1.1.1".parse::<Match>().is_err());
        let e = "tcp,tp_dst=99999".parse::<Match>().unwrap_err();
        assert_eq!(e.input, "tp_dst=99999");
    }
}
