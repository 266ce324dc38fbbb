//! The Linux backend against real network namespaces made by each test: a Node namespace
//! with a veth "NIC" into an underlay namespace, a tap standing in for OVS's LOCAL port, Pod
//! namespaces. `ip -j`, `nft -j`, `ethtool -k` and `ping` are the oracles. Needs root.
#![cfg(target_os = "linux")]

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use hostnet::linux::{LinuxHost, Netns, ROUTE_PROTOCOL, SERVICE_ROUTE_PROTOCOL};
use hostnet::naming::endpoint_name;
use hostnet::{
    Error, GatewayConfig, HostNetwork, NodePortRules, Outcome, PeerRoute, PodInterfaceSpec,
    PodSnat, ServiceRoutes, TransportSelector,
};
use ipnet::Ipv4Net;
use model::{MacAddr, Protocol};
use ovstest::{Daemons, Ovs};
use serde_json::Value;

static NEXT: AtomicU32 = AtomicU32::new(0);

const NIC_MAC: &str = "02:00:0a:0a:00:0b";

fn run(args: &[&str]) -> String {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .expect("spawn");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn succeeds(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .output()
        .expect("spawn")
        .status
        .success()
}

/// `ping -c<count>` from namespace `ns` to `target` with a deadline (`-w 10`: replies are
/// waited for, so a late one on a loaded machine is not counted lost): its summary line
/// ("N packets transmitted, M received, …"). Panics when ping printed none, so a ping that
/// could not run (namespace or command missing) never passes for an unanswered one.
fn ping_summary(ns: &str, target: &str, count: u32) -> String {
    let count = format!("-c{count}");
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "ping", &count, "-i0.2", "-w10", target])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find(|l| l.contains("packets transmitted"))
        .map(str::to_owned)
        .unwrap_or_else(|| {
            panic!(
                "ping {target} from {ns} did not run: {}{stdout}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

/// The (transmitted, received) counts of [`ping_summary`]'s line.
fn ping_counts(ns: &str, target: &str, count: u32) -> (u64, u64) {
    let summary = ping_summary(ns, target, count);
    let mut numbers = summary
        .split(',')
        .map(|part| part.split_whitespace().next().and_then(|n| n.parse().ok()));
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(sent), Some(received)) => (sent, received),
        _ => panic!("ping summary {summary:?}"),
    }
}

fn cidr(s: &str) -> Ipv4Net {
    s.parse().unwrap()
}

fn ip(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

/// Namespaces of one test, deleted on drop (also when the test panics).
struct Namespaces(Vec<String>);

/// Deletes namespaces left behind by test processes that were killed (named `hn<pid>-…`).
fn sweep_dead_test_namespaces() {
    let Ok(entries) = std::fs::read_dir("/var/run/netns") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("hn").and_then(|r| r.split('-').next()) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = Command::new("ip").args(["netns", "del", &name]).status();
        }
    }
}

