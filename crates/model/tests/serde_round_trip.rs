//! The model's values survive a JSON round trip unchanged (a control plane ships them to agents),
//! and read as the text an operator would expect.

use std::collections::BTreeSet;

use model::{
    AddressSet, Direction, Endpoint, EndpointConditions, Isolation, LocalPod, NodeNetwork,
    PeerNode, Peers, PodKey, PolicyKey, PortMatch, Ports, Protocol, Rule, RuleId, RulePart,
    Service, ServiceKey, ServicePort, SessionAffinity, Snapshot, TrafficMode, TrafficPolicy,
    TunnelType,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) -> String {
    let text = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(&back, value, "{text}");
    text
}

#[test]
fn node_peer_and_pod() {
    let node = NodeNetwork {
        node_ip: "10.10.0.11/24".parse().unwrap(),
        node_mac: "02:00:0a:0a:00:0b".parse().unwrap(),
        pod_cidr: "10.244.1.0/24".parse().unwrap(),
        gateway_ip: "10.244.1.1".parse().unwrap(),
        gateway_mac: "02:00:0a:f4:01:01".parse().unwrap(),
        mode: TrafficMode::Hybrid(TunnelType::Vxlan),
    };
    let text = round_trip(&node);
    assert!(text.contains(r#""node_ip":"10.10.0.11/24""#), "{text}");
    assert!(text.contains(r#""node_mac":"02:00:0a:0a:00:0b""#), "{text}");
    round_trip(&PeerNode {
        name: "n2".into(),
        node_ip: "10.10.0.12".parse().unwrap(),
        pod_cidr: "10.244.2.0/24".parse().unwrap(),
        gateway_ip: "10.244.2.1".parse().unwrap(),
        mac: None,
    });
    round_trip(&LocalPod {
        key: PodKey::new("default", "p1"),
        ip: "10.244.1.10".parse().unwrap(),
        mac: "02:00:0a:f4:01:0a".parse().unwrap(),
    });
}

#[test]
fn a_policy_snapshot() {
    let rule = Rule {
        id: RuleId {
            policy: PolicyKey::new("x", "allow-80"),
            direction: Direction::Ingress,
            index: 0,
            part: RulePart::Numeric,
        },
        applied_to: BTreeSet::from(["10.244.1.10".parse().unwrap()]),
        peers: Peers::Set(AddressSet {
            ips: BTreeSet::from(["10.244.2.10".parse().unwrap()]),
            cidrs: BTreeSet::from(["192.168.0.0/16".parse().unwrap()]),
        }),
        ports: Ports::Set(BTreeSet::from([PortMatch::single(Protocol::Tcp, 80)])),
    };
    let snapshot = Snapshot {
        rules: [(rule.id.clone(), rule)].into_iter().collect(),
        isolation: Isolation {
            ingress: BTreeSet::from(["10.244.1.10".parse().unwrap()]),
            egress: BTreeSet::new(),
        },
    };
    let text = round_trip(&snapshot);
    assert!(text.contains(r#""192.168.0.0/16""#), "{text}");
}

#[test]
fn a_service_with_its_endpoints() {
    let service = Service {
        key: ServiceKey::new("kube-system", "kube-dns"),
        cluster_ips: vec!["10.96.0.10".parse().unwrap()],
        external_ips: vec!["192.168.1.10".parse().unwrap()],
        load_balancer_ips: Vec::new(),
        ports: vec![ServicePort {
            name: "dns".into(),
            protocol: Protocol::Udp,
            port: 53,
            node_port: Some(30053),
            endpoints: vec![Endpoint {
                ip: "10.244.1.10".parse().unwrap(),
                port: 5353,
                conditions: EndpointConditions {
                    ready: false,
                    serving: true,
                    terminating: true,
                },
                node: Some("n1".into()),
                is_local: true,
            }],
        }],
        session_affinity: SessionAffinity::ClientIp {
            timeout_seconds: 10800,
        },
        external_traffic_policy: TrafficPolicy::Local,
        internal_traffic_policy: TrafficPolicy::Cluster,
        health_check_node_port: None,
    };
    let text = round_trip(&service);
    assert!(text.contains(r#""cluster_ips":["10.96.0.10"]"#), "{text}");
    assert!(text.contains(r#""protocol":"Udp""#), "{text}");
    assert!(
        text.contains(r#""session_affinity":{"ClientIp":{"timeout_seconds":10800}}"#),
        "{text}"
    );
}
