//! The agent API's keys: the bind address, the serving certificate (a file pair, else a
//! self-signed one made at start), the lowest TLS version, and the directory where the agent
//! leaves what local clients (antctl on the Node) need to reach it.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use super::{ConfigError, Platform};

/// How the agent API listens and proves who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentApiConfig {
    /// `apiBindAddress` (antrea-rs): the address the API listens on (default `0.0.0.0`, every
    /// IPv4 address; `::` for every address of both families).
    pub bind_address: IpAddr,
    /// `apiTLSCertFile` (antrea-rs): the serving certificate chain (PEM); with
    /// `apiTLSPrivateKeyFile`. Unset: a self-signed certificate made at every start.
    pub tls_cert_file: Option<PathBuf>,
    /// `apiTLSPrivateKeyFile` (antrea-rs): the key of `apiTLSCertFile` (PEM).
    pub tls_private_key_file: Option<PathBuf>,
    /// `tlsMinVersion` (Antrea's key): the lowest TLS version served (default TLS 1.2).
    pub tls_min_version: TlsVersion,
    /// `apiLocalAccessDir` (antrea-rs): where the agent writes, at every start, `ca.crt` (the CA
    /// of its self-signed certificate) and `loopback-client-token` (a random token, readable by
    /// the agent's user only, that the API accepts for every path).
    pub local_access_dir: PathBuf,
}

/// A TLS protocol version the API can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    /// TLS 1.2 (`VersionTLS12`).
    Tls12,
    /// TLS 1.3 (`VersionTLS13`).
    Tls13,
}

impl TlsVersion {
    /// Antrea's `tlsMinVersion` names (Go's `crypto/tls` constants).
    pub(super) fn parse(key: &str, value: &str) -> Result<TlsVersion, ConfigError> {
        match value {
            "VersionTLS12" => Ok(TlsVersion::Tls12),
            "VersionTLS13" => Ok(TlsVersion::Tls13),
            "VersionTLS10" | "VersionTLS11" => Err(ConfigError::NotSupported {
                key: key.to_owned(),
                value: format!("{value:?}"),
                reason:
                    "the agent API serves TLS 1.2 and 1.3 only; use VersionTLS12 or VersionTLS13"
                        .to_owned(),
            }),
            _ => Err(ConfigError::InvalidValue {
                key: key.to_owned(),
                value: format!("{value:?}"),
                allowed: "one of VersionTLS12, VersionTLS13".to_owned(),
            }),
        }
    }
}

impl AgentApiConfig {
    /// The defaults on `platform`.
    pub fn defaults(platform: Platform) -> AgentApiConfig {
        AgentApiConfig {
            bind_address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            tls_cert_file: None,
            tls_private_key_file: None,
            tls_min_version: TlsVersion::Tls12,
            local_access_dir: platform.default_api_local_access_dir().into(),
        }
    }
}
