//! [`reject_reply`]: the frame that refuses a new connection to a Service without endpoints,
//! sent back to the client as if from the Service's address (kube-proxy's REJECT): a TCP
//! segment gets a reset (RFC 9293 §3.10.7.1: `seq` = the segment's `ack` when it carries one,
//! else 0 with `ack` = its `seq` plus its length), a UDP or SCTP packet an ICMP destination
//! unreachable, code port unreachable, quoting its IPv4 header and first 8 bytes (RFC 792).
//! A reset, and a packet from an address no error may go to (unspecified, broadcast,
//! multicast), are never answered.

use std::net::Ipv4Addr;

use crate::checksum;
use crate::error::PacketError;
use crate::frame::{
    ETHERNET_LEN, ETHERTYPE_IPV4, Frame, Ipv4Header, Transport, emit_ethernet, protocol, tcp_flags,
};

/// ICMP type destination unreachable.
pub const ICMP_DEST_UNREACHABLE: u8 = 3;
/// Its code port unreachable.
pub const ICMP_PORT_UNREACHABLE: u8 = 3;
/// How much of the refused datagram past its IPv4 header an ICMP error quotes.
const ICMP_QUOTE_PAYLOAD: usize = 8;

/// The frame refusing `frame` (a client's first packet towards a Service without endpoints,
/// as the switch sent it to the agent, possibly cut short), addressed back to its sender.
pub fn reject_reply(frame: &[u8]) -> Result<Vec<u8>, PacketError> {
    let parsed = Frame::parse(frame)?;
    let client = parsed.ip.src;
    if client.is_unspecified() || client.is_broadcast() || client.is_multicast() {
        return Err(PacketError::Unsupported(format!(
            "a packet from {client}, which no error may answer"
        )));
    }
    let mut out = Vec::with_capacity(ETHERNET_LEN + 60);
    emit_ethernet(&mut out, parsed.eth_src, parsed.eth_dst, ETHERTYPE_IPV4);
    match parsed.transport {
        Transport::Tcp {
            src_port,
            dst_port,
            seq,
            ack,
            flags,
            payload_len,
        } => {
            if flags & tcp_flags::RST != 0 {
                return Err(PacketError::Unsupported(
                    "a TCP reset is never answered".into(),
                ));
            }
            let (reply_seq, reply_ack, reply_flags) = if flags & tcp_flags::ACK != 0 {
                (ack, 0, tcp_flags::RST)
            } else {
                let length = payload_len as u32
                    + u32::from(flags & tcp_flags::SYN != 0)
                    + u32::from(flags & tcp_flags::FIN != 0);
                (0, seq.wrapping_add(length), tcp_flags::RST | tcp_flags::ACK)
            };
            let mut segment = Vec::with_capacity(20);
            segment.extend_from_slice(&dst_port.to_be_bytes());
            segment.extend_from_slice(&src_port.to_be_bytes());
            segment.extend_from_slice(&reply_seq.to_be_bytes());
            segment.extend_from_slice(&reply_ack.to_be_bytes());
            segment.extend_from_slice(&[0x50, reply_flags, 0, 0, 0, 0, 0, 0]);
            let sum = checksum::with_pseudo_header(parsed.ip.dst, client, protocol::TCP, &segment);
            segment[16..18].copy_from_slice(&sum.to_be_bytes());
            emit_ip(&mut out, parsed.ip.dst, client, protocol::TCP, &segment);
        }
        Transport::Udp { .. } | Transport::Sctp { .. } => {
            let packet = &frame[ETHERNET_LEN..];
            let quoted = (parsed.ip.header_len + ICMP_QUOTE_PAYLOAD)
                .min(parsed.ip.total_len)
                .min(packet.len());
            let mut message = vec![
                ICMP_DEST_UNREACHABLE,
                ICMP_PORT_UNREACHABLE,
                0,
                0,
                0,
                0,
                0,
                0,
            ];
            message.extend_from_slice(&packet[..quoted]);
            let sum = checksum::internet(&message);
            message[2..4].copy_from_slice(&sum.to_be_bytes());
            emit_ip(&mut out, parsed.ip.dst, client, protocol::ICMP, &message);
        }
        Transport::Other => {
            return Err(PacketError::Unsupported(format!(
                "IP protocol {} (only TCP, UDP and SCTP are refused)",
                parsed.ip.protocol
            )));
        }
    }
    Ok(out)
}

