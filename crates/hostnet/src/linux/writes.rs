//! Counting the changes the backend makes to the OS: a running total for the backend, and a
//! fresh count per operation from which the operation's [`Outcome`] follows (concurrent
//! operations do not see each other's writes).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::model::Outcome;

/// A count of writes that also adds to a shared total.
#[derive(Debug, Clone, Default)]
pub struct Writes {
    total: Arc<AtomicU64>,
    scope: Arc<AtomicU64>,
}

impl Writes {
    /// Records one change.
    pub fn record(&self) {
        self.total.fetch_add(1, Ordering::Relaxed);
        self.scope.fetch_add(1, Ordering::Relaxed);
    }

    /// A new count, starting at zero, that still adds to the same total.
    pub fn scoped(&self) -> Writes {
        Writes {
            total: Arc::clone(&self.total),
            scope: Arc::default(),
        }
    }

    /// Every write recorded through any count sharing this total.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// `Changed` when this count recorded a write.
    pub fn outcome(&self) -> Outcome {
        if self.scope.load(Ordering::Relaxed) == 0 {
            Outcome::Unchanged
        } else {
            Outcome::Changed
        }
    }
}
