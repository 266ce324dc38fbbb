//! [`DesiredCache::prepare`]: checks a [`Change`] and computes its [`ChangeDiff`] without
//! storing anything. The result, [`Prepared`], is what [`DesiredCache::commit`] stores.
//!
//! Every owner update becomes intents per key: this owner wants the key with this object, or
//! lets go of it. A replacement also lets go of the owner's keys it does not list (a walk over
//! that owner's own set); a patch touches only its own keys. Each touched key is then resolved
//! against what is stored — its new holders, whether its content changes (the owners of a key
//! must agree on it), the mod that gets the switch there — and the references of what changed
//! are checked. Nothing walks the objects of owners the change does not touch.
//!
//! A change is refused ([`CacheError`]) when owners of one key want different content, when an
//! object uses a group or meter no owner wants afterwards, when the last holder lets go of a
//! group or meter something still uses (the switch would delete those flows with it), when a
//! group would forward to itself, or when an update lists a key twice, removes a key its owner
//! does not hold, or an owner appears twice.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::msg::group_mod::{GroupDesc, GroupMod};
use openflow::msg::meter_mod::{MeterDesc, MeterMod};

use super::change::{Change, Update};
use super::desired::{DesiredCache, Held, Stored};
use super::diff::{ChangeDiff, Diff};
use super::object::{Object, Target};
use super::order::{dependency_order, reaches_itself};
use super::owner::{Owner, OwnerKind};
use super::undo::{Before, PartUndo};
use crate::cookie::Round;
use crate::error::CacheError;

/// A checked change, ready to send and then to [`DesiredCache::commit`].
#[derive(Debug)]
pub struct Prepared {
    /// What the change sends.
    pub diff: ChangeDiff,
    /// The meter mods that undo `diff.steps().before`, one for one and in the same order: a
    /// delete for each added meter, the old configuration for each modified one.
    pub undo_before: Vec<MeterMod>,
    pub(super) owners: Vec<Owner>,
    pub(super) flows: Part<FlowMod>,
    pub(super) groups: Part<GroupDesc>,
    pub(super) meters: Part<MeterDesc>,
    /// Change of the number of users of each group and meter.
    pub(super) users: HashMap<Target, i64>,
}

/// A few values, the first one inline: most keys have one wanter and no dropper.
#[derive(Debug)]
struct Few<T> {
    first: Option<T>,
    rest: Vec<T>,
}

impl<T: Copy> Few<T> {
    fn new() -> Few<T> {
        Few {
            first: None,
            rest: Vec::new(),
        }
    }

    fn push(&mut self, value: T) {
        match self.first {
            None => self.first = Some(value),
            Some(_) => self.rest.push(value),
        }
    }

    fn last(&self) -> Option<T> {
        self.rest.last().copied().or(self.first)
    }

    fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.first.into_iter().chain(self.rest.iter().copied())
    }
}

/// What the owners of a change want for one key: `(update, item)` of each owner wanting it,
/// and the updates whose owners let go of it.
#[derive(Debug)]
struct Intent {
    /// When the change first touched the key: diffs keep that order.
    seq: u32,
    wants: Few<(u32, u32)>,
    drops: Few<u32>,
}

/// How a touched key ends up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Write {
    /// Stores input `item` of update `update`, held by `holders`.
    Set {
        update: u32,
        item: u32,
        holders: Vec<Owner>,
    },
    /// The stored object stays; its holders change.
    Holders(Vec<Owner>),
    /// No holder is left; `by` is the last update that let go.
    Delete { by: u32 },
}

/// One kind's part of a prepared change.
#[derive(Debug)]
pub(super) struct Part<T: Object> {
    /// The normalised (and stamped) objects of each update.
    inputs: Vec<Vec<T>>,
    /// The touched keys whose state changes, in the order the change first touched them.
    writes: Vec<(T::Key, Write)>,
    /// Per update: the keys its owner starts holding, and stops holding.
    gained: Vec<Vec<T::Key>>,
    lost: Vec<Vec<T::Key>>,
}

/// Builds one kind's intents from the updates.
struct Intents<T: Object> {
    inputs: Vec<Vec<T>>,
    intents: HashMap<T::Key, Intent>,
    gained: Vec<Vec<T::Key>>,
    lost: Vec<Vec<T::Key>>,
}

