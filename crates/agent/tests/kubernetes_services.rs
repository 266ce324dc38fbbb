//! The agent binary's Service proxy on the fake API server with a real Open vSwitch
//! (`ovs-ofctl dump-groups`/`dump-flows` as the oracle): a Service and its EndpointSlice
//! created in the API become the ServiceLB flow and a select group with a bucket per endpoint;
//! one endpoint fewer in the slice is one bucket fewer; a restarted agent has them in its
//! first round (its proxy controller sends nothing for the unchanged Service); deleting the
//! Service removes its flows and its group. With real packets: Pods added through the plugin
//! reach the cluster IP (and the external and load-balancer IPs), answered by both endpoints,
//! by the one left after a slice change (which reaches itself through it too: hairpin), by
//! none after the Service is deleted; a Service without endpoints refuses TCP with a reset and
//! UDP with an ICMP port unreachable, answered by the agent (kube-proxy's REJECT), so the client
//! sees "connection refused" and not a timeout. Stale UDP conntrack: a client socket that keeps
//! its source port is answered by the endpoint it first reached while that endpoint stays, and
//! by the remaining one with its next datagram once the slice drops it (the agent flushed the
//! entry). Endpoint churn under load: while a client opens new connections without pause, one
//! of three endpoints leaves the slice; once the agent logged the change no new connection
//! reaches it, and connections established before to the two others keep working. With
//! proxyAll, the Node's own stack reaches the cluster IP through the gateway (the route to the
//! Service CIDR discovered from the cluster IPs, the permanent neighbour for 169.254.0.253),
//! answered by both endpoints, and is refused by a Service without endpoints; host-network
//! endpoints (the Node's own address and a LAN machine's) are reached from the Node, from a Pod
//! and, through a NodePort, from outside. Under
//! `externalTrafficPolicy: Local` without a local endpoint, traffic from outside is dropped while
//! the Node's own traffic to its NodePort and the load-balancer IP is short-circuited to every
//! endpoint, source-NATed.
#![cfg(target_os = "linux")]

mod objects;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::Service;
use objects::{dns_slice, node, pod, web_slice};
use serde_json::json;
use support::podnet::in_netns;
use support::{Lan, TestNode, run, serve_in, wait_until};

/// How long a connection waits to be accepted and answered before it counts as unanswered (a
/// hang guard for what the datapath drops, not a performance bound).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);
/// How soon a Service without endpoints must refuse (issue 11: within a second): a refusal
/// that comes later is a timeout of the probe, and fails.
const REFUSAL_WITHIN: Duration = Duration::from_secs(1);

/// `web`'s external IP and load-balancer ingress IP: Pods reach it there too.
const EXTERNAL_IP: &str = "192.0.2.10";
const LOAD_BALANCER_IP: &str = "192.0.2.20";

/// `web`: a LoadBalancer Service at 10.96.0.10, [`EXTERNAL_IP`] and [`LOAD_BALANCER_IP`], TCP
/// 80 to the endpoints' port named `web`.
fn web_service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "default", "name": "web"},
        "spec": {
            "type": "LoadBalancer",
            "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
            "externalIPs": [EXTERNAL_IP],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "web", "nodePort": 30080}],
        },
        "status": {"loadBalancer": {"ingress": [{"ip": LOAD_BALANCER_IP}]}},
    }))
    .unwrap()
}

/// `quiet`: cluster IP 10.96.0.20, TCP 80 and UDP 53, and no EndpointSlice.
fn quiet_service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "default", "name": "quiet"},
        "spec": {
            "clusterIP": "10.96.0.20", "clusterIPs": ["10.96.0.20"],
            "ports": [
                {"name": "http", "port": 80, "protocol": "TCP"},
                {"name": "dns", "port": 53, "protocol": "UDP"},
            ],
        },
    }))
    .unwrap()
}

/// `kubernetes`: the API server's Service, cluster IP 10.96.0.1 (no slice here).
fn kubernetes_service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "default", "name": "kubernetes"},
        "spec": {
            "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
        },
    }))
    .unwrap()
}

/// `api-nodeport`: the API servers of [`api_servers_slice`] at NodePort 30443 (TCP 443 to
/// 6443), cluster IP 10.96.0.2.
fn api_node_port_service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "default", "name": "api-nodeport"},
        "spec": {
            "type": "NodePort",
            "clusterIP": "10.96.0.2", "clusterIPs": ["10.96.0.2"],
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443, "nodePort": 30443}],
        },
    }))
    .unwrap()
}

/// Service `service`'s slice of API servers on the host network: on the Node's own address and
/// on the LAN's router, port 6443.
fn api_servers_slice(service: &str) -> k8s_openapi::api::discovery::v1::EndpointSlice {
    serde_json::from_value(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {
            "namespace": "default", "name": service,
            "labels": {"kubernetes.io/service-name": service},
        },
        "addressType": "IPv4",
        "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}],
        "endpoints": [{"addresses": ["10.10.0.11"]}, {"addresses": ["10.10.0.1"]}],
    }))
    .unwrap()
}

/// `dns`: cluster IP 10.96.0.30, UDP 53 to the endpoints' port named `dns`.
fn dns_service() -> Service {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "default", "name": "dns"},
        "spec": {
            "clusterIP": "10.96.0.30", "clusterIPs": ["10.96.0.30"],
            "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": "dns"}],
        },
    }))
    .unwrap()
}

/// Serves UDP port 5353 in `netns` on its own thread: each datagram is answered with `name`.
fn serve_udp_name(netns: &str, name: &'static str) {
    let socket = in_netns(netns, || std::net::UdpSocket::bind(("0.0.0.0", 5353)))
        .unwrap_or_else(|e| panic!("bind UDP 5353 in {netns}: {e}"));
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        while let Ok((_, from)) = socket.recv_from(&mut buf) {
            let _ = socket.send_to(name.as_bytes(), from);
        }
    });
}

