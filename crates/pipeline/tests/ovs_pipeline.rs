//! The pipeline in a real `ovs-vswitchd`: installed through the installer, dumped back with
//! `ovs-ofctl` (must equal the cache), and traced with `ofproto/trace` for the Node's key paths.
#![cfg(target_os = "linux")]

mod support;

use model::{TrafficMode, TunnelType};
use openflow::conn::Encoded;
use pipeline::Round;
use pipeline::render::revalidation_nudge;
use support::switch::{Switch, install_all, texts};

const P1: &str =
    "in_port=10,ip,dl_src=02:00:0a:f4:01:0a,dl_dst=02:00:0a:f4:01:01,nw_src=10.244.1.10";
const GW_MAC: &str = "02:00:0a:f4:01:01";

/// The last pass through the bridge (after the last conntrack recirculation).
fn last_pass(trace: &str) -> &str {
    trace.rsplit("bridge(\"br0\")").next().unwrap_or(trace)
}

/// The `Final flow:` of the last pass.
fn final_flow(trace: &str) -> &str {
    last_pass(trace)
        .lines()
        .find_map(|l| l.strip_prefix("Final flow: "))
        .unwrap_or_else(|| panic!("no final flow in\n{trace}"))
}

/// Asserts the last pass contains every one of `needles`.
#[track_caller]
fn assert_pass(trace: &str, needles: &[&str]) {
    let pass = last_pass(trace);
    for n in needles {
        assert!(
            pass.contains(n),
            "{n:?} missing in the last pass of\n{trace}"
        );
    }
}

#[track_caller]
fn assert_final(trace: &str, fields: &[&str]) {
    let flow = final_flow(trace);
    for f in fields {
        assert!(
            flow.split(',').any(|x| x == *f),
            "{f:?} missing in final flow {flow}\nof\n{trace}"
        );
    }
}

#[track_caller]
fn assert_dropped(trace: &str) {
    assert!(
        trace.trim_end().ends_with("Datapath actions: drop"),
        "not dropped:\n{trace}"
    );
}