impl Namespaces {
    fn add(&mut self, role: &str) -> String {
        if self.0.is_empty() {
            sweep_dead_test_namespaces();
        }
        let name = format!(
            "hn{}-{}-{role}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        run(&["ip", "netns", "add", &name]);
        run(&["ip", "-n", &name, "link", "set", "lo", "up"]);
        self.0.push(name.clone());
        name
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

/// A Node: `eth0` (MAC NIC_MAC, 10.10.0.11/24, default route via 10.10.0.1 and
/// 192.168.50.0/24 via 10.10.0.254 metric 7) wired to `u0` (10.10.0.1/24) in an underlay
/// namespace, and a tap `br-int` standing in for OVS's LOCAL port.
struct Node {
    namespaces: Namespaces,
    node: String,
    underlay: String,
}

impl Node {
    fn new() -> Node {
        let node = Node::without_bridge();
        run(&[
            "ip", "-n", &node.node, "tuntap", "add", "br-int", "mode", "tap",
        ]);
        node
    }

    /// The Node without the `br-int` tap (for a real OVS to create it).
    fn without_bridge() -> Node {
        let mut namespaces = Namespaces(Vec::new());
        let node = namespaces.add("node");
        let underlay = namespaces.add("ul");
        run(&[
            "ip", "-n", &underlay, "link", "add", "u0", "type", "veth", "peer", "name", "eth0",
            "netns", &node,
        ]);
        run(&[
            "ip",
            "-n",
            &underlay,
            "addr",
            "add",
            "10.10.0.1/24",
            "dev",
            "u0",
        ]);
        run(&["ip", "-n", &underlay, "link", "set", "u0", "up"]);
        run(&[
            "ip", "-n", &node, "link", "set", "eth0", "address", NIC_MAC, "up",
        ]);
        run(&[
            "ip",
            "-n",
            &node,
            "addr",
            "add",
            "10.10.0.11/24",
            "dev",
            "eth0",
        ]);
        run(&[
            "ip",
            "-n",
            &node,
            "route",
            "add",
            "default",
            "via",
            "10.10.0.1",
        ]);
        run(&[
            "ip",
            "-n",
            &node,
            "route",
            "add",
            "192.168.50.0/24",
            "via",
            "10.10.0.254",
            "dev",
            "eth0",
            "metric",
            "7",
        ]);
        Node {
            namespaces,
            node,
            underlay,
        }
    }

    async fn host(&self) -> LinuxHost {
        LinuxHost::new(Netns::open(&Path::new("/var/run/netns").join(&self.node)).unwrap())
            .await
            .unwrap()
    }

    fn ip_json(&self, args: &[&str]) -> Value {
        let mut full = vec!["ip", "-j", "-n", &self.node];
        full.extend_from_slice(args);
        serde_json::from_str(&run(&full)).unwrap()
    }

    fn link(&self, dev: &str) -> Value {
        self.ip_json(&["link", "show", "dev", dev])[0].clone()
    }

    /// `local/prefixlen` of the IPv4 addresses of `dev`.
    fn addrs(&self, dev: &str) -> Vec<String> {
        let v = self.ip_json(&["-4", "addr", "show", "dev", dev]);
        v[0]["addr_info"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|i| format!("{}/{}", i["local"].as_str().unwrap(), i["prefixlen"]))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The IPv4 routes of `dev` (all tables but local), without the `dev` and volatile fields.
    fn routes(&self, dev: &str) -> Vec<Value> {
        let v = self.ip_json(&["-4", "route", "show", "table", "all", "dev", dev]);
        let mut routes: Vec<Value> = v
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["table"] != "local")
            .map(|r| {
                let mut r = r.clone();
                let o = r.as_object_mut().unwrap();
                o.remove("dev");
                o.remove("flags");
                r
            })
            .collect();
        routes.sort_by_key(|r| r.to_string());
        routes
    }

    fn exec(&self, args: &[&str]) -> String {
        let mut full = vec!["ip", "netns", "exec", &self.node];
        full.extend_from_slice(args);
        run(&full)
    }

    fn nft_ruleset(&self) -> Value {
        serde_json::from_str(&self.exec(&["nft", "-j", "list", "ruleset"])).unwrap()
    }
}

fn tx_checksum_off(ns: &str, dev: &str) -> bool {
    run(&["ip", "netns", "exec", ns, "ethtool", "-k", dev])
        .lines()
        .any(|l| l.trim() == "tx-checksumming: off")
}

#[tokio::test]
async fn takeover_moves_config_to_bridge_is_idempotent_and_restore_puts_it_back() {
    let n = Node::new();
    let before_routes = n.routes("eth0");
    assert_eq!(
        before_routes.len(),
        3,
        "connected + default + extra: {before_routes:?}"
    );
    let host = n.host().await;

    let nic = host
        .find_transport_interface(&TransportSelector::NodeIp(ip("10.10.0.11")))
        .await
        .unwrap();
    assert_eq!(nic.name, "eth0");
    assert_eq!(nic.mac, NIC_MAC.parse::<MacAddr>().unwrap());
    assert_eq!(nic.addresses, vec![cidr("10.10.0.11/24")]);
    assert_eq!(nic.default_gateway(), Some(ip("10.10.0.1")));
    assert_eq!(
        nic.routes.len(),
        2,
        "connected route left out: {:?}",
        nic.routes
    );

    let (uplink, outcome) = host.take_over_uplink(&nic, "br-int").await.unwrap();
    assert_eq!(outcome, Outcome::Changed);
    assert_eq!(uplink.nic, "eth0");
    assert_eq!(uplink.bridge.name, "br-int");
    assert_eq!(uplink.bridge.addresses, nic.addresses);
    assert_eq!(uplink.bridge.routes, nic.routes);

    // Oracle: the NIC is up without addresses; br-int has its MAC, MTU, address and routes.
    assert!(n.addrs("eth0").is_empty());
    assert!(
        n.link("eth0")["flags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("UP"))
    );
    assert_eq!(n.link("eth0")["ifalias"], "antrea-uplink-of:br-int");
    let bridge = n.link("br-int");
    assert_eq!(bridge["address"], NIC_MAC);
    assert_eq!(bridge["mtu"], n.link("eth0")["mtu"]);
    assert!(
        bridge["flags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("UP"))
    );
    assert_eq!(n.addrs("br-int"), vec!["10.10.0.11/24"]);
    assert_eq!(
        n.routes("br-int"),
        before_routes,
        "same routes, now through br-int"
    );
    assert!(n.routes("eth0").is_empty());
    assert!(tx_checksum_off(&n.node, "br-int"));

    // Second takeover, from a fresh lookup (finds br-int) and from the stale NIC snapshot:
    // no writes at all.
    let writes = host.writes();
    let again = host
        .find_transport_interface(&TransportSelector::NodeIp(ip("10.10.0.11")))
        .await
        .unwrap();
    assert_eq!(again.name, "br-int");
    let (uplink2, outcome) = host.take_over_uplink(&again, "br-int").await.unwrap();
    assert_eq!((outcome, &uplink2), (Outcome::Unchanged, &uplink));
    let (_, outcome) = host.take_over_uplink(&nic, "br-int").await.unwrap();
    assert_eq!(outcome, Outcome::Unchanged);
    assert_eq!(
        host.writes(),
        writes,
        "an idempotent takeover must not write"
    );
    // Selecting the NIC by name after the takeover finds the configuration on br-int.
    let by_name = host
        .find_transport_interface(&TransportSelector::InterfaceName("eth0".into()))
        .await
        .unwrap();
    assert_eq!(by_name.name, "br-int");

    // After a restart the uplink is recovered from the OS alone.
    drop(host);
    let host = n.host().await;
    assert_eq!(
        host.find_uplink("br-int").await.unwrap(),
        Some(uplink.clone())
    );

    let restored = host
        .restore_uplink("br-int")
        .await
        .unwrap()
        .expect("an uplink was taken over");
    assert_eq!(restored.addresses, nic.addresses);
    assert_eq!(restored.routes, nic.routes);
    assert_eq!(n.addrs("eth0"), vec!["10.10.0.11/24"]);
    assert_eq!(
        n.routes("eth0"),
        before_routes,
        "exactly the routes from before"
    );
    assert!(n.addrs("br-int").is_empty());
    assert!(n.routes("br-int").is_empty());
    assert!(n.link("eth0").get("ifalias").is_none(), "marker removed");
    assert_eq!(
        ping_counts(&n.node, "10.10.0.1", 1),
        (1, 1),
        "NIC works again"
    );
    assert_eq!(host.restore_uplink("br-int").await.unwrap(), None);
    assert_eq!(host.find_uplink("br-int").await.unwrap(), None);
}

#[tokio::test]
async fn failed_takeover_rolls_back() {
    let n = Node::new();
    let before_routes = n.routes("eth0");
    let host = n.host().await;
    let mut nic = host
        .find_transport_interface(&TransportSelector::InterfaceName("eth0".into()))
        .await
        .unwrap();
    nic.mtu = 10; // below the minimum: setting it on br-int fails after the marker was written
    let err = host.take_over_uplink(&nic, "br-int").await.unwrap_err();
    assert!(matches!(err, Error::TakeoverFailed { .. }), "{err}");
    assert!(err.to_string().contains("put back"), "{err}");
    assert_eq!(n.addrs("eth0"), vec!["10.10.0.11/24"]);
    assert_eq!(n.routes("eth0"), before_routes);
    assert!(n.link("eth0").get("ifalias").is_none());
    assert!(n.addrs("br-int").is_empty());

    let err = host.take_over_uplink(&nic, "no-such-br").await.unwrap_err();
    assert!(matches!(err, Error::InterfaceNotFound { .. }), "{err}");
}

#[tokio::test]
async fn transport_interface_not_found_lists_what_exists_and_changes_nothing() {
    let n = Node::new();
    let host = n.host().await;
    for (selector, searched) in [
        (TransportSelector::NodeIp(ip("10.99.0.1")), "10.99.0.1"),
        (TransportSelector::InterfaceName("ens9".into()), "\"ens9\""),
        (
            TransportSelector::Cidrs(vec![cidr("172.16.0.0/12")]),
            "172.16.0.0/12",
        ),
    ] {
        let err = host.find_transport_interface(&selector).await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::TransportInterfaceNotFound { .. }));
        assert!(text.contains(searched), "{text}");
        assert!(
            text.contains("eth0 [10.10.0.11/24]")
                && text.contains("lo [127.0.0.1/8]")
                && text.contains("br-int []"),
            "{text}"
        );
    }
    let by_cidr = host
        .find_transport_interface(&TransportSelector::Cidrs(vec![cidr("10.10.0.0/16")]))
        .await
        .unwrap();
    assert_eq!(by_cidr.name, "eth0");
    assert_eq!(host.writes(), 0);
    assert_eq!(n.addrs("eth0"), vec!["10.10.0.11/24"]);
}

#[tokio::test]
async fn gateway_configuration_is_applied_once() {
    let n = Node::new();
    run(&[
        "ip",
        "-n",
        &n.node,
        "tuntap",
        "add",
        "antrea-gw0",
        "mode",
        "tap",
    ]);
    run(&[
        "ip",
        "-n",
        &n.node,
        "addr",
        "add",
        "10.99.9.9/24",
        "dev",
        "antrea-gw0",
    ]);
    let host = n.host().await;
    let gw = GatewayConfig {
        name: "antrea-gw0".into(),
        address: cidr("10.244.1.1/24"),
        mac: Some("02:00:0a:f4:01:01".parse().unwrap()),
        mtu: 1450,
    };
    let (mac, outcome) = host.configure_gateway(&gw).await.unwrap();
    assert_eq!((mac, outcome), (gw.mac.unwrap(), Outcome::Changed));
    assert_eq!(
        n.addrs("antrea-gw0"),
        vec!["10.244.1.1/24"],
        "stale address removed"
    );
    let link = n.link("antrea-gw0");
    assert_eq!(link["address"], "02:00:0a:f4:01:01");
    assert_eq!(link["mtu"], 1450);
    assert!(
        link["flags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("UP"))
    );
    assert!(tx_checksum_off(&n.node, "antrea-gw0"));

    let writes = host.writes();
    assert_eq!(
        host.configure_gateway(&gw).await.unwrap(),
        (mac, Outcome::Unchanged)
    );
    assert_eq!(host.writes(), writes);

    let missing = GatewayConfig {
        name: "antrea-gw9".into(),
        ..gw
    };
    assert!(matches!(
        host.configure_gateway(&missing).await.unwrap_err(),
        Error::InterfaceNotFound { .. }
    ));
}

#[tokio::test]
async fn a_peer_route_through_a_gateway_that_is_down_brings_it_up() {
    // Open vSwitch's userspace datapath re-opens antrea-gw0 while it reconfigures after a port
    // change; a route added in that moment meets a device that is down (ENETDOWN).
    let n = Node::new();
    run(&[
        "ip",
        "-n",
        &n.node,
        "tuntap",
        "add",
        "antrea-gw0",
        "mode",
        "tap",
    ]);
    run(&[
        "ip",
        "-n",
        &n.node,
        "addr",
        "add",
        "10.244.1.1/24",
        "dev",
        "antrea-gw0",
    ]);
    let host = n.host().await;
    let encap = PeerRoute {
        destination: cidr("10.244.2.0/24"),
        gateway: ip("10.244.2.1"),
        interface: "antrea-gw0".into(),
        onlink: true,
    };
    let changes = host.reconcile_peer_routes(&[encap]).await.unwrap();
    assert_eq!(changes.added, vec![cidr("10.244.2.0/24")]);
    let link = n.ip_json(&["link", "show", "antrea-gw0"]);
    assert!(
        link[0]["flags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("UP")),
        "{link}"
    );
    let route = n.ip_json(&["-4", "route", "show", "10.244.2.0/24"]);
    assert_eq!(route[0]["dev"], "antrea-gw0", "{route}");
}

#[tokio::test]
async fn peer_routes_reconcile_touches_only_our_routes() {
    let n = Node::new();
    run(&[
        "ip",
        "-n",
        &n.node,
        "tuntap",
        "add",
        "antrea-gw0",
        "mode",
        "tap",
    ]);
    run(&[
        "ip",
        "-n",
        &n.node,
        "addr",
        "add",
        "10.244.1.1/24",
        "dev",
        "antrea-gw0",
    ]);
    run(&["ip", "-n", &n.node, "link", "set", "antrea-gw0", "up"]);
    run(&[
        "ip",
        "-n",
        &n.node,
        "route",
        "add",
        "10.244.9.0/24",
        "via",
        "10.10.0.99",
        "dev",
        "eth0",
    ]);
    let host = n.host().await;
    let proto = ROUTE_PROTOCOL.to_string();
    let ours = || {
        let mut r: Vec<String> = n
            .ip_json(&["-4", "route", "show", "proto", &proto])
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{} via {} dev {}",
                    r["dst"].as_str().unwrap(),
                    r["gateway"].as_str().unwrap(),
                    r["dev"].as_str().unwrap()
                )
            })
            .collect();
        r.sort();
        r
    };
    let encap = PeerRoute {
        destination: cidr("10.244.2.0/24"),
        gateway: ip("10.244.2.1"),
        interface: "antrea-gw0".into(),
        onlink: true,
    };
    let no_encap = PeerRoute {
        destination: cidr("10.244.3.0/24"),
        gateway: ip("10.10.0.13"),
        interface: "eth0".into(),
        onlink: false,
    };

    let changes = host
        .reconcile_peer_routes(&[encap.clone(), no_encap.clone()])
        .await
        .unwrap();
    assert_eq!(
        changes.added,
        vec![cidr("10.244.2.0/24"), cidr("10.244.3.0/24")]
    );
    assert_eq!(
        ours(),
        vec![
            "10.244.2.0/24 via 10.244.2.1 dev antrea-gw0",
            "10.244.3.0/24 via 10.10.0.13 dev eth0"
        ]
    );
    let onlink = n.ip_json(&["-4", "route", "show", "10.244.2.0/24"]);
    assert!(
        onlink[0]["flags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("onlink")),
        "{onlink}"
    );

    let writes = host.writes();
    assert!(
        host.reconcile_peer_routes(&[no_encap.clone(), encap.clone()])
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(host.writes(), writes);

    let moved = PeerRoute {
        destination: cidr("10.244.2.0/24"),
        gateway: ip("10.10.0.12"),
        interface: "eth0".into(),
        onlink: false,
    };
    let changes = host.reconcile_peer_routes(&[moved]).await.unwrap();
    assert_eq!(
        (
            changes.added.len(),
            changes.replaced.clone(),
            changes.deleted.clone()
        ),
        (0, vec![cidr("10.244.2.0/24")], vec![cidr("10.244.3.0/24")])
    );
    assert_eq!(ours(), vec!["10.244.2.0/24 via 10.10.0.12 dev eth0"]);

    let foreign = PeerRoute {
        destination: cidr("10.244.9.0/24"),
        gateway: ip("10.10.0.14"),
        interface: "eth0".into(),
        onlink: false,
    };
    let err = host.reconcile_peer_routes(&[foreign]).await.unwrap_err();
    assert!(matches!(err, Error::RouteConflict { .. }), "{err}");

    let changes = host.reconcile_peer_routes(&[]).await.unwrap();
    assert_eq!(changes.deleted, vec![cidr("10.244.2.0/24")]);
    assert!(ours().is_empty());
    let others = n.ip_json(&["-4", "route", "show", "10.244.9.0/24"]);
    assert_eq!(
        others[0]["gateway"], "10.10.0.99",
        "a route we do not own stays"
    );
    assert_eq!(
        n.routes("eth0").len(),
        4,
        "default, extra, connected and the foreign route remain"
    );
}

/// The Node's routes with protocol `proto`, as `dst [via gw] dev d [scope s] [onlink]`.
fn routes_with_protocol(n: &Node, proto: u8) -> Vec<String> {
    let mut r: Vec<String> = n
        .ip_json(&["-4", "route", "show", "proto", &proto.to_string()])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let mut text = r["dst"].as_str().unwrap().to_owned();
            if let Some(gw) = r["gateway"].as_str() {
                text += &format!(" via {gw}");
            }
            text += &format!(" dev {}", r["dev"].as_str().unwrap());
            if let Some(scope) = r["scope"].as_str() {
                text += &format!(" scope {scope}");
            }
            if r["flags"]
                .as_array()
                .is_some_and(|f| f.contains(&Value::from("onlink")))
            {
                text += " onlink";
            }
            text
        })
        .collect();
    r.sort();
    r
}

/// `169.254.0.253`'s neighbour entries, as `dev lladdr STATE`.
fn virtual_ip_neighbours(n: &Node) -> Vec<String> {
    n.ip_json(&["-4", "neigh", "show", "to", "169.254.0.253"])
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                e["dev"].as_str().unwrap(),
                e["lladdr"].as_str().unwrap_or("-"),
                e["state"][0].as_str().unwrap_or("-")
            )
        })
        .collect()
}