impl<T: Stored> Intents<T> {
    fn new(updates: usize) -> Intents<T> {
        Intents {
            inputs: (0..updates).map(|_| Vec::new()).collect(),
            intents: HashMap::new(),
            gained: vec![Vec::new(); updates],
            lost: vec![Vec::new(); updates],
        }
    }

    fn intent(&mut self, key: T::Key) -> &mut Intent {
        let seq = self.intents.len() as u32;
        self.intents.entry(key).or_insert_with(|| Intent {
            seq,
            wants: Few::new(),
            drops: Few::new(),
        })
    }

    /// Whether update `u` wants `key` (its wants are the last ones pushed so far).
    fn wanted_by(&self, u: u32, key: &T::Key) -> bool {
        self.intents
            .get(key)
            .and_then(|i| i.wants.last())
            .is_some_and(|(w, _)| w == u)
    }

    fn want(
        &mut self,
        u: u32,
        owner: &Owner,
        object: T,
        held: Option<&BTreeSet<T::Key>>,
    ) -> Result<(), CacheError> {
        let object = object.normalized();
        let key = object.key();
        let ui = u as usize;
        let item = self.inputs[ui].len() as u32;
        let gained = (!held.is_some_and(|h| h.contains(&key))).then(|| key.clone());
        let intent = self.intent(key);
        if intent.wants.last().is_some_and(|(w, _)| w == u) {
            return Err(CacheError::Duplicate {
                object: object.describe(),
                owner: owner.to_string(),
            });
        }
        intent.wants.push((u, item));
        self.inputs[ui].push(object);
        self.gained[ui].extend(gained);
        Ok(())
    }

    fn drop(&mut self, u: u32, key: &T::Key) {
        self.intent(key.clone()).drops.push(u);
        self.lost[u as usize].push(key.clone());
    }

    /// Update `u` replaces its owner's whole set by `objects`.
    fn replace(
        &mut self,
        u: u32,
        owner: &Owner,
        objects: Vec<T>,
        held: Option<&BTreeSet<T::Key>>,
    ) -> Result<(), CacheError> {
        self.inputs[u as usize].reserve(objects.len());
        for object in objects {
            self.want(u, owner, object, held)?;
        }
        for key in held.into_iter().flatten() {
            if !self.wanted_by(u, key) {
                self.drop(u, key);
            }
        }
        Ok(())
    }

    /// Update `u` sets `upserts` and lets go of `removes`.
    fn patch(
        &mut self,
        u: u32,
        owner: &Owner,
        upserts: Vec<T>,
        removes: Vec<T::Key>,
        held: Option<&BTreeSet<T::Key>>,
    ) -> Result<(), CacheError> {
        for object in upserts {
            self.want(u, owner, object, held)?;
        }
        for key in removes {
            let object = || T::describe_key(&key);
            let owner = owner.to_string();
            if !held.is_some_and(|h| h.contains(&key)) {
                return Err(CacheError::NotHeld {
                    object: object(),
                    owner,
                });
            }
            if self.wanted_by(u, &key) {
                return Err(CacheError::SetAndRemoved {
                    object: object(),
                    owner,
                });
            }
            if self.intents.get(&key).and_then(|i| i.drops.last()) == Some(u) {
                return Err(CacheError::Duplicate {
                    object: object(),
                    owner,
                });
            }
            self.drop(u, &key);
        }
        Ok(())
    }

    /// Resolves every touched key against `store` and stamps the objects to store.
    fn resolve(
        self,
        store: &HashMap<T::Key, Held<T>>,
        owners: &[Owner],
        round: Round,
    ) -> Result<Part<T>, CacheError> {
        let Intents {
            mut inputs,
            intents,
            gained,
            lost,
        } = self;
        let mut touched: Vec<(T::Key, Intent)> = intents.into_iter().collect();
        touched.sort_unstable_by_key(|(_, intent)| intent.seq);
        let mut writes = Vec::new();
        for (key, intent) in touched {
            let old = store.get(&key);
            if let Some(write) = resolve_key(&intent, old, &inputs, owners)? {
                if let Write::Set { update, item, .. } = &write {
                    let cookie = match old {
                        Some(held) => held.object.cookie(),
                        None => owners[*update as usize].cookie(round),
                    };
                    inputs[*update as usize][*item as usize].stamp(cookie);
                }
                writes.push((key, write));
            }
        }
        Ok(Part {
            inputs,
            writes,
            gained,
            lost,
        })
    }
}