/// Appends an IPv4 header from `src` to `dst` and its `payload`.
fn emit_ip(out: &mut Vec<u8>, src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, payload: &[u8]) {
    Ipv4Header::new(src, dst, protocol, payload.len()).emit(out);
    out.extend_from_slice(payload);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::IPV4_MIN_LEN;
    use model::MacAddr;

    const CLIENT_MAC: MacAddr = MacAddr([2, 0, 0x0a, 0xf4, 1, 5]);
    const GATEWAY_MAC: MacAddr = MacAddr([0xaa, 0xbb, 0xcc, 0, 0, 1]);
    const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 244, 1, 5);
    const SERVICE: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 10);

    /// A frame from the client to the Service: `protocol` with `segment` after the IPv4 header,
    /// whose total length counts `extra` more bytes than are present.
    fn to_service(protocol: u8, segment: &[u8], extra: usize) -> Vec<u8> {
        let mut out = Vec::new();
        emit_ethernet(&mut out, GATEWAY_MAC, CLIENT_MAC, ETHERTYPE_IPV4);
        Ipv4Header::new(CLIENT, SERVICE, protocol, segment.len() + extra).emit(&mut out);
        out.extend_from_slice(segment);
        out
    }

    fn tcp(flags: u8, seq: u32, ack: u32) -> Vec<u8> {
        let mut segment = Vec::new();
        segment.extend_from_slice(&40000u16.to_be_bytes());
        segment.extend_from_slice(&80u16.to_be_bytes());
        segment.extend_from_slice(&seq.to_be_bytes());
        segment.extend_from_slice(&ack.to_be_bytes());
        segment.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        segment
    }

    /// The reply's addresses are the request's swapped, and its IPv4 checksum verifies.
    fn check_addresses(reply: &Frame, bytes: &[u8]) {
        assert_eq!((reply.eth_dst, reply.eth_src), (CLIENT_MAC, GATEWAY_MAC));
        assert_eq!((reply.ip.src, reply.ip.dst), (SERVICE, CLIENT));
        assert_eq!(
            checksum::internet(&bytes[ETHERNET_LEN..ETHERNET_LEN + IPV4_MIN_LEN]),
            0
        );
    }

    #[test]
    fn a_syn_gets_a_reset_acknowledging_it() {
        let bytes =
            reject_reply(&to_service(protocol::TCP, &tcp(tcp_flags::SYN, 1000, 0), 0)).unwrap();
        let reply = Frame::parse(&bytes).unwrap();
        check_addresses(&reply, &bytes);
        assert_eq!(
            reply.transport,
            Transport::Tcp {
                src_port: 80,
                dst_port: 40000,
                seq: 0,
                ack: 1001,
                flags: tcp_flags::RST | tcp_flags::ACK,
                payload_len: 0,
            }
        );
        let segment = &bytes[ETHERNET_LEN + IPV4_MIN_LEN..];
        assert_eq!(
            checksum::with_pseudo_header(SERVICE, CLIENT, protocol::TCP, segment),
            0
        );
    }

    #[test]
    fn a_segment_with_an_ack_gets_a_reset_at_that_sequence_and_a_cut_payload_counts() {
        let bytes =
            reject_reply(&to_service(protocol::TCP, &tcp(tcp_flags::ACK, 5, 77), 100)).unwrap();
        let Transport::Tcp {
            seq, ack, flags, ..
        } = Frame::parse(&bytes).unwrap().transport
        else {
            panic!("not TCP")
        };
        assert_eq!((seq, ack, flags), (77, 0, tcp_flags::RST));
        // No ACK: the payload the IPv4 header counts (cut from the bytes) and FIN are acked.
        let bytes = reject_reply(&to_service(
            protocol::TCP,
            &tcp(tcp_flags::FIN, u32::MAX, 0),
            100,
        ))
        .unwrap();
        let Transport::Tcp { ack, .. } = Frame::parse(&bytes).unwrap().transport else {
            panic!("not TCP")
        };
        assert_eq!(ack, 100);
    }

    #[test]
    fn a_udp_datagram_gets_a_port_unreachable_quoting_it() {
        let mut datagram = Vec::new();
        datagram.extend_from_slice(&53000u16.to_be_bytes());
        datagram.extend_from_slice(&53u16.to_be_bytes());
        datagram.extend_from_slice(&20u16.to_be_bytes());
        datagram.extend_from_slice(&[0, 0]);
        datagram.extend_from_slice(b"query-bytes!");
        let request = to_service(protocol::UDP, &datagram, 0);
        let bytes = reject_reply(&request).unwrap();
        let reply = Frame::parse(&bytes).unwrap();
        check_addresses(&reply, &bytes);
        assert_eq!(reply.ip.protocol, protocol::ICMP);
        let message = &bytes[ETHERNET_LEN + IPV4_MIN_LEN..];
        assert_eq!(
            &message[..2],
            &[ICMP_DEST_UNREACHABLE, ICMP_PORT_UNREACHABLE]
        );
        assert_eq!(checksum::internet(message), 0);
        assert_eq!(
            &message[8..],
            &request[ETHERNET_LEN..ETHERNET_LEN + IPV4_MIN_LEN + 8]
        );
    }

    #[test]
    fn resets_other_protocols_and_broadcast_senders_are_not_answered() {
        let rst = to_service(protocol::TCP, &tcp(tcp_flags::RST, 1, 0), 0);
        assert!(
            reject_reply(&rst)
                .unwrap_err()
                .to_string()
                .contains("reset")
        );
        let icmp = to_service(protocol::ICMP, &[8, 0, 0, 0, 0, 0, 0, 0], 0);
        assert!(
            reject_reply(&icmp)
                .unwrap_err()
                .to_string()
                .contains("protocol 1")
        );
        let mut broadcast = to_service(protocol::UDP, &[0; 8], 0);
        broadcast[ETHERNET_LEN + 12..ETHERNET_LEN + 16].copy_from_slice(&[255; 4]);
        assert!(
            reject_reply(&broadcast)
                .unwrap_err()
                .to_string()
                .contains("255.255.255.255")
        );
    }
}
