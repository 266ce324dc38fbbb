//! Unit tests and proptests of the cache: diff kinds, cookies, shared keys, patches, changes of
//! several owners, the checks that refuse a change, the send order, that an undone commit leaves
//! the cache as it was, and — on a modelled switch — that sending every change's steps yields
//! exactly the desired state.

use std::collections::{BTreeMap, HashMap};

use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::msg::group_mod::{GroupDesc, GroupModCommand};
use openflow::msg::meter_mod::MeterDesc;
use proptest::prelude::*;

use super::change::{Change, Objects, Patch};
use super::desired::DesiredCache;
use super::diff::SwitchMod;
use super::key::FlowKey;
use super::model_switch::ModelSwitch;
use super::object::{Object, Target};
use super::owner::{Owner, OwnerKind};
use crate::cookie::{Category, Round};
use crate::error::CacheError;
use crate::owners::{NETWORK_POLICY, NODE, PEER, POD};

const SERVICE: OwnerKind = OwnerKind::new("service", Category::new(5));
const ENDPOINTS: OwnerKind = OwnerKind::new("endpoints", Category::new(6));

fn fm(text: &str) -> FlowMod {
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

fn texts<T: std::fmt::Display>(v: &[T]) -> Vec<String> {
    v.iter().map(T::to_string).collect()
}

/// The cache's desired state in the model's form.
fn desired(cache: &DesiredCache) -> ModelSwitch {
    ModelSwitch {
        flows: cache
            .all_flows()
            .into_iter()
            .map(|f| (FlowKey::of(&f), f))
            .collect(),
        groups: cache
            .all_groups()
            .into_iter()
            .map(|g| (g.group_id, g))
            .collect(),
        meters: cache
            .all_meters()
            .into_iter()
            .map(|m| (m.meter_id, m))
            .collect(),
        collateral: Vec::new(),
    }
}

/// Every part of the cache, in a comparable form (sorted lines).
fn everything(cache: &DesiredCache) -> Vec<String> {
    let mut lines: Vec<String> = cache
        .flows
        .iter()
        .map(|(k, h)| format!("flow {k:?} {:?} {:?}", h.object, h.holders))
        .chain(
            cache
                .groups
                .iter()
                .map(|(k, h)| format!("group {k} {:?} {:?}", h.object, h.holders)),
        )
        .chain(
            cache
                .meters
                .iter()
                .map(|(k, h)| format!("meter {k} {:?} {:?}", h.object, h.holders)),
        )
        .chain(cache.users.iter().map(|(t, n)| format!("users {t} {n}")))
        .collect();
    lines.push(format!("owners {:?}", cache.owners));
    lines.push(format!("kinds {:?}", cache.kinds));
    lines.sort();
    lines
}

/// Checks the cache's bookkeeping against a recount from its objects.
fn check_invariants(cache: &DesiredCache) {
    let mut users: HashMap<Target, u32> = HashMap::new();
    let mut targets = Vec::new();
    for held in cache.flows.values() {
        held.object.targets(&mut targets);
    }
    for held in cache.groups.values() {
        held.object.targets(&mut targets);
    }
    for t in targets {
        *users.entry(t).or_default() += 1;
    }
    assert_eq!(cache.users, users, "use counts");
    for (owner, holdings) in &cache.owners {
        for key in &holdings.flows {
            assert!(cache.flows[key].holders.contains(owner));
        }
        for id in &holdings.groups {
            assert!(cache.groups[id].holders.contains(owner));
        }
        for id in &holdings.meters {
            assert!(cache.meters[id].holders.contains(owner));
        }
    }
    for (key, held) in &cache.flows {
        assert!(!held.holders.is_empty());
        assert!(held.holders.windows(2).all(|w| w[0] < w[1]));
        for o in &held.holders {
            assert!(cache.owners[o].flows.contains(key));
        }
    }
    for (id, held) in &cache.groups {
        for o in &held.holders {
            assert!(cache.owners[o].groups.contains(id));
        }
    }
    for (id, held) in &cache.meters {
        for o in &held.holders {
            assert!(cache.owners[o].meters.contains(id));
        }
    }
}

#[test]
fn identity_replace_is_empty() {
    let mut cache = DesiredCache::new(round(1));
    let flows = vec![
        fm("table=1,priority=5,ip actions=drop"),
        fm("table=2,priority=5,arp actions=output:3"),
    ];
    let node = Owner::from(NODE);
    assert_eq!(
        cache
            .replace(node.clone(), flows.clone())
            .unwrap()
            .flows
            .adds
            .len(),
        2
    );
    assert!(cache.replace(node, flows).unwrap().is_empty());
}

#[test]
fn diff_kinds() {
    let mut cache = DesiredCache::new(round(1));
    let owner = Owner::new(PEER, "n2");
    cache
        .replace(
            owner.clone(),
            vec![
                fm("table=1,priority=5,ip actions=drop"),
                fm("table=1,priority=6,ip actions=drop"),
            ],
        )
        .unwrap();
    let diff = cache
        .replace(
            owner.clone(),
            vec![
                fm("table=1,priority=5,ip actions=output:1"),
                fm("table=1,priority=7,ip actions=drop"),
            ],
        )
        .unwrap()
        .flows;
    let cookie = owner.cookie(round(1));
    assert_eq!(
        texts(&diff.adds),
        [format!(
            "table=1,cookie={cookie:#x},priority=7,ip actions=drop"
        )]
    );
    assert_eq!(diff.modifies.len(), 1);
    assert_eq!(diff.modifies[0].command, FlowModCommand::ModifyStrict);
    assert_eq!(diff.deletes.len(), 1);
    assert_eq!(diff.deletes[0].command, FlowModCommand::DeleteStrict);
    assert_eq!(diff.deletes[0].to_string(), "table=1,priority=6,ip");
    // A changed timeout is not a modify_strict (which keeps the old flow's other fields).
    let mut timed = fm("table=1,priority=5,ip actions=output:1");
    timed.idle_timeout = 9;
    let diff = cache
        .replace(
            owner.clone(),
            vec![timed, fm("table=1,priority=7,ip actions=drop")],
        )
        .unwrap()
        .flows;
    assert_eq!(diff.modifies[0].command, FlowModCommand::Add);
    let removed = cache.remove(owner).unwrap();
    assert_eq!(removed.flows.deletes.len(), 2);
    assert!(cache.all_flows().is_empty());
    assert_eq!(cache.owners().count(), 0);
    check_invariants(&cache);
}

#[test]
fn cookies_follow_round_and_owner() {
    let mut cache = DesiredCache::new(round(4));
    let pod = Owner::new(POD, "default/p1");
    cache
        .replace(pod.clone(), vec![fm("table=1,priority=5,ip actions=drop")])
        .unwrap();
    let flows = cache.objects_of(&pod).flows;
    assert_eq!(flows[0].cookie, pod.cookie(round(4)));
    assert_eq!(Round::of_cookie(flows[0].cookie), Some(round(4)));
    assert_ne!(Owner::from(NODE).cookie(round(4)), pod.cookie(round(4)));
    assert_ne!(pod.cookie(round(5)), pod.cookie(round(4)));
}

#[test]
fn shared_keys_are_installed_once_and_deleted_with_their_last_holder() {
    let mut cache = DesiredCache::new(round(1));
    let (a, b) = (Owner::new(SERVICE, "ns/a"), Owner::new(SERVICE, "ns/b"));
    let shared = fm("table=5,priority=200,ip,nw_dst=10.96.0.1 actions=group:1");
    let g = group("group_id=1,type=select,bucket=actions=output:1");
    let objects = Objects {
        flows: vec![shared.clone()],
        groups: vec![g.clone()],
        meters: vec![meter("meter=1 kbps bands=type=drop rate=10")],
    };
    let first = cache.replace(a.clone(), objects.clone()).unwrap();
    assert_eq!(
        (
            first.flows.adds.len(),
            first.groups.adds.len(),
            first.meters.adds.len()
        ),
        (1, 1, 1)
    );
    // b wants the very same objects: nothing is sent, both hold them.
    assert!(
        cache
            .replace(b.clone(), objects.clone())
            .unwrap()
            .is_empty()
    );
    let key = FlowKey::of(&shared);
    assert_eq!(cache.flow_holders(&key), [a.clone(), b.clone()]);
    assert_eq!(cache.group_holders(1), [a.clone(), b.clone()]);
    check_invariants(&cache);
    // The flow keeps the cookie of a, which installed it, also once a let go.
    assert!(cache.remove(a.clone()).unwrap().is_empty());
    assert_eq!(cache.flow_holders(&key), std::slice::from_ref(&b));
    assert_eq!(cache.all_flows()[0].cookie, a.cookie(round(1)));
    assert_eq!(cache.objects_of(&b), {
        let mut o = objects.clone();
        o.flows[0].cookie = a.cookie(round(1));
        o
    });
    let last = cache.remove(b).unwrap();
    assert_eq!(
        (
            last.flows.deletes.len(),
            last.groups.deletes.len(),
            last.meters.deletes.len()
        ),
        (1, 1, 1)
    );
    assert!(cache.all_flows().is_empty() && cache.all_groups().is_empty());
    check_invariants(&cache);
}

#[test]
fn flows_are_counted_per_table_once_per_key_and_groups_once_per_id() {
    let mut cache = DesiredCache::new(round(1));
    let (a, b) = (Owner::new(SERVICE, "ns/a"), Owner::new(SERVICE, "ns/b"));
    let shared = fm("table=5,priority=200,ip,nw_dst=10.96.0.1 actions=group:1");
    let g = group("group_id=1,type=select,bucket=actions=output:1");
    let a_objects = Objects {
        flows: vec![
            shared.clone(),
            fm("table=5,priority=100,ip,nw_dst=10.96.0.2 actions=drop"),
            fm("table=7,priority=100,ip actions=drop"),
        ],
        groups: vec![g.clone()],
        meters: Vec::new(),
    };
    cache.replace(a.clone(), a_objects).unwrap();
    // b shares a's flow and group: they count once.
    let b_objects = Objects {
        flows: vec![shared, fm("table=0,priority=1 actions=drop")],
        groups: vec![g],
        meters: Vec::new(),
    };
    cache.replace(b.clone(), b_objects).unwrap();
    assert_eq!(
        cache.flows_per_table(),
        BTreeMap::from([(0, 1), (5, 2), (7, 1)])
    );
    assert_eq!(cache.group_count(), 1);
    cache.remove(a).unwrap();
    assert_eq!(cache.flows_per_table(), BTreeMap::from([(0, 1), (5, 1)]));
    cache.remove(b).unwrap();
    assert!(cache.flows_per_table().is_empty());
    assert_eq!(cache.group_count(), 0);
}

#[test]
fn different_content_for_one_key_is_a_conflict_naming_both_owners() {
    let mut cache = DesiredCache::new(round(1));
    let a = Owner::new(POD, "ns/a");
    let b = Owner::new(POD, "ns/b");
    cache
        .replace(
            a.clone(),
            vec![fm("table=5,priority=200,ip,nw_dst=10.0.0.5 actions=drop")],
        )
        .unwrap();
    let before = desired(&cache);
    let err = cache
        .replace(
            b.clone(),
            vec![fm(
                "table=5,priority=200,ip,nw_dst=10.0.0.5 actions=output:2",
            )],
        )
        .unwrap_err();
    assert_eq!(
        err,
        CacheError::Conflict {
            object: "flow table=5,priority=200,ip,nw_dst=10.0.0.5 actions=output:2".into(),
            owner: "pod:ns/b".into(),
            holder: "pod:ns/a".into(),
        }
    );
    assert!(err.to_string().contains("pod:ns/a") && err.to_string().contains("pod:ns/b"));
    assert_eq!(desired(&cache), before);
    assert!(cache.objects_of(&b).is_empty());
    // Groups conflict the same way.
    cache
        .replace(
            a.clone(),
            Objects {
                groups: vec![group("group_id=3,type=all,bucket=actions=output:1")],
                ..Objects::default()
            },
        )
        .unwrap();
    let err = cache
        .replace(
            b.clone(),
            Objects {
                groups: vec![group("group_id=3,type=all,bucket=actions=output:2")],
                ..Objects::default()
            },
        )
        .unwrap_err();
    assert!(matches!(err, CacheError::Conflict { ref object, .. } if object == "group 3"));
    // Once a lets go, b may take the key.
    cache.remove(a).unwrap();
    assert_eq!(
        cache
            .replace(
                b.clone(),
                vec![fm(
                    "table=5,priority=200,ip,nw_dst=10.0.0.5 actions=output:2"
                )]
            )
            .unwrap()
            .flows
            .adds
            .len(),
        1
    );
    // The same key twice in one owner's set is refused too.
    let twice = vec![
        fm("table=1,priority=1 actions=drop"),
        fm("table=1,priority=1 actions=output:1"),
    ];
    assert!(matches!(
        cache.replace(Owner::from(NODE), twice),
        Err(CacheError::Duplicate { .. })
    ));
    check_invariants(&cache);
}

#[test]
fn holders_that_change_together_may_change_a_shared_key() {
    let mut cache = DesiredCache::new(round(1));
    let (a, b) = (Owner::new(SERVICE, "a"), Owner::new(SERVICE, "b"));
    let v1 = fm("table=5,priority=1,ip actions=output:1");
    let v2 = fm("table=5,priority=1,ip actions=output:2");
    cache.replace(a.clone(), vec![v1.clone()]).unwrap();
    cache.replace(b.clone(), vec![v1]).unwrap();
    assert!(matches!(
        cache.replace(a.clone(), vec![v2.clone()]),
        Err(CacheError::Conflict { .. })
    ));
    let diff = cache
        .apply(
            Change::new()
                .replace(a, vec![v2.clone()])
                .replace(b, vec![v2]),
        )
        .unwrap();
    assert_eq!(diff.flows.modifies.len(), 1);
    assert!(texts(&cache.all_flows())[0].ends_with("actions=output:2"));
    check_invariants(&cache);
}

#[test]
fn patches_change_only_their_keys() {
    let mut cache = DesiredCache::new(round(1));
    let policy = Owner::from(NETWORK_POLICY);
    let flows: Vec<FlowMod> = (0..50)
        .map(|i| {
            fm(&format!(
                "table=9,priority=100,ip,nw_src=10.0.0.{i} actions=drop"
            ))
        })
        .collect();
    cache.replace(policy.clone(), flows.clone()).unwrap();
    let patch = Patch {
        upsert: vec![
            fm("table=9,priority=100,ip,nw_src=10.0.0.3 actions=output:1"),
            fm("table=9,priority=100,ip,nw_src=10.0.1.1 actions=drop"),
        ]
        .into(),
        remove_flows: vec![FlowKey::of(&flows[7])],
        ..Patch::default()
    };
    let diff = cache
        .apply(Change::new().patch(policy.clone(), patch))
        .unwrap()
        .flows;
    assert_eq!(
        (diff.adds.len(), diff.modifies.len(), diff.deletes.len()),
        (1, 1, 1)
    );
    assert_eq!(cache.objects_of(&policy).flows.len(), 50);
    check_invariants(&cache);

    // Removing a key the owner does not hold, or setting and removing one key, is refused.
    let before = desired(&cache);
    let not_held = Patch {
        remove_flows: vec![FlowKey::of(&flows[7])],
        ..Patch::default()
    };
    let err = cache
        .apply(Change::new().patch(policy.clone(), not_held))
        .unwrap_err();
    assert_eq!(
        err,
        CacheError::NotHeld {
            object: "flow table=9,priority=100,ip,nw_src=10.0.0.7".into(),
            owner: "networkpolicy".into()
        }
    );
    let both = Patch {
        upsert: vec![flows[1].clone()].into(),
        remove_flows: vec![FlowKey::of(&flows[1])],
        ..Patch::default()
    };
    assert!(matches!(
        cache.apply(Change::new().patch(policy.clone(), both)),
        Err(CacheError::SetAndRemoved { .. })
    ));
    assert_eq!(desired(&cache), before);
    // Another owner's patch may share a key the first holds.
    let other = Owner::new(SERVICE, "x");
    let shared = Patch {
        upsert: vec![flows[1].clone()].into(),
        ..Patch::default()
    };
    assert!(
        cache
            .apply(Change::new().patch(other.clone(), shared))
            .unwrap()
            .is_empty()
    );
    assert_eq!(cache.flow_holders(&FlowKey::of(&flows[1])).len(), 2);
    check_invariants(&cache);
}

#[test]
fn refused_changes_name_what_is_wrong_and_change_nothing() {
    let mut cache = DesiredCache::new(round(1));
    let svc = Owner::new(SERVICE, "ns/web");
    let eps = Owner::new(ENDPOINTS, "ns/web");
    let uses_g1 = fm("table=5,priority=200,tcp,nw_dst=10.96.0.1,tp_dst=80 actions=group:1");
    let g1 = group("group_id=1,type=select,bucket=actions=output:1");

    // A flow that uses a group nobody wants.
    let err = cache
        .replace(svc.clone(), vec![uses_g1.clone()])
        .unwrap_err();
    assert_eq!(
        err,
        CacheError::MissingTarget {
            object: format!("flow {uses_g1}"),
            owner: "service:ns/web".into(),
            target: "group 1".into(),
        }
    );
    // With its group in the same change (another owner): accepted.
    cache
        .apply(
            Change::new()
                .replace(svc.clone(), vec![uses_g1.clone()])
                .replace(
                    eps.clone(),
                    Objects {
                        groups: vec![g1.clone()],
                        ..Objects::default()
                    },
                ),
        )
        .unwrap();
    let before = desired(&cache);
    // The group's last holder lets go while the flow still uses it.
    let err = cache.remove(eps.clone()).unwrap_err();
    assert_eq!(
        err,
        CacheError::StillUsed {
            object: "group 1".into(),
            owner: "endpoints:ns/web".into(),
            users: 1
        }
    );
    // A group that forwards to itself through another.
    let loops = Objects {
        groups: vec![
            g1.clone(),
            group("group_id=2,type=all,bucket=actions=group:3"),
            group("group_id=3,type=all,bucket=actions=group:2"),
        ],
        ..Objects::default()
    };
    assert!(matches!(
        cache.replace(eps.clone(), loops),
        Err(CacheError::Cycle { .. })
    ));
    // An owner twice in one change, and two kinds with one category.
    assert!(matches!(
        cache.apply(Change::new().remove(svc.clone()).remove(svc.clone())),
        Err(CacheError::OwnerTwice { .. })
    ));
    let impostor = OwnerKind::new("impostor", Category::new(5));
    assert!(matches!(
        cache.replace(Owner::from(impostor), vec![fm("priority=1 actions=drop")]),
        Err(CacheError::KindClash {
            kind: "impostor",
            other: "service",
            ..
        })
    ));
    // Two kinds new to the cache sharing a category, in one change.
    let alpha = OwnerKind::new("alpha", Category::new(40));
    let beta = OwnerKind::new("beta", Category::new(40));
    assert!(matches!(
        cache.apply(
            Change::new()
                .replace(Owner::from(alpha), vec![fm("priority=2 actions=drop")])
                .replace(Owner::from(beta), vec![fm("priority=3 actions=drop")])
        ),
        Err(CacheError::KindClash {
            kind: "beta",
            other: "alpha",
            ..
        })
    ));
    assert_eq!(desired(&cache), before);
    check_invariants(&cache);
    // Both let go in one change: accepted, the flow goes before the group.
    let diff = cache.apply(Change::new().remove(svc).remove(eps)).unwrap();
    let steps = diff.steps();
    assert_eq!(steps.bundle.len(), 2);
    assert!(matches!(steps.bundle[0], SwitchMod::Flow(_)));
    assert!(matches!(steps.bundle[1], SwitchMod::Group(g) if g.command == GroupModCommand::Delete));
}

#[test]
fn a_group_longer_than_a_message_is_sent_in_bundled_messages_before_its_users() {
    use openflow::Message;
    use openflow::msg::bundle::MAX_BUNDLED_LEN;
    use openflow::msg::group_mod::{BUCKET_LAST, Bucket, GroupMod};
    // 20,000 empty buckets of 8 bytes: 160 kB. Messages as full as a whole message may be
    // (65,535 bytes) would be too long for a bundle add; the chunks must leave it room.
    let mut big = group("group_id=1,type=all");
    big.buckets = (0..20_000)
        .map(|i| Bucket {
            bucket_id: 20_000 - i,
            weight: 0,
            watch_port: None,
            watch_group: None,
            actions: Vec::new(),
        })
        .collect();
    let mut cache = DesiredCache::new(round(1));
    let objects = Objects {
        flows: vec![fm("table=5,priority=1,ip actions=group:1")],
        groups: vec![big.clone()],
        meters: Vec::new(),
    };
    let diff = cache.replace(Owner::new(SERVICE, "a"), objects).unwrap();
    let bundle = super::sync::encode_all(diff.steps().bundle).unwrap();
    let (flow, groups) = bundle.split_last().unwrap();
    assert!(groups.len() >= 3, "{} group messages", groups.len());
    let mods: Vec<GroupMod> = groups
        .iter()
        .map(|m| {
            assert!(
                m.as_bytes().len() <= MAX_BUNDLED_LEN,
                "{}",
                m.as_bytes().len()
            );
            GroupMod::decode(m.as_bytes()).unwrap().0
        })
        .collect();
    assert_eq!(mods[0].command, GroupModCommand::Add);
    assert!(
        mods[1..]
            .iter()
            .all(|m| (m.command, m.command_bucket_id)
                == (GroupModCommand::InsertBucket, BUCKET_LAST))
    );
    let sent: Vec<&Bucket> = mods.iter().flat_map(|m| &m.group.buckets).collect();
    assert_eq!(sent, big.buckets.iter().collect::<Vec<_>>());
    assert_eq!(
        FlowMod::parse(flow.as_bytes()).unwrap().0.flow_match,
        fm("table=5,priority=1,ip actions=group:1").flow_match,
        "the flow goes after the whole group"
    );
}

#[test]
fn steps_put_what_is_used_before_its_users() {
    let mut cache = DesiredCache::new(round(1));
    let svc = Owner::new(SERVICE, "a");
    let objects = Objects {
        flows: vec![
            fm("table=5,priority=1,ip actions=group:2"),
            fm("table=5,priority=2,ip actions=meter:1,output:1"),
        ],
        // Group 2 forwards to group 1: 1 must be added first, deleted last.
        groups: vec![
            group("group_id=2,type=all,bucket=actions=group:1"),
            group("group_id=1,type=all,bucket=actions=output:3"),
        ],
        meters: vec![meter("meter=1 kbps bands=type=drop rate=100")],
    };
    let diff = cache.replace(svc.clone(), objects).unwrap();
    let steps = diff.steps();
    let names = |mods: &[SwitchMod<'_>]| -> Vec<String> {
        mods.iter()
            .map(|m| match m {
                SwitchMod::Flow(f) => format!("{:?} flow {}", f.command, f.priority),
                SwitchMod::Group(g) => format!("{:?} group {}", g.command, g.group.group_id),
                SwitchMod::Meter(m) => format!("{:?} meter {}", m.command, m.meter.meter_id),
            })
            .collect()
    };
    assert_eq!(names(&steps.before), ["Add meter 1"]);
    assert_eq!(
        names(&steps.bundle),
        ["Add group 1", "Add group 2", "Add flow 1", "Add flow 2"]
    );
    assert!(steps.after.is_empty());
    let mut switch = ModelSwitch::default();
    switch.send(&steps).unwrap();

    let diff = cache.remove(svc).unwrap();
    let steps = diff.steps();
    assert!(steps.before.is_empty());
    assert_eq!(
        names(&steps.bundle),
        [
            "DeleteStrict flow 1",
            "DeleteStrict flow 2",
            "Delete group 2",
            "Delete group 1"
        ]
    );
    assert_eq!(names(&steps.after), ["Delete meter 1"]);
    switch.send(&steps).unwrap();
    assert_eq!(switch, ModelSwitch::default());
}

#[test]
fn undo_before_bundle_restores_the_meters() {
    let mut cache = DesiredCache::new(round(1));
    let owner = Owner::new(SERVICE, "a");
    let old = meter("meter=1 kbps bands=type=drop rate=100");
    cache
        .replace(
            owner.clone(),
            Objects {
                meters: vec![old.clone()],
                ..Objects::default()
            },
        )
        .unwrap();
    let prepared = cache
        .prepare(Change::new().replace(
            owner,
            Objects {
                meters: vec![
                    meter("meter=1 kbps bands=type=drop rate=200"),
                    meter("meter=2 kbps bands=type=drop rate=5"),
                ],
                ..Objects::default()
            },
        ))
        .unwrap();
    let steps = prepared.diff.steps();
    let mut switch = desired(&cache);
    for m in &steps.before {
        switch.apply(*m).unwrap();
    }
    assert_eq!(steps.before.len(), prepared.undo_before.len());
    for m in &prepared.undo_before {
        switch.apply(SwitchMod::Meter(m)).unwrap();
    }
    assert_eq!(switch, desired(&cache));
    assert_eq!(switch.meters[&1], old);
}

// Proptests: random changes of three owners over a small key space, so that keys are shared,
// contents conflict, groups forward to groups and references dangle.

const OWNERS: [(OwnerKind, &str); 3] = [(SERVICE, "a"), (SERVICE, "b"), (ENDPOINTS, "a")];

/// A flow over a small key space; `variant` picks its actions (so that two owners often want
/// the same key with the same content, and sometimes not).
fn flow(table: u8, prio: u16, dst: u8, variant: u8) -> FlowMod {
    let actions = match variant {
        0 => "drop".to_string(),
        1 => "output:1".to_string(),
        2 => format!("group:{}", 1 + dst % 3),
        _ => format!("meter:{},output:2", 1 + dst % 2),
    };
    fm(&format!(
        "table={table},priority={prio},ip,nw_dst=10.0.0.{dst} actions={actions}"
    ))
}

/// Mostly the content every owner gives a key (so keys are shared), sometimes another one (a
/// conflict).
fn flow_strategy() -> impl Strategy<Value = FlowMod> {
    (0u8..2, 0u16..2, 0u8..4, prop::bool::weighted(0.8), 0u8..4)
        .prop_map(|(t, p, d, agree, v)| flow(t, p, d, if agree { (d + t) % 4 } else { v }))
}

/// Mostly a group that forwards to the group below it (group 1 outputs), sometimes to any.
fn group_strategy() -> impl Strategy<Value = GroupDesc> {
    (1u32..4, prop::bool::weighted(0.85), 0u32..4).prop_map(|(id, agree, any)| {
        let uses = if agree { id - 1 } else { any };
        let bucket = if uses == 0 {
            "actions=output:1".to_string()
        } else {
            format!("actions=group:{uses}")
        };
        group(&format!("group_id={id},type=all,bucket={bucket}"))
    })
}

fn meter_strategy() -> impl Strategy<Value = MeterDesc> {
    (1u32..3, prop::bool::weighted(0.85)).prop_map(|(id, agree)| {
        let rate = if agree { id * 100 } else { 999 };
        meter(&format!("meter={id} kbps bands=type=drop rate={rate}"))
    })
}

fn objects_strategy() -> impl Strategy<Value = Objects> {
    (
        proptest::collection::vec(flow_strategy(), 0..6),
        proptest::collection::vec(group_strategy(), 0..4),
        proptest::collection::vec(meter_strategy(), 0..3),
    )
        .prop_map(|(mut flows, mut groups, mut meters)| {
            // One owner's set lists each key once (duplicates are tested above).
            let mut seen = std::collections::BTreeSet::new();
            flows.retain(|f| seen.insert(FlowKey::of(f)));
            let mut seen = std::collections::BTreeSet::new();
            groups.retain(|g| seen.insert(g.group_id));
            let mut seen = std::collections::BTreeSet::new();
            meters.retain(|m| seen.insert(m.meter_id));
            Objects {
                flows,
                groups,
                meters,
            }
        })
}

#[derive(Debug, Clone)]
enum Op {
    Replace(Objects),
    /// Upserts, and how many of the owner's current flows, groups, meters to remove.
    Patch(Objects, usize, usize, usize),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        objects_strategy().prop_map(Op::Replace),
        (objects_strategy(), 0usize..3, 0usize..2, 0usize..2)
            .prop_map(|(o, f, g, m)| Op::Patch(o, f, g, m)),
    ]
}

