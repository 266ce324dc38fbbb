//! The agent binary bringing real Nodes up: two Node namespaces on one LAN, each with its own
//! Open vSwitch (userspace datapath) and agent, checked with `ovs-vsctl`, `ovs-ofctl`, `ip` and
//! `ping`; a restart that changes nothing; a peer leaving; start-up failures.
#![cfg(target_os = "linux")]

mod support;

use support::{DbMonitor, Lan, TestNode, nodes_yaml, ping, wait_until};

const N1: (&str, &str, &str) = ("n1", "10.10.0.11", "10.244.1.0/24");
const N2: (&str, &str, &str) = ("n2", "10.10.0.12", "10.244.2.0/24");

#[test]
fn two_nodes_come_up_connect_restart_unchanged_and_forget_a_removed_peer() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let ns2 = lan.node_netns(2);
    let both = nodes_yaml(&[N1, N2]);
    let mut n1 = TestNode::new(
        "n1",
        &ns1,
        "trafficEncapMode: encap\ntunnelType: geneve\n",
        &both,
    );
    let mut n2 = TestNode::new(
        "n2",
        &ns2,
        "trafficEncapMode: encap\ntunnelType: geneve\n",
        &both,
    );
    let up1 = n1.start_and_wait_up();
    n2.start_and_wait_up();
    assert!(!up1.contains("unchanged"), "first start must write: {up1}");

    // The bridge: datapath id and LOCAL MAC from the NIC, secure, OpenFlow 1.0 + 1.5, round 1.
    assert_eq!(
        n1.vsctl(&["get", "Bridge", "br-int", "datapath_type"]),
        "netdev"
    );
    assert_eq!(
        n1.vsctl(&["get", "Bridge", "br-int", "fail_mode"]),
        "secure"
    );
    assert_eq!(
        n1.vsctl(&["get", "Bridge", "br-int", "protocols"]),
        "[OpenFlow10, OpenFlow15]"
    );
    assert_eq!(
        n1.vsctl(&["get", "Bridge", "br-int", "other_config:datapath-id"]),
        "\"000002000a0a000b\""
    );
    assert_eq!(
        n1.vsctl(&["get", "Bridge", "br-int", "datapath_id"]),
        "\"000002000a0a000b\""
    );
    assert_eq!(
        n1.vsctl(&["get", "Bridge", "br-int", "external_ids:roundNum"]),
        "\"1\""
    );
    let mut ports: Vec<String> = n1
        .vsctl(&["list-ports", "br-int"])
        .lines()
        .map(str::to_owned)
        .collect();
    ports.sort();
    assert_eq!(ports, ["antrea-gw0", "antrea-tun0", "eth0"]);
    for (port, ofport, kind) in [
        ("eth0", "32770", "uplink"),
        ("antrea-gw0", "32769", "gateway"),
        ("antrea-tun0", "32768", "tunnel"),
    ] {
        assert_eq!(
            n1.vsctl(&["get", "Interface", port, "ofport"]),
            ofport,
            "{port}"
        );
        assert_eq!(
            n1.vsctl(&["get", "Port", port, "external_ids:antrea-type"]),
            kind,
            "{port}"
        );
    }
    // The uplink is left out of flooding (set by an OpenFlow 1.0 port mod).
    let show = n1
        .ovs
        .ofctl(&["show", "{mgmt:br-int}"])
        .expect("ofctl show");
    let uplink_config = show
        .lines()
        .skip_while(|l| !l.contains("32770(eth0)"))
        .nth(1)
        .unwrap_or_default();
    assert!(uplink_config.contains("NO_FLOOD"), "{show}");
    assert_eq!(
        n1.vsctl(&["get", "Interface", "antrea-tun0", "type"]),
        "geneve"
    );
    assert_eq!(
        n1.vsctl(&["get", "Interface", "antrea-tun0", "options"]),
        "{key=flow, local_ip=\"10.10.0.11\", remote_ip=flow}"
    );
    assert_eq!(
        n1.vsctl(&["get", "Interface", "antrea-gw0", "mac"]),
        "\"02:00:0a:f4:01:01\""
    );
    assert_eq!(
        n1.vsctl(&["get", "Interface", "antrea-gw0", "mtu_request"]),
        "1450"
    );

    // The host: Node IP and MAC on LOCAL, none left on the NIC, gateway, route to the peer.
    assert_eq!(n1.addrs("br-int"), ["10.10.0.11/24"]);
    assert!(n1.addrs("eth0").is_empty());
    assert_eq!(
        n1.ip_json(&["link", "show", "br-int"])[0]["address"],
        "02:00:0a:0a:00:0b"
    );
    assert_eq!(n1.addrs("antrea-gw0"), ["10.244.1.1/24"]);
    assert_eq!(n1.ip_json(&["link", "show", "antrea-gw0"])[0]["mtu"], 1450);
    assert_eq!(
        n1.antrea_routes(),
        ["10.244.2.0/24 via 10.244.2.1 dev antrea-gw0 onlink"]
    );

    // The flows: host pass-through, the peer through the tunnel, all of round 1.
    let flows = n1.flows();
    assert!(flows.iter().all(|f| f.contains("cookie=0x1")), "{flows:#?}");
    assert!(
        flows
            .iter()
            .any(|f| f.contains("in_port=LOCAL actions=output:32770")),
        "{flows:#?}"
    );
    assert!(
        flows
            .iter()
            .any(|f| f.contains("nw_dst=10.244.2.0/24")
                && f.contains("set_field:10.10.0.12->tun_dst")),
        "{flows:#?}"
    );
    let n1_flows = flows.len();

    // Traffic: the Node through OVS to the LAN and to the peer Node, the host to the peer's
    // gateway through the Geneve tunnel (and the reply back through n2's tunnel).
    assert!(ping(&n1, "10.10.0.1"), "n1 -> LAN");
    assert!(ping(&n1, "10.10.0.12"), "n1 -> n2");
    assert!(
        ping(&n1, "10.244.2.1"),
        "n1 -> n2's gateway through the tunnel"
    );

    // Restart: no OVSDB write, no flow change, nothing on the host.
    let before = n1.flows();
    let monitor = DbMonitor::start(&n1.ovs, n1.dir.path());
    assert!(n1.stop_agent(), "agent stops cleanly on SIGTERM");
    assert!(
        ping(&n1, "10.244.2.1"),
        "the datapath stays while the agent is down"
    );
    let up = n1.start_and_wait_up();
    assert!(
        up.contains("unchanged (0 OVSDB writes, 0 flow mods, 0 host changes)"),
        "{up}\n{}",
        n1.log(2)
    );
    assert_eq!(
        monitor.changes(),
        Vec::<String>::new(),
        "OVSDB rows changed on restart"
    );
    assert_eq!(n1.flows(), before, "flows changed on restart");
    assert_eq!(n1.addrs("br-int"), ["10.10.0.11/24"]);
    // The oracle sees writes: a probe key shows up as a change.
    n1.vsctl(&["set", "Port", "antrea-gw0", "external_ids:probe=1"]);
    wait_until("the monitor to see the probe", || {
        !monitor.changes().is_empty()
    });
    n1.vsctl(&["remove", "Port", "antrea-gw0", "external_ids", "probe"]);
    drop(monitor);

    // n2 leaves the cluster: its route and flows go, nothing else changes.
    n1.write_nodes(&nodes_yaml(&[N1]));
    wait_until("n2's route to go", || n1.antrea_routes().is_empty());
    wait_until("n2's flows to go", || {
        !n1.flows().iter().any(|f| f.contains("10.244.2."))
    });
    let after: Vec<String> = n1.flows();
    let kept: Vec<&String> = before
        .iter()
        .filter(|f| !f.contains("10.244.2.") && !f.contains("tun_dst"))
        .collect();
    assert_eq!(
        after.iter().collect::<Vec<_>>(),
        kept,
        "only n2's flows were removed"
    );
    assert!(after.len() < n1_flows);
    assert!(ping(&n1, "10.10.0.1"), "the Node keeps its connectivity");
    assert!(
        n1.log(2).contains("peer n2: flows removed"),
        "{}",
        n1.log(2)
    );

    // n2 comes back: route and flows again.
    n1.write_nodes(&both);
    wait_until("n2's route to come back", || n1.antrea_routes().len() == 1);
    assert!(ping(&n1, "10.244.2.1"), "n1 -> n2's gateway again");
    assert!(n1.stop_agent());
    assert!(n2.stop_agent());
    if std::env::var_os("AGENT_TEST_LOGS").is_some() {
        println!("--- run 1\n{}\n--- run 2\n{}", n1.log(1), n1.log(2));
    }
}

