//! The agent–controller protocol over real TLS connections on 127.0.0.1: the real
//! `SpanComputation`, driven as the controller's feed drives it (publish after each change,
//! snapshots between changes), serves watchers through `controlplane`'s hub and server; agents
//! are `controlplane::client::SpanWatch` clients or raw tonic calls. The authenticator maps test
//! tokens to Nodes.
//!
//! - spans over the wire: a change reaches only the Nodes of its span, counted per Node;
//! - views built from the deliveries equal the computation's own;
//! - resume after a disconnect, or a snapshot when the epoch, version or log does not allow it;
//! - a watcher that never reads is cut off with RESOURCE_EXHAUSTED while the others go on, and
//!   the hub's queues stay bounded;
//! - refusals (no token, bad token, another Node's span, the authenticator unavailable), a
//!   malformed request and a vanishing client end only their own stream;
//! - a Node nobody watches is forgotten after its grace period;
//! - `serve::lead` with the CA kept in a Secret and published in `antrea-ca`, against the fake
//!   API server: the CA is made once and reused by the next leader, and clients verify it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use controller::serve::{ServeOptions, lead};
use controller::span::{NodeUpdate, NodeView, SpanComputation};
use controller::tls::TlsSource;
use controlplane::client::{Backoff, ClientConfig, ConnectionState, SpanWatch};
use controlplane::hub::{Hub, HubLimits, HubStats};
use controlplane::server::{SpanService, serve};
use controlplane::wire::{ClientCodec, WATCH_PATH};
use controlplane::{AuthError, Authenticator, Delivery, Resume, WatchEvent, WatchRequest, Watcher};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use model::policy::PodKey;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tonic::Code;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::{Channel, Endpoint};

const WAIT: Duration = Duration::from_secs(30);

// ---- the cluster's objects ----

fn namespace(name: &str) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"team": name}}})).unwrap()
}

fn pod(name: &str, node: &str, ip: u16, app: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"namespace": "x", "name": name, "labels": {"app": app}},
        "spec": {"nodeName": node, "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "podIP": format!("10.0.{}.{}", ip / 250, ip % 250 + 1)},
    }))
    .unwrap()
}

/// A policy applied to `app` Pods, admitting `from` Pods.
fn policy(name: &str, app: &str, from: &str) -> NetworkPolicy {
    serde_json::from_value(json!({
        "metadata": {"namespace": "x", "name": name},
        "spec": {
            "podSelector": {"matchLabels": {"app": app}},
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": from}}}]}],
        },
    }))
    .unwrap()
}

// ---- the controller side ----

type Command = Box<dyn FnOnce(&mut SpanComputation) + Send>;

