//! Groups in OpenFlow 1.5: `OFPT_GROUP_MOD` with `ofp15_bucket`s (bucket ids, weight /
//! watch_port / watch_group properties) and the Netronome `selection_method` group property, the
//! `OFPMP_GROUP_DESC` multipart request and reply (and one group description longer than its
//! 16-bit lengths can say, [`GroupDesc::parse_unframed`]), and the `ovs-ofctl add-group` /
//! `dump-groups` text.

use std::fmt;
use std::str::FromStr;

use super::flow_mod::GROUP_ANY;
use super::multipart::{self, mp_type};
use crate::action::text::format_action_list;
use crate::action::{Action, emit_actions, parse_actions};
use crate::header::{experimenter, msg_type, u16_at, u32_at};
use crate::message::Message;
use crate::msg::property::{emit_property, split_properties};
use crate::oxm::tlv::{RawHeader, emit_header, emit_value, read_value};
use crate::oxm::{Field, PortNo};
use crate::text::{call, key_value, parse_num, split_top};
use crate::{DecodeError, TextError};

/// `OFPG_ALL`: every group (delete, desc request).
pub const GROUP_ALL: u32 = 0xffff_fffc;
/// `OFPG15_BUCKET_ALL`: the `command_bucket_id` of plain add/modify/delete.
pub const BUCKET_ALL: u32 = 0xffff_ffff;
/// `OFPG15_BUCKET_LAST`: the `command_bucket_id` of an insert after the group's last bucket.
pub const BUCKET_LAST: u32 = 0xffff_fffe;

const BUCKET_PROP_WEIGHT: u16 = 0;
const BUCKET_PROP_WATCH_PORT: u16 = 1;
const BUCKET_PROP_WATCH_GROUP: u16 = 2;
const PROP_EXPERIMENTER: u16 = 0xffff;
/// `ofp15_group_desc` without its buckets and properties.
const GROUP_DESC_LEN: usize = 16;
/// What a 16-bit length wraps at.
const LENGTH_WRAP: usize = 1 << 16;
/// Size of the NUL-terminated method name in the selection-method property.
const METHOD_NAME_LEN: usize = 16;
const NTRT_SELECTION_METHOD: u32 = 1;

/// `ofp_group_mod_command` (OpenFlow 1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupModCommand {
    Add = 0,
    Modify = 1,
    Delete = 2,
    InsertBucket = 3,
    RemoveBucket = 5,
    /// `OFPGC_ADD_OR_MOD` (an Open vSwitch extension, `ovs-ofctl --may-create mod-group`):
    /// adds the group, or replaces the one with the same id. Accepted inside bundles.
    AddOrModify = 0x8000,
}

/// `ofp_group_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupType {
    All = 0,
    Select = 1,
    Indirect = 2,
    FastFailover = 3,
}

impl GroupType {
    const NAMES: [(GroupType, &'static str); 4] = [
        (GroupType::All, "all"),
        (GroupType::Select, "select"),
        (GroupType::Indirect, "indirect"),
        (GroupType::FastFailover, "ff"),
    ];

    fn from_u8(v: u8) -> Result<GroupType, DecodeError> {
        Self::NAMES
            .get(usize::from(v))
            .map(|(t, _)| *t)
            .ok_or(DecodeError::Unsupported {
                what: "group type",
                value: u64::from(v),
            })
    }

    fn name(self) -> &'static str {
        Self::NAMES[self as usize].1
    }

    /// The weight a bucket has when none is given.
    fn default_weight(self) -> u16 {
        if self == GroupType::Select { 1 } else { 0 }
    }
}

/// A bucket (`ofp15_bucket`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    pub bucket_id: u32,
    /// Relative weight (select groups).
    pub weight: u16,
    /// Port whose liveness decides the bucket's (fast-failover groups).
    pub watch_port: Option<PortNo>,
    /// Group whose liveness decides the bucket's.
    pub watch_group: Option<u32>,
    pub actions: Vec<Action>,
}

/// The selection-method group property: how a select group picks a bucket.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelectionMethod {
    /// `hash` or `dp_hash`.
    pub method: String,
    pub param: u64,
    /// Fields hashed, with an optional mask.
    pub fields: Vec<(Field, Option<u128>)>,
}

