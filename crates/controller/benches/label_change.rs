//! One Pod label change at scale, until every Node in its span has it (issue 12, benchmark
//! (b)). The cluster of benchmark (a) (`support/cluster.rs`: 100,000 Pods, 50,000 policies,
//! 1,000 Nodes) is in the fake API server (over TCP on 127.0.0.1); the controller runs in this
//! process as the leader does (`controller::serve::lead`: the feed lists and watches the fake
//! through kube-rs, the own CA kept in a Secret, TokenReview authentication); 1,000 agents,
//! one per Node, are `SpanWatch` clients over real TLS connections, all in one other process
//! (this benchmark run again with `LABEL_CHANGE_ROLE=clients`), which prints when each
//! delivery arrived.
//!
//! Once every agent has its snapshot, each repetition changes one Pod's labels in the fake
//! API server and measures, from that write, the time until every Node in the change's span
//! has received all its updates (wall clock, both processes on this machine). Two kinds of
//! change alternate, each on a Pod not changed before:
//!
//! - **tier**: a front-end Pod becomes a back-end: it leaves its team's front-end group, read
//!   on 100 Nodes (member removals);
//! - **app**: a back-end Pod moves from `app1` to `app2`: its Node loses one policy and gains
//!   another, the Nodes of the two groups' other members get member changes (a few Nodes).
//!
//! **Baseline, same run**: the same change in an in-process [`SpanComputation`] holding the
//! same cluster with every Node watched (`upsert_pod` and `take_updates`, no transport). Its
//! updates say which Nodes are in the span and how many updates each must receive; a Node
//! receiving anything else is counted as unexpected.
//!
//! Run: `cargo bench -p controller --bench label_change` (Linux; 1,000 connections each side,
//! so at least 2,100 open files; `LABEL_CHANGE_REPETITIONS`, default 100 of each kind).

#[path = "support/cluster.rs"]
mod cluster;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cluster::{
    NAMESPACES, NODES, Object, PODS_PER_NAMESPACE, POLICIES_PER_NAMESPACE, load, mib, rss_kib,
};
use controller::SpanComputation;
use controller::auth::{AGENT_NAMESPACE, AGENT_SERVICE_ACCOUNT, TokenReviewAuthenticator};
use controller::serve::{ServeOptions, lead};
use controlplane::Delivery;
use controlplane::client::{Backoff, ClientConfig, SpanWatch};
use fakeapi::{FakeApiServer, TokenUser};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use tokio::sync::mpsc;

/// Set in the clients' process.
const ROLE: &str = "LABEL_CHANGE_ROLE";
/// The controller's `host:port`, for the clients.
const ADDRESS: &str = "LABEL_CHANGE_ADDRESS";
/// The file holding the CA the clients verify the controller with.
const CA_FILE: &str = "LABEL_CHANGE_CA_FILE";
/// The name the controller's self-signed certificate carries.
const SERVER_NAME: &str = "antrea.kube-system.svc";
/// How long the clients may take to all hold their snapshots.
const READY_WAIT: Duration = Duration::from_secs(900);
/// How long one change may take to reach its span before the benchmark gives up.
const CHANGE_WAIT: Duration = Duration::from_secs(60);
/// How long after a change has reached its span the benchmark waits for stray deliveries.
const QUIET: Duration = Duration::from_millis(200);

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("clients") => clients(),
        _ => orchestrate(),
    }
}

fn repetitions() -> usize {
    std::env::var("LABEL_CHANGE_REPETITIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100)
}

fn node_name(k: usize) -> String {
    format!("node{k}")
}

/// The token of Node `k`'s agent; the fake API server's TokenReview binds it to the Node.
fn token(k: usize) -> String {
    format!("agent-token-node{k}")
}

/// Microseconds since the Unix epoch: both processes read the same clock.
fn now_micros() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros())
}

// ---- the clients' process ----

/// What the clients' process prints, one line each.
enum Line {
    /// Every agent holds its snapshot.
    Ready,
    /// Node `node` received `updates` updates at `at` (µs since the epoch).
    Updates {
        node: usize,
        at: u128,
        updates: usize,
    },
    /// Node `node` received a snapshot after the start (it was cut off or resynced).
    Snapshot { node: usize },
}

