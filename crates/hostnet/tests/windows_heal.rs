//! The HNS reconciler over `hcn::fake::FakeHcn`: reboot recovery, orphan and duplicate
//! endpoints, unattached endpoints, HNS failures and metrics. Time is
//! tokio's paused clock, moved by the tests.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hcn::fake::{AdapterRoute, FakeHcn, HostAdapter, HostModel};
use hcn::schema::{
    HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, IpConfig, Ipam, NetworkPolicy,
    NetworkType, Route, Subnet,
};
use hcn::{Guid, HcnApi, HcnError, Hresult, Operation};
use hostnet::windows::heal::{
    EndpointIntent, HealAction, HealConfig, HealMetrics, HealReport, HnsReconciler,
    NetworkRecreator, NetworkState, Stale,
};
use prometheus_client::registry::Registry;

const NETWORK: &str = "antrea-hnsnetwork";
const NIC: &str = "Ethernet0";
const GRACE: Duration = Duration::from_secs(60);
/// HRESULT_FROM_WIN32(ERROR_ACCESS_DENIED): a failure the reconciler has no special case for.
const ACCESS_DENIED: Hresult = Hresult(0x8007_0005);

fn host() -> HostModel {
    HostModel::with_nic(HostAdapter::physical(
        NIC,
        "00-15-5D-AA-BB-CC".parse().expect("MAC"),
        vec!["192.168.1.10/24".parse().expect("prefix")],
        vec![AdapterRoute {
            destination: "0.0.0.0/0".parse().expect("prefix"),
            next_hop: "192.168.1.1".parse().expect("IP"),
            metric: 0,
        }],
    ))
}

/// Antrea's network: Transparent on the NIC, one static subnet for the Pods.
fn network_document() -> HostComputeNetwork {
    HostComputeNetwork {
        name: NETWORK.into(),
        kind: NetworkType::Transparent,
        policies: vec![NetworkPolicy::NetAdapterName {
            network_adapter_name: NIC.into(),
        }],
        ipams: vec![Ipam::static_subnets(vec![Subnet {
            ip_address_prefix: "10.10.1.0/24".into(),
            routes: vec![Route::default_via("10.10.1.1")],
            flags: 0,
        }])],
        ..HostComputeNetwork::default()
    }
}

fn ip(text: &str) -> IpAddr {
    text.parse().expect("test IP")
}

/// The caller's takeover, reduced to what the reconciler sees: it creates the network again.
#[derive(Clone)]
struct Takeover {
    hns: Arc<FakeHcn>,
    calls: Arc<AtomicUsize>,
}

impl Takeover {
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl NetworkRecreator for Takeover {
    type Error = HcnError;

    async fn recreate_network(&self) -> Result<(), HcnError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.hns.create_network(&network_document()).map(|_| ())
    }
}

struct Node {
    hns: Arc<FakeHcn>,
    takeover: Takeover,
    registry: Registry,
    reconciler: HnsReconciler<Takeover>,
}

impl Node {
    /// A host whose NIC was taken over into the network, and a reconciler with `grace`.
    fn new(grace: Duration) -> Self {
        let hns = Arc::new(FakeHcn::new(host()));
        hns.create_network(&network_document()).expect("network");
        let takeover = Takeover {
            hns: Arc::clone(&hns),
            calls: Arc::default(),
        };
        let mut registry = Registry::default();
        let metrics = HealMetrics::register(&mut registry);
        let config = HealConfig {
            grace,
            ..HealConfig::new(NETWORK)
        };
        let api: Arc<dyn HcnApi> = hns.clone();
        let reconciler = HnsReconciler::new(api, takeover.clone(), config, metrics);
        Node {
            hns,
            takeover,
            registry,
            reconciler,
        }
    }

    fn network(&self) -> Guid {
        self.hns
            .find_network_by_name(NETWORK)
            .expect("lookup")
            .expect("network")
            .id
    }