/// The new state of one touched key, or `None` when nothing changes.
fn resolve_key<T: Object>(
    intent: &Intent,
    old: Option<&Held<T>>,
    inputs: &[Vec<T>],
    owners: &[Owner],
) -> Result<Option<Write>, CacheError> {
    let input = |(u, i): (u32, u32)| &inputs[u as usize][i as usize];
    let owner = |u: u32| &owners[u as usize];
    // The common case, first: one of the key's holders wants it again, unchanged.
    if let (Some(held), Some(want), true, true) = (
        old,
        intent.wants.first,
        intent.wants.rest.is_empty(),
        intent.drops.first.is_none(),
    ) && held.holders.contains(owner(want.0))
        && input(want).same(&held.object)
    {
        return Ok(None);
    }
    let touches = |o: &Owner| {
        intent.wants.iter().any(|(u, _)| owner(u) == o)
            || intent.drops.iter().any(|u| owner(u) == o)
    };
    // Holders the change does not touch keep wanting the stored object.
    let mut agreed: Option<(&T, &Owner)> = old.and_then(|h| {
        h.holders
            .iter()
            .find(|o| !touches(o))
            .map(|o| (&h.object, o))
    });
    for (u, i) in intent.wants.iter() {
        let object = input((u, i));
        match agreed {
            Some((other, holder)) if !object.same(other) => {
                return Err(CacheError::Conflict {
                    object: object.describe(),
                    owner: owner(u).to_string(),
                    holder: holder.to_string(),
                });
            }
            Some(_) => {}
            None => agreed = Some((object, owner(u))),
        }
    }
    let mut holders = old.map(|h| h.holders.clone()).unwrap_or_default();
    for u in intent.drops.iter() {
        holders.retain(|o| o != owner(u));
    }
    for (u, _) in intent.wants.iter() {
        if let Err(at) = holders.binary_search(owner(u)) {
            holders.insert(at, owner(u).clone());
        }
    }
    let changed_holders =
        |h: &Held<T>| (holders != h.holders).then(|| Write::Holders(holders.clone()));
    Ok(match (old, intent.wants.first, intent.drops.last()) {
        (None, None, _) => None,
        (Some(_), None, Some(by)) if holders.is_empty() => Some(Write::Delete { by }),
        (Some(h), None, _) => changed_holders(h),
        (Some(h), Some(first), _) if input(first).same(&h.object) => changed_holders(h),
        (_, Some((update, item)), _) => Some(Write::Set {
            update,
            item,
            holders,
        }),
    })
}

/// The mods of one kind.
pub(super) trait Mods: Stored {
    type Mod;
    fn add(new: &Self) -> Self::Mod;
    fn modify(old: &Self, new: &Self) -> Self::Mod;
    fn delete(key: &Self::Key) -> Self::Mod;
}

impl Mods for FlowMod {
    type Mod = FlowMod;

    fn add(new: &FlowMod) -> FlowMod {
        new.clone()
    }

    /// `modify_strict` when only the instructions differ (it keeps the counters), else an
    /// `add` that replaces the flow.
    fn modify(old: &FlowMod, new: &FlowMod) -> FlowMod {
        let with_new_instructions = FlowMod {
            instructions: new.instructions.clone(),
            ..old.clone()
        };
        let only_instructions = new.same(&with_new_instructions) && new.cookie == old.cookie;
        FlowMod {
            command: if only_instructions {
                FlowModCommand::ModifyStrict
            } else {
                FlowModCommand::Add
            },
            ..new.clone()
        }
    }

    fn delete(key: &super::key::FlowKey) -> FlowMod {
        key.delete_strict()
    }
}

impl Mods for GroupDesc {
    type Mod = GroupMod;

    fn add(new: &GroupDesc) -> GroupMod {
        GroupMod::add(new.clone())
    }

