//! Unit tests of [`super::translate`]: what each field of a Service and its EndpointSlices
//! becomes, what is skipped, and that bad input is a problem naming the object while the
//! other Services still translate.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service as ApiService;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use model::{EndpointConditions, Protocol, ServiceKey, SessionAffinity, TrafficPolicy};
use serde_json::{Value, json};

use super::incremental::Translations;
use super::translate::{DEFAULT_AFFINITY_TIMEOUT, Problem};

const NODE: &str = "n1";

fn service(name: &str, spec: Value) -> Arc<ApiService> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"namespace": "default", "name": name},
            "spec": spec,
        }))
        .unwrap(),
    )
}

fn slice(name: &str, service: &str, ports: Value, endpoints: Value) -> Arc<EndpointSlice> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {
                "namespace": "default",
                "name": name,
                "labels": {"kubernetes.io/service-name": service},
            },
            "addressType": "IPv4",
            "ports": ports,
            "endpoints": endpoints,
        }))
        .unwrap(),
    )
}

fn web_spec() -> Value {
    json!({
        "clusterIP": "10.96.0.10",
        "clusterIPs": ["10.96.0.10"],
        "ports": [
            {"name": "http", "port": 80, "targetPort": "web"},
            {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 5353},
        ],
    })
}

/// What the stores `services` and `slices` translate to: the Services to install and the
/// objects that cannot be translated.
#[derive(Debug, PartialEq, Eq)]
struct Translation {
    services: BTreeMap<ServiceKey, model::Service>,
    problems: BTreeMap<String, Problem>,
}

fn run(services: &[Arc<ApiService>], slices: &[Arc<EndpointSlice>]) -> Translation {
    let mut translations = Translations::new(NODE);
    let (_, problems) = translations.update(services, slices);
    Translation {
        services: translations
            .all_wanted()
            .map(|s| (s.key.clone(), s.clone()))
            .collect(),
        problems,
    }
}

fn key(name: &str) -> ServiceKey {
    ServiceKey::new("default", name)
}

fn ip(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 244, 1, last)
}

#[test]
fn two_slices_merge_into_each_port_with_the_slices_target_ports() {
    let ports = json!([
        {"name": "http", "port": 8080, "protocol": "TCP"},
        {"name": "dns", "port": 5353, "protocol": "UDP"},
    ]);
    let slices = [
        slice(
            "web-a",
            "web",
            ports.clone(),
            json!([
                {"addresses": ["10.244.1.11"], "nodeName": "n1"},
                {"addresses": ["10.244.1.10"], "nodeName": "n2",
                 "conditions": {"ready": false, "serving": true, "terminating": true}},
            ]),
        ),
        // The second slice repeats .11 (listed once) and adds .12 with conditions absent.
        slice(
            "web-b",
            "web",
            ports,
            json!([
                {"addresses": ["10.244.1.11"], "nodeName": "n1"},
                {"addresses": ["10.244.1.12"]},
            ]),
        ),
    ];
    let out = run(&[service("web", web_spec())], &slices);
    assert!(out.problems.is_empty(), "{:?}", out.problems);
    let web = &out.services[&key("web")];
    assert_eq!(web.cluster_ips, [Ipv4Addr::new(10, 96, 0, 10)]);
    assert_eq!(web.ports.len(), 2);
    let (http, dns) = (&web.ports[0], &web.ports[1]);
    assert_eq!(
        (http.name.as_str(), http.protocol, http.port),
        ("http", Protocol::Tcp, 80)
    );
    assert_eq!((dns.protocol, dns.port), (Protocol::Udp, 53));
    let endpoints: Vec<(Ipv4Addr, u16)> = http.endpoints.iter().map(|e| (e.ip, e.port)).collect();
    assert_eq!(endpoints, [(ip(10), 8080), (ip(11), 8080), (ip(12), 8080)]);
    assert!(dns.endpoints.iter().all(|e| e.port == 5353));
    let [terminating, local, unplaced] = &http.endpoints[..] else {
        panic!("{:?}", http.endpoints)
    };
    assert_eq!(
        terminating.conditions,
        EndpointConditions {
            ready: false,
            serving: true,
            terminating: true
        }
    );
    assert!(!terminating.is_local);
    assert_eq!(terminating.node.as_deref(), Some("n2"));
    assert!(local.is_local);
    // Absent conditions: ready (and so serving), not terminating.
    assert_eq!(unplaced.conditions, EndpointConditions::READY);
    assert!(!unplaced.is_local);
}

