//! Issue 11's benchmark (b) through the agent's proxy path: one endpoint change among 10,000
//! Services (two TCP ports, one 10-endpoint EndpointSlice each), from the API server's write to
//! the switch's confirmation, with the flow and group mods sent.
//!
//! The Services and slices are in the fake API server (`fakeapi`, over TCP on loopback); the
//! agent's [`SharedReflectors`] list and watch them; [`ProxyController::first_round`] translates
//! them and [`OvsDatapath`] installs them as bring-up's first round does, into a real
//! `ovs-vswitchd` (userspace datapath, started by `ovstest`). Then, `REPS` times, one endpoint
//! address of one Service's slice is replaced in the fake, and the time is taken from that
//! write to the reflector's wake-up (the event applied to the store), then through
//! [`ProxyController::sync`] (the changed keys translated, the Service's update sent as one
//! bundle and confirmed, then the datapath's revalidation waited for, as the agent does) to
//! its return; the switch's confirmation is that time less what the datapath reports it spent
//! settling after it (`ProxySync::settled`). Printed with p50/p99, beside baselines measured
//! in the same run:
//!
//! - the datapath alone: [`Datapath::update_service`] with the changed Service value (what
//!   the sync costs past the translation) to the confirmation, then
//!   [`Datapath::settle_services`];
//! - the same kind of change on a third Service settled as before the revalidation nudges:
//!   two `revalidator/wait` calls alone;
//! - the translation of the same change by its key (what a wake-up does now) against a walk
//!   of both whole stores (what every wake-up did before, and a re-list does now).
//!
//! After the changes, the switch's groups are read back: the last changed Service's groups hold
//! its new endpoint.
//!
//! Linux only; needs root and Open vSwitch. The measuring process runs inside the private
//! switch's network namespace (`ip netns exec`), so the Service routes and NodePort rules the
//! first sync sets (none, proxyAll off) touch that namespace only. Run:
//! `cargo bench -p agent --bench proxy_change`; `REPS` (default 100), `SERVICES` (default
//! 10,000), `BURST` (default 20).
//!
//! It also prints (d), the memory of the proxy state: the process's RSS around the first
//! round's translation and install, against the growth of the reflectors' stores of the same
//! objects. Last, a burst: `BURST` Services' slices are replaced at once and the syncs they wake install
//! and settle them (once per sync), against the same number of other Services each updated and
//! settled in turn through the datapath (what every sync did per Service before).

