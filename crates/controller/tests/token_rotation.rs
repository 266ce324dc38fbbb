//! A rotated ServiceAccount token reaches the controller: the agent's [`SpanWatch`] reads its
//! token file (`controllerTokenFile`, through [`token_file`]) at each connection. The file's
//! token is replaced and the old one revoked in the API server; the next connection presents
//! the new token and is served — over TLS, by `serve::lead` with the TokenReview authenticator
//! against the fake API server.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use controller::auth::TokenReviewAuthenticator;
use controller::serve::{ServeOptions, lead};
use controller::tls::TlsSource;
use controlplane::client::{Backoff, ClientConfig, ConnectionState, SpanWatch, token_file};
use controlplane::{AuthError, Authenticator, Delivery};
use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// How long the test waits for an event that must come.
const DEADLINE: Duration = Duration::from_secs(60);

/// Replaces the token file's content at once, as kubelet does (a new file renamed over it).
fn rotate(path: &Path, token: &str) {
    let next = path.with_extension("next");
    std::fs::write(&next, token).unwrap();
    std::fs::rename(&next, path).unwrap();
}

/// The next delivery; on a timeout, fails with where the watch stands.
async fn next_delivery(deliveries: &mut mpsc::Receiver<Delivery>, watch: &SpanWatch) -> Delivery {
    match tokio::time::timeout(DEADLINE, deliveries.recv()).await {
        Ok(Some(delivery)) => delivery,
        Ok(None) => panic!("the deliveries ended"),
        Err(_) => panic!("no delivery; the watch: {:?}", *watch.state().borrow()),
    }
}

#[tokio::test]
async fn a_rotated_token_file_is_presented_at_the_next_connection() {
    let fake = FakeApiServer::new();
    let node: Node = serde_json::from_value(json!({"metadata": {"name": "n1"}})).unwrap();
    fake.insert(&node).unwrap();
    let agent_pod: Pod = serde_json::from_value(json!({
        "metadata": {"namespace": "kube-system", "name": "antrea-agent-n1"},
        "spec": {"serviceAccountName": "antrea-agent", "nodeName": "n1",
                 "containers": [{"name": "antrea-agent"}]},
    }))
    .unwrap();
    fake.insert(&agent_pod).unwrap();
    let old = fake
        .issue_pod_bound_token("kube-system", "antrea-agent", "antrea-agent-n1")
        .unwrap();
    let new = fake
        .issue_pod_bound_token("kube-system", "antrea-agent", "antrea-agent-n1")
        .unwrap();
    assert_ne!(old, new);
    let tcp = fake.serve_tcp().await.unwrap();
    let client = kube::Client::try_from(kube::Config::new(tcp.url().parse().unwrap())).unwrap();

    // The leader, authenticating every connection anew (no answer kept), so that a revoked
    // token is refused at once.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let authenticator =
        Arc::new(TokenReviewAuthenticator::new(client.clone()).with_cache_ttl(Duration::ZERO));
    let serving = authenticator.clone();
    let leader = tokio::spawn(async move {
        let options = ServeOptions {
            tls: TlsSource::default(),
            ..ServeOptions::default()
        };
        let served = lead(client, listener, &options, serving).await;
        panic!("lead ended: {served:?}");
    });
    let ca_pem = tokio::time::timeout(DEADLINE, async {
        loop {
            if let Some(ca) = fake.get::<ConfigMap>("kube-system", "antrea-ca").unwrap() {
                break ca.data.unwrap()["ca.crt"].clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the leader publishes its CA");

    let dir = tempfile::tempdir().unwrap();
    let token_path = dir.path().join("token");
    rotate(&token_path, &old);
    let (watch, mut deliveries) = SpanWatch::spawn(ClientConfig {
        node: "n1".into(),
        addresses: vec![address.to_string()],
        server_name: "antrea.kube-system.svc".into(),
        ca_pem,
        token: token_file(token_path.clone()),
        backoff: Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(1),
        },
        deliveries: 16,
    })
    .unwrap();
    let first = next_delivery(&mut deliveries, &watch).await;
    assert!(matches!(first, Delivery::Snapshot(_)), "{first:?}");

    // The token is rotated and the old one revoked: only the new one opens n1's span now.
    rotate(&token_path, &format!("{new}\n"));
    assert!(fake.revoke_token(&old));
    assert!(matches!(
        authenticator.authenticate(&old).await,
        Err(AuthError::Unauthenticated(_))
    ));

    // The next connection (the client asked for a fresh snapshot) is served.
    watch.resync();
    let again = next_delivery(&mut deliveries, &watch).await;
    assert!(matches!(again, Delivery::Snapshot(_)), "{again:?}");
    let state = watch.state().borrow().clone();
    assert!(
        matches!(state, ConnectionState::Watching { .. }),
        "{state:?}"
    );
    leader.abort();
}
