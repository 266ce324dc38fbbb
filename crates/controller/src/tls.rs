//! The controller's serving identity ([`ServingTls`]): a certificate and key from files, or a
//! serving certificate signed by the controller's own CA.
//!
//! The CA is made once and kept in a Secret (`kube-system/antrea-controller-tls`, keys
//! `ca.crt` and `ca.key`), so that the next leader signs with the same CA and the agents keep
//! trusting it; it is published in the ConfigMap `kube-system/antrea-ca` under `ca.crt`, where
//! agents read it. The serving certificate is made at each start, for the Service's DNS names
//! and the names and addresses given with `--tls-san`. Both are made with
//! [`controlplane::certificates`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use controlplane::certificates::{CertificateAuthority, ServingCertificate};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use rcgen::{Issuer, KeyPair};

/// The Secret key of the CA certificate, and the ConfigMap key agents read it from.
pub const CA_CERT_KEY: &str = "ca.crt";
/// The Secret key of the CA's private key.
pub const CA_KEY_KEY: &str = "ca.key";

/// Where the serving identity comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsSource {
    /// A PEM certificate chain (leaf first) and its PEM private key.
    Files { cert: PathBuf, key: PathBuf },
    /// A certificate signed by the CA kept in `namespace/secret` and published in
    /// `namespace/config_map`.
    OwnCa {
        namespace: String,
        secret: String,
        config_map: String,
    },
}

impl Default for TlsSource {
    fn default() -> Self {
        TlsSource::OwnCa {
            namespace: "kube-system".into(),
            secret: "antrea-controller-tls".into(),
            config_map: "antrea-ca".into(),
        }
    }
}

/// The Service agents reach the controller through: its DNS names are in every self-signed
/// serving certificate.
pub const SERVICE_NAMES: [&str; 4] = [
    "antrea",
    "antrea.kube-system",
    "antrea.kube-system.svc",
    "antrea.kube-system.svc.cluster.local",
];

/// What the controller serves TLS with.
#[derive(Debug, Clone)]
pub struct ServingTls {
    pub config: Arc<rustls::ServerConfig>,
    /// The CA that signed the certificate, PEM (`None` for files).
    pub ca_pem: Option<String>,
}

/// Why there is no serving identity.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{what}: {reason}")]
    File { what: String, reason: String },
    #[error("the Secret {secret} holds no usable CA ({reason}); delete it to have a new CA made")]
    BadSecret { secret: String, reason: String },
    #[error("{what}: {source}")]
    Api {
        what: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot make a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error(transparent)]
    Config(#[from] controlplane::tls::TlsError),
}

/// The identity `source` gives; an own CA's certificate also names `sans` (DNS names or IP
/// addresses).
pub async fn serving_tls(
    client: &Client,
    source: &TlsSource,
    sans: &[String],
) -> Result<ServingTls, TlsError> {
    match source {
        TlsSource::Files { cert, key } => from_files(cert, key),
        TlsSource::OwnCa {
            namespace,
            secret,
            config_map,
        } => {
            let ca = ensure_ca(
                &Api::namespaced(client.clone(), namespace),
                namespace,
                secret,
            )
            .await?;
            publish_ca(
                &Api::namespaced(client.clone(), namespace),
                namespace,
                config_map,
                ca.cert_pem(),
            )
            .await?;
            let mut names: Vec<String> = SERVICE_NAMES.iter().map(|n| (*n).to_owned()).collect();
            names.extend(
                sans.iter()
                    .filter(|s| !names.contains(s))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            let serving = ca.serving_certificate("antrea-controller", names)?;
            Ok(ServingTls {
                config: controlplane::tls::server_config(serving.chain, serving.key)?,
                ca_pem: Some(ca.cert_pem().to_owned()),
            })
        }
    }
}

fn from_files(cert: &std::path::Path, key: &std::path::Path) -> Result<ServingTls, TlsError> {
    let given = ServingCertificate::from_pem_files(cert, key).map_err(|e| TlsError::File {
        what: e.path.display().to_string(),
        reason: e.reason,
    })?;
    Ok(ServingTls {
        config: controlplane::tls::server_config(given.chain, given.key)?,
        ca_pem: None,
    })
}

/// The CA kept in the Secret, made and stored first if there is none. Of two replicas making
/// one at once, the API server keeps the first; the second reads it back.
async fn ensure_ca(
    secrets: &Api<Secret>,
    namespace: &str,
    name: &str,
) -> Result<CertificateAuthority, TlsError> {
    let what = format!("the Secret {namespace}/{name}");
    let api_error = |source| TlsError::Api {
        what: what.clone(),
        source,
    };
    if let Some(secret) = secrets.get_opt(name).await.map_err(api_error)? {
        return read_ca(&secret, &what);
    }
    let ca = CertificateAuthority::generate("antrea-controller-ca")?;
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".to_owned()),
        data: Some(BTreeMap::from([
            (
                CA_CERT_KEY.to_owned(),
                ByteString(ca.cert_pem().as_bytes().to_vec()),
            ),
            (CA_KEY_KEY.to_owned(), ByteString(ca.key_pem().into_bytes())),
        ])),
        ..Secret::default()
    };
    match secrets.create(&PostParams::default(), &secret).await {
        Ok(_) => {
            tracing::info!("made a CA and kept it in {what}");
            Ok(ca)
        }
        Err(kube::Error::Api(status)) if status.code == 409 => {
            let secret = secrets.get(name).await.map_err(api_error)?;
            read_ca(&secret, &what)
        }
        Err(error) => Err(api_error(error)),
    }
}

