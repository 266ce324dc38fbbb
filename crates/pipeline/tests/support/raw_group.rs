//! One group as the switch reports it, read from the raw OpenFlow stream — the oracle for
//! groups longer than one message.
//!
//! Open vSwitch 3.1 answers a group description request for such a group with the whole
//! description in one multipart reply, but with its three 16-bit lengths (the message's, the
//! group's and the bucket list's) wrapped modulo 65,536. `ovs-ofctl dump-groups` then fails
//! (`OFPBPC_BAD_LEN`) and loses its place in the stream, as would any framed connection. Here
//! the reply is read up to the barrier reply that follows it, so the real lengths are known:
//! the last multipart message ends where the barrier reply starts, its one group fills it, and
//! the bucket list is the largest length congruent to the reported one that leaves room for
//! the group's properties. The buckets are then decoded in runs, each run wrapped into a
//! well-formed reply for [`GroupDescReply::decode`].

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use openflow::Message;
use openflow::header::{HEADER_LEN, msg_type};
use openflow::msg::barrier::BarrierRequest;
use openflow::msg::group_mod::{GroupDesc, GroupDescReply, GroupDescRequest};
use openflow::msg::hello::Hello;
use openflow::msg::multipart::{self, MORE, mp_type};

use super::switch::Switch;

const GROUP_DESC_LEN: usize = 16;
const WRAP: usize = 1 << 16;
/// Buckets per decoded run stay below this many bytes.
const RUN_LEN: usize = 60_000;

fn u16_at(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_be_bytes([b[at], b[at + 1]]))
}

/// Everything the switch sends after our hello, up to and including the barrier reply with
/// `barrier_xid`.
fn exchange(sw: &Switch, request: Vec<u8>, barrier_xid: u32) -> Vec<u8> {
    let mut s = UnixStream::connect(sw.ovs.mgmt_socket("br0")).expect("connect to br0");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(&Hello::of15().to_bytes(1).unwrap()).unwrap();
    s.write_all(&request).unwrap();
    let barrier_reply = [6, msg_type::BARRIER_REPLY, 0, 8];
    let mut got = Vec::new();
    let mut buf = vec![0; WRAP];
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let n = s.read(&mut buf).expect("read from br0");
        assert!(n > 0, "br0 closed the connection");
        got.extend_from_slice(&buf[..n]);
        if got.len() >= 8
            && got[got.len() - 8..got.len() - 4] == barrier_reply
            && got[got.len() - 4..] == barrier_xid.to_be_bytes()
        {
            break;
        }
        assert!(Instant::now() < deadline, "no barrier reply from br0");
    }
    // Skip the switch's hello (a small, well-framed message).
    let hello_len = u16_at(&got, 2);
    got.split_off(hello_len)
}

/// Group `group_id` as the switch holds it, however long; `None` if the switch has no such
/// group (an error or an empty reply).
pub fn group(sw: &Switch, group_id: u32) -> Option<GroupDesc> {
    let mut request = GroupDescRequest { group_id }.to_bytes(2).unwrap();
    BarrierRequest.emit(3, &mut request).unwrap();
    let stream = exchange(sw, request, 3);
    let replies = &stream[..stream.len() - 8];
    // Messages flagged "more" are framed right; the last one runs up to the barrier reply.
    let mut at = 0;
    let last = loop {
        assert!(
            at + HEADER_LEN <= replies.len(),
            "no final group desc reply"
        );
        if replies[at + 1] == msg_type::ERROR {
            return None;
        }
        assert_eq!(
            replies[at + 1],
            msg_type::MULTIPART_REPLY,
            "not a reply: {:02x?}",
            &replies[at..at + HEADER_LEN]
        );
        let (ty, flags, _) = multipart::parse_header(&replies[at + HEADER_LEN..]).unwrap();
        assert_eq!(ty, mp_type::GROUP_DESC);
        if flags & MORE == 0 {
            break &replies[at..];
        }
        at += u16_at(replies, at + 2);
    };
    let desc = &last[HEADER_LEN + multipart::MULTIPART_HEADER_LEN..];
    if desc.is_empty() {
        return None;
    }
    assert_eq!(
        u16_at(desc, 0),
        desc.len() % WRAP,
        "one group fills the reply"
    );
    let room = desc.len() - GROUP_DESC_LEN;
    let reported = u16_at(desc, 8);
    assert!(reported <= room, "bucket list longer than the group");
    let buckets_len = reported + (room - reported) / WRAP * WRAP;
    let (buckets, props) = desc[GROUP_DESC_LEN..].split_at(buckets_len);
    let mut runs: Vec<&[u8]> = Vec::new();
    let (mut start, mut end) = (0, 0);
    while end < buckets.len() {
        let len = u16_at(buckets, end);
        assert!(len >= 8, "bucket of {len} bytes at {end}");
        if end + len - start > RUN_LEN {
            runs.push(&buckets[start..end]);
            start = end;
        }
        end += len;
    }
    assert_eq!(end, buckets.len(), "buckets overrun their list");
    runs.push(&buckets[start..]);
    let mut whole: Option<GroupDesc> = None;
    for run in runs {
        let mut msg = vec![6, msg_type::MULTIPART_REPLY, 0, 0, 0, 0, 0, 9];
        multipart::emit_header(&mut msg, mp_type::GROUP_DESC, 0);
        let mut fixed = desc[..GROUP_DESC_LEN].to_vec();
        fixed[0..2]
            .copy_from_slice(&((GROUP_DESC_LEN + run.len() + props.len()) as u16).to_be_bytes());
        fixed[8..10].copy_from_slice(&(run.len() as u16).to_be_bytes());
        msg.extend_from_slice(&fixed);
        msg.extend_from_slice(run);
        msg.extend_from_slice(props);
        let len = msg.len() as u16;
        msg[2..4].copy_from_slice(&len.to_be_bytes());
        let (reply, _) = GroupDescReply::decode(&msg).expect("a run of buckets decodes");
        let [part] = <[GroupDesc; 1]>::try_from(reply.groups).expect("one group");
        match &mut whole {
            None => whole = Some(part),
            Some(g) => g.buckets.extend(part.buckets),
        }
    }
    whole
}
