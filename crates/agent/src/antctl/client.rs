//! The agent API client: one GET over HTTPS (the agent's certificate checked against a CA the
//! caller trusts), with a bearer token, bounded in time.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::credentials::Credentials;

/// How long a call may take, connection and answer included.
const TIMEOUT: Duration = Duration::from_secs(15);

/// Why a call gave no document.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("agent API at {server}: {reason}")]
    Transport { server: String, reason: String },
    #[error("agent API at {server}: no answer within {TIMEOUT:?}")]
    Timeout { server: String },
    #[error("agent API at {server}{path}: HTTP {status}: {body}")]
    Status {
        server: String,
        path: String,
        status: u16,
        body: String,
    },
    #[error("{0}")]
    Credentials(String),
}

/// GETs `path` from the agent API at `server` (`host:port`) with `credentials`; the body of a
/// 200 response, as text.
pub async fn get(
    server: &str,
    path: &str,
    credentials: &Credentials,
) -> Result<String, ClientError> {
    let body = get_bytes(server, path, credentials).await?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// [`get`] for a document that is not text (the support bundle): the body's bytes.
pub async fn get_bytes(
    server: &str,
    path: &str,
    credentials: &Credentials,
) -> Result<Vec<u8>, ClientError> {
    let transport = |reason: String| ClientError::Transport {
        server: server.to_owned(),
        reason,
    };
    let host = match server.rsplit_once(':') {
        Some((host, _)) => host.trim_start_matches('[').trim_end_matches(']'),
        None => return Err(transport("expected host:port".to_owned())),
    };
    let name =
        ServerName::try_from(host.to_owned()).map_err(|e| transport(format!("{host}: {e}")))?;
    let connector = TlsConnector::from(tls_config(&credentials.ca_pem)?);
    let mut request = http::Request::get(path)
        .header(http::header::HOST, server)
        .body(Empty::<Bytes>::new())
        .map_err(|e| transport(e.to_string()))?;
    if let Some(token) = &credentials.token {
        let value = format!("Bearer {token}").parse().map_err(|_| {
            ClientError::Credentials("the token is not a valid header value".to_owned())
        })?;
        request
            .headers_mut()
            .insert(http::header::AUTHORIZATION, value);
    }
    let exchange = async {
        let tcp = TcpStream::connect(server)
            .await
            .map_err(|e| transport(e.to_string()))?;
        let tls = connector
            .connect(name, tcp)
            .await
            .map_err(|e| transport(format!("TLS: {e}")))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| transport(e.to_string()))?;
        tokio::spawn(connection);
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| transport(e.to_string()))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| transport(e.to_string()))?
            .to_bytes();
        Ok((status, body.to_vec()))
    };
    let (status, body) = tokio::time::timeout(TIMEOUT, exchange)
        .await
        .map_err(|_| ClientError::Timeout {
            server: server.to_owned(),
        })??;
    if status == http::StatusCode::OK {
        Ok(body)
    } else {
        Err(ClientError::Status {
            server: server.to_owned(),
            path: path.to_owned(),
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).trim_end().to_owned(),
        })
    }
}

/// A client configuration trusting the certificates in `ca_pem` only.
fn tls_config(ca_pem: &[u8]) -> Result<Arc<rustls::ClientConfig>, ClientError> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem) {
        let cert = cert.map_err(|e| ClientError::Credentials(format!("the CA file: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| ClientError::Credentials(format!("the CA file: {e}")))?;
    }
    if roots.is_empty() {
        return Err(ClientError::Credentials(
            "the CA file holds no certificate".to_owned(),
        ));
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| ClientError::Credentials(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(Arc::new(config))
}
