//! A long-lived TCP connection through policy churn, with real packets: on one Node running the
//! real agent, the `truthtable` lab's x and y Pods come through the real `antrea` plugin; x/b is
//! isolated and admits x/a on TCP 80, and x/a holds one connection to it. Then 100 policy
//! updates that do not concern that connection — other policies created, updated and deleted,
//! one of them selecting x/b itself for other peers and ports — each seen installed (with flow
//! mods) before the same socket exchanges data again. The server's side ends only with the
//! client's own close, having echoed every byte: no reset, no early end. New connections show
//! the policy still in force.
#![cfg(target_os = "linux")]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Instant;

use serde_json::{Value, json};
use support::podnet::{add_lab_pods, in_netns, probe};
use support::{HANG_GUARD, Lan, TestNode, nodes_yaml, wait_until};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use truthtable::model::{ip, list};
use truthtable::{Cluster, Observation, Pod, Protocol};

const N1: (&str, &str, &str) = ("n1", "10.10.0.11", "10.244.1.0/24");
const CLIENT: Pod = ("x", "a");
const SERVER: Pod = ("x", "b");
const UPDATES: u16 = 100;

fn policy(namespace: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"namespace": namespace, "name": name},
        "spec": spec,
    })
}

/// x/b admits x/a on TCP 80 only: the connection under test.
fn server_policy() -> Value {
    policy(
        "x",
        "b-from-a",
        json!({"podSelector": {"matchLabels": {"pod": "b"}}, "ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "a"}}}], "ports": [{"port": 80}]}]}),
    )
}

/// Update `i`: the policies besides the server's, each with ports that move every time; y/churn
/// is deleted every tenth update and comes back on the next.
fn churn(i: u16) -> Vec<Value> {
    let mut out = vec![
        policy(
            "x",
            "c-from-y",
            json!({"podSelector": {"matchLabels": {"pod": "c"}}, "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}], "ports": [{"port": 2000 + i}]}]}),
        ),
        policy(
            "x",
            "b-extra",
            json!({"podSelector": {"matchLabels": {"pod": "b"}}, "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}, "podSelector": {"matchLabels": {"pod": "a"}}}], "ports": [{"protocol": "UDP", "port": 3000 + i}]}]}),
        ),
    ];
    if i % 10 != 9 {
        out.push(policy(
            "y",
            "churn",
            json!({"podSelector": {"matchLabels": {"pod": "b"}}, "policyTypes": ["Ingress", "Egress"], "ingress": [{"ports": [{"port": 1000 + i}]}], "egress": [{"to": [{"podSelector": {}}]}]}),
        ));
    }
    out
}

/// The flow mods of a controller install line ("…, N flow mods").
fn flow_mods(line: &str) -> usize {
    let words: Vec<&str> = line.split_whitespace().collect();
    words
        .windows(2)
        .find(|w| w[1] == "flow")
        .and_then(|w| w[0].parse().ok())
        .unwrap_or_else(|| panic!("no flow mod count in {line:?}"))
}

/// Echoes what the first connection sends until it ends; the bytes echoed, or why it broke.
async fn echo(mut conn: tokio::net::TcpStream) -> std::io::Result<usize> {
    let mut buf = [0u8; 256];
    let mut total = 0;
    loop {
        let n = conn.read(&mut buf).await?;
        if n == 0 {
            return Ok(total);
        }
        conn.write_all(&buf[..n]).await?;
        total += n;
    }
}

#[test]
fn a_connection_survives_100_unrelated_policy_updates() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let mut n1 = TestNode::new("n1", &ns1, "", &nodes_yaml(&[N1]));
    let lab = Cluster::new(&[]);
    let objects =
        |with_ips: bool| serde_json::to_string_pretty(&list(lab.objects(with_ips))).unwrap();
    n1.write_cluster_file("lab.yaml", &objects(false));
    n1.start_and_wait_up();
    let socket = n1.cni_socket();
    wait_until("the CNI socket", || socket.exists());
    let netns = add_lab_pods(&mut lan, &n1);
    let mark = n1.policy_installs().len();
    n1.write_cluster_file("lab.yaml", &objects(true));
    n1.write_cluster_file(
        "policies.yaml",
        &serde_json::to_string(&list(vec![server_policy()])).unwrap(),
    );
    wait_until("the server policy installed", || {
        n1.policy_installs()[mark..]
            .iter()
            .any(|l| l.contains("1 rules"))
    });

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server_addr = SocketAddr::from((ip(SERVER), 80));
    let listener = in_netns(&netns[&SERVER], || {
        runtime.block_on(tokio::net::TcpListener::bind(("0.0.0.0", 80)))
    })
    .expect("listen on x/b:80");
    let (outcome_tx, outcome) = tokio::sync::oneshot::channel();
    runtime.spawn(async move {
        let Ok((first, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(async move {
            let _ = outcome_tx.send(echo(first).await);
        });
        // Later connections (the probes at the end) are accepted and closed.
        while let Ok((other, _)) = listener.accept().await {
            drop(other);
        }
    });
    let mut conn = in_netns(&netns[&CLIENT], || {
        TcpStream::connect_timeout(&server_addr, HANG_GUARD)
    })
    .expect("x/a connects to x/b:80");
    conn.set_read_timeout(Some(HANG_GUARD)).unwrap();
    let mut exchange = |message: &str| {
        conn.write_all(message.as_bytes())
            .unwrap_or_else(|e| panic!("send {message:?}: {e}"));
        let mut back = vec![0u8; message.len()];
        conn.read_exact(&mut back)
            .unwrap_or_else(|e| panic!("echo of {message:?}: {e}"));
        assert_eq!(back, message.as_bytes());
        message.len()
    };
    let mut sent = exchange("before the updates\n");

    let started = Instant::now();
    for i in 0..UPDATES {
        let mark = n1.policy_installs().len();
        let mut policies = vec![server_policy()];
        policies.extend(churn(i));
        n1.write_cluster_file(
            "policies.yaml",
            &serde_json::to_string(&list(policies)).unwrap(),
        );
        wait_until(&format!("update {i} installed"), || {
            n1.policy_installs().len() > mark
        });
        let mods: usize = n1.policy_installs()[mark..]
            .iter()
            .map(|l| flow_mods(l))
            .sum();
        assert!(mods > 0, "update {i} changed no flow");
        sent += exchange(&format!("after update {i}\n"));
    }
    let churned = started.elapsed();

    // The client ends the connection; the server saw every byte and then that end, nothing else.
    conn.shutdown(std::net::Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    conn.read_to_end(&mut rest)
        .expect("the server closes cleanly");
    assert!(rest.is_empty());
    let echoed = outcome.blocking_recv().expect("the echo task reports");
    assert_eq!(echoed.expect("no reset on the server's side"), sent);

    // The policy is still in force for new connections.
    let tcp = |from: Pod| {
        in_netns(&netns[&from], || {
            runtime.block_on(probe(Protocol::Tcp, server_addr))
        })
    };
    assert_eq!(
        tcp(CLIENT),
        Observation::Connected,
        "a new x/a -> x/b:80 connection"
    );
    let denied = tcp(("x", "c"));
    assert!(
        matches!(denied, Observation::Blocked(_)),
        "x/c -> x/b:80 stays denied: {denied}"
    );
    eprintln!("{UPDATES} policy updates, each installed and followed by an echo, in {churned:?}");
    drop(runtime);
    assert!(n1.stop_agent());
}
