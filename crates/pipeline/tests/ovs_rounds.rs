//! Round replacement and owner updates against a real `ovs-vswitchd`: a new round replaces the
//! old one with no flow missing in between, and an owner update changes only that owner's flows.
#![cfg(target_os = "linux")]

mod support;

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use openflow::conn::{ConnEvent, ConnOptions};

use model::{PodKey, TrafficMode, TunnelType};
use openflow::action::Instructions;
use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use pipeline::cache::{DesiredCache, Installer, Owner, SharedCache, replay};
use pipeline::cookie::ROUND_MASK;
use pipeline::owners::{NODE, PEER, POD};
use pipeline::render::{node_flows, peer_flows, pod_flows};
use pipeline::{ApplyError, CacheError, ChangeDiff, Round};
use support::switch::{Switch, install_all, texts};

const MODE: TrafficMode = TrafficMode::Encap(TunnelType::Geneve);

/// A flow's text without its cookie: what must stay in the switch across rounds.
fn without_cookie(flows: &[String]) -> BTreeSet<String> {
    flows
        .iter()
        .map(|f| {
            let mut fm: FlowMod = f.parse().unwrap();
            fm.cookie = 0;
            fm.to_string()
        })
        .collect()
}

fn round(n: u16) -> Round {
    Round::new(n).unwrap()
}

#[tokio::test]
async fn new_round_replaces_old_without_gap() {
    let sw = Switch::start(Some("geneve")).await;
    let node = support::node(MODE);
    let first = sw.installer(round(1));
    install_all(&first, &node).await;
    let round1 = sw.dump();

    // Round 2 (a restarted agent): n2 moved to another Node IP (one flow changes its actions)
    // and p3 is gone (its flows must disappear). The new agent fills its cache, then installs
    // it in one bundle.
    let second = sw.installer(round(2));
    {
        let mut cache = second.cache().lock().unwrap();
        cache.replace(Owner::from(NODE), node_flows(&node)).unwrap();
        let p1 = support::pods().remove(0);
        cache
            .replace(Owner::new(POD, &p1.key), pod_flows(&node, &p1, p1.ofport))
            .unwrap();
        let mut peer = support::peer();
        peer.node_ip = Ipv4Addr::new(10, 10, 0, 13);
        cache
            .replace(Owner::new(PEER, &peer.name), peer_flows(&node, &peer))
            .unwrap();
    }
    second.install_all().await.expect("install round 2");
    let desired2 = texts(&second.cache().lock().unwrap().all_flows());
    let between = sw.dump();

    // Nothing that both rounds want was ever missing: after the round-2 bundle every flow of
    // round 1 is still there, in place or replaced (same key) by round 2's version.
    let between_set: BTreeSet<String> = between.iter().cloned().collect();
    for flow in &desired2 {
        assert!(
            between_set.contains(flow),
            "round-2 flow missing after its bundle: {flow}"
        );
    }
    let keys = |flows: &[String]| -> BTreeSet<String> {
        flows
            .iter()
            .map(|f| {
                let fm: FlowMod = f.parse().unwrap();
                format!(
                    "table={},priority={},{}",
                    fm.table_id, fm.priority, fm.flow_match
                )
            })
            .collect()
    };
    assert!(
        keys(&round1).is_subset(&keys(&between)),
        "a round-1 flow vanished before the cleanup"
    );
    // The leftovers are exactly p3's flows, still with round 1's cookie.
    let leftovers: Vec<&String> = between.iter().filter(|f| !desired2.contains(f)).collect();
    let p3 = support::pods().remove(1);
    let p3_flows = without_cookie(&texts(&pod_flows(&node, &p3, p3.ofport)));
    assert_eq!(leftovers.len(), p3_flows.len());
    for f in &leftovers {
        let fm: FlowMod = f.parse().unwrap();
        assert_eq!(Round::of_cookie(fm.cookie), Some(round(1)), "{f}");
        assert!(
            p3_flows.contains(&without_cookie(&[f.to_string()]).into_iter().next().unwrap()),
            "{f}"
        );
    }
    // The changed flow was replaced in place by round 2's version.
    assert!(
        between
            .iter()
            .any(|f| f.contains("set_field:10.10.0.13->tun_dst"))
    );
    assert!(
        !between
            .iter()
            .any(|f| f.contains("set_field:10.10.0.12->tun_dst"))
    );

    second.delete_round(round(1)).await.expect("delete round 1");
    let after = sw.dump();
    assert_eq!(after, desired2);
    assert!(
        after
            .iter()
            .all(|f| f.parse::<FlowMod>().unwrap().cookie & ROUND_MASK == round(2).cookie_bits())
    );
}

