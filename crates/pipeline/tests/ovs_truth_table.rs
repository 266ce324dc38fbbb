//! Truth tables in a real `ovs-vswitchd`: the lab cluster (Namespaces x, y, z with Pods a, b, c;
//! x and y run on this Node n1, z on n2 behind the tunnel), 27 policy scenarios, and for each the
//! reachability of every Pod pair this Node decides on, over TCP and UDP ports 80 and 81, traced
//! with `ofproto/trace` through the whole pipeline. Expected matrices are written from the
//! Kubernetes NetworkPolicy semantics; a mismatch prints both matrices.
#![cfg(target_os = "linux")]

mod support;

use std::net::Ipv4Addr;

use netpol::Protocol::{self, Tcp, Udp};
use netpol::{PolicyEngine, PolicyKey};
use ovstest::Ovs;
use pipeline::Round;
use pipeline::cache::FlowOwner;
use pipeline::model::{LocalPod, NodePorts, PodKey, TrafficMode, TunnelType};
use pipeline::render::{PolicyRenderer, node_flows, peer_flows, pod_flows};
use serde_json::{Value, json};
use support::switch::Switch;

type P = (&'static str, &'static str);
type Expect = fn(P, P, Protocol, u16) -> bool;
/// A scenario: its name, its policies, what it allows.
type Scenario = (&'static str, Vec<(PolicyKey, Value)>, Expect);

const NS: [&str; 3] = ["x", "y", "z"];
const PODS: [&str; 3] = ["a", "b", "c"];
const GW_MAC: &str = "02:00:0a:f4:01:01";
const PORTS: [(Protocol, u16); 4] = [(Tcp, 80), (Tcp, 81), (Udp, 80), (Udp, 81)];

fn index(p: P) -> u8 {
    let n = NS.iter().position(|x| *x == p.0).unwrap() as u8;
    n * 3 + PODS.iter().position(|x| *x == p.1).unwrap() as u8
}

fn local(p: P) -> bool {
    p.0 != "z"
}

/// x and y: 10.244.1.10-15 on ofports 10-15; z: 10.244.2.10-12.
fn ip(p: P) -> Ipv4Addr {
    let i = index(p);
    if local(p) {
        Ipv4Addr::new(10, 244, 1, 10 + i)
    } else {
        Ipv4Addr::new(10, 244, 2, 4 + i)
    }
}

fn mac(p: P) -> String {
    format!("02:00:0a:f4:01:{:02x}", 10 + index(p))
}

fn ofport(p: P) -> u32 {
    10 + u32::from(index(p))
}

fn all_pods() -> Vec<P> {
    NS.iter()
        .flat_map(|n| PODS.iter().map(move |p| (*n, *p)))
        .collect()
}

fn engine() -> PolicyEngine {
    let mut e = PolicyEngine::new("n1");
    for ns in NS {
        e.upsert_namespace(
            &serde_json::from_value(json!({"metadata": {"name": ns, "labels": {"ns": ns}}}))
                .unwrap(),
        )
        .unwrap();
    }
    for p in all_pods() {
        let pod = json!({
            "metadata": {"namespace": p.0, "name": p.1, "labels": {"pod": p.1}},
            "spec": {"nodeName": if local(p) { "n1" } else { "n2" }, "containers": [{"name": "c", "ports": [
                {"name": "serve-80-tcp", "containerPort": 80},
                {"name": "serve-81-tcp", "containerPort": 81},
                {"name": "serve-80-udp", "containerPort": 80, "protocol": "UDP"},
                {"name": "serve-81-udp", "containerPort": 81, "protocol": "UDP"},
            ]}]},
            "status": {"phase": "Running", "podIP": ip(p).to_string()},
        });
        e.upsert_pod(&serde_json::from_value(pod).unwrap()).unwrap();
    }
    e
}

fn policy(ns: &str, name: &str, spec: Value) -> (PolicyKey, Value) {
    (PolicyKey::new(ns, name), spec)
}

fn sel(key: &str, value: &str) -> Value {
    json!({"matchLabels": {key: value}})
}

/// The scenarios: a name, the policies, and what is allowed.
fn scenarios() -> Vec<Scenario> {
    vec![
        ("no policy", vec![], |_, _, _, _| true),
        (
            "deny all ingress in x",
            vec![policy(
                "x",
                "d",
                json!({"podSelector": {}, "policyTypes": ["Ingress"]}),
            )],
            |_, d, _, _| d.0 != "x",
        ),
        (
            "deny all egress in x",
            vec![policy(
                "x",
                "d",
                json!({"podSelector": {}, "policyTypes": ["Egress"]}),
            )],
            |s, _, _, _| s.0 != "x",
        ),
        (
            "deny all both ways in y",
            vec![policy(
                "y",
                "d",
                json!({"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}),
            )],
            |s, d, _, _| s.0 != "y" && d.0 != "y",
        ),
        (
            "allow all ingress in x",
            vec![policy(
                "x",
                "a",
                json!({"podSelector": {}, "ingress": [{}]}),
            )],
            |_, _, _, _| true,
        ),
        (
            "allow all egress in x",
            vec![policy(
                "x",
                "a",
                json!({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{}]}),
            )],
            |_, _, _, _| true,
        ),
        (
            "x/a from x/b",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"podSelector": sel("pod", "b")}]}]}),
            )],
            |s, d, _, _| d != ("x", "a") || s == ("x", "b"),
        ),
        (
            "x from Namespace y",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": sel("ns", "y")}]}]}),
            )],
            |s, d, _, _| d.0 != "x" || s.0 == "y",
        ),
        (
            "x from Namespace y AND Pod b",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": sel("ns", "y"), "podSelector": sel("pod", "b")}]}]}),
            )],
            |s, d, _, _| d.0 != "x" || s == ("y", "b"),
        ),
        (
            "x from Namespace y OR Pod b",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": sel("ns", "y")}, {"podSelector": sel("pod", "b")}]}]}),
            )],
            |s, d, _, _| d.0 != "x" || s.0 == "y" || s == ("x", "b"),
        ),
        (
            "x/a on TCP 80 from anyone",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "ingress": [{"ports": [{"port": 80}]}]}),
            )],
            |_, d, proto, port| d != ("x", "a") || (proto == Tcp && port == 80),
        ),
        (
            "x/a on every UDP port",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "ingress": [{"ports": [{"protocol": "UDP"}]}]}),
            )],
            |_, d, proto, _| d != ("x", "a") || proto == Udp,
        ),
        (
            "x/a on TCP 81-90",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "ingress": [{"ports": [{"port": 81, "endPort": 90}]}]}),
            )],
            |_, d, proto, port| d != ("x", "a") || (proto == Tcp && port == 81),
        ),
        (
            "x on named port serve-81-tcp",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"ports": [{"port": "serve-81-tcp"}]}]}),
            )],
            |_, d, proto, port| d.0 != "x" || (proto == Tcp && port == 81),
        ),
        (
            "x from z's CIDR except z/b",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.244.2.0/24", "except": ["10.244.2.11/32"]}}]}]}),
            )],
            |s, d, _, _| d.0 != "x" || (s.0 == "z" && s.1 != "b"),
        ),
        (
            "x/a egress to Namespace z",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector": sel("ns", "z")}]}]}),
            )],
            |s, d, _, _| s != ("x", "a") || d.0 == "z",
        ),
        (
            "x egress to Namespace y on UDP 80",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector": sel("ns", "y")}], "ports": [{"protocol": "UDP", "port": 80}]}]}),
            )],
            |s, d, proto, port| s.0 != "x" || (d.0 == "y" && proto == Udp && port == 80),
        ),
        (
            "x egress on named port serve-80-udp to anyone",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"ports": [{"protocol": "UDP", "port": "serve-80-udp"}]}]}),
            )],
            |s, _, proto, port| s.0 != "x" || (proto == Udp && port == 80),
        ),
        (
            "union of two policies on x/a",
            vec![
                policy(
                    "x",
                    "p1",
                    json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"namespaceSelector": sel("ns", "y"), "podSelector": sel("pod", "a")}], "ports": [{"port": 80}]}]}),
                ),
                policy(
                    "x",
                    "p2",
                    json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"podSelector": sel("pod", "b")}]}]}),
                ),
            ],
            |s, d, proto, port| {
                d != ("x", "a")
                    || s == ("x", "b")
                    || (s == ("y", "a") && proto == Tcp && port == 80)
            },
        ),
        (
            "egress rules only: ingress isolated too",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "c"), "egress": [{"to": [{"podSelector": {}}]}]}),
            )],
            |s, d, _, _| (s != ("x", "c") || d.0 == "x") && d != ("x", "c"),
        ),
        (
            "policyTypes Egress ignores ingress rules",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "c"), "policyTypes": ["Egress"], "ingress": [{"from": [{"podSelector": sel("pod", "a")}]}], "egress": [{"to": [{"namespaceSelector": sel("ns", "y")}]}]}),
            )],
            |s, d, _, _| s != ("x", "c") || d.0 == "y",
        ),
        (
            "matchExpressions",
            vec![policy(
                "x",
                "p",
                json!({
                    "podSelector": {"matchExpressions": [{"key": "pod", "operator": "NotIn", "values": ["a"]}]},
                    "ingress": [{"from": [{"namespaceSelector": {"matchExpressions": [{"key": "ns", "operator": "In", "values": ["y", "z"]}]}}]}],
                }),
            )],
            |s, d, _, _| !(d.0 == "x" && d.1 != "a") || s.0 != "x",
        ),
        (
            "a policy of n2's Pods changes nothing here",
            vec![policy(
                "z",
                "d",
                json!({"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}),
            )],
            |_, _, _, _| true,
        ),
        (
            "y from every Namespace's Pod c",
            vec![policy(
                "y",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {}, "podSelector": sel("pod", "c")}]}]}),
            )],
            |s, d, _, _| d.0 != "y" || s.1 == "c",
        ),
        (
            "y/b egress to n1's CIDR except x/c",
            vec![policy(
                "y",
                "p",
                json!({"podSelector": sel("pod", "b"), "policyTypes": ["Egress"], "egress": [{"to": [{"ipBlock": {"cidr": "10.244.1.0/24", "except": ["10.244.1.12/32"]}}]}]}),
            )],
            |s, d, _, _| s != ("y", "b") || (local(d) && d != ("x", "c")),
        ),
        (
            "x/a ingress from y/a, y/a egress to x only on TCP",
            vec![
                policy(
                    "x",
                    "in",
                    json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"namespaceSelector": sel("ns", "y"), "podSelector": sel("pod", "a")}]}]}),
                ),
                policy(
                    "y",
                    "out",
                    json!({"podSelector": sel("pod", "a"), "policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector": sel("ns", "x")}], "ports": [{"protocol": "TCP"}]}]}),
                ),
            ],
            |s, d, proto, _| {
                (d != ("x", "a") || s == ("y", "a"))
                    && (s != ("y", "a") || (d.0 == "x" && proto == Tcp))
            },
        ),
        (
            "empty from and ports lists are any",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [], "ports": []}]}),
            )],
            |_, _, _, _| true,
        ),
    ]
}

