//! Real packets through a ClusterIP: three Pods (network namespaces on veths into a userspace
//! `ovs-vswitchd` bridge with the Node's, Pods' and Service's flows) — a client and two
//! endpoints, each endpoint answering TCP connections with its name. The client's connections to
//! the cluster IP are answered by the endpoints, both of them in turn (the handshake itself
//! shows the reply was un-NATed: the client talks to the cluster IP only); under ClientIP
//! affinity always the same one, and the one left once the one it stuck to leaves; an endpoint reaches its own Service, itself included
//! (hairpin); after the Service drops one endpoint (and affinity), only the other answers; without endpoints nothing answers (the switch hands the packet to a
//! controller, and none here answers it: the agent's refusal is tested in
//! `agent/tests/kubernetes_services.rs`). Under `internalTrafficPolicy: Local` the cluster IP
//! reaches the local endpoint only and a load-balancer IP of the same Service both.
//!
//! Stale UDP conntrack: a client socket keeps its source port (as a DNS client does), so all
//! its datagrams are one conntrack entry. Once the Service drops the endpoint that entry was
//! DNATed to, the update's `NXT_CT_FLUSH`es delete it and the same 5-tuple's next datagram is
//! answered by the remaining endpoint, while (`dpctl/dump-conntrack`) the entries of a
//! connection to the remaining endpoint and of another Service to the removed one stay.
#![cfg(target_os = "linux")]

mod support;

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Duration;

use model::{
    Endpoint, EndpointConditions, Protocol, Service, ServiceKey, ServicePort, SessionAffinity,
    TrafficMode, TrafficPolicy,
};
use openflow::conn::{ConnOptions, Encoded};
use ovstest::Ovs;
use pipeline::Round;
use pipeline::cache::{Installer, Owner};
use pipeline::owners::{NODE, POD};
use pipeline::render::{ServiceRenderer, StaleUdp, node_flows, pod_flows};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket};
use tokio::runtime::Runtime;
use tokio::time::timeout;

use support::pod_netns::{PodNs, in_netns, pod, wait_for_ports};
use support::switch::Switch;
use support::{WEB_VIP, web_service};

