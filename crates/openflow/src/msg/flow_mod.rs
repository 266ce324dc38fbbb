//! `OFPT_FLOW_MOD` (OpenFlow 1.5): add, modify or delete flows, and its `ovs-ofctl add-flow` /
//! `del-flows` text form.

use std::fmt;
use std::str::FromStr;

use crate::action::Instructions;
use crate::header::msg_type;
use crate::message::Message;
use crate::oxm::{Match, PortNo};
use crate::text::{key_value, parse_num, split_top};
use crate::{DecodeError, TextError};

/// `OFP_NO_BUFFER`.
pub const NO_BUFFER: u32 = 0xffff_ffff;
/// `OFPG_ANY`.
pub const GROUP_ANY: u32 = 0xffff_ffff;
/// `OFPTT_ALL`.
pub const TABLE_ALL: u8 = 0xff;
/// `OFP_DEFAULT_PRIORITY`.
pub const DEFAULT_PRIORITY: u16 = 0x8000;

/// `ofp_flow_mod_flags`.
pub mod flow_flags {
    pub const SEND_FLOW_REM: u16 = 1;
    pub const CHECK_OVERLAP: u16 = 2;
    pub const RESET_COUNTS: u16 = 4;
    pub const NO_PKT_COUNTS: u16 = 8;
    pub const NO_BYT_COUNTS: u16 = 16;
}

/// Flag names as `ovs-ofctl` writes them, in bit order.
pub(crate) const FLAG_NAMES: [(u16, &str); 5] = [
    (flow_flags::SEND_FLOW_REM, "send_flow_rem"),
    (flow_flags::CHECK_OVERLAP, "check_overlap"),
    (flow_flags::RESET_COUNTS, "reset_counts"),
    (flow_flags::NO_PKT_COUNTS, "no_packet_counts"),
    (flow_flags::NO_BYT_COUNTS, "no_byte_counts"),
];

/// `ofp_flow_mod_command`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowModCommand {
    Add = 0,
    Modify = 1,
    ModifyStrict = 2,
    Delete = 3,
    DeleteStrict = 4,
}

impl FlowModCommand {
    fn from_u8(v: u8) -> Result<FlowModCommand, DecodeError> {
        Ok(match v {
            0 => FlowModCommand::Add,
            1 => FlowModCommand::Modify,
            2 => FlowModCommand::ModifyStrict,
            3 => FlowModCommand::Delete,
            4 => FlowModCommand::DeleteStrict,
            other => {
                return Err(DecodeError::Unsupported {
                    what: "flow_mod command",
                    value: u64::from(other),
                });
            }
        })
    }

    /// Whether the command carries instructions (add and modify do, delete does not).
    pub fn has_instructions(self) -> bool {
        matches!(
            self,
            FlowModCommand::Add | FlowModCommand::Modify | FlowModCommand::ModifyStrict
        )
    }
}

/// `OFPT_FLOW_MOD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowMod {
    pub command: FlowModCommand,
    pub cookie: u64,
    /// For modify/delete: which cookie bits must match (0: any cookie).
    pub cookie_mask: u64,
    pub table_id: u8,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub priority: u16,
    pub buffer_id: u32,
    /// For delete: only flows that output to this port (`ANY`: no restriction).
    pub out_port: PortNo,
    /// For delete: only flows that output to this group (`GROUP_ANY`: no restriction).
    pub out_group: u32,
    /// [`flow_flags`] bits.
    pub flags: u16,
    pub importance: u16,
    pub flow_match: Match,
    pub instructions: Instructions,
}

/// Length of the fixed part of the body (after the 8-byte header, before the match).
const FIXED_LEN: usize = 40;

