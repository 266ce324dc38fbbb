//! `OFPT_HELLO` with its hello elements, and version negotiation.
//!
//! Both ends send a hello first. Since OpenFlow 1.3.1 a hello may carry a *version bitmap*
//! element listing every version the sender speaks; without it, the header version is the
//! highest version the sender speaks and every lower one is assumed. The negotiated version is
//! the highest version both ends speak.
//!
//! This crate speaks only OpenFlow 1.5 on the wire: the agent's pipeline uses OF1.5 group
//! buckets with bucket ids and the `selection_method` property, and packet-out with a pipeline
//! match (`in_port`, registers) — neither has an OF1.3 encoding that Open vSwitch accepts without
//! switching to Nicira extensions. So [`negotiate`] recognises 1.0–1.5 peers but succeeds only
//! when the peer also speaks 1.5, and otherwise names the versions the peer offered.

use bytes::Buf;

use crate::DecodeError;
use crate::header::{OFP_VERSION_1_5, msg_type};
use crate::message::Message;

/// `OFPHET_VERSIONBITMAP`.
pub const HELLO_ELEM_VERSION_BITMAP: u16 = 1;

/// One hello element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelloElement {
    /// The versions the sender speaks: bit `n` of the bitmap means wire version `n`.
    VersionBitmap(Vec<u32>),
    /// An element type this crate does not interpret, kept as is (body after type and length).
    Unknown { elem_type: u16, data: Vec<u8> },
}

/// `OFPT_HELLO`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    pub elements: Vec<HelloElement>,
}

impl Hello {
    /// The hello this crate sends: a version bitmap offering only OpenFlow 1.5.
    pub fn of15() -> Hello {
        Hello {
            elements: vec![HelloElement::VersionBitmap(vec![1 << OFP_VERSION_1_5])],
        }
    }

    /// The version bitmap, if the hello carries one.
    pub fn version_bitmap(&self) -> Option<&[u32]> {
        self.elements.iter().find_map(|e| match e {
            HelloElement::VersionBitmap(b) => Some(b.as_slice()),
            HelloElement::Unknown { .. } => None,
        })
    }
}

impl Message for Hello {
    const TYPE: u8 = msg_type::HELLO;

    fn emit_body(&self, out: &mut Vec<u8>) {
        for element in &self.elements {
            let (elem_type, data): (u16, Vec<u8>) = match element {
                HelloElement::VersionBitmap(words) => (
                    HELLO_ELEM_VERSION_BITMAP,
                    words.iter().flat_map(|w| w.to_be_bytes()).collect(),
                ),
                HelloElement::Unknown { elem_type, data } => (*elem_type, data.clone()),
            };
            let len = 4 + data.len();
            out.extend_from_slice(&elem_type.to_be_bytes());
            out.extend_from_slice(&(len as u16).to_be_bytes());
            out.extend_from_slice(&data);
            out.resize(out.len() + len.next_multiple_of(8) - len, 0);
        }
    }

    /// Decodes the elements. Following the specification, bytes that do not form a whole element
    /// header at the end are ignored, which keeps old peers' padding harmless.
    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        let mut elements = Vec::new();
        let mut rest = body;
        while rest.len() >= 4 {
            let mut h = rest;
            let elem_type = h.get_u16();
            let len = usize::from(h.get_u16());
            if len < 4 || len > rest.len() {
                return Err(DecodeError::BadLength {
                    what: "hello element",
                    len,
                });
            }
            let data = &rest[4..len];
            elements.push(match elem_type {
                HELLO_ELEM_VERSION_BITMAP => {
                    if !data.len().is_multiple_of(4) {
                        return Err(DecodeError::BadLength {
                            what: "hello version bitmap",
                            len,
                        });
                    }
                    HelloElement::VersionBitmap(
                        data.chunks_exact(4)
                            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                            .collect(),
                    )
                }
                elem_type => HelloElement::Unknown {
                    elem_type,
                    data: data.to_vec(),
                },
            });
            rest = &rest[len.next_multiple_of(8).min(rest.len())..];
        }
        Ok(Hello { elements })
    }
}

/// The peer does not speak OpenFlow 1.5.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the switch offers OpenFlow {offered} but this agent requires OpenFlow 1.5 (enable OpenFlow15 in the bridge's protocols)", offered = offered_list(.offered))]
pub struct NegotiationError {
    /// Wire versions the peer offered, lowest first.
    pub offered: Vec<u8>,
}