/// Found by the `proxy_translate` fuzz target: an address in two slices, ready in both, with its
/// Node named in one only. The copy kept used to be the first slice's, so the endpoint was local
/// or not depending on the order the store listed the slices in.
#[test]
fn an_address_in_two_slices_translates_the_same_in_either_order() {
    let ports = json!([{"name": "http", "port": 8080, "protocol": "TCP"}]);
    let placed = slice(
        "web-a",
        "web",
        ports.clone(),
        json!([{"addresses": ["10.244.1.11"], "nodeName": NODE}]),
    );
    let unplaced = slice(
        "web-b",
        "web",
        ports,
        json!([{"addresses": ["10.244.1.11"]}]),
    );
    let services = [service("web", web_spec())];
    let forward = run(&services, &[placed.clone(), unplaced.clone()]);
    let reverse = run(&services, &[unplaced, placed]);
    assert_eq!(forward, reverse);
    let endpoint = &forward.services[&key("web")].ports[0].endpoints[0];
    assert_eq!(endpoint.node.as_deref(), Some(NODE));
    assert!(endpoint.is_local);
}

#[test]
fn a_service_port_without_its_port_in_a_slice_has_no_endpoints_from_it() {
    let slices = [slice(
        "web-a",
        "web",
        json!([{"name": "http", "port": 8080}]),
        json!([{"addresses": ["10.244.1.11"]}]),
    )];
    let out = run(&[service("web", web_spec())], &slices);
    let web = &out.services[&key("web")];
    assert_eq!(web.ports[0].endpoints.len(), 1);
    assert!(
        web.ports[1].endpoints.is_empty(),
        "UDP dns is not in the slice"
    );
}

#[test]
fn frontends_node_ports_affinity_and_traffic_policies() {
    let mut svc: ApiService = serde_json::from_value(json!({
        "metadata": {"namespace": "default", "name": "lb"},
        "spec": {
            "type": "LoadBalancer",
            "clusterIP": "10.96.0.20",
            "clusterIPs": ["10.96.0.20", "fd00::20"],
            "externalIPs": ["192.0.2.7"],
            "ports": [{"port": 36412, "protocol": "SCTP", "nodePort": 30001}],
            "sessionAffinity": "ClientIP",
            "externalTrafficPolicy": "Local",
            "internalTrafficPolicy": "Local",
        },
        "status": {"loadBalancer": {"ingress": [
            {"ip": "198.51.100.1"},
            {"ip": "198.51.100.2", "ipMode": "Proxy"},
            {"ip": "198.51.100.3", "ipMode": "VIP"},
            {"hostname": "lb.example"},
        ]}},
    }))
    .unwrap();
    let out = run(&[Arc::new(svc.clone())], &[]);
    let lb = &out.services[&key("lb")];
    assert_eq!(
        lb.cluster_ips,
        [Ipv4Addr::new(10, 96, 0, 20)],
        "IPv6 left out"
    );
    assert_eq!(lb.external_ips, [Ipv4Addr::new(192, 0, 2, 7)]);
    assert_eq!(
        lb.load_balancer_ips,
        [
            Ipv4Addr::new(198, 51, 100, 1),
            Ipv4Addr::new(198, 51, 100, 3)
        ]
    );
    assert_eq!(lb.ports[0].protocol, Protocol::Sctp);
    assert_eq!(lb.ports[0].node_port, Some(30001));
    assert_eq!(lb.ports[0].name, "");
    assert_eq!(
        lb.session_affinity,
        SessionAffinity::ClientIp {
            timeout_seconds: DEFAULT_AFFINITY_TIMEOUT
        }
    );
    assert_eq!(lb.external_traffic_policy, TrafficPolicy::Local);
    assert_eq!(lb.internal_traffic_policy, TrafficPolicy::Local);

    let spec = svc.spec.as_mut().unwrap();
    spec.session_affinity_config =
        serde_json::from_value(json!({"clientIP": {"timeoutSeconds": 60}})).unwrap();
    spec.external_traffic_policy = None;
    spec.internal_traffic_policy = Some("Cluster".into());
    let out = run(&[Arc::new(svc)], &[]);
    let lb = &out.services[&key("lb")];
    assert_eq!(
        lb.session_affinity,
        SessionAffinity::ClientIp {
            timeout_seconds: 60
        }
    );
    assert_eq!(lb.external_traffic_policy, TrafficPolicy::Cluster);
    assert_eq!(lb.internal_traffic_policy, TrafficPolicy::Cluster);
}