impl FlowMod {
    /// A flow mod with OpenFlow's defaults: table 0, default priority, no timeouts, no cookie.
    pub fn new(command: FlowModCommand) -> FlowMod {
        FlowMod {
            command,
            cookie: 0,
            cookie_mask: 0,
            table_id: if matches!(
                command,
                FlowModCommand::Delete | FlowModCommand::DeleteStrict
            ) {
                TABLE_ALL
            } else {
                0
            },
            idle_timeout: 0,
            hard_timeout: 0,
            priority: DEFAULT_PRIORITY,
            buffer_id: NO_BUFFER,
            out_port: PortNo::ANY,
            out_group: GROUP_ANY,
            flags: 0,
            importance: 0,
            flow_match: Match::new(),
            instructions: Instructions::default(),
        }
    }

    /// Decodes a whole `OFPT_FLOW_MOD` message (header included): the fuzzing entry point.
    pub fn decode(buf: &[u8]) -> Result<(FlowMod, u32), DecodeError> {
        <FlowMod as Message>::parse(buf)
    }

    /// Parses flow text for `command`: `add-flow` syntax (`MATCH actions=ACTIONS`) for add and
    /// modify, a `del-flows` match for delete.
    pub fn from_text(command: FlowModCommand, text: &str) -> Result<FlowMod, TextError> {
        let mut fm = FlowMod::new(command);
        let (match_text, actions_text) = split_actions(text);
        match (command.has_instructions(), actions_text) {
            (true, Some(a)) => fm.instructions = a.parse()?,
            (true, None) => return Err(TextError::new(text, "missing actions=")),
            (false, Some(_)) => return Err(TextError::new(text, "delete takes no actions")),
            (false, None) => {}
        }
        let mut pending = Vec::new();
        for item in split_top(match_text, ',') {
            if fm.flow_match.apply_text_item(item, &mut pending)? {
                continue;
            }
            match key_value(item) {
                ("table", Some(v)) => fm.table_id = parse_num(v)?,
                ("priority", Some(v)) => fm.priority = parse_num(v)?,
                ("idle_timeout", Some(v)) => fm.idle_timeout = parse_num(v)?,
                ("hard_timeout", Some(v)) => fm.hard_timeout = parse_num(v)?,
                ("importance", Some(v)) => fm.importance = parse_num(v)?,
                ("out_port", Some(v)) => fm.out_port = v.parse()?,
                ("out_group", Some(v)) => fm.out_group = parse_num(v)?,
                ("cookie", Some(v)) => match v.split_once('/') {
                    // As in ovs-ofctl: the mask selects flows to modify or delete.
                    Some(_) if command == FlowModCommand::Add => {
                        return Err(TextError::new(
                            item,
                            "flow additions cannot use a cookie mask",
                        ));
                    }
                    Some((c, m)) => {
                        fm.cookie = parse_num(c)?;
                        fm.cookie_mask = if m == "-1" { u64::MAX } else { parse_num(m)? };
                    }
                    None => {
                        fm.cookie = parse_num(v)?;
                        if !command.has_instructions() || command != FlowModCommand::Add {
                            fm.cookie_mask = u64::MAX;
                        }
                    }
                },
                (name, None) => match FLAG_NAMES.iter().find(|(_, n)| *n == name) {
                    Some((bit, _)) => fm.flags |= bit,
                    None => {
                        return Err(TextError::new(item, "unknown match field or flow keyword"));
                    }
                },
                _ => return Err(TextError::new(item, "unknown match field or flow keyword")),
            }
        }
        fm.flow_match.finish_text(pending)?;
        Ok(fm)
    }
}

/// Splits flow text at ` actions=` / `,actions=` (whichever comes first at the top level).
pub(crate) fn split_actions(text: &str) -> (&str, Option<&str>) {
    let mut depth = 0i32;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            'a' if depth == 0
                && text[i..].starts_with("actions=")
                && (i == 0 || matches!(bytes[i - 1], b' ' | b',' | b'\t')) =>
            {
                return (
                    text[..i].trim_end_matches([' ', ',', '\t']),
                    Some(text[i + "actions=".len()..].trim()),
                );
            }
            _ => {}
        }
    }
    (text.trim(), None)
}

impl Message for FlowMod {
    const TYPE: u8 = msg_type::FLOW_MOD;

