//! The Windows backend over the fakes (`FakeWindows` = HNS + IP Helper, NetNat, firewall):
//! Node bring-up through the trait, restart, rollback at each step, the path where Windows does
//! not move the Node IP, a virtual uplink, reboot recovery, uninstall, peer routes, the host's
//! Service routes (the IP Helper calls made, as golden data), NodePort static mappings (the
//! NetNat calls made, as golden data) and Pod endpoints, and the takeover's guards (network
//! recreation by the reconciler, rollback by the watchdog). Runs on every platform (Linux and
//! Wine alike).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use hcn::fake::{AdapterRoute, vnic_name};
use hcn::schema::{HostComputeEndpoint, HostComputeNamespace, IpConfig, OVS_EXTENSION_ID};
use hcn::{HcnApi, Hresult, Operation};
use hostnet::naming::endpoint_name;
use hostnet::windows::heal::{
    EndpointIntent, HealConfig, HealMetrics, HnsReconciler, NetworkState,
};
use hostnet::windows::watchdog::{ScriptedProbe, Watchdog, WatchdogConfig, WatchdogVerdict};
use hostnet::windows::{
    FakeWindows, HNS_NETWORK, PEER_ROUTE_METRIC, SERVICE_ROUTE_METRIC, TakeoverGuard, WindowsHost,
    WindowsSettings,
};
use hostnet::{
    Error, GatewayConfig, HostNetwork, NodePortRules, Outcome, PeerRoute, PodDns, PodInterfaceSpec,
    PodSnat, RouteChanges, ServiceRoutes, TransportSelector,
};
use ipnet::Ipv4Net;
use model::{MacAddr, Protocol};
use winos::firewall::FakeFirewall;
use winos::iphelper::{IpHelperCall, IpHelperOp};
use winos::model::{Adapter, InterfaceType, IpFamily, Luid, NeighborState, OperStatus, Route};
use winos::netnat::{
    ANTREA_NAT, ANTREA_NODE_PORT_NAT, FakeNetNat, NatProtocol, NetNatCall, StaticMapping,
    StaticMappingInstance,
};
use winos::{FakeIpHelper, IpHelper, NatInstance, NetNat, WinOsError};

const BRIDGE: &str = "br-int";
const GATEWAY: &str = "antrea-gw0";
const NIC: &str = "Ethernet0";
const NIC_MAC: [u8; 6] = [0x00, 0x15, 0x5d, 0xaa, 0xbb, 0xcc];

type Host = WindowsHost<FakeWindows, FakeIpHelper, FakeNetNat, FakeFirewall>;

fn ip(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn cidr(s: &str) -> Ipv4Net {
    s.parse().unwrap()
}

fn adapter(alias: &str, description: &str, index: u32) -> Adapter {
    Adapter {
        name: format!("{{00000000-0000-0000-0000-{index:012}}}"),
        alias: alias.into(),
        description: description.into(),
        index,
        luid: Luid(u64::from(index)),
        mac: Some(MacAddr(NIC_MAC)),
        mtu: 1500,
        ipv4: vec!["10.10.0.11/24".parse().unwrap()],
        dns_servers: vec!["10.10.0.2".parse().unwrap()],
        dns_suffix: String::new(),
        oper_status: OperStatus::Up,
        if_type: InterfaceType::Ethernet,
    }
}

fn route(destination: &str, next_hop: &str, metric: u32) -> AdapterRoute {
    AdapterRoute {
        destination: destination.parse().unwrap(),
        next_hop: next_hop.parse().unwrap(),
        metric,
    }
}

/// The NIC's routes: the default route and one more via the default gateway (both saved by the
/// takeover), one via another router (not saved, as in Antrea).
fn nic_routes() -> Vec<AdapterRoute> {
    vec![
        route("0.0.0.0/0", "10.10.0.1", 256),
        route("192.168.50.0/24", "10.10.0.1", 256),
        route("172.16.0.0/16", "10.10.0.254", 256),
    ]
}

struct Node {
    fake: Arc<FakeWindows>,
    ip: Arc<FakeIpHelper>,
    nat: Arc<FakeNetNat>,
    firewall: Arc<FakeFirewall>,
    host: Host,
}

fn node_with(nic: Adapter) -> Node {
    let fake = Arc::new(FakeWindows::new());
    fake.add_nic(nic, &nic_routes()).unwrap();
    let ip = fake.ip_helper();
    let (nat, firewall) = (Arc::new(FakeNetNat::new()), Arc::new(FakeFirewall::new()));
    let settings = WindowsSettings {
        settle_wait: Duration::from_millis(100),
        poll_interval: Duration::from_millis(5),
        ..WindowsSettings::new(cidr("10.244.1.0/24"))
    };
    let host = WindowsHost::new(
        fake.clone(),
        ip.clone(),
        nat.clone(),
        firewall.clone(),
        settings,
    );
    Node {
        fake,
        ip,
        nat,
        firewall,
        host,
    }
}

fn node() -> Node {
    node_with(adapter(
        NIC,
        "Intel(R) 82574L Gigabit Network Connection",
        4,
    ))
}

/// What the Node's host looks like: every adapter with its addresses and DNS servers, and every
/// IPv4 route by adapter alias.
#[derive(Debug, PartialEq)]
struct HostState {
    adapters: Vec<(String, Vec<String>, Vec<IpAddr>)>,
    routes: Vec<(String, String, String, u32)>,
}

fn state(ip: &FakeIpHelper) -> HostState {
    let adapters = ip.adapters().unwrap();
    let alias = |index| {
        adapters
            .iter()
            .find(|a| a.index == index)
            .unwrap()
            .alias
            .clone()
    };
    let mut routes: Vec<_> = ip
        .routes()
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                alias(r.interface_index),
                r.destination.to_string(),
                r.next_hop.to_string(),
                r.metric,
            )
        })
        .collect();
    routes.sort();
    let mut adapters: Vec<_> = adapters
        .iter()
        .map(|a| {
            (
                a.alias.clone(),
                a.ipv4.iter().map(ToString::to_string).collect(),
                a.dns_servers.clone(),
            )
        })
        .collect();
    adapters.sort();
    HostState { adapters, routes }
}

