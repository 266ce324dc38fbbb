//! A minimal tar writer (POSIX ustar): regular files only, each a 512-byte header (name, mode
//! 0644, size, mtime, checksum) and its data padded to 512 bytes, then two zero blocks.

/// The tar block size.
const BLOCK: usize = 512;

/// A ustar archive being written in memory.
#[derive(Debug, Default)]
pub struct UstarWriter {
    bytes: Vec<u8>,
}

impl UstarWriter {
    /// Appends the regular file `name` (at most 100 bytes, no directory is written for it)
    /// holding `data`, dated `mtime` (seconds since the epoch).
    pub fn append(&mut self, name: &str, data: &[u8], mtime: u64) -> Result<(), String> {
        if name.is_empty() || name.len() > 100 {
            return Err(format!(
                "archive member name {name:?}: 1 to 100 bytes, got {}",
                name.len()
            ));
        }
        let mut header = [0u8; BLOCK];
        header[..name.len()].copy_from_slice(name.as_bytes());
        octal(&mut header[100..108], 0o644);
        octal(&mut header[108..116], 0);
        octal(&mut header[116..124], 0);
        octal(&mut header[124..136], data.len() as u64);
        octal(&mut header[136..148], mtime);
        header[148..156].fill(b' ');
        header[156] = b'0';
        header[257..263].copy_from_slice(b"ustar\0");
        header[263..265].copy_from_slice(b"00");
        header[265..269].copy_from_slice(b"root");
        header[297..301].copy_from_slice(b"root");
        let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
        let checksum = format!("{sum:06o}\0 ");
        header[148..156].copy_from_slice(checksum.as_bytes());
        self.bytes.extend_from_slice(&header);
        self.bytes.extend_from_slice(data);
        let padding = (BLOCK - data.len() % BLOCK) % BLOCK;
        self.bytes.extend(std::iter::repeat_n(0, padding));
        Ok(())
    }

    /// The archive, closed with its two zero blocks.
    pub fn finish(mut self) -> Vec<u8> {
        self.bytes.extend(std::iter::repeat_n(0, 2 * BLOCK));
        self.bytes
    }
}

/// `value` in octal, zero-padded to fill `field` but its last byte (a NUL).
fn octal(field: &mut [u8], value: u64) {
    let digits = field.len() - 1;
    let text = format!("{value:0digits$o}");
    field[..digits].copy_from_slice(&text.as_bytes()[text.len() - digits..]);
    field[digits] = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_ustar_with_a_valid_checksum_and_data_is_padded() {
        let mut tar = UstarWriter::default();
        tar.append("README.txt", b"hello\n", 1_700_000_000).unwrap();
        let bytes = tar.finish();
        assert_eq!(bytes.len(), 4 * BLOCK);
        let header = &bytes[..BLOCK];
        assert_eq!(&header[..10], b"README.txt");
        assert_eq!(&header[124..136], b"00000000006\0");
        assert_eq!(&header[257..263], b"ustar\0");
        let stored = u32::from_str_radix(std::str::from_utf8(&header[148..154]).unwrap(), 8);
        let mut blank = header.to_vec();
        blank[148..156].fill(b' ');
        assert_eq!(stored, Ok(blank.iter().map(|b| u32::from(*b)).sum()));
        assert_eq!(&bytes[BLOCK..BLOCK + 6], b"hello\n");
        assert!(bytes[BLOCK + 6..].iter().all(|b| *b == 0));
        assert!(
            UstarWriter::default()
                .append(&"x".repeat(101), b"", 0)
                .is_err()
        );
    }
}
