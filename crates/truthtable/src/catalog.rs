//! The scenarios, in the order the tests apply them. Each is one state of the lab; going from
//! one to the next creates, updates (same Namespace and name, new spec) and deletes policies and
//! changes labels, so the sequence also covers policy update, policy delete, Pod label change
//! and Namespace label change. Expectations are written from the Kubernetes NetworkPolicy
//! semantics: a Pod selected by a policy of a direction is isolated in that direction and
//! admits only what some rule of those policies allows.

use serde_json::{Value, json};

use crate::model::Protocol::{Tcp, Udp};
use crate::model::{LabelChange, N1_POD_CIDR, N2_POD_CIDR, Pod, Port, ip, node};
use crate::scenario::{Policy, Rule, Scenario};

fn policy(namespace: &'static str, name: &'static str, spec: Value) -> Policy {
    Policy {
        namespace,
        name,
        spec,
    }
}

fn sel(key: &str, value: &str) -> Value {
    json!({"matchLabels": {key: value}})
}

/// The side admits everything (not isolated).
fn any(_: Pod, _: Pod, _: Port) -> bool {
    true
}

fn scenario(name: &'static str, policies: Vec<Policy>, ingress: Rule, egress: Rule) -> Scenario {
    Scenario {
        name,
        policies,
        labels: Vec::new(),
        ingress,
        egress,
    }
}

fn relabelled(labels: Vec<LabelChange>, scenario: Scenario) -> Scenario {
    Scenario { labels, ..scenario }
}

fn host(pod: Pod) -> String {
    format!("{}/32", ip(pod))
}

/// x/a admits x/c only (the spec of the policy update scenario and the label changes after it).
fn x_a_from_pod_c() -> Policy {
    policy(
        "x",
        "p",
        json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"podSelector": sel("pod", "c")}]}]}),
    )
}

/// x admits Namespaces labelled `ns=y`.
fn x_from_namespace_y() -> Policy {
    policy(
        "x",
        "p",
        json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": sel("ns", "y")}]}]}),
    )
}

/// Pods labelled `role=db` in y admit nothing.
fn y_db_isolated() -> Policy {
    policy(
        "y",
        "db",
        json!({"podSelector": sel("role", "db"), "policyTypes": ["Ingress"]}),
    )
}

