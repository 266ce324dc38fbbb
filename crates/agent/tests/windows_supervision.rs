//! The agent's supervision of a Windows Node (`agent::supervise`) over the fake Windows host
//! (`FakeWindows`: HNS and IP Helper) with scripted probes: the settled start pass, the periodic
//! HNS passes racing CNI ADDs, recovery from a reboot (read back from the metrics registry),
//! and the takeover watchdog's rollback, its quiet end and the end of supervision with an
//! error. Time is tokio's paused clock: passes and probe rounds follow one another at once.
//! Runs on every platform (Linux and Wine alike).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agent::AgentError;
use agent::config::{AgentConfig, Platform, TakeoverWatchdogConfig};
use agent::supervise::{
    PodEndpoints, SupervisionPlan, Supervisor, Takeover, WindowsSupervision, windows_supervision,
};
use hcn::fake::AdapterRoute;
use hcn::schema::{HostComputeEndpoint, HostComputeNamespace, IpConfig};
use hcn::{Guid, HcnApi};
use hostnet::naming::endpoint_name;
use hostnet::windows::heal::EndpointIntent;
use hostnet::windows::watchdog::ScriptedProbe;
use hostnet::windows::{FakeWindows, HNS_NETWORK, WindowsHost, WindowsSettings};
use hostnet::{HostNetwork, Outcome, PodInterfaceSpec, TransportSelector};
use ipnet::Ipv4Net;
use model::MacAddr;
use prometheus_client::registry::Registry;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use winos::firewall::FakeFirewall;
use winos::model::{Adapter, InterfaceType, Luid, OperStatus};
use winos::netnat::FakeNetNat;
use winos::{FakeIpHelper, IpHelper};

const NIC: &str = "Ethernet0";
const NODE_IP: &str = "10.10.0.11/24";

type Host = WindowsHost<FakeWindows, FakeIpHelper, FakeNetNat, FakeFirewall>;

/// A Windows Node whose NIC was just taken over (the HNS network `antrea-hnsnetwork` on it).
struct Node {
    fake: Arc<FakeWindows>,
    host: Host,
}

fn route(destination: &str, next_hop: &str) -> AdapterRoute {
    AdapterRoute {
        destination: destination.parse().unwrap(),
        next_hop: next_hop.parse().unwrap(),
        metric: 256,
    }
}

async fn taken_over_node() -> Node {
    let fake = Arc::new(FakeWindows::new());
    let nic = Adapter {
        name: "{00000000-0000-0000-0000-000000000004}".into(),
        alias: NIC.into(),
        description: "Intel(R) 82574L Gigabit Network Connection".into(),
        index: 4,
        luid: Luid(4),
        mac: Some(MacAddr([0x00, 0x15, 0x5d, 0xaa, 0xbb, 0xcc])),
        mtu: 1500,
        ipv4: vec![NODE_IP.parse().unwrap()],
        dns_servers: vec!["10.10.0.2".parse().unwrap()],
        dns_suffix: String::new(),
        oper_status: OperStatus::Up,
        if_type: InterfaceType::Ethernet,
    };
    fake.add_nic(nic, &[route("0.0.0.0/0", "10.10.0.1")])
        .unwrap();
    let settings = WindowsSettings {
        settle_wait: Duration::from_millis(100),
        poll_interval: Duration::from_millis(5),
        ..WindowsSettings::new("10.244.1.0/24".parse().unwrap())
    };
    let host = WindowsHost::new(
        fake.clone(),
        fake.ip_helper(),
        Arc::new(FakeNetNat::new()),
        Arc::new(FakeFirewall::new()),
        settings,
    );
    let found = host
        .find_transport_interface(&TransportSelector::NodeIp(Ipv4Addr::new(10, 10, 0, 11)))
        .await
        .unwrap();
    assert_eq!(
        host.prepare_bridge(&found, "br-int").await.unwrap(),
        Outcome::Changed
    );
    Node { fake, host }
}

impl Node {
    fn network(&self) -> Option<Guid> {
        self.fake
            .find_network_by_name(HNS_NETWORK)
            .unwrap()
            .map(|n| n.id)
    }

    fn has_endpoint(&self, name: &str) -> bool {
        self.fake.find_endpoint_by_name(name).unwrap().is_some()
    }

    /// The IPv4 addresses of the adapter `alias`.
    fn addresses(&self, alias: &str) -> Vec<String> {
        self.fake
            .ip_helper()
            .adapter_by_alias(alias)
            .unwrap()
            .map(|a| a.ipv4.iter().map(ToString::to_string).collect())
            .unwrap_or_default()
    }

