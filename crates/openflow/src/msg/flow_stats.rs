//! Flow statistics in OpenFlow 1.5: the `OFPMP_FLOW_DESC` multipart request and reply
//! (`ofp_flow_desc` entries with OXS statistics), and the `ovs-ofctl dump-flows` line syntax of
//! an entry.

use std::fmt;

use super::flow_mod::{FLAG_NAMES, FlowMod, GROUP_ANY, TABLE_ALL, format_priority_and_match};
use super::multipart::{self, mp_type};
use crate::DecodeError;
use crate::action::Instructions;
use crate::header::msg_type;
use crate::message::Message;
use crate::oxm::{Match, PortNo};

/// `OFPXSC_OPENFLOW_BASIC`, the OXS class of the standard statistics.
const OXS_CLASS_BASIC: u16 = 0x8002;
const OXS_DURATION: u8 = 0;
const OXS_IDLE_TIME: u8 = 1;
const OXS_FLOW_COUNT: u8 = 3;
const OXS_PACKET_COUNT: u8 = 4;
const OXS_BYTE_COUNT: u8 = 5;

/// A duration as OpenFlow carries it: seconds and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Duration {
    pub sec: u32,
    pub nsec: u32,
}

impl Duration {
    fn from_u64(v: u64) -> Duration {
        Duration {
            sec: (v >> 32) as u32,
            nsec: v as u32,
        }
    }

    fn to_u64(self) -> u64 {
        (u64::from(self.sec) << 32) | u64::from(self.nsec)
    }
}

impl fmt::Display for Duration {
    /// `1.5s`, `3s`: seconds with the nanoseconds' trailing zeros removed, as `ovs-ofctl` prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.sec)?;
        if self.nsec > 0 {
            let frac = format!("{:09}", self.nsec);
            write!(f, ".{}", frac.trim_end_matches('0'))?;
        }
        f.write_str("s")
    }
}

/// The OXS statistics of a flow (`ofp_stats`); absent fields were not reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowStatsCounters {
    pub duration: Option<Duration>,
    pub idle_time: Option<Duration>,
    pub flow_count: Option<u32>,
    pub packet_count: Option<u64>,
    pub byte_count: Option<u64>,
}

impl FlowStatsCounters {
    fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0, 0, 0, 0]);
        let mut put = |field: u8, value: &[u8]| {
            let header =
                (u32::from(OXS_CLASS_BASIC) << 16) | (u32::from(field) << 9) | value.len() as u32;
            out.extend_from_slice(&header.to_be_bytes());
            out.extend_from_slice(value);
        };
        if let Some(d) = self.duration {
            put(OXS_DURATION, &d.to_u64().to_be_bytes());
        }
        if let Some(d) = self.idle_time {
            put(OXS_IDLE_TIME, &d.to_u64().to_be_bytes());
        }
        if let Some(n) = self.flow_count {
            put(OXS_FLOW_COUNT, &n.to_be_bytes());
        }
        if let Some(n) = self.packet_count {
            put(OXS_PACKET_COUNT, &n.to_be_bytes());
        }
        if let Some(n) = self.byte_count {
            put(OXS_BYTE_COUNT, &n.to_be_bytes());
        }
        let len = out.len() - start;
        out[start + 2..start + 4].copy_from_slice(&(len as u16).to_be_bytes());
        out.resize(start + len.next_multiple_of(8), 0);
    }

    /// Decodes `ofp_stats`; returns it and its padded length.
    fn parse(buf: &[u8]) -> Result<(FlowStatsCounters, usize), DecodeError> {
        DecodeError::need("ofp_stats", buf, 4)?;
        let len = usize::from(u16::from_be_bytes([buf[2], buf[3]]));
        if len < 4 {
            return Err(DecodeError::BadLength {
                what: "ofp_stats",
                len,
            });
        }
        let padded = len.next_multiple_of(8);
        DecodeError::need("ofp_stats", buf, padded)?;
        let mut s = FlowStatsCounters::default();
        let mut rest = &buf[4..len];
        while !rest.is_empty() {
            DecodeError::need("OXS field", rest, 4)?;
            let class = u16::from_be_bytes([rest[0], rest[1]]);
            let field = rest[2] >> 1;
            let flen = usize::from(rest[3]);
            DecodeError::need("OXS field", rest, 4 + flen)?;
            let v = &rest[4..4 + flen];
            let as_u64 = || -> Result<u64, DecodeError> {
                let b: [u8; 8] = v.try_into().map_err(|_| DecodeError::BadLength {
                    what: "OXS field",
                    len: flen,
                })?;
                Ok(u64::from_be_bytes(b))
            };
            if class == OXS_CLASS_BASIC {
                match field {
                    OXS_DURATION => s.duration = Some(Duration::from_u64(as_u64()?)),
                    OXS_IDLE_TIME => s.idle_time = Some(Duration::from_u64(as_u64()?)),
                    OXS_FLOW_COUNT => {
                        let b: [u8; 4] = v.try_into().map_err(|_| DecodeError::BadLength {
                            what: "OXS flow_count",
                            len: flen,
                        })?;
                        s.flow_count = Some(u32::from_be_bytes(b));
                    }
                    OXS_PACKET_COUNT => s.packet_count = Some(as_u64()?),
                    OXS_BYTE_COUNT => s.byte_count = Some(as_u64()?),
                    _ => {}
                }
            }
            rest = &rest[4 + flen..];
        }
        Ok((s, padded))
    }
}