/// The description of a group, shared by group mods and group-desc replies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDesc {
    pub group_type: GroupType,
    pub group_id: u32,
    pub buckets: Vec<Bucket>,
    pub selection: Option<SelectionMethod>,
}

/// `OFPT_GROUP_MOD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMod {
    pub command: GroupModCommand,
    /// For bucket insert/remove: the bucket id concerned; otherwise `BUCKET_ALL`.
    pub command_bucket_id: u32,
    pub group: GroupDesc,
}

impl Bucket {
    pub(super) fn emit(&self, group_type: GroupType, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.bucket_id.to_be_bytes());
        emit_actions(&self.actions, out);
        let actions_len = (out.len() - start - 8) as u16;
        if group_type == GroupType::Select || self.weight != 0 {
            emit_property(
                out,
                BUCKET_PROP_WEIGHT,
                &[(self.weight >> 8) as u8, self.weight as u8, 0, 0],
            );
        }
        if let Some(p) = self.watch_port {
            emit_property(out, BUCKET_PROP_WATCH_PORT, &p.0.to_be_bytes());
        }
        if let Some(g) = self.watch_group {
            emit_property(out, BUCKET_PROP_WATCH_GROUP, &g.to_be_bytes());
        }
        let len = (out.len() - start) as u16;
        out[start..start + 2].copy_from_slice(&len.to_be_bytes());
        out[start + 2..start + 4].copy_from_slice(&actions_len.to_be_bytes());
    }

    fn parse(buf: &[u8], group_type: GroupType) -> Result<(Bucket, usize), DecodeError> {
        DecodeError::need("ofp15_bucket", buf, 8)?;
        let len = usize::from(u16_at(buf, 0));
        let actions_len = usize::from(u16_at(buf, 2));
        if len < 8 || actions_len > len - 8 {
            return Err(DecodeError::BadLength {
                what: "ofp15_bucket",
                len,
            });
        }
        DecodeError::need("ofp15_bucket", buf, len)?;
        let mut bucket = Bucket {
            bucket_id: u32_at(buf, 4),
            weight: group_type.default_weight(),
            watch_port: None,
            watch_group: None,
            actions: parse_actions(&buf[8..8 + actions_len])?,
        };
        for (ty, body) in split_properties("bucket property", &buf[8 + actions_len..len])? {
            if body.len() != 4 {
                return Err(DecodeError::BadLength {
                    what: "bucket property",
                    len: body.len() + 4,
                });
            }
            match ty {
                BUCKET_PROP_WEIGHT => bucket.weight = u16_at(body, 0),
                BUCKET_PROP_WATCH_PORT => {
                    bucket.watch_port = Some(PortNo(u32_at(body, 0))).filter(|p| *p != PortNo::ANY)
                }
                BUCKET_PROP_WATCH_GROUP => {
                    bucket.watch_group = Some(u32_at(body, 0)).filter(|g| *g != GROUP_ANY)
                }
                other => {
                    return Err(DecodeError::Unsupported {
                        what: "bucket property",
                        value: u64::from(other),
                    });
                }
            }
        }
        Ok((bucket, len))
    }
}

impl SelectionMethod {
    /// Appends the experimenter group property.
    fn emit(&self, out: &mut Vec<u8>) {
        let mut body = Vec::with_capacity(36 + 8 * self.fields.len());
        body.extend_from_slice(&experimenter::NETRONOME.to_be_bytes());
        body.extend_from_slice(&NTRT_SELECTION_METHOD.to_be_bytes());
        body.extend_from_slice(&[0; 4]);
        // At most 15 bytes and a NUL; a longer name is cut at a character boundary.
        let mut name = [0u8; METHOD_NAME_LEN];
        let n = (0..METHOD_NAME_LEN)
            .rev()
            .find(|&i| self.method.is_char_boundary(i))
            .unwrap_or(0);
        name[..n].copy_from_slice(&self.method.as_bytes()[..n]);
        body.extend_from_slice(&name);
        body.extend_from_slice(&self.param.to_be_bytes());
        // Each field is a header followed by its mask (all ones for the whole field).
        for (field, mask) in &self.fields {
            emit_header(&mut body, *field, false);
            emit_value(
                &mut body,
                mask.unwrap_or(field.full_mask()),
                field.def().bytes,
            );
        }
        emit_property(out, PROP_EXPERIMENTER, &body);
    }

