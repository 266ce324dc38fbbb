//! [`Hub`]: the controller's fan-out from its computation to the watchers of each Node, and
//! [`HubDriver`], the computation task's side of it.
//!
//! - The computation task publishes each batch's updates ([`HubDriver::publish`]) and, between
//!   batches, serves what the hub asks of it ([`HubDriver::serve`]): snapshots for the watchers
//!   waiting for one, and forgetting the Nodes nobody watched for a grace period. A snapshot
//!   is taken in that task, after the updates before it were published, so a watcher gets its
//!   snapshot and then each later update exactly once, in order.
//! - A Node's updates go to that Node's watchers only. Each message has a version from one
//!   counter of the controller run (its epoch), so a Node's versions increase; the last
//!   [`HubLimits::log`] messages of a Node are kept, and a watcher resuming from one of them
//!   (or from the snapshot before them) in the same epoch gets only what followed.
//! - Each watcher has a queue of [`HubLimits::queue`] messages, shared with the log (one copy of
//!   a message whatever the number of watchers). A watcher whose queue is full is cut off: its
//!   stream ends with `RESOURCE_EXHAUSTED` and it must reconnect. So a slow reader never makes
//!   the controller hold more than its queue.
//! - A Node whose last watcher left is kept for [`HubLimits::grace`] (a quick reconnect
//!   resumes), then the computation stops keeping its updates ([`SpanSource::unwatch`]) and the
//!   hub forgets it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::time::Instant;
use tonic::Status;

use crate::wire::{Resume, WatchEvent};
use crate::{Delivery, NodeUpdate, NodeView};

/// What the hub needs of the computation (the controller's `SpanComputation`).
pub trait SpanSource {
    /// Keeps `node`'s updates from now on (if not already) and returns its whole view.
    fn watch(&mut self, node: &str) -> Vec<NodeUpdate>;
    /// Stops keeping `node`'s updates.
    fn unwatch(&mut self, node: &str);
    /// The updates owed to each watched Node since the last call, in order.
    fn take_updates(&mut self) -> BTreeMap<String, Vec<NodeUpdate>>;
}

/// How much the hub holds.
#[derive(Debug, Clone, Copy)]
pub struct HubLimits {
    /// Messages queued per watcher before it is cut off.
    pub queue: usize,
    /// Messages kept per watched Node for resuming watchers.
    pub log: usize,
    /// How long a Node nobody watches keeps its updates and log.
    pub grace: Duration,
}

impl Default for HubLimits {
    fn default() -> Self {
        HubLimits {
            queue: 64,
            log: 64,
            grace: Duration::from_secs(60),
        }
    }
}

/// What the hub holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HubStats {
    /// Nodes with watchers, or in their grace period.
    pub nodes: usize,
    /// Connected watchers (waiting for a snapshot or being sent updates).
    pub watchers: usize,
    /// Messages queued for watchers, all watchers together.
    pub queued: usize,
    /// Messages kept in the resume logs, all Nodes together.
    pub logged: usize,
}

/// The watchers' side of the fan-out: cheap to clone, one per server.
#[derive(Debug, Clone)]
pub struct Hub {
    shared: Arc<Shared>,
}

/// The computation task's side.
#[derive(Debug)]
pub struct HubDriver {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    epoch: u64,
    limits: HubLimits,
    state: Mutex<State>,
    /// Wakes the computation task: a watcher waits for a snapshot, or a Node became idle.
    wake: Notify,
}

#[derive(Debug, Default)]
struct State {
    last_version: u64,
    last_watcher: u64,
    nodes: HashMap<String, NodeState>,
}

