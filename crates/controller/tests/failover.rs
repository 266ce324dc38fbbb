//! Leader failover with agents reconnecting: two `antrea-controller` replicas (the real binary)
//! against the fake API server, each with its own `--bind-address` on 127.0.0.1, a 3 s Lease, and
//! the serving CA kept in the Secret the first leader makes (the next leader signs with it, so
//! the agents' CA from `antrea-ca` stays valid). Two agents' `SpanWatch` clients, with Pod-bound
//! tokens checked by TokenReview and both addresses listed, watch Nodes n1 and n2, which a
//! policy spans.
//!
//! The leader is killed with SIGKILL; the follower takes the Lease and serves; each client
//! reconnects to it and receives a snapshot equal to the view it held (the new leader's epoch
//! differs, so no resume), then a change made after the failover. The time from the kill to
//! each client's new snapshot is printed, not asserted: only a generous deadline holds.

#[path = "support/replica.rs"]
mod replica;

use std::sync::Arc;
use std::time::{Duration, Instant};

use controlplane::client::{Backoff, ClientConfig, ConnectionState, SpanWatch};
use controlplane::{Delivery, NodeView};
use fakeapi::FakeApiServer;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use model::policy::PodKey;
use replica::{LEASE_SECONDS, Replica};
use serde_json::json;
use tokio::sync::mpsc;

/// How long the clients may take to be served again after the kill: the Lease, then the
/// follower's next try, its list of the cluster, and the clients' backoff (0.5 s doubling,
/// over both addresses in turn).
const FAILOVER_DEADLINE: Duration = Duration::from_secs(LEASE_SECONDS + 20);
const WAIT: Duration = Duration::from_secs(30);
/// The name the controller's self-signed certificate carries for the agents.
const SERVER_NAME: &str = "antrea.kube-system.svc";

/// A port on 127.0.0.1 nobody listens on now.
fn free_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

/// Waits until `done` holds, polling.
async fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn holder(api: &FakeApiServer) -> Option<String> {
    let lease: Lease = api.get("kube-system", "antrea-controller").unwrap()?;
    lease.spec?.holder_identity
}

// ---- the cluster ----

fn workload_pod(name: &str, node: &str, ip: &str, app: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"namespace": "x", "name": name, "labels": {"app": app}},
        "spec": {"nodeName": node, "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "podIP": ip},
    }))
    .unwrap()
}

/// Namespace `x`: `web` Pods on n1 and n2, a `client` Pod on n1, and a policy applied to the
/// `web` Pods admitting the `client` ones: both Nodes are in its span.
fn workloads(api: &FakeApiServer) {
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "x", "labels": {"team": "x"}}}))
            .unwrap();
    api.insert(&namespace).unwrap();
    for pod in [
        workload_pod("web-1", "n1", "10.0.1.1", "web"),
        workload_pod("web-2", "n2", "10.0.2.1", "web"),
        workload_pod("client-1", "n1", "10.0.1.2", "client"),
    ] {
        api.insert(&pod).unwrap();
    }
    let policy: NetworkPolicy = serde_json::from_value(json!({
        "metadata": {"namespace": "x", "name": "web"},
        "spec": {
            "podSelector": {"matchLabels": {"app": "web"}},
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "client"}}}]}],
        },
    }))
    .unwrap();
    api.insert(&policy).unwrap();
}

/// The agent Pod of `node` and the token the API server mounts into it.
fn agent_token(api: &FakeApiServer, node: &str) -> String {
    let name = format!("antrea-agent-{node}");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"namespace": "kube-system", "name": name},
        "spec": {"nodeName": node, "serviceAccountName": "antrea-agent",
                 "containers": [{"name": "antrea-agent"}]},
    }))
    .unwrap();
    api.insert(&pod).unwrap();
    api.issue_pod_bound_token("kube-system", "antrea-agent", &name)
        .unwrap()
}

// ---- the agents ----

/// An agent's `SpanWatch`, configured as the agent configures it (default backoff), and the
/// view built from its deliveries.
struct Agent {
    node: String,
    watch: SpanWatch,
    deliveries: mpsc::Receiver<Delivery>,
    view: NodeView,
}

impl Agent {
    fn start(node: &str, addresses: Vec<String>, ca_pem: &str, token: String) -> Agent {
        let (watch, deliveries) = SpanWatch::spawn(ClientConfig {
            node: node.to_owned(),
            addresses,
            server_name: SERVER_NAME.to_owned(),
            ca_pem: ca_pem.to_owned(),
            token: Arc::new(move || Ok(token.clone())),
            backoff: Backoff::default(),
            deliveries: 16,
        })
        .unwrap();
        Agent {
            node: node.to_owned(),
            watch,
            deliveries,
            view: NodeView::default(),
        }
    }

