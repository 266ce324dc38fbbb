//! [`Feed`]: the cluster's Pods, Namespaces and NetworkPolicies, watched through kube-rs, into
//! one [`SpanComputation`].
//!
//! Each kind has one watcher; the three streams are merged and applied in arrival order. Only
//! what the computation keeps is kept (no object stores). A re-list (the watcher's `Init` …
//! `InitDone`, after a 410 Gone or a reconnect) removes the objects the new list no longer
//! holds. An object the computation cannot read (a bad selector, a Pod without a name) is
//! skipped with its name logged; the others go on. A failing watch is retried with backoff.
//!
//! The feed is the computation's task: after each batch it publishes the watched Nodes'
//! updates to the protocol's hub, and between batches it gives waiting watchers their
//! snapshots — only once each kind has been listed in full, so that no agent is handed a
//! partial view (which would drop the policies of the objects not yet listed).

use std::collections::BTreeSet;
use std::fmt;

use controlplane::hub::HubDriver;

use futures_util::{Stream, StreamExt, stream};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, ResourceExt};
use model::policy::PodKey;
use netpol::PolicyError;

use crate::span::SpanComputation;

/// A watched kind: its key, and how the computation takes and forgets its objects.
trait Watched: kube::Resource<DynamicType = ()> + Clone + fmt::Debug + Send + 'static {
    type Key: Ord + Clone + fmt::Debug + fmt::Display;
    fn key(&self) -> Self::Key;
    fn upsert(&self, computation: &mut SpanComputation) -> Result<(), PolicyError>;
    fn remove(key: &Self::Key, computation: &mut SpanComputation);
}

impl Watched for Pod {
    type Key = PodKey;
    fn key(&self) -> PodKey {
        PodKey::new(self.namespace().unwrap_or_default(), self.name_any())
    }
    fn upsert(&self, computation: &mut SpanComputation) -> Result<(), PolicyError> {
        computation.upsert_pod(self)
    }
    fn remove(key: &PodKey, computation: &mut SpanComputation) {
        computation.remove_pod(key);
    }
}

impl Watched for Namespace {
    type Key = String;
    fn key(&self) -> String {
        self.name_any()
    }
    fn upsert(&self, computation: &mut SpanComputation) -> Result<(), PolicyError> {
        computation.upsert_namespace(self)
    }
    fn remove(key: &String, computation: &mut SpanComputation) {
        computation.set_namespace(key, None);
    }
}

impl Watched for NetworkPolicy {
    type Key = PodKey;
    fn key(&self) -> PodKey {
        PodKey::new(self.namespace().unwrap_or_default(), self.name_any())
    }
    fn upsert(&self, computation: &mut SpanComputation) -> Result<(), PolicyError> {
        computation.upsert_policy(self)
    }
    fn remove(key: &PodKey, computation: &mut SpanComputation) {
        computation.remove_policy(key);
    }
}

/// The objects of one kind the computation holds, and those a re-list has seen so far.
#[derive(Debug)]
struct Known<K: Watched> {
    held: BTreeSet<K::Key>,
    listing: Option<BTreeSet<K::Key>>,
    /// A whole list has been taken in.
    listed: bool,
}

impl<K: Watched> Default for Known<K> {
    fn default() -> Self {
        Known {
            held: BTreeSet::new(),
            listing: None,
            listed: false,
        }
    }
}

impl<K: Watched> Known<K> {
    fn apply(&mut self, event: Event<K>, computation: &mut SpanComputation) {
        match event {
            Event::Init => self.listing = Some(BTreeSet::new()),
            Event::InitApply(object) => {
                let key = object.key();
                self.upsert(&object, computation);
                if let Some(listing) = &mut self.listing {
                    listing.insert(key);
                }
            }
            Event::InitDone => {
                let listed = self.listing.take().unwrap_or_default();
                for gone in self.held.difference(&listed) {
                    K::remove(gone, computation);
                }
                self.held = listed;
                self.listed = true;
            }
            Event::Apply(object) => self.upsert(&object, computation),
            Event::Delete(object) => {
                let key = object.key();
                K::remove(&key, computation);
                self.held.remove(&key);
            }
        }
    }

    fn upsert(&mut self, object: &K, computation: &mut SpanComputation) {
        let key = object.key();
        match object.upsert(computation) {
            Ok(()) => {
                self.held.insert(key);
            }
            Err(error) => {
                tracing::warn!("{} {key} skipped: {error}", K::kind(&()));
            }
        }
    }
}

/// One event of any watched kind (boxed: a Pod is far larger than the others).
enum Change {
    Pod(Box<Event<Pod>>),
    Namespace(Box<Event<Namespace>>),
    Policy(Box<Event<NetworkPolicy>>),
}

/// The watchers and the computation they feed.
#[derive(Debug, Default)]
pub struct Feed {
    computation: SpanComputation,
    pods: Known<Pod>,
    namespaces: Known<Namespace>,
    policies: Known<NetworkPolicy>,
}

impl Feed {
    /// Watches the cluster through `client` until the watches end (never, unless the task is
    /// dropped), logging what the computation holds when it changes, publishing each batch's
    /// updates to `hub` and, once every kind is listed, serving what `hub` asks between
    /// batches.
    pub async fn run(&mut self, client: Client, hub: &HubDriver) {
        let changes = stream::select_all([
            watch(&client, Change::Pod),
            watch(&client, Change::Namespace),
            watch(&client, Change::Policy),
        ]);
        let mut changes = std::pin::pin!(changes.ready_chunks(256));
        let mut last = self.computation.summary();
        loop {
            let listed = self.pods.listed && self.namespaces.listed && self.policies.listed;
            tokio::select! {
                batch = changes.next() => {
                    let Some(batch) = batch else { return };
                    for change in batch {
                        match change {
                            Change::Pod(e) => self.pods.apply(*e, &mut self.computation),
                            Change::Namespace(e) => self.namespaces.apply(*e, &mut self.computation),
                            Change::Policy(e) => self.policies.apply(*e, &mut self.computation),
                        }
                    }
                    let summary = self.computation.summary();
                    if summary != last {
                        tracing::info!("{summary}");
                        last = summary;
                    }
                    hub.publish(&mut self.computation);
                }
                () = hub.wanted(), if listed => hub.serve(&mut self.computation),
            }
        }
    }
}

/// The events of kind `K`, watched cluster-wide with backoff; failures are logged once per
/// outage and the watch goes on.
fn watch<K>(
    client: &Client,
    wrap: fn(Box<Event<K>>) -> Change,
) -> std::pin::Pin<Box<dyn Stream<Item = Change> + Send>>
where
    K: Watched + serde::de::DeserializeOwned + Sync,
{
    let kind = K::kind(&()).into_owned();
    let mut failing = false;
    let events = watcher::watcher(Api::<K>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .filter_map(move |item| {
            let change = match item {
                Ok(event) => {
                    if failing {
                        tracing::info!("{kind} watch back");
                    }
                    failing = false;
                    Some(wrap(Box::new(event)))
                }
                Err(error) => {
                    if !failing {
                        tracing::warn!("{kind} watch failed ({error}); retrying with backoff");
                    }
                    failing = true;
                    None
                }
            };
            std::future::ready(change)
        });
    Box::pin(events)
}
