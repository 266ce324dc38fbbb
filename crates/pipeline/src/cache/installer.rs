//! [`Installer`]: keeps the switch equal to the [`DesiredCache`]. Each [`Change`] goes to the
//! switch in the steps of [`super::diff`] — meters set and confirmed, one atomic bundle of
//! groups and flows, meter deletes. The cache stores the change on a blocking thread while the
//! switch takes it (the two overlap), and [`Installer::apply`] returns once both are done; on
//! any error the meters set before are undone and the cache's commit too
//! ([`DesiredCache::undo`]), so neither the switch nor the cache changed. [`Installer::install_all`]
//! and [`replay`] put the whole cache into the switch at once (a new round, or a new
//! connection).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use openflow::conn::{ConnError, OfConnection};

use super::change::{Change, Objects};
use super::desired::DesiredCache;
use super::diff::ChangeDiff;
use super::owner::Owner;
use super::sync::{self, MeterSteps};
use crate::cookie::Round;
use crate::error::ApplyError;

/// The cache shared between the installer and the connection's on-connect hook. It is locked
/// only briefly and never across an await.
pub type SharedCache = Arc<Mutex<DesiredCache>>;

pub(super) fn lock(cache: &SharedCache) -> MutexGuard<'_, DesiredCache> {
    cache.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Applies changes to the switch through one connection.
#[derive(Debug)]
pub struct Installer {
    conn: OfConnection,
    cache: SharedCache,
    /// Serialises changes, so each diff is computed against what the switch has.
    changes: tokio::sync::Mutex<()>,
    /// The largest group id the switch's flows named before [`Installer::install_all`]
    /// replaced them: an earlier round's groups, which its flows named, lie at or below it
    /// (a flow of the new round with the same match replaces the old one in place, so after
    /// the install nothing may name them any more).
    earlier_groups_bound: AtomicU32,
}

impl Installer {
    pub fn new(conn: OfConnection, cache: SharedCache) -> Installer {
        Installer {
            conn,
            cache,
            changes: tokio::sync::Mutex::new(()),
            earlier_groups_bound: AtomicU32::new(0),
        }
    }

    /// The shared cache (for [`replay`] in the connection's on-connect hook).
    pub fn cache(&self) -> &SharedCache {
        &self.cache
    }

    /// Applies `change`: sends only the difference, in dependency order with groups and flows
    /// in one bundle, and returns once the switch committed it. On error neither the switch nor
    /// the cache changed. An empty difference sends nothing.
    ///
    /// The cache stores the change while the switch works through the bundle (the encoding
    /// overlaps the switch's work too). Should the switch refuse it, or the connection drop,
    /// the commit is undone; after a dropped connection the cache is then replayed, because the
    /// reconnect's own replay may have read the cache before the undo (a request on the new
    /// connection waits until that replay is done, so this one comes last). Not cancel-safe:
    /// dropping the future before it returns may leave the switch and the cache apart until
    /// the next replay (a reconnect) or round.
    pub async fn apply(&self, change: Change) -> Result<ChangeDiff, ApplyError> {
        let _serial = self.changes.lock().await;
        let what = change.describe();
        let mut prepared = lock(&self.cache).prepare(change)?;
        let switch_error = |source| ApplyError::Switch {
            what: what.clone(),
            source,
        };
        // The diff stays here to be encoded as it is sent; the rest is stored meanwhile.
        let diff = std::mem::take(&mut prepared.diff);
        let steps = diff.steps();
        let msgs = MeterSteps::of_steps(&steps, &prepared.undo_before)
            .map_err(|e| switch_error(ConnError::Encode(e)))?;
        // Once the bundle is queued, the cache stores the change on a blocking thread while the
        // switch works through it (before, the two would compete with the encoding).
        let cache = self.cache.clone();
        let mut storing = None;
        let sent = sync::send_before_and_bundle(&self.conn, &msgs, steps.bundle, || {
            storing = Some(tokio::task::spawn_blocking(move || {
                lock(&cache).commit_undoable(prepared)
            }));
        })
        .await;
        let Some(storing) = storing else {
            // The bundle failed before all of it was queued: the cache never stored it.
            return Err(switch_error(sent.err().unwrap_or(ConnError::Closed)));
        };
        let undo = match storing.await {
            Ok((_, undo)) => undo,
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            // The runtime is shutting down and the commit never ran: the cache is unchanged.
            Err(_) => return Err(switch_error(ConnError::Shutdown)),
        };
        if let Err(source) = sent {
            lock(&self.cache).undo(undo);
            if !refused_by_switch(&source)
                && let Err(error) = replay(&self.conn, &self.cache).await
            {
                tracing::warn!(%error, "replaying the cache after a failed change failed; the next connection replays it");
            }
            return Err(switch_error(source));
        }
        // What the commit replaced is freed off this task (a large change frees much).
        tokio::task::spawn_blocking(move || drop(undo));
        sync::send_after(&self.conn, &msgs).await;
        Ok(diff)
    }

