//! `FakeIpHelper` answers like Windows: typed errors for unknown interfaces and duplicates,
//! one address table behind adapters, cascading removal, call log and failure injection.

use std::net::IpAddr;
use std::sync::Arc;

use ipnet::{IpNet, Ipv4Net};
use model::MacAddr;
use winos::iphelper::{IpHelperCall, IpHelperOp};
use winos::model::{
    Adapter, InterfaceType, IpFamily, IpInterface, IpInterfaceChange, Luid, NeighborState,
    OperStatus, Route, RouteProtocol, UnicastAddress,
};
use winos::{Ensured, FakeIpHelper, IpHelper, WinOsError};

fn net(text: &str) -> IpNet {
    text.parse().unwrap()
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn ethernet(index: u32, alias: &str, ipv4: &[&str]) -> Adapter {
    Adapter {
        name: format!("{{00000000-0000-0000-0000-{index:012}}}"),
        alias: alias.into(),
        description: "Intel(R) 82574L Gigabit Network Connection".into(),
        index,
        luid: Luid(u64::from(index) << 24),
        mac: Some(MacAddr([0, 0x15, 0x5d, 0, 0, index as u8])),
        mtu: 1500,
        ipv4: ipv4.iter().map(|a| a.parse::<Ipv4Net>().unwrap()).collect(),
        dns_servers: vec![ip("10.0.0.2")],
        dns_suffix: "corp.example".into(),
        oper_status: OperStatus::Up,
        if_type: InterfaceType::Ethernet,
    }
}

fn host() -> FakeIpHelper {
    let fake = FakeIpHelper::new();
    fake.add_adapter(ethernet(4, "Ethernet0", &["10.0.0.10/24"]))
        .unwrap();
    fake.add_adapter(ethernet(7, "Ethernet1", &[])).unwrap();
    fake
}

#[test]
fn routes_follow_windows_rules_for_interfaces_and_duplicates() {
    let fake = host();
    let route = Route::new(net("10.244.1.0/24"), ip("10.0.0.1"), 4, 256);
    let error = fake
        .create_route(&Route {
            interface_index: 99,
            ..route.clone()
        })
        .unwrap_err();
    assert!(
        matches!(
            &error,
            WinOsError::NotFound {
                function: "CreateIpForwardEntry2",
                ..
            }
        ),
        "{error}"
    );
    fake.create_route(&Route {
        protocol: RouteProtocol::NetMgmt,
        ..route.clone()
    })
    .unwrap();
    assert_eq!(
        fake.routes().unwrap(),
        vec![route.clone()],
        "written routes are protocol Other"
    );
    let error = fake
        .create_route(&Route {
            metric: 50,
            ..route.clone()
        })
        .unwrap_err();
    assert!(
        matches!(
            &error,
            WinOsError::AlreadyExists {
                function: "CreateIpForwardEntry2",
                ..
            }
        ),
        "{error}"
    );
    // Same destination through another gateway is another route.
    fake.create_route(&Route::new(net("10.244.1.0/24"), ip("10.0.0.9"), 4, 256))
        .unwrap();
    assert_eq!(fake.routes().unwrap().len(), 2);
    fake.delete_route(&route.key()).unwrap();
    assert!(fake.delete_route(&route.key()).unwrap_err().is_not_found());
    let error = fake
        .create_route(&Route::new(net("10.1.0.0/16"), ip("fe80::1"), 4, 256))
        .unwrap_err();
    assert!(
        matches!(error, WinOsError::InvalidArgument { .. }),
        "{error}"
    );
}

#[test]
fn ensure_route_creates_keeps_and_replaces_on_metric_change() {
    let fake = host();
    let route = Route::new(net("10.244.2.0/24"), ip("0.0.0.0"), 7, 256);
    assert_eq!(fake.ensure_route(&route).unwrap(), Ensured::Created);
    assert_eq!(fake.ensure_route(&route).unwrap(), Ensured::Unchanged);
    fake.clear_calls();
    let high = Route {
        metric: 50,
        ..route.clone()
    };
    assert_eq!(fake.ensure_route(&high).unwrap(), Ensured::Replaced);
    assert_eq!(
        fake.calls(),
        vec![
            IpHelperCall::Routes,
            IpHelperCall::DeleteRoute(route.key()),
            IpHelperCall::CreateRoute(high.clone())
        ]
    );
    assert_eq!(fake.routes().unwrap(), vec![high.clone()]);
    assert!(fake.remove_route(&high.key()).unwrap());
    assert!(!fake.remove_route(&high.key()).unwrap());
}

#[test]
fn adapters_read_their_ipv4_from_the_address_table() {
    let fake = host();
    let added = UnicastAddress {
        interface_index: 7,
        address: net("192.168.5.2/24"),
    };
    fake.create_unicast_address(&added).unwrap();
    let v6 = UnicastAddress {
        interface_index: 7,
        address: net("fd00::2/64"),
    };
    fake.create_unicast_address(&v6).unwrap();
    let adapter = fake.adapter_by_alias("Ethernet1").unwrap().unwrap();
    assert_eq!(
        adapter.ipv4,
        vec!["192.168.5.2/24".parse::<Ipv4Net>().unwrap()]
    );
    let duplicate = UnicastAddress {
        address: net("192.168.5.2/16"),
        ..added
    };
    assert!(
        fake.create_unicast_address(&duplicate)
            .unwrap_err()
            .is_already_exists()
    );
    let unknown = UnicastAddress {
        interface_index: 99,
        ..added
    };
    assert!(
        fake.create_unicast_address(&unknown)
            .unwrap_err()
            .is_not_found()
    );
    // The prefix length does not identify an address.
    fake.delete_unicast_address(&duplicate).unwrap();
    assert!(
        fake.adapter_by_alias("Ethernet1")
            .unwrap()
            .unwrap()
            .ipv4
            .is_empty()
    );
    assert!(
        fake.delete_unicast_address(&added)
            .unwrap_err()
            .is_not_found()
    );
    assert_eq!(
        fake.unicast_addresses().unwrap(),
        vec![
            UnicastAddress {
                interface_index: 4,
                address: net("10.0.0.10/24")
            },
            v6
        ]
    );
}

#[test]
fn updating_an_adapter_moves_addresses_and_keeps_its_index() {
    let fake = host();
    fake.update_adapter(4, |a| a.ipv4.clear()).unwrap();
    fake.update_adapter(7, |a| {
        a.ipv4.push("10.0.0.10/24".parse().unwrap());
        a.oper_status = OperStatus::Down;
    })
    .unwrap();
    let adapters = fake.adapters().unwrap();
    assert!(adapters[0].ipv4.is_empty());
    assert_eq!(
        (adapters[1].ipv4.len(), adapters[1].oper_status),
        (1, OperStatus::Down)
    );
    assert_eq!(
        fake.unicast_addresses().unwrap(),
        vec![UnicastAddress {
            interface_index: 7,
            address: net("10.0.0.10/24")
        }]
    );
    let error = fake.update_adapter(7, |a| a.index = 8).unwrap_err();
    assert!(
        matches!(error, WinOsError::InvalidArgument { .. }),
        "{error}"
    );
    assert!(
        fake.update_adapter(7, |a| a.alias = "Ethernet0".into())
            .unwrap_err()
            .is_already_exists()
    );
    assert!(fake.update_adapter(99, |_| ()).unwrap_err().is_not_found());
    assert!(
        fake.add_adapter(ethernet(4, "Other", &[]))
            .unwrap_err()
            .is_already_exists()
    );
    assert!(
        fake.add_adapter(ethernet(9, "Ethernet0", &[]))
            .unwrap_err()
            .is_already_exists()
    );
}

#[test]
fn removing_an_adapter_removes_what_names_it() {
    let fake = host();
    fake.create_route(&Route::new(net("10.244.0.0/16"), ip("10.0.0.1"), 4, 256))
        .unwrap();
    fake.create_route(&Route::new(net("10.245.0.0/16"), ip("0.0.0.0"), 7, 256))
        .unwrap();
    fake.create_permanent_neighbor(4, ip("10.0.0.1"), MacAddr([2, 0, 0, 0, 0, 1]))
        .unwrap();
    let removed = fake.remove_adapter(4).unwrap();
    assert_eq!(
        removed.ipv4,
        vec!["10.0.0.10/24".parse::<Ipv4Net>().unwrap()]
    );
    assert_eq!(fake.adapters().unwrap().len(), 1);
    assert!(
        fake.routes()
            .unwrap()
            .iter()
            .all(|r| r.interface_index == 7)
    );
    assert!(fake.unicast_addresses().unwrap().is_empty());
    assert!(fake.neighbors(IpFamily::V4).unwrap().is_empty());
    assert!(
        fake.ip_interface(4, IpFamily::V4)
            .unwrap_err()
            .is_not_found()
    );
    assert!(fake.remove_adapter(4).unwrap_err().is_not_found());
}

#[test]
fn permanent_neighbors_are_per_interface_and_per_family() {
    let fake = host();
    let mac = MacAddr([0xaa, 0xbb, 0xcc, 0, 0, 1]);
    fake.create_permanent_neighbor(4, ip("10.0.0.1"), mac)
        .unwrap();
    fake.create_permanent_neighbor(7, ip("10.0.0.1"), mac)
        .unwrap();
    fake.create_permanent_neighbor(4, ip("fd00::1"), mac)
        .unwrap();
    assert!(
        fake.create_permanent_neighbor(4, ip("10.0.0.1"), MacAddr([0; 6]))
            .unwrap_err()
            .is_already_exists()
    );
    assert!(
        fake.create_permanent_neighbor(99, ip("10.0.0.1"), mac)
            .unwrap_err()
            .is_not_found()
    );
    let v4 = fake.neighbors(IpFamily::V4).unwrap();
    assert_eq!(v4.len(), 2);
    assert!(
        v4.iter()
            .all(|n| n.state == NeighborState::Permanent && n.mac == mac)
    );
    assert_eq!(fake.neighbors(IpFamily::V6).unwrap().len(), 1);
    fake.delete_neighbor(7, ip("10.0.0.1")).unwrap();
    assert!(
        fake.delete_neighbor(7, ip("10.0.0.1"))
            .unwrap_err()
            .is_not_found()
    );
    assert_eq!(fake.neighbors(IpFamily::V4).unwrap().len(), 1);
}

#[test]
fn interface_settings_start_from_the_adapter_and_change_field_by_field() {
    let fake = host();
    assert_eq!(
        fake.ip_interface(4, IpFamily::V4).unwrap(),
        IpInterface {
            forwarding: false,
            nl_mtu: 1500
        }
    );
    fake.set_ip_interface(
        4,
        IpFamily::V4,
        IpInterfaceChange {
            forwarding: Some(true),
            nl_mtu: None,
        },
    )
    .unwrap();
    fake.set_ip_interface(
        4,
        IpFamily::V4,
        IpInterfaceChange {
            forwarding: None,
            nl_mtu: Some(1450),
        },
    )
    .unwrap();
    assert_eq!(
        fake.ip_interface(4, IpFamily::V4).unwrap(),
        IpInterface {
            forwarding: true,
            nl_mtu: 1450
        }
    );
    assert_eq!(
        fake.ip_interface(4, IpFamily::V6).unwrap(),
        IpInterface {
            forwarding: false,
            nl_mtu: 1500
        }
    );
    let error = fake
        .set_ip_interface(99, IpFamily::V4, IpInterfaceChange::default())
        .unwrap_err();
    assert!(
        matches!(
            &error,
            WinOsError::NotFound {
                function: "SetIpInterfaceEntry",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn rename_needs_an_existing_alias_and_a_free_new_one() {
    let fake = host();
    fake.rename_adapter("Ethernet0", "uplink").unwrap();
    assert_eq!(fake.adapter_by_alias("uplink").unwrap().unwrap().index, 4);
    assert!(fake.adapter_by_alias("Ethernet0").unwrap().is_none());
    assert!(
        fake.rename_adapter("Ethernet0", "x")
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        fake.rename_adapter("uplink", "Ethernet1")
            .unwrap_err()
            .is_already_exists()
    );
    fake.rename_adapter("uplink", "uplink").unwrap();
    let error = fake.rename_adapter("uplink", "").unwrap_err();
    assert!(
        matches!(error, WinOsError::InvalidArgument { .. }),
        "{error}"
    );
}

#[test]
fn injected_failures_hit_the_next_call_of_their_kind_and_change_nothing() {
    let fake = host();
    let denied = WinOsError::Os {
        function: "CreateIpForwardEntry2",
        code: 5,
        message: "Access is denied.".into(),
    };
    fake.fail_next(IpHelperOp::CreateRoute, denied.clone());
    let route = Route::new(net("10.244.3.0/24"), ip("0.0.0.0"), 4, 256);
    assert_eq!(
        fake.routes().unwrap(),
        vec![],
        "other kinds are not affected"
    );
    assert_eq!(fake.create_route(&route), Err(denied));
    assert!(fake.routes().unwrap().is_empty());
    fake.create_route(&route).unwrap();
    assert_eq!(
        fake.calls()
            .iter()
            .map(IpHelperCall::op)
            .collect::<Vec<_>>(),
        [
            IpHelperOp::Routes,
            IpHelperOp::CreateRoute,
            IpHelperOp::Routes,
            IpHelperOp::CreateRoute
        ]
    );
}

#[test]
fn the_fake_serves_as_a_shared_trait_object() {
    let fake = Arc::new(host());
    let shared: Arc<dyn IpHelper> = fake.clone();
    let worker = std::thread::spawn(move || {
        shared.ensure_route(&Route::new(net("10.9.0.0/16"), ip("0.0.0.0"), 7, 256))
    });
    assert_eq!(worker.join().unwrap(), Ok(Ensured::Created));
    assert_eq!(fake.routes().unwrap().len(), 1);
}

#[test]
fn dns_servers_are_replaced_per_family() {
    let fake = host();
    fake.set_dns_servers(4, IpFamily::V6, &[ip("fd00::53")])
        .unwrap();
    fake.set_dns_servers(4, IpFamily::V4, &[ip("10.0.0.53"), ip("10.0.0.54")])
        .unwrap();
    let servers = fake
        .adapter_by_alias("Ethernet0")
        .unwrap()
        .unwrap()
        .dns_servers;
    assert_eq!(
        servers,
        vec![ip("fd00::53"), ip("10.0.0.53"), ip("10.0.0.54")]
    );
    fake.set_dns_servers(4, IpFamily::V4, &[]).unwrap();
    assert_eq!(
        fake.adapter_by_alias("Ethernet0")
            .unwrap()
            .unwrap()
            .dns_servers,
        vec![ip("fd00::53")]
    );
    let error = fake
        .set_dns_servers(4, IpFamily::V4, &[ip("fd00::1")])
        .unwrap_err();
    assert!(
        matches!(
            error,
            WinOsError::InvalidArgument {
                function: "SetInterfaceDnsSettings",
                ..
            }
        ),
        "{error}"
    );
    assert!(
        fake.set_dns_servers(99, IpFamily::V4, &[])
            .unwrap_err()
            .is_not_found()
    );
}
