//! The connection-tracking action `ct(...)` (`NXAST_CT`) with its zone, commit/force flags,
//! recirculation table, ALG and nested actions, and the `nat(...)` it may carry (`NXAST_NAT`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::Action;
use crate::oxm::Subfield;
use crate::text::{key_value, parse_ipv4, parse_ipv6, parse_num, split_top};
use crate::{DecodeError, TextError};

/// `NX_CT_F_COMMIT`.
pub const CT_COMMIT: u16 = 1;
/// `NX_CT_F_FORCE`.
pub const CT_FORCE: u16 = 2;
/// `NX_CT_RECIRC_NONE`: no recirculation table.
pub const CT_NO_TABLE: u8 = 0xff;

/// Where the conntrack zone comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtZone {
    /// A fixed zone (0 is the default zone).
    Imm(u16),
    /// The zone held in a field's bits.
    Field(Subfield),
}

/// `ct(...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ct {
    pub commit: bool,
    pub force: bool,
    /// Table to recirculate to after conntrack (never `Some(255)`, the wire's "none").
    pub table: Option<u8>,
    pub zone: CtZone,
    /// Application-layer gateway port (21 ftp, 69 tftp), 0 for none.
    pub alg: u16,
    /// NAT to apply, written first among the nested actions.
    pub nat: Option<Nat>,
    /// Other nested actions (`exec(...)`): set_field/move to ct_mark and ct_label.
    pub exec: Vec<Action>,
}

impl Default for Ct {
    fn default() -> Ct {
        Ct {
            commit: false,
            force: false,
            table: None,
            zone: CtZone::Imm(0),
            alg: 0,
            nat: None,
            exec: Vec::new(),
        }
    }
}

/// Source or destination NAT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NatKind {
    Src,
    Dst,
}

/// `nat` / `nat(src|dst[=ADDR[-ADDR]][:PORT[-PORT]][,persistent][,hash][,random])`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Nat {
    pub kind: Option<NatKind>,
    /// Address range (min, max); both IPv4 or both IPv6.
    pub addrs: Option<(IpAddr, IpAddr)>,
    /// Port range (min, max).
    pub ports: Option<(u16, u16)>,
    pub persistent: bool,
    pub hash: bool,
    pub random: bool,
}

const NAT_SRC: u16 = 1;
const NAT_DST: u16 = 2;
const NAT_PERSISTENT: u16 = 4;
const NAT_HASH: u16 = 8;
const NAT_RANDOM: u16 = 16;
const RANGE_IPV4_MIN: u16 = 1;
const RANGE_IPV4_MAX: u16 = 2;
const RANGE_IPV6_MIN: u16 = 4;
const RANGE_IPV6_MAX: u16 = 8;
const RANGE_PROTO_MIN: u16 = 16;
const RANGE_PROTO_MAX: u16 = 32;