fn writes(ip: &FakeIpHelper) -> Vec<IpHelperCall> {
    let reads = [
        IpHelperOp::Adapters,
        IpHelperOp::Routes,
        IpHelperOp::UnicastAddresses,
        IpHelperOp::Neighbors,
        IpHelperOp::IpInterface,
    ];
    ip.calls()
        .into_iter()
        .filter(|c| !reads.contains(&c.op()))
        .collect()
}

fn hns_writes(fake: &FakeWindows) -> Vec<Operation> {
    fake.hcn()
        .calls()
        .into_iter()
        .map(|c| c.operation)
        .filter(|op| {
            !matches!(
                op,
                Operation::QueryNetwork
                    | Operation::EnumerateNetworks
                    | Operation::QueryEndpoint
                    | Operation::EnumerateEndpoints
                    | Operation::QueryNamespace
                    | Operation::EnumerateNamespaces
            )
        })
        .collect()
}

fn gateway_config() -> GatewayConfig {
    GatewayConfig {
        name: GATEWAY.into(),
        address: cidr("10.244.1.1/24"),
        mac: None,
        mtu: 1450,
    }
}

fn peer(destination: &str, gateway: &str) -> PeerRoute {
    PeerRoute {
        destination: cidr(destination),
        gateway: ip(gateway),
        interface: GATEWAY.into(),
        onlink: true,
    }
}

fn snat() -> PodSnat {
    PodSnat {
        pod_cidr: cidr("10.244.1.0/24"),
        cluster_cidrs: vec![cidr("10.244.0.0/16")],
        egress_interface: BRIDGE.into(),
    }
}

/// The agent's bring-up order through the trait: find, prepare the bridge (the takeover on
/// Windows), take over, gateway (OVS makes its vNIC first), routes, SNAT. Returns the host
/// outcomes and the route changes.
async fn bring_up(node: &Node) -> hostnet::Result<(Vec<Outcome>, RouteChanges)> {
    let found = node
        .host
        .find_transport_interface(&TransportSelector::NodeIp(ip("10.10.0.11")))
        .await?;
    let prepared = node.host.prepare_bridge(&found, BRIDGE).await?;
    let (uplink, taken) = node.host.take_over_uplink(&found, BRIDGE).await?;
    assert_eq!(uplink.nic, NIC);
    if node.ip.adapter_by_alias(GATEWAY).unwrap().is_none() {
        node.fake
            .add_internal_port(GATEWAY, MacAddr([0x00, 0x15, 0x5d, 0x01, 0x02, 0x03]))
            .unwrap();
    }
    let (mac, gateway) = node.host.configure_gateway(&gateway_config()).await?;
    assert_eq!(
        mac.octets(),
        [0x00, 0x15, 0x5d, 0x01, 0x02, 0x03],
        "the adapter's own MAC is reported"
    );
    let routes = node
        .host
        .reconcile_peer_routes(&[peer("10.244.2.0/24", "10.244.2.1")])
        .await?;
    let snat = node.host.ensure_pod_snat(&snat()).await?;
    Ok((vec![prepared, taken, gateway, snat], routes))
}