#[cfg(target_os = "linux")]
fn main() {
    match std::env::var(bench::OVS_DIR) {
        Ok(dir) => bench::measure(&dir),
        Err(_) => bench::orchestrate(),
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("proxy_change: Linux only (installs into Open vSwitch)");
}

#[cfg(target_os = "linux")]
mod bench {
    use std::collections::BTreeMap;
    use std::net::Ipv4Addr;
    use std::process::Command;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use agent::cluster::ObjectKey;
    use agent::config::Platform;
    use agent::controller::incremental::{ObjectChanges, Translations, key_of};
    use agent::controller::{FromOutside, NetworkPolicyController, ProxyController, ServiceCidr};
    use agent::datapath::Datapath;
    use agent::datapath::ovs::{OvsDatapath, OvsOptions};
    use agent::flows::Flows;
    use agent::kubernetes::connection::{ApiAccess, connect};
    use agent::kubernetes::{Keep, Kinds, SharedReflectors};
    use agent::ovs::OvsBridge;
    use agent::ovs::unixctl::VswitchdControl;
    use fakeapi::FakeApiServer;
    use k8s_openapi::api::core::v1::Service as ApiService;
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    use model::{NodeNetwork, ServiceKey, TrafficMode, TunnelType};
    use ovstest::Ovs;
    use serde_json::{Value, json};

    /// Set in the measuring child: the private switch's directory.
    pub const OVS_DIR: &str = "PROXY_CHANGE_OVS_DIR";
    const BRIDGE: &str = "br-int";
    const NODE: &str = "n1";
    const NAMESPACES: usize = 100;
    const ENDPOINTS: usize = 10;

    fn env_count(name: &str, default: usize) -> usize {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    /// Starts the private switch and runs the measuring child in its network namespace.
    pub fn orchestrate() {
        let ovs = Ovs::start().expect("start ovsdb-server and ovs-vswitchd (root, Open vSwitch)");
        ovs.add_bridge(BRIDGE).expect("add the bridge");
        let netns = ovs.netns().expect("the switch's network namespace");
        let status = Command::new("ip")
            .args(["netns", "exec", netns])
            .arg(std::env::current_exe().expect("this benchmark's path"))
            .env(OVS_DIR, ovs.dir())
            .status()
            .expect("run the measuring child");
        assert!(status.success(), "the measuring child failed");
    }

    fn service(i: usize) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": format!("app-{i}"), "namespace": format!("ns-{}", i % NAMESPACES),
                         "labels": {"app": format!("app-{i}")}},
            "spec": {"type": "ClusterIP",
                "clusterIP": format!("10.96.{}.{}", i / 250, 1 + i % 250),
                "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
                          {"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"}]},
        })
    }

    fn endpoint_ip(i: usize, e: usize) -> String {
        format!("10.{}.{}.{}", 128 + e, i / 256 % 256, i % 256)
    }

    /// Service `i`'s slice, its first endpoint at `first` when given.
    fn endpoint_slice(i: usize, first: Option<Ipv4Addr>) -> Value {
        let endpoints: Vec<Value> = (0..ENDPOINTS)
            .map(|e| {
                let address = match (e, first) {
                    (0, Some(ip)) => ip.to_string(),
                    _ => endpoint_ip(i, e),
                };
                json!({
                    "addresses": [address],
                    "conditions": {"ready": true, "serving": true, "terminating": false},
                    "nodeName": format!("node-{}", (i + e) % 100),
                })
            })
            .collect();
        json!({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {
                "name": format!("app-{i}-abcde"), "namespace": format!("ns-{}", i % NAMESPACES),
                "labels": {"kubernetes.io/service-name": format!("app-{i}")},
            },
            "addressType": "IPv4",
            "endpoints": endpoints,
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"},
                      {"name": "https", "port": 8443, "protocol": "TCP"}],
        })
    }

    /// The address rep `rep` gives the first endpoint of the Service it changes.
    fn new_endpoint(rep: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 200, (rep / 256) as u8, (rep % 256) as u8)
    }

    /// Service `app-K`'s translation in `direct`, each port's first endpoint moved to
    /// `10.NET.(n / 256).(n % 256)`: a change given to the datapath alone, with no API write.
    fn first_endpoints_moved(
        direct: &mut BTreeMap<ServiceKey, model::Service>,
        k: usize,
        net: u8,
        n: usize,
    ) -> &model::Service {
        let key = ServiceKey::new(format!("ns-{}", k % NAMESPACES), format!("app-{k}"));
        let service = direct.get_mut(&key).expect("a translated Service");
        for port in &mut service.ports {
            port.endpoints[0].ip = Ipv4Addr::new(10, net, (n / 256) as u8, (n % 256) as u8);
            port.endpoints.sort_by_key(|e| e.ip);
        }
        service
    }

    /// This process's resident memory, MiB (`VmRSS` of /proc/self/status).
    fn rss_mib() -> f64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/self/status");
        kib / 1024.0
    }

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1e3
    }

    /// The `q` quantile (nearest rank) of `values`.
    fn quantile(values: &[f64], q: f64) -> f64 {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    /// One printed row: p50 and p99 of `values` (ms, or a count).
    fn row(what: &str, values: &[f64], unit: &str) {
        println!(
            "| {what} | {:.2} | {:.2} | {:.2} | {unit} |",
            quantile(values, 0.5),
            quantile(values, 0.99),
            values.iter().copied().fold(f64::NAN, f64::max),
        );
    }

    /// Load average and machine, for the record.
    fn describe_machine() -> String {
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let cpus = std::thread::available_parallelism().map_or(0, usize::from);
        format!(
            "{cpus} CPUs, load average {}",
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        )
    }

    /// The measuring child, inside the switch's network namespace.
    pub fn measure(dir: &str) {
        let reps = env_count("REPS", 100);
        let count = env_count("SERVICES", 10_000);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        runtime.block_on(run(dir, reps, count));
    }

    async fn run(dir: &str, reps: usize, count: usize) {
        println!(
            "proxy_change: {count} Services x 2 TCP ports x {ENDPOINTS} endpoints, \
             {reps} repetitions; {}",
            describe_machine()
        );
        let fake = FakeApiServer::builder().record_requests(false).build();
        let services_resource = fake.resource_of::<ApiService>().expect("Services");
        let slices_resource = fake.resource_of::<EndpointSlice>().expect("EndpointSlices");
        for i in 0..count {
            fake.insert_json(&services_resource, service(i))
                .expect("insert a Service");
            fake.insert_json(&slices_resource, endpoint_slice(i, None))
                .expect("insert an EndpointSlice");
        }
        let server = fake.serve_tcp().await.expect("serve the fake over TCP");
        let kubeconfig = std::path::Path::new(dir).join("kubeconfig");
        server
            .write_kubeconfig(&kubeconfig)
            .expect("write the kubeconfig");
        let (client, _) = connect(&ApiAccess {
            kubeconfig: Some(kubeconfig),
            server_override: None,
        })
        .await
        .expect("a client of the fake");
        let started = Instant::now();
        let before_stores = rss_mib();
        let reflectors =
            SharedReflectors::start(&client, Keep::WhatControllersUse, Kinds::Services);
        assert!(reflectors.wait_synced().await, "the reflectors synced");
        let after_stores = rss_mib();
        let (services, slices) = (&reflectors.services, &reflectors.endpoint_slices);
        println!(
            "reflectors synced in {:.2} s",
            started.elapsed().as_secs_f64()
        );

        let unix = |path: String| format!("unix:{path}").parse().expect("an endpoint");
        let flows = Arc::new(
            Flows::connect(
                unix(format!("{dir}/{BRIDGE}.mgmt")),
                Duration::from_secs(10),
            )
            .await
            .expect("OpenFlow connection"),
        );
        let bridge = OvsBridge::connect(unix(format!("{dir}/db.sock")), BRIDGE)
            .await
            .expect("OVSDB connection");
        let recorded = Flows::recorded_round(&bridge).await.expect("the round");
        let network = NodeNetwork {
            node_ip: "10.10.0.11/24".parse().expect("an address"),
            node_mac: "02:00:0a:0a:00:0b".parse().expect("a MAC"),
            pod_cidr: "10.244.1.0/24".parse().expect("a CIDR"),
            gateway_ip: "10.244.1.1".parse().expect("an address"),
            gateway_mac: "02:00:0a:f4:01:01".parse().expect("a MAC"),
            mode: TrafficMode::Encap(TunnelType::Geneve),
        };
        let vswitchd = VswitchdControl::new(Platform::Linux, dir);
        let options = OvsOptions {
            netdev: true,
            gateway_if: "antrea-gw0".into(),
            snat: false,
            vswitchd: vswitchd.clone(),
        };
        let host = Arc::new(
            hostnet::linux::LinuxHost::current()
                .await
                .expect("the namespace's host networking"),
        );
        let datapath = OvsDatapath::new(network, bridge, flows.clone(), host, options);
        let mut proxy = ProxyController::new(
            NODE,
            ServiceCidr::new(false, None),
            FromOutside::new(false, Vec::new()),
        );
        let started = Instant::now();
        let before_proxy = rss_mib();
        let first = proxy.first_round(services, slices);
        let translated = started.elapsed();
        let after_translation = rss_mib();
        let policy = NetworkPolicyController::new(NODE).snapshot().clone();
        let desired = datapath
            .first_round(&[], &policy, &first)
            .await
            .expect("the first round");
        flows
            .start_round(recorded, &desired, datapath.bridge())
            .await
            .expect("install the first round");
        println!(
            "first round: {} Services translated in {:.1} ms, installed in {:.2} s in all",
            first.len(),
            ms(translated),
            started.elapsed().as_secs_f64()
        );
        assert_eq!(first.len(), count, "every Service translated");
        let after_install = rss_mib();
        println!(
            "\n(d) memory of the proxy state at {count} Services (RSS of this process, MiB): \
             the translations {:+.1}; the datapath's Services (renderer, desired flows and \
             groups, installed) {:+.1}; together {:+.1}. Baseline: the reflectors' stores of \
             the same Services and slices {:+.1}",
            after_translation - before_proxy,
            after_install - after_translation,
            after_install - before_proxy,
            after_stores - before_stores
        );
        // The first sync sets the (empty) routes and NodePorts once, as the agent's does.
        proxy
            .sync(&datapath, services, slices)
            .await
            .expect("the first sync");

        // Two translations kept beside the controller, for the translation baseline: one fed by
        // keys, one by whole-store walks.
        let mut by_key = Translations::new(NODE);
        let mut by_walk = Translations::new(NODE);
        for translations in [&mut by_key, &mut by_walk] {
            translations.update(&services.store().state(), &slices.store().state());
        }
        let mut direct: BTreeMap<ServiceKey, model::Service> = by_key
            .all_wanted()
            .map(|s| (s.key.clone(), s.clone()))
            .collect();

        let mut samples: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        let mut last = None;
        for rep in 1..=reps {
            let i = (rep * 997) % count;
            let ip = new_endpoint(rep);
            // Any wake-up still pending is taken first.
            let _ = tokio::time::timeout(Duration::ZERO, slices.changed()).await;
            let (mods, translations) = (flows.mods(), proxy.translated());
            let start = Instant::now();
            fake.insert_json(&slices_resource, endpoint_slice(i, Some(ip)))
                .expect("replace the slice");
            slices.changed().await;
            let event = start.elapsed();
            let synced = proxy
                .sync(&datapath, services, slices)
                .await
                .expect("the sync");
            let total = start.elapsed();
            assert_eq!(synced.updated, 1, "one Service updated");
            samples.entry("event").or_default().push(ms(event));
            samples
                .entry("confirmed")
                .or_default()
                .push(ms(total - synced.settled));
            samples
                .entry("settled")
                .or_default()
                .push(ms(synced.settled));
            samples.entry("sync").or_default().push(ms(total - event));
            samples.entry("total").or_default().push(ms(total));
            samples
                .entry("mods")
                .or_default()
                .push((flows.mods() - mods) as f64);
            samples
                .entry("translated")
                .or_default()
                .push((proxy.translated() - translations) as f64);
            last = Some((i, ip));

            // The same change translated by its key, and by walking both whole stores.
            let key = ObjectKey::new(format!("ns-{}", i % NAMESPACES), format!("app-{i}-abcde"));
            let reference =
                kube::runtime::reflector::ObjectRef::new(&key.name).within(&key.namespace);
            let slice = slices.store().get(&reference).expect("the changed slice");
            let start = Instant::now();
            by_key.apply(
                ObjectChanges::Touched(Vec::new()),
                ObjectChanges::Touched(vec![(key_of(&slice.metadata), Some(slice))]),
            );
            samples
                .entry("translate by key")
                .or_default()
                .push(ms(start.elapsed()));
            let start = Instant::now();
            by_walk.update(&services.store().state(), &slices.store().state());
            samples
                .entry("translate by walk")
                .or_default()
                .push(ms(start.elapsed()));

            // The datapath alone, on another Service: its first endpoint moved.
            let service = first_endpoints_moved(&mut direct, (i + count / 2) % count, 201, rep);
            let mods = flows.mods();
            let start = Instant::now();
            datapath
                .update_service(service)
                .await
                .expect("the datapath's update");
            samples
                .entry("datapath")
                .or_default()
                .push(ms(start.elapsed()));
            samples
                .entry("datapath settled")
                .or_default()
                .push(ms(datapath.settle_services().await));
            samples
                .entry("datapath mods")
                .or_default()
                .push((flows.mods() - mods) as f64);

            // The same kind of change on a third Service, settled as before the revalidation
            // nudges: two `revalidator/wait` rounds, each waiting for the next round to begin.
            let service = first_endpoints_moved(&mut direct, (i + count / 3) % count, 202, rep);
            datapath
                .update_service(service)
                .await
                .expect("the datapath's update");
            let start = Instant::now();
            for _ in 0..2 {
                vswitchd
                    .call("revalidator/wait", &[])
                    .await
                    .expect("revalidator/wait");
            }
            samples
                .entry("revalidation")
                .or_default()
                .push(ms(start.elapsed()));
            datapath.settle_services().await;
        }

        println!(
            "\n(b) one endpoint change among {count} Services, {reps} repetitions \
             (ms unless said)\n"
        );
        println!("| step | p50 | p99 | max | |");
        println!("|---|---:|---:|---:|---|");
        let rows = [
            (
                "agent: API write → reflector event in the store (wake-up)",
                "event",
                "ms",
            ),
            (
                "**agent: API write → switch's confirmation** (event, translation, bundle)",
                "confirmed",
                "ms",
            ),
            (
                "agent: then the datapath settles (2 × revalidator/wait, each nudged)",
                "settled",
                "ms",
            ),
            ("agent: ProxyController::sync in all", "sync", "ms"),
            ("agent: end to end, settling included", "total", "ms"),
            (
                "agent: Services translated per change",
                "translated",
                "count",
            ),
            ("agent: flow and group mods per change", "mods", "count"),
            (
                "baseline: Datapath::update_service to the switch's confirmation",
                "datapath",
                "ms",
            ),
            ("baseline: then it settles", "datapath settled", "ms"),
            (
                "baseline: its flow and group mods",
                "datapath mods",
                "count",
            ),
            (
                "baseline: the same change settled without nudges (2 × revalidator/wait, before)",
                "revalidation",
                "ms",
            ),
            (
                "translation of the change by its key (now)",
                "translate by key",
                "ms",
            ),
            (
                "translation by walking both whole stores (before; a re-list now)",
                "translate by walk",
                "ms",
            ),
        ];
        for (what, key, unit) in rows {
            row(what, &samples[key], unit);
        }

        let (i, ip) = last.expect("at least one repetition");
        let groups = Command::new("ovs-ofctl")
            .args([
                "-O",
                "OpenFlow15",
                "dump-groups",
                &format!("unix:{dir}/{BRIDGE}.mgmt"),
            ])
            .output()
            .expect("ovs-ofctl dump-groups");
        let groups = String::from_utf8_lossy(&groups.stdout);
        let hex = format!("0x{:x}", u32::from(ip));
        let holding = groups.lines().filter(|l| l.contains(&hex)).count();
        assert_eq!(
            holding, 2,
            "app-{i}'s two groups hold its new endpoint {ip}"
        );
        println!(
            "\nthe switch's groups checked: app-{i}'s two groups hold its new endpoint {ip}; \
             {} groups in all; load average now: {}",
            groups.lines().filter(|l| l.contains("group_id=")).count(),
            describe_machine()
        );

        // A burst: `BURST` Services change at once (as when a Node's endpoints go). The syncs
        // it wakes install them all and settle once each; the baseline, on other Services,
        // updates and settles each in turn, as every sync did per Service before.
        let burst = env_count("BURST", 20);
        let _ = tokio::time::timeout(Duration::ZERO, slices.changed()).await;
        let start = Instant::now();
        for b in 0..burst {
            let i = (b * 389 + 7) % count;
            let ip = Ipv4Addr::new(10, 202, (b / 256) as u8, (b % 256) as u8);
            fake.insert_json(&slices_resource, endpoint_slice(i, Some(ip)))
                .expect("replace the slice");
        }
        let (mut updated, mut syncs) = (0, 0);
        while updated < burst {
            slices.changed().await;
            updated += proxy
                .sync(&datapath, services, slices)
                .await
                .expect("the sync")
                .updated;
            syncs += 1;
        }
        let together = start.elapsed();
        let start = Instant::now();
        for b in 0..burst {
            let service = first_endpoints_moved(&mut direct, (b * 389 + 5003) % count, 203, b);
            datapath
                .update_service(service)
                .await
                .expect("the datapath's update");
            datapath.settle_services().await;
        }
        let one_by_one = start.elapsed();
        println!(
            "\nburst: {burst} Services changed at once: {syncs} sync(s) installed and settled them \
             in {:.0} ms; baseline, each updated and settled in turn: {:.0} ms ({:.1}x)",
            ms(together),
            ms(one_by_one),
            one_by_one.as_secs_f64() / together.as_secs_f64()
        );
        drop(server);
    }
}