#[test]
fn a_bad_configuration_key_is_one_clear_error() {
    let mut lan = Lan::new();
    let ns = lan.node_netns(1);
    let n1 = TestNode::new("n1", &ns, "trafficEncapMode: tunnel\n", &nodes_yaml(&[N1]));
    let (ok, stderr) = n1.run_agent_to_exit();
    assert!(!ok, "must fail");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("antrea-agent:"))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("trafficEncapMode: \"tunnel\" is not one of encap, noEncap, hybrid"),
        "{stderr}"
    );
    assert_eq!(n1.vsctl(&["list-br"]), "", "nothing created");
}

#[test]
fn a_missing_transport_interface_is_reported_and_leaves_the_host_alone() {
    let mut lan = Lan::new();
    let ns = lan.node_netns(1);
    let n1 = TestNode::new(
        "n1",
        &ns,
        "",
        &nodes_yaml(&[("n1", "10.99.0.1", "10.244.1.0/24")]),
    );
    let addrs_before = n1.ip_json(&["addr"]);
    let routes_before = n1.ip_json(&["route"]);
    let (ok, stderr) = n1.run_agent_to_exit();
    assert!(!ok, "must fail");
    assert!(
        stderr.contains("cannot find the interface holding Node IP 10.99.0.1"),
        "{stderr}"
    );
    assert!(
        stderr.contains("eth0 [10.10.0.11/24]"),
        "lists what exists: {stderr}"
    );
    assert_eq!(n1.ip_json(&["addr"]), addrs_before);
    assert_eq!(n1.ip_json(&["route"]), routes_before);
    assert_eq!(n1.vsctl(&["list-br"]), "", "no bridge created");
}

