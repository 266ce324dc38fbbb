//! [`CertificateAuthority`]: a CA made with rcgen and the serving certificates it signs — the
//! one way antrea-controller (its own CA, kept in a Secret) and the agent API (a CA made in
//! memory at start) make their self-signed TLS identities; and [`ServingCertificate`], a
//! serving chain and key, signed so or read from PEM files (both servers' given certificates).

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A CA that signs serving certificates (and no other CA: path length 0).
pub struct CertificateAuthority {
    cert_pem: String,
    cert_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for CertificateAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateAuthority")
            .field("cert_pem", &self.cert_pem)
            .finish_non_exhaustive()
    }
}

/// A serving certificate: its chain (the leaf first, then its CAs) and its private key.
#[derive(Debug)]
pub struct ServingCertificate {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

/// Why a PEM file gave no certificate chain or key.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub struct PemFileError {
    pub path: PathBuf,
    pub reason: String,
}

impl ServingCertificate {
    /// The certificate chain of the PEM file `cert` (leaf first) and the private key of the PEM
    /// file `key`.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<ServingCertificate, PemFileError> {
        let error = |path: &Path, reason: String| PemFileError {
            path: path.to_owned(),
            reason,
        };
        let chain = CertificateDer::pem_file_iter(cert)
            .map_err(|e| error(cert, e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| error(cert, e.to_string()))?;
        if chain.is_empty() {
            return Err(error(cert, "no CERTIFICATE in the file".to_owned()));
        }
        let key = PrivateKeyDer::from_pem_file(key).map_err(|e| error(key, e.to_string()))?;
        Ok(ServingCertificate { chain, key })
    }
}

impl CertificateAuthority {
    /// A new self-signed CA with a new key, named `common_name`.
    pub fn generate(common_name: &str) -> Result<CertificateAuthority, rcgen::Error> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::default();
        params.distinguished_name = named(common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key)?;
        Ok(CertificateAuthority {
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            issuer: Issuer::new(params, key),
        })
    }

    /// A CA kept before: its PEM certificate and the issuer made of it and its key.
    pub fn from_kept(
        cert_pem: String,
        issuer: Issuer<'static, KeyPair>,
    ) -> Result<CertificateAuthority, rustls_pki_types::pem::Error> {
        let cert_der = CertificateDer::from_pem_slice(cert_pem.as_bytes())?;
        Ok(CertificateAuthority {
            cert_pem,
            cert_der,
            issuer,
        })
    }

    /// The CA's certificate, PEM: what clients trust.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA's private key, PEM (PKCS#8), for keeping the CA.
    pub fn key_pem(&self) -> String {
        self.issuer.key().serialize_pem()
    }

    /// A new key and a serving certificate for it, named `common_name`, valid for `names` (DNS
    /// names or IP addresses), signed by this CA.
    pub fn serving_certificate(
        &self,
        common_name: &str,
        names: Vec<String>,
    ) -> Result<ServingCertificate, rcgen::Error> {
        let mut params = CertificateParams::new(names)?;
        params.distinguished_name = named(common_name);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(ServingCertificate {
            chain: vec![cert.der().clone(), self.cert_der.clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        })
    }
}

fn named(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate and its key, PEM, written to `cert.pem` and `key.pem` in `dir`.
    fn written(dir: &Path) -> (rcgen::CertifiedKey<KeyPair>, PathBuf, PathBuf) {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cert, made.cert.pem()).unwrap();
        std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
        (made, cert, key)
    }

    #[test]
    fn a_chain_and_key_are_read_from_pem_files() {
        let dir = tempfile::tempdir().unwrap();
        let (made, cert, key) = written(dir.path());
        let read = ServingCertificate::from_pem_files(&cert, &key).unwrap();
        assert_eq!(read.chain, [made.cert.der().clone()]);
        assert_eq!(
            read.key.secret_der(),
            made.signing_key.serialize_der().as_slice()
        );
    }

    #[test]
    fn a_file_without_what_it_must_hold_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let (_, cert, key) = written(dir.path());
        let missing = dir.path().join("missing.pem");
        let error = ServingCertificate::from_pem_files(&missing, &key).unwrap_err();
        assert_eq!(error.path, missing);
        // The key file holds no certificate, the certificate file no key.
        let error = ServingCertificate::from_pem_files(&key, &key).unwrap_err();
        assert_eq!(error.path, key);
        assert_eq!(error.reason, "no CERTIFICATE in the file");
        let error = ServingCertificate::from_pem_files(&cert, &cert).unwrap_err();
        assert_eq!(error.path, cert);
    }
}
