//! A packet-in's bytes, read as a frame and answered with a Service rejection: never panics;
//! every answer parses, goes back to the sender (addresses swapped) and carries valid IPv4 and
//! transport checksums.
#![no_main]

use libfuzzer_sys::fuzz_target;
use packet::checksum;
use packet::frame::{ETHERNET_LEN, IPV4_MIN_LEN, protocol};
use packet::{Frame, reject_reply};

fuzz_target!(|data: &[u8]| {
    let parsed = Frame::parse(data);
    let Ok(reply) = reject_reply(data) else {
        return;
    };
    let sent = parsed.expect("an answered frame parses");
    let got = Frame::parse(&reply).expect("an answer parses");
    assert_eq!((got.eth_src, got.eth_dst), (sent.eth_dst, sent.eth_src));
    assert_eq!((got.ip.src, got.ip.dst), (sent.ip.dst, sent.ip.src));
    assert_eq!(checksum::internet(&reply[ETHERNET_LEN..ETHERNET_LEN + IPV4_MIN_LEN]), 0);
    let payload = &reply[ETHERNET_LEN + IPV4_MIN_LEN..];
    match got.ip.protocol {
        protocol::TCP => assert_eq!(
            checksum::with_pseudo_header(got.ip.src, got.ip.dst, protocol::TCP, payload),
            0
        ),
        protocol::ICMP => assert_eq!(checksum::internet(payload), 0),
        other => panic!("answered with IP protocol {other}"),
    }
});
