//! The Service renderer's flows and groups in `ovs-ofctl` text by table name, and what its
//! changes do to a desired-state cache: an endpoint change modifies one group and the DNAT flows
//! of the endpoints that came or went; a shared endpoint's DNAT flow lives while one Service
//! holds it; a frontend two Services claim is refused; bad Services are refused by name; the UDP
//! conntrack entries an update leaves stale, and their flushes.

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;

use openflow::msg::ct_flush::{CtFlush, CtTuple};
use openflow::msg::flow_mod::FlowMod;
use openflow::msg::group_mod::GroupDesc;

use super::*;
use crate::cache::DesiredCache;
use crate::cache::model_switch::ModelSwitch;
use crate::cookie::Round;
use crate::error::CacheError;
use crate::layout::packet_in::PacketInOperation;
use crate::layout::tables::named_text::named_text;
use model::{EndpointConditions, ServicePort, TrafficPolicy};

fn endpoint(last: u8, is_local: bool) -> Endpoint {
    Endpoint {
        ip: Ipv4Addr::new(10, 244, 1, last),
        port: 8080,
        conditions: EndpointConditions::READY,
        node: Some("n1".into()),
        is_local,
    }
}

fn web(endpoints: &[u8]) -> Service {
    Service {
        key: ServiceKey::new("default", "web"),
        cluster_ips: vec![Ipv4Addr::new(10, 96, 0, 10)],
        external_ips: Vec::new(),
        load_balancer_ips: Vec::new(),
        ports: vec![ServicePort {
            name: "http".into(),
            protocol: Protocol::Tcp,
            port: 80,
            node_port: None,
            endpoints: endpoints.iter().map(|n| endpoint(*n, true)).collect(),
        }],
        session_affinity: SessionAffinity::None,
        external_traffic_policy: TrafficPolicy::Cluster,
        internal_traffic_policy: TrafficPolicy::Cluster,
        health_check_node_port: None,
    }
}

/// Flow texts by table name, sorted.
fn flow_texts(flows: &[FlowMod]) -> Vec<String> {
    let g = TableGraph::standard();
    let mut texts: Vec<String> = flows
        .iter()
        .map(|f| {
            let mut unstamped = f.clone();
            unstamped.cookie = 0;
            named_text(g, &unstamped)
        })
        .collect();
    texts.sort();
    texts
}

/// A group's text with its `resubmit(,ID)`s naming the table.
fn group_text(group: &GroupDesc) -> String {
    let g = TableGraph::standard();
    let mut text = group.to_string();
    for (id, table) in g.tables() {
        text = text.replace(&format!("resubmit(,{id})"), &format!("resubmit(,{table})"));
    }
    text
}

fn objects_of(update: &ServiceUpdate) -> Objects {
    let mut cache = DesiredCache::new(Round::new(1).unwrap());
    cache.apply(update.change.clone()).unwrap();
    cache.objects_of(&service_owner(&ServiceKey::new("default", "web")))
}

#[test]
fn a_cluster_ip_with_three_endpoints() {
    let renderer = ServiceRenderer::new();
    let update = renderer.upsert(&web(&[12, 10, 11])).unwrap();
    let objects = objects_of(&update);
    assert_eq!(
        flow_texts(&objects.flows),
        [
            "table=EndpointDNAT,priority=200,tcp,reg3=0xaf4010a,reg4=0x21f90/0x7ffff actions=ct(commit,table=EgressRule,zone=65520,nat(dst=10.244.1.10:8080))",
            "table=EndpointDNAT,priority=200,tcp,reg3=0xaf4010b,reg4=0x21f90/0x7ffff actions=ct(commit,table=EgressRule,zone=65520,nat(dst=10.244.1.11:8080))",
            "table=EndpointDNAT,priority=200,tcp,reg3=0xaf4010c,reg4=0x21f90/0x7ffff actions=ct(commit,table=EgressRule,zone=65520,nat(dst=10.244.1.12:8080))",
            // The endpoints are local: each has its hairpin mark.
            "table=SNATMark,priority=200,ct_state=+new+trk,ip,nw_src=10.244.1.10,nw_dst=10.244.1.10 actions=ct(commit,table=SNAT,zone=65520,exec(set_field:0x40/0x40->ct_mark))",
            "table=SNATMark,priority=200,ct_state=+new+trk,ip,nw_src=10.244.1.11,nw_dst=10.244.1.11 actions=ct(commit,table=SNAT,zone=65520,exec(set_field:0x40/0x40->ct_mark))",
            "table=SNATMark,priority=200,ct_state=+new+trk,ip,nw_src=10.244.1.12,nw_dst=10.244.1.12 actions=ct(commit,table=SNAT,zone=65520,exec(set_field:0x40/0x40->ct_mark))",
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1",
        ]
    );
    assert_eq!(
        objects.groups.iter().map(group_text).collect::<Vec<_>>(),
        ["group_id=1,type=select,\
          bucket=bucket_id:0,weight:100,actions=set_field:0xaf4010a->reg3,set_field:0x1f90/0xffff->reg4,resubmit(,EndpointDNAT),\
          bucket=bucket_id:1,weight:100,actions=set_field:0xaf4010b->reg3,set_field:0x1f90/0xffff->reg4,resubmit(,EndpointDNAT),\
          bucket=bucket_id:2,weight:100,actions=set_field:0xaf4010c->reg3,set_field:0x1f90/0xffff->reg4,resubmit(,EndpointDNAT)"]
    );
}