    fn emit_body(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.cookie.to_be_bytes());
        out.extend_from_slice(&self.cookie_mask.to_be_bytes());
        out.push(self.table_id);
        out.push(self.command as u8);
        out.extend_from_slice(&self.idle_timeout.to_be_bytes());
        out.extend_from_slice(&self.hard_timeout.to_be_bytes());
        out.extend_from_slice(&self.priority.to_be_bytes());
        out.extend_from_slice(&self.buffer_id.to_be_bytes());
        out.extend_from_slice(&self.out_port.0.to_be_bytes());
        out.extend_from_slice(&self.out_group.to_be_bytes());
        out.extend_from_slice(&self.flags.to_be_bytes());
        out.extend_from_slice(&self.importance.to_be_bytes());
        self.flow_match.emit(out);
        self.instructions.emit(out);
    }

    fn parse_body(body: &[u8]) -> Result<FlowMod, DecodeError> {
        DecodeError::need("ofp_flow_mod", body, FIXED_LEN)?;
        let u16_at = |i: usize| u16::from_be_bytes([body[i], body[i + 1]]);
        let u32_at =
            |i: usize| u32::from_be_bytes([body[i], body[i + 1], body[i + 2], body[i + 3]]);
        let u64_at = |i: usize| (u64::from(u32_at(i)) << 32) | u64::from(u32_at(i + 4));
        let (flow_match, used) = Match::parse(&body[FIXED_LEN..])?;
        Ok(FlowMod {
            cookie: u64_at(0),
            cookie_mask: u64_at(8),
            table_id: body[16],
            command: FlowModCommand::from_u8(body[17])?,
            idle_timeout: u16_at(18),
            hard_timeout: u16_at(20),
            priority: u16_at(22),
            buffer_id: u32_at(24),
            out_port: PortNo(u32_at(28)),
            out_group: u32_at(32),
            flags: u16_at(36),
            importance: u16_at(38),
            flow_match,
            instructions: Instructions::parse(&body[FIXED_LEN + used..])?,
        })
    }
}

/// Writes `priority=N,` + match the way `ovs-ofctl` does: the priority only when it is not the
/// default, nothing at all for an empty match.
pub(crate) fn format_priority_and_match(priority: u16, m: &Match) -> String {
    let mut parts = Vec::new();
    if priority != DEFAULT_PRIORITY {
        parts.push(format!("priority={priority}"));
    }
    let text = m.to_string();
    if !text.is_empty() {
        parts.push(text);
    }
    parts.join(",")
}

impl fmt::Display for FlowMod {
    /// `add-flow` syntax (`table=1,cookie=0x5,priority=200,ip actions=drop`) for add/modify; the
    /// match part alone for delete.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let default_table = if self.command.has_instructions() {
            0
        } else {
            TABLE_ALL
        };
        if self.table_id != default_table {
            parts.push(format!("table={}", self.table_id));
        }
        if self.cookie != 0 || self.cookie_mask != 0 {
            if self.command == FlowModCommand::Add || self.cookie_mask == u64::MAX {
                parts.push(format!("cookie={:#x}", self.cookie));
            } else {
                parts.push(format!("cookie={:#x}/{:#x}", self.cookie, self.cookie_mask));
            }
        }
        for (v, name) in [
            (self.idle_timeout, "idle_timeout"),
            (self.hard_timeout, "hard_timeout"),
            (self.importance, "importance"),
        ] {
            if v != 0 {
                parts.push(format!("{name}={v}"));
            }
        }
        for (bit, name) in FLAG_NAMES {
            if self.flags & bit != 0 {
                parts.push(name.to_string());
            }
        }
        if self.out_port != PortNo::ANY {
            parts.push(format!("out_port={}", self.out_port));
        }
        if self.out_group != GROUP_ANY {
            parts.push(format!("out_group={}", self.out_group));
        }
        let m = format_priority_and_match(self.priority, &self.flow_match);
        if !m.is_empty() {
            parts.push(m);
        }
        let head = parts.join(",");
        if !self.command.has_instructions() {
            return f.write_str(&head);
        }
        if head.is_empty() {
            write!(f, "actions={}", self.instructions)
        } else {
            write!(f, "{head} actions={}", self.instructions)
        }
    }
}

