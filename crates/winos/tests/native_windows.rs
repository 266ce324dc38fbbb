//! The native implementations against the system they run on. In CI that is Wine 8 (see
//! `docs/winos.md`): the IP Helper reads return Wine's view of the Linux host (of the test
//! network namespace), the writes Wine does not export come back as `Unsupported`, WMI has no
//! `root\StandardCimv2` and the firewall COM API keeps no rules. On real Windows the same tests
//! check the real answers; none of them changes the host.
#![cfg(windows)]

use std::net::{IpAddr, Ipv4Addr};

use ipnet::{IpNet, Ipv4Net};
use model::MacAddr;
use winos::model::{IpFamily, IpInterfaceChange, Route, UnicastAddress};
use winos::netnat::ANTREA_NAT;
use winos::{
    ComFirewall, Firewall, FirewallRule, IpHelper, NativeIpHelper, NetNat, WinOsError, WmiNetNat,
    under_wine,
};

/// The interface indexes of every adapter.
fn adapter_indexes(helper: &NativeIpHelper) -> Vec<u32> {
    helper
        .adapters()
        .expect("adapters")
        .iter()
        .map(|a| a.index)
        .collect()
}

/// An interface index no host has.
const NO_SUCH_INTERFACE: u32 = 0x7fff_fff0;

#[test]
fn adapters_include_the_loopback_adapter_holding_127_0_0_1() {
    let adapters = NativeIpHelper::new()
        .adapters()
        .expect("GetAdaptersAddresses");
    let loopback = adapters
        .iter()
        .find(|a| a.has_ipv4(Ipv4Addr::LOCALHOST))
        .expect("an adapter holds 127.0.0.1");
    assert!(loopback.index > 0, "{loopback:?}");
    assert!(!loopback.alias.is_empty(), "{loopback:?}");
    assert!(
        loopback.is_virtual(),
        "loopback counts as virtual: {loopback:?}"
    );
    let mut indexes: Vec<u32> = adapters.iter().map(|a| a.index).collect();
    indexes.sort();
    indexes.dedup();
    assert_eq!(
        indexes.len(),
        adapters.len(),
        "interface indexes are unique: {adapters:?}"
    );
}

#[test]
fn every_route_and_address_names_a_listed_adapter() {
    let helper = NativeIpHelper::new();
    let indexes = adapter_indexes(&helper);
    for route in helper.routes().expect("GetIpForwardTable2") {
        assert!(
            indexes.contains(&route.interface_index),
            "{route:?} not on any of {indexes:?}"
        );
        assert_eq!(route.destination, route.destination.trunc(), "{route:?}");
    }
    let addresses = helper
        .unicast_addresses()
        .expect("GetUnicastIpAddressTable");
    assert!(
        addresses
            .iter()
            .any(|a| a.address.addr() == IpAddr::V4(Ipv4Addr::LOCALHOST)),
        "{addresses:?}"
    );
    for address in addresses {
        assert!(
            indexes.contains(&address.interface_index),
            "{address:?} not on any of {indexes:?}"
        );
    }
}

/// One IPv4 route of the Linux main table, as `/proc/net/route` shows it.
#[derive(Debug)]
struct LinuxRoute {
    interface: String,
    destination: Ipv4Net,
    gateway: Ipv4Addr,
    metric: u32,
}

/// The kernel prints addresses as the in-memory `u32` of network-order bytes.
fn proc_address(hex: &str) -> Ipv4Addr {
    Ipv4Addr::from(
        u32::from_str_radix(hex, 16)
            .expect("hex address")
            .to_le_bytes(),
    )
}

/// The routes of `/proc/net/route` (through Wine's `Z:` drive), or `None` outside Wine.
fn linux_ipv4_routes() -> Option<Vec<LinuxRoute>> {
    let text = std::fs::read_to_string(r"Z:\proc\net\route").ok()?;
    const RTF_UP: u32 = 1;
    let routes = text
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let flags = u32::from_str_radix(fields[3], 16).expect("flags");
            (flags & RTF_UP != 0).then(|| {
                let mask = proc_address(fields[7]);
                LinuxRoute {
                    interface: fields[0].to_owned(),
                    destination: Ipv4Net::new(
                        proc_address(fields[1]),
                        u32::from(mask).count_ones() as u8,
                    )
                    .expect("prefix"),
                    gateway: proc_address(fields[2]),
                    metric: fields[6].parse().expect("metric"),
                }
            })
        })
        .collect();
    Some(routes)
}

