//! NetworkPolicy in a real `ovs-vswitchd`: policies computed by `netpol` from Kubernetes
//! objects, rendered as conjunctive flows, installed through the installer next to n1's
//! pipeline, and checked with `ofproto/trace` — allowed packets reach their port, others are
//! dropped; established connections pass whatever the rules; updates are diffs.
#![cfg(target_os = "linux")]

mod support;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use model::{TrafficMode, TunnelType};
use netpol::{PolicyEngine, PolicyKey};
use pipeline::Round;
use pipeline::cache::{Installer, Owner};
use pipeline::owners::NETWORK_POLICY;
use pipeline::render::{PolicyFlows, PolicyRenderer};
use serde_json::{Value, json};
use support::switch::{Switch, install_all, texts};

fn pod(ns: &str, name: &str, node: &str, ip: &str, labels: Value, ports: Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"namespace": ns, "name": name, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c", "ports": ports}]},
        "status": {"phase": "Running", "podIP": ip},
    }))
    .unwrap()
}

fn policy(ns: &str, name: &str, spec: Value) -> NetworkPolicy {
    serde_json::from_value(json!({"metadata": {"namespace": ns, "name": name}, "spec": spec}))
        .unwrap()
}

/// n1's Pods p1 (web, `http` = 8080) and p3 (db); n2's Pods r1 and r2 (clients) and, in
/// another Namespace, r3 (a client too).
fn engine() -> PolicyEngine {
    let mut e = PolicyEngine::new("n1");
    for ns in ["default", "other"] {
        e.upsert_namespace(
            &serde_json::from_value(json!({"metadata": {"name": ns, "labels": {"ns": ns}}}))
                .unwrap(),
        )
        .unwrap();
    }
    let pods = [
        pod(
            "default",
            "p1",
            "n1",
            "10.244.1.10",
            json!({"app": "web"}),
            json!([{"name": "http", "containerPort": 8080}]),
        ),
        pod(
            "default",
            "p3",
            "n1",
            "10.244.1.11",
            json!({"app": "db"}),
            json!([]),
        ),
        pod(
            "default",
            "r1",
            "n2",
            "10.244.2.10",
            json!({"app": "client"}),
            json!([]),
        ),
        pod(
            "default",
            "r2",
            "n2",
            "10.244.2.11",
            json!({"app": "client"}),
            json!([]),
        ),
        pod(
            "other",
            "r3",
            "n2",
            "10.244.2.12",
            json!({"app": "client"}),
            json!([]),
        ),
    ];
    for p in &pods {
        e.upsert_pod(p).unwrap();
    }
    e
}

fn web_ingress() -> NetworkPolicy {
    policy(
        "default",
        "web",
        json!({
            "podSelector": {"matchLabels": {"app": "web"}},
            "ingress": [{
                "from": [{"podSelector": {"matchLabels": {"app": "client"}}}],
                "ports": [{"port": 80, "endPort": 81}, {"port": "http"}],
            }],
        }),
    )
}

fn db_egress() -> NetworkPolicy {
    policy(
        "default",
        "db",
        json!({
            "podSelector": {"matchLabels": {"app": "db"}},
            "policyTypes": ["Egress"],
            "egress": [{
                "to": [{"ipBlock": {"cidr": "10.244.2.0/24", "except": ["10.244.2.11/32"]}}],
                "ports": [{"protocol": "UDP", "port": 53}],
            }],
        }),
    )
}

async fn install(
    installer: &Installer,
    renderer: &mut PolicyRenderer,
    engine: &mut PolicyEngine,
) -> PolicyFlows {
    let flows = renderer.render(engine.snapshot());
    installer
        .replace(Owner::from(NETWORK_POLICY), flows.flows.clone())
        .await
        .expect("policy flows");
    flows
}

const GW_MAC: &str = "02:00:0a:f4:01:01";
const TUN_IN: &str = "in_port=32768,tun_src=10.10.0.12,tun_dst=10.10.0.11,dl_src=02:00:0a:f4:02:01,dl_dst=aa:bb:cc:dd:ee:ff";

/// Where the last pass of `flow` (conntrack state `ct`) sends the packet: `Some(port)` or
/// `None` when dropped.
fn verdict(sw: &Switch, flow: &str, ct: &str) -> Option<u32> {
    let trace = sw.trace(flow, &[ct]);
    let last = trace.rsplit("bridge(\"br0\")").next().unwrap_or(&trace);
    if trace.trim_end().ends_with("Datapath actions: drop") {
        return None;
    }
    let port = last
        .lines()
        .find_map(|l| l.trim().strip_prefix("-> output port is "))
        .unwrap_or_else(|| panic!("neither dropped nor output:\n{trace}"));
    Some(port.trim().parse().unwrap())
}