#[test]
fn the_fixed_flows_of_the_service_tables() {
    let g = TableGraph::standard();
    assert_eq!(
        flow_texts(&tables::service_table_flows(g)),
        [
            "table=EndpointDNAT,priority=0 actions=goto_table:EgressRule",
            "table=PreRoutingClassifier,priority=200,ip actions=resubmit(,6),resubmit(,7)",
            "table=ServiceLB,priority=0 actions=goto_table:EndpointDNAT",
            "table=ServiceLB,priority=200,ip,reg4=0x20000/0x70000 actions=goto_table:EndpointDNAT",
            "table=SessionAffinity,priority=0 actions=set_field:0x10000/0x70000->reg4",
        ]
    );
    assert_eq!(
        (g.id(SESSION_AFFINITY_TABLE), g.id(SERVICE_LB_TABLE)),
        (6, 7)
    );
}

use crate::layout::tables::{
    SERVICE_LB as SERVICE_LB_TABLE, SESSION_AFFINITY as SESSION_AFFINITY_TABLE,
};

#[test]
fn client_ip_affinity_learns_the_chosen_endpoint() {
    let mut service = web(&[10]);
    service.session_affinity = SessionAffinity::ClientIp {
        timeout_seconds: 100_000,
    };
    let objects = objects_of(&ServiceRenderer::new().upsert(&service).unwrap());
    let flows = flow_texts(&objects.flows);
    // After the endpoint's DNAT flow and hairpin mark:
    assert_eq!(
        flows[2..],
        [
            "table=ServiceLB,priority=190,tcp,reg3=0xaf4010a,reg4=0x31f90/0x7ffff,nw_dst=10.96.0.10,tp_dst=80 actions=learn(table=SessionAffinity,idle_timeout=65535,priority=200,delete_learned,cookie=0x5004f1ecbf5,eth_type=0x800,nw_proto=6,NXM_OF_TCP_DST[],NXM_OF_IP_DST[],NXM_OF_IP_SRC[],load:NXM_NX_REG3[]->NXM_NX_REG3[],load:NXM_NX_REG4[0..15]->NXM_NX_REG4[0..15],load:0x2->NXM_NX_REG4[16..18]),set_field:0x20000/0x70000->reg4,goto_table:EndpointDNAT",
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=set_field:0x30000/0x70000->reg4,group:1",
        ]
    );
    let group = group_text(&objects.groups[0]);
    assert!(group.ends_with("resubmit(,ServiceLB)"), "{group}");
    // Hashed while translating, so the cached datapath flow matches the source port.
    assert!(
        group.contains("selection_method=hash,fields(ip_src,ip_dst,tcp_src,tcp_dst)"),
        "{group}"
    );
    // Without affinity the datapath hashes (Open vSwitch's default, `dp_hash`).
    let plain = objects_of(&ServiceRenderer::new().upsert(&web(&[10])).unwrap());
    assert!(!group_text(&plain.groups[0]).contains("selection_method"));
}

#[test]
fn each_endpoint_has_its_learning_flow_so_a_removed_endpoint_takes_what_it_learned() {
    let affine = |endpoints: &[u8]| {
        let mut service = web(endpoints);
        service.session_affinity = SessionAffinity::ClientIp {
            timeout_seconds: 60,
        };
        service
    };
    let learning = |service: &Service| -> Vec<String> {
        service_lb_flows(&objects_of(
            &ServiceRenderer::new().upsert(service).unwrap(),
        ))
        .into_iter()
        .filter(|f| f.contains("learn("))
        .map(|f| f.split(' ').next().unwrap().to_owned())
        .collect()
    };
    let both = learning(&affine(&[10, 11]));
    assert_eq!(
        both,
        [
            "table=ServiceLB,priority=190,tcp,reg3=0xaf4010a,reg4=0x31f90/0x7ffff,nw_dst=10.96.0.10,tp_dst=80",
            "table=ServiceLB,priority=190,tcp,reg3=0xaf4010b,reg4=0x31f90/0x7ffff,nw_dst=10.96.0.10,tp_dst=80",
        ]
    );
    // .10 leaves: its learning flow goes (and with it, by `delete_learned`, every client it
    // learned, since its learned flows carry a cookie of their own), .11's stays as it was.
    assert_eq!(learning(&affine(&[11])), both[1..]);
    let cookies: BTreeSet<String> = service_lb_flows(&objects_of(
        &ServiceRenderer::new().upsert(&affine(&[10, 11])).unwrap(),
    ))
    .iter()
    .filter_map(|f| f.split("delete_learned,cookie=").nth(1))
    .map(|rest| rest.split(',').next().unwrap().to_owned())
    .collect();
    assert_eq!(cookies.len(), 2, "{cookies:?}");
    assert!(
        cookies.iter().all(|c| c.starts_with("0x500")),
        "no round, the Services' category: {cookies:?}"
    );
}

#[test]
fn no_usable_endpoint_goes_to_the_agent_to_be_refused_and_installs_no_group() {
    let mut service = web(&[10]);
    service.ports[0].endpoints[0].conditions = EndpointConditions {
        ready: false,
        serving: false,
        terminating: true,
    };
    let objects = objects_of(&ServiceRenderer::new().upsert(&service).unwrap());
    assert_eq!(
        flow_texts(&objects.flows),
        [
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=controller(max_len=128,userdata=01)"
        ]
    );
    assert!(objects.groups.is_empty());

    // Where the switch has packet-rate meters the packets pass the refusals' meter first, and
    // the cache refuses the flow unless the meter is there.
    let mut renderer = ServiceRenderer::new();
    renderer.set_packet_in_meters(true);
    let update = renderer.upsert(&service).unwrap();
    assert_eq!(
        flow_texts(&update.objects().flows),
        [
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=meter:1,controller(max_len=128,userdata=01)"
        ]
    );
    let mut cache = DesiredCache::new(Round::new(1).unwrap());
    let missing = cache.apply(update.change.clone()).unwrap_err();
    assert!(missing.to_string().contains("meter 1"), "{missing}");
    let meters = Objects {
        meters: PacketInOperation::meters(),
        ..Objects::default()
    };
    cache
        .apply(Change::new().replace(Owner::from(crate::owners::NODE), meters))
        .unwrap();
    cache.apply(update.change).unwrap();
}