#[test]
fn headless_external_name_and_other_proxies_services_are_skipped_with_their_slices() {
    let headless = service(
        "headless",
        json!({"clusterIP": "None", "ports": [{"port": 80}]}),
    );
    let external = service(
        "external",
        json!({"type": "ExternalName", "externalName": "example.com"}),
    );
    let mut other: ApiService = (*service("other", web_spec())).clone();
    other.metadata.labels = Some(
        [(
            "service.kubernetes.io/service-proxy-name".to_owned(),
            "someone-else".to_owned(),
        )]
        .into(),
    );
    let slices = [slice(
        "headless-a",
        "headless",
        json!([{"port": 80}]),
        json!([{"addresses": ["10.244.1.11"]}]),
    )];
    let out = run(&[headless, external, Arc::new(other)], &slices);
    assert!(out.services.is_empty(), "{:?}", out.services);
    assert!(out.problems.is_empty(), "{:?}", out.problems);
}

#[test]
fn bad_objects_are_problems_naming_them_and_the_others_still_translate() {
    let services = [
        service("good", web_spec()),
        service("noports", json!({"clusterIP": "10.96.0.30"})),
        service(
            "badip",
            json!({"clusterIP": "10.96.0.300", "ports": [{"port": 80}]}),
        ),
        service(
            "zero",
            json!({"clusterIP": "10.96.0.31", "ports": [{"port": 0}]}),
        ),
        service(
            "icmp",
            json!({"clusterIP": "10.96.0.32", "ports": [{"port": 80, "protocol": "ICMP"}]}),
        ),
        service(
            "badtimeout",
            json!({"clusterIP": "10.96.0.33", "ports": [{"port": 80}],
                   "sessionAffinity": "ClientIP",
                   "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}}}),
        ),
        service(
            "badhealth",
            json!({"clusterIP": "10.96.0.35", "ports": [{"port": 80}],
                   "externalTrafficPolicy": "Local", "healthCheckNodePort": 70000}),
        ),
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"namespace": "default"},
                "spec": {"clusterIP": "10.96.0.34", "ports": [{"port": 80}]},
            }))
            .unwrap(),
        ),
    ];
    let slices = [
        slice(
            "good-a",
            "good",
            json!([{"name": "http", "port": 8080}]),
            json!([{"addresses": ["10.244.1.11"]}]),
        ),
        slice(
            "orphan-a",
            "missing",
            json!([{"port": 80}]),
            json!([{"addresses": ["10.244.1.12"]}]),
        ),
        slice(
            "badaddr-a",
            "good",
            json!([{"name": "http", "port": 8080}]),
            json!([{"addresses": ["not-an-ip"]}]),
        ),
        slice(
            "zeroport-a",
            "good",
            json!([{"name": "http", "port": 0}]),
            json!([{"addresses": ["10.244.1.13"]}]),
        ),
    ];
    let out = run(&services, &slices);
    assert_eq!(
        out.services.keys().cloned().collect::<Vec<_>>(),
        [key("good")]
    );
    assert_eq!(out.services[&key("good")].ports[0].endpoints.len(), 1);
    let messages: Vec<String> = out.problems.values().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "EndpointSlice default/badaddr-a: endpoint address \"not-an-ip\" is not IPv4",
            "EndpointSlice default/orphan-a: its Service default/missing does not exist",
            "EndpointSlice default/zeroport-a: port \"http\": bad port number 0",
            "Service default/: no name",
            "Service default/badhealth: bad healthCheckNodePort 70000",
            "Service default/badip: bad cluster IP \"10.96.0.300\"",
            "Service default/badtimeout: bad ClientIP affinity timeout 0 seconds",
            "Service default/icmp: port \"\": unknown protocol \"ICMP\"",
            "Service default/noports: no ports",
            "Service default/zero: port \"\": bad port number 0",
        ]
    );
}