    fn modify(_old: &GroupDesc, new: &GroupDesc) -> GroupMod {
        GroupMod::modify(new.clone())
    }

    fn delete(key: &u32) -> GroupMod {
        GroupMod::delete(*key)
    }
}

impl Mods for MeterDesc {
    type Mod = MeterMod;

    fn add(new: &MeterDesc) -> MeterMod {
        MeterMod::add(new.clone())
    }

    fn modify(_old: &MeterDesc, new: &MeterDesc) -> MeterMod {
        MeterMod::modify(new.clone())
    }

    fn delete(key: &u32) -> MeterMod {
        MeterMod::delete(*key)
    }
}

impl<T: Mods> Part<T> {
    fn input(&self, update: u32, item: u32) -> &T {
        &self.inputs[update as usize][item as usize]
    }

    /// The mods of this part, in the order the change touched the keys.
    fn diff(&self, store: &HashMap<T::Key, Held<T>>) -> Diff<T::Mod> {
        let mut diff = Diff::default();
        for (key, write) in &self.writes {
            match (write, store.get(key)) {
                (Write::Set { update, item, .. }, None) => {
                    diff.adds.push(T::add(self.input(*update, *item)))
                }
                (Write::Set { update, item, .. }, Some(old)) => diff
                    .modifies
                    .push(T::modify(&old.object, self.input(*update, *item))),
                (Write::Delete { .. }, _) => diff.deletes.push(T::delete(key)),
                (Write::Holders(_), _) => {}
            }
        }
        diff
    }

    /// The object `key` holds after the change: `Some(None)` when deleted, `None` when the
    /// change does not set or delete it.
    fn after<'a>(&'a self, store: &'a HashMap<T::Key, Held<T>>) -> HashMap<T::Key, Option<&'a T>> {
        self.writes
            .iter()
            .map(|(key, write)| {
                let object = match write {
                    Write::Set { update, item, .. } => Some(self.input(*update, *item)),
                    Write::Holders(_) => store.get(key).map(|h| &h.object),
                    Write::Delete { .. } => None,
                };
                (key.clone(), object)
            })
            .collect()
    }

    /// Adds the change of the users of each target (old content -1, new content +1).
    fn count_users(&self, store: &HashMap<T::Key, Held<T>>, users: &mut HashMap<Target, i64>) {
        let mut targets = Vec::new();
        for (key, write) in &self.writes {
            if matches!(write, Write::Holders(_)) {
                continue;
            }
            if let Some(old) = store.get(key) {
                old.object.targets(&mut targets);
                for t in targets.drain(..) {
                    *users.entry(t).or_default() -= 1;
                }
            }
            if let Write::Set { update, item, .. } = write {
                self.input(*update, *item).targets(&mut targets);
                for t in targets.drain(..) {
                    *users.entry(t).or_default() += 1;
                }
            }
        }
    }