    /// Replaces `owner`'s whole set by `objects` (see [`Installer::apply`]).
    pub async fn replace(
        &self,
        owner: Owner,
        objects: impl Into<Objects>,
    ) -> Result<ChangeDiff, ApplyError> {
        self.apply(Change::new().replace(owner, objects)).await
    }

    /// Removes everything `owner` has.
    pub async fn remove(&self, owner: Owner) -> Result<ChangeDiff, ApplyError> {
        self.apply(Change::new().remove(owner)).await
    }

    /// Installs the whole cache: meters first, then one bundle that deletes whatever else
    /// carries the cache's round, adds or modifies every group in place and adds every flow.
    /// With a cache filled for a new round, this replaces the previous round's objects in
    /// place; the caller then records the new round and calls [`Installer::delete_round`].
    /// Returns the number of messages sent (a group too long for one message counts each of
    /// the messages it is sent in).
    pub async fn install_all(&self) -> Result<usize, ApplyError> {
        let _serial = self.changes.lock().await;
        let round = lock(&self.cache).round();
        let bound = self
            .conn
            .group_bound(&[])
            .await
            .map_err(|source| ApplyError::Switch {
                what: format!("reading the groups the flows before {round} use"),
                source,
            })?;
        self.earlier_groups_bound
            .fetch_max(bound, Ordering::Relaxed);
        sync::install_all(&self.conn, &self.cache, false)
            .await
            .map_err(|source| ApplyError::Switch {
                what: format!("all objects of {round}"),
                source,
            })
    }

    /// Deletes the flows that still carry `round`, then the groups and meters the switch holds
    /// that no owner wants (nothing uses them any more), and waits until the switch processed
    /// it. Returns the number of mods sent. Call it after [`Installer::install_all`]: the
    /// switch's groups are read up to the largest id its flows named when that began.
    pub async fn delete_round(&self, round: Round) -> Result<usize, ApplyError> {
        let _serial = self.changes.lock().await;
        let switch_error = |what: String| move |source| ApplyError::Switch { what, source };
        let earlier = self.earlier_groups_bound.load(Ordering::Relaxed);
        let switch_groups = sync::switch_groups(&self.conn, &self.cache, earlier)
            .await
            .map_err(switch_error(format!("reading the groups {round} used")))?;
        let delete = openflow::conn::Encoded::new(&round.delete_all())
            .map_err(|e| switch_error(format!("the deletion of {round}"))(ConnError::Encode(e)))?;
        self.conn
            .batch(&[delete])
            .await
            .map_err(switch_error(format!("the deletion of {round}")))?;
        let stale = sync::delete_stale(&self.conn, &self.cache, &switch_groups)
            .await
            .map_err(switch_error(format!(
                "the deletion of the groups and meters {round} left"
            )))?;
        Ok(1 + stale)
    }
}

/// Whether the switch itself refused a change (on a live connection, which no replay ran on
/// since), rather than the connection failing under it.
fn refused_by_switch(error: &ConnError) -> bool {
    matches!(
        error,
        ConnError::Rejected(_) | ConnError::BatchRejected(_) | ConnError::BundleRejected { .. }
    )
}

/// Makes the switch hold exactly the cache's objects of its round, atomically for groups and
/// flows: sets the meters, then one bundle deletes the round's flows, adds or modifies every
/// group, adds every flow and deletes the groups no owner wants; then the meters no owner
/// wants are deleted. Use it in the connection's on-connect hook (`ovs-vswitchd` forgets
/// everything when it restarts).
pub async fn replay(conn: &OfConnection, cache: &SharedCache) -> Result<(), ConnError> {
    sync::install_all(conn, cache, true).await.map(drop)
}
