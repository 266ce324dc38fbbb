//! One test per NetworkPolicy semantic item, on the lab cluster (see `support`). Expected
//! results are written from the Kubernetes API reference for `networking.k8s.io/v1`, as
//! reachability matrices over the nine lab Pods for a protocol and port. This Node (n1) decides
//! for the Pods of x and y; z's Pods run on n2, so only their egress... is n2's business.

mod support;

use std::collections::BTreeSet;

use netpol::{Direction, PolicyError, PolicyKey, Protocol, Protocol::*, RulePart};
use serde_json::json;
use support::*;

type P = (&'static str, &'static str);

#[track_caller]
fn check(
    engine: &mut netpol::PolicyEngine,
    protocol: Protocol,
    port: u16,
    allowed: impl Fn(P, P) -> bool,
) {
    let got = matrix(engine.snapshot(), protocol, port);
    let want = expected(allowed);
    assert!(
        got == want,
        "{protocol}/{port}\nexpected:\n{want}\ngot:\n{got}"
    );
}

fn local(p: P) -> bool {
    node_of(p.0) == NODE
}

#[test]
fn no_policy_allows_everything() {
    let mut e = lab();
    check(&mut e, Tcp, 80, |_, _| true);
    assert!(e.snapshot().rules.is_empty());
}

#[test]
fn deny_all_ingress_isolates_only_ingress() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "deny",
        json!({"podSelector": {}, "policyTypes": ["Ingress"]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |_, d| d.0 != "x");
    assert_eq!(e.snapshot().isolation.egress, BTreeSet::new());
    assert_eq!(e.snapshot().isolation.ingress.len(), 3);
}

#[test]
fn deny_all_egress() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "deny",
        json!({"podSelector": {}, "policyTypes": ["Egress"]}),
    ))
    .unwrap();
    check(&mut e, Udp, 81, |s, _| s.0 != "x");
}

#[test]
fn empty_rule_allows_all() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "all",
        json!({"podSelector": {}, "ingress": [{}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |_, _| true);
    assert_eq!(e.snapshot().isolation.ingress.len(), 3);
    // `from: []` and `ports: []` are "any" too.
    e.upsert_policy(&policy(
        "x",
        "all",
        json!({"podSelector": {}, "ingress": [{"from": [], "ports": []}]}),
    ))
    .unwrap();
    check(&mut e, Sctp, 9, |_, _| true);
}

#[test]
fn policy_types_inferred_from_rules() {
    // Only egress rules and no policyTypes: ingress AND egress are covered.
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "eg",
        json!({"podSelector": {"matchLabels": {"pod": "a"}}, "egress": [{"to": [{"podSelector": {}}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| {
        let out_ok = s != ("x", "a") || d.0 == "x";
        let in_ok = d != ("x", "a");
        out_ok && in_ok
    });
    // Only ingress rules: egress stays open.
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "in",
        json!({"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": [{"from": [{"podSelector": {}}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| d != ("x", "a") || s.0 == "x");
}

#[test]
fn explicit_policy_types_ignore_other_rules() {
    // Ingress rules are present but policyTypes says Egress only: ingress is not isolated.
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({
            "podSelector": {},
            "policyTypes": ["Egress"],
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "b"}}}]}],
            "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}]}],
        }),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| s.0 != "x" || d.0 == "y");
}

#[test]
fn pod_selector_peer_is_the_policy_namespace() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "b"}}}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| d != ("x", "a") || s == ("x", "b"));
}

#[test]
fn namespace_selector_peer() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| d.0 != "x" || s.0 == "y");
}

#[test]
fn namespace_and_pod_selector_in_one_peer_is_and() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"from": [{
            "namespaceSelector": {"matchLabels": {"ns": "y"}},
            "podSelector": {"matchLabels": {"pod": "b"}},
        }]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| d.0 != "x" || s == ("y", "b"));
}

#[test]
fn separate_peers_are_or() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"from": [
            {"namespaceSelector": {"matchLabels": {"ns": "y"}}},
            {"podSelector": {"matchLabels": {"pod": "b"}}},
        ]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| {
        d.0 != "x" || s.0 == "y" || s == ("x", "b")
    });
}

#[test]
fn match_expressions_select() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({
            "podSelector": {"matchExpressions": [{"key": "pod", "operator": "NotIn", "values": ["a"]}]},
            "ingress": [{"from": [{"namespaceSelector": {"matchExpressions": [{"key": "ns", "operator": "In", "values": ["y", "z"]}]}}]}],
        }),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| {
        !(d.0 == "x" && d.1 != "a") || s.0 != "x"
    });
}

