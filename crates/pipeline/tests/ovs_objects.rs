//! Flows, groups and meters through the installer against a real `ovs-vswitchd`, with
//! `ovs-ofctl dump-flows` / `dump-groups` / `dump-meters` as the oracle: a group and the flows
//! that use it come and go in one change without the switch refusing anything; shared keys are
//! installed once; bad input (a dangling group, a group or meter the switch refuses, a conflict)
//! changes neither the switch nor the cache; a restart round replaces groups and meters in
//! place and deletes the leftovers once the old flows are gone; a replay after `ovs-vswitchd`
//! restarts brings everything back.
#![cfg(target_os = "linux")]

mod support;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openflow::action::{Action, Instructions};
use openflow::conn::{ConnError, ConnEvent, ConnOptions};
use openflow::msg::flow_mod::FlowMod;
use openflow::msg::group_mod::GroupDesc;
use openflow::msg::meter_mod::MeterDesc;
use pipeline::cache::{
    Change, DesiredCache, Installer, Objects, Owner, OwnerKind, Patch, SharedCache, replay,
};
use pipeline::cookie::Category;
use pipeline::{ApplyError, CacheError, Round};
use support::switch::{Switch, texts};

const SERVICE: OwnerKind = OwnerKind::new("service", Category::new(5));
const ENDPOINTS: OwnerKind = OwnerKind::new("endpoints", Category::new(6));