impl FromStr for FlowMod {
    type Err = TextError;

    /// Parses `add-flow` syntax as an add.
    fn from_str(s: &str) -> Result<FlowMod, TextError> {
        FlowMod::from_text(FlowModCommand::Add, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Action;
    use crate::oxm::Field;

    #[test]
    fn flow_mod_bytes() {
        let mut fm = FlowMod::new(FlowModCommand::Add);
        fm.cookie = 0x5;
        fm.table_id = 1;
        fm.priority = 200;
        fm.flow_match = Match::new().with(Field::EthType, 0x0800);
        fm.instructions = Instructions::apply(vec![Action::output(1)]);
        let b = fm.to_bytes(7).unwrap();
        let expected: Vec<u8> = [
            &[6, 14, 0, 88, 0, 0, 0, 7][..],
            &[0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0],
            &[1, 0, 0, 0, 0, 0, 0, 200],
            &[
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
            ],
            &[0, 1, 0, 10, 0x80, 0, 0x0a, 2, 8, 0, 0, 0, 0, 0, 0, 0],
            &[
                0, 4, 0, 24, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
            ],
        ]
        .concat();
        assert_eq!(b, expected);
        assert_eq!(FlowMod::decode(&b), Ok((fm, 7)));
    }

    #[test]
    fn text_round_trip() {
        for text in [
            "table=1,cookie=0x5,priority=200,ip,nw_src=10.0.0.0/24 actions=output:1",
            "table=3,cookie=0x5,idle_timeout=5,hard_timeout=6,importance=3,send_flow_rem,check_overlap,reset_counts,priority=10 actions=drop",
            "actions=drop",
            "priority=0 actions=goto_table:1",
        ] {
            let fm: FlowMod = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(fm.to_string(), text);
        }
        let del = FlowMod::from_text(FlowModCommand::Delete, "table=1,cookie=0x5/0xff,ip").unwrap();
        assert_eq!((del.table_id, del.cookie, del.cookie_mask), (1, 5, 0xff));
        assert_eq!(del.to_string(), "table=1,cookie=0x5/0xff,ip");
        let all = FlowMod::from_text(FlowModCommand::Delete, "").unwrap();
        assert_eq!(all.table_id, TABLE_ALL);
        assert_eq!(all.to_string(), "");
        let table0 = FlowMod::from_text(FlowModCommand::Delete, "table=0,ip").unwrap();
        // Found by fuzzing: an add with a cookie mask printed without it.
        assert_eq!(
            "cookie=0x1/0x1,ip actions=drop"
                .parse::<FlowMod>()
                .unwrap_err()
                .input,
            "cookie=0x1/0x1"
        );
        let modify =
            FlowMod::from_text(FlowModCommand::Modify, "cookie=0x1/0x3,ip actions=drop").unwrap();
        assert_eq!(modify.to_string(), "cookie=0x1/0x3,ip actions=drop");
        assert_eq!(table0.to_string(), "table=0,ip");
        assert!(FlowMod::from_text(FlowModCommand::Delete, "ip actions=drop").is_err());
        assert!("ip".parse::<FlowMod>().is_err());
        assert_eq!(
            "ip,bogus actions=drop"
                .parse::<FlowMod>()
                .unwrap_err()
                .input,
            "bogus"
        );
    }

    #[test]
    fn rejects_malformed() {
        assert!(FlowMod::parse_body(&[0; 39]).is_err());
        let mut body = vec![0u8; 40];
        body[17] = 9;
        body.extend_from_slice(&[0, 1, 0, 4, 0, 0, 0, 0]);
        assert!(matches!(
            FlowMod::parse_body(&body),
            Err(DecodeError::Unsupported { .. })
        ));
    }
}