    /// Applies the next delivery; returns whether it was a snapshot.
    async fn next(&mut self, limit: Duration) -> bool {
        let delivery = tokio::time::timeout(limit, self.deliveries.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "{}: no delivery within {limit:?}; state {:?}",
                    self.node,
                    *self.watch.state().borrow()
                )
            })
            .expect("the watch goes on");
        match delivery {
            Delivery::Snapshot(view) => {
                self.view = view;
                true
            }
            Delivery::Updates(updates) => {
                for update in &updates {
                    self.view
                        .apply(update)
                        .unwrap_or_else(|e| panic!("{}: {e}", self.node));
                }
                false
            }
        }
    }

    /// Takes deliveries until `done` holds of the view.
    async fn until(&mut self, what: &str, done: impl Fn(&NodeView) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !done(&self.view) {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            assert!(
                !left.is_zero(),
                "{}: {what}: not within {WAIT:?}",
                self.node
            );
            self.next(left).await;
        }
    }

    /// Waits for the next snapshot (updates before it are applied) and returns when it came.
    async fn next_snapshot(&mut self, limit: Duration) -> Instant {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            assert!(
                !left.is_zero(),
                "{}: no snapshot within {limit:?}",
                self.node
            );
            if self.next(left).await {
                return Instant::now();
            }
        }
    }

    fn address(&self) -> Option<String> {
        match &*self.watch.state().borrow() {
            ConnectionState::Watching { address } => Some(address.clone()),
            _ => None,
        }
    }
}

fn has_member(view: &NodeView, pod: &PodKey) -> bool {
    view.groups
        .values()
        .any(|members| members.contains_key(pod))
}

fn has_policy(view: &NodeView, name: &str) -> bool {
    view.policies.keys().any(|k| k.to_string() == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_reconnect_to_the_new_leader_and_get_their_view() {
    let api = FakeApiServer::new();
    let tcp = api.serve_tcp().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    tcp.write_kubeconfig(&kubeconfig).unwrap();
    workloads(&api);
    let tokens = [agent_token(&api, "n1"), agent_token(&api, "n2")];

    let a_address = free_address();
    let a = Replica::start(&kubeconfig, "replica-a", &a_address);
    wait_until("replica-a leads", WAIT, || {
        holder(&api).as_deref() == Some("replica-a")
    })
    .await;
    let b_address = free_address();
    let b = Replica::start(&kubeconfig, "replica-b", &b_address);
    wait_until("replica-b follows", WAIT, || {
        b.logged("Lease kube-system/antrea-controller held by replica-a: following")
    })
    .await;
    // The agents' CA, as they read it: what the first leader published in antrea-ca.
    wait_until("antrea-ca is published", WAIT, || {
        api.get::<ConfigMap>("kube-system", "antrea-ca")
            .unwrap()
            .is_some()
    })
    .await;
    let ca: ConfigMap = api.get("kube-system", "antrea-ca").unwrap().unwrap();
    let ca_pem = ca.data.unwrap()["ca.crt"].clone();

    let addresses = vec![a_address.clone(), b_address.clone()];
    let mut agents: Vec<Agent> = ["n1", "n2"]
        .iter()
        .zip(tokens)
        .map(|(node, token)| Agent::start(node, addresses.clone(), &ca_pem, token))
        .collect();
    for agent in &mut agents {
        agent.until("the policy", |v| has_policy(v, "x/web")).await;
        assert_eq!(agent.address().as_deref(), Some(a_address.as_str()));
    }
    assert!(
        !b.logged("serving"),
        "a follower serves nothing:\n{}",
        b.dump()
    );
    let held: Vec<NodeView> = agents.iter().map(|a| a.view.clone()).collect();

    let mut a = a;
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let killed = Instant::now();
    let served: Vec<Instant> =
        futures_util::future::join_all(agents.iter_mut().map(|agent| async move {
            let at = agent.next_snapshot(FAILOVER_DEADLINE).await;
            (agent.node.clone(), at)
        }))
        .await
        .into_iter()
        .map(|(node, at)| {
            println!(
                "{node}: the new leader's snapshot {:?} after the leader was killed \
                 (Lease {LEASE_SECONDS} s)",
                at - killed
            );
            at
        })
        .collect();
    assert_eq!(served.len(), 2);
    assert_eq!(holder(&api).as_deref(), Some("replica-b"));
    assert!(b.logged("replica-b leads"), "{}", b.dump());
    for (agent, view) in agents.iter().zip(&held) {
        assert_eq!(
            &agent.view, view,
            "{}: the snapshot is the view held",
            agent.node
        );
        assert_eq!(agent.address().as_deref(), Some(b_address.as_str()));
    }

    // A change after the failover: a client Pod on n2 joins the group both Nodes hold.
    api.insert(&workload_pod("client-2", "n2", "10.0.2.2", "client"))
        .unwrap();
    let joined = PodKey::new("x", "client-2");
    for agent in &mut agents {
        agent
            .until("client-2 joins", |v| has_member(v, &joined))
            .await;
    }
}
