//! Given mode ([`PolicyEngine::given`]): groups and their members come from a controller, no
//! selector is evaluated. A group stays while given, read by a policy or not; a Pod member of
//! several groups is one Pod, whose new details change it in all of them; a Pod is forgotten
//! with its last group.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use netpol::input::{CompiledPolicy, CompiledRule, GroupKey, NamedPort, Peer, PodInfo, Scope};
use netpol::selector::Selector;
use netpol::{PodKey, PolicyEngine, PolicyKey, Protocol};

fn group(app: &str) -> GroupKey {
    GroupKey {
        scope: Scope::Namespace("ns".into()),
        pods: Selector::with_labels([("app", app)]),
    }
}

fn member(name: &str, last: u8, node: &str, http: Option<u16>) -> PodInfo {
    PodInfo {
        key: PodKey::new("ns", name),
        labels: Default::default(),
        ip: Some(Ipv4Addr::new(10, 0, 0, last)),
        node: Some(node.into()),
        named_ports: http
            .map(|port| NamedPort {
                name: "http".into(),
                protocol: Protocol::Tcp,
                port,
            })
            .into_iter()
            .collect(),
    }
}

/// Applied to `applied`, ingress from `from`.
fn policy(name: &str, applied: &GroupKey, from: &GroupKey) -> CompiledPolicy {
    CompiledPolicy {
        key: PolicyKey::new("ns", name),
        applied_to: applied.clone(),
        ingress: Some(vec![CompiledRule {
            peers: Some(vec![Peer::Pods(from.clone())]),
            ports: None,
        }]),
        egress: None,
    }
}

fn ip(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, last)
}

#[test]
fn a_pod_in_two_groups_moving_node_leaves_the_policy_applied_to_one_of_them() {
    let (web, clients) = (group("web"), group("clients"));
    let mut e = PolicyEngine::given("n1");
    // p is a client and a web Pod; q a web Pod; both on n1.
    e.give_group(&clients, [member("p", 1, "n1", None)]);
    e.give_group(
        &web,
        [member("p", 1, "n1", None), member("q", 2, "n1", None)],
    );
    e.set_policy(policy("from-clients", &web, &clients));
    assert_eq!(
        e.snapshot().isolation.ingress,
        BTreeSet::from([ip(1), ip(2)])
    );
    e.sync();
    // p moves to n2; the clients group hears of it first: p's Node is one for both groups.
    e.give_member(&clients, member("p", 1, "n2", None));
    e.give_member(&web, member("p", 1, "n2", None));
    let delta = e.sync().delta;
    assert_eq!(delta.released.ingress, BTreeSet::from([ip(1)]));
    let snapshot = e.snapshot();
    assert_eq!(snapshot.isolation.ingress, BTreeSet::from([ip(2)]));
    let rule = snapshot.rules.values().next().expect("the rule");
    assert_eq!(rule.applied_to, BTreeSet::from([ip(2)]));
}

#[test]
fn new_named_ports_of_a_pod_change_every_group_it_is_in() {
    let (web, clients) = (group("web"), group("clients"));
    let mut e = PolicyEngine::given("n1");
    e.give_group(&clients, [member("c", 3, "n2", None)]);
    e.give_group(&web, [member("w", 1, "n1", None)]);
    let mut named = policy("http-from-clients", &web, &clients);
    if let Some(rules) = &mut named.ingress {
        rules[0].ports = Some(vec![netpol::input::PortSpec::Named {
            protocol: Protocol::Tcp,
            name: "http".into(),
        }]);
    }
    e.set_policy(named);
    assert!(e.snapshot().rules.is_empty(), "w has no http port yet");
    // w gains its http port through the clients group (it became a client too): the web
    // group's policy resolves it.
    e.give_member(&clients, member("w", 1, "n1", Some(8080)));
    let rules: Vec<_> = e.snapshot().rules.values().cloned().collect();
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0].applied_to, BTreeSet::from([ip(1)]));
}

#[test]
fn a_given_group_stays_without_a_policy_until_taken_back() {
    let (web, clients) = (group("web"), group("clients"));
    let mut e = PolicyEngine::given("n1");
    e.give_group(&web, [member("w", 1, "n1", None)]);
    e.give_group(&clients, [member("c", 2, "n2", None)]);
    assert_eq!(e.group_count(), 2, "given before any policy reads them");
    e.set_policy(policy("p", &web, &clients));
    e.remove_policy(&PolicyKey::new("ns", "p"));
    e.sync();
    assert_eq!(e.group_count(), 2, "still given");
    // The policy comes back: the groups it reads still have their members.
    e.set_policy(policy("p", &web, &clients));
    let rule = e
        .snapshot()
        .rules
        .values()
        .next()
        .cloned()
        .expect("the rule");
    assert_eq!(rule.applied_to, BTreeSet::from([ip(1)]));
    e.remove_policy(&PolicyKey::new("ns", "p"));
    e.take_back_group(&web);
    e.take_back_group(&clients);
    assert_eq!(e.group_count(), 0);
    assert!(e.snapshot().rules.is_empty());
    assert_eq!(
        e.pod(&PodKey::new("ns", "w")),
        None,
        "forgotten with its group"
    );
}

#[test]
fn a_pod_is_kept_while_one_of_its_groups_has_it() {
    let (web, clients) = (group("web"), group("clients"));
    let mut e = PolicyEngine::given("n1");
    e.give_group(&web, [member("p", 1, "n1", None)]);
    e.give_group(&clients, [member("p", 1, "n1", None)]);
    e.take_member(&web, &PodKey::new("ns", "p"));
    assert!(e.pod(&PodKey::new("ns", "p")).is_some());
    e.take_member(&clients, &PodKey::new("ns", "p"));
    assert_eq!(e.pod(&PodKey::new("ns", "p")), None);
}

#[test]
fn pods_and_namespaces_are_not_read_in_given_mode() {
    let web = group("web");
    let mut e = PolicyEngine::given("n1");
    e.give_group(&web, [member("w", 1, "n1", None)]);
    let mut labelled = member("other", 9, "n1", None);
    labelled.labels = [("app".to_owned(), "web".to_owned())].into();
    e.set_pod(labelled);
    e.set_policy(policy("p", &web, &web));
    assert_eq!(e.snapshot().isolation.ingress, BTreeSet::from([ip(1)]));
}
