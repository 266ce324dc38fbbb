//! Truth tables in a real `ovs-vswitchd`: the lab cluster of the `truthtable` crate (Namespaces
//! x, y, z with Pods a, b, c; x and y run on this Node n1, z on n2 behind the tunnel), its
//! scenarios applied in order (policies created, updated and deleted, Pod and Namespace labels
//! changed), and for each the reachability of every Pod pair this Node decides on, over TCP and
//! UDP ports 80 and 81, traced with `ofproto/trace` through the whole pipeline and compared with
//! what the scenario says n1 decides, by `truthtable::judge` with no re-probe (a trace is
//! deterministic): a mismatch prints both matrices and the differing cells, and a trace that
//! fails or neither outputs nor drops is a probe that could not run, never a drop.
#![cfg(target_os = "linux")]

mod support;

use model::{LocalPod, PodKey, TrafficMode, TunnelType};
use ovstest::Ovs;
use pipeline::Round;
use pipeline::cache::Owner;
use pipeline::layout::NodePorts;
use pipeline::owners::{NETWORK_POLICY, NODE, PEER, POD};
use pipeline::render::{PolicyRenderer, node_flows, peer_flows, pod_flows};
use support::PodOnPort;
use support::scenarios::ScenarioRun;
use support::switch::Switch;
use truthtable::model::{index, ip, node, pods};
use truthtable::{Observation, Pod, Port, Protocol, judge, scenarios};

const GW_MAC: &str = "02:00:0a:f4:01:01";

fn local(p: Pod) -> bool {
    node(p) == "n1"
}

fn mac(p: Pod) -> String {
    format!("02:00:0a:f4:01:{:02x}", 10 + index(p))
}

fn ofport(p: Pod) -> u32 {
    10 + index(p) as u32
}

/// The packet from `s` to `d` as it enters this Node, in `ofproto/trace` syntax.
fn packet(s: Pod, d: Pod, port: Port) -> String {
    let l4 = match port.protocol {
        Protocol::Tcp => format!("tcp,tcp_dst={}", port.number),
        Protocol::Udp => format!("udp,udp_dst={}", port.number),
    };
    let head = if local(s) {
        format!("in_port={},dl_src={},dl_dst={GW_MAC}", ofport(s), mac(s))
    } else {
        "in_port=32768,tun_src=10.10.0.12,tun_dst=10.10.0.11,dl_src=02:00:0a:f4:02:01,dl_dst=aa:bb:cc:dd:ee:ff".to_string()
    };
    format!("{head},{l4},nw_src={},nw_dst={},nw_ttl=64", ip(s), ip(d))
}

/// What `ofproto/trace` shows for the packet from `s` to `d`: out on the destination's port
/// (its Pod port, or the tunnel), dropped, or neither (the trace could not decide).
fn trace(ovs: &Ovs, s: Pod, d: Pod, port: Port) -> Observation {
    let flow = packet(s, d, port);
    let trace = match ovs.appctl(&["ofproto/trace", "br0", &flow, "--ct-next", "trk,new"]) {
        Ok(trace) => trace,
        Err(e) => return Observation::CouldNotRun(format!("trace {flow}: {e}")),
    };
    let expected_port = if local(d) {
        ofport(d)
    } else {
        NodePorts::TUNNEL
    };
    let last = trace.rsplit("bridge(\"br0\")").next().unwrap_or(&trace);
    let out = last.contains(&format!("-> output port is {expected_port}"));
    let dropped = trace.trim_end().ends_with("Datapath actions: drop");
    match (out, dropped) {
        (true, false) => Observation::Connected,
        (false, true) => Observation::Blocked("datapath actions: drop".into()),
        _ => Observation::CouldNotRun(format!("neither clearly output nor dropped:\n{trace}")),
    }
}

#[tokio::test]
async fn truth_tables() {
    let local_pods: Vec<PodOnPort> = pods()
        .into_iter()
        .filter(|p| local(*p))
        .map(|p| PodOnPort {
            pod: LocalPod {
                key: PodKey::new(p.0, p.1),
                ip: ip(p),
                mac: mac(p).parse().unwrap(),
            },
            ofport: ofport(p),
        })
        .collect();
    let sw = Switch::with_pods(Some("geneve"), Default::default(), &local_pods).await;
    let installer = sw.installer(Round::FIRST);
    let node = support::node(TrafficMode::Encap(TunnelType::Geneve));
    installer
        .replace(Owner::from(NODE), node_flows(&node))
        .await
        .unwrap();
    for pod in &local_pods {
        installer
            .replace(Owner::new(POD, &pod.key), pod_flows(&node, pod, pod.ofport))
            .await
            .unwrap();
    }
    installer
        .replace(Owner::new(PEER, "n2"), peer_flows(&node, &support::peer()))
        .await
        .unwrap();

    let mut run = ScenarioRun::new();
    let mut renderer = PolicyRenderer::new();
    let mut failures = Vec::new();
    let scenarios = scenarios();
    assert!(scenarios.len() >= 25);
    for scenario in scenarios {
        let flows = renderer.render(run.apply(&scenario));
        installer
            .replace(Owner::from(NETWORK_POLICY), flows.flows)
            .await
            .unwrap();
        // Only pairs this Node decides on: z to z never crosses it.
        let expected = scenario.expected_at("n1");
        let verdict = judge(&expected, 0, |cells| {
            cells
                .iter()
                .map(|&(s, d, port)| ((s, d, port), trace(&sw.ovs, s, d, port)))
                .collect()
        });
        assert_eq!(verdict.probes, (9 * 9 - 3 * 3) * 4, "every pair but z to z");
        if let Err(diff) = verdict.result() {
            failures.push(format!("{}\n{diff}", scenario.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} scenarios mismatch:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