    /// Decodes the property body (after type and length; experimenter id and type included).
    fn parse(body: &[u8]) -> Result<SelectionMethod, DecodeError> {
        DecodeError::need("selection_method property", body, 36)?;
        let name = &body[12..28];
        let method = name
            .iter()
            .position(|b| *b == 0)
            .and_then(|end| std::str::from_utf8(&name[..end]).ok())
            .ok_or_else(|| DecodeError::Invalid {
                what: "selection_method property",
                reason: format!("method name {name:02x?} is not NUL-terminated UTF-8"),
            })?
            .to_owned();
        let mut param = [0u8; 8];
        param.copy_from_slice(&body[28..36]);
        let mut fields = Vec::new();
        let mut rest = &body[36..];
        while rest.len() >= 4 {
            let h = RawHeader::parse(rest)?;
            let field = h.field()?;
            let bytes = usize::from(field.def().bytes);
            DecodeError::need("selection field", rest, h.header_len + bytes)?;
            let mask = read_value(&rest[h.header_len..h.header_len + bytes]);
            fields.push((field, (mask != field.full_mask()).then_some(mask)));
            rest = &rest[h.header_len + bytes..];
        }
        if rest.iter().any(|b| *b != 0) {
            return Err(DecodeError::Invalid {
                what: "selection_method property",
                reason: "trailing bytes after the fields".into(),
            });
        }
        Ok(SelectionMethod {
            method,
            param: u64::from_be_bytes(param),
            fields,
        })
    }
}