fn nic_addresses(state: &HostState, alias: &str) -> Vec<String> {
    state
        .adapters
        .iter()
        .find(|a| a.0 == alias)
        .map(|a| a.1.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn bring_up_moves_the_node_onto_br_int_and_a_restart_changes_nothing() {
    let node = node();
    let (outcomes, routes) = bring_up(&node).await.unwrap();
    assert_eq!(
        outcomes,
        [
            Outcome::Changed,
            Outcome::Unchanged,
            Outcome::Changed,
            Outcome::Changed
        ]
    );
    assert_eq!(routes.added, [cidr("10.244.2.0/24")]);

    // The HNS network: Transparent on the NIC, the Pod subnet, the NIC's MAC, OVS enabled.
    let network = node
        .fake
        .find_network_by_name(HNS_NETWORK)
        .unwrap()
        .unwrap();
    assert_eq!(network.kind, hcn::schema::NetworkType::Transparent);
    assert_eq!(network.adapter_name(), Some(NIC));
    assert_eq!(
        network.ipams[0].subnets[0].ip_address_prefix,
        "10.244.1.0/24"
    );
    assert_eq!(network.ipams[0].subnets[0].routes[0].next_hop, "10.244.1.1");
    assert!(
        network
            .policies
            .contains(&hcn::schema::NetworkPolicy::SourceMacAddress {
                source_mac_address: "00-15-5D-AA-BB-CC".into()
            })
    );
    assert_eq!(network.extension_enabled(OVS_EXTENSION_ID), Some(true));
    // The extension is enabled by the last HNS write, after the network exists.
    assert_eq!(
        hns_writes(&node.fake),
        [Operation::CreateNetwork, Operation::ModifyNetwork]
    );

    // The NIC is bare; br-int (the renamed vNIC) has its MAC, address, DNS server and routes.
    let host = state(&node.ip);
    assert!(nic_addresses(&host, NIC).is_empty());
    assert!(
        nic_addresses(&host, &vnic_name(HNS_NETWORK)).is_empty(),
        "the vNIC was renamed"
    );
    assert_eq!(nic_addresses(&host, BRIDGE), ["10.10.0.11/24"]);
    let br = node.ip.adapter_by_alias(BRIDGE).unwrap().unwrap();
    assert_eq!(br.mac, Some(MacAddr(NIC_MAC)));
    assert_eq!(br.dns_servers, [ip("10.10.0.2")]);
    assert!(
        host.routes
            .contains(&(BRIDGE.into(), "0.0.0.0/0".into(), "10.10.0.1".into(), 256))
    );
    assert!(!host.routes.iter().any(|r| r.0 == NIC));
    assert!(
        node.ip
            .ip_interface(br.index, IpFamily::V4)
            .unwrap()
            .forwarding
    );

    // The gateway: one address, forwarding, MTU; the peer route is ours; NAT and firewall.
    let gw = node.ip.adapter_by_alias(GATEWAY).unwrap().unwrap();
    assert_eq!(nic_addresses(&host, GATEWAY), ["10.244.1.1/24"]);
    let settings = node.ip.ip_interface(gw.index, IpFamily::V4).unwrap();
    assert!(settings.forwarding);
    assert_eq!(settings.nl_mtu, 1450);
    assert!(host.routes.contains(&(
        GATEWAY.into(),
        "10.244.2.0/24".into(),
        "10.244.2.1".into(),
        PEER_ROUTE_METRIC
    )));
    let nat = winos::NetNat::get(&*node.nat, "antrea-nat")
        .unwrap()
        .unwrap();
    assert_eq!(nat.internal_prefix.to_string(), "10.244.1.0/24");
    let rules: Vec<String> = node.firewall.rules().into_iter().map(|r| r.name).collect();
    assert_eq!(rules, ["antrea-pod-cidr-in", "antrea-pod-cidr-out"]);

    // The uplink is found from HNS; the configured NIC name leads to br-int.
    let uplink = node.host.find_uplink(BRIDGE).await.unwrap().unwrap();
    assert_eq!(
        (uplink.nic.as_str(), uplink.bridge.name.as_str()),
        (NIC, BRIDGE)
    );
    let by_name = node
        .host
        .find_transport_interface(&TransportSelector::InterfaceName(NIC.into()))
        .await
        .unwrap();
    assert_eq!(by_name.name, BRIDGE);

    // A restart: the Node IP is on br-int and nothing is written anywhere.
    node.ip.clear_calls();
    let hns_before = hns_writes(&node.fake).len();
    let before = state(&node.ip);
    let (outcomes, routes) = bring_up(&node).await.unwrap();
    assert_eq!(outcomes, [Outcome::Unchanged; 4]);
    assert!(routes.is_empty());
    assert_eq!(writes(&node.ip), []);
    assert_eq!(hns_writes(&node.fake).len(), hns_before);
    assert_eq!(state(&node.ip), before);
}

#[tokio::test]
async fn uninstall_gives_the_nic_its_configuration_back() {
    let node = node();
    let before = state(&node.ip);
    bring_up(&node).await.unwrap();
    assert_eq!(
        node.host.reconcile_peer_routes(&[]).await.unwrap().deleted,
        [cidr("10.244.2.0/24")]
    );
    assert_eq!(node.host.remove_pod_snat().await.unwrap(), Outcome::Changed);
    let restored = node.host.restore_uplink(BRIDGE).await.unwrap().unwrap();
    assert_eq!(restored.name, NIC);
    assert_eq!(restored.addresses, [cidr("10.10.0.11/24")]);
    let mut after = state(&node.ip);
    after.adapters.retain(|a| a.0 != GATEWAY);
    assert_eq!(after, before);
    assert!(
        node.fake
            .find_network_by_name(HNS_NETWORK)
            .unwrap()
            .is_none()
    );
    assert_eq!(node.host.restore_uplink(BRIDGE).await.unwrap(), None);
    assert_eq!(
        node.host.remove_pod_snat().await.unwrap(),
        Outcome::Unchanged
    );
}

/// A failure at each takeover step leaves the host as it was: NIC with its address and routes,
/// no HNS network, no vNIC.
#[tokio::test]
async fn a_failed_takeover_leaves_the_host_as_it_was() {
    type Inject = fn(&Node);
    let steps: [(&str, Inject); 5] = [
        ("create the network", |n| {
            n.fake
                .hcn()
                .fail_next(Operation::CreateNetwork, Hresult::INVALID_ARG)
        }),
        ("rename the vNIC", |n| {
            n.ip.fail_next(
                IpHelperOp::RenameAdapter,
                WinOsError::AlreadyExists {
                    function: "Rename",
                    what: BRIDGE.into(),
                },
            )
        }),
        ("enable the extension", |n| {
            n.fake.hcn().fail_next(
                Operation::ModifyNetwork,
                Hresult::SWITCH_EXTENSION_NOT_FOUND,
            )
        }),
        ("enable forwarding", |n| {
            n.ip.fail_next(
                IpHelperOp::SetIpInterface,
                WinOsError::Unsupported {
                    function: "SetIpInterfaceEntry",
                },
            )
        }),
        ("put the address on the vNIC", |n| {
            n.fake.set_ip_move_fails(true);
            n.ip.fail_next(
                IpHelperOp::CreateUnicastAddress,
                WinOsError::Unsupported {
                    function: "CreateUnicastIpAddressEntry",
                },
            );
        }),
    ];
    for (step, inject) in steps {
        let node = node();
        let before = state(&node.ip);
        let found = node
            .host
            .find_transport_interface(&TransportSelector::NodeIp(ip("10.10.0.11")))
            .await
            .unwrap();
        inject(&node);
        let error = node.host.prepare_bridge(&found, BRIDGE).await.unwrap_err();
        assert!(
            matches!(error, Error::TakeoverFailed { .. }),
            "{step}: {error}"
        );
        assert_eq!(state(&node.ip), before, "{step}: {error}");
        assert!(
            node.fake
                .find_network_by_name(HNS_NETWORK)
                .unwrap()
                .is_none(),
            "{step}"
        );
        // Nothing is left behind that keeps a second attempt from working.
        node.fake.set_ip_move_fails(false);
        bring_up(&node)
            .await
            .unwrap_or_else(|e| panic!("{step}: retry: {e}"));
    }
}

#[tokio::test]
async fn when_windows_does_not_move_the_ip_the_backend_does() {
    let node = node();
    let before = state(&node.ip);
    node.fake.set_ip_move_fails(true);
    bring_up(&node).await.unwrap();
    let host = state(&node.ip);
    assert_eq!(nic_addresses(&host, BRIDGE), ["10.10.0.11/24"]);
    let br = node.ip.adapter_by_alias(BRIDGE).unwrap().unwrap();
    assert_eq!(br.dns_servers, [ip("10.10.0.2")]);
    let on_br: Vec<_> = host
        .routes
        .iter()
        .filter(|r| r.0 == BRIDGE)
        .map(|r| r.1.as_str())
        .collect();
    assert_eq!(
        on_br,
        ["0.0.0.0/0", "192.168.50.0/24"],
        "the routes via the default gateway, as Antrea saves them"
    );
    assert!(writes(&node.ip).contains(&IpHelperCall::SetDnsServers {
        interface_index: br.index,
        family: IpFamily::V4,
        servers: vec![ip("10.10.0.2").into()],
    }));
    // Deleting the network gives the NIC back everything.
    node.host.reconcile_peer_routes(&[]).await.unwrap();
    node.host.restore_uplink(BRIDGE).await.unwrap().unwrap();
    let mut after = state(&node.ip);
    after.adapters.retain(|a| a.0 != GATEWAY);
    assert_eq!(after, before);
}

#[tokio::test]
async fn a_virtual_uplink_is_refused_before_anything_is_made() {
    let node = node_with(adapter(
        "vEthernet (external)",
        "Hyper-V Virtual Ethernet Adapter #2",
        4,
    ));
    let found = node
        .host
        .find_transport_interface(&TransportSelector::NodeIp(ip("10.10.0.11")))
        .await
        .unwrap();
    let error = node.host.prepare_bridge(&found, BRIDGE).await.unwrap_err();
    assert!(matches!(error, Error::VirtualUplink { .. }), "{error}");
    assert!(
        error.to_string().contains("not a physical adapter"),
        "{error}"
    );
    assert_eq!(hns_writes(&node.fake), []);
}

#[tokio::test]
async fn after_a_reboot_bring_up_makes_the_network_again() {
    let node = node();
    bring_up(&node).await.unwrap();
    node.fake.reboot();
    assert!(
        node.fake
            .find_network_by_name(HNS_NETWORK)
            .unwrap()
            .is_none()
    );
    assert_eq!(
        nic_addresses(&state(&node.ip), NIC),
        ["10.10.0.11/24"],
        "the NIC has its address again"
    );
    assert!(node.host.find_uplink(BRIDGE).await.unwrap().is_none());
    let (outcomes, _) = bring_up(&node).await.unwrap();
    assert_eq!(outcomes[0], Outcome::Changed);
    assert_eq!(nic_addresses(&state(&node.ip), BRIDGE), ["10.10.0.11/24"]);
    let network = node
        .fake
        .find_network_by_name(HNS_NETWORK)
        .unwrap()
        .unwrap();
    assert_eq!(network.extension_enabled(OVS_EXTENSION_ID), Some(true));
}

#[tokio::test]
async fn peer_routes_are_added_replaced_and_deleted_and_others_are_left_alone() {
    let node = node();
    bring_up(&node).await.unwrap();
    let gw = node.ip.adapter_by_alias(GATEWAY).unwrap().unwrap();
    let foreign = Route::new(
        "10.99.0.0/16".parse().unwrap(),
        "10.244.1.254".parse().unwrap(),
        gw.index,
        256,
    );
    node.ip.create_route(&foreign).unwrap();
    let changes = node
        .host
        .reconcile_peer_routes(&[
            peer("10.244.2.0/24", "10.244.2.99"),
            peer("10.244.3.0/24", "10.244.3.1"),
        ])
        .await
        .unwrap();
    assert_eq!(
        changes,
        RouteChanges {
            added: vec![cidr("10.244.3.0/24")],
            replaced: vec![cidr("10.244.2.0/24")],
            deleted: vec![]
        }
    );
    let changes = node.host.reconcile_peer_routes(&[]).await.unwrap();
    assert_eq!(
        changes.deleted,
        [cidr("10.244.2.0/24"), cidr("10.244.3.0/24")]
    );
    let routes = node.ip.routes().unwrap();
    assert!(routes.contains(&foreign), "a route of someone else stays");
    assert!(!routes.iter().any(|r| r.metric == PEER_ROUTE_METRIC));
    let missing = [PeerRoute {
        interface: "nope".into(),
        ..peer("10.244.4.0/24", "10.244.4.1")
    }];
    let error = node.host.reconcile_peer_routes(&missing).await.unwrap_err();
    assert!(matches!(error, Error::InterfaceNotFound { .. }), "{error}");
}

fn service_routes(destinations: &[&str]) -> ServiceRoutes {
    ServiceRoutes {
        interface: GATEWAY.into(),
        destinations: destinations.iter().map(|d| cidr(d)).collect(),
    }
}

#[tokio::test]
async fn service_routes_are_antreas_neighbor_and_routes_on_the_gateway_and_peer_routes_stay() {
    let node = node();
    bring_up(&node).await.unwrap();
    let gw = node.ip.adapter_by_alias(GATEWAY).unwrap().unwrap().index;
    node.host
        .reconcile_peer_routes(&[peer("10.244.2.0/24", "10.244.2.1")])
        .await
        .unwrap();
    let vip: IpAddr = "169.254.0.253".parse().unwrap();
    let gvm = MacAddr([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]);
    let on_link = Route::new(
        "169.254.0.253/32".parse().unwrap(),
        "0.0.0.0".parse().unwrap(),
        gw,
        SERVICE_ROUTE_METRIC,
    );
    let via_vip = |d: &str| Route::new(d.parse().unwrap(), vip, gw, SERVICE_ROUTE_METRIC);
    node.ip.clear_calls();

    let changes = node
        .host
        .reconcile_service_routes(&service_routes(&["10.96.0.0/12"]))
        .await
        .unwrap();
    assert_eq!(changes.added, [cidr("10.96.0.0/12")]);
    // What Windows is sent, in order: Antrea's permanent neighbour, then the routes (metric 50).
    assert_eq!(
        writes(&node.ip),
        [
            IpHelperCall::CreatePermanentNeighbor {
                interface_index: gw,
                address: vip,
                mac: gvm
            },
            IpHelperCall::CreateRoute(on_link.clone()),
            IpHelperCall::CreateRoute(via_vip("10.96.0.0/12")),
        ]
    );
    let neighbors = node.ip.neighbors(IpFamily::V4).unwrap();
    assert!(
        neighbors.iter().any(|n| n.interface_index == gw
            && n.address == vip
            && n.mac == gvm
            && n.state == NeighborState::Permanent),
        "{neighbors:?}"
    );

    node.ip.clear_calls();
    let again = node
        .host
        .reconcile_service_routes(&service_routes(&["10.96.0.0/12"]))
        .await
        .unwrap();
    assert!(again.is_empty());
    assert_eq!(writes(&node.ip), [], "a repeat writes nothing");

    // Peer routes and Service routes are reconciled apart.
    node.host.reconcile_peer_routes(&[]).await.unwrap();
    let routes = node.ip.routes().unwrap();
    assert!(routes.contains(&on_link) && routes.contains(&via_vip("10.96.0.0/12")));
    node.host
        .reconcile_peer_routes(&[peer("10.244.2.0/24", "10.244.2.1")])
        .await
        .unwrap();

    // A neighbour entry for the virtual IP with another MAC is replaced.
    node.ip.delete_neighbor(gw, vip).unwrap();
    node.ip
        .create_permanent_neighbor(gw, vip, MacAddr([2, 0, 0, 0, 0, 1]))
        .unwrap();
    node.ip.clear_calls();
    let changes = node
        .host
        .reconcile_service_routes(&service_routes(&["10.96.0.0/16", "192.0.2.10/32"]))
        .await
        .unwrap();
    assert_eq!(
        changes,
        RouteChanges {
            added: vec![cidr("10.96.0.0/16"), cidr("192.0.2.10/32")],
            replaced: vec![],
            deleted: vec![cidr("10.96.0.0/12")],
        }
    );
    assert_eq!(
        writes(&node.ip),
        [
            IpHelperCall::DeleteNeighbor {
                interface_index: gw,
                address: vip
            },
            IpHelperCall::CreatePermanentNeighbor {
                interface_index: gw,
                address: vip,
                mac: gvm
            },
            IpHelperCall::DeleteRoute(via_vip("10.96.0.0/12").key()),
            IpHelperCall::CreateRoute(via_vip("10.96.0.0/16")),
            IpHelperCall::CreateRoute(via_vip("192.0.2.10/32")),
        ]
    );

    let error = node
        .host
        .reconcile_service_routes(&service_routes(&["169.254.0.0/16"]))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Invalid { .. }), "{error}");
    let missing = ServiceRoutes {
        interface: "antrea-gw9".into(),
        ..service_routes(&["10.96.0.0/16"])
    };
    let error = node
        .host
        .reconcile_service_routes(&missing)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::InterfaceNotFound { .. }), "{error}");

    // None wanted: the routes and the neighbour go, the peer route stays.
    let changes = node
        .host
        .reconcile_service_routes(&service_routes(&[]))
        .await
        .unwrap();
    assert_eq!(
        changes.deleted,
        [cidr("10.96.0.0/16"), cidr("192.0.2.10/32")]
    );
    let routes = node.ip.routes().unwrap();
    assert!(!routes.iter().any(|r| r.metric == SERVICE_ROUTE_METRIC));
    assert!(routes.iter().any(|r| r.metric == PEER_ROUTE_METRIC));
    assert!(
        !node
            .ip
            .neighbors(IpFamily::V4)
            .unwrap()
            .iter()
            .any(|n| n.address == vip)
    );
}