/// One Node's watchers and log.
#[derive(Debug, Default)]
struct NodeState {
    /// The computation keeps this Node's updates.
    watched: bool,
    /// The version of the snapshot or message just before the log's first message.
    base: u64,
    /// The version of the Node's last message (or snapshot).
    current: u64,
    log: VecDeque<Arc<WatchEvent>>,
    /// Watchers being sent the Node's messages.
    live: HashMap<u64, Outlet>,
    /// Watchers waiting for a snapshot.
    waiting: HashMap<u64, Outlet>,
    /// When the last watcher left.
    idle_since: Option<Instant>,
}

/// The hub's end of one watcher.
#[derive(Debug)]
struct Outlet {
    peer: String,
    queue: mpsc::Sender<Arc<WatchEvent>>,
    cut: oneshot::Sender<Status>,
}

impl Outlet {
    /// Ends the watcher's stream with `status`.
    fn cut(self, status: Status) {
        let _ = self.cut.send(status);
    }
}

impl NodeState {
    fn is_idle(&self) -> bool {
        self.live.is_empty() && self.waiting.is_empty()
    }

    /// The messages a watcher resuming from `resume` missed, if it can resume.
    fn missed(&self, epoch: u64, resume: Resume) -> Option<Vec<Arc<WatchEvent>>> {
        if !self.watched || resume.epoch != epoch {
            return None;
        }
        let from = if resume.version == self.base {
            0
        } else {
            self.log.iter().position(|e| e.version == resume.version)? + 1
        };
        Some(self.log.iter().skip(from).cloned().collect())
    }
}

impl Hub {
    /// A hub with a random epoch.
    pub fn new(limits: HubLimits) -> (Hub, HubDriver) {
        Hub::with_epoch(limits, random_epoch())
    }

    /// A hub whose messages carry `epoch`.
    pub fn with_epoch(limits: HubLimits, epoch: u64) -> (Hub, HubDriver) {
        let shared = Arc::new(Shared {
            epoch,
            limits,
            state: Mutex::new(State::default()),
            wake: Notify::new(),
        });
        (
            Hub {
                shared: shared.clone(),
            },
            HubDriver { shared },
        )
    }

    /// This controller run's epoch.
    pub fn epoch(&self) -> u64 {
        self.shared.epoch
    }

    /// Adds a watcher of `node` (`peer` names it in logs): it resumes from `resume` when it can,
    /// else waits for a snapshot.
    pub fn subscribe(&self, node: &str, resume: Option<Resume>, peer: &str) -> Subscription {
        let limits = self.shared.limits;
        let (queue, receiver) = mpsc::channel(limits.queue.max(1));
        let (cut, cut_receiver) = oneshot::channel();
        let outlet = Outlet {
            peer: peer.to_owned(),
            queue,
            cut,
        };
        let mut state = self.shared.lock();
        state.last_watcher += 1;
        let id = state.last_watcher;
        let entry = state.nodes.entry(node.to_owned()).or_default();
        entry.idle_since = None;
        let missed = resume
            .and_then(|r| entry.missed(self.shared.epoch, r))
            .filter(|missed| missed.len() <= outlet.queue.max_capacity());
        match missed {
            Some(missed) => {
                tracing::info!(
                    "{peer} resumes Node {node}'s span at version {}: {} messages missed",
                    resume.map_or(0, |r| r.version),
                    missed.len()
                );
                for event in missed {
                    // The queue is empty and has room for them all.
                    let _ = outlet.queue.try_send(event);
                }
                entry.live.insert(id, outlet);
            }
            None => {
                entry.waiting.insert(id, outlet);
                self.shared.wake.notify_one();
            }
        }
        drop(state);
        Subscription {
            shared: self.shared.clone(),
            node: node.to_owned(),
            id,
            queue: receiver,
            cut: cut_receiver,
            ended: false,
        }
    }

