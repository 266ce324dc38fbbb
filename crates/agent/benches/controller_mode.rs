//! The agent's memory in controller mode at the scale of issue 12's benchmark (a) (benchmark
//! (c)): 100,000 Pods in 1,000 Namespaces on 1,000 Nodes (100 on each), 50,000
//! NetworkPolicies, 1,000 Nodes, in the fake API server (over TCP on 127.0.0.1; the cluster of
//! `crates/controller/benches/support/cluster.rs`, included by path). The controller runs in
//! this process as the leader does (`controller::serve::lead`, TokenReview authentication, its
//! CA kept in a Secret and published in `antrea-ca`).
//!
//! Not the whole agent (it needs Open vSwitch): what the agent holds for policy, in a child
//! process that holds nothing else, for Node `node0` and its 100 Pods:
//!
//! - **controller mode**: the cluster source (`KubernetesSource`: every Node, and this Node's
//!   Pods with the `spec.nodeName` field selector), the Service and EndpointSlice reflectors,
//!   the agent's `SpanWatch` over TLS, and the view it received taken by a `PolicyView` into a
//!   `PolicyEngine::given`, synced;
//! - **baseline, same run: local mode**: the same cluster source and the policy reflectors
//!   (every Namespace, Pod and NetworkPolicy, kept as the agent keeps them) with their
//!   `PolicyFeed`, fed into a standalone `PolicyEngine`, synced.
//!
//! Each child reports its VmRSS before it starts them (the runtime and the Kubernetes client
//! up), once it holds the result, and its peak (VmHWM). The cluster has no Services; both modes
//! watch them the same way (docs/benchmarks.md, "The agent's Kubernetes stores at scale").
//!
//! Run: `cargo bench -p agent --bench controller_mode` (Linux, for `/proc/self/status`).

#[path = "../../controller/benches/support/cluster.rs"]
mod cluster;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent::controller::{PolicyInput, PolicyView};
use agent::kubernetes::connection::connect;
use agent::kubernetes::{ApiAccess, Keep, Kinds, KubernetesSource, PolicyFeed, SharedReflectors};
use cluster::{
    NAMESPACES, NODES, Object, PODS_PER_NAMESPACE, POLICIES_PER_NAMESPACE, load, mib, rss_kib,
};
use controller::auth::{AGENT_NAMESPACE, AGENT_SERVICE_ACCOUNT, TokenReviewAuthenticator};
use controller::serve::{ServeOptions, lead};
use controlplane::Delivery;
use controlplane::client::{Backoff, ClientConfig, SpanWatch};
use fakeapi::{FakeApiServer, TokenUser};
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use netpol::PolicyEngine;
use serde_json::{Value, json};

/// Set in the child: which mode it measures.
const MODE: &str = "CONTROLLER_MODE_BENCH";
const KUBECONFIG: &str = "CONTROLLER_MODE_KUBECONFIG";
const ADDRESS: &str = "CONTROLLER_MODE_ADDRESS";
const CA_FILE: &str = "CONTROLLER_MODE_CA_FILE";
/// The Node whose agent is measured.
const NODE: &str = "node0";
/// The token of `NODE`'s agent.
const TOKEN: &str = "agent-token-node0";
/// How long a child may take to hold its result (the controller lists and computes meanwhile).
const CHILD_WAIT: Duration = Duration::from_secs(900);

fn main() {
    match std::env::var(MODE).as_deref() {
        Ok("controller") => child_runtime().block_on(controller_mode()),
        Ok("local") => child_runtime().block_on(local_mode()),
        _ => orchestrate(),
    }
}