#[test]
fn an_endpoint_change_modifies_the_group_and_the_changed_dnat_flows_only() {
    let mut renderer = ServiceRenderer::new();
    let mut cache = DesiredCache::new(Round::new(1).unwrap());
    let update = renderer.upsert(&web(&[10, 11, 12])).unwrap();
    cache.apply(update.change).unwrap();
    renderer.commit(update.record);
    let update = renderer.upsert(&web(&[10, 12, 13])).unwrap();
    let diff = cache.apply(update.change).unwrap();
    renderer.commit(update.record);
    assert_eq!(
        (
            diff.groups.adds.len(),
            diff.groups.modifies.len(),
            diff.groups.deletes.len()
        ),
        (0, 1, 0)
    );
    assert_eq!(
        (
            diff.flows.adds.len(),
            diff.flows.modifies.len(),
            diff.flows.deletes.len()
        ),
        (2, 0, 2),
        "the DNAT flow and hairpin mark of the local endpoint that came, and of the one that went"
    );
    let texts = |flows: &[FlowMod]| flow_texts(flows).join("\n");
    assert!(texts(&diff.flows.adds).contains("nat(dst=10.244.1.13:8080)"));
    assert!(texts(&diff.flows.adds).contains("nw_src=10.244.1.13,nw_dst=10.244.1.13"));
    assert!(texts(&diff.flows.deletes).contains("nw_src=10.244.1.11,nw_dst=10.244.1.11"));
    // Removing the Service removes its flows, then its group.
    let update = renderer.remove(&ServiceKey::new("default", "web"));
    let diff = cache.apply(update.change).unwrap();
    renderer.commit(update.record);
    assert_eq!(
        (diff.flows.deletes.len(), diff.groups.deletes.len()),
        (7, 1)
    );
    assert_eq!(cache.owners().count(), 0);
}

#[test]
fn only_local_endpoints_have_a_hairpin_mark_held_by_each_service_using_them() {
    let mut renderer = ServiceRenderer::new();
    let mut cache = DesiredCache::new(Round::new(1).unwrap());
    let mut web = web(&[10, 20]);
    web.ports[0].endpoints[1].is_local = false;
    let mut db = web.clone();
    db.key = ServiceKey::new("default", "db");
    db.cluster_ips = vec![Ipv4Addr::new(10, 96, 0, 20)];
    for service in [&web, &db] {
        let update = renderer.upsert(service).unwrap();
        cache.apply(update.change).unwrap();
        renderer.commit(update.record);
    }
    let marks = |cache: &DesiredCache, key: &ServiceKey| -> Vec<String> {
        flow_texts(&cache.objects_of(&service_owner(key)).flows)
            .into_iter()
            .filter(|f| f.starts_with("table=SNATMark"))
            .collect()
    };
    let local_mark = [
        "table=SNATMark,priority=200,ct_state=+new+trk,ip,nw_src=10.244.1.10,nw_dst=10.244.1.10 actions=ct(commit,table=SNAT,zone=65520,exec(set_field:0x40/0x40->ct_mark))",
    ];
    assert_eq!(marks(&cache, &web.key), local_mark);
    assert_eq!(marks(&cache, &db.key), local_mark);
    // Removing one Service leaves the mark to the other.
    let update = renderer.remove(&web.key);
    let diff = cache.apply(update.change).unwrap();
    renderer.commit(update.record);
    assert!(
        !flow_texts(&diff.flows.deletes)
            .iter()
            .any(|f| f.starts_with("table=SNATMark")),
        "the mark db still holds was deleted"
    );
    assert_eq!(marks(&cache, &db.key), local_mark);
}

#[test]
fn group_ids_stay_with_their_port_and_are_reused() {
    let mut renderer = ServiceRenderer::new();
    let mut db = web(&[20]);
    db.key = ServiceKey::new("default", "db");
    db.cluster_ips = vec![Ipv4Addr::new(10, 96, 0, 20)];
    for service in [web(&[10]), db.clone()] {
        let update = renderer.upsert(&service).unwrap();
        renderer.commit(update.record);
    }
    let again = renderer.upsert(&db).unwrap();
    assert_eq!(objects_group_ids(&again), [2]);
    let gone = renderer.remove(&ServiceKey::new("default", "web"));
    renderer.commit(gone.record);
    let mut dns = web(&[30]);
    dns.key = ServiceKey::new("kube-system", "dns");
    assert_eq!(objects_group_ids(&renderer.upsert(&dns).unwrap()), [1]);
}

fn objects_group_ids(update: &ServiceUpdate) -> Vec<u32> {
    let mut cache = DesiredCache::new(Round::new(1).unwrap());
    cache.apply(update.change.clone()).unwrap();
    let owner = update.change.owners().next().unwrap().clone();
    cache
        .objects_of(&owner)
        .groups
        .iter()
        .map(|g| g.group_id)
        .collect()
}

