//! [`Frame`]: an Ethernet frame carrying IPv4, read as its addresses, its IPv4 header and its
//! transport header's fields; the payload may be cut short (a packet-in carries only the first
//! bytes), so lengths come from the IPv4 header, not from the bytes present. Parsing checks
//! every length before reading and never panics; what it cannot read is a [`PacketError`].
//! [`emit_ethernet`] and [`Ipv4Header::emit`] write headers back.

use std::net::Ipv4Addr;

use model::MacAddr;

use crate::checksum;
use crate::error::{PacketError, need};

/// Ethernet header length (no VLAN tag: Pod traffic on the bridge is untagged).
pub const ETHERNET_LEN: usize = 14;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IPv4 header length without options.
pub const IPV4_MIN_LEN: usize = 20;

/// IP protocol numbers.
pub mod protocol {
    pub const ICMP: u8 = 1;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const SCTP: u8 = 132;
}

/// TCP flag bits (the 13th byte of the header).
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const ACK: u8 = 0x10;
}

/// The fields of an IPv4 header this crate uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Header {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub protocol: u8,
    pub ttl: u8,
    /// The header's length in bytes, options included.
    pub header_len: usize,
    /// The packet's length in bytes as the header gives it (header and payload).
    pub total_len: usize,
}

/// The transport header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp {
        src_port: u16,
        dst_port: u16,
        seq: u32,
        ack: u32,
        /// [`tcp_flags`] bits.
        flags: u8,
        /// The segment's payload length (from the IPv4 total length and the data offset).
        payload_len: usize,
    },
    Udp {
        src_port: u16,
        dst_port: u16,
    },
    Sctp {
        src_port: u16,
        dst_port: u16,
    },
    /// Another protocol (the IPv4 header's `protocol`), not read further.
    Other,
}

/// An Ethernet frame with an IPv4 packet, as [`Frame::parse`] read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub eth_dst: MacAddr,
    pub eth_src: MacAddr,
    pub ip: Ipv4Header,
    pub transport: Transport,
}

fn u16_at(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([buf[at], buf[at + 1]])
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

fn mac_at(buf: &[u8], at: usize) -> MacAddr {
    let mut octets = [0; 6];
    octets.copy_from_slice(&buf[at..at + 6]);
    MacAddr(octets)
}

fn invalid(header: &'static str, reason: String) -> PacketError {
    PacketError::Invalid { header, reason }
}

impl Ipv4Header {
    /// Reads the IPv4 header at the start of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Ipv4Header, PacketError> {
        need("IPv4 header", buf, IPV4_MIN_LEN)?;
        let version = buf[0] >> 4;
        if version != 4 {
            return Err(PacketError::Unsupported(format!("IP version {version}")));
        }
        let header_len = usize::from(buf[0] & 0x0f) * 4;
        if header_len < IPV4_MIN_LEN {
            return Err(invalid(
                "IPv4 header",
                format!("header length {header_len}"),
            ));
        }
        need("IPv4 header with options", buf, header_len)?;
        let total_len = usize::from(u16_at(buf, 2));
        if total_len < header_len {
            return Err(invalid(
                "IPv4 header",
                format!("total length {total_len} below the header's {header_len}"),
            ));
        }
        let fragment_offset = u16_at(buf, 6) & 0x1fff;
        if fragment_offset != 0 {
            return Err(PacketError::Unsupported(format!(
                "a fragment at offset {} (no transport header)",
                fragment_offset * 8
            )));
        }
        Ok(Ipv4Header {
            src: Ipv4Addr::new(buf[12], buf[13], buf[14], buf[15]),
            dst: Ipv4Addr::new(buf[16], buf[17], buf[18], buf[19]),
            protocol: buf[9],
            ttl: buf[8],
            header_len,
            total_len,
        })
    }

    /// The header of a new packet from `src` to `dst` carrying `payload_len` bytes of
    /// `protocol`: no options, TTL 64, don't fragment.
    pub fn new(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, payload_len: usize) -> Ipv4Header {
        Ipv4Header {
            src,
            dst,
            protocol,
            ttl: 64,
            header_len: IPV4_MIN_LEN,
            total_len: IPV4_MIN_LEN + payload_len,
        }
    }

    /// Appends the header (no options; `header_len` is taken as 20) with its checksum.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.push(0x45);
        out.push(0);
        out.extend_from_slice(&(self.total_len as u16).to_be_bytes());
        out.extend_from_slice(&[0, 0, 0x40, 0]);
        out.push(self.ttl);
        out.push(self.protocol);
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&self.src.octets());
        out.extend_from_slice(&self.dst.octets());
        let sum = checksum::internet(&out[start..]);
        out[start + 10..start + 12].copy_from_slice(&sum.to_be_bytes());
    }
}

