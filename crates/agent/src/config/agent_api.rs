//! The agent API's keys: the bind address, the serving certificate (a file pair, else a
//! self-signed one made at start), the TLS version and suites, and the directory where the agent
//! leaves what local clients (antctl on the Node) need to reach it.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use super::{Platform, TlsSettings};

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
    /// `tlsMinVersion` and `tlsCipherSuites` (Antrea's keys).
    pub tls: TlsSettings,
    /// `apiLocalAccessDir` (antrea-rs): where the agent writes, at every start, `ca.crt` (the CA
    /// of its self-signed certificate) and `loopback-client-token` (a random token, readable by
    /// the agent's user only, that the API accepts for every path).
    pub local_access_dir: PathBuf,
}

impl AgentApiConfig {
    /// The defaults on `platform`.
    pub fn defaults(platform: Platform) -> AgentApiConfig {
        AgentApiConfig {
            bind_address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            tls_cert_file: None,
            tls_private_key_file: None,
            tls: TlsSettings::default(),
            local_access_dir: platform.default_api_local_access_dir().into(),
        }
    }
}
