//! The Internet checksum (RFC 1071) of IPv4 headers, ICMP messages and TCP segments, with the
//! IPv4 pseudo-header TCP's covers.

use std::net::Ipv4Addr;

/// The one's-complement sum of `data` as 16-bit big-endian words (an odd last byte padded with
/// zero), added to `start`, not yet folded or inverted.
fn sum(start: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    let mut acc = chunks.by_ref().fold(start, |acc, w| {
        acc + u32::from(u16::from_be_bytes([w[0], w[1]]))
    });
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

/// Folds the carries of `acc` into 16 bits and inverts them.
fn finish(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The checksum of `data` (an IPv4 header or an ICMP message, its checksum field zero).
pub fn internet(data: &[u8]) -> u16 {
    finish(sum(0, data))
}

/// The checksum of transport `segment` (its checksum field zero) under the IPv4 pseudo-header
/// of `src`, `dst` and `protocol`.
pub fn with_pseudo_header(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, segment: &[u8]) -> u16 {
    let mut pseudo = [0u8; 12];
    pseudo[..4].copy_from_slice(&src.octets());
    pseudo[4..8].copy_from_slice(&dst.octets());
    pseudo[9] = protocol;
    pseudo[10..].copy_from_slice(&(segment.len() as u16).to_be_bytes());
    finish(sum(sum(0, &pseudo), segment))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_with_its_checksum_sums_to_zero() {
        // RFC 1071's example words, and an IPv4 header whose checksum is known (0xb861).
        let header = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(internet(&header), 0xb861);
        let mut with = header;
        with[10..12].copy_from_slice(&0xb861u16.to_be_bytes());
        assert_eq!(internet(&with), 0);
    }

    #[test]
    fn an_odd_length_is_padded_with_zero() {
        assert_eq!(internet(&[0x01]), internet(&[0x01, 0x00]));
    }
}
