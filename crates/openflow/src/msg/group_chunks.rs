//! Groups larger than one message. A group mod's length is OpenFlow's 16-bit message length
//! (less inside a bundle, whose add message wraps it), while a `select` group of a few thousand
//! buckets is several times that. [`GroupMod::chunks`] turns such an add or modify into the
//! command carrying the first buckets that fit, followed by `OFPGC15_INSERT_BUCKET` messages
//! (`command_bucket_id = OFPG15_BUCKET_LAST`) each appending the next buckets that fit. Sent in
//! order inside one atomic bundle they install the whole group at once; every bucket keeps its
//! id and its place. The inserts carry no group property (Open vSwitch refuses the selection
//! method there); the group keeps the one its first message set.

use super::group_mod::{BUCKET_LAST, Bucket, GroupDesc, GroupMod, GroupModCommand};
use crate::EncodeError;
use crate::header::{HEADER_LEN, msg_type};
use crate::message::Message;

impl GroupMod {
    /// This mod as messages of at most `max_len` bytes each, header included. An add, modify
    /// or add-or-modify too long for one message becomes the same command with the first
    /// buckets, then inserts after the last bucket of the others, each message as full as
    /// `max_len` allows (buckets differ in size); every message carries the group's type, and
    /// the first its properties. Anything else, or a mod that fits, is returned as it is. Fails when a bucket
    /// does not fit in a message even alone.
    pub fn chunks(&self, max_len: usize) -> Result<Vec<GroupMod>, EncodeError> {
        let group = &self.group;
        let splits = matches!(
            self.command,
            GroupModCommand::Add | GroupModCommand::Modify | GroupModCommand::AddOrModify
        );
        // Inserts carry no group property: Open vSwitch refuses one there (`OFPBPC_BAD_VALUE`
        // for the selection method) and keeps the group's.
        let part = |command, command_bucket_id, buckets: &[Bucket]| GroupMod {
            command,
            command_bucket_id,
            group: GroupDesc {
                group_type: group.group_type,
                group_id: group.group_id,
                buckets: buckets.to_vec(),
                selection: if command == GroupModCommand::InsertBucket {
                    None
                } else {
                    group.selection.clone()
                },
            },
        };
        // The header, the fixed part and the properties of a message without buckets.
        let mut scratch = Vec::new();
        let mut head_of = |command, command_bucket_id| {
            scratch.clear();
            part(command, command_bucket_id, &[]).emit_body(&mut scratch);
            HEADER_LEN + scratch.len()
        };
        let first_head = head_of(self.command, self.command_bucket_id);
        let insert_head = head_of(GroupModCommand::InsertBucket, BUCKET_LAST);
        let mut out = Vec::new();
        let sizes: Vec<usize> = group
            .buckets
            .iter()
            .map(|b| {
                out.clear();
                b.emit(group.group_type, &mut out);
                out.len()
            })
            .collect();
        if !splits
            || group.buckets.is_empty()
            || first_head + sizes.iter().sum::<usize>() <= max_len
        {
            return Ok(vec![self.clone()]);
        }
        let mut chunks = Vec::new();
        let mut start = 0;
        while start < sizes.len() {
            let head = if start == 0 { first_head } else { insert_head };
            let mut len = head;
            let mut end = start;
            while end < sizes.len() && len + sizes[end] <= max_len {
                len += sizes[end];
                end += 1;
            }
            if end == start {
                return Err(EncodeError {
                    msg_type: msg_type::GROUP_MOD,
                    len: head + sizes[start],
                    max: max_len,
                });
            }
            let buckets = &group.buckets[start..end];
            chunks.push(if start == 0 {
                part(self.command, self.command_bucket_id, buckets)
            } else {
                part(GroupModCommand::InsertBucket, BUCKET_LAST, buckets)
            });
            start = end;
        }
        Ok(chunks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Action;
    use crate::msg::bundle::MAX_BUNDLED_LEN;
    use crate::msg::group_mod::{BUCKET_ALL, GroupType, SelectionMethod};
    use crate::oxm::PortNo;
    use proptest::prelude::*;

    /// A select group with the given bucket ids, bucket `i` carrying `outputs(i)` output
    /// actions.
    fn group(ids: impl IntoIterator<Item = u32>, outputs: impl Fn(u32) -> usize) -> GroupDesc {
        GroupDesc {
            group_type: GroupType::Select,
            group_id: 7,
            buckets: ids
                .into_iter()
                .map(|id| Bucket {
                    bucket_id: id,
                    weight: 100,
                    watch_port: None,
                    watch_group: None,
                    actions: (0..outputs(id))
                        .map(|p| Action::Output {
                            port: PortNo(p as u32 + 1),
                            max_len: 0,
                        })
                        .collect(),
                })
                .collect(),
            selection: Some(SelectionMethod {
                method: "dp_hash".into(),
                ..SelectionMethod::default()
            }),
        }
    }

    /// Checks what every split must give: each message within `max`, the original command
    /// first and inserts after the last bucket next, the group's type, id and properties in
    /// each, the buckets in order with their ids, and every message but the last too full to
    /// take the next bucket.
    fn check(original: &GroupMod, chunks: &[GroupMod], max: usize) {
        let lens: Vec<usize> = chunks
            .iter()
            .map(|c| c.to_bytes(1).expect("each message encodes").len())
            .collect();
        assert!(lens.iter().all(|&l| l <= max), "{lens:?} > {max}");
        assert_eq!(
            (chunks[0].command, chunks[0].command_bucket_id),
            (original.command, original.command_bucket_id)
        );
        for c in &chunks[1..] {
            assert_eq!(
                (c.command, c.command_bucket_id),
                (GroupModCommand::InsertBucket, BUCKET_LAST)
            );
        }
        for (i, c) in chunks.iter().enumerate() {
            let selection = if i == 0 {
                &original.group.selection
            } else {
                &None
            };
            assert_eq!(
                (c.group.group_type, c.group.group_id, &c.group.selection),
                (
                    original.group.group_type,
                    original.group.group_id,
                    selection
                )
            );
            assert_eq!(
                GroupMod::decode(&c.to_bytes(3).unwrap()),
                Ok((c.clone(), 3))
            );
        }
        let joined: Vec<&Bucket> = chunks.iter().flat_map(|c| &c.group.buckets).collect();
        let expected: Vec<&Bucket> = original.group.buckets.iter().collect();
        assert_eq!(joined, expected, "buckets in order, ids kept");
        for (i, c) in chunks.iter().enumerate().skip(1) {
            let mut fuller = chunks[i - 1].clone();
            fuller.group.buckets.push(c.group.buckets[0].clone());
            let len = fuller.to_bytes(1).map_or(usize::MAX, |b| b.len());
            assert!(
                len > max,
                "message {} could have taken one more bucket",
                i - 1
            );
        }
    }

    #[test]
    fn a_group_too_long_for_one_message_is_sent_in_full_messages() {
        // 3,000 buckets of varying size (ids out of order, as a renderer may assign them):
        // about 200 kB, three times a message.
        let big = group((0..3000).rev(), |id| 1 + (id % 7) as usize);
        let add = GroupMod::add(big.clone());
        assert!(add.to_bytes(1).is_err(), "does not fit in one message");
        let chunks = add.chunks(MAX_BUNDLED_LEN).unwrap();
        assert!(chunks.len() >= 3, "{}", chunks.len());
        check(&add, &chunks, MAX_BUNDLED_LEN);
        assert_eq!(chunks[0].command_bucket_id, BUCKET_ALL);

        let modify = GroupMod::modify(big.clone());
        check(
            &modify,
            &modify.chunks(MAX_BUNDLED_LEN).unwrap(),
            MAX_BUNDLED_LEN,
        );
        let replace = GroupMod::add_or_modify(big);
        check(
            &replace,
            &replace.chunks(MAX_BUNDLED_LEN).unwrap(),
            MAX_BUNDLED_LEN,
        );
    }

    #[test]
    fn what_fits_or_is_not_an_add_or_modify_stays_one_message() {
        let small = GroupMod::add(group(0..3, |_| 2));
        assert_eq!(small.chunks(MAX_BUNDLED_LEN), Ok(vec![small.clone()]));
        let exact = small.to_bytes(1).unwrap().len();
        assert_eq!(small.chunks(exact), Ok(vec![small.clone()]));
        let delete = GroupMod::delete(7);
        assert_eq!(delete.chunks(16), Ok(vec![delete.clone()]));
        let remove = GroupMod {
            command: GroupModCommand::RemoveBucket,
            ..GroupMod::add(group(0..3000, |_| 3))
        };
        assert_eq!(remove.chunks(MAX_BUNDLED_LEN), Ok(vec![remove.clone()]));
    }

    #[test]
    fn a_bucket_too_long_for_a_message_alone_is_an_error() {
        // One bucket of 9,000 outputs (16 bytes each): more than a message by itself.
        let huge = GroupMod::add(group([0, 1], |id| if id == 1 { 9000 } else { 1 }));
        let err = huge.chunks(MAX_BUNDLED_LEN).unwrap_err();
        assert_eq!(
            (err.msg_type, err.max),
            (msg_type::GROUP_MOD, MAX_BUNDLED_LEN)
        );
        assert!(err.len > MAX_BUNDLED_LEN, "{err}");
    }

    proptest! {
        #[test]
        fn any_split_keeps_every_bucket_in_order_within_the_limit(
            outputs in proptest::collection::vec(0usize..12, 1..60),
            slack in 0usize..400,
        ) {
            let g = group(0..outputs.len() as u32, |id| outputs[id as usize]);
            let add = GroupMod::add(g);
            let largest = add.group.buckets.iter().map(|b| {
                let mut one = add.clone();
                one.group.buckets = vec![b.clone()];
                one.to_bytes(1).unwrap().len()
            }).max().unwrap();
            let max = largest + slack;
            let chunks = add.chunks(max).unwrap();
            check(&add, &chunks, max);
        }
    }
}
