//! Pods through the real `antrea` CNI plugin into running agents: two Nodes, a Pod on each,
//! ADD returns only once the Pod can reach its gateway and the other Node's Pod; repeat ADD,
//! CHECK, an agent restart that keeps the Pod and changes nothing, DEL (twice), and the
//! start-up removal of a Pod whose address was released while the agent was down.
#![cfg(target_os = "linux")]

mod support;

use serde_json::Value;
use support::{Lan, TestNode, nodes_yaml, ping_all_answered, pods_yaml, succeeds, wait_until};

const N1: (&str, &str, &str) = ("n1", "10.10.0.11", "10.244.1.0/24");
const N2: (&str, &str, &str) = ("n2", "10.10.0.12", "10.244.2.0/24");

/// Three pings from the Pod, every one answered (after the readiness wait of
/// [`ping_all_answered`]).
fn pod_ping(pod_netns: &str, target: &str) -> bool {
    ping_all_answered(pod_netns, target, 3)
}

fn up(node: &mut TestNode) {
    node.start_and_wait_up();
    let socket = node.cni_socket();
    wait_until("the CNI socket", || socket.exists());
}

#[test]
fn pods_on_two_nodes_reach_their_gateway_and_each_other() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let ns2 = lan.node_netns(2);
    let p1 = lan.pod_netns("p1");
    let p2 = lan.pod_netns("p2");
    let both = nodes_yaml(&[N1, N2]);
    let mut n1 = TestNode::new("n1", &ns1, "trafficEncapMode: encap\n", &both);
    let mut n2 = TestNode::new("n2", &ns2, "trafficEncapMode: encap\n", &both);
    // The Pods exist in the cluster before their sandboxes, as in Kubernetes; a restarted agent
    // keeps only the Pods of its Node.
    let pods = pods_yaml(&[("p1", "n1"), ("p2", "n2")]);
    n1.write_pods(&pods);
    n2.write_pods(&pods);
    up(&mut n1);
    up(&mut n2);
    let mode = std::fs::metadata(n1.cni_socket())
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777)
        .unwrap();
    assert_eq!(mode, 0o600, "CNI socket mode");

    // ADD: the result, and the Pod reaches its gateway at once (flows are in before ADD returns).
    let (ok, result) = n1.cni("ADD", "c-p1", "p1", &p1, &n1.netconf(None));
    assert!(ok, "ADD failed: {result}");
    assert_eq!(result["cniVersion"], "1.0.0");
    assert_eq!(result["ips"][0]["address"], "10.244.1.2/24");
    assert_eq!(result["ips"][0]["gateway"], "10.244.1.1");
    assert_eq!(result["ips"][0]["interface"], 1);
    let host_if = result["interfaces"][0]["name"].as_str().unwrap().to_owned();
    assert_eq!(host_if, hostnet::naming::endpoint_name("p1", "c-p1"));
    assert_eq!(
        result["interfaces"][1]["sandbox"],
        format!("/var/run/netns/{p1}")
    );
    assert!(
        result["routes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["dst"] == "0.0.0.0/0" && r["gw"] == "10.244.1.1"),
        "{result}"
    );
    assert!(
        pod_ping(&p1, "10.244.1.1"),
        "Pod -> its gateway right after ADD"
    );

    // The OVS port as Antrea writes it.
    assert_eq!(
        n1.vsctl(&["get", "Port", &host_if, "external_ids:antrea-type"]),
        "container"
    );
    assert_eq!(
        n1.vsctl(&["get", "Port", &host_if, "external_ids:container-id"]),
        "c-p1"
    );
    assert_eq!(
        n1.vsctl(&["get", "Port", &host_if, "external_ids:pod-name"]),
        "p1"
    );
    assert_eq!(
        n1.vsctl(&["get", "Port", &host_if, "external_ids:ip-address"]),
        "\"10.244.1.2\""
    );
    let mac = result["interfaces"][1]["mac"].as_str().unwrap();
    assert_eq!(
        n1.vsctl(&["get", "Port", &host_if, "external_ids:attached-mac"]),
        format!("\"{mac}\"")
    );
    assert!(
        n1.ipam_dir().join("antrea/10.244.1.2").exists(),
        "host-local layout"
    );

    // Repeat ADD: same result, nothing new.
    let flows_before = n1.flows();
    let (ok, again) = n1.cni("ADD", "c-p1", "p1", &p1, &n1.netconf(None));
    assert!(ok && again == result, "repeat ADD: {again}");
    assert_eq!(n1.flows(), flows_before);

    // CHECK against the ADD result.
    let (ok, out) = n1.cni("CHECK", "c-p1", "p1", &p1, &n1.netconf(Some(&result)));
    assert!(ok, "CHECK failed: {out}");

    // A Pod on n2; Pod to Pod across Nodes through the Geneve tunnel, and Pod to the peer Node.
    let (ok, r2) = n2.cni("ADD", "c-p2", "p2", &p2, &n2.netconf(None));
    assert!(ok, "ADD on n2 failed: {r2}");
    assert_eq!(r2["ips"][0]["address"], "10.244.2.2/24");
    assert!(pod_ping(&p1, "10.244.2.2"), "p1 -> p2 across Nodes");
    assert!(pod_ping(&p2, "10.244.1.2"), "p2 -> p1 across Nodes");
    assert!(pod_ping(&p1, "10.10.0.12"), "p1 -> n2 (SNAT through n1)");
    // The LAN host has no route to Pod CIDRs: only the masquerade on n1 makes this work.
    assert!(pod_ping(&p1, "10.10.0.1"), "p1 -> LAN host through SNAT");

    // Restart n1's agent: the Pod is kept, nothing changes, the Pod keeps working.
    let flows_before = n1.flows();
    assert!(n1.stop_agent());
    up(&mut n1);
    assert!(
        n1.log(2)
            .contains("unchanged (0 OVSDB writes, 0 flow mods, 0 host changes)"),
        "{}",
        n1.log(2)
    );
    assert!(
        n1.log(2).contains("Pods on the bridge: 1 kept, 0 removed"),
        "{}",
        n1.log(2)
    );
    assert_eq!(n1.flows(), flows_before);
    assert!(pod_ping(&p1, "10.244.2.2"), "p1 -> p2 after the restart");

    // DEL: port, interface, flows and address gone; a second DEL succeeds too.
    let (ok, out) = n1.cni("DEL", "c-p1", "p1", &p1, &n1.netconf(None));
    assert!(ok, "DEL failed: {out}");
    assert!(!n1.vsctl(&["list-ports", "br-int"]).contains(&host_if));
    assert!(
        !succeeds(&["ip", "-n", &ns1, "link", "show", &host_if]),
        "host end deleted"
    );
    assert!(
        !n1.flows().iter().any(|f| f.contains("10.244.1.2")),
        "Pod flows removed"
    );
    assert!(
        !n1.ipam_dir().join("antrea/10.244.1.2").exists(),
        "address released"
    );
    let (ok, out) = n1.cni("DEL", "c-p1", "p1", &p1, &n1.netconf(None));
    assert!(ok, "second DEL failed: {out}");

    // p2's address is released while n2's agent is down: on start, its port goes.
    assert!(n2.stop_agent());
    std::fs::remove_file(n2.ipam_dir().join("antrea/10.244.2.2")).unwrap();
    up(&mut n2);
    assert!(
        n2.log(2).contains("Pods on the bridge: 0 kept, 1 removed"),
        "{}",
        n2.log(2)
    );
    let p2_if = r2["interfaces"][0]["name"].as_str().unwrap();
    assert!(!n2.vsctl(&["list-ports", "br-int"]).contains(p2_if));
    assert!(
        !n2.flows().iter().any(|f| f.contains("10.244.2.2")),
        "stale Pod flows removed"
    );
    assert!(n1.stop_agent());
    assert!(n2.stop_agent());
}

