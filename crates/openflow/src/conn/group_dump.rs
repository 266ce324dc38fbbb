//! Groups read one id at a time, on a connection of their own, so that no group description
//! longer than one OpenFlow message can crash the switch or break our framing.
//!
//! A group description over 65,535 bytes (a select group of about 700 buckets or more) does not
//! fit OpenFlow's 16-bit lengths, and Open vSwitch handles it badly in two ways (seen with 3.1;
//! the code is unchanged in its main branch):
//! - asked for every group (`OFPG_ALL`), `ovs-vswitchd` aborts when another group follows the
//!   long one in the reply (the assertion `start_ofs <= UINT16_MAX` in `ofpmp_postappend`);
//! - asked for that group alone, it sends it as one multipart reply with the message's, the
//!   group's and the bucket list's lengths wrapped modulo 65,536.
//!
//! So groups are asked for by id, each request answered by one reply with at most one group,
//! and the replies are read on a short-lived connection to the same endpoint. That connection
//! never sets a miss send length, which makes it an Open vSwitch *service* connection: it gets
//! no asynchronous message (no packet-in, no port status). After the requests and a barrier
//! request, the stream holds only the replies and then the barrier reply. Reading up to that
//! barrier reply gives the real end of the last reply. Each reply's real length is its announced
//! length plus the smallest multiple of 65,536 at which the next reply, or the end, comes
//! ([`groups_from_replies`]); a long group is decoded by [`GroupDesc::parse_unframed`]. The
//! requests are written while the replies are read: Open vSwitch stops reading requests while
//! replies wait to be sent.

use std::time::Duration;

use localipc::Endpoint;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::session::greet;
use super::{ConnError, ConnOptions, dial};
use crate::DecodeError;
use crate::header::{HEADER_LEN, OFP_VERSION_1_5, msg_type, u16_at, u32_at};
use crate::message::Message;
use crate::msg::barrier::BarrierRequest;
use crate::msg::error::ErrorMsg;
use crate::msg::flow_stats::FlowStats;
use crate::msg::group_mod::{GroupDesc, GroupDescReply, GroupDescRequest};
use crate::msg::multipart::{self, mp_type};

const HELLO_XID: u32 = 1;
/// The xid of the request for the first id; the one for the `i`th id is this plus `i`.
pub const FIRST_REQUEST_XID: u32 = 2;
/// What a 16-bit length wraps at.
const WRAP: usize = 1 << 16;
/// Replies longer than this in all are refused rather than held in memory (some 10 million
/// buckets).
const MAX_REPLIES_LEN: usize = 1 << 30;
/// Ids asked for in one exchange at most (the xids must not wrap).
const MAX_IDS: usize = 1 << 24;

/// The largest group id in `known` or in the group actions of `flows` (0 for none): the bound
/// up to which [`super::OfConnection::dump_groups`] asks for groups.
pub fn group_bound<'a>(known: &[u32], flows: impl IntoIterator<Item = &'a FlowStats>) -> u32 {
    known
        .iter()
        .copied()
        .chain(
            flows
                .into_iter()
                .flat_map(|flow| flow.instructions.group_ids()),
        )
        .fold(0, u32::max)
}

/// The groups among `ids` that the switch at `endpoint` has, in the order of `ids`, asked for
/// on a connection opened for it and closed after.
pub(super) async fn describe_groups(
    endpoint: &Endpoint,
    options: &ConnOptions,
    ids: &[u32],
) -> Result<Vec<GroupDesc>, ConnError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    if ids.len() > MAX_IDS {
        return Err(invalid(format!("{} group ids asked for at once", ids.len())).into());
    }
    let (frames, mut write_half) = greet(dial(endpoint).await?, options, HELLO_XID).await?;
    let count = ids.len() as u32;
    let mut requests = Vec::with_capacity(ids.len() * 16 + HEADER_LEN);
    for (xid, &group_id) in (FIRST_REQUEST_XID..).zip(ids) {
        GroupDescRequest { group_id }.emit(xid, &mut requests)?;
    }
    BarrierRequest.emit(FIRST_REQUEST_XID + count, &mut requests)?;
    let write = async {
        write_half.write_all(&requests).await?;
        Ok::<(), ConnError>(())
    };
    let read = read_to_barrier_reply(
        frames.into_inner(),
        FIRST_REQUEST_XID + count,
        options.inactivity_timeout,
    );
    let ((), replies) = tokio::try_join!(write, read)?;
    groups_from_replies(&replies, count)
}

