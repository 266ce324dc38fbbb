//! [`FakeNetNat`]: NetNat instances in memory, with the call log and failure injection the other
//! fakes have. Like Windows it refuses a second instance of the same name; unlike Windows it
//! does not refuse overlapping prefixes of different instances.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use super::{NatInstance, NetNat};
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
}

#[derive(Debug, Default)]
struct State {
    instances: BTreeMap<String, NatInstance>,
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

    /// Every call received so far, oldest first.
    pub fn calls(&self) -> Vec<NetNatCall> {
        self.state().recorder.calls()
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
            Some(_) => Ok(()),
            None => Err(WinOsError::NotFound {
                function: "MSFT_NetNat.Delete",
                what: format!("NetNat {name:?}"),
            }),
        }
    }
}
