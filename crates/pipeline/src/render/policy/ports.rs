//! Destination port sets as OpenFlow matches: a range becomes the fewest value/mask pairs that
//! cover exactly its ports (`81-90` → `81`, `82/0xfffe`, `84/0xfffc`, `88/0xfffe`, `90`).

use netpol::{PortMatch, Protocol};
use openflow::oxm::{Field, Match};

use crate::render::ip;

/// The transport destination-port field of `protocol`.
fn dst_field(protocol: Protocol) -> Field {
    match protocol {
        Protocol::Tcp => Field::TcpDst,
        Protocol::Udp => Field::UdpDst,
        Protocol::Sctp => Field::SctpDst,
    }
}

/// `start..=end` as aligned blocks `(value, mask)`, each block a power of two in size.
pub fn range_masks(start: u16, end: u16) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    let (mut at, end) = (u32::from(start), u32::from(end));
    while at <= end {
        // The largest block that starts at `at` (aligned) and ends within the range.
        let mut size = if at == 0 {
            1 << 16
        } else {
            1u32 << at.trailing_zeros()
        };
        while at + size - 1 > end {
            size >>= 1;
        }
        let mask = !(size - 1) & 0xffff;
        out.push((at as u16, mask as u16));
        at += size;
    }
    out
}

/// The matches of `ports`: `ip,nw_proto=P` for every port, else one per block of the range.
pub fn port_matches(ports: &PortMatch) -> Vec<Match> {
    let base = ip().with(Field::IpProto, u128::from(ports.protocol.number()));
    if ports.is_all() {
        return vec![base];
    }
    let field = dst_field(ports.protocol);
    range_masks(ports.start, ports.end)
        .into_iter()
        .map(|(value, mask)| {
            if mask == u16::MAX {
                base.clone().with(field, u128::from(value))
            } else {
                base.clone()
                    .with_masked(field, u128::from(value), u128::from(mask))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn known_ranges() {
        assert_eq!(range_masks(80, 80), [(80, 0xffff)]);
        assert_eq!(range_masks(80, 81), [(80, 0xfffe)]);
        assert_eq!(
            range_masks(81, 90),
            [
                (81, 0xffff),
                (82, 0xfffe),
                (84, 0xfffc),
                (88, 0xfffe),
                (90, 0xffff)
            ]
        );
        assert_eq!(range_masks(0, u16::MAX), [(0, 0)]);
        assert_eq!(range_masks(1, u16::MAX).len(), 16);
        assert_eq!(range_masks(u16::MAX, u16::MAX), [(u16::MAX, 0xffff)]);
    }

    #[test]
    fn matches_text() {
        let texts = |m: PortMatch| -> Vec<String> {
            port_matches(&m).iter().map(ToString::to_string).collect()
        };
        assert_eq!(texts(PortMatch::all(Protocol::Udp)), ["udp"]);
        assert_eq!(
            texts(PortMatch::single(Protocol::Tcp, 80)),
            ["tcp,tp_dst=80"]
        );
        assert_eq!(
            texts(PortMatch {
                protocol: Protocol::Sctp,
                start: 80,
                end: 81
            }),
            ["sctp,tp_dst=0x50/0xfffe"]
        );
    }

    proptest! {
        #[test]
        fn blocks_cover_the_range_exactly(a in any::<u16>(), b in any::<u16>(), probe in any::<u16>()) {
            let (start, end) = (a.min(b), a.max(b));
            let blocks = range_masks(start, end);
            let hits = blocks.iter().filter(|(v, m)| probe & m == *v).count();
            prop_assert_eq!(hits, usize::from((start..=end).contains(&probe)));
            prop_assert!(blocks.len() <= 30);
        }
    }
}