#[test]
fn a_failed_add_leaves_nothing_behind() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let mut n1 = TestNode::new("n1", &ns1, "", &nodes_yaml(&[N1]));
    up(&mut n1);
    // The Pod namespace does not exist: the interface cannot be made; the address is released.
    let (ok, out) = n1.cni("ADD", "c-x", "px", "agt-no-such-netns", &n1.netconf(None));
    assert!(!ok);
    assert_eq!(out["code"], 102, "{out}");
    let leftovers: Vec<Value> = std::fs::read_dir(n1.ipam_dir().join("antrea"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("10."))
                .map(|e| Value::from(e.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "addresses left: {leftovers:?}");
    assert!(
        !n1.vsctl(&["list-ports", "br-int"]).contains("px-"),
        "no port left"
    );
    // A wrong plugin type is refused with Antrea's code and message.
    let mut conf = n1.netconf(None);
    conf["type"] = "bridge".into();
    let (ok, out) = n1.cni("ADD", "c-y", "py", "agt-no-such-netns", &conf);
    assert!(!ok);
    assert_eq!(out["code"], 2, "{out}");
    assert_eq!(
        out["msg"],
        "Network configuration does not support type=bridge"
    );
    assert!(n1.stop_agent());
}

#[test]
fn no_encap_pods_talk_directly_over_the_underlay() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let ns2 = lan.node_netns(2);
    let p1 = lan.pod_netns("p1");
    let p2 = lan.pod_netns("p2");
    let both = nodes_yaml(&[N1, N2]);
    let mut n1 = TestNode::new("n1", &ns1, "trafficEncapMode: noEncap\n", &both);
    let mut n2 = TestNode::new("n2", &ns2, "trafficEncapMode: noEncap\n", &both);
    up(&mut n1);
    up(&mut n2);
    assert!(
        !n1.vsctl(&["list-ports", "br-int"]).contains("antrea-tun0"),
        "no tunnel in noEncap"
    );
    assert_eq!(
        n1.antrea_routes(),
        ["10.244.2.0/24 via 10.10.0.12 dev br-int"]
    );
    assert_eq!(
        n1.vsctl(&["get", "Interface", "antrea-gw0", "mtu_request"]),
        "1500",
        "no tunnel overhead"
    );
    let (ok, r1) = n1.cni("ADD", "c-p1", "p1", &p1, &n1.netconf(None));
    assert!(ok, "{r1}");
    let (ok, r2) = n2.cni("ADD", "c-p2", "p2", &p2, &n2.netconf(None));
    assert!(ok, "{r2}");
    assert!(pod_ping(&p1, "10.244.2.2"), "p1 -> p2 over the underlay");
    assert!(pod_ping(&p2, "10.244.1.2"), "p2 -> p1 over the underlay");
    assert!(
        n1.flows().iter().any(|f| f.contains("nw_dst=10.244.2.0/24")
            && f.contains("set_field:02:00:0a:0a:00:0c->eth_dst")),
        "direct flow to n2's MAC"
    );
    assert!(n1.stop_agent());
    assert!(n2.stop_agent());
}

