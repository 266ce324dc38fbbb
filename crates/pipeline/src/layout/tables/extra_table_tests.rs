//! Adding a table edits nothing else: every flow the renderers produce (the Node in each traffic
//! mode, its Pods, tunnel and direct peers, NetworkPolicy rules of one and of several
//! dimensions, a Service with and one without ClientIP affinity), rendered with the agent's graph and with a graph of the same features plus one
//! more table — first or last in each stage in turn — is the same flow by table name. The only
//! gotos that move are those onto the new table, from the target it now sits in front of.

use std::net::Ipv4Addr;

use netpol::{
    AddressSet, Direction, Isolation, Peers, PolicyKey, PortMatch, Ports, Protocol, Rule, RuleId,
    RulePart, Snapshot,
};
use openflow::action::Action;
use openflow::msg::flow_mod::FlowMod;

use super::{FEATURES, Feature, Stage, Table, TableGraph};
use crate::cache::Update;
use crate::render::node::render_node;
use crate::render::peer::render_peer;
use crate::render::pod::render_pod;
use crate::render::{PolicyRenderer, ServiceRenderer};
use model::{
    Endpoint, EndpointConditions, LocalPod, NodeNetwork, PeerNode, PodKey, Service, ServiceKey,
    ServicePort, SessionAffinity, TrafficMode, TrafficPolicy, TunnelType,
};

const STAGES: [Stage; 11] = [
    Stage::Classifier,
    Stage::Validation,
    Stage::ConntrackState,
    Stage::PreRouting,
    Stage::EgressSecurity,
    Stage::Routing,
    Stage::PostRouting,
    Stage::Switching,
    Stage::IngressSecurity,
    Stage::Conntrack,
    Stage::Output,
];

fn addr(s: &str) -> Ipv4Addr {
    s.parse().unwrap()
}

fn node(mode: TrafficMode) -> NodeNetwork {
    NodeNetwork {
        node_ip: "10.10.0.11/24".parse().unwrap(),
        node_mac: "02:00:0a:0a:00:0b".parse().unwrap(),
        pod_cidr: "10.244.1.0/24".parse().unwrap(),
        gateway_ip: addr("10.244.1.1"),
        gateway_mac: "02:00:0a:f4:01:01".parse().unwrap(),
        mode,
    }
}

fn pod() -> LocalPod {
    LocalPod {
        key: PodKey::new("x", "a"),
        ip: addr("10.244.1.10"),
        mac: "02:00:0a:f4:01:0a".parse().unwrap(),
    }
}

/// A peer in the Node's subnet (direct in hybrid mode) and one outside it (tunnelled).
fn peers() -> [PeerNode; 2] {
    let peer = |name: &str, node_ip: &str, n: u8| PeerNode {
        name: name.into(),
        node_ip: addr(node_ip),
        pod_cidr: format!("10.244.{n}.0/24").parse().unwrap(),
        gateway_ip: Ipv4Addr::new(10, 244, n, 1),
        mac: Some(format!("02:00:0a:0a:00:0{n}").parse().unwrap()),
    };
    [peer("n2", "10.10.0.12", 2), peer("n3", "10.20.0.13", 3)]
}

/// An ingress rule of three dimensions and an egress rule of one, both Pods isolated.
fn snapshot() -> Snapshot {
    let rule = |direction, peers, ports| Rule {
        id: RuleId {
            policy: PolicyKey::new("x", "p"),
            direction,
            index: 0,
            part: RulePart::Numeric,
        },
        applied_to: [addr("10.244.1.10")].into(),
        peers,
        ports,
    };
    let ingress = rule(
        Direction::Ingress,
        Peers::Set(AddressSet {
            ips: [addr("10.244.2.10")].into(),
            cidrs: ["192.168.0.0/16".parse().unwrap()].into(),
        }),
        Ports::Set([PortMatch::single(Protocol::Tcp, 80)].into()),
    );
    let egress = rule(Direction::Egress, Peers::Any, Ports::Any);
    Snapshot {
        rules: [ingress, egress].map(|r| (r.id.clone(), r)).into(),
        isolation: Isolation {
            ingress: [addr("10.244.1.10")].into(),
            egress: [addr("10.244.1.10")].into(),
        },
    }
}

/// Every flow the renderers produce, with the ids of `g`.
fn rendered(g: &'static TableGraph) -> Vec<FlowMod> {
    let mut flows = Vec::new();
    for mode in [
        TrafficMode::Encap(TunnelType::Geneve),
        TrafficMode::NoEncap,
        TrafficMode::Hybrid(TunnelType::Geneve),
    ] {
        let node = node(mode);
        flows.extend(render_node(g, &node));
        flows.extend(render_pod(g, &node, &pod(), 10));
        for peer in peers() {
            flows.extend(render_peer(g, &node, &peer));
        }
    }
    flows.extend(PolicyRenderer::new().render_in(g, &snapshot()).flows);
    flows.extend(service_flows(g));
    flows
}