fn node_ports(ports: &[(Protocol, u16)], addresses: &[&str]) -> NodePortRules {
    NodePortRules {
        ports: ports.iter().copied().collect(),
        addresses: addresses.iter().map(|a| cidr(a)).collect(),
    }
}

/// A mapping of ours: `external:port` to the same port on 169.254.0.252.
fn node_port_mapping(protocol: NatProtocol, external: &str, port: u16) -> StaticMapping {
    StaticMapping {
        nat: ANTREA_NODE_PORT_NAT.into(),
        protocol,
        external_address: ip(external),
        external_port: port,
        internal_address: ip("169.254.0.252"),
        internal_port: port,
    }
}

/// The NetNat calls sent since the last look, and forgets them.
fn nat_calls(nat: &FakeNetNat) -> Vec<NetNatCall> {
    let calls = nat.calls();
    nat.clear_calls();
    calls
}

#[tokio::test]
async fn node_ports_are_static_mappings_of_antreas_nodeport_nat_and_other_nats_stay() {
    use NatProtocol::{Tcp, Udp};
    let node = node();
    bring_up(&node).await.unwrap();
    // Someone else's mapping in the SNAT instance (another port: the external port is the
    // host's, whatever the instance).
    let foreign = StaticMapping {
        nat: ANTREA_NAT.into(),
        protocol: Tcp,
        external_address: ip("0.0.0.0"),
        external_port: 8443,
        internal_address: ip("10.244.1.5"),
        internal_port: 443,
    };
    node.nat.add_static_mapping(&foreign).unwrap();
    nat_calls(&node.nat);
    let get = NetNatCall::Get(ANTREA_NODE_PORT_NAT.into());
    let list = NetNatCall::StaticMappings(ANTREA_NODE_PORT_NAT.into());
    let remove = |id| NetNatCall::RemoveStaticMapping {
        nat: ANTREA_NODE_PORT_NAT.into(),
        id,
    };
    let add = |protocol, external, port| {
        NetNatCall::AddStaticMapping(node_port_mapping(protocol, external, port))
    };
    let any_port = [
        (Protocol::Tcp, 30080),
        (Protocol::Tcp, 30443),
        (Protocol::Udp, 30053),
    ];

    // What Windows is sent, in order: Antrea's NAT on 169.254.0.252/32, then one mapping per
    // NodePort from 0.0.0.0:P to 169.254.0.252:P.
    let outcome = node
        .host
        .reconcile_node_ports(&node_ports(&any_port, &[]))
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Changed);
    assert_eq!(
        nat_calls(&node.nat),
        [
            get.clone(),
            NetNatCall::Create(NatInstance {
                name: ANTREA_NODE_PORT_NAT.into(),
                internal_prefix: "169.254.0.252/32".parse().unwrap(),
            }),
            list.clone(),
            add(Tcp, "0.0.0.0", 30080),
            add(Tcp, "0.0.0.0", 30443),
            add(Udp, "0.0.0.0", 30053),
        ]
    );

    let outcome = node
        .host
        .reconcile_node_ports(&node_ports(&any_port, &[]))
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Unchanged);
    assert_eq!(
        nat_calls(&node.nat),
        [get.clone(), list.clone()],
        "a repeat writes nothing"
    );

    // One NodePort gone: exactly its mapping is removed (ids: 0 the foreign one, 1-3 ours).
    let two = [(Protocol::Tcp, 30080), (Protocol::Udp, 30053)];
    let outcome = node
        .host
        .reconcile_node_ports(&node_ports(&two, &[]))
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Changed);
    assert_eq!(nat_calls(&node.nat), [get.clone(), list.clone(), remove(2)]);

    // nodePortAddresses as /32s: one mapping per address and port, the 0.0.0.0 ones go first.
    let addresses = ["10.10.0.11/32", "192.0.2.10/32"];
    node.host
        .reconcile_node_ports(&node_ports(&two, &addresses))
        .await
        .unwrap();
    assert_eq!(
        nat_calls(&node.nat),
        [
            get.clone(),
            list.clone(),
            remove(1),
            remove(3),
            add(Tcp, "10.10.0.11", 30080),
            add(Tcp, "192.0.2.10", 30080),
            add(Udp, "10.10.0.11", 30053),
            add(Udp, "192.0.2.10", 30053),
        ]
    );
    let ours = |nat: &FakeNetNat| -> Vec<StaticMapping> {
        nat.static_mappings(ANTREA_NODE_PORT_NAT)
            .unwrap()
            .into_iter()
            .map(|m| m.mapping)
            .collect()
    };
    let before = ours(&node.nat);
    assert_eq!(before.len(), 4);
    nat_calls(&node.nat);

    // A prefix NetNat cannot map: refused before anything is sent.
    let error = node
        .host
        .reconcile_node_ports(&node_ports(&two, &["10.10.0.0/24"]))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Invalid {
                what: "NodePort address",
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("single addresses"), "{error}");
    assert_eq!(nat_calls(&node.nat), [], "nothing is sent");
    assert_eq!(ours(&node.nat), before);

    // SCTP has no NetNat mapping: skipped, the TCP port is still mapped.
    let with_sctp = [(Protocol::Tcp, 30080), (Protocol::Sctp, 30099)];
    node.host
        .reconcile_node_ports(&node_ports(&with_sctp, &["10.10.0.11/32"]))
        .await
        .unwrap();
    assert_eq!(
        ours(&node.nat),
        [node_port_mapping(Tcp, "10.10.0.11", 30080)]
    );
    // SCTP ports only: nothing to map, so the NAT goes.
    node.host
        .reconcile_node_ports(&node_ports(&[(Protocol::Sctp, 30099)], &[]))
        .await
        .unwrap();
    assert_eq!(node.nat.get(ANTREA_NODE_PORT_NAT).unwrap(), None);
    node.host
        .reconcile_node_ports(&node_ports(&two, &[]))
        .await
        .unwrap();
    nat_calls(&node.nat);

    // None left: the NAT is deleted with its mappings; the SNAT NAT and its foreign mapping stay.
    let outcome = node
        .host
        .reconcile_node_ports(&NodePortRules::default())
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Changed);
    assert_eq!(
        nat_calls(&node.nat),
        [get.clone(), NetNatCall::Delete(ANTREA_NODE_PORT_NAT.into())]
    );
    let names: Vec<String> = node.nat.instances().into_iter().map(|n| n.name).collect();
    assert_eq!(names, [ANTREA_NAT]);
    assert_eq!(
        node.nat.mappings(),
        [StaticMappingInstance {
            id: 0,
            mapping: foreign
        }]
    );
    let outcome = node
        .host
        .reconcile_node_ports(&NodePortRules::default())
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Unchanged);
    assert_eq!(nat_calls(&node.nat), [get], "a repeat writes nothing");
}