#[test]
fn check_detects_a_wrong_interface_gc_removes_unused_pods_status_answers() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let pa = lan.pod_netns("pa");
    let pb = lan.pod_netns("pb");
    let mut n1 = TestNode::new("n1", &ns1, "", &nodes_yaml(&[N1]));
    up(&mut n1);
    let (ok, ra) = n1.cni("ADD", "c-a", "pa", &pa, &n1.netconf(None));
    assert!(ok, "{ra}");
    let (ok, rb) = n1.cni("ADD", "c-b", "pb", &pb, &n1.netconf(None));
    assert!(ok, "{rb}");
    // CHECK notices an interface that is not what ADD returned.
    let mut wrong = ra.clone();
    wrong["interfaces"][1]["mac"] = "02:00:00:00:00:01".into();
    let (ok, out) = n1.cni("CHECK", "c-a", "pa", &pa, &n1.netconf(Some(&wrong)));
    assert!(!ok);
    assert_eq!(out["code"], 103, "{out}");
    let mut conf = n1.netconf(None);
    conf["cniVersion"] = "1.1.0".into();
    let (ok, out) = n1.cni("STATUS", "", "", &pa, &conf);
    assert!(ok, "STATUS: {out}");
    conf["cni.dev/valid-attachments"] =
        serde_json::json!([{"containerID": "c-b", "ifname": "eth0"}]);
    let (ok, out) = n1.cni("GC", "", "", &pa, &conf);
    assert!(ok, "GC: {out}");
    let ports = n1.vsctl(&["list-ports", "br-int"]);
    assert!(
        !ports.contains(ra["interfaces"][0]["name"].as_str().unwrap()),
        "pa's port removed: {ports}"
    );
    assert!(
        ports.contains(rb["interfaces"][0]["name"].as_str().unwrap()),
        "pb's port kept: {ports}"
    );
    assert!(
        !n1.ipam_dir().join("antrea/10.244.1.2").exists(),
        "pa's address released"
    );
    assert!(
        n1.ipam_dir().join("antrea/10.244.1.3").exists(),
        "pb's address kept"
    );
    assert!(
        !n1.flows().iter().any(|f| f.contains("10.244.1.2")),
        "pa's flows removed"
    );
    assert!(pod_ping(&pb, "10.244.1.1"), "pb still works");
    assert!(n1.stop_agent());
}

#[test]
fn hybrid_pods_in_one_subnet_go_direct_with_a_vxlan_port_ready() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let ns2 = lan.node_netns(2);
    let p1 = lan.pod_netns("p1");
    let p2 = lan.pod_netns("p2");
    let both = nodes_yaml(&[N1, N2]);
    let conf = "trafficEncapMode: hybrid\ntunnelType: vxlan\ntunnelPort: 8472\n";
    let mut n1 = TestNode::new("n1", &ns1, conf, &both);
    let mut n2 = TestNode::new("n2", &ns2, conf, &both);
    up(&mut n1);
    up(&mut n2);
    assert_eq!(
        n1.vsctl(&["get", "Interface", "antrea-tun0", "type"]),
        "vxlan"
    );
    assert_eq!(
        n1.vsctl(&["get", "Interface", "antrea-tun0", "options:dst_port"]),
        "\"8472\""
    );
    assert_eq!(
        n1.antrea_routes(),
        ["10.244.2.0/24 via 10.10.0.12 dev br-int"],
        "same subnet: direct"
    );
    let (ok, r1) = n1.cni("ADD", "c-p1", "p1", &p1, &n1.netconf(None));
    assert!(ok, "{r1}");
    let (ok, r2) = n2.cni("ADD", "c-p2", "p2", &p2, &n2.netconf(None));
    assert!(ok, "{r2}");
    assert!(pod_ping(&p1, "10.244.2.2"), "p1 -> p2");
    assert!(pod_ping(&p2, "10.244.1.2"), "p2 -> p1");
    assert!(n1.stop_agent());
    assert!(n2.stop_agent());
}