#[tokio::test]
async fn geneve_pipeline_installs_and_forwards() {
    let sw = Switch::start(Some("geneve")).await;
    let node = support::node(TrafficMode::Encap(TunnelType::Geneve));
    let installer = sw.installer(Round::FIRST);
    install_all(&installer, &node).await;
    let cached = installer.cache().lock().unwrap().all_flows();
    assert_eq!(cached.len(), support::all_flows(node.mode).len());
    assert_eq!(sw.dump(), texts(&cached));

    // Local Pod -> local Pod: routed (MACs rewritten, TTL decremented), out of p3's port.
    let t = sw.trace(&format!("{P1},nw_dst=10.244.1.11,nw_ttl=64"), &["trk,new"]);
    assert_pass(&t, &["-> output port is 11", "ct(commit,zone=65520)"]);
    assert_final(
        &t,
        &[
            &format!("dl_src={GW_MAC}"),
            "dl_dst=02:00:0a:f4:01:0b",
            "nw_ttl=63",
        ],
    );

    // Local Pod -> remote Pod: into the tunnel, towards n2.
    let t = sw.trace(&format!("{P1},nw_dst=10.244.2.10,nw_ttl=64"), &["trk,new"]);
    assert_pass(&t, &["-> output port is 32768"]);
    assert_final(
        &t,
        &[
            "tun_dst=10.10.0.12",
            "dl_dst=aa:bb:cc:dd:ee:ff",
            "nw_ttl=63",
        ],
    );

    // Spoofed source IP, spoofed source MAC: dropped by the spoof guard.
    let t = sw.trace("in_port=10,ip,dl_src=02:00:0a:f4:01:0a,dl_dst=02:00:0a:f4:01:01,nw_src=10.244.1.99,nw_dst=10.244.1.11", &[]);
    assert_dropped(&t);
    let t = sw.trace("in_port=10,ip,dl_src=02:00:0a:f4:01:99,dl_dst=02:00:0a:f4:01:01,nw_src=10.244.1.10,nw_dst=10.244.1.11", &[]);
    assert_dropped(&t);
    // ARP claiming another Pod's IP is dropped too.
    let t = sw.trace("in_port=10,arp,dl_src=02:00:0a:f4:01:0a,arp_op=1,arp_spa=10.244.1.11,arp_sha=02:00:0a:f4:01:0a,arp_tpa=10.244.1.1", &[]);
    assert_dropped(&t);

    // Pod -> external, Pod -> own Node IP, Pod -> peer Node IP: to the gateway (the host routes
    // and masquerades).
    for dst in ["8.8.8.8", "10.10.0.11", "10.10.0.12"] {
        let t = sw.trace(&format!("{P1},nw_dst={dst},nw_ttl=64"), &["trk,new"]);
        assert_pass(&t, &["-> output port is 32769"]);
        assert_final(&t, &[&format!("dl_dst={GW_MAC}")]);
    }

    // Host -> local Pod through the gateway: the host routed it already, no second TTL
    // decrement.
    let t = sw.trace(
        &format!("in_port=32769,ip,dl_src={GW_MAC},dl_dst={GW_MAC},nw_src=10.244.1.1,nw_dst=10.244.1.10,nw_ttl=64"),
        &["trk,new"],
    );
    assert_pass(&t, &["-> output port is 10"]);
    assert_final(&t, &["dl_dst=02:00:0a:f4:01:0a", "nw_ttl=64"]);

    // Remote Pod -> local Pod, decapsulated from the tunnel.
    let t = sw.trace(
        "in_port=32768,tun_src=10.10.0.12,tun_dst=10.10.0.11,ip,dl_src=02:00:0a:f4:02:01,dl_dst=aa:bb:cc:dd:ee:ff,nw_src=10.244.2.10,nw_dst=10.244.1.10,nw_ttl=63",
        &["trk,new"],
    );
    assert_pass(&t, &["-> output port is 10"]);
    assert_final(
        &t,
        &[
            &format!("dl_src={GW_MAC}"),
            "dl_dst=02:00:0a:f4:01:0a",
            "nw_ttl=62",
        ],
    );

    // Replies to the host's connections to remote Pods (source = the gateway IP) come back
    // through the tunnel and go to the gateway.
    let t = sw.trace(
        "in_port=32768,tun_src=10.10.0.12,tun_dst=10.10.0.11,ip,dl_src=02:00:0a:f4:02:01,dl_dst=aa:bb:cc:dd:ee:ff,nw_src=10.244.2.10,nw_dst=10.244.1.1",
        &["trk,est"],
    );
    assert_pass(&t, &["-> output port is 32769"]);

    // Invalid connections are dropped.
    let t = sw.trace(&format!("{P1},nw_dst=10.244.1.11"), &["trk,inv"]);
    assert_dropped(&t);

    // Uplink -> Node IP goes to the host; other addresses do not.
    let t = sw.trace(
        "in_port=32770,ip,dl_dst=02:00:0a:0a:00:0b,nw_src=10.10.0.12,nw_dst=10.10.0.11",
        &[],
    );
    assert_pass(&t, &["    LOCAL\n"]);
    let t = sw.trace(
        "in_port=32770,ip,dl_dst=02:00:0a:0a:00:0b,nw_src=10.10.0.12,nw_dst=10.244.1.10",
        &[],
    );
    assert_dropped(&t);
    // ARP both ways between the uplink and the host.
    let t = sw.trace(
        "in_port=32770,arp,arp_op=1,arp_spa=10.10.0.12,arp_tpa=10.10.0.11",
        &[],
    );
    assert_pass(&t, &["    LOCAL\n"]);
    let t = sw.trace(
        "in_port=LOCAL,arp,arp_op=1,arp_spa=10.10.0.11,arp_tpa=10.10.0.12",
        &[],
    );
    assert_pass(&t, &["output:32770"]);
    // Host -> uplink.
    let t = sw.trace("in_port=LOCAL,ip,nw_src=10.10.0.11,nw_dst=10.10.0.100", &[]);
    assert_pass(&t, &["output:32770"]);

    // The host's ARP for n2's gateway (its route to n2's Pods) is answered with the virtual MAC.
    let t = sw.trace(
        &format!("in_port=32769,arp,dl_src={GW_MAC},dl_dst=ff:ff:ff:ff:ff:ff,arp_op=1,arp_spa=10.244.1.1,arp_tpa=10.244.2.1,arp_sha={GW_MAC}"),
        &[],
    );
    assert_pass(&t, &["IN_PORT"]);
    assert_final(
        &t,
        &[
            "dl_src=aa:bb:cc:dd:ee:ff",
            &format!("dl_dst={GW_MAC}"),
            "arp_op=2",
            "arp_spa=10.244.2.1",
            "arp_tpa=10.244.1.1",
            "arp_sha=aa:bb:cc:dd:ee:ff",
            &format!("arp_tha={GW_MAC}"),
        ],
    );
    // ARP between Pods and for the local gateway is delivered by target IP.
    let t = sw.trace("in_port=10,arp,dl_src=02:00:0a:f4:01:0a,arp_op=1,arp_spa=10.244.1.10,arp_sha=02:00:0a:f4:01:0a,arp_tpa=10.244.1.1", &[]);
    assert_pass(&t, &["output:32769"]);
    let t = sw.trace("in_port=10,arp,dl_src=02:00:0a:f4:01:0a,arp_op=1,arp_spa=10.244.1.10,arp_sha=02:00:0a:f4:01:0a,arp_tpa=10.244.1.11", &[]);
    assert_pass(&t, &["output:11"]);
}