fn offered_list(offered: &[u8]) -> String {
    if offered.is_empty() {
        return "no version".to_owned();
    }
    offered
        .iter()
        .map(|&v| version_name(v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The OpenFlow release name of a wire version (`0x06` → `"1.5"`).
pub fn version_name(version: u8) -> String {
    match version {
        0x01..=0x06 => format!("1.{}", version - 1),
        other => format!("wire version {other:#04x}"),
    }
}

/// The wire versions a peer speaks, from its hello header version and hello body.
pub fn peer_versions(header_version: u8, hello: &Hello) -> Vec<u8> {
    match hello.version_bitmap() {
        Some(words) => (0..words.len() * 32)
            .filter(|&bit| words[bit / 32] & (1 << (bit % 32)) != 0)
            .filter_map(|bit| u8::try_from(bit).ok())
            .collect(),
        None => (1..=header_version).collect(),
    }
}

/// Negotiates the version with a peer whose hello had `header_version` and body `hello`: the
/// highest common version, which must be OpenFlow 1.5 since that is the only one we offer.
pub fn negotiate(header_version: u8, hello: &Hello) -> Result<u8, NegotiationError> {
    let offered = peer_versions(header_version, hello);
    if offered.contains(&OFP_VERSION_1_5) {
        Ok(OFP_VERSION_1_5)
    } else {
        Err(NegotiationError { offered })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::OFP_VERSION_1_3;
    use proptest::prelude::*;

    #[test]
    fn of15_hello_bytes() {
        assert_eq!(
            Hello::of15().to_bytes(1).unwrap(),
            [6, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8, 0, 0, 0, 0x40]
        );
    }

    #[test]
    fn element_padding_and_unknown_elements() {
        let hello = Hello {
            elements: vec![
                HelloElement::VersionBitmap(vec![0x52, 0x1]),
                HelloElement::Unknown {
                    elem_type: 9,
                    data: vec![0xaa],
                },
            ],
        };
        let mut body = Vec::new();
        hello.emit_body(&mut body);
        assert_eq!(
            body,
            [
                0, 1, 0, 12, 0, 0, 0, 0x52, 0, 0, 0, 1, 0, 0, 0, 0, 0, 9, 0, 5, 0xaa, 0, 0, 0
            ]
        );
        assert_eq!(Hello::parse_body(&body), Ok(hello));
    }

    #[test]
    fn rejects_bad_element_lengths() {
        assert!(matches!(
            Hello::parse_body(&[0, 1, 0, 3, 0, 0, 0, 0]),
            Err(DecodeError::BadLength { .. })
        ));
        assert!(matches!(
            Hello::parse_body(&[0, 1, 0, 12, 0, 0, 0, 0]),
            Err(DecodeError::BadLength { .. })
        ));
        assert!(matches!(
            Hello::parse_body(&[0, 1, 0, 6, 0, 0, 0, 0]),
            Err(DecodeError::BadLength { .. })
        ));
        assert_eq!(Hello::parse_body(&[0, 1]), Ok(Hello::default()));
    }

    #[test]
    fn negotiates_from_bitmap() {
        let ovs = Hello {
            elements: vec![HelloElement::VersionBitmap(vec![0x52])],
        };
        assert_eq!(peer_versions(6, &ovs), [1, 4, 6]);
        assert_eq!(negotiate(6, &ovs), Ok(OFP_VERSION_1_5));
    }

    #[test]
    fn negotiates_from_header_version_without_bitmap() {
        assert_eq!(negotiate(6, &Hello::default()), Ok(OFP_VERSION_1_5));
        let err = negotiate(OFP_VERSION_1_3, &Hello::default()).unwrap_err();
        assert_eq!(err.offered, [1, 2, 3, 4]);
        assert_eq!(
            err.to_string(),
            "the switch offers OpenFlow 1.0, 1.1, 1.2, 1.3 but this agent requires OpenFlow 1.5 (enable OpenFlow15 in the bridge's protocols)"
        );
    }

    #[test]
    fn refuses_a_13_only_bitmap() {
        let of13 = Hello {
            elements: vec![HelloElement::VersionBitmap(vec![1 << OFP_VERSION_1_3])],
        };
        assert_eq!(
            negotiate(OFP_VERSION_1_5, &of13),
            Err(NegotiationError { offered: vec![4] })
        );
    }

    fn element() -> impl Strategy<Value = HelloElement> {
        prop_oneof![
            proptest::collection::vec(any::<u32>(), 0..4).prop_map(HelloElement::VersionBitmap),
            (2u16.., proptest::collection::vec(any::<u8>(), 0..12))
                .prop_map(|(elem_type, data)| HelloElement::Unknown { elem_type, data }),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(elements in proptest::collection::vec(element(), 0..4), xid: u32) {
            let hello = Hello { elements };
            prop_assert_eq!(Hello::parse(&hello.to_bytes(xid).unwrap()), Ok((hello, xid)));
        }

        #[test]
        fn parse_never_panics(body in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Hello::parse_body(&body);
        }
    }
}