impl GroupDesc {
    /// The groups the buckets' actions send to.
    pub fn group_ids(&self) -> impl Iterator<Item = u32> + '_ {
        crate::action::instructions::group_ids(self.buckets.iter().flat_map(|b| &b.actions))
    }

    /// Appends the buckets; returns their total length.
    fn emit_buckets(&self, out: &mut Vec<u8>) -> u16 {
        let start = out.len();
        for b in &self.buckets {
            b.emit(self.group_type, out);
        }
        (out.len() - start) as u16
    }

    fn emit_props(&self, out: &mut Vec<u8>) {
        if let Some(sel) = &self.selection {
            sel.emit(out);
        }
    }

    /// Decodes buckets (`buckets`) and group properties (`props`).
    fn parse_parts(
        group_type: GroupType,
        group_id: u32,
        mut buckets: &[u8],
        props: &[u8],
    ) -> Result<GroupDesc, DecodeError> {
        let mut g = GroupDesc {
            group_type,
            group_id,
            buckets: Vec::new(),
            selection: None,
        };
        while !buckets.is_empty() {
            let (b, used) = Bucket::parse(buckets, group_type)?;
            g.buckets.push(b);
            buckets = &buckets[used..];
        }
        for (ty, body) in split_properties("group property", props)? {
            if ty == PROP_EXPERIMENTER
                && body.len() >= 8
                && u32_at(body, 0) == experimenter::NETRONOME
                && u32_at(body, 4) == NTRT_SELECTION_METHOD
            {
                g.selection = Some(SelectionMethod::parse(body)?);
            } else {
                return Err(DecodeError::Unsupported {
                    what: "group property",
                    value: u64::from(ty),
                });
            }
        }
        Ok(g)
    }

    /// Decodes the one `ofp15_group_desc` that fills `desc`, which may be longer than 65,535
    /// bytes. Open vSwitch sends such a group alone in one reply, with its length and its
    /// bucket list's length wrapped modulo 65,536; `desc` is that reply's body after the
    /// multipart header, its real length known from the stream (see `conn::group_dump`). The
    /// group's length must be `desc`'s modulo 65,536. The bucket list is the longest that is
    /// congruent to the announced one and leaves room for the properties after it.
    pub fn parse_unframed(desc: &[u8]) -> Result<GroupDesc, DecodeError> {
        DecodeError::need("ofp15_group_desc", desc, GROUP_DESC_LEN)?;
        let announced = usize::from(u16_at(desc, 0));
        if announced != desc.len() % LENGTH_WRAP {
            return Err(DecodeError::BadLength {
                what: "ofp15_group_desc",
                len: announced,
            });
        }
        let room = desc.len() - GROUP_DESC_LEN;
        let announced_buckets = usize::from(u16_at(desc, 8));
        if announced_buckets > room {
            return Err(DecodeError::BadLength {
                what: "ofp15_group_desc bucket list",
                len: announced_buckets,
            });
        }
        let buckets_len =
            announced_buckets + (room - announced_buckets) / LENGTH_WRAP * LENGTH_WRAP;
        let (buckets, props) = desc[GROUP_DESC_LEN..].split_at(buckets_len);
        GroupDesc::parse_parts(
            GroupType::from_u8(desc[2])?,
            u32_at(desc, 4),
            buckets,
            props,
        )
    }

    /// Parses `group_id=…,type=…[,selection_method=…][,fields(…)],bucket=…`.
    pub fn from_text(s: &str) -> Result<GroupDesc, TextError> {
        let mut g = GroupDesc {
            group_type: GroupType::All,
            group_id: 0,
            buckets: Vec::new(),
            selection: None,
        };
        let mut saw_id = false;
        let mut in_actions = false;
        // Which buckets were given a weight; the others get the group type's default.
        let mut weighted: Vec<bool> = Vec::new();
        for item in split_top(s, ',') {
            if let Some(rest) = item.strip_prefix("bucket=") {
                g.buckets.push(Bucket {
                    bucket_id: g.buckets.len() as u32,
                    weight: 0,
                    watch_port: None,
                    watch_group: None,
                    actions: Vec::new(),
                });
                weighted.push(false);
                in_actions = false;
                if rest.is_empty() {
                    continue;
                }
                apply_bucket_item(&mut g, rest, &mut in_actions, &mut weighted)?;
                continue;
            }
            if !g.buckets.is_empty() {
                apply_bucket_item(&mut g, item, &mut in_actions, &mut weighted)?;
                continue;
            }
            if let Some(("fields", inner)) = call(item) {
                selection(&mut g).fields = parse_fields(inner)?;
                continue;
            }
            match key_value(item) {
                ("group_id", Some(v)) => {
                    g.group_id = parse_num(v)?;
                    saw_id = true;
                }
                ("type", Some(v)) => {
                    g.group_type = GroupType::NAMES
                        .iter()
                        .find(|(_, n)| *n == v)
                        .map(|(t, _)| *t)
                        .ok_or_else(|| TextError::new(item, "unknown group type"))?
                }
                ("selection_method", Some(v)) if v.len() < METHOD_NAME_LEN => {
                    selection(&mut g).method = v.to_string()
                }
                ("selection_method", Some(_)) => {
                    return Err(TextError::new(
                        item,
                        format!(
                            "a selection method name has at most {} bytes",
                            METHOD_NAME_LEN - 1
                        ),
                    ));
                }
                ("selection_method_param", Some(v)) => selection(&mut g).param = parse_num(v)?,
                ("fields", Some(v)) => selection(&mut g).fields = parse_fields(v)?,
                _ => return Err(TextError::new(item, "unknown group keyword")),
            }
        }
        if !saw_id {
            return Err(TextError::new(s, "missing group_id"));
        }
        let default_weight = g.group_type.default_weight();
        for (b, explicit) in g.buckets.iter_mut().zip(weighted) {
            if !explicit {
                b.weight = default_weight;
            }
        }
        Ok(g)
    }
}

fn selection(g: &mut GroupDesc) -> &mut SelectionMethod {
    g.selection.get_or_insert_with(SelectionMethod::default)
}

fn parse_fields(s: &str) -> Result<Vec<(Field, Option<u128>)>, TextError> {
    split_top(s, ',')
        .into_iter()
        .map(|item| {
            let (name, mask) = match item.split_once('=') {
                Some((n, m)) => (n, Some(m)),
                None => (item, None),
            };
            let field =
                Field::from_name(name).ok_or_else(|| TextError::new(item, "unknown field"))?;
            let mask = mask
                .map(|m| crate::oxm::value::parse_value(field, m).map(|(v, _)| v))
                .transpose()?;
            Ok((field, mask))
        })
        .collect()
}

