//! Framing of a JSON byte stream: finds where the first complete top-level JSON object ends
//! (tracking strings and escapes, so braces inside strings do not count), then parses exactly
//! those bytes. Scanning resumes where it stopped, so a message arriving in many pieces costs
//! linear time.

use bytes::{Buf, BytesMut};
use serde_json::Value as Json;

/// The default largest message accepted: 64 MiB (a full Open_vSwitch snapshot of a big node is
/// a few MiB).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 << 20;

/// Why the byte stream cannot be framed. After an error the stream cannot be resynchronised:
/// close the connection.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// A message starts with something other than `{`.
    #[error("expected a JSON object, found byte 0x{found:02x}")]
    NotAnObject {
        /// The first byte of the would-be message.
        found: u8,
    },
    /// A message grew beyond the configured limit before it ended.
    #[error("message exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The configured limit.
        limit: usize,
    },
    /// The bracketing is complete but the text is not valid JSON.
    #[error("invalid JSON in a {len}-byte message: {source}")]
    InvalidJson {
        /// Length of the rejected message.
        len: usize,
        /// The parser's complaint (line/column inside the message).
        source: serde_json::Error,
    },
    /// The stream ended in the middle of a message.
    #[error("stream ended inside a message ({buffered} bytes buffered)")]
    Truncated {
        /// Bytes of the unfinished message.
        buffered: usize,
    },
}

/// Splits a byte stream into JSON objects. Feed it a buffer that accumulates received bytes;
/// each [`FrameDecoder::decode`] removes one complete message from its front.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    max_size: usize,
    /// How many bytes of the current message have been scanned.
    scanned: usize,
    /// Open `{`/`[` not yet closed.
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl FrameDecoder {
    /// A decoder that rejects messages longer than `max_size` bytes.
    pub fn new(max_size: usize) -> FrameDecoder {
        FrameDecoder {
            max_size,
            scanned: 0,
            depth: 0,
            in_string: false,
            escaped: false,
        }
    }

    /// Removes and parses the first complete message in `buf`. `Ok(None)` means more bytes are
    /// needed (whitespace between messages is consumed).
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Json>, FrameError> {
        if self.scanned == 0 {
            let ws = buf
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            buf.advance(ws);
            match buf.first() {
                None => return Ok(None),
                Some(b'{') => {}
                Some(&found) => return Err(FrameError::NotAnObject { found }),
            }
        }
        let Some(end) = self.scan(buf) else {
            if self.scanned > self.max_size {
                return Err(FrameError::TooLarge {
                    limit: self.max_size,
                });
            }
            return Ok(None);
        };
        self.reset();
        if end > self.max_size {
            return Err(FrameError::TooLarge {
                limit: self.max_size,
            });
        }
        let message = buf.split_to(end);
        serde_json::from_slice(&message)
            .map(Some)
            .map_err(|source| FrameError::InvalidJson { len: end, source })
    }

    /// Call when the stream has ended: an error if a message was left unfinished.
    pub fn finish(&self, buf: &BytesMut) -> Result<(), FrameError> {
        match buf
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            true => Ok(()),
            false => Err(FrameError::Truncated {
                buffered: buf.len(),
            }),
        }
    }

    /// Continues scanning the message at the front of `buf`; returns its length once its
    /// outermost bracket closes.
    fn scan(&mut self, buf: &[u8]) -> Option<usize> {
        let limit = buf.len().min(self.max_size.saturating_add(1));
        let start = self.scanned;
        for (i, &b) in buf.get(start..limit)?.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(start + i + 1);
                    }
                }
                _ => {}
            }
        }
        self.scanned = limit;
        None
    }

    fn reset(&mut self) {
        self.scanned = 0;
        self.depth = 0;
        self.in_string = false;
        self.escaped = false;
    }
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder::new(DEFAULT_MAX_MESSAGE_SIZE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode_all(bytes: &[u8]) -> Result<Vec<Json>, FrameError> {
        let mut d = FrameDecoder::default();
        let mut buf = BytesMut::from(bytes);
        let mut out = Vec::new();
        while let Some(v) = d.decode(&mut buf)? {
            out.push(v);
        }
        d.finish(&buf)?;
        Ok(out)
    }

    #[test]
    fn splits_concatenated_objects() {
        let got = decode_all(br#"{"a":1}{"b":[2,{"c":"}{"}]} {"d":"\"}"}"#).unwrap();
        assert_eq!(
            got,
            vec![
                json!({"a":1}),
                json!({"b":[2,{"c":"}{"}]}),
                json!({"d":"\"}"})
            ]
        );
    }

    #[test]
    fn waits_for_more_bytes_then_completes() {
        let mut d = FrameDecoder::default();
        let mut buf = BytesMut::from(&br#"{"id":1,"res"#[..]);
        assert!(d.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(br#"ult":"x\\"}{"#);
        assert_eq!(
            d.decode(&mut buf).unwrap(),
            Some(json!({"id":1,"result":"x\\"}))
        );
        assert!(d.decode(&mut buf).unwrap().is_none());
        assert!(matches!(
            d.finish(&buf),
            Err(FrameError::Truncated { buffered: 1 })
        ));
    }

    #[test]
    fn rejects_non_objects_invalid_json_and_oversize() {
        assert!(matches!(
            decode_all(b"[1]"),
            Err(FrameError::NotAnObject { found: b'[' })
        ));
        assert!(matches!(
            decode_all(b"42"),
            Err(FrameError::NotAnObject { found: b'4' })
        ));
        assert!(matches!(
            decode_all(b"{\"a\" 1}"),
            Err(FrameError::InvalidJson { .. })
        ));
        assert!(matches!(
            decode_all(b"{]"),
            Err(FrameError::InvalidJson { .. })
        ));
        let mut d = FrameDecoder::new(8);
        assert!(matches!(
            d.decode(&mut BytesMut::from(&b"{\"abcdefgh\":1}"[..])),
            Err(FrameError::TooLarge { limit: 8 })
        ));
        let mut d = FrameDecoder::new(8);
        assert!(matches!(
            d.decode(&mut BytesMut::from(&b"{\"abcdefgh"[..])),
            Err(FrameError::TooLarge { limit: 8 })
        ));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let mut text = "{\"a\":".to_owned();
        text.push_str(&"[".repeat(100_000));
        text.push_str(&"]".repeat(100_000));
        text.push('}');
        assert!(matches!(
            decode_all(text.as_bytes()),
            Err(FrameError::InvalidJson { .. })
        ));
    }
}