#[tokio::test]
async fn service_routes_send_the_nodes_service_traffic_to_the_gateway_and_leave_peer_routes_alone()
{
    let n = Node::new();
    for args in [
        &["tuntap", "add", "antrea-gw0", "mode", "tap"][..],
        &["addr", "add", "10.244.1.1/24", "dev", "antrea-gw0"],
        &["link", "set", "antrea-gw0", "up"],
        &[
            "route",
            "add",
            "10.97.0.0/16",
            "via",
            "10.10.0.99",
            "dev",
            "eth0",
        ],
    ] {
        let mut full = vec!["ip", "-n", &n.node];
        full.extend_from_slice(args);
        run(&full);
    }
    let host = n.host().await;
    let peer = PeerRoute {
        destination: cidr("10.244.2.0/24"),
        gateway: ip("10.244.2.1"),
        interface: "antrea-gw0".into(),
        onlink: true,
    };
    host.reconcile_peer_routes(std::slice::from_ref(&peer))
        .await
        .unwrap();
    let cluster = ServiceRoutes {
        interface: "antrea-gw0".into(),
        destinations: vec![cidr("10.96.0.0/12")],
    };

    let changes = host.reconcile_service_routes(&cluster).await.unwrap();
    assert_eq!(
        (
            changes.added.clone(),
            changes.replaced.len(),
            changes.deleted.len()
        ),
        (vec![cidr("10.96.0.0/12")], 0, 0)
    );
    assert_eq!(
        routes_with_protocol(&n, SERVICE_ROUTE_PROTOCOL),
        [
            "10.96.0.0/12 via 169.254.0.253 dev antrea-gw0 onlink",
            "169.254.0.253 dev antrea-gw0 scope link"
        ]
    );
    assert_eq!(
        virtual_ip_neighbours(&n),
        ["antrea-gw0 aa:bb:cc:dd:ee:ff PERMANENT"]
    );
    // The kernel now sends the Node's own Service traffic through the gateway, from its address.
    let chosen = n.ip_json(&["-4", "route", "get", "10.96.0.10"]);
    assert_eq!(
        (
            &chosen[0]["dev"],
            &chosen[0]["gateway"],
            &chosen[0]["prefsrc"]
        ),
        (
            &Value::from("antrea-gw0"),
            &Value::from("169.254.0.253"),
            &Value::from("10.244.1.1")
        ),
        "{chosen}"
    );

    // The virtual source leaving through another interface is masqueraded.
    let masquerade = n.exec(&["nft", "list", "table", "ip", "antrea-virtual-ip"]);
    assert!(
        masquerade.contains("ip saddr 169.254.0.253 oifname != \"antrea-gw0\"")
            && masquerade.contains("masquerade"),
        "{masquerade}"
    );

    let writes = host.writes();
    assert!(
        host.reconcile_service_routes(&cluster)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(host.writes(), writes, "a repeat writes nothing");

    // Peer routes and Service routes are reconciled apart: neither removes the other's.
    assert!(host.reconcile_peer_routes(&[]).await.unwrap().deleted == [peer.destination]);
    assert_eq!(routes_with_protocol(&n, SERVICE_ROUTE_PROTOCOL).len(), 2);
    host.reconcile_peer_routes(std::slice::from_ref(&peer))
        .await
        .unwrap();

    // A changed entry for the virtual IP is put back.
    n.exec(&[
        "ip",
        "neigh",
        "replace",
        "169.254.0.253",
        "lladdr",
        "02:00:00:00:00:01",
        "dev",
        "antrea-gw0",
        "nud",
        "permanent",
    ]);
    let wider = ServiceRoutes {
        interface: "antrea-gw0".into(),
        destinations: vec![
            cidr("10.96.0.0/16"),
            cidr("192.0.2.10/32"),
            cidr("10.96.0.9/16"),
        ],
    };
    let changes = host.reconcile_service_routes(&wider).await.unwrap();
    assert_eq!(
        (changes.added, changes.replaced, changes.deleted),
        (
            vec![cidr("10.96.0.0/16"), cidr("192.0.2.10/32")],
            vec![],
            vec![cidr("10.96.0.0/12")]
        )
    );
    assert_eq!(
        virtual_ip_neighbours(&n),
        ["antrea-gw0 aa:bb:cc:dd:ee:ff PERMANENT"]
    );

    // Someone else's route to a destination is a conflict, and the virtual IP itself cannot be
    // a destination; neither changes anything.
    let before = routes_with_protocol(&n, SERVICE_ROUTE_PROTOCOL);
    let taken = ServiceRoutes {
        destinations: vec![cidr("10.97.0.0/16")],
        ..wider.clone()
    };
    let error = host.reconcile_service_routes(&taken).await.unwrap_err();
    assert!(matches!(error, Error::RouteConflict { .. }), "{error}");
    let holding = ServiceRoutes {
        destinations: vec![cidr("169.254.0.0/16")],
        ..wider.clone()
    };
    let error = host.reconcile_service_routes(&holding).await.unwrap_err();
    assert!(matches!(error, Error::Invalid { .. }), "{error}");
    let missing = ServiceRoutes {
        interface: "antrea-gw9".into(),
        ..wider.clone()
    };
    let error = host.reconcile_service_routes(&missing).await.unwrap_err();
    assert!(matches!(error, Error::InterfaceNotFound { .. }), "{error}");
    host.reconcile_service_routes(&wider).await.unwrap();
    assert_eq!(routes_with_protocol(&n, SERVICE_ROUTE_PROTOCOL).len(), 3);
    assert!(
        before
            .iter()
            .all(|r| routes_with_protocol(&n, SERVICE_ROUTE_PROTOCOL).contains(r))
    );

    // None wanted: every Service route and the neighbour entry go; the rest stays.
    let none = ServiceRoutes {
        interface: "antrea-gw0".into(),
        destinations: vec![],
    };
    let changes = host.reconcile_service_routes(&none).await.unwrap();
    assert_eq!(
        changes.deleted,
        [cidr("10.96.0.0/16"), cidr("192.0.2.10/32")]
    );
    assert!(routes_with_protocol(&n, SERVICE_ROUTE_PROTOCOL).is_empty());
    assert!(virtual_ip_neighbours(&n).is_empty());
    assert!(
        !n.exec(&["nft", "list", "tables"])
            .contains("antrea-virtual-ip")
    );
    assert_eq!(
        routes_with_protocol(&n, ROUTE_PROTOCOL),
        ["10.244.2.0/24 via 10.244.2.1 dev antrea-gw0 onlink"]
    );
    assert_eq!(
        n.ip_json(&["-4", "route", "show", "10.97.0.0/16"])[0]["gateway"],
        "10.10.0.99"
    );
}

/// A TCP listener in namespace `ns` on port `port` that answers each connection with the peer
/// address it saw, until the test ends.
async fn answer_peer_addresses(ns: &str, port: u16) {
    let netns = Netns::open(&Path::new("/var/run/netns").join(ns)).unwrap();
    let listener = netns
        .run(move || {
            std::net::TcpListener::bind(("0.0.0.0", port))
                .map_err(|e| Error::os(format!("bind {port}"), e))
        })
        .await
        .unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            use std::io::Write;
            let peer = stream.peer_addr().map(|p| p.ip().to_string());
            let _ = stream.write_all(peer.unwrap_or_default().as_bytes());
        }
    });
}