    /// An endpoint `name` with `ip` on the network, attached to a new namespace when `attach`.
    fn endpoint(&self, name: &str, ip: &str, attach: bool) -> Guid {
        let endpoint = HostComputeEndpoint {
            name: name.into(),
            ip_configurations: vec![IpConfig {
                ip_address: ip.into(),
                prefix_length: 24,
                ip_subnet_id: None,
            }],
            ..HostComputeEndpoint::default()
        };
        let id = self
            .hns
            .create_endpoint(self.network(), &endpoint)
            .expect("endpoint")
            .id;
        if attach {
            let namespace = self
                .hns
                .create_namespace(&HostComputeNamespace::default())
                .expect("namespace")
                .id;
            self.hns.attach_endpoint(namespace, id).expect("attach");
        }
        id
    }

    fn exists(&self, name: &str) -> bool {
        self.hns
            .find_endpoint_by_name(name)
            .expect("lookup")
            .is_some()
    }

    async fn pass(&mut self, intent: &EndpointIntent) -> HealReport {
        self.reconciler.reconcile(intent).await
    }

    /// The value of sample `name` in the registry's text encoding.
    fn metric(&self, name: &str) -> i64 {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).expect("encode");
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no sample {name} in:\n{text}"))
            .parse()
            .expect("integer sample")
    }

    /// Calls of `operation` made to HNS so far.
    fn calls_of(&self, operation: Operation) -> usize {
        self.hns
            .calls()
            .iter()
            .filter(|c| c.operation == operation)
            .count()
    }
}

