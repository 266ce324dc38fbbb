//! [`FlowInstaller`]: keeps the switch equal to the [`FlowCache`]. Each owner update goes to the
//! switch as one atomic bundle and is stored in the cache only once the switch committed it;
//! [`FlowInstaller::install_all`] and [`replay`] put the whole cache into the switch at once (a
//! new round, or a new connection).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use openflow::conn::{ConnError, Encoded, OfConnection};
use openflow::msg::flow_mod::FlowMod;

use super::diff::FlowDiff;
use super::flow_cache::FlowCache;
use super::owner::FlowOwner;
use crate::cookie::{Round, install_round};
use crate::error::ApplyError;

/// The cache shared between the installer and the connection's on-connect hook. It is locked
/// only briefly and never across an await.
pub type SharedCache = Arc<Mutex<FlowCache>>;

fn lock(cache: &SharedCache) -> MutexGuard<'_, FlowCache> {
    cache.lock().unwrap_or_else(PoisonError::into_inner)
}

fn encode<'a>(flows: impl IntoIterator<Item = &'a FlowMod>) -> Result<Vec<Encoded>, ConnError> {
    flows
        .into_iter()
        .map(|f| Encoded::new(f).map_err(ConnError::from))
        .collect()
}

/// Sends `flows` as one atomic bundle.
async fn bundle<'a>(
    conn: &OfConnection,
    flows: impl IntoIterator<Item = &'a FlowMod>,
) -> Result<(), ConnError> {
    conn.bundle(&encode(flows)?).await
}

/// Applies owner updates to the switch through one connection.
#[derive(Debug)]
pub struct FlowInstaller {
    conn: OfConnection,
    cache: SharedCache,
    /// Serialises updates, so each diff is computed against what the switch has.
    updates: tokio::sync::Mutex<()>,
}

impl FlowInstaller {
    pub fn new(conn: OfConnection, cache: SharedCache) -> FlowInstaller {
        FlowInstaller {
            conn,
            cache,
            updates: tokio::sync::Mutex::new(()),
        }
    }

    /// The shared cache (for [`replay`] in the connection's on-connect hook).
    pub fn cache(&self) -> &SharedCache {
        &self.cache
    }

    /// Replaces `owner`'s flows by `flows`. Sends only the difference, as one bundle, and
    /// returns once the switch committed it. On error neither the switch nor the cache changed.
    pub async fn replace(
        &self,
        owner: FlowOwner,
        flows: Vec<FlowMod>,
    ) -> Result<FlowDiff, ApplyError> {
        let _serial = self.updates.lock().await;
        let update = lock(&self.cache).prepare(owner, flows)?;
        if !update.diff.is_empty() {
            bundle(&self.conn, update.diff.messages())
                .await
                .map_err(|source| ApplyError::Switch {
                    what: format!("the flows of {}", update.owner),
                    source,
                })?;
        }
        let diff = update.diff.clone();
        lock(&self.cache).commit(update);
        Ok(diff)
    }

    /// Removes every flow of `owner`.
    pub async fn remove(&self, owner: FlowOwner) -> Result<FlowDiff, ApplyError> {
        self.replace(owner, Vec::new()).await
    }

    /// Installs every cached flow in one bundle, first deleting whatever else carries the
    /// cache's round (see [`replay`]). With a cache filled for a new round, this replaces the
    /// previous round's flows in place; the caller then records the new round and deletes the
    /// previous one with [`FlowInstaller::delete_round`].
    pub async fn install_all(&self) -> Result<(), ApplyError> {
        let _serial = self.updates.lock().await;
        let round = lock(&self.cache).round();
        replay(&self.conn, &self.cache)
            .await
            .map_err(|source| ApplyError::Switch {
                what: format!("all flows of {round}"),
                source,
            })
    }

    /// Deletes the flows that still carry `round`, and waits until the switch processed it.
    pub async fn delete_round(&self, round: Round) -> Result<(), ApplyError> {
        let sent = async { self.conn.batch(&encode([&round.delete_all()])?).await };
        sent.await.map_err(|source| ApplyError::Switch {
            what: format!("the deletion of {round}"),
            source,
        })
    }
}

/// Makes the switch hold exactly the cache's flows of its current round, atomically: deletes
/// that round's flows and adds every cached flow in one bundle. Use it in the connection's
/// on-connect hook (`ovs-vswitchd` forgets all flows when it restarts).
pub async fn replay(conn: &OfConnection, cache: &SharedCache) -> Result<(), ConnError> {
    let msgs = {
        let cache = lock(cache);
        install_round(cache.round(), &cache.all_flows())
    };
    bundle(conn, &msgs).await
}
