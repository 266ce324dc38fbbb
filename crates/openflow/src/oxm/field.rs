//! The field table: every match/set-field field this crate knows, with its OXM/NXM class and
//! number, width, maskability, `ovs-ofctl` names and prerequisites. Encoding, decoding and the
//! text syntax all look fields up here.

use std::collections::HashMap;
use std::sync::OnceLock;

/// OXM classes (`ofp_oxm_class`) used by OVS.
pub mod class {
    /// Nicira extensions, original OpenFlow 1.0 fields (`NXM_OF_*`).
    pub const NXM_0: u16 = 0x0000;
    /// Nicira extensions (`NXM_NX_*`).
    pub const NXM_1: u16 = 0x0001;
    /// Standard OpenFlow basic fields (`OXM_OF_*`).
    pub const OPENFLOW_BASIC: u16 = 0x8000;
    /// OpenFlow 1.5 packet registers (`OXM_OF_PKT_REG*`, OVS's `xreg*`).
    pub const PACKET_REGS: u16 = 0x8001;
    /// Experimenter class: the header is followed by a 32-bit experimenter id.
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// A field. The declaration order is the order in which `ovs-ofctl` prints match fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    PktMark,
    DpHash,
    ConjId,
    CtState,
    CtZone,
    CtMark,
    CtLabel,
    CtNwSrc,
    CtNwDst,
    CtIpv6Src,
    CtIpv6Dst,
    CtNwProto,
    CtTpSrc,
    CtTpDst,
    /// 32-bit register `reg0`..`reg15`.
    Reg(u8),
    /// 64-bit register `xreg0`..`xreg7`: `reg(2n)` is its high half, `reg(2n+1)` its low half.
    Xreg(u8),
    /// 128-bit register `xxreg0`..`xxreg3`: `reg(4n)` (high) .. `reg(4n+3)` (low).
    Xxreg(u8),
    TunId,
    TunSrc,
    TunDst,
    Metadata,
    /// OpenFlow 1.5 32-bit input port (`OXM_OF_IN_PORT`).
    InPort,
    /// The 16-bit Nicira input port (`NXM_OF_IN_PORT`), used as a subfield in `move` and `learn`.
    InPortNxm,
    VlanVid,
    VlanPcp,
    EthSrc,
    EthDst,
    EthType,
    Ipv4Src,
    Ipv4Dst,
    Ipv6Src,
    Ipv6Dst,
    Ipv6Label,
    ArpSpa,
    ArpTpa,
    IpProto,
    ArpOp,
    ArpSha,
    ArpTha,
    IpDscp,
    IpEcn,
    Icmpv4Type,
    Icmpv4Code,
    Icmpv6Type,
    Icmpv6Code,
    TcpSrc,
    TcpDst,
    UdpSrc,
    UdpDst,
    SctpSrc,
    SctpDst,
    NdTarget,
    NdSll,
    NdTll,
    TcpFlags,
}

/// How a field's value is written in text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A port number or reserved port name.
    Port,
    /// Decimal.
    Dec,
    /// Hexadecimal.
    Hex,
    Mac,
    Ipv4,
    Ipv6,
    /// `+trk+new-est` style flags of `ct_state`.
    CtState,
    /// `+syn-ack` style flags of `tcp_flags`.
    TcpFlags,
    /// Ethertype: `0x0800` in matches.
    EthType,
    /// IPv6 flow label: `0x00005` in matches.
    FlowLabel,
    /// DSCP: shown shifted into the TOS byte as `nw_tos=` in matches.
    Dscp,
    /// VLAN id with the OFPVID_PRESENT bit, shown as `dl_vlan=`/`vlan_tci=` in matches.
    VlanVid,
}

/// What a packet must be for a field to be matchable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prereq {
    None,
    Ipv4,
    Ipv6,
    /// IPv4 or IPv6.
    Ip,
    Arp,
    Tcp,
    Udp,
    Sctp,
    Icmpv4,
    Icmpv6,
    /// A tracked, valid connection: `ct_state=-inv+trk`.
    Ct,
}

