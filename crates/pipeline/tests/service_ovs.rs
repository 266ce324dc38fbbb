//! Services through the renderer and the installer against a real `ovs-vswitchd`, with
//! `ovs-ofctl dump-flows` / `dump-groups` as the oracle: a Service with three endpoints is
//! installed with its select group, changed to two endpoints (the group modified in place, one
//! DNAT flow deleted, nothing else sent) and removed; `ofproto/trace` shows a Pod's SYN to the
//! cluster IP picked by the group and DNATed. A Service of 5,000 endpoints — a group five times
//! longer than one OpenFlow message, sent as an add and bucket inserts in one bundle — is
//! installed, changed to 4,999, 3 and 5,000 endpoints and removed, the switch equal to the cache
//! at each step (such a group is read back from the raw stream: `support::raw_group`), and Pod
//! SYNs to its cluster IP are DNATed to its endpoints. Bad input — a bucket too large for one
//! OpenFlow message, a frontend another Service holds, a malformed Service — leaves the switch,
//! the cache and the renderer unchanged.
#![cfg(target_os = "linux")]

mod support;

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use model::{Service, ServiceKey, TrafficMode, TunnelType};
use openflow::conn::{ConnError, ConnEvent, ConnOptions};
use openflow::msg::flow_mod::FlowMod;
use openflow::msg::group_mod::GroupDesc;
use pipeline::cache::{Change, DesiredCache, Installer, Objects, Owner, SharedCache, replay};
use pipeline::owners::NODE;
use pipeline::owners::SERVICE;
use pipeline::render::{ServiceError, ServiceRenderer, node_flows, service_owner};
use pipeline::{ApplyError, CacheError, Round};
use support::raw_group;
use support::switch::{Switch, install_all, texts};
use support::{WEB_VIP, web_service};

const P1: &str =
    "in_port=10,tcp,dl_src=02:00:0a:f4:01:0a,dl_dst=02:00:0a:f4:01:01,nw_src=10.244.1.10";

/// The two local Pods and a Pod on n2.
fn three() -> [Ipv4Addr; 3] {
    [
        Ipv4Addr::new(10, 244, 1, 10),
        Ipv4Addr::new(10, 244, 1, 11),
        Ipv4Addr::new(10, 244, 2, 10),
    ]
}

/// What the switch holds, as the oracle prints it: flows and groups.
fn dump(sw: &Switch) -> (Vec<String>, Vec<String>) {
    (sw.dump(), sw.dump_groups())
}

/// What the switch holds when a group may be longer than one OpenFlow message (which
/// `dump-groups` cannot read): the flows, and each group the cache has read whole from the raw
/// stream. The steps with only small groups check with [`dump`] that the switch has no other.
fn dump_long(sw: &Switch, cache: &SharedCache) -> (Vec<String>, Vec<String>) {
    let ids: Vec<u32> = cache
        .lock()
        .unwrap()
        .all_groups()
        .iter()
        .map(|g| g.group_id)
        .collect();
    let mut groups: Vec<String> = ids
        .into_iter()
        .map(|id| {
            raw_group::group(sw, id)
                .unwrap_or_else(|| panic!("the switch has no group {id}"))
                .to_string()
        })
        .collect();
    groups.sort();
    (sw.dump(), groups)
}

/// `n` endpoints in 10.245.0.0/16 (none local).
fn many(n: u32) -> Vec<Ipv4Addr> {
    (0..n)
        .map(|i| Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 245, 0, 0)) + i))
        .collect()
}

/// What the cache wants, in the oracle's form.
fn wanted(cache: &SharedCache) -> (Vec<String>, Vec<String>) {
    let cache = cache.lock().unwrap();
    let mut groups: Vec<String> = cache.all_groups().iter().map(|g| g.to_string()).collect();
    groups.sort();
    (texts(&cache.all_flows()), groups)
}