#[tokio::test]
async fn gateway_loses_stale_addresses_and_keeps_link_local_ones() {
    let node = node();
    bring_up(&node).await.unwrap();
    let gw = node.ip.adapter_by_alias(GATEWAY).unwrap().unwrap();
    for stale in ["10.244.9.1/24", "169.254.7.7/16"] {
        node.ip
            .create_unicast_address(&winos::model::UnicastAddress {
                interface_index: gw.index,
                address: stale.parse().unwrap(),
            })
            .unwrap();
    }
    let (_, outcome) = node
        .host
        .configure_gateway(&gateway_config())
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Changed);
    let missing = GatewayConfig {
        name: "antrea-gw9".into(),
        ..gateway_config()
    };
    let error = node.host.configure_gateway(&missing).await.unwrap_err();
    assert!(matches!(error, Error::Timeout { .. }), "{error}");
    let mut left = nic_addresses(&state(&node.ip), GATEWAY);
    left.sort();
    assert_eq!(left, ["10.244.1.1/24", "169.254.7.7/16"]);
}

fn pod_spec(netns: &str, address: &str) -> PodInterfaceSpec {
    PodInterfaceSpec {
        netns: netns.into(),
        ifname: "eth0".into(),
        host_ifname: endpoint_name("web-7975b6c8d-x2x9q", "4f3c2b1a"),
        address: cidr(address),
        gateway: ip("10.244.1.1"),
        mtu: 1450,
        dns: Some(PodDns {
            nameservers: vec!["10.96.0.10".into()],
            search: vec!["default.svc.cluster.local".into()],
            domain: String::new(),
        }),
    }
}

