//! [`DesiredCache`]: every owner's desired flows, groups and meters. Each key is stored once,
//! with the owners that want it (a shared key is installed once and deleted when its last
//! holder lets go), and the cache counts how many stored flows and groups use each group and
//! meter. Updates are two-phase: [`DesiredCache::prepare`] (in `prepare.rs`) checks a
//! [`Change`] and computes what it sends without storing anything; [`DesiredCache::commit`]
//! stores it once the switch applied it.
//!
//! **Cookies.** A flow carries the cookie of the owner that installed its key, in the cache's
//! round. Owners that join a shared key later do not re-stamp it, and it keeps that cookie as
//! long as any holder remains, also after the installing owner let go: a new cookie would take
//! an `add` that resets the flow's counters. The cookie is for reading dumps; the cache says who
//! holds a flow. A new round (a new cache) stamps every flow again.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use openflow::msg::flow_mod::FlowMod;
use openflow::msg::group_mod::GroupDesc;
use openflow::msg::meter_mod::MeterDesc;

use super::change::{Change, Objects};
use super::diff::ChangeDiff;
use super::key::FlowKey;
use super::object::{Object, Target};
use super::order::dependency_order;
use super::owner::{Owner, OwnerKind};
use super::prepare::Prepared;
use super::undo::Undo;
use crate::cookie::Round;
use crate::error::CacheError;

/// An object, as [`Object::stored`] (a flow without its match, which its key holds), and the
/// owners that want it (sorted, never empty).
#[derive(Debug, Clone)]
pub(super) struct Held<T> {
    pub object: T,
    pub holders: Vec<Owner>,
}

/// The keys one owner holds.
#[derive(Debug, Clone, Default)]
pub(super) struct Holdings {
    pub flows: BTreeSet<FlowKey>,
    pub groups: BTreeSet<u32>,
    pub meters: BTreeSet<u32>,
}

impl Holdings {
    pub(super) fn is_empty(&self) -> bool {
        self.flows.is_empty() && self.groups.is_empty() && self.meters.is_empty()
    }
}

/// The desired objects of every owner, for one round.
#[derive(Debug, Clone)]
pub struct DesiredCache {
    pub(super) round: Round,
    pub(super) flows: HashMap<FlowKey, Held<FlowMod>>,
    pub(super) groups: HashMap<u32, Held<GroupDesc>>,
    pub(super) meters: HashMap<u32, Held<MeterDesc>>,
    pub(super) owners: BTreeMap<Owner, Holdings>,
    /// How many stored flows and groups use each group and meter (never 0).
    pub(super) users: HashMap<Target, u32>,
    /// The owner kinds met so far, by name: two kinds may not share a name or a category.
    pub(super) kinds: BTreeMap<&'static str, OwnerKind>,
}

/// Access to one kind's store and holdings, so that preparing and committing are written once
/// for flows, groups and meters.
pub(super) trait Stored: Object {
    fn store_mut(cache: &mut DesiredCache) -> &mut HashMap<Self::Key, Held<Self>>;
    fn held_mut(holdings: &mut Holdings) -> &mut BTreeSet<Self::Key>;
}

impl Stored for FlowMod {
    fn store_mut(cache: &mut DesiredCache) -> &mut HashMap<FlowKey, Held<FlowMod>> {
        &mut cache.flows
    }
    fn held_mut(holdings: &mut Holdings) -> &mut BTreeSet<FlowKey> {
        &mut holdings.flows
    }
}

impl Stored for GroupDesc {
    fn store_mut(cache: &mut DesiredCache) -> &mut HashMap<u32, Held<GroupDesc>> {
        &mut cache.groups
    }
    fn held_mut(holdings: &mut Holdings) -> &mut BTreeSet<u32> {
        &mut holdings.groups
    }
}

impl Stored for MeterDesc {
    fn store_mut(cache: &mut DesiredCache) -> &mut HashMap<u32, Held<MeterDesc>> {
        &mut cache.meters
    }
    fn held_mut(holdings: &mut Holdings) -> &mut BTreeSet<u32> {
        &mut holdings.meters
    }
}

impl DesiredCache {
    /// An empty cache whose flows get cookies of `round`.
    pub fn new(round: Round) -> DesiredCache {
        DesiredCache {
            round,
            flows: HashMap::new(),
            groups: HashMap::new(),
            meters: HashMap::new(),
            owners: BTreeMap::new(),
            users: HashMap::new(),
            kinds: BTreeMap::new(),
        }
    }

    /// The round stamped on the flows.
    pub fn round(&self) -> Round {
        self.round
    }

    /// Stores a prepared change (after the switch applied its diff); returns that diff.
    pub fn commit(&mut self, prepared: Prepared) -> ChangeDiff {
        self.commit_undoable(prepared).0
    }

