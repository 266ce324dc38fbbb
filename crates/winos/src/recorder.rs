//! What every fake shares: a log of the calls received and failures queued for later calls.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

use crate::{Result, WinOsError};

/// The call log of a fake, and failures injected per kind of call (`K`; `()` when any call
/// takes the next failure).
#[derive(Debug)]
pub(crate) struct Recorder<C, K> {
    calls: Vec<C>,
    failures: HashMap<K, VecDeque<WinOsError>>,
}

impl<C, K> Default for Recorder<C, K> {
    fn default() -> Self {
        Recorder {
            calls: Vec::new(),
            failures: HashMap::new(),
        }
    }
}

impl<C: Clone, K: Eq + Hash> Recorder<C, K> {
    /// Logs `call` and returns the failure queued for `kind`, if any.
    pub(crate) fn enter(&mut self, call: C, kind: K) -> Result<()> {
        self.calls.push(call);
        match self.failures.get_mut(&kind).and_then(VecDeque::pop_front) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The calls logged so far, oldest first.
    pub(crate) fn calls(&self) -> Vec<C> {
        self.calls.clone()
    }

    /// Forgets the logged calls.
    pub(crate) fn clear(&mut self) {
        self.calls.clear();
    }

    /// Queues `error` for the next call of `kind`.
    pub(crate) fn fail_next(&mut self, kind: K, error: WinOsError) {
        self.failures.entry(kind).or_default().push_back(error);
    }
}

/// Locks a fake's state. A panic while holding the lock leaves plain data behind; keep serving it.
pub(crate) fn lock<T>(state: &Mutex<T>) -> MutexGuard<'_, T> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