/// What a TCP connection from namespace `ns` to `target` reads: the answerer's text, or the
/// connect error (`connection refused` from a Node port nobody serves).
async fn tcp_answer(ns: &str, target: &str) -> Result<String, String> {
    let netns = Netns::open(&Path::new("/var/run/netns").join(ns)).unwrap();
    let target: std::net::SocketAddr = target.parse().unwrap();
    netns
        .run(move || {
            use std::io::Read;
            let answer =
                std::net::TcpStream::connect_timeout(&target, std::time::Duration::from_secs(2))
                    .and_then(|mut stream| {
                        stream.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
                        let mut text = String::new();
                        stream.read_to_string(&mut text).map(|_| text)
                    });
            Ok(answer.map_err(|e| e.to_string()))
        })
        .await
        .unwrap()
}

fn node_port_rules(ports: &[(Protocol, u16)], addresses: &[&str]) -> NodePortRules {
    NodePortRules {
        ports: ports.iter().copied().collect(),
        addresses: addresses.iter().map(|a| cidr(a)).collect(),
    }
}

#[tokio::test]
async fn node_ports_reach_the_datapath_from_outside_and_from_the_node_with_the_client_kept() {
    let mut n = Node::new();
    // The datapath's stand-in: a namespace behind `antrea-gw0` that owns the virtual NodePort
    // IP and the virtual MAC the Service routes' neighbour entry gives it.
    let dp = n.namespaces.add("dp");
    run(&[
        "ip",
        "-n",
        &n.node,
        "link",
        "add",
        "antrea-gw0",
        "type",
        "veth",
        "peer",
        "name",
        "dp0",
        "netns",
        &dp,
    ]);
    for args in [
        &["addr", "add", "10.244.1.1/24", "dev", "antrea-gw0"][..],
        &["link", "set", "antrea-gw0", "up"],
    ] {
        let mut full = vec!["ip", "-n", &n.node];
        full.extend_from_slice(args);
        run(&full);
    }
    for args in [
        &["link", "set", "dp0", "address", "aa:bb:cc:dd:ee:ff", "up"][..],
        &["addr", "add", "10.244.1.2/24", "dev", "dp0"],
        &["addr", "add", "169.254.0.252/32", "dev", "dp0"],
        &["route", "add", "default", "via", "10.244.1.1"],
    ] {
        let mut full = vec!["ip", "-n", &dp];
        full.extend_from_slice(args);
        run(&full);
    }
    answer_peer_addresses(&dp, 30080).await;
    let host = n.host().await;
    n.exec(&["sysctl", "-qw", "net.ipv4.ip_forward=0"]);
    host.reconcile_service_routes(&ServiceRoutes {
        interface: "antrea-gw0".into(),
        destinations: vec![cidr("169.254.0.252/32")],
    })
    .await
    .unwrap();
    assert_eq!(
        n.exec(&["cat", "/proc/sys/net/ipv4/ip_forward"]).trim(),
        "1",
        "the Service routes switch forwarding on"
    );
    assert!(
        tcp_answer(&n.underlay, "10.10.0.11:30080").await.is_err(),
        "nothing serves the NodePort before the rules"
    );

    let rules = node_port_rules(&[(Protocol::Tcp, 30080), (Protocol::Udp, 30053)], &[]);
    assert_eq!(
        host.reconcile_node_ports(&rules).await.unwrap(),
        Outcome::Changed
    );
    // From outside: DNATed to 169.254.0.252, forwarded through the gateway, the client's own
    // address kept; the answer comes back un-DNATed (or the client would not take it).
    assert_eq!(
        tcp_answer(&n.underlay, "10.10.0.11:30080").await,
        Ok("10.10.0.1".to_owned())
    );
    // From the Node itself, to its own address.
    assert_eq!(
        tcp_answer(&n.node, "10.10.0.11:30080").await,
        Ok("10.10.0.11".to_owned())
    );
    // A port that is not a NodePort stays the Node's own: nothing listens there.
    let other = tcp_answer(&n.underlay, "10.10.0.11:30081").await;
    assert!(
        other.as_ref().is_err_and(|e| e.contains("refused")),
        "{other:?}"
    );

    let writes = host.writes();
    assert_eq!(
        host.reconcile_node_ports(&rules).await.unwrap(),
        Outcome::Unchanged
    );
    assert_eq!(host.writes(), writes, "a repeat writes nothing");

    // nodePortAddresses: only those addresses serve NodePorts.
    run(&[
        "ip",
        "-n",
        &n.node,
        "addr",
        "add",
        "10.20.0.11/24",
        "dev",
        "eth0",
    ]);
    let restricted = node_port_rules(&[(Protocol::Tcp, 30080)], &["10.20.0.0/24"]);
    assert_eq!(
        host.reconcile_node_ports(&restricted).await.unwrap(),
        Outcome::Changed
    );
    assert_eq!(
        tcp_answer(&n.node, "10.20.0.11:30080").await,
        Ok("10.20.0.11".to_owned())
    );
    let outside = tcp_answer(&n.node, "10.10.0.11:30080").await;
    assert!(
        outside.as_ref().is_err_and(|e| e.contains("refused")),
        "{outside:?}"
    );
    let table = n.exec(&["nft", "-j", "list", "table", "ip", "antrea-nodeport"]);
    assert!(!table.contains("\"udp\""), "the UDP port is gone: {table}");

    // No NodePort: the table goes, the port is the Node's again.
    let none = NodePortRules::default();
    assert_eq!(
        host.reconcile_node_ports(&none).await.unwrap(),
        Outcome::Changed
    );
    assert!(
        !n.exec(&["nft", "list", "tables"])
            .contains("antrea-nodeport")
    );
    assert!(tcp_answer(&n.node, "10.20.0.11:30080").await.is_err());
    assert_eq!(
        host.reconcile_node_ports(&none).await.unwrap(),
        Outcome::Unchanged
    );
}