#[test]
fn a_shared_endpoint_s_dnat_flow_lives_while_a_service_holds_it() {
    let mut renderer = ServiceRenderer::new();
    let mut cache = DesiredCache::new(Round::new(1).unwrap());
    let mut alias = web(&[10]);
    alias.key = ServiceKey::new("default", "alias");
    alias.cluster_ips = vec![Ipv4Addr::new(10, 96, 0, 11)];
    for service in [web(&[10]), alias.clone()] {
        let update = renderer.upsert(&service).unwrap();
        cache.apply(update.change).unwrap();
        renderer.commit(update.record);
    }
    let dnat = |cache: &DesiredCache| {
        cache
            .all_flows()
            .iter()
            .filter(|f| f.to_string().contains("nat(dst="))
            .count()
    };
    assert_eq!(dnat(&cache), 1);
    let update = renderer.remove(&alias.key);
    let diff = cache.apply(update.change).unwrap();
    assert_eq!(diff.flows.deletes.len(), 1, "only the alias' frontend goes");
    assert_eq!(dnat(&cache), 1);
}

#[test]
fn a_frontend_two_services_claim_is_refused() {
    let mut renderer = ServiceRenderer::new();
    let mut cache = DesiredCache::new(Round::new(1).unwrap());
    let update = renderer.upsert(&web(&[10])).unwrap();
    cache.apply(update.change).unwrap();
    renderer.commit(update.record);
    let mut thief = web(&[11]);
    thief.key = ServiceKey::new("default", "thief");
    let err = cache
        .apply(renderer.upsert(&thief).unwrap().change)
        .unwrap_err();
    assert!(
        matches!(&err, CacheError::Conflict { owner, holder, .. }
            if owner == "service:default/thief" && holder == "service:default/web"),
        "{err}"
    );
}

#[test]
fn bad_services_are_refused_by_name() {
    let renderer = ServiceRenderer::new();
    let mut zero = web(&[10]);
    zero.ports[0].port = 0;
    let mut twice = web(&[10]);
    twice.ports.push(twice.ports[0].clone());
    let mut target = web(&[10]);
    target.ports[0].endpoints[0].port = 0;
    let mut frontend = web(&[10]);
    frontend.cluster_ips.push(frontend.cluster_ips[0]);
    let mut affinity = web(&[10]);
    affinity.session_affinity = SessionAffinity::ClientIp { timeout_seconds: 0 };
    let errors: Vec<String> = [zero, twice, target, frontend, affinity]
        .iter()
        .map(|s| renderer.upsert(s).unwrap_err().to_string())
        .collect();
    assert_eq!(
        errors,
        [
            "Service default/web: port \"http\" has port number 0",
            "Service default/web lists TCP/80 twice",
            "Service default/web: port \"http\" has an endpoint 10.244.1.10 with target port 0",
            "Service default/web lists frontend IP 10.96.0.10 twice",
            "Service default/web: ClientIP affinity with a timeout of 0 seconds",
        ]
    );
}

#[test]
fn an_endpoint_two_slices_list_and_two_ports_share_renders_once() {
    let mut service = web(&[10, 10]);
    let mut second = service.ports[0].clone();
    second.name = "alt".into();
    second.port = 8080;
    service.ports.push(second);
    let objects = objects_of(&ServiceRenderer::new().upsert(&service).unwrap());
    assert_eq!(objects.groups.len(), 2);
    assert!(objects.groups.iter().all(|g| g.buckets.len() == 1));
    assert_eq!(
        objects
            .flows
            .iter()
            .filter(|f| f.to_string().contains("nat(dst="))
            .count(),
        1
    );
}

#[test]
fn external_and_load_balancer_ips_are_frontends_into_the_same_group_each_once() {
    let mut service = web(&[10]);
    let external = Ipv4Addr::new(192, 0, 2, 10);
    let load_balancer = Ipv4Addr::new(192, 0, 2, 20);
    service.external_ips = vec![external, load_balancer];
    service.load_balancer_ips = vec![load_balancer, Ipv4Addr::new(10, 96, 0, 10)];
    let objects = objects_of(&ServiceRenderer::new().upsert(&service).unwrap());
    let frontends: Vec<String> = flow_texts(&objects.flows)
        .into_iter()
        .filter(|f| f.starts_with("table=ServiceLB"))
        .collect();
    assert_eq!(
        frontends,
        [
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1",
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=192.0.2.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1",
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=192.0.2.20,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1",
            // From outside (through the gateway): the same endpoints, source NATed.
            "table=ServiceLB,priority=210,tcp,reg0=0x2/0xf,reg4=0x10000/0x70000,nw_dst=192.0.2.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,set_field:0x80000/0x80000->reg4,group:1",
            "table=ServiceLB,priority=210,tcp,reg0=0x2/0xf,reg4=0x10000/0x70000,nw_dst=192.0.2.20,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,set_field:0x80000/0x80000->reg4,group:1",
        ]
    );
    assert_eq!(objects.groups.len(), 1);
    // The uplink hands both to the host (which routes them to the gateway); the cluster IP
    // listed as a load-balancer IP stays internal.
    let to_host: Vec<String> = flow_texts(&objects.flows)
        .into_iter()
        .filter(|f| f.starts_with("table=Classifier"))
        .collect();
    assert_eq!(
        to_host,
        [
            "table=Classifier,priority=200,ip,in_port=32770,nw_dst=192.0.2.10 actions=LOCAL",
            "table=Classifier,priority=200,ip,in_port=32770,nw_dst=192.0.2.20 actions=LOCAL",
        ]
    );
}