async fn pod_node() -> (Node, String) {
    let node = node();
    bring_up(&node).await.unwrap();
    let namespace = node
        .fake
        .create_namespace(&HostComputeNamespace::default())
        .unwrap();
    (node, namespace.id.to_string())
}

#[tokio::test]
async fn pod_endpoint_add_repeat_check_delete() {
    let (node, netns) = pod_node().await;
    let spec = pod_spec(&netns, "10.244.1.10/24");
    let (created, outcome) = node.host.create_pod_interface(&spec).await.unwrap();
    assert_eq!(outcome, Outcome::Changed);
    assert_eq!(created.host_ifname, spec.host_ifname);
    assert_eq!(
        created.host_mac, created.container_mac,
        "HNS's MAC on both sides"
    );

    // The endpoint: on our network, in the namespace, with the IP, route and DNS settings.
    let endpoint = node
        .fake
        .find_endpoint_by_name(&spec.host_ifname)
        .unwrap()
        .unwrap();
    assert_eq!(
        endpoint.host_compute_namespace.map(|n| n.to_string()),
        Some(netns.clone())
    );
    assert_eq!(endpoint.ip_configurations[0].ip_address, "10.244.1.10");
    assert_eq!(endpoint.routes[0].next_hop, "10.244.1.1");
    assert_eq!(endpoint.dns.server_list, ["10.96.0.10"]);
    assert_eq!(endpoint.dns.search, ["default.svc.cluster.local"]);
    let vnic = node
        .ip
        .adapter_by_alias(&vnic_name(&spec.host_ifname))
        .unwrap()
        .unwrap();
    assert_eq!(
        node.ip
            .ip_interface(vnic.index, IpFamily::V4)
            .unwrap()
            .nl_mtu,
        1450
    );

    // A repeated ADD writes nothing and answers the same.
    let hns_before = hns_writes(&node.fake).len();
    node.ip.clear_calls();
    let (again, outcome) = node.host.create_pod_interface(&spec).await.unwrap();
    assert_eq!((again, outcome), (created.clone(), Outcome::Unchanged));
    assert_eq!(hns_writes(&node.fake).len(), hns_before);
    assert_eq!(writes(&node.ip), []);

    // CHECK passes, and fails on a wrong MAC, IP or namespace.
    node.host
        .check_pod_interface(&spec, &created)
        .await
        .unwrap();
    let wrong_mac = hostnet::PodInterface {
        container_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        ..created.clone()
    };
    let error = node
        .host
        .check_pod_interface(&spec, &wrong_mac)
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::CheckFailed { what: "MAC", .. }),
        "{error}"
    );
    let wrong_ip = pod_spec(&netns, "10.244.1.77/24");
    let error = node
        .host
        .check_pod_interface(&wrong_ip, &created)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::CheckFailed {
                what: "IP address",
                ..
            }
        ),
        "{error}"
    );

    // Only our endpoints are listed.
    let network = node
        .fake
        .find_network_by_name(HNS_NETWORK)
        .unwrap()
        .unwrap();
    let foreign = HostComputeEndpoint {
        name: "someone-elses-endpoint".into(),
        host_compute_network: network.id,
        ip_configurations: vec![IpConfig {
            ip_address: "10.244.1.200".into(),
            ..IpConfig::default()
        }],
        ..HostComputeEndpoint::default()
    };
    node.fake.create_endpoint(network.id, &foreign).unwrap();
    assert_eq!(
        node.host.pod_interfaces().await.unwrap(),
        std::slice::from_ref(&spec.host_ifname)
    );

    // An ADD with another IP replaces the endpoint.
    let moved = pod_spec(&netns, "10.244.1.11/24");
    let (_, outcome) = node.host.create_pod_interface(&moved).await.unwrap();
    assert_eq!(outcome, Outcome::Changed);
    let endpoint = node
        .fake
        .find_endpoint_by_name(&spec.host_ifname)
        .unwrap()
        .unwrap();
    assert_eq!(endpoint.ip_configurations[0].ip_address, "10.244.1.11");

    // DEL, twice; then the endpoint and its vNIC are gone.
    assert_eq!(
        node.host
            .delete_pod_interface(&spec.host_ifname)
            .await
            .unwrap(),
        Outcome::Changed
    );
    assert_eq!(
        node.host
            .delete_pod_interface(&spec.host_ifname)
            .await
            .unwrap(),
        Outcome::Unchanged
    );
    assert!(
        node.ip
            .adapter_by_alias(&vnic_name(&spec.host_ifname))
            .unwrap()
            .is_none()
    );
    let error = node
        .host
        .check_pod_interface(&moved, &created)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::CheckFailed {
                what: "HNS endpoint",
                ..
            }
        ),
        "{error}"
    );
}