impl Line {
    fn print(&self) -> String {
        match self {
            Line::Ready => "ready".to_owned(),
            Line::Updates { node, at, updates } => format!("updates {node} {at} {updates}"),
            Line::Snapshot { node } => format!("snapshot {node}"),
        }
    }

    fn parse(line: &str) -> Option<Line> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["ready"] => Some(Line::Ready),
            ["updates", node, at, updates] => Some(Line::Updates {
                node: node.parse().ok()?,
                at: at.parse().ok()?,
                updates: updates.parse().ok()?,
            }),
            ["snapshot", node] => Some(Line::Snapshot {
                node: node.parse().ok()?,
            }),
            _ => None,
        }
    }
}

/// One `SpanWatch` per Node, as agents configure theirs; every delivery after the first
/// snapshot is printed. Ends when stdin closes.
fn clients() {
    let address = std::env::var(ADDRESS).expect("LABEL_CHANGE_ADDRESS");
    let ca_pem = std::fs::read_to_string(std::env::var(CA_FILE).expect("LABEL_CHANGE_CA_FILE"))
        .expect("the CA file");
    std::thread::spawn(|| {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        std::process::exit(0);
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    runtime.block_on(async {
        let (lines, mut printed) = mpsc::unbounded_channel::<Line>();
        let (ready, mut snapshots) = mpsc::unbounded_channel::<()>();
        let mut watches = Vec::with_capacity(NODES);
        for k in 0..NODES {
            let agent_token = token(k);
            let (watch, mut deliveries) = SpanWatch::spawn(ClientConfig {
                node: node_name(k),
                addresses: vec![address.clone()],
                server_name: SERVER_NAME.to_owned(),
                ca_pem: ca_pem.clone(),
                token: Arc::new(move || Ok(agent_token.clone())),
                backoff: Backoff::default(),
                deliveries: 16,
            })
            .expect("a SpanWatch");
            watches.push(watch);
            let lines = lines.clone();
            let ready = ready.clone();
            tokio::spawn(async move {
                let mut snapshot_seen = false;
                while let Some(delivery) = deliveries.recv().await {
                    let line = match delivery {
                        Delivery::Snapshot(_) if !snapshot_seen => {
                            snapshot_seen = true;
                            let _ = ready.send(());
                            continue;
                        }
                        Delivery::Snapshot(_) => Line::Snapshot { node: k },
                        Delivery::Updates(updates) => Line::Updates {
                            node: k,
                            at: now_micros(),
                            updates: updates.len(),
                        },
                    };
                    if lines.send(line).is_err() {
                        return;
                    }
                }
            });
        }
        for _ in 0..NODES {
            snapshots.recv().await.expect("the watchers go on");
        }
        let mut stdout = std::io::stdout();
        writeln!(stdout, "{}", Line::Ready.print()).expect("stdout");
        while let Some(line) = printed.recv().await {
            let mut text = line.print();
            while let Ok(more) = printed.try_recv() {
                text.push('\n');
                text.push_str(&more.print());
            }
            writeln!(stdout, "{text}").expect("stdout");
            stdout.flush().expect("stdout");
        }
        drop(watches);
    });
}

// ---- the controller's side ----

/// The kinds of label change measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Tier,
    App,
}

impl Change {
    /// The changed Pod of repetition `r`: each repetition changes a Pod not changed before.
    fn pod(self, r: usize) -> Pod {
        let (n, i, label, value) = match self {
            Change::Tier => (
                r % NAMESPACES,
                2 * (r / NAMESPACES),
                "tier",
                "be".to_owned(),
            ),
            Change::App => (
                (r + NAMESPACES / 2) % NAMESPACES,
                1 + 2 * (r / NAMESPACES),
                "app",
                format!("app{}", (r / NAMESPACES + 2) % POLICIES_PER_NAMESPACE),
            ),
        };
        let mut pod = cluster::pod(n, i);
        pod.metadata
            .labels
            .get_or_insert_default()
            .insert(label.to_owned(), value);
        pod
    }

    fn name(self) -> &'static str {
        match self {
            Change::Tier => "tier (fe → be)",
            Change::App => "app (app1 → app2)",
        }
    }
}