/// `web` with NodePort 30080 over endpoints `.10` (local) and `.11` (on another Node), under
/// `policy` for traffic from outside.
fn web_node_port(policy: TrafficPolicy) -> Service {
    let mut service = web(&[]);
    service.ports[0].node_port = Some(30080);
    service.ports[0].endpoints = vec![endpoint(10, true), endpoint(11, false)];
    service.external_traffic_policy = policy;
    service
}

fn service_lb_flows(objects: &Objects) -> Vec<String> {
    flow_texts(&objects.flows)
        .into_iter()
        .filter(|f| f.starts_with("table=ServiceLB"))
        .collect()
}

#[test]
fn a_node_port_under_cluster_policy_is_a_frontend_at_169_254_0_252_into_the_same_group_source_nated()
 {
    let objects = objects_of(
        &ServiceRenderer::new()
            .upsert(&web_node_port(TrafficPolicy::Cluster))
            .unwrap(),
    );
    assert_eq!(
        service_lb_flows(&objects),
        [
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1",
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=169.254.0.252,tp_dst=30080 actions=set_field:0x20000/0x70000->reg4,set_field:0x80000/0x80000->reg4,group:1",
        ]
    );
    assert_eq!(objects.groups.len(), 1);
    assert_eq!(objects.groups[0].buckets.len(), 2);
}

#[test]
fn a_node_port_under_local_policy_has_a_group_of_the_local_endpoints_and_keeps_the_client() {
    let objects = objects_of(
        &ServiceRenderer::new()
            .upsert(&web_node_port(TrafficPolicy::Local))
            .unwrap(),
    );
    assert_eq!(
        service_lb_flows(&objects),
        [
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1",
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=169.254.0.252,tp_dst=30080 actions=set_field:0x20000/0x70000->reg4,group:2",
        ]
    );
    let buckets: Vec<(u32, usize)> = objects
        .groups
        .iter()
        .map(|g| (g.group_id, g.buckets.len()))
        .collect();
    assert_eq!(buckets, [(1, 2), (2, 1)]);
    assert!(group_text(&objects.groups[1]).contains("set_field:0xaf4010a->reg3"));

    // No local endpoint left: traffic from outside is dropped (not refused: the Service has
    // endpoints), the second group goes, Pods still reach the remote endpoint.
    let mut remote_only = web_node_port(TrafficPolicy::Local);
    remote_only.ports[0].endpoints.remove(0);
    let objects = objects_of(&ServiceRenderer::new().upsert(&remote_only).unwrap());
    assert_eq!(
        service_lb_flows(&objects),
        [
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1",
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=169.254.0.252,tp_dst=30080 actions=drop",
        ]
    );
    assert_eq!(objects.groups.len(), 1);
}

/// The local sources in these tests: the Node IP and the Pod CIDR.
fn local_sources() -> [Ipv4Net; 2] {
    [
        "10.10.0.11/32".parse().unwrap(),
        "10.244.1.0/24".parse().unwrap(),
    ]
}

#[test]
fn under_local_policy_the_node_s_own_traffic_to_a_node_port_is_short_circuited_to_every_endpoint_source_nated()
 {
    let mut renderer = ServiceRenderer::new();
    renderer.set_local_sources(&local_sources());
    let mut remote_only = web_node_port(TrafficPolicy::Local);
    remote_only.ports[0].endpoints.remove(0);
    for (service, outside) in [
        (
            web_node_port(TrafficPolicy::Local),
            "set_field:0x20000/0x70000->reg4,group:2",
        ),
        (remote_only, "drop"),
    ] {
        let objects = objects_of(&renderer.upsert(&service).unwrap());
        assert_eq!(
            service_lb_flows(&objects),
            [
                "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1".to_owned(),
                format!("table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=169.254.0.252,tp_dst=30080 actions={outside}"),
                "table=ServiceLB,priority=220,tcp,reg4=0x10000/0x70000,nw_src=10.10.0.11,nw_dst=169.254.0.252,tp_dst=30080 actions=set_field:0x20000/0x70000->reg4,set_field:0x80000/0x80000->reg4,group:1".to_owned(),
                "table=ServiceLB,priority=220,tcp,reg4=0x10000/0x70000,nw_src=10.244.1.0/24,nw_dst=169.254.0.252,tp_dst=30080 actions=set_field:0x20000/0x70000->reg4,set_field:0x80000/0x80000->reg4,group:1".to_owned(),
            ],
            "{service:?}"
        );
    }
    // Under `Cluster` the Node's traffic is everyone's: no flow of its own.
    let objects = objects_of(
        &renderer
            .upsert(&web_node_port(TrafficPolicy::Cluster))
            .unwrap(),
    );
    assert!(
        !service_lb_flows(&objects)
            .iter()
            .any(|f| f.contains("nw_src=")),
        "{objects:?}"
    );
}