#[test]
fn ip_block_with_except() {
    // y's Pods are 10.244.2.10-12: allow 10.244.2.0/24 except 10.244.2.11/32 (y/b).
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.244.2.0/24", "except": ["10.244.2.11/32"]}}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| {
        d.0 != "x" || (s.0 == "y" && s.1 != "b")
    });
    let rule = e.snapshot().rules.values().next().unwrap().clone();
    let netpol::Peers::Set(set) = &rule.peers else {
        panic!("{rule:?}")
    };
    assert!(set.ips.is_empty());
    assert_eq!(set.cidrs.len(), 8);
}

#[test]
fn ports_by_number_and_protocol() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |_, _| true);
    check(&mut e, Tcp, 81, |_, d| d.0 != "x");
    check(&mut e, Udp, 80, |_, d| d.0 != "x");
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "UDP", "port": 81}, {"protocol": "SCTP", "port": 80}]}]}),
    ))
    .unwrap();
    check(&mut e, Udp, 81, |_, _| true);
    check(&mut e, Sctp, 80, |_, _| true);
    check(&mut e, Tcp, 81, |_, d| d.0 != "x");
    check(&mut e, Sctp, 81, |_, d| d.0 != "x");
}

#[test]
fn protocol_without_port_is_every_port() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "UDP"}]}]}),
    ))
    .unwrap();
    check(&mut e, Udp, 80, |_, _| true);
    check(&mut e, Udp, 65535, |_, _| true);
    check(&mut e, Tcp, 80, |_, d| d.0 != "x");
}

#[test]
fn port_ranges_with_end_port() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "TCP", "port": 81, "endPort": 90}]}]}),
    ))
    .unwrap();
    for (port, open) in [(80, false), (81, true), (85, true), (90, true), (91, false)] {
        check(&mut e, Tcp, port, |_, d| open || d.0 != "x");
    }
}

#[test]
fn named_ports_resolve_per_destination_pod_for_ingress() {
    // `http` is 80 on a and c, 81 on b.
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"ports": [{"port": "http"}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |_, d| d.0 != "x" || d.1 != "b");
    check(&mut e, Tcp, 81, |_, d| d.0 != "x" || d.1 == "b");
    let parts: BTreeSet<RulePart> = e
        .snapshot()
        .rules
        .keys()
        .map(|id| id.part.clone())
        .collect();
    assert_eq!(parts.len(), 2, "one part per resolved port set: {parts:?}");
}

#[test]
fn named_ports_resolve_per_peer_pod_for_egress() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector": {}}], "ports": [{"port": "http"}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| s.0 != "x" || d.1 != "b");
    check(&mut e, Tcp, 81, |s, d| s.0 != "x" || d.1 == "b");
    // Egress to any peer: the named port resolves on every Pod of the cluster.
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"ports": [{"port": "serve-81-udp", "protocol": "UDP"}]}]}),
    ))
    .unwrap();
    check(&mut e, Udp, 81, |_, _| true);
    check(&mut e, Udp, 80, |s, _| s.0 != "x");
}

#[test]
fn unresolved_named_port_allows_nothing_but_isolates() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"ports": [{"port": "nope"}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |_, d| d.0 != "x");
    assert!(e.snapshot().rules.is_empty());
}

#[test]
fn multiple_policies_are_a_union() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "from-b",
        json!({"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": [{"from": [{"podSelector": {"matchLabels": {"pod": "b"}}}]}]}),
    ))
    .unwrap();
    e.upsert_policy(&policy(
        "x",
        "from-y",
        json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}], "ports": [{"port": 80}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| {
        d.0 != "x" || s.0 == "y" || (d.1 == "a" && s == ("x", "b"))
    });
    check(&mut e, Tcp, 81, |s, d| {
        d.0 != "x" || (d.1 == "a" && s == ("x", "b"))
    });
    // Removing one policy leaves the other's isolation and rules.
    e.remove_policy(&PolicyKey::new("x", "from-y"));
    check(&mut e, Tcp, 80, |s, d| d != ("x", "a") || s == ("x", "b"));
}