/// The computation task, a hub and a TLS server on 127.0.0.1.
struct Controller {
    commands: mpsc::UnboundedSender<Command>,
    hub: Hub,
    address: SocketAddr,
    ca_pem: String,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Controller {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Controller {
    async fn start(limits: HubLimits) -> Controller {
        let (hub, driver) = Hub::new(limits);
        let (commands, mut receiver) = mpsc::unbounded_channel::<Command>();
        let computation = tokio::spawn(async move {
            let mut computation = SpanComputation::default();
            loop {
                tokio::select! {
                    command = receiver.recv() => {
                        let Some(command) = command else { return };
                        command(&mut computation);
                        driver.publish(&mut computation);
                    }
                    () = driver.wanted() => driver.serve(&mut computation),
                }
            }
        });
        let (ca_pem, tls) = test_identity();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let service = SpanService::new(hub.clone(), Arc::new(Tokens));
        let server = tokio::spawn(async move {
            serve(service, tls, listener, std::future::pending())
                .await
                .unwrap();
        });
        Controller {
            commands,
            hub,
            address,
            ca_pem,
            tasks: vec![computation, server],
        }
    }

    /// Runs `change` in the computation task (the hub publishes what it made) and returns its
    /// result.
    async fn run<T: Send + 'static>(
        &self,
        change: impl FnOnce(&mut SpanComputation) -> T + Send + 'static,
    ) -> T {
        let (reply, answer) = oneshot::channel();
        let command: Command = Box::new(move |c| {
            let _ = reply.send(change(c));
        });
        self.commands.send(command).unwrap();
        answer.await.unwrap()
    }

    async fn pods(&self, pods: Vec<Pod>) {
        self.run(move |c| {
            for p in &pods {
                c.upsert_pod(p).unwrap();
            }
        })
        .await;
    }

    async fn policy(&self, policy: NetworkPolicy) {
        self.run(move |c| c.upsert_policy(&policy).unwrap()).await;
    }

    /// The computation's own view of `node`.
    async fn view(&self, node: &str) -> NodeView {
        let node = node.to_owned();
        let updates = self.run(move |c| c.snapshot(&node)).await;
        let mut view = NodeView::default();
        for u in &updates {
            view.apply(u).unwrap();
        }
        view
    }

    fn client(&self, node: &str, token: &str) -> Agent {
        Agent::start(self.address, &self.ca_pem, "localhost", node, token)
    }

    /// A tonic channel over TLS; `window`: the HTTP/2 flow-control windows it offers.
    async fn channel(&self, window: Option<u32>) -> Channel {
        channel(self.address, &self.ca_pem, window).await
    }
}

/// A CA and a serving certificate for `localhost` and 127.0.0.1.
fn test_identity() -> (String, Arc<rustls::ServerConfig>) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::default();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone(), ca.der().clone()];
    (
        ca.pem(),
        controlplane::tls::server_config(chain, key).unwrap(),
    )
}

/// Test tokens: `token-<node>` is bound to `<node>`, `nobody` to no Node, `down` cannot be
/// checked; any other is unknown.
#[derive(Debug)]
struct Tokens;

impl Authenticator for Tokens {
    fn authenticate<'a>(&'a self, token: &'a str) -> controlplane::auth::AuthFuture<'a> {
        Box::pin(async move {
            if token == "down" {
                return Err(AuthError::Unavailable("the API server is down".into()));
            }
            let user = format!("system:serviceaccount:kube-system:agent-{token}");
            match token.strip_prefix("token-") {
                Some(node) => Ok(Watcher {
                    user,
                    node: Some(node.to_owned()),
                }),
                None if token == "nobody" => Ok(Watcher { user, node: None }),
                None => Err(AuthError::Unauthenticated("unknown token".into())),
            }
        })
    }
}

async fn channel(address: SocketAddr, ca_pem: &str, window: Option<u32>) -> Channel {
    let tls = tokio_rustls::TlsConnector::from(controlplane::tls::client_config(ca_pem).unwrap());
    Endpoint::from_shared(format!("http://{address}"))
        .unwrap()
        .initial_stream_window_size(window)
        .initial_connection_window_size(window)
        .connect_with_connector(tower::service_fn(move |_| {
            let tls = tls.clone();
            async move {
                let tcp = TcpStream::connect(address).await?;
                let name = ServerName::try_from("localhost").unwrap();
                let stream = tls.connect(name, tcp).await?;
                Ok::<_, std::io::Error>(TokioIo::new(stream))
            }
        }))
        .await
        .unwrap()
}

/// A `Watch` call made by hand.
async fn raw_watch(
    channel: Channel,
    token: Option<&str>,
    request: WatchRequest,
) -> Result<tonic::Streaming<WatchEvent>, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let mut request = tonic::Request::new(request);
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    grpc.server_streaming(request, WATCH_PATH.parse().unwrap(), ClientCodec)
        .await
        .map(tonic::Response::into_inner)
}

fn request(node: &str, resume: Option<Resume>) -> WatchRequest {
    WatchRequest {
        node: node.to_owned(),
        resume,
    }
}