#[tokio::test]
async fn owner_update_changes_only_its_flows() {
    let sw = Switch::start(Some("geneve")).await;
    let node = support::node(MODE);
    let installer = sw.installer(round(1));
    install_all(&installer, &node).await;
    let before = sw.dump();

    // The same flows again: nothing to send.
    let p1 = support::pods().remove(0);
    let owner = Owner::new(POD, &p1.key);
    let diff = installer
        .replace(owner.clone(), pod_flows(&node, &p1, p1.ofport))
        .await
        .unwrap();
    assert_eq!(diff, ChangeDiff::default());

    // p1 gets a new MAC: its spoof-guard and L2 flows change their match (delete + add), its L3
    // flow only its actions (modify_strict); nothing else changes.
    let mut moved = p1.clone();
    moved.mac = "02:00:0a:f4:01:7f".parse().unwrap();
    let old_p1 = texts(&installer.cache().lock().unwrap().objects_of(&owner).flows);
    let diff = installer
        .replace(owner.clone(), pod_flows(&node, &moved, moved.ofport))
        .await
        .unwrap()
        .flows;
    assert_eq!(diff.adds.len(), 3);
    assert_eq!(diff.deletes.len(), 3);
    assert_eq!(diff.modifies.len(), 1);
    assert_eq!(diff.modifies[0].command, FlowModCommand::ModifyStrict);
    assert!(diff.modifies[0].to_string().contains("nw_dst=10.244.1.10"));
    let new_p1 = texts(&installer.cache().lock().unwrap().objects_of(&owner).flows);

    let after = sw.dump();
    let expected: BTreeSet<String> = before
        .iter()
        .filter(|f| !old_p1.contains(f))
        .chain(new_p1.iter())
        .cloned()
        .collect();
    assert_eq!(after.iter().cloned().collect::<BTreeSet<_>>(), expected);
    assert!(after.iter().any(|f| f.contains("dl_dst=02:00:0a:f4:01:7f")));

    // An update the switch rejects changes neither the switch nor the cache.
    let mut bad = pod_flows(&node, &p1, p1.ofport);
    bad.push(
        "table=5,priority=7,ip actions=goto_table:1"
            .parse()
            .unwrap(),
    ); // backwards goto
    let err = installer.replace(owner.clone(), bad).await.unwrap_err();
    assert!(matches!(err, ApplyError::Switch { .. }), "{err}");
    assert_eq!(sw.dump(), after);
    assert_eq!(
        texts(&installer.cache().lock().unwrap().objects_of(&owner).flows),
        new_p1
    );

    // Removing the Pod removes exactly its flows.
    let diff = installer.remove(owner).await.unwrap().flows;
    assert_eq!(diff.deletes.len(), 6);
    let gone: BTreeSet<String> = before
        .iter()
        .filter(|f| !old_p1.contains(f))
        .cloned()
        .collect();
    assert_eq!(sw.dump().into_iter().collect::<BTreeSet<_>>(), gone);

    // An owner that wants p3's keys with other content is refused before anything reaches the
    // switch (the same content would be shared).
    let thief = Owner::new(POD, PodKey::new("default", "thief"));
    let p3 = support::pods().remove(1);
    let mut stolen = pod_flows(&node, &p3, p3.ofport);
    stolen[0].instructions = Instructions::default();
    let err = installer.replace(thief, stolen).await.unwrap_err();
    assert!(
        matches!(&err, ApplyError::Cache(CacheError::Conflict { holder, .. }) if holder == "pod:default/p3"),
        "{err}"
    );
    assert_eq!(sw.dump().into_iter().collect::<BTreeSet<_>>(), gone);
}

#[tokio::test]
async fn on_connect_replay_restores_flows_after_vswitchd_restart() {
    let node = support::node(MODE);
    let cache: SharedCache = Arc::new(Mutex::new(DesiredCache::new(round(1))));
    let hook_cache = cache.clone();
    let options = ConnOptions::default().on_connect(move |conn| {
        let cache = hook_cache.clone();
        async move { replay(&conn, &cache).await }
    });
    let sw = Switch::start_with(Some("geneve"), options).await;
    let installer = Installer::new(sw.conn.clone(), cache);
    install_all(&installer, &node).await;
    let before = sw.dump();
    assert_eq!(before.len(), support::all_flows(MODE).len());

    let mut events = sw.conn.events();
    sw.ovs.restart_vswitchd().expect("restart ovs-vswitchd");
    // The connection notices, reconnects and runs the hook before announcing the new session.
    let reconnected = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            if let Ok(ConnEvent::Connected { .. }) = events.recv().await {
                break;
            }
        }
    });
    reconnected.await.expect("no reconnect within 30 s");
    assert_eq!(sw.dump(), before);
}