/// A UDP socket of `netns` on source port `port`, connected to `to`: all its datagrams are one
/// 5-tuple, as a DNS client's that keeps its port.
fn udp_client(netns: &str, port: u16, to: &str) -> std::net::UdpSocket {
    let to: SocketAddr = to.parse().unwrap();
    in_netns(netns, || {
        let socket = std::net::UdpSocket::bind(("0.0.0.0", port))?;
        socket.connect(to)?;
        socket.set_read_timeout(Some(ANSWER_TIMEOUT))?;
        Ok::<_, std::io::Error>(socket)
    })
    .expect("a UDP client socket")
}

/// The answer to one datagram of `socket`, or why there is none.
fn udp_ask(socket: &std::net::UdpSocket) -> Result<String, String> {
    socket.send(b"query").map_err(|e| e.to_string())?;
    let mut buf = [0u8; 64];
    let n = socket.recv(&mut buf).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// Waits for the `nth` line of the proxy controller about Service `default/NAME` in run 1's
/// log that says `what` (`: N endpoints, ` for an update, ` removed: `). The line is logged
/// once the datapath follows the change (cached megaflows revalidated, stale UDP conntrack
/// flushed), so the test flushes no datapath cache.
fn wait_for_service_line(node: &TestNode, name: &str, what: &str, nth: usize) {
    let prefix = format!("Service default/{name}{what}");
    wait_until(&format!("line {nth} with {prefix:?}"), || {
        node.log(1).lines().filter(|l| l.contains(&prefix)).count() >= nth
    });
}

/// Whether run 1's log has a line that ends with `tail`.
fn logged(node: &TestNode, tail: &str) -> bool {
    node.log(1).lines().any(|l| l.trim_end().ends_with(tail))
}

/// What a UDP datagram from `netns` to `to` gets back on a connected socket within `wait`: the
/// error of the receive (an ICMP port unreachable is `ConnectionRefused`), or the bytes of an
/// answer.
fn udp_exchange(netns: &str, to: &str, wait: Duration) -> Result<Vec<u8>, std::io::Error> {
    let to: SocketAddr = to.parse().unwrap();
    in_netns(netns, || {
        let socket = std::net::UdpSocket::bind("0.0.0.0:0")?;
        socket.connect(to)?;
        socket.set_read_timeout(Some(wait))?;
        socket.send(b"query")?;
        let mut buf = [0u8; 64];
        let n = socket.recv(&mut buf)?;
        Ok(buf[..n].to_vec())
    })
}

/// The select groups of the bridge, one line each.
fn select_groups(node: &TestNode) -> Vec<String> {
    node.ovs
        .ofctl(&["-O", "OpenFlow15", "dump-groups", "{mgmt:br-int}"])
        .expect("dump-groups")
        .lines()
        .filter(|l| l.contains("type=select"))
        .map(|l| l.trim().to_owned())
        .collect()
}

fn buckets(group: &str) -> usize {
    group.matches("bucket=").count()
}

/// The frontend flows of the cluster IP (ServiceLB, by its match).
fn frontend_flows(node: &TestNode) -> Vec<String> {
    node.flows()
        .into_iter()
        .filter(|f| f.contains("nw_dst=10.96.0.10") && f.contains("tp_dst=80"))
        .collect()
}

/// The proxy controller's update lines for `default/web` in run `run`.
fn web_updates(node: &TestNode, run: u32) -> Vec<String> {
    node.log(run)
        .lines()
        .filter(|l| l.contains("Service default/web"))
        .map(str::to_owned)
        .collect()
}

/// Node n1's agent up on a fake API server served in its namespace: the server, the Node and
/// the server's handle (serving until dropped).
fn node_on_the_api(
    runtime: &tokio::runtime::Runtime,
    lan: &mut Lan,
) -> (FakeApiServer, TestNode, fakeapi::TcpServer) {
    node_on_the_api_with(runtime, lan, "")
}

/// [`node_on_the_api`] with `extra` appended to the agent's configuration.
fn node_on_the_api_with(
    runtime: &tokio::runtime::Runtime,
    lan: &mut Lan,
    extra: &str,
) -> (FakeApiServer, TestNode, fakeapi::TcpServer) {
    let ns1 = lan.node_netns(1);
    let fake = FakeApiServer::new();
    fake.insert(&node("n1", "10.10.0.11", Some("10.244.1.0/24")))
        .unwrap();
    let mut n1 = TestNode::new("n1", &ns1, extra, "");
    let kubeconfig = n1.dir.path().join("kubeconfig");
    let server = serve_in(runtime, &fake, &ns1, &kubeconfig);
    n1.use_api(&kubeconfig);
    n1.start_and_wait_up();
    wait_until("the CNI server", || n1.cni_listening(1));
    (fake, n1, server)
}

#[test]
fn services_in_the_api_become_groups_and_flows_in_ovs_and_survive_a_restart() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut lan = Lan::new();
    let (fake, mut n1, _server) = node_on_the_api(&runtime, &mut lan);
    assert!(select_groups(&n1).is_empty());
    // ovs-vswitchd revalidates only when its tables change (its periodic round a minute
    // apart): each settle must begin its own rounds (the agent's revalidation nudges), or its
    // wait runs into the hang guard and logs the line the end of the test rejects.
    n1.vsctl(&[
        "set",
        "Open_vSwitch",
        ".",
        "other_config:max-revalidator=60000",
        "other_config:max-idle=60000",
    ]);

    // Created: one frontend flow into a group with a bucket per endpoint.
    fake.insert(&web_service()).unwrap();
    fake.insert(&web_slice(&[10, 11, 12])).unwrap();
    wait_until("the Service's group with 3 buckets", || {
        select_groups(&n1).iter().any(|g| buckets(g) == 3)
    });
    let frontends = frontend_flows(&n1);
    assert_eq!(frontends.len(), 1, "{frontends:?}");
    let groups = select_groups(&n1);
    assert_eq!(groups.len(), 1, "{groups:?}");
    let group_id = groups[0]
        .split(',')
        .next()
        .and_then(|g| g.strip_prefix("group_id="))
        .unwrap()
        .to_owned();
    assert!(
        frontends[0].contains(&format!("group:{group_id}")),
        "{frontends:?} into {groups:?}"
    );
    for last in [10, 11, 12] {
        let dnat = format!("nat(dst=10.244.1.{last}:8080)");
        assert!(n1.flows().iter().any(|f| f.contains(&dnat)), "{dnat}");
    }
    wait_until("the update line", || {
        web_updates(&n1, 1)
            .iter()
            .any(|l| l.contains("3 endpoints") && l.contains("flow mods"))
    });

    // One endpoint fewer: the same group, one bucket fewer, .12's DNAT flow gone.
    fake.insert(&web_slice(&[10, 11])).unwrap();
    wait_until("the group with 2 buckets", || {
        select_groups(&n1).iter().any(|g| buckets(g) == 2)
    });
    assert_eq!(select_groups(&n1).len(), 1);
    assert!(
        !n1.flows()
            .iter()
            .any(|f| f.contains("nat(dst=10.244.1.12:8080)"))
    );

    // Restart: the first round already holds the Service, so right after bring-up the group
    // and the frontend are there and the controller sends nothing for it.
    let groups = select_groups(&n1);
    let frontends = frontend_flows(&n1);
    assert!(n1.stop_agent());
    n1.start_and_wait_up();
    assert_eq!(select_groups(&n1), groups, "groups right after bring-up");
    assert_eq!(
        frontend_flows(&n1),
        frontends,
        "frontends right after bring-up"
    );
    wait_until("the CNI server", || n1.cni_listening(2));
    // A later change shows the controller runs; before it, it sent nothing for `web`.
    fake.insert(&web_slice(&[10, 11, 13])).unwrap();
    wait_until("the restarted agent's update", || {
        n1.flows()
            .iter()
            .any(|f| f.contains("nat(dst=10.244.1.13:8080)"))
    });
    // The line is logged once the datapath follows the change (after the flows are in).
    wait_until("the restarted agent's update line", || {
        !web_updates(&n1, 2).is_empty()
    });
    let updates = web_updates(&n1, 2);
    assert_eq!(
        updates.len(),
        1,
        "only the later change is sent: {updates:?}"
    );
    assert!(updates[0].contains("3 endpoints"), "{updates:?}");

    // Deleted: its flows and its group go.
    fake.delete::<Service>("default", "web").unwrap();
    wait_until("the Service's group to go", || {
        select_groups(&n1).is_empty()
    });
    assert!(frontend_flows(&n1).is_empty());
    assert!(!n1.flows().iter().any(|f| f.contains("nat(dst=10.244.1.")));
    wait_until("the removal line", || {
        web_updates(&n1, 2).iter().any(|l| l.contains("removed"))
    });
    for run in [1, 2] {
        let log = n1.log(run);
        assert!(
            !log.contains("cached flows may still be the old ones"),
            "each change waited for the datapath's revalidation: {log}"
        );
    }
    assert!(n1.stop_agent());
}