#[tokio::test]
async fn pod_endpoint_partial_states_and_failures() {
    let (node, netns) = pod_node().await;
    let spec = pod_spec(&netns, "10.244.1.10/24");
    let network = node
        .fake
        .find_network_by_name(HNS_NETWORK)
        .unwrap()
        .unwrap();

    // An ADD cut short after the endpoint was created (not attached): DEL removes it...
    let leftover = HostComputeEndpoint {
        name: spec.host_ifname.clone(),
        host_compute_network: network.id,
        ip_configurations: vec![IpConfig {
            ip_address: "10.244.1.10".into(),
            ..IpConfig::default()
        }],
        ..HostComputeEndpoint::default()
    };
    node.fake.create_endpoint(network.id, &leftover).unwrap();
    assert_eq!(
        node.host
            .delete_pod_interface(&spec.host_ifname)
            .await
            .unwrap(),
        Outcome::Changed
    );
    assert!(
        node.fake
            .find_endpoint_by_name(&spec.host_ifname)
            .unwrap()
            .is_none()
    );
    // ...and a repeated ADD replaces it.
    node.fake.create_endpoint(network.id, &leftover).unwrap();
    let (_, outcome) = node.host.create_pod_interface(&spec).await.unwrap();
    assert_eq!(outcome, Outcome::Changed);
    let endpoint = node
        .fake
        .find_endpoint_by_name(&spec.host_ifname)
        .unwrap()
        .unwrap();
    assert_eq!(
        endpoint.host_compute_namespace.map(|n| n.to_string()),
        Some(netns.clone())
    );
    node.host
        .delete_pod_interface(&spec.host_ifname)
        .await
        .unwrap();

    // A failed attach leaves no endpoint behind.
    node.fake.hcn().fail_next(
        Operation::ModifyNamespace,
        Hresult::ENDPOINT_NAMESPACE_ALREADY_EXISTS,
    );
    let error = node.host.create_pod_interface(&spec).await.unwrap_err();
    assert!(matches!(error, Error::Hns { .. }), "{error}");
    assert!(
        node.fake
            .find_endpoint_by_name(&spec.host_ifname)
            .unwrap()
            .is_none()
    );
    assert!(
        node.ip
            .adapter_by_alias(&vnic_name(&spec.host_ifname))
            .unwrap()
            .is_none()
    );

    // A failed MTU write too (the endpoint was attached by then).
    node.ip.fail_next(
        IpHelperOp::SetIpInterface,
        WinOsError::Unsupported {
            function: "SetIpInterfaceEntry",
        },
    );
    node.host.create_pod_interface(&spec).await.unwrap_err();
    assert!(
        node.fake
            .find_endpoint_by_name(&spec.host_ifname)
            .unwrap()
            .is_none()
    );

    // The namespace must be an HCN namespace GUID.
    let error = node
        .host
        .create_pod_interface(&pod_spec("/var/run/netns/x", "10.244.1.10/24"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Invalid {
                what: "HCN namespace",
                ..
            }
        ),
        "{error}"
    );

    // Without the HNS network there is nothing to attach to.
    node.host.restore_uplink(BRIDGE).await.unwrap();
    let error = node.host.create_pod_interface(&spec).await.unwrap_err();
    assert!(matches!(error, Error::HnsNetworkMissing { .. }), "{error}");
    assert_eq!(
        node.host.pod_interfaces().await.unwrap(),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn transport_lookup_by_cidr_and_the_error_lists_every_adapter() {
    let node = node();
    let found = node
        .host
        .find_transport_interface(&TransportSelector::Cidrs(vec![cidr("10.10.0.0/16")]))
        .await
        .unwrap();
    assert_eq!(found.name, NIC);
    assert_eq!(found.default_gateway(), Some(ip("10.10.0.1")));
    let error = node
        .host
        .find_transport_interface(&TransportSelector::NodeIp(ip("10.99.0.1")))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("Ethernet0 [10.10.0.11/24]"),
        "{error}"
    );
}

/// The reconciler and the watchdog of a Node, with the backend's [`TakeoverGuard`] as their
/// callback; passes run without a grace period.
fn guarded(
    node: &Node,
) -> (
    HnsReconciler<TakeoverGuard<FakeWindows, FakeIpHelper, FakeNetNat, FakeFirewall>>,
    Guard,
) {
    let config = HealConfig {
        grace: Duration::ZERO,
        ..HealConfig::new(HNS_NETWORK)
    };
    let hns: Arc<dyn HcnApi> = node.fake.clone();
    let reconciler = HnsReconciler::new(
        hns,
        TakeoverGuard::new(&node.host, NIC, BRIDGE),
        config,
        HealMetrics::default(),
    );
    (reconciler, TakeoverGuard::new(&node.host, NIC, BRIDGE))
}

type Guard = TakeoverGuard<FakeWindows, FakeIpHelper, FakeNetNat, FakeFirewall>;

/// The NIC's addresses, the bridge's, the routes via the default gateway, the extension.
type TakeoverState = (
    Vec<String>,
    Vec<String>,
    Vec<(String, String)>,
    Option<bool>,
);

/// The takeover as the host shows it: the addresses of the NIC and of the bridge, the routes
/// through the default gateway on each, the network's extension.
fn takeover_state(node: &Node) -> TakeoverState {
    let host = state(&node.ip);
    let via_gateway = host
        .routes
        .iter()
        .filter(|r| r.2 == "10.10.0.1")
        .map(|r| (r.0.clone(), r.1.clone()))
        .collect();
    let extension = node
        .fake
        .find_network_by_name(HNS_NETWORK)
        .unwrap()
        .and_then(|n| n.extension_enabled(OVS_EXTENSION_ID));
    (
        nic_addresses(&host, NIC),
        nic_addresses(&host, BRIDGE),
        via_gateway,
        extension,
    )
}

#[tokio::test]
async fn after_a_reboot_the_reconciler_takes_the_nic_over_again() {
    let node = node();
    bring_up(&node).await.unwrap();
    let taken_over = takeover_state(&node);
    assert_eq!(taken_over.1, ["10.10.0.11/24"]);
    let (mut reconciler, _) = guarded(&node);
    node.fake.reboot();
    assert_ne!(
        takeover_state(&node),
        taken_over,
        "the reboot undid the takeover"
    );

    let report = reconciler.reconcile(&EndpointIntent::new()).await;
    assert!(
        matches!(report.network, NetworkState::Missing { recreate: Ok(()) }),
        "{report:?}"
    );
    assert_eq!(takeover_state(&node), taken_over);
    assert_eq!(
        node.host.find_uplink(BRIDGE).await.unwrap().unwrap().nic,
        NIC
    );
    let report = reconciler.reconcile(&EndpointIntent::new()).await;
    assert!(
        matches!(report.network, NetworkState::Present { .. }),
        "{report:?}"
    );
}

#[tokio::test]
async fn a_watchdog_that_reaches_nothing_gives_the_nic_its_configuration_back() {
    let node = node();
    let before = takeover_state(&node);
    bring_up(&node).await.unwrap();
    let (_, guard) = guarded(&node);
    let config = WatchdogConfig {
        window: Duration::ZERO,
        ..WatchdogConfig::default()
    };
    let watchdog = Watchdog::new(
        ScriptedProbe::always("gateway", false),
        ScriptedProbe::always("api", false),
        config,
    );
    let verdict = watchdog.watch(&guard, std::future::pending()).await;
    assert!(
        matches!(
            verdict,
            WatchdogVerdict::RolledBack {
                rounds: 1,
                result: Ok(())
            }
        ),
        "{verdict:?}"
    );
    assert!(
        node.fake
            .find_network_by_name(HNS_NETWORK)
            .unwrap()
            .is_none()
    );
    let after = takeover_state(&node);
    assert_eq!(
        (after.0, after.2),
        (before.0, before.2),
        "the NIC has its address and routes back"
    );
}

#[tokio::test]
async fn the_reconciler_removes_an_orphan_endpoint_and_keeps_the_pods() {
    let (node, netns) = pod_node().await;
    let spec = pod_spec(&netns, "10.244.1.10/24");
    node.host.create_pod_interface(&spec).await.unwrap();
    let network = node
        .fake
        .find_network_by_name(HNS_NETWORK)
        .unwrap()
        .unwrap();
    let orphan = HostComputeEndpoint {
        name: "left-by-a-failed-add".into(),
        host_compute_network: network.id,
        ip_configurations: vec![IpConfig {
            ip_address: "10.244.1.77".into(),
            ..IpConfig::default()
        }],
        ..HostComputeEndpoint::default()
    };
    node.fake.create_endpoint(network.id, &orphan).unwrap();
    let intent: EndpointIntent = [(spec.host_ifname.clone(), IpAddr::V4(ip("10.244.1.10")))]
        .into_iter()
        .collect();
    let (mut reconciler, _) = guarded(&node);

    let first = reconciler.reconcile(&intent).await;
    assert!(
        first.removed.is_empty(),
        "an endpoint seen stale for the first time stays: {first:?}"
    );
    let second = reconciler.reconcile(&intent).await;
    assert_eq!(second.removed_orphans(), ["left-by-a-failed-add"]);
    assert!(
        node.fake
            .find_endpoint_by_name("left-by-a-failed-add")
            .unwrap()
            .is_none()
    );
    assert!(
        node.fake
            .find_endpoint_by_name(&spec.host_ifname)
            .unwrap()
            .is_some(),
        "the Pod's endpoint stays"
    );
}
