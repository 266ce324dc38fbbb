//! Services through the renderer and the installer against a real `ovs-vswitchd`, with
//! `ovs-ofctl dump-flows` / `dump-groups` as the oracle: a Service with three endpoints is
//! installed with its select group, changed to two endpoints (the group modified in place, one
//! DNAT flow deleted, nothing else sent) and removed; `ofproto/trace` shows a Pod's SYN to the
//! cluster IP picked by the group and DNATed. Bad input — a group too large for one OpenFlow
//! message, a frontend another Service holds, a malformed Service — leaves the switch, the cache
//! and the renderer unchanged.
#![cfg(target_os = "linux")]

mod support;

use std::net::Ipv4Addr;

use model::{Service, ServiceKey, TrafficMode, TunnelType};
use openflow::conn::ConnError;
use pipeline::cache::{Installer, SharedCache};
use pipeline::render::{ServiceError, ServiceRenderer};
use pipeline::{ApplyError, CacheError, Round};
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
    renderer.commit(update.groups);
    diff
}

async fn node_switch() -> (Switch, Installer) {
    let sw = Switch::start(Some("geneve")).await;
    let node = support::node(TrafficMode::Encap(TunnelType::Geneve));
    let installer = sw.installer(Round::FIRST);
    install_all(&installer, &node).await;
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
    renderer.commit(update.groups);
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

    // 3,000 endpoints: the group does not fit in one OpenFlow message (inserting buckets in
    // several messages is not built yet). Refused before anything is sent.
    let many: Vec<Ipv4Addr> = (0..3000u32)
        .map(|i| Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 245, 0, 0)) + i))
        .collect();
    let update = renderer.upsert(&web_service(&many)).unwrap();
    let err = installer.apply(update.change).await.unwrap_err();
    assert!(
        matches!(&err, ApplyError::Switch { source: ConnError::Encode(_), what } if what == "the objects of service:default/web"),
        "{err}"
    );
    unchanged("oversized group");

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