#[test]
fn ingress_and_egress_both_needed_between_isolated_pods() {
    let mut e = lab();
    e.upsert_policy(&policy("x", "out", json!({"podSelector": {"matchLabels": {"pod": "a"}}, "policyTypes": ["Egress"], "egress": [{"to": [{"podSelector": {"matchLabels": {"pod": "b"}}}]}]}))).unwrap();
    e.upsert_policy(&policy(
        "x",
        "in",
        json!({"podSelector": {"matchLabels": {"pod": "b"}}, "policyTypes": ["Ingress"]}),
    ))
    .unwrap();
    // a may send only to b, but b accepts nothing: a reaches nobody.
    check(&mut e, Tcp, 80, |s, d| s != ("x", "a") && d != ("x", "b"));
}

#[test]
fn only_local_pods_are_applied_to() {
    // A policy in z (Pods on n2) isolates nothing on n1, but z's Pods are peers of x's rules.
    let mut e = lab();
    e.upsert_policy(&policy(
        "z",
        "deny",
        json!({"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}),
    ))
    .unwrap();
    assert!(e.snapshot().isolation.ingress.is_empty() && e.snapshot().isolation.egress.is_empty());
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"ns": "z"}}}]}]}),
    ))
    .unwrap();
    check(&mut e, Tcp, 80, |s, d| s.0 != "x" || d.0 == "z");
    let rule = e.snapshot().rules.values().next().unwrap();
    assert_eq!(rule.applied_to.len(), 3);
    assert!(rule.applied_to.iter().all(|ip| ip.octets()[2] == 1));
    assert!(!local(("z", "a")));
}

#[test]
fn host_network_and_finished_pods_take_no_part() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {}}]}]}),
    ))
    .unwrap();
    let before = e.snapshot().clone();
    let mut host = pod("y", "h", NODE, "10.10.0.11", json!({"pod": "h"}), &[]);
    host.spec.as_mut().unwrap().host_network = Some(true);
    e.upsert_pod(&host).unwrap();
    let mut done = pod("y", "d", NODE, "10.244.2.50", json!({"pod": "d"}), &[]);
    done.status.as_mut().unwrap().phase = Some("Succeeded".into());
    e.upsert_pod(&done).unwrap();
    assert_eq!(e.snapshot(), &before);
}

#[test]
fn invalid_policies_are_typed_errors_and_keep_the_previous_version() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "policyTypes": ["Ingress"]}),
    ))
    .unwrap();
    let before = e.snapshot().clone();
    let bad = [
        (
            json!({"podSelector": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}}),
            "operator",
        ),
        (
            json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "ICMP"}]}]}),
            "protocol",
        ),
        (
            json!({"podSelector": {}, "ingress": [{"ports": [{"port": 70000}]}]}),
            "port",
        ),
        (
            json!({"podSelector": {}, "ingress": [{"ports": [{"port": 90, "endPort": 80}]}]}),
            "endPort",
        ),
        (
            json!({"podSelector": {}, "ingress": [{"ports": [{"port": "http", "endPort": 80}]}]}),
            "endPort",
        ),
        (
            json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}]}),
            "ipBlock",
        ),
        (
            json!({"podSelector": {}, "ingress": [{"from": [{}]}]}),
            "peer",
        ),
        (
            json!({"podSelector": {}, "policyTypes": ["Sideways"]}),
            "policyTypes",
        ),
    ];
    for (spec, word) in bad {
        let err = e
            .upsert_policy(&policy("x", "p", spec.clone()))
            .unwrap_err();
        assert!(err.to_string().contains(word), "{spec}: {err}");
        assert!(err.to_string().contains("x/p"), "{err}");
    }
    assert!(matches!(
        e.upsert_policy(&policy(
            "x",
            "p",
            json!({"podSelector": {}, "ingress": [{"from": [{}]}]})
        )),
        Err(PolicyError::EmptyPeer { .. })
    ));
    assert_eq!(e.snapshot(), &before);
}

#[test]
fn rule_ids_name_policy_direction_and_index() {
    let mut e = lab();
    e.upsert_policy(&policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}, {"ports": [{"port": "http"}, {"port": 99}]}], "egress": [{}]}),
    ))
    .unwrap();
    let ids: Vec<String> = e.snapshot().rules.keys().map(ToString::to_string).collect();
    assert_eq!(
        ids,
        [
            "x/p/ingress/0",
            "x/p/ingress/1",
            "x/p/ingress/1[TCP/80]",
            "x/p/ingress/1[TCP/81]",
            "x/p/egress/0",
        ]
    );
    assert!(
        e.snapshot()
            .rules
            .keys()
            .all(|id| id.direction == Direction::Ingress || id.index == 0)
    );
}