impl Nat {
    /// Appends the `nx_action_nat` body after the 10-byte Nicira header (padding excluded).
    pub(crate) fn emit_body(&self, out: &mut Vec<u8>) {
        let mut flags = match self.kind {
            Some(NatKind::Src) => NAT_SRC,
            Some(NatKind::Dst) => NAT_DST,
            None => 0,
        };
        for (set, bit) in [
            (self.persistent, NAT_PERSISTENT),
            (self.hash, NAT_HASH),
            (self.random, NAT_RANDOM),
        ] {
            if set {
                flags |= bit;
            }
        }
        let mut present = 0u16;
        let mut ranges = Vec::new();
        match self.addrs {
            Some((IpAddr::V4(min), IpAddr::V4(max))) => {
                present |= RANGE_IPV4_MIN;
                ranges.extend_from_slice(&min.octets());
                if max != min {
                    present |= RANGE_IPV4_MAX;
                    ranges.extend_from_slice(&max.octets());
                }
            }
            Some((IpAddr::V6(min), max)) => {
                present |= RANGE_IPV6_MIN;
                ranges.extend_from_slice(&min.octets());
                if let IpAddr::V6(max) = max
                    && max != min
                {
                    present |= RANGE_IPV6_MAX;
                    ranges.extend_from_slice(&max.octets());
                }
            }
            Some((IpAddr::V4(min), IpAddr::V6(_))) => {
                present |= RANGE_IPV4_MIN;
                ranges.extend_from_slice(&min.octets());
            }
            None => {}
        }
        if let Some((min, max)) = self.ports {
            present |= RANGE_PROTO_MIN;
            ranges.extend_from_slice(&min.to_be_bytes());
            if max != min {
                present |= RANGE_PROTO_MAX;
                ranges.extend_from_slice(&max.to_be_bytes());
            }
        }
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&flags.to_be_bytes());
        out.extend_from_slice(&present.to_be_bytes());
        out.extend_from_slice(&ranges);
    }

    /// Decodes the body after the Nicira header (padding may follow).
    pub(crate) fn parse_body(body: &[u8]) -> Result<Nat, DecodeError> {
        DecodeError::need("nx_action_nat", body, 6)?;
        let flags = u16::from_be_bytes([body[2], body[3]]);
        let present = u16::from_be_bytes([body[4], body[5]]);
        let mut rest = &body[6..];
        let mut take = |n: usize| -> Result<&[u8], DecodeError> {
            DecodeError::need("nx_action_nat range", rest, n)?;
            let (a, b) = rest.split_at(n);
            rest = b;
            Ok(a)
        };
        let kind = match (flags & NAT_SRC != 0, flags & NAT_DST != 0) {
            (true, false) => Some(NatKind::Src),
            (false, true) => Some(NatKind::Dst),
            (false, false) => None,
            (true, true) => {
                return Err(DecodeError::Invalid {
                    what: "nx_action_nat",
                    reason: "both src and dst".into(),
                });
            }
        };
        let v4 = |b: &[u8]| IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3]));
        let v6 = |b: &[u8]| {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            IpAddr::V6(Ipv6Addr::from(a))
        };
        let mut addrs = None;
        if present & RANGE_IPV4_MIN != 0 {
            let min = v4(take(4)?);
            let max = if present & RANGE_IPV4_MAX != 0 {
                v4(take(4)?)
            } else {
                min
            };
            addrs = Some((min, max));
        }
        if present & RANGE_IPV6_MIN != 0 {
            let min = v6(take(16)?);
            let max = if present & RANGE_IPV6_MAX != 0 {
                v6(take(16)?)
            } else {
                min
            };
            addrs = Some((min, max));
        }
        let mut ports = None;
        if present & RANGE_PROTO_MIN != 0 {
            let b = take(2)?;
            let min = u16::from_be_bytes([b[0], b[1]]);
            let max = if present & RANGE_PROTO_MAX != 0 {
                let b = take(2)?;
                u16::from_be_bytes([b[0], b[1]])
            } else {
                min
            };
            ports = Some((min, max));
        }
        Ok(Nat {
            kind,
            addrs,
            ports,
            persistent: flags & NAT_PERSISTENT != 0,
            hash: flags & NAT_HASH != 0,
            random: flags & NAT_RANDOM != 0,
        })
    }

    /// Parses the arguments of `nat(...)`.
    pub(crate) fn parse_args(args: &str) -> Result<Nat, TextError> {
        let mut nat = Nat::default();
        for item in split_top(args, ',') {
            let (key, value) = match item.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (item, None),
            };
            match key {
                "src" | "dst" => {
                    nat.kind = Some(if key == "src" {
                        NatKind::Src
                    } else {
                        NatKind::Dst
                    });
                    if let Some(v) = value {
                        let (addrs, ports) =
                            parse_nat_range(v).map_err(|e| TextError::new(item, e.reason))?;
                        nat.addrs = Some(addrs);
                        nat.ports = ports;
                    }
                }
                "persistent" => nat.persistent = true,
                "hash" => nat.hash = true,
                "random" => nat.random = true,
                _ => return Err(TextError::new(item, "unknown nat argument")),
            }
        }
        Ok(nat)
    }
}

type NatRange = ((IpAddr, IpAddr), Option<(u16, u16)>);

fn parse_range<T: Copy>(
    s: &str,
    one: impl Fn(&str) -> Result<T, TextError>,
) -> Result<(T, T), TextError> {
    match s.split_once('-') {
        Some((a, b)) => Ok((one(a)?, one(b)?)),
        None => {
            let v = one(s)?;
            Ok((v, v))
        }
    }
}

