//! The fake over TCP: a kubeconfig written by the server drives a kube client from
//! `Config::from_custom_kubeconfig`, including a watch that survives on the same socket.

mod support;

use fakeapi::FakeApiServer;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{Api, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
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