fn snat_rules(ruleset: &Value) -> Vec<Value> {
    ruleset["nftables"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o.get("rule"))
        .filter(|r| r["family"] == "ip" && r["table"] == "antrea" && r["chain"] == "pod-snat")
        .cloned()
        .collect()
}

#[tokio::test]
async fn pod_snat_is_installed_updated_and_removed() {
    let n = Node::new();
    let host = n.host().await;
    let snat = PodSnat {
        pod_cidr: cidr("10.244.1.0/24"),
        cluster_cidrs: vec![cidr("10.244.0.0/16")],
        egress_interface: "br-int".into(),
    };
    assert_eq!(host.ensure_pod_snat(&snat).await.unwrap(), Outcome::Changed);
    let rules = snat_rules(&n.nft_ruleset());
    assert_eq!(rules.len(), 1);
    let text = rules[0]["expr"].to_string();
    for needle in [
        "\"masquerade\"",
        "\"10.244.1.0\"",
        "\"10.244.0.0\"",
        "\"br-int\"",
        "\"!=\"",
        "\"saddr\"",
        "\"daddr\"",
    ] {
        assert!(text.contains(needle), "{needle} missing in {text}");
    }
    let chain = n.nft_ruleset()["nftables"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o.get("chain"))
        .find(|c| c["name"] == "pod-snat")
        .cloned()
        .unwrap();
    assert_eq!(
        (chain["type"].as_str(), chain["hook"].as_str()),
        (Some("nat"), Some("postrouting"))
    );

    let writes = host.writes();
    assert_eq!(
        host.ensure_pod_snat(&snat).await.unwrap(),
        Outcome::Unchanged
    );
    assert_eq!(host.writes(), writes);

    let wider = PodSnat {
        cluster_cidrs: vec![cidr("10.244.0.0/16"), cidr("10.96.0.0/12")],
        ..snat
    };
    assert_eq!(
        host.ensure_pod_snat(&wider).await.unwrap(),
        Outcome::Changed
    );
    let rules = snat_rules(&n.nft_ruleset());
    assert_eq!(rules.len(), 1, "the rule is replaced, not added");
    assert!(rules[0]["expr"].to_string().contains("\"10.96.0.0\""));

    assert_eq!(host.remove_pod_snat().await.unwrap(), Outcome::Changed);
    assert!(snat_rules(&n.nft_ruleset()).is_empty());
    assert!(!n.exec(&["nft", "list", "tables"]).contains("antrea"));
    assert_eq!(host.remove_pod_snat().await.unwrap(), Outcome::Unchanged);
}