/// The refusals' meter counters on `n`'s bridge: packets in, packets its drop band dropped.
fn reject_meter_counts(n: &TestNode) -> (u64, u64) {
    let stats = n
        .ovs
        .ofctl(&[
            "-O",
            "OpenFlow15",
            "meter-stats",
            "{mgmt:br-int}",
            "meter=1",
        ])
        .expect("meter-stats");
    let count = |key: &str| -> u64 {
        stats
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{key} in {stats}"))
    };
    (count("packet_in_count:"), count("packet_count:"))
}

/// Serves TCP port 8080 in `netns` on its own thread: each connection gets `name` and is
/// closed.
fn serve_name(netns: &str, name: &'static str) {
    let listener = in_netns(netns, || std::net::TcpListener::bind(("0.0.0.0", 8080)))
        .unwrap_or_else(|e| panic!("bind 8080 in {netns}: {e}"));
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let _ = stream.write_all(name.as_bytes());
        }
    });
}

/// What a TCP connection from `netns` to `to` reads until the server closes, or why it got
/// nothing (refused, timed out). Namespace and socket failures panic: they are not an answer.
fn ask(netns: &str, to: &str) -> Result<String, String> {
    ask_within(netns, to, ANSWER_TIMEOUT)
}

/// [`ask`] with the connection and the answer each waited for `wait`.
fn ask_within(netns: &str, to: &str, wait: Duration) -> Result<String, String> {
    let to: SocketAddr = to.parse().unwrap();
    in_netns(netns, || {
        let mut stream = TcpStream::connect_timeout(&to, wait).map_err(|e| e.to_string())?;
        stream.set_read_timeout(Some(wait)).unwrap();
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .map_err(|e| e.to_string())?;
        Ok(answer)
    })
}

/// The answers of `n` new connections from `netns` to the cluster IP; every one must be
/// answered.
fn cluster_ip_answers(netns: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            ask(netns, "10.96.0.10:80")
                .unwrap_or_else(|e| panic!("connection {i} to the cluster IP: {e}"))
        })
        .collect()
}