fn apply_bucket_item(
    g: &mut GroupDesc,
    item: &str,
    in_actions: &mut bool,
    weighted: &mut [bool],
) -> Result<(), TextError> {
    let Some(bucket) = g.buckets.last_mut() else {
        return Err(TextError::new(item, "bucket item outside a bucket"));
    };
    if let Some(first) = item.strip_prefix("actions=") {
        *in_actions = true;
        bucket
            .actions
            .extend(crate::action::text::parse_action_list(first)?);
        return Ok(());
    }
    if !*in_actions {
        match key_value(item) {
            ("bucket_id", Some(v)) => {
                bucket.bucket_id = parse_num(v)?;
                return Ok(());
            }
            ("weight", Some(v)) => {
                bucket.weight = parse_num(v)?;
                if let Some(w) = weighted.last_mut() {
                    *w = true;
                }
                return Ok(());
            }
            ("watch_port", Some(v)) => {
                bucket.watch_port = Some(v.parse()?);
                return Ok(());
            }
            ("watch_group", Some(v)) => {
                bucket.watch_group = Some(parse_num(v)?);
                return Ok(());
            }
            _ => {}
        }
    }
    bucket.actions.push(item.parse()?);
    Ok(())
}

impl fmt::Display for GroupDesc {
    /// `group_id=1,type=select,selection_method=hash,bucket=bucket_id:0,weight:100,actions=output:1`
    /// as `ovs-ofctl -O OpenFlow15 dump-groups` prints it (without the leading space).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "group_id={},type={}",
            self.group_id,
            self.group_type.name()
        )?;
        if let Some(sel) = self.selection.as_ref().filter(|s| !s.method.is_empty()) {
            write!(f, ",selection_method={}", sel.method)?;
            if sel.param != 0 {
                write!(f, ",selection_method_param={}", sel.param)?;
            }
            let fields: Vec<String> = sel
                .fields
                .iter()
                .map(|(field, mask)| match mask {
                    Some(m) => format!(
                        "{}={}",
                        field.def().name,
                        crate::oxm::value::format_match_value(*field, *m, field.full_mask())
                    ),
                    None => field.def().name.to_string(),
                })
                .collect();
            match fields.len() {
                0 => {}
                1 => write!(f, ",fields={}", fields[0])?,
                _ => write!(f, ",fields({})", fields.join(","))?,
            }
        }
        for b in &self.buckets {
            write!(f, ",bucket=bucket_id:{},", b.bucket_id)?;
            if b.weight != self.group_type.default_weight() {
                write!(f, "weight:{},", b.weight)?;
            }
            if let Some(p) = b.watch_port {
                write!(f, "watch_port:{p},")?;
            }
            if let Some(g) = b.watch_group {
                write!(f, "watch_group:{g},")?;
            }
            write!(
                f,
                "actions={}",
                if b.actions.is_empty() {
                    "drop".to_string()
                } else {
                    format_action_list(&b.actions)
                }
            )?;
        }
        Ok(())
    }
}

impl GroupMod {
    /// Adds `group`.
    pub fn add(group: GroupDesc) -> GroupMod {
        GroupMod {
            command: GroupModCommand::Add,
            command_bucket_id: BUCKET_ALL,
            group,
        }
    }

    /// Replaces the group with the same id by `group`.
    pub fn modify(group: GroupDesc) -> GroupMod {
        GroupMod {
            command: GroupModCommand::Modify,
            command_bucket_id: BUCKET_ALL,
            group,
        }
    }

    /// Adds `group`, or replaces the group with the same id.
    pub fn add_or_modify(group: GroupDesc) -> GroupMod {
        GroupMod {
            command: GroupModCommand::AddOrModify,
            command_bucket_id: BUCKET_ALL,
            group,
        }
    }

    /// Deletes group `group_id` (`GROUP_ALL` for every group), and with it every flow that
    /// forwards to it.
    pub fn delete(group_id: u32) -> GroupMod {
        GroupMod {
            command: GroupModCommand::Delete,
            command_bucket_id: BUCKET_ALL,
            group: GroupDesc {
                group_type: GroupType::All,
                group_id,
                buckets: Vec::new(),
                selection: None,
            },
        }
    }