/// The flows of a Service without affinity and of one with ClientIP affinity.
fn service_flows(g: &'static TableGraph) -> Vec<FlowMod> {
    let endpoint = Endpoint {
        ip: addr("10.244.1.10"),
        port: 8080,
        conditions: EndpointConditions::READY,
        node: None,
        is_local: true,
    };
    let service = |name: &str, last: u8, session_affinity| Service {
        key: ServiceKey::new("x", name),
        cluster_ips: vec![Ipv4Addr::new(10, 96, 0, last)],
        external_ips: Vec::new(),
        load_balancer_ips: Vec::new(),
        ports: vec![ServicePort {
            name: String::new(),
            protocol: Protocol::Tcp,
            port: 80,
            node_port: None,
            endpoints: vec![endpoint.clone()],
        }],
        session_affinity,
        external_traffic_policy: TrafficPolicy::Cluster,
        internal_traffic_policy: TrafficPolicy::Cluster,
        health_check_node_port: None,
    };
    let renderer = ServiceRenderer::with_graph(g);
    [
        service("plain", 1, SessionAffinity::None),
        service(
            "sticky",
            2,
            SessionAffinity::ClientIp {
                timeout_seconds: 60,
            },
        ),
    ]
    .iter()
    .flat_map(|s| renderer.upsert(s).unwrap().change.updates)
    .flat_map(|(_, update)| match update {
        Update::Replace(objects) => objects.flows,
        Update::Patch(patch) => patch.upsert.flows,
    })
    .collect()
}

/// A flow by table name: its table, the rest of its text, the tables it continues at (its
/// `goto_table`, then each `ct(table=…)` and `resubmit(,…)`), and the tables it learns into.
#[derive(Debug, PartialEq)]
struct Named {
    table: &'static str,
    text: String,
    targets: Vec<&'static str>,
    learns: Vec<&'static str>,
}

fn named(g: &TableGraph, fm: &FlowMod) -> Named {
    let name = |id: u8| g.table(id).expect("a declared table").name();
    let mut bare = fm.clone();
    bare.table_id = 0;
    let mut targets: Vec<u8> = bare.instructions.goto_table.take().into_iter().collect();
    let mut learns = Vec::new();
    for action in &mut bare.instructions.apply {
        match action {
            Action::Ct(ct) => targets.extend(ct.table.take()),
            Action::Resubmit { table, .. } => targets.extend(table.take()),
            Action::Learn(learn) => learns.push(std::mem::take(&mut learn.table)),
            _ => {}
        }
    }
    for target in &targets {
        assert!(*target > fm.table_id, "a goto backwards: {fm}");
    }
    Named {
        table: name(fm.table_id),
        text: bare.to_string(),
        targets: targets.into_iter().map(name).collect(),
        learns: learns.into_iter().map(name).collect(),
    }
}

/// The agent's graph with `extra` declared by a feature before all others (`first`) or after.
fn with_extra(extra: &[Table], first: bool) -> &'static TableGraph {
    let feature = Feature {
        name: "test",
        tables: extra,
    };
    let features: Vec<Feature<'_>> = if first {
        [feature].iter().chain(FEATURES).copied().collect()
    } else {
        FEATURES.iter().copied().chain([feature]).collect()
    };
    // The policy renderer keeps its graph for later updates, so it takes a static one.
    Box::leak(Box::new(TableGraph::new(&features).unwrap()))
}

/// The gotos that differ between the agent's graph and `extended`, as `from → to (was …)`;
/// anything else that differs fails.
fn moved_gotos(extended: &'static TableGraph, extra: Table) -> Vec<String> {
    let standard = TableGraph::standard();
    let (before, after) = (rendered(standard), rendered(extended));
    assert_eq!(before.len(), after.len());
    let mut moved = Vec::new();
    for (b, a) in before.iter().zip(&after) {
        let (b, a) = (named(standard, b), named(extended, a));
        assert_eq!((b.table, &b.text, &b.learns), (a.table, &a.text, &a.learns));
        assert_eq!(b.targets.len(), a.targets.len(), "{b:?} / {a:?}");
        for (was, is) in b.targets.iter().zip(&a.targets) {
            if was != is {
                assert_eq!(*is, extra.name(), "{b:?} / {a:?}");
                assert_eq!(
                    extended.next(extra).name(),
                    *was,
                    "{a:?}: the new table is not in front of {was}"
                );
                moved.push(format!("{} → {is} (was {was})", b.table));
            }
        }
    }
    moved.sort();
    moved.dedup();
    moved
}

#[test]
fn an_extra_table_in_any_stage_changes_no_other_goto() {
    for stage in STAGES {
        let extra = [Table::new("Extra", stage)];
        for first in [true, false] {
            let extended = with_extra(&extra, first);
            assert_eq!(
                extended.tables().count(),
                TableGraph::standard().tables().count() + 1
            );
            moved_gotos(extended, extra[0]);
        }
    }
}

#[test]
fn a_pre_routing_table_after_the_services_gets_what_leaves_endpoint_dnat() {
    let extra = [Table::new("NodePortMark", Stage::PreRouting)];
    let extended = with_extra(&extra, false);
    assert_eq!(
        moved_gotos(extended, extra[0]),
        ["EndpointDNAT → NodePortMark (was EgressRule)"]
    );
    // An extra table in the egress security stage, after the policy tables: the allowed
    // traffic still continues at the routing stage, the default table's miss too.
    let metric = [Table::new("EgressMetric", Stage::EgressSecurity)];
    assert_eq!(
        moved_gotos(with_extra(&metric, false), metric[0]),
        Vec::<String>::new()
    );
}