/// Renders `service`, installs it and commits its group ids.
async fn upsert(
    renderer: &mut ServiceRenderer,
    installer: &Installer,
    service: &Service,
) -> pipeline::ChangeDiff {
    let update = renderer.upsert(service).expect("a valid Service");
    let diff = installer
        .apply(update.change)
        .await
        .expect("the switch takes the Service");
    renderer.commit(update.record);
    diff
}

async fn node_switch() -> (Switch, Installer) {
    let sw = Switch::start(Some("geneve")).await;
    let installer = sw.installer(Round::FIRST);
    install_all(
        &installer,
        &support::node(TrafficMode::Encap(TunnelType::Geneve)),
    )
    .await;
    (sw, installer)
}

/// Like [`node_switch`], the connection replaying the cache each time it (re)connects.
async fn replaying_node_switch() -> (Switch, Installer) {
    let cache: SharedCache = Arc::new(Mutex::new(DesiredCache::new(Round::FIRST)));
    let hook_cache = cache.clone();
    let options = ConnOptions::default().on_connect(move |conn| {
        let cache = hook_cache.clone();
        async move { replay(&conn, &cache).await }
    });
    let sw = Switch::start_with(Some("geneve"), options).await;
    let installer = Installer::new(sw.conn.clone(), cache);
    install_all(
        &installer,
        &support::node(TrafficMode::Encap(TunnelType::Geneve)),
    )
    .await;
    (sw, installer)
}

#[tokio::test]
async fn a_service_s_endpoints_come_change_and_go() {
    let (sw, installer) = node_switch().await;
    let node_only = dump(&sw);
    let mut renderer = ServiceRenderer::new();

    let diff = upsert(&mut renderer, &installer, &web_service(&three())).await;
    // The frontend, three DNAT flows, and the hairpin marks of the two local endpoints.
    assert_eq!((diff.groups.adds.len(), diff.flows.adds.len()), (1, 6));
    let installed = dump(&sw);
    assert_eq!(installed, wanted(installer.cache()));
    assert_eq!(installed.1.len(), 1);
    assert_eq!(
        installed.1[0].matches("bucket=").count(),
        3,
        "{:?}",
        installed.1
    );
    for ep in three() {
        assert!(
            installed
                .0
                .iter()
                .any(|f| f.contains(&format!("nat(dst={ep}:8080)"))),
            "no DNAT flow for {ep}"
        );
    }

    // A Pod's new connection to the cluster IP reaches the group, which hashes the packet to
    // pick a bucket (the trace stops at that recirculation; the DNAT flows are checked in the
    // dump above).
    let t = sw.trace(&format!("{P1},nw_dst={WEB_VIP},tp_dst=80"), &["trk,new"]);
    assert!(t.contains("group:1"), "{t}");
    assert!(t.contains("Datapath actions: hash("), "{t}");
    // Other traffic goes its usual way through the Service tables.
    let t = sw.trace(
        &format!("{P1},nw_dst=10.244.1.11,tp_dst=80,nw_ttl=64"),
        &["trk,new"],
    );
    assert!(t.contains("-> output port is 11"), "{t}");

    // One endpoint goes: the group is modified in place and its DNAT flow deleted, nothing
    // else is sent.
    let two = &three()[..2];
    let diff = upsert(&mut renderer, &installer, &web_service(two)).await;
    assert_eq!(
        (
            diff.groups.len(),
            diff.groups.modifies.len(),
            diff.flows.len(),
            diff.flows.deletes.len()
        ),
        (1, 1, 1, 1)
    );
    let changed = dump(&sw);
    assert_eq!(changed, wanted(installer.cache()));
    assert_eq!(changed.1[0].matches("bucket=").count(), 2);
    assert!(
        !changed
            .0
            .iter()
            .any(|f| f.contains("nat(dst=10.244.2.10:8080)"))
    );

    // The Service goes: its flows, then its group.
    let update = renderer.remove(&ServiceKey::new("default", "web"));
    installer
        .apply(update.change)
        .await
        .expect("the switch takes the removal");
    renderer.commit(update.record);
    assert_eq!(dump(&sw), node_only);
}