fn flow(text: &str) -> FlowMod {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn group(text: &str) -> GroupDesc {
    GroupDesc::from_text(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn meter(text: &str) -> MeterDesc {
    MeterDesc::from_text(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn round(n: u16) -> Round {
    Round::new(n).unwrap()
}

/// What the switch holds, as the oracle prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dump {
    flows: Vec<String>,
    groups: Vec<String>,
    meters: Vec<String>,
}

fn dump(sw: &Switch) -> Dump {
    Dump {
        flows: sw.dump(),
        groups: sw.dump_groups(),
        meters: sw.dump_meters(),
    }
}

/// What the cache wants, in the oracle's form.
fn wanted(cache: &SharedCache) -> Dump {
    let cache = cache.lock().unwrap();
    let mut groups: Vec<String> = cache.all_groups().iter().map(|g| g.to_string()).collect();
    groups.sort();
    let mut meters: Vec<String> = cache.all_meters().iter().map(|m| m.to_string()).collect();
    meters.sort();
    Dump {
        flows: texts(&cache.all_flows()),
        groups,
        meters,
    }
}

fn installer(sw: &Switch, round: Round) -> (Installer, SharedCache) {
    let cache: SharedCache = Arc::new(Mutex::new(DesiredCache::new(round)));
    (Installer::new(sw.conn.clone(), cache.clone()), cache)
}

/// A Service's flows: one to its endpoint group, one rate-limited by meter 1.
fn service_flows(vip: &str) -> Vec<FlowMod> {
    vec![
        flow(&format!(
            "table=50,priority=200,tcp,nw_dst={vip},tp_dst=80 actions=group:1"
        )),
        flow(&format!(
            "table=50,priority=190,udp,nw_dst={vip} actions=meter:1,output:10"
        )),
    ]
}

/// The endpoints the Service's flows use: group 1 (forwarding to group 2) and meter 1.
fn endpoints() -> Objects {
    Objects {
        flows: Vec::new(),
        groups: vec![
            group("group_id=1,type=select,bucket=bucket_id:0,actions=group:2"),
            group(
                "group_id=2,type=all,bucket=bucket_id:0,actions=output:10,bucket=bucket_id:1,actions=output:11",
            ),
        ],
        meters: vec![meter("meter=1 kbps bands=type=drop rate=1000")],
    }
}

#[tokio::test]
async fn a_group_and_its_flows_come_and_go_in_one_change() {
    let sw = Switch::start(None).await;
    let (installer, cache) = installer(&sw, round(1));
    let svc = Owner::new(SERVICE, "default/web");
    let eps = Owner::new(ENDPOINTS, "default/web");
    let empty = dump(&sw);

    let diff = installer
        .apply(
            Change::new()
                .replace(svc.clone(), service_flows("10.96.0.1"))
                .replace(eps.clone(), endpoints()),
        )
        .await
        .expect("the switch takes the groups and meter before the flows");
    assert_eq!(
        (
            diff.flows.adds.len(),
            diff.groups.adds.len(),
            diff.meters.adds.len()
        ),
        (2, 2, 1)
    );
    let installed = dump(&sw);
    assert_eq!(installed, wanted(&cache));
    assert_eq!(installed.groups.len(), 2);
    assert_eq!(installed.meters.len(), 1);

    // A second Service shares the meter flow's key with identical content: nothing is sent.
    let other = Owner::new(SERVICE, "default/web-alias");
    let diff = installer
        .replace(other.clone(), service_flows("10.96.0.1"))
        .await
        .unwrap();
    assert!(diff.is_empty(), "{diff:?}");
    // The first Service lets go: the flows stay for the second.
    assert!(installer.remove(svc.clone()).await.unwrap().is_empty());
    assert_eq!(dump(&sw), installed);

    // A patch moves the group to new endpoints (and a new group they forward to) in place.
    let patch = Patch {
        upsert: Objects {
            groups: vec![
                group("group_id=1,type=select,bucket=bucket_id:0,actions=group:3"),
                group("group_id=3,type=all,bucket=bucket_id:0,actions=output:11"),
            ],
            ..Objects::default()
        },
        remove_groups: vec![2],
        ..Patch::default()
    };
    let diff = installer
        .apply(Change::new().patch(eps.clone(), patch))
        .await
        .expect("the switch takes the patch");
    assert_eq!(
        (
            diff.groups.adds.len(),
            diff.groups.modifies.len(),
            diff.groups.deletes.len()
        ),
        (1, 1, 1)
    );
    assert_eq!(dump(&sw), wanted(&cache));
    assert_eq!(sw.dump().len(), 2, "no flow was lost with group 2");

    // One change moves the flow from group 1 to a new group 4 and deletes groups 1 and 3: the
    // flow is modified before group 1 goes (deleting a group deletes the flows still using
    // it), and group 1 goes before group 3, which it uses.
    let change = Change::new()
        .patch(
            eps.clone(),
            Patch {
                upsert: Objects {
                    groups: vec![group(
                        "group_id=4,type=all,bucket=bucket_id:0,actions=output:10",
                    )],
                    ..Objects::default()
                },
                remove_groups: vec![3, 1],
                ..Patch::default()
            },
        )
        .patch(
            other.clone(),
            Patch {
                upsert: vec![flow(
                    "table=50,priority=200,tcp,nw_dst=10.96.0.1,tp_dst=80 actions=group:4",
                )]
                .into(),
                ..Patch::default()
            },
        );
    let diff = installer
        .apply(change)
        .await
        .expect("the switch takes the move");
    assert_eq!(
        (
            diff.flows.modifies.len(),
            diff.groups.adds.len(),
            diff.groups.deletes.len()
        ),
        (1, 1, 2)
    );
    assert_eq!(dump(&sw), wanted(&cache));
    assert!(sw.dump().iter().any(|f| f.ends_with("actions=group:4")));

    // Everything goes in one change: flows before the groups and the meter.
    installer
        .apply(Change::new().remove(other).remove(eps))
        .await
        .expect("the switch takes the removal");
    assert_eq!(dump(&sw), empty);
    assert_eq!(wanted(&cache), empty);
}

/// A flow whose action outputs to a port number outside OpenFlow's range: the switch refuses
/// it (`OFPBAC_BAD_OUT_PORT`).
fn refused_bucket() -> GroupDesc {
    let mut g = group("group_id=9,type=all,bucket=bucket_id:0,actions=output:1");
    g.buckets[0].actions = vec![Action::output(0x1_0000)];
    g
}

#[tokio::test]
async fn bad_input_changes_neither_the_switch_nor_the_cache() {
    let sw = Switch::start(None).await;
    let (installer, cache) = installer(&sw, round(1));
    let svc = Owner::new(SERVICE, "default/web");
    let eps = Owner::new(ENDPOINTS, "default/web");
    installer
        .apply(
            Change::new()
                .replace(svc.clone(), service_flows("10.96.0.1"))
                .replace(eps.clone(), endpoints()),
        )
        .await
        .unwrap();
    let before = dump(&sw);
    let unchanged = |what: &str| {
        assert_eq!(dump(&sw), before, "{what}: the switch changed");
        assert_eq!(wanted(&cache), before, "{what}: the cache changed");
    };

    // A flow that uses a group nobody wants: refused by the cache, nothing sent.
    let dangling = flow("table=50,priority=10,ip actions=group:77");
    let err = installer
        .replace(Owner::new(SERVICE, "default/db"), vec![dangling])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ApplyError::Cache(CacheError::MissingTarget { target, .. }) if target == "group 77"),
        "{err}"
    );
    unchanged("dangling group");

    // The last holder lets go of a group a flow still uses: refused (the switch would delete
    // the flow with it).
    let err = installer.remove(eps.clone()).await.unwrap_err();
    assert!(
        matches!(&err, ApplyError::Cache(CacheError::StillUsed { .. })),
        "{err}"
    );
    unchanged("group still used");

    // A group the switch refuses, in a change that also adds a meter (set before the bundle),
    // modifies meter 1 and adds a flow using both: the bundle fails and the meters are undone.
    let mut objects = endpoints();
    objects.groups.push(refused_bucket());
    objects.meters[0] = meter("meter=1 kbps bands=type=drop rate=5");
    objects
        .meters
        .push(meter("meter=2 pktps bands=type=drop rate=7"));
    let change = Change::new().replace(eps.clone(), objects).patch(
        svc.clone(),
        Patch {
            upsert: vec![flow("table=50,priority=180,ip actions=meter:2,group:9")].into(),
            ..Patch::default()
        },
    );
    let err = installer.apply(change).await.unwrap_err();
    let ApplyError::Switch { source, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        source.error_names().contains(&"OFPBAC_BAD_OUT_PORT"),
        "{err}"
    );
    unchanged("group refused by the switch");

    // A meter the switch refuses (the userspace datapath has no DSCP remark band) next to one
    // it takes: the one it took is deleted again.
    let mut objects = endpoints();
    objects
        .meters
        .push(meter("meter=3 kbps bands=type=drop rate=9"));
    objects.meters.push(meter(
        "meter=4 kbps bands=type=dscp_remark rate=9 prec_level=1",
    ));
    let err = installer.replace(eps.clone(), objects).await.unwrap_err();
    assert!(
        matches!(&err, ApplyError::Switch { source: ConnError::BatchRejected(r), .. } if r.len() == 1),
        "{err}"
    );
    assert_eq!(err_names(&err), ["OFPMMFC_BAD_BAND"]);
    unchanged("meter refused by the switch");

    // Two owners, one key, different content: refused, naming both.
    let mut moved = service_flows("10.96.0.1");
    moved[0].instructions = Instructions::apply(vec![Action::output(11)]);
    let err = installer
        .replace(Owner::new(SERVICE, "default/thief"), moved)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ApplyError::Cache(CacheError::Conflict { owner, holder, .. })
            if owner == "service:default/thief" && holder == "service:default/web"),
        "{err}"
    );
    unchanged("conflict");

    // The installer still works after all that.
    installer
        .apply(Change::new().remove(svc).remove(eps))
        .await
        .unwrap();
    assert!(dump(&sw).groups.is_empty());
}