#[tokio::test]
async fn kernel_ingress_block_drops_frames_for_the_node_and_is_removable() {
    let n = Node::new();
    let host = n.host().await;
    let ping = || ping_counts(&n.underlay, "10.10.0.11", 1);
    assert_eq!(ping(), (1, 1), "reachable before");
    assert_eq!(
        host.block_kernel_ingress("eth0").await.unwrap(),
        Outcome::Changed
    );
    let chains: Vec<Value> = n.nft_ruleset()["nftables"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o.get("chain"))
        .cloned()
        .collect();
    let chain = chains
        .iter()
        .find(|c| c["family"] == "netdev" && c["name"] == "ingress-eth0")
        .expect("chain present");
    assert_eq!(
        (chain["hook"].as_str(), chain["policy"].as_str()),
        (Some("ingress"), Some("drop"))
    );
    let text = n.exec(&["nft", "list", "chain", "netdev", "antrea", "ingress-eth0"]);
    assert!(text.contains("hook ingress device \"eth0\""), "{text}");
    let (sent, received) = ping();
    assert!(
        sent > 0 && received == 0,
        "the Node's kernel no longer sees frames on eth0: {received} of {sent} answered"
    );
    let writes = host.writes();
    assert_eq!(
        host.block_kernel_ingress("eth0").await.unwrap(),
        Outcome::Unchanged
    );
    assert_eq!(host.writes(), writes);
    assert!(matches!(
        host.block_kernel_ingress("nope0").await.unwrap_err(),
        Error::InterfaceNotFound { .. }
    ));
    assert!(matches!(
        host.block_kernel_ingress("a\"b").await.unwrap_err(),
        Error::Invalid { .. }
    ));

    assert_eq!(
        host.unblock_kernel_ingress("eth0").await.unwrap(),
        Outcome::Changed
    );
    assert_eq!(ping(), (1, 1), "reachable again");
    assert_eq!(
        host.unblock_kernel_ingress("eth0").await.unwrap(),
        Outcome::Unchanged
    );
}