/// What one change measured.
struct Measured {
    nodes: usize,
    /// From the API write until the last Node in span had all its updates.
    end_to_end: Duration,
    /// The baseline: the change in the in-process computation.
    compute: Duration,
    /// Deliveries to Nodes outside the span, or more updates than the span's.
    unexpected: usize,
}

fn orchestrate() {
    println!(
        "cluster: {} Pods in {NAMESPACES} Namespaces on {NODES} Nodes, {} NetworkPolicies; \
         {NODES} agents' SpanWatch clients in one other process",
        NAMESPACES * PODS_PER_NAMESPACE,
        NAMESPACES * POLICIES_PER_NAMESPACE
    );
    let started = Instant::now();
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
        let mut user = TokenUser::service_account(
            AGENT_NAMESPACE,
            AGENT_SERVICE_ACCOUNT,
            "agent-sa-uid",
            &token(k),
        );
        user.extra.insert(
            "authentication.kubernetes.io/node-name".to_owned(),
            vec![node_name(k)],
        );
        fake.add_token(&token(k), user);
    }
    println!(
        "fake API server filled in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    let rss_before = rss_kib();
    let mut baseline = SpanComputation::default();
    load(|object| match object {
        Object::Namespace(n) => baseline.upsert_namespace(&n).unwrap(),
        Object::Pod(p) => baseline.upsert_pod(&p).unwrap(),
        Object::Policy(p) => baseline.upsert_policy(&p).unwrap(),
    });
    for k in 0..NODES {
        baseline.watch(&node_name(k));
    }
    println!(
        "baseline computation: the cluster loaded and {NODES} Nodes watched in {:.1} s, +{:.0} MiB",
        started.elapsed().as_secs_f64(),
        mib(rss_kib().saturating_sub(rss_before))
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ca_file = dir.path().join("ca.crt");
    let (_server, address) = runtime.block_on(async {
        let server = fake.serve_tcp().await.expect("serve the fake over TCP");
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
    let ca_pem = wait(Duration::from_secs(60), || {
        fake.get::<ConfigMap>("kube-system", "antrea-ca")
            .ok()
            .flatten()
            .and_then(|c| c.data?.remove("ca.crt"))
    })
    .expect("antrea-ca published");
    std::fs::write(&ca_file, ca_pem).expect("write the CA");

    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe().expect("the benchmark's own path"))
        .env(ROLE, "clients")
        .env(ADDRESS, address.to_string())
        .env(CA_FILE, &ca_file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the clients' process");
    let (lines, received) = std::sync::mpsc::channel();
    let out = BufReader::new(child.stdout.take().expect("the clients' output"));
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            match Line::parse(&line) {
                Some(line) => {
                    if lines.send(line).is_err() {
                        return;
                    }
                }
                None => eprintln!("clients: {line}"),
            }
        }
    });
    match received.recv_timeout(READY_WAIT) {
        Ok(Line::Ready) => {}
        _ => panic!("the clients did not all get their snapshot within {READY_WAIT:?}"),
    }
    println!(
        "{NODES} agents connected and hold their snapshot {:.1} s after the clients started \
         (the controller listed the cluster and computed meanwhile)",
        started.elapsed().as_secs_f64()
    );

    let mut results: BTreeMap<&str, Vec<Measured>> = BTreeMap::new();
    let mut resyncs = 0;
    for r in 0..repetitions() {
        for change in [Change::Tier, Change::App] {
            let pod = change.pod(r);
            let computed = Instant::now();
            baseline.upsert_pod(&pod).expect("the changed Pod");
            let expected: BTreeMap<usize, usize> = baseline
                .take_updates()
                .into_iter()
                .map(|(node, updates)| {
                    let k = node
                        .strip_prefix("node")
                        .and_then(|k| k.parse().ok())
                        .expect("a generated Node name");
                    (k, updates.len())
                })
                .collect();
            let compute = computed.elapsed();
            let written = now_micros();
            fake.insert(&pod).expect("write the changed Pod");
            let (measured, snapshots) = wait_for_span(&received, written, &expected, compute);
            resyncs += snapshots;
            results.entry(change.name()).or_default().push(measured);
        }
    }
    drop(child.stdin.take());
    let _ = child.wait();

    println!(
        "{:<18} {:>5} {:>8} {:>9} {:>9} {:>9} {:>13} {:>13} {:>10}",
        "change",
        "reps",
        "Nodes",
        "p50 ms",
        "p99 ms",
        "max ms",
        "baseline p50",
        "baseline p99",
        "unexpected"
    );
    for (name, measured) in &results {
        let end_to_end: Vec<Duration> = measured.iter().map(|m| m.end_to_end).collect();
        let compute: Vec<Duration> = measured.iter().map(|m| m.compute).collect();
        let nodes: Vec<usize> = measured.iter().map(|m| m.nodes).collect();
        println!(
            "{:<18} {:>5} {:>8} {:>9.2} {:>9.2} {:>9.2} {:>13.3} {:>13.3} {:>10}",
            name,
            measured.len(),
            format!(
                "{}–{}",
                nodes.iter().min().unwrap_or(&0),
                nodes.iter().max().unwrap_or(&0)
            ),
            ms(percentile(&end_to_end, 0.50)),
            ms(percentile(&end_to_end, 0.99)),
            ms(percentile(&end_to_end, 1.0)),
            ms(percentile(&compute, 0.50)),
            ms(percentile(&compute, 0.99)),
            measured.iter().map(|m| m.unexpected).sum::<usize>(),
        );
    }
    println!("snapshots after the start (agents cut off or resynced): {resyncs}");
}

