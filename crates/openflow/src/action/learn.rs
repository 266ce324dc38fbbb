//! The `learn(...)` action (`NXAST_LEARN`): the template of the flow it adds (table, timeouts,
//! priority, cookie, flags) and its specs (match a field, load into a field, output to a port).

use std::fmt;

use crate::oxm::Subfield;
use crate::oxm::tlv::{emit_nxm_header, emit_value, parse_field_header, read_value};
use crate::oxm::value::{format_mf_value, parse_value};
use crate::text::{alt_hex, key_value, parse_num, parse_uint, split_top};
use crate::{DecodeError, TextError};

/// `NX_LEARN_F_SEND_FLOW_REM`.
pub const LEARN_SEND_FLOW_REM: u16 = 1;
/// `NX_LEARN_F_DELETE_LEARNED`.
pub const LEARN_DELETE_LEARNED: u16 = 2;

const SRC_IMMEDIATE: u16 = 1 << 13;
const DST_LOAD: u16 = 1 << 11;
const DST_OUTPUT: u16 = 2 << 11;
const DST_MASK: u16 = 3 << 11;
const N_BITS_MASK: u16 = 0x3ff;

/// One learn spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LearnSpec {
    /// The learned flow matches `dst` against the value of `src` in the current packet.
    MatchField { dst: Subfield, src: Subfield },
    /// The learned flow matches `dst` against a constant.
    MatchImm { dst: Subfield, value: u128 },
    /// The learned flow loads `src` of the current packet into `dst`.
    LoadField { src: Subfield, dst: Subfield },
    /// The learned flow loads a constant into `dst`.
    LoadImm { value: u128, dst: Subfield },
    /// The learned flow outputs to the port in `src` of the current packet.
    Output { src: Subfield },
}

/// `learn(...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learn {
    pub table: u8,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub fin_idle_timeout: u16,
    pub fin_hard_timeout: u16,
    pub priority: u16,
    pub cookie: u64,
    /// `LEARN_SEND_FLOW_REM` | `LEARN_DELETE_LEARNED`.
    pub flags: u16,
    pub specs: Vec<LearnSpec>,
}

impl Default for Learn {
    fn default() -> Learn {
        Learn {
            table: 1,
            idle_timeout: 0,
            hard_timeout: 0,
            fin_idle_timeout: 0,
            fin_hard_timeout: 0,
            priority: 0x8000,
            cookie: 0,
            flags: 0,
            specs: Vec::new(),
        }
    }
}

fn imm_len(n_bits: u16) -> usize {
    usize::from(n_bits.div_ceil(16)) * 2
}

fn emit_subfield(out: &mut Vec<u8>, sf: &Subfield) {
    emit_nxm_header(out, sf.field);
    out.extend_from_slice(&sf.ofs.to_be_bytes());
}

fn parse_subfield(buf: &[u8], n_bits: u16) -> Result<(Subfield, usize), DecodeError> {
    let (field, hlen) = parse_field_header(buf)?;
    DecodeError::need("learn spec subfield", buf, hlen + 2)?;
    let sf = Subfield {
        field,
        ofs: u16::from_be_bytes([buf[hlen], buf[hlen + 1]]),
        n_bits,
    };
    sf.check().map_err(|reason| DecodeError::Invalid {
        what: "learn spec",
        reason,
    })?;
    Ok((sf, hlen + 2))
}

impl LearnSpec {
    fn n_bits(&self) -> u16 {
        match self {
            LearnSpec::MatchField { dst, .. }
            | LearnSpec::MatchImm { dst, .. }
            | LearnSpec::LoadField { dst, .. }
            | LearnSpec::LoadImm { dst, .. } => dst.n_bits,
            LearnSpec::Output { src } => src.n_bits,
        }
    }

    fn emit(&self, out: &mut Vec<u8>) {
        let n = self.n_bits();
        let (header, imm, src, dst) = match self {
            LearnSpec::MatchField { dst, src } => (0, None, Some(src), Some(dst)),
            LearnSpec::MatchImm { dst, value } => (SRC_IMMEDIATE, Some(*value), None, Some(dst)),
            LearnSpec::LoadField { src, dst } => (DST_LOAD, None, Some(src), Some(dst)),
            LearnSpec::LoadImm { value, dst } => {
                (SRC_IMMEDIATE | DST_LOAD, Some(*value), None, Some(dst))
            }
            LearnSpec::Output { src } => (DST_OUTPUT, None, Some(src), None),
        };
        out.extend_from_slice(&(header | (n & N_BITS_MASK)).to_be_bytes());
        if let Some(v) = imm {
            emit_value(out, v, imm_len(n) as u8);
        }
        if let Some(src) = src {
            emit_subfield(out, src);
        }
        if let Some(dst) = dst {
            emit_subfield(out, dst);
        }
    }