fn read_ca(secret: &Secret, what: &str) -> Result<CertificateAuthority, TlsError> {
    let bad = |reason: String| TlsError::BadSecret {
        secret: what.trim_start_matches("the Secret ").to_owned(),
        reason,
    };
    let field = |key: &str| {
        secret
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .ok_or_else(|| bad(format!("no {key}")))
            .and_then(|b| {
                String::from_utf8(b.0.clone()).map_err(|_| bad(format!("{key} is not text")))
            })
    };
    let cert_pem = field(CA_CERT_KEY)?;
    let key =
        KeyPair::from_pem(&field(CA_KEY_KEY)?).map_err(|e| bad(format!("{CA_KEY_KEY}: {e}")))?;
    let issuer =
        Issuer::from_ca_cert_pem(&cert_pem, key).map_err(|e| bad(format!("{CA_CERT_KEY}: {e}")))?;
    let ca = CertificateAuthority::from_kept(cert_pem, issuer)
        .map_err(|e| bad(format!("{CA_CERT_KEY}: {e}")))?;
    tracing::info!("signing with the CA kept in {what}");
    Ok(ca)
}

/// Puts `ca_pem` in the ConfigMap under [`CA_CERT_KEY`], keeping its other keys.
async fn publish_ca(
    config_maps: &Api<ConfigMap>,
    namespace: &str,
    name: &str,
    ca_pem: &str,
) -> Result<(), TlsError> {
    let what = format!("the ConfigMap {namespace}/{name}");
    let api_error = |source| TlsError::Api {
        what: what.clone(),
        source,
    };
    match config_maps.get_opt(name).await.map_err(api_error)? {
        Some(mut map) => {
            let data = map.data.get_or_insert_with(BTreeMap::new);
            if data.get(CA_CERT_KEY).map(String::as_str) == Some(ca_pem) {
                return Ok(());
            }
            data.insert(CA_CERT_KEY.to_owned(), ca_pem.to_owned());
            config_maps
                .replace(name, &PostParams::default(), &map)
                .await
                .map_err(api_error)?;
        }
        None => {
            let map = ConfigMap {
                metadata: ObjectMeta {
                    name: Some(name.to_owned()),
                    namespace: Some(namespace.to_owned()),
                    ..ObjectMeta::default()
                },
                data: Some(BTreeMap::from([(
                    CA_CERT_KEY.to_owned(),
                    ca_pem.to_owned(),
                )])),
                ..ConfigMap::default()
            };
            config_maps
                .create(&PostParams::default(), &map)
                .await
                .map_err(api_error)?;
        }
    }
    tracing::info!("published the CA in {what}");
    Ok(())
}
