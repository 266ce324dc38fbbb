//! [`Change`]: what a caller asks of the cache in one go — updates of one or more owners, each
//! replacing the owner's whole set ([`Objects`]) or patching given keys of it ([`Patch`]). A
//! change is prepared, sent to the switch as one bundle, and committed, as a whole.

use openflow::msg::flow_mod::FlowMod;
use openflow::msg::group_mod::GroupDesc;
use openflow::msg::meter_mod::MeterDesc;

use super::key::FlowKey;
use super::owner::Owner;

/// Flows, groups and meters an owner wants. Flows are `add`s; the cache sets their command
/// and cookie.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Objects {
    pub flows: Vec<FlowMod>,
    pub groups: Vec<GroupDesc>,
    pub meters: Vec<MeterDesc>,
}

impl Objects {
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty() && self.groups.is_empty() && self.meters.is_empty()
    }
}

impl From<Vec<FlowMod>> for Objects {
    /// Flows only.
    fn from(flows: Vec<FlowMod>) -> Objects {
        Objects {
            flows,
            ..Objects::default()
        }
    }
}

/// Keys of an owner to set or drop, leaving its other objects alone. Its cost is in the size of
/// the patch, not of the owner's set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch {
    /// Objects to add to the owner's set, or to replace there (same key).
    pub upsert: Objects,
    /// Flows the owner lets go of (it must hold them).
    pub remove_flows: Vec<FlowKey>,
    /// Groups the owner lets go of, by id.
    pub remove_groups: Vec<u32>,
    /// Meters the owner lets go of, by id.
    pub remove_meters: Vec<u32>,
}

/// How a change updates one owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// The owner's whole set becomes these objects (empty: the owner goes away).
    Replace(Objects),
    /// Only these keys of the owner change.
    Patch(Patch),
}

/// Updates of several owners, applied together (one bundle) or not at all. An owner appears at
/// most once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    pub(crate) updates: Vec<(Owner, Update)>,
}

impl Change {
    pub fn new() -> Change {
        Change::default()
    }

    /// Adds the replacement of `owner`'s whole set by `objects`.
    pub fn replace(mut self, owner: Owner, objects: impl Into<Objects>) -> Change {
        self.updates.push((owner, Update::Replace(objects.into())));
        self
    }

    /// Adds the removal of everything `owner` has.
    pub fn remove(self, owner: Owner) -> Change {
        self.replace(owner, Objects::default())
    }

    /// Adds a patch of `owner`'s set.
    pub fn patch(mut self, owner: Owner, patch: Patch) -> Change {
        self.updates.push((owner, Update::Patch(patch)));
        self
    }

    /// The owners the change updates, in order.
    pub fn owners(&self) -> impl Iterator<Item = &Owner> {
        self.updates.iter().map(|(owner, _)| owner)
    }

    /// `the objects of pod:ns/a, service:x`: what the change is about, for error messages.
    pub fn describe(&self) -> String {
        let owners: Vec<String> = self.owners().map(Owner::to_string).collect();
        format!("the objects of {}", owners.join(", "))
    }
}
