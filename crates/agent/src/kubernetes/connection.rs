//! The connection to the Kubernetes API server: a kubeconfig (`--kubeconfig` or
//! `clientConnection.kubeconfig`) or, without one, the Pod's service account (in-cluster);
//! `kubeAPIServerOverride` replaces the server address either way (a Windows Node cannot reach
//! the `kubernetes` Service's virtual IP before the agent has set up Service routing). TLS is
//! rustls. Requests that fail are retried by their callers: watchers back off and re-list.

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use super::error::KubernetesError;

/// Where the API server is and how to authenticate to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiAccess {
    /// A kubeconfig file; `None` means the in-cluster service account.
    pub kubeconfig: Option<PathBuf>,
    /// `kubeAPIServerOverride`: the API server address to use instead of the configured one.
    pub server_override: Option<String>,
}

/// The URL of a `kubeAPIServerOverride` value: `https://host:port` as is, `host:port` (or a
/// bare host) as `https://host:port`.
pub fn override_url(value: &str) -> Result<String, KubernetesError> {
    let bad = |reason: &str| KubernetesError::BadOverride {
        value: value.to_owned(),
        reason: reason.to_owned(),
    };
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(bad("empty"));
    }
    let url = if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("https://{trimmed}")
    };
    let uri: http::Uri = url
        .parse()
        .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
    match uri.scheme_str() {
        Some("https" | "http") => {}
        _ => return Err(bad("the scheme must be https or http")),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    Ok(url)
}

/// The client configuration `access` describes.
pub async fn client_config(access: &ApiAccess) -> Result<Config, KubernetesError> {
    let mut config = match &access.kubeconfig {
        Some(path) => from_kubeconfig(path).await?,
        // With an override the Service's environment variables are not needed (nor usable).
        None if access.server_override.is_some() => {
            Config::incluster_dns().map_err(KubernetesError::InCluster)?
        }
        None => Config::incluster().map_err(KubernetesError::InCluster)?,
    };
    if let Some(value) = &access.server_override {
        let url = override_url(value)?;
        config.cluster_url =
            url.parse()
                .map_err(|e: http::uri::InvalidUri| KubernetesError::BadOverride {
                    value: value.clone(),
                    reason: e.to_string(),
                })?;
    }
    Ok(config)
}

async fn from_kubeconfig(path: &Path) -> Result<Config, KubernetesError> {
    let wrap = |source| KubernetesError::Kubeconfig {
        path: path.to_owned(),
        source,
    };
    let kubeconfig = Kubeconfig::read_from(path).map_err(wrap)?;
    Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(wrap)
}

/// A client for the API server `access` describes (nothing is sent yet).
pub async fn connect(access: &ApiAccess) -> Result<(Client, String), KubernetesError> {
    let config = client_config(access).await?;
    tracing::info!("Kubernetes API server {}", config.cluster_url);
    let address = server_address(&config.cluster_url);
    let client = Client::try_from(config).map_err(KubernetesError::Client)?;
    Ok((client, address))
}

/// The `host:port` of the API server at `url` (the scheme's port when the URL has none; an IPv6
/// host in brackets), as a TCP probe dials it.
fn server_address(url: &http::Uri) -> String {
    let host = url.host().unwrap_or_default().trim_matches(['[', ']']);
    let port = url
        .port_u16()
        .unwrap_or(if url.scheme_str() == Some("http") {
            80
        } else {
            443
        });
    match host.parse::<std::net::Ipv6Addr>() {
        Ok(v6) => format!("[{v6}]:{port}"),
        Err(_) => format!("{host}:{port}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_urls() {
        assert_eq!(
            override_url("10.0.0.1:6443").unwrap(),
            "https://10.0.0.1:6443"
        );
        assert_eq!(
            override_url("https://api.example:443").unwrap(),
            "https://api.example:443"
        );
        assert_eq!(override_url("api.example").unwrap(), "https://api.example");
        for bad in ["", "  ", "ftp://x:1", "https://", "a b:1"] {
            assert!(
                matches!(override_url(bad), Err(KubernetesError::BadOverride { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn server_addresses_carry_the_port_of_the_url_or_of_its_scheme() {
        for (url, address) in [
            ("https://10.96.0.1:6443", "10.96.0.1:6443"),
            ("https://api.example", "api.example:443"),
            ("http://10.10.0.2", "10.10.0.2:80"),
            ("https://[fd00::1]:6443", "[fd00::1]:6443"),
        ] {
            assert_eq!(server_address(&url.parse().unwrap()), address, "{url}");
        }
    }

    #[tokio::test]
    async fn a_kubeconfig_gives_its_server_unless_overridden() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://10.96.0.1:443\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: abc\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
        )
        .unwrap();
        let mut access = ApiAccess {
            kubeconfig: Some(path.clone()),
            server_override: None,
        };
        let config = client_config(&access).await.unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://10.96.0.1:443/");
        access.server_override = Some("192.168.1.10:6443".into());
        let config = client_config(&access).await.unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://192.168.1.10:6443/");
    }

    #[tokio::test]
    async fn a_missing_kubeconfig_is_named() {
        let access = ApiAccess {
            kubeconfig: Some("/nonexistent/kubeconfig".into()),
            server_override: None,
        };
        let error = client_config(&access).await.unwrap_err();
        assert!(
            error.to_string().contains("/nonexistent/kubeconfig"),
            "{error}"
        );
    }
}
