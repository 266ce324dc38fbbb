//! `FakeNetNat` (instances and their static mappings) and `FakeFirewall` with the traits'
//! idempotent helpers (`ensure`, `remove`).

use std::net::Ipv4Addr;

use ipnet::IpNet;
use winos::firewall::{Direction, FirewallCall, pod_cidr_rules};
use winos::netnat::{
    ANTREA_NAT, ANTREA_NODE_PORT_NAT, NatProtocol, NetNatCall, StaticMapping, StaticMappingInstance,
};
use winos::{
    Ensured, FakeFirewall, FakeNetNat, Firewall, FirewallRule, NatInstance, NetNat, WinOsError,
};

fn net(text: &str) -> IpNet {
    text.parse().unwrap()
}

#[test]
fn netnat_ensure_creates_keeps_and_replaces_a_changed_prefix() {
    let nat = FakeNetNat::new();
    assert_eq!(
        nat.ensure(ANTREA_NAT, net("10.244.1.0/24")).unwrap(),
        Ensured::Created
    );
    assert_eq!(
        nat.ensure(ANTREA_NAT, net("10.244.1.1/24")).unwrap(),
        Ensured::Unchanged,
        "host bits do not matter"
    );
    assert_eq!(
        nat.ensure(ANTREA_NAT, net("10.244.2.0/24")).unwrap(),
        Ensured::Replaced
    );
    let wanted = NatInstance {
        name: ANTREA_NAT.into(),
        internal_prefix: net("10.244.2.0/24"),
    };
    assert_eq!(nat.instances(), vec![wanted.clone()]);
    assert_eq!(
        nat.calls()[3..],
        [
            NetNatCall::Get(ANTREA_NAT.into()),
            NetNatCall::Delete(ANTREA_NAT.into()),
            NetNatCall::Create(wanted.clone())
        ]
    );
    assert!(nat.create(&wanted).unwrap_err().is_already_exists());
    assert!(nat.remove(ANTREA_NAT).unwrap());
    assert!(!nat.remove(ANTREA_NAT).unwrap());
    assert!(nat.instances().is_empty());
}

#[test]
fn netnat_failure_stops_ensure_and_leaves_the_old_instance() {
    let nat = FakeNetNat::new();
    nat.ensure(ANTREA_NAT, net("10.244.1.0/24")).unwrap();
    let denied = WinOsError::Os {
        function: "MSFT_NetNat.Delete",
        code: 5,
        message: String::new(),
    };
    nat.fail_next(denied.clone());
    assert_eq!(nat.ensure(ANTREA_NAT, net("10.244.2.0/24")), Err(denied));
    assert_eq!(
        nat.get(ANTREA_NAT).unwrap().unwrap().internal_prefix,
        net("10.244.1.0/24")
    );
    let error = nat
        .create(&NatInstance {
            name: String::new(),
            internal_prefix: net("10.0.0.0/8"),
        })
        .unwrap_err();
    assert!(
        matches!(error, WinOsError::InvalidArgument { .. }),
        "{error}"
    );
}

fn mapping(nat: &str, protocol: NatProtocol, external: &str, port: u16) -> StaticMapping {
    StaticMapping {
        nat: nat.into(),
        protocol,
        external_address: external.parse().unwrap(),
        external_port: port,
        internal_address: Ipv4Addr::new(169, 254, 0, 252),
        internal_port: port,
    }
}