/// kube-proxy's cluster chain: `internalTrafficPolicy: Local` holds the cluster IP to the local
/// endpoints (dropped without one), while Pod traffic to a load-balancer IP and local traffic
/// short-circuited under `externalTrafficPolicy: Local` take every endpoint, in a group of
/// their own when neither traffic policy chooses them all.
#[test]
fn under_internal_policy_local_pods_reach_load_balancer_ips_and_short_circuits_every_endpoint() {
    let mut renderer = ServiceRenderer::new();
    renderer.set_local_sources(&local_sources()[..1]);
    let mut service = web_node_port(TrafficPolicy::Local);
    service.internal_traffic_policy = TrafficPolicy::Local;
    service.load_balancer_ips = vec![Ipv4Addr::new(192, 0, 2, 10)];
    let objects = objects_of(&renderer.upsert(&service).unwrap());
    assert_eq!(
        service_lb_flows(&objects),
        [
            // The cluster IP: the local endpoint (group 1).
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1",
            // From outside: the local endpoint, the client's address kept.
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=169.254.0.252,tp_dst=30080 actions=set_field:0x20000/0x70000->reg4,group:1",
            // Pods to the load-balancer IP: every endpoint (group 2).
            "table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=192.0.2.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:2",
            "table=ServiceLB,priority=210,tcp,reg0=0x2/0xf,reg4=0x10000/0x70000,nw_dst=192.0.2.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:1",
            // The Node's own: every endpoint, source-NATed.
            "table=ServiceLB,priority=220,tcp,reg0=0x2/0xf,reg4=0x10000/0x70000,nw_src=10.10.0.11,nw_dst=192.0.2.10,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,set_field:0x80000/0x80000->reg4,group:2",
            "table=ServiceLB,priority=220,tcp,reg4=0x10000/0x70000,nw_src=10.10.0.11,nw_dst=169.254.0.252,tp_dst=30080 actions=set_field:0x20000/0x70000->reg4,set_field:0x80000/0x80000->reg4,group:2",
        ]
    );
    let buckets: Vec<usize> = objects.groups.iter().map(|g| g.buckets.len()).collect();
    assert_eq!(
        buckets,
        [1, 2],
        "the local endpoint's group, and everyone's"
    );
    let dnat = flow_texts(&objects.flows)
        .into_iter()
        .filter(|f| f.starts_with("table=EndpointDNAT"))
        .count();
    assert_eq!(dnat, 2, "both endpoints are DNAT targets");

    // No local endpoint: the cluster IP drops, as kube-proxy does (a Service with endpoints
    // elsewhere is not refused), and the rest still reaches the remote one.
    service.ports[0].endpoints.remove(0);
    let objects = objects_of(&renderer.upsert(&service).unwrap());
    let flows = service_lb_flows(&objects);
    assert!(
        flows.contains(&"table=ServiceLB,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=80 actions=drop".to_owned()),
        "{flows:#?}"
    );
    assert!(
        flows.iter().any(
            |f| f.contains("nw_src=10.10.0.11,nw_dst=169.254.0.252") && f.ends_with(",group:2")
        ),
        "{flows:#?}"
    );

    // Under `internalTrafficPolicy: Cluster` the port's own group holds every endpoint: no third.
    service.internal_traffic_policy = TrafficPolicy::Cluster;
    service.ports[0].endpoints = vec![endpoint(10, true), endpoint(11, false)];
    let objects = objects_of(&renderer.upsert(&service).unwrap());
    assert_eq!(objects.groups.len(), 2, "{:?}", objects.groups);
}

#[test]
fn under_local_policy_the_node_s_own_affinity_learns_the_source_nat_at_its_own_priority() {
    let mut renderer = ServiceRenderer::new();
    renderer.set_local_sources(&local_sources()[..1]);
    let mut service = web_node_port(TrafficPolicy::Local);
    service.session_affinity = SessionAffinity::ClientIp {
        timeout_seconds: 60,
    };
    let flows = service_lb_flows(&objects_of(&renderer.upsert(&service).unwrap()));
    let node_own: Vec<&String> = flows
        .iter()
        .filter(|f| f.contains("nw_src=10.10.0.11"))
        .collect();
    // The frontend, and one learning flow per endpoint.
    assert_eq!(node_own.len(), 3, "{flows:#?}");
    assert!(
        node_own
            .iter()
            .all(|f| f.starts_with("table=ServiceLB,priority=220,"))
    );
    for learning in node_own.iter().filter(|f| f.contains("learn(")) {
        assert!(
            learning.contains("load:0x1->NXM_NX_REG4[19]"),
            "the Node's later connections are NATed too: {learning}"
        );
    }
}

#[test]
fn an_external_traffic_policy_change_never_leaves_a_flow_using_a_missing_group() {
    // The modelled switch refuses a flow that uses a missing group and drops the flows of a
    // deleted group, as Open vSwitch does (antrea#3301: OFPBAC_BAD_OUT_GROUP on an ETP change).
    let mut renderer = ServiceRenderer::new();
    let mut cache = DesiredCache::new(Round::new(1).unwrap());
    let mut switch = ModelSwitch::default();
    for policy in [
        TrafficPolicy::Cluster,
        TrafficPolicy::Local,
        TrafficPolicy::Cluster,
        TrafficPolicy::Local,
    ] {
        let update = renderer.upsert(&web_node_port(policy)).unwrap();
        let diff = cache.apply(update.change).unwrap();
        switch.send(&diff.steps()).unwrap();
        renderer.commit(update.record);
        assert!(switch.collateral.is_empty(), "{:?}", switch.collateral);
        let groups: Vec<u32> = switch.groups.keys().copied().collect();
        let expected: &[u32] = match policy {
            TrafficPolicy::Cluster => &[1],
            TrafficPolicy::Local => &[1, 2],
        };
        assert_eq!(groups, expected, "{policy:?}");
        assert_eq!(
            switch.flows.len(),
            cache.objects_of(&service_owner(&web(&[]).key)).flows.len()
        );
    }
}

#[test]
fn client_ip_affinity_from_outside_learns_the_source_nat_too() {
    let mut service = web_node_port(TrafficPolicy::Cluster);
    service.session_affinity = SessionAffinity::ClientIp {
        timeout_seconds: 60,
    };
    let objects = objects_of(&ServiceRenderer::new().upsert(&service).unwrap());
    let learns: Vec<String> = service_lb_flows(&objects)
        .into_iter()
        .filter(|f| f.contains("learn("))
        .collect();
    // One per frontend and endpoint.
    assert_eq!(learns.len(), 4, "{learns:?}");
    for learn in &learns {
        assert_eq!(
            learn.contains("load:0x1->NXM_NX_REG4[19]"),
            learn.contains("nw_dst=169.254.0.252"),
            "only the NodePort's learns the source NAT: {learn}"
        );
    }
}