fn orchestrate() {
    println!(
        "cluster: {} Pods in {NAMESPACES} Namespaces on {NODES} Nodes, {} NetworkPolicies; \
         the agent of {NODE} ({PODS_PER_NAMESPACE} Pods) in a child process",
        NAMESPACES * PODS_PER_NAMESPACE,
        NAMESPACES * POLICIES_PER_NAMESPACE
    );
    let fake = FakeApiServer::builder().record_requests(false).build();
    load(|object| {
        match object {
            Object::Namespace(n) => fake.insert(&n).map(drop),
            Object::Pod(p) => fake.insert(&*p).map(drop),
            Object::Policy(p) => fake.insert(&p).map(drop),
        }
        .expect("insert an object");
    });
    for k in 0..NODES {
        let node: Node = serde_json::from_value(json!({"metadata": {"name": format!("node{k}")}}))
            .expect("a Node");
        fake.insert(&node).expect("insert a Node");
    }
    let mut user = TokenUser::service_account(
        AGENT_NAMESPACE,
        AGENT_SERVICE_ACCOUNT,
        "agent-sa-uid",
        TOKEN,
    );
    user.extra.insert(
        "authentication.kubernetes.io/node-name".to_owned(),
        vec![NODE.to_owned()],
    );
    fake.add_token(TOKEN, user);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = dir.path().join("kubeconfig");
    let ca_file = dir.path().join("ca.crt");
    let (_server, address) = runtime.block_on(async {
        let server = fake.serve_tcp().await.expect("serve the fake over TCP");
        server
            .write_kubeconfig(&kubeconfig)
            .expect("write the kubeconfig");
        let client = kube::Client::try_from(kube::Config::new(
            server.url().parse().expect("the fake's URL"),
        ))
        .expect("a kube client");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("its address");
        let authenticator = Arc::new(TokenReviewAuthenticator::new(client.clone()));
        tokio::spawn(async move {
            let served = lead(client, listener, &ServeOptions::default(), authenticator).await;
            panic!("the controller stopped: {served:?}");
        });
        (server, address)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let ca_pem = loop {
        let published = fake
            .get::<ConfigMap>("kube-system", "antrea-ca")
            .ok()
            .flatten()
            .and_then(|c| c.data?.remove("ca.crt"));
        if let Some(ca_pem) = published {
            break ca_pem;
        }
        assert!(Instant::now() < deadline, "antrea-ca is not published");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::fs::write(&ca_file, ca_pem).expect("write the CA");

    println!(
        "{:<11} {:>8} {:>12} {:>12} {:>12} {:>12}  holds",
        "mode", "ready", "RSS before", "RSS held", "RSS delta", "peak"
    );
    for mode in ["controller", "local"] {
        let child = Command::new(std::env::current_exe().expect("the benchmark's own path"))
            .env(MODE, mode)
            .env(KUBECONFIG, &kubeconfig)
            .env(ADDRESS, address.to_string())
            .env(CA_FILE, &ca_file)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the measuring child");
        let out = child.wait_with_output().expect("the measuring child");
        assert!(out.status.success(), "the {mode} child failed");
        let text = String::from_utf8_lossy(&out.stdout);
        let result: Value = BufReader::new(text.as_bytes())
            .lines()
            .map_while(Result::ok)
            .find_map(|l| serde_json::from_str(&l).ok())
            .unwrap_or_else(|| panic!("no result from the {mode} child: {text}"));
        let kib = |k: &str| result[k].as_u64().unwrap_or(0);
        println!(
            "{:<11} {:>7.1}s {:>8.1} MiB {:>8.1} MiB {:>8.1} MiB {:>8.1} MiB  {}",
            mode,
            result["seconds"].as_f64().unwrap_or(0.0),
            mib(kib("rss_before_kib")),
            mib(kib("rss_held_kib")),
            mib(kib("rss_held_kib").saturating_sub(kib("rss_before_kib"))),
            mib(kib("hwm_kib")),
            result["holds"].as_str().unwrap_or("?"),
        );
    }
}

/// Prints the child's result as one JSON line: called while it holds what it measures.
fn report(rss_before_kib: u64, started: Instant, holds: &str) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    println!(
        "{}",
        json!({"seconds": started.elapsed().as_secs_f64(),
               "rss_before_kib": rss_before_kib, "rss_held_kib": rss_kib(),
               "hwm_kib": hwm, "holds": holds})
    );
}

fn child_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime")
}

async fn child_client() -> kube::Client {
    let kubeconfig = std::env::var(KUBECONFIG).expect("CONTROLLER_MODE_KUBECONFIG");
    let (client, _) = connect(&ApiAccess {
        kubeconfig: Some(kubeconfig.into()),
        server_override: None,
    })
    .await
    .expect("a client");
    client
}

/// The cluster source of `NODE`, listed.
async fn cluster_source(client: &kube::Client) -> KubernetesSource {
    let mut source = KubernetesSource::new(client.clone(), NODE);
    source
        .wait_synced(CHILD_WAIT)
        .await
        .expect("the cluster source lists");
    source
}

/// Controller mode: this Node's Pods, the Services, and the view received from the controller
/// in a given engine.
async fn controller_mode() {
    let client = child_client().await;
    let rss_before_kib = rss_kib();
    let started = Instant::now();
    let source = cluster_source(&client).await;
    let reflectors = SharedReflectors::start(&client, Keep::WhatControllersUse, Kinds::Services);
    assert!(reflectors.services.synced().await, "Services listed");
    assert!(
        reflectors.endpoint_slices.synced().await,
        "EndpointSlices listed"
    );
    let ca_pem = std::fs::read_to_string(std::env::var(CA_FILE).expect("CONTROLLER_MODE_CA_FILE"))
        .expect("the CA file");
    let (_watch, mut deliveries) = SpanWatch::spawn(ClientConfig {
        node: NODE.to_owned(),
        addresses: vec![std::env::var(ADDRESS).expect("CONTROLLER_MODE_ADDRESS")],
        server_name: "antrea.kube-system.svc".to_owned(),
        ca_pem,
        token: Arc::new(|| Ok(TOKEN.to_owned())),
        backoff: Backoff::default(),
        deliveries: 16,
    })
    .expect("a SpanWatch");
    let delivery = tokio::time::timeout(CHILD_WAIT, deliveries.recv())
        .await
        .expect("the view within the wait")
        .expect("the watch goes on");
    assert!(
        matches!(delivery, Delivery::Snapshot(_)),
        "a snapshot first"
    );
    let mut engine = PolicyEngine::given(NODE);
    let mut view = PolicyView::new();
    view.receive(&mut engine, &delivery).expect("the snapshot");
    drop(delivery);
    let synced = engine.sync();
    let members: usize = view.view().groups.values().map(|m| m.len()).sum();
    let holds = format!(
        "{} Nodes, {} Pods; view: {} policies, {} groups, {members} members; {} rules",
        source.store().nodes().len(),
        source.store().pods().len(),
        view.view().policies.len(),
        view.view().groups.len(),
        synced.delta.rules()
    );
    // The source, the reflectors, the watch, the view and the engine are held here.
    report(rss_before_kib, started, &holds);
}

/// Local mode: this Node's Pods, every Namespace, Pod and NetworkPolicy, the Services, and a
/// standalone engine fed by the policy feed.
async fn local_mode() {
    let client = child_client().await;
    let rss_before_kib = rss_kib();
    let started = Instant::now();
    let source = cluster_source(&client).await;
    let reflectors =
        SharedReflectors::start(&client, Keep::WhatControllersUse, Kinds::PolicyAndServices);
    let policy = reflectors.policy.as_ref().expect("the policy kinds");
    for synced in [
        policy.namespaces.synced().await,
        policy.pods.synced().await,
        policy.network_policies.synced().await,
        reflectors.services.synced().await,
        reflectors.endpoint_slices.synced().await,
    ] {
        assert!(synced, "a reflector stopped");
    }
    let mut feed = PolicyFeed::new(policy);
    let mut engine = PolicyEngine::new(NODE);
    for input in feed.changes() {
        match input {
            PolicyInput::Namespace(n) => engine.upsert_namespace(&n),
            PolicyInput::Pod(p) => engine.upsert_pod(&p),
            PolicyInput::Policy(p) => engine.upsert_policy(&p),
            other => panic!("not in a first list: {other:?}"),
        }
        .expect("a generated object");
    }
    let synced = engine.sync();
    let holds = format!(
        "{} Nodes, {} Pods; stores: {} Namespaces, {} Pods, {} policies; {} rules",
        source.store().nodes().len(),
        source.store().pods().len(),
        policy.namespaces.store().state().len(),
        policy.pods.store().state().len(),
        policy.network_policies.store().state().len(),
        synced.delta.rules()
    );
    // The source, the reflectors, the feed and the engine are held here.
    report(rss_before_kib, started, &holds);
}