/// Reads the clients' lines until every Node of `expected` has received its number of
/// updates, then for [`QUIET`] more; returns the measure and the snapshots seen.
fn wait_for_span(
    received: &std::sync::mpsc::Receiver<Line>,
    written: u128,
    expected: &BTreeMap<usize, usize>,
    compute: Duration,
) -> (Measured, usize) {
    let mut got: BTreeMap<usize, usize> = BTreeMap::new();
    let mut last = written;
    let mut unexpected = 0;
    let mut snapshots = 0;
    let deadline = Instant::now() + CHANGE_WAIT;
    let complete = |got: &BTreeMap<usize, usize>| {
        expected
            .iter()
            .all(|(node, n)| got.get(node).is_some_and(|g| g >= n))
    };
    let mut quiet_until = None;
    loop {
        let now = Instant::now();
        let until = match quiet_until {
            Some(until) => until,
            None if complete(&got) => {
                quiet_until = Some(now + QUIET);
                continue;
            }
            None => deadline,
        };
        let Some(left) = until.checked_duration_since(now) else {
            if quiet_until.is_some() {
                break;
            }
            panic!(
                "the change did not reach its span within {CHANGE_WAIT:?}: {} of {} Nodes",
                got.keys().filter(|k| expected.contains_key(k)).count(),
                expected.len()
            );
        };
        match received.recv_timeout(left) {
            Ok(Line::Updates { node, at, updates }) => {
                let total = got.entry(node).or_default();
                *total += updates;
                match expected.get(&node) {
                    Some(n) if *total <= *n => {
                        if quiet_until.is_none() {
                            last = last.max(at);
                        }
                    }
                    _ => unexpected += 1,
                }
            }
            Ok(Line::Snapshot { .. }) => snapshots += 1,
            Ok(Line::Ready) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                panic!("the clients' process ended")
            }
        }
    }
    let end_to_end =
        Duration::from_micros(u64::try_from(last.saturating_sub(written)).unwrap_or(u64::MAX));
    (
        Measured {
            nodes: expected.len(),
            end_to_end,
            compute,
            unexpected,
        },
        snapshots,
    )
}

/// Polls `get` every 50 ms until it gives something, for at most `limit`.
fn wait<T>(limit: Duration, mut get: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = get() {
            return Some(value);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The `q` quantile of `samples` (nearest rank).
fn percentile(samples: &[Duration], q: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
