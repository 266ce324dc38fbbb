//! Two `antrea-controller` replicas against the fake API server, through kube-rs: one takes the
//! Lease and computes (its log says what it holds), the other only follows; when
//! the leader is killed the follower takes the Lease once it expires and computes from a fresh
//! list; a leader whose Lease another holder takes stops with status 1. `--version` prints the
//! build's version and commit.

#[path = "support/replica.rs"]
mod replica;

use std::process::Command;
use std::time::{Duration, Instant};

use fakeapi::FakeApiServer;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use replica::{LEASE_SECONDS, Replica};
use serde_json::json;

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    start.elapsed()
}

fn holder(api: &FakeApiServer) -> Option<(String, i32)> {
    let lease: Lease = api.get("kube-system", "antrea-controller").unwrap()?;
    let spec = lease.spec?;
    Some((spec.holder_identity?, spec.lease_transitions.unwrap_or(0)))
}

fn objects(api: &FakeApiServer) {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"namespace": "x", "name": "web", "labels": {"app": "web"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "podIP": "10.244.1.5"},
    }))
    .unwrap();
    api.insert(&pod).unwrap();
    let policy: NetworkPolicy = serde_json::from_value(json!({
        "metadata": {"namespace": "x", "name": "web-ingress"},
        "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "ingress": [{}]},
    }))
    .unwrap();
    api.insert(&policy).unwrap();
}

async fn serve() -> (FakeApiServer, fakeapi::TcpServer, tempfile::TempDir) {
    let api = FakeApiServer::new();
    let tcp = api.serve_tcp().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    tcp.write_kubeconfig(&dir.path().join("kubeconfig"))
        .unwrap();
    (api, tcp, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_follower_takes_over_when_the_leader_dies() {
    let (api, _tcp, dir) = serve().await;
    let kubeconfig = dir.path().join("kubeconfig");
    objects(&api);
    let a = Replica::start(&kubeconfig, "replica-a", "127.0.0.1:0");
    wait_until("replica-a leads", Duration::from_secs(20), || {
        holder(&api).is_some_and(|(h, _)| h == "replica-a")
    });
    let b = Replica::start(&kubeconfig, "replica-b", "127.0.0.1:0");
    wait_until("replica-b follows", Duration::from_secs(20), || {
        b.logged("Lease kube-system/antrea-controller held by replica-a: following")
    });
    // The leader computed the policy, its one group and its span, one Node.
    wait_until("replica-a computes", Duration::from_secs(20), || {
        a.logged("1 policies, 1 groups, 1 Nodes with a policy")
    });
    assert!(
        !b.logged("policies"),
        "a follower computes nothing:\n{}",
        b.dump()
    );
    assert_eq!(holder(&api), Some(("replica-a".into(), 0)));

    let mut a = a;
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let killed = Instant::now();
    // The Lease runs out LEASE_SECONDS after the last renewal, and b tries every second.
    let limit = Duration::from_secs(LEASE_SECONDS + 10);
    wait_until("replica-b takes the Lease", limit, || {
        holder(&api).is_some_and(|(h, _)| h == "replica-b")
    });
    let took = killed.elapsed();
    assert_eq!(
        holder(&api),
        Some(("replica-b".into(), 1)),
        "one transition"
    );
    wait_until("replica-b computes", Duration::from_secs(20), || {
        b.logged("1 policies, 1 groups, 1 Nodes with a policy")
    });
    assert!(b.logged("replica-b leads"), "{}", b.dump());
    println!(
        "replica-b took the Lease {took:?} after replica-a was killed (Lease {LEASE_SECONDS} s)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_whose_lease_is_taken_stops_with_an_error() {
    let (api, _tcp, dir) = serve().await;
    let mut a = Replica::start(&dir.path().join("kubeconfig"), "replica-a", "127.0.0.1:0");
    wait_until("replica-a leads", Duration::from_secs(20), || {
        holder(&api).is_some_and(|(h, _)| h == "replica-a")
    });
    let mut lease: Lease = api
        .get("kube-system", "antrea-controller")
        .unwrap()
        .unwrap();
    let spec = lease.spec.as_mut().unwrap();
    spec.holder_identity = Some("intruder".into());
    spec.lease_duration_seconds = Some(3600);
    api.insert(&lease).unwrap();
    let mut status = None;
    wait_until("replica-a stops", Duration::from_secs(20), || {
        status = a.child.try_wait().unwrap();
        status.is_some()
    });
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{}", a.dump());
    wait_until("the cause is logged", Duration::from_secs(5), || {
        a.logged("lost the Lease kube-system/antrea-controller: \"intruder\" holds it")
    });
}

#[test]
fn version_is_the_build_version_and_commit() {
    let out = Command::new(env!("CARGO_BIN_EXE_antrea-controller"))
        .arg("--version")
        .output()
        .expect("run antrea-controller --version");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("antrea-controller {}\n", buildinfo::version())
    );
}