#[tokio::test]
async fn no_encap_pipeline_forwards_over_the_uplink() {
    let sw = Switch::start(None).await;
    let node = support::node(TrafficMode::NoEncap);
    let installer = sw.installer(Round::FIRST);
    install_all(&installer, &node).await;
    assert_eq!(
        sw.dump(),
        texts(&installer.cache().lock().unwrap().all_flows())
    );

    // Local Pod -> remote Pod: out of the uplink, from this Node's MAC to n2's.
    let t = sw.trace(&format!("{P1},nw_dst=10.244.2.10,nw_ttl=64"), &["trk,new"]);
    assert_pass(&t, &["-> output port is 32770"]);
    assert_final(
        &t,
        &[
            "dl_src=02:00:0a:0a:00:0b",
            "dl_dst=02:00:0a:0a:00:0c",
            "nw_ttl=63",
        ],
    );
    assert!(!final_flow(&t).contains("tun_dst=10.10.0.12"), "{t}");

    // Remote Pod -> local Pod, received on the uplink.
    let t = sw.trace(
        "in_port=32770,ip,dl_src=02:00:0a:0a:00:0c,dl_dst=02:00:0a:0a:00:0b,nw_src=10.244.2.10,nw_dst=10.244.1.10,nw_ttl=63",
        &["trk,new"],
    );
    assert_pass(&t, &["-> output port is 10"]);
    assert_final(
        &t,
        &[&format!("dl_src={GW_MAC}"), "dl_dst=02:00:0a:f4:01:0a"],
    );

    // A local Pod's reply to n2's host leaves directly; a new connection to n2's Node IP goes
    // through the gateway (and the host's masquerade).
    let t = sw.trace(
        &format!("{P1},nw_dst=10.10.0.12,nw_ttl=64"),
        &["trk,est,rpl"],
    );
    assert_pass(&t, &["-> output port is 32770"]);
    assert_final(&t, &["dl_dst=02:00:0a:0a:00:0c"]);
    let t = sw.trace(&format!("{P1},nw_dst=10.10.0.12"), &["trk,new"]);
    assert_pass(&t, &["-> output port is 32769"]);

    // No ARP responder and no tunnel in noEncap.
    let t = sw.trace(
        &format!("in_port=32769,arp,dl_src={GW_MAC},arp_op=1,arp_spa=10.244.1.1,arp_tpa=10.244.2.1,arp_sha={GW_MAC}"),
        &[],
    );
    assert_dropped(&t);
}

/// The revalidation nudge (`pipeline::render::revalidation_nudge`) modifies the Classifier's
/// miss flow into itself: the switch takes it, every flow is still the cache's, and the miss
/// flow keeps its cookie and its counters.
#[tokio::test]
async fn the_revalidation_nudge_leaves_every_flow_as_it_was() {
    let sw = Switch::start(None).await;
    let node = support::node(TrafficMode::NoEncap);
    let installer = sw.installer(Round::FIRST);
    install_all(&installer, &node).await;
    // From a port no flow classifies: dropped by the Classifier's miss flow.
    sw.send_packet(
        12,
        "udp,eth_src=02:00:00:00:00:0c,eth_dst=02:00:00:00:00:01,nw_src=192.0.2.12,nw_dst=192.0.2.1,nw_ttl=64,udp_src=1,udp_dst=2",
    );
    let classifier_miss = || {
        let dump = sw
            .ovs
            .ofctl(&["-O", "OpenFlow15", "dump-flows", "{mgmt:br0}", "table=0"])
            .expect("dump-flows");
        let line = dump
            .lines()
            .find(|l| l.contains(" priority=0 actions=drop"))
            .unwrap_or_else(|| panic!("no miss flow in table 0:\n{dump}"))
            .to_owned();
        line.split(", ")
            .filter(|field| !field.starts_with("duration=") && !field.starts_with("idle_age="))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let before = classifier_miss();
    assert!(before.contains("n_packets=1,"), "{before}");
    assert!(!before.contains("cookie=0x0,"), "{before}");

    sw.conn
        .batch(&[Encoded::new(&revalidation_nudge()).unwrap()])
        .await
        .expect("the switch takes the nudge");
    assert_eq!(classifier_miss(), before);
    assert_eq!(
        sw.dump(),
        texts(&installer.cache().lock().unwrap().all_flows())
    );
}