async fn next(stream: &mut tonic::Streaming<WatchEvent>) -> WatchEvent {
    tokio::time::timeout(WAIT, stream.message())
        .await
        .expect("an event in time")
        .expect("no error")
        .expect("the stream goes on")
}

// ---- the agent side ----

/// A `SpanWatch` client and the view built from what it delivered.
struct Agent {
    watch: SpanWatch,
    deliveries: mpsc::Receiver<Delivery>,
    view: NodeView,
    snapshots: usize,
    /// How many update messages came.
    messages: usize,
    /// The updates received after the first snapshot.
    updates: Vec<NodeUpdate>,
}

impl Agent {
    fn start(
        address: SocketAddr,
        ca_pem: &str,
        server_name: &str,
        node: &str,
        token: &str,
    ) -> Agent {
        let token = token.to_owned();
        let (watch, deliveries) = SpanWatch::spawn(ClientConfig {
            node: node.to_owned(),
            addresses: vec![address.to_string()],
            server_name: server_name.to_owned(),
            ca_pem: ca_pem.to_owned(),
            token: Arc::new(move || Ok(token.clone())),
            backoff: Backoff {
                initial: Duration::from_millis(50),
                max: Duration::from_millis(400),
            },
            deliveries: 16,
        })
        .unwrap();
        Agent {
            watch,
            deliveries,
            view: NodeView::default(),
            snapshots: 0,
            messages: 0,
            updates: Vec::new(),
        }
    }

    /// Takes deliveries until `done` holds of the agent.
    async fn until(&mut self, what: &str, done: impl Fn(&Agent) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !done(self) {
            let delivery = tokio::time::timeout_at(deadline, self.deliveries.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "{what}: not in time; state {:?}",
                        *self.watch.state().borrow()
                    )
                })
                .expect("the watch goes on");
            match delivery {
                Delivery::Snapshot(view) => {
                    self.view = view;
                    self.snapshots += 1;
                }
                Delivery::Updates(updates) => {
                    for u in &updates {
                        self.view.apply(u).unwrap_or_else(|e| panic!("{what}: {e}"));
                    }
                    self.updates.extend(updates);
                    self.messages += 1;
                }
            }
        }
    }

    fn has_policy(&self, name: &str) -> bool {
        self.view
            .policies
            .keys()
            .any(|k| k.to_string() == format!("x/{name}"))
    }
}

/// Waits until `done` holds.
async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not in time"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Three Nodes: `web` Pods on n1 (a policy admits `client` Pods to them), `db` Pods on n2 (a
/// policy), an `other` Pod on n3.
async fn three_nodes(controller: &Controller) {
    controller
        .run(|c| c.upsert_namespace(&namespace("x")).unwrap())
        .await;
    controller
        .pods(vec![
            pod("web-1", "n1", 1, "web"),
            pod("db-1", "n2", 2, "db"),
            pod("other-1", "n3", 3, "other"),
        ])
        .await;
    controller.policy(policy("web", "web", "client")).await;
    controller.policy(policy("db", "db", "nothing")).await;
}