/// A change: up to three distinct owners, each with an operation.
fn change_strategy() -> impl Strategy<Value = Vec<(usize, Op)>> {
    proptest::collection::btree_map(0usize..3, op_strategy(), 1..4)
        .prop_map(|m| m.into_iter().collect())
}

fn build(cache: &DesiredCache, ops: &[(usize, Op)]) -> Change {
    let mut change = Change::new();
    for (i, op) in ops {
        let (kind, id) = OWNERS[*i];
        let owner = Owner::new(kind, id);
        change = match op {
            Op::Replace(objects) => change.replace(owner, objects.clone()),
            Op::Patch(upsert, f, g, m) => {
                let current = cache.objects_of(&owner);
                let upserted: Vec<FlowKey> = upsert.flows.iter().map(FlowKey::of).collect();
                let patch = Patch {
                    upsert: upsert.clone(),
                    remove_flows: current
                        .flows
                        .iter()
                        .map(FlowKey::of)
                        .filter(|k| !upserted.contains(k))
                        .take(*f)
                        .collect(),
                    remove_groups: current
                        .groups
                        .iter()
                        .map(|g| g.group_id)
                        .filter(|id| !upsert.groups.iter().any(|g| g.group_id == *id))
                        .take(*g)
                        .collect(),
                    remove_meters: current
                        .meters
                        .iter()
                        .map(|m| m.meter_id)
                        .filter(|id| !upsert.meters.iter().any(|m| m.meter_id == *id))
                        .take(*m)
                        .collect(),
                };
                change.patch(owner, patch)
            }
        };
    }
    change
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    /// Every accepted change, sent to a switch that holds the desired state, leaves it holding
    /// exactly the new desired state: no message refused, no flow lost to a group or meter
    /// delete, no meter mod in a bundle. A refused change changes nothing.
    #[test]
    fn sent_changes_yield_exactly_the_desired_state(changes in proptest::collection::vec(change_strategy(), 1..8)) {
        let mut cache = DesiredCache::new(round(1));
        let mut switch = ModelSwitch::default();
        // Start with every group and meter the flows may use, held by the third owner.
        let provider = Objects {
            flows: Vec::new(),
            groups: (1..4).map(|id| group(&format!("group_id={id},type=all,bucket=actions={}", if id == 1 { "output:1".to_string() } else { format!("group:{}", id - 1) }))).collect(),
            meters: (1..3).map(|id| meter(&format!("meter={id} kbps bands=type=drop rate={}", id * 100))).collect(),
        };
        let (kind, id) = OWNERS[2];
        switch.send(&cache.replace(Owner::new(kind, id), provider).unwrap().steps()).unwrap();
        for ops in &changes {
            let change = build(&cache, ops);
            let before = desired(&cache);
            match cache.prepare(change) {
                Ok(prepared) => {
                    let sent = switch.send(&prepared.diff.steps());
                    prop_assert_eq!(sent, Ok(()), "{:?}", prepared.diff);
                    cache.commit(prepared);
                }
                Err(_) => prop_assert_eq!(desired(&cache), before),
            }
            prop_assert!(switch.collateral.is_empty(), "flows lost: {:?}", switch.collateral);
            prop_assert_eq!(&switch, &desired(&cache));
            check_invariants(&cache);
        }
        // A replay of the whole cache into an empty switch works too (groups in order).
        let mut fresh = ModelSwitch::default();
        let meters: Vec<_> = cache.all_meters().into_iter().map(openflow::msg::meter_mod::MeterMod::add).collect();
        let groups: Vec<_> = cache.all_groups().into_iter().map(openflow::msg::group_mod::GroupMod::add_or_modify).collect();
        let flows = cache.all_flows();
        for m in &meters { fresh.apply(SwitchMod::Meter(m)).map_err(TestCaseError::fail)?; }
        for g in &groups { fresh.apply(SwitchMod::Group(g)).map_err(TestCaseError::fail)?; }
        for f in &flows { fresh.apply(SwitchMod::Flow(f)).map_err(TestCaseError::fail)?; }
        prop_assert_eq!(&fresh, &desired(&cache));
    }

    /// A commit undone (the switch refused the change the cache stored while the switch took
    /// it) leaves every part of the cache as it was: objects, holders, owners' keys, users and
    /// owner kinds; the same change then commits as before.
    #[test]
    fn an_undone_commit_leaves_the_cache_as_it_was(changes in proptest::collection::vec(change_strategy(), 1..8)) {
        let mut cache = DesiredCache::new(round(1));
        let provider = Objects {
            flows: Vec::new(),
            groups: (1..4).map(|id| group(&format!("group_id={id},type=all,bucket=actions=output:{id}"))).collect(),
            meters: (1..3).map(|id| meter(&format!("meter={id} kbps bands=type=drop rate={}", id * 100))).collect(),
        };
        let (kind, id) = OWNERS[2];
        cache.replace(Owner::new(kind, id), provider).unwrap();
        for ops in &changes {
            let change = build(&cache, ops);
            let before = everything(&cache);
            let Ok(prepared) = cache.prepare(change.clone()) else { continue };
            let (_, undo) = cache.commit_undoable(prepared);
            cache.undo(undo);
            prop_assert_eq!(everything(&cache), before);
            cache.apply(change).unwrap();
            check_invariants(&cache);
        }
    }

    /// Replacing one owner's flows: applying the diff to the old set gives the new set, and
    /// replacing with the result again is empty.
    #[test]
    fn applying_the_diff_yields_the_new_set(old in proptest::collection::vec(flow_strategy(), 0..12), new in proptest::collection::vec(flow_strategy(), 0..12)) {
        let dedup = |v: Vec<FlowMod>| -> Vec<FlowMod> {
            let mut m = BTreeMap::new();
            for f in v { if !matches!(f.instructions.apply.first(), Some(openflow::action::Action::Group(_) | openflow::action::Action::Meter(_))) { m.insert(FlowKey::of(&f), f); } }
            m.into_values().collect()
        };
        let node = Owner::from(NODE);
        let mut cache = DesiredCache::new(round(1));
        let mut switch = ModelSwitch::default();
        switch.send(&cache.replace(node.clone(), dedup(old)).unwrap().steps()).unwrap();
        switch.send(&cache.replace(node.clone(), dedup(new)).unwrap().steps()).unwrap();
        prop_assert_eq!(&switch, &desired(&cache));
        let again = cache.replace(node, cache.all_flows()).unwrap();
        prop_assert!(again.is_empty());
    }
}