/// `kube-system/dns`: cluster IP 10.96.0.53 and external IP 192.0.2.53, UDP 53 and TCP 53 to
/// port 5353 of `endpoints`.
fn dns(endpoints: &[u8]) -> Service {
    let eps: Vec<Endpoint> = endpoints
        .iter()
        .map(|n| Endpoint {
            port: 5353,
            ..endpoint(*n, true)
        })
        .collect();
    let port = |protocol| ServicePort {
        name: format!("dns-{protocol}"),
        protocol,
        port: 53,
        node_port: None,
        endpoints: eps.clone(),
    };
    Service {
        key: ServiceKey::new("kube-system", "dns"),
        cluster_ips: vec![Ipv4Addr::new(10, 96, 0, 53)],
        external_ips: vec![Ipv4Addr::new(192, 0, 2, 53)],
        ports: vec![port(Protocol::Udp), port(Protocol::Tcp)],
        ..web(&[])
    }
}

fn stale_texts(update: &ServiceUpdate) -> Vec<String> {
    update.stale_udp.iter().map(ToString::to_string).collect()
}

/// `dns`'s UDP port alone, with NodePort 30053 under `externalTrafficPolicy: Local`, to port
/// 5353 of the endpoints `lasts` (last octet, whether local).
fn dns_local(lasts: &[(u8, bool)]) -> Service {
    let mut service = dns(&[]);
    service.ports.retain(|p| p.protocol == Protocol::Udp);
    service.ports[0].node_port = Some(30053);
    service.ports[0].endpoints = lasts
        .iter()
        .map(|(last, local)| Endpoint {
            port: 5353,
            ..endpoint(*last, *local)
        })
        .collect();
    service.external_traffic_policy = TrafficPolicy::Local;
    service
}

#[test]
fn a_udp_node_port_s_removed_local_endpoint_is_flushed_at_169_254_0_252() {
    // Under `Local` the NodePort frontend sends to the local endpoints only: .12 on another
    // Node never was its backend, so only the cluster and external IPs' entries to it go.
    let mut renderer = ServiceRenderer::new();
    let first = renderer
        .upsert(&dns_local(&[(10, true), (11, true), (12, false)]))
        .unwrap();
    renderer.commit(first.record);
    let update = renderer
        .upsert(&dns_local(&[(11, true), (12, false)]))
        .unwrap();
    assert_eq!(
        stale_texts(&update),
        [
            "10.244.1.10:5353 (via 10.96.0.53:53)",
            "10.244.1.10:5353 (via 169.254.0.252:30053)",
            "10.244.1.10:5353 (via 192.0.2.53:53)"
        ]
    );
    renderer.commit(update.record);
    let update = renderer.upsert(&dns_local(&[(11, true)])).unwrap();
    assert_eq!(
        stale_texts(&update),
        [
            "10.244.1.12:5353 (via 10.96.0.53:53)",
            "10.244.1.12:5353 (via 192.0.2.53:53)"
        ]
    );
}

#[test]
fn under_internal_policy_local_a_removed_remote_endpoint_is_flushed_at_the_external_ip_only() {
    // Pods send to .12 on another Node through the external IP (every endpoint), never through
    // the cluster IP (`internalTrafficPolicy: Local`).
    let mut renderer = ServiceRenderer::new();
    let mut service = dns_local(&[(11, true), (12, false)]);
    service.internal_traffic_policy = TrafficPolicy::Local;
    let first = renderer.upsert(&service).unwrap();
    renderer.commit(first.record);
    service.ports[0].endpoints.pop();
    let update = renderer.upsert(&service).unwrap();
    assert_eq!(
        stale_texts(&update),
        ["10.244.1.12:5353 (via 192.0.2.53:53)"]
    );
}

#[test]
fn with_the_node_s_traffic_short_circuited_a_removed_remote_endpoint_is_flushed_at_169_254_0_252_too()
 {
    // The Node's own datagrams to the NodePort under `Local` reach .12 on another Node too.
    let mut renderer = ServiceRenderer::new();
    renderer.set_local_sources(&local_sources());
    let first = renderer
        .upsert(&dns_local(&[(11, true), (12, false)]))
        .unwrap();
    renderer.commit(first.record);
    let update = renderer.upsert(&dns_local(&[(11, true)])).unwrap();
    assert_eq!(
        stale_texts(&update),
        [
            "10.244.1.12:5353 (via 10.96.0.53:53)",
            "10.244.1.12:5353 (via 169.254.0.252:30053)",
            "10.244.1.12:5353 (via 192.0.2.53:53)"
        ]
    );
}

#[test]
fn only_an_installed_udp_frontend_counts_as_installing_udp() {
    let mut renderer = ServiceRenderer::new();
    let tcp = renderer.upsert(&web(&[10])).unwrap();
    renderer.commit(tcp.record);
    assert!(!renderer.installs_udp(), "a TCP Service");
    let udp = renderer.upsert(&dns(&[11])).unwrap();
    assert!(!renderer.installs_udp(), "not committed yet");
    renderer.commit(udp.record);
    assert!(renderer.installs_udp());
    let gone = renderer.remove(&dns(&[11]).key);
    renderer.commit(gone.record);
    assert!(!renderer.installs_udp(), "the UDP Service removed");
}