    /// A Pod's endpoint made by the backend, as a completed CNI ADD leaves it; returns its name
    /// and IP.
    async fn pod(&self, pod: &str, ip: &str) -> (String, IpAddr) {
        let namespace = self
            .fake
            .create_namespace(&HostComputeNamespace::default())
            .unwrap();
        let spec = PodInterfaceSpec {
            netns: namespace.id.to_string(),
            ifname: "eth0".into(),
            host_ifname: endpoint_name(pod, "0123456789abcdef"),
            address: format!("{ip}/24").parse::<Ipv4Net>().unwrap(),
            gateway: Ipv4Addr::new(10, 244, 1, 1),
            mtu: 1450,
            dns: None,
        };
        self.host.create_pod_interface(&spec).await.unwrap();
        (spec.host_ifname, ip.parse().unwrap())
    }

    fn bare_endpoint(&self, name: &str, ip: &str) {
        bare_endpoint(&self.fake, self.network().unwrap(), name, ip);
    }
}

/// An endpoint made on `network` by someone else than a completed ADD (a failed ADD, an ADD in
/// flight).
fn bare_endpoint(fake: &FakeWindows, network: Guid, name: &str, ip: &str) {
    let endpoint = HostComputeEndpoint {
        name: name.into(),
        host_compute_network: network,
        ip_configurations: vec![IpConfig {
            ip_address: ip.into(),
            ..IpConfig::default()
        }],
        ..HostComputeEndpoint::default()
    };
    fake.create_endpoint(network, &endpoint).unwrap();
}

/// Something to do right after a snapshot was taken (the snapshot does not see it).
type Step = Box<dyn FnOnce(&mut EndpointIntent) + Send>;

/// The Pods the agent owns, as the CNI server would record them, with steps run right after
/// given snapshots (the first snapshot is the start pass's) and a count of snapshots taken, so
/// a test knows which passes are over.
struct Pods {
    owned: Mutex<EndpointIntent>,
    steps: Mutex<BTreeMap<u32, Step>>,
    taken: watch::Sender<u32>,
    unreadable: bool,
}

impl Pods {
    fn new(owned: impl IntoIterator<Item = (String, IpAddr)>) -> Self {
        Pods {
            owned: Mutex::new(owned.into_iter().collect()),
            steps: Mutex::new(BTreeMap::new()),
            taken: watch::Sender::new(0),
            unreadable: false,
        }
    }

    /// Runs `step` right after snapshot number `n` (1: the start pass's).
    fn after_snapshot(&self, n: u32, step: impl FnOnce(&mut EndpointIntent) + Send + 'static) {
        lock(&self.steps).insert(n, Box::new(step));
    }

