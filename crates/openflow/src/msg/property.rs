//! The TLV property list OpenFlow 1.4+ and its extensions use in ports, port mods, bundles,
//! group buckets, groups, `NXT_PACKET_IN2` and the `controller` action: a 16-bit type, a 16-bit
//! length (4 + body), the body, zero padding to a multiple of 8.

use crate::DecodeError;

/// One property this crate does not interpret, kept as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub prop_type: u16,
    /// The property body after type and length, without the padding.
    pub data: Vec<u8>,
}

/// Appends a property: type, length (4 + body), body, zero padding to a multiple of 8. A body
/// too long for the length field can only occur in a message too long to encode, which
/// `Message::emit` refuses.
pub fn emit_property(out: &mut Vec<u8>, prop_type: u16, data: &[u8]) {
    let len = 4 + data.len();
    out.extend_from_slice(&prop_type.to_be_bytes());
    out.extend_from_slice(&u16::try_from(len).unwrap_or(u16::MAX).to_be_bytes());
    out.extend_from_slice(data);
    out.resize(out.len() + len.next_multiple_of(8) - len, 0);
}

/// Splits a property list into `(type, body)` pairs borrowing from `buf`. The last property's
/// padding may be missing. `what` names the list in errors.
pub fn split_properties<'a>(
    what: &'static str,
    mut buf: &'a [u8],
) -> Result<Vec<(u16, &'a [u8])>, DecodeError> {
    let mut props = Vec::new();
    while !buf.is_empty() {
        DecodeError::need(what, buf, 4)?;
        let prop_type = u16::from_be_bytes([buf[0], buf[1]]);
        let len = usize::from(u16::from_be_bytes([buf[2], buf[3]]));
        if len < 4 || len > buf.len() {
            return Err(DecodeError::BadLength { what, len });
        }
        props.push((prop_type, &buf[4..len]));
        buf = &buf[len.next_multiple_of(8).min(buf.len())..];
    }
    Ok(props)
}

/// Splits a property list into owned [`Property`] values.
pub fn parse_properties(what: &'static str, buf: &[u8]) -> Result<Vec<Property>, DecodeError> {
    Ok(split_properties(what, buf)?
        .into_iter()
        .map(|(prop_type, data)| Property {
            prop_type,
            data: data.to_vec(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emit_pads_to_eight_bytes() {
        let mut out = Vec::new();
        emit_property(&mut out, 7, &[1, 2, 3]);
        emit_property(&mut out, 0xffff, &[9; 4]);
        assert_eq!(out, [0, 7, 0, 7, 1, 2, 3, 0, 0xff, 0xff, 0, 8, 9, 9, 9, 9]);
        assert_eq!(
            split_properties("p", &out),
            Ok(vec![(7, &[1, 2, 3][..]), (0xffff, &[9; 4][..])])
        );
        assert_eq!(
            parse_properties("p", &out).unwrap()[0],
            Property {
                prop_type: 7,
                data: vec![1, 2, 3]
            }
        );
    }

    #[test]
    fn last_padding_may_be_missing_but_lengths_are_checked() {
        assert_eq!(
            split_properties("p", &[0, 1, 0, 5, 0xaa]),
            Ok(vec![(1, &[0xaa][..])])
        );
        assert_eq!(
            split_properties("p", &[0, 1, 0, 3]),
            Err(DecodeError::BadLength { what: "p", len: 3 })
        );
        assert_eq!(
            split_properties("p", &[0, 1, 0, 9, 0]),
            Err(DecodeError::BadLength { what: "p", len: 9 })
        );
        assert!(matches!(
            split_properties("p", &[0, 1]),
            Err(DecodeError::Truncated { .. })
        ));
    }
}