fn intent(entries: &[(&str, &str)]) -> EndpointIntent {
    entries
        .iter()
        .map(|(name, address)| (*name, ip(address)))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn network_lost_at_reboot_is_reported_and_recreated_once() {
    let mut node = Node::new(GRACE);
    node.endpoint("web-a1b2c3", "10.10.1.5", true);
    let intent = intent(&[("web-a1b2c3", "10.10.1.5")]);
    assert!(node.pass(&intent).await.is_clean());

    node.hns.reboot();
    let report = node.pass(&intent).await;
    assert!(
        matches!(report.network, NetworkState::Missing { recreate: Ok(()) }),
        "{report:?}"
    );
    assert_eq!(node.takeover.calls(), 1);
    assert_eq!(
        report.missing,
        vec![("web-a1b2c3".to_owned(), ip("10.10.1.5"))]
    );
    assert!(
        node.hns
            .find_network_by_name(NETWORK)
            .expect("lookup")
            .is_some()
    );
    assert_eq!(node.metric("antrea_hns_network_recreated_total"), 1);
    assert_eq!(node.metric("antrea_hns_missing_endpoints"), 1);

    // The network is back: no second recreation; the Pod's endpoint is still reported missing
    // until its CNI ADD runs again.
    let report = node.pass(&intent).await;
    assert!(matches!(report.network, NetworkState::Present { .. }));
    assert_eq!(node.takeover.calls(), 1);
    assert_eq!(report.missing.len(), 1);
    assert_eq!(node.metric("antrea_hns_network_recreated_total"), 1);
}

#[tokio::test(start_paused = true)]
async fn failed_recreation_is_reported_and_retried_next_pass() {
    let mut node = Node::new(GRACE);
    node.hns.reboot();
    node.hns.fail_next(Operation::CreateNetwork, ACCESS_DENIED);
    let report = node.pass(&EndpointIntent::new()).await;
    match &report.network {
        NetworkState::Missing {
            recreate: Err(error),
        } => {
            let error = error
                .downcast_ref::<HcnError>()
                .expect("the takeover's own error");
            assert_eq!(error.hresult(), Some(ACCESS_DENIED));
        }
        other => panic!("expected a failed recreation, got {other:?}"),
    }
    assert_eq!(node.metric("antrea_hns_heal_errors_total"), 1);
    assert_eq!(node.metric("antrea_hns_network_recreated_total"), 0);

    let report = node.pass(&EndpointIntent::new()).await;
    assert!(matches!(
        report.network,
        NetworkState::Missing { recreate: Ok(()) }
    ));
    assert_eq!(node.takeover.calls(), 2);
    assert!(node.pass(&EndpointIntent::new()).await.is_clean());
}

#[tokio::test(start_paused = true)]
async fn orphan_is_deleted_after_the_grace_period_but_never_on_first_sight() {
    let mut node = Node::new(GRACE);
    node.endpoint("web-a1b2c3", "10.10.1.5", true);
    let orphan = node.endpoint("old-d4e5f6", "10.10.1.6", true);
    let intent = intent(&[("web-a1b2c3", "10.10.1.5")]);

    let report = node.pass(&intent).await;
    assert_eq!(report.pending.len(), 1);
    assert_eq!(report.pending[0].endpoint.name, "old-d4e5f6");
    assert_eq!(report.pending[0].why, Stale::Orphan);
    assert!(report.removed.is_empty());
    assert_eq!(node.metric("antrea_hns_stale_endpoints_pending"), 1);

    tokio::time::advance(GRACE / 2).await;
    let report = node.pass(&intent).await;
    assert!(
        report.removed.is_empty(),
        "within the grace period: {report:?}"
    );
    assert!(node.exists("old-d4e5f6"));

    tokio::time::advance(GRACE / 2).await;
    let report = node.pass(&intent).await;
    assert_eq!(report.removed_orphans(), vec!["old-d4e5f6"]);
    assert!(report.pending.is_empty());
    assert!(!node.exists("old-d4e5f6"));
    assert!(node.exists("web-a1b2c3"));
    assert_eq!(node.metric("antrea_hns_orphan_endpoints_removed_total"), 1);
    assert_eq!(node.metric("antrea_hns_stale_endpoints_pending"), 0);

    // Attached: detached from its namespace first, then deleted.
    let calls = node.hns.calls();
    let delete = calls
        .iter()
        .position(|c| c.operation == Operation::DeleteEndpoint && c.subject == orphan.to_string())
        .expect("deleted");
    assert_eq!(calls[delete - 1].operation, Operation::ModifyNamespace);

    assert!(node.pass(&intent).await.is_clean());
}

#[tokio::test(start_paused = true)]
async fn zero_grace_still_spares_endpoints_seen_for_the_first_time() {
    let mut node = Node::new(Duration::ZERO);
    node.endpoint("new-a1b2c3", "10.10.1.7", true);
    // An ADD in flight: the endpoint exists, the interface store does not list it yet.
    let report = node.pass(&EndpointIntent::new()).await;
    assert!(report.removed.is_empty());
    assert!(node.exists("new-a1b2c3"));
    // The ADD finished before the next pass: the endpoint is owned now and stays.
    let report = node.pass(&intent(&[("new-a1b2c3", "10.10.1.7")])).await;
    assert!(report.is_clean(), "{report:?}");
    assert!(node.exists("new-a1b2c3"));
}

#[tokio::test(start_paused = true)]
async fn a_settled_pass_deletes_stale_endpoints_at_first_sight_and_keeps_the_owned() {
    let mut node = Node::new(GRACE);
    node.endpoint("web-a1b2c3", "10.10.1.5", true);
    node.endpoint("old-d4e5f6", "10.10.1.6", true);
    node.endpoint("dup-g7h8i9", "10.10.1.5", false);
    let owned = intent(&[("web-a1b2c3", "10.10.1.5")]);

    let report = node.reconciler.reconcile_settled(&owned).await;
    assert_eq!(report.removed_orphans(), vec!["old-d4e5f6"]);
    assert_eq!(report.removed_duplicates(), vec!["dup-g7h8i9"]);
    assert!(report.pending.is_empty());
    assert!(node.exists("web-a1b2c3"));
    assert!(!node.exists("old-d4e5f6") && !node.exists("dup-g7h8i9"));
    assert_eq!(node.metric("antrea_hns_orphan_endpoints_removed_total"), 1);
    assert!(node.pass(&owned).await.is_clean());
}

#[tokio::test(start_paused = true)]
async fn owned_endpoints_are_never_touched() {
    let mut node = Node::new(GRACE);
    for (name, address) in [
        ("a-111111", "10.10.1.2"),
        ("b-222222", "10.10.1.3"),
        ("c-333333", "10.10.1.4"),
    ] {
        node.endpoint(name, address, true);
    }
    let intent = intent(&[
        ("a-111111", "10.10.1.2"),
        ("b-222222", "10.10.1.3"),
        ("c-333333", "10.10.1.4"),
    ]);
    for _ in 0..3 {
        assert!(node.pass(&intent).await.is_clean());
        tokio::time::advance(GRACE).await;
    }
    assert_eq!(node.calls_of(Operation::DeleteEndpoint), 0);
    // Only the test's own three attachments.
    assert_eq!(node.calls_of(Operation::ModifyNamespace), 3);
    assert_eq!(node.metric("antrea_hns_orphan_endpoints_removed_total"), 0);
}

#[tokio::test(start_paused = true)]
async fn duplicate_ip_keeps_the_endpoint_the_intent_names() {
    let mut node = Node::new(GRACE);
    // The duplicate is older (first in HNS's listing), so position does not decide.
    node.endpoint("web-bbbbbb", "10.10.1.5", true);
    node.endpoint("web-aaaaaa", "10.10.1.5", true);
    let intent = intent(&[("web-aaaaaa", "10.10.1.5")]);

    let report = node.pass(&intent).await;
    assert_eq!(report.pending.len(), 1);
    assert_eq!(report.pending[0].endpoint.name, "web-bbbbbb");
    assert_eq!(
        report.pending[0].why,
        Stale::Duplicate {
            kept: "web-aaaaaa".into()
        }
    );

    tokio::time::advance(GRACE).await;
    let report = node.pass(&intent).await;
    assert_eq!(report.removed_duplicates(), vec!["web-bbbbbb"]);
    assert!(report.removed_orphans().is_empty());
    assert!(node.exists("web-aaaaaa"));
    assert!(!node.exists("web-bbbbbb"));
    assert_eq!(
        node.metric("antrea_hns_duplicate_endpoints_removed_total"),
        1
    );
    assert_eq!(node.metric("antrea_hns_orphan_endpoints_removed_total"), 0);
}

#[tokio::test(start_paused = true)]
async fn same_ip_without_an_owner_is_two_orphans() {
    let mut node = Node::new(GRACE);
    node.endpoint("x-111111", "10.10.1.9", false);
    node.endpoint("y-222222", "10.10.1.9", false);
    node.pass(&EndpointIntent::new()).await;
    tokio::time::advance(GRACE).await;
    let report = node.pass(&EndpointIntent::new()).await;
    let mut removed = report.removed_orphans();
    removed.sort_unstable();
    assert_eq!(removed, vec!["x-111111", "y-222222"]);
}

#[tokio::test(start_paused = true)]
async fn unattached_endpoints_are_reported_when_owned_and_deleted_otherwise() {
    let mut node = Node::new(GRACE);
    let owned = node.endpoint("web-a1b2c3", "10.10.1.5", false);
    node.endpoint("lost-d4e5f6", "10.10.1.6", false);
    let intent = intent(&[("web-a1b2c3", "10.10.1.5")]);

    let report = node.pass(&intent).await;
    assert!(
        report.unattached.is_empty(),
        "first sight is within the grace period"
    );
    assert_eq!(report.pending.len(), 1);

    tokio::time::advance(GRACE).await;
    let report = node.pass(&intent).await;
    assert_eq!(report.unattached.len(), 1);
    assert_eq!(report.unattached[0].name, "web-a1b2c3");
    assert_eq!(report.unattached[0].namespace, None);
    assert_eq!(report.removed_orphans(), vec!["lost-d4e5f6"]);
    assert!(
        node.exists("web-a1b2c3"),
        "an owned endpoint is only reported"
    );
    assert_eq!(node.metric("antrea_hns_unattached_endpoints"), 1);
    // Never attached: deleted without a detach.
    assert_eq!(node.calls_of(Operation::ModifyNamespace), 0);

    // The Pod's ADD attaches it: nothing to report any more.
    let namespace = node
        .hns
        .create_namespace(&HostComputeNamespace::default())
        .expect("namespace")
        .id;
    node.hns.attach_endpoint(namespace, owned).expect("attach");
    assert!(node.pass(&intent).await.is_clean());
    assert_eq!(node.metric("antrea_hns_unattached_endpoints"), 0);
}

#[tokio::test(start_paused = true)]
async fn hns_failures_are_reported_and_the_pass_goes_on() {
    let mut node = Node::new(GRACE);
    let first = node.endpoint("old-111111", "10.10.1.2", true);
    node.endpoint("old-222222", "10.10.1.3", true);
    node.endpoint("web-333333", "10.10.1.4", true);
    let intent = intent(&[("web-333333", "10.10.1.4")]);
    node.pass(&intent).await;
    tokio::time::advance(GRACE).await;

    // The first stale endpoint's deletion fails; the other one is still deleted.
    node.hns.fail_next(Operation::DeleteEndpoint, ACCESS_DENIED);
    let report = node.pass(&intent).await;
    assert_eq!(report.errors.len(), 1);
    assert_eq!(report.errors[0].action, HealAction::DeleteEndpoint);
    assert_eq!(report.errors[0].source.hresult(), Some(ACCESS_DENIED));
    assert!(report.errors[0].subject.contains(&first.to_string()));
    assert_eq!(report.removed_orphans(), vec!["old-222222"]);
    assert_eq!(node.metric("antrea_hns_heal_errors_total"), 1);

    // The next pass retries it without waiting another grace period.
    let report = node.pass(&intent).await;
    assert_eq!(report.removed_orphans(), vec!["old-111111"]);
    assert!(report.errors.is_empty());
    assert_eq!(node.metric("antrea_hns_orphan_endpoints_removed_total"), 2);
}

#[tokio::test(start_paused = true)]
async fn unreadable_endpoint_is_reported_and_the_others_are_still_checked() {
    let mut node = Node::new(GRACE);
    node.endpoint("web-111111", "10.10.1.2", false);
    node.endpoint("web-222222", "10.10.1.3", false);
    let intent = intent(&[("web-111111", "10.10.1.2"), ("web-222222", "10.10.1.3")]);
    node.pass(&intent).await;
    tokio::time::advance(GRACE).await;

    node.hns.fail_next(Operation::QueryEndpoint, ACCESS_DENIED);
    let report = node.pass(&intent).await;
    assert_eq!(report.errors.len(), 1);
    assert_eq!(report.errors[0].action, HealAction::QueryEndpoint);
    assert_eq!(
        report.unattached.len(),
        1,
        "the endpoint that could be read is still checked"
    );
}

#[tokio::test(start_paused = true)]
async fn failed_network_lookup_is_reported_without_recreating() {
    let mut node = Node::new(GRACE);
    node.hns
        .fail_next(Operation::EnumerateNetworks, ACCESS_DENIED);
    let report = node.pass(&EndpointIntent::new()).await;
    assert!(matches!(report.network, NetworkState::Unknown));
    assert_eq!(report.errors.len(), 1);
    assert_eq!(report.errors[0].action, HealAction::FindNetwork);
    assert_eq!(node.takeover.calls(), 0);
    assert_eq!(node.metric("antrea_hns_heal_errors_total"), 1);
}

#[tokio::test(start_paused = true)]
async fn failed_listing_is_reported_and_leaves_the_gauges() {
    let mut node = Node::new(GRACE);
    node.endpoint("old-a1b2c3", "10.10.1.6", true);
    node.pass(&EndpointIntent::new()).await;
    assert_eq!(node.metric("antrea_hns_stale_endpoints_pending"), 1);

    node.hns
        .fail_next(Operation::EnumerateEndpoints, ACCESS_DENIED);
    let report = node.pass(&EndpointIntent::new()).await;
    assert!(matches!(report.network, NetworkState::Present { .. }));
    assert_eq!(report.errors.len(), 1);
    assert_eq!(report.errors[0].action, HealAction::ListEndpoints);
    assert!(report.pending.is_empty());
    assert_eq!(node.metric("antrea_hns_stale_endpoints_pending"), 1);
    assert_eq!(node.metric("antrea_hns_heal_errors_total"), 1);
}
