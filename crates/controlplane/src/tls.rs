//! The rustls configurations of both ends: the controller serves a certificate chain with ALPN
//! `h2` (gRPC); the agent trusts only the CAs of a PEM bundle it is given (the `antrea-ca`
//! ConfigMap's `ca.crt`) and checks the server's name.

use std::sync::Arc;

use rustls::{ClientConfig, RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Why a TLS configuration could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("the CA bundle: {0}")]
    CaBundle(String),
    #[error("the TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration serving `chain` (leaf first) with `key`, over HTTP/2.
pub fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<ServerConfig>, TlsError> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

/// A client configuration trusting the certificates of `ca_pem` only, over HTTP/2.
pub fn client_config(ca_pem: &str) -> Result<Arc<ClientConfig>, TlsError> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        let cert = cert.map_err(|e| TlsError::CaBundle(e.to_string()))?;
        roots
            .add(cert)
            .map_err(|e| TlsError::CaBundle(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(TlsError::CaBundle("no CERTIFICATE in it".to_owned()));
    }
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_without_certificates_is_refused() {
        for bundle in [
            "",
            "not PEM",
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        ] {
            assert!(
                matches!(client_config(bundle), Err(TlsError::CaBundle(_))),
                "{bundle:?}"
            );
        }
    }
}
