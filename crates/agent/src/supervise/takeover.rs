//! [`SharedTakeover`]: the one takeover guard the healing loop and the watchdog share, so that
//! once the watchdog rolled the takeover back, the loop cannot take the NIC over again.

use std::sync::Arc;

use hostnet::windows::heal::NetworkRecreator;
use hostnet::windows::watchdog::TakeoverRollback;
use tokio::sync::Mutex;

/// A takeover guard `R` (recreation and rollback) shared by the loop and the watchdog; clones
/// share it. Recreation and rollback never run at the same time, and no recreation follows a
/// rollback.
#[derive(Debug)]
pub struct SharedTakeover<R> {
    inner: Arc<Inner<R>>,
}

#[derive(Debug)]
struct Inner<R> {
    guard: R,
    /// Whether the takeover was rolled back; held during a recreation or a rollback.
    rolled_back: Mutex<bool>,
}

impl<R> Clone for SharedTakeover<R> {
    fn clone(&self) -> Self {
        SharedTakeover {
            inner: self.inner.clone(),
        }
    }
}

impl<R> SharedTakeover<R> {
    /// Shares `guard`.
    pub fn new(guard: R) -> Self {
        SharedTakeover {
            inner: Arc::new(Inner {
                guard,
                rolled_back: Mutex::new(false),
            }),
        }
    }
}

/// Why the network was not made again.
#[derive(Debug, thiserror::Error)]
pub enum NotRecreated<E> {
    /// The watchdog rolled the takeover back: the NIC keeps the Node's configuration.
    #[error("the NIC takeover was rolled back; the HNS network is not made again")]
    RolledBack,
    /// The guard failed.
    #[error(transparent)]
    Failed(E),
}

impl<R: NetworkRecreator> NetworkRecreator for SharedTakeover<R> {
    type Error = NotRecreated<R::Error>;

    async fn recreate_network(&self) -> Result<(), Self::Error> {
        let rolled_back = self.inner.rolled_back.lock().await;
        if *rolled_back {
            return Err(NotRecreated::RolledBack);
        }
        self.inner
            .guard
            .recreate_network()
            .await
            .map_err(NotRecreated::Failed)
    }
}

impl<R: TakeoverRollback> TakeoverRollback for SharedTakeover<R> {
    type Error = R::Error;

    async fn rollback(&self) -> Result<(), R::Error> {
        let mut rolled_back = self.inner.rolled_back.lock().await;
        *rolled_back = true;
        self.inner.guard.rollback().await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    /// Counts recreations and rollbacks; clones share the counts.
    #[derive(Debug, Default, Clone)]
    struct Counting(Arc<Counts>);

    #[derive(Debug, Default)]
    struct Counts {
        recreated: AtomicU32,
        rolled_back: AtomicU32,
    }

    impl NetworkRecreator for Counting {
        type Error = std::io::Error;

        async fn recreate_network(&self) -> Result<(), std::io::Error> {
            self.0.recreated.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    impl TakeoverRollback for Counting {
        type Error = std::io::Error;

        async fn rollback(&self) -> Result<(), std::io::Error> {
            self.0.rolled_back.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    #[tokio::test]
    async fn no_recreation_after_a_rollback() {
        let counting = Counting::default();
        let counts = counting.0.clone();
        let shared = SharedTakeover::new(counting.clone());
        shared.clone().recreate_network().await.unwrap();
        assert_eq!(counts.recreated.load(Ordering::SeqCst), 1);

        shared.rollback().await.unwrap();
        let refused = shared.recreate_network().await.unwrap_err();
        assert!(matches!(refused, NotRecreated::RolledBack), "{refused}");
        assert_eq!(counts.recreated.load(Ordering::SeqCst), 1);
        assert_eq!(counts.rolled_back.load(Ordering::SeqCst), 1);
    }
}