#[tokio::test]
async fn bad_input_changes_neither_the_switch_nor_the_cache() {
    let (sw, installer) = node_switch().await;
    let mut renderer = ServiceRenderer::new();
    upsert(&mut renderer, &installer, &web_service(&three())).await;
    let before = dump(&sw);
    let unchanged = |what: &str| {
        assert_eq!(dump(&sw), before, "{what}: the switch changed");
        assert_eq!(
            wanted(installer.cache()),
            before,
            "{what}: the cache changed"
        );
    };

    // A group whose one bucket is longer than an OpenFlow message (9,000 outputs), with a
    // flow using it: no split can send it. Refused before anything is sent.
    let actions = vec!["output:1"; 9000].join(",");
    let huge =
        GroupDesc::from_text(&format!("group_id=99,type=select,bucket=actions={actions}")).unwrap();
    let user: FlowMod = "table=0,priority=7,tcp,nw_dst=10.96.0.99,tp_dst=80 actions=group:99"
        .parse()
        .unwrap();
    let change = Change::new().replace(
        Owner::new(SERVICE, ServiceKey::new("default", "huge")),
        Objects {
            flows: vec![user],
            groups: vec![huge],
            meters: Vec::new(),
        },
    );
    let err = installer.apply(change).await.unwrap_err();
    assert!(
        matches!(&err, ApplyError::Switch { source: ConnError::Encode(_), what } if what == "the objects of service:default/huge"),
        "{err}"
    );
    unchanged("a bucket longer than a message");

    // Another Service claims the frontend: refused by the cache, naming both.
    let mut thief = web_service(&three()[..1]);
    thief.key = ServiceKey::new("default", "thief");
    let update = renderer.upsert(&thief).unwrap();
    let err = installer.apply(update.change).await.unwrap_err();
    assert!(
        matches!(&err, ApplyError::Cache(CacheError::Conflict { owner, holder, .. })
            if owner == "service:default/thief" && holder == "service:default/web"),
        "{err}"
    );
    unchanged("conflicting frontend");

    // A malformed Service is refused by the renderer.
    let mut zero = web_service(&three());
    zero.ports[0].port = 0;
    assert!(matches!(
        renderer.upsert(&zero),
        Err(ServiceError::ZeroPort { .. })
    ));
    unchanged("port 0");

    // The renderer kept its group ids: the same Service renders the same objects, and the
    // installer sends nothing.
    let update = renderer.upsert(&web_service(&three())).unwrap();
    assert!(installer.apply(update.change).await.unwrap().is_empty());
}

/// The endpoints a Pod's SYNs to the cluster IP were DNATed to, from the switch's conntrack
/// table (zone 65520): one per connection sent.
fn dnat_targets(sw: &Switch) -> Vec<String> {
    let ct = sw
        .ovs
        .appctl(&["dpctl/dump-conntrack", "zone=65520"])
        .expect("dump-conntrack");
    ct.lines()
        .filter(|l| l.contains(&format!("dst={WEB_VIP},")))
        .map(|l| {
            let reply = l.split("reply=(").nth(1).expect("a reply tuple");
            let src = reply.split("src=").nth(1).expect("a reply source");
            let port = reply.split("sport=").nth(1).expect("a reply port");
            let ip = src.split(',').next().unwrap();
            let port = port.split(',').next().unwrap();
            format!("{ip}:{port}")
        })
        .collect()
}

