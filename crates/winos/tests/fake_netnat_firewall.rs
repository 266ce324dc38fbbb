//! `FakeNetNat` and `FakeFirewall` with the traits' idempotent helpers (`ensure`, `remove`).

use ipnet::IpNet;
use winos::firewall::{Direction, FirewallCall, pod_cidr_rules};
use winos::netnat::{ANTREA_NAT, NetNatCall};
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