/// One row of the field table.
#[derive(Debug)]
pub struct FieldDef {
    pub field: Field,
    /// Class and field number of the header this crate emits.
    pub class: u16,
    pub code: u8,
    /// Another header that decodes to the same field (the NXM twin of an OXM field).
    pub alt: Option<(u16, u8)>,
    /// Width of the value on the wire.
    pub bytes: u8,
    /// Number of meaningful bits.
    pub bits: u16,
    pub maskable: bool,
    /// OVS's meta-flow name (`set_field:…->NAME`, learn specs).
    pub name: &'static str,
    /// The name `ovs-ofctl` prints in matches.
    pub match_name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// The name in subfield syntax (`NXM_NX_REG0[0..15]`).
    pub nxm_name: &'static str,
    pub kind: Kind,
    pub prereq: Prereq,
}

use Kind as K;
use Prereq as P;
use class::{NXM_0 as N0, NXM_1 as N1, OPENFLOW_BASIC as OB, PACKET_REGS as PR};

#[allow(clippy::too_many_arguments)]
const fn def(
    field: Field,
    class: u16,
    code: u8,
    alt: Option<(u16, u8)>,
    bytes: u8,
    bits: u16,
    maskable: bool,
    name: &'static str,
    match_name: &'static str,
    aliases: &'static [&'static str],
    nxm_name: &'static str,
    kind: Kind,
    prereq: Prereq,
) -> FieldDef {
    FieldDef {
        field,
        class,
        code,
        alt,
        bytes,
        bits,
        maskable,
        name,
        match_name,
        aliases,
        nxm_name,
        kind,
        prereq,
    }
}

/// A register field: `$field($n)` in `$class`, OXM field number `$num`, `$bytes` wide, printed
/// and parsed as `$name` (hex).
macro_rules! register {
    ($field:ident, $n:literal, $class:expr, $num:expr, $bytes:literal, $name:literal, $nxm:literal) => {
        def(
            Field::$field($n),
            $class,
            $num,
            None,
            $bytes,
            $bytes * 8,
            true,
            $name,
            $name,
            &[],
            $nxm,
            K::Hex,
            P::None,
        )
    };
}
macro_rules! reg {
    ($n:literal, $name:literal, $nxm:literal) => {
        register!(Reg, $n, N1, $n, 4, $name, $nxm)
    };
}
macro_rules! xreg {
    ($n:literal, $name:literal, $nxm:literal) => {
        register!(Xreg, $n, PR, $n, 8, $name, $nxm)
    };
}
macro_rules! xxreg {
    ($n:literal, $name:literal, $nxm:literal) => {
        register!(Xxreg, $n, N1, 111 + $n, 16, $name, $nxm)
    };
}