/// A hang guard for a connection the datapath drops, not a performance bound.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves TCP 8080 in `pod`'s namespace: each connection gets the Pod's name and the address
/// the connection came from, `name from 10.244.1.10`.
fn answer_with_name(runtime: &Runtime, pod: &PodNs) {
    let listener = in_netns(&pod.name, || {
        runtime.block_on(TcpListener::bind((Ipv4Addr::UNSPECIFIED, 8080)))
    })
    .expect("bind 8080");
    let name = pod.pod.key.name.clone();
    runtime.spawn(async move {
        while let Ok((mut stream, peer)) = listener.accept().await {
            let answer = format!("{name} from {}", peer.ip());
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
}

/// A new connection from `client` to the cluster IP: the answerer's name, or `None` when no
/// handshake completes.
fn ask(runtime: &Runtime, client: &PodNs) -> Option<String> {
    ask_who_saw(runtime, client).map(|(name, _)| name)
}

/// A source port no connection of this test used before. The client closes last, so its side
/// of a connection keeps no TIME_WAIT and the kernel may pick a port again at once, while the
/// switch's conntrack still holds the old connection (DNATed to the endpoint of that time).
fn fresh_source_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(20_000);
    let port = NEXT.fetch_add(1, Ordering::Relaxed);
    assert!(port < 32_768, "out of fresh source ports");
    port
}

/// [`ask`], with the source address the answerer saw.
fn ask_who_saw(runtime: &Runtime, client: &PodNs) -> Option<(String, String)> {
    ask_who_saw_at(runtime, client, WEB_VIP)
}

/// [`ask_who_saw`] through Service address `vip`, port 80.
fn ask_who_saw_at(runtime: &Runtime, client: &PodNs, vip: Ipv4Addr) -> Option<(String, String)> {
    in_netns(&client.name, || {
        runtime.block_on(async {
            let to = SocketAddr::from((vip, 80));
            let socket = TcpSocket::new_v4().expect("a TCP socket");
            socket
                .bind(SocketAddr::from((
                    Ipv4Addr::UNSPECIFIED,
                    fresh_source_port(),
                )))
                .expect("bind a fresh source port");
            let mut stream = timeout(CONNECT_TIMEOUT, socket.connect(to))
                .await
                .ok()?
                .ok()?;
            assert_eq!(stream.peer_addr().unwrap(), to);
            let mut answer = String::new();
            timeout(CONNECT_TIMEOUT, stream.read_to_string(&mut answer))
                .await
                .expect("an answer after the handshake")
                .expect("read the answer");
            let (name, seen) = answer
                .split_once(" from ")
                .unwrap_or_else(|| panic!("a malformed answer {answer:?}"));
            Some((name.to_owned(), seen.to_owned()))
        })
    })
}

/// Installs `service`, then flushes the datapath's flow cache (the switch has committed the
/// change, but megaflows cached before it stay until a revalidator pass, and the next packet
/// must see the new tables), then the UDP conntrack entries the update left stale, as the
/// agent's datapath does; returns those.
fn apply(
    runtime: &Runtime,
    sw: &Switch,
    renderer: &mut ServiceRenderer,
    installer: &Installer,
    service: &Service,
) -> Vec<StaleUdp> {
    let update = renderer.upsert(service).expect("a valid Service");
    runtime
        .block_on(installer.apply(update.change))
        .expect("install the Service");
    renderer.commit(update.record);
    sw.ovs
        .appctl(&["revalidator/purge"])
        .expect("purge the datapath flows");
    let flushes: Vec<Encoded> = update
        .stale_udp
        .iter()
        .map(|stale| Encoded::new(&stale.ct_flush()).expect("a flush fits a message"))
        .collect();
    runtime
        .block_on(sw.conn.batch(&flushes))
        .expect("the switch takes the flushes");
    update.stale_udp
}

/// A switch with the Node's flows and Pods `client` (`10.244.1.10`), `a` (`.11`) and `b`
/// (`.12`) with theirs, the Pods' names prefixed with `prefix`.
fn three_pods(runtime: &Runtime, prefix: &str) -> (Switch, [PodNs; 3], Installer) {
    let sw = runtime.block_on(Switch::with_pods(None, ConnOptions::default(), &[]));
    let ovs = &sw.ovs;
    let pods = [("client", 10), ("a", 11), ("b", 12)]
        .map(|(name, last)| pod(ovs, &format!("{prefix}{name}"), last));
    wait_for_ports(ovs, &pods.each_ref());
    let node = support::node(TrafficMode::NoEncap);
    let installer = sw.installer(Round::FIRST);
    runtime.block_on(async {
        installer
            .replace(Owner::from(NODE), node_flows(&node))
            .await
            .expect("node flows");
        for p in &pods {
            installer
                .replace(
                    Owner::new(POD, &p.pod.key),
                    pod_flows(&node, &p.pod, p.ofport),
                )
                .await
                .expect("pod flows");
        }
    });
    (sw, pods, installer)
}

#[test]
fn a_client_pod_reaches_the_endpoints_through_the_cluster_ip() {
    let runtime = Runtime::new().unwrap();
    let (sw, [client, a, b], installer) = three_pods(&runtime, "");
    answer_with_name(&runtime, &a);
    answer_with_name(&runtime, &b);
    let mut renderer = ServiceRenderer::new();

    // Both endpoints answer, and nothing else does. Each connection has a new source port, so
    // the group's hash spreads them; 64 connections all landing on one endpoint would mean it
    // does not.
    apply(
        &runtime,
        &sw,
        &mut renderer,
        &installer,
        &web_service(&[a.pod.ip, b.pod.ip]),
    );
    let mut answerers = BTreeSet::new();
    for _ in 0..64 {
        let name = ask(&runtime, &client).expect("an endpoint answers the cluster IP");
        assert!(name == "a" || name == "b", "answered by {name:?}");
        answerers.insert(name);
        if answerers.len() == 2 {
            break;
        }
    }
    assert_eq!(answerers.len(), 2, "only {answerers:?} answered");

    // Hairpin: endpoint a reaches the cluster IP too, answered by b and by itself. Its own
    // answer saw the gateway IP as the source (a packet from its own address would be
    // dropped), and both directions left through the port they came in on.
    let gateway = support::node(TrafficMode::NoEncap).gateway_ip.to_string();
    let mut from_a = BTreeSet::new();
    for _ in 0..64 {
        let (name, seen) = ask_who_saw(&runtime, &a).expect("a reaches its own Service");
        match name.as_str() {
            "a" => assert_eq!(seen, gateway, "a's own answer saw {seen}"),
            "b" => assert_eq!(seen, a.pod.ip.to_string(), "b saw {seen}"),
            other => panic!("answered by {other:?}"),
        }
        from_a.insert(name);
        if from_a.len() == 2 {
            break;
        }
    }
    assert_eq!(from_a.len(), 2, "a's connections reached only {from_a:?}");

    // ClientIP affinity: every new connection of the client reaches the endpoint its first
    // one reached.
    let mut sticky = web_service(&[a.pod.ip, b.pod.ip]);
    sticky.session_affinity = SessionAffinity::ClientIp {
        timeout_seconds: 600,
    };
    apply(&runtime, &sw, &mut renderer, &installer, &sticky);
    // With the revalidators paused, the datapath keeps every flow it cached: a later connection
    // that matched the first one's cached flow (translated before its learned flow existed)
    // would be hashed anew, to either endpoint. The affinity group hashes while translating,
    // so that flow matches the first connection's source port only and each new connection is
    // translated after the learned flow.
    sw.ovs
        .appctl(&["revalidator/pause"])
        .expect("pause the revalidators");
    let first = ask(&runtime, &client).expect("an endpoint answers");
    for _ in 0..16 {
        assert_eq!(ask(&runtime, &client).as_ref(), Some(&first));
    }
    sw.ovs
        .appctl(&["revalidator/resume"])
        .expect("resume the revalidators");

    // Affinity kept, and the endpoint the client sticks to leaves: its learning flow goes,
    // taking the client's learned flow with it, so the client's new connections are balanced
    // again, to the endpoint left, instead of being sent to one that is gone.
    let (gone, left) = if first == "a" { (&a, &b) } else { (&b, &a) };
    let mut shrunk = web_service(&[left.pod.ip]);
    shrunk.session_affinity = sticky.session_affinity;
    apply(&runtime, &sw, &mut renderer, &installer, &shrunk);
    let learned = sw
        .ovs
        .ofctl(&[
            "dump-flows",
            "{mgmt:br0}",
            &format!(
                "table={}",
                pipeline::layout::TableGraph::standard()
                    .id(pipeline::layout::tables::SESSION_AFFINITY)
            ),
        ])
        .expect("dump the learned flows");
    let gone_hex = format!("{:#x}", u32::from(gone.pod.ip));
    assert!(
        !learned.contains(&gone_hex),
        "a learned flow still sends to the removed endpoint:\n{learned}"
    );
    sw.ovs
        .appctl(&["revalidator/purge"])
        .expect("purge the datapath flows");
    for _ in 0..8 {
        assert_eq!(
            ask(&runtime, &client).as_deref(),
            Some(&left.pod.key.name[..])
        );
    }

    // Affinity off and endpoint a gone: new connections reach b only.
    apply(
        &runtime,
        &sw,
        &mut renderer,
        &installer,
        &web_service(&[b.pod.ip]),
    );
    for _ in 0..8 {
        assert_eq!(ask(&runtime, &client).as_deref(), Some("b"));
    }

    // a as the only endpoint: every connection of a to its Service is hairpin.
    apply(
        &runtime,
        &sw,
        &mut renderer,
        &installer,
        &web_service(&[a.pod.ip]),
    );
    for _ in 0..8 {
        assert_eq!(
            ask_who_saw(&runtime, &a),
            Some(("a".to_owned(), gateway.clone()))
        );
    }

    // No endpoint: the packet goes to a controller; none here refuses it, so nothing answers.
    apply(&runtime, &sw, &mut renderer, &installer, &web_service(&[]));
    assert_eq!(ask(&runtime, &client), None);
}

/// `internalTrafficPolicy: Local` (kube-proxy's semantics): the cluster IP takes the local
/// endpoint only, while a load-balancer IP of the same Service takes every endpoint, as
/// kube-proxy sends Pod traffic to it through the cluster chain. Endpoint b is given as on
/// another Node (the datapath reaches it here all the same).
#[test]
fn under_internal_policy_local_the_cluster_ip_keeps_to_local_endpoints_and_a_load_balancer_ip_does_not()
 {
    let runtime = Runtime::new().unwrap();
    let (sw, [client, a, b], installer) = three_pods(&runtime, "itp-");
    answer_with_name(&runtime, &a);
    answer_with_name(&runtime, &b);
    let mut renderer = ServiceRenderer::new();
    let lb_ip = Ipv4Addr::new(192, 0, 2, 10);
    let mut service = web_service(&[a.pod.ip, b.pod.ip]);
    service.internal_traffic_policy = TrafficPolicy::Local;
    service.load_balancer_ips = vec![lb_ip];
    service.ports[0].endpoints[1].is_local = false;
    apply(&runtime, &sw, &mut renderer, &installer, &service);

    for _ in 0..16 {
        let answer = ask_who_saw_at(&runtime, &client, WEB_VIP).map(|(name, _)| name);
        assert_eq!(
            answer.as_deref(),
            Some("itp-a"),
            "the cluster IP: the local endpoint only"
        );
    }
    let mut answerers = BTreeSet::new();
    for _ in 0..64 {
        let (name, seen) = ask_who_saw_at(&runtime, &client, lb_ip)
            .expect("an endpoint answers the load-balancer IP");
        assert!(name == "itp-a" || name == "itp-b", "answered by {name:?}");
        assert_eq!(seen, client.pod.ip.to_string(), "no source NAT for Pods");
        answerers.insert(name);
        if answerers.len() == 2 {
            break;
        }
    }
    assert_eq!(
        answerers.len(),
        2,
        "only {answerers:?} answered the load-balancer IP"
    );
}

/// Serves UDP 5353 in `pod`'s namespace: each datagram is answered with the Pod's name.
fn answer_udp_with_name(runtime: &Runtime, pod: &PodNs) {
    let socket = in_netns(&pod.name, || {
        runtime.block_on(tokio::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 5353)))
    })
    .expect("bind UDP 5353");
    let name = pod.pod.key.name.clone();
    runtime.spawn(async move {
        let mut buf = [0u8; 64];
        while let Ok((_, from)) = socket.recv_from(&mut buf).await {
            let _ = socket.send_to(name.as_bytes(), from).await;
        }
    });
}

