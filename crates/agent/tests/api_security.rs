//! The agent API's security against real sockets: the API served in-process over TLS on a
//! loopback port, tokens reviewed by the fake API server over TCP through a real kube client,
//! requests made by antctl's client (which checks the certificate against the agent's CA) or
//! written raw over TLS for the malformed ones.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use agent::antctl::{ClientError, Credentials, get};
use agent::apiserver::{self, AgentApi, ApiAuth, ServeLimits, ServingIdentity, local_access};
use agent::config::{TlsCipherSuite, TlsSettings, TlsVersion};
use fakeapi::{FakeApiServer, TcpServer};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

/// Hang guard for waits (not a timing threshold).
const HANG_GUARD: Duration = Duration::from_secs(60);

/// A running agent API with its fake API server.
struct Harness {
    server: String,
    ca_pem: Vec<u8>,
    loopback_token: String,
    fake: FakeApiServer,
    _fake_tcp: TcpServer,
    _dir: tempfile::TempDir,
    shutdown: CancellationToken,
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Whether the API asks the fake API server (Kubernetes mode) or has none (directory mode).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Kubernetes,
    Directory,
}

async fn start(bind: IpAddr, limits: ServeLimits, mode: Mode) -> Harness {
    start_with_tls(bind, limits, mode, &TlsSettings::default()).await
}

async fn start_with_tls(
    bind: IpAddr,
    limits: ServeLimits,
    mode: Mode,
    tls: &TlsSettings,
) -> Harness {
    let fake = FakeApiServer::new();
    let fake_tcp = fake.serve_tcp().await.unwrap();
    let client =
        kube::Client::try_from(kube::Config::new(fake_tcp.url().parse().unwrap())).unwrap();
    seed_rbac(&fake);
    let identity =
        ServingIdentity::self_signed(&["localhost".to_owned(), "node-a".to_owned()], &[bind], tls)
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let loopback_token = local_access::publish(dir.path(), identity.ca_pem.as_deref()).unwrap();
    let auth = Arc::new(match mode {
        Mode::Kubernetes => ApiAuth::with_api_server(&loopback_token),
        Mode::Directory => ApiAuth::loopback_only(&loopback_token),
    });
    auth.use_client(client);
    let listener = apiserver::listen(bind, 0).await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    tokio::spawn(apiserver::serve(
        listener,
        identity.config,
        Arc::new(AgentApi::default()),
        auth,
        limits,
        shutdown.clone(),
    ));
    Harness {
        server: address.to_string(),
        ca_pem: std::fs::read(dir.path().join(local_access::CA_FILE)).unwrap(),
        loopback_token,
        fake,
        _fake_tcp: fake_tcp,
        _dir: dir,
        shutdown,
    }
}

/// The RBAC of build/yamls/antrea-agent-rbac.yml for Prometheus: `get` on /metrics and /v1/*.
fn seed_rbac(fake: &FakeApiServer) {
    let role: ClusterRole = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "antrea-agent-api-reader"},
        "rules": [{"nonResourceURLs": ["/metrics", "/v1/*"], "verbs": ["get"]}],
    }))
    .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "prometheus-antrea-agent-api"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "antrea-agent-api-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}],
    }))
    .unwrap();
    fake.insert(&role).unwrap();
    fake.insert(&binding).unwrap();
}

fn loopback() -> IpAddr {
    IpAddr::from([127, 0, 0, 1])
}

impl Harness {
    async fn get(&self, path: &str, token: Option<&str>) -> Result<String, ClientError> {
        let credentials = Credentials {
            token: token.map(str::to_owned),
            ca_pem: self.ca_pem.clone(),
        };
        get(&self.server, path, &credentials).await
    }

    /// The HTTP status of GET `path` with `token`.
    async fn status(&self, path: &str, token: Option<&str>) -> u16 {
        match self.get(path, token).await {
            Ok(_) => 200,
            Err(ClientError::Status { status, .. }) => status,
            Err(other) => panic!("GET {path}: {other}"),
        }
    }

    fn reviews(&self) -> usize {
        self.fake
            .requests()
            .iter()
            .filter(|r| r.path.ends_with("reviews"))
            .count()
    }

    /// A TLS connection checked against the agent's CA, for raw requests.
    async fn tls(&self) -> tokio_rustls::client::TlsStream<TcpStream> {
        self.handshake(
            rustls::crypto::ring::default_provider(),
            rustls::ALL_VERSIONS,
        )
        .await
        .unwrap()
    }