    /// Decodes a whole `OFPT_GROUP_MOD` message (header included): the fuzzing entry point.
    pub fn decode(buf: &[u8]) -> Result<(GroupMod, u32), DecodeError> {
        <GroupMod as Message>::parse(buf)
    }
}

impl Message for GroupMod {
    const TYPE: u8 = msg_type::GROUP_MOD;

    fn emit_body(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&(self.command as u16).to_be_bytes());
        out.push(self.group.group_type as u8);
        out.push(0);
        out.extend_from_slice(&self.group.group_id.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.command_bucket_id.to_be_bytes());
        let len = self.group.emit_buckets(out);
        out[start + 8..start + 10].copy_from_slice(&len.to_be_bytes());
        self.group.emit_props(out);
    }

    fn parse_body(body: &[u8]) -> Result<GroupMod, DecodeError> {
        DecodeError::need("ofp15_group_mod", body, 16)?;
        let command = match u16_at(body, 0) {
            0 => GroupModCommand::Add,
            1 => GroupModCommand::Modify,
            2 => GroupModCommand::Delete,
            3 => GroupModCommand::InsertBucket,
            5 => GroupModCommand::RemoveBucket,
            0x8000 => GroupModCommand::AddOrModify,
            other => {
                return Err(DecodeError::Unsupported {
                    what: "group_mod command",
                    value: u64::from(other),
                });
            }
        };
        let group_type = GroupType::from_u8(body[2])?;
        let blen = usize::from(u16_at(body, 8));
        DecodeError::need("group_mod buckets", &body[16..], blen)?;
        let group = GroupDesc::parse_parts(
            group_type,
            u32_at(body, 4),
            &body[16..16 + blen],
            &body[16 + blen..],
        )?;
        Ok(GroupMod {
            command,
            command_bucket_id: u32_at(body, 12),
            group,
        })
    }
}

impl fmt::Display for GroupMod {
    /// The `add-group` text of the group (the command is not part of the text).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.group)
    }
}

impl FromStr for GroupMod {
    type Err = TextError;

    /// Parses `add-group` text as an add.
    fn from_str(s: &str) -> Result<GroupMod, TextError> {
        Ok(GroupMod::add(GroupDesc::from_text(s)?))
    }
}

/// `OFPMP_GROUP_DESC` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupDescRequest {
    /// `GROUP_ALL` for every group.
    pub group_id: u32,
}

impl Message for GroupDescRequest {
    const TYPE: u8 = msg_type::MULTIPART_REQUEST;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(out, mp_type::GROUP_DESC, 0);
        out.extend_from_slice(&self.group_id.to_be_bytes());
        out.extend_from_slice(&[0; 4]);
    }

    fn parse_body(body: &[u8]) -> Result<GroupDescRequest, DecodeError> {
        let (ty, _, b) = multipart::parse_header(body)?;
        if ty != mp_type::GROUP_DESC {
            return Err(DecodeError::Invalid {
                what: "multipart request",
                reason: format!("type {ty} where GROUP_DESC was expected"),
            });
        }
        DecodeError::need("group desc request", b, 4)?;
        Ok(GroupDescRequest {
            group_id: u32_at(b, 0),
        })
    }
}

/// One `OFPMP_GROUP_DESC` reply message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupDescReply {
    pub more: bool,
    pub groups: Vec<GroupDesc>,
}

impl GroupDescReply {
    /// Decodes a whole reply message (header included): the fuzzing entry point.
    pub fn decode(buf: &[u8]) -> Result<(GroupDescReply, u32), DecodeError> {
        <GroupDescReply as Message>::parse(buf)
    }
}

impl Message for GroupDescReply {
    const TYPE: u8 = msg_type::MULTIPART_REPLY;

