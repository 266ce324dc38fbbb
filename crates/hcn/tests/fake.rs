//! FakeHcn behaves like HNS where the agent depends on it: what a Transparent network does to
//! the host's adapters, endpoint MACs and vNICs, namespace attach/detach, HNS's error codes,
//! reboot, failure injection and the call log.

use std::sync::Arc;

mod support;

use hcn::fake::{
    AdapterChange, AdapterChangeError, AdapterRoute, Call, FakeHcn, HostAdapter, HostModel,
    vnic_name,
};
use hcn::schema::{
    HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, HostComputeQuery, IpConfig,
    Ipam, MacPool, MacRange, ModifyNamespaceSettingRequest, ModifyNetworkSettingRequest,
    ModifyRequestType, NamespaceResourceType, NetworkPolicy, NetworkResourceType, NetworkType,
    QueryFilter, Route, Subnet, SwitchExtensionState,
};
use hcn::{Guid, HcnApi, HcnError, Hresult, Operation};
use ipnet::Ipv4Net;
use model::MacAddr;
use support::transparent;

const NIC: &str = "Ethernet0";
const NETWORK: &str = "antrea-hnsnetwork";

fn mac(text: &str) -> MacAddr {
    text.parse().expect("test MAC")
}

fn net(text: &str) -> Ipv4Net {
    text.parse().expect("test prefix")
}

fn route(destination: &str, next_hop: &str) -> AdapterRoute {
    AdapterRoute {
        destination: net(destination),
        next_hop: next_hop.parse().expect("test IP"),
        metric: 0,
    }
}

fn nic() -> HostAdapter {
    HostAdapter::physical(
        NIC,
        mac("00-15-5D-AA-BB-CC"),
        vec![net("192.168.1.10/24")],
        vec![
            route("0.0.0.0/0", "192.168.1.1"),
            route("10.0.0.0/8", "192.168.1.1"),
        ],
    )
}

/// A host with the physical NIC and one virtual adapter of another switch.
fn host() -> HostModel {
    let mut host = HostModel::with_nic(nic());
    host.adapters.push(HostAdapter {
        name: "vEthernet (nat)".into(),
        mac: mac("00-15-5D-00-00-01"),
        ipv4: vec![net("172.20.0.1/20")],
        routes: vec![],
        is_virtual: true,
        owner: None,
    });
    host
}

fn endpoint(name: &str, ip: &str) -> HostComputeEndpoint {
    HostComputeEndpoint {
        name: name.into(),
        ip_configurations: vec![IpConfig {
            ip_address: ip.into(),
            prefix_length: 24,
            ip_subnet_id: None,
        }],
        routes: vec![Route::default_via("10.10.1.1")],
        ..HostComputeEndpoint::default()
    }
}

fn hresult<T: std::fmt::Debug>(result: Result<T, HcnError>) -> Hresult {
    result
        .expect_err("the call must fail")
        .hresult()
        .expect("an HNS error")
}

/// A fake with Antrea's network created.
fn with_network() -> (FakeHcn, HostComputeNetwork) {
    let fake = FakeHcn::new(host());
    let network = fake
        .create_network(&transparent(NETWORK, NIC))
        .expect("create network");
    (fake, network)
}

#[test]
fn transparent_network_moves_the_nic_config_to_its_vnic() {
    let (fake, network) = with_network();
    assert!(!network.id.is_nil());
    let host = fake.host();
    let vnic = host
        .adapter(&vnic_name(NETWORK))
        .expect("the network's vNIC");
    assert_eq!(vnic.name, "vEthernet (antrea-hnsnetwork)");
    assert_eq!(vnic.mac, nic().mac);
    assert_eq!(vnic.ipv4, nic().ipv4);
    assert_eq!(vnic.routes, nic().routes);
    assert!(vnic.is_virtual);
    assert_eq!(vnic.owner, Some(network.id));
    let bare = host.adapter(NIC).expect("the NIC stays");
    assert!(bare.ipv4.is_empty() && bare.routes.is_empty());
    assert_eq!(bare.mac, nic().mac);
    assert_eq!(fake.query_network(network.id).expect("query"), network);
}

