//! Framing: cutting the byte stream into whole messages by the header's length field. A length
//! below the 8-byte header or above the configured maximum is a [`FrameError`]; the stream
//! ending inside a message is one too.

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::header::HEADER_LEN;

/// The default (and largest possible) message length: the header's length field is 16 bits.
pub const DEFAULT_MAX_MESSAGE_LEN: usize = 65535;

/// The stream does not carry well-formed messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("message length {len} is shorter than the {HEADER_LEN}-byte header")]
    TooShort { len: usize },
    #[error("message length {len} exceeds the limit of {max} bytes")]
    TooLong { len: usize, max: usize },
    #[error("stream ended {have} bytes into a {need}-byte message")]
    Truncated { have: usize, need: usize },
}

/// The total length a message header announces, checked against `max`.
pub fn frame_len(header: &[u8; HEADER_LEN], max: usize) -> Result<usize, FrameError> {
    let len = usize::from(u16::from_be_bytes([header[2], header[3]]));
    if len < HEADER_LEN {
        Err(FrameError::TooShort { len })
    } else if len > max {
        Err(FrameError::TooLong { len, max })
    } else {
        Ok(len)
    }
}

/// Why reading the next message failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Reads whole messages from a byte stream.
#[derive(Debug)]
pub struct FrameReader<R> {
    reader: R,
    max: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Reads from `reader`, accepting messages of at most `max` bytes.
    pub fn new(reader: R, max: usize) -> FrameReader<R> {
        FrameReader { reader, max }
    }

    /// The stream, positioned right after the last message read (nothing is buffered here).
    pub fn into_inner(self) -> R {
        self.reader
    }

    /// The next whole message (header included), or `None` when the stream ends cleanly
    /// between messages.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, ReadError> {
        let mut header = [0u8; HEADER_LEN];
        let have = fill(&mut self.reader, &mut header).await?;
        if have == 0 {
            return Ok(None);
        }
        if have < HEADER_LEN {
            return Err(FrameError::Truncated {
                have,
                need: HEADER_LEN,
            }
            .into());
        }
        let len = frame_len(&header, self.max)?;
        let mut frame = vec![0u8; len];
        frame[..HEADER_LEN].copy_from_slice(&header);
        let body = fill(&mut self.reader, &mut frame[HEADER_LEN..]).await?;
        if HEADER_LEN + body < len {
            return Err(FrameError::Truncated {
                have: HEADER_LEN + body,
                need: len,
            }
            .into());
        }
        Ok(Some(frame))
    }
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
async fn fill<R: AsyncRead + Unpin>(reader: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut have = 0;
    while have < buf.len() {
        match reader.read(&mut buf[have..]).await? {
            0 => break,
            n => have += n,
        }
    }
    Ok(have)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(bytes: &[u8], max: usize) -> (Vec<Vec<u8>>, Option<ReadError>) {
        let mut reader = FrameReader::new(bytes, max);
        let mut frames = Vec::new();
        loop {
            match reader.next().await {
                Ok(Some(f)) => frames.push(f),
                Ok(None) => return (frames, None),
                Err(e) => return (frames, Some(e)),
            }
        }
    }

    #[tokio::test]
    async fn splits_back_to_back_messages() {
        let bytes = [6, 2, 0, 8, 0, 0, 0, 1, 6, 3, 0, 10, 0, 0, 0, 2, 0xaa, 0xbb];
        let (frames, err) = read_all(&bytes, DEFAULT_MAX_MESSAGE_LEN).await;
        assert!(err.is_none());
        assert_eq!(frames, [bytes[..8].to_vec(), bytes[8..].to_vec()]);
    }

    #[tokio::test]
    async fn rejects_bad_lengths_and_truncation() {
        let (_, err) = read_all(&[6, 2, 0, 7, 0, 0, 0, 1], DEFAULT_MAX_MESSAGE_LEN).await;
        assert!(matches!(
            err,
            Some(ReadError::Frame(FrameError::TooShort { len: 7 }))
        ));
        let (_, err) = read_all(&[6, 2, 0xff, 0xff, 0, 0, 0, 1], 1024).await;
        assert!(matches!(
            err,
            Some(ReadError::Frame(FrameError::TooLong {
                len: 65535,
                max: 1024
            }))
        ));
        let (_, err) = read_all(&[6, 2, 0, 12, 0, 0, 0, 1, 0], DEFAULT_MAX_MESSAGE_LEN).await;
        assert!(matches!(
            err,
            Some(ReadError::Frame(FrameError::Truncated {
                have: 9,
                need: 12
            }))
        ));
        let (_, err) = read_all(&[6, 2, 0], DEFAULT_MAX_MESSAGE_LEN).await;
        assert!(matches!(
            err,
            Some(ReadError::Frame(FrameError::Truncated { have: 3, need: 8 }))
        ));
    }
}
