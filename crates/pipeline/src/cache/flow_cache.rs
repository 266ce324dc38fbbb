//! [`FlowCache`]: the desired flows per owner, stamped with the owner's cookie for the current
//! round, and the diff each update makes.

use std::collections::{BTreeMap, HashMap};

use openflow::msg::flow_mod::{FlowMod, FlowModCommand};

use super::diff::FlowDiff;
use super::key::FlowKey;
use super::owner::FlowOwner;
use crate::cookie::Round;
use crate::error::FlowConflict;

/// The desired flows of every owner.
#[derive(Debug, Clone)]
pub struct FlowCache {
    round: Round,
    owners: BTreeMap<FlowOwner, BTreeMap<FlowKey, FlowMod>>,
    /// Which owner holds each key (a key belongs to at most one owner).
    holders: HashMap<FlowKey, FlowOwner>,
}

/// A computed but not yet stored update of one owner: the diff to send, and the flows to store
/// once the switch applied it ([`FlowCache::commit`]).
#[derive(Debug, Clone)]
pub struct Update {
    pub owner: FlowOwner,
    pub diff: FlowDiff,
    flows: BTreeMap<FlowKey, FlowMod>,
}

impl FlowCache {
    /// An empty cache whose flows get cookies of `round`.
    pub fn new(round: Round) -> FlowCache {
        FlowCache {
            round,
            owners: BTreeMap::new(),
            holders: HashMap::new(),
        }
    }

    /// The round stamped on the flows.
    pub fn round(&self) -> Round {
        self.round
    }

    /// Computes what replacing `owner`'s flows by `flows` changes, without storing anything.
    /// Fails if a flow's key is held by another owner, or appears twice in `flows`.
    pub fn prepare(&self, owner: FlowOwner, flows: Vec<FlowMod>) -> Result<Update, FlowConflict> {
        let cookie = owner.cookie(self.round);
        let mut desired = BTreeMap::new();
        for mut fm in flows {
            fm.command = FlowModCommand::Add;
            fm.cookie = cookie;
            fm.cookie_mask = 0;
            let key = FlowKey::of(&fm);
            let holder = self.holders.get(&key).filter(|h| **h != owner);
            if let Some(holder) = holder.or(desired.contains_key(&key).then_some(&owner)) {
                return Err(FlowConflict {
                    owner: owner.to_string(),
                    holder: holder.to_string(),
                    flow: fm.to_string(),
                });
            }
            desired.insert(key, fm);
        }
        let empty = BTreeMap::new();
        let current = self.owners.get(&owner).unwrap_or(&empty);
        let mut diff = FlowDiff::default();
        for (key, fm) in &desired {
            match current.get(key) {
                None => diff.adds.push(fm.clone()),
                Some(old) if old == fm => {}
                Some(old) => diff.modifies.push(modification(old, fm)),
            }
        }
        for (key, old) in current {
            if !desired.contains_key(key) {
                diff.deletes.push(strict_delete(old));
            }
        }
        Ok(Update {
            owner,
            diff,
            flows: desired,
        })
    }

    /// Stores a prepared update (after the switch applied its diff).
    pub fn commit(&mut self, update: Update) {
        if let Some(old) = self.owners.remove(&update.owner) {
            for key in old.keys() {
                self.holders.remove(key);
            }
        }
        for key in update.flows.keys() {
            self.holders.insert(key.clone(), update.owner.clone());
        }
        if !update.flows.is_empty() {
            self.owners.insert(update.owner, update.flows);
        }
    }

    /// Replaces `owner`'s flows and returns the difference.
    pub fn replace(
        &mut self,
        owner: FlowOwner,
        flows: Vec<FlowMod>,
    ) -> Result<FlowDiff, FlowConflict> {
        let update = self.prepare(owner, flows)?;
        let diff = update.diff.clone();
        self.commit(update);
        Ok(diff)
    }

    /// Removes `owner` and returns the deletes of its flows.
    pub fn remove(&mut self, owner: &FlowOwner) -> FlowDiff {
        let deletes = self
            .owners
            .remove(owner)
            .map(|flows| {
                flows
                    .iter()
                    .map(|(key, fm)| {
                        self.holders.remove(key);
                        strict_delete(fm)
                    })
                    .collect()
            })
            .unwrap_or_default();
        FlowDiff {
            deletes,
            ..FlowDiff::default()
        }
    }

    /// The owners with flows.
    pub fn owners(&self) -> impl Iterator<Item = &FlowOwner> {
        self.owners.keys()
    }