/// Under Wine the routing table is the Linux one (of the namespace the tests and the
/// wineserver share; scripts/windows-test.sh puts a veth pair and a gateway route there):
/// every Linux IPv4 route must come back with its prefix, gateway, metric and interface.
#[test]
fn under_wine_every_linux_route_is_read_back() {
    if !under_wine() {
        testskip::skip(
            "under_wine_every_linux_route_is_read_back",
            "not under Wine: there is no Linux routing table to compare with",
        );
        return;
    }
    let linux = linux_ipv4_routes().expect("/proc/net/route is readable through Z:");
    assert!(
        !linux.is_empty(),
        "the namespace has IPv4 routes (scripts/windows-test.sh adds some)"
    );
    let helper = NativeIpHelper::new();
    let adapters = helper.adapters().expect("adapters");
    let routes = helper.routes().expect("routes");
    for expected in &linux {
        let index = adapters
            .iter()
            .find(|a| a.alias == expected.interface)
            .unwrap_or_else(|| panic!("no adapter {:?} in {adapters:?}", expected.interface))
            .index;
        assert!(
            routes
                .iter()
                .any(|r| r.destination == IpNet::V4(expected.destination)
                    && r.next_hop == IpAddr::V4(expected.gateway)
                    && r.interface_index == index
                    && r.metric == expected.metric),
            "{expected:?} missing from {routes:?}"
        );
    }
}

#[test]
fn ipv4_neighbors_read_and_name_listed_adapters() {
    let helper = NativeIpHelper::new();
    let indexes = adapter_indexes(&helper);
    for neighbor in helper
        .neighbors(IpFamily::V4)
        .expect("GetIpNetTable2(AF_INET)")
    {
        assert!(
            indexes.contains(&neighbor.interface_index),
            "{neighbor:?} not on any of {indexes:?}"
        );
        assert_eq!(IpFamily::of(neighbor.address), IpFamily::V4, "{neighbor:?}");
    }
    let ipv6 = helper.neighbors(IpFamily::V6);
    if under_wine() {
        assert_eq!(
            ipv6,
            Err(WinOsError::Unsupported {
                function: "GetIpNetTable2"
            })
        );
    } else {
        ipv6.expect("GetIpNetTable2(AF_INET6)");
    }
}

/// Writes on an interface that does not exist: Wine lacks the functions (`Unsupported` naming
/// them); Windows refuses the interface. Either way nothing changes.
#[test]
fn writes_are_unsupported_under_wine_and_refused_for_a_missing_interface_elsewhere() {
    let helper = NativeIpHelper::new();
    let any = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
    let route = Route::new(
        "10.255.254.0/24".parse().unwrap(),
        any,
        NO_SUCH_INTERFACE,
        256,
    );
    let address = UnicastAddress {
        interface_index: NO_SUCH_INTERFACE,
        address: "10.255.254.1/24".parse().unwrap(),
    };
    let neighbor: IpAddr = "10.255.254.2".parse().unwrap();
    let change = IpInterfaceChange {
        forwarding: Some(true),
        nl_mtu: None,
    };
    let results = [
        ("CreateIpForwardEntry2", helper.create_route(&route)),
        ("DeleteIpForwardEntry2", helper.delete_route(&route.key())),
        (
            "CreateUnicastIpAddressEntry",
            helper.create_unicast_address(&address),
        ),
        (
            "DeleteUnicastIpAddressEntry",
            helper.delete_unicast_address(&address),
        ),
        (
            "CreateIpNetEntry2",
            helper.create_permanent_neighbor(
                NO_SUCH_INTERFACE,
                neighbor,
                MacAddr([2, 0, 0, 0, 0, 1]),
            ),
        ),
        (
            "DeleteIpNetEntry2",
            helper.delete_neighbor(NO_SUCH_INTERFACE, neighbor),
        ),
        (
            "GetIpInterfaceEntry",
            helper
                .ip_interface(NO_SUCH_INTERFACE, IpFamily::V4)
                .map(drop),
        ),
        (
            "SetIpInterfaceEntry",
            helper.set_ip_interface(NO_SUCH_INTERFACE, IpFamily::V4, change),
        ),
        (
            "SetInterfaceDnsSettings",
            helper.set_dns_servers(NO_SUCH_INTERFACE, IpFamily::V4, &[neighbor]),
        ),
    ];
    for (function, result) in results {
        let error = result.expect_err(function);
        if under_wine() {
            assert_eq!(error, WinOsError::Unsupported { function }, "{function}");
        } else {
            assert!(
                !matches!(error, WinOsError::Unsupported { .. }),
                "{function}: {error}"
            );
        }
    }
}