// On the multi-thread runtime (as in the agent): no worker thread ever changes namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_interface_create_repeat_check_delete() {
    let mut n = Node::new();
    let pod = n.namespaces.add("pod");
    let host = n.host().await;
    let spec = PodInterfaceSpec {
        netns: format!("/var/run/netns/{pod}"),
        ifname: "eth0".into(), // the Node has an eth0 too: the container end never lives there
        host_ifname: endpoint_name("p1-5d78c9869d-abcde", "4f3c2b1a"),
        address: cidr("10.244.1.10/24"),
        gateway: ip("10.244.1.1"),
        mtu: 1450,
        dns: None,
    };
    let (created, outcome) = host.create_pod_interface(&spec).await.unwrap();
    assert_eq!(outcome, Outcome::Changed);
    assert_eq!(created.host_ifname, spec.host_ifname);
    assert_eq!(
        created.container_mac.to_string(),
        "0a:58:0a:f4:01:0a",
        "0a:58 and the Pod's address"
    );

    let pod_json = |args: &[&str]| -> Value {
        let mut full = vec!["ip", "-j", "-n", &pod];
        full.extend_from_slice(args);
        serde_json::from_str(&run(&full)).unwrap()
    };
    let eth0 = pod_json(&["addr", "show", "dev", "eth0"])[0].clone();
    assert_eq!(
        eth0["address"].as_str().unwrap(),
        created.container_mac.to_string()
    );
    assert_eq!(eth0["mtu"], 1450);
    assert!(
        eth0["flags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("UP"))
    );
    assert!(
        eth0["addr_info"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["local"] == "10.244.1.10" && a["prefixlen"] == 24)
    );
    let default = pod_json(&["route", "show", "default"]);
    assert_eq!(
        (default[0]["gateway"].as_str(), default[0]["dev"].as_str()),
        (Some("10.244.1.1"), Some("eth0"))
    );
    assert!(tx_checksum_off(&pod, "eth0"));
    let host_end = n.link(&spec.host_ifname);
    assert_eq!(
        host_end["address"].as_str().unwrap(),
        created.host_mac.to_string()
    );
    assert_eq!(host_end["mtu"], 1450);
    assert!(
        host_end["flags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("UP"))
    );
    assert!(tx_checksum_off(&n.node, &spec.host_ifname));
    let v6 = format!("/proc/sys/net/ipv6/conf/{}/disable_ipv6", spec.host_ifname);
    assert_eq!(n.exec(&["cat", &v6]).trim(), "1");
    assert_eq!(
        n.addrs("eth0"),
        vec!["10.10.0.11/24"],
        "the Node's own eth0 is untouched"
    );

    // Only the veths we made are listed as Pod interfaces: they are in our group.
    assert_eq!(host_end["group"], hostnet::POD_INTERFACE_GROUP.to_string());
    n.exec(&[
        "ip", "link", "add", "foreign0", "type", "veth", "peer", "name", "foreign1",
    ]);
    assert_eq!(
        host.pod_interfaces().await.unwrap(),
        vec![spec.host_ifname.clone()]
    );

    // Repeated ADD: same answer, no writes.
    let writes = host.writes();
    let (again, outcome) = host.create_pod_interface(&spec).await.unwrap();
    assert_eq!((again, outcome), (created.clone(), Outcome::Unchanged));
    assert_eq!(host.writes(), writes);
    host.check_pod_interface(&spec, &created).await.unwrap();

    // CHECK notices a removed address; ADD repairs it.
    run(&[
        "ip",
        "-n",
        &pod,
        "addr",
        "del",
        "10.244.1.10/24",
        "dev",
        "eth0",
    ]);
    let err = host.check_pod_interface(&spec, &created).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::CheckFailed {
                what: "IPv4 address",
                ..
            }
        ),
        "{err}"
    );
    // The pair is kept (a switch port made on its host end stays valid) and configured again.
    let (repaired, outcome) = host.create_pod_interface(&spec).await.unwrap();
    assert_eq!((&repaired, outcome), (&created, Outcome::Changed));
    host.check_pod_interface(&spec, &created).await.unwrap();

    // A pair that is not the one asked for (another MTU) is made again, with a new host end.
    let other_mtu = PodInterfaceSpec {
        mtu: 1400,
        ..spec.clone()
    };
    let (remade, outcome) = host.create_pod_interface(&other_mtu).await.unwrap();
    assert_eq!(outcome, Outcome::Changed);
    assert_ne!(remade.host_mac, created.host_mac, "a new pair");
    assert_eq!(
        remade.container_mac, created.container_mac,
        "from the address"
    );
    host.check_pod_interface(&other_mtu, &remade).await.unwrap();
    let (repaired, _) = host.create_pod_interface(&spec).await.unwrap();
    host.check_pod_interface(&spec, &repaired).await.unwrap();

    // DEL: idempotent, also once the Pod's namespace is gone.
    assert_eq!(
        host.delete_pod_interface(&spec.host_ifname).await.unwrap(),
        Outcome::Changed
    );
    assert!(!succeeds(&[
        "ip",
        "-n",
        &n.node,
        "link",
        "show",
        &spec.host_ifname
    ]));
    assert!(!succeeds(&["ip", "-n", &pod, "link", "show", "eth0"]));
    assert_eq!(
        host.delete_pod_interface(&spec.host_ifname).await.unwrap(),
        Outcome::Unchanged
    );
    host.create_pod_interface(&spec).await.unwrap();
    run(&["ip", "netns", "del", &pod]);
    host.delete_pod_interface(&spec.host_ifname).await.unwrap();
    assert_eq!(
        host.delete_pod_interface(&spec.host_ifname).await.unwrap(),
        Outcome::Unchanged
    );
    assert!(!succeeds(&[
        "ip",
        "-n",
        &n.node,
        "link",
        "show",
        &spec.host_ifname
    ]));
    let err = host
        .check_pod_interface(&spec, &repaired)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InterfaceNotFound { .. }), "{err}");

    assert!(host.pod_interfaces().await.unwrap().is_empty());

    // Never deletes an interface that is not a veth.
    assert!(matches!(
        host.delete_pod_interface("br-int").await.unwrap_err(),
        Error::Invalid { .. }
    ));
}

