//! The API's TLS identity: the certificate and key from `apiTLSCertFile`/`apiTLSPrivateKeyFile`,
//! or, without them, a CA and a serving certificate it signs, both made in memory at start
//! (with [`controlplane::certificates`]; the CA is published for antctl, see
//! [`super::local_access`]; its key is dropped once the serving certificate is signed).

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use controlplane::certificates::{CertificateAuthority, ServingCertificate};
use rustls::ServerConfig;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::ApiSetupError;
use crate::config::{AgentApiConfig, TlsCipherSuite, TlsSettings, TlsVersion};

/// What the API serves TLS with.
#[derive(Debug, Clone)]
pub struct ServingIdentity {
    /// The rustls configuration (HTTP/1.1 only).
    pub config: Arc<ServerConfig>,
    /// The PEM CA that signed a self-signed identity; `None` for one from files.
    pub ca_pem: Option<String>,
}

impl ServingIdentity {
    /// The identity `api` asks for; a self-signed one names `localhost`, `node_name`, the
    /// loopback addresses and the bind address (when it is a specific one).
    pub fn from_config(api: &AgentApiConfig, node_name: &str) -> Result<Self, ApiSetupError> {
        match (&api.tls_cert_file, &api.tls_private_key_file) {
            (Some(cert), Some(key)) => Self::from_files(cert, key, &api.tls),
            _ => {
                let mut addresses = vec![
                    IpAddr::from([127, 0, 0, 1]),
                    IpAddr::from([0, 0, 0, 0, 0, 0, 0, 1]),
                ];
                if !api.bind_address.is_unspecified() && !addresses.contains(&api.bind_address) {
                    addresses.push(api.bind_address);
                }
                let names = ["localhost".to_owned(), node_name.to_owned()];
                Self::self_signed(&names, &addresses, &api.tls)
            }
        }
    }

    /// A certificate chain and key (PEM files).
    pub fn from_files(cert: &Path, key: &Path, tls: &TlsSettings) -> Result<Self, ApiSetupError> {
        let given = ServingCertificate::from_pem_files(cert, key).map_err(|e| {
            ApiSetupError::Certificate {
                what: e.path.display().to_string(),
                reason: e.reason,
            }
        })?;
        Ok(ServingIdentity {
            config: server_config(given.chain, given.key, tls)?,
            ca_pem: None,
        })
    }

    /// A fresh CA and a serving certificate it signs for `names` and `addresses`.
    pub fn self_signed(
        names: &[String],
        addresses: &[IpAddr],
        tls: &TlsSettings,
    ) -> Result<Self, ApiSetupError> {
        let generation = |reason: rcgen::Error| ApiSetupError::Certificate {
            what: "the self-signed certificate".to_owned(),
            reason: reason.to_string(),
        };
        let ca = CertificateAuthority::generate(&format!("antrea-agent-ca@{}", names.join(",")))
            .map_err(generation)?;
        let mut sans: Vec<String> = names.iter().filter(|n| !n.is_empty()).cloned().collect();
        sans.extend(addresses.iter().map(IpAddr::to_string));
        let serving = ca
            .serving_certificate("antrea-agent", sans)
            .map_err(generation)?;
        Ok(ServingIdentity {
            config: server_config(serving.chain, serving.key, tls)?,
            ca_pem: Some(ca.cert_pem().to_owned()),
        })
    }
}

fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    tls: &TlsSettings,
) -> Result<Arc<ServerConfig>, ApiSetupError> {
    let tls_error = |reason: rustls::Error| ApiSetupError::Certificate {
        what: "the TLS configuration".to_owned(),
        reason: reason.to_string(),
    };
    let versions: &[&rustls::SupportedProtocolVersion] = match tls.min_version {
        TlsVersion::Tls12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::Tls13 => &[&rustls::version::TLS13],
    };
    let mut config = ServerConfig::builder_with_provider(Arc::new(provider(tls)))
        .with_protocol_versions(versions)
        .map_err(tls_error)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(tls_error)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// ring's provider with the suites `tls` allows: every TLS 1.3 suite, and the TLS 1.2 ones of
/// `tlsCipherSuites` in its order (all of them without the key).
fn provider(tls: &TlsSettings) -> rustls::crypto::CryptoProvider {
    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(allowed) = &tls.cipher_suites {
        let (tls13, tls12): (Vec<_>, Vec<_>) = provider
            .cipher_suites
            .into_iter()
            .partition(|s| matches!(s, rustls::SupportedCipherSuite::Tls13(_)));
        provider.cipher_suites = tls13;
        provider
            .cipher_suites
            .extend(allowed.iter().filter_map(|wanted| {
                tls12
                    .iter()
                    .find(|s| s.suite() == rustls_suite(*wanted))
                    .copied()
            }));
    }
    provider
}

/// rustls's identifier of `suite`.
fn rustls_suite(suite: TlsCipherSuite) -> rustls::CipherSuite {
    use rustls::CipherSuite as R;
    match suite {
        TlsCipherSuite::EcdheEcdsaAes128GcmSha256 => R::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        TlsCipherSuite::EcdheEcdsaAes256GcmSha384 => R::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        TlsCipherSuite::EcdheEcdsaChacha20Poly1305Sha256 => {
            R::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
        }
        TlsCipherSuite::EcdheRsaAes128GcmSha256 => R::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        TlsCipherSuite::EcdheRsaAes256GcmSha384 => R::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        TlsCipherSuite::EcdheRsaChacha20Poly1305Sha256 => {
            R::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suite_the_config_names_is_one_ring_serves() {
        let all = TlsSettings {
            min_version: TlsVersion::Tls12,
            cipher_suites: Some(TlsCipherSuite::ALL.to_vec()),
        };
        let served: Vec<_> = provider(&all)
            .cipher_suites
            .iter()
            .filter(|s| matches!(s, rustls::SupportedCipherSuite::Tls12(_)))
            .map(|s| s.suite())
            .collect();
        let named: Vec<_> = TlsCipherSuite::ALL.into_iter().map(rustls_suite).collect();
        assert_eq!(served, named);
        for suite in TlsCipherSuite::ALL {
            assert_eq!(format!("{:?}", rustls_suite(suite)), suite.name());
        }
    }
}