#[test]
fn conntrack_entries_to_an_endpoint_a_frontend_no_longer_has_are_stale() {
    let mut renderer = ServiceRenderer::new();
    let installed = renderer.upsert(&dns(&[11])).unwrap();
    renderer.commit(installed.record);
    let to = |frontend: &str, endpoint: &str| -> (SocketAddrV4, SocketAddrV4) {
        (frontend.parse().unwrap(), endpoint.parse().unwrap())
    };
    let entries = [
        to("10.96.0.53:53", "10.244.1.10:5353"),
        to("10.96.0.53:53", "10.244.1.10:5353"),
        to("10.96.0.53:53", "10.244.1.11:5353"),
        to("192.0.2.53:53", "10.244.1.12:5353"),
        to("10.96.0.99:53", "10.244.1.10:5353"),
    ];
    let stale: Vec<(String, Vec<String>)> = renderer
        .stale_udp_among(&entries)
        .into_iter()
        .map(|(key, stale)| {
            (
                key.to_string(),
                stale.iter().map(ToString::to_string).collect(),
            )
        })
        .collect();
    assert_eq!(
        stale,
        [(
            "kube-system/dns".to_owned(),
            vec![
                "10.244.1.10:5353 (via 10.96.0.53:53)".to_owned(),
                "10.244.1.12:5353 (via 192.0.2.53:53)".to_owned()
            ]
        )]
    );
}

#[test]
fn a_removed_udp_endpoint_leaves_its_frontends_connections_stale() {
    let mut renderer = ServiceRenderer::new();
    let first = renderer.upsert(&dns(&[10, 11])).unwrap();
    assert!(first.stale_udp.is_empty(), "nothing was installed before");
    // Not committed (the install failed): nothing is stale yet.
    assert!(renderer.upsert(&dns(&[11])).unwrap().stale_udp.is_empty());
    renderer.commit(first.record);

    // Endpoint .10 goes: its UDP connections through each frontend, and nothing of TCP.
    let update = renderer.upsert(&dns(&[11, 12])).unwrap();
    assert_eq!(
        stale_texts(&update),
        [
            "10.244.1.10:5353 (via 10.96.0.53:53)",
            "10.244.1.10:5353 (via 192.0.2.53:53)"
        ]
    );
    let flush = update.stale_udp[0].ct_flush();
    assert_eq!(
        flush,
        CtFlush {
            ip_proto: 17,
            orig: CtTuple {
                dst: Some(Ipv4Addr::new(10, 96, 0, 53).into()),
                dst_port: Some(53),
                ..CtTuple::default()
            },
            reply: CtTuple {
                src: Some(Ipv4Addr::new(10, 244, 1, 10).into()),
                src_port: Some(5353),
                ..CtTuple::default()
            },
            zone: Some(65520),
        }
    );
    renderer.commit(update.record);

    // The same endpoints again, or only a TCP change: nothing stale.
    assert!(
        renderer
            .upsert(&dns(&[11, 12]))
            .unwrap()
            .stale_udp
            .is_empty()
    );
    let mut tcp_only = dns(&[11, 12]);
    tcp_only.ports[1].endpoints.clear();
    assert!(renderer.upsert(&tcp_only).unwrap().stale_udp.is_empty());

    // A target port change makes the old address stale; an endpoint no longer ready too.
    let mut moved = dns(&[11, 12]);
    moved.ports[0].endpoints[0].port = 5354;
    moved.ports[0].endpoints[1].conditions = EndpointConditions {
        ready: false,
        serving: false,
        terminating: true,
    };
    assert_eq!(
        stale_texts(&renderer.upsert(&moved).unwrap()),
        [
            "10.244.1.11:5353 (via 10.96.0.53:53)",
            "10.244.1.12:5353 (via 10.96.0.53:53)",
            "10.244.1.11:5353 (via 192.0.2.53:53)",
            "10.244.1.12:5353 (via 192.0.2.53:53)"
        ]
    );

    // Without endpoints every one of them is stale.
    assert_eq!(renderer.upsert(&dns(&[])).unwrap().stale_udp.len(), 4);

    // The external IP goes, and with it every connection through it.
    let mut internal = dns(&[11, 12]);
    internal.external_ips.clear();
    let update = renderer.upsert(&internal).unwrap();
    assert_eq!(stale_texts(&update), ["192.0.2.53:53"]);
    assert_eq!(update.stale_udp[0].ct_flush().reply, CtTuple::default());
}

#[test]
fn a_removed_udp_service_or_port_leaves_its_frontends_stale() {
    let mut renderer = ServiceRenderer::new();
    let update = renderer.upsert(&dns(&[10])).unwrap();
    renderer.commit(update.record);
    let mut tcp = dns(&[10]);
    tcp.ports.remove(0);
    assert_eq!(
        stale_texts(&renderer.upsert(&tcp).unwrap()),
        ["10.96.0.53:53", "192.0.2.53:53"]
    );
    let gone = renderer.remove(&ServiceKey::new("kube-system", "dns"));
    assert_eq!(stale_texts(&gone), ["10.96.0.53:53", "192.0.2.53:53"]);
    renderer.commit(gone.record);
    // Once removed, nothing of it is left to flush, and a TCP-only Service never has any.
    assert!(
        renderer
            .remove(&ServiceKey::new("kube-system", "dns"))
            .stale_udp
            .is_empty()
    );
    let update = renderer.upsert(&web(&[10])).unwrap();
    renderer.commit(update.record);
    assert!(renderer.upsert(&web(&[])).unwrap().stale_udp.is_empty());
}