/// Everything the switch sends up to the barrier reply with `barrier_xid`, without it.
async fn read_to_barrier_reply<R: AsyncRead + Unpin>(
    mut reader: R,
    barrier_xid: u32,
    timeout: Duration,
) -> Result<Vec<u8>, ConnError> {
    let mut barrier_reply = [OFP_VERSION_1_5, msg_type::BARRIER_REPLY, 0, 8, 0, 0, 0, 0];
    barrier_reply[4..].copy_from_slice(&barrier_xid.to_be_bytes());
    let mut stream = Vec::new();
    let mut chunk = vec![0; WRAP];
    while !stream.ends_with(&barrier_reply) {
        let n = tokio::time::timeout(timeout, reader.read(&mut chunk))
            .await
            .map_err(|_| ConnError::Inactive(timeout))??;
        if n == 0 {
            return Err(ConnError::Closed);
        }
        if stream.len() + n > MAX_REPLIES_LEN {
            return Err(invalid(format!("group replies exceed {MAX_REPLIES_LEN} bytes")).into());
        }
        stream.extend_from_slice(&chunk[..n]);
    }
    stream.truncate(stream.len() - barrier_reply.len());
    Ok(stream)
}

/// The groups in `replies`: what the switch sent after its hello in answer to `count` group
/// description requests (xids [`FIRST_REQUEST_XID`] on), up to the barrier reply. Each request
/// is answered, in order, by replies ending with one without the "more" flag. An error reply
/// becomes [`ConnError::Rejected`]. Bytes that are not whole replies are refused.
pub fn groups_from_replies(replies: &[u8], count: u32) -> Result<Vec<GroupDesc>, ConnError> {
    let end_xid = FIRST_REQUEST_XID.saturating_add(count);
    let mut groups = Vec::new();
    // The request the last reply answered, and whether more of its answer follows.
    let (mut answering, mut more): (Option<u32>, bool) = (None, false);
    for reply in split_replies(replies, end_xid)? {
        let xid = u32_at(reply, 4);
        let continues = answering == Some(xid) && more;
        let due = answering.map_or(FIRST_REQUEST_XID, |a| a + 1);
        if !continues && (more || xid != due) {
            return Err(invalid(format!(
                "a reply to request {xid} where one to request {due} was due"
            ))
            .into());
        }
        answering = Some(xid);
        if reply[1] == msg_type::ERROR {
            return Err(ConnError::Rejected(ErrorMsg::parse_body(
                &reply[HEADER_LEN..],
            )?));
        }
        if reply.len() < WRAP {
            let (part, _) = GroupDescReply::decode(reply)?;
            more = part.more;
            groups.extend(part.groups);
        } else {
            let (ty, flags, desc) = multipart::parse_header(&reply[HEADER_LEN..])?;
            if ty != mp_type::GROUP_DESC {
                return Err(invalid(format!("multipart reply of type {ty} for a group")).into());
            }
            more = flags & multipart::MORE != 0;
            groups.push(GroupDesc::parse_unframed(desc)?);
        }
    }
    if more || answering != end_xid.checked_sub(1) || count == 0 {
        return Err(invalid(format!(
            "the replies end before the answer to request {}",
            end_xid - 1
        ))
        .into());
    }
    Ok(groups)
}

/// Cuts `stream` into replies, each a multipart reply or an error whose xid is below
/// `end_xid`. A reply's length is the announced one plus the smallest multiple of 65,536 at
/// which the next reply starts or the stream ends.
fn split_replies(stream: &[u8], end_xid: u32) -> Result<Vec<&[u8]>, DecodeError> {
    let mut replies = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        if !starts_a_reply(rest, end_xid) {
            return Err(invalid(format!(
                "{} bytes that do not start a reply to the requests",
                rest.len()
            )));
        }
        let announced = usize::from(u16_at(rest, 2));
        let len = (announced.max(HEADER_LEN)..=rest.len())
            .step_by(WRAP)
            .find(|&len| len == rest.len() || starts_a_reply(&rest[len..], end_xid))
            .ok_or_else(|| {
                invalid(format!(
                    "a reply announcing {announced} bytes has no end among the {} left",
                    rest.len()
                ))
            })?;
        let (reply, tail) = rest.split_at(len);
        replies.push(reply);
        rest = tail;
    }
    Ok(replies)
}