#[test]
fn deleting_the_network_returns_the_config_to_the_nic() {
    let (fake, network) = with_network();
    fake.delete_network(network.id).expect("delete");
    assert_eq!(fake.host(), host());
    assert_eq!(
        hresult(fake.query_network(network.id)),
        Hresult::NETWORK_NOT_FOUND
    );
}

#[test]
fn network_creation_errors_leave_the_host_alone() {
    let (fake, _) = with_network();
    let before = fake.host();
    assert_eq!(
        hresult(fake.create_network(&transparent(NETWORK, "Ethernet1"))),
        Hresult::NETWORK_ALREADY_EXISTS
    );
    assert_eq!(
        hresult(fake.create_network(&transparent("other", "Ethernet9"))),
        Hresult::ADAPTER_NOT_FOUND
    );
    // The NIC is already bound; a virtual adapter cannot be bound.
    assert_eq!(
        hresult(fake.create_network(&transparent("other", NIC))),
        Hresult::INVALID_ARG
    );
    assert_eq!(
        hresult(fake.create_network(&transparent("other", "vEthernet (nat)"))),
        Hresult::INVALID_ARG
    );
    let without_adapter = HostComputeNetwork {
        policies: vec![],
        ..transparent("other", NIC)
    };
    assert_eq!(
        hresult(fake.create_network(&without_adapter)),
        Hresult::INVALID_NETWORK
    );
    let unknown_extension = HostComputeNetwork {
        policies: vec![NetworkPolicy::VSwitchExtension {
            extension_id: Guid(7),
            enable: true,
        }],
        ..transparent("other", NIC)
    };
    assert_eq!(
        hresult(fake.create_network(&unknown_extension)),
        Hresult::SWITCH_EXTENSION_NOT_FOUND
    );
    let bad_prefix = HostComputeNetwork {
        ipams: vec![Ipam::static_subnets(vec![Subnet {
            ip_address_prefix: "10.10.1.0/33".into(),
            ..Subnet::default()
        }])],
        ..transparent("other", NIC)
    };
    assert_eq!(
        hresult(fake.create_network(&bad_prefix)),
        Hresult::INVALID_PREFIX
    );
    let bad_type = HostComputeNetwork {
        kind: NetworkType::Other("Mirrored".into()),
        ..transparent("other", NIC)
    };
    assert_eq!(
        hresult(fake.create_network(&bad_type)),
        Hresult::INVALID_NETWORK_TYPE
    );
    assert_eq!(fake.host(), before);
    assert_eq!(
        fake.enumerate_networks(&HostComputeQuery::default())
            .expect("enumerate")
            .len(),
        1
    );
}

/// A non-Transparent network touches no adapter.
#[test]
fn nat_network_has_no_host_effect() {
    let fake = FakeHcn::new(host());
    fake.create_network(&HostComputeNetwork {
        name: "nat2".into(),
        ..HostComputeNetwork::default()
    })
    .expect("create");
    assert_eq!(fake.host(), host());
}

#[test]
fn endpoint_macs_come_from_the_pool_in_sequence() {
    let fake = FakeHcn::new(host());
    let pooled = HostComputeNetwork {
        mac_pool: MacPool {
            ranges: vec![MacRange {
                start_mac_address: "00-15-5D-52-C0-00".into(),
                end_mac_address: "00-15-5D-52-C0-01".into(),
            }],
        },
        ..transparent(NETWORK, NIC)
    };
    let network = fake.create_network(&pooled).expect("create network");
    let a = fake
        .create_endpoint(network.id, &endpoint("a", "10.10.1.2"))
        .expect("a");
    let b = fake
        .create_endpoint(network.id, &endpoint("b", "10.10.1.3"))
        .expect("b");
    assert_eq!(
        (a.mac_address.as_str(), b.mac_address.as_str()),
        ("00-15-5D-52-C0-00", "00-15-5D-52-C0-01")
    );
    assert_eq!(a.host_compute_network, network.id);
    assert_eq!(
        hresult(fake.create_endpoint(network.id, &endpoint("c", "10.10.1.4"))),
        Hresult::ADDR_INVALID_OR_RESERVED
    );
    // A freed MAC is handed out again.
    fake.delete_endpoint(a.id).expect("delete a");
    let c = fake
        .create_endpoint(network.id, &endpoint("c", "10.10.1.4"))
        .expect("c");
    assert_eq!(c.mac_address, "00-15-5D-52-C0-00");
    // A MAC given by the caller is kept (normalized to dash form).
    let d = fake
        .create_endpoint(
            network.id,
            &HostComputeEndpoint {
                mac_address: "02:00:00:00:00:0a".into(),
                ..endpoint("d", "10.10.1.5")
            },
        )
        .expect("d");
    assert_eq!(d.mac_address, "02-00-00-00-00-0A");
}