/// A policy for each Node's marker Pod: once a Node's view holds its marker, every update sent
/// to it before the marker has arrived.
async fn markers(controller: &Controller, nodes: &[&str]) {
    for (i, node) in nodes.iter().enumerate() {
        let app = format!("marker-{node}");
        controller
            .pods(vec![pod(&app, node, 200 + i as u16, &app)])
            .await;
        controller.policy(policy(&app, &app, "nothing")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_reaches_only_the_nodes_of_its_span() {
    let controller = Controller::start(HubLimits::default()).await;
    three_nodes(&controller).await;
    let mut agents: BTreeMap<&str, Agent> = ["n1", "n2", "n3"]
        .into_iter()
        .map(|n| (n, controller.client(n, &format!("token-{n}"))))
        .collect();
    for agent in agents.values_mut() {
        agent.until("snapshot", |a| a.snapshots == 1).await;
    }
    assert!(agents["n1"].has_policy("web") && !agents["n1"].has_policy("db"));
    assert!(agents["n2"].has_policy("db") && !agents["n2"].has_policy("web"));
    assert!(agents["n3"].view.policies.is_empty());

    // A client Pod (on n3) joins the group the n1 policy reads: n1 only is told.
    controller
        .pods(vec![pod("client-1", "n3", 4, "client")])
        .await;
    // It leaves the group for no group at all: n1 only is told. A web Pod on n2 brings the web
    // policy to n2.
    controller
        .pods(vec![pod("client-1", "n3", 4, "idle")])
        .await;
    controller.pods(vec![pod("web-2", "n2", 5, "web")]).await;
    markers(&controller, &["n1", "n2", "n3"]).await;
    for (node, agent) in &mut agents {
        let marker = format!("marker-{node}");
        agent.until("the marker", |a| a.has_policy(&marker)).await;
    }
    let counts: BTreeMap<&str, Vec<String>> = agents
        .iter()
        .map(|(n, a)| (*n, a.updates.iter().map(kind).collect()))
        .collect();
    let expected =
        |kinds: &[&str]| -> Vec<String> { kinds.iter().map(|k| (*k).to_owned()).collect() };
    // n1: client-1 joins the `client` group and leaves it; web-2 joins `web`; its marker comes
    // with the marker's group and `nothing`.
    assert_eq!(
        counts["n1"],
        expected(&[
            "MemberUpserted",
            "MemberRemoved",
            "MemberUpserted",
            "GroupAdded",
            "GroupAdded",
            "PolicyUpserted"
        ]),
        "n1"
    );
    // n2: the web policy arrives with its two groups; the marker's `nothing` group is there.
    assert_eq!(
        counts["n2"],
        expected(&[
            "GroupAdded",
            "GroupAdded",
            "PolicyUpserted",
            "GroupAdded",
            "PolicyUpserted"
        ]),
        "n2"
    );
    // n3: its marker only.
    assert_eq!(
        counts["n3"],
        expected(&["GroupAdded", "GroupAdded", "PolicyUpserted"]),
        "n3"
    );
    for (node, agent) in &agents {
        assert_eq!(agent.view, controller.view(node).await, "{node}");
        assert_eq!(agent.snapshots, 1, "{node}");
    }
}

fn kind(update: &NodeUpdate) -> String {
    let text = format!("{update:?}");
    text.split([' ', '(', '{']).next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_built_from_the_deliveries_equal_the_computations() {
    let controller = Controller::start(HubLimits::default()).await;
    three_nodes(&controller).await;
    let mut n1 = controller.client("n1", "token-n1");
    let mut n2 = controller.client("n2", "token-n2");
    n1.until("snapshot", |a| a.snapshots == 1).await;
    // Pods move between Nodes and labels, policies come and go; n2 starts late.
    let apps = ["web", "db", "client", "other"];
    for step in 0..60u16 {
        let node = ["n1", "n2", "n3"][usize::from(step % 3)];
        let app = apps[usize::from(step % 4)];
        let name = format!("p{}", step % 7);
        controller
            .pods(vec![pod(&name, node, 10 + step % 7, app)])
            .await;
        if step % 10 == 5 {
            controller
                .policy(policy(
                    &format!("extra-{step}"),
                    app,
                    apps[usize::from(step / 10 % 4)],
                ))
                .await;
        }
        if step % 20 == 15 {
            let key = PodKey::new("x", format!("extra-{}", step - 10));
            controller.run(move |c| c.remove_policy(&key)).await;
        }
    }
    markers(&controller, &["n1", "n2"]).await;
    n1.until("the marker", |a| a.has_policy("marker-n1")).await;
    n2.until("the marker", |a| a.has_policy("marker-n2")).await;
    assert!(!n1.updates.is_empty());
    assert_eq!(n1.view, controller.view("n1").await);
    assert_eq!(n2.view, controller.view("n2").await);
    assert_eq!(n1.snapshots, 1, "n1 was never cut off");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_watcher_resumes_or_gets_a_snapshot() {
    let controller = Controller::start(HubLimits {
        log: 3,
        ..HubLimits::default()
    })
    .await;
    three_nodes(&controller).await;
    let mut stream = raw_watch(
        controller.channel(None).await,
        Some("token-n1"),
        request("n1", None),
    )
    .await
    .unwrap();
    let snapshot = next(&mut stream).await;
    assert!(matches!(snapshot.delivery, Delivery::Snapshot(_)));
    assert_eq!(snapshot.epoch, controller.hub.epoch());
    let mut view = match snapshot.delivery {
        Delivery::Snapshot(view) => view,
        Delivery::Updates(_) => unreachable!(),
    };
    let mut last = snapshot.version;
    let change = |i: u16, app: &'static str| pod(&format!("c{i}"), "n3", 20 + i, app);
    for i in 0..2 {
        controller.pods(vec![change(i, "client")]).await;
        let event = next(&mut stream).await;
        assert!(event.version > last);
        last = event.version;
        let Delivery::Updates(updates) = event.delivery else {
            panic!("updates expected")
        };
        for u in &updates {
            view.apply(u).unwrap();
        }
    }
    drop(stream);
    wait_for("the watcher is gone", || {
        controller.hub.stats().watchers == 0
    })
    .await;

    // Two updates missed: a resume gets exactly them.
    controller.pods(vec![change(2, "client")]).await;
    controller.pods(vec![change(3, "client")]).await;
    let resume = Resume {
        epoch: controller.hub.epoch(),
        version: last,
    };
    let mut stream = raw_watch(
        controller.channel(None).await,
        Some("token-n1"),
        request("n1", Some(resume)),
    )
    .await
    .unwrap();
    for _ in 0..2 {
        let event = next(&mut stream).await;
        assert!(event.version > last);
        last = event.version;
        let Delivery::Updates(updates) = event.delivery else {
            panic!("a resumed watch gets updates, not a snapshot")
        };
        for u in &updates {
            view.apply(u).unwrap();
        }
    }
    assert_eq!(view, controller.view("n1").await);
    // Nothing more comes until the next change, which comes once.
    controller.pods(vec![change(4, "client")]).await;
    let event = next(&mut stream).await;
    assert!(
        matches!(event.delivery, Delivery::Updates(ref u) if u.len() == 1),
        "{event:?}"
    );
    last = event.version;
    drop(stream);
    wait_for("the watcher is gone", || {
        controller.hub.stats().watchers == 0
    })
    .await;

    // Another epoch, an unknown version, or more missed than the log keeps: a snapshot.
    for i in 5..9 {
        controller.pods(vec![change(i, "client")]).await;
    }
    for resume in [
        Resume {
            epoch: controller.hub.epoch() ^ 1,
            version: last,
        },
        Resume {
            epoch: controller.hub.epoch(),
            version: 123_456,
        },
        Resume {
            epoch: controller.hub.epoch(),
            version: last,
        },
    ] {
        let mut stream = raw_watch(
            controller.channel(None).await,
            Some("token-n1"),
            request("n1", Some(resume)),
        )
        .await
        .unwrap();
        let event = next(&mut stream).await;
        let Delivery::Snapshot(snapshot) = event.delivery else {
            panic!("{resume:?}: a snapshot expected")
        };
        assert_eq!(snapshot, controller.view("n1").await);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_never_reads_is_cut_off_and_the_others_go_on() {
    let limits = HubLimits {
        queue: 4,
        log: 4,
        ..HubLimits::default()
    };
    let controller = Controller::start(limits).await;
    three_nodes(&controller).await;
    // Many members for a group n1 gets whole each time its policy comes back.
    let crowd: Vec<Pod> = (0..400)
        .map(|i| pod(&format!("crowd-{i}"), "n9", 300 + i, "crowd"))
        .collect();
    controller.pods(crowd).await;
    let mut fast = controller.client("n1", "token-n1");
    let mut other = controller.client("n2", "token-n2");
    fast.until("snapshot", |a| a.snapshots == 1).await;
    other.until("snapshot", |a| a.snapshots == 1).await;
    // The slow watcher offers a small HTTP/2 window and never reads.
    let mut slow = raw_watch(
        controller.channel(Some(4096)).await,
        Some("token-n1"),
        request("n1", None),
    )
    .await
    .unwrap();
    wait_for("three watchers", || controller.hub.stats().watchers == 3).await;

    let mut most = HubStats::default();
    let mut round = 0u16;
    while controller.hub.stats().watchers == 3 {
        assert!(round < 2000, "the slow watcher was never cut off");
        let name = format!("crowd-policy-{}", round % 2);
        if round % 4 < 2 {
            controller.policy(policy(&name, "web", "crowd")).await;
        } else {
            let key = PodKey::new("x", name);
            controller.run(move |c| c.remove_policy(&key)).await;
        }
        // n2 gets its own changes meanwhile.
        controller
            .pods(vec![pod("db-2", "n2", 6 + round % 2, "db")])
            .await;
        let stats = controller.hub.stats();
        most.queued = most.queued.max(stats.queued);
        most.logged = most.logged.max(stats.logged);
        assert!(stats.queued <= limits.queue * stats.watchers, "{stats:?}");
        assert!(stats.logged <= limits.log * stats.nodes, "{stats:?}");
        // The fast agent takes each message (one a round) before the next round.
        fast.until("keeps up", |a| a.messages > usize::from(round))
            .await;
        round += 1;
    }
    println!("cut off after {round} rounds; at most {most:?}");
    markers(&controller, &["n1", "n2"]).await;
    fast.until("the marker", |a| a.has_policy("marker-n1"))
        .await;
    other
        .until("the marker", |a| a.has_policy("marker-n2"))
        .await;
    assert_eq!(fast.view, controller.view("n1").await);
    assert_eq!(other.view, controller.view("n2").await);
    assert_eq!(
        (fast.snapshots, other.snapshots),
        (1, 1),
        "neither was cut off"
    );
    // The slow watcher, reading at last, finds its stream ended with RESOURCE_EXHAUSTED.
    let status = loop {
        match tokio::time::timeout(WAIT, slow.message())
            .await
            .expect("in time")
        {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("the stream ended without a status"),
            Err(status) => break status,
        }
    };
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(status.message().contains("too slow"), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_watches_get_their_status_and_the_others_are_served() {
    let controller = Controller::start(HubLimits::default()).await;
    three_nodes(&controller).await;
    let mut good = controller.client("n1", "token-n1");
    good.until("snapshot", |a| a.snapshots == 1).await;
    let cases = [
        (None, Code::Unauthenticated, "no bearer token"),
        (Some("forged"), Code::Unauthenticated, "unknown token"),
        (Some("down"), Code::Unavailable, "the API server is down"),
        (
            Some("token-n2"),
            Code::PermissionDenied,
            "bound to Node n2: it may not watch Node n1",
        ),
        (
            Some("nobody"),
            Code::PermissionDenied,
            "bound to no Node: it may not watch Node n1",
        ),
    ];
    for (token, code, message) in cases {
        let status = raw_watch(controller.channel(None).await, token, request("n1", None))
            .await
            .err()
            .unwrap_or_else(|| panic!("{token:?} accepted"));
        assert_eq!(status.code(), code, "{token:?}: {status:?}");
        assert!(status.message().contains(message), "{token:?}: {status:?}");
    }
    // A client refused keeps trying, with backoff, and says why.
    let refused = controller.client("n1", "token-n3");
    let mut state = refused.watch.state();
    let mut refusals = 0;
    while refusals < 2 {
        tokio::time::timeout(WAIT, state.changed())
            .await
            .unwrap()
            .unwrap();
        if let ConnectionState::Refused { code, message, .. } = &*state.borrow() {
            assert_eq!(*code, Code::PermissionDenied);
            assert!(message.contains("n3"), "{message}");
            refusals += 1;
        }
    }
    controller
        .pods(vec![pod("client-1", "n3", 4, "client")])
        .await;
    good.until("the change", |a| !a.updates.is_empty()).await;
    assert_eq!(good.view, controller.view("n1").await);
    assert_eq!(controller.hub.stats().watchers, 1, "only the good watcher");
}

/// Sends raw bytes as the request message.
#[derive(Debug, Default, Clone, Copy)]
struct RawCodec;

#[derive(Debug)]
struct RawEncoder;

#[derive(Debug)]
struct RawDecoder;

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

impl Encoder for RawEncoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        bytes::BufMut::put_slice(dst, &item);
        Ok(())
    }
}

impl Decoder for RawDecoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        let len = bytes::Buf::remaining(src);
        Ok(Some(bytes::Buf::copy_to_bytes(src, len).to_vec()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_and_vanishing_clients_end_only_their_stream() {
    let controller = Controller::start(HubLimits::default()).await;
    three_nodes(&controller).await;
    let mut good = controller.client("n1", "token-n1");
    good.until("snapshot", |a| a.snapshots == 1).await;
    let huge = format!(r#"{{"node":"n1","x":"{}"}}"#, "a".repeat(20_000)).into_bytes();
    let cases: [(&[u8], Code); 5] = [
        (b"not json", Code::InvalidArgument),
        (br#"{"node":"N1"}"#, Code::InvalidArgument),
        (
            br#"{"node":"n1","resume":{"epoch":"x"}}"#,
            Code::InvalidArgument,
        ),
        (b"\xff\xfe\x00", Code::InvalidArgument),
        (&huge, Code::OutOfRange),
    ];
    for (bytes, code) in cases {
        let mut grpc = tonic::client::Grpc::new(controller.channel(None).await);
        grpc.ready().await.unwrap();
        let mut call = tonic::Request::new(bytes.to_vec());
        call.metadata_mut()
            .insert("authorization", "Bearer token-n1".parse().unwrap());
        let status = grpc
            .server_streaming(call, WATCH_PATH.parse().unwrap(), RawCodec)
            .await
            .err()
            .unwrap_or_else(|| panic!("{:?} accepted", String::from_utf8_lossy(bytes)));
        assert_eq!(status.code(), code, "{status:?}");
    }
    // Not TLS at all, and a TLS handshake cut short.
    let mut plain = TcpStream::connect(controller.address).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut plain, b"GET / HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    drop(plain);
    drop(TcpStream::connect(controller.address).await.unwrap());

    // A watcher that goes away mid-stream: only it is removed.
    let mut leaving = raw_watch(
        controller.channel(None).await,
        Some("token-n1"),
        request("n1", None),
    )
    .await
    .unwrap();
    next(&mut leaving).await;
    assert_eq!(controller.hub.stats().watchers, 2);
    drop(leaving);
    wait_for("the watcher is gone", || {
        controller.hub.stats().watchers == 1
    })
    .await;
    controller
        .pods(vec![pod("client-1", "n3", 4, "client")])
        .await;
    good.until("the change", |a| !a.updates.is_empty()).await;
    assert_eq!(good.view, controller.view("n1").await);
    assert_eq!(good.snapshots, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_nobody_watches_is_forgotten_after_its_grace() {
    let controller = Controller::start(HubLimits {
        grace: Duration::from_millis(300),
        ..HubLimits::default()
    })
    .await;
    three_nodes(&controller).await;
    let mut stream = raw_watch(
        controller.channel(None).await,
        Some("token-n1"),
        request("n1", None),
    )
    .await
    .unwrap();
    next(&mut stream).await;
    // Kept while watched: the computation queues n1's updates.
    let kept = controller
        .run(|c| {
            c.upsert_pod(&pod("client-1", "n3", 4, "client")).unwrap();
            c.take_updates().keys().cloned().collect::<Vec<_>>()
        })
        .await;
    assert_eq!(kept, ["n1"]);
    drop(stream);
    wait_for("n1 forgotten", || {
        controller.hub.stats() == HubStats::default()
    })
    .await;
    let kept = controller
        .run(|c| {
            c.upsert_pod(&pod("client-1", "n3", 4, "nothing")).unwrap();
            c.take_updates()
        })
        .await;
    assert!(kept.is_empty(), "{kept:?}");
}

// ---- the leader's serving, with its own CA, against the fake API server ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_own_ca_is_made_once_published_and_verified_by_clients() {
    let api = fakeapi::FakeApiServer::new();
    let tcp = api.serve_tcp().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    tcp.write_kubeconfig(&kubeconfig).unwrap();
    api.insert(&namespace("x")).unwrap();
    api.insert(&pod("web-1", "n1", 1, "web")).unwrap();
    api.insert(&policy("web", "web", "client")).unwrap();
    let client = kube_client(&kubeconfig).await;
    let options = ServeOptions {
        tls: TlsSource::default(),
        sans: vec!["127.0.0.1".into()],
        ..ServeOptions::default()
    };

    let (address, leader) = start_leader(client.clone(), options.clone()).await;
    wait_for("antrea-ca", || {
        api.get::<ConfigMap>("kube-system", "antrea-ca")
            .unwrap()
            .is_some()
    })
    .await;
    let ca: ConfigMap = api.get("kube-system", "antrea-ca").unwrap().unwrap();
    let ca_pem = ca.data.unwrap()["ca.crt"].clone();
    let secret: Secret = api
        .get("kube-system", "antrea-controller-tls")
        .unwrap()
        .unwrap();
    let kept = secret.metadata.resource_version.clone();
    let secret_ca = String::from_utf8(secret.data.unwrap()["ca.crt"].0.clone()).unwrap();
    assert_eq!(secret_ca, ca_pem);
    for name in ["antrea.kube-system.svc", "127.0.0.1"] {
        let mut agent = Agent::start(address, &ca_pem, name, "n1", "token-n1");
        agent.until("the policy", |a| a.has_policy("web")).await;
    }
    // Another CA is not trusted.
    let (other_ca, _) = test_identity();
    let stranger = Agent::start(
        address,
        &other_ca,
        "antrea.kube-system.svc",
        "n1",
        "token-n1",
    );
    let mut state = stranger.watch.state();
    loop {
        tokio::time::timeout(WAIT, state.changed())
            .await
            .unwrap()
            .unwrap();
        if let ConnectionState::Disconnected { reason, .. } = &*state.borrow() {
            assert!(reason.contains("certificate"), "{reason}");
            break;
        }
    }
    leader.abort();

    // The next leader signs with the same CA: the Secret is not rewritten, the agents' CA holds.
    let (address, _leader) = start_leader(client, options).await;
    let mut agent = Agent::start(address, &ca_pem, "antrea.kube-system.svc", "n1", "token-n1");
    agent.until("the policy", |a| a.has_policy("web")).await;
    let secret: Secret = api
        .get("kube-system", "antrea-controller-tls")
        .unwrap()
        .unwrap();
    assert_eq!(secret.metadata.resource_version, kept);
    let again: ConfigMap = api.get("kube-system", "antrea-ca").unwrap().unwrap();
    assert_eq!(again.data.unwrap()["ca.crt"], ca_pem);
}

async fn kube_client(kubeconfig: &std::path::Path) -> kube::Client {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(kubeconfig).unwrap(),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// `serve::lead` on a fresh port; returns once the port accepts.
async fn start_leader(
    client: kube::Client,
    options: ServeOptions,
) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let served = lead(client, listener, &options, Arc::new(Tokens)).await;
        panic!("lead ended: {served:?}");
    });
    (address, task)
}