/// The field table.
#[rustfmt::skip]
pub static FIELDS: &[FieldDef] = &[
    def(Field::PktMark, N1, 33, None, 4, 32, true, "pkt_mark", "pkt_mark", &[], "NXM_NX_PKT_MARK", K::Hex, P::None),
    def(Field::DpHash, N1, 35, None, 4, 32, true, "dp_hash", "dp_hash", &[], "NXM_NX_DP_HASH", K::Hex, P::None),
    def(Field::ConjId, N1, 37, None, 4, 32, false, "conj_id", "conj_id", &[], "NXM_NX_CONJ_ID", K::Dec, P::None),
    def(Field::CtState, N1, 105, None, 4, 32, true, "ct_state", "ct_state", &[], "NXM_NX_CT_STATE", K::CtState, P::None),
    def(Field::CtZone, N1, 106, None, 2, 16, false, "ct_zone", "ct_zone", &[], "NXM_NX_CT_ZONE", K::Dec, P::None),
    def(Field::CtMark, N1, 107, None, 4, 32, true, "ct_mark", "ct_mark", &[], "NXM_NX_CT_MARK", K::Hex, P::None),
    def(Field::CtLabel, N1, 108, None, 16, 128, true, "ct_label", "ct_label", &[], "NXM_NX_CT_LABEL", K::Hex, P::None),
    def(Field::CtNwSrc, N1, 120, None, 4, 32, true, "ct_nw_src", "ct_nw_src", &[], "NXM_NX_CT_NW_SRC", K::Ipv4, P::Ct),
    def(Field::CtNwDst, N1, 121, None, 4, 32, true, "ct_nw_dst", "ct_nw_dst", &[], "NXM_NX_CT_NW_DST", K::Ipv4, P::Ct),
    def(Field::CtIpv6Src, N1, 122, None, 16, 128, true, "ct_ipv6_src", "ct_ipv6_src", &[], "NXM_NX_CT_IPV6_SRC", K::Ipv6, P::Ct),
    def(Field::CtIpv6Dst, N1, 123, None, 16, 128, true, "ct_ipv6_dst", "ct_ipv6_dst", &[], "NXM_NX_CT_IPV6_DST", K::Ipv6, P::Ct),
    def(Field::CtNwProto, N1, 119, None, 1, 8, false, "ct_nw_proto", "ct_nw_proto", &[], "NXM_NX_CT_NW_PROTO", K::Dec, P::Ct),
    def(Field::CtTpSrc, N1, 124, None, 2, 16, true, "ct_tp_src", "ct_tp_src", &[], "NXM_NX_CT_TP_SRC", K::Dec, P::Ct),
    def(Field::CtTpDst, N1, 125, None, 2, 16, true, "ct_tp_dst", "ct_tp_dst", &[], "NXM_NX_CT_TP_DST", K::Dec, P::Ct),
    reg!(0, "reg0", "NXM_NX_REG0"),
    reg!(1, "reg1", "NXM_NX_REG1"),
    reg!(2, "reg2", "NXM_NX_REG2"),
    reg!(3, "reg3", "NXM_NX_REG3"),
    reg!(4, "reg4", "NXM_NX_REG4"),
    reg!(5, "reg5", "NXM_NX_REG5"),
    reg!(6, "reg6", "NXM_NX_REG6"),
    reg!(7, "reg7", "NXM_NX_REG7"),
    reg!(8, "reg8", "NXM_NX_REG8"),
    reg!(9, "reg9", "NXM_NX_REG9"),
    reg!(10, "reg10", "NXM_NX_REG10"),
    reg!(11, "reg11", "NXM_NX_REG11"),
    reg!(12, "reg12", "NXM_NX_REG12"),
    reg!(13, "reg13", "NXM_NX_REG13"),
    reg!(14, "reg14", "NXM_NX_REG14"),
    reg!(15, "reg15", "NXM_NX_REG15"),
    xreg!(0, "xreg0", "OXM_OF_PKT_REG0"),
    xreg!(1, "xreg1", "OXM_OF_PKT_REG1"),
    xreg!(2, "xreg2", "OXM_OF_PKT_REG2"),
    xreg!(3, "xreg3", "OXM_OF_PKT_REG3"),
    xreg!(4, "xreg4", "OXM_OF_PKT_REG4"),
    xreg!(5, "xreg5", "OXM_OF_PKT_REG5"),
    xreg!(6, "xreg6", "OXM_OF_PKT_REG6"),
    xreg!(7, "xreg7", "OXM_OF_PKT_REG7"),
    xxreg!(0, "xxreg0", "NXM_NX_XXREG0"),
    xxreg!(1, "xxreg1", "NXM_NX_XXREG1"),
    xxreg!(2, "xxreg2", "NXM_NX_XXREG2"),
    xxreg!(3, "xxreg3", "NXM_NX_XXREG3"),
    def(Field::TunId, OB, 38, Some((N1, 16)), 8, 64, true, "tun_id", "tun_id", &["tunnel_id"], "NXM_NX_TUN_ID", K::Hex, P::None),
    def(Field::TunSrc, N1, 31, None, 4, 32, true, "tun_src", "tun_src", &["tun_ipv4_src"], "NXM_NX_TUN_IPV4_SRC", K::Ipv4, P::None),
    def(Field::TunDst, N1, 32, None, 4, 32, true, "tun_dst", "tun_dst", &["tun_ipv4_dst"], "NXM_NX_TUN_IPV4_DST", K::Ipv4, P::None),
    def(Field::Metadata, OB, 2, None, 8, 64, true, "metadata", "metadata", &[], "OXM_OF_METADATA", K::Hex, P::None),
    def(Field::InPort, OB, 0, None, 4, 32, false, "in_port_oxm", "in_port", &[], "OXM_OF_IN_PORT", K::Port, P::None),
    def(Field::InPortNxm, N0, 0, None, 2, 16, false, "in_port", "in_port", &[], "NXM_OF_IN_PORT", K::Port, P::None),
    def(Field::VlanVid, OB, 6, None, 2, 13, true, "vlan_vid", "dl_vlan", &[], "OXM_OF_VLAN_VID", K::VlanVid, P::None),
    def(Field::VlanPcp, OB, 7, None, 1, 3, false, "vlan_pcp", "dl_vlan_pcp", &[], "OXM_OF_VLAN_PCP", K::Dec, P::None),
    def(Field::EthSrc, OB, 4, Some((N0, 2)), 6, 48, true, "eth_src", "dl_src", &[], "NXM_OF_ETH_SRC", K::Mac, P::None),
    def(Field::EthDst, OB, 3, Some((N0, 1)), 6, 48, true, "eth_dst", "dl_dst", &[], "NXM_OF_ETH_DST", K::Mac, P::None),
    def(Field::EthType, OB, 5, Some((N0, 3)), 2, 16, false, "eth_type", "dl_type", &[], "NXM_OF_ETH_TYPE", K::EthType, P::None),
    def(Field::Ipv4Src, OB, 11, Some((N0, 7)), 4, 32, true, "ip_src", "nw_src", &["ipv4_src"], "NXM_OF_IP_SRC", K::Ipv4, P::Ipv4),
    def(Field::Ipv4Dst, OB, 12, Some((N0, 8)), 4, 32, true, "ip_dst", "nw_dst", &["ipv4_dst"], "NXM_OF_IP_DST", K::Ipv4, P::Ipv4),
    def(Field::Ipv6Src, OB, 26, Some((N1, 19)), 16, 128, true, "ipv6_src", "ipv6_src", &[], "NXM_NX_IPV6_SRC", K::Ipv6, P::Ipv6),
    def(Field::Ipv6Dst, OB, 27, Some((N1, 20)), 16, 128, true, "ipv6_dst", "ipv6_dst", &[], "NXM_NX_IPV6_DST", K::Ipv6, P::Ipv6),
    def(Field::Ipv6Label, OB, 28, Some((N1, 27)), 4, 20, true, "ipv6_label", "ipv6_label", &[], "NXM_NX_IPV6_LABEL", K::FlowLabel, P::Ipv6),
    def(Field::ArpSpa, OB, 22, Some((N0, 16)), 4, 32, true, "arp_spa", "arp_spa", &[], "NXM_OF_ARP_SPA", K::Ipv4, P::Arp),
    def(Field::ArpTpa, OB, 23, Some((N0, 17)), 4, 32, true, "arp_tpa", "arp_tpa", &[], "NXM_OF_ARP_TPA", K::Ipv4, P::Arp),
    def(Field::IpProto, OB, 10, Some((N0, 6)), 1, 8, false, "nw_proto", "nw_proto", &["ip_proto"], "NXM_OF_IP_PROTO", K::Dec, P::Ip),
    def(Field::ArpOp, OB, 21, Some((N0, 15)), 2, 16, false, "arp_op", "arp_op", &[], "NXM_OF_ARP_OP", K::Dec, P::Arp),
    def(Field::ArpSha, OB, 24, Some((N1, 17)), 6, 48, true, "arp_sha", "arp_sha", &[], "NXM_NX_ARP_SHA", K::Mac, P::Arp),
    def(Field::ArpTha, OB, 25, Some((N1, 18)), 6, 48, true, "arp_tha", "arp_tha", &[], "NXM_NX_ARP_THA", K::Mac, P::Arp),
    def(Field::IpDscp, OB, 8, None, 1, 6, false, "ip_dscp", "nw_tos", &[], "OXM_OF_IP_DSCP", K::Dscp, P::Ip),
    def(Field::IpEcn, OB, 9, Some((N1, 28)), 1, 2, false, "nw_ecn", "nw_ecn", &["ip_ecn"], "NXM_NX_IP_ECN", K::Dec, P::Ip),
    def(Field::Icmpv4Type, OB, 19, Some((N0, 13)), 1, 8, false, "icmp_type", "icmp_type", &["icmpv4_type"], "NXM_OF_ICMP_TYPE", K::Dec, P::Icmpv4),
    def(Field::Icmpv4Code, OB, 20, Some((N0, 14)), 1, 8, false, "icmp_code", "icmp_code", &["icmpv4_code"], "NXM_OF_ICMP_CODE", K::Dec, P::Icmpv4),
    def(Field::Icmpv6Type, OB, 29, Some((N1, 21)), 1, 8, false, "icmpv6_type", "icmp_type", &[], "NXM_NX_ICMPV6_TYPE", K::Dec, P::Icmpv6),
    def(Field::Icmpv6Code, OB, 30, Some((N1, 22)), 1, 8, false, "icmpv6_code", "icmp_code", &[], "NXM_NX_ICMPV6_CODE", K::Dec, P::Icmpv6),
    def(Field::TcpSrc, OB, 13, Some((N0, 9)), 2, 16, true, "tcp_src", "tp_src", &[], "NXM_OF_TCP_SRC", K::Dec, P::Tcp),
    def(Field::TcpDst, OB, 14, Some((N0, 10)), 2, 16, true, "tcp_dst", "tp_dst", &[], "NXM_OF_TCP_DST", K::Dec, P::Tcp),
    def(Field::UdpSrc, OB, 15, Some((N0, 11)), 2, 16, true, "udp_src", "tp_src", &[], "NXM_OF_UDP_SRC", K::Dec, P::Udp),
    def(Field::UdpDst, OB, 16, Some((N0, 12)), 2, 16, true, "udp_dst", "tp_dst", &[], "NXM_OF_UDP_DST", K::Dec, P::Udp),
    def(Field::SctpSrc, OB, 17, None, 2, 16, true, "sctp_src", "tp_src", &[], "OXM_OF_SCTP_SRC", K::Dec, P::Sctp),
    def(Field::SctpDst, OB, 18, None, 2, 16, true, "sctp_dst", "tp_dst", &[], "OXM_OF_SCTP_DST", K::Dec, P::Sctp),
    def(Field::NdTarget, OB, 31, Some((N1, 23)), 16, 128, true, "nd_target", "nd_target", &[], "NXM_NX_ND_TARGET", K::Ipv6, P::Icmpv6),
    def(Field::NdSll, OB, 32, Some((N1, 24)), 6, 48, true, "nd_sll", "nd_sll", &[], "NXM_NX_ND_SLL", K::Mac, P::Icmpv6),
    def(Field::NdTll, OB, 33, Some((N1, 25)), 6, 48, true, "nd_tll", "nd_tll", &[], "NXM_NX_ND_TLL", K::Mac, P::Icmpv6),
    def(Field::TcpFlags, OB, 42, Some((N1, 34)), 2, 12, true, "tcp_flags", "tcp_flags", &[], "NXM_NX_TCP_FLAGS", K::TcpFlags, P::Tcp),
];

