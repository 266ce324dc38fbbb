//! [`FakeFirewall`]: firewall rules in memory, with a call log and failure injection. Like the
//! native implementation it refuses a rule with no remote addresses.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use super::{Firewall, FirewallRule};
use crate::recorder::{Recorder, lock};
use crate::{Result, WinOsError};

/// One [`Firewall`] call as the fake received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirewallCall {
    /// [`Firewall::rule`] of a name.
    Rule(String),
    /// [`Firewall::add`].
    Add(FirewallRule),
    /// [`Firewall::delete`] of a name.
    Delete(String),
}

#[derive(Debug, Default)]
struct State {
    rules: BTreeMap<String, FirewallRule>,
    recorder: Recorder<FirewallCall, ()>,
}

impl State {
    fn enter(&mut self, call: FirewallCall) -> Result<()> {
        self.recorder.enter(call, ())
    }
}

/// A stateful, in-memory [`Firewall`].
#[derive(Debug, Default)]
pub struct FakeFirewall {
    state: Mutex<State>,
}

impl FakeFirewall {
    /// No rules.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Every rule, by name.
    pub fn rules(&self) -> Vec<FirewallRule> {
        self.state().rules.values().cloned().collect()
    }

    /// Every call received so far, oldest first.
    pub fn calls(&self) -> Vec<FirewallCall> {
        self.state().recorder.calls()
    }

    /// Makes the next call (whatever its kind) fail with `error`, changing nothing.
    pub fn fail_next(&self, error: WinOsError) {
        self.state().recorder.fail_next((), error);
    }
}

impl Firewall for FakeFirewall {
    fn rule(&self, name: &str) -> Result<Option<FirewallRule>> {
        let mut state = self.state();
        state.enter(FirewallCall::Rule(name.to_owned()))?;
        Ok(state.rules.get(name).cloned())
    }

    fn add(&self, rule: &FirewallRule) -> Result<()> {
        let function = "INetFwRules::Add";
        let mut state = self.state();
        state.enter(FirewallCall::Add(rule.clone()))?;
        if !rule.is_valid() {
            return Err(WinOsError::InvalidArgument {
                function,
                detail: "a rule needs a name, and remote addresses unless it is a port rule".into(),
            });
        }
        if state.rules.contains_key(&rule.name) {
            return Err(WinOsError::AlreadyExists {
                function,
                what: format!("firewall rule {:?}", rule.name),
            });
        }
        state.rules.insert(rule.name.clone(), rule.clone());
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<()> {
        let mut state = self.state();
        state.enter(FirewallCall::Delete(name.to_owned()))?;
        match state.rules.remove(name) {
            Some(_) => Ok(()),
            None => Err(WinOsError::NotFound {
                function: "INetFwRules::Remove",
                what: format!("firewall rule {name:?}"),
            }),
        }
    }
}
