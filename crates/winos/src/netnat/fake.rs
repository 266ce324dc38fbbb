//! [`FakeNetNat`]: NetNat instances and their static mappings in memory, with the call log and
//! failure injection the other fakes have. Like Windows it refuses a second instance of the same
//! name, a mapping for a missing instance and a second mapping of the same protocol, external
//! address and external port (in any instance); deleting an instance deletes its mappings. Ids
//! count up from 0 and are never reused. Unlike Windows it does not refuse overlapping prefixes
//! of different instances, nor a `0.0.0.0` mapping beside one of a specific address on the same
//! port.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use super::{NatInstance, NetNat, StaticMapping, StaticMappingInstance};
use crate::recorder::{Recorder, lock};
use crate::{Result, WinOsError};

/// One [`NetNat`] call as the fake received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetNatCall {
    /// [`NetNat::get`] of a name.
    Get(String),
    /// [`NetNat::create`].
    Create(NatInstance),
    /// [`NetNat::delete`] of a name.
    Delete(String),
    /// [`NetNat::static_mappings`] of an instance name.
    StaticMappings(String),
    /// [`NetNat::add_static_mapping`].
    AddStaticMapping(StaticMapping),
    /// [`NetNat::remove_static_mapping`].
    RemoveStaticMapping {
        /// The instance name.
        nat: String,
        /// The mapping's id.
        id: u32,
    },
}

impl NetNatCall {
    /// Whether the call asks Windows to change something (the reads are `Get` and
    /// `StaticMappings`).
    pub fn is_write(&self) -> bool {
        !matches!(self, NetNatCall::Get(_) | NetNatCall::StaticMappings(_))
    }
}

#[derive(Debug, Default)]
struct State {
    instances: BTreeMap<String, NatInstance>,
    /// Every instance's mappings, oldest first.
    mappings: Vec<StaticMappingInstance>,
    next_id: u32,
    recorder: Recorder<NetNatCall, ()>,
}

impl State {
    fn enter(&mut self, call: NetNatCall) -> Result<()> {
        self.recorder.enter(call, ())
    }
}

/// A stateful, in-memory [`NetNat`].
#[derive(Debug, Default)]
pub struct FakeNetNat {
    state: Mutex<State>,
}

impl FakeNetNat {
    /// No instances.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Every instance, by name (set up by the test or created through the trait).
    pub fn instances(&self) -> Vec<NatInstance> {
        self.state().instances.values().cloned().collect()
    }

    /// Every static mapping of every instance, oldest first.
    pub fn mappings(&self) -> Vec<StaticMappingInstance> {
        self.state().mappings.clone()
    }

    /// Every call received so far, oldest first.
    pub fn calls(&self) -> Vec<NetNatCall> {
        self.state().recorder.calls()
    }

    /// Forgets the calls received so far.
    pub fn clear_calls(&self) {
        self.state().recorder.clear();
    }

    /// Makes the next call (whatever its kind) fail with `error`, changing nothing.
    pub fn fail_next(&self, error: WinOsError) {
        self.state().recorder.fail_next((), error);
    }
}

impl NetNat for FakeNetNat {
    fn get(&self, name: &str) -> Result<Option<NatInstance>> {
        let mut state = self.state();
        state.enter(NetNatCall::Get(name.to_owned()))?;
        Ok(state.instances.get(name).cloned())
    }

    fn create(&self, nat: &NatInstance) -> Result<()> {
        let mut state = self.state();
        state.enter(NetNatCall::Create(nat.clone()))?;
        if nat.name.is_empty() {
            return Err(WinOsError::InvalidArgument {
                function: "MSFT_NetNat.Put",
                detail: "the name is empty".into(),
            });
        }
        if state.instances.contains_key(&nat.name) {
            return Err(WinOsError::AlreadyExists {
                function: "MSFT_NetNat.Put",
                what: format!("NetNat {:?}", nat.name),
            });
        }
        state.instances.insert(nat.name.clone(), nat.clone());
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<()> {
        let mut state = self.state();
        state.enter(NetNatCall::Delete(name.to_owned()))?;
        match state.instances.remove(name) {
            Some(_) => {
                state.mappings.retain(|m| m.mapping.nat != name);
                Ok(())
            }
            None => Err(WinOsError::NotFound {
                function: "MSFT_NetNat.Delete",
                what: format!("NetNat {name:?}"),
            }),
        }
    }

    fn static_mappings(&self, nat: &str) -> Result<Vec<StaticMappingInstance>> {
        let mut state = self.state();
        state.enter(NetNatCall::StaticMappings(nat.to_owned()))?;
        Ok(state
            .mappings
            .iter()
            .filter(|m| m.mapping.nat == nat)
            .cloned()
            .collect())
    }

    fn add_static_mapping(&self, mapping: &StaticMapping) -> Result<()> {
        let mut state = self.state();
        state.enter(NetNatCall::AddStaticMapping(mapping.clone()))?;
        if !state.instances.contains_key(&mapping.nat) {
            return Err(WinOsError::NotFound {
                function: "MSFT_NetNatStaticMapping.Put",
                what: format!("NetNat {:?}", mapping.nat),
            });
        }
        if let Some(taken) = state.mappings.iter().find(|m| {
            m.mapping.protocol == mapping.protocol
                && m.mapping.external_address == mapping.external_address
                && m.mapping.external_port == mapping.external_port
        }) {
            return Err(WinOsError::AlreadyExists {
                function: "MSFT_NetNatStaticMapping.Put",
                what: format!("static mapping {} (id {})", taken.mapping, taken.id),
            });
        }
        let id = state.next_id;
        state.next_id += 1;
        state.mappings.push(StaticMappingInstance {
            id,
            mapping: mapping.clone(),
        });
        Ok(())
    }

    fn remove_static_mapping(&self, nat: &str, id: u32) -> Result<()> {
        let mut state = self.state();
        state.enter(NetNatCall::RemoveStaticMapping {
            nat: nat.to_owned(),
            id,
        })?;
        match state
            .mappings
            .iter()
            .position(|m| m.mapping.nat == nat && m.id == id)
        {
            Some(index) => {
                state.mappings.remove(index);
                Ok(())
            }
            None => Err(WinOsError::NotFound {
                function: "MSFT_NetNatStaticMapping.Delete",
                what: format!("static mapping {id} of NetNat {nat:?}"),
            }),
        }
    }
}
