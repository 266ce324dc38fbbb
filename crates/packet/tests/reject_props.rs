//! Properties of the rejections over arbitrary bytes: reading and answering never panic, and
//! every answer is a frame back to the sender with valid checksums.

use packet::checksum;
use packet::frame::{ETHERNET_LEN, IPV4_MIN_LEN, protocol};
use packet::{Frame, reject_reply};
use proptest::prelude::*;

proptest! {
    #[test]
    fn any_bytes_are_read_or_refused_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Frame::parse(&bytes);
        let _ = reject_reply(&bytes);
    }

    #[test]
    fn every_answer_goes_back_to_the_sender_with_valid_checksums(
        ports in any::<(u16, u16)>(),
        seq in any::<u32>(),
        flags in any::<u8>(),
        udp in any::<bool>(),
        extra in 0usize..1400,
    ) {
        let request = frame(udp, ports, seq, flags, extra);
        let Ok(reply) = reject_reply(&request) else {
            return Ok(());
        };
        let sent = Frame::parse(&request).unwrap();
        let got = Frame::parse(&reply).unwrap();
        prop_assert_eq!((got.eth_src, got.eth_dst), (sent.eth_dst, sent.eth_src));
        prop_assert_eq!((got.ip.src, got.ip.dst), (sent.ip.dst, sent.ip.src));
        prop_assert_eq!(checksum::internet(&reply[ETHERNET_LEN..ETHERNET_LEN + IPV4_MIN_LEN]), 0);
        let payload = &reply[ETHERNET_LEN + IPV4_MIN_LEN..];
        match got.ip.protocol {
            protocol::TCP => prop_assert_eq!(
                checksum::with_pseudo_header(got.ip.src, got.ip.dst, protocol::TCP, payload), 0),
            protocol::ICMP => prop_assert_eq!(checksum::internet(payload), 0),
            other => prop_assert!(false, "answered with protocol {}", other),
        }
    }
}

/// A frame from 10.244.1.5 to 10.96.0.10: TCP with `seq` and `flags`, or UDP; the IPv4 length
/// counts `extra` payload bytes that are not present (a packet-in cut short).
fn frame(udp: bool, (src, dst): (u16, u16), seq: u32, flags: u8, extra: usize) -> Vec<u8> {
    let mut out = vec![
        0xaa, 0xbb, 0xcc, 0, 0, 1, 2, 0, 0x0a, 0xf4, 1, 5, 0x08, 0x00,
    ];
    let segment_len = if udp { 8 } else { 20 };
    let total = (IPV4_MIN_LEN + segment_len + extra) as u16;
    let proto = if udp { protocol::UDP } else { protocol::TCP };
    let mut ip = vec![
        0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, proto, 0, 0, 10, 244, 1, 5, 10, 96, 0, 10,
    ];
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&ip);
    out.extend_from_slice(&src.to_be_bytes());
    out.extend_from_slice(&dst.to_be_bytes());
    if udp {
        out.extend_from_slice(&[0, 8, 0, 0]);
    } else {
        out.extend_from_slice(&seq.to_be_bytes());
        out.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    }
    out
}