fn from_tunnel(src: &str, dst: &str, l4: &str) -> String {
    format!("{TUN_IN},{l4},nw_src={src},nw_dst={dst},nw_ttl=64")
}

fn from_pod(port: u32, mac: &str, src: &str, dst: &str, l4: &str) -> String {
    format!("in_port={port},{l4},dl_src={mac},dl_dst={GW_MAC},nw_src={src},nw_dst={dst},nw_ttl=64")
}

const P1_MAC: &str = "02:00:0a:f4:01:0a";
const P3_MAC: &str = "02:00:0a:f4:01:0b";

#[tokio::test]
async fn policies_allow_and_drop_in_ovs() {
    let sw = Switch::start(Some("geneve")).await;
    let node = support::node(TrafficMode::Encap(TunnelType::Geneve));
    let installer = sw.installer(Round::FIRST);
    install_all(&installer, &node).await;
    let mut engine = engine();
    let mut renderer = PolicyRenderer::new();
    engine.upsert_policy(&web_ingress()).unwrap();
    engine.upsert_policy(&db_egress()).unwrap();
    let flows = install(&installer, &mut renderer, &mut engine).await;
    assert_eq!(
        sw.dump(),
        texts(&installer.cache().lock().unwrap().all_flows())
    );
    assert_eq!(
        flows.rules.len(),
        3,
        "{:?}",
        flows.rules.keys().collect::<Vec<_>>()
    );

    // Ingress to p1: from clients, TCP 80-81 and the named port http (8080).
    for (src, l4, expect) in [
        ("10.244.2.10", "tcp,tcp_dst=80", Some(10)),
        ("10.244.2.10", "tcp,tcp_dst=81", Some(10)),
        ("10.244.2.10", "tcp,tcp_dst=8080", Some(10)),
        ("10.244.2.10", "tcp,tcp_dst=82", None),
        ("10.244.2.10", "udp,udp_dst=80", None),
        ("10.244.2.11", "tcp,tcp_dst=80", Some(10)),
        // A podSelector peer is in the policy's Namespace only.
        ("10.244.2.12", "tcp,tcp_dst=80", None),
        ("10.244.2.13", "tcp,tcp_dst=80", None),
    ] {
        let flow = from_tunnel(src, "10.244.1.10", l4);
        assert_eq!(verdict(&sw, &flow, "trk,new"), expect, "{flow}");
    }
    // p3 is not ingress-isolated: anything reaches it.
    assert_eq!(
        verdict(
            &sw,
            &from_tunnel("10.244.2.12", "10.244.1.11", "tcp,tcp_dst=5"),
            "trk,new"
        ),
        Some(11)
    );
    // Established and related traffic passes whatever the rules say.
    assert_eq!(
        verdict(
            &sw,
            &from_tunnel("10.244.2.12", "10.244.1.10", "tcp,tcp_dst=82"),
            "trk,est"
        ),
        Some(10)
    );
    assert_eq!(
        verdict(
            &sw,
            &from_tunnel("10.244.2.12", "10.244.1.10", "icmp"),
            "trk,rel"
        ),
        Some(10)
    );
    // The Node's own traffic to its Pods (kubelet probes) passes.
    let probe = format!(
        "in_port=32769,tcp,tcp_dst=9999,dl_src={GW_MAC},dl_dst={GW_MAC},nw_src=10.244.1.1,nw_dst=10.244.1.10,nw_ttl=64"
    );
    assert_eq!(verdict(&sw, &probe, "trk,new"), Some(10));

    // Egress of p3: UDP 53 to n2's Pod CIDR except 10.244.2.11; replies pass; p1 is not
    // egress-isolated.
    let tun = Some(32768);
    for (port, mac, src, dst, l4, ct, expect) in [
        (
            11,
            P3_MAC,
            "10.244.1.11",
            "10.244.2.10",
            "udp,udp_dst=53",
            "trk,new",
            tun,
        ),
        (
            11,
            P3_MAC,
            "10.244.1.11",
            "10.244.2.11",
            "udp,udp_dst=53",
            "trk,new",
            None,
        ),
        (
            11,
            P3_MAC,
            "10.244.1.11",
            "10.244.2.10",
            "tcp,tcp_dst=53",
            "trk,new",
            None,
        ),
        (
            11,
            P3_MAC,
            "10.244.1.11",
            "10.244.1.10",
            "tcp,tcp_dst=80",
            "trk,new",
            None,
        ),
        (
            11,
            P3_MAC,
            "10.244.1.11",
            "10.244.1.10",
            "tcp,tcp_dst=80",
            "trk,est",
            Some(10),
        ),
        (
            10,
            P1_MAC,
            "10.244.1.10",
            "10.244.1.11",
            "tcp,tcp_dst=7",
            "trk,new",
            Some(11),
        ),
    ] {
        let flow = from_pod(port, mac, src, dst, l4);
        assert_eq!(verdict(&sw, &flow, ct), expect, "{flow} {ct}");
    }

    // Per-rule counters: the packets the rule allowed while their connection was not yet
    // established (UDP without a reply stays `+new`); the denied packet counts nowhere.
    let udp = |sport: u16, dst: &str| {
        format!(
            "udp,eth_src={P3_MAC},eth_dst={GW_MAC},nw_src=10.244.1.11,nw_dst={dst},nw_ttl=64,udp_src={sport},udp_dst=53"
        )
    };
    let len = sw.send_packet(11, &udp(1000, "10.244.2.10"));
    sw.send_packet(11, &udp(1000, "10.244.2.10"));
    sw.send_packet(11, &udp(1001, "10.244.2.10"));
    sw.send_packet(11, &udp(1002, "10.244.2.11"));
    let stats = sw
        .conn
        .dump_flows(&openflow::msg::flow_stats::FlowDescRequest::default())
        .await
        .unwrap();
    let counters = flows.counters(&stats);
    let db = counters
        .iter()
        .find(|(id, _)| &*id.policy.name == "db")
        .map(|(_, c)| *c)
        .unwrap();
    assert_eq!((db.packets, db.bytes), (3, 3 * len));
    let web: u64 = counters
        .iter()
        .filter(|(id, _)| &*id.policy.name == "web")
        .map(|(_, c)| c.packets)
        .sum();
    assert_eq!(web, 0);

    // r2 leaves the clients: only its flow changes, as a diff, and its packets are dropped.
    let before = installer
        .cache()
        .lock()
        .unwrap()
        .objects_of(&Owner::from(NETWORK_POLICY))
        .flows
        .len();
    engine
        .upsert_pod(&pod(
            "default",
            "r2",
            "n2",
            "10.244.2.11",
            json!({"app": "other"}),
            json!([]),
        ))
        .unwrap();
    let flows = renderer.render(engine.snapshot());
    let diff = installer
        .replace(Owner::from(NETWORK_POLICY), flows.flows)
        .await
        .unwrap()
        .flows;
    assert_eq!(
        (diff.adds.len(), diff.modifies.len(), diff.deletes.len()),
        (0, 0, 1),
        "{diff:?}"
    );
    assert_eq!(
        installer
            .cache()
            .lock()
            .unwrap()
            .objects_of(&Owner::from(NETWORK_POLICY))
            .flows
            .len(),
        before - 1
    );
    assert_eq!(
        verdict(
            &sw,
            &from_tunnel("10.244.2.11", "10.244.1.10", "tcp,tcp_dst=80"),
            "trk,new"
        ),
        None
    );
    assert_eq!(
        verdict(
            &sw,
            &from_tunnel("10.244.2.11", "10.244.1.10", "tcp,tcp_dst=80"),
            "trk,est"
        ),
        Some(10)
    );

    // Removing the policies opens everything again, and the switch holds only the pipeline.
    engine.remove_policy(&PolicyKey::new("default", "web"));
    engine.remove_policy(&PolicyKey::new("default", "db"));
    let flows = install(&installer, &mut renderer, &mut engine).await;
    assert!(flows.flows.is_empty());
    assert_eq!(
        verdict(
            &sw,
            &from_tunnel("10.244.2.12", "10.244.1.10", "udp,udp_dst=1"),
            "trk,new"
        ),
        Some(10)
    );
    assert_eq!(
        verdict(
            &sw,
            &from_pod(11, P3_MAC, "10.244.1.11", "10.244.2.11", "udp,udp_dst=53"),
            "trk,new"
        ),
        tun
    );
    assert_eq!(
        sw.dump(),
        texts(&installer.cache().lock().unwrap().all_flows())
    );
}