#[test]
fn mixed_family_route_is_refused_before_any_system_call() {
    let route = Route::new(
        "10.0.0.0/8".parse().unwrap(),
        "fe80::1".parse().unwrap(),
        1,
        256,
    );
    let error = NativeIpHelper::new()
        .create_route(&route)
        .expect_err("mixed families");
    assert!(
        matches!(
            error,
            WinOsError::InvalidArgument {
                function: "CreateIpForwardEntry2",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn netnat_needs_standard_cimv2_which_wine_lacks() {
    let result = WmiNetNat::new().get(ANTREA_NAT);
    if under_wine() {
        assert_eq!(
            result,
            Err(WinOsError::Unsupported {
                function: r"root\StandardCimv2"
            })
        );
    } else {
        result.expect("MSFT_NetNat query");
    }
}

#[test]
fn adapter_rename_needs_standard_cimv2_which_wine_lacks() {
    let result = NativeIpHelper::new().rename_adapter("no such adapter", "still none");
    if under_wine() {
        assert_eq!(
            result,
            Err(WinOsError::Unsupported {
                function: r"root\StandardCimv2"
            })
        );
    } else {
        assert!(result.expect_err("no such adapter").is_not_found());
    }
}

/// Wine's firewall COM object exists but its rule collection is a stub (`E_NOTIMPL`): every
/// call, the idempotent helpers included, comes back `Unsupported` naming the stubbed method.
#[test]
fn firewall_rules_are_unsupported_under_wine() {
    let firewall = ComFirewall::new();
    let name = "antrea-winos-test-no-such-rule";
    let lookup = firewall.rule(name);
    if !under_wine() {
        assert_eq!(lookup, Ok(None));
        return;
    }
    let unsupported = WinOsError::Unsupported {
        function: "INetFwRules::Item",
    };
    assert_eq!(lookup, Err(unsupported.clone()));
    let [inbound, _] = winos::firewall::pod_cidr_rules(&["10.244.0.0/24".parse().unwrap()]);
    let rule = FirewallRule {
        name: name.into(),
        ..inbound
    };
    assert_eq!(firewall.ensure_rule(&rule), Err(unsupported.clone()));
    assert_eq!(firewall.remove_rule(name), Err(unsupported));
}

/// `Win32_OptionalFeature` is read in `root\cimv2`. Wine has the namespace but not the class
/// (its WMI answers a query of an unknown class with nothing, so the class is looked up first):
/// `Unsupported`. Windows knows both features `prepare-node` checks (enabled or not) and no
/// feature of a made-up name.
#[test]
fn optional_features_are_read_from_wmi() {
    let features = winos::features::WmiFeatures::new();
    for name in ["Microsoft-Hyper-V", "Containers", "antrea-no-such-feature"] {
        let state = features.install_state(name);
        if under_wine() {
            assert_eq!(
                state,
                Err(WinOsError::Unsupported {
                    function: "Win32_OptionalFeature"
                }),
                "{name}: Wine has Win32_OptionalFeature now"
            );
        } else if name.starts_with("antrea") {
            assert_eq!(state, Ok(None));
        } else {
            assert!(matches!(state, Ok(Some(1..=3))), "{name}: {state:?}");
        }
    }
}