fn err_names(err: &ApplyError) -> Vec<&'static str> {
    match err {
        ApplyError::Switch { source, .. } => source.error_names(),
        ApplyError::Cache(_) => Vec::new(),
    }
}

#[tokio::test]
async fn a_restart_round_replaces_groups_and_meters_in_place() {
    let sw = Switch::start(None).await;
    let svc = Owner::new(SERVICE, "default/web");
    let old_svc = Owner::new(SERVICE, "default/old");
    let eps = Owner::new(ENDPOINTS, "default/web");
    let old_eps = Owner::new(ENDPOINTS, "default/old");
    let (first, _) = installer(&sw, round(1));
    first
        .apply(
            Change::new()
                .replace(svc.clone(), service_flows("10.96.0.1"))
                .replace(eps.clone(), endpoints())
                .replace(
                    old_svc.clone(),
                    vec![flow(
                        "table=50,priority=200,tcp,nw_dst=10.96.0.9,tp_dst=80 actions=group:5",
                    )],
                )
                .replace(
                    old_eps.clone(),
                    Objects {
                        groups: vec![group(
                            "group_id=5,type=all,bucket=bucket_id:0,actions=output:11",
                        )],
                        meters: vec![meter("meter=5 pktps bands=type=drop rate=3")],
                        ..Objects::default()
                    },
                ),
        )
        .await
        .unwrap();
    let round1 = dump(&sw);

    // A restarted agent: group 1 and meter 1 change, the old Service (group 5, meter 5) is
    // gone.
    let (second, cache2) = installer(&sw, round(2));
    {
        let mut objects = endpoints();
        objects.groups[1] = group("group_id=2,type=all,bucket=bucket_id:0,actions=output:11");
        objects.meters[0] = meter("meter=1 kbps bands=type=drop rate=2000");
        cache2
            .lock()
            .unwrap()
            .apply(
                Change::new()
                    .replace(svc.clone(), service_flows("10.96.0.1"))
                    .replace(eps.clone(), objects),
            )
            .unwrap();
    }
    second.install_all().await.expect("install round 2");
    let between = dump(&sw);
    let desired = wanted(&cache2);
    // Every group and meter of round 2 is in, replaced in place; the old Service's flow, group
    // and meter are still there, so nothing that round 1 had went missing before the cleanup.
    for g in &desired.groups {
        assert!(between.groups.contains(g), "{g} missing: {between:?}");
    }
    for m in &desired.meters {
        assert!(between.meters.contains(m), "{m} missing: {between:?}");
    }
    for f in &desired.flows {
        assert!(between.flows.contains(f), "{f} missing");
    }
    assert!(between.groups.iter().any(|g| g.starts_with("group_id=5,")));
    assert!(between.meters.iter().any(|m| m.starts_with("meter=5 ")));
    assert!(between.flows.iter().any(|f| f.contains("group:5")));
    assert_eq!(between.flows.len(), round1.flows.len());

    second.delete_round(round(1)).await.expect("delete round 1");
    assert_eq!(dump(&sw), desired);
}