/// One flow of a flow-desc reply (`ofp_flow_desc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowStats {
    pub table_id: u8,
    pub priority: u16,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub flags: u16,
    pub importance: u16,
    pub cookie: u64,
    pub flow_match: Match,
    pub stats: FlowStatsCounters,
    pub instructions: Instructions,
}

const FLOW_DESC_FIXED: usize = 24;

impl FlowStats {
    /// The entry a flow-desc reply has for the flow `fm` adds, without statistics: what to
    /// compare a dump against.
    pub fn of_flow_mod(fm: &FlowMod) -> FlowStats {
        FlowStats {
            table_id: fm.table_id,
            priority: fm.priority,
            idle_timeout: fm.idle_timeout,
            hard_timeout: fm.hard_timeout,
            flags: fm.flags,
            importance: fm.importance,
            cookie: fm.cookie,
            flow_match: fm.flow_match.clone(),
            stats: FlowStatsCounters::default(),
            instructions: fm.instructions.clone(),
        }
    }

    /// Appends one `ofp_flow_desc`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.push(self.table_id);
        out.push(0);
        for v in [
            self.priority,
            self.idle_timeout,
            self.hard_timeout,
            self.flags,
            self.importance,
        ] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.extend_from_slice(&self.cookie.to_be_bytes());
        self.flow_match.emit(out);
        self.stats.emit(out);
        self.instructions.emit(out);
        let len = (out.len() - start) as u16;
        out[start..start + 2].copy_from_slice(&len.to_be_bytes());
    }

    /// Decodes one `ofp_flow_desc`; returns it and its length.
    pub fn parse(buf: &[u8]) -> Result<(FlowStats, usize), DecodeError> {
        DecodeError::need("ofp_flow_desc", buf, FLOW_DESC_FIXED)?;
        let len = usize::from(u16::from_be_bytes([buf[0], buf[1]]));
        if len < FLOW_DESC_FIXED {
            return Err(DecodeError::BadLength {
                what: "ofp_flow_desc",
                len,
            });
        }
        DecodeError::need("ofp_flow_desc", buf, len)?;
        let b = &buf[..len];
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let mut cookie = [0u8; 8];
        cookie.copy_from_slice(&b[16..24]);
        let (flow_match, mlen) = Match::parse(&b[FLOW_DESC_FIXED..])?;
        let (stats, slen) = FlowStatsCounters::parse(&b[FLOW_DESC_FIXED + mlen..])?;
        let instructions = Instructions::parse(&b[FLOW_DESC_FIXED + mlen + slen..])?;
        let fs = FlowStats {
            table_id: b[4],
            priority: u16_at(6),
            idle_timeout: u16_at(8),
            hard_timeout: u16_at(10),
            flags: u16_at(12),
            importance: u16_at(14),
            cookie: u64::from_be_bytes(cookie),
            flow_match,
            stats,
            instructions,
        };
        Ok((fs, len))
    }
}