/// The packet from `s` to `d` as it enters this Node, in `ofproto/trace` syntax.
fn packet(s: P, d: P, proto: Protocol, port: u16) -> String {
    let l4 = match proto {
        Tcp => format!("tcp,tcp_dst={port}"),
        Udp => format!("udp,udp_dst={port}"),
        Protocol::Sctp => unreachable!("not traced"),
    };
    let head = if local(s) {
        format!("in_port={},dl_src={},dl_dst={GW_MAC}", ofport(s), mac(s))
    } else {
        "in_port=32768,tun_src=10.10.0.12,tun_dst=10.10.0.11,dl_src=02:00:0a:f4:02:01,dl_dst=aa:bb:cc:dd:ee:ff".to_string()
    };
    format!("{head},{l4},nw_src={},nw_dst={},nw_ttl=64", ip(s), ip(d))
}

fn allowed(ovs: &Ovs, s: P, d: P, proto: Protocol, port: u16) -> bool {
    let flow = packet(s, d, proto, port);
    let trace = ovs
        .appctl(&["ofproto/trace", "br0", &flow, "--ct-next", "trk,new"])
        .unwrap_or_else(|e| panic!("trace {flow}: {e}"));
    let expected_port = if local(d) {
        ofport(d)
    } else {
        NodePorts::TUNNEL
    };
    let last = trace.rsplit("bridge(\"br0\")").next().unwrap_or(&trace);
    let out = last.contains(&format!("-> output port is {expected_port}"));
    let dropped = trace.trim_end().ends_with("Datapath actions: drop");
    assert!(
        out != dropped,
        "neither clearly output nor dropped:\n{trace}"
    );
    out
}