#[test]
fn flows_come_back_when_ovs_vswitchd_restarts() {
    let mut lan = Lan::new();
    let ns = lan.node_netns(1);
    let mut n1 = TestNode::new("n1", &ns, "", &nodes_yaml(&[N1, N2]));
    n1.start_and_wait_up();
    let before = n1.flows();
    n1.ovs.restart_vswitchd().expect("restart ovs-vswitchd");
    // The new ovs-vswitchd starts with no flows; the agent's on-connect hook replays them.
    wait_until("the flows to be replayed", || n1.flows() == before);
    assert!(
        ping(&n1, "10.10.0.1"),
        "the Node reaches the LAN through OVS again"
    );
    assert!(
        n1.log(1).contains("replaying the desired flows"),
        "{}",
        n1.log(1)
    );
    assert!(n1.stop_agent());
}

#[test]
fn a_failure_after_the_takeover_gives_the_nic_its_configuration_back() {
    let mut lan = Lan::new();
    let ns = lan.node_netns(1);
    let n1 = TestNode::new("n1", &ns, "", &nodes_yaml(&[N1, N2]));
    // A route of someone else to n2's Pod CIDR: the peer route cannot be added, the last step.
    n1.exec(&[
        "ip",
        "route",
        "add",
        "10.244.2.0/24",
        "via",
        "10.10.0.1",
        "dev",
        "eth0",
    ]);
    let addrs_before = n1.addrs("eth0");
    let routes_before = n1.ip_json(&["-4", "route", "show", "dev", "eth0"]);
    let (ok, stderr) = n1.run_agent_to_exit();
    assert!(!ok, "must fail");
    assert!(
        stderr.contains("the NIC's configuration was restored: yes"),
        "{stderr}"
    );
    assert!(
        stderr.contains("10.244.2.0/24"),
        "names the conflicting route: {stderr}"
    );
    assert_eq!(n1.addrs("eth0"), addrs_before);
    assert_eq!(
        n1.ip_json(&["-4", "route", "show", "dev", "eth0"]),
        routes_before
    );
    assert!(n1.addrs("br-int").is_empty());
    assert!(
        !n1.vsctl(&["list-ports", "br-int"])
            .lines()
            .any(|p| p == "eth0"),
        "the NIC left the bridge"
    );
    assert!(
        ping(&n1, "10.10.0.1"),
        "the Node reaches the LAN through its NIC again"
    );
}

#[test]
fn a_restart_after_changes_installs_a_new_round() {
    let mut lan = Lan::new();
    let ns = lan.node_netns(1);
    let mut n1 = TestNode::new("n1", &ns, "", &nodes_yaml(&[N1, N2]));
    n1.start_and_wait_up();
    assert!(n1.stop_agent());
    // n2 leaves while the agent is down.
    n1.write_nodes(&nodes_yaml(&[N1]));
    let up = n1.start_and_wait_up();
    assert!(!up.contains("unchanged"), "{up}");
    assert!(
        n1.log(2)
            .contains("flows: installed as round 2, leftovers of round 1 deleted"),
        "{}",
        n1.log(2)
    );
    assert_eq!(
        n1.vsctl(&["get", "Bridge", "br-int", "external_ids:roundNum"]),
        "\"2\""
    );
    let flows = n1.flows();
    assert!(
        flows.iter().all(|f| f.contains("cookie=0x2")),
        "only round 2 is left: {flows:#?}"
    );
    assert!(!flows.iter().any(|f| f.contains("10.244.2.")), "{flows:#?}");
    assert!(n1.antrea_routes().is_empty());
    assert!(ping(&n1, "10.10.0.1"));
    assert!(n1.stop_agent());
}