#[test]
fn default_pool_is_the_hyper_v_oui() {
    let (fake, network) = with_network();
    let a = fake
        .create_endpoint(network.id, &endpoint("a", "10.10.1.2"))
        .expect("a");
    assert_eq!(a.mac_address, "00-15-5D-00-00-00");
}

#[test]
fn endpoint_creation_errors() {
    let (fake, network) = with_network();
    fake.create_endpoint(network.id, &endpoint("a", "10.10.1.2"))
        .expect("a");
    assert_eq!(
        hresult(fake.create_endpoint(network.id, &endpoint("a", "10.10.1.3"))),
        Hresult::OBJECT_ALREADY_EXISTS
    );
    assert_eq!(
        hresult(fake.create_endpoint(Guid(42), &endpoint("b", "10.10.1.3"))),
        Hresult::NETWORK_NOT_FOUND
    );
    assert_eq!(
        hresult(fake.create_endpoint(network.id, &endpoint("b", "10.10.2.3"))),
        Hresult::INVALID_IP
    );
    assert_eq!(
        hresult(fake.create_endpoint(network.id, &endpoint("b", "not-an-ip"))),
        Hresult::INVALID_IP
    );
    let bad_mac = HostComputeEndpoint {
        mac_address: "00-15".into(),
        ..endpoint("b", "10.10.1.3")
    };
    assert_eq!(
        hresult(fake.create_endpoint(network.id, &bad_mac)),
        Hresult::INVALID_ENDPOINT
    );
    assert_eq!(
        fake.enumerate_endpoints(&HostComputeQuery::default())
            .expect("enumerate")
            .len(),
        1
    );
}

#[test]
fn unknown_ids_get_hns_not_found_codes() {
    let fake = FakeHcn::new(host());
    let id = Guid(0x1234);
    assert_eq!(hresult(fake.query_network(id)), Hresult::NETWORK_NOT_FOUND);
    assert_eq!(hresult(fake.delete_network(id)), Hresult::NETWORK_NOT_FOUND);
    assert_eq!(
        hresult(fake.query_endpoint(id)),
        Hresult::ENDPOINT_NOT_FOUND
    );
    assert_eq!(
        hresult(fake.delete_endpoint(id)),
        Hresult::ENDPOINT_NOT_FOUND
    );
    assert_eq!(
        hresult(fake.query_namespace(id)),
        Hresult::ELEMENT_NOT_FOUND
    );
    assert_eq!(
        hresult(fake.delete_namespace(id)),
        Hresult::ELEMENT_NOT_FOUND
    );
    let error = fake.query_endpoint(id).unwrap_err();
    assert!(error.is_not_found());
    assert_eq!(
        error.to_string(),
        "HcnQueryEndpointProperties 00000000-0000-0000-0000-000000001234: 0x803B0002 (HCN_E_ENDPOINT_NOT_FOUND): The endpoint was not found."
    );
}

