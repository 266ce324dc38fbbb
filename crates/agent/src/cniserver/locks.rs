//! [`ContainerLocks`]: one command at a time per container ID (kubelet may retry ADD while the
//! first is still running, or send DEL during an ADD).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OwnedMutexGuard;

/// A lock per container ID, created on first use and dropped when nobody holds or waits for it.
#[derive(Debug, Default)]
pub struct ContainerLocks {
    map: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Holds a container's lock; releasing it forgets the lock when nobody else waits.
#[derive(Debug)]
pub struct ContainerGuard<'a> {
    locks: &'a ContainerLocks,
    id: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl ContainerLocks {
    /// Waits for `container_id`'s lock.
    pub async fn lock(&self, container_id: &str) -> ContainerGuard<'_> {
        let lock = {
            let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
            map.entry(container_id.to_owned()).or_default().clone()
        };
        ContainerGuard {
            locks: self,
            id: container_id.to_owned(),
            guard: Some(lock.lock_owned().await),
        }
    }

    /// Containers with a lock entry (held or awaited).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether no container has a lock entry.
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for ContainerGuard<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut map = self
            .locks
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if map.get(&self.id).is_some_and(|l| Arc::strong_count(l) == 1) {
            map.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn one_holder_per_container_and_entries_are_forgotten() {
        let locks = Arc::new(ContainerLocks::default());
        let first = locks.lock("c1").await;
        let other = locks.lock("c2").await;
        let waiter = {
            let locks = locks.clone();
            tokio::spawn(async move {
                let _g = locks.lock("c1").await;
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished(), "c1 is held");
        drop(other);
        assert_eq!(locks.len(), 1, "c2 forgotten, c1 still held and awaited");
        drop(first);
        waiter.await.unwrap();
        assert!(locks.is_empty());
    }
}