    /// A TLS handshake offering only `provider`'s suites and `versions`.
    async fn handshake(
        &self,
        provider: rustls::crypto::CryptoProvider,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&self.ca_pem) {
            roots.add(cert.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
            .with_protocol_versions(versions)
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let tcp = TcpStream::connect(&self.server).await.unwrap();
        let host: SocketAddr = self.server.parse().unwrap();
        tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(ServerName::IpAddress(host.ip().into()), tcp)
            .await
    }

    /// The suite negotiated by a client offering only `suite` over `version`; the handshake
    /// error when the agent refuses.
    async fn negotiate(
        &self,
        suite: rustls::SupportedCipherSuite,
        version: &'static rustls::SupportedProtocolVersion,
    ) -> std::io::Result<rustls::CipherSuite> {
        let provider = rustls::crypto::CryptoProvider {
            cipher_suites: vec![suite],
            ..rustls::crypto::ring::default_provider()
        };
        let stream = self.handshake(provider, &[version]).await?;
        Ok(stream
            .get_ref()
            .1
            .negotiated_cipher_suite()
            .expect("a completed handshake has a suite")
            .suite())
    }

    /// Writes `request` raw over TLS; what the agent answers until it closes the connection.
    async fn raw(&self, request: &[u8]) -> String {
        let mut stream = self.tls().await;
        stream.write_all(request).await.unwrap();
        stream.flush().await.unwrap();
        read_until_closed(&mut stream).await
    }
}

/// Reads until the peer closes (an error after a close without close_notify counts as closed).
async fn read_until_closed(stream: &mut (impl AsyncReadExt + Unpin)) -> String {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout(HANG_GUARD, stream.read(&mut buffer))
            .await
            .expect("the agent closes the connection before the hang guard")
        {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&answer).into_owned(),
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
        }
    }
}

#[tokio::test]
async fn tokens_get_200_401_or_403_and_the_probes_stay_open() {
    let api = start(loopback(), ServeLimits::default(), Mode::Kubernetes).await;
    let permitted = api
        .fake
        .issue_service_account_token("monitoring", "prometheus");
    let unpermitted = api.fake.issue_service_account_token("default", "nobody");

    // The probes need no token (not ready: the agent has not brought its Node up).
    assert_eq!(api.status("/livez", None).await, 200);
    assert_eq!(api.status("/readyz", None).await, 503);

    for path in [
        "/metrics",
        "/v1/pipeline",
        "/v1/networkpolicies",
        "/v1/podinterfaces",
        "/v1/ovsflows",
        "/v1/tracepacket",
        "/v1/supportbundle",
        "/v1/featuregates",
        "/v1/version",
    ] {
        assert_eq!(api.status(path, None).await, 401, "{path} without a token");
        assert_eq!(api.status(path, Some("not-a-token")).await, 401, "{path}");
        assert_eq!(api.status(path, Some(&unpermitted)).await, 403, "{path}");
    }
    assert_eq!(api.status("/metrics", Some(&permitted)).await, 200);
    assert_eq!(api.status("/v1/version", Some(&permitted)).await, 200);
    // Past authorization: the pipeline has no switch to read in this harness.
    let pipeline = api.get("/v1/pipeline", Some(&permitted)).await.unwrap_err();
    assert!(
        pipeline.to_string().contains("HTTP 503") && pipeline.to_string().contains("OpenFlow"),
        "{pipeline}"
    );
    // The loopback token needs no review.
    let before = api.reviews();
    assert_eq!(api.status("/metrics", Some(&api.loopback_token)).await, 200);
    assert_eq!(api.reviews(), before);
    // A revoked token keeps its answer for the cache's short life; a repeated scrape costs no
    // review.
    assert_eq!(api.status("/metrics", Some(&permitted)).await, 200);
    assert_eq!(api.reviews(), before);
    let denied = api.get("/metrics", Some(&unpermitted)).await.unwrap_err();
    assert!(
        denied
            .to_string()
            .contains("system:serviceaccount:default:nobody"),
        "{denied}"
    );
}

#[tokio::test]
async fn without_an_api_server_only_the_loopback_token_opens_the_api() {
    let api = start(loopback(), ServeLimits::default(), Mode::Directory).await;
    let service_account = api
        .fake
        .issue_service_account_token("monitoring", "prometheus");
    assert_eq!(api.status("/metrics", Some(&service_account)).await, 401);
    assert_eq!(api.status("/v1/networkpolicies", None).await, 401);
    assert_eq!(api.status("/metrics", Some(&api.loopback_token)).await, 200);
    assert_eq!(api.status("/livez", None).await, 200);
    assert_eq!(api.reviews(), 0);
}

#[tokio::test]
async fn the_certificate_verifies_with_the_agents_ca_only() {
    let api = start(loopback(), ServeLimits::default(), Mode::Kubernetes).await;
    let other = ServingIdentity::self_signed(
        &["localhost".to_owned()],
        &[loopback()],
        &TlsSettings::default(),
    )
    .unwrap();
    let credentials = Credentials {
        token: Some(api.loopback_token.clone()),
        ca_pem: other.ca_pem.unwrap().into_bytes(),
    };
    let error = get(&api.server, "/livez", &credentials).await.unwrap_err();
    assert!(error.to_string().contains("TLS"), "{error}");
    assert_eq!(api.status("/livez", None).await, 200);
}

