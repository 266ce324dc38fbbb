//! The agent API client: a GET with hyper's client, bounded in time.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

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
}

/// GETs `path` from the agent API at `server` (`host:port`); the body of a 200 response.
pub async fn get(server: &str, path: &str) -> Result<String, ClientError> {
    let transport = |reason: String| ClientError::Transport {
        server: server.to_owned(),
        reason,
    };
    let uri: http::Uri = format!("http://{server}{path}")
        .parse()
        .map_err(|e: http::uri::InvalidUri| transport(e.to_string()))?;
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let exchange = async {
        let response = client
            .get(uri)
            .await
            .map_err(|e| transport(e.to_string()))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| transport(e.to_string()))?
            .to_bytes();
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
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
            body: body.trim_end().to_owned(),
        })
    }
}