    /// What the hub holds now.
    pub fn stats(&self) -> HubStats {
        let state = self.shared.lock();
        let mut stats = HubStats {
            nodes: state.nodes.len(),
            ..HubStats::default()
        };
        for node in state.nodes.values() {
            stats.logged += node.log.len();
            for outlet in node.live.values().chain(node.waiting.values()) {
                stats.watchers += 1;
                stats.queued += outlet.queue.max_capacity() - outlet.queue.capacity();
            }
        }
        stats
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl State {
    fn next_version(&mut self) -> u64 {
        self.last_version += 1;
        self.last_version
    }
}

impl HubDriver {
    /// Sends the updates the computation owes each watched Node to that Node's watchers, as one
    /// message per Node, and keeps it in the Node's log.
    pub fn publish(&self, source: &mut impl SpanSource) {
        let updates = source.take_updates();
        if updates.is_empty() {
            return;
        }
        let epoch = self.shared.epoch;
        let limits = self.shared.limits;
        let mut state = self.shared.lock();
        for (node, list) in updates {
            if list.is_empty() {
                continue;
            }
            let version = state.next_version();
            let Some(entry) = state.nodes.get_mut(&node).filter(|n| n.watched) else {
                tracing::warn!("updates for Node {node}, which the hub does not serve: dropped");
                continue;
            };
            let event = Arc::new(WatchEvent {
                epoch,
                version,
                delivery: Delivery::Updates(list),
            });
            entry.current = version;
            entry.log.push_back(event.clone());
            while entry.log.len() > limits.log {
                if let Some(oldest) = entry.log.pop_front() {
                    entry.base = oldest.version;
                }
            }
            let live = std::mem::take(&mut entry.live);
            for (id, outlet) in live {
                match outlet.queue.try_send(event.clone()) {
                    Ok(()) => {
                        entry.live.insert(id, outlet);
                    }
                    Err(TrySendError::Full(_)) => {
                        tracing::warn!(
                            "watcher {} of Node {node} cut off: {} messages wait for it",
                            outlet.peer,
                            limits.queue
                        );
                        outlet.cut(Status::resource_exhausted(
                            "too slow: the watcher's queue is full; reconnect for a snapshot",
                        ));
                    }
                    Err(TrySendError::Closed(_)) => {}
                }
            }
            if entry.is_idle() && entry.idle_since.is_none() {
                entry.idle_since = Some(Instant::now());
            }
        }
    }

    /// Publishes what the computation owes, then gives the waiting watchers their Node's
    /// snapshot, then has the computation forget the Nodes idle for the grace period.
    pub fn serve(&self, source: &mut impl SpanSource) {
        self.publish(source);
        let now = Instant::now();
        let grace = self.shared.limits.grace;
        let (wanted, expired): (Vec<String>, Vec<String>) = {
            let state = self.shared.lock();
            let wanted = state
                .nodes
                .iter()
                .filter(|(_, n)| !n.waiting.is_empty())
                .map(|(name, _)| name.clone())
                .collect();
            let expired = state
                .nodes
                .iter()
                .filter(|(_, n)| n.idle_since.is_some_and(|t| t + grace <= now))
                .map(|(name, _)| name.clone())
                .collect();
            (wanted, expired)
        };
        for node in wanted {
            let updates = source.watch(&node);
            if !self.snapshot_taken(&node, updates) {
                source.unwatch(&node);
            }
        }
        for node in expired {
            let mut state = self.shared.lock();
            let still = state
                .nodes
                .get(&node)
                .is_some_and(|n| n.idle_since.is_some_and(|t| t + grace <= now));
            if !still {
                continue;
            }
            let watched = state.nodes.remove(&node).is_some_and(|n| n.watched);
            drop(state);
            if watched {
                source.unwatch(&node);
            }
            tracing::info!("Node {node}: no watcher for {grace:?}, its updates are no longer kept");
        }
    }

    /// Hands `node`'s snapshot to its waiting watchers; false when the hub no longer serves the
    /// Node (its watchers left and it expired meanwhile), so the computation must not keep its
    /// updates.
    fn snapshot_taken(&self, node: &str, updates: Vec<NodeUpdate>) -> bool {
        let mut view = NodeView::default();
        let built = updates.iter().try_for_each(|u| view.apply(u));
        let epoch = self.shared.epoch;
        let mut state = self.shared.lock();
        let fresh = state.nodes.get(node).is_some_and(|n| !n.watched);
        let version = if fresh { state.next_version() } else { 0 };
        let Some(entry) = state.nodes.get_mut(node) else {
            return false;
        };
        if fresh {
            entry.watched = true;
            entry.base = version;
            entry.current = version;
            entry.log.clear();
        }
        if let Err(error) = built {
            tracing::error!("Node {node}'s snapshot is out of order ({error}): not sent");
            for (_, outlet) in entry.waiting.drain() {
                outlet.cut(Status::internal(format!(
                    "the controller's snapshot of Node {node} is inconsistent"
                )));
            }
            return true;
        }
        let event = Arc::new(WatchEvent {
            epoch,
            version: entry.current,
            delivery: Delivery::Snapshot(view),
        });
        for (id, outlet) in std::mem::take(&mut entry.waiting) {
            match outlet.queue.try_send(event.clone()) {
                Ok(()) => {
                    tracing::debug!(
                        "{} gets Node {node}'s snapshot at version {}",
                        outlet.peer,
                        event.version
                    );
                    entry.live.insert(id, outlet);
                }
                Err(_) => outlet.cut(Status::internal("the watcher's queue was not empty")),
            }
        }
        true
    }

    /// Waits until the hub needs [`HubDriver::serve`]: a watcher waits for a snapshot, or an
    /// idle Node's grace period ends.
    pub async fn wanted(&self) {
        let grace = self.shared.limits.grace;
        let next = {
            let state = self.shared.lock();
            if state.nodes.values().any(|n| !n.waiting.is_empty()) {
                return;
            }
            state
                .nodes
                .values()
                .filter_map(|n| n.idle_since)
                .min()
                .map(|t| t + grace)
        };
        match next {
            Some(deadline) => {
                tokio::select! {
                    () = self.shared.wake.notified() => {}
                    () = tokio::time::sleep_until(deadline) => {}
                }
            }
            None => self.shared.wake.notified().await,
        }
    }

    /// The watchers' side.
    pub fn hub(&self) -> Hub {
        Hub {
            shared: self.shared.clone(),
        }
    }
}

/// One watcher's stream of messages. It ends with an error status when the watcher is cut off;
/// dropping it (the client went away) removes the watcher.
#[derive(Debug)]
pub struct Subscription {
    shared: Arc<Shared>,
    node: String,
    id: u64,
    queue: mpsc::Receiver<Arc<WatchEvent>>,
    cut: oneshot::Receiver<Status>,
    ended: bool,
}

impl Stream for Subscription {
    type Item = Result<Arc<WatchEvent>, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        if let Poll::Ready(Ok(status)) = Pin::new(&mut self.cut).poll(cx) {
            self.ended = true;
            return Poll::Ready(Some(Err(status)));
        }
        match self.queue.poll_recv(cx) {
            Poll::Ready(Some(event)) => Poll::Ready(Some(Ok(event))),
            Poll::Ready(None) => {
                self.ended = true;
                let status = match self.cut.try_recv() {
                    Ok(status) => status,
                    Err(_) => Status::unavailable("the controller stopped serving this span"),
                };
                Poll::Ready(Some(Err(status)))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        let Some(node) = state.nodes.get_mut(&self.node) else {
            return;
        };
        node.live.remove(&self.id);
        node.waiting.remove(&self.id);
        if node.is_idle() && node.idle_since.is_none() {
            node.idle_since = Some(Instant::now());
            self.shared.wake.notify_one();
        }
    }
}

/// A random epoch (ring's system random source; the time when that fails).
fn random_epoch() -> u64 {
    use ring::rand::{SecureRandom, SystemRandom};
    let mut bytes = [0u8; 8];
    match SystemRandom::new().fill(&mut bytes) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    }
}