fn by_header() -> &'static HashMap<(u16, u8), Field> {
    static BY_HEADER: OnceLock<HashMap<(u16, u8), Field>> = OnceLock::new();
    BY_HEADER.get_or_init(|| {
        let mut m = HashMap::new();
        for d in FIELDS {
            m.insert((d.class, d.code), d.field);
            if let Some(alt) = d.alt {
                m.insert(alt, d.field);
            }
        }
        m
    })
}

fn by_name() -> &'static HashMap<&'static str, Field> {
    static BY_NAME: OnceLock<HashMap<&'static str, Field>> = OnceLock::new();
    BY_NAME.get_or_init(|| {
        let mut m = HashMap::new();
        for d in FIELDS {
            m.insert(d.nxm_name, d.field);
            for a in d.aliases {
                m.insert(*a, d.field);
            }
            m.entry(d.match_name).or_insert(d.field);
            m.insert(d.name, d.field);
        }
        m
    })
}

impl Field {
    /// This field's row in [`FIELDS`].
    pub fn def(self) -> &'static FieldDef {
        // FIELDS is sorted in `Field` order (a test checks it). Every `Field` value this crate
        // builds has a row; an out-of-range register index (say `Reg(40)`) falls back to the
        // first row rather than panicking.
        let i = FIELDS.binary_search_by(|d| d.field.cmp(&self)).unwrap_or(0);
        &FIELDS[i]
    }

    /// The field an OXM/NXM class and field number denote.
    pub fn from_header(class: u16, code: u8) -> Option<Field> {
        by_header().get(&(class, code)).copied()
    }

    /// Looks a field up by any of its names (meta-flow name, match name, alias or NXM name).
    pub fn from_name(name: &str) -> Option<Field> {
        by_name().get(name).copied()
    }

    /// All ones over the field's meaningful bits.
    pub fn full_mask(self) -> u128 {
        let bits = self.def().bits;
        if bits >= 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        }
    }

    /// For registers wider than 32 bits, the 32-bit registers they are made of, high half first.
    pub fn reg_parts(self) -> Option<(u8, u8)> {
        match self {
            Field::Xreg(n) => Some((n * 2, 2)),
            Field::Xxreg(n) => Some((n * 4, 4)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        assert!(
            FIELDS.windows(2).all(|w| w[0].field < w[1].field),
            "FIELDS must be sorted in Field order"
        );
        let mut headers = std::collections::HashSet::new();
        for d in FIELDS {
            assert_eq!(d.field.def().name, d.name);
            assert!(
                headers.insert((d.class, d.code)),
                "duplicate header for {}",
                d.name
            );
            assert!(
                usize::from(d.bits) <= usize::from(d.bytes) * 8,
                "{}",
                d.name
            );
            assert_eq!(Field::from_header(d.class, d.code), Some(d.field));
            assert_eq!(Field::from_name(d.nxm_name), Some(d.field));
            assert_eq!(Field::from_name(d.name), Some(d.field));
        }
        for d in FIELDS {
            if let Some(alt) = d.alt {
                assert!(
                    headers.insert(alt),
                    "alternate header of {} collides",
                    d.name
                );
            }
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(Field::from_header(class::NXM_1, 3), Some(Field::Reg(3)));
        assert_eq!(
            Field::from_header(class::PACKET_REGS, 2),
            Some(Field::Xreg(2))
        );
        assert_eq!(Field::from_header(class::NXM_1, 16), Some(Field::TunId));
        assert_eq!(Field::from_name("nw_src"), Some(Field::Ipv4Src));
        assert_eq!(Field::from_name("NXM_OF_IN_PORT"), Some(Field::InPortNxm));
        // As in OVS, `in_port` in actions and learn specs is the 16-bit field; matches map it to
        // the OpenFlow 1.5 field themselves.
        assert_eq!(Field::from_name("in_port"), Some(Field::InPortNxm));
        assert_eq!(Field::from_name("in_port_oxm"), Some(Field::InPort));
        assert_eq!(Field::from_name("tp_src"), Some(Field::TcpSrc));
        assert_eq!(Field::from_name("icmp_type"), Some(Field::Icmpv4Type));
        assert_eq!(Field::Xxreg(1).reg_parts(), Some((4, 4)));
        assert_eq!(Field::VlanVid.full_mask(), 0x1fff);
        assert_eq!(Field::CtLabel.full_mask(), u128::MAX);
    }
}
