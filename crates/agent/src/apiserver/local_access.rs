//! What a local client (antctl on the Node, in the agent's Pod or on the host) needs to reach
//! the API, written at every start into `apiLocalAccessDir`: `ca.crt`, the CA of a self-signed
//! serving certificate (removed when the certificate comes from files), and
//! `loopback-client-token`, a fresh random token the API accepts for every path. On Unix the
//! token file is readable by its owner only; on Windows it inherits the directory's ACL.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use ring::rand::{SecureRandom, SystemRandom};

use super::ApiSetupError;

/// The CA file's name in the directory.
pub const CA_FILE: &str = "ca.crt";
/// The loopback token file's name in the directory.
pub const TOKEN_FILE: &str = "loopback-client-token";

/// A fresh token (256 random bits, hex), written with `ca_pem` into `dir`.
pub fn publish(dir: &Path, ca_pem: Option<&str>) -> Result<String, ApiSetupError> {
    let io_error =
        |path: PathBuf| move |source: std::io::Error| ApiSetupError::LocalAccess { path, source };
    let mut bytes = [0u8; 32];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| ApiSetupError::Random)?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    fs::create_dir_all(dir).map_err(io_error(dir.to_owned()))?;
    let ca_path = dir.join(CA_FILE);
    match ca_pem {
        Some(pem) => {
            write_replacing(&ca_path, pem.as_bytes(), false).map_err(io_error(ca_path.clone()))?
        }
        None => match fs::remove_file(&ca_path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(io_error(ca_path)(error)),
        },
    }
    let token_path = dir.join(TOKEN_FILE);
    write_replacing(&token_path, token.as_bytes(), true).map_err(io_error(token_path))?;
    Ok(token)
}

/// Writes `contents` to a new file next to `path` (named after this process, so two agents
/// given one directory by mistake never rename each other's file away), then renames it over
/// `path`, so a reader sees the old file or the new one; `private` files are created
/// owner-only on Unix.
fn write_replacing(path: &Path, contents: &[u8], private: bool) -> std::io::Result<()> {
    let mut next = path.as_os_str().to_owned();
    next.push(format!(".next.{}", std::process::id()));
    let next = PathBuf::from(next);
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if private { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = private;
    let _ = fs::remove_file(&next);
    let mut file = options.open(&next)?;
    file.write_all(contents)?;
    file.sync_all()?;
    drop(file);
    fs::rename(&next, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_start_gets_a_new_token_and_the_ca_follows_the_identity() {
        let dir = tempfile::tempdir().unwrap();
        let first = publish(dir.path(), Some("CA\n")).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(
            fs::read_to_string(dir.path().join(TOKEN_FILE)).unwrap(),
            first
        );
        assert_eq!(
            fs::read_to_string(dir.path().join(CA_FILE)).unwrap(),
            "CA\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.path().join(TOKEN_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let second = publish(dir.path(), None).unwrap();
        assert_ne!(first, second);
        assert!(!dir.path().join(CA_FILE).exists());
    }
}