fn matrix(cell: impl Fn(P, P) -> Option<bool>) -> String {
    let pods = all_pods();
    let mut out = String::from("     ");
    for d in &pods {
        out.push_str(&format!("{}/{} ", d.0, d.1));
    }
    out.push('\n');
    for s in &pods {
        out.push_str(&format!("{}/{} ", s.0, s.1));
        for d in &pods {
            out.push_str(match cell(*s, *d) {
                None => "  - ",
                Some(true) => "  . ",
                Some(false) => "  X ",
            });
        }
        out.push('\n');
    }
    out
}

#[tokio::test]
async fn truth_tables() {
    let local_pods: Vec<LocalPod> = all_pods()
        .into_iter()
        .filter(|p| local(*p))
        .map(|p| LocalPod {
            key: PodKey::new(p.0, p.1),
            ip: ip(p),
            mac: mac(p).parse().unwrap(),
            ofport: ofport(p),
        })
        .collect();
    let sw = Switch::with_pods(Some("geneve"), Default::default(), &local_pods).await;
    let installer = sw.installer(Round::FIRST);
    let node = support::node(TrafficMode::Encap(TunnelType::Geneve));
    installer
        .replace(FlowOwner::Node, node_flows(&node))
        .await
        .unwrap();
    for pod in &local_pods {
        installer
            .replace(FlowOwner::Pod(pod.key.clone()), pod_flows(&node, pod))
            .await
            .unwrap();
    }
    installer
        .replace(
            FlowOwner::Peer("n2".into()),
            peer_flows(&node, &support::peer()),
        )
        .await
        .unwrap();

    let mut engine = engine();
    let mut renderer = PolicyRenderer::new();
    let mut installed: Vec<PolicyKey> = Vec::new();
    let mut failures = Vec::new();
    let scenarios = scenarios();
    assert!(scenarios.len() >= 25);
    for (name, policies, expect) in scenarios {
        for key in installed.drain(..) {
            engine.remove_policy(&key);
        }
        for (key, spec) in policies {
            let object =
                json!({"metadata": {"namespace": key.namespace, "name": key.name}, "spec": spec});
            engine
                .upsert_policy(&serde_json::from_value(object).unwrap())
                .unwrap();
            installed.push(key);
        }
        let flows = renderer.render(engine.snapshot());
        installer
            .replace(FlowOwner::NetworkPolicy, flows.flows)
            .await
            .unwrap();
        for (proto, port) in PORTS {
            // Only pairs this Node forwards: z to z never crosses it.
            let decided = |s: P, d: P| local(s) || local(d);
            let want = matrix(|s, d| decided(s, d).then(|| expect(s, d, proto, port)));
            let got = matrix(|s, d| decided(s, d).then(|| allowed(&sw.ovs, s, d, proto, port)));
            if want != got {
                failures.push(format!(
                    "{name} ({proto}/{port})\nexpected:\n{want}got:\n{got}"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
