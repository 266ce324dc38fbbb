//! A gzip member (RFC 1952) around DEFLATE stored blocks (RFC 1951, no compression): what
//! `tar xzf` and every gzip reader accept, without a compression library.

/// The largest stored block.
const STORED_MAX: usize = 0xffff;

/// `data` as a gzip file.
pub fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / STORED_MAX * 5 + 32);
    // Magic, DEFLATE, no flags, no mtime, no extra flags, OS unknown.
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    let mut blocks = data.chunks(STORED_MAX).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        let last = blocks.peek().is_none();
        let len = block.len() as u16;
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// The CRC-32 (IEEE 802.3, reflected) of `data`.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crc_of_the_check_string() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn stored_blocks_split_at_64k_and_the_last_is_final() {
        let data = vec![7u8; STORED_MAX + 10];
        let gz = gzip_stored(&data);
        assert_eq!(gz.len(), 10 + 5 + STORED_MAX + 5 + 10 + 8);
        assert_eq!(gz[10], 0);
        assert_eq!(gz[10 + 5 + STORED_MAX], 1);
        assert_eq!(gzip_stored(b"").len(), 10 + 5 + 8);
    }
}