#[test]
fn attaching_an_endpoint_creates_its_vnic_and_detaching_removes_it() {
    let (fake, network) = with_network();
    let ep = fake
        .create_endpoint(network.id, &endpoint("pod-a", "10.10.1.5"))
        .expect("endpoint");
    assert!(
        fake.host().adapter(&vnic_name("pod-a")).is_none(),
        "no vNIC before attach"
    );
    let ns = fake
        .create_namespace(&HostComputeNamespace::default())
        .expect("namespace");
    fake.attach_endpoint(ns.id, ep.id).expect("attach");

    let host = fake.host();
    let vnic = host
        .adapter("vEthernet (pod-a)")
        .expect("the endpoint's vNIC");
    assert_eq!(vnic.mac.windows().to_string(), ep.mac_address);
    assert_eq!(vnic.ipv4, vec![net("10.10.1.5/24")]);
    assert_eq!(vnic.routes, vec![route("0.0.0.0/0", "10.10.1.1")]);
    assert_eq!(vnic.owner, Some(ep.id));
    assert_eq!(
        fake.query_endpoint(ep.id)
            .expect("query")
            .host_compute_namespace,
        Some(ns.id)
    );
    let queried = fake.query_namespace(ns.id).expect("query namespace");
    assert_eq!(queried.endpoint_ids(), vec![ep.id]);
    assert_eq!(queried.resources[0].kind, NamespaceResourceType::Endpoint);

    fake.detach_endpoint(ns.id, ep.id).expect("detach");
    assert!(fake.host().adapter("vEthernet (pod-a)").is_none());
    assert_eq!(
        fake.query_endpoint(ep.id)
            .expect("query")
            .host_compute_namespace,
        None
    );
    assert!(
        fake.query_namespace(ns.id)
            .expect("query")
            .endpoint_ids()
            .is_empty()
    );
}

/// An address without a prefix length takes its subnet's.
#[test]
fn endpoint_vnic_prefix_defaults_to_the_subnet() {
    let (fake, network) = with_network();
    let bare = HostComputeEndpoint {
        ip_configurations: vec![IpConfig {
            ip_address: "10.10.1.9".into(),
            prefix_length: 0,
            ip_subnet_id: None,
        }],
        ..endpoint("pod-b", "unused")
    };
    let ep = fake.create_endpoint(network.id, &bare).expect("endpoint");
    let ns = fake
        .create_namespace(&HostComputeNamespace::default())
        .expect("namespace");
    fake.attach_endpoint(ns.id, ep.id).expect("attach");
    assert_eq!(
        fake.host().adapter("vEthernet (pod-b)").expect("vNIC").ipv4,
        vec![net("10.10.1.9/24")]
    );
}

#[test]
fn namespace_modify_errors() {
    let (fake, network) = with_network();
    let ep = fake
        .create_endpoint(network.id, &endpoint("pod-a", "10.10.1.5"))
        .expect("endpoint");
    let ns = fake
        .create_namespace(&HostComputeNamespace::default())
        .expect("namespace");
    let other = fake
        .create_namespace(&HostComputeNamespace::default())
        .expect("namespace");
    assert_ne!(ns.namespace_id, other.namespace_id);

    assert_eq!(
        hresult(fake.attach_endpoint(Guid(99), ep.id)),
        Hresult::ELEMENT_NOT_FOUND
    );
    assert_eq!(
        hresult(fake.attach_endpoint(ns.id, Guid(99))),
        Hresult::ENDPOINT_NOT_FOUND
    );
    assert_eq!(
        hresult(fake.detach_endpoint(ns.id, ep.id)),
        Hresult::ENDPOINT_NOT_ATTACHED
    );
    fake.attach_endpoint(ns.id, ep.id).expect("attach");
    assert_eq!(
        hresult(fake.attach_endpoint(ns.id, ep.id)),
        Hresult::ENDPOINT_NAMESPACE_ALREADY_EXISTS
    );
    assert_eq!(
        hresult(fake.attach_endpoint(other.id, ep.id)),
        Hresult::ENDPOINT_NAMESPACE_ALREADY_EXISTS
    );
    assert_eq!(
        hresult(fake.detach_endpoint(other.id, ep.id)),
        Hresult::ENDPOINT_NOT_ATTACHED
    );
    let container = ModifyNamespaceSettingRequest {
        resource_type: NamespaceResourceType::Container,
        request_type: ModifyRequestType::Add,
        settings: serde_json::json!({"ContainerId": "c"}),
    };
    assert_eq!(
        hresult(fake.modify_namespace(ns.id, &container)),
        Hresult::REQUEST_UNSUPPORTED
    );
    let no_id = ModifyNamespaceSettingRequest {
        settings: serde_json::json!({"EndpointId": "x"}),
        ..ModifyNamespaceSettingRequest::add_endpoint(ep.id)
    };
    assert_eq!(
        hresult(fake.modify_namespace(ns.id, &no_id)),
        Hresult::INVALID_JSON
    );
    assert_eq!(
        fake.query_namespace(ns.id).expect("query").endpoint_ids(),
        vec![ep.id]
    );
}