    /// Waits until pass number `n` (1: the start pass) is over: the next snapshot was taken.
    async fn pass_done(&self, n: u32) {
        self.taken
            .subscribe()
            .wait_for(|taken| *taken > n)
            .await
            .unwrap();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl PodEndpoints for Pods {
    async fn pod_endpoints(&self) -> Result<EndpointIntent, AgentError> {
        if self.unreadable {
            return Err(AgentError::UnsupportedPlatform);
        }
        let mut owned = lock(&self.owned);
        let snapshot = owned.clone();
        let mut n = 0;
        self.taken.send_modify(|taken| {
            *taken += 1;
            n = *taken;
        });
        if let Some(step) = lock(&self.steps).remove(&n) {
            step(&mut owned);
        }
        Ok(snapshot)
    }
}

/// The configuration's supervision settings: a pass a minute; a watch of `duration`, a probe
/// every 5 s, a rollback after 3 rounds lost.
fn plan(api_server: Option<&str>, duration: Duration) -> SupervisionPlan {
    let mut config = AgentConfig::defaults(Platform::Windows);
    config.takeover_watchdog = TakeoverWatchdogConfig {
        duration,
        probe_interval: Duration::from_secs(5),
        lost_probes: 3,
    };
    let takeover = Takeover {
        default_gateway: Some(Ipv4Addr::new(10, 10, 0, 1)),
    };
    SupervisionPlan::new(&config, NIC, Some(takeover), api_server.map(str::to_owned))
}

/// The Node's supervision with the given probes.
fn supervision(
    node: &Node,
    plan: &SupervisionPlan,
    registry: &mut Registry,
    gateway: &ScriptedProbe,
    api_server: &ScriptedProbe,
) -> WindowsSupervision<
    FakeWindows,
    FakeIpHelper,
    FakeNetNat,
    FakeFirewall,
    ScriptedProbe,
    ScriptedProbe,
> {
    windows_supervision(
        &node.host,
        plan,
        registry,
        |_| gateway.clone(),
        |_| api_server.clone(),
    )
}

/// Supervision with both targets answering, started against `pods`.
async fn start(node: &Node, pods: &Arc<Pods>) -> (Supervisor, Registry, CancellationToken) {
    let mut registry = Registry::default();
    let alive = ScriptedProbe::always("alive", true);
    let plan = plan(Some("10.10.0.100:6443"), Duration::from_secs(300));
    let stop = CancellationToken::new();
    let supervisor = supervision(node, &plan, &mut registry, &alive, &alive)
        .start(pods.clone(), stop.clone())
        .await;
    (supervisor, registry, stop)
}

/// Supervision's failure, which comes within the watch's duration (on the paused clock).
async fn failure(supervisor: &mut Supervisor) -> AgentError {
    tokio::time::timeout(Duration::from_secs(300), supervisor.failure())
        .await
        .expect("supervision did not fail within the watch")
}

/// Asserts that the registry's text encoding has the sample line `sample`.
fn assert_sample(registry: &Registry, sample: &str) {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
    assert!(
        text.lines().any(|line| line == sample),
        "no {sample:?} in:\n{text}"
    );
}

/// Stops supervision and checks that it ended well.
async fn finish(supervisor: Supervisor, token: CancellationToken) {
    token.cancel();
    supervisor.join().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_start_pass_removes_an_orphan_at_once_and_keeps_the_pods() {
    let node = taken_over_node().await;
    let web = node.pod("web", "10.244.1.10").await;
    let db = node.pod("db", "10.244.1.11").await;
    node.bare_endpoint("left-by-a-failed-add", "10.244.1.77");
    let pods = Arc::new(Pods::new([web.clone(), db.clone()]));

    let (supervisor, registry, token) = start(&node, &pods).await;
    assert!(
        !node.has_endpoint("left-by-a-failed-add"),
        "no ADD can be in flight before the CNI server listens: the orphan goes at once"
    );
    assert!(node.has_endpoint(&web.0) && node.has_endpoint(&db.0));
    assert_sample(&registry, "antrea_hns_orphan_endpoints_removed_total 1");
    finish(supervisor, token).await;
}

#[tokio::test(start_paused = true)]
async fn an_endpoint_of_an_add_in_flight_is_never_removed() {
    let node = taken_over_node().await;
    let web = node.pod("web", "10.244.1.10").await;
    let pods = Arc::new(Pods::new([web.clone()]));
    let (supervisor, registry, token) = start(&node, &pods).await;

    // Right after the first periodic pass's snapshot, an ADD creates its endpoint (its port is
    // not recorded yet), and a failed ADD leaves one behind. The ADD records its Pod after the
    // next pass's snapshot: its endpoint was unnamed for two passes, one minute apart.
    let fake = node.fake.clone();
    let network = node.network().unwrap();
    pods.after_snapshot(2, move |_| {
        bare_endpoint(&fake, network, "adding", "10.244.1.20");
        bare_endpoint(&fake, network, "failed", "10.244.1.21");
    });
    pods.after_snapshot(3, |owned| {
        owned.insert("adding", "10.244.1.20".parse().unwrap())
    });

    pods.pass_done(5).await;
    assert!(node.has_endpoint("adding"), "the ADD's endpoint stays");
    assert!(node.has_endpoint(&web.0));
    assert!(
        !node.has_endpoint("failed"),
        "an endpoint unnamed for the grace period goes"
    );
    assert_sample(&registry, "antrea_hns_orphan_endpoints_removed_total 1");
    finish(supervisor, token).await;
}

#[tokio::test(start_paused = true)]
async fn after_a_reboot_the_next_pass_makes_the_network_again() {
    let node = taken_over_node().await;
    let pods = Arc::new(Pods::new([]));
    let (supervisor, registry, token) = start(&node, &pods).await;
    assert_sample(&registry, "antrea_hns_network_recreated_total 0");

    node.fake.reboot();
    assert_eq!(node.network(), None);
    assert_eq!(
        node.addresses(NIC),
        [NODE_IP],
        "the reboot undid the takeover"
    );

    pods.pass_done(2).await;
    assert!(node.network().is_some());
    assert_eq!(node.addresses("br-int"), [NODE_IP]);
    assert!(node.addresses(NIC).is_empty());
    assert_sample(&registry, "antrea_hns_network_recreated_total 1");
    assert_sample(&registry, "antrea_hns_heal_errors_total 0");
    finish(supervisor, token).await;
}

#[tokio::test(start_paused = true)]
async fn without_a_snapshot_no_pass_runs() {
    let node = taken_over_node().await;
    node.bare_endpoint("left-by-a-failed-add", "10.244.1.77");
    let pods = Arc::new(Pods {
        unreadable: true,
        ..Pods::new([])
    });
    let (supervisor, _registry, token) = start(&node, &pods).await;
    assert!(
        node.has_endpoint("left-by-a-failed-add"),
        "an unreadable Pod list is not an empty one"
    );
    finish(supervisor, token).await;
}

/// Starts supervision of a fresh takeover with these probes (no API server when `api_server` is
/// `None`) and a watch of `duration`.
async fn watched(
    node: &Node,
    gateway: &ScriptedProbe,
    api_server: Option<&ScriptedProbe>,
    duration: Duration,
) -> (Supervisor, CancellationToken) {
    let mut registry = Registry::default();
    let plan = plan(api_server.map(|_| "10.10.0.100:6443"), duration);
    let none = ScriptedProbe::always("unused", false);
    let stop = CancellationToken::new();
    let supervisor = supervision(
        node,
        &plan,
        &mut registry,
        gateway,
        api_server.unwrap_or(&none),
    )
    .start(Arc::new(Pods::new([])), stop.clone())
    .await;
    (supervisor, stop)
}

#[tokio::test(start_paused = true)]
async fn when_both_targets_are_lost_the_takeover_is_rolled_back_and_supervision_fails() {
    let node = taken_over_node().await;
    assert_eq!(node.addresses("br-int"), [NODE_IP]);
    let gateway = ScriptedProbe::always("gateway", false);
    let api = ScriptedProbe::always("api", false);
    let (mut supervisor, _stop) =
        watched(&node, &gateway, Some(&api), Duration::from_secs(300)).await;

    let error = failure(&mut supervisor).await;
    assert!(
        matches!(&error, AgentError::TakeoverRolledBack { rounds: 3, .. }),
        "{error}"
    );
    let message = error.to_string();
    for part in [
        "Ethernet0",
        "scripted gateway",
        "scripted api",
        "the Pod datapath is gone",
    ] {
        assert!(message.contains(part), "{message}");
    }
    assert_eq!((gateway.probes(), api.probes()), (3, 3));
    assert_eq!(node.network(), None, "the HNS network is gone");
    assert_eq!(
        node.addresses(NIC),
        [NODE_IP],
        "the NIC has its address back"
    );
}

#[tokio::test(start_paused = true)]
async fn one_target_answering_keeps_the_takeover_and_the_watch_ends_quietly() {
    let node = taken_over_node().await;
    let gateway = ScriptedProbe::always("gateway", false);
    let api = ScriptedProbe::always("api", true);
    let (supervisor, token) = watched(&node, &gateway, Some(&api), Duration::from_secs(60)).await;

    tokio::time::sleep(Duration::from_secs(120)).await;
    let probes = api.probes();
    assert!(probes > 3, "the watch went on after each answer: {probes}");
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(api.probes(), probes, "the watch is over");
    assert!(node.network().is_some());
    assert_eq!(node.addresses("br-int"), [NODE_IP]);
    finish(supervisor, token).await;
}

#[tokio::test(start_paused = true)]
async fn when_the_watch_ends_before_enough_rounds_are_lost_nothing_is_rolled_back() {
    let node = taken_over_node().await;
    let gateway = ScriptedProbe::always("gateway", false);
    let api = ScriptedProbe::always("api", false);
    // Rounds at 0 s and 5 s fit in the watch; a rollback takes three.
    let (supervisor, token) = watched(&node, &gateway, Some(&api), Duration::from_secs(7)).await;

    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(gateway.probes(), 2);
    assert!(node.network().is_some(), "nothing was rolled back");
    finish(supervisor, token).await;
}

#[tokio::test(start_paused = true)]
async fn without_an_api_server_the_gateway_alone_decides_even_after_it_answered() {
    let node = taken_over_node().await;
    let gateway = ScriptedProbe::new("gateway", [true, true, false]);
    let (mut supervisor, _stop) = watched(&node, &gateway, None, Duration::from_secs(300)).await;

    let error = failure(&mut supervisor).await;
    assert!(
        matches!(&error, AgentError::TakeoverRolledBack { rounds: 3, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("API server (none)"), "{error}");
    assert_eq!(gateway.probes(), 5);
    assert_eq!(node.addresses(NIC), [NODE_IP]);
}