/// The IPv4 address a CNI ADD result gave the Pod.
fn pod_ip(result: &serde_json::Value) -> String {
    let address = result["ips"][0]["address"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    address.split('/').next().unwrap().to_owned()
}

/// Pods `names` of Node n1, in the API and added through the real plugin: their IPs and
/// network namespaces by name.
fn add_pods(
    fake: &FakeApiServer,
    n1: &TestNode,
    lan: &mut Lan,
    names: &[&'static str],
) -> (
    BTreeMap<&'static str, String>,
    BTreeMap<&'static str, String>,
) {
    let mut ips = BTreeMap::new();
    let mut netns = BTreeMap::new();
    for &name in names {
        fake.insert(&pod(name, "n1")).unwrap();
        let ns = lan.pod_netns(name);
        let (ok, result) = n1.cni("ADD", &format!("c-{name}"), name, &ns, &n1.netconf(None));
        assert!(ok, "ADD {name}: {result}");
        ips.insert(name, pod_ip(&result));
        netns.insert(name, ns);
    }
    (ips, netns)
}

#[test]
fn pods_reach_a_cluster_ip_through_the_agents_datapath_with_real_packets() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut lan = Lan::new();
    let (fake, mut n1, _server) = node_on_the_api(&runtime, &mut lan);

    // A client and two endpoints, added through the real plugin.
    let (ips, netns) = add_pods(&fake, &n1, &mut lan, &["client", "e1", "e2"]);
    serve_name(&netns["e1"], "e1");
    serve_name(&netns["e2"], "e2");
    let last = |name: &str| -> u8 { ips[name].rsplit('.').next().unwrap().parse().unwrap() };
    // The endpoints answer directly, so a missing answer below is the Service path's.
    for name in ["e1", "e2"] {
        assert_eq!(
            ask(&netns["client"], &format!("{}:8080", ips[name])).as_deref(),
            Ok(name)
        );
    }

    // Both endpoints in the slice: every connection to the cluster IP is answered, by both
    // endpoints over 24 connections (the select group hashes each new 5-tuple; one endpoint
    // taking all 24 has probability 2^-23).
    fake.insert(&web_service()).unwrap();
    fake.insert(&web_slice(&[last("e1"), last("e2")])).unwrap();
    wait_until("the Service's group with 2 buckets", || {
        select_groups(&n1).iter().any(|g| buckets(g) == 2)
    });
    n1.ovs.appctl(&["revalidator/purge"]).unwrap();
    let answers: BTreeSet<String> = cluster_ip_answers(&netns["client"], 24)
        .into_iter()
        .collect();
    assert_eq!(answers, BTreeSet::from(["e1".to_owned(), "e2".to_owned()]));
    // From Pods the external and load-balancer IPs are the same Service.
    for ip in [EXTERNAL_IP, LOAD_BALANCER_IP] {
        for i in 0..4 {
            let answer = ask(&netns["client"], &format!("{ip}:80"));
            assert!(
                matches!(answer.as_deref(), Ok("e1" | "e2")),
                "connection {i} to {ip}: {answer:?}"
            );
        }
    }

    // e2 leaves the slice: once the change's line is logged every new connection reaches e1
    // (the agent waited for the datapath's revalidation; the test purges nothing).
    fake.insert(&web_slice(&[last("e1")])).unwrap();
    wait_for_service_line(&n1, "web", ": 1 endpoints, ", 1);
    assert!(select_groups(&n1).iter().any(|g| buckets(g) == 1));
    let answers = cluster_ip_answers(&netns["client"], 12);
    assert!(answers.iter().all(|a| a == "e1"), "{answers:?}");
    // Hairpin: e1, the Service's only endpoint, reaches it too, answered by itself.
    let answers = cluster_ip_answers(&netns["e1"], 4);
    assert!(answers.iter().all(|a| a == "e1"), "{answers:?}");

    // Stale UDP conntrack: `dns` with e1 only answers the client's port 40001 from e1, and
    // still from e1 once e2 joins (the entry keeps its endpoint). When e1 leaves the slice the
    // agent flushes the entry, and the same 5-tuple's next datagram reaches e2.
    serve_udp_name(&netns["e1"], "e1");
    serve_udp_name(&netns["e2"], "e2");
    fake.insert(&dns_service()).unwrap();
    fake.insert(&dns_slice(&[last("e1")])).unwrap();
    wait_for_service_line(&n1, "dns", ": 1 endpoints, ", 1);
    let dns = udp_client(&netns["client"], 40001, "10.96.0.30:53");
    assert_eq!(udp_ask(&dns).as_deref(), Ok("e1"));
    fake.insert(&dns_slice(&[last("e1"), last("e2")])).unwrap();
    wait_for_service_line(&n1, "dns", ": 2 endpoints, ", 1);
    for _ in 0..4 {
        assert_eq!(udp_ask(&dns).as_deref(), Ok("e1"), "the entry keeps e1");
    }
    fake.insert(&dns_slice(&[last("e2")])).unwrap();
    let flushed = format!(
        "Service default/dns: flushed UDP conntrack to {}:5353 (via 10.96.0.30:53)",
        ips["e1"]
    );
    wait_for_service_line(&n1, "dns", ": 1 endpoints, ", 2);
    assert!(logged(&n1, &flushed), "{}", n1.log(1));
    assert_eq!(udp_ask(&dns).as_deref(), Ok("e2"));
    assert_eq!(udp_ask(&dns).as_deref(), Ok("e2"));
    // `dns` deleted: every entry through its frontend is flushed, and nothing answers.
    fake.delete::<Service>("default", "dns").unwrap();
    wait_for_service_line(&n1, "dns", " removed: ", 1);
    assert!(
        logged(
            &n1,
            "Service default/dns: flushed UDP conntrack to 10.96.0.30:53"
        ),
        "{}",
        n1.log(1)
    );
    assert!(udp_ask(&dns).is_err(), "the deleted dns Service answered");

    // A Service without endpoints refuses, answered by the agent: TCP gets a reset, UDP an ICMP
    // port unreachable; each refusal, within a second and not a timeout, is what the client sees.
    fake.insert(&quiet_service()).unwrap();
    wait_until("quiet's frontends handing packets to the agent", || {
        let flows = n1
            .ovs
            .ofctl(&["-O", "OpenFlow15", "dump-flows", "{mgmt:br-int}"])
            .expect("dump-flows");
        flows
            .lines()
            .filter(|l| l.contains("nw_dst=10.96.0.20") && l.contains("controller("))
            .count()
            == 2
    });
    for i in 0..3 {
        let refused = ask_within(&netns["client"], "10.96.0.20:80", REFUSAL_WITHIN);
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains("Connection refused")),
            "TCP connection {i} to the endpointless Service: {refused:?}"
        );
        let refused = udp_exchange(&netns["client"], "10.96.0.20:53", REFUSAL_WITHIN);
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused),
            "UDP datagram {i} to the endpointless Service: {refused:?}"
        );
    }
    // The userspace datapath has packet-rate meters: the refusals pass the packet-in meter,
    // and a flood of datagrams to the endpointless port is cut down in the switch.
    let dump = n1
        .ovs
        .ofctl(&["-O", "OpenFlow15", "dump-meters", "{mgmt:br-int}"])
        .expect("dump-meters");
    assert!(
        dump.contains("meter=1 pktps burst stats")
            && dump.contains("type=drop rate=200 burst_size=400"),
        "{dump}"
    );
    let before = reject_meter_counts(&n1);
    let flood: u64 = 3000;
    in_netns(&netns["client"], || {
        let socket = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
        for i in 0..flood {
            socket.send_to(b"flood", "10.96.0.20:53").unwrap();
            if i % 50 == 49 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    });
    let mut counted = before;
    wait_until("the meter to have counted the whole flood", || {
        let now = reject_meter_counts(&n1);
        std::mem::replace(&mut counted, now) == now && now != before
    });
    let (input, dropped) = (counted.0 - before.0, counted.1 - before.1);
    println!("refusals' meter: {input} of the flood of {flood} in, {dropped} dropped");
    assert!(
        input > 1000,
        "the flood did not reach the meter: {input} in"
    );
    assert!(dropped > 0, "the meter let all {input} through");

    // The Service deleted: the cluster IP answers nothing, e1 still answers directly.
    fake.delete::<Service>("default", "web").unwrap();
    wait_until("the Service's group to go", || {
        select_groups(&n1).is_empty()
    });
    n1.ovs.appctl(&["revalidator/purge"]).unwrap();
    let gone = ask(&netns["client"], "10.96.0.10:80");
    assert!(gone.is_err(), "the deleted cluster IP answered: {gone:?}");
    let gone = ask(&netns["client"], &format!("{EXTERNAL_IP}:80"));
    assert!(gone.is_err(), "the deleted external IP answered: {gone:?}");
    assert_eq!(
        ask(&netns["client"], &format!("{}:8080", ips["e1"])).as_deref(),
        Ok("e1")
    );
    assert!(n1.stop_agent());
}