/// The lab's Node bring-up with a real `ovs-vswitchd` (userspace datapath) in the Node's
/// namespace: OVS creates `br-int`, the NIC becomes its uplink, the kernel is kept off the NIC
/// and the Node IP moves to LOCAL. The Node must stay reachable through OVS, without duplicates.
#[tokio::test]
async fn takeover_under_real_ovs_keeps_the_node_reachable() {
    let n = Node::without_bridge();
    let ovs =
        Ovs::start_with(Daemons::Full, Some(&n.node)).expect("start OVS in the Node namespace");
    ovs.add_bridge("br-int").unwrap();
    let hwaddr = format!("other_config:hwaddr=\"{NIC_MAC}\"");
    ovs.vsctl(&[
        "set",
        "Bridge",
        "br-int",
        &hwaddr,
        "--",
        "set",
        "Interface",
        "br-int",
        "mtu_request=1500",
    ])
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !succeeds(&["ip", "-n", &n.node, "link", "show", "br-int"]) {
        assert!(
            std::time::Instant::now() < deadline,
            "OVS did not create the br-int tap"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let flows = "table=0,priority=200,in_port=3,actions=LOCAL\n\
                 table=0,priority=200,in_port=LOCAL,actions=output:3\n\
                 table=0,priority=0,actions=drop\n";
    ovs.ofctl_stdin(&["add-flows", "{mgmt:br-int}", "-"], flows)
        .unwrap();
    ovs.vsctl(&[
        "add-port",
        "br-int",
        "eth0",
        "--",
        "set",
        "Interface",
        "eth0",
        "ofport_request=3",
    ])
    .unwrap();

    let host = n.host().await;
    assert_eq!(
        host.block_kernel_ingress("eth0").await.unwrap(),
        Outcome::Changed
    );
    let nic = host
        .find_transport_interface(&TransportSelector::NodeIp(ip("10.10.0.11")))
        .await
        .unwrap();
    let (uplink, outcome) = host.take_over_uplink(&nic, "br-int").await.unwrap();
    assert_eq!(
        (outcome, uplink.bridge.addresses.clone()),
        (Outcome::Changed, vec![cidr("10.10.0.11/24")])
    );

    for (ns, target) in [(&n.node, "10.10.0.1"), (&n.underlay, "10.10.0.11")] {
        let summary = ping_summary(ns, target, 3);
        assert!(
            summary.starts_with("3 packets transmitted, 3 received,"),
            "ping {target} from {ns} through OVS, every echo answered: {summary}"
        );
        assert!(
            !summary.contains("duplicates"),
            "the kernel answered too: {summary}"
        );
    }
    assert!(n.ip_json(&["-4", "route", "show", "default"])[0]["dev"] == "br-int");

    // Uninstall order: NIC out of OVS, kernel back on it, configuration back.
    ovs.vsctl(&["del-port", "br-int", "eth0"]).unwrap();
    assert_eq!(
        host.unblock_kernel_ingress("eth0").await.unwrap(),
        Outcome::Changed
    );
    assert!(host.restore_uplink("br-int").await.unwrap().is_some());
    assert_eq!(
        ping_counts(&n.node, "10.10.0.1", 3),
        (3, 3),
        "reachable through the NIC again"
    );
}

fn pod_spec(netns: &str, host_ifname: &str, address: &str) -> PodInterfaceSpec {
    PodInterfaceSpec {
        netns: format!("/var/run/netns/{netns}"),
        ifname: "eth0".into(),
        host_ifname: host_ifname.into(),
        address: cidr(address),
        gateway: ip("10.244.1.1"),
        mtu: 1450,
        dns: None,
    }
}

// An ADD cut short between the two halves leaves a pair with no configuration; the next ADD
// keeps that pair (a switch port made on it stays valid) and configures it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_pair_left_unconfigured_is_kept_and_configured_by_the_next_add() {
    let mut n = Node::new();
    let pod = n.namespaces.add("ph");
    let host = n.host().await;
    let spec = pod_spec(&pod, "ph-1", "10.244.1.40/24");
    let (added, outcome) = host.add_pod_interface(&spec).await.unwrap();
    assert_eq!(outcome, Outcome::Changed);
    assert_eq!(added.container_mac.to_string(), "0a:58:0a:f4:01:28");
    let err = host.check_pod_interface(&spec, &added).await.unwrap_err();
    assert!(
        matches!(err, Error::CheckFailed { what: "state", .. }),
        "not configured yet: {err}"
    );
    let host_end = n.link("ph-1");
    assert_eq!(host_end["address"], added.host_mac.to_string());
    assert!(
        host_end["flags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("UP")),
        "the switch takes a host end that is up: {host_end}"
    );

    let (again, outcome) = host.create_pod_interface(&spec).await.unwrap();
    assert_eq!(
        (&again, outcome),
        (&added, Outcome::Changed),
        "the same pair"
    );
    host.check_pod_interface(&spec, &added).await.unwrap();
    assert!(tx_checksum_off(&pod, "eth0"));
    assert!(tx_checksum_off(&n.node, "ph-1"));

    let writes = host.writes();
    assert_eq!(
        host.configure_pod_interface(&spec).await.unwrap(),
        Outcome::Unchanged
    );
    assert_eq!(host.writes(), writes, "a configured pair is only read");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_pod_creates_each_report_their_own_outcome() {
    let mut n = Node::new();
    let (pa, pb) = (n.namespaces.add("pa"), n.namespaces.add("pb"));
    let host = n.host().await;
    let (a, b) = (
        pod_spec(&pa, "pa-1", "10.244.1.21/24"),
        pod_spec(&pb, "pb-1", "10.244.1.22/24"),
    );
    let (ra, rb) = tokio::join!(host.create_pod_interface(&a), host.create_pod_interface(&b));
    assert_eq!(
        (ra.unwrap().1, rb.unwrap().1),
        (Outcome::Changed, Outcome::Changed)
    );
    // One repeat runs beside a real change: only the real change reports Changed.
    let c = pod_spec(&pb, "pb-2", "10.244.1.23/24");
    let c = PodInterfaceSpec {
        ifname: "eth1".into(),
        ..c
    };
    let (ra, rc) = tokio::join!(host.create_pod_interface(&a), host.create_pod_interface(&c));
    assert_eq!(
        (ra.unwrap().1, rc.unwrap().1),
        (Outcome::Unchanged, Outcome::Changed)
    );
}

#[tokio::test]
async fn pod_create_in_a_missing_namespace_fails_cleanly() {
    let n = Node::new();
    let host = n.host().await;
    let spec = pod_spec("hn-no-such-netns", "px-1", "10.244.1.30/24");
    let err = host.create_pod_interface(&spec).await.unwrap_err();
    assert!(
        err.to_string().contains("/var/run/netns/hn-no-such-netns"),
        "{err}"
    );
    assert!(
        !succeeds(&["ip", "-n", &n.node, "link", "show", "px-1"]),
        "nothing left behind"
    );
    assert!(matches!(
        host.create_pod_interface(&PodInterfaceSpec {
            host_ifname: "bad name".into(),
            ..spec
        })
        .await
        .unwrap_err(),
        Error::Invalid { .. }
    ));
}