#[test]
fn deleting_an_attached_endpoint_or_its_namespace_detaches_it() {
    let (fake, network) = with_network();
    let a = fake
        .create_endpoint(network.id, &endpoint("a", "10.10.1.5"))
        .expect("a");
    let b = fake
        .create_endpoint(network.id, &endpoint("b", "10.10.1.6"))
        .expect("b");
    let ns = fake
        .create_namespace(&HostComputeNamespace::default())
        .expect("namespace");
    fake.attach_endpoint(ns.id, a.id).expect("attach a");
    fake.attach_endpoint(ns.id, b.id).expect("attach b");

    fake.delete_endpoint(a.id).expect("delete a");
    assert!(fake.host().adapter("vEthernet (a)").is_none());
    assert_eq!(
        fake.query_namespace(ns.id).expect("query").endpoint_ids(),
        vec![b.id]
    );

    fake.delete_namespace(ns.id).expect("delete namespace");
    assert!(fake.host().adapter("vEthernet (b)").is_none());
    assert_eq!(
        fake.query_endpoint(b.id)
            .expect("b stays")
            .host_compute_namespace,
        None
    );
}

#[test]
fn a_network_with_endpoints_cannot_be_deleted() {
    let (fake, network) = with_network();
    let ep = fake
        .create_endpoint(network.id, &endpoint("a", "10.10.1.5"))
        .expect("a");
    let before = fake.host();
    assert_eq!(
        hresult(fake.delete_network(network.id)),
        Hresult::ENTITY_HAS_REFERENCES
    );
    assert_eq!(fake.host(), before);
    fake.delete_endpoint(ep.id).expect("delete endpoint");
    fake.delete_network(network.id)
        .expect("then the network goes");
}

/// A reboot loses every HNS object; the NIC gets its configuration back even after the agent
/// renamed the network's vNIC (it is found by owner, not by name).
#[test]
fn reboot_drops_hns_state_and_restores_the_nic() {
    let (fake, network) = with_network();
    let ep = fake
        .create_endpoint(network.id, &endpoint("a", "10.10.1.5"))
        .expect("a");
    let ns = fake
        .create_namespace(&HostComputeNamespace::default())
        .expect("namespace");
    fake.attach_endpoint(ns.id, ep.id).expect("attach");
    fake.apply(AdapterChange::Rename {
        from: vnic_name(NETWORK),
        to: "br-int".into(),
    })
    .expect("rename");
    assert!(fake.host().adapter("br-int").is_some());

    fake.reboot();
    assert_eq!(fake.host(), host());
    assert!(
        fake.enumerate_networks(&HostComputeQuery::default())
            .expect("enumerate")
            .is_empty()
    );
    assert!(
        fake.enumerate_endpoints(&HostComputeQuery::default())
            .expect("enumerate")
            .is_empty()
    );
    assert!(
        fake.enumerate_namespaces(&HostComputeQuery::default())
            .expect("enumerate")
            .is_empty()
    );
    assert_eq!(fake.find_network_by_name(NETWORK).expect("find"), None);
    // The network can be created again.
    fake.create_network(&transparent(NETWORK, NIC))
        .expect("create again");
    assert!(fake.host().adapter(&vnic_name(NETWORK)).is_some());
}