    /// Fails when an object this part sets uses a target that does not exist afterwards.
    fn check_targets(
        &self,
        owners: &[Owner],
        exists: &impl Fn(Target) -> bool,
    ) -> Result<(), CacheError> {
        let mut targets = Vec::new();
        for (_, write) in &self.writes {
            if let Write::Set { update, item, .. } = write {
                let object = self.input(*update, *item);
                object.targets(&mut targets);
                if let Some(missing) = targets.drain(..).find(|t| !exists(*t)) {
                    return Err(CacheError::MissingTarget {
                        object: object.describe(),
                        owner: owners[*update as usize].to_string(),
                        target: missing.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Fails when this part deletes a target that something still uses afterwards.
    fn check_unused(
        &self,
        owners: &[Owner],
        target: impl Fn(&T::Key) -> Target,
        users_after: &impl Fn(Target) -> i64,
    ) -> Result<(), CacheError> {
        for (key, write) in &self.writes {
            if let Write::Delete { by } = write {
                let users = users_after(target(key));
                if users > 0 {
                    return Err(CacheError::StillUsed {
                        object: T::describe_key(key),
                        owner: owners[*by as usize].to_string(),
                        users: u32::try_from(users).unwrap_or(u32::MAX),
                    });
                }
            }
        }
        Ok(())
    }

    /// Moves the written objects into `cache` and updates the owners' holdings; returns what
    /// it replaced.
    pub(super) fn commit(self, cache: &mut DesiredCache, owners: &[Owner]) -> PartUndo<T> {
        let Part {
            inputs,
            writes,
            gained,
            lost,
        } = self;
        let mut sets = Vec::new();
        let mut before = Vec::with_capacity(writes.len());
        let store = T::store_mut(cache);
        for (key, write) in writes {
            match write {
                Write::Set {
                    update,
                    item,
                    holders,
                } => sets.push((update, item, key, holders)),
                Write::Holders(holders) => {
                    if let Some(held) = store.get_mut(&key) {
                        let was = std::mem::replace(&mut held.holders, holders);
                        before.push((key, Before::Holders(was)));
                    }
                }
                Write::Delete { .. } => {
                    if let Some(held) = store.remove(&key) {
                        before.push((key, Before::Stored(held)));
                    }
                }
            }
        }
        // Move the set objects out of the inputs in input order, into room made once.
        store.reserve(sets.len());
        sets.sort_unstable_by_key(|(update, item, _, _)| (*update, *item));
        let mut sets = sets.into_iter().peekable();
        for (update, objects) in inputs.into_iter().enumerate() {
            for (item, object) in objects.into_iter().enumerate() {
                if let Some((_, _, key, holders)) =
                    sets.next_if(|(u, i, _, _)| (*u as usize, *i as usize) == (update, item))
                {
                    let object = object.stored();
                    let was = store.insert(key.clone(), Held { object, holders });
                    before.push((key, was.map_or(Before::Absent, Before::Stored)));
                }
            }
        }
        for (u, owner) in owners.iter().enumerate() {
            let holdings = cache.owners.entry(owner.clone()).or_default();
            let held = T::held_mut(holdings);
            for key in &lost[u] {
                held.remove(key);
            }
            held.extend(gained[u].iter().cloned());
        }
        PartUndo {
            before,
            gained,
            lost,
        }
    }
}

/// Fails if `kind` shares a name or a category with another kind the cache or the change has.
fn check_kind(
    known: &BTreeMap<&'static str, OwnerKind>,
    in_change: &BTreeMap<&'static str, OwnerKind>,
    kind: OwnerKind,
) -> Result<(), CacheError> {
    let clash = known
        .values()
        .chain(in_change.values())
        .copied()
        .find(|o| *o != kind && (o.name() == kind.name() || o.category() == kind.category()));
    match clash {
        Some(other) => Err(CacheError::KindClash {
            kind: kind.name(),
            category: kind.category().get(),
            other: other.name(),
            other_category: other.category().get(),
        }),
        None => Ok(()),
    }
}

/// Orders `mods` (group adds) so that every group comes after the groups of the list it uses.
fn order_adds(mods: &mut Vec<GroupMod>) {
    let groups: Vec<&GroupDesc> = mods.iter().map(|m| &m.group).collect();
    if let Ok(order) = dependency_order(&groups) {
        let mut taken: Vec<Option<GroupMod>> = std::mem::take(mods).into_iter().map(Some).collect();
        mods.extend(order.into_iter().filter_map(|i| taken[i].take()));
    }
}

/// Orders `mods` (group deletes) so that every group comes before the groups it used.
fn order_deletes(mods: &mut [GroupMod], store: &HashMap<u32, Held<GroupDesc>>) {
    let old: Vec<&GroupDesc> = mods
        .iter()
        .filter_map(|m| store.get(&m.group.group_id).map(|h| &h.object))
        .collect();
    if old.len() != mods.len() {
        return;
    }
    if let Ok(order) = dependency_order(&old) {
        let ids: Vec<u32> = order.iter().rev().map(|&i| old[i].group_id).collect();
        for (m, id) in mods.iter_mut().zip(ids) {
            *m = GroupMod::delete(id);
        }
    }
}

impl DesiredCache {
    /// Checks `change` and computes what it sends, storing nothing (see the module doc).
    pub fn prepare(&self, change: Change) -> Result<Prepared, CacheError> {
        let n = change.updates.len();
        let mut owners: Vec<Owner> = Vec::with_capacity(n);
        let mut seen: HashSet<&Owner> = HashSet::with_capacity(n);
        let mut kinds: BTreeMap<&'static str, OwnerKind> = BTreeMap::new();
        for (owner, _) in &change.updates {
            if !seen.insert(owner) {
                return Err(CacheError::OwnerTwice {
                    owner: owner.to_string(),
                });
            }
            check_kind(&self.kinds, &kinds, owner.kind())?;
            kinds.insert(owner.kind().name(), owner.kind());
            owners.push(owner.clone());
        }
        drop(seen);
        let mut flows = Intents::<FlowMod>::new(n);
        let mut groups = Intents::<GroupDesc>::new(n);
        let mut meters = Intents::<MeterDesc>::new(n);
        for (u, (owner, update)) in change.updates.into_iter().enumerate() {
            let u = u as u32;
            let held = self.owners.get(&owner);
            let held_flows = held.map(|h| &h.flows);
            let held_groups = held.map(|h| &h.groups);
            let held_meters = held.map(|h| &h.meters);
            match update {
                Update::Replace(objects) => {
                    flows.replace(u, &owner, objects.flows, held_flows)?;
                    groups.replace(u, &owner, objects.groups, held_groups)?;
                    meters.replace(u, &owner, objects.meters, held_meters)?;
                }
                Update::Patch(patch) => {
                    flows.patch(
                        u,
                        &owner,
                        patch.upsert.flows,
                        patch.remove_flows,
                        held_flows,
                    )?;
                    groups.patch(
                        u,
                        &owner,
                        patch.upsert.groups,
                        patch.remove_groups,
                        held_groups,
                    )?;
                    meters.patch(
                        u,
                        &owner,
                        patch.upsert.meters,
                        patch.remove_meters,
                        held_meters,
                    )?;
                }
            }
        }
        let flows = flows.resolve(&self.flows, &owners, self.round)?;
        let groups = groups.resolve(&self.groups, &owners, self.round)?;
        let meters = meters.resolve(&self.meters, &owners, self.round)?;

        let groups_after = groups.after(&self.groups);
        let meters_after = meters.after(&self.meters);
        let group_after = |id: u32| match groups_after.get(&id) {
            Some(after) => *after,
            None => self.groups.get(&id).map(|h| &h.object),
        };
        let exists = |t: Target| match t {
            Target::Group(id) => group_after(id).is_some(),
            Target::Meter(id) => match meters_after.get(&id) {
                Some(after) => after.is_some(),
                None => self.meters.contains_key(&id),
            },
        };
        flows.check_targets(&owners, &exists)?;
        groups.check_targets(&owners, &exists)?;
        for (_, write) in &groups.writes {
            if let Write::Set { update, item, .. } = write {
                let group = groups.input(*update, *item);
                if reaches_itself(group, group_after) {
                    return Err(CacheError::Cycle {
                        object: group.describe(),
                        owner: owners[*update as usize].to_string(),
                    });
                }
            }
        }
        let mut users = HashMap::new();
        flows.count_users(&self.flows, &mut users);
        groups.count_users(&self.groups, &mut users);
        let users_after = |t: Target| {
            i64::from(self.users.get(&t).copied().unwrap_or(0))
                + users.get(&t).copied().unwrap_or(0)
        };
        groups.check_unused(&owners, |id| Target::Group(*id), &users_after)?;
        meters.check_unused(&owners, |id| Target::Meter(*id), &users_after)?;

        let mut group_diff = groups.diff(&self.groups);
        order_adds(&mut group_diff.adds);
        order_deletes(&mut group_diff.deletes, &self.groups);
        let meter_diff = meters.diff(&self.meters);
        let undo_before = meter_diff
            .adds
            .iter()
            .map(|m| MeterMod::delete(m.meter.meter_id))
            .chain(meter_diff.modifies.iter().filter_map(|m| {
                self.meters
                    .get(&m.meter.meter_id)
                    .map(|old| MeterMod::modify(old.object.clone()))
            }))
            .collect();
        users.retain(|_, delta| *delta != 0);
        Ok(Prepared {
            diff: ChangeDiff {
                flows: flows.diff(&self.flows),
                groups: group_diff,
                meters: meter_diff,
            },
            undo_before,
            owners,
            flows,
            groups,
            meters,
            users,
        })
    }
}