/// Serves TCP port 8080 in `netns` on its own thread, a thread per connection: `name` once
/// accepted, then again for every byte the client sends, until it closes. So a connection
/// kept open shows, each time it is used, which endpoint still holds it.
fn serve_name_per_byte(netns: &str, name: &'static str) {
    let listener = in_netns(netns, || std::net::TcpListener::bind(("0.0.0.0", 8080)))
        .unwrap_or_else(|e| panic!("bind 8080 in {netns}: {e}"));
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut byte = [0u8; 1];
                while stream.write_all(name.as_bytes()).is_ok()
                    && matches!(stream.read(&mut byte), Ok(1))
                {}
            });
        }
    });
}

/// A new connection from `netns` to the cluster IP and the name its endpoint first sent, or
/// why there is none.
fn open_to_cluster_ip(netns: &str) -> Result<(TcpStream, String), String> {
    let to: SocketAddr = "10.96.0.10:80".parse().unwrap();
    in_netns(netns, || {
        let mut stream =
            TcpStream::connect_timeout(&to, ANSWER_TIMEOUT).map_err(|e| e.to_string())?;
        stream.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
        let name = read_name(&mut stream)?;
        Ok((stream, name))
    })
}

/// The next name (two bytes, `e1`) an endpoint sent on `stream`.
fn read_name(stream: &mut TcpStream) -> Result<String, String> {
    let mut name = [0u8; 2];
    stream.read_exact(&mut name).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&name).into_owned())
}

#[test]
fn no_new_connection_reaches_a_removed_endpoint_and_established_ones_survive() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut lan = Lan::new();
    let (fake, mut n1, _server) = node_on_the_api(&runtime, &mut lan);
    let (ips, netns) = add_pods(&fake, &n1, &mut lan, &["client", "e1", "e2", "e3"]);
    for name in ["e1", "e2", "e3"] {
        serve_name_per_byte(&netns[name], name);
    }
    let last = |name: &str| -> u8 { ips[name].rsplit('.').next().unwrap().parse().unwrap() };
    fake.insert(&web_service()).unwrap();
    fake.insert(&web_slice(&[last("e1"), last("e2"), last("e3")]))
        .unwrap();
    wait_for_service_line(&n1, "web", ": 3 endpoints, ", 1);

    // Connections established before the change: 12, so that e1 and e2 hold some (all 12 on
    // e3 has probability 3^-12).
    let mut established: Vec<(TcpStream, String)> = (0..12)
        .map(|i| {
            open_to_cluster_ip(&netns["client"])
                .unwrap_or_else(|e| panic!("connection {i} before the change: {e}"))
        })
        .collect();
    assert!(
        established.iter().any(|(_, name)| name != "e3"),
        "all 12 connections reached e3"
    );

    // Load: new connections one after the other, each with the time it began and its answer.
    type Connections = Vec<(Instant, Result<String, String>)>;
    let stop = Arc::new(AtomicBool::new(false));
    let connections: Arc<Mutex<Connections>> = Arc::default();
    let load = {
        let (stop, connections) = (stop.clone(), connections.clone());
        let client = netns["client"].clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let began = Instant::now();
                let answer = open_to_cluster_ip(&client).map(|(_, name)| name);
                connections.lock().unwrap().push((began, answer));
            }
        })
    };
    let reached_e3 = || {
        connections
            .lock()
            .unwrap()
            .iter()
            .any(|(_, a)| a.as_deref() == Ok("e3"))
    };
    wait_until("a new connection answered by e3", reached_e3);

    // e3 leaves the slice. From the moment the agent's line is seen, no new connection may
    // reach e3 (or fail): not once.
    fake.insert(&web_slice(&[last("e1"), last("e2")])).unwrap();
    wait_for_service_line(&n1, "web", ": 2 endpoints, ", 1);
    let installed = Instant::now();
    let begun_after = || {
        connections
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, _)| *t >= installed)
            .count()
    };
    wait_until("1,000 new connections after the change", || {
        begun_after() >= 1000
    });
    stop.store(true, Ordering::Relaxed);
    load.join().expect("the load thread");
    let connections = connections.lock().unwrap();
    let before: Vec<_> = connections.iter().filter(|(t, _)| *t < installed).collect();
    let after: Vec<_> = connections
        .iter()
        .filter(|(t, _)| *t >= installed)
        .collect();
    assert!(
        before.iter().any(|(_, a)| a.as_deref() == Ok("e3")),
        "the load reached e3 before the change ({} connections): the probe would not see it",
        before.len()
    );
    assert!(
        after.len() >= 10,
        "only {} connections after the change",
        after.len()
    );
    for (i, (_, answer)) in after.iter().enumerate() {
        assert!(
            matches!(answer.as_deref(), Ok("e1" | "e2")),
            "new connection {i} of {} after the change: {answer:?}",
            after.len()
        );
    }

    // The established connections to e1 and e2 still reach them.
    for (stream, name) in established.iter_mut().filter(|(_, name)| name != "e3") {
        stream
            .write_all(b"?")
            .expect("send on an established connection");
        assert_eq!(read_name(stream).as_deref(), Ok(name.as_str()));
    }
    assert!(n1.stop_agent());
}