impl fmt::Display for FlowStats {
    /// One line of `ovs-ofctl -O OpenFlow15 dump-flows` (with statistics; note the leading space).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " cookie={:#x}, ", self.cookie)?;
        if let Some(d) = self.stats.duration {
            write!(f, "duration={d}, ")?;
        }
        write!(f, "table={}, ", self.table_id)?;
        write!(
            f,
            "n_packets={}, ",
            self.stats
                .packet_count
                .map(|n| n.to_string())
                .unwrap_or_else(|| "?".into())
        )?;
        write!(
            f,
            "n_bytes={}, ",
            self.stats
                .byte_count
                .map(|n| n.to_string())
                .unwrap_or_else(|| "?".into())
        )?;
        if self.idle_timeout != 0 {
            write!(f, "idle_timeout={}, ", self.idle_timeout)?;
        }
        if self.hard_timeout != 0 {
            write!(f, "hard_timeout={}, ", self.hard_timeout)?;
        }
        for (bit, name) in FLAG_NAMES {
            if self.flags & bit != 0 {
                write!(f, "{name} ")?;
            }
        }
        if self.importance != 0 {
            write!(f, "importance={}, ", self.importance)?;
        }
        if let Some(idle) = self.stats.idle_time {
            write!(f, "idle_age={}, ", idle.sec)?;
        }
        let m = format_priority_and_match(self.priority, &self.flow_match);
        if !m.is_empty() {
            write!(f, "{m} ")?;
        }
        write!(f, "actions={}", self.instructions)
    }
}

/// `OFPMP_FLOW_DESC` request: which flows to describe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowDescRequest {
    /// `TABLE_ALL` for every table.
    pub table_id: u8,
    pub out_port: PortNo,
    pub out_group: u32,
    pub cookie: u64,
    pub cookie_mask: u64,
    pub flow_match: Match,
}

impl Default for FlowDescRequest {
    /// Every flow in every table.
    fn default() -> FlowDescRequest {
        FlowDescRequest {
            table_id: TABLE_ALL,
            out_port: PortNo::ANY,
            out_group: GROUP_ANY,
            cookie: 0,
            cookie_mask: 0,
            flow_match: Match::new(),
        }
    }
}

impl Message for FlowDescRequest {
    const TYPE: u8 = msg_type::MULTIPART_REQUEST;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(out, mp_type::FLOW_DESC, 0);
        out.push(self.table_id);
        out.extend_from_slice(&[0; 3]);
        out.extend_from_slice(&self.out_port.0.to_be_bytes());
        out.extend_from_slice(&self.out_group.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.cookie.to_be_bytes());
        out.extend_from_slice(&self.cookie_mask.to_be_bytes());
        self.flow_match.emit(out);
    }

    fn parse_body(body: &[u8]) -> Result<FlowDescRequest, DecodeError> {
        let (ty, _, b) = multipart::parse_header(body)?;
        if ty != mp_type::FLOW_DESC {
            return Err(DecodeError::Invalid {
                what: "multipart request",
                reason: format!("type {ty} where FLOW_DESC was expected"),
            });
        }
        DecodeError::need("ofp_flow_stats_request", b, 32)?;
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| (u64::from(u32_at(i)) << 32) | u64::from(u32_at(i + 4));
        Ok(FlowDescRequest {
            table_id: b[0],
            out_port: PortNo(u32_at(4)),
            out_group: u32_at(8),
            cookie: u64_at(16),
            cookie_mask: u64_at(24),
            flow_match: Match::parse(&b[32..])?.0,
        })
    }
}

/// One `OFPMP_FLOW_DESC` reply message: some flows, and whether more replies follow.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FlowDescReply {
    pub more: bool,
    pub flows: Vec<FlowStats>,
}

