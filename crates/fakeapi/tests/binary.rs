//! `antrea-fake-apiserver` as a process: it writes the kubeconfig of its TCP address once it
//! serves, a kube client from that kubeconfig works against it, (Unix) its socket serves the
//! same objects, its log names each request's peer, it runs the EndpointSlice controller unless
//! told not to, and a listen address it cannot bind makes it exit with the reason.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

const BIN: &str = env!("CARGO_BIN_EXE_antrea-fake-apiserver");

/// Waits (at most 30 s) until `path` exists; fails if the server exits first.
fn wait_for(path: &Path, server: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        if let Some(status) = server.try_wait().unwrap() {
            panic!(
                "the server exited ({status}) before writing {}",
                path.display()
            );
        }
        assert!(
            Instant::now() < deadline,
            "no {} after 30 s",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills the server and returns its log (standard output and error).
fn stop(mut server: Child) -> String {
    server.kill().unwrap();
    server.wait().unwrap();
    let mut log = String::new();
    server
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    server
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    log
}

#[tokio::test]
async fn the_server_process_serves_a_kubeconfig_client_and_logs_each_peer() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut command = Command::new(BIN);
    command
        .args(["--listen", "127.0.0.1:0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    let socket = dir.path().join("api.sock");
    #[cfg(unix)]
    command.arg("--unix-socket").arg(&socket);
    let mut server = command.spawn().unwrap();
    wait_for(&kubeconfig, &mut server);

    let config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::read_from(&kubeconfig).unwrap(),
        &KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    let nodes: Api<Node> = Api::all(kube::Client::try_from(config).unwrap());
    let mut node = Node::default();
    node.metadata.name = Some("n1".into());
    nodes.create(&PostParams::default(), &node).await.unwrap();
    assert!(nodes.get_opt("n1").await.unwrap().is_some());
    #[cfg(unix)]
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
        stream
            .write_all(b"GET /api/v1/nodes/n1 HTTP/1.0\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        assert!(
            answer.starts_with("HTTP/1.0 200") && answer.contains(r#""name":"n1""#),
            "{answer}"
        );
    }
    let log = stop(server);
    assert!(
        log.lines()
            .any(|l| l.contains("peer=127.0.0.1:") && l.contains("method=POST path=/api/v1/nodes ")),
        "{log}"
    );
}

/// Starts the server with `extra` arguments and a kube client from its kubeconfig. Its log is
/// discarded: a pipe nobody reads would fill up and stall the server.
async fn start(dir: &Path, extra: &[&str]) -> (Child, kube::Client) {
    let kubeconfig = dir.join("kubeconfig");
    let mut server = Command::new(BIN)
        .args(["--listen", "127.0.0.1:0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&kubeconfig, &mut server);
    let config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::read_from(&kubeconfig).unwrap(),
        &KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    (server, kube::Client::try_from(config).unwrap())
}

/// Creates a ready Pod `web` with an address and a Service `web` selecting it.
async fn pod_and_service(client: &kube::Client) {
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
        "status": {"podIP": "10.244.1.5", "conditions": [{"type": "Ready", "status": "True"}]},
    }))
    .unwrap();
    Api::<Pod>::default_namespaced(client.clone())
        .create(&PostParams::default(), &pod)
        .await
        .unwrap();
    let service: Service = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }))
    .unwrap();
    Api::<Service>::default_namespaced(client.clone())
        .create(&PostParams::default(), &service)
        .await
        .unwrap();
}

async fn slices_of_web(client: &kube::Client) -> Vec<EndpointSlice> {
    Api::<EndpointSlice>::default_namespaced(client.clone())
        .list(&ListParams::default().labels("kubernetes.io/service-name=web"))
        .await
        .unwrap()
        .items
}

#[tokio::test]
async fn the_server_process_makes_endpoint_slices_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path(), &[]).await;
    pod_and_service(&client).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let slices = slices_of_web(&client).await;
        if slices.first().is_some_and(|s| {
            s.endpoints.first().map(|e| e.addresses.clone()) == Some(vec!["10.244.1.5".into()])
        }) {
            break;
        }
        assert!(Instant::now() < deadline, "no slice for web: {slices:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    kill(server);

    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path(), &["--endpointslice-controller=false"]).await;
    pod_and_service(&client).await;
    // Nothing to wait for when nothing happens: allow the time a slice takes with the
    // controller on many times over, then check there is none.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(slices_of_web(&client).await.is_empty());
    kill(server);
}

fn kill(mut server: Child) {
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn an_address_it_cannot_bind_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(BIN)
        .args(["--listen", &addr, "--kubeconfig-out"])
        .arg(dir.path().join("kubeconfig"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("listening on {addr}:")), "{err}");
    assert!(!dir.path().join("kubeconfig").exists());
}