impl Transport {
    /// Reads the transport header of `protocol` at the start of `buf`, `segment_len` bytes long
    /// by the IPv4 header (the bytes present may be fewer).
    fn parse(protocol: u8, buf: &[u8], segment_len: usize) -> Result<Transport, PacketError> {
        let ports = |header: &'static str, len: usize| {
            need(header, buf, len)?;
            if segment_len < len {
                return Err(invalid(
                    header,
                    format!("{segment_len} bytes of segment by the IPv4 length, below {len}"),
                ));
            }
            Ok((u16_at(buf, 0), u16_at(buf, 2)))
        };
        Ok(match protocol {
            protocol::TCP => {
                let (src_port, dst_port) = ports("TCP header", 20)?;
                let header_len = usize::from(buf[12] >> 4) * 4;
                if header_len < 20 || header_len > segment_len {
                    return Err(invalid(
                        "TCP header",
                        format!(
                            "data offset of {header_len} bytes in a {segment_len}-byte segment"
                        ),
                    ));
                }
                Transport::Tcp {
                    src_port,
                    dst_port,
                    seq: u32_at(buf, 4),
                    ack: u32_at(buf, 8),
                    flags: buf[13],
                    payload_len: segment_len - header_len,
                }
            }
            protocol::UDP => {
                let (src_port, dst_port) = ports("UDP header", 8)?;
                Transport::Udp { src_port, dst_port }
            }
            protocol::SCTP => {
                let (src_port, dst_port) = ports("SCTP common header", 12)?;
                Transport::Sctp { src_port, dst_port }
            }
            _ => Transport::Other,
        })
    }
}

impl Frame {
    /// Reads an Ethernet frame carrying IPv4.
    pub fn parse(buf: &[u8]) -> Result<Frame, PacketError> {
        need("Ethernet header", buf, ETHERNET_LEN)?;
        let ethertype = u16_at(buf, 12);
        if ethertype != ETHERTYPE_IPV4 {
            return Err(PacketError::Unsupported(format!(
                "EtherType {ethertype:#06x}"
            )));
        }
        let packet = &buf[ETHERNET_LEN..];
        let ip = Ipv4Header::parse(packet)?;
        let transport = Transport::parse(
            ip.protocol,
            &packet[ip.header_len..],
            ip.total_len - ip.header_len,
        )?;
        Ok(Frame {
            eth_dst: mac_at(buf, 0),
            eth_src: mac_at(buf, 6),
            ip,
            transport,
        })
    }
}

/// Appends an Ethernet header.
pub fn emit_ethernet(out: &mut Vec<u8>, dst: MacAddr, src: MacAddr, ethertype: u16) {
    out.extend_from_slice(&dst.octets());
    out.extend_from_slice(&src.octets());
    out.extend_from_slice(&ethertype.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP SYN from 10.244.1.5:40000 to 10.96.0.10:80, its payload `payload` bytes long by
    /// the IPv4 header (not present).
    pub(crate) fn tcp_syn(payload: usize) -> Vec<u8> {
        let mut out = Vec::new();
        emit_ethernet(
            &mut out,
            MacAddr([0xaa, 0xbb, 0xcc, 0, 0, 1]),
            MacAddr([2, 0, 0x0a, 0xf4, 1, 5]),
            ETHERTYPE_IPV4,
        );
        let src = Ipv4Addr::new(10, 244, 1, 5);
        let dst = Ipv4Addr::new(10, 96, 0, 10);
        Ipv4Header::new(src, dst, protocol::TCP, 20 + payload).emit(&mut out);
        out.extend_from_slice(&40000u16.to_be_bytes());
        out.extend_from_slice(&80u16.to_be_bytes());
        out.extend_from_slice(&1000u32.to_be_bytes());
        out.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(&[0x50, tcp_flags::SYN, 0xff, 0xff, 0, 0, 0, 0]);
        out
    }

    #[test]
    fn a_syn_reads_as_written() {
        let frame = Frame::parse(&tcp_syn(3)).unwrap();
        assert_eq!(frame.eth_src, MacAddr([2, 0, 0x0a, 0xf4, 1, 5]));
        assert_eq!(frame.ip.src, Ipv4Addr::new(10, 244, 1, 5));
        assert_eq!(frame.ip.dst, Ipv4Addr::new(10, 96, 0, 10));
        assert_eq!(frame.ip.total_len, 43);
        assert_eq!(
            frame.transport,
            Transport::Tcp {
                src_port: 40000,
                dst_port: 80,
                seq: 1000,
                ack: 0,
                flags: tcp_flags::SYN,
                payload_len: 3,
            }
        );
        assert_eq!(
            checksum::internet(&tcp_syn(3)[ETHERNET_LEN..ETHERNET_LEN + 20]),
            0
        );
    }

    #[test]
    fn what_cannot_be_read_is_an_error_naming_the_header() {
        let syn = tcp_syn(0);
        for cut in 0..ETHERNET_LEN + 40 {
            let error = Frame::parse(&syn[..cut]).unwrap_err();
            assert!(
                matches!(error, PacketError::Truncated { .. }),
                "{cut}: {error}"
            );
        }
        let mut arp = syn.clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(
            Frame::parse(&arp).unwrap_err().to_string(),
            "unsupported packet: EtherType 0x0806"
        );
        let mut fragment = syn.clone();
        fragment[ETHERNET_LEN + 7] = 0x10;
        assert!(
            Frame::parse(&fragment)
                .unwrap_err()
                .to_string()
                .contains("fragment")
        );
        let mut short_total = syn.clone();
        short_total[ETHERNET_LEN + 2..ETHERNET_LEN + 4].copy_from_slice(&30u16.to_be_bytes());
        assert!(
            Frame::parse(&short_total)
                .unwrap_err()
                .to_string()
                .contains("TCP header")
        );
    }
}