/// Every scenario, in order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        scenario("no policy", vec![], any, any),
        scenario(
            "deny all ingress in x",
            vec![policy(
                "x",
                "d",
                json!({"podSelector": {}, "policyTypes": ["Ingress"]}),
            )],
            |_, d, _| d.0 != "x",
            any,
        ),
        scenario(
            "update: x/d denies all egress instead",
            vec![policy(
                "x",
                "d",
                json!({"podSelector": {}, "policyTypes": ["Egress"]}),
            )],
            any,
            |s, _, _| s.0 != "x",
        ),
        scenario(
            "deny all both ways in y (x/d deleted)",
            vec![policy(
                "y",
                "d",
                json!({"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}),
            )],
            |_, d, _| d.0 != "y",
            |s, _, _| s.0 != "y",
        ),
        scenario(
            "allow all ingress in x",
            vec![policy(
                "x",
                "a",
                json!({"podSelector": {}, "ingress": [{}]}),
            )],
            any,
            any,
        ),
        scenario(
            "allow all egress in x",
            vec![policy(
                "x",
                "a",
                json!({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{}]}),
            )],
            any,
            any,
        ),
        scenario(
            "x/a from x/b",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"podSelector": sel("pod", "b")}]}]}),
            )],
            |s, d, _| d != ("x", "a") || s == ("x", "b"),
            any,
        ),
        scenario(
            "update: x/p lets x/a in from x/c only",
            vec![x_a_from_pod_c()],
            |s, d, _| d != ("x", "a") || s == ("x", "c"),
            any,
        ),
        relabelled(
            vec![LabelChange::Pod(("x", "b"), "pod", Some("c"))],
            scenario(
                "Pod label change: x/b relabelled pod=c gets into x/a",
                vec![x_a_from_pod_c()],
                |s, d, _| d != ("x", "a") || s == ("x", "b") || s == ("x", "c"),
                any,
            ),
        ),
        scenario(
            "Pod label change: x/b's label restored, out of x/a again",
            vec![x_a_from_pod_c()],
            |s, d, _| d != ("x", "a") || s == ("x", "c"),
            any,
        ),
        scenario(
            "x from Namespace y",
            vec![x_from_namespace_y()],
            |s, d, _| d.0 != "x" || s.0 == "y",
            any,
        ),
        relabelled(
            vec![LabelChange::Namespace("z", "ns", Some("y"))],
            scenario(
                "Namespace label change: z labelled ns=y gets into x",
                vec![x_from_namespace_y()],
                |s, d, _| d.0 != "x" || s.0 == "y" || s.0 == "z",
                any,
            ),
        ),
        relabelled(
            vec![LabelChange::Namespace("y", "ns", None)],
            scenario(
                "Namespace label change: y loses its label, z has its own again",
                vec![x_from_namespace_y()],
                |_, d, _| d.0 != "x",
                any,
            ),
        ),
        scenario(
            "x from Namespace y AND Pod b",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": sel("ns", "y"), "podSelector": sel("pod", "b")}]}]}),
            )],
            |s, d, _| d.0 != "x" || s == ("y", "b"),
            any,
        ),
        scenario(
            "x from Namespace y OR Pod b",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": sel("ns", "y")}, {"podSelector": sel("pod", "b")}]}]}),
            )],
            |s, d, _| d.0 != "x" || s.0 == "y" || s == ("x", "b"),
            any,
        ),
        scenario(
            "x/a on TCP 80 from anyone",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "ingress": [{"ports": [{"port": 80}]}]}),
            )],
            |_, d, port| d != ("x", "a") || (port.protocol == Tcp && port.number == 80),
            any,
        ),
        scenario(
            "x/a on every UDP port",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "ingress": [{"ports": [{"protocol": "UDP"}]}]}),
            )],
            |_, d, port| d != ("x", "a") || port.protocol == Udp,
            any,
        ),
        scenario(
            "x/a on TCP 81-90",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "ingress": [{"ports": [{"port": 81, "endPort": 90}]}]}),
            )],
            |_, d, port| d != ("x", "a") || (port.protocol == Tcp && port.number == 81),
            any,
        ),
        scenario(
            "x on named port serve-81-tcp",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"ports": [{"port": "serve-81-tcp"}]}]}),
            )],
            |_, d, port| d.0 != "x" || (port.protocol == Tcp && port.number == 81),
            any,
        ),
        scenario(
            "x from z's CIDR except z/b",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": N2_POD_CIDR, "except": [host(("z", "b"))]}}]}]}),
            )],
            |s, d, _| d.0 != "x" || (s.0 == "z" && s.1 != "b"),
            any,
        ),
        scenario(
            "x/a egress to Namespace z",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "a"), "policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector": sel("ns", "z")}]}]}),
            )],
            any,
            |s, d, _| s != ("x", "a") || d.0 == "z",
        ),
        scenario(
            "x egress to Namespace y on UDP 80",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector": sel("ns", "y")}], "ports": [{"protocol": "UDP", "port": 80}]}]}),
            )],
            any,
            |s, d, port| s.0 != "x" || (d.0 == "y" && port.protocol == Udp && port.number == 80),
        ),
        scenario(
            "x egress on named port serve-80-udp to anyone",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"ports": [{"protocol": "UDP", "port": "serve-80-udp"}]}]}),
            )],
            any,
            |s, _, port| s.0 != "x" || (port.protocol == Udp && port.number == 80),
        ),
        scenario(
            "union of two policies on x/a",
            vec![
                policy(
                    "x",
                    "p1",
                    json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"namespaceSelector": sel("ns", "y"), "podSelector": sel("pod", "a")}], "ports": [{"port": 80}]}]}),
                ),
                policy(
                    "x",
                    "p2",
                    json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"podSelector": sel("pod", "b")}]}]}),
                ),
            ],
            |s, d, port| {
                d != ("x", "a")
                    || s == ("x", "b")
                    || (s == ("y", "a") && port.protocol == Tcp && port.number == 80)
            },
            any,
        ),
        scenario(
            "delete: of the two policies on x/a only p2 is left",
            vec![policy(
                "x",
                "p2",
                json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"podSelector": sel("pod", "b")}]}]}),
            )],
            |s, d, _| d != ("x", "a") || s == ("x", "b"),
            any,
        ),
        scenario(
            "egress rules only: ingress isolated too",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "c"), "egress": [{"to": [{"podSelector": {}}]}]}),
            )],
            |_, d, _| d != ("x", "c"),
            |s, d, _| s != ("x", "c") || d.0 == "x",
        ),
        scenario(
            "policyTypes Egress ignores ingress rules",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": sel("pod", "c"), "policyTypes": ["Egress"], "ingress": [{"from": [{"podSelector": sel("pod", "a")}]}], "egress": [{"to": [{"namespaceSelector": sel("ns", "y")}]}]}),
            )],
            any,
            |s, d, _| s != ("x", "c") || d.0 == "y",
        ),
        scenario(
            "matchExpressions",
            vec![policy(
                "x",
                "p",
                json!({
                    "podSelector": {"matchExpressions": [{"key": "pod", "operator": "NotIn", "values": ["a"]}]},
                    "ingress": [{"from": [{"namespaceSelector": {"matchExpressions": [{"key": "ns", "operator": "In", "values": ["y", "z"]}]}}]}],
                }),
            )],
            |s, d, _| d.0 != "x" || d.1 == "a" || s.0 != "x",
            any,
        ),
        scenario(
            "deny all both ways in z (n2's Pods)",
            vec![policy(
                "z",
                "d",
                json!({"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}),
            )],
            |_, d, _| d.0 != "z",
            |s, _, _| s.0 != "z",
        ),
        relabelled(
            vec![LabelChange::Pod(("y", "a"), "role", Some("db"))],
            scenario(
                "Pod label change: y/a labelled role=db comes under y/db",
                vec![y_db_isolated()],
                |_, d, _| d != ("y", "a"),
                any,
            ),
        ),
        scenario(
            "Pod label change: y/a loses role=db, y/db selects nobody",
            vec![y_db_isolated()],
            any,
            any,
        ),
        scenario(
            "y from every Namespace's Pod c",
            vec![policy(
                "y",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {}, "podSelector": sel("pod", "c")}]}]}),
            )],
            |s, d, _| d.0 != "y" || s.1 == "c",
            any,
        ),
        scenario(
            "y/b egress to n1's CIDR except x/c",
            vec![policy(
                "y",
                "p",
                json!({"podSelector": sel("pod", "b"), "policyTypes": ["Egress"], "egress": [{"to": [{"ipBlock": {"cidr": N1_POD_CIDR, "except": [host(("x", "c"))]}}]}]}),
            )],
            any,
            |s, d, _| s != ("y", "b") || (node(d) == "n1" && d != ("x", "c")),
        ),
        scenario(
            "x/a ingress from y/a, y/a egress to x only on TCP",
            vec![
                policy(
                    "x",
                    "in",
                    json!({"podSelector": sel("pod", "a"), "ingress": [{"from": [{"namespaceSelector": sel("ns", "y"), "podSelector": sel("pod", "a")}]}]}),
                ),
                policy(
                    "y",
                    "out",
                    json!({"podSelector": sel("pod", "a"), "policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector": sel("ns", "x")}], "ports": [{"protocol": "TCP"}]}]}),
                ),
            ],
            |s, d, _| d != ("x", "a") || s == ("y", "a"),
            |s, d, port| s != ("y", "a") || (d.0 == "x" && port.protocol == Tcp),
        ),
        scenario("delete: every policy removed", vec![], any, any),
        scenario(
            "empty from and ports lists are any",
            vec![policy(
                "x",
                "p",
                json!({"podSelector": {}, "ingress": [{"from": [], "ports": []}]}),
            )],
            any,
            any,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_scenarios_differ_in_what_they_apply() {
        let all = scenarios();
        assert!(all.len() >= 25);
        for pair in all.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(
                a.policies != b.policies || a.cluster() != b.cluster(),
                "{:?} then {:?} change nothing",
                a.name,
                b.name
            );
        }
    }
}