/// The Node's routes with the Service routes' protocol number (165), as `ip route` prints them.
fn service_routes(node: &TestNode) -> Vec<String> {
    node.exec(&["ip", "-4", "route", "show", "proto", "165"])
        .lines()
        .map(|l| l.trim().to_owned())
        .collect()
}

#[test]
fn with_proxy_all_the_node_itself_reaches_cluster_ips_through_the_datapath() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut lan = Lan::new();
    let (fake, mut n1, _server) =
        node_on_the_api_with(&runtime, &mut lan, "antreaProxy:\n  proxyAll: true\n");
    let (ips, netns) = add_pods(&fake, &n1, &mut lan, &["e1", "e2"]);
    serve_name(&netns["e1"], "e1");
    serve_name(&netns["e2"], "e2");
    let last = |name: &str| -> u8 { ips[name].rsplit('.').next().unwrap().parse().unwrap() };

    // No serviceCIDR in the config: the route covers the cluster IPs seen, widening as
    // Services come (10.96.0.1 alone, then with 10.96.0.10 and 10.96.0.20: 10.96.0.0/27).
    fake.insert(&kubernetes_service()).unwrap();
    wait_until("the route to the kubernetes Service", || {
        service_routes(&n1)
            .contains(&"10.96.0.1 via 169.254.0.253 dev antrea-gw0 onlink".to_owned())
    });
    fake.insert(&web_service()).unwrap();
    fake.insert(&web_slice(&[last("e1"), last("e2")])).unwrap();
    fake.insert(&quiet_service()).unwrap();
    // web's NodePort, external and load-balancer IPs add their /32s.
    wait_until("the discovered Service CIDR's route", || {
        let mut routes = service_routes(&n1);
        routes.sort();
        routes
            == [
                "10.96.0.0/27 via 169.254.0.253 dev antrea-gw0 onlink",
                "169.254.0.252 via 169.254.0.253 dev antrea-gw0 onlink",
                "169.254.0.253 dev antrea-gw0 scope link",
                "192.0.2.10 via 169.254.0.253 dev antrea-gw0 onlink",
                "192.0.2.20 via 169.254.0.253 dev antrea-gw0 onlink",
            ]
    });
    let neighbour = n1.exec(&["ip", "neigh", "show", "169.254.0.253", "dev", "antrea-gw0"]);
    assert_eq!(
        neighbour.trim(),
        "169.254.0.253 lladdr aa:bb:cc:dd:ee:ff PERMANENT"
    );
    assert!(logged(
        &n1,
        "for [10.96.0.0/27] (discovered from the Services' cluster IPs)"
    ));
    wait_until("the web Service's group with 2 buckets", || {
        select_groups(&n1).iter().any(|g| buckets(g) == 2)
    });

    // The Node's own stack (no Pod namespace): every connection to the cluster IP is answered,
    // by both endpoints over 24 connections.
    n1.ovs.appctl(&["revalidator/purge"]).unwrap();
    let web: BTreeSet<String> = cluster_ip_answers(&n1.netns, 24).into_iter().collect();
    assert_eq!(web, BTreeSet::from(["e1".to_owned(), "e2".to_owned()]));
    // The kubernetes Service's endpoints are on the host network: the Node's own address and
    // a machine on the LAN (a control plane elsewhere). The Node reaches both through the
    // cluster IP: its own API sees the virtual Service IP (its gateway address would be a
    // martian to it), the LAN's sees the Node IP (the host masquerades 169.254.0.253). A Pod
    // reaches them too.
    for (netns, address, name) in [
        (n1.netns.clone(), "10.10.0.11", "api"),
        (lan.underlay.clone(), "10.10.0.1", "lan-api"),
    ] {
        let listener = in_netns(&netns, || std::net::TcpListener::bind((address, 6443)))
            .unwrap_or_else(|e| panic!("bind {address}:6443: {e}"));
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let peer = stream.peer_addr().map(|p| p.ip().to_string());
                let _ = stream.write_all(format!("{name} {}", peer.unwrap_or_default()).as_bytes());
            }
        });
    }
    fake.insert(&api_servers_slice("kubernetes")).unwrap();
    wait_until("the kubernetes Service's group", || {
        n1.flows()
            .iter()
            .any(|f| f.contains("nat(dst=10.10.0.1:6443)"))
    });
    n1.ovs.appctl(&["revalidator/purge"]).unwrap();
    let through_the_host = BTreeSet::from([
        "api 169.254.0.253".to_owned(),
        "lan-api 10.10.0.11".to_owned(),
    ]);
    assert_eq!(answers(&n1.netns, "10.96.0.1:443", 24), through_the_host);
    let from_pod: BTreeSet<String> = answers(&netns["e1"], "10.96.0.1:443", 24);
    assert_eq!(
        from_pod,
        BTreeSet::from([
            format!("api {}", ips["e1"]),
            "lan-api 10.10.0.11".to_owned()
        ])
    );
    // From outside, a NodePort to the same host-network endpoints: every connection is
    // answered, the Node's API seeing the virtual Service IP (source-NATed to 169.254.0.253,
    // not to the gateway IP, a martian to the host), the LAN's seeing the Node IP.
    fake.insert(&api_node_port_service()).unwrap();
    fake.insert(&api_servers_slice("api-nodeport")).unwrap();
    wait_until("the api-nodeport NodePort rule", || {
        n1.exec(&["nft", "list", "ruleset"]).contains("tcp . 30443")
    });
    wait_until("the api-nodeport frontend", || {
        n1.flows()
            .iter()
            .any(|f| f.contains("nw_dst=169.254.0.252,tp_dst=30443"))
    });
    n1.ovs.appctl(&["revalidator/purge"]).unwrap();
    assert_eq!(
        answers(&lan.underlay, "10.10.0.11:30443", 24),
        through_the_host
    );
    // A Service without endpoints refuses the Node too, at once.
    let refused = ask_within(&n1.netns, "10.96.0.20:80", REFUSAL_WITHIN);
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("Connection refused")),
        "the Node's connection to the endpointless Service: {refused:?}"
    );

    assert!(n1.stop_agent());
}