/// A UDP socket of `client` on source port `port`, connected to `to`: every datagram it sends
/// has the same 5-tuple, as a DNS client's that keeps its port.
fn udp_client(client: &PodNs, port: u16, to: SocketAddr) -> UdpSocket {
    in_netns(&client.name, || {
        let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, port)).expect("bind the client port");
        socket.connect(to).expect("connect");
        socket
            .set_read_timeout(Some(CONNECT_TIMEOUT))
            .expect("set a timeout");
        socket
    })
}

/// One datagram from `socket`: the answerer's name, or `None` when nothing answers.
fn ask_udp(socket: &UdpSocket) -> Option<String> {
    socket.send(b"who").expect("send");
    let mut buf = [0u8; 64];
    let n = socket.recv(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// `default/NAME` on `vip` UDP 53 → port 5353 of `endpoints`.
fn dns_service(name: &str, vip: Ipv4Addr, endpoints: &[Ipv4Addr]) -> Service {
    Service {
        key: ServiceKey::new("default", name),
        cluster_ips: vec![vip],
        ports: vec![ServicePort {
            name: "dns".into(),
            protocol: Protocol::Udp,
            port: 53,
            node_port: None,
            endpoints: endpoints
                .iter()
                .map(|&ip| Endpoint {
                    ip,
                    port: 5353,
                    conditions: EndpointConditions::READY,
                    node: None,
                    is_local: true,
                })
                .collect(),
        }],
        ..web_service(&[])
    }
}

/// The zone-65520 conntrack entries of the switch (`dpctl/dump-conntrack`), one a line.
fn conntrack(ovs: &Ovs) -> Vec<String> {
    ovs.appctl(&["dpctl/dump-conntrack", "zone=65520"])
        .expect("dump conntrack")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Whether `entries` has a UDP entry from `client` port `sport` to `vip` port 53 whose replies
/// come from `endpoint` port 5353.
fn has_entry(entries: &[String], sport: u16, vip: Ipv4Addr, endpoint: Ipv4Addr) -> bool {
    let orig = format!("dst={vip},sport={sport},dport=53)");
    let reply = format!("reply=(src={endpoint},dst=10.244.1.10,sport=5353,dport={sport})");
    entries
        .iter()
        .any(|e| e.starts_with("udp,") && e.contains(&orig) && e.contains(&reply))
}

#[test]
fn a_removed_udp_endpoint_s_conntrack_is_flushed_and_its_client_moves_on() {
    const DNS_VIP: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 53);
    const OTHER_VIP: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 54);
    let runtime = Runtime::new().unwrap();
    let (sw, [client, a, b], installer) = three_pods(&runtime, "u");
    let ovs = &sw.ovs;
    answer_udp_with_name(&runtime, &a);
    answer_udp_with_name(&runtime, &b);
    let (a_ip, b_ip) = (a.pod.ip, b.pod.ip);
    let mut renderer = ServiceRenderer::new();

    // `dns` has only a: the client's socket on port 40001 is answered by a. `other` (another
    // cluster IP) has a as well, for the client's port 40003.
    let dns_only_a = dns_service("dns", DNS_VIP, &[a_ip]);
    assert!(apply(&runtime, &sw, &mut renderer, &installer, &dns_only_a).is_empty());
    let other = dns_service("other", OTHER_VIP, &[a_ip]);
    assert!(apply(&runtime, &sw, &mut renderer, &installer, &other).is_empty());
    let stale = udp_client(&client, 40001, SocketAddr::from((DNS_VIP, 53)));
    assert_eq!(ask_udp(&stale).as_deref(), Some("ua"));
    let to_other = udp_client(&client, 40003, SocketAddr::from((OTHER_VIP, 53)));
    assert_eq!(ask_udp(&to_other).as_deref(), Some("ua"));

    // a and b: nothing is stale. The first source port from 40100 up that b answers is a
    // connection to a surviving endpoint (the group hashes each new one).
    let both = dns_service("dns", DNS_VIP, &[a_ip, b_ip]);
    assert!(apply(&runtime, &sw, &mut renderer, &installer, &both).is_empty());
    assert_eq!(ask_udp(&stale).as_deref(), Some("ua"), "the entry keeps a");
    let surviving = (40100..40164)
        .map(|port| {
            (
                port,
                udp_client(&client, port, SocketAddr::from((DNS_VIP, 53))),
            )
        })
        .find(|(_, socket)| ask_udp(socket).as_deref() == Some("ub"));
    let (surviving_port, surviving) = surviving.expect("b answers one of 64 new source ports");

    // a leaves `dns`: its entries through DNS_VIP are flushed, and only those.
    let removed = apply(
        &runtime,
        &sw,
        &mut renderer,
        &installer,
        &dns_service("dns", DNS_VIP, &[b_ip]),
    );
    assert_eq!(
        removed.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["10.244.1.11:5353 (via 10.96.0.53:53)"]
    );
    let entries = conntrack(ovs);
    assert!(
        !has_entry(&entries, 40001, DNS_VIP, a_ip),
        "the stale entry is still there: {entries:#?}"
    );
    assert!(
        has_entry(&entries, surviving_port, DNS_VIP, b_ip),
        "the surviving endpoint's entry was flushed: {entries:#?}"
    );
    assert!(
        has_entry(&entries, 40003, OTHER_VIP, a_ip),
        "the other Service's entry was flushed: {entries:#?}"
    );
    // The same 5-tuple now reaches b; the others are where they were.
    assert_eq!(ask_udp(&stale).as_deref(), Some("ub"));
    assert_eq!(ask_udp(&surviving).as_deref(), Some("ub"));
    assert_eq!(ask_udp(&to_other).as_deref(), Some("ua"));

    // `other` goes whole: its frontend's entries are flushed.
    let gone = renderer.remove(&other.key);
    runtime
        .block_on(installer.apply(gone.change))
        .expect("remove the Service");
    renderer.commit(gone.record);
    let flushes: Vec<Encoded> = gone
        .stale_udp
        .iter()
        .map(|stale| Encoded::new(&stale.ct_flush()).unwrap())
        .collect();
    runtime.block_on(sw.conn.batch(&flushes)).unwrap();
    let entries = conntrack(ovs);
    assert!(
        !has_entry(&entries, 40003, OTHER_VIP, a_ip),
        "the removed Service's entry is still there: {entries:#?}"
    );
    assert!(has_entry(&entries, 40001, DNS_VIP, b_ip), "{entries:#?}");
}
