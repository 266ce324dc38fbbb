//! [`Readiness`]: the named conditions `/readyz` reports — each either a flag the agent sets
//! when a stage is done (the Node brought up, the CNI server listening) or a probe read at each
//! request (the shared reflectors synced).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

/// One condition.
enum Condition {
    Flag(bool),
    Probe(Box<dyn Fn() -> bool + Send + Sync>),
}

impl Condition {
    fn holds(&self) -> bool {
        match self {
            Condition::Flag(set) => *set,
            Condition::Probe(probe) => probe(),
        }
    }
}

/// The agent's readiness: ready when every condition holds.
#[derive(Default)]
pub struct Readiness {
    conditions: Mutex<BTreeMap<&'static str, Condition>>,
}

impl fmt::Debug for Readiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Readiness")
            .field("unready", &self.unready())
            .finish()
    }
}

impl Readiness {
    /// Readiness waiting for the flags `names`.
    pub fn waiting_for(names: &[&'static str]) -> Readiness {
        let readiness = Readiness::default();
        for name in names {
            readiness.set(name, false);
        }
        readiness
    }

    /// Sets the flag `name` (adding it when new).
    pub fn set(&self, name: &'static str, done: bool) {
        self.lock().insert(name, Condition::Flag(done));
    }

    /// Adds (or replaces) the condition `name`, read by `probe` at each request.
    pub fn probe(&self, name: &'static str, probe: impl Fn() -> bool + Send + Sync + 'static) {
        self.lock().insert(name, Condition::Probe(Box::new(probe)));
    }

    /// The conditions that do not hold, in name order; empty when ready.
    pub fn unready(&self) -> Vec<&'static str> {
        self.lock()
            .iter()
            .filter(|(_, condition)| !condition.holds())
            .map(|(name, _)| *name)
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<&'static str, Condition>> {
        self.conditions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[test]
    fn ready_once_every_flag_is_set_and_every_probe_holds() {
        let readiness = Readiness::waiting_for(&["node", "cni-server"]);
        assert_eq!(readiness.unready(), ["cni-server", "node"]);
        readiness.set("node", true);
        assert_eq!(readiness.unready(), ["cni-server"]);
        let synced = Arc::new(AtomicBool::new(false));
        let probe = synced.clone();
        readiness.probe("reflectors", move || probe.load(Ordering::SeqCst));
        readiness.set("cni-server", true);
        assert_eq!(readiness.unready(), ["reflectors"]);
        synced.store(true, Ordering::SeqCst);
        assert!(readiness.unready().is_empty());
    }
}