/// Serves TCP port 8080 in `netns` on its own thread: each connection is answered with
/// `NAME PEER`, the address the endpoint saw the connection come from.
fn serve_name_and_peer(netns: &str, name: &'static str) {
    let listener = in_netns(netns, || std::net::TcpListener::bind(("0.0.0.0", 8080)))
        .unwrap_or_else(|e| panic!("bind 8080 in {netns}: {e}"));
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let peer = stream
                .peer_addr()
                .map(|p| p.ip().to_string())
                .unwrap_or_default();
            let _ = stream.write_all(format!("{name} {peer}").as_bytes());
        }
    });
}

/// The answers of `n` new connections from `netns` to `to`; every one must be answered.
fn answers(netns: &str, to: &str, n: usize) -> BTreeSet<String> {
    (0..n)
        .map(|i| ask(netns, to).unwrap_or_else(|e| panic!("connection {i} to {to}: {e}")))
        .collect()
}

/// `web` with `externalTrafficPolicy` `policy` (`Local` with `healthCheckNodePort` 32000).
fn web_service_with_policy(policy: &str) -> Service {
    let mut service = web_service();
    let spec = service.spec.as_mut().unwrap();
    spec.external_traffic_policy = Some(policy.to_owned());
    if policy == "Local" {
        spec.health_check_node_port = Some(32000);
    }
    service
}

/// The status line and body of `GET /` from `netns` to `to`, or why there is none.
fn http_get(netns: &str, to: &str) -> Result<(String, String), String> {
    let to: SocketAddr = to.parse().unwrap();
    in_netns(netns, || {
        let mut stream =
            TcpStream::connect_timeout(&to, ANSWER_TIMEOUT).map_err(|e| e.to_string())?;
        stream.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: n1\r\nConnection: close\r\n\r\n")
            .map_err(|e| e.to_string())?;
        let mut text = String::new();
        stream
            .read_to_string(&mut text)
            .map_err(|e| e.to_string())?;
        let status = text.lines().next().unwrap_or_default().to_owned();
        let body = text.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned();
        Ok((status, body))
    })
}

/// What the load balancer's health check of `web` at the Node gets: the status and the local
/// endpoint count.
fn web_health(lan: &Lan) -> (String, u64) {
    let (status, body) = http_get(&lan.underlay, "10.10.0.11:32000")
        .unwrap_or_else(|e| panic!("the health check of web: {e}"));
    let body: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{body}: {e}"));
    assert_eq!(
        body["service"],
        json!({"namespace": "default", "name": "web"})
    );
    (status, body["localEndpoints"].as_u64().unwrap())
}