#[tokio::test]
async fn the_bind_address_is_honoured() {
    let bound = IpAddr::from([127, 0, 0, 2]);
    let api = start(bound, ServeLimits::default(), Mode::Kubernetes).await;
    let port = api.server.parse::<SocketAddr>().unwrap().port();
    assert_eq!(api.status("/livez", None).await, 200);
    let elsewhere = TcpStream::connect(SocketAddr::new(loopback(), port)).await;
    assert!(elsewhere.is_err(), "127.0.0.1:{port} answered");
}

#[tokio::test]
async fn bad_paths_huge_headers_and_huge_bodies_get_4xx() {
    let api = start(loopback(), ServeLimits::default(), Mode::Kubernetes).await;
    let token = api.loopback_token.clone();
    let bad_path = api
        .raw(format!("GET /nope HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n").as_bytes())
        .await;
    assert!(bad_path.starts_with("HTTP/1.1 404"), "{bad_path}");

    let huge_header = format!(
        "GET /livez HTTP/1.1\r\nHost: a\r\nX-Filler: {}\r\n\r\n",
        "x".repeat(64 * 1024)
    );
    let answer = api.raw(huge_header.as_bytes()).await;
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 431"),
        "{answer}"
    );
    assert_eq!(api.status("/livez", None).await, 200);

    let huge_body = format!(
        "GET /metrics HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n",
        64 * 1024 * 1024
    );
    let answer = api.raw(huge_body.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert_eq!(api.status("/metrics", Some(&token)).await, 200);
}

#[tokio::test]
async fn slowloris_and_stalled_handshakes_are_cut_off_while_others_are_served() {
    let limits = ServeLimits {
        handshake_timeout: Duration::from_secs(1),
        header_read_timeout: Duration::from_secs(1),
        ..ServeLimits::default()
    };
    let api = start(loopback(), limits, Mode::Kubernetes).await;
    // A TCP connection that never starts TLS.
    let mut no_handshake = TcpStream::connect(&api.server).await.unwrap();
    // A TLS connection whose headers never end.
    let mut slow = api.tls().await;
    slow.write_all(b"GET /livez HTTP/1.1\r\nHost: a\r\n")
        .await
        .unwrap();
    slow.flush().await.unwrap();
    // Others are served meanwhile.
    assert_eq!(api.status("/livez", None).await, 200);
    assert_eq!(api.status("/metrics", Some(&api.loopback_token)).await, 200);
    // Both stalled connections are closed by the agent.
    assert_eq!(read_until_closed(&mut no_handshake).await, "");
    let answer = read_until_closed(&mut slow).await;
    assert!(!answer.contains("200 OK"), "{answer}");
    assert_eq!(api.status("/livez", None).await, 200);
}

#[tokio::test]
async fn tls_cipher_suites_restrict_tls12_and_tls_min_version_refuses_older_clients() {
    use rustls::crypto::ring::cipher_suite as ring_suite;
    use rustls::version::{TLS12, TLS13};

    let restricted = TlsSettings {
        min_version: TlsVersion::Tls12,
        cipher_suites: Some(vec![TlsCipherSuite::EcdheEcdsaAes256GcmSha384]),
    };
    let api = start_with_tls(
        loopback(),
        ServeLimits::default(),
        Mode::Directory,
        &restricted,
    )
    .await;
    let refused = api
        .negotiate(ring_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, &TLS12)
        .await;
    assert!(
        refused.is_err(),
        "a suite not listed was served: {refused:?}"
    );
    assert_eq!(
        api.negotiate(ring_suite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, &TLS12)
            .await
            .unwrap(),
        rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
    );
    assert_eq!(
        api.negotiate(ring_suite::TLS13_CHACHA20_POLY1305_SHA256, &TLS13)
            .await
            .unwrap(),
        rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256
    );
    assert_eq!(api.status("/livez", None).await, 200);

    let tls13_only = TlsSettings {
        min_version: TlsVersion::Tls13,
        cipher_suites: None,
    };
    let api = start_with_tls(
        loopback(),
        ServeLimits::default(),
        Mode::Directory,
        &tls13_only,
    )
    .await;
    let old = api
        .negotiate(ring_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, &TLS12)
        .await;
    assert!(old.is_err(), "TLS 1.2 was served: {old:?}");
    assert_eq!(
        api.negotiate(ring_suite::TLS13_AES_128_GCM_SHA256, &TLS13)
            .await
            .unwrap(),
        rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
    );
}