#[test]
fn injected_failure_hits_the_next_call_of_its_kind_only() {
    let fake = FakeHcn::new(host());
    fake.fail_next(Operation::CreateNetwork, Hresult::INVALID_ARG);
    fake.fail_next(Operation::CreateNetwork, Hresult(0x803B_0018));
    // Other operations are not affected.
    assert!(
        fake.enumerate_networks(&HostComputeQuery::default())
            .expect("enumerate")
            .is_empty()
    );
    let error = fake.create_network(&transparent(NETWORK, NIC)).unwrap_err();
    assert_eq!(error.hresult(), Some(Hresult::INVALID_ARG));
    assert_eq!(fake.host(), host(), "a failed call changes nothing");
    assert_eq!(
        hresult(fake.create_network(&transparent(NETWORK, NIC))),
        Hresult(0x803B_0018)
    );
    let network = fake
        .create_network(&transparent(NETWORK, NIC))
        .expect("third call succeeds");

    assert_eq!(
        fake.calls(),
        vec![
            Call {
                operation: Operation::EnumerateNetworks,
                subject: "(all)".into(),
                result: Ok(())
            },
            Call {
                operation: Operation::CreateNetwork,
                subject: NETWORK.into(),
                result: Err(Hresult::INVALID_ARG)
            },
            Call {
                operation: Operation::CreateNetwork,
                subject: NETWORK.into(),
                result: Err(Hresult(0x803B_0018))
            },
            Call {
                operation: Operation::CreateNetwork,
                subject: NETWORK.into(),
                result: Ok(())
            },
        ]
    );
    fake.fail_next(Operation::DeleteNetwork, Hresult::ELEMENT_NOT_FOUND);
    assert!(fake.delete_network(network.id).unwrap_err().is_not_found());
    assert_eq!(
        fake.query_network(network.id).expect("still there").id,
        network.id
    );
}

#[test]
fn enumeration_filters() {
    let (fake, network) = with_network();
    let other = fake
        .create_network(&HostComputeNetwork {
            name: "nat".into(),
            ..HostComputeNetwork::default()
        })
        .expect("nat");
    let a = fake
        .create_endpoint(network.id, &endpoint("a", "10.10.1.5"))
        .expect("a");
    let b = fake
        .create_endpoint(other.id, &endpoint("b", "10.10.1.6"))
        .expect("b");

    let by_name = HostComputeQuery::new(QueryFilter::Name(NETWORK.into()));
    assert_eq!(
        fake.enumerate_networks(&by_name).expect("by name"),
        vec![network.id]
    );
    assert_eq!(
        fake.enumerate_networks(&HostComputeQuery::new(QueryFilter::Id(other.id)))
            .expect("by id"),
        vec![other.id]
    );
    assert_eq!(
        fake.enumerate_endpoints(&HostComputeQuery::new(QueryFilter::Network(other.id)))
            .expect("by network"),
        vec![b.id]
    );
    assert_eq!(
        fake.find_endpoint_by_name("a").expect("find").map(|e| e.id),
        Some(a.id)
    );
    assert_eq!(
        fake.find_network_by_name(NETWORK).expect("find"),
        Some(network)
    );
    assert_eq!(fake.find_network_by_name("missing").expect("find"), None);
    let unknown_key = HostComputeQuery {
        filter: r#"{"Owner":"x"}"#.into(),
        ..HostComputeQuery::default()
    };
    assert_eq!(
        hresult(fake.enumerate_networks(&unknown_key)),
        Hresult::INVALID_JSON
    );
    let not_json = HostComputeQuery {
        filter: "{".into(),
        ..HostComputeQuery::default()
    };
    assert_eq!(
        hresult(fake.enumerate_endpoints(&not_json)),
        Hresult::INVALID_JSON
    );
}

