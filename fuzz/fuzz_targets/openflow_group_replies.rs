//! The group description replies read on a group dump's own connection (`conn::group_dump`), on
//! an arbitrary byte stream: never panics, and every group it returns was in the stream's
//! replies, one per reply at most for replies longer than a message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::conn::group_dump::groups_from_replies;

fuzz_target!(|data: &[u8]| {
    let (count, replies) = match data.split_first() {
        // The first byte is the number of requests answered.
        Some((&count, rest)) => (u32::from(count), rest),
        None => return,
    };
    if let Ok(groups) = groups_from_replies(replies, count) {
        // A group takes at least its 16-byte description and a reply its 16-byte headers.
        assert!(groups.len() * 16 <= replies.len(), "{} groups", groups.len());
        assert!(count > 0, "groups with no request");
    }
});