#[test]
fn concurrent_adds_each_get_their_pod_and_a_repeated_add_waits_its_turn() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let pods: Vec<String> = (0..4).map(|i| lan.pod_netns(&format!("q{i}"))).collect();
    let mut n1 = TestNode::new("n1", &ns1, "", &nodes_yaml(&[N1]));
    up(&mut n1);
    let conf = n1.netconf(None);
    let results: Vec<(bool, Value)> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (i, ns) in pods.iter().enumerate() {
            let (n1, conf) = (&n1, &conf);
            handles.push(
                s.spawn(move || n1.cni("ADD", &format!("c-q{i}"), &format!("q{i}"), ns, conf)),
            );
        }
        // The same container as the first, at the same time: serialized, same answer.
        let (n1, conf, ns) = (&n1, &conf, &pods[0]);
        handles.push(s.spawn(move || n1.cni("ADD", "c-q0", "q0", ns, conf)));
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (ok, r) in &results {
        assert!(ok, "{r}");
    }
    assert_eq!(
        results[0].1, results[4].1,
        "repeated ADD gives the same result"
    );
    let mut ips: Vec<&str> = results[..4]
        .iter()
        .map(|(_, r)| r["ips"][0]["address"].as_str().unwrap())
        .collect();
    ips.sort();
    ips.dedup();
    assert_eq!(ips.len(), 4, "distinct addresses: {ips:?}");
    for ns in &pods {
        assert!(pod_ping(ns, "10.244.1.1"), "{ns} -> gateway");
    }
    assert!(
        pod_ping(
            &pods[0],
            results[3].1["ips"][0]["address"]
                .as_str()
                .unwrap()
                .trim_end_matches("/24")
        ),
        "Pod to Pod on one Node"
    );
    assert!(n1.stop_agent());
}

/// A runtime's late DEL of a sandbox that failed (containerd sends one after the agent was
/// down during `RunPodSandbox`) names the same Pod as the sandbox that replaced it, but another
/// container: it must leave the new sandbox's port and flows alone, and the Pod keeps its
/// network.
#[test]
fn a_del_of_another_container_of_the_pod_leaves_its_running_sandbox_alone() {
    let mut lan = Lan::new();
    let ns1 = lan.node_netns(1);
    let pod = lan.pod_netns("pr");
    let mut n1 = TestNode::new("n1", &ns1, "", &nodes_yaml(&[N1]));
    up(&mut n1);
    let (ok, result) = n1.cni("ADD", "c-new", "pr", &pod, &n1.netconf(None));
    assert!(ok, "ADD failed: {result}");
    let ip = result["ips"][0]["address"]
        .as_str()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let with_ip = |flows: Vec<String>| -> Vec<String> {
        flows.into_iter().filter(|f| f.contains(&ip)).collect()
    };
    let before = with_ip(n1.flows());
    assert!(!before.is_empty(), "the Pod has flows");
    assert!(pod_ping(&pod, "10.244.1.1"), "Pod -> gateway after ADD");

    let (ok, out) = n1.cni("DEL", "c-failed", "pr", &pod, &n1.netconf(None));
    assert!(ok, "DEL failed: {out}");
    assert_eq!(
        with_ip(n1.flows()),
        before,
        "the Pod's flows after the other DEL"
    );
    let port = hostnet::naming::endpoint_name("pr", "c-new");
    assert!(
        n1.vsctl(&["list-ports", "br-int"]).contains(&port),
        "the new sandbox's port"
    );
    assert!(
        pod_ping(&pod, "10.244.1.1"),
        "Pod -> gateway after the other DEL"
    );

    // Its own DEL still removes it all.
    let (ok, out) = n1.cni("DEL", "c-new", "pr", &pod, &n1.netconf(None));
    assert!(ok, "DEL failed: {out}");
    assert!(
        with_ip(n1.flows()).is_empty(),
        "flows left: {:?}",
        n1.flows()
    );
    assert!(!n1.vsctl(&["list-ports", "br-int"]).contains(&port));
    assert!(n1.stop_agent());
}