/// Whether `bytes` start with the header of a reply to one of the requests.
fn starts_a_reply(bytes: &[u8], end_xid: u32) -> bool {
    bytes.len() >= HEADER_LEN
        && bytes[0] == OFP_VERSION_1_5
        && matches!(bytes[1], msg_type::MULTIPART_REPLY | msg_type::ERROR)
        && (FIRST_REQUEST_XID..end_xid).contains(&u32_at(bytes, 4))
}

fn invalid(reason: String) -> DecodeError {
    DecodeError::Invalid {
        what: "group description replies",
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::error::ErrorKind;
    use crate::msg::group_mod::tests::select_group;

    /// One reply to request `xid` holding `groups`, as Open vSwitch sends it (lengths wrapped).
    fn reply(xid: u32, more: bool, groups: &[GroupDesc]) -> Vec<u8> {
        let mut msg = vec![OFP_VERSION_1_5, msg_type::MULTIPART_REPLY, 0, 0];
        msg.extend_from_slice(&xid.to_be_bytes());
        GroupDescReply {
            more,
            groups: groups.to_vec(),
        }
        .emit_body(&mut msg);
        let wrapped = (msg.len() % WRAP) as u16;
        msg[2..4].copy_from_slice(&wrapped.to_be_bytes());
        msg
    }

    const X: u32 = FIRST_REQUEST_XID;

    #[test]
    fn a_long_group_between_others_reads_whole() {
        let small = select_group(1, 3);
        let big = select_group(2, 5000);
        let last = select_group(3, 2);
        let mut stream = reply(X, false, std::slice::from_ref(&small));
        let big_reply = reply(X + 1, false, std::slice::from_ref(&big));
        assert!(big_reply.len() > WRAP, "{} bytes", big_reply.len());
        stream.extend_from_slice(&big_reply);
        stream.extend_from_slice(&reply(X + 2, false, &[]));
        stream.extend_from_slice(&reply(X + 3, false, std::slice::from_ref(&last)));
        assert_eq!(groups_from_replies(&stream, 4).unwrap(), [small, big, last]);
    }

    #[test]
    fn a_long_group_alone_and_a_missing_group_read_right() {
        let big = select_group(9, 8000);
        let stream = reply(X, false, std::slice::from_ref(&big));
        assert_eq!(groups_from_replies(&stream, 1).unwrap(), [big]);
        assert_eq!(groups_from_replies(&reply(X, false, &[]), 1).unwrap(), []);
        let mut parts = reply(X, true, &[select_group(1, 1)]);
        parts.extend_from_slice(&reply(X, false, &[select_group(2, 1)]));
        assert_eq!(groups_from_replies(&parts, 1).unwrap().len(), 2);
    }

    #[test]
    fn an_error_reply_is_the_switchs_refusal() {
        let error = ErrorMsg {
            kind: ErrorKind::Standard {
                err_type: 1,
                code: 2,
            },
            data: Vec::new(),
        };
        let stream = error.to_bytes(X).unwrap();
        assert!(matches!(
            groups_from_replies(&stream, 1),
            Err(ConnError::Rejected(e)) if e == error
        ));
    }

    #[test]
    fn bytes_that_are_not_whole_answers_are_refused() {
        let whole = reply(X, false, &[select_group(2, 5000)]);
        for cut in [0, 7, 100, WRAP, whole.len() - 1] {
            assert!(
                groups_from_replies(&whole[..cut], 1).is_err(),
                "cut at {cut}"
            );
        }
        assert!(
            groups_from_replies(&whole, 2).is_err(),
            "a request unanswered"
        );
        assert!(groups_from_replies(&whole, 0).is_err(), "nothing asked");
        let other_xid = reply(X + 5, false, &[select_group(1, 1)]);
        assert!(groups_from_replies(&other_xid, 1).is_err());
        let unfinished = reply(X, true, &[select_group(1, 1)]);
        assert!(groups_from_replies(&unfinished, 1).is_err(), "no last part");
        let mut twice = reply(X, false, &[]);
        twice.extend_from_slice(&reply(X, false, &[]));
        assert!(
            groups_from_replies(&twice, 1).is_err(),
            "a part after the last"
        );
        let mut skipped = reply(X, false, &[]);
        skipped.extend_from_slice(&reply(X + 2, false, &[]));
        assert!(
            groups_from_replies(&skipped, 3).is_err(),
            "an answer skipped"
        );
    }
}
