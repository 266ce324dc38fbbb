//! A modelled switch for the cache's unit tests: flows, groups and meters with the rules of
//! Open vSwitch that the send order exists for — a flow or group using a missing group or meter
//! is refused, deleting a group or meter silently deletes the flows that use it, `modify_strict`
//! of a missing flow adds nothing, meter mods are refused inside a bundle, and a bundle applies
//! all or nothing. `ovs-vswitchd` itself is the oracle of `tests/ovs_objects.rs`; this model lets
//! proptests run thousands of changes.

use std::collections::BTreeMap;

use openflow::msg::flow_mod::{FlowMod, FlowModCommand, TABLE_ALL};
use openflow::msg::group_mod::{GroupDesc, GroupModCommand};
use openflow::msg::meter_mod::{MeterDesc, MeterModCommand};

use super::diff::{Steps, SwitchMod};
use super::key::FlowKey;
use super::object::{Object, Target};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelSwitch {
    pub flows: BTreeMap<FlowKey, FlowMod>,
    pub groups: BTreeMap<u32, GroupDesc>,
    pub meters: BTreeMap<u32, MeterDesc>,
    /// Flows deleted because a group or meter they used was deleted.
    pub collateral: Vec<FlowKey>,
}

impl ModelSwitch {
    fn check_targets(&self, object: &impl Object) -> Result<(), String> {
        let mut targets = Vec::new();
        object.targets(&mut targets);
        for t in targets {
            let exists = match t {
                Target::Group(id) => self.groups.contains_key(&id),
                Target::Meter(id) => self.meters.contains_key(&id),
            };
            if !exists {
                return Err(format!("{} uses missing {t}", object.describe()));
            }
        }
        Ok(())
    }

    fn drop_users(&mut self, target: Target) {
        let users: Vec<FlowKey> = self
            .flows
            .iter()
            .filter(|(_, f)| {
                let mut targets = Vec::new();
                f.targets(&mut targets);
                targets.contains(&target)
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in users {
            self.flows.remove(&key);
            self.collateral.push(key);
        }
    }

    /// Applies one message as the switch would, or refuses it.
    pub fn apply(&mut self, m: SwitchMod<'_>) -> Result<(), String> {
        match m {
            SwitchMod::Flow(f) => match f.command {
                FlowModCommand::Add => {
                    self.check_targets(f)?;
                    self.flows.insert(FlowKey::of(f), f.clone());
                }
                FlowModCommand::ModifyStrict => {
                    self.check_targets(f)?;
                    if let Some(flow) = self.flows.get_mut(&FlowKey::of(f)) {
                        flow.instructions = f.instructions.clone();
                    }
                }
                FlowModCommand::DeleteStrict => {
                    self.flows.remove(&FlowKey::of(f));
                }
                FlowModCommand::Delete if f.table_id == TABLE_ALL && f.flow_match.is_empty() => {
                    self.flows
                        .retain(|_, flow| flow.cookie & f.cookie_mask != f.cookie & f.cookie_mask);
                }
                other => return Err(format!("the model has no {other:?}")),
            },
            SwitchMod::Group(g) => {
                let id = g.group.group_id;
                match g.command {
                    GroupModCommand::Add if self.groups.contains_key(&id) => {
                        return Err(format!("group {id} exists"));
                    }
                    GroupModCommand::Modify if !self.groups.contains_key(&id) => {
                        return Err(format!("group {id} is unknown"));
                    }
                    GroupModCommand::Add
                    | GroupModCommand::Modify
                    | GroupModCommand::AddOrModify => {
                        self.check_targets(&g.group)?;
                        self.groups.insert(id, g.group.clone());
                    }
                    GroupModCommand::Delete => {
                        let used_by_group = self.groups.values().any(|other| {
                            let mut targets = Vec::new();
                            other.targets(&mut targets);
                            other.group_id != id && targets.contains(&Target::Group(id))
                        });
                        if used_by_group {
                            return Err(format!("group {id} is deleted while a group uses it"));
                        }
                        self.groups.remove(&id);
                        self.drop_users(Target::Group(id));
                    }
                    other => return Err(format!("the model has no {other:?}")),
                }
            }
            SwitchMod::Meter(m) => {
                let id = m.meter.meter_id;
                match m.command {
                    MeterModCommand::Add if self.meters.contains_key(&id) => {
                        return Err(format!("meter {id} exists"));
                    }
                    MeterModCommand::Modify if !self.meters.contains_key(&id) => {
                        return Err(format!("meter {id} is unknown"));
                    }
                    MeterModCommand::Add | MeterModCommand::Modify => {
                        self.meters.insert(id, m.meter.clone());
                    }
                    MeterModCommand::Delete => {
                        self.meters.remove(&id);
                        self.drop_users(Target::Meter(id));
                    }
                }
            }
        }
        Ok(())
    }

    /// Sends the steps of a change: each message before and after the bundle on its own, the
    /// bundle all or nothing.
    pub fn send(&mut self, steps: &Steps<'_>) -> Result<(), String> {
        for m in &steps.before {
            self.apply(*m)?;
        }
        let mut bundle = self.clone();
        for m in &steps.bundle {
            if matches!(m, SwitchMod::Meter(_)) {
                return Err("a meter mod inside a bundle".into());
            }
            bundle.apply(*m)?;
        }
        *self = bundle;
        for m in &steps.after {
            self.apply(*m)?;
        }
        Ok(())
    }
}