    /// `owner`'s flows (as `add`s).
    pub fn flows_of(&self, owner: &FlowOwner) -> Vec<FlowMod> {
        self.owners
            .get(owner)
            .map(|f| f.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Every desired flow as an `add`, for a full install or a replay after reconnecting.
    pub fn all_flows(&self) -> Vec<FlowMod> {
        self.owners
            .values()
            .flat_map(|f| f.values().cloned())
            .collect()
    }
}

/// The flow mod that turns `old` into `new` (same key).
fn modification(old: &FlowMod, new: &FlowMod) -> FlowMod {
    let only_instructions = FlowMod {
        instructions: new.instructions.clone(),
        ..old.clone()
    } == *new;
    if only_instructions {
        FlowMod {
            command: FlowModCommand::ModifyStrict,
            ..new.clone()
        }
    } else {
        new.clone()
    }
}

/// `delete_strict` of `fm`'s key, whatever its cookie.
fn strict_delete(fm: &FlowMod) -> FlowMod {
    let mut del = FlowMod::new(FlowModCommand::DeleteStrict);
    del.table_id = fm.table_id;
    del.priority = fm.priority;
    del.flow_match = fm.flow_match.clone();
    del
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    fn fm(text: &str) -> FlowMod {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn round(n: u16) -> Round {
        Round::new(n).unwrap()
    }

    /// Applies `diff` to a switch table modelled as key → flow, the way OVS would.
    fn apply(table: &mut BTreeMap<FlowKey, FlowMod>, diff: &FlowDiff) {
        for m in diff.messages() {
            let key = FlowKey::of(m);
            match m.command {
                FlowModCommand::Add => {
                    table.insert(key, m.clone());
                }
                FlowModCommand::ModifyStrict => {
                    let flow = table
                        .get_mut(&key)
                        .expect("modify_strict of a missing flow");
                    flow.instructions = m.instructions.clone();
                }
                FlowModCommand::DeleteStrict => {
                    table.remove(&key).expect("delete_strict of a missing flow");
                }
                other => panic!("unexpected command {other:?}"),
            }
        }
    }

    #[test]
    fn identity_replace_is_empty() {
        let mut cache = FlowCache::new(round(1));
        let flows = vec![
            fm("table=1,priority=5,ip actions=drop"),
            fm("table=2,priority=5,arp actions=output:3"),
        ];
        assert_eq!(
            cache
                .replace(FlowOwner::Node, flows.clone())
                .unwrap()
                .adds
                .len(),
            2
        );
        assert!(cache.replace(FlowOwner::Node, flows).unwrap().is_empty());
    }

    #[test]
    fn diff_kinds() {
        let mut cache = FlowCache::new(round(1));
        let owner = FlowOwner::Peer("n2".into());
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
            .unwrap();
        let texts = |v: &[FlowMod]| v.iter().map(|m| m.to_string()).collect::<Vec<_>>();
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
            .unwrap();
        assert_eq!(diff.modifies[0].command, FlowModCommand::Add);
        let removed = cache.remove(&owner);
        assert_eq!(removed.deletes.len(), 2);
        assert!(cache.all_flows().is_empty());
        assert_eq!(cache.owners().count(), 0);
    }

    #[test]
    fn conflicts_between_owners() {
        let mut cache = FlowCache::new(round(1));
        let a = FlowOwner::Pod(model::PodKey::new("ns", "a"));
        let b = FlowOwner::Pod(model::PodKey::new("ns", "b"));
        cache
            .replace(
                a.clone(),
                vec![fm("table=5,priority=200,ip,nw_dst=10.0.0.5 actions=drop")],
            )
            .unwrap();
        let err = cache
            .replace(
                b.clone(),
                vec![fm(
                    "table=5,priority=200,ip,nw_dst=10.0.0.5 actions=output:2",
                )],
            )
            .unwrap_err();
        assert_eq!(err.holder, "pod:ns/a");
        assert_eq!(err.owner, "pod:ns/b");
        // Nothing was stored for b; once a lets go, b may take the key.
        assert!(cache.flows_of(&b).is_empty());
        cache.remove(&a);
        assert_eq!(
            cache
                .replace(
                    b.clone(),
                    vec![fm(
                        "table=5,priority=200,ip,nw_dst=10.0.0.5 actions=output:2"
                    )]
                )
                .unwrap()
                .adds
                .len(),
            1
        );
        // The same key twice in one owner's set is refused too.
        let twice = vec![
            fm("table=1,priority=1 actions=drop"),
            fm("table=1,priority=1 actions=output:1"),
        ];
        assert!(cache.replace(FlowOwner::Node, twice).is_err());
    }

    #[test]
    fn cookies_follow_round_and_owner() {
        let mut cache = FlowCache::new(round(4));
        let pod = FlowOwner::Pod(model::PodKey::new("default", "p1"));
        cache
            .replace(pod.clone(), vec![fm("table=1,priority=5,ip actions=drop")])
            .unwrap();
        let flows = cache.flows_of(&pod);
        assert_eq!(flows[0].cookie, pod.cookie(round(4)));
        assert_eq!(Round::of_cookie(flows[0].cookie), Some(round(4)));
        assert_ne!(FlowOwner::Node.cookie(round(4)), pod.cookie(round(4)));
        assert_ne!(pod.cookie(round(5)), pod.cookie(round(4)));
    }

    /// Flow sets over a small key space, so that old and new sets overlap.
    fn flow_set() -> impl Strategy<Value = Vec<FlowMod>> {
        proptest::collection::btree_map((0u8..3, 0u16..3, 0u32..4), 0u32..3, 0..12).prop_map(|m| {
            m.into_iter()
                .map(|((table, prio, dst), port)| {
                    let actions = if port == 0 {
                        "drop".to_string()
                    } else {
                        format!("output:{port}")
                    };
                    fm(&format!(
                        "table={table},priority={prio},ip,nw_dst=10.0.0.{dst} actions={actions}"
                    ))
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn applying_the_diff_yields_the_new_set(old in flow_set(), new in flow_set()) {
            let mut cache = FlowCache::new(round(1));
            let first = cache.replace(FlowOwner::Node, old).unwrap();
            let mut switch = BTreeMap::new();
            apply(&mut switch, &first);
            let diff = cache.replace(FlowOwner::Node, new).unwrap();
            apply(&mut switch, &diff);
            let expected: BTreeMap<FlowKey, FlowMod> = cache.all_flows().into_iter().map(|f| (FlowKey::of(&f), f)).collect();
            prop_assert_eq!(switch, expected);
            let again = cache.replace(FlowOwner::Node, cache.all_flows()).unwrap();
            prop_assert!(again.is_empty());
        }
    }
}