#[tokio::test]
async fn a_service_with_5000_endpoints_is_installed_changed_and_removed() {
    let (sw, installer) = node_switch().await;
    let node_only = dump(&sw);
    let mut renderer = ServiceRenderer::new();
    let cache_group = |installer: &Installer| -> GroupDesc {
        let groups = installer.cache().lock().unwrap().all_groups();
        assert_eq!(groups.len(), 1, "the Service's one group");
        groups[0].clone()
    };

    // 5,000 endpoints: a group of about 320 kB; flows: the frontend, a DNAT flow per endpoint
    // and a hairpin mark per local one (10.245.1.0/24, 256 of them).
    let diff = upsert(&mut renderer, &installer, &web_service(&many(5000))).await;
    assert_eq!(
        (diff.groups.adds.len(), diff.flows.adds.len()),
        (1, 1 + 5000 + 256)
    );
    let installed = dump_long(&sw, installer.cache());
    assert_eq!(installed, wanted(installer.cache()));
    let group = cache_group(&installer);
    assert_eq!(group.buckets.len(), 5000);
    assert_eq!(raw_group::group(&sw, group.group_id), Some(group.clone()));
    let frontend = format!(
        "nw_dst={WEB_VIP},tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:{}",
        group.group_id
    );
    assert!(
        installed.0.iter().any(|f| f.contains(&frontend)),
        "no frontend flow to group {}",
        group.group_id
    );

    // Real packets: Pod SYNs to the cluster IP, each a new connection, are hashed to buckets
    // of the 5,000 and DNATed to their endpoints by EndpointDNAT's flows.
    let p1 = P1.strip_prefix("in_port=10,").unwrap();
    for sport in 40000..40008 {
        sw.send_packet(
            10,
            &format!("{p1},nw_dst={WEB_VIP},nw_ttl=64,tp_src={sport},tp_dst=80,tcp_flags=0x002"),
        );
    }
    let targets = dnat_targets(&sw);
    assert_eq!(targets.len(), 8, "one connection per SYN: {targets:?}");
    let endpoints: Vec<String> = many(5000).iter().map(|ip| format!("{ip}:8080")).collect();
    for t in &targets {
        assert!(endpoints.contains(t), "DNAT to {t}, not an endpoint");
    }
    let mut distinct = targets.clone();
    distinct.sort();
    distinct.dedup();
    assert!(
        distinct.len() > 1,
        "every connection to one endpoint: {targets:?}"
    );

    // One endpoint goes: one group modify (the whole group again, in several messages) and
    // one DNAT flow delete.
    let diff = upsert(&mut renderer, &installer, &web_service(&many(4999))).await;
    assert_eq!(
        (
            diff.groups.modifies.len(),
            diff.groups.len(),
            diff.flows.deletes.len(),
            diff.flows.len()
        ),
        (1, 1, 1, 1)
    );
    assert_eq!(dump_long(&sw, installer.cache()), wanted(installer.cache()));
    assert_eq!(cache_group(&installer).buckets.len(), 4999);

    // Down to 3: the group fits in one message again, and `dump-groups` reads the whole switch.
    upsert(&mut renderer, &installer, &web_service(&many(3))).await;
    let small = dump(&sw);
    assert_eq!(small, wanted(installer.cache()));
    assert_eq!(small.1.len(), 1);
    assert_eq!(small.1[0].matches("bucket=").count(), 3);

    // And back to 5,000: a modify that replaces the 3 buckets, then inserts.
    let diff = upsert(&mut renderer, &installer, &web_service(&many(5000))).await;
    assert_eq!(
        (diff.groups.modifies.len(), diff.flows.adds.len()),
        (1, 4997 + 256)
    );
    assert_eq!(dump_long(&sw, installer.cache()), wanted(installer.cache()));
    let group = cache_group(&installer);
    assert_eq!(raw_group::group(&sw, group.group_id), Some(group.clone()));

    // The Service goes: its flows, then its group.
    let update = renderer.remove(&ServiceKey::new("default", "web"));
    installer
        .apply(update.change)
        .await
        .expect("the switch takes the removal");
    renderer.commit(update.record);
    assert_eq!(dump(&sw), node_only);
    assert_eq!(raw_group::group(&sw, group.group_id), None);
}

