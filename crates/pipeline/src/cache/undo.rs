//! [`Undo`]: what [`DesiredCache::commit_undoable`] replaced, so that a change stored while
//! the switch was still taking it can be put back when the switch refuses it
//! ([`DesiredCache::undo`]): each written key's previous entry (moved out, not copied), the keys
//! each owner gained and lost, the change of users per group and meter, and the owner kinds
//! the change introduced. Undoing restores the cache exactly as it was before the commit.

use std::collections::HashMap;

use openflow::msg::flow_mod::FlowMod;
use openflow::msg::group_mod::GroupDesc;
use openflow::msg::meter_mod::MeterDesc;

use super::desired::{DesiredCache, Held, Stored};
use super::object::{Object, Target};
use super::owner::Owner;

/// A written key's entry before the commit.
#[derive(Debug)]
pub(super) enum Before<T> {
    /// The key was not stored.
    Absent,
    /// The key held this object and these holders.
    Stored(Held<T>),
    /// Only the holders changed; these were they.
    Holders(Vec<Owner>),
}

/// What committing one kind's part replaced.
#[derive(Debug)]
pub(super) struct PartUndo<T: Object> {
    pub before: Vec<(T::Key, Before<T>)>,
    /// Per owner of the change (in its order): the keys it started and stopped holding.
    pub gained: Vec<Vec<T::Key>>,
    pub lost: Vec<Vec<T::Key>>,
}

impl<T: Stored> PartUndo<T> {
    fn undo(self, cache: &mut DesiredCache, owners: &[Owner]) {
        let store = T::store_mut(cache);
        for (key, before) in self.before {
            match before {
                Before::Absent => {
                    store.remove(&key);
                }
                Before::Stored(held) => {
                    store.insert(key, held);
                }
                Before::Holders(holders) => {
                    if let Some(held) = store.get_mut(&key) {
                        held.holders = holders;
                    }
                }
            }
        }
        for ((owner, gained), lost) in owners.iter().zip(self.gained).zip(self.lost) {
            let holdings = cache.owners.entry(owner.clone()).or_default();
            let held = T::held_mut(holdings);
            for key in &gained {
                held.remove(key);
            }
            held.extend(lost);
        }
    }
}

/// What one commit replaced (see the module's doc).
#[derive(Debug)]
pub struct Undo {
    pub(super) owners: Vec<Owner>,
    pub(super) flows: PartUndo<FlowMod>,
    pub(super) groups: PartUndo<GroupDesc>,
    pub(super) meters: PartUndo<MeterDesc>,
    pub(super) users: HashMap<Target, i64>,
    /// Owner kind names the commit recorded for the first time.
    pub(super) new_kinds: Vec<&'static str>,
}

impl DesiredCache {
    /// Puts back what the commit that returned `undo` replaced. Call it before any other
    /// change is prepared or committed (the installer serialises its changes), so the cache is
    /// as it was before that commit.
    pub fn undo(&mut self, undo: Undo) {
        let Undo {
            owners,
            flows,
            groups,
            meters,
            users,
            new_kinds,
        } = undo;
        flows.undo(self, &owners);
        groups.undo(self, &owners);
        meters.undo(self, &owners);
        for (target, delta) in users {
            self.add_users(target, -delta);
        }
        for owner in &owners {
            if self.owners.get(owner).is_some_and(|h| h.is_empty()) {
                self.owners.remove(owner);
            }
        }
        for name in new_kinds {
            self.kinds.remove(name);
        }
    }
}
