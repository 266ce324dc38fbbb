//! A minimal ustar writer: directories and regular files with fixed owner (root), mode and
//! time, so the same input always gives the same bytes (and so the same image digests).

/// The size of a tar block.
const BLOCK: usize = 512;

/// A tar archive being written in memory.
#[derive(Debug, Default)]
pub struct TarWriter {
    bytes: Vec<u8>,
}

/// A name ustar cannot hold (more than 100 bytes, or not ASCII).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tar entry name {0:?}: must be ASCII and at most 100 bytes")]
pub struct NameTooLong(pub String);

impl TarWriter {
    /// An empty archive.
    pub fn new() -> TarWriter {
        TarWriter::default()
    }

    /// Adds directory `name` (written with a trailing `/`), mode 0755.
    pub fn dir(&mut self, name: &str) -> Result<(), NameTooLong> {
        self.header(&format!("{}/", name.trim_end_matches('/')), 0o755, 0, b'5')
    }

    /// Adds regular file `name` with `mode` and `data`.
    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) -> Result<(), NameTooLong> {
        self.header(name, mode, data.len(), b'0')?;
        self.bytes.extend_from_slice(data);
        let pad = (BLOCK - data.len() % BLOCK) % BLOCK;
        self.bytes.extend(std::iter::repeat_n(0, pad));
        Ok(())
    }

    /// The archive with its two closing zero blocks.
    pub fn finish(mut self) -> Vec<u8> {
        self.bytes.extend(std::iter::repeat_n(0, 2 * BLOCK));
        self.bytes
    }

    fn header(&mut self, name: &str, mode: u32, size: usize, kind: u8) -> Result<(), NameTooLong> {
        if name.len() > 100 || !name.is_ascii() {
            return Err(NameTooLong(name.to_owned()));
        }
        let mut h = [0u8; BLOCK];
        h[..name.len()].copy_from_slice(name.as_bytes());
        octal(&mut h[100..108], u64::from(mode));
        octal(&mut h[108..116], 0);
        octal(&mut h[116..124], 0);
        octal(&mut h[124..136], size as u64);
        octal(&mut h[136..148], 0);
        h[156] = kind;
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[265..269].copy_from_slice(b"root");
        h[297..301].copy_from_slice(b"root");
        // The checksum is computed with its own field as spaces.
        h[148..156].fill(b' ');
        let sum: u64 = h.iter().map(|b| u64::from(*b)).sum();
        let text = format!("{sum:06o}\0 ");
        h[148..156].copy_from_slice(text.as_bytes());
        self.bytes.extend_from_slice(&h);
        Ok(())
    }
}

/// Writes `value` as zero-padded octal filling `field` but its last byte (a NUL).
fn octal(field: &mut [u8], value: u64) {
    let width = field.len() - 1;
    let text = format!("{value:0width$o}");
    field[..width].copy_from_slice(&text.as_bytes()[text.len() - width..]);
    field[width] = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tar_reads_back_what_was_written() {
        let mut tar = TarWriter::new();
        tar.dir("bin").unwrap();
        tar.file("bin/hello", 0o755, b"hello\n").unwrap();
        let bytes = tar.finish();
        assert_eq!(bytes.len(), 512 * 5);
        let dir = std::env::temp_dir().join(format!("antrea-lab-tar-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.tar"), &bytes).unwrap();
        let listing = std::process::Command::new("tar")
            .arg("-tvf")
            .arg(dir.join("t.tar"))
            .output()
            .unwrap();
        assert!(listing.status.success(), "{listing:?}");
        let text = String::from_utf8_lossy(&listing.stdout);
        assert!(
            text.contains("drwxr-xr-x root/root") && text.contains(" bin/\n"),
            "{text}"
        );
        assert!(
            text.contains("-rwxr-xr-x root/root         6") && text.contains(" bin/hello"),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_names_are_refused() {
        let mut tar = TarWriter::new();
        assert!(tar.file(&"x".repeat(101), 0o644, b"").is_err());
        assert!(tar.file("caf\u{e9}", 0o644, b"").is_err());
    }
}