#[test]
fn static_mappings_get_ids_and_a_taken_external_port_or_a_missing_nat_is_refused() {
    let nat = FakeNetNat::new();
    let tcp = mapping(ANTREA_NODE_PORT_NAT, NatProtocol::Tcp, "0.0.0.0", 30080);
    let error = nat.add_static_mapping(&tcp).unwrap_err();
    assert!(error.is_not_found(), "{error}");
    assert!(nat.mappings().is_empty());

    nat.ensure(ANTREA_NODE_PORT_NAT, net("169.254.0.252/32"))
        .unwrap();
    nat.ensure(ANTREA_NAT, net("10.244.1.0/24")).unwrap();
    nat.add_static_mapping(&tcp).unwrap();
    let udp = StaticMapping {
        protocol: NatProtocol::Udp,
        ..tcp.clone()
    };
    let on_address = mapping(ANTREA_NODE_PORT_NAT, NatProtocol::Tcp, "10.10.0.11", 30080);
    nat.add_static_mapping(&udp).unwrap();
    nat.add_static_mapping(&on_address).unwrap();
    // The same protocol, external address and port: refused, whatever the target or instance.
    let retarget = StaticMapping {
        internal_port: 8080,
        ..tcp.clone()
    };
    assert!(
        nat.add_static_mapping(&retarget)
            .unwrap_err()
            .is_already_exists()
    );
    let elsewhere = StaticMapping {
        nat: ANTREA_NAT.into(),
        ..tcp.clone()
    };
    assert!(
        nat.add_static_mapping(&elsewhere)
            .unwrap_err()
            .is_already_exists()
    );

    let listed = nat.static_mappings(ANTREA_NODE_PORT_NAT).unwrap();
    assert_eq!(
        listed,
        [
            StaticMappingInstance {
                id: 0,
                mapping: tcp.clone()
            },
            StaticMappingInstance {
                id: 1,
                mapping: udp.clone()
            },
            StaticMappingInstance {
                id: 2,
                mapping: on_address.clone()
            },
        ]
    );
    assert_eq!(nat.static_mappings(ANTREA_NAT).unwrap(), []);
    assert_eq!(nat.static_mappings("no-such-nat").unwrap(), []);

    nat.remove_static_mapping(ANTREA_NODE_PORT_NAT, 1).unwrap();
    assert!(
        nat.remove_static_mapping(ANTREA_NODE_PORT_NAT, 1)
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        nat.remove_static_mapping(ANTREA_NAT, 0)
            .unwrap_err()
            .is_not_found(),
        "ids are per instance"
    );
    nat.add_static_mapping(&udp).unwrap();
    let ids: Vec<u32> = nat.mappings().iter().map(|m| m.id).collect();
    assert_eq!(ids, [0, 2, 3], "ids are never reused");
    let log = nat.calls();
    assert_eq!(
        log[log.len() - 4..],
        [
            NetNatCall::RemoveStaticMapping {
                nat: ANTREA_NODE_PORT_NAT.into(),
                id: 1
            },
            NetNatCall::RemoveStaticMapping {
                nat: ANTREA_NODE_PORT_NAT.into(),
                id: 1
            },
            NetNatCall::RemoveStaticMapping {
                nat: ANTREA_NAT.into(),
                id: 0
            },
            NetNatCall::AddStaticMapping(udp),
        ]
    );
}

#[test]
fn deleting_a_nat_deletes_its_static_mappings_only() {
    let nat = FakeNetNat::new();
    nat.ensure(ANTREA_NODE_PORT_NAT, net("169.254.0.252/32"))
        .unwrap();
    nat.ensure(ANTREA_NAT, net("10.244.1.0/24")).unwrap();
    let ours = mapping(ANTREA_NODE_PORT_NAT, NatProtocol::Tcp, "0.0.0.0", 30080);
    let theirs = mapping(ANTREA_NAT, NatProtocol::Tcp, "0.0.0.0", 8443);
    nat.add_static_mapping(&ours).unwrap();
    nat.add_static_mapping(&theirs).unwrap();
    assert!(nat.remove(ANTREA_NODE_PORT_NAT).unwrap());
    assert_eq!(
        nat.mappings(),
        [StaticMappingInstance {
            id: 1,
            mapping: theirs
        }]
    );
    // The port is free again once its instance is back.
    nat.ensure(ANTREA_NODE_PORT_NAT, net("169.254.0.252/32"))
        .unwrap();
    assert_eq!(nat.static_mappings(ANTREA_NODE_PORT_NAT).unwrap(), []);
    nat.add_static_mapping(&ours).unwrap();
}