    /// Decodes one spec; `Ok(None)` at the terminating zero header.
    fn parse(buf: &[u8]) -> Result<Option<(LearnSpec, usize)>, DecodeError> {
        DecodeError::need("learn spec", buf, 2)?;
        let header = u16::from_be_bytes([buf[0], buf[1]]);
        if header == 0 {
            return Ok(None);
        }
        let n = header & N_BITS_MASK;
        if n == 0 || header & !(SRC_IMMEDIATE | DST_MASK | N_BITS_MASK) != 0 {
            return Err(DecodeError::Invalid {
                what: "learn spec",
                reason: format!("header {header:#06x}"),
            });
        }
        let mut at = 2;
        let imm = header & SRC_IMMEDIATE != 0;
        let dst_kind = header & DST_MASK;
        let mut value = 0;
        let mut src = None;
        if imm {
            let len = imm_len(n);
            if len > 16 {
                return Err(DecodeError::Invalid {
                    what: "learn spec",
                    reason: format!("{n}-bit immediate"),
                });
            }
            DecodeError::need("learn spec immediate", &buf[at..], len)?;
            value = read_value(&buf[at..at + len]);
            at += len;
        } else {
            let (sf, used) = parse_subfield(&buf[at..], n)?;
            src = Some(sf);
            at += used;
        }
        let spec = match (dst_kind, src) {
            (DST_OUTPUT, Some(src)) => LearnSpec::Output { src },
            (DST_OUTPUT, None) => {
                return Err(DecodeError::Invalid {
                    what: "learn spec",
                    reason: "output from an immediate".into(),
                });
            }
            (0 | DST_LOAD, _) => {
                let (dst, used) = parse_subfield(&buf[at..], n)?;
                at += used;
                match (dst_kind, src) {
                    (0, Some(src)) => LearnSpec::MatchField { dst, src },
                    (0, None) => LearnSpec::MatchImm { dst, value },
                    (_, Some(src)) => LearnSpec::LoadField { src, dst },
                    (_, None) => LearnSpec::LoadImm { value, dst },
                }
            }
            _ => {
                return Err(DecodeError::Invalid {
                    what: "learn spec",
                    reason: format!("destination type {dst_kind:#x}"),
                });
            }
        };
        Ok(Some((spec, at)))
    }

    fn parse_text(item: &str) -> Result<LearnSpec, TextError> {
        let sub = |s: &str| s.parse::<Subfield>();
        if let Some(rest) = item.strip_prefix("load:") {
            let (src, dst) = rest
                .split_once("->")
                .ok_or_else(|| TextError::new(item, "load needs SRC->DST"))?;
            let dst = sub(dst)?;
            return Ok(if src.starts_with(|c: char| c.is_ascii_digit()) {
                LearnSpec::LoadImm {
                    value: parse_uint(src, u32::from(dst.n_bits))?,
                    dst,
                }
            } else {
                LearnSpec::LoadField {
                    src: sub(src)?,
                    dst,
                }
            });
        }
        if let Some(rest) = item.strip_prefix("output:") {
            return Ok(LearnSpec::Output { src: sub(rest)? });
        }
        match item.split_once('=') {
            None => {
                let sf = sub(item)?;
                Ok(LearnSpec::MatchField { dst: sf, src: sf })
            }
            Some((dst, src)) => {
                let dst = sub(dst)?;
                if let Ok(src) = sub(src) {
                    return Ok(LearnSpec::MatchField { dst, src });
                }
                let value = if dst.is_whole() {
                    let (v, m) = parse_value(dst.field, src)?;
                    if m != dst.field.full_mask() {
                        return Err(TextError::new(item, "learn matches cannot be masked"));
                    }
                    v
                } else {
                    parse_uint(src, u32::from(dst.n_bits))?
                };
                Ok(LearnSpec::MatchImm { dst, value })
            }
        }
    }
}

impl fmt::Display for LearnSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LearnSpec::MatchImm { dst, value } if dst.is_whole() => {
                write!(
                    f,
                    "{}={}",
                    dst.field.def().name,
                    format_mf_value(dst.field, *value, dst.field.full_mask())
                )
            }
            LearnSpec::MatchImm { dst, value } => write!(f, "{dst}={}", alt_hex(*value)),
            LearnSpec::MatchField { dst, src } if dst.field == src.field && dst.ofs == src.ofs => {
                write!(f, "{dst}")
            }
            LearnSpec::MatchField { dst, src } => write!(f, "{dst}={src}"),
            LearnSpec::LoadImm { value, dst } => write!(f, "load:{}->{dst}", alt_hex(*value)),
            LearnSpec::LoadField { src, dst } => write!(f, "load:{src}->{dst}"),
            LearnSpec::Output { src } => write!(f, "output:{src}"),
        }
    }
}

