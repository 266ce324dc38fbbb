//! What antctl shows the agent: a token and the CA to check the agent's certificate with.
//! The token is the one given (`--token`, `ANTCTL_TOKEN`, `--token-file`), else the agent's
//! loopback token in its local access directory, else the Pod's ServiceAccount token; the CA
//! is the one given (`--ca-file`), else the agent's `ca.crt` in that directory.

use std::path::{Path, PathBuf};

use super::ClientError;
use crate::apiserver::local_access::{CA_FILE, TOKEN_FILE};

/// Where a Pod's ServiceAccount token is mounted.
pub const SERVICE_ACCOUNT_TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// What the caller gave.
#[derive(Debug, Clone, Default)]
pub struct CredentialSources {
    /// A token.
    pub token: Option<String>,
    /// A file holding the token.
    pub token_file: Option<PathBuf>,
    /// The CA (PEM) of the agent's certificate.
    pub ca_file: Option<PathBuf>,
    /// The agent's local access directory.
    pub local_access_dir: PathBuf,
}

/// A token (none: only the probes answer) and the CA certificates (PEM).
#[derive(Debug, Clone)]
pub struct Credentials {
    /// The bearer token.
    pub token: Option<String>,
    /// The trusted CA certificates (PEM).
    pub ca_pem: Vec<u8>,
}

impl Credentials {
    /// The credentials `sources` lead to.
    pub fn resolve(sources: &CredentialSources) -> Result<Credentials, ClientError> {
        let read = |path: &Path| {
            std::fs::read(path)
                .map_err(|e| ClientError::Credentials(format!("{}: {e}", path.display())))
        };
        let token = match (&sources.token, &sources.token_file) {
            (Some(token), _) => Some(token.clone()),
            (None, Some(file)) => Some(String::from_utf8_lossy(&read(file)?).trim().to_owned()),
            (None, None) => [
                sources.local_access_dir.join(TOKEN_FILE),
                PathBuf::from(SERVICE_ACCOUNT_TOKEN),
            ]
            .iter()
            .find_map(|path| std::fs::read(path).ok())
            .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned()),
        };
        let ca_path = sources
            .ca_file
            .clone()
            .unwrap_or_else(|| sources.local_access_dir.join(CA_FILE));
        let ca_pem = read(&ca_path).map_err(|error| {
            ClientError::Credentials(format!(
                "no CA to check the agent's certificate with ({error}); give --ca-file"
            ))
        })?;
        Ok(Credentials { token, ca_pem })
    }
}