#[test]
fn static_mapping_calls_are_logged_and_take_injected_failures() {
    let nat = FakeNetNat::new();
    nat.ensure(ANTREA_NODE_PORT_NAT, net("169.254.0.252/32"))
        .unwrap();
    nat.clear_calls();
    let ours = mapping(ANTREA_NODE_PORT_NAT, NatProtocol::Udp, "0.0.0.0", 30053);
    let denied = WinOsError::Os {
        function: "MSFT_NetNatStaticMapping.Put",
        code: 5,
        message: String::new(),
    };
    nat.fail_next(denied.clone());
    assert_eq!(nat.add_static_mapping(&ours), Err(denied));
    assert!(nat.mappings().is_empty(), "a failed call changes nothing");
    nat.add_static_mapping(&ours).unwrap();
    nat.static_mappings(ANTREA_NODE_PORT_NAT).unwrap();
    assert_eq!(
        nat.calls(),
        [
            NetNatCall::AddStaticMapping(ours.clone()),
            NetNatCall::AddStaticMapping(ours),
            NetNatCall::StaticMappings(ANTREA_NODE_PORT_NAT.into()),
        ]
    );
    assert!(!nat.calls()[2].is_write());
    assert!(nat.calls()[0].is_write());
}

#[test]
fn nat_protocol_numbers_are_netnats() {
    for protocol in [NatProtocol::Tcp, NatProtocol::Udp] {
        assert_eq!(NatProtocol::from_number(protocol.number()), Some(protocol));
    }
    assert_eq!(NatProtocol::Tcp.number(), 6);
    assert_eq!(NatProtocol::Udp.number(), 17);
    assert_eq!(NatProtocol::from_number(132), None, "no SCTP");
}

#[test]
fn pod_cidr_rules_are_ensured_once_and_replaced_when_the_cidrs_change() {
    let firewall = FakeFirewall::new();
    for rule in pod_cidr_rules(&[net("10.244.1.0/24")]) {
        assert_eq!(firewall.ensure_rule(&rule).unwrap(), Ensured::Created);
    }
    for rule in pod_cidr_rules(&[net("10.244.1.9/24")]) {
        assert_eq!(firewall.ensure_rule(&rule).unwrap(), Ensured::Unchanged);
    }
    let dual = pod_cidr_rules(&[net("10.244.1.0/24"), net("fd00:10:244:1::/64")]);
    assert_eq!(firewall.ensure_rule(&dual[0]).unwrap(), Ensured::Replaced);
    let rules = firewall.rules();
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0], dual[0]);
    assert_eq!(rules[1].direction, Direction::Outbound);
    let turned = FirewallRule {
        direction: Direction::Outbound,
        ..dual[0].clone()
    };
    assert_eq!(firewall.ensure_rule(&turned).unwrap(), Ensured::Replaced);
    assert_eq!(firewall.rule(&turned.name).unwrap(), Some(turned.clone()));
}

#[test]
fn firewall_refuses_rules_that_would_allow_anything_and_duplicates() {
    let firewall = FakeFirewall::new();
    let [inbound, _] = pod_cidr_rules(&[net("10.244.1.0/24")]);
    let open = FirewallRule {
        remote_addresses: Vec::new(),
        ..inbound.clone()
    };
    assert!(matches!(
        firewall.add(&open).unwrap_err(),
        WinOsError::InvalidArgument { .. }
    ));
    firewall.add(&inbound).unwrap();
    assert!(firewall.add(&inbound).unwrap_err().is_already_exists());
    // A port rule may leave the remote addresses open.
    let tunnel = winos::firewall::tunnel_rule(6081);
    firewall.add(&tunnel).unwrap();
    assert_eq!(firewall.rule(&tunnel.name).unwrap(), Some(tunnel));
    assert!(firewall.remove_rule(&inbound.name).unwrap());
    assert!(!firewall.remove_rule(&inbound.name).unwrap());
    assert!(firewall.delete(&inbound.name).unwrap_err().is_not_found());
}

#[test]
fn firewall_failure_is_returned_and_logged() {
    let firewall = FakeFirewall::new();
    let [inbound, _] = pod_cidr_rules(&[net("10.244.1.0/24")]);
    let unsupported = WinOsError::Unsupported {
        function: "INetFwRules::Item",
    };
    firewall.fail_next(unsupported.clone());
    assert_eq!(firewall.ensure_rule(&inbound), Err(unsupported));
    assert!(firewall.rules().is_empty());
    assert_eq!(
        firewall.calls(),
        vec![FirewallCall::Rule(inbound.name.clone())]
    );
}