/// Explicit IDs in documents are honoured and must be unique.
#[test]
fn explicit_ids() {
    let fake = FakeHcn::new(host());
    let id = Guid(0xABCD);
    let ns = fake
        .create_namespace(&HostComputeNamespace {
            id,
            ..HostComputeNamespace::default()
        })
        .expect("namespace");
    assert_eq!(ns.id, id);
    assert_eq!(
        hresult(fake.create_namespace(&HostComputeNamespace {
            id,
            ..HostComputeNamespace::default()
        })),
        Hresult::OBJECT_ALREADY_EXISTS
    );
}

#[test]
fn adapter_changes() {
    let fake = FakeHcn::new(host());
    let moved = HostAdapter {
        ipv4: vec![net("192.168.1.11/24")],
        ..nic()
    };
    fake.apply(AdapterChange::Upsert(moved.clone()))
        .expect("replace");
    assert_eq!(fake.host().adapter(NIC), Some(&moved));
    assert_eq!(
        fake.apply(AdapterChange::Rename {
            from: NIC.into(),
            to: "vEthernet (nat)".into()
        }),
        Err(AdapterChangeError::NameTaken("vEthernet (nat)".into()))
    );
    assert_eq!(
        fake.apply(AdapterChange::Remove("nope".into())),
        Err(AdapterChangeError::NoSuchAdapter("nope".into()))
    );
    fake.apply(AdapterChange::Remove("vEthernet (nat)".into()))
        .expect("remove");
    assert_eq!(fake.host().adapters.len(), 1);
    let extra = HostAdapter {
        name: "Ethernet1".into(),
        ..nic()
    };
    fake.apply(AdapterChange::Upsert(extra)).expect("add");
    assert_eq!(fake.host().adapters.len(), 2);
}

/// The fake works behind `Arc<dyn HcnApi>` from another thread (as with spawn_blocking).
#[test]
fn usable_as_a_shared_trait_object() {
    let fake = Arc::new(FakeHcn::new(host()));
    let api: Arc<dyn HcnApi> = fake.clone();
    let created = std::thread::spawn(move || {
        api.create_network(&transparent(NETWORK, NIC))
            .expect("create")
    })
    .join()
    .expect("thread");
    assert_eq!(fake.query_network(created.id).expect("query").name, NETWORK);
    assert_eq!(
        fake.host()
            .adapter(&vnic_name(NETWORK))
            .map(|a| a.ipv4.clone()),
        Some(vec![net("192.168.1.10/24")])
    );
}

/// The default fake hands out real (non-nil) IDs and has the OVS extension but no adapter.
#[test]
fn default_fake() {
    let fake = FakeHcn::default();
    let network = fake
        .create_network(&HostComputeNetwork {
            name: "nat".into(),
            ..HostComputeNetwork::default()
        })
        .expect("create");
    assert!(!network.id.is_nil());
    let ns = fake
        .create_namespace(&HostComputeNamespace::default())
        .expect("namespace");
    assert!(!ns.id.is_nil());
    assert_ne!(ns.id, network.id);
    assert_eq!(
        hresult(fake.create_network(&transparent(NETWORK, NIC))),
        Hresult::ADAPTER_NOT_FOUND
    );
}

/// A `VSwitchExtension` policy, at creation or added later, sets the extension's state in the
/// network's `Extensions` list, which is what a query reports.
#[test]
fn extension_policy_sets_the_extensions_list() {
    let fake = FakeHcn::new(host());
    let enabled_at_creation = HostComputeNetwork {
        policies: vec![
            NetworkPolicy::NetAdapterName {
                network_adapter_name: NIC.into(),
            },
            NetworkPolicy::VSwitchExtension {
                extension_id: hcn::schema::OVS_EXTENSION_ID,
                enable: true,
            },
        ],
        ..transparent(NETWORK, NIC)
    };
    let network = fake.create_network(&enabled_at_creation).expect("create");
    let queried = fake.query_network(network.id).expect("query");
    assert_eq!(
        queried.extensions,
        vec![SwitchExtensionState {
            id: hcn::schema::OVS_EXTENSION_ID,
            is_enabled: true,
            name: "Open vSwitch Extension".into(),
        }]
    );
    let disable =
        ModifyNetworkSettingRequest::add_policies(vec![NetworkPolicy::VSwitchExtension {
            extension_id: hcn::schema::OVS_EXTENSION_ID,
            enable: false,
        }]);
    fake.modify_network(network.id, &disable)
        .expect("add policy");
    let queried = fake.query_network(network.id).expect("query");
    assert!(!queried.extensions[0].is_enabled);
    assert_eq!(
        queried.policies.len(),
        2,
        "the policy is replaced, not repeated"
    );
}