#[tokio::test]
async fn a_5000_endpoint_group_comes_back_after_vswitchd_restarts() {
    let (sw, installer) = replaying_node_switch().await;
    let mut renderer = ServiceRenderer::new();
    upsert(&mut renderer, &installer, &web_service(&many(5000))).await;
    let before = dump_long(&sw, installer.cache());
    assert_eq!(before, wanted(installer.cache()));

    // The restarted switch has nothing; the replay's one bundle adds the group (an
    // add-or-modify and bucket inserts) before the flows that use it.
    let mut events = sw.conn.events();
    sw.ovs.restart_vswitchd().expect("restart ovs-vswitchd");
    tokio::time::timeout(Duration::from_secs(30), async {
        while !matches!(events.recv().await, Ok(ConnEvent::Connected { .. })) {}
    })
    .await
    .expect("no reconnect within 30 s");
    assert_eq!(dump_long(&sw, installer.cache()), before);
}

/// [`web_service`] under another name, cluster IP and endpoints.
fn service_named(name: &str, vip: Ipv4Addr, endpoints: &[Ipv4Addr]) -> Service {
    let mut service = web_service(endpoints);
    service.key = ServiceKey::new("default", name);
    service.cluster_ips = vec![vip];
    service
}

// A restarted agent (round 2) whose 5,000-endpoint Service now has group 1, among other groups.
// Open vSwitch aborts when asked for every group while one this long is followed by another,
// so the new round reads the switch's groups one id at a time. It finds the group the deleted
// Service left (named only by round 1's flows), deletes it, and leaves the others whole, with
// ovs-vswitchd still running.
#[tokio::test]
async fn a_new_round_with_a_5000_endpoint_group_among_others_keeps_the_switch_up_and_clean() {
    let (sw, first) = node_switch().await;
    let mut renderer = ServiceRenderer::new();
    let web = web_service(&many(5000));
    let dns = service_named(
        "dns",
        Ipv4Addr::new(10, 96, 5, 10),
        &[Ipv4Addr::new(10, 246, 0, 1), Ipv4Addr::new(10, 246, 0, 2)],
    );
    let gone = service_named(
        "gone",
        Ipv4Addr::new(10, 96, 5, 11),
        &[Ipv4Addr::new(10, 246, 0, 3)],
    );
    for service in [&gone, &web, &dns] {
        upsert(&mut renderer, &first, service).await;
    }
    assert_eq!(
        first.cache().lock().unwrap().all_groups().len(),
        3,
        "groups 1 (gone), 2 (web) and 3 (dns)"
    );

    // Round 2: `gone` was deleted while the agent was down. The new renderer numbers web's
    // group 1 and dns's 2, so group 3 on the switch is the deleted Service's old one.
    let second = sw.installer(Round::new(2).unwrap());
    let mut renderer = ServiceRenderer::new();
    {
        let mut cache = second.cache().lock().unwrap();
        cache
            .replace(
                Owner::from(NODE),
                node_flows(&support::node(TrafficMode::Encap(TunnelType::Geneve))),
            )
            .unwrap();
        for service in [&web, &dns] {
            let update = renderer.upsert(service).expect("a valid Service");
            cache
                .replace(service_owner(&service.key), update.objects())
                .unwrap();
            renderer.commit(update.record);
        }
    }
    second.install_all().await.expect("round 2 installed");
    second
        .delete_round(Round::FIRST)
        .await
        .expect("round 1 deleted, with the groups no owner wants");

    assert!(
        sw.ovs.appctl(&["version"]).is_ok(),
        "ovs-vswitchd is still running"
    );
    let groups = second.cache().lock().unwrap().all_groups();
    assert_eq!(groups.len(), 2);
    for group in &groups {
        assert_eq!(
            raw_group::group(&sw, group.group_id).as_ref(),
            Some(group),
            "group {} on the switch is the one round 2 wants",
            group.group_id
        );
    }
    assert_eq!(
        raw_group::group(&sw, 3),
        None,
        "the deleted Service's group"
    );
    assert_eq!(dump_long(&sw, second.cache()), wanted(second.cache()));
}