#[test]
fn from_outside_node_ports_and_load_balancer_ips_reach_the_endpoints_snated_or_with_the_client() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut lan = Lan::new();
    let (fake, mut n1, _server) =
        node_on_the_api_with(&runtime, &mut lan, "antreaProxy:\n  proxyAll: true\n");
    let (ips, netns) = add_pods(&fake, &n1, &mut lan, &["client", "e1", "e2"]);
    serve_name_and_peer(&netns["e1"], "e1");
    serve_name_and_peer(&netns["e2"], "e2");
    let last = |name: &str| -> u8 { ips[name].rsplit('.').next().unwrap().parse().unwrap() };
    // The LAN's router sends the load-balancer IP to the Node.
    run(&[
        "ip",
        "-n",
        &lan.underlay,
        "route",
        "add",
        LOAD_BALANCER_IP,
        "via",
        "10.10.0.11",
    ]);

    fake.insert(&web_service()).unwrap();
    fake.insert(&web_slice(&[last("e1"), last("e2")])).unwrap();
    wait_until("the routes of the NodePort and outside IPs", || {
        let routes = service_routes(&n1);
        [
            "169.254.0.252 via 169.254.0.253 dev antrea-gw0 onlink",
            "192.0.2.10 via 169.254.0.253 dev antrea-gw0 onlink",
            "192.0.2.20 via 169.254.0.253 dev antrea-gw0 onlink",
        ]
        .iter()
        .all(|r| routes.contains(&(*r).to_owned()))
    });
    wait_until("the NodePort rule", || {
        n1.exec(&["nft", "list", "ruleset"]).contains("tcp . 30080")
    });
    wait_until("the NodePort line", || {
        logged(
            &n1,
            "NodePorts from outside and from the Node now enter the datapath: [TCP/30080]",
        )
    });
    n1.ovs.appctl(&["revalidator/purge"]).unwrap();

    // externalTrafficPolicy Cluster: from outside, the NodePort and the load-balancer IP are
    // answered by both endpoints, each seeing the gateway IP (the source NATed, as kube-proxy
    // masquerades it).
    let snated = BTreeSet::from(["e1 10.244.1.1".to_owned(), "e2 10.244.1.1".to_owned()]);
    assert_eq!(answers(&lan.underlay, "10.10.0.11:30080", 16), snated);
    assert_eq!(
        answers(&lan.underlay, &format!("{LOAD_BALANCER_IP}:80"), 16),
        snated
    );
    // The Node reaches its own NodePort too.
    let from_node = answers(&n1.netns, "10.10.0.11:30080", 16);
    assert_eq!(from_node.len(), 2, "{from_node:?}");

    // externalTrafficPolicy Local: the client's address is kept.
    fake.insert(&web_service_with_policy("Local")).unwrap();
    wait_until("the NodePort frontend without the source NAT", || {
        n1.flows().iter().any(|f| {
            f.contains("nw_dst=169.254.0.252,tp_dst=30080") && !f.contains("0x80000/0x80000")
        })
    });
    n1.ovs.appctl(&["revalidator/purge"]).unwrap();
    let kept = BTreeSet::from(["e1 10.10.0.1".to_owned(), "e2 10.10.0.1".to_owned()]);
    assert_eq!(answers(&lan.underlay, "10.10.0.11:30080", 16), kept);
    // The healthCheckNodePort answers with the local endpoints.
    wait_until("the health check server", || {
        logged(
            &n1,
            "health check server of Service default/web listening on port 32000: 2 local endpoints",
        )
    });
    assert_eq!(web_health(&lan), ("HTTP/1.1 200 OK".to_owned(), 2));
    assert_eq!(
        answers(&lan.underlay, &format!("{LOAD_BALANCER_IP}:80"), 16),
        kept
    );
    // A Pod of the Node reaching the NodePort through the host is short-circuited as the
    // Node's own traffic is: source-NATed, so the reply returns through the host.
    assert_eq!(answers(&netns["client"], "10.10.0.11:30080", 16), snated);

    // Only local endpoints serve traffic from outside: e1 now on another Node.
    let mut slice = web_slice(&[last("e1"), last("e2")]);
    slice.endpoints[0].node_name = Some("n2".to_owned());
    fake.insert(&slice).unwrap();
    wait_until("a second group, of the local endpoint", || {
        select_groups(&n1).len() == 2
    });
    n1.ovs.appctl(&["revalidator/purge"]).unwrap();
    assert_eq!(
        answers(&lan.underlay, "10.10.0.11:30080", 16),
        BTreeSet::from(["e2 10.10.0.1".to_owned()])
    );
    wait_until("the health check's new count", || {
        logged(
            &n1,
            "health check of Service default/web on port 32000: 1 local endpoints",
        )
    });
    assert_eq!(web_health(&lan), ("HTTP/1.1 200 OK".to_owned(), 1));
    // No local endpoint: traffic from outside is dropped (a timeout, not a refusal), while
    // Pods and the Node still reach both endpoints at the cluster IP.
    for endpoint in &mut slice.endpoints {
        endpoint.node_name = Some("n2".to_owned());
    }
    fake.insert(&slice).unwrap();
    wait_until("the dropping NodePort frontend", || {
        n1.flows()
            .iter()
            .any(|f| f.contains("nw_dst=169.254.0.252,tp_dst=30080") && f.ends_with("actions=drop"))
    });
    n1.ovs.appctl(&["revalidator/purge"]).unwrap();
    wait_until("the health check's count of none", || {
        logged(
            &n1,
            "health check of Service default/web on port 32000: 0 local endpoints",
        )
    });
    assert_eq!(
        web_health(&lan),
        ("HTTP/1.1 503 Service Unavailable".to_owned(), 0)
    );
    let dropped = ask(&lan.underlay, "10.10.0.11:30080");
    assert!(
        dropped.as_ref().is_err_and(|e| e.contains("timed out")),
        "{dropped:?}"
    );
    // The Node's own connections to the cluster IP come from the gateway IP, like the
    // source-NATed ones before and after them (docs/services.md, "The Node's own Service
    // connections share zone 65521").
    let inside: BTreeSet<String> = answers(&n1.netns, "10.96.0.10:80", 16)
        .into_iter()
        .map(|a| a.split(' ').next().unwrap().to_owned())
        .collect();
    assert_eq!(inside, BTreeSet::from(["e1".to_owned(), "e2".to_owned()]));
    // The Node's own traffic is short-circuited, as kube-proxy does: its NodePort and the
    // load-balancer IP reach both endpoints, each seeing the gateway IP (source-NATed).
    assert_eq!(answers(&n1.netns, "10.10.0.11:30080", 16), snated);
    assert_eq!(
        answers(&n1.netns, &format!("{LOAD_BALANCER_IP}:80"), 16),
        snated
    );
    assert_eq!(answers(&netns["client"], "10.10.0.11:30080", 16), snated);

    // Back to Cluster: no health check server.
    fake.insert(&web_service_with_policy("Cluster")).unwrap();
    wait_until("the health check server stopped", || {
        http_get(&lan.underlay, "10.10.0.11:32000").is_err_and(|e| e.contains("refused"))
    });
    // The Service gone: no NodePort rule is left and the port is the Node's again.
    fake.delete::<Service>("default", "web").unwrap();
    wait_until("the NodePort table gone", || {
        !n1.exec(&["nft", "list", "tables"])
            .contains("antrea-nodeport")
    });
    let after = ask(&lan.underlay, "10.10.0.11:30080");
    assert!(
        after.as_ref().is_err_and(|e| e.contains("refused")),
        "{after:?}"
    );
    assert!(n1.stop_agent());
}

#[test]
fn a_udp_endpoint_removed_while_the_agent_was_down_is_flushed_at_its_start() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut lan = Lan::new();
    let (fake, mut n1, _server) = node_on_the_api(&runtime, &mut lan);
    let (ips, netns) = add_pods(&fake, &n1, &mut lan, &["client", "e1", "e2"]);
    serve_udp_name(&netns["e1"], "e1");
    serve_udp_name(&netns["e2"], "e2");
    let last = |name: &str| -> u8 { ips[name].rsplit('.').next().unwrap().parse().unwrap() };
    fake.insert(&dns_service()).unwrap();
    fake.insert(&dns_slice(&[last("e1"), last("e2")])).unwrap();
    wait_for_service_line(&n1, "dns", ": 2 endpoints, ", 1);
    // The client keeps its port: its datagrams are one entry, DNATed to one endpoint.
    let dns = udp_client(&netns["client"], 40011, "10.96.0.30:53");
    let first = udp_ask(&dns).unwrap_or_else(|e| panic!("the first datagram: {e}"));
    let other = if first == "e1" { "e2" } else { "e1" };
    assert_eq!(
        udp_ask(&dns),
        Ok(first.clone()),
        "the entry keeps its endpoint"
    );

    // While the agent is down, the endpoint the client has leaves the Service (its Pod still
    // answers, so only a flush moves the client).
    assert!(n1.stop_agent());
    fake.insert(&dns_slice(&[last(other)])).unwrap();
    n1.start_and_wait_up();
    let flushed = format!(
        "Service default/dns: flushed UDP conntrack to {}:5353 (via 10.96.0.30:53)",
        ips[first.as_str()]
    );
    wait_until("the flush of the last run's entry", || {
        n1.log(2).lines().any(|l| l.trim_end().ends_with(&flushed))
    });
    assert_eq!(udp_ask(&dns).as_deref(), Ok(other));
    assert!(n1.stop_agent());
}