    /// Stores a prepared change; returns its diff and what it replaced, for
    /// [`DesiredCache::undo`] should the switch refuse the diff (the installer stores a change
    /// while the switch takes it).
    pub fn commit_undoable(&mut self, prepared: Prepared) -> (ChangeDiff, Undo) {
        let Prepared {
            diff,
            owners,
            flows,
            groups,
            meters,
            users,
            ..
        } = prepared;
        let flows = flows.commit(self, &owners);
        let groups = groups.commit(self, &owners);
        let meters = meters.commit(self, &owners);
        for (&target, &delta) in &users {
            self.add_users(target, delta);
        }
        let mut new_kinds = Vec::new();
        for owner in &owners {
            if self.owners.get(owner).is_some_and(Holdings::is_empty) {
                self.owners.remove(owner);
            }
            if self
                .kinds
                .insert(owner.kind().name(), owner.kind())
                .is_none()
            {
                new_kinds.push(owner.kind().name());
            }
        }
        let undo = Undo {
            owners,
            flows,
            groups,
            meters,
            users,
            new_kinds,
        };
        (diff, undo)
    }

    /// Changes the number of stored objects that use `target` by `delta` (none left: removed).
    pub(super) fn add_users(&mut self, target: Target, delta: i64) {
        let count = i64::from(self.users.get(&target).copied().unwrap_or(0)) + delta;
        match u32::try_from(count) {
            Ok(0) | Err(_) => self.users.remove(&target),
            Ok(n) => self.users.insert(target, n),
        };
    }

    /// Prepares and commits `change` at once (no switch involved: filling a cache for a new
    /// round, or tests).
    pub fn apply(&mut self, change: Change) -> Result<ChangeDiff, CacheError> {
        let prepared = self.prepare(change)?;
        Ok(self.commit(prepared))
    }

    /// Replaces `owner`'s whole set by `objects` (see [`DesiredCache::apply`]).
    pub fn replace(
        &mut self,
        owner: Owner,
        objects: impl Into<Objects>,
    ) -> Result<ChangeDiff, CacheError> {
        self.apply(Change::new().replace(owner, objects))
    }

    /// Removes everything `owner` has (see [`DesiredCache::apply`]).
    pub fn remove(&mut self, owner: Owner) -> Result<ChangeDiff, CacheError> {
        self.apply(Change::new().remove(owner))
    }

    /// The owners with objects.
    pub fn owners(&self) -> impl Iterator<Item = &Owner> {
        self.owners.keys()
    }

    /// What `owner` wants (flows as `add`s with their cookies).
    pub fn objects_of(&self, owner: &Owner) -> Objects {
        let Some(holdings) = self.owners.get(owner) else {
            return Objects::default();
        };
        Objects {
            flows: objects(&self.flows, &holdings.flows),
            groups: objects(&self.groups, &holdings.groups),
            meters: objects(&self.meters, &holdings.meters),
        }
    }

    /// The owners that want the flow with `key`.
    pub fn flow_holders(&self, key: &FlowKey) -> &[Owner] {
        self.flows.get(key).map_or(&[], |h| &h.holders)
    }

    /// The owners that want group `id`.
    pub fn group_holders(&self, id: u32) -> &[Owner] {
        self.groups.get(&id).map_or(&[], |h| &h.holders)
    }

    /// How many desired flows each table holds (tables without any are absent).
    pub fn flows_per_table(&self) -> BTreeMap<u8, usize> {
        let mut counts = BTreeMap::new();
        for key in self.flows.keys() {
            *counts.entry(key.table_id()).or_default() += 1;
        }
        counts
    }

    /// How many groups are desired.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// Every desired flow as an `add`, for a full install or a replay after reconnecting.
    pub fn all_flows(&self) -> Vec<FlowMod> {
        self.flows
            .iter()
            .map(|(key, h)| h.object.unstored(key))
            .collect()
    }

    /// Every desired group, each after the groups it uses.
    pub fn all_groups(&self) -> Vec<GroupDesc> {
        let mut groups: Vec<&GroupDesc> = self.groups.values().map(|h| &h.object).collect();
        groups.sort_by_key(|g| g.group_id);
        // `prepare` refuses groups that reach themselves, so there is an order; were there
        // none, the switch would refuse the groups in id order and say so.
        let order = dependency_order(&groups).unwrap_or_else(|_| (0..groups.len()).collect());
        order.into_iter().map(|i| groups[i].clone()).collect()
    }

    /// Every desired meter.
    pub fn all_meters(&self) -> Vec<MeterDesc> {
        let mut meters: Vec<MeterDesc> = self.meters.values().map(|h| h.object.clone()).collect();
        meters.sort_by_key(|m| m.meter_id);
        meters
    }
}

fn objects<T: Object>(store: &HashMap<T::Key, Held<T>>, keys: &BTreeSet<T::Key>) -> Vec<T> {
    keys.iter()
        .filter_map(|k| store.get(k).map(|h| h.object.unstored(k)))
        .collect()
}
