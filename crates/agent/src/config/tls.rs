//! The agent API's TLS keys, Antrea's `tlsMinVersion` and `tlsCipherSuites`: the lowest
//! protocol version served and the TLS 1.2 cipher suites allowed, by Go's `crypto/tls` names.
//!
//! As in Go, the list restricts TLS 1.2 only: TLS 1.3 suites are not configurable and are all
//! served (their names are accepted and change nothing). The suites served are the AEAD ECDHE
//! ones; Go's other names (RSA key exchange, CBC, RC4, 3DES) are refused as not supported.

use super::ConfigError;

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

/// A TLS 1.2 cipher suite the API can serve (its IANA name is Go's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsCipherSuite {
    EcdheEcdsaAes128GcmSha256,
    EcdheEcdsaAes256GcmSha384,
    EcdheEcdsaChacha20Poly1305Sha256,
    EcdheRsaAes128GcmSha256,
    EcdheRsaAes256GcmSha384,
    EcdheRsaChacha20Poly1305Sha256,
}

impl TlsCipherSuite {
    /// Every suite, in the order the names are listed in errors.
    pub const ALL: [TlsCipherSuite; 6] = [
        TlsCipherSuite::EcdheEcdsaAes128GcmSha256,
        TlsCipherSuite::EcdheEcdsaAes256GcmSha384,
        TlsCipherSuite::EcdheEcdsaChacha20Poly1305Sha256,
        TlsCipherSuite::EcdheRsaAes128GcmSha256,
        TlsCipherSuite::EcdheRsaAes256GcmSha384,
        TlsCipherSuite::EcdheRsaChacha20Poly1305Sha256,
    ];

    /// The IANA (and Go) name.
    pub fn name(self) -> &'static str {
        match self {
            TlsCipherSuite::EcdheEcdsaAes128GcmSha256 => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            TlsCipherSuite::EcdheEcdsaAes256GcmSha384 => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            TlsCipherSuite::EcdheEcdsaChacha20Poly1305Sha256 => {
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
            }
            TlsCipherSuite::EcdheRsaAes128GcmSha256 => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            TlsCipherSuite::EcdheRsaAes256GcmSha384 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            TlsCipherSuite::EcdheRsaChacha20Poly1305Sha256 => {
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
            }
        }
    }

    /// The suite Go's name `name` stands for (Go also spells the ChaCha20 ones without
    /// `_SHA256`).
    fn from_name(name: &str) -> Option<TlsCipherSuite> {
        let full = match name {
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305" => {
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
            }
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305" => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
            other => other,
        };
        TlsCipherSuite::ALL.into_iter().find(|s| s.name() == full)
    }
}

/// Go's TLS 1.3 suite names: accepted, always served.
const TLS13_SUITES: [&str; 3] = [
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

/// Go's other TLS 1.2 suite names, which rustls does not serve.
const NOT_SERVED: [&str; 16] = [
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
];

/// What TLS the API serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// `tlsMinVersion` (default TLS 1.2).
    pub min_version: TlsVersion,
    /// `tlsCipherSuites`: the TLS 1.2 suites allowed, in the order given (empty when only TLS
    /// 1.3 names were given: no TLS 1.2 handshake succeeds); `None` (the default) allows every
    /// one of [`TlsCipherSuite::ALL`].
    pub cipher_suites: Option<Vec<TlsCipherSuite>>,
}

impl Default for TlsSettings {
    fn default() -> TlsSettings {
        TlsSettings {
            min_version: TlsVersion::Tls12,
            cipher_suites: None,
        }
    }
}

/// Antrea's `tlsCipherSuites`: Go names separated by commas (spaces around them ignored; a
/// value without a name is the default, `None`). A name given twice counts once.
pub(super) fn parse_cipher_suites(
    key: &str,
    value: &str,
) -> Result<Option<Vec<TlsCipherSuite>>, ConfigError> {
    let served = || {
        TlsCipherSuite::ALL
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut suites = Vec::new();
    let mut named = false;
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        named = true;
        if TLS13_SUITES.contains(&name) {
            continue;
        }
        let suite = match TlsCipherSuite::from_name(name) {
            Some(suite) => suite,
            None if NOT_SERVED.contains(&name) => {
                return Err(ConfigError::NotSupported {
                    key: key.to_owned(),
                    value: format!("{name:?}"),
                    reason: format!(
                        "the agent API serves only ECDHE AEAD suites for TLS 1.2: {}",
                        served()
                    ),
                });
            }
            None => {
                return Err(ConfigError::InvalidValue {
                    key: key.to_owned(),
                    value: format!("{name:?}"),
                    allowed: format!(
                        "a Go cipher suite name: one of {}, or a TLS 1.3 suite ({})",
                        served(),
                        TLS13_SUITES.join(", ")
                    ),
                });
            }
        };
        if !suites.contains(&suite) {
            suites.push(suite);
        }
    }
    Ok(named.then_some(suites))
}