impl Learn {
    /// Appends the body after the 10-byte Nicira header (padding excluded).
    pub(crate) fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.idle_timeout.to_be_bytes());
        out.extend_from_slice(&self.hard_timeout.to_be_bytes());
        out.extend_from_slice(&self.priority.to_be_bytes());
        out.extend_from_slice(&self.cookie.to_be_bytes());
        out.extend_from_slice(&self.flags.to_be_bytes());
        out.push(self.table);
        out.push(0);
        out.extend_from_slice(&self.fin_idle_timeout.to_be_bytes());
        out.extend_from_slice(&self.fin_hard_timeout.to_be_bytes());
        for spec in &self.specs {
            spec.emit(out);
        }
    }

    /// Decodes the body after the Nicira header (trailing zero padding allowed).
    pub(crate) fn parse_body(body: &[u8]) -> Result<Learn, DecodeError> {
        DecodeError::need("nx_action_learn", body, 22)?;
        let u16_at = |i: usize| u16::from_be_bytes([body[i], body[i + 1]]);
        let mut cookie = [0u8; 8];
        cookie.copy_from_slice(&body[6..14]);
        let mut learn = Learn {
            idle_timeout: u16_at(0),
            hard_timeout: u16_at(2),
            priority: u16_at(4),
            cookie: u64::from_be_bytes(cookie),
            flags: u16_at(14),
            table: body[16],
            fin_idle_timeout: u16_at(18),
            fin_hard_timeout: u16_at(20),
            specs: Vec::new(),
        };
        let mut rest = &body[22..];
        while rest.len() >= 2 {
            match LearnSpec::parse(rest)? {
                Some((spec, used)) => {
                    learn.specs.push(spec);
                    rest = &rest[used..];
                }
                None => break,
            }
        }
        if rest.iter().any(|b| *b != 0) {
            return Err(DecodeError::Invalid {
                what: "nx_action_learn",
                reason: "non-zero bytes after the last spec".into(),
            });
        }
        Ok(learn)
    }

    /// Parses the arguments of `learn(...)`.
    pub(crate) fn parse_args(args: &str) -> Result<Learn, TextError> {
        let mut l = Learn::default();
        for item in split_top(args, ',') {
            match key_value(item) {
                ("table", Some(v)) => l.table = parse_num(v)?,
                ("idle_timeout", Some(v)) => l.idle_timeout = parse_num(v)?,
                ("hard_timeout", Some(v)) => l.hard_timeout = parse_num(v)?,
                ("fin_idle_timeout", Some(v)) => l.fin_idle_timeout = parse_num(v)?,
                ("fin_hard_timeout", Some(v)) => l.fin_hard_timeout = parse_num(v)?,
                ("priority", Some(v)) => l.priority = parse_num(v)?,
                ("cookie", Some(v)) => l.cookie = parse_num(v)?,
                ("send_flow_rem", None) => l.flags |= LEARN_SEND_FLOW_REM,
                ("delete_learned", None) => l.flags |= LEARN_DELETE_LEARNED,
                _ => l
                    .specs
                    .push(LearnSpec::parse_text(item).map_err(|e| TextError::new(item, e.reason))?),
            }
        }
        Ok(l)
    }
}

impl fmt::Display for Learn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "learn(table={}", self.table)?;
        for (v, name) in [
            (self.idle_timeout, "idle_timeout"),
            (self.hard_timeout, "hard_timeout"),
            (self.fin_idle_timeout, "fin_idle_timeout"),
            (self.fin_hard_timeout, "fin_hard_timeout"),
        ] {
            if v != 0 {
                write!(f, ",{name}={v}")?;
            }
        }
        if self.priority != 0x8000 {
            write!(f, ",priority={}", self.priority)?;
        }
        if self.flags & LEARN_SEND_FLOW_REM != 0 {
            f.write_str(",send_flow_rem")?;
        }
        if self.flags & LEARN_DELETE_LEARNED != 0 {
            f.write_str(",delete_learned")?;
        }
        if self.cookie != 0 {
            write!(f, ",cookie={:#x}", self.cookie)?;
        }
        for spec in &self.specs {
            write!(f, ",{spec}")?;
        }
        f.write_str(")")
    }
}