/// Antrea's order: create the network without the extension, then enable it.
#[test]
fn enabling_the_extension_after_creation() {
    let fake = FakeHcn::new(host());
    let plain = HostComputeNetwork {
        policies: vec![NetworkPolicy::NetAdapterName {
            network_adapter_name: NIC.into(),
        }],
        ..transparent(NETWORK, NIC)
    };
    let network = fake.create_network(&plain).expect("create");
    // As HNS reports it: every installed extension listed in `Extensions`, disabled.
    let disabled = SwitchExtensionState {
        id: hcn::schema::OVS_EXTENSION_ID,
        is_enabled: false,
        name: "Open vSwitch Extension".into(),
    };
    assert_eq!(network.extensions, vec![disabled.clone()]);
    assert_eq!(
        network.extension_enabled(hcn::schema::OVS_EXTENSION_ID),
        Some(false)
    );
    fake.set_extension_enabled(network.id, hcn::schema::OVS_EXTENSION_ID, true)
        .expect("enable");
    let queried = fake.query_network(network.id).expect("query");
    assert_eq!(
        queried.extensions,
        vec![SwitchExtensionState {
            is_enabled: true,
            ..disabled.clone()
        }]
    );
    assert_eq!(
        queried.extension_enabled(hcn::schema::OVS_EXTENSION_ID),
        Some(true)
    );
    fake.set_extension_enabled(network.id, hcn::schema::OVS_EXTENSION_ID, false)
        .expect("disable");
    let queried = fake.query_network(network.id).expect("query");
    assert_eq!(queried.extensions, vec![disabled]);
    assert_eq!(
        queried.extension_enabled(hcn::schema::OVS_EXTENSION_ID),
        Some(false)
    );
    assert_eq!(
        queried.policies, plain.policies,
        "an extension update changes the Extensions list, not the policies"
    );

    assert_eq!(
        hresult(fake.set_extension_enabled(Guid(5), hcn::schema::OVS_EXTENSION_ID, true)),
        Hresult::NETWORK_NOT_FOUND
    );
    assert_eq!(
        hresult(fake.set_extension_enabled(network.id, Guid(5), true)),
        Hresult::SWITCH_EXTENSION_NOT_FOUND
    );
    let rebind = ModifyNetworkSettingRequest::add_policies(vec![NetworkPolicy::NetAdapterName {
        network_adapter_name: "Ethernet1".into(),
    }]);
    assert_eq!(
        hresult(fake.modify_network(network.id, &rebind)),
        Hresult::INVALID_POLICY
    );
    let dns = ModifyNetworkSettingRequest {
        resource_type: NetworkResourceType::Dns,
        request_type: ModifyRequestType::Update,
        settings: serde_json::json!({}),
    };
    assert_eq!(
        hresult(fake.modify_network(network.id, &dns)),
        Hresult::REQUEST_UNSUPPORTED
    );
    let malformed = ModifyNetworkSettingRequest {
        settings: serde_json::json!({"Id": "x"}),
        ..dns.clone()
    };
    let malformed = ModifyNetworkSettingRequest {
        resource_type: NetworkResourceType::Extension,
        ..malformed
    };
    assert_eq!(
        hresult(fake.modify_network(network.id, &malformed)),
        Hresult::INVALID_JSON
    );
    let added = ModifyNetworkSettingRequest::add_policies(vec![NetworkPolicy::HostRoute]);
    fake.modify_network(network.id, &added)
        .expect("add a policy");
    assert_eq!(
        fake.query_network(network.id)
            .expect("query")
            .policies
            .last(),
        Some(&NetworkPolicy::HostRoute)
    );
}
