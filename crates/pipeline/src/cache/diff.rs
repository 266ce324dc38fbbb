//! [`ChangeDiff`]: the flow, group and meter mods that turn the switch's objects into the
//! desired ones after a change, and [`Steps`]: the order they go to the switch in.
//!
//! The order keeps every reference valid at every message (the switch refuses a flow or group
//! that uses a missing group or meter, and deleting a group or meter silently deletes the flows
//! that use it):
//!
//! 1. before the bundle, confirmed: meter adds and modifies (Open vSwitch refuses meter mods
//!    inside bundles);
//! 2. one atomic bundle: group adds (a group after the groups it uses), group modifies, flow
//!    deletes, flow modifies, flow adds, group deletes (a group before the groups it uses). A
//!    group add or modify too long for one message is its command with the first buckets and
//!    then bucket inserts, one after the other: the group is whole before the next mod;
//! 3. after the bundle: meter deletes.

use openflow::EncodeError;
use openflow::conn::Encoded;
use openflow::msg::bundle::MAX_BUNDLED_LEN;
use openflow::msg::flow_mod::FlowMod;
use openflow::msg::group_mod::GroupMod;
use openflow::msg::meter_mod::MeterMod;

/// What changes in the switch for one kind of object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff<M> {
    /// Objects whose key is new.
    pub adds: Vec<M>,
    /// Objects whose key exists with other content.
    pub modifies: Vec<M>,
    /// Keys no longer desired.
    pub deletes: Vec<M>,
}

impl<M> Default for Diff<M> {
    fn default() -> Diff<M> {
        Diff {
            adds: Vec::new(),
            modifies: Vec::new(),
            deletes: Vec::new(),
        }
    }
}

impl<M> Diff<M> {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.adds.is_empty() && self.modifies.is_empty() && self.deletes.is_empty()
    }

    /// Number of mods.
    pub fn len(&self) -> usize {
        self.adds.len() + self.modifies.len() + self.deletes.len()
    }
}

/// Flow mods: `add` of new keys; for changed ones `modify_strict` when only the instructions
/// differ (it keeps the flow's counters), otherwise an `add` that replaces the flow;
/// `delete_strict` of keys no longer desired.
pub type FlowDiff = Diff<FlowMod>;

/// Group mods: `add` (in dependency order: a group after the groups it uses), `modify`,
/// `delete` (a group before the groups it uses).
pub type GroupDiff = Diff<GroupMod>;

/// Meter mods: `add`, `modify`, `delete`.
pub type MeterDiff = Diff<MeterMod>;

impl FlowDiff {
    /// All flow mods in the order to send them: deletes, modifies, adds. No two of them address
    /// the same key, so their order among flows does not matter.
    pub fn messages(&self) -> impl Iterator<Item = &FlowMod> {
        self.deletes.iter().chain(&self.modifies).chain(&self.adds)
    }
}

/// Everything a change sends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeDiff {
    pub flows: FlowDiff,
    pub groups: GroupDiff,
    pub meters: MeterDiff,
}

impl ChangeDiff {
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty() && self.groups.is_empty() && self.meters.is_empty()
    }

    /// Number of mods.
    pub fn len(&self) -> usize {
        self.flows.len() + self.groups.len() + self.meters.len()
    }

    /// The mods in the order to send them (see the module doc).
    pub fn steps(&self) -> Steps<'_> {
        let meter = |m| SwitchMod::Meter(m);
        let group = |g| SwitchMod::Group(g);
        Steps {
            before: self
                .meters
                .adds
                .iter()
                .chain(&self.meters.modifies)
                .map(meter)
                .collect(),
            bundle: self
                .groups
                .adds
                .iter()
                .chain(&self.groups.modifies)
                .map(group)
                .chain(self.flows.messages().map(SwitchMod::Flow))
                .chain(self.groups.deletes.iter().map(group))
                .collect(),
            after: self.meters.deletes.iter().map(meter).collect(),
        }
    }
}

/// One message to the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchMod<'a> {
    Flow(&'a FlowMod),
    Group(&'a GroupMod),
    Meter(&'a MeterMod),
}

impl SwitchMod<'_> {
    /// Appends the mod's messages to `out`: one, except for a group add or modify longer than
    /// a bundled message, which becomes the command with the first buckets followed by bucket
    /// inserts ([`GroupMod::chunks`]; groups only go to the switch in bundles). Fails, leaving
    /// `out` as it was, when a message cannot be encoded.
    pub fn encode_into(self, out: &mut Vec<Encoded>) -> Result<(), EncodeError> {
        match self {
            SwitchMod::Flow(m) => out.push(Encoded::new(m)?),
            SwitchMod::Group(m) => {
                let chunks = m
                    .chunks(MAX_BUNDLED_LEN)?
                    .iter()
                    .map(Encoded::new)
                    .collect::<Result<Vec<_>, _>>()?;
                out.extend(chunks);
            }
            SwitchMod::Meter(m) => out.push(Encoded::new(m)?),
        }
        Ok(())
    }
}

/// The messages of a change in the three steps they are sent in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Steps<'a> {
    /// Sent and confirmed before the bundle (meter adds and modifies).
    pub before: Vec<SwitchMod<'a>>,
    /// One atomic bundle.
    pub bundle: Vec<SwitchMod<'a>>,
    /// Sent once the bundle is committed (meter deletes).
    pub after: Vec<SwitchMod<'a>>,
}
