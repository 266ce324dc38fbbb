//! Issue 11's benchmark (c): the rate of new TCP connections from a client Pod through a
//! cluster IP, against the same endpoint Pod addressed directly, with 1 Service installed and
//! with 10,000 (the Services of `benches/services.rs` added): the dispatch cost must not grow
//! with the number of Services. Real packets: two Pods (network namespaces on veths) on a
//! userspace `ovs-vswitchd` with the Node's, the Pods' and the Services' flows.
//!
//! Each connection is a handshake, one byte from the server, and the close (the client's
//! first); the client makes them one after the other. Direct and cluster-IP rounds alternate (`REPS` rounds of each,
//! default 5, `CONNS` connections a round, default 1,000). Prints each round's rate and the
//! median ratio cluster IP / direct. Linux only; needs root and Open vSwitch. Not run in CI.
//! Run with `cargo bench -p pipeline --bench connections`.

#[cfg(target_os = "linux")]
#[path = "../tests/support/mod.rs"]
mod support;

#[cfg(target_os = "linux")]
#[path = "common/measure.rs"]
mod measure;

#[cfg(target_os = "linux")]
#[path = "common/scale.rs"]
mod scale;

#[cfg(target_os = "linux")]
fn main() {
    bench::run();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("connections: Linux only (real packets through Open vSwitch)");
}

#[cfg(target_os = "linux")]
mod bench {
    use std::net::{Ipv4Addr, SocketAddr};
    use std::time::Instant;

    use model::{
        Endpoint, EndpointConditions, Protocol, Service, ServiceKey, ServicePort, SessionAffinity,
        TrafficMode, TrafficPolicy,
    };
    use openflow::conn::ConnOptions;
    use pipeline::Round;
    use pipeline::cache::{Change, Owner};
    use pipeline::owners::{NODE, POD};
    use pipeline::render::{ServiceRenderer, node_flows, pod_flows, service_owner};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::runtime::Runtime;

    use super::measure::median;
    use super::scale::service;
    use super::support::node;
    use super::support::pod_netns::{self, PodNs, in_netns, pod, wait_for_ports};
    use super::support::switch::Switch;

    /// The measured Service's cluster IP (outside the generated Services' 10.96.0.0/16).
    const CLUSTER_IP: Ipv4Addr = Ipv4Addr::new(10, 97, 0, 10);
    const SERVER: Ipv4Addr = Ipv4Addr::new(10, 244, 1, 11);

    /// `bench/web`: `CLUSTER_IP`:80 to the server Pod's 8080.
    fn web() -> Service {
        Service {
            key: ServiceKey::new("bench", "web"),
            cluster_ips: vec![CLUSTER_IP],
            external_ips: Vec::new(),
            load_balancer_ips: Vec::new(),
            ports: vec![ServicePort {
                name: "http".to_owned(),
                protocol: Protocol::Tcp,
                port: 80,
                node_port: None,
                endpoints: vec![Endpoint {
                    ip: SERVER,
                    port: 8080,
                    conditions: EndpointConditions {
                        ready: true,
                        serving: true,
                        terminating: false,
                    },
                    node: Some("n1".to_owned()),
                    is_local: true,
                }],
            }],
            session_affinity: SessionAffinity::None,
            external_traffic_policy: TrafficPolicy::Cluster,
            internal_traffic_policy: TrafficPolicy::Cluster,
            health_check_node_port: None,
        }
    }