fn parse_nat_range(s: &str) -> Result<NatRange, TextError> {
    let (addr_text, port_text) = if s.starts_with('[') {
        match s.rfind("]:") {
            Some(i) => (&s[..=i], Some(&s[i + 2..])),
            None => (s, None),
        }
    } else if s.contains("::") || s.matches(':').count() > 1 {
        (s, None)
    } else {
        match s.split_once(':') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        }
    };
    let addrs = if addr_text.contains(':') {
        let (a, b) = parse_range(addr_text, parse_ipv6)?;
        (IpAddr::V6(a), IpAddr::V6(b))
    } else {
        let (a, b) = parse_range(addr_text, parse_ipv4)?;
        (IpAddr::V4(a), IpAddr::V4(b))
    };
    let ports = port_text
        .map(|p| parse_range(p, parse_num::<u16>))
        .transpose()?;
    Ok((addrs, ports))
}

impl fmt::Display for Nat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("nat")?;
        let Some(kind) = self.kind else { return Ok(()) };
        f.write_str(if kind == NatKind::Src { "(src" } else { "(dst" })?;
        let bracket = self.ports.is_some();
        let addr = |a: IpAddr| match a {
            IpAddr::V6(v6) if bracket => format!("[{v6}]"),
            other => other.to_string(),
        };
        if let Some((min, max)) = self.addrs {
            write!(f, "={}", addr(min))?;
            if max != min {
                write!(f, "-{}", addr(max))?;
            }
        }
        if let Some((min, max)) = self.ports {
            write!(f, ":{min}")?;
            if max != min {
                write!(f, "-{max}")?;
            }
        }
        for (set, name) in [
            (self.persistent, ",persistent"),
            (self.hash, ",hash"),
            (self.random, ",random"),
        ] {
            if set {
                f.write_str(name)?;
            }
        }
        f.write_str(")")
    }
}

/// ALG names `ovs-ofctl` prints.
fn alg_name(alg: u16) -> String {
    match alg {
        21 => "ftp".to_string(),
        69 => "tftp".to_string(),
        other => other.to_string(),
    }
}

impl Ct {
    /// Parses the arguments of `ct(...)`.
    pub(crate) fn parse_args(args: &str) -> Result<Ct, TextError> {
        let mut ct = Ct::default();
        for item in split_top(args, ',') {
            if let Some((name, inner)) = crate::text::call(item) {
                match name {
                    "nat" => ct.nat = Some(Nat::parse_args(inner)?),
                    "exec" => ct.exec = super::text::parse_action_list(inner)?,
                    _ => return Err(TextError::new(item, "unknown ct argument")),
                }
                continue;
            }
            match key_value(item) {
                ("commit", None) => ct.commit = true,
                ("force", None) => ct.force = true,
                ("nat", None) => ct.nat = Some(Nat::default()),
                ("table", Some(v)) => {
                    ct.table = Some(parse_num::<u8>(v)?).filter(|t| *t != CT_NO_TABLE)
                }
                ("zone", Some(v)) => {
                    ct.zone = if v.starts_with(|c: char| c.is_ascii_digit()) {
                        CtZone::Imm(parse_num(v)?)
                    } else {
                        CtZone::Field(v.parse()?)
                    }
                }
                ("alg", Some(v)) => {
                    ct.alg = match v {
                        "ftp" => 21,
                        "tftp" => 69,
                        n => parse_num(n)?,
                    }
                }
                _ => return Err(TextError::new(item, "unknown ct argument")),
            }
        }
        Ok(ct)
    }
}

impl fmt::Display for Ct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.commit {
            parts.push("commit".to_string());
        }
        if self.force {
            parts.push("force".to_string());
        }
        if let Some(t) = self.table {
            parts.push(format!("table={t}"));
        }
        match self.zone {
            CtZone::Field(sf) => parts.push(format!("zone={sf}")),
            CtZone::Imm(0) => {}
            CtZone::Imm(z) => parts.push(format!("zone={z}")),
        }
        if let Some(nat) = &self.nat {
            parts.push(nat.to_string());
        }
        if !self.exec.is_empty() {
            parts.push(format!(
                "exec({})",
                super::text::format_action_list(&self.exec)
            ));
        }
        if self.alg != 0 {
            parts.push(format!("alg={}", alg_name(self.alg)));
        }
        write!(f, "ct({})", parts.join(","))
    }
}