    fn emit_body(&self, out: &mut Vec<u8>) {
        multipart::emit_header(
            out,
            mp_type::GROUP_DESC,
            if self.more { multipart::MORE } else { 0 },
        );
        for g in &self.groups {
            let start = out.len();
            out.extend_from_slice(&[0, 0]);
            out.push(g.group_type as u8);
            out.push(0);
            out.extend_from_slice(&g.group_id.to_be_bytes());
            out.extend_from_slice(&[0; 8]);
            let blen = g.emit_buckets(out);
            out[start + 8..start + 10].copy_from_slice(&blen.to_be_bytes());
            g.emit_props(out);
            let len = (out.len() - start) as u16;
            out[start..start + 2].copy_from_slice(&len.to_be_bytes());
        }
    }

    fn parse_body(body: &[u8]) -> Result<GroupDescReply, DecodeError> {
        let (ty, flags, mut rest) = multipart::parse_header(body)?;
        if ty != mp_type::GROUP_DESC {
            return Err(DecodeError::Invalid {
                what: "multipart reply",
                reason: format!("type {ty} where GROUP_DESC was expected"),
            });
        }
        let mut groups = Vec::new();
        while !rest.is_empty() {
            DecodeError::need("ofp15_group_desc", rest, 16)?;
            let len = usize::from(u16_at(rest, 0));
            let blen = usize::from(u16_at(rest, 8));
            if len < 16 || blen > len - 16 {
                return Err(DecodeError::BadLength {
                    what: "ofp15_group_desc",
                    len,
                });
            }
            DecodeError::need("ofp15_group_desc", rest, len)?;
            let group_type = GroupType::from_u8(rest[2])?;
            groups.push(GroupDesc::parse_parts(
                group_type,
                u32_at(rest, 4),
                &rest[16..16 + blen],
                &rest[16 + blen..len],
            )?);
            rest = &rest[len..];
        }
        Ok(GroupDescReply {
            more: flags & multipart::MORE != 0,
            groups,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const SELECT: &str = "group_id=1,type=select,selection_method=hash,fields(ip_src,nw_proto),bucket=bucket_id:0,weight:100,actions=output:1,bucket=bucket_id:1,weight:50,watch_port:2,actions=set_field:0x1->reg0,resubmit(,10)";

    #[test]
    fn text_round_trip() {
        let g: GroupMod = SELECT.parse().unwrap();
        assert_eq!(g.to_string(), SELECT);
        assert_eq!(g.group.buckets.len(), 2);
        assert_eq!(g.group.buckets[1].actions.len(), 2);
        let ff = "group_id=7,type=ff,bucket=bucket_id:0,watch_group:3,actions=output:1";
        assert_eq!(ff.parse::<GroupMod>().unwrap().to_string(), ff);
        let zero = "group_id=3,type=select,bucket=bucket_id:0,weight:0,actions=output:1";
        assert_eq!(zero.parse::<GroupMod>().unwrap().group.buckets[0].weight, 0);
        let all = "group_id=2,type=all,bucket=bucket_id:0,actions=output:1,output:2";
        assert_eq!(all.parse::<GroupMod>().unwrap().to_string(), all);
        assert!("type=all".parse::<GroupMod>().is_err());
        assert_eq!(
            "group_id=1,type=nope"
                .parse::<GroupMod>()
                .unwrap_err()
                .input,
            "type=nope"
        );
    }

    #[test]
    fn wire_round_trip() {
        let g: GroupMod = SELECT.parse().unwrap();
        let b = g.to_bytes(3).unwrap();
        assert_eq!(
            &b[..8],
            &[6, 15, (b.len() >> 8) as u8, b.len() as u8, 0, 0, 0, 3]
        );
        assert_eq!(&b[8..16], &[0, 0, 1, 0, 0, 0, 0, 1]);
        assert_eq!(GroupMod::decode(&b), Ok((g.clone(), 3)));
        let reply = GroupDescReply {
            more: false,
            groups: vec![g.group.clone(), GroupMod::delete(5).group],
        };
        assert_eq!(
            GroupDescReply::decode(&reply.to_bytes(4).unwrap()),
            Ok((reply, 4))
        );
        let add_or_modify = GroupMod::add_or_modify(g.group.clone());
        let b = add_or_modify.to_bytes(6).unwrap();
        assert_eq!(&b[8..10], &[0x80, 0]);
        assert_eq!(GroupMod::decode(&b), Ok((add_or_modify, 6)));
        let req = GroupDescRequest {
            group_id: GROUP_ALL,
        };
        assert_eq!(
            <GroupDescRequest as Message>::parse(&req.to_bytes(5).unwrap()),
            Ok((req, 5))
        );
    }

    /// Found by fuzzing: a method name that is not UTF-8 (or fills all 16 bytes) decoded lossily
    /// and re-encoded differently.
    #[test]
    fn selection_method_names_are_nul_terminated_utf8() {
        let g: GroupMod = SELECT.parse().unwrap();
        let b = g.to_bytes(1).unwrap();
        let name_at = b.windows(4).position(|w| w == b"hash").unwrap();
        let mut bad = b.clone();
        bad[name_at] = 0xff;
        assert!(matches!(
            GroupMod::decode(&bad),
            Err(DecodeError::Invalid {
                what: "selection_method property",
                ..
            })
        ));
        let mut unterminated = b.clone();
        unterminated[name_at..name_at + METHOD_NAME_LEN].fill(b'a');
        assert!(GroupMod::decode(&unterminated).is_err());
        let long = SELECT.replace("selection_method=hash", "selection_method=0123456789abcdef");
        assert!(long.parse::<GroupMod>().is_err());
        let mut cut = g.clone();
        cut.group.selection.as_mut().unwrap().method = "ééééééééé".into();
        let (decoded, _) = GroupMod::decode(&cut.to_bytes(1).unwrap()).unwrap();
        assert_eq!(
            decoded.group.selection.unwrap().method,
            "ééééééé",
            "cut at a character boundary"
        );
    }

    /// The body after the multipart header of a reply holding `group`, with its lengths
    /// wrapped as Open vSwitch wraps them.
    fn unframed(group: &GroupDesc) -> Vec<u8> {
        let reply = GroupDescReply {
            more: false,
            groups: vec![group.clone()],
        };
        let mut body = Vec::new();
        reply.emit_body(&mut body);
        body.split_off(multipart::MULTIPART_HEADER_LEN)
    }

    /// Select group `id` (`dp_hash`) of `buckets` buckets, each DNATing to its own endpoint.
    pub(crate) fn select_group(id: u32, buckets: u32) -> GroupDesc {
        let mut text = format!("group_id={id},type=select,selection_method=dp_hash");
        for n in 0..buckets {
            text.push_str(&format!(
                ",bucket=bucket_id:{n},actions=ct(commit,table=1,zone=65520,nat(dst=10.{}.{}.{}:8080))",
                n >> 16,
                (n >> 8) & 0xff,
                n & 0xff
            ));
        }
        GroupDesc::from_text(&text).unwrap()
    }

    #[test]
    fn a_group_longer_than_its_lengths_can_say_decodes_whole() {
        for buckets in [1, 3, 5000] {
            let group = select_group(7, buckets);
            let desc = unframed(&group);
            assert_eq!(
                desc.len() > u16::MAX.into(),
                buckets == 5000,
                "{} bytes",
                desc.len()
            );
            assert_eq!(GroupDesc::parse_unframed(&desc).unwrap(), group);
        }
    }

    #[test]
    fn an_unframed_group_with_lengths_that_do_not_fit_is_refused() {
        let desc = unframed(&select_group(7, 5000));
        let cut = &desc[..desc.len() - 8];
        assert!(GroupDesc::parse_unframed(cut).is_err(), "a group cut short");
        let mut two = desc.clone();
        two.extend_from_slice(&unframed(&select_group(7, 1)));
        assert!(
            GroupDesc::parse_unframed(&two).is_err(),
            "two groups in one"
        );
        assert!(GroupDesc::parse_unframed(&desc[..15]).is_err());
        let mut long_list = unframed(&select_group(7, 1));
        long_list[8..10].copy_from_slice(&u16::MAX.to_be_bytes());
        assert!(GroupDesc::parse_unframed(&long_list).is_err());
    }

    #[test]
    fn rejects_malformed() {
        let g: GroupMod = SELECT.parse().unwrap();
        let mut b = g.to_bytes(3).unwrap();
        b[17] = 0xff; // bucket_array_len beyond the message
        assert!(GroupMod::decode(&b).is_err());
        assert!(GroupMod::parse_body(&[0; 15]).is_err());
    }
}