    /// Serves TCP 8080 in `server`'s namespace: one byte, then the close once the client
    /// closed (the client closes first, so its side keeps the TIME_WAIT and no source port is
    /// reused while the switch's conntrack still holds the old connection).
    fn serve(rt: &Runtime, server: &PodNs) {
        let listener = in_netns(&server.name, || {
            rt.block_on(TcpListener::bind((Ipv4Addr::UNSPECIFIED, 8080)))
        })
        .expect("bind 8080");
        rt.spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let _ = stream.write_all(b"x").await;
                    let mut rest = Vec::new();
                    let _ = stream.read_to_end(&mut rest).await;
                });
            }
        });
    }

    /// `n` connections from `client` to `to`, one after the other; connections per second.
    fn rate(rt: &Runtime, client: &PodNs, to: SocketAddr, n: usize) -> f64 {
        in_netns(&client.name, || {
            rt.block_on(async {
                let start = Instant::now();
                for i in 0..n {
                    let mut stream = TcpStream::connect(to)
                        .await
                        .unwrap_or_else(|e| panic!("connection {i} to {to}: {e}"));
                    let mut answer = [0u8; 1];
                    stream
                        .read_exact(&mut answer)
                        .await
                        .unwrap_or_else(|e| panic!("connection {i} to {to}: {e}"));
                    assert_eq!(&answer, b"x", "connection {i} to {to}");
                }
                n as f64 / start.elapsed().as_secs_f64()
            })
        })
    }

    /// Alternating rounds of direct and cluster-IP connections; prints each and returns the
    /// median ratio.
    fn measure(rt: &Runtime, client: &PodNs, what: &str, reps: usize, conns: usize) -> f64 {
        let direct = SocketAddr::from((SERVER, 8080));
        let cluster = SocketAddr::from((CLUSTER_IP, 80));
        println!("\n{what}: {reps} rounds of {conns} connections each way\n");
        println!("| round | direct (conn/s) | cluster IP (conn/s) | cluster IP / direct |");
        println!("|---:|---:|---:|---:|");
        let mut ratios = Vec::new();
        for round in 1..=reps {
            let (d, c) = if round % 2 == 1 {
                let d = rate(rt, client, direct, conns);
                (d, rate(rt, client, cluster, conns))
            } else {
                let c = rate(rt, client, cluster, conns);
                (rate(rt, client, direct, conns), c)
            };
            println!("| {round} | {d:.0} | {c:.0} | {:.2} |", c / d);
            ratios.push(c / d);
        }
        let ratio = median(ratios);
        println!("\n{what}: median ratio {ratio:.2}");
        ratio
    }

    pub fn run() {
        let env = |name: &str, default: usize| -> usize {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let (reps, conns, count) = (env("REPS", 5), env("CONNS", 1_000), env("SERVICES", 10_000));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let sw = rt.block_on(Switch::with_pods(None, ConnOptions::default(), &[]));
        let prefix = format!("cb{}", std::process::id() % 10_000);
        let client = pod(&sw.ovs, &format!("{prefix}c"), 10);
        let server = pod(&sw.ovs, &format!("{prefix}s"), 11);
        wait_for_ports(&sw.ovs, &[&client, &server]);
        // Room for every connection's source port (each stays in TIME_WAIT on the client).
        pod_netns::run(&[
            "ip",
            "netns",
            "exec",
            &client.name,
            "sysctl",
            "-qw",
            "net.ipv4.ip_local_port_range=1024 65000",
        ]);
        let node = node(TrafficMode::NoEncap);
        let installer = sw.installer(Round::FIRST);
        let mut renderer = ServiceRenderer::new();
        let web = web();
        let update = renderer.upsert(&web).expect("a valid Service");
        let mut change = Change::new()
            .replace(Owner::from(NODE), node_flows(&node))
            .replace(service_owner(&web.key), update.objects());
        for p in [&client, &server] {
            change = change.replace(
                Owner::new(POD, &p.pod.key),
                pod_flows(&node, &p.pod, p.ofport),
            );
        }
        rt.block_on(installer.apply(change)).expect("install");
        renderer.commit(update.record);
        serve(&rt, &server);
        // Warm-up: ARP, the first upcalls.
        rate(&rt, &client, SocketAddr::from((CLUSTER_IP, 80)), 50);

        let one = measure(&rt, &client, "1 Service", reps, conns);
        let mut change = Change::new();
        for i in 0..count.saturating_sub(1) {
            let service = service(i, 0);
            let update = renderer.upsert(&service).expect("a valid Service");
            change = change.replace(service_owner(&service.key), update.objects());
            renderer.commit(update.record);
        }
        rt.block_on(installer.apply(change))
            .expect("install the Services");
        let flows = sw.dump().len();
        println!("\n{count} Services installed: the switch holds {flows} flows");
        rate(&rt, &client, SocketAddr::from((CLUSTER_IP, 80)), 50);
        let many = measure(&rt, &client, &format!("{count} Services"), reps, conns);
        println!(
            "\n(c) cluster IP / direct, median: {one:.2} with 1 Service, {many:.2} with {count} (goal: at least 0.9 in both)"
        );
    }
}