#[tokio::test]
async fn a_replay_after_vswitchd_restarts_brings_groups_meters_and_flows_back() {
    let cache: SharedCache = Arc::new(Mutex::new(DesiredCache::new(round(1))));
    let hook_cache = cache.clone();
    let options = ConnOptions::default().on_connect(move |conn| {
        let cache = hook_cache.clone();
        async move { replay(&conn, &cache).await }
    });
    let sw = Switch::start_with(None, options).await;
    let installer = Installer::new(sw.conn.clone(), cache.clone());
    installer
        .apply(
            Change::new()
                .replace(
                    Owner::new(SERVICE, "default/web"),
                    service_flows("10.96.0.1"),
                )
                .replace(Owner::new(ENDPOINTS, "default/web"), endpoints()),
        )
        .await
        .unwrap();
    let before = dump(&sw);
    assert_eq!(before, wanted(&cache));

    let mut events = sw.conn.events();
    sw.ovs.restart_vswitchd().expect("restart ovs-vswitchd");
    let reconnected = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Ok(ConnEvent::Connected { .. }) = events.recv().await {
                break;
            }
        }
    });
    reconnected.await.expect("no reconnect within 30 s");
    assert_eq!(dump(&sw), before);
    let groups: BTreeSet<String> = dump(&sw).groups.into_iter().collect();
    assert_eq!(groups.len(), 2);
}