#[test]
fn slices_of_other_address_types_or_without_a_service_are_left_alone() {
    let mut v6: EndpointSlice = (*slice(
        "web-v6",
        "web",
        json!([{"name": "http", "port": 8080}]),
        json!([{"addresses": ["fd00::1"]}]),
    ))
    .clone();
    v6.address_type = "IPv6".into();
    let mut unlabelled = (*slice("manual", "x", json!([]), json!([]))).clone();
    unlabelled.metadata.labels = None;
    let out = run(
        &[service("web", web_spec())],
        &[Arc::new(v6), Arc::new(unlabelled)],
    );
    assert!(out.problems.is_empty(), "{:?}", out.problems);
    assert!(out.services[&key("web")].ports[0].endpoints.is_empty());
}

#[test]
fn the_health_check_node_port_is_kept_only_under_the_local_external_policy() {
    let with = |policy: &str| {
        let mut spec = web_spec();
        spec["type"] = json!("LoadBalancer");
        spec["externalTrafficPolicy"] = json!(policy);
        spec["healthCheckNodePort"] = json!(32000);
        service("web", spec)
    };
    let local = run(&[with("Local")], &[]);
    assert_eq!(
        local.services[&key("web")].health_check_node_port,
        Some(32000)
    );
    let cluster = run(&[with("Cluster")], &[]);
    assert_eq!(cluster.services[&key("web")].health_check_node_port, None);
    assert_eq!(
        run(&[service("web", web_spec())], &[]).services[&key("web")].health_check_node_port,
        None
    );
}

#[test]
fn a_second_update_translates_again_only_the_services_whose_objects_changed() {
    let ports = json!([{"name": "http", "port": 8080}]);
    let eps = |last: u8| json!([{"addresses": [format!("10.244.1.{last}")]}]);
    let services = vec![
        service("a", web_spec()),
        service(
            "b",
            json!({"clusterIP": "10.96.0.11", "ports": [{"name": "http", "port": 80}]}),
        ),
        service(
            "bad",
            json!({"clusterIP": "10.96.0.300", "ports": [{"port": 80}]}),
        ),
    ];
    let slices = vec![
        slice("a-1", "a", ports.clone(), eps(10)),
        slice("b-1", "b", ports.clone(), eps(11)),
    ];
    let mut translations = Translations::new(NODE);
    let (changed, problems) = translations.update(&services, &slices);
    assert_eq!(changed, [key("a"), key("b"), key("bad")].into());
    assert_eq!(problems.len(), 1);

    // The same objects: nothing to look at again; the problem is still reported.
    let (changed, problems) = translations.update(&services, &slices);
    assert!(changed.is_empty(), "{changed:?}");
    assert_eq!(problems.len(), 1);

    // b's slice replaced (a new object), a's Service gone.
    let slices = vec![slices[0].clone(), slice("b-1", "b", ports, eps(12))];
    let services = vec![services[1].clone(), services[2].clone()];
    let (changed, _) = translations.update(&services, &slices);
    assert_eq!(changed, [key("a"), key("b")].into());
    assert!(translations.wanted(&key("a")).is_none());
    assert_eq!(
        translations.wanted(&key("b")).unwrap().ports[0].endpoints[0].ip,
        ip(12)
    );
}