impl FlowDescReply {
    /// Decodes a whole reply message (header included): the fuzzing entry point.
    pub fn decode(buf: &[u8]) -> Result<(FlowDescReply, u32), DecodeError> {
        <FlowDescReply as Message>::parse(buf)
    }
}

impl Message for FlowDescReply {
    const TYPE: u8 = msg_type::MULTIPART_REPLY;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(
            out,
            mp_type::FLOW_DESC,
            if self.more { multipart::MORE } else { 0 },
        );
        for flow in &self.flows {
            flow.emit(out);
        }
    }

    fn parse_body(body: &[u8]) -> Result<FlowDescReply, DecodeError> {
        let (ty, flags, mut rest) = multipart::parse_header(body)?;
        if ty != mp_type::FLOW_DESC {
            return Err(DecodeError::Invalid {
                what: "multipart reply",
                reason: format!("type {ty} where FLOW_DESC was expected"),
            });
        }
        let mut flows = Vec::new();
        while !rest.is_empty() {
            let (flow, used) = FlowStats::parse(rest)?;
            flows.push(flow);
            rest = &rest[used..];
        }
        Ok(FlowDescReply {
            more: flags & multipart::MORE != 0,
            flows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Action;
    use crate::msg::flow_mod::DEFAULT_PRIORITY;
    use crate::oxm::Field;

    fn sample() -> FlowStats {
        FlowStats {
            table_id: 1,
            priority: 200,
            idle_timeout: 0,
            hard_timeout: 0,
            flags: 0,
            importance: 0,
            cookie: 0x5,
            flow_match: Match::new().with(Field::EthType, 0x0800),
            stats: FlowStatsCounters {
                duration: Some(Duration {
                    sec: 3,
                    nsec: 500_000_000,
                }),
                idle_time: Some(Duration { sec: 2, nsec: 0 }),
                flow_count: None,
                packet_count: Some(7),
                byte_count: Some(700),
            },
            instructions: Instructions::apply(vec![Action::output(1)]),
        }
    }

    #[test]
    fn dump_flows_line() {
        assert_eq!(
            sample().to_string(),
            " cookie=0x5, duration=3.5s, table=1, n_packets=7, n_bytes=700, idle_age=2, priority=200,ip actions=output:1"
        );
        let mut f = sample();
        f.priority = DEFAULT_PRIORITY;
        f.flow_match = Match::new();
        f.instructions = Instructions::default();
        f.idle_timeout = 10;
        f.flags = 1;
        assert_eq!(
            f.to_string(),
            " cookie=0x5, duration=3.5s, table=1, n_packets=7, n_bytes=700, idle_timeout=10, send_flow_rem idle_age=2, actions=drop"
        );
    }

    #[test]
    fn reply_round_trip() {
        let reply = FlowDescReply {
            more: true,
            flows: vec![sample(), sample()],
        };
        let bytes = reply.to_bytes(9).unwrap();
        assert_eq!(FlowDescReply::decode(&bytes), Ok((reply, 9)));
        // ofp_flow_desc: length, pad, table, pad, priority ...
        assert_eq!(&bytes[16..24], &[0, 120, 0, 0, 1, 0, 0, 200]);
    }

    #[test]
    fn request_bytes() {
        let req = FlowDescRequest::default();
        let b = req.to_bytes(1).unwrap();
        assert_eq!(b.len(), 8 + 8 + 32 + 8);
        assert_eq!(&b[8..12], &[0, 1, 0, 0]);
        assert_eq!(<FlowDescRequest as Message>::parse(&b), Ok((req, 1)));
    }

    #[test]
    fn rejects_malformed() {
        let mut bytes = FlowDescReply {
            more: false,
            flows: vec![sample()],
        }
        .to_bytes(1)
        .unwrap();
        bytes[17] = 10; // flow_desc length too small
        assert!(FlowDescReply::decode(&bytes).is_err());
        assert!(FlowStatsCounters::parse(&[0, 0, 0, 12, 0x80, 2, 0, 8]).is_err());
    }
}
