//! The fake over TCP: a kubeconfig written by the server drives a kube client from
//! `Config::from_custom_kubeconfig`, including a watch that survives on the same socket.

mod support;

use fakeapi::FakeApiServer;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{Api, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use support::{next, pod};

async fn tcp_client(
    server: &FakeApiServer,
    dir: &std::path::Path,
) -> (kube::Client, fakeapi::TcpServer) {
    let tcp = server.serve_tcp().await.unwrap();
    let path = dir.join("kubeconfig");
    tcp.write_kubeconfig(&path).unwrap();
    let kubeconfig = Kubeconfig::read_from(&path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    assert_eq!(
        config.cluster_url.to_string().trim_end_matches('/'),
        tcp.url()
    );
    (kube::Client::try_from(config).unwrap(), tcp)
}

#[tokio::test]
async fn kubeconfig_client_lists_creates_and_watches_over_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n1", &[])).unwrap();
    let (client, _tcp) = tcp_client(&server, dir.path()).await;

    let info = client.apiserver_version().await.unwrap();
    assert_eq!(info.major, "1");
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    assert_eq!(
        pods.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    let policies: Api<NetworkPolicy> = Api::namespaced(client.clone(), "default");
    let mut np = NetworkPolicy::default();
    np.metadata.name = Some("deny".into());
    policies.create(&PostParams::default(), &np).await.unwrap();
    assert!(
        server
            .get::<NetworkPolicy>("default", "deny")
            .unwrap()
            .is_some()
    );

    let nodes: Api<Node> = Api::all(client);
    let mut events = watcher::watcher(nodes, watcher::Config::default()).boxed();
    assert!(matches!(next(&mut events).await.unwrap(), Event::Init));
    assert!(matches!(next(&mut events).await.unwrap(), Event::InitDone));
    let mut node = Node::default();
    node.metadata.name = Some("n1".into());
    server.insert(&node).unwrap();
    assert!(
        matches!(next(&mut events).await.unwrap(), Event::Apply(n) if n.metadata.name.as_deref() == Some("n1"))
    );
}

#[tokio::test]
async fn dropping_the_tcp_server_stops_serving() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeApiServer::new();
    let (client, tcp) = tcp_client(&server, dir.path()).await;
    let pods: Api<Pod> = Api::default_namespaced(client);
    pods.list(&ListParams::default()).await.unwrap();
    let addr = tcp.addr();
    drop(tcp);
    support::eventually("the listener closes", || {
        std::net::TcpStream::connect(addr).is_err()
    })
    .await;
}

#[tokio::test]
async fn an_outage_breaks_tcp_watches_and_clients_recover() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n1", &[])).unwrap();
    let (client, _tcp) = tcp_client(&server, dir.path()).await;
    let pods: Api<Pod> = Api::all(client);
    let mut events = support::spawn_stream(
        watcher::watcher(pods.clone(), watcher::Config::default()).default_backoff(),
    );
    for _ in 0..3 {
        support::recv(&mut events).await.unwrap();
    }
    support::eventually("the watch is open", || server.active_watches() == 1).await;

    server.set_available(false);
    assert!(
        support::recv(&mut events).await.is_err(),
        "the broken connection surfaces as an error"
    );
    match pods.list(&ListParams::default()).await {
        Err(kube::Error::Api(status)) => {
            panic!("expected a transport error, got the response {status:?}")
        }
        Err(_) => {}
        Ok(list) => panic!("the list succeeded during the outage: {list:?}"),
    }
    server.delete::<Pod>("default", "a").unwrap();
    server.set_available(true);
    assert!(
        matches!(support::recv(&mut events).await.unwrap(), Event::Delete(p) if p.metadata.name.as_deref() == Some("a"))
    );
}

#[tokio::test]
async fn serving_on_a_given_address_names_it_in_the_kubeconfig() {
    let server = FakeApiServer::new();
    let tcp = server
        .serve_tcp_on("127.0.0.2:0".parse().unwrap())
        .await
        .unwrap();
    assert_eq!(tcp.addr().ip().to_string(), "127.0.0.2");
    assert_ne!(tcp.addr().port(), 0);
    assert!(
        tcp.kubeconfig()
            .contains(&format!("server: http://127.0.0.2:{}", tcp.addr().port())),
        "{}",
        tcp.kubeconfig()
    );
    let taken = server.serve_tcp_on(tcp.addr()).await;
    assert_eq!(
        taken.unwrap_err().kind(),
        std::io::ErrorKind::AddrInUse,
        "a second listener on the same address"
    );
}

/// One HTTP/1.0 request over the Unix socket at `path`; the raw answer.
#[cfg(unix)]
async fn unix_request(path: &std::path::Path, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::UnixStream::connect(path).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

#[cfg(unix)]
#[tokio::test]
async fn the_unix_socket_serves_the_same_store_and_goes_away_with_its_server() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api.sock");
    let server = FakeApiServer::new();
    let unix = server.serve_unix(&path).await.unwrap();
    assert_eq!(unix.path(), path);
    let body = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}"#;
    let answer = unix_request(
        &path,
        &format!(
            "POST /api/v1/nodes HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.0 201"), "{answer}");
    assert!(server.get::<Node>("", "n1").unwrap().is_some());
    let answer = unix_request(&path, "GET /api/v1/nodes/n1 HTTP/1.0\r\n\r\n").await;
    assert!(
        answer.starts_with("HTTP/1.0 200") && answer.contains(r#""name":"n1""#),
        "{answer}"
    );
    assert!(server.serve_unix(&path).await.is_err(), "the path is taken");
    drop(unix);
    assert!(!path.exists());
}
